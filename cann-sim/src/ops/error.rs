//! Why an operator cannot run ([`OpError`]), and the dtype checks shared by
//! the kernels.

use super::{DType, Op};

/// Why an operator cannot run. Each kind has its runtime code, which the
/// exports map it to (`acl::common::op_error_code`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// No such operator type: `ACL_ERROR_OP_NOT_FOUND` (100024).
    NotFound(String),
    /// Inputs (count, dtype, shape) do not fit: `ACL_ERROR_OP_INPUT_NOT_MATCH` (100021).
    Input(String),
    /// Outputs (count, dtype, shape) do not fit: `ACL_ERROR_OP_OUTPUT_NOT_MATCH` (100022).
    Output(String),
    /// A missing or ill-typed attribute: `ACL_ERROR_OP_ATTR_NOT_MATCH` (100023).
    Attr(String),
    /// A dtype the operator does not support: `ACL_ERROR_UNSUPPORTED_DATA_TYPE` (100026).
    DType(String),
}

impl OpError {
    /// The message for `aclGetRecentErrMsg`.
    pub fn message(&self) -> &str {
        match self {
            OpError::NotFound(m)
            | OpError::Input(m)
            | OpError::Output(m)
            | OpError::Attr(m)
            | OpError::DType(m) => m,
        }
    }
}

/// The dtype error for `name` of `op`, listing what is supported.
pub(crate) fn dtype_error(op: Op, name: &str, dtype: DType, supported: &[DType]) -> OpError {
    let list: Vec<&str> = supported.iter().map(|d| d.name()).collect();
    OpError::DType(format!(
        "{}: input {name} has dtype {}, which the operator does not support (supported: {})",
        op.name(),
        dtype.name(),
        list.join(", ")
    ))
}

/// Checks that `dtype` of input `name` is in `supported`.
pub(crate) fn check_dtype(
    op: Op,
    name: &str,
    dtype: DType,
    supported: &[DType],
) -> Result<(), OpError> {
    if supported.contains(&dtype) {
        Ok(())
    } else {
        Err(dtype_error(op, name, dtype, supported))
    }
}

//! Int4 tensor arguments (`ACL_INT4`): bound as the bytes under the view
//! (a contiguous `uint8` input) plus the [`Int4Layout`] that finds each
//! value in them. The layout checks are those of every tensor argument
//! ([`exec::checked_layout`]); offsets and strides count values, two per
//! byte (see [`crate::ops::int4`]).

use super::exec::{self, Obj, View};
use crate::ops::DType;
use crate::ops::TensorSpec;
use crate::ops::int4::Int4Layout;
use crate::recent_error::fail;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclTensor, aclnnStatus};

/// Whether the tensor handle `h` is an `ACL_INT4` tensor (false for any
/// other handle, null included: the binding reports those).
pub(super) fn is_int4(h: *const aclTensor) -> bool {
    exec::dtype_of(h as usize) == Some(acl_sys::ACL_INT4)
}

/// The int4 tensor argument `h`, bound for reading: the bytes from the one
/// holding its first value to the one holding its last, as a contiguous
/// `uint8` view, and the layout of the values in them.
pub(super) fn bound_int4(
    function: &str,
    what: &str,
    h: *const aclTensor,
) -> Result<(View, Int4Layout), aclnnStatus> {
    let o = exec::tensor_arg(function, what, h as usize)?;
    let Obj::Tensor(t) = &*o else {
        return Err(exec::kind_mismatch(function, what));
    };
    if t.dtype != acl_sys::ACL_INT4 {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what}: data type {} is not int4", t.dtype),
        ));
    }
    // Checked as a view of one-byte elements: the value counts and the
    // storage fit are the same, and its byte bounds are over-estimated.
    let (spec, strides) = exec::checked_layout(function, what, t, DType::I8, false)?;
    let strides = strides.unwrap_or_else(|| exec::contiguous_strides(&spec.shape));
    let first = t.offset as usize;
    let layout = Int4Layout {
        shape: spec.shape,
        strides,
        first: first % 2,
    };
    let bytes = layout.span_bytes();
    let addr = t.addr.checked_add(first / 2).ok_or_else(|| {
        fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what}: offset overflows"),
        )
    })?;
    let view = View {
        spec: TensorSpec {
            dtype: DType::U8,
            shape: vec![bytes as i64],
        },
        addr,
        strides: None,
    };
    Ok((view, layout))
}

//! The dtype lists of the operator table (`acl-sys/operators.toml`),
//! checked before an operator's planning function runs: an argument whose
//! dtype its documentation page does not list is 161002
//! (`ACLNN_ERR_PARAM_INVALID`), as the released operators' parameter checks
//! return it (each page's "约束说明"/parameter table and its 161002 row; the
//! page is the table entry's `page`).
//!
//! The lists are the union over the products a page covers. The per-product
//! notes of the table (the text after `|`, for example what the Atlas A2
//! parts exclude) are extracted from the pages heuristically and are not
//! enforced: the simulator may accept a dtype one product refuses.

use super::exec::{Kind, Obj, arg, peek};
use crate::recent_error::fail;
use acl_sys::aclDataType;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclnnStatus};

/// One argument's check: its documented name, its handle, whether it is a
/// tensor list, whether it may be null, and the dtypes its page lists.
pub(super) type DtypeCheck<'a> = (&'a str, usize, bool, bool, &'a [aclDataType]);

fn kind(is_list: bool) -> Kind {
    if is_list {
        Kind::TensorList
    } else {
        Kind::Tensor
    }
}

/// Checks each tensor (or each member of a tensor list) against its list.
/// The released operators check every required argument for null first
/// (161001) and the dtypes after, so a null required argument is reported
/// before any dtype. Handles of another kind are left to the planning
/// function, which reports them (161002).
pub(super) fn documented_dtypes(
    function: &'static str,
    checks: &[DtypeCheck<'_>],
) -> Result<(), aclnnStatus> {
    for &(what, addr, is_list, optional, _) in checks {
        if addr == 0 && !optional {
            // Null: `arg` makes the 161001 naming the argument.
            arg(function, what, addr, kind(is_list))?;
        }
    }
    for &(what, addr, is_list, _, allowed) in checks {
        // A lookup that records nothing: a handle of another kind is the
        // planning function's to report.
        let Some(obj) = (addr != 0).then(|| peek(addr, kind(is_list))).flatten() else {
            continue;
        };
        let members: Vec<i32> = match &*obj {
            Obj::Tensor(t) => vec![t.dtype],
            Obj::TensorList(ms) => ms
                .iter()
                .filter_map(|m| match &**m {
                    Obj::Tensor(t) => Some(t.dtype),
                    _ => None,
                })
                .collect(),
            _ => continue,
        };
        if let Some(d) = members.into_iter().find(|d| !allowed.contains(d)) {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "{function}: {what} is {}; the operator takes {}",
                    name(d),
                    allowed
                        .iter()
                        .map(|&a| name(a))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The name CANN's documentation uses for `d` (`float32`, `int64`, ...),
/// as the engine's messages do ([`crate::ops::DType::name`]).
fn name(d: aclDataType) -> &'static str {
    use acl_sys::*;
    match d {
        ACL_FLOAT => "float32",
        ACL_FLOAT16 => "float16",
        ACL_BF16 => "bfloat16",
        ACL_DOUBLE => "float64",
        ACL_INT4 => "int4",
        ACL_INT8 => "int8",
        ACL_INT16 => "int16",
        ACL_INT32 => "int32",
        ACL_INT64 => "int64",
        ACL_UINT8 => "uint8",
        ACL_UINT16 => "uint16",
        ACL_UINT32 => "uint32",
        ACL_UINT64 => "uint64",
        ACL_BOOL => "bool",
        ACL_COMPLEX32 => "complex32",
        ACL_COMPLEX64 => "complex64",
        ACL_COMPLEX128 => "complex128",
        ACL_HIFLOAT8 => "hifloat8",
        ACL_FLOAT8_E5M2 => "float8_e5m2",
        ACL_FLOAT8_E4M3FN => "float8_e4m3fn",
        ACL_FLOAT8_E8M0 => "float8_e8m0",
        ACL_FLOAT4_E2M1 => "float4_e2m1",
        ACL_FLOAT4_E1M2 => "float4_e1m2",
        _ => "a data type without a name",
    }
}

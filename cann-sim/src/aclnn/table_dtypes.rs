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

use super::exec::{Kind, Obj, arg};
use crate::recent_error::fail;
use acl_sys::aclDataType;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclnnStatus};

/// One argument's check: its documented name, its handle, whether it is a
/// tensor list, and the dtypes its page lists.
pub(super) type DtypeCheck<'a> = (&'a str, usize, bool, &'a [aclDataType]);

/// Checks each non-null tensor (or each member of a tensor list) against
/// its list. Null handles and handles of another kind are left to the
/// planning function, which reports them (161001, 161002).
pub(super) fn documented_dtypes(
    function: &'static str,
    checks: &[DtypeCheck<'_>],
) -> Result<(), aclnnStatus> {
    for &(what, addr, is_list, allowed) in checks {
        if addr == 0 {
            continue;
        }
        let kind = if is_list {
            Kind::TensorList
        } else {
            Kind::Tensor
        };
        let Ok(obj) = arg(function, what, addr, kind) else {
            // The planning function reports it again, with its own message
            // (the last error recorded is what `aclGetRecentErrMsg` shows).
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
                    "{function}: {what} has data type {} ({d}); the operator's page lists {}",
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

/// The `aclDataType` name of `d` as the headers spell it.
fn name(d: aclDataType) -> &'static str {
    use acl_sys::*;
    match d {
        ACL_FLOAT => "ACL_FLOAT",
        ACL_FLOAT16 => "ACL_FLOAT16",
        ACL_BF16 => "ACL_BF16",
        ACL_DOUBLE => "ACL_DOUBLE",
        ACL_INT4 => "ACL_INT4",
        ACL_INT8 => "ACL_INT8",
        ACL_INT16 => "ACL_INT16",
        ACL_INT32 => "ACL_INT32",
        ACL_INT64 => "ACL_INT64",
        ACL_UINT8 => "ACL_UINT8",
        ACL_UINT16 => "ACL_UINT16",
        ACL_UINT32 => "ACL_UINT32",
        ACL_UINT64 => "ACL_UINT64",
        ACL_BOOL => "ACL_BOOL",
        ACL_COMPLEX32 => "ACL_COMPLEX32",
        ACL_COMPLEX64 => "ACL_COMPLEX64",
        ACL_COMPLEX128 => "ACL_COMPLEX128",
        ACL_HIFLOAT8 => "ACL_HIFLOAT8",
        ACL_FLOAT8_E5M2 => "ACL_FLOAT8_E5M2",
        ACL_FLOAT8_E4M3FN => "ACL_FLOAT8_E4M3FN",
        ACL_FLOAT8_E8M0 => "ACL_FLOAT8_E8M0",
        ACL_FLOAT4_E2M1 => "ACL_FLOAT4_E2M1",
        ACL_FLOAT4_E1M2 => "ACL_FLOAT4_E1M2",
        _ => "an unnamed data type",
    }
}

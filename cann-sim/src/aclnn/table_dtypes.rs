//! The dtype lists of the operator table (`acl-sys/operators.toml`),
//! checked before an operator's planning function runs: an argument whose
//! dtype its documentation page does not list is 161002
//! (`ACLNN_ERR_PARAM_INVALID`), as the released operators' parameter checks
//! return it (each page's "约束说明"/parameter table and its 161002 row; the
//! page is the table entry's `page`).
//!
//! A page's parameter table lists the union over the products it covers;
//! the notes after it (per-product blocks, superscripts) narrow it for some
//! products. The table records the lists of the Atlas A2 and A3 parts
//! (`dtypes_a2`, `dtypes_a3`), and the check takes the list of the SoC the
//! simulator runs as (`CANN_SIM_SOC_NAME`): `Ascend910B*` is an Atlas A2
//! part, `Ascend910_93*` an Atlas A3 part; any other SoC is checked against
//! the union.

use super::exec::{Kind, Obj, arg, peek};
use crate::recent_error::fail;
use acl_sys::aclDataType;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclnnStatus};

/// One argument's check: its documented name, its handle, whether it is a
/// tensor list, whether it may be null, the dtypes its page lists (the
/// union over the products), and the Atlas A2 and A3 lists where the page
/// narrows the union (`None`: the union).
pub(super) type DtypeCheck<'a> = (
    &'a str,
    usize,
    bool,
    bool,
    &'a [aclDataType],
    Option<&'a [aclDataType]>,
    Option<&'a [aclDataType]>,
);

/// The product family whose dtype lists apply.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Product {
    /// Ascend910B*: Atlas A2 training/inference parts.
    A2,
    /// Ascend910_93*: Atlas A3 training/inference parts.
    A3,
    /// Any other SoC: the union of the page.
    Other,
}

/// The family of a SoC name, as the pages' product terms name them.
fn product(soc: &str) -> Product {
    if soc.starts_with("Ascend910B") {
        Product::A2
    } else if soc.starts_with("Ascend910_93") {
        Product::A3
    } else {
        Product::Other
    }
}

/// The simulated SoC's name and family (an unreadable configuration: the
/// default SoC's, as `aclInit` reports the configuration error itself).
fn simulated_product() -> (&'static str, Product) {
    let soc = crate::config::get().map_or(crate::config::DEFAULT_SOC_NAME, |c| c.soc_name.as_str());
    (soc, product(soc))
}

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
    for &(what, addr, is_list, optional, ..) in checks {
        if addr == 0 && !optional {
            // Null: `arg` makes the 161001 naming the argument.
            arg(function, what, addr, kind(is_list))?;
        }
    }
    let (soc, family) = simulated_product();
    for &(what, addr, is_list, _, union, a2, a3) in checks {
        let (allowed, on) = match (family, a2, a3) {
            (Product::A2, Some(l), _) => (l, Some("Atlas A2")),
            (Product::A3, _, Some(l)) => (l, Some("Atlas A3")),
            _ => (union, None),
        };
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
            let list = allowed
                .iter()
                .map(|&a| name(a))
                .collect::<Vec<_>>()
                .join(", ");
            let takes = match on {
                Some(family) => format!("on {family} ({soc}) the operator takes {list}"),
                None => format!("the operator takes {list}"),
            };
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("{function}: {what} is {}; {takes}", name(d)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soc_names_map_to_the_product_families_of_the_pages() {
        assert_eq!(product("Ascend910B3"), Product::A2);
        assert_eq!(product("Ascend910B4-1"), Product::A2);
        assert_eq!(product("Ascend910_9391"), Product::A3);
        assert_eq!(product("Ascend910_9362"), Product::A3);
        assert_eq!(product("Ascend310P3"), Product::Other);
        assert_eq!(product("Ascend950PR"), Product::Other);
    }
}

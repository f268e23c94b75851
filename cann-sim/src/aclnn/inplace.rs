//! The in-place forms of the elementwise operators: `aclnnInplaceXxx`
//! plans what `aclnnXxx` plans with `out` = `selfRef` (the same CANN
//! operator and kernel, strided and offset views handled as there: the
//! inputs are gathered before the output is written, so `selfRef` may be
//! read and written by one call).
//!
//! | aclnn | as | notes |
//! |---|---|---|
//! | InplaceAdd, InplaceSub | Add, Sub (Axpy when `alpha` ≠ 1) | `other` broadcasts to `selfRef` |
//! | InplaceMul, InplaceDiv | Mul, RealDiv | `other` broadcasts to `selfRef` |
//! | InplaceMuls | Mul | `other` (a scalar) converted to `selfRef`'s type |
//! | InplaceRelu, InplaceSigmoid, InplaceExp, InplaceLog, InplaceSqrt, InplaceRsqrt, InplaceNeg, InplaceTanh | same name | |
//!
//! The real library does the same: hicann/ops-math `math/add/op_api/aclnn_add.cpp`
//! (`aclnnInplaceAddGetWorkspaceSize` calls `aclnnAddGetWorkspaceSize(selfRef,
//! other, alpha, selfRef, ...)`), likewise `aclnn_sub.cpp`, `aclnn_div.cpp`,
//! `aclnn_mul.cpp` (`CheckInplaceMulParams`), `aclnn_exp.cpp`
//! (`GetWorkspaceSizeCommon(selfRef, selfRef, ...)`), and hicann/ops-nn
//! `activation/relu/op_api/aclnn_relu.cpp` (`ExecReluGetWorkspaceSize(selfRef,
//! selfRef, ...)`).

#![allow(non_snake_case)]

use super::exec::bound;
use super::operators::{Planned, unary};
use super::transformer::broadcasts_to;
use crate::ops::Attrs;
use crate::recent_error::fail;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclTensor};

/// The check every in-place binary operator makes before its out-of-place
/// form's: `selfRef` and `other` non-null (161001), then `selfRef`'s shape
/// the broadcast shape of the two — `other` broadcasts to `selfRef` —
/// (161002). hicann/ops-math `math/add/op_api/aclnn_add.cpp` `CheckInplace`
/// (`OP_CHECK_BROADCAST_AND_INFER_SHAPE`, then `selfRef->GetViewShape() ==
/// broadcastShape`); the same in `aclnn_sub.cpp`, `aclnn_div.cpp`, and
/// `aclnn_mul.cpp` `CheckInplaceMulShape` (which checks the dtypes first:
/// either failure is 161002).
pub(super) fn inplace_binary(
    f: &str,
    self_ref: *const aclTensor,
    other: *const aclTensor,
    planned: impl FnOnce() -> Planned,
) -> Planned {
    let s = bound(f, "selfRef", self_ref as usize, true)?;
    let o = bound(f, "other", other as usize, false)?;
    if !broadcasts_to(&o.spec.shape, &s.spec.shape) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{f}: other of shape {:?} does not broadcast to selfRef of shape {:?} (the \
                 result's shape is selfRef's)",
                o.spec.shape, s.spec.shape
            ),
        ));
    }
    planned()
}

/// A unary in-place plan: `op` over `selfRef`, written to `selfRef`.
pub(super) fn unary_inplace(
    f: &str,
    api: &'static str,
    op: &'static str,
    x: *const aclTensor,
) -> Planned {
    unary(f, api, op, x, x, Attrs::new())
}

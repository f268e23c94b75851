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
use super::operators::{Planned, binary, get_workspace_size, run_executor, scaled, unary};
use super::transformer::{broadcasts_to, muls};
use crate::ops::Attrs;
use crate::recent_error::fail;
use acl_sys::aclnn::{ACLNN_ERR_PARAM_INVALID, aclOpExecutor, aclScalar, aclTensor, aclnnStatus};
use acl_sys::aclrtStream;
use std::ffi::c_void;

/// The check every in-place binary operator makes before its out-of-place
/// form's: `selfRef` and `other` non-null (161001), then `selfRef`'s shape
/// the broadcast shape of the two — `other` broadcasts to `selfRef` —
/// (161002). hicann/ops-math `math/add/op_api/aclnn_add.cpp` `CheckInplace`
/// (`OP_CHECK_BROADCAST_AND_INFER_SHAPE`, then `selfRef->GetViewShape() ==
/// broadcastShape`); the same in `aclnn_sub.cpp`, `aclnn_div.cpp`, and
/// `aclnn_mul.cpp` `CheckInplaceMulShape` (which checks the dtypes first:
/// either failure is 161002).
fn inplace_binary(
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

/// The `GetWorkspaceSize` exports, one shape: the operator's own
/// parameters, then `workspaceSize` and `executor`; `|f| plan` builds the
/// plan (`f` is the function's name, for messages). Each entry is
/// `extern "C" fn <name>(<parameters>) => |f| <plan>;` (the `extern "C" fn
/// <name>` is what `cargo xtask generate` reads).
macro_rules! workspace_exports {
    ($($(#[$m:meta])* extern "C" fn $gws:ident($($p:ident: $t:ty),*) => |$f:ident| $plan:expr;)*) => {$(
        $(#[$m])*
        ///
        /// # Safety
        ///
        /// `workspaceSize` and `executor` must be writable when non-null;
        /// handles are looked up.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $gws(
            $($p: $t,)*
            workspaceSize: *mut u64,
            executor: *mut *mut aclOpExecutor,
        ) -> aclnnStatus {
            // SAFETY: the out-pointers are the caller's, as documented.
            unsafe { get_workspace_size(stringify!($gws), workspaceSize, executor, |$f| $plan) }
        }
    )*};
}

/// A unary in-place plan: `op` over `selfRef`, written to `selfRef`.
fn unary_inplace(f: &str, api: &'static str, op: &'static str, x: *const aclTensor) -> Planned {
    unary(f, api, op, x, x, Attrs::new())
}

workspace_exports! {
    /// `aclnnInplaceAddGetWorkspaceSize`: `selfRef += alpha · other`.
    extern "C" fn aclnnInplaceAddGetWorkspaceSize(
        selfRef: *const aclTensor,
        other: *const aclTensor,
        alpha: *const aclScalar
    ) => |f| inplace_binary(f, selfRef, other, || {
        scaled(f, "aclnnInplaceAdd", "Add", 1.0, selfRef, other, alpha, selfRef)
    });
    /// `aclnnInplaceSubGetWorkspaceSize`: `selfRef -= alpha · other`.
    extern "C" fn aclnnInplaceSubGetWorkspaceSize(
        selfRef: *mut aclTensor,
        other: *const aclTensor,
        alpha: *const aclScalar
    ) => |f| inplace_binary(f, selfRef, other, || {
        scaled(f, "aclnnInplaceSub", "Sub", -1.0, selfRef, other, alpha, selfRef)
    });
    /// `aclnnInplaceMulGetWorkspaceSize`: `selfRef *= other`.
    extern "C" fn aclnnInplaceMulGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclTensor)
        => |f| inplace_binary(f, selfRef, other, || {
            binary(f, "aclnnInplaceMul", "Mul", selfRef, other, selfRef)
        });
    /// `aclnnInplaceDivGetWorkspaceSize`: `selfRef /= other`.
    extern "C" fn aclnnInplaceDivGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclTensor)
        => |f| inplace_binary(f, selfRef, other, || {
            binary(f, "aclnnInplaceDiv", "RealDiv", selfRef, other, selfRef)
        });
    /// `aclnnInplaceMulsGetWorkspaceSize`: `selfRef *= other` (a scalar).
    extern "C" fn aclnnInplaceMulsGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclScalar)
        => |f| muls(f, "aclnnInplaceMuls", selfRef, other, selfRef);
    /// `aclnnInplaceReluGetWorkspaceSize`: `selfRef = max(selfRef, 0)`.
    extern "C" fn aclnnInplaceReluGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceRelu", "Relu", selfRef);
    /// `aclnnInplaceSigmoidGetWorkspaceSize`: `selfRef = 1/(1+e^-selfRef)`.
    extern "C" fn aclnnInplaceSigmoidGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceSigmoid", "Sigmoid", selfRef);
    /// `aclnnInplaceExpGetWorkspaceSize`: `selfRef = e^selfRef`.
    extern "C" fn aclnnInplaceExpGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceExp", "Exp", selfRef);
    /// `aclnnInplaceLogGetWorkspaceSize`: `selfRef = ln selfRef`.
    extern "C" fn aclnnInplaceLogGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceLog", "Log", selfRef);
    /// `aclnnInplaceSqrtGetWorkspaceSize`: `self = √self` (the header names it `self`).
    extern "C" fn aclnnInplaceSqrtGetWorkspaceSize(self_: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceSqrt", "Sqrt", self_);
    /// `aclnnInplaceRsqrtGetWorkspaceSize`: `selfRef = 1/√selfRef`.
    extern "C" fn aclnnInplaceRsqrtGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceRsqrt", "Rsqrt", selfRef);
    /// `aclnnInplaceNegGetWorkspaceSize`: `selfRef = -selfRef`.
    extern "C" fn aclnnInplaceNegGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceNeg", "Neg", selfRef);
    /// `aclnnInplaceTanhGetWorkspaceSize`: `selfRef = tanh selfRef`.
    extern "C" fn aclnnInplaceTanhGetWorkspaceSize(selfRef: *mut aclTensor)
        => |f| unary_inplace(f, "aclnnInplaceTanh", "Tanh", selfRef);
}

/// The launch exports, one shape: `aclnnXxx` runs the executor of
/// `aclnnXxxGetWorkspaceSize` on `stream` (the `extern "C" fn <name>` is
/// what `cargo xtask generate` reads).
macro_rules! launch_exports {
    ($(extern "C" fn $run:ident;)*) => {$(
        #[doc = concat!("`", stringify!($run), "`: runs the executor of `",
            stringify!($run), "GetWorkspaceSize` on `stream`.")]
        ///
        /// # Safety
        ///
        /// None: the executor and stream are looked up; the workspace is not touched.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $run(
            workspace: *mut c_void,
            workspaceSize: u64,
            executor: *mut aclOpExecutor,
            stream: aclrtStream,
        ) -> aclnnStatus {
            run_executor(stringify!($run), workspace, workspaceSize, executor, stream)
        }
    )*};
}

launch_exports! {
    extern "C" fn aclnnInplaceAdd;
    extern "C" fn aclnnInplaceSub;
    extern "C" fn aclnnInplaceMul;
    extern "C" fn aclnnInplaceDiv;
    extern "C" fn aclnnInplaceMuls;
    extern "C" fn aclnnInplaceRelu;
    extern "C" fn aclnnInplaceSigmoid;
    extern "C" fn aclnnInplaceExp;
    extern "C" fn aclnnInplaceLog;
    extern "C" fn aclnnInplaceSqrt;
    extern "C" fn aclnnInplaceRsqrt;
    extern "C" fn aclnnInplaceNeg;
    extern "C" fn aclnnInplaceTanh;
}

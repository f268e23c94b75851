//! The aclnn operators: `aclnnXxxGetWorkspaceSize` builds a plan (the CANN
//! operator type and attributes the kernel library runs) and `aclnnXxx`
//! queues it. The mapping:
//!
//! | aclnn | CANN op | notes |
//! |---|---|---|
//! | Add, Sub | Add, Sub; Axpy when `alpha` ≠ 1 | an integer `out` needs an integral `alpha` (161002) |
//! | Mul, Div, Maximum, Minimum | Mul, RealDiv, Maximum, Minimum | |
//! | Neg, Abs, Exp, Log, Sqrt, Rsqrt, Relu, Sigmoid, Tanh, Gelu | same name | |
//! | ThresholdBackward | ReluGrad | `threshold` must be 0 (the relu gradient) |
//! | Cast | Cast | `dst_type` = `dtype` |
//! | Matmul | MatMul (2-D), BatchMatMul (else) | `cubeMathType` 0..=3 |
//! | BatchMatMul | BatchMatMul | 3-D operands |
//! | ReduceSum, Mean, Amax | ReduceSum, ReduceMean, ReduceMax | `dim` as the `axes` input; empty `dim` reduces all; `dtype` must be the input's |
//! | Softmax, LogSoftmax | SoftmaxV2, LogSoftmaxV2 | `axes = [dim]` |
//! | Permute | Transpose | `dims` as `perm` |
//! | InplaceFillScalar, InplaceZero, InplaceOne | Fill, ZerosLike, OnesLike | output is `selfRef` |

#![allow(non_snake_case)]

use super::exec::{self, Plan, PlanIn, View, bound, i64_input, int_array_arg, prepare, scalar_arg};
use crate::ops::{AttrValue, Attrs, TensorSpec};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_PARAM_INVALID, aclIntArray, aclOpExecutor,
    aclScalar, aclTensor, aclnnStatus,
};
use acl_sys::{aclDataType, aclrtStream};
use std::ffi::c_void;

pub(super) type Planned = Result<Plan, aclnnStatus>;

pub(super) fn dev(function: &str, what: &str, h: usize) -> Result<PlanIn, aclnnStatus> {
    Ok(PlanIn::Device(bound(function, what, h, false)?))
}

pub(super) fn plan(
    api: &'static str,
    op_type: &'static str,
    attrs: Attrs,
    inputs: Vec<PlanIn>,
    out: View,
) -> Plan {
    Plan {
        api,
        op_type,
        attrs,
        inputs,
        outputs: vec![out],
        output_names: &[],
    }
}

/// The plan of `op` with `inputs`, writing the tensor `out`.
pub(super) fn plan_out(
    f: &str,
    api: &'static str,
    op: &'static str,
    attrs: Attrs,
    inputs: Vec<PlanIn>,
    out: *const aclTensor,
) -> Planned {
    Ok(plan(
        api,
        op,
        attrs,
        inputs,
        bound(f, "out", out as usize, true)?,
    ))
}

pub(super) fn binary(
    f: &str,
    api: &'static str,
    op: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let inputs = vec![dev(f, "self", a as usize)?, dev(f, "other", b as usize)?];
    plan_out(f, api, op, Attrs::new(), inputs, out)
}

pub(super) fn unary(
    f: &str,
    api: &'static str,
    op: &'static str,
    a: *const aclTensor,
    out: *const aclTensor,
    attrs: Attrs,
) -> Planned {
    let inputs = vec![dev(f, "self", a as usize)?];
    plan_out(f, api, op, attrs, inputs, out)
}

/// `aclnnAdd` / `aclnnSub` (`sign` 1 / -1): `self + sign · alpha · other`,
/// as `Add` / `Sub` when `alpha` is 1, else as CANN's `Axpy`.
#[allow(clippy::too_many_arguments)]
pub(super) fn scaled(
    f: &str,
    api: &'static str,
    op: &'static str,
    sign: f64,
    a: *const aclTensor,
    b: *const aclTensor,
    alpha: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let (d, bytes) = scalar_arg(f, "alpha", alpha as usize)?;
    let v = exec::to_f64(d, &bytes);
    if v == 1.0 {
        return binary(f, api, op, a, b, out);
    }
    if op == "Sub" {
        // Sub's dtype rule (equal dtypes) holds whatever alpha is.
        binary(f, api, op, a, b, out).and_then(|p| exec::check_plan(f, &p))?;
    }
    let mut p = binary(f, api, "Axpy", a, b, out)?;
    if !p.outputs[0].spec.dtype.is_f32_family() && v.fract() != 0.0 {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{f}: alpha = {v} is not integral, but out is an integer tensor ({:?})",
                p.outputs[0].spec.dtype
            ),
        ));
    }
    p.attrs = Attrs::from([("alpha".to_string(), AttrValue::Float((sign * v) as f32))]);
    Ok(p)
}

fn threshold_backward(
    f: &str,
    grad: *const aclTensor,
    x: *const aclTensor,
    threshold: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let (d, b) = scalar_arg(f, "threshold", threshold as usize)?;
    let v = exec::to_f64(d, &b);
    if v != 0.0 {
        return Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: threshold = {v} is not supported by cann-sim (only 0, the relu gradient)"
            ),
        ));
    }
    let inputs = vec![
        dev(f, "gradOutput", grad as usize)?,
        dev(f, "self", x as usize)?,
    ];
    Ok(plan(
        "aclnnThresholdBackward",
        "ReluGrad",
        Attrs::new(),
        inputs,
        bound(f, "gradInput", out as usize, true)?,
    ))
}

fn matmul(
    f: &str,
    api: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
    cube: i8,
    batch: bool,
) -> Planned {
    if !(0..=3).contains(&cube) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{f}: cubeMathType {cube} is not 0..=3"),
        ));
    }
    let x1 = dev(f, "self", a as usize)?;
    let x2 = dev(f, "mat2", b as usize)?;
    let rank = |p: &PlanIn| match p {
        PlanIn::Device(View { spec: s, .. }) | PlanIn::Host(s, _) => s.shape.len(),
    };
    if batch && (rank(&x1) != 3 || rank(&x2) != 3) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{f}: self and mat2 must be 3-D, got {}-D and {}-D",
                rank(&x1),
                rank(&x2)
            ),
        ));
    }
    let op = if !batch && rank(&x1) == 2 && rank(&x2) == 2 {
        "MatMul"
    } else {
        "BatchMatMul"
    };
    Ok(plan(
        api,
        op,
        Attrs::new(),
        vec![x1, x2],
        bound(f, "out", out as usize, true)?,
    ))
}

#[allow(clippy::too_many_arguments)]
fn reduce(
    f: &str,
    api: &'static str,
    op: &'static str,
    x: *const aclTensor,
    dim: *const aclIntArray,
    keep: bool,
    dtype: Option<aclDataType>,
    out: *const aclTensor,
) -> Planned {
    let x = bound(f, "self", x as usize, false)?;
    let spec = &x.spec;
    let dims = int_array_arg(f, "dim", dim as usize)?;
    if let Some(d) = dtype
        && d != spec.dtype.to_acl()
    {
        return Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: dtype {d} differs from self's {}; cann-sim reduces in the input's type only (cast first)",
                spec.dtype.to_acl()
            ),
        ));
    }
    let attrs = Attrs::from([
        ("keep_dims".to_string(), AttrValue::Bool(keep)),
        ("noop_with_empty_axes".to_string(), AttrValue::Bool(false)),
    ]);
    let inputs = vec![PlanIn::Device(x), i64_input(&dims)];
    plan_out(f, api, op, attrs, inputs, out)
}

fn permute(
    f: &str,
    x: *const aclTensor,
    dims: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let x = dev(f, "self", x as usize)?;
    let dims = int_array_arg(f, "dims", dims as usize)?;
    Ok(plan(
        "aclnnPermute",
        "Transpose",
        Attrs::new(),
        vec![x, i64_input(&dims)],
        bound(f, "out", out as usize, true)?,
    ))
}

fn fill(f: &str, x: *const aclTensor, value: *const aclScalar) -> Planned {
    let x = bound(f, "selfRef", x as usize, true)?;
    let spec = &x.spec;
    let (d, b) = scalar_arg(f, "value", value as usize)?;
    let v = exec::from_f64(spec.dtype, exec::to_f64(d, &b));
    let value = PlanIn::Host(
        TensorSpec {
            dtype: spec.dtype,
            shape: vec![],
        },
        v,
    );
    let dims = i64_input(&spec.shape);
    Ok(plan(
        "aclnnInplaceFillScalar",
        "Fill",
        Attrs::new(),
        vec![dims, value],
        x,
    ))
}

/// The body of every `aclnnXxxGetWorkspaceSize`: builds the plan with
/// `planned` (given the function's name, for its messages), then checks the
/// out-pointers and stores the executor and workspace size
/// ([`exec::prepare`]).
///
/// # Safety
///
/// `workspace_size` and `executor` must be writable when non-null.
pub(super) unsafe fn get_workspace_size(
    function: &'static str,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
    planned: impl FnOnce(&'static str) -> Planned,
) -> aclnnStatus {
    let plan = planned(function);
    // SAFETY: the caller's contract.
    unsafe { prepare(function, plan, workspace_size, executor) }
}

/// The body of every `aclnnXxx`: runs the executor of its
/// `aclnnXxxGetWorkspaceSize` on `stream` ([`exec::launch`]).
pub(super) fn run_executor(
    api: &'static str,
    workspace: *mut c_void,
    workspace_size: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    exec::launch(
        api,
        workspace as usize,
        workspace_size,
        executor as usize,
        stream,
    )
}

/// `aclnnAddGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAddGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnAddGetWorkspaceSize", workspaceSize, executor, |f| {
            scaled(f, "aclnnAdd", "Add", 1.0, self_, other, alpha, out)
        })
    }
}

/// `aclnnAdd`: runs the executor of `aclnnAddGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAdd(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnAdd", workspace, workspaceSize, executor, stream)
}

/// `aclnnSubGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSubGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    alpha: *const aclScalar,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnSubGetWorkspaceSize", workspaceSize, executor, |f| {
            scaled(f, "aclnnSub", "Sub", -1.0, self_, other, alpha, out)
        })
    }
}

/// `aclnnSub`: runs the executor of `aclnnSubGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSub(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnSub", workspace, workspaceSize, executor, stream)
}

/// `aclnnMulGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMulGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnMulGetWorkspaceSize", workspaceSize, executor, |f| {
            binary(f, "aclnnMul", "Mul", self_, other, out)
        })
    }
}

/// `aclnnMul`: runs the executor of `aclnnMulGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMul(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnMul", workspace, workspaceSize, executor, stream)
}

/// `aclnnDivGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnDivGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnDivGetWorkspaceSize", workspaceSize, executor, |f| {
            binary(f, "aclnnDiv", "RealDiv", self_, other, out)
        })
    }
}

/// `aclnnDiv`: runs the executor of `aclnnDivGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnDiv(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnDiv", workspace, workspaceSize, executor, stream)
}

/// `aclnnMaximumGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMaximumGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnMaximumGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| binary(f, "aclnnMaximum", "Maximum", self_, other, out),
        )
    }
}

/// `aclnnMaximum`: runs the executor of `aclnnMaximumGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMaximum(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnMaximum", workspace, workspaceSize, executor, stream)
}

/// `aclnnMinimumGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMinimumGetWorkspaceSize(
    self_: *const aclTensor,
    other: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnMinimumGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| binary(f, "aclnnMinimum", "Minimum", self_, other, out),
        )
    }
}

/// `aclnnMinimum`: runs the executor of `aclnnMinimumGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMinimum(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnMinimum", workspace, workspaceSize, executor, stream)
}

/// `aclnnNegGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnNegGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnNegGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnNeg", "Neg", self_, out, Attrs::new())
        })
    }
}

/// `aclnnNeg`: runs the executor of `aclnnNegGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnNeg(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnNeg", workspace, workspaceSize, executor, stream)
}

/// `aclnnAbsGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAbsGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnAbsGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnAbs", "Abs", self_, out, Attrs::new())
        })
    }
}

/// `aclnnAbs`: runs the executor of `aclnnAbsGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAbs(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnAbs", workspace, workspaceSize, executor, stream)
}

/// `aclnnExpGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnExpGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnExpGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnExp", "Exp", self_, out, Attrs::new())
        })
    }
}

/// `aclnnExp`: runs the executor of `aclnnExpGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnExp(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnExp", workspace, workspaceSize, executor, stream)
}

/// `aclnnLogGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnLogGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnLogGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnLog", "Log", self_, out, Attrs::new())
        })
    }
}

/// `aclnnLog`: runs the executor of `aclnnLogGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnLog(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnLog", workspace, workspaceSize, executor, stream)
}

/// `aclnnSqrtGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSqrtGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnSqrtGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnSqrt", "Sqrt", self_, out, Attrs::new())
        })
    }
}

/// `aclnnSqrt`: runs the executor of `aclnnSqrtGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSqrt(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnSqrt", workspace, workspaceSize, executor, stream)
}

/// `aclnnRsqrtGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnRsqrtGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnRsqrtGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnRsqrt", "Rsqrt", self_, out, Attrs::new())
        })
    }
}

/// `aclnnRsqrt`: runs the executor of `aclnnRsqrtGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnRsqrt(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnRsqrt", workspace, workspaceSize, executor, stream)
}

/// `aclnnReluGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnReluGetWorkspaceSize(
    self_: *const aclTensor,
    out: *const aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnReluGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnRelu", "Relu", self_, out, Attrs::new())
        })
    }
}

/// `aclnnRelu`: runs the executor of `aclnnReluGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnRelu(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnRelu", workspace, workspaceSize, executor, stream)
}

/// `aclnnSigmoidGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSigmoidGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnSigmoidGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| unary(f, "aclnnSigmoid", "Sigmoid", self_, out, Attrs::new()),
        )
    }
}

/// `aclnnSigmoid`: runs the executor of `aclnnSigmoidGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSigmoid(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnSigmoid", workspace, workspaceSize, executor, stream)
}

/// `aclnnTanhGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnTanhGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnTanhGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnTanh", "Tanh", self_, out, Attrs::new())
        })
    }
}

/// `aclnnTanh`: runs the executor of `aclnnTanhGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnTanh(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnTanh", workspace, workspaceSize, executor, stream)
}

/// `aclnnGeluGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnGeluGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnGeluGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(f, "aclnnGelu", "Gelu", self_, out, Attrs::new())
        })
    }
}

/// `aclnnGelu`: runs the executor of `aclnnGeluGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnGelu(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnGelu", workspace, workspaceSize, executor, stream)
}

/// `aclnnThresholdBackwardGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnThresholdBackwardGetWorkspaceSize(
    gradOutput: *const aclTensor,
    self_: *const aclTensor,
    threshold: *const aclScalar,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnThresholdBackwardGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| threshold_backward(f, gradOutput, self_, threshold, out),
        )
    }
}

/// `aclnnThresholdBackward`: runs the executor of `aclnnThresholdBackwardGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnThresholdBackward(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnThresholdBackward",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

/// `aclnnCastGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnCastGetWorkspaceSize(
    self_: *const aclTensor,
    dtype: aclDataType,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnCastGetWorkspaceSize", workspaceSize, executor, |f| {
            unary(
                f,
                "aclnnCast",
                "Cast",
                self_,
                out,
                Attrs::from([("dst_type".to_string(), AttrValue::Int(i64::from(dtype)))]),
            )
        })
    }
}

/// `aclnnCast`: runs the executor of `aclnnCastGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnCast(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnCast", workspace, workspaceSize, executor, stream)
}

/// `aclnnMatmulGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMatmulGetWorkspaceSize(
    self_: *const aclTensor,
    mat2: *const aclTensor,
    out: *mut aclTensor,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnMatmulGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| matmul(f, "aclnnMatmul", self_, mat2, out, cubeMathType, false),
        )
    }
}

/// `aclnnMatmul`: runs the executor of `aclnnMatmulGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMatmul(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnMatmul", workspace, workspaceSize, executor, stream)
}

/// `aclnnBatchMatMulGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnBatchMatMulGetWorkspaceSize(
    self_: *const aclTensor,
    mat2: *const aclTensor,
    out: *mut aclTensor,
    cubeMathType: i8,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnBatchMatMulGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| matmul(f, "aclnnBatchMatMul", self_, mat2, out, cubeMathType, true),
        )
    }
}

/// `aclnnBatchMatMul`: runs the executor of `aclnnBatchMatMulGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnBatchMatMul(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnBatchMatMul",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

/// `aclnnReduceSumGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnReduceSumGetWorkspaceSize(
    self_: *const aclTensor,
    dim: *const aclIntArray,
    keepDim: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnReduceSumGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| {
                reduce(
                    f,
                    "aclnnReduceSum",
                    "ReduceSum",
                    self_,
                    dim,
                    keepDim,
                    Some(dtype),
                    out,
                )
            },
        )
    }
}

/// `aclnnReduceSum`: runs the executor of `aclnnReduceSumGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnReduceSum(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnReduceSum", workspace, workspaceSize, executor, stream)
}

/// `aclnnMeanGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMeanGetWorkspaceSize(
    self_: *const aclTensor,
    dim: *const aclIntArray,
    keepDim: bool,
    dtype: aclDataType,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnMeanGetWorkspaceSize", workspaceSize, executor, |f| {
            reduce(
                f,
                "aclnnMean",
                "ReduceMean",
                self_,
                dim,
                keepDim,
                Some(dtype),
                out,
            )
        })
    }
}

/// `aclnnMean`: runs the executor of `aclnnMeanGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnMean(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnMean", workspace, workspaceSize, executor, stream)
}

/// `aclnnAmaxGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAmaxGetWorkspaceSize(
    self_: *const aclTensor,
    dim: *const aclIntArray,
    keepDim: bool,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size("aclnnAmaxGetWorkspaceSize", workspaceSize, executor, |f| {
            reduce(f, "aclnnAmax", "ReduceMax", self_, dim, keepDim, None, out)
        })
    }
}

/// `aclnnAmax`: runs the executor of `aclnnAmaxGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnAmax(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnAmax", workspace, workspaceSize, executor, stream)
}

/// `aclnnSoftmaxGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSoftmaxGetWorkspaceSize(
    self_: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnSoftmaxGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| {
                unary(
                    f,
                    "aclnnSoftmax",
                    "SoftmaxV2",
                    self_,
                    out,
                    Attrs::from([("axes".to_string(), AttrValue::ListInt(vec![dim]))]),
                )
            },
        )
    }
}

/// `aclnnSoftmax`: runs the executor of `aclnnSoftmaxGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnSoftmax(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnSoftmax", workspace, workspaceSize, executor, stream)
}

/// `aclnnLogSoftmaxGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnLogSoftmaxGetWorkspaceSize(
    self_: *const aclTensor,
    dim: i64,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnLogSoftmaxGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| {
                unary(
                    f,
                    "aclnnLogSoftmax",
                    "LogSoftmaxV2",
                    self_,
                    out,
                    Attrs::from([("axes".to_string(), AttrValue::ListInt(vec![dim]))]),
                )
            },
        )
    }
}

/// `aclnnLogSoftmax`: runs the executor of `aclnnLogSoftmaxGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnLogSoftmax(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnLogSoftmax",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

/// `aclnnPermuteGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnPermuteGetWorkspaceSize(
    self_: *const aclTensor,
    dims: *const aclIntArray,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnPermuteGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| permute(f, self_, dims, out),
        )
    }
}

/// `aclnnPermute`: runs the executor of `aclnnPermuteGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnPermute(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor("aclnnPermute", workspace, workspaceSize, executor, stream)
}

/// `aclnnInplaceFillScalarGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceFillScalarGetWorkspaceSize(
    selfRef: *mut aclTensor,
    value: *const aclScalar,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnInplaceFillScalarGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| fill(f, selfRef, value),
        )
    }
}

/// `aclnnInplaceFillScalar`: runs the executor of `aclnnInplaceFillScalarGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceFillScalar(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnInplaceFillScalar",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

/// `aclnnInplaceZeroGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceZeroGetWorkspaceSize(
    selfRef: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnInplaceZeroGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| {
                unary(
                    f,
                    "aclnnInplaceZero",
                    "ZerosLike",
                    selfRef,
                    selfRef,
                    Attrs::new(),
                )
            },
        )
    }
}

/// `aclnnInplaceZero`: runs the executor of `aclnnInplaceZeroGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceZero(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnInplaceZero",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

/// `aclnnInplaceOneGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceOneGetWorkspaceSize(
    selfRef: *const aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        get_workspace_size(
            "aclnnInplaceOneGetWorkspaceSize",
            workspaceSize,
            executor,
            |f| {
                unary(
                    f,
                    "aclnnInplaceOne",
                    "OnesLike",
                    selfRef,
                    selfRef,
                    Attrs::new(),
                )
            },
        )
    }
}

/// `aclnnInplaceOne`: runs the executor of `aclnnInplaceOneGetWorkspaceSize` on `stream`.
///
/// # Safety
///
/// None: the executor and stream are looked up; the workspace is not touched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnInplaceOne(
    workspace: *mut c_void,
    workspaceSize: u64,
    executor: *mut aclOpExecutor,
    stream: aclrtStream,
) -> aclnnStatus {
    run_executor(
        "aclnnInplaceOne",
        workspace,
        workspaceSize,
        executor,
        stream,
    )
}

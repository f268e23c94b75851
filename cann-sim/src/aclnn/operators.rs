//! The aclnn operators: `aclnnXxxGetWorkspaceSize` builds a plan (the CANN
//! operator type and attributes the kernel library runs) and `aclnnXxx`
//! queues it. The mapping:
//!
//! | aclnn | CANN op | notes |
//! |---|---|---|
//! | Add, Sub | Add, Sub | `alpha` must be 1 (else 561003: not supported) |
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

use super::exec::{self, Plan, PlanIn, bound, i64_input, int_array_arg, prepare, scalar_arg};
use crate::ops::{AttrValue, Attrs, TensorSpec};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_PARAM_INVALID, aclIntArray, aclOpExecutor,
    aclScalar, aclTensor, aclnnStatus,
};
use acl_sys::{aclDataType, aclrtStream};
use std::ffi::c_void;

type Planned = Result<Plan, aclnnStatus>;

fn dev(function: &str, what: &str, h: usize) -> Result<PlanIn, aclnnStatus> {
    let (spec, addr) = bound(function, what, h)?;
    Ok(PlanIn::Device(spec, addr))
}

fn plan(
    api: &'static str,
    op_type: &'static str,
    attrs: Attrs,
    inputs: Vec<PlanIn>,
    out: (TensorSpec, usize),
) -> Plan {
    Plan {
        api,
        op_type,
        attrs,
        inputs,
        output: out,
    }
}

fn binary(f: &str, api: &'static str, op: &'static str, a: usize, b: usize, out: usize) -> Planned {
    let inputs = vec![dev(f, "self", a)?, dev(f, "other", b)?];
    Ok(plan(api, op, Attrs::new(), inputs, bound(f, "out", out)?))
}

fn unary(
    f: &str,
    api: &'static str,
    op: &'static str,
    a: usize,
    out: usize,
    attrs: Attrs,
) -> Planned {
    let inputs = vec![dev(f, "self", a)?];
    Ok(plan(api, op, attrs, inputs, bound(f, "out", out)?))
}

fn alpha_one(f: &str, alpha: usize) -> Result<(), aclnnStatus> {
    let (d, b) = scalar_arg(f, "alpha", alpha)?;
    let v = exec::to_f64(d, &b);
    if v == 1.0 {
        Ok(())
    } else {
        Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: alpha = {v} is not supported by cann-sim (only alpha = 1); scale `other` with aclnnMul first"
            ),
        ))
    }
}

fn threshold_backward(f: &str, grad: usize, x: usize, threshold: usize, out: usize) -> Planned {
    let (d, b) = scalar_arg(f, "threshold", threshold)?;
    let v = exec::to_f64(d, &b);
    if v != 0.0 {
        return Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: threshold = {v} is not supported by cann-sim (only 0, the relu gradient)"
            ),
        ));
    }
    let inputs = vec![dev(f, "gradOutput", grad)?, dev(f, "self", x)?];
    Ok(plan(
        "aclnnThresholdBackward",
        "ReluGrad",
        Attrs::new(),
        inputs,
        bound(f, "gradInput", out)?,
    ))
}

fn matmul(
    f: &str,
    api: &'static str,
    a: usize,
    b: usize,
    out: usize,
    cube: i8,
    batch: bool,
) -> Planned {
    if !(0..=3).contains(&cube) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{f}: cubeMathType {cube} is not 0..=3"),
        ));
    }
    let x1 = dev(f, "self", a)?;
    let x2 = dev(f, "mat2", b)?;
    let rank = |p: &PlanIn| match p {
        PlanIn::Device(s, _) | PlanIn::Host(s, _) => s.shape.len(),
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
        bound(f, "out", out)?,
    ))
}

#[allow(clippy::too_many_arguments)]
fn reduce(
    f: &str,
    api: &'static str,
    op: &'static str,
    x: usize,
    dim: usize,
    keep: bool,
    dtype: Option<aclDataType>,
    out: usize,
) -> Planned {
    let (spec, addr) = bound(f, "self", x)?;
    let dims = int_array_arg(f, "dim", dim)?;
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
    let inputs = vec![PlanIn::Device(spec, addr), i64_input(&dims)];
    Ok(plan(api, op, attrs, inputs, bound(f, "out", out)?))
}

fn permute(f: &str, x: usize, dims: usize, out: usize) -> Planned {
    let x = dev(f, "self", x)?;
    let dims = int_array_arg(f, "dims", dims)?;
    Ok(plan(
        "aclnnPermute",
        "Transpose",
        Attrs::new(),
        vec![x, i64_input(&dims)],
        bound(f, "out", out)?,
    ))
}

fn fill(f: &str, x: usize, value: usize) -> Planned {
    let (spec, addr) = bound(f, "selfRef", x)?;
    let (d, b) = scalar_arg(f, "value", value)?;
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
        (spec, addr),
    ))
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
    const F: &str = "aclnnAddGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            alpha_one(F, alpha as usize).and_then(|()| {
                binary(
                    F,
                    "aclnnAdd",
                    "Add",
                    self_ as usize,
                    other as usize,
                    out as usize,
                )
            }),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnAdd",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnSubGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            alpha_one(F, alpha as usize).and_then(|()| {
                binary(
                    F,
                    "aclnnSub",
                    "Sub",
                    self_ as usize,
                    other as usize,
                    out as usize,
                )
            }),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnSub",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnMulGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            binary(
                F,
                "aclnnMul",
                "Mul",
                self_ as usize,
                other as usize,
                out as usize,
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnMul",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnDivGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            binary(
                F,
                "aclnnDiv",
                "RealDiv",
                self_ as usize,
                other as usize,
                out as usize,
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnDiv",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnMaximumGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            binary(
                F,
                "aclnnMaximum",
                "Maximum",
                self_ as usize,
                other as usize,
                out as usize,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnMaximum",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnMinimumGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            binary(
                F,
                "aclnnMinimum",
                "Minimum",
                self_ as usize,
                other as usize,
                out as usize,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnMinimum",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnNegGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnNeg",
                "Neg",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnNeg",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnAbsGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnAbs",
                "Abs",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnAbs",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnExpGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnExp",
                "Exp",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnExp",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnLogGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnLog",
                "Log",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnLog",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnSqrtGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnSqrt",
                "Sqrt",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnSqrt",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnRsqrtGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnRsqrt",
                "Rsqrt",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnRsqrt",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
}

/// `aclnnReluGetWorkspaceSize`.
///
/// # Safety
///
/// `workspaceSize` and `executor` must be writable when non-null; handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclnnReluGetWorkspaceSize(
    self_: *const aclTensor,
    out: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    const F: &str = "aclnnReluGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnRelu",
                "Relu",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnRelu",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnSigmoidGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnSigmoid",
                "Sigmoid",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnSigmoid",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnTanhGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnTanh",
                "Tanh",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnTanh",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnGeluGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnGelu",
                "Gelu",
                self_ as usize,
                out as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnGelu",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    gradInput: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    const F: &str = "aclnnThresholdBackwardGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            threshold_backward(
                F,
                gradOutput as usize,
                self_ as usize,
                threshold as usize,
                gradInput as usize,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnThresholdBackward",
        workspace as usize,
        workspaceSize,
        executor as usize,
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
    const F: &str = "aclnnCastGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnCast",
                "Cast",
                self_ as usize,
                out as usize,
                Attrs::from([("dst_type".to_string(), AttrValue::Int(i64::from(dtype)))]),
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnCast",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnMatmulGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            matmul(
                F,
                "aclnnMatmul",
                self_ as usize,
                mat2 as usize,
                out as usize,
                cubeMathType,
                false,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnMatmul",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnBatchMatMulGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            matmul(
                F,
                "aclnnBatchMatMul",
                self_ as usize,
                mat2 as usize,
                out as usize,
                cubeMathType,
                true,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnBatchMatMul",
        workspace as usize,
        workspaceSize,
        executor as usize,
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
    const F: &str = "aclnnReduceSumGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            reduce(
                F,
                "aclnnReduceSum",
                "ReduceSum",
                self_ as usize,
                dim as usize,
                keepDim,
                Some(dtype),
                out as usize,
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnReduceSum",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnMeanGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            reduce(
                F,
                "aclnnMean",
                "ReduceMean",
                self_ as usize,
                dim as usize,
                keepDim,
                Some(dtype),
                out as usize,
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnMean",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnAmaxGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            reduce(
                F,
                "aclnnAmax",
                "ReduceMax",
                self_ as usize,
                dim as usize,
                keepDim,
                None,
                out as usize,
            ),
            workspaceSize,
            executor,
        )
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
    exec::launch(
        "aclnnAmax",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnSoftmaxGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnSoftmax",
                "SoftmaxV2",
                self_ as usize,
                out as usize,
                Attrs::from([("axes".to_string(), AttrValue::ListInt(vec![dim]))]),
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnSoftmax",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnLogSoftmaxGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnLogSoftmax",
                "LogSoftmaxV2",
                self_ as usize,
                out as usize,
                Attrs::from([("axes".to_string(), AttrValue::ListInt(vec![dim]))]),
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnLogSoftmax",
        workspace as usize,
        workspaceSize,
        executor as usize,
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
    const F: &str = "aclnnPermuteGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            permute(F, self_ as usize, dims as usize, out as usize),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnPermute",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
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
    const F: &str = "aclnnInplaceFillScalarGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            fill(F, selfRef as usize, value as usize),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnInplaceFillScalar",
        workspace as usize,
        workspaceSize,
        executor as usize,
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
    const F: &str = "aclnnInplaceZeroGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnInplaceZero",
                "ZerosLike",
                selfRef as usize,
                selfRef as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnInplaceZero",
        workspace as usize,
        workspaceSize,
        executor as usize,
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
    selfRef: *mut aclTensor,
    workspaceSize: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    const F: &str = "aclnnInplaceOneGetWorkspaceSize";
    // SAFETY: the out-pointers are the caller's, as documented.
    unsafe {
        prepare(
            F,
            unary(
                F,
                "aclnnInplaceOne",
                "OnesLike",
                selfRef as usize,
                selfRef as usize,
                Attrs::new(),
            ),
            workspaceSize,
            executor,
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
    exec::launch(
        "aclnnInplaceOne",
        workspace as usize,
        workspaceSize,
        executor as usize,
        stream,
    )
}

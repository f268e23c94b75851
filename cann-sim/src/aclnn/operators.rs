//! The aclnn operators: `aclnnXxxGetWorkspaceSize` builds a plan (the CANN
//! operator type and attributes the kernel library runs) and `aclnnXxx`
//! queues it. The mapping:
//!
//! | aclnn | CANN op | notes |
//! |---|---|---|
//! | Add, Sub | Add, Sub; Axpy when `alpha` ≠ 1 | an integer `out` needs an integral `alpha` (161002) |
//! | Mul, Div, Maximum, Minimum | Mul, RealDiv, Maximum, Minimum | |
//! | Log | (planned kernel, `nn.rs`) | integers promote to float, double computed in double |
//! | Neg, Abs, Exp, Sqrt, Rsqrt, Relu, Sigmoid, Tanh, Gelu | same name | |
//! | ThresholdBackward | (planned kernel, `nn.rs`) | any threshold |
//! | Cast | Cast | `dst_type` = `dtype` |
//! | Matmul | MatMul (2-D), BatchMatMul (else); a planned kernel for two float types | `cubeMathType` 0..=3 |
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
        native: None,
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

pub(super) fn matmul(
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
pub(super) fn reduce(
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

pub(super) fn permute(
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

pub(super) fn fill(f: &str, x: *const aclTensor, value: *const aclScalar) -> Planned {
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

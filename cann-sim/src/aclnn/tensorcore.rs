//! The planning functions of the tensor-core operators, the activation
//! backwards and the losses of the training set (issue 24, items 1 and 2):
//! each looks up its C arguments, asks the engine
//! ([`crate::ops::tensorcore`], [`crate::ops::backward_act`]) for the kernel
//! of the call, which checks dtypes, shapes and attributes against the
//! operator's page, and builds the plan. The table's `sim` entries call
//! them as `super::tensorcore::xxx(...)`.
//!
//! Codes: a null tensor is 161001, a dtype, shape or attribute the page
//! does not allow 161002 (naming the argument).

use super::nn::{input, ints, invalid, output, planned, scalar};
use super::operators::Planned;
use crate::ops::DType;
use crate::ops::backward_act::{self as bw, ActGrad};
use crate::ops::tensorcore::{self as tc, ScatterReduce};
use acl_sys::aclDataType;
use acl_sys::aclnn::{aclIntArray, aclScalar, aclTensor};

// ---------------------------------------------------------------------------
// Item 1: gather/scatter, selection, reductions, scans, cross.
// ---------------------------------------------------------------------------

pub(super) fn gather(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (xv, iv) = (input(f, "self", x)?, input(f, "index", index)?);
    let ov = output(f, "out", out)?;
    let k = tc::gather(&xv.spec, dim, &iv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![xv, iv], vec![ov], k)
}

/// aclnnScatter (`reduce` 0, 1, 2) and aclnnScatterAdd (`reduce` None: add).
pub(super) fn scatter(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    src: *const aclTensor,
    reduce: Option<i64>,
    out: *const aclTensor,
) -> Planned {
    let how = match reduce {
        None => ScatterReduce::Add,
        Some(r) => ScatterReduce::from_arg(r).ok_or_else(|| {
            invalid(
                f,
                &format!("reduce {r} is not 0 (replace), 1 (add) or 2 (multiply)"),
            )
        })?,
    };
    let (xv, iv, sv) = (
        input(f, "self", x)?,
        input(f, "index", index)?,
        input(f, "src", src)?,
    );
    let ov = output(f, "out", out)?;
    let name = if reduce.is_none() {
        "ScatterAdd"
    } else {
        "ScatterElements"
    };
    let k = tc::scatter(name, &xv.spec, dim, &iv.spec, &sv.spec, how, ov.spec.dtype);
    planned(f, &["out"], vec![xv, iv, sv], vec![ov], k)
}

pub(super) fn index_add(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    source: *const aclTensor,
    alpha: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let (xv, iv, sv) = (
        input(f, "self", x)?,
        input(f, "index", index)?,
        input(f, "source", source)?,
    );
    let a = scalar(f, "alpha", alpha)?;
    let ov = output(f, "out", out)?;
    let k = tc::index_add(&xv.spec, dim, &iv.spec, &sv.spec, a, ov.spec.dtype);
    planned(f, &["out"], vec![xv, iv, sv], vec![ov], k)
}

pub(super) fn masked_select(
    f: &'static str,
    x: *const aclTensor,
    mask: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (xv, mv) = (input(f, "self", x)?, input(f, "mask", mask)?);
    let ov = output(f, "out", out)?;
    let k = tc::masked_select(&xv.spec, &mv.spec, &ov.spec);
    planned(f, &["out"], vec![xv, mv], vec![ov], k)
}

pub(super) fn amin(
    f: &'static str,
    x: *const aclTensor,
    dim: *const aclIntArray,
    keep: bool,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let dims = ints(f, "dim", dim)?;
    let ov = output(f, "out", out)?;
    let k = tc::amin(&xv.spec, &dims, keep, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

pub(super) fn arg_min(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    keep: bool,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let ov = output(f, "out", out)?;
    let k = tc::arg_min(&xv.spec, dim, keep, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// aclnnMaxDim (`max`) and aclnnMinDim.
pub(super) fn max_min_dim(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    keep: bool,
    out: *const aclTensor,
    indices: *const aclTensor,
    max: bool,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (ov, iv) = (output(f, "out", out)?, output(f, "indices", indices)?);
    let k = tc::max_min_dim(&xv.spec, dim, keep, max, ov.spec.dtype, iv.spec.dtype);
    planned(f, &["out", "indices"], vec![xv], vec![ov, iv], k)
}

/// `dtype`, an aclDataType argument: a type of the simulator, or `None`
/// for ACL_DT_UNDEFINED when `undefined_ok`.
fn dtype_arg(
    f: &str,
    dtype: aclDataType,
    undefined_ok: bool,
) -> Result<Option<DType>, acl_sys::aclnn::aclnnStatus> {
    if undefined_ok && dtype == acl_sys::ACL_DT_UNDEFINED {
        return Ok(None);
    }
    DType::from_acl(dtype).map(Some).ok_or_else(|| {
        invalid(
            f,
            &format!("dtype {dtype} is not a type cann-sim computes in"),
        )
    })
}

pub(super) fn prod(
    f: &'static str,
    x: *const aclTensor,
    dtype: aclDataType,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let ov = output(f, "out", out)?;
    let Some(d) = dtype_arg(f, dtype, false)? else {
        return Err(invalid(f, "dtype is undefined"));
    };
    let k = tc::prod(&xv.spec, d, &ov.spec);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// aclnnCumprod: `dim` an int32 or int64 scalar (the release's
/// `DTYPE_SUPPORT_LIST_INT`, hicann/ops-math
/// `math/cumprod/op_api/aclnn_cumprod.cpp`).
pub(super) fn cumprod(
    f: &'static str,
    x: *const aclTensor,
    dim: *const aclScalar,
    dtype: aclDataType,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "input", x)?;
    let (dd, dv) = scalar(f, "dim", dim)?;
    if !matches!(dd, DType::I32 | DType::I64) {
        return Err(invalid(
            f,
            &format!("dim is a {} scalar; it must be int32 or int64", dd.name()),
        ));
    }
    let t = dtype_arg(f, dtype, true)?;
    let ov = output(f, "out", out)?;
    let k = tc::cumprod(&xv.spec, dv as i64, t, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// aclnnCummax (`max`) and aclnnCummin.
pub(super) fn cum_extreme(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    values: *const aclTensor,
    indices: *const aclTensor,
    max: bool,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (vv, iv) = (
        output(f, "valuesOut", values)?,
        output(f, "indicesOut", indices)?,
    );
    let k = tc::cum_extreme(&xv.spec, dim, max, vv.spec.dtype, iv.spec.dtype);
    planned(f, &["valuesOut", "indicesOut"], vec![xv], vec![vv, iv], k)
}

pub(super) fn linalg_cross(
    f: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    dim: i64,
    out: *const aclTensor,
) -> Planned {
    let (av, bv) = (input(f, "self", a)?, input(f, "other", b)?);
    let ov = output(f, "out", out)?;
    let k = tc::cross(&av.spec, &bv.spec, dim, ov.spec.dtype);
    planned(f, &["out"], vec![av, bv], vec![ov], k)
}

// ---------------------------------------------------------------------------
// Item 2: backwards and losses.
// ---------------------------------------------------------------------------

/// An element-wise activation gradient: `(gradOutput, x) → out`, where `x`
/// is named `xn` (`self` or `output`) and the result `on`.
#[allow(clippy::too_many_arguments)]
pub(super) fn act_grad(
    f: &'static str,
    kind: ActGrad,
    g: *const aclTensor,
    x: *const aclTensor,
    xn: &'static str,
    out: *const aclTensor,
    on: &'static str,
) -> Planned {
    let (gv, xv) = (input(f, "gradOutput", g)?, input(f, xn, x)?);
    let ov = output(f, on, out)?;
    let k = bw::act_grad(kind, &gv.spec, &xv.spec, xn, on, ov.spec.dtype);
    let names: &'static [&'static str] = if on == "out" {
        &["out"]
    } else {
        &["gradInput"]
    };
    planned(f, names, vec![gv, xv], vec![ov], k)
}

/// aclnnLeakyReluBackward: the slope a scalar; with `selfIsResult` (self
/// is the forward's output) a negative slope is refused, as the page says.
pub(super) fn leaky_relu_backward(
    f: &'static str,
    g: *const aclTensor,
    x: *const aclTensor,
    slope: *const aclScalar,
    self_is_result: bool,
    out: *const aclTensor,
) -> Planned {
    let (_, s) = scalar(f, "negativeSlope", slope)?;
    if self_is_result && s < 0.0 {
        return Err(invalid(
            f,
            &format!("negativeSlope {s} is negative while selfIsResult is true"),
        ));
    }
    act_grad(f, ActGrad::LeakyRelu(s), g, x, "self", out, "out")
}

pub(super) fn prelu(
    f: &'static str,
    x: *const aclTensor,
    w: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (xv, wv) = (input(f, "self", x)?, input(f, "weight", w)?);
    let ov = output(f, "out", out)?;
    let k = bw::prelu(&xv.spec, &wv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![xv, wv], vec![ov], k)
}

/// aclnnSoftmaxBackward and aclnnLogSoftmaxBackward (`log`).
pub(super) fn softmax_backward(
    f: &'static str,
    g: *const aclTensor,
    y: *const aclTensor,
    dim: i64,
    out: *const aclTensor,
    log: bool,
) -> Planned {
    let (gv, yv) = (input(f, "gradOutput", g)?, input(f, "output", y)?);
    let ov = output(f, "out", out)?;
    let k = bw::softmax_backward(&gv.spec, &yv.spec, dim, ov.spec.dtype, log);
    planned(f, &["out"], vec![gv, yv], vec![ov], k)
}

pub(super) fn embedding_dense_backward(
    f: &'static str,
    grad: *const aclTensor,
    indices: *const aclTensor,
    num_weights: u64,
    padding_idx: u64,
    scale: bool,
    out: *const aclTensor,
) -> Planned {
    let (gv, iv) = (input(f, "grad", grad)?, input(f, "indices", indices)?);
    let ov = output(f, "out", out)?;
    let k = bw::embedding_dense_backward(
        &gv.spec,
        &iv.spec,
        num_weights,
        padding_idx,
        scale,
        ov.spec.dtype,
    );
    planned(f, &["out"], vec![gv, iv], vec![ov], k)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn nll_loss(
    f: &'static str,
    x: *const aclTensor,
    target: *const aclTensor,
    weight: *const aclTensor,
    reduction: i64,
    ignore: i64,
    out: *const aclTensor,
    total: *const aclTensor,
) -> Planned {
    let (xv, tv, wv) = (
        input(f, "self", x)?,
        input(f, "target", target)?,
        input(f, "weight", weight)?,
    );
    let (ov, twv) = (output(f, "out", out)?, output(f, "totalWeightOut", total)?);
    let k = bw::nll_loss(
        &xv.spec, &tv.spec, &wv.spec, reduction, ignore, &ov.spec, &twv.spec,
    );
    planned(
        f,
        &["out", "totalWeightOut"],
        vec![xv, tv, wv],
        vec![ov, twv],
        k,
    )
}

#[allow(clippy::too_many_arguments)]
pub(super) fn nll_loss_backward(
    f: &'static str,
    g: *const aclTensor,
    x: *const aclTensor,
    target: *const aclTensor,
    weight: *const aclTensor,
    reduction: i64,
    ignore: i64,
    total: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (gv, xv, tv, wv, twv) = (
        input(f, "gradOutput", g)?,
        input(f, "self", x)?,
        input(f, "target", target)?,
        input(f, "weight", weight)?,
        input(f, "totalWeight", total)?,
    );
    let ov = output(f, "out", out)?;
    let k = bw::nll_loss_backward(
        &gv.spec,
        &xv.spec,
        &tv.spec,
        &wv.spec,
        reduction,
        ignore,
        &twv.spec,
        ov.spec.dtype,
    );
    planned(f, &["out"], vec![gv, xv, tv, wv, twv], vec![ov], k)
}

pub(super) fn mse_loss(
    f: &'static str,
    x: *const aclTensor,
    target: *const aclTensor,
    reduction: i64,
    out: *const aclTensor,
) -> Planned {
    let (xv, tv) = (input(f, "self", x)?, input(f, "target", target)?);
    let ov = output(f, "out", out)?;
    let k = bw::mse_loss(&xv.spec, &tv.spec, reduction, ov.spec.dtype);
    planned(f, &["out"], vec![xv, tv], vec![ov], k)
}

pub(super) fn mse_loss_backward(
    f: &'static str,
    g: *const aclTensor,
    x: *const aclTensor,
    target: *const aclTensor,
    reduction: i64,
    out: *const aclTensor,
) -> Planned {
    let (gv, xv, tv) = (
        input(f, "gradOutput", g)?,
        input(f, "self", x)?,
        input(f, "target", target)?,
    );
    let ov = output(f, "out", out)?;
    let k = bw::mse_loss_backward(&gv.spec, &xv.spec, &tv.spec, reduction, ov.spec.dtype);
    planned(f, &["out"], vec![gv, xv, tv], vec![ov], k)
}

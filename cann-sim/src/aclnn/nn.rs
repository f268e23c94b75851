//! The planning functions of the operators added through the operator
//! table (`acl-sys/operators.toml`) beyond the first set: each looks up its
//! C arguments, asks the engine ([`crate::ops::nn`]) for the kernel of the
//! call (which checks shapes, dtypes and attributes) and builds a plan that
//! runs it. The table's `sim` entries call these.
//!
//! Codes: a null argument is 161001, a handle of another kind or an
//! argument the operator does not take 161002 (every check of the engine),
//! as the operators' pages document (cited per operator in the table).

#![allow(non_snake_case)]

use super::exec::{self, Plan, PlanIn, View, bound, bound_list, int_array_arg, scalar_arg};
use super::operators::Planned;
use crate::ops::nn::{self, BinaryKind, Kernel, PadMode};
use crate::ops::{Attrs, DType, OpError};
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, aclIntArray, aclScalar, aclTensor, aclTensorList, aclnnStatus,
};

/// `aclnnXxx` of `aclnnXxxGetWorkspaceSize`.
fn api(f: &'static str) -> &'static str {
    f.strip_suffix("GetWorkspaceSize").unwrap_or(f)
}

/// The operator's name, `Xxx` of `aclnnXxxGetWorkspaceSize`: the kernel
/// runs under it.
fn op_name(f: &'static str) -> &'static str {
    let a = api(f);
    a.strip_prefix("aclnn").unwrap_or(a)
}

pub(super) fn invalid(f: &str, msg: &str) -> aclnnStatus {
    fail(ACLNN_ERR_PARAM_INVALID, format!("{f}: {msg}"))
}

pub(super) fn input(f: &str, what: &str, h: *const aclTensor) -> Result<View, aclnnStatus> {
    bound(f, what, h as usize, false)
}

pub(super) fn output(f: &str, what: &str, h: *const aclTensor) -> Result<View, aclnnStatus> {
    bound(f, what, h as usize, true)
}

pub(super) fn opt_input(
    f: &str,
    what: &str,
    h: *const aclTensor,
) -> Result<Option<View>, aclnnStatus> {
    if h.is_null() {
        Ok(None)
    } else {
        input(f, what, h).map(Some)
    }
}

pub(super) fn opt_output(
    f: &str,
    what: &str,
    h: *const aclTensor,
) -> Result<Option<View>, aclnnStatus> {
    if h.is_null() {
        Ok(None)
    } else {
        output(f, what, h).map(Some)
    }
}

pub(super) fn scalar(
    f: &str,
    what: &str,
    h: *const aclScalar,
) -> Result<(DType, f64), aclnnStatus> {
    let (d, b) = scalar_arg(f, what, h as usize)?;
    Ok((d, exec::to_f64(d, &b)))
}

pub(super) fn ints(f: &str, what: &str, h: *const aclIntArray) -> Result<Vec<i64>, aclnnStatus> {
    int_array_arg(f, what, h as usize)
}

/// The plan that runs `kernel` (made by the engine for these arguments):
/// the outputs must be what it writes, else 161002 naming the output.
pub(super) fn planned(
    f: &'static str,
    names: &'static [&'static str],
    inputs: Vec<View>,
    outputs: Vec<View>,
    kernel: Result<Kernel, OpError>,
) -> Planned {
    let k = kernel.map_err(|e| invalid(f, e.message()))?;
    if k.outputs.len() != outputs.len() {
        return Err(invalid(
            f,
            &format!(
                "the operator writes {} outputs, {} were given",
                k.outputs.len(),
                outputs.len()
            ),
        ));
    }
    for (i, (want, got)) in k.outputs.iter().zip(&outputs).enumerate() {
        if *want != got.spec {
            return Err(invalid(
                f,
                &format!(
                    "{} is {} {:?}, but the result is {} {:?}",
                    names.get(i).unwrap_or(&"out"),
                    got.spec.dtype.name(),
                    got.spec.shape,
                    want.dtype.name(),
                    want.shape
                ),
            ));
        }
    }
    Ok(Plan {
        api: api(f),
        op_type: k.native.name,
        attrs: Attrs::new(),
        inputs: inputs.into_iter().map(PlanIn::Device).collect(),
        outputs,
        output_names: names,
        native: Some(k.native),
    })
}

// ---------------------------------------------------------------------------
// Element-wise.
// ---------------------------------------------------------------------------

/// A float function of one tensor (`sin`, `silu`, ...): `out` holds a float.
pub(super) fn un_float(
    f: &'static str,
    x: *const aclTensor,
    out: *const aclTensor,
    g: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Planned {
    let (xv, ov) = (input(f, "self", x)?, output(f, "out", out)?);
    let k = nn::unary_float(op_name(f), &xv.spec, ov.spec.dtype, g);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// A function of one tensor in its own type (rounding, sign).
pub(super) fn un_keep(
    f: &'static str,
    x: *const aclTensor,
    out: *const aclTensor,
    g: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Planned {
    let (xv, ov) = (input(f, "self", x)?, output(f, "out", out)?);
    let k = nn::unary_keep(op_name(f), &xv.spec, ov.spec.dtype, g);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// A predicate of one tensor (`isfinite`, logical not): 0/1 into `out`.
pub(super) fn un_pred(
    f: &'static str,
    x: *const aclTensor,
    out: *const aclTensor,
    p: impl Fn(f64) -> bool + Send + Sync + 'static,
) -> Planned {
    let (xv, ov) = (input(f, "self", x)?, output(f, "out", out)?);
    let k = nn::unary_pred(op_name(f), &xv.spec, ov.spec.dtype, p);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// Bitwise not.
pub(super) fn un_bitnot(f: &'static str, x: *const aclTensor, out: *const aclTensor) -> Planned {
    let (xv, ov) = (input(f, "self", x)?, output(f, "out", out)?);
    let k = nn::unary_int(op_name(f), &xv.spec, ov.spec.dtype, |v, b| {
        if b { 1 - v } else { !v }
    });
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// A binary operator over two broadcasting tensors.
pub(super) fn bin(
    f: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
    kind: BinaryKind,
    g: impl Fn(f64, f64) -> f64 + Send + Sync + 'static,
) -> Planned {
    let (av, bv, ov) = (
        input(f, "self", a)?,
        input(f, "other", b)?,
        output(f, "out", out)?,
    );
    let k = nn::binary(op_name(f), &av.spec, &bv.spec, ov.spec.dtype, kind, g);
    planned(f, &["out"], vec![av, bv], vec![ov], k)
}

/// A binary operator of a tensor and a host scalar; `g(x, s)`.
pub(super) fn with_s(
    f: &'static str,
    x: *const aclTensor,
    s: *const aclScalar,
    out: *const aclTensor,
    kind: BinaryKind,
    g: impl Fn(f64, f64) -> f64 + Send + Sync + 'static,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (sd, sv) = scalar(f, "other", s)?;
    let ov = output(f, "out", out)?;
    let k = nn::with_scalar(op_name(f), &xv.spec, sd, ov.spec.dtype, kind, move |v| {
        g(v, sv)
    });
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// `out = self ± alpha · other` for a scalar `other` (Adds, Subs).
pub(super) fn adds(
    f: &'static str,
    x: *const aclTensor,
    other: *const aclScalar,
    alpha: *const aclScalar,
    out: *const aclTensor,
    sign: f64,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (od, ov_) = scalar(f, "other", other)?;
    let (ad, av) = scalar(f, "alpha", alpha)?;
    let ov = output(f, "out", out)?;
    let sd = if nn::is_float(od) || nn::is_float(ad) {
        DType::F32
    } else {
        od
    };
    let k = nn::with_scalar(
        op_name(f),
        &xv.spec,
        sd,
        ov.spec.dtype,
        BinaryKind::Promote,
        move |v| v + sign * av * ov_,
    );
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// `out = min(max(x, lo), hi)`, either bound optional (Clamp, ClampMin,
/// ClampMax).
pub(super) fn clamp(
    f: &'static str,
    x: *const aclTensor,
    lo: *const aclScalar,
    hi: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let lo = if lo.is_null() {
        None
    } else {
        Some(scalar(f, "clipValueMin", lo)?)
    };
    let hi = if hi.is_null() {
        None
    } else {
        Some(scalar(f, "clipValueMax", hi)?)
    };
    if lo.is_none() && hi.is_none() {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_PARAM_NULLPTR,
            format!("{f}: clipValueMin and clipValueMax are both null"),
        ));
    }
    let ov = output(f, "out", out)?;
    let sd = [lo, hi].iter().flatten().fold(xv.spec.dtype, |d, (sd, _)| {
        if nn::is_float(*sd) && !nn::is_float(d) {
            DType::F32
        } else {
            d
        }
    });
    let (l, h) = (lo.map(|p| p.1), hi.map(|p| p.1));
    let k = nn::with_scalar(
        op_name(f),
        &xv.spec,
        sd,
        ov.spec.dtype,
        BinaryKind::Promote,
        move |v| {
            let v = l.map_or(v, |l| v.max(l));
            h.map_or(v, |h| v.min(h))
        },
    );
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// A parametric activation of one tensor: `g(x, params)` with the scalar
/// arguments' values.
pub(super) fn act(
    f: &'static str,
    x: *const aclTensor,
    params: &[(&str, *const aclScalar)],
    out: *const aclTensor,
    g: impl Fn(f64, &[f64]) -> f64 + Send + Sync + 'static,
) -> Planned {
    let xv = input(f, "self", x)?;
    let ps = params
        .iter()
        .map(|&(n, h)| scalar(f, n, h).map(|p| p.1))
        .collect::<Result<Vec<f64>, _>>()?;
    let ov = output(f, "out", out)?;
    let k = nn::unary_float(op_name(f), &xv.spec, ov.spec.dtype, move |v| g(v, &ps));
    planned(f, &["out"], vec![xv], vec![ov], k)
}

/// `out = base ^ exponent` with a scalar base.
pub(super) fn pow_scalar_tensor(
    f: &'static str,
    base: *const aclScalar,
    exponent: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (bd, bv) = scalar(f, "self", base)?;
    let ev = input(f, "exponent", exponent)?;
    let ov = output(f, "out", out)?;
    let k = nn::with_scalar(
        op_name(f),
        &ev.spec,
        bd,
        ov.spec.dtype,
        BinaryKind::Promote,
        move |e| bv.powf(e),
    );
    planned(f, &["out"], vec![ev], vec![ov], k)
}

/// `out = condition ? self : other`.
pub(super) fn s_where(
    f: &'static str,
    c: *const aclTensor,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
) -> Planned {
    let (cv, av, bv) = (
        input(f, "condition", c)?,
        input(f, "self", a)?,
        input(f, "other", b)?,
    );
    let ov = output(f, "out", out)?;
    let k = nn::where_(&cv.spec, &av.spec, &bv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![cv, av, bv], vec![ov], k)
}

/// GELU, `approximate` 0 (erf) or 1 (tanh).
pub(super) fn gelu_v2(
    f: &'static str,
    x: *const aclTensor,
    approximate: i64,
    y: *const aclTensor,
) -> Planned {
    if !(0..=1).contains(&approximate) {
        return Err(invalid(
            f,
            &format!("approximate {approximate} is not 0 (none) or 1 (tanh)"),
        ));
    }
    let tanh = approximate == 1;
    un_float(f, x, y, move |v| nn::gelu(v, tanh))
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
pub(super) fn layer_norm(
    f: &'static str,
    x: *const aclTensor,
    normalized: *const aclIntArray,
    weight: *const aclTensor,
    bias: *const aclTensor,
    eps: f64,
    out: *const aclTensor,
    mean: *const aclTensor,
    rstd: *const aclTensor,
) -> Planned {
    let xv = input(f, "input", x)?;
    let shape = ints(f, "normalizedShape", normalized)?;
    let (wv, bv) = (
        opt_input(f, "weightOptional", weight)?,
        opt_input(f, "biasOptional", bias)?,
    );
    let ov = output(f, "out", out)?;
    let (mv, rv) = (
        opt_output(f, "meanOutOptional", mean)?,
        opt_output(f, "rstdOutOptional", rstd)?,
    );
    let k = nn::layer_norm(
        &xv.spec,
        &shape,
        wv.as_ref().map(|v| &v.spec),
        bv.as_ref().map(|v| &v.spec),
        eps,
        ov.spec.dtype,
        mv.as_ref().map(|v| v.spec.dtype),
        rv.as_ref().map(|v| v.spec.dtype),
    );
    let names: &'static [&'static str] = match (&mv, &rv) {
        (Some(_), Some(_)) => &["out", "meanOutOptional", "rstdOutOptional"],
        (Some(_), None) => &["out", "meanOutOptional"],
        (None, Some(_)) => &["out", "rstdOutOptional"],
        (None, None) => &["out"],
    };
    let inputs = [Some(xv), wv, bv].into_iter().flatten().collect();
    let outputs = [Some(ov), mv, rv].into_iter().flatten().collect();
    planned(f, names, inputs, outputs, k)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn add_rms_norm(
    f: &'static str,
    x1: *const aclTensor,
    x2: *const aclTensor,
    gamma: *const aclTensor,
    eps: f64,
    y: *const aclTensor,
    rstd: *const aclTensor,
    x: *const aclTensor,
) -> Planned {
    let (a, b, g) = (
        input(f, "x1", x1)?,
        input(f, "x2", x2)?,
        input(f, "gamma", gamma)?,
    );
    let (yv, rv, xv) = (
        output(f, "yOut", y)?,
        output(f, "rstdOut", rstd)?,
        output(f, "xOut", x)?,
    );
    let k = nn::add_rms_norm(
        &a.spec,
        &b.spec,
        &g.spec,
        eps,
        [yv.spec.dtype, rv.spec.dtype, xv.spec.dtype],
    );
    planned(
        f,
        &["yOut", "rstdOut", "xOut"],
        vec![a, b, g],
        vec![yv, rv, xv],
        k,
    )
}

#[allow(clippy::too_many_arguments)]
pub(super) fn group_norm(
    f: &'static str,
    x: *const aclTensor,
    gamma: *const aclTensor,
    beta: *const aclTensor,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
    out: *const aclTensor,
    mean: *const aclTensor,
    rstd: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (gv, bv) = (opt_input(f, "gamma", gamma)?, opt_input(f, "beta", beta)?);
    let (ov, mv, rv) = (
        output(f, "out", out)?,
        output(f, "meanOut", mean)?,
        output(f, "rstdOut", rstd)?,
    );
    let k = nn::group_norm(
        &xv.spec,
        gv.as_ref().map(|v| &v.spec),
        bv.as_ref().map(|v| &v.spec),
        n,
        c,
        hxw,
        group,
        eps,
        [ov.spec.dtype, mv.spec.dtype, rv.spec.dtype],
    );
    let inputs = [Some(xv), gv, bv].into_iter().flatten().collect();
    planned(
        f,
        &["out", "meanOut", "rstdOut"],
        inputs,
        vec![ov, mv, rv],
        k,
    )
}

pub(super) fn norm(
    f: &'static str,
    x: *const aclTensor,
    p: *const aclScalar,
    dim: *const aclIntArray,
    keep: bool,
    out: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (_, pv) = scalar(f, "pScalar", p)?;
    let dims = ints(f, "dim", dim)?;
    let ov = output(f, "out", out)?;
    let k = nn::norm(&xv.spec, pv, &dims, keep, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

// ---------------------------------------------------------------------------
// Layout.
// ---------------------------------------------------------------------------

/// An operator of one tensor whose kernel the engine makes from the input
/// spec and `out`'s dtype.
fn shaped(
    f: &'static str,
    x: *const aclTensor,
    out: *const aclTensor,
    make: impl FnOnce(&crate::ops::TensorSpec, DType) -> Result<Kernel, OpError>,
) -> Planned {
    let xv = input(f, "self", x)?;
    let ov = output(f, "out", out)?;
    let k = make(&xv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![xv], vec![ov], k)
}

pub(super) fn slice(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: *const aclTensor,
) -> Planned {
    shaped(f, x, out, |s, d| nn::slice(s, dim, start, end, step, d))
}

pub(super) fn triangle(
    f: &'static str,
    x: *const aclTensor,
    diagonal: i64,
    out: *const aclTensor,
    lower: bool,
) -> Planned {
    shaped(f, x, out, |s, d| nn::triangle(s, diagonal, lower, d))
}

pub(super) fn repeat(
    f: &'static str,
    x: *const aclTensor,
    repeats: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let r = ints(f, "repeats", repeats)?;
    shaped(f, x, out, |s, d| nn::repeat(s, &r, d))
}

pub(super) fn repeat_interleave(
    f: &'static str,
    x: *const aclTensor,
    repeats: i64,
    dim: i64,
    output_size: i64,
    out: *const aclTensor,
) -> Planned {
    let p = shaped(f, x, out, |s, d| nn::repeat_interleave(s, repeats, dim, d))?;
    // outputSize, when given (>= 0), must be the length along dim.
    let d = p.outputs[0]
        .spec
        .shape
        .get(crate::ops::normalize_axis(dim, p.outputs[0].spec.shape.len().max(1)).unwrap_or(0))
        .copied();
    if output_size >= 0 && d.is_some_and(|d| d != output_size) {
        return Err(invalid(
            f,
            &format!(
                "outputSize {output_size} differs from the result's {}",
                d.unwrap_or(0)
            ),
        ));
    }
    Ok(p)
}

pub(super) fn roll(
    f: &'static str,
    x: *const aclTensor,
    shifts: *const aclIntArray,
    dims: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let (sh, ds) = (ints(f, "shifts", shifts)?, ints(f, "dims", dims)?);
    shaped(f, x, out, |s, d| nn::roll(s, &sh, &ds, d))
}

pub(super) fn flip(
    f: &'static str,
    x: *const aclTensor,
    dims: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let ds = ints(f, "dims", dims)?;
    shaped(f, x, out, |s, d| nn::flip(s, &ds, d))
}

pub(super) fn constant_pad(
    f: &'static str,
    x: *const aclTensor,
    pad: *const aclIntArray,
    value: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let p = ints(f, "pad", pad)?;
    let (_, v) = scalar(f, "value", value)?;
    shaped(f, x, out, |s, d| nn::pad(s, &p, PadMode::Constant, v, d))
}

pub(super) fn reflection_pad(
    f: &'static str,
    x: *const aclTensor,
    padding: *const aclIntArray,
    out: *const aclTensor,
    rank: usize,
) -> Planned {
    let p = ints(f, "padding", padding)?;
    if p.len() != 2 * rank {
        return Err(invalid(
            f,
            &format!("padding has {} entries; it must have {}", p.len(), 2 * rank),
        ));
    }
    shaped(f, x, out, |s, d| nn::pad(s, &p, PadMode::Reflect, 0.0, d))
}

pub(super) fn cat(
    f: &'static str,
    tensors: *const aclTensorList,
    dim: i64,
    out: *const aclTensor,
    stack: bool,
) -> Planned {
    let xs = bound_list(f, "tensors", tensors as usize)?;
    let ov = output(f, "out", out)?;
    let specs: Vec<_> = xs.iter().map(|v| v.spec.clone()).collect();
    let k = nn::cat(&specs, dim, ov.spec.dtype, stack);
    planned(f, &["out"], xs, vec![ov], k)
}

pub(super) fn index_select(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    out: *const aclTensor,
    one_d: bool,
) -> Planned {
    let (xv, iv) = (input(f, "self", x)?, input(f, "index", index)?);
    let ov = output(f, "out", out)?;
    let k = nn::index_select(&xv.spec, dim, &iv.spec, ov.spec.dtype, one_d);
    planned(f, &["out"], vec![xv, iv], vec![ov], k)
}

pub(super) fn arange(
    f: &'static str,
    start: *const aclScalar,
    end: *const aclScalar,
    step: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let (s, e, st) = (
        scalar(f, "start", start)?.1,
        scalar(f, "end", end)?.1,
        scalar(f, "step", step)?.1,
    );
    let ov = output(f, "out", out)?;
    let k = nn::arange(s, e, st, &ov.spec);
    planned(f, &["out"], vec![], vec![ov], k)
}

pub(super) fn cumsum(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    dtype: acl_sys::aclDataType,
    out: *const aclTensor,
) -> Planned {
    let ov_dtype = output(f, "out", out)?.spec.dtype;
    if DType::from_acl(dtype) != Some(ov_dtype) {
        return Err(invalid(
            f,
            &format!("dtype {dtype} is not out's ({})", ov_dtype.name()),
        ));
    }
    shaped(f, x, out, |s, d| nn::cumulative(s, dim, d, false))
}

pub(super) fn argsort(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    descending: bool,
    out: *const aclTensor,
) -> Planned {
    shaped(f, x, out, |s, d| {
        nn::sort(s, dim, descending, None, None, d)
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn sort(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    descending: bool,
    k: Option<i64>,
    values: *const aclTensor,
    indices: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (vv, iv) = (
        output(f, "valuesOut", values)?,
        output(f, "indicesOut", indices)?,
    );
    let kern = nn::sort(
        &xv.spec,
        dim,
        descending,
        k,
        Some(vv.spec.dtype),
        iv.spec.dtype,
    );
    planned(
        f,
        &["valuesOut", "indicesOut"],
        vec![xv],
        vec![vv, iv],
        kern,
    )
}

pub(super) fn index_copy(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclTensor,
    source: *const aclTensor,
) -> Planned {
    let xv = output(f, "selfRef", x)?;
    let (iv, sv) = (input(f, "index", index)?, input(f, "source", source)?);
    if iv.spec.shape.len() > 1 || !matches!(iv.spec.dtype, DType::I32 | DType::I64) {
        return Err(invalid(f, "index must be a 1-D int32 or int64 tensor"));
    }
    let k = nn::index_put(&xv.spec, dim, iv.spec.numel(), Some(&sv.spec), None, 0.0);
    let xin = xv.clone();
    planned(f, &["selfRef"], vec![xin, iv, sv], vec![xv], k)
}

pub(super) fn index_fill(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    index: *const aclIntArray,
    value: *const aclScalar,
) -> Planned {
    let xv = output(f, "selfRef", x)?;
    let ix = ints(f, "index", index)?;
    let (_, v) = scalar(f, "value", value)?;
    let k = nn::index_put(&xv.spec, dim, ix.len(), None, Some(ix), v);
    let xin = xv.clone();
    planned(f, &["selfRef"], vec![xin], vec![xv], k)
}

pub(super) fn mm(
    f: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
    cube: i8,
    vector: bool,
) -> Planned {
    if !(0..=3).contains(&cube) {
        return Err(invalid(f, &format!("cubeMathType {cube} is not 0..=3")));
    }
    let av = input(f, "self", a)?;
    let bv = input(f, if vector { "vec" } else { "mat2" }, b)?;
    let ov = output(f, "out", out)?;
    let k = nn::mm(&av.spec, &bv.spec, ov.spec.dtype, vector);
    planned(f, &["out"], vec![av, bv], vec![ov], k)
}

// ---------------------------------------------------------------------------
// Operators of the first set, as the release has them.
// ---------------------------------------------------------------------------

/// aclnnRmsNorm (hicann/ops-nn `norm/rms_norm`): mixed float types, the
/// release's `rstd` shapes, and a gamma that does not fit x as the tiling
/// error 561002.
pub(super) fn rms_norm_release(
    f: &'static str,
    x: *const aclTensor,
    gamma: *const aclTensor,
    epsilon: f64,
    y: *const aclTensor,
    rstd: *const aclTensor,
) -> Planned {
    let (xv, gv) = (input(f, "x", x)?, input(f, "gamma", gamma)?);
    let (yv, rv) = (output(f, "yOut", y)?, output(f, "rstdOut", rstd)?);
    let k = match nn::rms_norm(&xv.spec, &gv.spec, epsilon, yv.spec.dtype, &rv.spec) {
        Ok(Ok(k)) => Ok(k),
        Ok(Err(tiling)) => {
            return Err(fail(
                acl_sys::aclnn::ACLNN_ERR_INNER_TILING_ERROR,
                format!("{f}: {tiling}"),
            ));
        }
        Err(e) => Err(e),
    };
    planned(f, &["yOut", "rstdOut"], vec![xv, gv], vec![yv, rv], k)
}

/// aclnnMatmul with operands of two float types (f32 × f16, as ggml's CANN
/// backend passes them): computed in the promoted type. Operands of one
/// type take the library's MatMul/BatchMatMul (`operators::matmul`).
pub(super) fn matmul_release(
    f: &'static str,
    a: *const aclTensor,
    b: *const aclTensor,
    out: *const aclTensor,
    cube: i8,
) -> Planned {
    let (av, bv) = (input(f, "self", a)?, input(f, "mat2", b)?);
    if av.spec.dtype == bv.spec.dtype {
        return super::operators::matmul(f, "aclnnMatmul", a, b, out, cube, false);
    }
    if !(0..=3).contains(&cube) {
        return Err(invalid(f, &format!("cubeMathType {cube} is not 0..=3")));
    }
    let ov = output(f, "out", out)?;
    let k = nn::matmul_mixed(&av.spec, &bv.spec, ov.spec.dtype);
    planned(f, &["out"], vec![av, bv], vec![ov], k)
}

/// aclnnThresholdBackward: `out = self > threshold ? gradOutput : 0`, any
/// threshold.
pub(super) fn threshold_backward_release(
    f: &'static str,
    grad: *const aclTensor,
    x: *const aclTensor,
    threshold: *const aclScalar,
    out: *const aclTensor,
) -> Planned {
    let (gv, xv) = (input(f, "gradOutput", grad)?, input(f, "self", x)?);
    let (_, t) = scalar(f, "threshold", threshold)?;
    let ov = output(f, "gradInput", out)?;
    let k = nn::binary(
        op_name(f),
        &gv.spec,
        &xv.spec,
        ov.spec.dtype,
        BinaryKind::Promote,
        move |g, v| if v > t { g } else { 0.0 },
    );
    planned(f, &["gradInput"], vec![gv, xv], vec![ov], k)
}

// ---------------------------------------------------------------------------
// Convolution and pooling.
// ---------------------------------------------------------------------------

#[allow(clippy::too_many_arguments)]
pub(super) fn convolution(
    f: &'static str,
    x: *const aclTensor,
    w: *const aclTensor,
    bias: *const aclTensor,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    transposed: bool,
    output_padding: *const aclIntArray,
    groups: i64,
    out: *const aclTensor,
    cube: i8,
) -> Planned {
    if !(0..=3).contains(&cube) {
        return Err(invalid(f, &format!("cubeMathType {cube} is not 0..=3")));
    }
    let (xv, wv) = (input(f, "input", x)?, input(f, "weight", w)?);
    let bv = opt_input(f, "bias", bias)?;
    let attrs = nn::ConvAttrs {
        stride: ints(f, "stride", stride)?,
        padding: ints(f, "padding", padding)?,
        dilation: ints(f, "dilation", dilation)?,
        transposed,
        output_padding: ints(f, "outputPadding", output_padding)?,
        groups,
    };
    let ov = output(f, "output", out)?;
    let k = nn::convolution(
        &xv.spec,
        &wv.spec,
        bv.as_ref().map(|b| &b.spec),
        &attrs,
        ov.spec.dtype,
    );
    let inputs = [Some(xv), Some(wv), bv].into_iter().flatten().collect();
    planned(f, &["output"], inputs, vec![ov], k)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn avg_pool2d(
    f: &'static str,
    x: *const aclTensor,
    kernel: *const aclIntArray,
    strides: *const aclIntArray,
    paddings: *const aclIntArray,
    ceil: bool,
    count_pad: bool,
    divisor: i64,
    cube: i8,
    out: *const aclTensor,
) -> Planned {
    if !(0..=3).contains(&cube) {
        return Err(invalid(f, &format!("cubeMathType {cube} is not 0..=3")));
    }
    let (k, st, p) = (
        ints(f, "kernelSize", kernel)?,
        ints(f, "strides", strides)?,
        ints(f, "paddings", paddings)?,
    );
    let p2 = match p.len() {
        1 => [p[0]; 4],
        2 => [p[0], p[1], p[0], p[1]],
        _ => {
            return Err(invalid(
                f,
                &format!("paddings has {} entries; it needs 1 or 2", p.len()),
            ));
        }
    };
    let pool = nn::Pool::Avg { count_pad, divisor };
    shaped(f, x, out, |s, d| {
        nn::pool2d(s, &k, &st, p2, &[], ceil, pool, d, None)
    })
}

/// aclnnMaxPool (ONNX attributes): `pads` (top, left, bottom, right) or
/// (h, w); `autoPad` 0 (explicit pads) only.
#[allow(clippy::too_many_arguments)]
pub(super) fn max_pool(
    f: &'static str,
    x: *const aclTensor,
    kernel: *const aclIntArray,
    strides: *const aclIntArray,
    auto_pad: i64,
    pads: *const aclIntArray,
    dilations: *const aclIntArray,
    ceil: i64,
    out: *const aclTensor,
) -> Planned {
    if auto_pad != 0 {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: autoPad {auto_pad} is not supported by cann-sim (explicit pads, 0, only)"
            ),
        ));
    }
    let (k, st, p, dl) = (
        ints(f, "kernelShape", kernel)?,
        ints(f, "strides", strides)?,
        ints(f, "pads", pads)?,
        ints(f, "dilations", dilations)?,
    );
    let p4 = match p.len() {
        0 => [0; 4],
        2 => [p[0], p[1], p[0], p[1]],
        4 => [p[0], p[1], p[2], p[3]],
        n => {
            return Err(invalid(
                f,
                &format!("pads has {n} entries; it needs 0, 2 or 4"),
            ));
        }
    };
    shaped(f, x, out, |s, d| {
        nn::pool2d(s, &k, &st, p4, &dl, ceil != 0, nn::Pool::Max, d, None)
    })
}

#[allow(clippy::too_many_arguments)]
pub(super) fn max_pool_with_indices(
    f: &'static str,
    x: *const aclTensor,
    kernel: *const aclIntArray,
    stride: *const aclIntArray,
    padding: *const aclIntArray,
    dilation: *const aclIntArray,
    ceil: bool,
    out: *const aclTensor,
    indices: *const aclTensor,
) -> Planned {
    let xv = input(f, "self", x)?;
    let (k, st, p, dl) = (
        ints(f, "kernelSize", kernel)?,
        ints(f, "stride", stride)?,
        ints(f, "padding", padding)?,
        ints(f, "dilation", dilation)?,
    );
    let p4 = match p.len() {
        1 => [p[0]; 4],
        2 => [p[0], p[1], p[0], p[1]],
        n => {
            return Err(invalid(
                f,
                &format!("padding has {n} entries; it needs 1 or 2"),
            ));
        }
    };
    let (ov, iv) = (output(f, "out", out)?, output(f, "indices", indices)?);
    let kern = nn::pool2d(
        &xv.spec,
        &k,
        &st,
        p4,
        &dl,
        ceil,
        nn::Pool::Max,
        ov.spec.dtype,
        Some(iv.spec.dtype),
    );
    planned(f, &["out", "indices"], vec![xv], vec![ov, iv], kern)
}

pub(super) fn im2col(
    f: &'static str,
    x: *const aclTensor,
    kernel: *const aclIntArray,
    dilation: *const aclIntArray,
    padding: *const aclIntArray,
    stride: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let (k, dl, p, st) = (
        ints(f, "kernelSize", kernel)?,
        ints(f, "dilation", dilation)?,
        ints(f, "padding", padding)?,
        ints(f, "stride", stride)?,
    );
    shaped(f, x, out, |s, d| nn::im2col(s, &k, &dl, &p, &st, d))
}

pub(super) fn upsample_nearest2d(
    f: &'static str,
    x: *const aclTensor,
    size: *const aclIntArray,
    out: *const aclTensor,
) -> Planned {
    let sz = ints(f, "outputSize", size)?;
    shaped(f, x, out, |s, d| nn::upsample_nearest2d(s, &sz, d))
}

// ---------------------------------------------------------------------------
// Attention, gated activations, losses, quantised matmul, solves.
// ---------------------------------------------------------------------------

/// aclnnFusedInferAttentionScoreV2: one key and one value tensor, an
/// optional mask and position bias (`pseShift`), the valid lengths per
/// batch (`actualSeqLengths`, `actualSeqLengthsKv`), `numHeads`/
/// `numKeyValueHeads`, `scaleValue`, layouts BSH/BSND/BNSD, `sparseMode`
/// 0 to 3 with `preTokens`/`nextTokens`, page attention (`blockTable`,
/// `blockSize`) ([`nn::AttentionOptions`]). The quantisation, padding and
/// shared-prefix inputs, sparse mode 4 and key/value lists of several
/// tensors are 561003 on cann-sim.
#[allow(clippy::too_many_arguments)]
pub(super) fn fused_attention(
    f: &'static str,
    query: *const aclTensor,
    key: *const aclTensorList,
    value: *const aclTensorList,
    pse: *const aclTensor,
    mask: *const aclTensor,
    q_lens: *const aclIntArray,
    kv_lens: *const aclIntArray,
    (block_table, block_size): (*const aclTensor, i64),
    unsupported: &[(&str, bool)],
    num_heads: i64,
    scale: f64,
    (pre_tokens, next_tokens): (i64, i64),
    layout: *const std::ffi::c_char,
    kv_heads: i64,
    sparse_mode: i64,
    lse_flag: bool,
    out: *const aclTensor,
    lse: *const aclTensor,
) -> Planned {
    let qv = input(f, "query", query)?;
    let (ks, vs) = (
        bound_list(f, "key", key as usize)?,
        bound_list(f, "value", value as usize)?,
    );
    if layout.is_null() {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_PARAM_NULLPTR,
            format!("{f}: inputLayout is null"),
        ));
    }
    // SAFETY: a non-null C string from the caller, read up to its NUL.
    let layout = unsafe { std::ffi::CStr::from_ptr(layout) }
        .to_string_lossy()
        .into_owned();
    let Some(lay) = nn::Layout::parse(&layout) else {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!("{f}: inputLayout {layout:?} is not supported by cann-sim (BSH, BSND, BNSD)"),
        ));
    };
    if let Some((what, _)) = unsupported.iter().find(|(_, given)| *given) {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: {what} is not supported by cann-sim (no quantisation, padding or shared prefix)"
            ),
        ));
    }
    if ks.len() != 1 || vs.len() != 1 {
        return Err(fail(
            acl_sys::aclnn::ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{f}: {} key and {} value tensors are not supported by cann-sim (one of each)",
                ks.len(),
                vs.len()
            ),
        ));
    }
    let pv = opt_input(f, "pseShiftOptional", pse)?;
    let mv = opt_input(f, "attenMaskOptional", mask)?;
    let tv = opt_input(f, "blockTableOptional", block_table)?;
    let lens = |what, h: *const aclIntArray| -> Result<Option<Vec<i64>>, aclnnStatus> {
        if h.is_null() {
            Ok(None)
        } else {
            ints(f, what, h).map(Some)
        }
    };
    let opts = nn::AttentionOptions {
        pse: pv.as_ref().map(|p| p.spec.clone()),
        q_lens: lens("actualSeqLengthsOptional", q_lens)?,
        kv_lens: lens("actualSeqLengthsKvOptional", kv_lens)?,
        sparse_mode,
        pre_tokens,
        next_tokens,
        paged: tv.as_ref().map(|t| (t.spec.clone(), block_size)),
    };
    let ov = output(f, "attentionOut", out)?;
    let lv = if lse_flag {
        Some(output(f, "softmaxLse", lse)?)
    } else {
        None
    };
    let (k0, v0) = (ks[0].clone(), vs[0].clone());
    let kern = nn::attention(
        &qv.spec,
        &k0.spec,
        &v0.spec,
        mv.as_ref().map(|m| &m.spec),
        lay,
        num_heads,
        kv_heads,
        scale,
        &opts,
        ov.spec.dtype,
        lv.as_ref().map(|l| l.spec.dtype),
    );
    let names: &'static [&'static str] = if lv.is_some() {
        &["attentionOut", "softmaxLse"]
    } else {
        &["attentionOut"]
    };
    let inputs = [Some(qv), Some(k0), Some(v0), mv, pv, tv]
        .into_iter()
        .flatten()
        .collect();
    let outputs = [Some(ov), lv].into_iter().flatten().collect();
    planned(f, names, inputs, outputs, kern)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn geglu(
    f: &'static str,
    x: *const aclTensor,
    dim: i64,
    approximate: i64,
    activate_left: bool,
    out: *const aclTensor,
    out_gelu: *const aclTensor,
) -> Planned {
    if !(0..=1).contains(&approximate) {
        return Err(invalid(
            f,
            &format!("approximate {approximate} is not 0 (none) or 1 (tanh)"),
        ));
    }
    let xv = input(f, "self", x)?;
    let (ov, gv) = (output(f, "out", out)?, output(f, "outGelu", out_gelu)?);
    let k = nn::geglu(
        &xv.spec,
        dim,
        approximate == 1,
        activate_left,
        [ov.spec.dtype, gv.spec.dtype],
    );
    planned(f, &["out", "outGelu"], vec![xv], vec![ov, gv], k)
}

pub(super) fn softmax_cross_entropy(
    f: &'static str,
    features: *const aclTensor,
    labels: *const aclTensor,
    loss: *const aclTensor,
    backprop: *const aclTensor,
) -> Planned {
    let (fv, lv) = (input(f, "features", features)?, input(f, "labels", labels)?);
    let (ov, bv) = (output(f, "loss", loss)?, output(f, "backprop", backprop)?);
    let k = nn::softmax_cross_entropy(&fv.spec, &lv.spec, [ov.spec.dtype, bv.spec.dtype]);
    planned(f, &["loss", "backprop"], vec![fv, lv], vec![ov, bv], k)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn triangular_solve(
    f: &'static str,
    b: *const aclTensor,
    a: *const aclTensor,
    upper: bool,
    transpose: bool,
    unit: bool,
    x: *const aclTensor,
    m: *const aclTensor,
) -> Planned {
    let (bv, av) = (input(f, "self", b)?, input(f, "A", a)?);
    let (xv, mv) = (output(f, "xOut", x)?, output(f, "mOut", m)?);
    let k = nn::triangular_solve(
        &bv.spec,
        &av.spec,
        upper,
        transpose,
        unit,
        [xv.spec.dtype, mv.spec.dtype],
    );
    planned(f, &["xOut", "mOut"], vec![bv, av], vec![xv, mv], k)
}

/// aclnnTransMatmulWeight: converts a weight in place to the layout the
/// Cube unit prefers. The simulator's matmul reads ND directly, so its
/// preferred layout is ND and the conversion leaves the tensor as it is
/// (checked: a 2-D or 3-D float or int8 tensor, as the page requires).
pub(super) fn trans_matmul_weight(f: &'static str, w: *const aclTensor) -> Planned {
    let wv = output(f, "mmWeightRef", w)?;
    let r = wv.spec.shape.len();
    if !(2..=3).contains(&r)
        || !matches!(
            wv.spec.dtype,
            DType::F16 | DType::BF16 | DType::F32 | DType::I8
        )
    {
        return Err(invalid(
            f,
            &format!(
                "mmWeightRef {:?} {} must be a 2-D or 3-D float16/bfloat16/float32/int8 tensor",
                wv.spec.shape,
                wv.spec.dtype.name()
            ),
        ));
    }
    let spec = wv.spec.clone();
    let k = Ok(Kernel {
        outputs: vec![spec],
        native: crate::ops::native::Native::new("TransMatmulWeight", |i, o| {
            o[0].data.copy_from_slice(i[0].data);
            Ok(())
        }),
    });
    let wi = wv.clone();
    planned(f, &["mmWeightRef"], vec![wi], vec![wv], k)
}

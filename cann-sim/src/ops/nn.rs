//! The kernels of the aclnn operators planned directly ([`super::native`]):
//! each function checks the shapes, dtypes and attributes of one call and
//! returns the output specs with the kernel that computes them. Every rule
//! here is the operator's documented one (the page is cited in the
//! operator table, `acl-sys/operators.toml`); a violation is an
//! [`OpError`], which the aclnn exports report as 161002.

use super::broadcast::{broadcast_strides, contiguous_strides};
use super::native::{Native, read, read_i64, write, write_i64};
use super::{DType, OpError, Output, TensorSpec, fmt_shape, normalize_axis};

/// A planned kernel: what it writes, and how.
#[derive(Debug)]
pub struct Kernel {
    /// The output specs, in order.
    pub outputs: Vec<TensorSpec>,
    /// The computation.
    pub native: Native,
}

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// Whether `d` is a floating-point type.
pub fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::F64)
}

/// The type a float function of `x` computes in: `x`'s when float, else f32
/// (integers and bool promote, as torch and aclnn do).
pub fn float_result(x: DType) -> DType {
    if is_float(x) { x } else { DType::F32 }
}

/// PyTorch's `canCast`: a float result cannot go to an integer or bool
/// output, an integer result not to bool.
pub fn check_cast(name: &str, what: &str, result: DType, out: DType) -> Res<()> {
    let ok = if is_float(result) {
        is_float(out)
    } else if result == DType::Bool {
        true
    } else {
        out != DType::Bool
    };
    if ok {
        Ok(())
    } else {
        err(format!(
            "{name}: the result is {} but {what} is {}, which cannot hold it",
            result.name(),
            out.name()
        ))
    }
}

/// The dtype two operands promote to (torch's rules on the simulator's
/// types): float beats integer, the wider float wins (f16 with bf16 is f32),
/// the wider integer wins.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let rank = |d: DType| match d {
        Bool => 0,
        U8 | I8 => 1,
        I16 => 2,
        I32 => 3,
        I64 => 4,
        F16 | BF16 => 10,
        F32 => 11,
        F64 => 12,
    };
    match (a, b) {
        (F16, BF16) | (BF16, F16) => F32,
        (U8, I8) | (I8, U8) => I32,
        _ => {
            if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
    }
}

/// The broadcast shape of two shapes.
pub fn broadcast(name: &str, an: &str, a: &[i64], bn: &str, b: &[i64]) -> Res<Vec<i64>> {
    let rank = a.len().max(b.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let da = (i + a.len()).checked_sub(rank).map_or(1, |j| a[j]);
        let db = (i + b.len()).checked_sub(rank).map_or(1, |j| b[j]);
        out.push(if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return err(format!(
                "{name}: {an} of shape {} and {bn} of shape {} do not broadcast",
                fmt_shape(a),
                fmt_shape(b)
            ));
        });
    }
    Ok(out)
}

pub(crate) fn numel(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

pub(crate) fn spec(dtype: DType, shape: Vec<i64>) -> TensorSpec {
    TensorSpec { dtype, shape }
}

pub(crate) fn axis(name: &str, what: &str, a: i64, rank: usize) -> Res<usize> {
    // A scalar's only axis is 0 or -1 (torch's `maybe_wrap_dim` with rank 1).
    normalize_axis(a, rank.max(1)).ok_or_else(|| {
        OpError::Input(format!(
            "{name}: {what} {a} is out of range for a tensor of rank {rank}"
        ))
    })
}

/// For each element of `out` (row-major), its offset in an operand of
/// `shape` broadcast to `out`.
pub(crate) fn broadcast_offsets(shape: &[i64], out: &[i64]) -> Vec<usize> {
    let st = broadcast_strides(shape, out);
    let n = numel(out);
    let mut offs = Vec::with_capacity(n);
    let dims: Vec<usize> = out.iter().map(|&d| d.max(0) as usize).collect();
    let mut idx = vec![0usize; dims.len()];
    for _ in 0..n {
        offs.push(idx.iter().zip(&st).map(|(i, s)| i * s).sum());
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    offs
}

// ---------------------------------------------------------------------------
// Element-wise.
// ---------------------------------------------------------------------------

/// `out = f(x)`, computed in float ([`float_result`]), stored as `out`'s
/// dtype (which must hold a float).
pub fn unary_float(
    name: &'static str,
    x: &TensorSpec,
    out: DType,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Res<Kernel> {
    check_cast(name, "out", float_result(x.dtype), out)?;
    map_unary(name, x, out, f)
}

/// `out = f(x)` in `x`'s own type (rounding functions, sign, negation),
/// stored as `out`'s dtype.
pub fn unary_keep(
    name: &'static str,
    x: &TensorSpec,
    out: DType,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Res<Kernel> {
    check_cast(name, "out", x.dtype, out)?;
    map_unary(name, x, out, f)
}

/// `out = p(x)` as 0/1 (any `out` dtype; bool normally).
pub fn unary_pred(
    name: &'static str,
    x: &TensorSpec,
    out: DType,
    p: impl Fn(f64) -> bool + Send + Sync + 'static,
) -> Res<Kernel> {
    map_unary(name, x, out, move |v| f64::from(u8::from(p(v))))
}

fn map_unary(
    name: &'static str,
    x: &TensorSpec,
    out: DType,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Res<Kernel> {
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let v: Vec<f64> = read(&i[0]).into_iter().map(&f).collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// `out = f(x)` over integers (bitwise not): `x` and `out` integer or bool.
pub fn unary_int(
    name: &'static str,
    x: &TensorSpec,
    out: DType,
    f: impl Fn(i64, bool) -> i64 + Send + Sync + 'static,
) -> Res<Kernel> {
    if is_float(x.dtype) {
        return err(format!(
            "{name}: self is {}; the operator takes integer and bool tensors",
            x.dtype.name()
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let is_bool = x.dtype == DType::Bool;
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let v: Vec<i64> = read_i64(&i[0]).into_iter().map(|v| f(v, is_bool)).collect();
            write_i64(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// What a binary operator computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryKind {
    /// The promoted type of the operands ([`promote`]); `out` must hold it.
    Promote,
    /// The promoted type, then float ([`float_result`]) (atan2, true division).
    Float,
    /// A comparison or logical operator: 0/1 into any `out` dtype.
    Predicate,
    /// Integers only (bitwise, shifts), computed in i64.
    Integer,
}

/// `out = f(a, b)`, broadcasting (NumPy rules). `out` must have the
/// broadcast shape.
pub fn binary(
    name: &'static str,
    a: &TensorSpec,
    b: &TensorSpec,
    out: DType,
    kind: BinaryKind,
    f: impl Fn(f64, f64) -> f64 + Send + Sync + 'static,
) -> Res<Kernel> {
    let shape = broadcast(name, "self", &a.shape, "other", &b.shape)?;
    let p = promote(a.dtype, b.dtype);
    match kind {
        BinaryKind::Promote => check_cast(name, "out", p, out)?,
        BinaryKind::Float => check_cast(name, "out", float_result(p), out)?,
        BinaryKind::Predicate => {}
        BinaryKind::Integer => {
            if is_float(p) {
                return err(format!(
                    "{name}: self is {} and other {}; the operator takes integer and bool tensors",
                    a.dtype.name(),
                    b.dtype.name()
                ));
            }
            check_cast(name, "out", p, out)?;
        }
    }
    let (sa, sb, so) = (a.shape.clone(), b.shape.clone(), shape.clone());
    let int = kind == BinaryKind::Integer;
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let (oa, ob) = (broadcast_offsets(&sa, &so), broadcast_offsets(&sb, &so));
            if int {
                let (x, y) = (read_i64(&i[0]), read_i64(&i[1]));
                let v: Vec<i64> = oa
                    .iter()
                    .zip(&ob)
                    .map(|(&p, &q)| f(x[p] as f64, y[q] as f64) as i64)
                    .collect();
                write_i64(&mut o[0], &v);
            } else {
                let (x, y) = (read(&i[0]), read(&i[1]));
                let v: Vec<f64> = oa.iter().zip(&ob).map(|(&p, &q)| f(x[p], y[q])).collect();
                write(&mut o[0], &v);
            }
            Ok(())
        }),
    })
}

/// `out = f(x, s)` with a host scalar `s` of dtype `sd`.
pub fn with_scalar(
    name: &'static str,
    x: &TensorSpec,
    sd: DType,
    out: DType,
    kind: BinaryKind,
    f: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Res<Kernel> {
    // A scalar takes part in promotion by category only (torch's
    // "wrapped number" rule): a float scalar makes an integer tensor f32.
    let result = if is_float(sd) && !is_float(x.dtype) {
        DType::F32
    } else {
        x.dtype
    };
    match kind {
        BinaryKind::Promote => check_cast(name, "out", result, out)?,
        BinaryKind::Float => check_cast(name, "out", float_result(result), out)?,
        BinaryKind::Predicate => {}
        BinaryKind::Integer => {
            if is_float(result) {
                return err(format!(
                    "{name}: self is {} and the scalar {}; the operator takes integers",
                    x.dtype.name(),
                    sd.name()
                ));
            }
            check_cast(name, "out", result, out)?;
        }
    }
    map_unary(name, x, out, f)
}

/// `out = cond ? a : b`, broadcasting the three.
pub fn where_(c: &TensorSpec, a: &TensorSpec, b: &TensorSpec, out: DType) -> Res<Kernel> {
    let name = "SelectV2";
    let ab = broadcast(name, "self", &a.shape, "other", &b.shape)?;
    let shape = broadcast(name, "condition", &c.shape, "self/other", &ab)?;
    check_cast(name, "out", promote(a.dtype, b.dtype), out)?;
    let (sc, sa, sb, so) = (
        c.shape.clone(),
        a.shape.clone(),
        b.shape.clone(),
        shape.clone(),
    );
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let (cv, av, bv) = (read(&i[0]), read(&i[1]), read(&i[2]));
            let (oc, oa, ob) = (
                broadcast_offsets(&sc, &so),
                broadcast_offsets(&sa, &so),
                broadcast_offsets(&sb, &so),
            );
            let v: Vec<f64> = (0..oc.len())
                .map(|k| {
                    if cv[oc[k]] != 0.0 {
                        av[oa[k]]
                    } else {
                        bv[ob[k]]
                    }
                })
                .collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Activations with parameters and GELU.
// ---------------------------------------------------------------------------

/// erf, by the Abramowitz–Stegun 7.1.26-free series of `libm` (f64 `erf`
/// from the C library).
pub fn erf(x: f64) -> f64 {
    unsafe extern "C" {
        safe fn erf(x: f64) -> f64;
    }
    erf(x)
}

/// GELU: exact (`0.5·x·(1 + erf(x/√2))`) or tanh-approximated.
pub fn gelu(x: f64, tanh: bool) -> f64 {
    if tanh {
        let c = (2.0 / std::f64::consts::PI).sqrt();
        0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
    } else {
        0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
    }
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

/// LayerNorm over the trailing `norm` dimensions of `x`: inputs `x`,
/// optional weight and bias (of the normalized shape); outputs `out` and
/// optionally mean and rstd (f32 when `x` is f16/bf16, else `x`'s type;
/// shape: `x`'s leading dims then 1s).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm(
    x: &TensorSpec,
    normalized: &[i64],
    weight: Option<&TensorSpec>,
    bias: Option<&TensorSpec>,
    eps: f64,
    out: DType,
    mean_out: Option<DType>,
    rstd_out: Option<DType>,
) -> Res<Kernel> {
    let name = "LayerNorm";
    let r = x.shape.len();
    let k = normalized.len();
    if k == 0 || k > r || x.shape[r - k..] != *normalized {
        return err(format!(
            "{name}: normalizedShape {} must be the trailing dimensions of input {}",
            fmt_shape(normalized),
            fmt_shape(&x.shape)
        ));
    }
    if !is_float(x.dtype) {
        return err(format!(
            "{name}: input is {}; it must be a float type",
            x.dtype.name()
        ));
    }
    for (what, t) in [("weightOptional", weight), ("biasOptional", bias)] {
        if let Some(t) = t
            && t.shape != normalized
        {
            return err(format!(
                "{name}: {what} has shape {}, not normalizedShape {}",
                fmt_shape(&t.shape),
                fmt_shape(normalized)
            ));
        }
    }
    check_cast(name, "out", x.dtype, out)?;
    let mut stat_shape = x.shape[..r - k].to_vec();
    stat_shape.extend(std::iter::repeat_n(1, k));
    let mut outputs = vec![spec(out, x.shape.clone())];
    for d in [mean_out, rstd_out].into_iter().flatten() {
        outputs.push(spec(d, stat_shape.clone()));
    }
    let inner = numel(normalized);
    let (has_w, has_b) = (weight.is_some(), bias.is_some());
    let (want_mean, want_rstd) = (mean_out.is_some(), rstd_out.is_some());
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut next = 1;
            let w = has_w.then(|| {
                next += 1;
                read(&i[next - 1])
            });
            let b = has_b.then(|| read(&i[next]));
            let rows = xv.len().checked_div(inner).unwrap_or(0);
            let mut y = vec![0.0; xv.len()];
            let (mut means, mut rstds) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
            for row in 0..rows {
                let xs = &xv[row * inner..(row + 1) * inner];
                let mean = xs.iter().sum::<f64>() / inner as f64;
                let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / inner as f64;
                let rstd = 1.0 / (var + eps).sqrt();
                for (j, v) in xs.iter().enumerate() {
                    let mut t = (v - mean) * rstd;
                    if let Some(w) = &w {
                        t *= w[j];
                    }
                    if let Some(b) = &b {
                        t += b[j];
                    }
                    y[row * inner + j] = t;
                }
                means.push(mean);
                rstds.push(rstd);
            }
            write(&mut o[0], &y);
            let mut k = 1;
            if want_mean {
                write(&mut o[k], &means);
                k += 1;
            }
            if want_rstd {
                write(&mut o[k], &rstds);
            }
            Ok(())
        }),
    })
}

/// AddRmsNorm: `xOut = x1 + x2`, `yOut = xOut · rstd · gamma` over gamma's
/// trailing dimensions, `rstdOut` f32 (x's leading dims, then 1s).
pub fn add_rms_norm(
    x1: &TensorSpec,
    x2: &TensorSpec,
    gamma: &TensorSpec,
    eps: f64,
    outs: [DType; 3],
) -> Res<Kernel> {
    let name = "AddRmsNorm";
    if x1.shape != x2.shape {
        return err(format!(
            "{name}: x1 {} and x2 {} must have the same shape",
            fmt_shape(&x1.shape),
            fmt_shape(&x2.shape)
        ));
    }
    let (r, k) = (x1.shape.len(), gamma.shape.len());
    if k == 0 || k > r || x1.shape[r - k..] != gamma.shape[..] {
        return err(format!(
            "{name}: gamma {} must be the trailing dimensions of x1 {}",
            fmt_shape(&gamma.shape),
            fmt_shape(&x1.shape)
        ));
    }
    let mut stat = x1.shape[..r - k].to_vec();
    stat.extend(std::iter::repeat_n(1, k));
    let inner = numel(&gamma.shape);
    Ok(Kernel {
        outputs: vec![
            spec(outs[0], x1.shape.clone()),
            spec(outs[1], stat),
            spec(outs[2], x1.shape.clone()),
        ],
        native: Native::new(name, move |i, o| {
            let (a, b, g) = (read(&i[0]), read(&i[1]), read(&i[2]));
            let x: Vec<f64> = a.iter().zip(&b).map(|(p, q)| p + q).collect();
            let rows = x.len().checked_div(inner).unwrap_or(0);
            let mut y = vec![0.0; x.len()];
            let mut rstd = Vec::with_capacity(rows);
            for row in 0..rows {
                let xs = &x[row * inner..(row + 1) * inner];
                let ms = xs.iter().map(|v| v * v).sum::<f64>() / inner as f64;
                let rs = 1.0 / (ms + eps).sqrt();
                for j in 0..inner {
                    y[row * inner + j] = xs[j] * rs * g[j];
                }
                rstd.push(rs);
            }
            write(&mut o[0], &y);
            write(&mut o[1], &rstd);
            write(&mut o[2], &x);
            Ok(())
        }),
    })
}

/// The dimension arguments of a group normalisation of `x` (`what`):
/// `x` is `[N, C, ...]` of `N·C·HxW` elements and `group` divides `C`.
pub(crate) fn check_group_dims(
    name: &str,
    what: &str,
    x: &TensorSpec,
    [n, c, hxw, group]: [i64; 4],
) -> Res<()> {
    if x.shape.len() < 2 || x.shape[0] != n || x.shape[1] != c {
        return err(format!(
            "{name}: {what} {} must be [N={n}, C={c}, ...]",
            fmt_shape(&x.shape)
        ));
    }
    if n.checked_mul(c).and_then(|v| v.checked_mul(hxw)) != Some(numel(&x.shape) as i64) {
        return err(format!(
            "{name}: N·C·HxW = {n}·{c}·{hxw} is not {what}'s size"
        ));
    }
    if group <= 0 || c % group != 0 {
        return err(format!(
            "{name}: C = {c} is not divisible by group = {group}"
        ));
    }
    Ok(())
}

/// GroupNorm of `[N, C, *]` in `group` groups; outputs y, mean `[N, group]`,
/// rstd `[N, group]`.
#[allow(clippy::too_many_arguments)]
pub fn group_norm(
    x: &TensorSpec,
    gamma: Option<&TensorSpec>,
    beta: Option<&TensorSpec>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
    outs: [DType; 3],
) -> Res<Kernel> {
    let name = "GroupNorm";
    check_group_dims(name, "self", x, [n, c, hxw, group])?;
    for (what, t) in [("gamma", gamma), ("beta", beta)] {
        if let Some(t) = t
            && t.shape != [c]
        {
            return err(format!(
                "{name}: {what} {} must be [C={c}]",
                fmt_shape(&t.shape)
            ));
        }
    }
    let (has_g, has_b) = (gamma.is_some(), beta.is_some());
    let (cpg, hw) = ((c / group) as usize, hxw.max(0) as usize);
    let (nn, gg) = (n as usize, group as usize);
    Ok(Kernel {
        outputs: vec![
            spec(outs[0], x.shape.clone()),
            spec(outs[1], vec![n, group]),
            spec(outs[2], vec![n, group]),
        ],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let g = has_g.then(|| read(&i[1]));
            let b = has_b.then(|| read(&i[if has_g { 2 } else { 1 }]));
            let mut y = vec![0.0; xv.len()];
            let (mut means, mut rstds) = (vec![0.0; nn * gg], vec![0.0; nn * gg]);
            for s in 0..nn {
                for q in 0..gg {
                    let start = (s * gg + q) * cpg * hw;
                    let xs = &xv[start..start + cpg * hw];
                    let cnt = xs.len().max(1) as f64;
                    let mean = xs.iter().sum::<f64>() / cnt;
                    let var = xs.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cnt;
                    let rstd = 1.0 / (var + eps).sqrt();
                    for (j, v) in xs.iter().enumerate() {
                        let ch = q * cpg + j / hw.max(1);
                        let mut t = (v - mean) * rstd;
                        if let Some(g) = &g {
                            t *= g[ch];
                        }
                        if let Some(b) = &b {
                            t += b[ch];
                        }
                        y[start + j] = t;
                    }
                    means[s * gg + q] = mean;
                    rstds[s * gg + q] = rstd;
                }
            }
            write(&mut o[0], &y);
            write(&mut o[1], &means);
            write(&mut o[2], &rstds);
            Ok(())
        }),
    })
}

/// The `p`-norm over `dims` (all when empty).
pub fn norm(x: &TensorSpec, p: f64, dims: &[i64], keep: bool, out: DType) -> Res<Kernel> {
    let name = "Norm";
    check_cast(name, "out", float_result(x.dtype), out)?;
    let (shape, groups) = reduce_layout(name, &x.shape, dims, keep)?;
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let v: Vec<f64> = groups
                .iter()
                .map(|g| {
                    let it = g.iter().map(|&k| xv[k].abs());
                    if p == f64::INFINITY {
                        it.fold(0.0, f64::max)
                    } else if p == f64::NEG_INFINITY {
                        it.fold(f64::INFINITY, f64::min)
                    } else if p == 0.0 {
                        it.filter(|v| *v != 0.0).count() as f64
                    } else {
                        it.map(|v| v.powf(p)).sum::<f64>().powf(1.0 / p)
                    }
                })
                .collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// The output shape of a reduction over `dims` and, for each output
/// element, the input offsets it reduces.
pub(crate) fn reduce_layout(
    name: &str,
    shape: &[i64],
    dims: &[i64],
    keep: bool,
) -> Res<(Vec<i64>, Vec<Vec<usize>>)> {
    let r = shape.len();
    let mut red = vec![dims.is_empty(); r];
    for &d in dims {
        let a = axis(name, "dim", d, r)?;
        if r > 0 {
            red[a] = true;
        }
    }
    let mut out = Vec::new();
    for (k, &d) in shape.iter().enumerate() {
        if red[k] {
            if keep {
                out.push(1);
            }
        } else {
            out.push(d);
        }
    }
    let st = contiguous_strides(shape);
    let kept: Vec<usize> = (0..r).filter(|&k| !red[k]).collect();
    let reduced: Vec<usize> = (0..r).filter(|&k| red[k]).collect();
    let dims_of =
        |ks: &[usize]| -> Vec<usize> { ks.iter().map(|&k| shape[k].max(0) as usize).collect() };
    let (kd, rd) = (dims_of(&kept), dims_of(&reduced));
    let offsets = |ks: &[usize], ds: &[usize]| -> Vec<usize> {
        let n: usize = ds.iter().product();
        let mut v = Vec::with_capacity(n);
        let mut idx = vec![0usize; ds.len()];
        for _ in 0..n {
            v.push(idx.iter().zip(ks).map(|(i, &k)| i * st[k]).sum());
            for j in (0..ds.len()).rev() {
                idx[j] += 1;
                if idx[j] < ds[j] {
                    break;
                }
                idx[j] = 0;
            }
        }
        v
    };
    let (outer, inner) = (offsets(&kept, &kd), offsets(&reduced, &rd));
    let groups = outer
        .iter()
        .map(|&a| inner.iter().map(|&b| a + b).collect())
        .collect();
    Ok((out, groups))
}

// ---------------------------------------------------------------------------
// Layout: slices, concatenation, padding, repetition, triangles.
// ---------------------------------------------------------------------------

/// A kernel that copies input elements to output positions: `map[k]` is the
/// input offset of output element `k`, or `None` for `fill`.
fn gather_map(name: &'static str, out: TensorSpec, map: Vec<Option<usize>>, fill: f64) -> Kernel {
    Kernel {
        outputs: vec![out],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let v: Vec<f64> = map.iter().map(|m| m.map_or(fill, |k| xv[k])).collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    }
}

/// Every output multi-index of `shape` with its row-major position.
pub(crate) fn for_each_index(shape: &[i64], mut f: impl FnMut(&[usize])) {
    let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    let n: usize = dims.iter().product();
    let mut idx = vec![0usize; dims.len()];
    for _ in 0..n {
        f(&idx);
        for k in (0..dims.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

pub(crate) fn offset(idx: &[usize], st: &[usize]) -> usize {
    idx.iter().zip(st).map(|(i, s)| i * s).sum()
}

/// `out = x[start:end:step]` along `dim` (Python slice bounds, clamped).
pub fn slice(x: &TensorSpec, dim: i64, start: i64, end: i64, step: i64, out: DType) -> Res<Kernel> {
    let name = "StridedSlice";
    if step <= 0 {
        return err(format!("{name}: step {step} must be positive"));
    }
    check_cast(name, "out", x.dtype, out)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let size = x.shape.get(d).copied().unwrap_or(1);
    let clamp = |v: i64| {
        let v = if v < 0 { v.saturating_add(size) } else { v };
        v.clamp(0, size)
    };
    let (s, e) = (clamp(start), clamp(end));
    let len = if e > s { (e - s + step - 1) / step } else { 0 };
    let mut shape = x.shape.clone();
    if !shape.is_empty() {
        shape[d] = len;
    }
    let st = contiguous_strides(&x.shape);
    let mut map = Vec::with_capacity(numel(&shape));
    for_each_index(&shape, |idx| {
        let mut src = idx.to_vec();
        if !src.is_empty() {
            src[d] = (s + step * idx[d] as i64) as usize;
        }
        map.push(Some(offset(&src, &st)));
    });
    Ok(gather_map(name, spec(out, shape), map, 0.0))
}

/// Concatenation of `xs` along `dim` (or stacking along a new `dim`).
pub fn cat(xs: &[TensorSpec], dim: i64, out: DType, stack: bool) -> Res<Kernel> {
    let name = if stack { "Pack" } else { "ConcatD" };
    let Some(first) = xs.iter().find(|t| stack || t.shape != [0]) else {
        return err(format!("{name}: tensors is empty"));
    };
    let r = first.shape.len();
    let d = if stack {
        axis(name, "dim", dim, r + 1)?
    } else {
        if r == 0 {
            return err(format!(
                "{name}: zero-dimensional tensors cannot be concatenated"
            ));
        }
        axis(name, "dim", dim, r)?
    };
    let mut dt = first.dtype;
    let mut total = 0i64;
    for (k, t) in xs.iter().enumerate() {
        // torch's legacy rule: a 1-D empty tensor is skipped in cat.
        if !stack && t.shape == [0] {
            continue;
        }
        dt = promote(dt, t.dtype);
        let same = if stack {
            t.shape == first.shape
        } else {
            t.shape.len() == r
                && t.shape
                    .iter()
                    .zip(&first.shape)
                    .enumerate()
                    .all(|(j, (a, b))| j == d || a == b)
        };
        if !same {
            return err(format!(
                "{name}: tensor {k} has shape {}, which does not fit {} along dim {dim}",
                fmt_shape(&t.shape),
                fmt_shape(&first.shape)
            ));
        }
        total += if stack { 1 } else { t.shape[d] };
    }
    check_cast(name, "out", dt, out)?;
    let mut shape = first.shape.clone();
    if stack {
        shape.insert(d, xs.len() as i64);
    } else {
        shape[d] = total;
    }
    let parts: Vec<(Vec<i64>, bool)> = xs
        .iter()
        .map(|t| (t.shape.clone(), !stack && t.shape == [0]))
        .collect();
    let oshape = shape.clone();
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let ost = contiguous_strides(&oshape);
            let mut v = vec![0.0; numel(&oshape)];
            let mut base = 0usize;
            for (k, (shp, skip)) in parts.iter().enumerate() {
                if *skip {
                    continue;
                }
                let xv = read(&i[k]);
                let mut p = 0;
                for_each_index(shp, |idx| {
                    let mut dst: Vec<usize> = idx.to_vec();
                    if stack {
                        dst.insert(d, k);
                    } else {
                        dst[d] += base;
                    }
                    v[offset(&dst, &ost)] = xv[p];
                    p += 1;
                });
                if !stack {
                    base += shp[d] as usize;
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// Keeps the elements on and below (`lower`) or above the `diagonal`-th
/// diagonal of the last two dimensions, zeroes the rest.
pub fn triangle(x: &TensorSpec, diagonal: i64, lower: bool, out: DType) -> Res<Kernel> {
    let name = if lower { "Tril" } else { "Triu" };
    if x.shape.len() < 2 {
        return err(format!(
            "{name}: self {} must have at least 2 dimensions",
            fmt_shape(&x.shape)
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let r = x.shape.len();
    let mut map = Vec::with_capacity(numel(&x.shape));
    let mut k = 0usize;
    for_each_index(&x.shape, |idx| {
        let (row, col) = (idx[r - 2] as i64, idx[r - 1] as i64);
        let keep = if lower {
            col - row <= diagonal
        } else {
            col - row >= diagonal
        };
        map.push(keep.then_some(k));
        k += 1;
    });
    Ok(gather_map(name, spec(out, x.shape.clone()), map, 0.0))
}

/// Tiles `x` `repeats[i]` times along each dimension (leading repeats add
/// dimensions).
pub fn repeat(x: &TensorSpec, repeats: &[i64], out: DType) -> Res<Kernel> {
    let name = "Tile";
    if repeats.len() < x.shape.len() {
        return err(format!(
            "{name}: repeats has {} entries, fewer than self's {} dimensions",
            repeats.len(),
            x.shape.len()
        ));
    }
    if let Some(r) = repeats.iter().find(|&&r| r < 0) {
        return err(format!("{name}: repeats {r} is negative"));
    }
    check_cast(name, "out", x.dtype, out)?;
    let pad = repeats.len() - x.shape.len();
    let mut src_shape = vec![1i64; pad];
    src_shape.extend(&x.shape);
    let shape: Vec<i64> = src_shape.iter().zip(repeats).map(|(a, b)| a * b).collect();
    let st = contiguous_strides(&src_shape);
    let mut map = Vec::with_capacity(numel(&shape));
    for_each_index(&shape, |idx| {
        let src: Vec<usize> = idx
            .iter()
            .zip(&src_shape)
            .map(|(i, &d)| i % d.max(1) as usize)
            .collect();
        map.push(Some(offset(&src, &st)));
    });
    Ok(gather_map(name, spec(out, shape), map, 0.0))
}

/// Repeats each slice of `x` along `dim` `repeats` times.
pub fn repeat_interleave(x: &TensorSpec, repeats: i64, dim: i64, out: DType) -> Res<Kernel> {
    let name = "RepeatInterleave";
    if repeats < 0 {
        return err(format!("{name}: repeats {repeats} is negative"));
    }
    check_cast(name, "out", x.dtype, out)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let mut shape = x.shape.clone();
    if shape.is_empty() {
        shape = vec![repeats];
    } else {
        shape[d] *= repeats;
    }
    let st = contiguous_strides(&x.shape);
    let mut map = Vec::with_capacity(numel(&shape));
    for_each_index(&shape, |idx| {
        let mut src = idx.to_vec();
        if x.shape.is_empty() {
            map.push(Some(0));
            return;
        }
        src[d] /= repeats.max(1) as usize;
        map.push(Some(offset(&src, &st)));
    });
    Ok(gather_map(name, spec(out, shape), map, 0.0))
}

/// Rolls `x` by `shifts` along `dims` (the flattened tensor when `dims` is
/// empty).
pub fn roll(x: &TensorSpec, shifts: &[i64], dims: &[i64], out: DType) -> Res<Kernel> {
    let name = "Roll";
    check_cast(name, "out", x.dtype, out)?;
    let n = numel(&x.shape);
    let mut map = vec![Some(0usize); n];
    if dims.is_empty() {
        if shifts.len() != 1 {
            return err(format!("{name}: without dims, shifts must have one entry"));
        }
        for (k, m) in map.iter_mut().enumerate() {
            let src = (k as i64 - shifts[0]).rem_euclid(n.max(1) as i64) as usize;
            *m = Some(src);
        }
    } else {
        if shifts.len() != dims.len() {
            return err(format!(
                "{name}: shifts has {} entries and dims {}",
                shifts.len(),
                dims.len()
            ));
        }
        let ds = dims
            .iter()
            .map(|&d| axis(name, "dims", d, x.shape.len()))
            .collect::<Res<Vec<_>>>()?;
        let st = contiguous_strides(&x.shape);
        let mut k = 0;
        for_each_index(&x.shape, |idx| {
            let mut src = idx.to_vec();
            for (&d, &s) in ds.iter().zip(shifts) {
                let size = x.shape[d].max(1);
                src[d] = (src[d] as i64 - s).rem_euclid(size) as usize;
            }
            map[k] = Some(offset(&src, &st));
            k += 1;
        });
    }
    Ok(gather_map(name, spec(out, x.shape.clone()), map, 0.0))
}

/// Reverses `x` along `dims`.
pub fn flip(x: &TensorSpec, dims: &[i64], out: DType) -> Res<Kernel> {
    let name = "ReverseV2";
    check_cast(name, "out", x.dtype, out)?;
    let ds = dims
        .iter()
        .map(|&d| axis(name, "dims", d, x.shape.len()))
        .collect::<Res<Vec<_>>>()?;
    let st = contiguous_strides(&x.shape);
    let mut map = Vec::with_capacity(numel(&x.shape));
    for_each_index(&x.shape, |idx| {
        let mut src = idx.to_vec();
        for &d in &ds {
            src[d] = x.shape[d] as usize - 1 - src[d];
        }
        map.push(Some(offset(&src, &st)));
    });
    Ok(gather_map(name, spec(out, x.shape.clone()), map, 0.0))
}

/// How a padded position reads the input.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PadMode {
    /// A constant value.
    Constant,
    /// Reflection (the edge not repeated).
    Reflect,
}

/// Pads `x` by `pad` (before, after) pairs from the last dimension
/// backwards; negative entries crop (constant mode).
pub fn pad(x: &TensorSpec, pad: &[i64], mode: PadMode, value: f64, out: DType) -> Res<Kernel> {
    let name = if mode == PadMode::Constant {
        "PadV3"
    } else {
        "ReflectionPad"
    };
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > x.shape.len() {
        return err(format!(
            "{name}: pad has {} entries; it must be even and at most twice self's rank {}",
            pad.len(),
            x.shape.len()
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let r = x.shape.len();
    let mut before = vec![0i64; r];
    let mut shape = x.shape.clone();
    for (k, pair) in pad.chunks(2).enumerate() {
        let d = r - 1 - k;
        if mode == PadMode::Reflect
            && (pair[0] >= x.shape[d] || pair[1] >= x.shape[d] || pair[0] < 0 || pair[1] < 0)
        {
            return err(format!(
                "{name}: padding ({}, {}) must be non-negative and below the dimension's size {}",
                pair[0], pair[1], x.shape[d]
            ));
        }
        before[d] = pair[0];
        shape[d] += pair[0] + pair[1];
        if shape[d] < 0 {
            return err(format!("{name}: padding makes dimension {d} negative"));
        }
    }
    let st = contiguous_strides(&x.shape);
    let mut map = Vec::with_capacity(numel(&shape));
    for_each_index(&shape, |idx| {
        let mut src = Vec::with_capacity(r);
        let mut inside = true;
        for d in 0..r {
            let p = idx[d] as i64 - before[d];
            let size = x.shape[d];
            let q = if (0..size).contains(&p) {
                p
            } else if mode == PadMode::Reflect {
                if p < 0 { -p } else { 2 * (size - 1) - p }
            } else {
                inside = false;
                0
            };
            src.push(q as usize);
        }
        map.push(inside.then(|| offset(&src, &st)));
    });
    Ok(gather_map(name, spec(out, shape), map, value))
}

/// `out = x` indexed along `dim` by `index` (GatherV2: `index`'s shape
/// replaces that dimension; IndexSelect: `index` is 1-D).
pub fn index_select(
    x: &TensorSpec,
    dim: i64,
    index: &TensorSpec,
    out: DType,
    one_d: bool,
) -> Res<Kernel> {
    let name = "GatherV2";
    if !matches!(index.dtype, DType::I32 | DType::I64) {
        return err(format!(
            "{name}: index is {}; it must be int32 or int64",
            index.dtype.name()
        ));
    }
    if one_d && index.shape.len() > 1 {
        return err(format!(
            "{name}: index {} must be 1-D",
            fmt_shape(&index.shape)
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let size = x.shape.get(d).copied().unwrap_or(1);
    let mut shape = x.shape[..d.min(x.shape.len())].to_vec();
    shape.extend(&index.shape);
    if !x.shape.is_empty() {
        shape.extend(&x.shape[d + 1..]);
    }
    let (xs, is, os) = (x.shape.clone(), index.shape.clone(), shape.clone());
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let ix = read_i64(&i[1]);
            let st = contiguous_strides(&xs);
            let ir = is.len();
            let ist = contiguous_strides(&is);
            let mut v = Vec::with_capacity(numel(&os));
            let mut bad = None;
            for_each_index(&os, |idx| {
                let ipos = offset(&idx[d..d + ir], &ist);
                let mut k = ix[ipos];
                if k < 0 {
                    k += size;
                }
                if !(0..size).contains(&k) {
                    bad = Some(ix[ipos]);
                    v.push(0.0);
                    return;
                }
                let mut src: Vec<usize> = idx[..d].to_vec();
                if !xs.is_empty() {
                    src.push(k as usize);
                    src.extend(&idx[d + ir..]);
                }
                v.push(xv[offset(&src, &st)]);
            });
            if let Some(b) = bad {
                return Err(OpError::Input(format!(
                    "GatherV2: index {b} is out of range for dimension {d} of size {size}"
                )));
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// `out[i] = start + i·step` over `[start, end)`; `out` must have the
/// element count `ceil((end − start) / step)`.
pub fn arange(start: f64, end: f64, step: f64, out: &TensorSpec) -> Res<Kernel> {
    let name = "Range";
    if step == 0.0 || !step.is_finite() || !start.is_finite() || !end.is_finite() {
        return err(format!(
            "{name}: step must be finite and non-zero (start {start}, end {end}, step {step})"
        ));
    }
    if (end - start) * step < 0.0 {
        return err(format!(
            "{name}: the sign of step {step} does not lead from {start} to {end}"
        ));
    }
    let n = ((end - start) / step).ceil().max(0.0);
    if out.shape.len() != 1 || out.shape[0] as f64 != n {
        return err(format!(
            "{name}: out {} must be 1-D of size {n} for start {start}, end {end}, step {step}",
            fmt_shape(&out.shape)
        ));
    }
    let count = n as usize;
    Ok(Kernel {
        outputs: vec![out.clone()],
        native: Native::new(name, move |_, o| {
            let v: Vec<f64> = (0..count).map(|k| start + k as f64 * step).collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// A scan along `dim`: cumulative sum or product.
pub fn cumulative(x: &TensorSpec, dim: i64, out: DType, product: bool) -> Res<Kernel> {
    let name = if product { "Cumprod" } else { "Cumsum" };
    check_cast(name, "out", x.dtype, out)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (outer, len, inner) = split(&x.shape, d);
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let mut v = read(&i[0]);
            for a in 0..outer {
                for c in 0..inner {
                    let mut acc = if product { 1.0 } else { 0.0 };
                    for b in 0..len {
                        let k = (a * len + b) * inner + c;
                        acc = if product { acc * v[k] } else { acc + v[k] };
                        v[k] = acc;
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// `(outer, len, inner)` of `shape` around dimension `d`.
pub(crate) fn split(shape: &[i64], d: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        return (1, 1, 1);
    }
    (
        numel(&shape[..d]),
        shape[d].max(0) as usize,
        numel(&shape[d + 1..]),
    )
}

/// Sorts along `dim`: values (when `values` is given) and int64 indices;
/// `k` keeps the first `k` (top-k). Ties keep their order (a stable sort).
pub fn sort(
    x: &TensorSpec,
    dim: i64,
    descending: bool,
    k: Option<i64>,
    values: Option<DType>,
    indices: DType,
) -> Res<Kernel> {
    let name = if k.is_some() { "TopKV2" } else { "Sort" };
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (outer, len, inner) = split(&x.shape, d);
    let keep = match k {
        Some(k) if k < 0 || k as usize > len => {
            return err(format!(
                "{name}: k = {k} is out of range for dimension size {len}"
            ));
        }
        Some(k) => k as usize,
        None => len,
    };
    if let Some(v) = values {
        check_cast(name, "valuesOut", x.dtype, v)?;
    }
    if !matches!(indices, DType::I64 | DType::I32) {
        return err(format!(
            "{name}: the indices output is {}; it must be int64",
            indices.name()
        ));
    }
    let mut shape = x.shape.clone();
    if !shape.is_empty() {
        shape[d] = keep as i64;
    }
    let mut outputs = Vec::new();
    if let Some(v) = values {
        outputs.push(spec(v, shape.clone()));
    }
    outputs.push(spec(indices, shape));
    let with_values = values.is_some();
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut vals = Vec::with_capacity(outer * keep * inner);
            let mut idxs = vec![0i64; outer * keep * inner];
            vals.resize(outer * keep * inner, 0.0);
            for a in 0..outer {
                for c in 0..inner {
                    let mut order: Vec<usize> = (0..len).collect();
                    let at = |b: usize| xv[(a * len + b) * inner + c];
                    order.sort_by(|&p, &q| {
                        let (u, w) = (at(p), at(q));
                        // NaN sorts as the largest value (torch).
                        let ord = u
                            .partial_cmp(&w)
                            .unwrap_or_else(|| u.is_nan().cmp(&w.is_nan()));
                        if descending { ord.reverse() } else { ord }
                    });
                    for (b, &src) in order.iter().take(keep).enumerate() {
                        let k = (a * keep + b) * inner + c;
                        vals[k] = at(src);
                        idxs[k] = src as i64;
                    }
                }
            }
            if with_values {
                write(&mut o[0], &vals);
                write_i64(&mut o[1], &idxs);
            } else {
                write_i64(&mut o[0], &idxs);
            }
            Ok(())
        }),
    })
}

/// Writes `fill` (or `source`'s slices) into `selfRef` along `dim` at the
/// positions of `index`: the in-place index copy/fill. Inputs: self, index
/// (a device tensor, or `host` values), source (copy only).
pub fn index_put(
    x: &TensorSpec,
    dim: i64,
    index_len: usize,
    source: Option<&TensorSpec>,
    host_index: Option<Vec<i64>>,
    fill: f64,
) -> Res<Kernel> {
    let name = if source.is_some() {
        "InplaceIndexCopy"
    } else {
        "InplaceIndexFill"
    };
    let d = axis(name, "dim", dim, x.shape.len())?;
    if let Some(s) = source {
        let mut want = x.shape.clone();
        if !want.is_empty() {
            want[d] = index_len as i64;
        }
        if s.shape != want {
            return err(format!(
                "{name}: source {} must be {} (self with index's length along dim)",
                fmt_shape(&s.shape),
                fmt_shape(&want)
            ));
        }
    }
    let (outer, len, inner) = split(&x.shape, d);
    let copy = source.is_some();
    Ok(Kernel {
        outputs: vec![x.clone()],
        native: Native::new(name, move |i, o| {
            let mut v = read(&i[0]);
            let ix = match &host_index {
                Some(h) => h.clone(),
                None => read_i64(&i[1]),
            };
            let src = copy.then(|| read(&i[2]));
            for (p, &k) in ix.iter().enumerate() {
                let k = if k < 0 { k + len as i64 } else { k };
                if !(0..len as i64).contains(&k) {
                    return Err(OpError::Input(format!(
                        "{name}: index {k} is out of range for dimension size {len}"
                    )));
                }
                for a in 0..outer {
                    for c in 0..inner {
                        let dst = (a * len + k as usize) * inner + c;
                        v[dst] = match &src {
                            Some(s) => s[(a * ix.len() + p) * inner + c],
                            None => fill,
                        };
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// Matrix product of 2-D `a` `[m, k]` and `b` `[k, n]` (or a vector `[k]`),
/// accumulated in f64.
pub fn mm(a: &TensorSpec, b: &TensorSpec, out: DType, vector: bool) -> Res<Kernel> {
    let name = if vector { "MatMulV" } else { "MatMul" };
    let want_b = if vector { 1 } else { 2 };
    if a.shape.len() != 2 || b.shape.len() != want_b || a.shape[1] != b.shape[0] {
        return err(format!(
            "{name}: self {} and {} {} do not multiply",
            fmt_shape(&a.shape),
            if vector { "vec" } else { "mat2" },
            fmt_shape(&b.shape)
        ));
    }
    check_cast(name, "out", promote(a.dtype, b.dtype), out)?;
    let (m, k) = (a.shape[0] as usize, a.shape[1] as usize);
    let n = if vector { 1 } else { b.shape[1] as usize };
    let shape = if vector {
        vec![m as i64]
    } else {
        vec![m as i64, n as i64]
    };
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let v = matmul_f64(&read(&i[0]), &read(&i[1]), (m, k, n));
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// `x @ y` of row-major `x` `[m, k]` and `y` `[k, n]`, accumulated in f64.
pub(crate) fn matmul_f64(x: &[f64], y: &[f64], (m, k, n): (usize, usize, usize)) -> Vec<f64> {
    let mut v = vec![0.0; m * n];
    for r in 0..m {
        for p in 0..k {
            let xv = x[r * k + p];
            for c in 0..n {
                v[r * n + c] += xv * y[p * n + c];
            }
        }
    }
    v
}

/// RmsNorm: `y = x · rstd · gamma` over gamma's trailing dimensions, `rstd`
/// (f32) one value per row. `x` and `gamma` may differ in float type (the
/// A2/A3 table lists fp16/bf16 `x` with fp32 `gamma`). `rstd` is accepted
/// as the release accepts it: its leading dimensions those of `x` (as far
/// as it has them) and room for one value per row; the kernel writes the
/// first `rows` elements.
///
/// # Errors
///
/// `Ok(Err(msg))` for a gamma that is not x's trailing dimensions: the
/// release finds that in its tiling (561002), not in the parameter check.
pub fn rms_norm(
    x: &TensorSpec,
    gamma: &TensorSpec,
    eps: f64,
    y: DType,
    rstd: &TensorSpec,
) -> Res<Result<Kernel, String>> {
    let name = "RmsNorm";
    for (what, t) in [("x", x), ("gamma", gamma)] {
        if !is_float(t.dtype) {
            return err(format!(
                "{name}: {what} is {}; it must be a float type",
                t.dtype.name()
            ));
        }
    }
    check_cast(name, "yOut", x.dtype, y)?;
    if rstd.dtype != DType::F32 {
        return err(format!(
            "{name}: rstdOut is {}; it must be float32",
            rstd.dtype.name()
        ));
    }
    let (r, k) = (x.shape.len(), gamma.shape.len());
    if k == 0 || k > r || x.shape[r - k..] != gamma.shape[..] {
        return Ok(Err(format!(
            "{name}: gamma {} must be the trailing dimensions of x {}",
            fmt_shape(&gamma.shape),
            fmt_shape(&x.shape)
        )));
    }
    let lead = &x.shape[..r - k];
    let rows = numel(lead);
    let m = rstd.shape.len().min(lead.len());
    if rstd.shape[..m] != lead[..m] || numel(&rstd.shape) < rows {
        return err(format!(
            "{name}: rstdOut {} must start with x's leading dimensions {} and hold {rows} values",
            fmt_shape(&rstd.shape),
            fmt_shape(lead)
        ));
    }
    let inner = numel(&gamma.shape);
    let rstd_len = numel(&rstd.shape);
    Ok(Ok(Kernel {
        outputs: vec![spec(y, x.shape.clone()), rstd.clone()],
        native: Native::new(name, move |i, o| {
            let (xv, g) = (read(&i[0]), read(&i[1]));
            let mut yv = vec![0.0; xv.len()];
            let mut rs = vec![0.0; rstd_len];
            for row in 0..rows {
                let xs = &xv[row * inner..(row + 1) * inner];
                let ms = xs.iter().map(|v| v * v).sum::<f64>() / inner.max(1) as f64;
                let r = 1.0 / (ms + eps).sqrt();
                for j in 0..inner {
                    yv[row * inner + j] = xs[j] * r * g[j];
                }
                rs[row] = r;
            }
            write(&mut o[0], &yv);
            // The rows' values; the rest of a larger rstd is left as it was.
            let keep = read_output(&o[1]);
            let merged: Vec<f64> = (0..rstd_len)
                .map(|k| if k < rows { rs[k] } else { keep[k] })
                .collect();
            write(&mut o[1], &merged);
            Ok(())
        }),
    }))
}

/// The current elements of an output (a kernel that writes part of it).
fn read_output(o: &Output<'_>) -> Vec<f64> {
    super::dtype::load_f64(o.spec.dtype, o.data)
}

/// `torch.matmul` of two tensors of possibly different float types
/// (aclnnMatmul with an f32 and an f16 operand): 1-D operands are a vector,
/// batch dimensions broadcast; accumulated in f64, stored as `out`.
pub fn matmul_mixed(a: &TensorSpec, b: &TensorSpec, out: DType) -> Res<Kernel> {
    let name = "BatchMatMulV2";
    if a.shape.is_empty() || b.shape.is_empty() {
        return err(format!(
            "{name}: self and mat2 must have at least one dimension"
        ));
    }
    check_cast(name, "out", promote(a.dtype, b.dtype), out)?;
    let a2 = if a.shape.len() == 1 {
        vec![1, a.shape[0]]
    } else {
        a.shape.clone()
    };
    let b2 = if b.shape.len() == 1 {
        vec![b.shape[0], 1]
    } else {
        b.shape.clone()
    };
    let (m, k) = (a2[a2.len() - 2], a2[a2.len() - 1]);
    let (k2, n) = (b2[b2.len() - 2], b2[b2.len() - 1]);
    if k != k2 {
        return err(format!(
            "{name}: self {} and mat2 {} do not multiply",
            fmt_shape(&a.shape),
            fmt_shape(&b.shape)
        ));
    }
    let batch = broadcast(
        name,
        "self",
        &a2[..a2.len() - 2],
        "mat2",
        &b2[..b2.len() - 2],
    )?;
    let mut shape = batch.clone();
    if a.shape.len() > 1 {
        shape.push(m);
    }
    if b.shape.len() > 1 {
        shape.push(n);
    }
    let (ab, bb) = (a2[..a2.len() - 2].to_vec(), b2[..b2.len() - 2].to_vec());
    let (m, k, n) = (m as usize, k as usize, n as usize);
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let (x, y) = (read(&i[0]), read(&i[1]));
            let (oa, ob) = (
                broadcast_offsets(&ab, &batch),
                broadcast_offsets(&bb, &batch),
            );
            let mut v = Vec::with_capacity(oa.len() * m * n);
            for (pa, pb) in oa.iter().zip(&ob) {
                let (xa, yb) = (&x[pa * m * k..], &y[pb * k * n..]);
                for r in 0..m {
                    for c in 0..n {
                        v.push((0..k).map(|p| xa[r * k + p] * yb[p * n + c]).sum());
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Convolution, pooling, unfolding, upsampling.
// ---------------------------------------------------------------------------

/// The attributes of an N-D convolution (`n` spatial dimensions).
#[derive(Clone, Debug)]
pub struct ConvAttrs {
    /// Per spatial dimension.
    pub stride: Vec<i64>,
    /// Per spatial dimension (both sides).
    pub padding: Vec<i64>,
    /// Per spatial dimension.
    pub dilation: Vec<i64>,
    /// Transposed convolution (the gradient of a convolution's input).
    pub transposed: bool,
    /// Extra size of a transposed convolution's output, per dimension.
    pub output_padding: Vec<i64>,
    /// Channel groups.
    pub groups: i64,
}

/// An attribute list of `n` entries, a single entry repeated (torch's
/// `expand_param_if_needed`).
pub(crate) fn per_dim(name: &str, what: &str, v: &[i64], n: usize, min: i64) -> Res<Vec<i64>> {
    let out = match v.len() {
        1 => vec![v[0]; n],
        l if l == n => v.to_vec(),
        l => return err(format!("{name}: {what} has {l} entries; it needs 1 or {n}")),
    };
    if let Some(bad) = out.iter().find(|&&x| x < min) {
        return err(format!("{name}: {what} entry {bad} is below {min}"));
    }
    Ok(out)
}

/// Convolution (1-D, 2-D, 3-D: input `[N, C, *spatial]`), direct, in f64.
pub fn convolution(
    x: &TensorSpec,
    w: &TensorSpec,
    bias: Option<&TensorSpec>,
    a: &ConvAttrs,
    out: DType,
) -> Res<Kernel> {
    let name = "Conv";
    let r = x.shape.len();
    if !(3..=5).contains(&r) || w.shape.len() != r {
        return err(format!(
            "{name}: input {} and weight {} must both be 3-D, 4-D or 5-D",
            fmt_shape(&x.shape),
            fmt_shape(&w.shape)
        ));
    }
    let n = r - 2;
    let stride = per_dim(name, "stride", &a.stride, n, 1)?;
    let pad = per_dim(name, "padding", &a.padding, n, 0)?;
    let dil = per_dim(name, "dilation", &a.dilation, n, 1)?;
    let opad = if a.transposed {
        per_dim(name, "outputPadding", &a.output_padding, n, 0)?
    } else {
        vec![0; n]
    };
    let g = a.groups;
    let (batch, cin) = (x.shape[0], x.shape[1]);
    if g <= 0 || cin % g != 0 {
        return err(format!(
            "{name}: groups {g} does not divide the input channels {cin}"
        ));
    }
    let cout = if a.transposed {
        if w.shape[0] != cin {
            return err(format!(
                "{name}: a transposed convolution's weight {} must have {cin} input channels first",
                fmt_shape(&w.shape)
            ));
        }
        w.shape[1] * g
    } else {
        if w.shape[1] * g != cin || w.shape[0] % g != 0 {
            return err(format!(
                "{name}: weight {} does not fit input {} with groups {g}",
                fmt_shape(&w.shape),
                fmt_shape(&x.shape)
            ));
        }
        w.shape[0]
    };
    if let Some(b) = bias
        && b.shape != [cout]
    {
        return err(format!(
            "{name}: bias {} must be [{cout}]",
            fmt_shape(&b.shape)
        ));
    }
    check_cast(name, "output", promote(x.dtype, w.dtype), out)?;
    let ks: Vec<i64> = w.shape[2..].to_vec();
    let ins: Vec<i64> = x.shape[2..].to_vec();
    let mut outs = Vec::with_capacity(n);
    for d in 0..n {
        let span = dil[d] * (ks[d] - 1) + 1;
        let o = if a.transposed {
            (ins[d] - 1) * stride[d] - 2 * pad[d] + span + opad[d]
        } else {
            (ins[d] + 2 * pad[d] - span) / stride[d] + 1
        };
        if o <= 0 {
            return err(format!(
                "{name}: the output's spatial dimension {d} would be {o}: input {} too small for kernel {}",
                fmt_shape(&x.shape),
                fmt_shape(&w.shape)
            ));
        }
        outs.push(o);
    }
    let mut shape = vec![batch, cout];
    shape.extend(&outs);
    let has_bias = bias.is_some();
    let transposed = a.transposed;
    let oshape = shape.clone();
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let wv = read(&i[1]);
            let bv = has_bias.then(|| read(&i[2]));
            let mut y = vec![0.0; numel(&oshape)];
            let (b, ci, co) = (batch as usize, cin as usize, cout as usize);
            let gg = g as usize;
            let (cig, cog) = (ci / gg, co / gg);
            let isz: usize = numel(&ins);
            let osz: usize = numel(&outs);
            let ksz: usize = numel(&ks);
            let ist = contiguous_strides(&ins);
            let ost = contiguous_strides(&outs);
            let kst = contiguous_strides(&ks);
            // Every (input position, kernel position) pair that lands on an
            // output position: out = in·stride − pad + k·dil (transposed),
            // in = out·stride − pad + k·dil (direct).
            let mut kidx = vec![0usize; n];
            for kk in 0..ksz {
                for d in 0..n {
                    kidx[d] = (kk / kst[d]) % ks[d] as usize;
                }
                let (outer, outer_st, outer_dims) = if transposed {
                    (isz, &ist, &ins)
                } else {
                    (osz, &ost, &outs)
                };
                for p in 0..outer {
                    let mut q = 0usize;
                    let mut inside = true;
                    for d in 0..n {
                        let pd = ((p / outer_st[d]) % outer_dims[d] as usize) as i64;
                        let t = pd * stride[d] - pad[d] + kidx[d] as i64 * dil[d];
                        let limit = if transposed { outs[d] } else { ins[d] };
                        if !(0..limit).contains(&t) {
                            inside = false;
                            break;
                        }
                        q += t as usize * if transposed { ost[d] } else { ist[d] };
                    }
                    if !inside {
                        continue;
                    }
                    let (ipos, opos) = if transposed { (p, q) } else { (q, p) };
                    for s in 0..b {
                        for grp in 0..gg {
                            for oc in 0..cog {
                                let oc_all = grp * cog + oc;
                                let mut acc = 0.0;
                                for ic in 0..cig {
                                    let ic_all = grp * cig + ic;
                                    let wi = if transposed {
                                        (ic_all * cog + oc) * ksz + kk
                                    } else {
                                        (oc_all * cig + ic) * ksz + kk
                                    };
                                    acc += xv[(s * ci + ic_all) * isz + ipos] * wv[wi];
                                }
                                y[(s * co + oc_all) * osz + opos] += acc;
                            }
                        }
                    }
                }
            }
            if let Some(bv) = bv {
                for (k, v) in y.iter_mut().enumerate() {
                    *v += bv[(k / osz) % co];
                }
            }
            write(&mut o[0], &y);
            Ok(())
        }),
    })
}

/// How a pooling window combines its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// The maximum (padding never wins).
    Max,
    /// The mean; `count_pad`: padded positions count in the divisor;
    /// `divisor`: a fixed divisor (> 0).
    Avg {
        /// Padded positions count.
        count_pad: bool,
        /// A fixed divisor, 0 for none.
        divisor: i64,
    },
}

/// 2-D pooling over the last two dimensions of `[N, C, H, W]` or `[C, H, W]`;
/// `pads` are (top, left, bottom, right). With `indices`, also writes the
/// flat `H·W` index of each maximum (int64).
#[allow(clippy::too_many_arguments)]
pub fn pool2d(
    x: &TensorSpec,
    kernel: &[i64],
    stride: &[i64],
    pads: [i64; 4],
    dilation: &[i64],
    ceil: bool,
    pool: Pool,
    out: DType,
    indices: Option<DType>,
) -> Res<Kernel> {
    let name = if matches!(pool, Pool::Max) {
        "MaxPool"
    } else {
        "AvgPool"
    };
    let r = x.shape.len();
    if !(3..=4).contains(&r) {
        return err(format!(
            "{name}: self {} must be 3-D or 4-D",
            fmt_shape(&x.shape)
        ));
    }
    let k = per_dim(name, "kernel size", kernel, 2, 1)?;
    let st = if stride.is_empty() {
        k.clone()
    } else {
        per_dim(name, "strides", stride, 2, 1)?
    };
    let dl = if dilation.is_empty() {
        vec![1, 1]
    } else {
        per_dim(name, "dilations", dilation, 2, 1)?
    };
    if pads.iter().any(|&p| p < 0) || pads[0] * 2 > k[0] * dl[0] || pads[1] * 2 > k[1] * dl[1] {
        return err(format!(
            "{name}: padding {pads:?} must be non-negative and at most half the kernel {k:?}"
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let (h, w) = (x.shape[r - 2], x.shape[r - 1]);
    let size = |len: i64, d: usize, lo: i64, hi: i64| -> i64 {
        let span = dl[d] * (k[d] - 1) + 1;
        let num = len + lo + hi - span;
        let mut o = if ceil {
            (num + st[d] - 1).div_euclid(st[d]) + 1
        } else {
            num.div_euclid(st[d]) + 1
        };
        // The last window must start inside the input or its left padding.
        if ceil && (o - 1) * st[d] >= len + lo {
            o -= 1;
        }
        o
    };
    let (oh, ow) = (size(h, 0, pads[0], pads[2]), size(w, 1, pads[1], pads[3]));
    if oh <= 0 || ow <= 0 {
        return err(format!(
            "{name}: the output would be {oh}x{ow}: the input is smaller than the window"
        ));
    }
    let mut shape = x.shape[..r - 2].to_vec();
    shape.extend([oh, ow]);
    let mut outputs = vec![spec(out, shape.clone())];
    if let Some(d) = indices {
        outputs.push(spec(d, shape));
    }
    let planes = numel(&x.shape[..r - 2]);
    let (hh, ww, ohh, oww) = (h as usize, w as usize, oh as usize, ow as usize);
    let with_idx = indices.is_some();
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut y = Vec::with_capacity(planes * ohh * oww);
            let mut idx = Vec::new();
            for p in 0..planes {
                let plane = &xv[p * hh * ww..(p + 1) * hh * ww];
                for a in 0..ohh as i64 {
                    for b in 0..oww as i64 {
                        let (y0, x0) = (a * st[0] - pads[0], b * st[1] - pads[1]);
                        let (mut best, mut at, mut sum, mut cnt, mut cnt_pad) =
                            (f64::NEG_INFINITY, -1i64, 0.0, 0i64, 0i64);
                        for u in 0..k[0] {
                            for v in 0..k[1] {
                                let (yy, xx) = (y0 + u * dl[0], x0 + v * dl[1]);
                                let in_pad = yy < h + pads[2] && xx < w + pads[3];
                                if !(0..h).contains(&yy) || !(0..w).contains(&xx) {
                                    if in_pad {
                                        cnt_pad += 1;
                                    }
                                    continue;
                                }
                                let val = plane[(yy * w + xx) as usize];
                                // The first maximum wins; a NaN wins over numbers (torch).
                                if at < 0 || val > best || (val.is_nan() && !best.is_nan()) {
                                    best = val;
                                    at = yy * w + xx;
                                }
                                sum += val;
                                cnt += 1;
                                cnt_pad += 1;
                            }
                        }
                        match pool {
                            Pool::Max => {
                                y.push(best);
                                idx.push(at);
                            }
                            Pool::Avg { count_pad, divisor } => {
                                let div = if divisor > 0 {
                                    divisor
                                } else if count_pad {
                                    cnt_pad
                                } else {
                                    cnt
                                };
                                y.push(sum / div.max(1) as f64);
                            }
                        }
                    }
                }
            }
            write(&mut o[0], &y);
            if with_idx {
                write_i64(&mut o[1], &idx);
            }
            Ok(())
        }),
    })
}

/// im2col of `[N, C, H, W]` (or `[C, H, W]`): `[N, C·kh·kw, L]`, L the
/// number of window positions.
pub fn im2col(
    x: &TensorSpec,
    kernel: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
    out: DType,
) -> Res<Kernel> {
    let name = "Im2col";
    let r = x.shape.len();
    if !(3..=4).contains(&r) {
        return err(format!(
            "{name}: self {} must be 3-D or 4-D",
            fmt_shape(&x.shape)
        ));
    }
    let k = per_dim(name, "kernelSize", kernel, 2, 1)?;
    let dl = per_dim(name, "dilation", dilation, 2, 1)?;
    let pd = per_dim(name, "padding", padding, 2, 0)?;
    let st = per_dim(name, "stride", stride, 2, 1)?;
    check_cast(name, "out", x.dtype, out)?;
    let (c, h, w) = (x.shape[r - 3], x.shape[r - 2], x.shape[r - 1]);
    let oh = (h + 2 * pd[0] - dl[0] * (k[0] - 1) - 1) / st[0] + 1;
    let ow = (w + 2 * pd[1] - dl[1] * (k[1] - 1) - 1) / st[1] + 1;
    if oh <= 0 || ow <= 0 {
        return err(format!(
            "{name}: no window fits input {}",
            fmt_shape(&x.shape)
        ));
    }
    let mut shape = x.shape[..r - 3].to_vec();
    shape.extend([c * k[0] * k[1], oh * ow]);
    let mut map = Vec::with_capacity(numel(&shape));
    let batch = numel(&x.shape[..r - 3]);
    for b in 0..batch as i64 {
        for ch in 0..c {
            for u in 0..k[0] {
                for v in 0..k[1] {
                    for a in 0..oh {
                        for q in 0..ow {
                            let (yy, xx) =
                                (a * st[0] - pd[0] + u * dl[0], q * st[1] - pd[1] + v * dl[1]);
                            map.push(
                                ((0..h).contains(&yy) && (0..w).contains(&xx))
                                    .then(|| (((b * c + ch) * h + yy) * w + xx) as usize),
                            );
                        }
                    }
                }
            }
        }
    }
    Ok(gather_map(name, spec(out, shape), map, 0.0))
}

/// Nearest-neighbour upsampling of `[N, C, H, W]` to `size` (`[oh, ow]`):
/// the source row of output row `a` is `floor(a · H / oh)`.
pub fn upsample_nearest2d(x: &TensorSpec, size: &[i64], out: DType) -> Res<Kernel> {
    let name = "ResizeNearestNeighborV2";
    if x.shape.len() != 4 || size.len() != 2 || size.iter().any(|&v| v <= 0) {
        return err(format!(
            "{name}: self {} must be 4-D and outputSize {size:?} two positive sizes",
            fmt_shape(&x.shape)
        ));
    }
    check_cast(name, "out", x.dtype, out)?;
    let (n, c, h, w) = (x.shape[0], x.shape[1], x.shape[2], x.shape[3]);
    let shape = vec![n, c, size[0], size[1]];
    let mut map = Vec::with_capacity(numel(&shape));
    for p in 0..n * c {
        for a in 0..size[0] {
            let sy = (a * h / size[0]).min(h - 1);
            for b in 0..size[1] {
                let sx = (b * w / size[1]).min(w - 1);
                map.push(Some(((p * h + sy) * w + sx) as usize));
            }
        }
    }
    Ok(gather_map(name, spec(out, shape), map, 0.0))
}

// ---------------------------------------------------------------------------
// Attention, gated activations, losses, quantised matmul, solves.
// ---------------------------------------------------------------------------

/// A query/key/value layout: how `(b, n, s, d)` maps to an offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `[B, S, N·D]`.
    Bsh,
    /// `[B, S, N, D]`.
    Bsnd,
    /// `[B, N, S, D]`.
    Bnsd,
}

impl Layout {
    /// From FusedInferAttentionScore's `inputLayout`.
    pub fn parse(s: &str) -> Option<Layout> {
        Some(match s {
            "BSH" => Layout::Bsh,
            "BSND" => Layout::Bsnd,
            "BNSD" => Layout::Bnsd,
            _ => return None,
        })
    }

    /// `(B, N, S, D)` of a tensor of this layout with `n` heads.
    pub(crate) fn dims(self, shape: &[i64], n: i64) -> Option<(i64, i64, i64, i64)> {
        match (self, shape) {
            (Layout::Bsh, &[b, s, h]) if n > 0 && h % n == 0 => Some((b, n, s, h / n)),
            (Layout::Bsnd, &[b, s, nn, d]) if nn == n => Some((b, n, s, d)),
            (Layout::Bnsd, &[b, nn, s, d]) if nn == n => Some((b, n, s, d)),
            _ => None,
        }
    }

    fn offset(
        self,
        (_, nn, ss, dd): (i64, i64, i64, i64),
        (b, n, s, d): (usize, usize, usize, usize),
    ) -> usize {
        let (nn, ss, dd) = (nn as usize, ss as usize, dd as usize);
        match self {
            Layout::Bsh | Layout::Bsnd => ((b * ss + s) * nn + n) * dd + d,
            Layout::Bnsd => ((b * nn + n) * ss + s) * dd + d,
        }
    }
}

/// What FusedInferAttentionScore's options add to dense attention
/// (hicann/ops-transformer
/// `attention/fused_infer_attention_score/docs/aclnnFusedInferAttentionScoreV2.md`,
/// "约束说明"): a position bias, valid lengths per batch, and the sparse
/// modes that hide keys by position.
#[derive(Clone, Debug, Default)]
pub struct AttentionOptions {
    /// `pseShift`: `[B or 1, N, S, KV_S]` (its last two dimensions may be
    /// padded beyond the sequence lengths), of the query's type, added to
    /// the scaled scores: `softmax(scale · Q Kᵀ + pse)` (torch_npu's
    /// `npu_fused_infer_attention_score` formula; ggml's CANN backend
    /// passes its additive mask and ALiBi bias this way).
    pub pse: Option<TensorSpec>,
    /// `actualSeqLengths`: valid query rows per batch (one value for every
    /// batch, or at least B values); rows past it are invalid: zeros out,
    /// an infinite log-sum-exp. Ignored when the query length is 1.
    pub q_lens: Option<Vec<i64>>,
    /// `actualSeqLengthsKv`: valid keys per batch, as `q_lens`.
    pub kv_lens: Option<Vec<i64>>,
    /// `sparseMode`: 0 (the mask, with the `pre_tokens`/`next_tokens` band
    /// when a mask is given), 1 (the full mask), 2 (causal from the top
    /// left), 3 (causal from the bottom right), 4 (the `pre_tokens`/
    /// `next_tokens` band from the bottom right); 2 to 4 take the release's
    /// compressed 2048 × 2048 mask, whose values the simulator does not
    /// read (the caller guarantees its lower triangle). Ignored when the
    /// query length is 1.
    pub sparse_mode: i64,
    /// How many keys before a query's own position it sees (modes 0, 4).
    pub pre_tokens: i64,
    /// How many keys after a query's own position it sees (modes 0, 4).
    pub next_tokens: i64,
    /// Page attention: key and value are block caches and this the
    /// `blockTable` (int32 `[B, blocks per sequence]`) with its `blockSize`.
    pub paged: Option<(TensorSpec, i64)>,
}

/// Where the keys and values of (batch, key head, position, element) lie.
#[derive(Clone, Debug)]
enum KvPlace {
    /// In the query's layout, `(B, N, S, D)` of the tensor.
    Dense(Layout, (i64, i64, i64, i64)),
    /// In block caches: position `t` of batch `b` is row `t % size` of
    /// block `table[b][t / size]`; `[blocks, size, N·D]` (`heads_inner`,
    /// BnBsH) or `[blocks, N, size, D]` (BnNBsD).
    Paged {
        size: usize,
        heads: usize,
        dim: usize,
        blocks: usize,
        per_seq: usize,
        heads_inner: bool,
    },
}

impl KvPlace {
    /// The element offset of `(b, n, t, x)`, or `None` for a block id the
    /// caches do not hold (the release does not check them: "当前不会对
    /// blockid的合法性进行校验").
    fn offset(&self, table: &[f64], (b, n, t, x): (usize, usize, usize, usize)) -> Option<usize> {
        match *self {
            KvPlace::Dense(l, dims) => Some(l.offset(dims, (b, n, t, x))),
            KvPlace::Paged {
                size,
                heads,
                dim,
                blocks,
                per_seq,
                heads_inner,
            } => {
                let id = table[b * per_seq + t / size];
                if !(0.0..blocks as f64).contains(&id) {
                    return None;
                }
                let (blk, row) = (id as usize, t % size);
                Some(if heads_inner {
                    ((blk * size + row) * heads + n) * dim + x
                } else {
                    ((blk * heads + n) * size + row) * dim + x
                })
            }
        }
    }
}

/// The geometry of page attention's caches (hicann/ops-transformer
/// aclnnFusedInferAttentionScoreV2.md, "page attention场景"): `blockSize` a
/// multiple of 128 in [128, 512], caches `[blocks, blockSize, H]` or (BNSD
/// queries only) `[blocks, N, blockSize, D]` of the same shape, a table
/// `[B, ≥ 1]` of int32, the valid key lengths given. Returns the place and
/// the keys a sequence can hold (`blocks per sequence · blockSize`).
fn paged_place(
    name: &str,
    (k, v): (&TensorSpec, &TensorSpec),
    (table, size): (&TensorSpec, i64),
    layout: Layout,
    (b, kvh, d): (i64, i64, i64),
    has_lens: bool,
) -> Res<(KvPlace, KvPlace, i64)> {
    if !(128..=512).contains(&size) || size % 128 != 0 {
        return err(format!(
            "{name}: blockSize {size} must be 128, 256, 384 or 512 with a blockTable"
        ));
    }
    if table.dtype != DType::I32
        || table.shape.len() != 2
        || table.shape[0] != b
        || table.shape[1] < 1
    {
        return err(format!(
            "{name}: blockTable {} must be int32 [{b}, blocks per sequence]",
            super::fmt_spec(table)
        ));
    }
    if !has_lens {
        return err(format!("{name}: page attention needs actualSeqLengthsKv"));
    }
    if k.shape != v.shape {
        return err(format!(
            "{name}: key {} and value {} caches must have the same shape",
            fmt_shape(&k.shape),
            fmt_shape(&v.shape)
        ));
    }
    let heads_inner = match *k.shape.as_slice() {
        [_, bs, h] if bs == size && h == kvh * d => true,
        [_, nn, bs, dd] if layout == Layout::Bnsd && nn == kvh && bs == size && dd == d => false,
        _ => {
            return err(format!(
                "{name}: key cache {} is neither [blocks, {size}, {}] nor (BNSD queries) [blocks, {kvh}, {size}, {d}]",
                fmt_shape(&k.shape),
                kvh * d
            ));
        }
    };
    let place = KvPlace::Paged {
        size: size as usize,
        heads: kvh as usize,
        dim: d as usize,
        blocks: k.shape[0] as usize,
        per_seq: table.shape[1] as usize,
        heads_inner,
    };
    Ok((place.clone(), place, table.shape[1] * size))
}

/// Where the element of (batch, head, query row, key) of a mask or
/// position bias lies: its dimensions as `[b, n, s, kv]`, 1 for a
/// broadcast batch or head, the last two possibly padded.
#[derive(Clone, Copy, Debug)]
struct Bias4([usize; 4]);

impl Bias4 {
    fn at(self, bi: usize, ni: usize, si: usize, t: usize) -> usize {
        let [mb, mn, ms, mk] = self.0;
        let b = if mb == 1 { 0 } else { bi };
        let n = if mn == 1 { 0 } else { ni };
        ((b * mn + n) * ms + si) * mk + t
    }
}

/// The `[b, n, s, kv]` view of an attention mask's shape, as the page lists
/// them: with a query length above 1, `(S, KV_S)`, `(B|1, S, KV_S)`,
/// `(B|1, 1|N, S, KV_S)`; with a query length of 1, `(B, KV_S)`,
/// `(B, 1, KV_S)`, `(B, 1, 1, KV_S)`. The sequence dimensions may be
/// padded beyond `(sq, skv)` ("可以向上取到对齐的S").
fn mask_dims(shape: &[i64], (b, n, sq, skv): (i64, i64, i64, i64)) -> Option<Bias4> {
    let dims: [i64; 4] = match (shape, sq == 1) {
        (&[s, k], false) => [1, 1, s, k],
        (&[mb, k], true) => [mb, 1, 1, k],
        (&[mb, s, k], false) => [mb, 1, s, k],
        (&[mb, 1, k], true) => [mb, 1, 1, k],
        (&[mb, mn, s, k], _) => [mb, mn, s, k],
        _ => return None,
    };
    let [mb, mn, s, k] = dims;
    ((mb == 1 || mb == b) && (mn == 1 || mn == n) && s >= sq && k >= skv)
        .then(|| Bias4(dims.map(|d| d as usize)))
}

/// Valid lengths per batch from an `actualSeqLengths` array: one value for
/// every batch, or the first `b` of at least `b`; each in `[0, max]`.
fn actual_lengths(name: &str, what: &str, lens: &[i64], b: i64, max: i64) -> Res<Vec<usize>> {
    let b = b as usize;
    let picked: Vec<i64> = match lens.len() {
        1 => vec![lens[0]; b],
        n if n >= b => lens[..b].to_vec(),
        n => {
            return err(format!(
                "{name}: {what} has {n} values; it takes 1 or at least the batch size {b}"
            ));
        }
    };
    if let Some(l) = picked.iter().find(|&&l| !(0..=max).contains(&l)) {
        return err(format!("{name}: {what} value {l} is not in [0, {max}]"));
    }
    Ok(picked.into_iter().map(|l| l as usize).collect())
}

/// `softmax(scale · Q Kᵀ + pse, masked) V` per batch and head, keys and
/// values shared by `heads / kv_heads` query heads (grouped-query
/// attention); a mask element that is true (non-zero) hides that key, as
/// do the options' lengths and sparse mode ([`AttentionOptions`]). With
/// `lse`, also the log-sum-exp of each row (`[B, N, S, 1]`, f32).
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: &TensorSpec,
    k: &TensorSpec,
    v: &TensorSpec,
    mask: Option<&TensorSpec>,
    layout: Layout,
    heads: i64,
    kv_heads: i64,
    scale: f64,
    opts: &AttentionOptions,
    out: DType,
    lse: Option<DType>,
) -> Res<Kernel> {
    let name = "FusedInferAttentionScore";
    let kvh = if kv_heads == 0 { heads } else { kv_heads };
    if heads <= 0 || kvh <= 0 || heads % kvh != 0 {
        return err(format!(
            "{name}: numHeads {heads} is not a positive multiple of numKeyValueHeads {kvh}"
        ));
    }
    let qd = layout.dims(&q.shape, heads).ok_or_else(|| {
        OpError::Input(format!(
            "{name}: query {} does not fit its layout with {heads} heads",
            fmt_shape(&q.shape)
        ))
    })?;
    let (b, n, sq, d) = qd;
    let (kplace, vplace, skv, dv) = match &opts.paged {
        Some((table, size)) => {
            let (kp, vp, skv) = paged_place(
                name,
                (k, v),
                (table, *size),
                layout,
                (b, kvh, d),
                opts.kv_lens.is_some(),
            )?;
            (kp, vp, skv, d)
        }
        None => {
            let kd = layout.dims(&k.shape, kvh).ok_or_else(|| {
                OpError::Input(format!(
                    "{name}: key {} does not fit its layout with {kvh} heads",
                    fmt_shape(&k.shape)
                ))
            })?;
            let vd = layout.dims(&v.shape, kvh).ok_or_else(|| {
                OpError::Input(format!(
                    "{name}: value {} does not fit its layout with {kvh} heads",
                    fmt_shape(&v.shape)
                ))
            })?;
            if kd.0 != qd.0 || kd.3 != qd.3 || vd.0 != qd.0 || vd.2 != kd.2 {
                return err(format!(
                    "{name}: query {}, key {} and value {} do not agree (batch, head size, key length)",
                    fmt_shape(&q.shape),
                    fmt_shape(&k.shape),
                    fmt_shape(&v.shape)
                ));
            }
            if vd.3 != d && layout == Layout::Bsh {
                return err(format!(
                    "{name}: value's head size {} differs from query's {d}",
                    vd.3
                ));
            }
            (
                KvPlace::Dense(layout, kd),
                KvPlace::Dense(layout, vd),
                kd.2,
                vd.3,
            )
        }
    };
    // "Q_S为1时，sparseMode参数无效" and the lengths of the query likewise.
    let sparse = if sq == 1 { 0 } else { opts.sparse_mode };
    if !(0..=4).contains(&sparse) {
        return err(format!(
            "{name}: sparseMode {sparse} is not supported (0 to 4)"
        ));
    }
    if sparse == 4 && opts.pre_tokens < 0 && opts.next_tokens < 0 {
        // hicann/ops-transformer attention/prompt_flash_attention/op_host/
        // prompt_flash_attention_tiling.cpp: "preTokens and nextTokens must
        // not be negative number in band mode".
        return err(format!(
            "{name}: sparseMode 4 (band): preTokens {} and nextTokens {} must not both be negative",
            opts.pre_tokens, opts.next_tokens
        ));
    }
    let mask_at = match mask {
        Some(m) => {
            if !matches!(m.dtype, DType::Bool | DType::I8 | DType::U8) {
                return err(format!(
                    "{name}: attenMask is {}; it must be bool, int8 or uint8",
                    m.dtype.name()
                ));
            }
            if sparse >= 2 {
                if !matches!(
                    m.shape.as_slice(),
                    [2048, 2048] | [1, 2048, 2048] | [1, 1, 2048, 2048]
                ) {
                    return err(format!(
                        "{name}: sparseMode {sparse} takes the compressed attenMask of [2048, 2048] (or [1, 2048, 2048], [1, 1, 2048, 2048]), not {}",
                        fmt_shape(&m.shape)
                    ));
                }
                None
            } else {
                Some(mask_dims(&m.shape, (b, n, sq, skv)).ok_or_else(|| {
                    OpError::Input(format!(
                        "{name}: attenMask {} does not fit scores [{b},{n},{sq},{skv}] (see the page's mask shapes)",
                        fmt_shape(&m.shape)
                    ))
                })?)
            }
        }
        None if sparse >= 1 => {
            return err(format!("{name}: sparseMode {sparse} needs an attenMask"));
        }
        None => None,
    };
    let pse_at = match &opts.pse {
        Some(p) => {
            let ok_type = match p.dtype {
                DType::F16 => q.dtype == DType::F16 || (q.dtype == DType::I8 && sq > 1),
                DType::BF16 => q.dtype == DType::BF16,
                _ => false,
            };
            if !ok_type {
                return err(format!(
                    "{name}: pseShift is {} for a {} query; it must be float16 (float16 or int8 query) or bfloat16 (bfloat16 query)",
                    p.dtype.name(),
                    q.dtype.name()
                ));
            }
            let dims = match p.shape.as_slice() {
                &[pb, pn, ps, pk] if (pb == 1 || pb == b) && pn == n && ps >= sq && pk >= skv => {
                    Bias4([pb, pn, ps, pk].map(|x| x as usize))
                }
                _ => {
                    return err(format!(
                        "{name}: pseShift {} must be [{b} or 1, {n}, {sq}, {skv}]",
                        fmt_shape(&p.shape)
                    ));
                }
            };
            Some(dims)
        }
        None => None,
    };
    let q_lens = match &opts.q_lens {
        Some(l) if sq > 1 => Some(actual_lengths(name, "actualSeqLengths", l, b, sq)?),
        _ => None,
    };
    let kv_lens = match &opts.kv_lens {
        Some(l) => Some(actual_lengths(name, "actualSeqLengthsKv", l, b, skv)?),
        None => None,
    };
    // Mode 0 applies the band only with a mask; modes 1 to 3 ignore it;
    // mode 4 applies it from the bottom right (below).
    let band = (sparse == 0 && mask.is_some()).then_some((opts.pre_tokens, opts.next_tokens));
    let (pre, next) = (opts.pre_tokens, opts.next_tokens);
    check_cast(name, "attentionOut", q.dtype, out)?;
    let oshape = match layout {
        Layout::Bsh => vec![b, sq, n * dv],
        Layout::Bsnd => vec![b, sq, n, dv],
        Layout::Bnsd => vec![b, n, sq, dv],
    };
    let mut outputs = vec![spec(out, oshape)];
    if let Some(l) = lse {
        if l != DType::F32 {
            return err(format!(
                "{name}: softmaxLse is {}; it must be float32",
                l.name()
            ));
        }
        outputs.push(spec(l, vec![b, n, sq, 1]));
    }
    let has_mask = mask.is_some();
    let table_input = 3 + usize::from(has_mask) + usize::from(pse_at.is_some());
    let paged = opts.paged.is_some();
    let group = (heads / kvh) as usize;
    let with_lse = lse.is_some();
    Ok(Kernel {
        outputs,
        native: Native::new(name, move |i, o| {
            let (qv, kv, vv) = (read(&i[0]), read(&i[1]), read(&i[2]));
            let mv = has_mask.then(|| read(&i[3]));
            let pv = pse_at.map(|_| read(&i[if has_mask { 4 } else { 3 }]));
            let table = if paged {
                read(&i[table_input])
            } else {
                Vec::new()
            };
            let bad_block = |bi: usize, t: usize| {
                OpError::Input(format!(
                    "{name}: the blockTable entry of batch {bi}, key {t} is not a block of the caches"
                ))
            };
            let (bu, nu, squ, skvu, du, dvu) = (
                b as usize,
                n as usize,
                sq as usize,
                skv as usize,
                d as usize,
                dv as usize,
            );
            let odims = (b, n, sq, dv);
            let mut y = vec![0.0; bu * nu * squ * dvu];
            let mut lses = Vec::with_capacity(bu * nu * squ);
            let mut scores = vec![0.0; skvu];
            for bi in 0..bu {
                let qlen = q_lens.as_ref().map_or(squ, |l| l[bi]);
                let kvlen = kv_lens.as_ref().map_or(skvu, |l| l[bi]);
                for ni in 0..nu {
                    let kn = ni / group;
                    for si in 0..squ {
                        let visible = |t: usize| {
                            if si >= qlen || t >= kvlen {
                                return false;
                            }
                            if let (Some(m), Some(at)) = (&mv, mask_at)
                                && m[at.at(bi, ni, si, t)] != 0.0
                            {
                                return false;
                            }
                            let (si, t) = (si as i64, t as i64);
                            match sparse {
                                2 => t <= si,
                                3 => t <= si + kvlen as i64 - qlen as i64,
                                // The band of mode 4 is anchored at the
                                // bottom right: hicann/ops-transformer
                                // prompt_flash_attention_tiling.cpp
                                // (GetPreNextTokensLeftUp) turns it into a
                                // top-left band of preTokens − (Skv − Sq)
                                // and nextTokens + (Skv − Sq), per batch
                                // with the actual lengths.
                                4 => {
                                    let shift = si + kvlen as i64 - qlen as i64;
                                    t >= shift.saturating_sub(pre)
                                        && t <= shift.saturating_add(next)
                                }
                                _ => band.is_none_or(|(pre, next)| {
                                    t >= si.saturating_sub(pre) && t <= si.saturating_add(next)
                                }),
                            }
                        };
                        let mut best = f64::NEG_INFINITY;
                        for t in 0..skvu {
                            scores[t] = if visible(t) {
                                let mut dot = 0.0;
                                for x in 0..du {
                                    let at = kplace
                                        .offset(&table, (bi, kn, t, x))
                                        .ok_or_else(|| bad_block(bi, t))?;
                                    dot += qv[layout.offset(qd, (bi, ni, si, x))] * kv[at];
                                }
                                let bias = match (&pv, pse_at) {
                                    (Some(p), Some(at)) => p[at.at(bi, ni, si, t)],
                                    _ => 0.0,
                                };
                                scale * dot + bias
                            } else {
                                f64::NEG_INFINITY
                            };
                            best = best.max(scores[t]);
                        }
                        let mut sum = 0.0;
                        for sc in scores.iter_mut() {
                            *sc = if best == f64::NEG_INFINITY {
                                0.0
                            } else {
                                (*sc - best).exp()
                            };
                            sum += *sc;
                        }
                        for x in 0..dvu {
                            let mut acc = 0.0;
                            for (t, &w) in scores.iter().enumerate() {
                                if w != 0.0 {
                                    let at = vplace
                                        .offset(&table, (bi, kn, t, x))
                                        .ok_or_else(|| bad_block(bi, t))?;
                                    acc += w * vv[at];
                                }
                            }
                            y[layout.offset(odims, (bi, ni, si, x))] =
                                if sum > 0.0 { acc / sum } else { 0.0 };
                        }
                        lses.push(if sum > 0.0 {
                            best + sum.ln()
                        } else {
                            f64::INFINITY
                        });
                    }
                }
            }
            write(&mut o[0], &y);
            if with_lse {
                write(&mut o[1], &lses);
            }
            Ok(())
        }),
    })
}

/// GeGLU: `x` split in halves along `dim`; `out = gelu(left) · right`
/// (`activate_left`) or `left · gelu(right)`; `out_gelu` the GELU half.
pub fn geglu(
    x: &TensorSpec,
    dim: i64,
    tanh: bool,
    activate_left: bool,
    outs: [DType; 2],
) -> Res<Kernel> {
    let name = "GeGluV3";
    let d = axis(name, "dim", dim, x.shape.len())?;
    if x.shape.is_empty() || x.shape[d] % 2 != 0 {
        return err(format!(
            "{name}: self {} must have an even size along dim {dim}",
            fmt_shape(&x.shape)
        ));
    }
    check_cast(name, "out", x.dtype, outs[0])?;
    let mut shape = x.shape.clone();
    shape[d] /= 2;
    let (outer, len, inner) = split(&x.shape, d);
    let half = len / 2;
    Ok(Kernel {
        outputs: vec![spec(outs[0], shape.clone()), spec(outs[1], shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut y = Vec::with_capacity(outer * half * inner);
            let mut g = Vec::with_capacity(outer * half * inner);
            for a in 0..outer {
                for b in 0..half {
                    for c in 0..inner {
                        let l = xv[(a * len + b) * inner + c];
                        let r = xv[(a * len + b + half) * inner + c];
                        let (act, other) = if activate_left { (l, r) } else { (r, l) };
                        let ge = gelu(act, tanh);
                        y.push(ge * other);
                        g.push(ge);
                    }
                }
            }
            write(&mut o[0], &y);
            write(&mut o[1], &g);
            Ok(())
        }),
    })
}

/// Softmax cross-entropy of `features` `[N, C]` against `labels` (a
/// distribution per row): `loss[N]` and `backprop = softmax − labels`.
pub fn softmax_cross_entropy(
    features: &TensorSpec,
    labels: &TensorSpec,
    outs: [DType; 2],
) -> Res<Kernel> {
    let name = "SoftmaxCrossEntropyWithLogits";
    if features.shape.len() != 2 || labels.shape != features.shape {
        return err(format!(
            "{name}: features {} must be 2-D and labels {} of the same shape",
            fmt_shape(&features.shape),
            fmt_shape(&labels.shape)
        ));
    }
    check_cast(name, "loss", features.dtype, outs[0])?;
    let (rows, cols) = (features.shape[0] as usize, features.shape[1] as usize);
    Ok(Kernel {
        outputs: vec![
            spec(outs[0], vec![features.shape[0]]),
            spec(outs[1], features.shape.clone()),
        ],
        native: Native::new(name, move |i, o| {
            let (f, l) = (read(&i[0]), read(&i[1]));
            let mut loss = Vec::with_capacity(rows);
            let mut grad = Vec::with_capacity(rows * cols);
            for r in 0..rows {
                let fr = &f[r * cols..(r + 1) * cols];
                let lr = &l[r * cols..(r + 1) * cols];
                let m = fr.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = fr.iter().map(|v| (v - m).exp()).sum();
                let logz = m + z.ln();
                loss.push(lr.iter().zip(fr).map(|(y, x)| -y * (x - logz)).sum());
                grad.extend(fr.iter().zip(lr).map(|(x, y)| (x - logz).exp() - y));
            }
            write(&mut o[0], &loss);
            write(&mut o[1], &grad);
            Ok(())
        }),
    })
}

/// Solves `A X = B` for a triangular `A` `[.., m, m]` and `B` `[.., m, k]`
/// (same batch shape): `xOut` the solution, `mOut` a copy of `A` (torch's
/// `triangular_solve`).
pub fn triangular_solve(
    b: &TensorSpec,
    a: &TensorSpec,
    upper: bool,
    transpose: bool,
    unit: bool,
    outs: [DType; 2],
) -> Res<Kernel> {
    let name = "MatrixTriangularSolve";
    let (rb, ra) = (b.shape.len(), a.shape.len());
    if rb < 2
        || ra != rb
        || a.shape[ra - 1] != a.shape[ra - 2]
        || b.shape[rb - 2] != a.shape[ra - 1]
        || a.shape[..ra - 2] != b.shape[..rb - 2]
    {
        return err(format!(
            "{name}: A {} must be square matrices [.., m, m] and self {} [.., m, k] of the same batch",
            fmt_shape(&a.shape),
            fmt_shape(&b.shape)
        ));
    }
    if !is_float(b.dtype) || !is_float(a.dtype) {
        return err(format!("{name}: self and A must be float tensors"));
    }
    check_cast(name, "xOut", b.dtype, outs[0])?;
    let (m, k) = (b.shape[rb - 2] as usize, b.shape[rb - 1] as usize);
    let batch = numel(&b.shape[..rb - 2]);
    // Solving with Aᵀ flips which triangle is used.
    let up = upper != transpose;
    Ok(Kernel {
        outputs: vec![
            spec(outs[0], b.shape.clone()),
            spec(outs[1], a.shape.clone()),
        ],
        native: Native::new(name, move |i, o| {
            let (bv, av) = (read(&i[0]), read(&i[1]));
            let mut x = bv.clone();
            for p in 0..batch {
                let am = &av[p * m * m..(p + 1) * m * m];
                let at = |r: usize, c: usize| {
                    if transpose {
                        am[c * m + r]
                    } else {
                        am[r * m + c]
                    }
                };
                let xs = &mut x[p * m * k..(p + 1) * m * k];
                for col in 0..k {
                    let rows: Vec<usize> = if up {
                        (0..m).rev().collect()
                    } else {
                        (0..m).collect()
                    };
                    for &r in &rows {
                        let mut acc = xs[r * k + col];
                        for c in 0..m {
                            let other = if up { c > r } else { c < r };
                            if other {
                                acc -= at(r, c) * xs[c * k + col];
                            }
                        }
                        xs[r * k + col] = if unit { acc } else { acc / at(r, r) };
                    }
                }
            }
            write(&mut o[0], &x);
            write(&mut o[1], &av);
            Ok(())
        }),
    })
}

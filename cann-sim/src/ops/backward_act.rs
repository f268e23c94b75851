//! The kernels of the activation backwards and the losses of the training
//! set (issue 24, item 2): softmax and log-softmax backward, the
//! element-wise activation gradients, PReLU, the embedding backward, NLL and
//! MSE losses with their backwards. Each follows its documentation page
//! (hicann/ops-nn `activation/*_grad`, `index/embedding_dense_grad`,
//! `loss/*`, cited per operator in `acl-sys/operators.toml`); a violation
//! is an [`OpError`] (161002 from the aclnn exports).

use super::native::{Native, read, read_i64, write};
use super::nn::{
    BinaryKind, Kernel, axis, binary, broadcast, broadcast_offsets, check_cast, erf, numel,
    promote, spec, split,
};
use super::tensorcore::{allow, same_dtype};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// float32, float16, bfloat16: the dtypes of most of these pages.
pub(crate) const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::BF16];

/// The same with float64.
const FLOATS64: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::F64];

/// The targets of the NLL losses.
const TARGET: &[DType] = &[DType::I64, DType::U8, DType::I32];

// ---------------------------------------------------------------------------
// Element-wise gradients.
// ---------------------------------------------------------------------------

/// The element-wise activation gradients: `gradInput = f(gradOutput, x)`
/// where `x` is the forward input or output, as the operator takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ActGrad {
    /// aclnnGeluBackward (erf form): `g · (Φ(x) + x·φ(x))`.
    Gelu,
    /// aclnnSiluBackward: `g · σ(x)(1 + x − x·σ(x))`.
    Silu,
    /// aclnnSigmoidBackward, from the output `y`: `g · y(1 − y)`.
    Sigmoid,
    /// aclnnTanhBackward, from the output `y`: `g · (1 − y²)`.
    Tanh,
    /// aclnnLeakyReluBackward: `x > 0 ? g : g · slope`.
    LeakyRelu(f64),
}

impl ActGrad {
    fn name(self) -> &'static str {
        match self {
            ActGrad::Gelu => "GeluGrad",
            ActGrad::Silu => "SiluGrad",
            ActGrad::Sigmoid => "SigmoidGrad",
            ActGrad::Tanh => "TanhGrad",
            ActGrad::LeakyRelu(_) => "LeakyReluGrad",
        }
    }

    /// The page's dtypes, and whether the three tensors must share one
    /// (Silu, Tanh) rather than promote (Gelu, Sigmoid, LeakyRelu).
    fn dtypes(self) -> (&'static [DType], bool) {
        match self {
            ActGrad::Gelu => (FLOATS, false),
            ActGrad::Silu => (FLOATS, true),
            ActGrad::Sigmoid | ActGrad::LeakyRelu(_) => (FLOATS64, false),
            ActGrad::Tanh => (FLOATS64, true),
        }
    }

    /// The gradient at one element.
    pub fn eval(self, g: f64, x: f64) -> f64 {
        match self {
            ActGrad::Gelu => {
                let cdf = 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2));
                let pdf = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
                g * (cdf + x * pdf)
            }
            ActGrad::Silu => {
                let s = 1.0 / (1.0 + (-x).exp());
                g * s * (1.0 + x - x * s)
            }
            ActGrad::Sigmoid => g * x * (1.0 - x),
            ActGrad::Tanh => g * (1.0 - x * x),
            ActGrad::LeakyRelu(slope) => {
                if x > 0.0 {
                    g
                } else {
                    g * slope
                }
            }
        }
    }
}

/// `gradInput = kind(gradOutput, x)`, broadcasting the two; `xn` names `x`
/// (`self` or `output`) in messages.
pub fn act_grad(
    kind: ActGrad,
    g: &TensorSpec,
    x: &TensorSpec,
    xn: &str,
    out_name: &str,
    out: DType,
) -> Res<Kernel> {
    let name = kind.name();
    let (list, same) = kind.dtypes();
    allow(name, "gradOutput", g.dtype, list)?;
    allow(name, xn, x.dtype, list)?;
    allow(name, out_name, out, list)?;
    if same {
        same_dtype(name, xn, x.dtype, "gradOutput", g.dtype)?;
        same_dtype(name, out_name, out, "gradOutput", g.dtype)?;
    }
    broadcast(name, "gradOutput", &g.shape, xn, &x.shape)?;
    binary(name, g, x, out, BinaryKind::Promote, move |a, b| {
        kind.eval(a, b)
    })
}

/// aclnnPrelu: `x > 0 ? x : w · x` with `w` one value or one per channel
/// (dimension 1 of a self of rank ≥ 2); out of self's shape.
pub fn prelu(x: &TensorSpec, w: &TensorSpec, out: DType) -> Res<Kernel> {
    let name = "PRelu";
    allow(name, "self", x.dtype, FLOATS)?;
    allow(name, "weight", w.dtype, FLOATS)?;
    allow(name, "out", out, FLOATS)?;
    check_cast(name, "out", promote(x.dtype, w.dtype), out)?;
    let channels = if x.shape.len() <= 1 {
        1
    } else {
        x.shape[1].max(0) as usize
    };
    let nw = w.numel();
    if nw != 1 && nw != channels {
        return err(format!(
            "{name}: weight {} must have 1 element or one per channel ({channels}) of self {}",
            fmt_shape(&w.shape),
            fmt_shape(&x.shape)
        ));
    }
    let inner = if x.shape.len() <= 2 {
        1
    } else {
        numel(&x.shape[2..])
    };
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let (xv, wv) = (read(&i[0]), read(&i[1]));
            let v: Vec<f64> = xv
                .iter()
                .enumerate()
                .map(|(k, &e)| {
                    let a = if nw == 1 {
                        wv[0]
                    } else {
                        wv[(k / inner) % channels]
                    };
                    if e > 0.0 { e } else { a * e }
                })
                .collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Softmax backwards.
// ---------------------------------------------------------------------------

/// aclnnSoftmaxBackward (`log` false): `out = y · (g − Σ g·y)`, and
/// aclnnLogSoftmaxBackward (`log` true): `out = g − exp(y) · Σ g`, the sums
/// along `dim`; gradOutput and output of one shape and dtype, out of that
/// shape (a float type of the list). Log-softmax's page takes rank 1–8.
pub fn softmax_backward(
    g: &TensorSpec,
    y: &TensorSpec,
    dim: i64,
    out: DType,
    log: bool,
) -> Res<Kernel> {
    let name = if log { "LogSoftmaxGrad" } else { "SoftmaxGrad" };
    allow(name, "gradOutput", g.dtype, FLOATS)?;
    allow(name, "output", y.dtype, FLOATS)?;
    allow(name, "out", out, FLOATS)?;
    same_dtype(name, "output", y.dtype, "gradOutput", g.dtype)?;
    if g.shape != y.shape {
        return err(format!(
            "{name}: gradOutput {} and output {} must have one shape",
            fmt_shape(&g.shape),
            fmt_shape(&y.shape)
        ));
    }
    if log && g.shape.is_empty() {
        return err(format!(
            "{name}: gradOutput must have 1 to 8 dimensions, it has 0"
        ));
    }
    let d = axis(name, "dim", dim, g.shape.len())?;
    let (outer, len, inner) = split(&g.shape, d);
    Ok(Kernel {
        outputs: vec![spec(out, g.shape.clone())],
        native: Native::new(name, move |i, o| {
            let (gv, yv) = (read(&i[0]), read(&i[1]));
            let mut v = vec![0.0; gv.len()];
            for a in 0..outer {
                for c in 0..inner {
                    let k = |b: usize| (a * len + b) * inner + c;
                    let s: f64 = (0..len)
                        .map(|b| if log { gv[k(b)] } else { gv[k(b)] * yv[k(b)] })
                        .sum();
                    for b in 0..len {
                        let (gk, yk) = (gv[k(b)], yv[k(b)]);
                        v[k(b)] = if log {
                            gk - yk.exp() * s
                        } else {
                            yk * (gk - s)
                        };
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Embedding backward.
// ---------------------------------------------------------------------------

/// aclnnEmbeddingDenseBackward: `out[indices[n]] += grad[n]` over the rows
/// of grad (all but its last dimension merged, as many as indices has
/// elements); the row `paddingIdx` gets nothing (a value ≥ numWeights,
/// such as a negative one passed as uint64, pads none); `scaleGradByFreq`
/// divides each row's sum by how often its index occurs. out is
/// `[numWeights, grad's last dimension]` of grad's dtype.
pub fn embedding_dense_backward(
    grad: &TensorSpec,
    indices: &TensorSpec,
    num_weights: u64,
    padding_idx: u64,
    scale: bool,
    out: DType,
) -> Res<Kernel> {
    let name = "EmbeddingDenseGrad";
    allow(name, "grad", grad.dtype, FLOATS)?;
    allow(
        name,
        "indices",
        indices.dtype,
        &[
            DType::F32,
            DType::F16,
            DType::F64,
            DType::I32,
            DType::I64,
            DType::I16,
            DType::I8,
            DType::U8,
            DType::Bool,
        ],
    )?;
    same_dtype(name, "out", out, "grad", grad.dtype)?;
    let r = grad.shape.len();
    if !(2..=8).contains(&r) || !(1..=8).contains(&indices.shape.len()) {
        return err(format!(
            "{name}: grad {} must have 2 to 8 dimensions and indices {} 1 to 8",
            fmt_shape(&grad.shape),
            fmt_shape(&indices.shape)
        ));
    }
    let (rows, width) = (
        numel(&grad.shape[..r - 1]),
        grad.shape[r - 1].max(0) as usize,
    );
    if rows != indices.numel() {
        return err(format!(
            "{name}: grad {} has {rows} rows but indices {} has {} elements",
            fmt_shape(&grad.shape),
            fmt_shape(&indices.shape),
            indices.numel()
        ));
    }
    // The A2 kernel takes numWeights up to INT32_MAX (the page's
    // constraints).
    if num_weights > i32::MAX as u64 {
        return err(format!(
            "{name}: numWeights {num_weights} is above INT32_MAX"
        ));
    }
    let nw = num_weights as usize;
    Ok(Kernel {
        outputs: vec![spec(out, vec![num_weights as i64, width as i64])],
        native: Native::new(name, move |i, o| {
            let (gv, ix) = (read(&i[0]), read(&i[1]));
            let mut counts = vec![0usize; nw];
            for &k in &ix {
                if !(k >= 0.0 && (k as usize) < nw) {
                    return Err(OpError::Input(format!(
                        "{name}: index {k} is out of range [0, {nw})"
                    )));
                }
                counts[k as usize] += 1;
            }
            let mut v = vec![0.0; nw * width];
            for (n, &k) in ix.iter().enumerate() {
                let k = k as usize;
                if k as u64 == padding_idx {
                    continue;
                }
                let s = if scale { counts[k] as f64 } else { 1.0 };
                for c in 0..width {
                    v[k * width + c] += gv[n * width + c] / s;
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Losses.
// ---------------------------------------------------------------------------

fn reduction_arg(name: &str, reduction: i64) -> Res<()> {
    if (0..=2).contains(&reduction) {
        Ok(())
    } else {
        err(format!(
            "{name}: reduction {reduction} is not 0 (none), 1 (mean) or 2 (sum)"
        ))
    }
}

/// The NLL losses' shapes: self `(N, C)` with target `(N)`, or `(C)` with
/// target `()`; weight `(C)`. Returns (N, C, batched).
fn nll_shapes(
    name: &str,
    x: &TensorSpec,
    target: &TensorSpec,
    weight: &TensorSpec,
) -> Res<(usize, usize, bool)> {
    let (xr, tr) = (x.shape.len(), target.shape.len());
    let batched = xr == 2 && tr == 1 && x.shape[0] == target.shape[0];
    if !(batched || (xr == 1 && tr == 0)) {
        return err(format!(
            "{name}: self {} and target {} must be (N, C) and (N), or (C) and ()",
            fmt_shape(&x.shape),
            fmt_shape(&target.shape)
        ));
    }
    let c = x.shape[xr - 1].max(0) as usize;
    if weight.shape != [c as i64] {
        return err(format!(
            "{name}: weight {} must be ({c}), one weight per class",
            fmt_shape(&weight.shape)
        ));
    }
    let n = if batched {
        x.shape[0].max(0) as usize
    } else {
        1
    };
    Ok((n, c, batched))
}

/// `t` (the loss or its gradient) is `(n)`, one value per sample, when
/// `per_sample`, else one element of rank 0 or 1.
fn per_sample_or_one(
    name: &str,
    what: &str,
    t: &TensorSpec,
    n: usize,
    per_sample: bool,
) -> Res<()> {
    if per_sample && t.shape != [n as i64] {
        return err(format!(
            "{name}: {what} {} must be ({n}), one value per sample",
            fmt_shape(&t.shape)
        ));
    }
    if !per_sample && (t.shape.len() > 1 || t.numel() != 1) {
        return err(format!(
            "{name}: {what} {} must be one element of rank 0 or 1",
            fmt_shape(&t.shape)
        ));
    }
    Ok(())
}

fn one_element(name: &str, what: &str, t: &TensorSpec) -> Res<()> {
    if t.numel() == 1 {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} {} must hold one element",
            fmt_shape(&t.shape)
        ))
    }
}

/// The class of sample `n`, or `None` when it is `ignore`; a class outside
/// `[0, c)` is an error of the run.
fn class(name: &str, t: i64, ignore: i64, c: usize) -> Result<Option<usize>, OpError> {
    if t == ignore {
        return Ok(None);
    }
    if !(0..c as i64).contains(&t) {
        return Err(OpError::Input(format!(
            "{name}: target {t} is out of range [0, {c})"
        )));
    }
    Ok(Some(t as usize))
}

/// aclnnNLLLoss: `l_n = −w[t_n] · x[n, t_n]` (0 where `t_n` is
/// ignoreIndex), summed, averaged over Σ w\[t_n\] (mean: 0/0 is NaN, as
/// torch) or kept (none); totalWeightOut is Σ w\[t_n\] (0 with none, as
/// torch writes it). out is `(N)` for none with a batch, else one element
/// of rank ≤ 1; totalWeightOut one element (hicann/ops-nn
/// `loss/nll_loss/op_api/aclnn_nll_loss.cpp`, `CheckShape`).
#[allow(clippy::too_many_arguments)]
pub fn nll_loss(
    x: &TensorSpec,
    target: &TensorSpec,
    weight: &TensorSpec,
    reduction: i64,
    ignore: i64,
    out: &TensorSpec,
    total: &TensorSpec,
) -> Res<Kernel> {
    let name = "NLLLoss";
    allow(name, "self", x.dtype, FLOATS)?;
    allow(name, "target", target.dtype, TARGET)?;
    allow(name, "weight", weight.dtype, FLOATS)?;
    same_dtype(name, "weight", weight.dtype, "self", x.dtype)?;
    allow(name, "out", out.dtype, FLOATS)?;
    allow(name, "totalWeightOut", total.dtype, FLOATS)?;
    reduction_arg(name, reduction)?;
    let (n, c, batched) = nll_shapes(name, x, target, weight)?;
    let per_sample = reduction == 0 && batched;
    per_sample_or_one(name, "out", out, n, per_sample)?;
    one_element(name, "totalWeightOut", total)?;
    Ok(Kernel {
        outputs: vec![out.clone(), total.clone()],
        native: Native::new(name, move |i, o| {
            let (xv, tv, wv) = (read(&i[0]), read_i64(&i[1]), read(&i[2]));
            let (mut losses, mut tw) = (Vec::with_capacity(n), 0.0);
            for (s, &t) in tv.iter().enumerate().take(n) {
                match class(name, t, ignore, c)? {
                    None => losses.push(0.0),
                    Some(k) => {
                        losses.push(-wv[k] * xv[s * c + k]);
                        tw += wv[k];
                    }
                }
            }
            let sum: f64 = losses.iter().sum();
            let (loss, total) = match reduction {
                0 if per_sample => (losses, 0.0),
                0 => (vec![sum], 0.0),
                1 => (vec![sum / tw], tw),
                _ => (vec![sum], tw),
            };
            write(&mut o[0], &loss);
            write(&mut o[1], &[total]);
            Ok(())
        }),
    })
}

/// aclnnNLLLossBackward: `out[n, t_n] = −g · w[t_n]` (divided by
/// totalWeight for mean; g per sample for none with a batch), zero
/// elsewhere and for ignored samples. gradOutput, self, weight and
/// totalWeight of one dtype; gradOutput `(N)` for none with a batch, else
/// one element of rank ≤ 1; totalWeight one element; out of self's shape
/// and dtype (hicann/ops-nn
/// `loss/nll_loss_grad/op_api/aclnn_nll_loss_backward.cpp`, `CheckShape`).
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_backward(
    g: &TensorSpec,
    x: &TensorSpec,
    target: &TensorSpec,
    weight: &TensorSpec,
    reduction: i64,
    ignore: i64,
    total: &TensorSpec,
    out: DType,
) -> Res<Kernel> {
    let name = "NLLLossGrad";
    allow(name, "self", x.dtype, FLOATS)?;
    allow(name, "target", target.dtype, TARGET)?;
    for (what, d) in [
        ("gradOutput", g.dtype),
        ("weight", weight.dtype),
        ("totalWeight", total.dtype),
        ("out", out),
    ] {
        same_dtype(name, what, d, "self", x.dtype)?;
    }
    reduction_arg(name, reduction)?;
    let (n, c, batched) = nll_shapes(name, x, target, weight)?;
    let per_sample = reduction == 0 && batched;
    per_sample_or_one(name, "gradOutput", g, n, per_sample)?;
    one_element(name, "totalWeight", total)?;
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let (gv, tv, wv, twv) = (read(&i[0]), read_i64(&i[2]), read(&i[3]), read(&i[4]));
            let mut v = vec![0.0; n * c];
            for (s, &t) in tv.iter().enumerate().take(n) {
                if let Some(k) = class(name, t, ignore, c)? {
                    let gs = if per_sample { gv[s] } else { gv[0] };
                    let d = -gs * wv[k];
                    v[s * c + k] = if reduction == 1 { d / twv[0] } else { d };
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// aclnnMseLoss: `(x − y)²` over self and target broadcast, kept (none: out
/// of the broadcast shape), averaged or summed (out 0-D).
pub fn mse_loss(x: &TensorSpec, t: &TensorSpec, reduction: i64, out: DType) -> Res<Kernel> {
    let name = "MseLoss";
    allow(name, "self", x.dtype, FLOATS)?;
    allow(name, "target", t.dtype, FLOATS)?;
    allow(name, "out", out, FLOATS)?;
    check_cast(name, "out", promote(x.dtype, t.dtype), out)?;
    reduction_arg(name, reduction)?;
    let shape = broadcast(name, "self", &x.shape, "target", &t.shape)?;
    let oshape = if reduction == 0 {
        shape.clone()
    } else {
        vec![]
    };
    let (sx, st) = (x.shape.clone(), t.shape.clone());
    Ok(Kernel {
        outputs: vec![spec(out, oshape)],
        native: Native::new(name, move |i, o| {
            let (xv, tv) = (read(&i[0]), read(&i[1]));
            let (ox, ot) = (
                broadcast_offsets(&sx, &shape),
                broadcast_offsets(&st, &shape),
            );
            let l: Vec<f64> = ox
                .iter()
                .zip(&ot)
                .map(|(&a, &b)| (xv[a] - tv[b]).powi(2))
                .collect();
            let s: f64 = l.iter().sum();
            match reduction {
                0 => write(&mut o[0], &l),
                1 => write(&mut o[0], &[s / l.len() as f64]),
                _ => write(&mut o[0], &[s]),
            }
            Ok(())
        }),
    })
}

/// aclnnMseLossBackward: `g · 2(x − y)`, divided by self's element count
/// for mean, over gradOutput, self and target broadcast; gradOutput and
/// target of self's dtype.
pub fn mse_loss_backward(
    g: &TensorSpec,
    x: &TensorSpec,
    t: &TensorSpec,
    reduction: i64,
    out: DType,
) -> Res<Kernel> {
    let name = "MseLossGrad";
    allow(name, "self", x.dtype, FLOATS)?;
    same_dtype(name, "gradOutput", g.dtype, "self", x.dtype)?;
    same_dtype(name, "target", t.dtype, "self", x.dtype)?;
    allow(name, "out", out, FLOATS)?;
    check_cast(name, "out", x.dtype, out)?;
    reduction_arg(name, reduction)?;
    let gx = broadcast(name, "gradOutput", &g.shape, "self", &x.shape)?;
    let shape = broadcast(name, "gradOutput and self", &gx, "target", &t.shape)?;
    let norm = if reduction == 1 {
        2.0 / x.numel().max(1) as f64
    } else {
        2.0
    };
    let (sg, sx, st) = (g.shape.clone(), x.shape.clone(), t.shape.clone());
    Ok(Kernel {
        outputs: vec![spec(out, shape.clone())],
        native: Native::new(name, move |i, o| {
            let (gv, xv, tv) = (read(&i[0]), read(&i[1]), read(&i[2]));
            let (og, ox, ot) = (
                broadcast_offsets(&sg, &shape),
                broadcast_offsets(&sx, &shape),
                broadcast_offsets(&st, &shape),
            );
            let v: Vec<f64> = (0..og.len())
                .map(|k| gv[og[k]] * norm * (xv[ox[k]] - tv[ot[k]]))
                .collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

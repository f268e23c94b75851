//! The fused operators of transformer models, computed in f32 and rounded
//! once to the output type:
//!
//! - **RmsNorm** (`x`, `gamma` -> `y`, `rstd`): over the trailing dimensions
//!   that `gamma`'s shape covers, `rstd = 1/√(mean(x²) + epsilon)` and
//!   `y = x · rstd · gamma`. Attribute `epsilon` (float, default 1e-6).
//!   `y` has `x`'s type and shape; `rstd` is float32, `x`'s leading
//!   dimensions with 1 for each of `gamma`'s.
//! - **RotaryPositionEmbedding** (`x`, `cos`, `sin` -> `y`): `y = x · cos +
//!   rotate(x) · sin` along the last dimension, `cos` and `sin`
//!   broadcasting to `x` (4-D, as CANN's layouts BSND/BNSD/SBND are);
//!   attribute `mode` 0 rotates halves (`rotate(x) = [-x₂, x₁]`), 1
//!   interleaved pairs (`rotate(x)[2i] = -x[2i+1]`, `[2i+1] = x[2i]`);
//!   cann-sim has no kernel for CANN's modes 2 (quarter) and 3
//!   (interleave-half).
//! - **SwiGlu** (`x` -> `y`): `x` split in two halves `a`, `b` along
//!   attribute `dim` (int, default -1), `y = silu(a) · b`.
//!
//! All three take float32, float16 and bfloat16, every input of one type.

use super::broadcast::{broadcast_shapes, broadcast_strides};
use super::dtype::{load_f32, store_f32};
use super::{
    Arg, AttrValue, Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_float, check_dtype,
    fmt_shape, normalize_axis,
};

const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16];

fn same_dtype(op: Op, x: &TensorSpec, name: &str, other: &TensorSpec) -> Result<(), OpError> {
    if other.dtype == x.dtype {
        Ok(())
    } else {
        Err(OpError::Input(format!(
            "{}: input {name} is {} but x is {}; they must be of one type",
            op.name(),
            other.dtype.name(),
            x.dtype.name()
        )))
    }
}

fn int_attr(op: Op, attrs: &Attrs, name: &str, default: i64) -> Result<i64, OpError> {
    match attrs.get(name) {
        None => Ok(default),
        Some(AttrValue::Int(v)) => Ok(*v),
        Some(other) => Err(OpError::Attr(format!(
            "{}: attribute {name} must be an int, got {other:?}",
            op.name()
        ))),
    }
}

/// The outputs of RmsNorm: `y` and `rstd`.
pub(crate) fn infer_rms_norm(
    x: &TensorSpec,
    gamma: &TensorSpec,
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::RmsNorm;
    check_dtype(op, "x", x.dtype, DTYPES)?;
    same_dtype(op, x, "gamma", gamma)?;
    attr_float(op, attrs, "epsilon", 1e-6)?;
    let (xr, gr) = (x.shape.len(), gamma.shape.len());
    if gr == 0 || gr > xr || x.shape[xr - gr..] != gamma.shape[..] {
        return Err(OpError::Input(format!(
            "RmsNorm: gamma {} must equal the trailing dimensions of x {}",
            fmt_shape(&gamma.shape),
            fmt_shape(&x.shape)
        )));
    }
    let mut rstd = x.shape[..xr - gr].to_vec();
    rstd.extend(std::iter::repeat_n(1, gr));
    Ok(vec![
        x.clone(),
        TensorSpec {
            dtype: DType::F32,
            shape: rstd,
        },
    ])
}

pub(crate) fn run_rms_norm(
    x: &Input<'_>,
    gamma: &Input<'_>,
    attrs: &Attrs,
    outputs: &mut [Output<'_>],
) -> Result<(), OpError> {
    let eps = attr_float(Op::RmsNorm, attrs, "epsilon", 1e-6)?;
    let [y, rstd_out] = outputs else {
        return Err(OpError::Output(format!(
            "RmsNorm: expects 2 outputs (y, rstd), got {}",
            outputs.len()
        )));
    };
    let g = load_f32(gamma.spec.dtype, gamma.data);
    let v = load_f32(x.spec.dtype, x.data);
    let n = g.len().max(1);
    let mut out = vec![0f32; v.len()];
    let mut rstd = Vec::with_capacity(v.len() / n);
    for (row, o) in v.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        let ms = row.iter().map(|&a| a * a).sum::<f32>() / n as f32;
        let r = 1.0 / (ms + eps).sqrt();
        for ((o, &a), &w) in o.iter_mut().zip(row).zip(&g) {
            *o = a * r * w;
        }
        rstd.push(r);
    }
    store_f32(y.spec.dtype, &out, y.data);
    store_f32(DType::F32, &rstd, rstd_out.data);
    Ok(())
}

fn rope_mode(attrs: &Attrs) -> Result<i64, OpError> {
    let mode = int_attr(Op::RotaryPositionEmbedding, attrs, "mode", 0)?;
    match mode {
        0 | 1 => Ok(mode),
        2 | 3 => Err(OpError::Attr(format!(
            "RotaryPositionEmbedding: mode {mode} ({}) is not supported by cann-sim (0 half, 1 \
             interleave)",
            if mode == 2 {
                "quarter"
            } else {
                "interleave-half"
            }
        ))),
        _ => Err(OpError::Attr(format!(
            "RotaryPositionEmbedding: mode {mode} is not 0..=3"
        ))),
    }
}

pub(crate) fn infer_rope(args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
    let op = Op::RotaryPositionEmbedding;
    let (x, cos, sin) = (args[0].spec, args[1].spec, args[2].spec);
    check_dtype(op, "x", x.dtype, DTYPES)?;
    same_dtype(op, x, "cos", cos)?;
    same_dtype(op, x, "sin", sin)?;
    rope_mode(attrs)?;
    for (name, t) in [("x", x), ("cos", cos), ("sin", sin)] {
        if t.shape.len() != 4 {
            return Err(OpError::Input(format!(
                "RotaryPositionEmbedding: input {name} {} must be 4-D",
                fmt_shape(&t.shape)
            )));
        }
    }
    let d = x.shape[3];
    if d % 2 != 0 || cos.shape[3] != d || sin.shape[3] != d {
        return Err(OpError::Input(format!(
            "RotaryPositionEmbedding: the last dimension of x {} must be even and equal those of \
             cos {} and sin {}",
            fmt_shape(&x.shape),
            fmt_shape(&cos.shape),
            fmt_shape(&sin.shape)
        )));
    }
    for (name, t) in [("cos", cos), ("sin", sin)] {
        let b = broadcast_shapes(op, "x", &x.shape, name, &t.shape)?;
        if b != x.shape {
            return Err(OpError::Input(format!(
                "RotaryPositionEmbedding: {name} {} does not broadcast to x {}",
                fmt_shape(&t.shape),
                fmt_shape(&x.shape)
            )));
        }
    }
    Ok(x.clone())
}

/// The values of `t` (of shape `shape`) at every element of `out` (its
/// broadcast shape), row-major.
fn expand(t: &[f32], shape: &[i64], out: &[i64]) -> Vec<f32> {
    let st = broadcast_strides(shape, out);
    let n: usize = out.iter().map(|&d| d as usize).product();
    let mut idx = vec![0i64; out.len()];
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let at: usize = idx.iter().zip(&st).map(|(&i, &s)| i as usize * s).sum();
        v.push(t[at]);
        for k in (0..out.len()).rev() {
            idx[k] += 1;
            if idx[k] < out[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    v
}

pub(crate) fn run_rope(
    inputs: &[Input<'_>],
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let interleave = rope_mode(attrs)? == 1;
    let x = &inputs[0];
    let shape = &x.spec.shape;
    let v = load_f32(x.spec.dtype, x.data);
    let [cos, sin] = [&inputs[1], &inputs[2]]
        .map(|t| expand(&load_f32(t.spec.dtype, t.data), &t.spec.shape, shape));
    let d = shape.last().map_or(1, |&d| d as usize).max(1);
    let h = d / 2;
    let mut y = vec![0f32; v.len()];
    for (r, row) in v.chunks_exact(d).enumerate() {
        let base = r * d;
        for i in 0..d {
            let rot = match (interleave, i % 2 == 0, i < h) {
                (true, true, _) => -row[i + 1],
                (true, false, _) => row[i - 1],
                (false, _, true) => -row[i + h],
                (false, _, false) => row[i - h],
            };
            y[base + i] = row[i] * cos[base + i] + rot * sin[base + i];
        }
    }
    store_f32(out.spec.dtype, &y, out.data);
    Ok(())
}

fn swi_glu_dim(x: &TensorSpec, attrs: &Attrs) -> Result<usize, OpError> {
    let dim = int_attr(Op::SwiGlu, attrs, "dim", -1)?;
    let a = normalize_axis(dim, x.shape.len()).ok_or_else(|| {
        OpError::Attr(format!(
            "SwiGlu: attribute dim {dim} is out of range for x of shape {}",
            fmt_shape(&x.shape)
        ))
    })?;
    if x.shape[a] % 2 != 0 {
        return Err(OpError::Input(format!(
            "SwiGlu: dimension {a} of x {} is odd; it must split in two halves",
            fmt_shape(&x.shape)
        )));
    }
    Ok(a)
}

pub(crate) fn infer_swi_glu(x: &TensorSpec, attrs: &Attrs) -> Result<TensorSpec, OpError> {
    check_dtype(Op::SwiGlu, "x", x.dtype, DTYPES)?;
    let a = swi_glu_dim(x, attrs)?;
    let mut shape = x.shape.clone();
    shape[a] /= 2;
    Ok(TensorSpec {
        dtype: x.dtype,
        shape,
    })
}

pub(crate) fn run_swi_glu(
    x: &Input<'_>,
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let a = swi_glu_dim(x.spec, attrs)?;
    let dims = &x.spec.shape;
    let outer: usize = dims[..a].iter().map(|&d| d as usize).product();
    let half = dims[a] as usize / 2;
    let inner: usize = dims[a + 1..].iter().map(|&d| d as usize).product();
    let v = load_f32(x.spec.dtype, x.data);
    let mut y = Vec::with_capacity(outer * half * inner);
    for o in 0..outer {
        let base = o * 2 * half * inner;
        for k in 0..half * inner {
            let (g, u) = (v[base + k], v[base + half * inner + k]);
            y.push(g / (1.0 + (-g).exp()) * u);
        }
    }
    store_f32(out.spec.dtype, &y, out.data);
    Ok(())
}

//! Element-wise operators: the binary ones (NumPy broadcasting) and the
//! unary ones. Floating types compute in f32 (f16/bf16 rounded once when
//! stored), integers in i64 with wrapping arithmetic (truncated to the output
//! width when stored, which is int32's wrapping arithmetic).

use super::broadcast::{binary_map, broadcast_shapes};
use super::dtype::{load_f32, load_i64, store_f32, store_i64};
use super::{Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_float, check_dtype, numel};

/// The dtypes of the arithmetic operators (CANN's lists, restricted to the
/// types the simulator implements).
const NUMERIC: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];
/// The dtypes of the transcendental operators (`UnaryDataType` / Gelu's list).
const FLOATS: &[DType] = &[DType::F32, DType::F16, DType::BF16];

/// Add and Mul promote mixed input dtypes (CANN's type promotion table);
/// the other binary operators require equal dtypes.
fn promotes(op: Op) -> bool {
    matches!(op, Op::Add | Op::Axpy | Op::Mul)
}

/// CANN's promotion of two dtypes among those [`NUMERIC`] holds.
fn promote(a: DType, b: DType) -> DType {
    if a == b {
        a
    } else if a.is_f32_family() && b.is_f32_family() {
        // f16 with bf16, or either with f32: f32.
        DType::F32
    } else if a.is_f32_family() {
        a
    } else if b.is_f32_family() {
        b
    } else {
        DType::I64
    }
}

pub(crate) fn infer_binary(op: Op, a: &TensorSpec, b: &TensorSpec) -> Result<TensorSpec, OpError> {
    let names = op.input_names();
    let (na, nb) = (names[0], names[1]);
    check_dtype(op, na, a.dtype, NUMERIC)?;
    check_dtype(op, nb, b.dtype, NUMERIC)?;
    let dtype = if promotes(op) {
        promote(a.dtype, b.dtype)
    } else if a.dtype != b.dtype {
        return Err(OpError::Input(format!(
            "{}: {na} is {} and {nb} is {}: the dtypes must be equal",
            op.name(),
            a.dtype.name(),
            b.dtype.name()
        )));
    } else {
        a.dtype
    };
    let shape = broadcast_shapes(op, na, &a.shape, nb, &b.shape)?;
    Ok(TensorSpec { dtype, shape })
}

/// Runs a binary operator. `Axpy` is `x1 + alpha · x2` (attribute `alpha`,
/// a float, default 1; an integer output needs an integral `alpha`).
pub(crate) fn run_binary(
    op: Op,
    a: &Input<'_>,
    b: &Input<'_>,
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let out_shape = &out.spec.shape;
    let n = numel(out_shape);
    let dtype = out.spec.dtype;
    let alpha = if op == Op::Axpy {
        attr_float(op, attrs, "alpha", 1.0)?
    } else {
        1.0
    };
    if op == Op::Axpy && !dtype.is_f32_family() && alpha.fract() != 0.0 {
        return Err(OpError::Attr(format!(
            "Axpy: alpha = {alpha} is not integral, but the output is {}",
            dtype.name()
        )));
    }
    let ai = alpha as i64;
    let all_f32 = [a.spec.dtype, b.spec.dtype, dtype] == [DType::F32; 3];
    if all_f32 && a.data.len() == out.data.len() && b.data.len() == out.data.len() {
        // Same shapes, float32: straight over the bytes, at memory speed.
        let (x, y, o) = (a.data, b.data, &mut *out.data);
        match op {
            Op::Add => map2_f32(x, y, o, |x, y| x + y),
            Op::Axpy => map2_f32(x, y, o, |x, y| x + alpha * y),
            Op::Sub => map2_f32(x, y, o, |x, y| x - y),
            Op::Mul => map2_f32(x, y, o, |x, y| x * y),
            Op::RealDiv => map2_f32(x, y, o, |x, y| x / y),
            Op::Maximum => map2_f32(x, y, o, fmax),
            Op::Minimum => map2_f32(x, y, o, fmin),
            Op::ReluGrad => map2_f32(x, y, o, relu_grad),
            _ => return Err(not_binary(op)),
        }
        return Ok(());
    }
    if dtype.is_f32_family() {
        let av = load_f32(a.spec.dtype, a.data);
        let bv = load_f32(b.spec.dtype, b.data);
        let mut ov = vec![0f32; n];
        let (sa, sb) = (&a.spec.shape, &b.spec.shape);
        match op {
            Op::Add => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| x + y),
            Op::Axpy => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| x + alpha * y),
            Op::Sub => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| x - y),
            Op::Mul => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| x * y),
            Op::RealDiv => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| x / y),
            Op::Maximum => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, fmax),
            Op::Minimum => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, fmin),
            Op::ReluGrad => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, relu_grad),
            _ => return Err(not_binary(op)),
        }
        store_f32(dtype, &ov, out.data);
    } else {
        let av = load_i64(a.spec.dtype, a.data);
        let bv = load_i64(b.spec.dtype, b.data);
        let mut ov = vec![0i64; n];
        let (sa, sb) = (&a.spec.shape, &b.spec.shape);
        match op {
            Op::Add => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, i64::wrapping_add),
            Op::Axpy => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| {
                x.wrapping_add(ai.wrapping_mul(y))
            }),
            Op::Sub => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, i64::wrapping_sub),
            Op::Mul => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, i64::wrapping_mul),
            Op::RealDiv => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |x, y| {
                // Truncating division; the device leaves x/0 unspecified, the
                // simulator writes 0.
                if y == 0 { 0 } else { x.wrapping_div(y) }
            }),
            Op::Maximum => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, i64::max),
            Op::Minimum => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, i64::min),
            Op::ReluGrad => binary_map(&av, sa, &bv, sb, out_shape, &mut ov, |g, f| {
                if f > 0 { g } else { 0 }
            }),
            _ => return Err(not_binary(op)),
        }
        store_i64(dtype, &ov, out.data);
    }
    Ok(())
}

fn not_binary(op: Op) -> OpError {
    OpError::NotFound(format!("{}: not a binary element-wise operator", op.name()))
}

#[inline]
fn f32_at(c: &[u8]) -> f32 {
    f32::from_le_bytes([c[0], c[1], c[2], c[3]])
}

/// `o = f(x, y)` over float32 bytes of equal length.
fn map2_f32(x: &[u8], y: &[u8], o: &mut [u8], f: impl Fn(f32, f32) -> f32) {
    for ((o, x), y) in o
        .chunks_exact_mut(4)
        .zip(x.chunks_exact(4))
        .zip(y.chunks_exact(4))
    {
        o.copy_from_slice(&f(f32_at(x), f32_at(y)).to_le_bytes());
    }
}

/// `o = f(x)` over float32 bytes of equal length.
fn map1_f32(x: &[u8], o: &mut [u8], f: impl Fn(f32) -> f32) {
    for (o, x) in o.chunks_exact_mut(4).zip(x.chunks_exact(4)) {
        o.copy_from_slice(&f(f32_at(x)).to_le_bytes());
    }
}

/// ReluGrad: the gradient where the feature is positive, else 0.
fn relu_grad(g: f32, f: f32) -> f32 {
    if f > 0.0 { g } else { 0.0 }
}

/// Maximum, propagating NaN.
fn fmax(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else {
        x.max(y)
    }
}

/// Minimum, propagating NaN.
fn fmin(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        f32::NAN
    } else {
        x.min(y)
    }
}

/// The `base`, `scale`, `shift` attributes of Exp and Log (defaults -1
/// meaning e, 1, 0): Exp is `base^(scale*x + shift)`, Log is
/// `log_base(scale*x + shift)`. Returns `(ln(base), scale, shift)`.
fn base_scale_shift(op: Op, attrs: &Attrs) -> Result<(f32, f32, f32), OpError> {
    let base = attr_float(op, attrs, "base", -1.0)?;
    let scale = attr_float(op, attrs, "scale", 1.0)?;
    let shift = attr_float(op, attrs, "shift", 0.0)?;
    let ln_base = if base == -1.0 {
        1.0
    } else if base > 0.0 && (op == Op::Exp || base != 1.0) {
        base.ln()
    } else {
        return Err(OpError::Attr(format!(
            "{}: attribute base is {base}: it must be -1 (e) or {}",
            op.name(),
            if op == Op::Exp {
                "> 0"
            } else {
                "> 0 and not 1"
            }
        )));
    };
    Ok((ln_base, scale, shift))
}

pub(crate) fn infer_unary(op: Op, x: &TensorSpec, attrs: &Attrs) -> Result<TensorSpec, OpError> {
    match op {
        Op::Neg | Op::Abs | Op::Relu => check_dtype(op, "x", x.dtype, NUMERIC)?,
        _ => check_dtype(op, "x", x.dtype, FLOATS)?,
    }
    if matches!(op, Op::Exp | Op::Log) {
        base_scale_shift(op, attrs)?;
    }
    Ok(x.clone())
}

/// sqrt(2/pi), for Gelu's tanh form.
const SQRT_2_OVER_PI: f32 = 0.797_884_6;

pub(crate) fn run_unary(
    op: Op,
    x: &Input<'_>,
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let dtype = out.spec.dtype;
    if dtype.is_int() {
        let mut v = load_i64(x.spec.dtype, x.data);
        let f: fn(i64) -> i64 = match op {
            Op::Neg => i64::wrapping_neg,
            Op::Abs => i64::wrapping_abs,
            Op::Relu => |x| x.max(0),
            _ => return Err(super::dtype_error(op, "x", dtype, FLOATS)),
        };
        v.iter_mut().for_each(|e| *e = f(*e));
        store_i64(dtype, &v, out.data);
        return Ok(());
    }
    let (ln_base, scale, shift) = if matches!(op, Op::Exp | Op::Log) {
        base_scale_shift(op, attrs)?
    } else {
        (1.0, 1.0, 0.0)
    };
    let plain = (ln_base, scale, shift) == (1.0, 1.0, 0.0);
    let f: Box<dyn Fn(f32) -> f32> = match op {
        Op::Neg => Box::new(|e| -e),
        Op::Abs => Box::new(f32::abs),
        // Propagates NaN and keeps -0.
        Op::Relu => Box::new(|e| if e < 0.0 { 0.0 } else { e }),
        Op::Exp if plain => Box::new(f32::exp),
        Op::Exp => Box::new(move |e| ((scale * e + shift) * ln_base).exp()),
        Op::Log if plain => Box::new(f32::ln),
        Op::Log => Box::new(move |e| (scale * e + shift).ln() / ln_base),
        Op::Sqrt => Box::new(f32::sqrt),
        Op::Rsqrt => Box::new(|e| 1.0 / e.sqrt()),
        Op::Sigmoid => Box::new(|e| 1.0 / (1.0 + (-e).exp())),
        Op::Tanh => Box::new(f32::tanh),
        // CANN's Gelu is the tanh form, computed as
        // x / (1 + exp(-2 sqrt(2/pi) (x + 0.044715 x^3))).
        Op::Gelu => Box::new(|x| {
            let inner = SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x);
            x / (1.0 + (-2.0 * inner).exp())
        }),
        _ => {
            return Err(OpError::NotFound(format!(
                "{}: not a unary operator",
                op.name()
            )));
        }
    };
    if x.spec.dtype == DType::F32 && dtype == DType::F32 {
        // Monomorphic loops for the cheap ops, so that they vectorise.
        match op {
            Op::Neg => map1_f32(x.data, out.data, |e| -e),
            Op::Abs => map1_f32(x.data, out.data, f32::abs),
            Op::Relu => map1_f32(x.data, out.data, |e| if e < 0.0 { 0.0 } else { e }),
            _ => map1_f32(x.data, out.data, f),
        }
        return Ok(());
    }
    let mut v = load_f32(x.spec.dtype, x.data);
    v.iter_mut().for_each(|e| *e = f(*e));
    store_f32(dtype, &v, out.data);
    Ok(())
}

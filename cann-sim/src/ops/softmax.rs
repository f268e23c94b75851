//! SoftmaxV2 (`x` -> `y`) and LogSoftmaxV2 (`logits` -> `logsoftmax`):
//! attribute `axes` (list of ints, default `[-1]`, negative allowed, several
//! axes reduce together); SoftmaxV2 also has `half_to_float` (default false:
//! with a float16 `x`, `y` is float32). Computed in f32 with the maximum
//! subtracted first.

use super::dtype::{load_f32, store_f32};
use super::transpose::permute;
use super::{
    Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_bool, attr_list_int, check_dtype,
    fmt_shape, normalize_axis,
};

const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16];

fn input_name(op: Op) -> &'static str {
    if op == Op::SoftmaxV2 { "x" } else { "logits" }
}

/// The reduced-dimension flags of the `axes` attribute.
fn axes_mask(op: Op, attrs: &Attrs, shape: &[i64]) -> Result<Vec<bool>, OpError> {
    let axes = attr_list_int(op, attrs, "axes", &[-1])?;
    if axes.is_empty() {
        return Err(OpError::Attr(format!(
            "{}: attribute axes is empty",
            op.name()
        )));
    }
    let rank = shape.len();
    let mut mask = vec![false; rank];
    for &a in &axes {
        let i = normalize_axis(a, rank).ok_or_else(|| {
            OpError::Attr(format!(
                "{}: attribute axes value {a} is out of range [{}, {}] for {} of shape {}",
                op.name(),
                -(rank as i64),
                rank as i64 - 1,
                input_name(op),
                fmt_shape(shape)
            ))
        })?;
        mask[i] = true;
    }
    Ok(mask)
}

pub(crate) fn infer(op: Op, x: &TensorSpec, attrs: &Attrs) -> Result<TensorSpec, OpError> {
    check_dtype(op, input_name(op), x.dtype, DTYPES)?;
    axes_mask(op, attrs, &x.shape)?;
    let half_to_float = op == Op::SoftmaxV2 && attr_bool(op, attrs, "half_to_float", false)?;
    let dtype = if half_to_float && x.dtype == DType::F16 {
        DType::F32
    } else {
        x.dtype
    };
    Ok(TensorSpec {
        dtype,
        shape: x.shape.clone(),
    })
}

/// Softmax (or log-softmax) of each `row`, in place.
fn rows(v: &mut [f32], len: usize, log: bool) {
    for row in v.chunks_exact_mut(len) {
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        if log {
            let s: f32 = row.iter().map(|&x| (x - m).exp()).sum();
            let ls = s.ln();
            row.iter_mut().for_each(|x| *x = *x - m - ls);
        } else {
            let mut s = 0.0f32;
            for x in row.iter_mut() {
                *x = (*x - m).exp();
                s += *x;
            }
            let inv = 1.0 / s;
            row.iter_mut().for_each(|x| *x *= inv);
        }
    }
}

pub(crate) fn run(
    op: Op,
    x: &Input<'_>,
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let shape = &x.spec.shape;
    let mask = axes_mask(op, attrs, shape)?;
    let mut v = load_f32(x.spec.dtype, x.data);
    let log = op == Op::LogSoftmaxV2;
    if !v.is_empty() {
        // Kept dimensions first, reduced ones last (a no-op permutation when
        // the reduced axes are already the trailing ones).
        let perm: Vec<usize> = (0..shape.len())
            .filter(|&i| !mask[i])
            .chain((0..shape.len()).filter(|&i| mask[i]))
            .collect();
        let len: usize = perm
            .iter()
            .filter(|&&i| mask[i])
            .map(|&i| shape[i] as usize)
            .product();
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            rows(&mut v, len, log);
        } else {
            let mut t = permute(&v, shape, &perm);
            rows(&mut t, len, log);
            let t_shape: Vec<i64> = perm.iter().map(|&p| shape[p]).collect();
            let mut inverse = vec![0usize; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inverse[p] = i;
            }
            v = permute(&t, &t_shape, &inverse);
        }
    }
    store_f32(out.spec.dtype, &v, out.data);
    Ok(())
}

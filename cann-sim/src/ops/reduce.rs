//! ReduceSum, ReduceMean, ReduceMax: `x` and the axes to reduce as an int32
//! or int64 input tensor (the `...D` variants, not implemented, take them as
//! an attribute), attributes `keep_dims` (default false) and
//! `noop_with_empty_axes` (default true: empty `axes` returns `x` unchanged;
//! false: empty `axes` reduces every dimension).
//!
//! Floats accumulate in f32 (f16/bf16 rounded once at the end), integers in
//! i64 with wrapping. An empty reduction gives 0 for ReduceSum, NaN for a
//! float ReduceMean (0/0) and 0 for an integer one, and the lowest value
//! (-inf for floats) for ReduceMax. ReduceMax propagates NaN.

use super::broadcast::{contiguous_strides, for_each_row};
use super::dtype::{load_f32, load_i64, store_f32, store_i64};
use super::{
    Arg, Attrs, DType, Input, Op, OpError, Output, TensorSpec, UNKNOWN_DIM, UNKNOWN_RANK,
    attr_bool, check_dtype, fmt_shape, index_values, normalize_axis, numel,
};

const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];

/// What to reduce: one flag per dimension of `x`, or `None` for "nothing"
/// (empty axes with `noop_with_empty_axes`).
struct Plan {
    reduced: Option<Vec<bool>>,
    keep_dims: bool,
}

/// The reduced-dimension flags of `axes` for an `x` of `rank` (duplicates allowed).
fn axes_mask(op: Op, axes: &[i64], x_shape: &[i64]) -> Result<Vec<bool>, OpError> {
    let rank = x_shape.len();
    let mut mask = vec![false; rank];
    for &a in axes {
        let i = normalize_axis(a, rank).ok_or_else(|| {
            OpError::Input(format!(
                "{}: axes value {a} is out of range [{}, {}] for x of shape {}",
                op.name(),
                -(rank as i64),
                rank as i64 - 1,
                fmt_shape(x_shape)
            ))
        })?;
        mask[i] = true;
    }
    Ok(mask)
}

fn plan(op: Op, args: &[Arg<'_>], attrs: &Attrs) -> Result<Option<Plan>, OpError> {
    let x = args[0].spec;
    check_dtype(op, "x", x.dtype, DTYPES)?;
    let axes = index_values(op, "axes", &args[1], 1)?;
    let keep_dims = attr_bool(op, attrs, "keep_dims", false)?;
    let noop = attr_bool(op, attrs, "noop_with_empty_axes", true)?;
    let axes = match axes {
        Some(a) => a,
        None if numel(&args[1].spec.shape) == 0 => Vec::new(),
        None => return Ok(None),
    };
    let reduced = if axes.is_empty() {
        if noop {
            None
        } else {
            Some(vec![true; x.shape.len()])
        }
    } else {
        Some(axes_mask(op, &axes, &x.shape)?)
    };
    Ok(Some(Plan { reduced, keep_dims }))
}

fn out_shape(x_shape: &[i64], plan: &Plan) -> Vec<i64> {
    match &plan.reduced {
        None => x_shape.to_vec(),
        Some(mask) => x_shape
            .iter()
            .zip(mask)
            .filter_map(|(&d, &r)| match (r, plan.keep_dims) {
                (false, _) => Some(d),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect(),
    }
}

pub(crate) fn infer(op: Op, args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
    let x = args[0].spec;
    let shape = match plan(op, args, attrs)? {
        Some(p) => out_shape(&x.shape, &p),
        // The axes are not known: with keep_dims the rank is.
        None if attr_bool(op, attrs, "keep_dims", false)? => x
            .shape
            .iter()
            .map(|&d| if d == 1 { 1 } else { UNKNOWN_DIM })
            .collect(),
        None => vec![UNKNOWN_RANK],
    };
    Ok(TensorSpec {
        dtype: x.dtype,
        shape,
    })
}

/// Folds `x` (shape `shape`) into `out` (prefilled with the identity), over
/// the dimensions flagged in `mask`; `out` is row-major over the kept ones.
fn fold<T: Copy>(x: &[T], shape: &[i64], mask: &[bool], out: &mut [T], f: impl Fn(T, T) -> T) {
    if x.is_empty() {
        return;
    }
    if shape.is_empty() {
        out[0] = f(out[0], x[0]);
        return;
    }
    let xs = contiguous_strides(shape);
    // Output strides in the input's index space: 0 along reduced dimensions.
    let mut os = vec![0usize; shape.len()];
    let mut s = 1usize;
    for i in (0..shape.len()).rev() {
        if !mask[i] {
            os[i] = s;
            s *= shape[i] as usize;
        }
    }
    let last = shape.len() - 1;
    let inner = shape[last] as usize;
    let inner_reduced = mask[last];
    for_each_row(shape, [&xs, &os], |[xo, oo]| {
        let row = &x[xo..xo + inner];
        if inner_reduced {
            let mut acc = out[oo];
            for &v in row {
                acc = f(acc, v);
            }
            out[oo] = acc;
        } else {
            for (o, &v) in out[oo..oo + inner].iter_mut().zip(row) {
                *o = f(*o, v);
            }
        }
    });
}

pub(crate) fn run(
    op: Op,
    inputs: &[Input<'_>],
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let x = &inputs[0];
    let args: Vec<Arg<'_>> = inputs
        .iter()
        .map(|i| Arg {
            spec: i.spec,
            data: Some(i.data),
        })
        .collect();
    let Some(plan) = plan(op, &args, attrs)? else {
        return Err(OpError::Input(format!(
            "{}: the axes values are unknown",
            op.name()
        )));
    };
    let shape = &x.spec.shape;
    let Some(mask) = plan.reduced else {
        // No reduction: y is x.
        out.data.copy_from_slice(x.data);
        return Ok(());
    };
    let n_out = numel(&out.spec.shape);
    let count = shape
        .iter()
        .zip(&mask)
        .filter(|&(_, &r)| r)
        .map(|(&d, _)| d as usize)
        .product::<usize>();
    let dtype = x.spec.dtype;
    if dtype.is_f32_family() {
        let xv = load_f32(dtype, x.data);
        let init = if op == Op::ReduceMax {
            f32::NEG_INFINITY
        } else {
            0.0
        };
        let mut ov = vec![init; n_out];
        if op == Op::ReduceMax {
            fold(&xv, shape, &mask, &mut ov, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.max(b)
                }
            });
        } else {
            fold(&xv, shape, &mask, &mut ov, |a, b| a + b);
        }
        if op == Op::ReduceMean {
            let c = count as f32;
            ov.iter_mut().for_each(|v| *v /= c);
        }
        store_f32(dtype, &ov, out.data);
    } else {
        let xv = load_i64(dtype, x.data);
        let init = match (op, dtype) {
            (Op::ReduceMax, DType::I32) => i64::from(i32::MIN),
            (Op::ReduceMax, _) => i64::MIN,
            _ => 0,
        };
        let mut ov = vec![init; n_out];
        if op == Op::ReduceMax {
            fold(&xv, shape, &mask, &mut ov, i64::max);
        } else {
            fold(&xv, shape, &mask, &mut ov, i64::wrapping_add);
        }
        if op == Op::ReduceMean {
            let c = i64::try_from(count).unwrap_or(i64::MAX);
            ov.iter_mut()
                .for_each(|v| *v = if c == 0 { 0 } else { v.wrapping_div(c) });
        }
        store_i64(dtype, &ov, out.data);
    }
    Ok(())
}

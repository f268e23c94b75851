//! GatherV2 (`x`, `indices`, `axis` -> `y`): the slices of `x` along `axis`
//! that `indices` name, `y.shape = x.shape[..axis] ++ indices.shape ++
//! x.shape[axis+1..]`. `axis` is an int32/int64 scalar (or 1-element) input;
//! attribute `batch_dims` must be 0 here (cann-sim gathers without batch
//! dimensions). Any element type; indices int32 or int64, negative ones
//! counting from the end; an index out of range is an input error (from
//! inference when the indices' values are known, else when the kernel runs:
//! the device's result would be undefined).

use super::dtype::load_i64;
use super::{
    Arg, AttrValue, Attrs, DType, Input, Op, OpError, Output, TensorSpec, check_dtype, fmt_shape,
    index_values, normalize_axis,
};

fn axis(args: &[Arg<'_>], attrs: &Attrs) -> Result<Option<usize>, OpError> {
    match attrs.get("batch_dims") {
        None | Some(AttrValue::Int(0)) => {}
        Some(other) => {
            return Err(OpError::Attr(format!(
                "GatherV2: attribute batch_dims {other:?} is not supported by cann-sim (only 0)"
            )));
        }
    }
    let Some(v) = index_values(Op::GatherV2, "axis", &args[2], 1)? else {
        return Ok(None);
    };
    let x = &args[0].spec.shape;
    let [a] = v[..] else {
        return Err(OpError::Input(format!(
            "GatherV2: input axis holds {} values, it must hold one",
            v.len()
        )));
    };
    normalize_axis(a, x.len()).map(Some).ok_or_else(|| {
        OpError::Input(format!(
            "GatherV2: axis {a} is out of range for x of shape {}",
            fmt_shape(x)
        ))
    })
}

/// The rows `idx` names along dimension `a` (of size `n`), negative ones
/// counted from the end.
fn rows(idx: &[i64], n: i64, a: usize) -> Result<Vec<usize>, OpError> {
    idx.iter()
        .map(|&i| {
            let j = if i < 0 { i + n } else { i };
            if (0..n).contains(&j) {
                Ok(j as usize)
            } else {
                Err(OpError::Input(format!(
                    "GatherV2: index {i} is out of range for dimension {a} of x (size {n})"
                )))
            }
        })
        .collect()
}

pub(crate) fn infer(args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
    check_dtype(
        Op::GatherV2,
        "indices",
        args[1].spec.dtype,
        &[DType::I32, DType::I64],
    )?;
    let x = args[0].spec;
    if x.shape.is_empty() {
        return Err(OpError::Input(
            "GatherV2: input x is a scalar; it needs at least one dimension".into(),
        ));
    }
    let Some(a) = axis(args, attrs)? else {
        return Ok(TensorSpec {
            dtype: x.dtype,
            shape: vec![super::UNKNOWN_RANK],
        });
    };
    if let Some(d) = args[1].data {
        rows(&load_i64(args[1].spec.dtype, d), x.shape[a], a)?;
    }
    let mut shape = x.shape[..a].to_vec();
    shape.extend_from_slice(&args[1].spec.shape);
    shape.extend_from_slice(&x.shape[a + 1..]);
    Ok(TensorSpec {
        dtype: x.dtype,
        shape,
    })
}

pub(crate) fn run(
    inputs: &[Input<'_>],
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let args: Vec<Arg<'_>> = inputs
        .iter()
        .map(|i| Arg {
            spec: i.spec,
            data: Some(i.data),
        })
        .collect();
    let Some(a) = axis(&args, attrs)? else {
        return Err(OpError::Input("GatherV2: axis is not known".into()));
    };
    let x = &inputs[0];
    let dims = &x.spec.shape;
    let n = dims[a];
    let outer: usize = dims[..a].iter().map(|&d| d as usize).product();
    let inner: usize =
        dims[a + 1..].iter().map(|&d| d as usize).product::<usize>() * x.spec.dtype.size();
    let rows = rows(&load_i64(inputs[1].spec.dtype, inputs[1].data), n, a)?;
    let mut at = 0;
    for o in 0..outer {
        let base = o * n as usize * inner;
        for &r in &rows {
            let src = base + r * inner;
            out.data[at..at + inner].copy_from_slice(&x.data[src..src + inner]);
            at += inner;
        }
    }
    Ok(())
}

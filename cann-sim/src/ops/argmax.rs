//! ArgMaxV2 (`x`, `dimension` -> `y`): the index of the largest element
//! along `dimension` (an int32/int64 scalar or 1-element input, negative
//! counting from the end), that dimension removed; the first one when
//! several are equal, NaN counting as the largest. Attribute `dtype`, the
//! type of `y`: int32 or int64 (default int64). `x`: float32, float16,
//! bfloat16, int32, int64.

use super::dtype::{load_f64, store_i64};
use super::{
    Arg, AttrValue, Attrs, DType, Input, Op, OpError, Output, TensorSpec, check_dtype, fmt_shape,
    index_values, normalize_axis,
};

// hicann/ops-math `index/arg_max_v2` dtype table: the float types, double
// and the integers (int16 is not among the simulator's types yet).
const DTYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I8,
    DType::U8,
    DType::I32,
    DType::I64,
];

fn out_dtype(attrs: &Attrs) -> Result<DType, OpError> {
    let v = match attrs.get("dtype") {
        None => return Ok(DType::I64),
        Some(AttrValue::DataType(v)) => *v,
        Some(AttrValue::Int(v)) => i32::try_from(*v).unwrap_or(-1),
        Some(other) => {
            return Err(OpError::Attr(format!(
                "ArgMaxV2: attribute dtype must be a data type, got {other:?}"
            )));
        }
    };
    match DType::from_acl(v) {
        Some(d @ (DType::I32 | DType::I64)) => Ok(d),
        _ => Err(OpError::Attr(format!(
            "ArgMaxV2: attribute dtype {v} is not int32 (3) or int64 (9)"
        ))),
    }
}

fn axis(x: &TensorSpec, dimension: &Arg<'_>) -> Result<Option<usize>, OpError> {
    let Some(v) = index_values(Op::ArgMaxV2, "dimension", dimension, 1)? else {
        return Ok(None);
    };
    let [a] = v[..] else {
        return Err(OpError::Input(format!(
            "ArgMaxV2: input dimension holds {} values, it must hold one",
            v.len()
        )));
    };
    // A scalar x reduces its only element (as dimension 0 or -1).
    let rank = x.shape.len().max(1);
    normalize_axis(a, rank).map(Some).ok_or_else(|| {
        OpError::Input(format!(
            "ArgMaxV2: dimension {a} is out of range for x of shape {}",
            fmt_shape(&x.shape)
        ))
    })
}

pub(crate) fn infer(args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
    let x = args[0].spec;
    check_dtype(Op::ArgMaxV2, "x", x.dtype, DTYPES)?;
    let dtype = out_dtype(attrs)?;
    let Some(a) = axis(x, &args[1])? else {
        return Ok(TensorSpec {
            dtype,
            shape: vec![super::UNKNOWN_RANK],
        });
    };
    if x.shape.get(a) == Some(&0) {
        return Err(OpError::Input(format!(
            "ArgMaxV2: dimension {a} of x {} is empty: it has no largest element",
            fmt_shape(&x.shape)
        )));
    }
    let mut shape = x.shape.clone();
    if !shape.is_empty() {
        shape.remove(a);
    }
    Ok(TensorSpec { dtype, shape })
}

pub(crate) fn run(
    inputs: &[Input<'_>],
    _attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let x = &inputs[0];
    let dimension = Arg {
        spec: inputs[1].spec,
        data: Some(inputs[1].data),
    };
    let a = axis(x.spec, &dimension)?.unwrap_or(0);
    let dims = &x.spec.shape;
    let n = dims.get(a).map_or(1, |&d| d as usize);
    let outer: usize = dims[..a.min(dims.len())]
        .iter()
        .map(|&d| d as usize)
        .product();
    let inner: usize = dims
        .get(a + 1..)
        .map_or(1, |r| r.iter().map(|&d| d as usize).product());
    let v = load_f64(x.spec.dtype, x.data);
    let mut idx = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| v[(o * n + k) * inner + i];
            let mut best = 0usize;
            for k in 1..n {
                let (c, b) = (at(k), at(best));
                if !b.is_nan() && (c > b || c.is_nan()) {
                    best = k;
                }
            }
            idx.push(best as i64);
        }
    }
    store_i64(out.spec.dtype, &idx, out.data);
    Ok(())
}

//! Transpose: `x` and `perm` as an int32/int64 1-D input tensor (TransposeD,
//! not implemented, takes `perm` as an attribute). `y.shape[i] =
//! x.shape[perm[i]]`; `perm` must be a permutation of `0..rank` (negative
//! values are rejected, as CANN documents the range `[0, rank-1]`). Any dtype.

use super::broadcast::{contiguous_strides, for_each_row};
use super::{
    Arg, DType, Input, Op, OpError, Output, TensorSpec, UNKNOWN_DIM, fmt_shape, index_values,
};

const DTYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::I8,
    DType::I16,
    DType::U8,
    DType::Bool,
    DType::F64,
];

/// Checks `perm` against `x_shape`; returns it as indices.
fn check_perm(perm: &[i64], x_shape: &[i64]) -> Result<Vec<usize>, OpError> {
    let rank = x_shape.len();
    let bad = |why: String| {
        OpError::Input(format!(
            "Transpose: perm {} does not fit x of shape {}: {why}",
            fmt_shape(perm),
            fmt_shape(x_shape)
        ))
    };
    if perm.len() != rank {
        return Err(bad(format!(
            "it has {} entries, x has rank {rank}",
            perm.len()
        )));
    }
    let mut seen = vec![false; rank];
    let mut out = Vec::with_capacity(rank);
    for &p in perm {
        let i = usize::try_from(p)
            .ok()
            .filter(|&i| i < rank)
            .ok_or_else(|| bad(format!("{p} is not in [0, {}]", rank as i64 - 1)))?;
        if std::mem::replace(&mut seen[i], true) {
            return Err(bad(format!("{p} appears twice")));
        }
        out.push(i);
    }
    Ok(out)
}

pub(crate) fn infer(args: &[Arg<'_>]) -> Result<TensorSpec, OpError> {
    let x = args[0].spec;
    super::check_dtype(Op::Transpose, "x", x.dtype, DTYPES)?;
    let perm_spec = args[1].spec;
    let perm = index_values(Op::Transpose, "perm", &args[1], 1)?;
    if perm_spec.shape.len() != 1 {
        return Err(OpError::Input(format!(
            "Transpose: input perm has shape {}: it must be 1-D",
            fmt_shape(&perm_spec.shape)
        )));
    }
    let shape = match perm {
        Some(perm) => check_perm(&perm, &x.shape)?
            .into_iter()
            .map(|i| x.shape[i])
            .collect(),
        None => {
            if perm_spec.shape[0] != x.shape.len() as i64 {
                return Err(OpError::Input(format!(
                    "Transpose: perm has {} entries but x has shape {} (rank {})",
                    perm_spec.shape[0],
                    fmt_shape(&x.shape),
                    x.shape.len()
                )));
            }
            // Known only where every dimension of x has the same size.
            let same = x.shape.windows(2).all(|w| w[0] == w[1]);
            x.shape
                .iter()
                .map(|&d| if same { d } else { UNKNOWN_DIM })
                .collect()
        }
    };
    Ok(TensorSpec {
        dtype: x.dtype,
        shape,
    })
}

/// `out = x` permuted: `out` has shape `shape[perm[i]]`. Elements of any `T`.
pub(crate) fn permute<T: Copy + Default>(x: &[T], shape: &[i64], perm: &[usize]) -> Vec<T> {
    let n = x.len();
    let mut out = vec![T::default(); n];
    if n == 0 {
        return out;
    }
    let out_shape: Vec<i64> = perm.iter().map(|&p| shape[p]).collect();
    if out_shape.is_empty() {
        out.copy_from_slice(x);
        return out;
    }
    let xs = contiguous_strides(shape);
    // Input stride of each output dimension.
    let xs_perm: Vec<usize> = perm.iter().map(|&p| xs[p]).collect();
    let os = contiguous_strides(&out_shape);
    let last = out_shape.len() - 1;
    let inner = out_shape[last] as usize;
    let step = xs_perm[last];
    for_each_row(&out_shape, [&os, &xs_perm], |[oo, xo]| {
        for (j, o) in out[oo..oo + inner].iter_mut().enumerate() {
            *o = x[xo + j * step];
        }
    });
    out
}

fn read<const N: usize>(data: &[u8]) -> Vec<[u8; N]> {
    data.chunks_exact(N)
        .map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            a
        })
        .collect()
}

pub(crate) fn run(inputs: &[Input<'_>], out: &mut Output<'_>) -> Result<(), OpError> {
    let (x, p) = (&inputs[0], &inputs[1]);
    let perm = super::dtype::load_i64(p.spec.dtype, p.data);
    let perm = check_perm(&perm, &x.spec.shape)?;
    let shape = &x.spec.shape;
    let bytes: Vec<u8> = match x.spec.dtype.size() {
        1 => permute(x.data, shape, &perm),
        2 => permute(&read::<2>(x.data), shape, &perm).concat(),
        4 => permute(&read::<4>(x.data), shape, &perm).concat(),
        _ => permute(&read::<8>(x.data), shape, &perm).concat(),
    };
    out.data.copy_from_slice(&bytes);
    Ok(())
}

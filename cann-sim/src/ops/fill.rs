//! Fill (`dims`: int32/int64 1-D, `value`: a scalar -> `y` of shape `dims`
//! and the dtype of `value`), ZerosLike and OnesLike (`x` -> `y`, same spec).
//! Every dtype. Fill's `value` may be 0-D or of shape `[1]`.
//!
//! MaskedFill (`x`, `mask`: bool broadcasting to `x`, `value`: a scalar of
//! `x`'s dtype -> `y`, `x`'s spec): `y = value` where `mask`, else `x`.

use super::broadcast::{binary_map, broadcast_shapes};
use super::dtype::one_bytes;
use super::{
    Arg, DType, Input, Op, OpError, Output, TensorSpec, UNKNOWN_DIM, check_dtype, fmt_shape,
    index_values,
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

pub(crate) fn infer(op: Op, args: &[Arg<'_>]) -> Result<TensorSpec, OpError> {
    if op != Op::Fill {
        check_dtype(op, "x", args[0].spec.dtype, DTYPES)?;
        return Ok(args[0].spec.clone());
    }
    let (dims_arg, value) = (&args[0], args[1].spec);
    check_dtype(op, "value", value.dtype, DTYPES)?;
    check_scalar(op, value)?;
    let dims = index_values(op, "dims", dims_arg, 1)?;
    if dims_arg.spec.shape.len() != 1 {
        return Err(OpError::Input(format!(
            "Fill: input dims has shape {}: it must be 1-D",
            fmt_shape(&dims_arg.spec.shape)
        )));
    }
    let shape = match dims {
        None => vec![UNKNOWN_DIM; dims_arg.spec.shape[0].max(0) as usize],
        Some(d) => {
            if let Some(&neg) = d.iter().find(|&&v| v < 0) {
                return Err(OpError::Input(format!(
                    "Fill: dims {} has the negative size {neg}",
                    fmt_shape(&d)
                )));
            }
            d
        }
    };
    let spec = TensorSpec {
        dtype: value.dtype,
        shape,
    };
    if spec.shape.iter().all(|&d| d >= 0) && spec.checked_numel().is_none() {
        return Err(OpError::Input(format!(
            "Fill: dims {} is too large",
            fmt_shape(&spec.shape)
        )));
    }
    Ok(spec)
}

fn check_scalar(op: Op, value: &TensorSpec) -> Result<(), OpError> {
    if value.shape.is_empty() || value.shape == [1] {
        Ok(())
    } else {
        Err(OpError::Input(format!(
            "{}: value has shape {}: it must be a scalar ([] or [1])",
            op.name(),
            fmt_shape(&value.shape)
        )))
    }
}

pub(crate) fn infer_masked_fill(args: &[Arg<'_>]) -> Result<TensorSpec, OpError> {
    let op = Op::MaskedFill;
    let (x, mask, value) = (args[0].spec, args[1].spec, args[2].spec);
    check_dtype(op, "x", x.dtype, DTYPES)?;
    check_dtype(op, "mask", mask.dtype, &[DType::Bool])?;
    check_dtype(op, "value", value.dtype, &[x.dtype])?;
    check_scalar(op, value)?;
    if broadcast_shapes(op, "x", &x.shape, "mask", &mask.shape)? != x.shape {
        return Err(OpError::Input(format!(
            "MaskedFill: mask {} does not broadcast to x {}",
            fmt_shape(&mask.shape),
            fmt_shape(&x.shape)
        )));
    }
    Ok(x.clone())
}

pub(crate) fn run_masked_fill(inputs: &[Input<'_>], out: &mut Output<'_>) -> Result<(), OpError> {
    let (x, mask, value) = (&inputs[0], &inputs[1], &inputs[2]);
    let n = out.spec.numel();
    let size = out.spec.dtype.size();
    // Which elements the mask selects, the mask broadcast to x.
    let at: Vec<usize> = (0..n).collect();
    let mut selected = vec![false; n];
    binary_map(
        &at,
        &x.spec.shape,
        mask.data,
        &mask.spec.shape,
        &x.spec.shape,
        &mut selected,
        |_, m| m != 0,
    );
    for (i, (o, &sel)) in out.data.chunks_exact_mut(size).zip(&selected).enumerate() {
        o.copy_from_slice(if sel {
            value.data
        } else {
            &x.data[i * size..(i + 1) * size]
        });
    }
    Ok(())
}

pub(crate) fn run(op: Op, inputs: &[Input<'_>], out: &mut Output<'_>) -> Result<(), OpError> {
    let pattern = match op {
        Op::Fill => inputs[1].data.to_vec(),
        Op::OnesLike => one_bytes(out.spec.dtype),
        _ => vec![0u8; out.spec.dtype.size()],
    };
    if pattern.is_empty() {
        return Ok(());
    }
    for chunk in out.data.chunks_exact_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern);
    }
    Ok(())
}

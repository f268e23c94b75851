//! Fill (`dims`: int32/int64 1-D, `value`: a scalar -> `y` of shape `dims`
//! and the dtype of `value`), ZerosLike and OnesLike (`x` -> `y`, same spec).
//! Every dtype. Fill's `value` may be 0-D or of shape `[1]`.

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
    if !(value.shape.is_empty() || value.shape == [1]) {
        return Err(OpError::Input(format!(
            "Fill: value has shape {}: it must be a scalar ([] or [1])",
            fmt_shape(&value.shape)
        )));
    }
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

//! The simulator's operator library: CPU kernels for the CANN operators the
//! simulator implements, behind one interface shared by the two operator
//! APIs (`aclop*` and `aclnn*`) and by the model executor.
//!
//! Tensors here are contiguous, row-major (ND) byte buffers with a data type
//! and a shape. Operator type names, input order, attribute names and dtype
//! rules are the real CANN ones; f16/bf16 inputs accumulate in f32, as the
//! Cube unit does. Broadcasting follows NumPy.

mod argmax;
mod attr;
pub mod backward;
pub mod backward_act;
mod broadcast;
mod cast;
mod dtype;
mod elementwise;
mod error;
mod fill;
mod gather;
mod index;
pub mod int4;
pub mod llama_extra;
mod matmul;
pub mod native;
pub mod nn;
mod op;
pub mod optim;
pub mod random;
mod reduce;
mod softmax;
mod tensor;
pub mod tensorcore;
#[cfg(test)]
mod tests;
mod transformer;
mod transpose;
pub mod upsample;
pub mod weight_quant;

pub use attr::{AttrValue, Attrs};
pub(crate) use attr::{attr_bool, attr_float, attr_int_required, attr_list_int};
pub(crate) use dtype::load_f64;
pub use error::OpError;
pub(crate) use error::{check_dtype, dtype_error};
pub(crate) use index::{index_values, normalize_axis};
use op::OP_TYPES;
pub(crate) use op::Op;
pub(crate) use tensor::{Arg, fmt_shape, fmt_spec, numel};
pub use tensor::{DType, Input, Output, TensorSpec};

/// A dimension whose size depends on the values of an input that [`infer`]
/// was not given (GE's `UNKNOWN_DIM`).
pub const UNKNOWN_DIM: i64 = -1;

/// The single dimension of a shape whose rank depends on the values of an
/// input that [`infer`] was not given (GE's `UNKNOWN_DIM_NUM`: shape `[-2]`).
pub const UNKNOWN_RANK: i64 = -2;

/// Every operator type the library runs, by its CANN name (sorted).
pub fn op_types() -> &'static [&'static str] {
    OP_TYPES
}

/// The output specs of `op_type` for these input specs and attributes
/// (shape and dtype inference with CANN's rules).
///
/// Some output shapes depend on the *values* of an input: `axes` of
/// ReduceSum/ReduceMean/ReduceMax, `perm` of Transpose, `dims` of Fill. As
/// GE does for a non-constant input, `infer` then reports the dimensions it
/// cannot know as [`UNKNOWN_DIM`] (-1), or the shape `[UNKNOWN_RANK]` (`[-2]`)
/// when even the rank is unknown. [`infer_with_values`] gives the exact shapes.
///
/// # Errors
///
/// [`OpError::NotFound`] for an unknown operator type, [`OpError::Input`] for
/// a wrong input count, shape or dtype combination, [`OpError::DType`] for a
/// dtype the operator does not support, [`OpError::Attr`] for a missing or
/// ill-typed attribute.
pub fn infer(
    op_type: &str,
    inputs: &[TensorSpec],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let args: Vec<Arg<'_>> = inputs.iter().map(|spec| Arg { spec, data: None }).collect();
    op.infer(&args, attrs)
}

/// Like [`infer`], with the input data at hand, so that shapes depending on
/// input values (`axes`, `perm`, `dims`) are exact.
///
/// # Errors
///
/// As [`infer`]; also [`OpError::Input`] when an input's byte length is not
/// `spec.bytes()`.
pub fn infer_with_values(
    op_type: &str,
    inputs: &[Input<'_>],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let args = checked_args(op, inputs)?;
    op.infer(&args, attrs)
}

/// Like [`infer`], with the values of some inputs known (the constant
/// ones, `Some(bytes)`), so that shapes depending on them are exact.
///
/// # Errors
///
/// As [`infer`]; also [`OpError::Input`] when a known input's byte length is
/// not `spec.bytes()`.
pub fn infer_with_some_values(
    op_type: &str,
    inputs: &[(&TensorSpec, Option<&[u8]>)],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let names = op.input_names();
    let mut args = Vec::with_capacity(inputs.len());
    for (i, &(spec, data)) in inputs.iter().enumerate() {
        if let Some(d) = data {
            let name = names.get(i).copied().unwrap_or("extra");
            let need = spec
                .checked_bytes()
                .ok_or_else(|| bad_shape(op, name, spec))?;
            if d.len() != need {
                return Err(OpError::Input(format!(
                    "{}: input {name} buffer is {} bytes but {} needs {need}",
                    op.name(),
                    d.len(),
                    fmt_spec(spec)
                )));
            }
        }
        args.push(Arg { spec, data });
    }
    op.infer(&args, attrs)
}

/// Runs the kernel of `op_type`.
///
/// Output specs must equal what [`infer_with_values`] returns (else
/// [`OpError::Output`]); every buffer must be exactly `spec.bytes()` long
/// (else [`OpError::Input`] or [`OpError::Output`]). Nothing is written to
/// the outputs when an error is returned.
///
/// # Errors
///
/// As [`infer`], plus [`OpError::Output`] for outputs that do not fit.
pub fn run(
    op_type: &str,
    inputs: &[Input<'_>],
    attrs: &Attrs,
    outputs: &mut [Output<'_>],
) -> Result<(), OpError> {
    let op = Op::parse(op_type)?;
    let args = checked_args(op, inputs)?;
    let expected = op.infer(&args, attrs)?;
    let names = op.output_names();
    if outputs.len() != expected.len() {
        return Err(OpError::Output(format!(
            "{op_type}: expects {} output{} ({}), got {}",
            expected.len(),
            if expected.len() == 1 { "" } else { "s" },
            names.join(", "),
            outputs.len()
        )));
    }
    for (i, (out, want)) in outputs.iter().zip(&expected).enumerate() {
        let name = names.get(i).copied().unwrap_or("y");
        if out.spec != want {
            return Err(OpError::Output(format!(
                "{op_type}: output {name} is {} but the operator produces {}",
                fmt_spec(out.spec),
                fmt_spec(want)
            )));
        }
        let need = want.checked_bytes().unwrap_or(usize::MAX);
        if out.data.len() != need {
            return Err(OpError::Output(format!(
                "{op_type}: output {name} buffer is {} bytes but {} needs {need}",
                out.data.len(),
                fmt_spec(want)
            )));
        }
    }
    op.run(inputs, attrs, outputs)
}

fn checked_args<'a>(op: Op, inputs: &[Input<'a>]) -> Result<Vec<Arg<'a>>, OpError> {
    let names = op.input_names();
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let name = names.get(i).copied().unwrap_or("extra");
            let need = input
                .spec
                .checked_bytes()
                .ok_or_else(|| bad_shape(op, name, input.spec))?;
            if input.data.len() != need {
                return Err(OpError::Input(format!(
                    "{}: input {name} buffer is {} bytes but {} needs {need}",
                    op.name(),
                    input.data.len(),
                    fmt_spec(input.spec)
                )));
            }
            Ok(Arg {
                spec: input.spec,
                data: Some(input.data),
            })
        })
        .collect()
}

pub(crate) fn bad_shape(op: Op, name: &str, spec: &TensorSpec) -> OpError {
    if spec.shape.iter().any(|&d| d < 0) {
        OpError::Input(format!(
            "{}: input {name} has shape {}: dimensions must be >= 0",
            op.name(),
            fmt_shape(&spec.shape)
        ))
    } else {
        OpError::Input(format!(
            "{}: input {name} has shape {}: its size overflows",
            op.name(),
            fmt_shape(&spec.shape)
        ))
    }
}

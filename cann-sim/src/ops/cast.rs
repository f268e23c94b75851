//! Cast: `x` -> `y` of the same shape and the dtype of the required int
//! attribute `dst_type` (an `aclDataType`). Every dtype to every dtype.
//!
//! Float to integer truncates toward zero and saturates (NaN gives 0); float
//! to f16/bf16 rounds to nearest even; integer to narrower integer wraps;
//! anything to bool is `x != 0`; bool is 0 or 1.

use half::{bf16, f16};

use super::dtype::{load_f64, load_i64};
use super::{Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_int_required};

const ALL: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I32,
    DType::I64,
    DType::I8,
    DType::I16,
    DType::U8,
    DType::Bool,
];

pub(crate) fn infer(x: &TensorSpec, attrs: &Attrs) -> Result<TensorSpec, OpError> {
    super::check_dtype(Op::Cast, "x", x.dtype, ALL)?;
    let dst = attr_int_required(Op::Cast, attrs, "dst_type")?;
    let dtype = i32::try_from(dst)
        .ok()
        .and_then(DType::from_acl)
        .ok_or_else(|| {
            let list: Vec<String> = ALL
                .iter()
                .map(|d| format!("{} ({})", d.name(), d.to_acl()))
                .collect();
            OpError::DType(format!(
                "Cast: dst_type {dst} is not a data type cann-sim supports (supported: {})",
                list.join(", ")
            ))
        })?;
    Ok(TensorSpec {
        dtype,
        shape: x.shape.clone(),
    })
}

fn put<const N: usize>(out: &mut [u8], vals: impl Iterator<Item = [u8; N]>) {
    for (o, v) in out.chunks_exact_mut(N).zip(vals) {
        o.copy_from_slice(&v);
    }
}

pub(crate) fn run(x: &Input<'_>, out: &mut Output<'_>) -> Result<(), OpError> {
    let src = x.spec.dtype;
    let dst = out.spec.dtype;
    let o = &mut *out.data;
    if matches!(src, DType::F32 | DType::F16 | DType::BF16 | DType::F64) {
        let v = load_f64(src, x.data);
        let it = v.iter().copied();
        match dst {
            DType::F32 => put(o, it.map(|f| (f as f32).to_le_bytes())),
            DType::F16 => put(o, it.map(|f| f16::from_f64(f).to_le_bytes())),
            DType::BF16 => put(o, it.map(|f| bf16::from_f64(f).to_le_bytes())),
            DType::F64 => put(o, it.map(f64::to_le_bytes)),
            DType::I32 => put(o, it.map(|f| (f as i32).to_le_bytes())),
            DType::I64 => put(o, it.map(|f| (f as i64).to_le_bytes())),
            DType::I8 => put(o, it.map(|f| (f as i8).to_le_bytes())),
            DType::I16 => put(o, it.map(|f| (f as i16).to_le_bytes())),
            DType::U8 => put(o, it.map(|f| [f as u8])),
            DType::Bool => put(o, it.map(|f| [u8::from(f != 0.0)])),
        }
    } else {
        let v = load_i64(src, x.data);
        let it = v.iter().copied();
        match dst {
            DType::F32 => put(o, it.map(|i| (i as f32).to_le_bytes())),
            DType::F16 => put(o, it.map(|i| f16::from_f64(i as f64).to_le_bytes())),
            DType::BF16 => put(o, it.map(|i| bf16::from_f32(i as f32).to_le_bytes())),
            DType::F64 => put(o, it.map(|i| (i as f64).to_le_bytes())),
            DType::I32 => put(o, it.map(|i| (i as i32).to_le_bytes())),
            DType::I64 => put(o, it.map(i64::to_le_bytes)),
            DType::I8 => put(o, it.map(|i| (i as i8).to_le_bytes())),
            DType::I16 => put(o, it.map(|i| (i as i16).to_le_bytes())),
            DType::U8 => put(o, it.map(|i| [i as u8])),
            DType::Bool => put(o, it.map(|i| [u8::from(i != 0)])),
        }
    }
    Ok(())
}

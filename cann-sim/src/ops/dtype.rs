//! Element encoding: reading and writing the little-endian bytes of every
//! [`DType`], and the f16/bf16 conversions (through the `half` crate).
//!
//! Kernels compute in one of two domains: `f32` for the floating types
//! (f16/bf16 widen exactly to f32 and are rounded once, to nearest even, when
//! stored) and `i64` for the integer types (stored by truncation, which gives
//! two's-complement wrapping for int32, as the device does).

use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use half::{bf16, f16};

use super::DType;

impl DType {
    /// The name CANN's documentation uses (`float32`, `float16`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F16 => "float16",
            DType::I8 => "int8",
            DType::I32 => "int32",
            DType::U8 => "uint8",
            DType::I64 => "int64",
            DType::Bool => "bool",
            DType::F64 => "float64",
            DType::BF16 => "bfloat16",
        }
    }

    /// True for float32, float16 and bfloat16 (the types kernels compute in f32).
    pub(crate) fn is_f32_family(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// True for int32 and int64 (the types kernels compute in i64).
    pub(crate) fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }
}

#[inline]
fn b2(c: &[u8]) -> [u8; 2] {
    [c[0], c[1]]
}

#[inline]
fn b4(c: &[u8]) -> [u8; 4] {
    [c[0], c[1], c[2], c[3]]
}

#[inline]
fn b8(c: &[u8]) -> [u8; 8] {
    [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]
}

/// Elements per step of the 16-bit conversions (a stack buffer of bits).
const CHUNK_16: usize = 512;

/// Decodes little-endian 16-bit floats to f32: the bits go through a stack
/// buffer so that `half`'s slice conversion (vectorised, F16C where the CPU
/// has it) does the widening.
fn widen_16(bytes: &[u8], widen: impl Fn(&[u16], &mut [f32])) -> Vec<f32> {
    let mut out = vec![0f32; bytes.len() / 2];
    let mut bits = [0u16; CHUNK_16];
    for (src, dst) in bytes.chunks(2 * CHUNK_16).zip(out.chunks_mut(CHUNK_16)) {
        let bits = &mut bits[..dst.len()];
        for (b, c) in bits.iter_mut().zip(src.chunks_exact(2)) {
            *b = u16::from_le_bytes(b2(c));
        }
        widen(bits, dst);
    }
    out
}

/// Encodes f32 values as little-endian 16-bit floats into `out` (rounded by
/// `narrow`, `half`'s slice conversion), through a stack buffer of bits.
fn narrow_16(vals: &[f32], out: &mut [u8], narrow: impl Fn(&[f32], &mut [u16])) {
    let mut bits = [0u16; CHUNK_16];
    for (src, dst) in vals.chunks(CHUNK_16).zip(out.chunks_mut(2 * CHUNK_16)) {
        let n = src.len().min(dst.len() / 2);
        let bits = &mut bits[..n];
        narrow(&src[..n], bits);
        for (o, b) in dst.chunks_exact_mut(2).zip(bits.iter()) {
            o.copy_from_slice(&b.to_le_bytes());
        }
    }
}

/// Decodes `bytes` (elements of `dtype`) to f32. Integers convert by value.
pub(crate) fn load_f32(dtype: DType, bytes: &[u8]) -> Vec<f32> {
    match dtype {
        DType::F32 => bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(b4(c)))
            .collect(),
        DType::F16 => widen_16(bytes, |bits, dst| {
            bits.reinterpret_cast::<f16>().convert_to_f32_slice(dst)
        }),
        DType::BF16 => widen_16(bytes, |bits, dst| {
            bits.reinterpret_cast::<bf16>().convert_to_f32_slice(dst)
        }),
        DType::F64 => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(b8(c)) as f32)
            .collect(),
        _ => load_i64(dtype, bytes)
            .into_iter()
            .map(|v| v as f32)
            .collect(),
    }
}

/// Encodes `vals` as `dtype` into `out` (`vals.len() * dtype.size()` bytes),
/// rounding to nearest even for f16/bf16.
pub(crate) fn store_f32(dtype: DType, vals: &[f32], out: &mut [u8]) {
    match dtype {
        DType::F32 => {
            for (o, v) in out.chunks_exact_mut(4).zip(vals) {
                o.copy_from_slice(&v.to_le_bytes());
            }
        }
        DType::F16 => narrow_16(vals, out, |src, bits| {
            bits.reinterpret_cast_mut::<f16>()
                .convert_from_f32_slice(src)
        }),
        DType::BF16 => narrow_16(vals, out, |src, bits| {
            bits.reinterpret_cast_mut::<bf16>()
                .convert_from_f32_slice(src)
        }),
        DType::F64 => {
            for (o, v) in out.chunks_exact_mut(8).zip(vals) {
                o.copy_from_slice(&f64::from(*v).to_le_bytes());
            }
        }
        _ => {
            let ints: Vec<i64> = vals.iter().map(|&v| v as i64).collect();
            store_i64(dtype, &ints, out);
        }
    }
}

/// Decodes `bytes` (elements of `dtype`) to i64. Floats truncate toward zero
/// (saturating, NaN to 0).
pub(crate) fn load_i64(dtype: DType, bytes: &[u8]) -> Vec<i64> {
    match dtype {
        DType::I32 => bytes
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes(b4(c))))
            .collect(),
        DType::I64 => bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(b8(c)))
            .collect(),
        DType::I8 => bytes.iter().map(|&b| i64::from(b as i8)).collect(),
        DType::U8 => bytes.iter().map(|&b| i64::from(b)).collect(),
        DType::Bool => bytes.iter().map(|&b| i64::from(b != 0)).collect(),
        _ => load_f64(dtype, bytes)
            .into_iter()
            .map(|v| v as i64)
            .collect(),
    }
}

/// Encodes `vals` as `dtype` into `out`: integers by truncation (wrapping).
pub(crate) fn store_i64(dtype: DType, vals: &[i64], out: &mut [u8]) {
    match dtype {
        DType::I32 => {
            for (o, v) in out.chunks_exact_mut(4).zip(vals) {
                o.copy_from_slice(&(*v as i32).to_le_bytes());
            }
        }
        DType::I64 => {
            for (o, v) in out.chunks_exact_mut(8).zip(vals) {
                o.copy_from_slice(&v.to_le_bytes());
            }
        }
        DType::I8 | DType::U8 => {
            for (o, v) in out.iter_mut().zip(vals) {
                *o = *v as u8;
            }
        }
        DType::Bool => {
            for (o, v) in out.iter_mut().zip(vals) {
                *o = u8::from(*v != 0);
            }
        }
        _ => {
            let floats: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
            store_f32(dtype, &floats, out);
        }
    }
}

/// Decodes `bytes` (elements of `dtype`) to f64; exact for every type but
/// int64 beyond 2^53.
pub(crate) fn load_f64(dtype: DType, bytes: &[u8]) -> Vec<f64> {
    match dtype {
        DType::F64 => bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(b8(c)))
            .collect(),
        DType::F32 | DType::F16 | DType::BF16 => {
            load_f32(dtype, bytes).into_iter().map(f64::from).collect()
        }
        _ => load_i64(dtype, bytes)
            .into_iter()
            .map(|v| v as f64)
            .collect(),
    }
}

/// The bytes of the value one in `dtype`.
pub(crate) fn one_bytes(dtype: DType) -> Vec<u8> {
    match dtype {
        DType::F32 => 1f32.to_le_bytes().to_vec(),
        DType::F16 => f16::ONE.to_le_bytes().to_vec(),
        DType::BF16 => bf16::ONE.to_le_bytes().to_vec(),
        DType::F64 => 1f64.to_le_bytes().to_vec(),
        DType::I32 => 1i32.to_le_bytes().to_vec(),
        DType::I64 => 1i64.to_le_bytes().to_vec(),
        DType::I8 | DType::U8 | DType::Bool => vec![1],
    }
}

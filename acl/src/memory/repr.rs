//! Which Rust types may live in device memory.

/// A type that can be copied to and from device memory byte for byte.
///
/// Implemented for the integer types, `f32`, `f64`, [`half::f16`] and
/// [`half::bf16`].
///
/// # Safety
///
/// Implement it only for `#[repr(C)]` (or `#[repr(transparent)]`) `Copy`
/// types without padding, pointers or references, for which **every** bit
/// pattern is a valid value: device memory is copied back into such values
/// as raw bytes.
pub unsafe trait DeviceRepr: Copy + Send + Sync + 'static {}

macro_rules! device_repr {
    ($($t:ty),*) => {
        // SAFETY: primitive numbers: no padding, every bit pattern valid.
        $(unsafe impl DeviceRepr for $t {})*
    };
}

device_repr!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    half::f16,
    half::bf16
);

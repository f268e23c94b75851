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

/// A boolean element (`ACL_BOOL`): one byte, false when zero.
///
/// Not `bool` itself: device memory is copied back into host values byte
/// for byte, and a device kernel may leave any byte there, while a `bool`
/// other than 0 or 1 is undefined behaviour. `Bool` accepts every byte and
/// reads any non-zero one as `true`, as CANN's kernels do.
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Bool(pub u8);

impl Bool {
    /// `Bool(0)`.
    pub const FALSE: Bool = Bool(0);
    /// `Bool(1)`.
    pub const TRUE: Bool = Bool(1);

    /// Whether the byte is non-zero.
    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(b: bool) -> Bool {
        Bool(u8::from(b))
    }
}

impl From<Bool> for bool {
    fn from(b: Bool) -> bool {
        b.get()
    }
}

// SAFETY: `repr(transparent)` over `u8`: one byte, no padding, every bit
// pattern a valid value.
unsafe impl DeviceRepr for Bool {}

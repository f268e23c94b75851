//! The enumerations some operators take in place of a plain integer (the
//! table gives such an argument its type: `mode: int64_t {RotaryMode}`).

/// How the Cube unit may compute float matmuls (`cubeMathType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(i8)]
pub enum CubeMathType {
    /// `KEEP_DTYPE` (0): compute in the input type.
    #[default]
    KeepDtype = 0,
    /// `ALLOW_FP32_DOWN_PRECISION` (1).
    AllowFp32DownPrecision = 1,
    /// `USE_FP16` (2).
    UseFp16 = 2,
    /// `USE_HF32` (3).
    UseHf32 = 3,
    /// `USE_FP32_ADD` (4): the Addmm family only (the bias added in f32);
    /// the other matmuls refuse it (161002).
    UseFp32Add = 4,
}

/// How [`rotary_position_embedding`](super::rotary_position_embedding) rotates the last dimension (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(i64)]
pub enum RotaryMode {
    /// 0: halves, `rotate(x) = [-x₂, x₁]` (GPT-NeoX, Llama).
    #[default]
    Half = 0,
    /// 1: interleaved pairs, `rotate(x)[2i] = -x[2i+1]`, `[2i+1] = x[2i]` (GPT-J).
    Interleave = 1,
    /// 2: quarters, `[-x₂, x₁, -x₄, x₃]`.
    Quarter = 2,
    /// 3: odd then even elements, then halves.
    InterleaveHalf = 3,
}

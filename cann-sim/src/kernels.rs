//! The simulator's sample kernel binary, for tests and documentation.
//!
//! `kernels/samples.c`, compiled by the build script into a sim kernel
//! binary (a host shared library; see the README, "Kernel binaries"). Its
//! kernels:
//!
//! - `vadd_f32(const float *x, const float *y, float *z, uint64_t n)`: `z = x + y`.
//! - `scale_add(const float *x, float *y, const ScaleTiling *t)`: `y = t->alpha * x + y`
//!   for `t->n` elements, `ScaleTiling = { float alpha; uint32_t reserved; uint64_t n; }`
//!   passed as a placeholder.
//! - `record_blocks(uint32_t *out)`: `out[i] = blocks * 1000 + i` for each block `i`.
//! - `sum20(uint64_t *out, uint32_t fbits, uint64_t a0 … a19)`: `out[0]` = the sum of
//!   `a0..a19`, `out[1]` = the bits of `2 × f32::from_bits(fbits)`.
//!
//! Each also takes the block index and count, appended by the simulator.

use std::path::PathBuf;

/// The path of the sample kernel binary.
///
/// # Errors
///
/// Why there is none: the build machine had no working C compiler.
pub fn sample_kernels() -> Result<PathBuf, String> {
    let path = env!("CANN_SIM_SAMPLE_KERNELS");
    if path.is_empty() {
        return Err(format!(
            "cann-sim was built without its sample kernels: {}",
            env!("CANN_SIM_SAMPLE_KERNELS_ERROR")
        ));
    }
    Ok(PathBuf::from(path))
}

//! The `custom_kernel` example's logic: a vector add kernel, loaded from a
//! kernel binary and launched on a stream, its result checked on the host.
//!
//! The binary is `$VADD_KERNEL_BINARY` when set (on hardware: the AscendC
//! build of the kernel), otherwise the cann-sim kernel binary the examples'
//! build script compiles from `kernels/vadd.c`.

use acl::kernel::{KernelArgs, KernelBinary};
use acl::{Device, Runtime};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The kernel binary the build script made.
pub const BUILT_KERNEL: &str = env!("VADD_KERNEL_BINARY");

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The binary that was loaded.
    pub binary: PathBuf,
    /// Elements added.
    pub elements: usize,
    /// Blocks launched.
    pub blocks: u32,
    /// Elements whose result differs from the host's `x + y`.
    pub mismatches: usize,
    /// From launch to the result being on the device.
    pub kernel_time: Duration,
}

/// The binary to load: `$VADD_KERNEL_BINARY`, or the one the build made.
pub fn kernel_binary() -> PathBuf {
    std::env::var_os("VADD_KERNEL_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(BUILT_KERNEL))
}

/// Loads the vadd kernel on device 0, adds `elements` floats with `blocks`
/// blocks and compares with the host.
///
/// # Errors
///
/// Any AscendCL error, or zero blocks.
pub fn run(elements: usize, blocks: u32) -> Result<Report, acl::Error> {
    let rt = Runtime::init()?;
    let npu = Device::new(&rt, 0)?;
    let stream = npu.new_stream()?;
    let binary = kernel_binary();
    let vadd = KernelBinary::load_file(&npu, &binary)?.kernel("vadd")?;

    let x: Vec<f32> = (0..elements).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..elements).map(|i| 1.0 - (i % 7) as f32).collect();
    let dx = stream.clone_from_host(&x)?;
    let dy = stream.clone_from_host(&y)?;
    let mut dz = stream.alloc_zeros::<f32>(elements)?;
    let per_block = (elements as u64).div_ceil(u64::from(blocks.max(1)));
    // struct VaddTiling { uint64_t total; uint64_t per_block; }
    let tiling = [elements as u64, per_block];

    let started = Instant::now();
    let args = KernelArgs::new()
        .input(&dx)
        .input(&dy)
        .output(&mut dz)
        .placeholder(&tiling);
    // SAFETY: vadd(x, y, z, tiling) reads tiling.total floats of x and y
    // and writes as many of z; each block writes its own range.
    unsafe { vadd.launch(&stream, blocks, args)? };
    stream.synchronize()?;
    let kernel_time = started.elapsed();

    let z = dz.to_host_vec()?;
    let mismatches = z
        .iter()
        .zip(x.iter().zip(&y))
        .filter(|(got, (a, b))| **got != *a + *b)
        .count();
    Ok(Report {
        binary,
        elements,
        blocks,
        mismatches,
        kernel_time,
    })
}

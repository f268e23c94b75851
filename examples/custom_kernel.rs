//! A custom kernel: a vector add, loaded from a kernel binary, launched on
//! a stream with 8 blocks, and checked against the host.
//!
//! On cann-sim the binary is a host shared library the examples' build
//! script compiles from `examples/kernels/vadd.c`; on an NPU, point
//! `VADD_KERNEL_BINARY` at the AscendC build of the same kernel. The loading
//! and launching code (`aclrtBinaryLoadFromFile`, `aclrtKernelArgs*`,
//! `aclrtLaunchKernelWithConfig`) is the same.
//!
//! ```text
//! cargo run --example custom_kernel
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    examples::run(|| {
        let backend = examples::select_backend()?;
        println!("backend:  {backend}");
        let report = examples::custom_kernel::run(1 << 20, 8)?;
        println!("binary:   {}", report.binary.display());
        println!(
            "vadd:     {} elements, {} blocks, {:.3} ms",
            report.elements,
            report.blocks,
            report.kernel_time.as_secs_f64() * 1e3
        );
        if report.mismatches != 0 {
            return Err(format!(
                "{} of {} results differ from the host's x + y",
                report.mismatches, report.elements
            )
            .into());
        }
        println!(
            "result:   z = x + y verified for all {} elements",
            report.elements
        );
        Ok(())
    })
}

//! Compiles the sample kernels (`kernels/samples.c`) into a sim kernel
//! binary, `libcann_sim_samples.so` in `OUT_DIR`, for tests and docs
//! ([`cann_sim::sample_kernels`]). Without a working C compiler the
//! simulator still builds; `sample_kernels()` then says why there is none.

use std::path::PathBuf;

mod c_library;

fn main() {
    println!("cargo:rerun-if-changed=kernels/samples.c");
    println!("cargo:rerun-if-changed=c_library.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS=");
        println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR=cargo did not set OUT_DIR");
        return;
    };
    let lib = out.join("libcann_sim_samples.so");
    match c_library::build("kernels/samples.c", &lib, 2) {
        Ok(()) => {
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS={}", lib.display());
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR=");
        }
        Err(e) => {
            let e = e.replace(['\n', '\r'], " ");
            println!("cargo:warning=no sample kernels: {e}");
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS=");
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR={e}");
        }
    }
}

//! Compiles the sample kernels (`kernels/samples.c`) into a sim kernel
//! binary, `libcann_sim_samples.so` in `OUT_DIR`, for tests and docs
//! ([`cann_sim::sample_kernels`]). Without a working C compiler the
//! simulator still builds; `sample_kernels()` then says why there is none.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=kernels/samples.c");
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS=");
        println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR=cargo did not set OUT_DIR");
        return;
    };
    let lib = out.join("libcann_sim_samples.so");
    let outcome = cc::Build::new()
        .cargo_metadata(false)
        .try_get_compiler()
        .map_err(|e| e.to_string())
        .and_then(|compiler| {
            compiler
                .to_command()
                // Not instrumented even in a sanitizer build (cc passes
                // -fsanitize on from RUSTFLAGS; a second ASan runtime in the
                // process aborts it).
                .args(["-shared", "-fPIC", "-O2", "-fno-sanitize=all", "-o"])
                .arg(&lib)
                .arg("kernels/samples.c")
                .status()
                .map_err(|e| format!("cannot run the C compiler: {e}"))
        });
    match outcome {
        Ok(status) if status.success() => {
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS={}", lib.display());
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR=");
        }
        Ok(status) => {
            println!("cargo:warning=compiling the sample kernels failed ({status})");
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS=");
            println!(
                "cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR=the C compiler failed ({status})"
            );
        }
        Err(e) => {
            let e = e.replace(['\n', '\r'], " ");
            println!("cargo:warning=no sample kernels: {e}");
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS=");
            println!("cargo:rustc-env=CANN_SIM_SAMPLE_KERNELS_ERROR={e}");
        }
    }
}

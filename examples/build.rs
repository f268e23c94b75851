//! Compiles the custom_kernel example's vector add (`kernels/vadd.c`) with
//! `cc` into a cann-sim kernel binary (a host shared library) and tells the
//! example where it is through `VADD_KERNEL_BINARY`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=kernels/vadd.c");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libvadd_kernel.so");
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .opt_level(2)
        .get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&lib)
        .arg("kernels/vadd.c")
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "compiling kernels/vadd.c failed");
    println!("cargo:rustc-env=VADD_KERNEL_BINARY={}", lib.display());
}

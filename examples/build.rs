//! Compiles the custom_kernel example's vector add (`kernels/vadd.c`) with
//! `cc` into a cann-sim kernel binary (a host shared library) and tells the
//! example where it is through `VADD_KERNEL_BINARY`.

use std::path::PathBuf;

#[path = "../cann-sim/c_library.rs"]
mod c_library;

fn main() {
    println!("cargo:rerun-if-changed=kernels/vadd.c");
    println!("cargo:rerun-if-changed=../cann-sim/c_library.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libvadd_kernel.so");
    if let Err(e) = c_library::build("kernels/vadd.c", &lib, 2) {
        panic!("compiling kernels/vadd.c: {e}");
    }
    println!("cargo:rustc-env=VADD_KERNEL_BINARY={}", lib.display());
}

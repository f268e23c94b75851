//! With the `bindgen` feature, regenerates the bindings from the local CANN
//! install into `OUT_DIR` (`cann_codegen::build`); without it, the checked-in
//! `src/bindings.rs` is used.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    if let Err(e) = cann_codegen::build::regenerate(
        cann_codegen::build::HeaderSet::Hccl,
        "#[allow(unused_imports)]\nuse acl_sys::*;",
    ) {
        println!("cargo:warning=hccl-sys feature `bindgen`: {e}");
        std::process::exit(1);
    }
}

//! With the `bindgen` feature, regenerates the bindings from the local CANN
//! install into `OUT_DIR`; without it, the checked-in `src/bindings.rs` is used.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    regenerate();
}

#[cfg(feature = "bindgen")]
fn regenerate() {
    use acl_sys::codegen;
    use std::path::PathBuf;
    println!("cargo:rerun-if-env-changed=CANN_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=ASCEND_HOME_PATH");
    let fail = |e: String| -> ! {
        println!("cargo:warning=hccl-sys feature `bindgen`: {e}");
        std::process::exit(1)
    };
    let root = std::env::var_os("CANN_INCLUDE_DIR")
        .or_else(|| std::env::var_os("ASCEND_HOME_PATH"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"));
    let dirs = codegen::headers::HeaderDirs::find(&root).unwrap_or_else(|e| fail(e));
    let raw = codegen::headers::bindgen_hccl(&dirs).unwrap_or_else(|e| fail(e));
    let headers = format!("{} (build time)", dirs.hccl_inc.display());
    let prov = codegen::Provenance {
        headers: &headers,
        generator: "bindgen (build-time, feature `bindgen`)",
        command: "the `bindgen` feature of hccl-sys",
        prelude: "#[allow(unused_imports)]\nuse acl_sys::*;",
        library_fn: "crate::library",
    };
    let out = codegen::generate(&prov, &raw).unwrap_or_else(|e| fail(e));
    let dir = std::env::var_os("OUT_DIR").unwrap_or_else(|| fail("OUT_DIR is not set".into()));
    let path = PathBuf::from(dir).join("bindings.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
}

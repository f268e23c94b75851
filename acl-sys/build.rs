//! With the `bindgen` feature, regenerates the bindings from the local CANN
//! install into `OUT_DIR`; without it, the checked-in `src/bindings.rs` is used.

#[cfg(feature = "bindgen")]
#[path = "src/codegen.rs"]
#[allow(dead_code)]
mod codegen;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bindgen")]
    regenerate();
}

#[cfg(feature = "bindgen")]
fn regenerate() {
    use std::path::PathBuf;
    println!("cargo:rerun-if-env-changed=CANN_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=ASCEND_HOME_PATH");
    let fail = |e: String| -> ! {
        println!("cargo:warning=cann-acl-sys feature `bindgen`: {e}");
        std::process::exit(1)
    };
    let root = std::env::var_os("CANN_INCLUDE_DIR")
        .or_else(|| std::env::var_os("ASCEND_HOME_PATH"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"));
    let dirs = codegen::headers::HeaderDirs::find(&root).unwrap_or_else(|e| fail(e));
    let raw = codegen::headers::bindgen_acl(&dirs).unwrap_or_else(|e| fail(e));
    let version = dirs.acl_version().unwrap_or_else(|| "unknown".into());
    let headers = format!("{} (ACL {version}, build time)", dirs.acl_inc.display());
    let prov = codegen::Provenance {
        headers: &headers,
        generator: "bindgen (build-time, feature `bindgen`)",
        command: "the `bindgen` feature of cann-acl-sys",
        prelude: "use crate::loader::LoadError;",
        library_fn: "crate::library",
    };
    let out = codegen::generate(&prov, &raw).unwrap_or_else(|e| fail(e));
    let dir = std::env::var_os("OUT_DIR").unwrap_or_else(|| fail("OUT_DIR is not set".into()));
    let path = PathBuf::from(dir).join("bindings.rs");
    std::fs::write(&path, out).unwrap_or_else(|e| fail(format!("{}: {e}", path.display())));
}

//! Builds `libfake_acl.so` (see fake/fake_acl.c) for the loader tests and
//! tells them where it is through `FAKE_ACL_LIB`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=fake/fake_acl.c");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libfake_acl.so");
    let compiler = cc::Build::new().cargo_metadata(false).get_compiler();
    let status = compiler
        .to_command()
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg("fake/fake_acl.c")
        .status()
        .expect("the C compiler runs");
    assert!(status.success(), "building libfake_acl.so failed");
    println!("cargo:rustc-env=FAKE_ACL_LIB={}", lib.display());
}

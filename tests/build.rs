//! Builds `libfake_acl.so` (see fake/fake_acl.c) for the loader tests and
//! tells them where it is through `FAKE_ACL_LIB`.

use std::path::PathBuf;

#[path = "../cann-sim/c_library.rs"]
mod c_library;

fn main() {
    println!("cargo:rerun-if-changed=fake/fake_acl.c");
    println!("cargo:rerun-if-changed=../cann-sim/c_library.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let lib = out.join("libfake_acl.so");
    if let Err(e) = c_library::build("fake/fake_acl.c", &lib, 1) {
        panic!("building libfake_acl.so: {e}");
    }
    println!("cargo:rustc-env=FAKE_ACL_LIB={}", lib.display());
}

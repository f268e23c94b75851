//! Where each CANN library is searched for: one [`LibrarySpec`] per library
//! that a -sys crate loads. The -sys crates load through these (`acl_sys::SPEC`
//! is [`ASCENDCL`]); a tool that only wants to know whether, and where, a
//! library would be found can search with them without the bindings
//! ([`LibrarySpec::open`]).

use crate::LibrarySpec;

/// AscendCL, `libascendcl.so` (`cann-acl-sys`).
pub const ASCENDCL: LibrarySpec = LibrarySpec {
    name: "AscendCL",
    soname: "libascendcl.so",
    env_var: "CANN_ACL_LIB",
    root_subdirs: &[
        "lib64",
        "runtime/lib64",
        "aarch64-linux/lib64",
        "x86_64-linux/lib64",
    ],
    fixed_dirs: &[],
};

/// aclnn, `libopapi.so` (`acl_sys::aclnn`).
pub const OPAPI: LibrarySpec = LibrarySpec {
    name: "aclnn",
    soname: "libopapi.so",
    env_var: "CANN_OPAPI_LIB",
    root_subdirs: &["lib64", "aarch64-linux/lib64", "x86_64-linux/lib64"],
    fixed_dirs: &[],
};

/// HCCL, `libhccl.so` (`hccl-sys`).
pub const HCCL: LibrarySpec = LibrarySpec {
    name: "HCCL",
    soname: "libhccl.so",
    env_var: "CANN_HCCL_LIB",
    root_subdirs: &["lib64", "aarch64-linux/lib64", "x86_64-linux/lib64"],
    fixed_dirs: &[],
};

/// The driver directories that may hold `libdcmi.so`, searched after the CANN
/// install roots.
pub const DCMI_DRIVER_DIRS: [&str; 3] = [
    "/usr/local/Ascend/driver/lib64/driver",
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/dcmi",
];

/// DCMI, `libdcmi.so` of the NPU driver (`dcmi-sys`).
pub const DCMI: LibrarySpec = LibrarySpec {
    name: "DCMI",
    soname: "libdcmi.so",
    env_var: "CANN_DCMI_LIB",
    root_subdirs: &["lib64", "driver/lib64"],
    fixed_dirs: &DCMI_DRIVER_DIRS,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_library_has_its_own_variable_and_soname() {
        let all = [ASCENDCL, OPAPI, HCCL, DCMI];
        for (i, a) in all.iter().enumerate() {
            assert!(a.soname.starts_with("lib") && a.soname.ends_with(".so"));
            assert!(a.env_var.starts_with("CANN_") && a.env_var.ends_with("_LIB"));
            for b in &all[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.soname, b.soname);
                assert_ne!(a.env_var, b.env_var);
            }
        }
    }
}

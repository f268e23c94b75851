//! Where each CANN library is searched for: one [`LibrarySpec`] per library
//! that a -sys crate loads. The -sys crates load through these (`acl_sys::SPEC`
//! is [`ASCENDCL`]); a tool that only wants to know whether, and where, a
//! library would be found can search with them without the bindings
//! ([`LibrarySpec::open`]).

use crate::{Companions, Env, LibrarySpec, install_roots};
use std::path::{Path, PathBuf};

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

/// The other files aclnn's functions are looked up in, per symbol: the
/// operator packages of a real install, in the order of torch_npu's
/// op-plugin (`op_plugin/utils/op_api_common.cpp`, `GetOpApiFuncAddr`):
///
/// 1. `libcust_opapi.so` in `<entry>/op_api/lib/` of each entry of
///    `$ASCEND_CUSTOM_OPP_PATH` (`:`-separated), in order;
/// 2. `libcust_opapi.so` in `$ASCEND_OPP_PATH/vendors/<vendor>/op_api/lib/`
///    of each vendor of the `load_priority=` line of
///    `$ASCEND_OPP_PATH/vendors/config.ini` (`,`-separated), in order;
/// 3. every `libopapi_*.so` in `lib64` of the CANN install roots (op-plugin
///    reads `$ASCEND_HOME_PATH/lib64` only; here each root of the loader's
///    order, by file name);
/// 4. `libopapi.so` itself ([`OPAPI`]'s search);
/// 5. `libaclnn_ops_infer.so`, `libaclnn_ops_train.so`, `libaclnn_math.so`,
///    `libaclnn_sparse.so`, `libaclnn_fft.so`, `libaclnn_rand.so`
///    (`GetOpApiFuncAddrFromFeatureLib`), each found as `libopapi.so` is.
///
/// A custom library is skipped, as op-plugin's `checkOwner` does, when root
/// would load a file another user owns, or another user a file that is
/// neither theirs nor root's. `$CANN_OPAPI_LIB`, when set, names the one
/// file instead of all of these.
pub const OPAPI_COMPANIONS: Companions = Companions {
    before: opapi_packages,
    after: &[
        "libaclnn_ops_infer.so",
        "libaclnn_ops_train.so",
        "libaclnn_math.so",
        "libaclnn_sparse.so",
        "libaclnn_fft.so",
        "libaclnn_rand.so",
    ],
};

/// The files of items 1 to 3 of [`OPAPI_COMPANIONS`] that exist, in order.
pub fn opapi_packages(env: &dyn Env) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    };
    const CUSTOM: &str = "op_api/lib/libcust_opapi.so";
    if let Some(paths) = env.var("ASCEND_CUSTOM_OPP_PATH") {
        for entry in paths.to_string_lossy().split(':').filter(|e| !e.is_empty()) {
            let lib = Path::new(entry).join(CUSTOM);
            if owner_allows(&lib) {
                push(lib);
            }
        }
    }
    if let Some(opp) = env.var("ASCEND_OPP_PATH") {
        let vendors = Path::new(&opp).join("vendors");
        for vendor in load_priority(&vendors.join("config.ini")) {
            let lib = vendors.join(vendor).join(CUSTOM);
            if owner_allows(&lib) {
                push(lib);
            }
        }
    }
    for root in install_roots(env) {
        let Ok(dir) = std::fs::read_dir(root.join("lib64")) else {
            continue;
        };
        let mut split: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libopapi_") && n.ends_with(".so"))
            })
            .collect();
        split.sort();
        split.into_iter().for_each(&mut push);
    }
    out
}

/// The vendors of the first `load_priority=` line of a `config.ini`, in
/// order (none when the file or the line is missing).
fn load_priority(config: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(config) else {
        return Vec::new();
    };
    text.lines()
        .find_map(|l| l.strip_prefix("load_priority="))
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// op-plugin's `checkOwner`: root loads only root's custom libraries, and
/// another user only their own or root's.
fn owner_allows(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    let owner = meta.uid();
    if me == 0 {
        owner == 0
    } else {
        owner == me || owner == 0
    }
}

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

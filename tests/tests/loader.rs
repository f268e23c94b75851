//! The run-time loader, end to end: each source of the search order, their
//! precedence, the missing-library message, a missing symbol failing only its
//! own call, and the cann-sim cdylib loaded through `dlopen`.
//!
//! Each scenario runs `loader_probe` in a fresh process with its own
//! environment, since a process loads its library once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const FAKE: &str = env!("FAKE_ACL_LIB");

/// Runs the probe with exactly the loader-relevant variables given.
fn probe(vars: &[(&str, &Path)]) -> HashMap<String, String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loader_probe"));
    for v in [
        "CANN_ACL_LIB",
        "CANN_HCCL_LIB",
        "CANN_DCMI_LIB",
        "ASCEND_HOME_PATH",
        "ASCEND_TOOLKIT_HOME",
        "LD_LIBRARY_PATH",
        "CANN_OPAPI_LIB",
        "ASCEND_CUSTOM_OPP_PATH",
        "ASCEND_OPP_PATH",
    ] {
        cmd.env_remove(v);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the probe runs");
    assert!(
        out.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `libcann_sim.so`, which cargo builds next to this test binary because
/// `cann-sim` is a dev-dependency.
fn sim_cdylib() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    for dir in [
        deps.to_path_buf(),
        deps.parent().expect("profile dir").to_path_buf(),
    ] {
        let p = dir.join("libcann_sim.so");
        if p.is_file() {
            return p;
        }
    }
    panic!("libcann_sim.so not found next to {}", exe.display());
}

/// A fake CANN install root with `lib64/libascendcl.so`, removed when dropped.
fn fake_root(name: &str) -> tempfile::TempDir {
    let root = tempfile::Builder::new()
        .prefix(&format!("cann-loader-test-{name}-"))
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(root.path().join("lib64")).unwrap();
    std::fs::copy(FAKE, root.path().join("lib64/libascendcl.so")).unwrap();
    root
}

#[test]
fn missing_library_lists_every_path_and_the_variable_to_set() {
    let out = probe(&[]);
    let err = &out["acl.error"];
    assert!(
        err.starts_with("AscendCL library not found. Set CANN_ACL_LIB"),
        "{err}"
    );
    assert!(
        err.contains("/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so"),
        "{err}"
    );
    assert!(err.contains("libascendcl.so (system loader)"), "{err}");
    assert!(out["aclrtGetDeviceCount"].starts_with("error AscendCL library not found"));
    assert!(out["hccl.error"].contains("CANN_HCCL_LIB"));
    assert!(out["dcmi.error"].contains("CANN_DCMI_LIB"));
    assert!(out["dcmi.error"].contains("/usr/local/Ascend/driver/lib64/driver/libdcmi.so"));
}

#[test]
fn env_var_names_the_library_file() {
    let out = probe(&[("CANN_ACL_LIB", Path::new(FAKE))]);
    assert_eq!(out["acl.source"], format!("{FAKE} (from $CANN_ACL_LIB)"));
    assert_eq!(out["aclrtGetVersion"], "rc=0 1.2.3");
}

#[test]
fn missing_symbol_fails_only_that_call_and_names_symbol_and_version() {
    let out = probe(&[("CANN_ACL_LIB", Path::new(FAKE))]);
    assert_eq!(out["aclrtGetVersion"], "rc=0 1.2.3");
    assert_eq!(
        out["aclrtGetDeviceCount"],
        format!(
            "error aclrtGetDeviceCount is not available: the loaded AscendCL ({FAKE} (from $CANN_ACL_LIB), \
             version ACL 1.2.3) does not export it; a newer CANN release may be needed"
        )
    );
}

#[test]
fn a_function_exported_with_an_older_signature_is_left_out_and_named() {
    let out = probe(&[("CANN_ACL_LIB", Path::new(FAKE))]);
    let got = &out["aclrtUnuseStreamResInCurrentThread"];
    assert!(
        got.starts_with(
            "error aclrtUnuseStreamResInCurrentThread needs ACL ≥ 1.15 (CANN 8.5.0) (its \
             signature changed there; the loaded library declares it differently, so it is not \
             called); the loaded AscendCL is ACL 1.2.3"
        ),
        "{got}"
    );
}

#[test]
fn env_var_naming_a_missing_file_is_an_error_not_a_fallback() {
    let tmp = fake_root("bad-env");
    let root = tmp.path();
    let out = probe(&[
        ("CANN_ACL_LIB", Path::new("/nonexistent/libascendcl.so")),
        ("ASCEND_HOME_PATH", root),
    ]);
    let err = &out["acl.error"];
    assert!(
        err.contains("/nonexistent/libascendcl.so (from $CANN_ACL_LIB)"),
        "{err}"
    );
    assert!(!err.contains(&root.display().to_string()), "{err}");
}

#[test]
fn env_var_takes_precedence_over_install_directories() {
    let root = fake_root("env-first");
    let sim = sim_cdylib();
    let out = probe(&[("CANN_ACL_LIB", &sim), ("ASCEND_HOME_PATH", root.path())]);
    assert_eq!(
        out["acl.source"],
        format!("{} (from $CANN_ACL_LIB)", sim.display())
    );
}

#[test]
fn ascend_home_path_is_searched_before_toolkit_home() {
    let (home, toolkit) = (fake_root("home"), fake_root("toolkit"));
    let (first, second) = (home.path(), toolkit.path());
    let out = probe(&[("ASCEND_HOME_PATH", first), ("ASCEND_TOOLKIT_HOME", second)]);
    assert_eq!(
        out["acl.source"],
        first.join("lib64/libascendcl.so").display().to_string()
    );
    let out = probe(&[("ASCEND_TOOLKIT_HOME", second)]);
    assert_eq!(
        out["acl.source"],
        second.join("lib64/libascendcl.so").display().to_string()
    );
}

#[test]
fn soname_through_the_system_loader_comes_last() {
    let root = fake_root("soname");
    let out = probe(&[("LD_LIBRARY_PATH", &root.path().join("lib64"))]);
    assert_eq!(out["acl.source"], "libascendcl.so (via the system loader)");
    assert_eq!(out["aclrtGetVersion"], "rc=0 1.2.3");
}

#[test]
fn sim_cdylib_loads_through_dlopen_for_all_three_libraries() {
    let sim = sim_cdylib();
    let out = probe(&[
        ("CANN_ACL_LIB", &sim),
        ("CANN_HCCL_LIB", &sim),
        ("CANN_DCMI_LIB", &sim),
    ]);
    assert_eq!(
        out["acl.source"],
        format!("{} (from $CANN_ACL_LIB)", sim.display())
    );
    assert_eq!(out["aclrtGetVersion"], "rc=0 1.17.0");
    assert_eq!(out["aclrtGetDeviceCount"], "rc=0 n=8");
    assert_eq!(
        out["hccl.source"],
        format!("{} (from $CANN_HCCL_LIB)", sim.display())
    );
    assert_eq!(
        out["dcmi.source"],
        format!("{} (from $CANN_DCMI_LIB)", sim.display())
    );
}

/// Regression (issue 15): a FIFO given as the library path hung the loader
/// forever (the dynamic loader opens what it is given). It is refused at
/// once, naming the path and what it is.
#[test]
fn a_fifo_as_the_library_path_is_refused_without_blocking() {
    let dir = tempfile::Builder::new()
        .prefix("cann-loader-fifo-")
        .tempdir()
        .unwrap();
    let fifo = dir.path().join("libascendcl.so");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let started = std::time::Instant::now();
    let out = probe(&[("CANN_ACL_LIB", &fifo), ("CANN_DCMI_LIB", &fifo)]);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    for key in ["acl.error", "dcmi.error"] {
        let err = &out[key];
        assert!(err.contains(&fifo.display().to_string()), "{err}");
        assert!(
            err.contains("not a regular file (a FIFO, socket or device)"),
            "{err}"
        );
    }
}

/// Regression (issue 15): a library that is not DCMI at all (here an
/// AscendCL stand-in) was reported as "a newer CANN release may be needed"
/// at its first call. It is refused when loaded: it exports none of the
/// library's functions.
#[test]
fn a_library_exporting_none_of_the_functions_is_refused_as_the_wrong_library() {
    let out = probe(&[("CANN_DCMI_LIB", Path::new(FAKE))]);
    let err = &out["dcmi.error"];
    assert!(err.contains(FAKE), "{err}");
    assert!(
        err.contains("opened, but it exports none of the DCMI functions: it is not DCMI"),
        "{err}"
    );
    assert!(!err.contains("newer CANN release"), "{err}");
}

/// Builds `dir/file` with `cc`: an operator package whose
/// `aclnn<Op>GetWorkspaceSize` for each op sets the workspace size to `n`.
fn fake_operator_package(dir: &Path, file: &str, n: u64, ops: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join(format!("{file}.c"));
    let body: String = ops
        .iter()
        .map(|op| {
            format!(
                "int aclnn{op}GetWorkspaceSize(const void *x, void *out, \
                 unsigned long long *size, void **executor) {{ *size = {n}; return 0; }}\n"
            )
        })
        .collect();
    std::fs::write(&src, body).unwrap();
    let lib = dir.join(file);
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {}", src.display());
    lib
}

#[test]
fn aclnn_operators_are_looked_up_per_symbol_across_the_operator_packages() {
    let tmp = tempfile::tempdir().unwrap();
    let custom = tmp.path().join("custom");
    let cust = fake_operator_package(&custom.join("op_api/lib"), "libcust_opapi.so", 1, &["Abs"]);
    let home = tmp.path().join("home");
    let opapi = fake_operator_package(&home.join("lib64"), "libopapi.so", 4, &["Abs", "Neg"]);
    let out = probe(&[
        ("ASCEND_CUSTOM_OPP_PATH", &custom),
        ("ASCEND_HOME_PATH", &home),
    ]);
    assert_eq!(
        out["aclnn.source"],
        format!(
            "2 files, searched per symbol in order: {}; {}",
            cust.display(),
            opapi.display()
        )
    );
    assert_eq!(
        out["aclnnAbsGetWorkspaceSize"], "rc=0 size=1",
        "the custom package's"
    );
    assert_eq!(
        out["aclnnNegGetWorkspaceSize"], "rc=0 size=4",
        "libopapi.so's"
    );
    // $CANN_OPAPI_LIB names the one file: the custom package is not searched.
    let out = probe(&[
        ("CANN_OPAPI_LIB", &opapi),
        ("ASCEND_CUSTOM_OPP_PATH", &custom),
    ]);
    assert_eq!(
        out["aclnn.source"],
        format!("{} (from $CANN_OPAPI_LIB)", opapi.display())
    );
    assert_eq!(out["aclnnAbsGetWorkspaceSize"], "rc=0 size=4");
}

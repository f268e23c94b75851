//! `CANN_BACKEND` as `cann_sim::install()` reads it: `real` loads the
//! installed CANN (or fails, listing what it tried) and never installs the
//! simulator; an unknown value is an error; `sim_only!` skips only on a real
//! backend. Each case runs in a child process (the backend is chosen once
//! per process, from its environment).

use std::process::Command;

/// Runs the test `name` of this binary in a child with `env` and returns
/// whether it passed, and its output.
fn child(name: &str, env: &[(&str, &str)]) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--include-ignored"])
        .env_remove("CANN_BACKEND")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
#[ignore = "run by the tests below in a child process"]
fn child_install_without_cann() {
    let err = cann_sim::install().unwrap_err().to_string();
    assert!(err.contains("AscendCL library not found"), "{err}");
    assert!(err.contains("/nonexistent/libascendcl.so"), "{err}");
    // Nothing was installed: the -sys crate still has no library.
    assert!(acl_sys::library().is_err());
}

#[test]
fn real_backend_without_cann_is_an_error_naming_what_was_tried() {
    let (ok, out) = child(
        "child_install_without_cann",
        &[
            ("CANN_BACKEND", "real"),
            ("CANN_ACL_LIB", "/nonexistent/libascendcl.so"),
        ],
    );
    assert!(ok, "{out}");
}

#[test]
#[ignore = "run by the tests below in a child process"]
fn child_install_with_unknown_backend() {
    let err = cann_sim::install().unwrap_err().to_string();
    assert!(err.contains("CANN_BACKEND=npu"), "{err}");
    assert!(err.contains("`sim`") && err.contains("`real`"), "{err}");
}

#[test]
fn an_unknown_backend_is_an_error_naming_the_choices() {
    let (ok, out) = child(
        "child_install_with_unknown_backend",
        &[("CANN_BACKEND", "npu")],
    );
    assert!(ok, "{out}");
}

#[test]
#[ignore = "run by the tests below in a child process"]
fn child_sim_only() {
    cann_sim::sim_only!("proves the macro");
    panic!("reached the simulator-only part");
}

#[test]
fn sim_only_skips_on_a_real_backend_with_its_reason_and_runs_on_the_simulator() {
    let dir = tempfile::Builder::new()
        .prefix("cann-backend-test-")
        .tempdir()
        .unwrap();
    let skips = dir.path().join("skips.txt");
    let (ok, out) = child(
        "child_sim_only",
        &[
            ("CANN_BACKEND", "real"),
            ("CANN_REAL_SKIPS", skips.to_str().unwrap()),
        ],
    );
    let recorded = std::fs::read_to_string(&skips).unwrap_or_default();
    let (ok_sim, out_sim) = child("child_sim_only", &[("CANN_BACKEND", "sim")]);
    assert!(ok, "{out}");
    assert!(
        out.contains("skipped on a real NPU: backend::child_sim_only: proves the macro"),
        "{out}"
    );
    assert_eq!(recorded, "backend\tchild_sim_only\tproves the macro\n");
    assert!(!ok_sim, "on the simulator the test body runs: {out_sim}");
    assert!(
        out_sim.contains("reached the simulator-only part"),
        "{out_sim}"
    );
}

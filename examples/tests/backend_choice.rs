//! How the examples choose their backend when `CANN_BACKEND` is unset: a
//! CANN install the user named that fails to load is reported with its
//! path, never silently replaced by the simulator.

use std::process::Command;

fn quickstart() -> Command {
    // target/<profile>/deps/<this test> → target/<profile>/examples/quickstart
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let mut cmd = Command::new(dir.join("examples").join("quickstart"));
    for var in [
        "CANN_BACKEND",
        "CANN_ACL_LIB",
        "ASCEND_HOME_PATH",
        "ASCEND_TOOLKIT_HOME",
        "CANN_HCCL_LIB",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Quickstart with `var=value`, which must refuse to run (exit status 1):
/// its output.
fn refused_with(var: &str, value: &str) -> String {
    let out = quickstart().env(var, value).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("round trip"), "ran anyway: {text}");
    text
}

#[test]
fn a_named_library_that_does_not_load_is_reported_not_replaced_by_the_simulator() {
    let text = refused_with("CANN_ACL_LIB", "/nonexistent/libascendcl.so");
    assert!(
        text.contains("CANN_ACL_LIB is set, but no AscendCL library could be loaded"),
        "{text}"
    );
    assert!(text.contains("/nonexistent/libascendcl.so"), "{text}");
}

/// Issue 23: a set but broken `CANN_HCCL_LIB` was silently replaced by
/// the simulator (as `CANN_ACL_LIB` is not).
#[test]
fn a_named_hccl_library_is_not_replaced_by_the_simulator() {
    cann_sim::sim_only!(
        "with CANN installed AscendCL is found, and CANN_HCCL_LIB fails at HCCL's first use instead"
    );
    let text = refused_with("CANN_HCCL_LIB", "/nonexistent/libhccl.so");
    assert!(
        text.contains(
            "error: CANN_HCCL_LIB=\"/nonexistent/libhccl.so\" is set, but no AscendCL library was found to go with it"
        ),
        "{text}"
    );
}

#[test]
fn without_any_install_named_the_simulator_is_used_and_said() {
    cann_sim::sim_only!("on a machine with CANN installed the examples find and use it");
    let out = quickstart().output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("No CANN install found"), "{text}");
    assert!(text.contains("backend:      cann-sim"), "{text}");
}

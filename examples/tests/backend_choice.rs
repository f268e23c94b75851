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
    ] {
        cmd.env_remove(var);
    }
    cmd
}

#[test]
fn a_named_library_that_does_not_load_is_reported_not_replaced_by_the_simulator() {
    let out = quickstart()
        .env("CANN_ACL_LIB", "/nonexistent/libascendcl.so")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("CANN_ACL_LIB is set, but no AscendCL library could be loaded"),
        "{text}"
    );
    assert!(text.contains("/nonexistent/libascendcl.so"), "{text}");
    assert!(!text.contains("round trip"), "ran anyway: {text}");
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

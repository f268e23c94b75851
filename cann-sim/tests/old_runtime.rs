//! `CANN_SIM_ACL_VERSION` at the raw layer: the tables cann-sim installs
//! present an older runtime (HCCL functions included), and a value that is
//! not a version is reported and ignored. Each case runs in a child process
//! (the variable is read once, when the tables are built). The safe-crate
//! side is `acl/tests/old_runtime.rs`.

use std::process::Command;

fn run_child(name: &str, value: &str) -> String {
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(cann_sim::ACL_VERSION_VAR, value)
        .output()
        .expect("run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child {name} failed:\n{text}");
    assert!(
        text.contains("1 passed"),
        "child {name} did not run:\n{text}"
    );
    text
}

fn presented(value: &str) -> bool {
    std::env::var(cann_sim::ACL_VERSION_VAR).is_ok_and(|v| v == value)
}

#[test]
fn hccl_functions_added_later_are_absent_from_an_acl_1_12_runtime() {
    run_child("child_hccl_1_12", "1.12");
}

#[test]
fn a_value_that_is_not_a_version_is_reported_and_the_newest_runtime_presented() {
    let text = run_child("child_not_a_version", "eight");
    assert!(
        text.contains("CANN_SIM_ACL_VERSION=\"eight\" is not an ACL version"),
        "{text}"
    );
}

#[test]
#[ignore = "run in a child by hccl_functions_added_later_are_absent_from_an_acl_1_12_runtime"]
fn child_hccl_1_12() {
    if !presented("1.12") {
        return;
    }
    cann_sim::install().expect("install");
    assert_eq!(cann_sim::presented_acl_version(), Some((1, 12, 0)));
    let hccl = hccl_sys::library().expect("installed");
    // In the first wheel with HCCL headers (CANN 8.1.RC1): present.
    assert!(hccl.api.HcclAllReduce.is_some());
    assert!(hccl.api.HcclCommInitRootInfo.is_some());
    // First declared by CANN 8.5.0's headers (ACL 1.15): absent.
    assert!(hccl.api.HcclGetCommConfig.is_none());
    // SAFETY: the table has no entry for it; nothing is called.
    let err = unsafe { hccl_sys::HcclGetCommConfig(std::ptr::null_mut(), 0, std::ptr::null_mut()) }
        .expect_err("absent");
    assert!(
        err.to_string()
            .starts_with("HcclGetCommConfig needs CANN ≥ 8.5.0 (ACL 1.15); the loaded HCCL is"),
        "{err}"
    );
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { acl_sys::aclrtGetVersion(&mut a, &mut b, &mut c) }.expect("present");
    assert_eq!((rc, a, b, c), (0, 1, 12, 0));
    // A null pointer is still refused by the simulator's own checks.
    // SAFETY: the export checks its pointers before writing.
    let rc =
        unsafe { acl_sys::aclrtGetVersion(std::ptr::null_mut(), &mut b, &mut c) }.expect("present");
    assert_ne!(rc, 0);
}

#[test]
#[ignore = "run in a child by a_value_that_is_not_a_version_is_reported_and_the_newest_runtime_presented"]
fn child_not_a_version() {
    if !presented("eight") {
        return;
    }
    cann_sim::install().expect("install");
    assert_eq!(cann_sim::presented_acl_version(), None);
    let acl = acl_sys::library().expect("installed");
    assert!(acl.api.aclrtGetDeviceInfo.is_some());
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { acl_sys::aclrtGetVersion(&mut a, &mut b, &mut c) }.expect("present");
    assert_eq!((rc, a, b), (0, 1, 17));
}

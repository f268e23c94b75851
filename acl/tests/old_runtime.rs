//! The safe crate on an older runtime: cann-sim presents ACL 1.2 (CANN 8.0)
//! with `CANN_SIM_ACL_VERSION=1.2`, so every function `acl_sys::since` dates
//! after it is absent. A call to one of them must fail with the loader's
//! "needs ACL ≥" error (never a panic, never a call with a wrong
//! signature), and what ACL 1.2 has must keep working.
//!
//! The variable is read once, when cann-sim builds its tables, so each case
//! runs in a child process (this test binary, re-run on one ignored test with
//! the variable set).

use acl::{Device, Error, Runtime};
use acl_sys::LoadError;
use std::process::Command;

/// Runs the ignored test `name` of this binary in a child with
/// `CANN_SIM_ACL_VERSION=version`; returns its output.
fn run_child(name: &str, version: &str) -> String {
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(cann_sim::ACL_VERSION_VAR, version)
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

#[test]
fn acl_1_2_runtime_refuses_newer_functions_and_runs_older_ones() {
    cann_sim::sim_only!("presents an older runtime through the simulator (CANN_SIM_ACL_VERSION)");
    run_child("child_acl_1_2", "1.2");
}

#[test]
fn acl_1_15_runtime_has_what_1_15_added() {
    cann_sim::sim_only!("presents an older runtime through the simulator (CANN_SIM_ACL_VERSION)");
    run_child("child_acl_1_15", "1.15");
}

/// In a child with `CANN_SIM_ACL_VERSION` set; skipped otherwise.
fn presented(version: &str) -> bool {
    std::env::var(cann_sim::ACL_VERSION_VAR).is_ok_and(|v| v == version)
}

#[test]
#[ignore = "run by acl_1_2_runtime_refuses_newer_functions_and_runs_older_ones in a child"]
fn child_acl_1_2() {
    if !presented("1.2") {
        return;
    }
    cann_sim::install().expect("cann-sim installs");
    let rt = Runtime::init().expect("aclInit is in ACL 1.2");
    let v = rt.version().expect("aclrtGetVersion is in ACL 1.2");
    assert_eq!((v.major, v.minor, v.patch), (1, 2, 0));

    // Older functions work: a device, a stream, memory, a copy.
    let dev = Device::new(&rt, 0).expect("aclrtSetDevice is in ACL 1.2");
    let stream = dev.new_stream().expect("aclrtCreateStream is in ACL 1.2");
    stream
        .synchronize()
        .expect("aclrtSynchronizeStream is in ACL 1.2");
    dev.memory_info().expect("aclrtGetMemInfo is in ACL 1.2");

    // aclrtDeviceGetUuid is first declared by the CANN 8.5.0 headers (ACL 1.15).
    match dev.uuid() {
        Err(Error::Load(LoadError::NeedsNewer {
            symbol,
            needs,
            version,
            ..
        })) => {
            assert_eq!(symbol, "aclrtDeviceGetUuid");
            assert_eq!(needs, "ACL ≥ 1.15 (CANN 8.5.0)");
            assert_eq!(version, "ACL 1.2.0");
        }
        other => panic!("expected NeedsNewer for aclrtDeviceGetUuid, got {other:?}"),
    }
    let msg = dev.uuid().expect_err("still refused").to_string();
    assert!(
        msg.starts_with(
            "aclrtDeviceGetUuid needs ACL ≥ 1.15 (CANN 8.5.0); the loaded AscendCL is ACL 1.2.0"
        ),
        "{msg}"
    );

    // The raw layer says the same, and the table is really empty there.
    let lib = acl_sys::library().expect("installed");
    assert!(lib.api.aclrtDeviceGetUuid.is_none());
    assert!(lib.api.aclrtSetDevice.is_some());
    // A function whose signature changed in 8.5.0 is refused too.
    assert!(lib.api.aclrtUnuseStreamResInCurrentThread.is_none());
    // SAFETY: the table has no entry for it; nothing is called.
    let err = unsafe { acl_sys::aclrtUnuseStreamResInCurrentThread(std::ptr::null_mut()) }
        .expect_err("absent in ACL 1.2");
    assert!(
        err.to_string()
            .starts_with("aclrtUnuseStreamResInCurrentThread needs ACL ≥ 1.15 (CANN 8.5.0)"),
        "{err}"
    );
}

#[test]
#[ignore = "run by acl_1_15_runtime_has_what_1_15_added in a child"]
fn child_acl_1_15() {
    if !presented("1.15") {
        return;
    }
    cann_sim::install().expect("cann-sim installs");
    let rt = Runtime::init().expect("aclInit");
    let v = rt.version().expect("aclrtGetVersion");
    assert_eq!((v.major, v.minor), (1, 15));
    let lib = acl_sys::library().expect("installed");
    // Added in 8.5.0 (ACL 1.15): present.
    assert!(lib.api.aclrtDeviceGetUuid.is_some());
    // First declared by the 9.1.0 headers (ACL 1.17): absent, with the
    // release in the error.
    assert!(lib.api.aclrtGetDeviceInfo.is_none());
    // SAFETY: the table has no entry for it; nothing is called.
    let err = unsafe { acl_sys::aclrtGetDeviceInfo(0, 0, std::ptr::null_mut()) }
        .expect_err("absent in ACL 1.15");
    assert!(
        err.to_string().starts_with(
            "aclrtGetDeviceInfo needs ACL ≥ 1.17 (CANN 9.1.0); the loaded AscendCL is ACL 1.15.0"
        ),
        "{err}"
    );
    let dev = Device::new(&rt, 0).expect("device");
    dev.uuid().expect("aclrtDeviceGetUuid is in ACL 1.15");
}

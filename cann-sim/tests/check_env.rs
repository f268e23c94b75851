//! `CANN_SIM_CHECK` read from the environment. The mode is fixed once per
//! process, so each test runs its body in a child process (this test binary
//! again, filtered to the one test, with the variable set) and checks how the
//! child ended.

mod common;

use acl_sys::{ACL_ERROR_INVALID_PARAM, ACL_SUCCESS};
use cann_sim::acl::*;
use cann_sim::check::{self, Mode};
use common::*;
use std::process::{Command, Output};

/// Set in the child processes.
const CHILD: &str = "CANN_SIM_CHECK_TEST_CHILD";

/// Whether this process is the child running `test`'s body.
fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Runs `test` of this binary in a child process with `CANN_SIM_CHECK=value`.
fn run_child(test: &str, value: &str) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(CHILD, "1")
        .env(check::ENV, value)
        .output()
        .expect("the test binary runs again")
}

#[test]
fn an_invalid_value_makes_acl_init_fail_naming_the_variable_and_the_check_is_off() {
    if !in_child() {
        let out = run_child(
            "an_invalid_value_makes_acl_init_fail_naming_the_variable_and_the_check_is_off",
            "sometimes",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        // Said once on stderr too.
        assert_eq!(
            stderr.matches("CANN_SIM_CHECK=\"sometimes\"").count(),
            1,
            "{stderr}"
        );
        return;
    }
    // SAFETY: a null config path is allowed.
    let rc = unsafe { aclInit(std::ptr::null()) };
    let msg = assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclInit");
    assert_contains(&msg, "CANN_SIM_CHECK=\"sometimes\"");
    assert_contains(&msg, "off, report or abort");
    assert_eq!(check::mode(), Mode::Off);
    // Off: a double free is the runtime's plain error, not a report.
    use_device(0);
    let d = malloc(64);
    free(d);
    // SAFETY: freed memory is looked up, not touched.
    let msg = assert_fails(
        unsafe { aclrtFree(d.cast()) },
        rc_param_invalid(),
        "aclrtFree",
    );
    assert!(!msg.contains("CANN_SIM_CHECK"), "{msg}");
    assert_eq!(check::reports().count, 0);
}

fn rc_param_invalid() -> i32 {
    rc(acl_sys::ACL_ERROR_RT_PARAM_INVALID)
}

#[test]
fn report_from_the_environment_is_fixed_for_the_process() {
    if !in_child() {
        let out = run_child(
            "report_from_the_environment_is_fixed_for_the_process",
            " Report ",
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    assert_eq!(check::mode(), Mode::Report);
    assert_eq!(check::set_mode(Mode::Off), Err(Mode::Report));
    assert_eq!(check::set_mode(Mode::Report), Ok(()));
    // SAFETY: a null config path is allowed.
    assert_eq!(unsafe { aclInit(std::ptr::null()) }, ACL_SUCCESS);
    use_device(0);
    let d = malloc(64);
    free(d);
    // SAFETY: freed memory is looked up, not touched.
    let msg = assert_fails(
        unsafe { aclrtFree(d.cast()) },
        rc_param_invalid(),
        "aclrtFree",
    );
    assert_contains(&msg, "CANN_SIM_CHECK use-after-free");
    assert_eq!(check::reports().count, 1);
}

#[test]
fn abort_prints_the_report_on_stderr_past_the_test_harness_and_aborts() {
    if !in_child() {
        let out = run_child(
            "abort_prints_the_report_on_stderr_past_the_test_harness_and_aborts",
            "abort",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{stderr}");
        assert!(
            stderr.contains("cann-sim: aclrtFree: CANN_SIM_CHECK use-after-free: aclrtFree("),
            "{stderr}"
        );
        assert!(
            stderr.contains("aborting (CANN_SIM_CHECK=abort)"),
            "{stderr}"
        );
        assert!(!stderr.contains("not reached"), "{stderr}");
        return;
    }
    assert_eq!(check::mode(), Mode::Abort);
    use_device(0);
    let d = malloc(64);
    free(d);
    // SAFETY: freed memory is looked up, not touched; the check aborts.
    let _ = unsafe { aclrtFree(d.cast()) };
    eprintln!("not reached");
}

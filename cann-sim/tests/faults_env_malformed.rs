//! A malformed `CANN_SIM_FAULTS` makes `aclInit` fail and injects nothing.
//! The variable is read once per process: one test in this binary.

mod common;

use acl_sys::{ACL_ERROR_INVALID_PARAM, ACL_SUCCESS};
use cann_sim::acl::*;
use common::*;

#[test]
fn malformed_cann_sim_faults_makes_acl_init_fail_naming_the_variable() {
    // SAFETY: the only test of this binary, before any other thread reads
    // the environment.
    unsafe { std::env::set_var("CANN_SIM_FAULTS", "aclrtMalloc:third:207001") };
    // SAFETY: null config is allowed.
    let r = unsafe { aclInit(std::ptr::null()) };
    let msg = assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclInit");
    assert_contains(&msg, "CANN_SIM_FAULTS=");
    assert_contains(&msg, "aclrtMalloc:third:207001");
    // Nothing is injected.
    let mut n = 0u32;
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut n) }, ACL_SUCCESS);
}

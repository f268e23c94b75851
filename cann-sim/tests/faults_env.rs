//! `CANN_SIM_FAULTS` read from the environment. The variable is read once per
//! process, so this binary has a single test that sets it first.

mod common;

use acl_sys::ACL_SUCCESS;
use cann_sim::acl::*;
use common::*;

#[test]
fn cann_sim_faults_fails_the_listed_calls() {
    // SAFETY: the only test of this binary, before any other thread reads
    // the environment.
    unsafe {
        std::env::set_var(
            "CANN_SIM_FAULTS",
            "aclrtGetDeviceCount:2:507899, aclrtSetDevice:2+:107001",
        );
    }
    let mut n = 0u32;
    // SAFETY: valid out-pointer.
    unsafe {
        assert_eq!(aclrtGetDeviceCount(&mut n), ACL_SUCCESS);
        let msg = assert_fails(aclrtGetDeviceCount(&mut n), 507899, "aclrtGetDeviceCount");
        assert_contains(&msg, "CANN_SIM_FAULTS");
        assert_eq!(aclrtGetDeviceCount(&mut n), ACL_SUCCESS);
    }
    // SAFETY: null config is allowed.
    assert_eq!(unsafe { aclInit(std::ptr::null()) }, ACL_SUCCESS);
    ok(aclrtSetDevice(0));
    for _ in 0..3 {
        assert_fails(aclrtSetDevice(0), 107001, "aclrtSetDevice");
    }
    cann_sim::faults::clear();
    ok(aclrtSetDevice(0));
}

//! Fault injection from Rust (`cann_sim::faults`): the Nth call of a named
//! API fails with the chosen code, does nothing, and says so.
//!
//! Injected rules are process-wide, so the tests of this binary run one at a
//! time (behind `SERIAL`) and clear the rules when done.

mod common;

use acl_sys::{
    ACL_ERROR_RT_DRV_INTERNAL_ERROR, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_MEM_MALLOC_HUGE_FIRST,
};
use cann_sim::acl::*;
use cann_sim::faults;
use common::*;
use parking_lot::Mutex;
use std::ptr::null_mut;

static SERIAL: Mutex<()> = Mutex::new(());

fn try_malloc() -> Result<*mut u8, i32> {
    let mut p = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtMalloc(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST) } {
        0 => Ok(p.cast()),
        r => Err(r),
    }
}

#[test]
fn the_nth_call_fails_once_with_the_injected_code_and_does_nothing() {
    let _serial = SERIAL.lock();
    use_device(0);
    let before = cann_sim::stats().device(0).allocations;
    faults::inject("aclrtMalloc", 3, rc(ACL_ERROR_RT_MEMORY_ALLOCATION));
    let a = try_malloc().unwrap();
    let b = try_malloc().unwrap();
    let mut p = 0x1234usize as *mut std::ffi::c_void;
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtMalloc(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST) };
    let msg = assert_fails(r, rc(ACL_ERROR_RT_MEMORY_ALLOCATION), "aclrtMalloc");
    assert_contains(&msg, "injected fault");
    assert_contains(&msg, "call #3");
    assert_eq!(p as usize, 0x1234, "the out-pointer is untouched");
    assert_eq!(cann_sim::stats().device(0).allocations, before + 2);
    let c = try_malloc().unwrap();
    faults::clear();
    for x in [a, b, c] {
        free(x);
    }
}

#[test]
fn an_open_range_fails_every_call_from_the_nth_until_cleared() {
    let _serial = SERIAL.lock();
    use_device(0);
    faults::inject_from("aclrtCreateStream", 2, 207008);
    let s = create_stream();
    for _ in 0..3 {
        let mut t = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCreateStream(&mut t) };
        assert_fails(r, 207008, "aclrtCreateStream");
        assert!(t.is_null());
    }
    faults::clear();
    destroy_stream(create_stream());
    destroy_stream(s);
}

#[test]
fn zero_means_every_call_and_counts_start_at_injection() {
    let _serial = SERIAL.lock();
    use_device(0);
    let s = create_stream();
    ok(sync(s));
    ok(sync(s));
    faults::inject(
        "aclrtSynchronizeStream",
        0,
        rc(ACL_ERROR_RT_DRV_INTERNAL_ERROR),
    );
    assert_fails(
        sync(s),
        rc(ACL_ERROR_RT_DRV_INTERNAL_ERROR),
        "aclrtSynchronizeStream",
    );
    assert_fails(
        sync(s),
        rc(ACL_ERROR_RT_DRV_INTERNAL_ERROR),
        "aclrtSynchronizeStream",
    );
    faults::clear();
    faults::inject("aclrtSynchronizeStream", 1, 1);
    assert_fails(sync(s), 1, "aclrtSynchronizeStream");
    ok(sync(s));
    faults::clear();
    destroy_stream(s);
}

#[test]
fn faults_reach_every_kind_of_implemented_function() {
    let _serial = SERIAL.lock();
    faults::inject("aclrtSetDevice", 1, 507033);
    assert_fails(aclrtSetDevice(0), 507033, "aclrtSetDevice");
    faults::inject("aclrtGetSocName", 1, 1);
    assert!(aclrtGetSocName().is_null());
    assert_contains(&recent_error(), "aclrtGetSocName: injected fault");
    assert!(!aclrtGetSocName().is_null());
    faults::inject("aclInit", 1, 100003);
    // SAFETY: null config is allowed.
    assert_fails(unsafe { aclInit(std::ptr::null()) }, 100003, "aclInit");
    faults::inject("aclrtLaunchHostFunc", 1, 507899);
    use_device(0);
    assert_fails(host_fn(null_mut(), || {}), 507899, "aclrtLaunchHostFunc");
    faults::clear();
}

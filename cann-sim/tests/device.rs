//! Device management on the simulator: ids, per-thread current device and
//! the process-wide reference count behind `aclrtSetDevice`/`aclrtResetDevice`.
//!
//! Tests run in parallel in one process, and device references are
//! process-wide, so every test that resets a device owns that device: 0 is
//! only ever set, 4, 5, 6 and 7 each belong to one test. They assume the
//! default configuration (8 devices).

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID, ACL_SUCCESS, aclError,
};
use cann_sim::acl::*;
use common::{assert_fails, current_device, on_new_thread};

const INVALID_DEVICEID: aclError = ACL_ERROR_RT_INVALID_DEVICEID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;
const CONTEXT_RELEASE_ERROR: aclError = ACL_ERROR_RT_CONTEXT_RELEASE_ERROR as aclError;

fn count() -> u32 {
    cann_sim::config::get().unwrap().device_count()
}

#[test]
fn get_device_count_reports_the_visible_devices() {
    let mut n = 0u32;
    // SAFETY: `n` is a valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut n) }, ACL_SUCCESS);
    assert_eq!(n, count());
    assert_eq!(n, 8, "the tests assume the default configuration");
}

#[test]
fn get_device_count_with_null_is_invalid_param() {
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtGetDeviceCount(std::ptr::null_mut()) };
    assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount");
}

#[test]
fn set_device_out_of_range_is_invalid_device_id() {
    for id in [-1, count() as i32, i32::MAX, i32::MIN] {
        let msg = assert_fails(aclrtSetDevice(id), INVALID_DEVICEID, "aclrtSetDevice");
        assert!(msg.contains(&id.to_string()), "{msg}");
    }
}

#[test]
fn set_device_makes_it_current_on_this_thread_only() {
    on_new_thread(|| {
        assert_eq!(aclrtSetDevice(0), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(0));
        let other = on_new_thread(current_device);
        assert_eq!(other, Err(CONTEXT_NULL));
        // Setting another device switches this thread to it.
        assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(1));
    });
}

#[test]
fn get_device_with_null_is_invalid_param() {
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtGetDevice(std::ptr::null_mut()) };
    assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetDevice");
}

#[test]
fn get_device_without_set_device_is_context_null() {
    on_new_thread(|| {
        let mut id = 42;
        // SAFETY: `id` is a valid out-pointer.
        let rc = unsafe { aclrtGetDevice(&mut id) };
        assert_fails(rc, CONTEXT_NULL, "aclrtGetDevice");
        assert_eq!(id, 42, "the out-value is untouched on failure");
    });
}

#[test]
fn reset_device_out_of_range_is_invalid_device_id() {
    assert_fails(aclrtResetDevice(-1), INVALID_DEVICEID, "aclrtResetDevice");
    assert_fails(
        aclrtResetDevice(count() as i32),
        INVALID_DEVICEID,
        "aclrtResetDevice",
    );
    assert_fails(
        aclrtResetDeviceForce(-1),
        INVALID_DEVICEID,
        "aclrtResetDeviceForce",
    );
    assert_fails(
        aclrtResetDeviceForce(count() as i32),
        INVALID_DEVICEID,
        "aclrtResetDeviceForce",
    );
}

#[test]
fn reset_device_never_set_is_context_release_error() {
    // Device 7 belongs to this test: nobody sets it.
    let msg = assert_fails(
        aclrtResetDevice(7),
        CONTEXT_RELEASE_ERROR,
        "aclrtResetDevice",
    );
    assert!(msg.contains("has not been set"), "{msg}");
    assert_fails(
        aclrtResetDeviceForce(7),
        CONTEXT_RELEASE_ERROR,
        "aclrtResetDeviceForce",
    );
}

#[test]
fn reset_device_releases_one_reference_and_clears_current_at_zero() {
    // Device 5 belongs to this test.
    on_new_thread(|| {
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(5), "one reference is left");
        assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
        assert_eq!(current_device(), Err(CONTEXT_NULL));
        assert_fails(
            aclrtResetDevice(5),
            CONTEXT_RELEASE_ERROR,
            "aclrtResetDevice",
        );
        // Setting it again gives the thread a device again.
        assert_eq!(aclrtSetDevice(5), ACL_SUCCESS);
        assert_eq!(current_device(), Ok(5));
        assert_eq!(aclrtResetDevice(5), ACL_SUCCESS);
    });
}

#[test]
fn reset_device_force_drops_every_reference() {
    // Device 6 belongs to this test.
    on_new_thread(|| {
        for _ in 0..3 {
            assert_eq!(aclrtSetDevice(6), ACL_SUCCESS);
        }
        assert_eq!(aclrtResetDeviceForce(6), ACL_SUCCESS);
        assert_eq!(current_device(), Err(CONTEXT_NULL));
        assert_fails(
            aclrtResetDevice(6),
            CONTEXT_RELEASE_ERROR,
            "aclrtResetDevice",
        );
    });
}

#[test]
fn last_reset_on_another_thread_ends_this_threads_context() {
    // Device 4 belongs to this test. The default context is per device, not
    // per thread: once the last reference goes, no thread has it.
    on_new_thread(|| {
        assert_eq!(aclrtSetDevice(4), ACL_SUCCESS);
        assert_eq!(on_new_thread(|| aclrtResetDevice(4)), ACL_SUCCESS);
        assert_eq!(current_device(), Err(CONTEXT_NULL));
    });
}

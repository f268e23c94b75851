//! Devices: `aclrtGetDeviceCount`, `aclrtSetDevice`, `aclrtResetDevice`,
//! `aclrtResetDeviceForce`, `aclrtGetDevice`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/device.cpp`,
//! `src/runtime/api/impl/api_error.cc` and `api_impl.cc`, `runtime.cc`
//! `PrimaryContextRelease`):
//!
//! - Device ids are logical: `0..count`, where `count` is the number of
//!   visible devices (`ASCEND_RT_VISIBLE_DEVICES`). An id outside that range
//!   is `ACL_ERROR_RT_INVALID_DEVICEID` (107001).
//! - `aclrtSetDevice` takes a process-wide reference on the device (its
//!   default context exists while the count is above 0) and makes it the
//!   calling thread's current device.
//! - `aclrtResetDevice` drops one reference, `aclrtResetDeviceForce` all of
//!   them. Resetting a device that holds none is
//!   `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR` (507007: `RT_ERROR_CONTEXT_DEL`,
//!   "the device has not been set or has already been reset"). At 0 the
//!   default context is gone: every thread whose current device it was has
//!   no context (107002) until the device is set again. Device memory is not
//!   freed by a reset (the docs list contexts and streams only).
//! - A malformed simulator configuration makes these calls fail with
//!   `ACL_ERROR_INVALID_PARAM` (100000) and the configuration's message.

use crate::recent_error::fail;
use crate::state;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
    ACL_ERROR_RT_INVALID_DEVICEID, ACL_SUCCESS, aclError,
};

/// The number of visible devices, or the failure to return from `function`.
fn device_count(function: &str) -> Result<u32, aclError> {
    crate::config::get()
        .map(crate::config::Config::device_count)
        .map_err(|msg| {
            fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{function}: cann-sim configuration: {msg}"),
            )
        })
}

/// Checks that `id` names a visible device.
fn check_id(function: &str, id: i32) -> Result<u32, aclError> {
    let count = device_count(function)?;
    match u32::try_from(id) {
        Ok(device) if device < count => Ok(device),
        _ => Err(fail(
            ACL_ERROR_RT_INVALID_DEVICEID as aclError,
            format!(
                "{function}: device id {id} is out of range [0, {count}) (the visible devices)"
            ),
        )),
    }
}

/// `aclrtGetDeviceCount`: the number of visible devices.
///
/// Null `count` → `ACL_ERROR_INVALID_PARAM` (100000).
///
/// # Safety
///
/// `count` is null or valid for writing a `u32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCount(count: *mut u32) -> aclError {
    if count.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            "aclrtGetDeviceCount: count is null",
        );
    }
    match device_count("aclrtGetDeviceCount") {
        Ok(n) => {
            // SAFETY: checked non-null; the caller passes a writable u32.
            unsafe { *count = n };
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtSetDevice`: retains `device_id` and makes it the calling thread's
/// current device.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(device_id: i32) -> aclError {
    let device = match check_id("aclrtSetDevice", device_id) {
        Ok(d) => d,
        Err(rc) => return rc,
    };
    state::global().lock().retain_device(device);
    state::set_current_device(Some(device));
    ACL_SUCCESS
}

fn reset(function: &str, device_id: i32, force: bool) -> aclError {
    let device = match check_id(function, device_id) {
        Ok(d) => d,
        Err(rc) => return rc,
    };
    let left = state::global().lock().release_device(device, force);
    match left {
        None => fail(
            ACL_ERROR_RT_CONTEXT_RELEASE_ERROR as aclError,
            format!("{function}: device {device_id} has not been set, or has already been reset"),
        ),
        Some(left) => {
            if left == 0 && state::current_device().is_none() {
                // This thread's current device lost its default context
                // (it was this one, or another device reset earlier).
                state::set_current_device(None);
            }
            ACL_SUCCESS
        }
    }
}

/// `aclrtResetDevice`: drops one reference on `device_id`; at 0 its default
/// context is destroyed.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(device_id: i32) -> aclError {
    reset("aclrtResetDevice", device_id, false)
}

/// `aclrtResetDeviceForce`: drops every reference on `device_id`, however
/// many `aclrtSetDevice` calls took them.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceForce(device_id: i32) -> aclError {
    reset("aclrtResetDeviceForce", device_id, true)
}

/// `aclrtGetDevice`: the calling thread's current device.
///
/// Null `device_id` → 100000; no current device (never set on this thread,
/// or reset since) → `ACL_ERROR_RT_CONTEXT_NULL` (107002).
///
/// # Safety
///
/// `device_id` is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDevice(device_id: *mut i32) -> aclError {
    if device_id.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is null");
    }
    match state::current_device() {
        Some(device) => {
            // SAFETY: checked non-null; the caller passes a writable i32.
            unsafe { *device_id = device as i32 };
            ACL_SUCCESS
        }
        None => fail(
            ACL_ERROR_RT_CONTEXT_NULL as aclError,
            "aclrtGetDevice: no device is set on this thread (call aclrtSetDevice first)",
        ),
    }
}

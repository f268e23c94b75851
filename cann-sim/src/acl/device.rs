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
//! - `aclrtSetDevice` takes a process-wide reference on the device; the first
//!   one creates the device's primary (default) context with its default
//!   stream. It makes that context the calling thread's current context; the
//!   thread's current device is its current context's device.
//! - `aclrtResetDevice` drops one reference, `aclrtResetDeviceForce` all of
//!   them. Resetting a device that holds none is
//!   `ACL_ERROR_RT_CONTEXT_RELEASE_ERROR` (507007: `RT_ERROR_CONTEXT_DEL`,
//!   "the device has not been set or has already been reset"). At 0 the
//!   primary context is destroyed: the reset waits for the work queued on its
//!   streams, then destroys them (default stream and streams created in it),
//!   as `docs/zh/api_ref/04_device_management.md` says; every thread whose
//!   current context it was has none (107002) until it sets one again.
//!   Contexts made with `aclrtCreateContext`, events and device memory are
//!   not touched by a reset.
//! - A malformed simulator configuration makes these calls fail with
//!   `ACL_ERROR_INVALID_PARAM` (100000) and the configuration's message.
//! - An `ASCEND_RT_VISIBLE_DEVICES` list out of order or with a repeated
//!   id (or with no valid id) makes `aclrtGetDeviceCount` fail with
//!   `ACL_ERROR_RT_NO_DEVICE` (207004) and every device id invalid (107001),
//!   as `ApiImpl::GetDeviceCount` (`src/runtime/api/impl/api_impl.cc`) and
//!   `Runtime::ChgUserDevIdToDeviceId` (`runtime.cc`, `userDeviceCnt` stays
//!   0) do; see [`crate::config`].
//! - A default device named in `aclInit`'s config is set implicitly on a
//!   thread that has no context when a call needs one
//!   ([`set_device_implicitly`]); `aclrtGetDevice` reports it without
//!   setting it (`ApiImpl::GetDevice`, `GetSetDefaultDevIdFlag`).

use super::common::rt_fail;
use crate::recent_error::fail;
use crate::{faults, rt, state};
use acl_sys::{
    ACL_DEVICE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_NO_DEVICE, ACL_HOST, ACL_SUCCESS, aclError, aclrtRunMode,
};

fn config(function: &str) -> Result<&'static crate::config::Config, aclError> {
    crate::config::get().map_err(|msg| {
        fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: cann-sim configuration: {msg}"),
        )
    })
}

/// The number of visible devices, or the failure to return from `function`:
/// 207004 for an invalid `ASCEND_RT_VISIBLE_DEVICES` (`ApiImpl::GetDeviceCount`,
/// hicann/runtime `src/runtime/api/impl/api_impl.cc`: `RT_ERROR_DRV_NO_DEVICE`).
pub(crate) fn device_count(function: &str) -> Result<u32, aclError> {
    let cfg = config(function)?;
    match &cfg.visible_error {
        None => Ok(cfg.device_count()),
        Some(why) => Err(fail(
            ACL_ERROR_RT_NO_DEVICE as aclError,
            format!("{function}: {why}"),
        )),
    }
}

/// Checks that `id` names a visible device.
pub(crate) fn check_id(function: &str, id: i32) -> Result<u32, aclError> {
    let cfg = config(function)?;
    let count = cfg.device_count();
    match u32::try_from(id) {
        Ok(device) if device < count => Ok(device),
        _ => {
            let why = cfg
                .visible_error
                .as_ref()
                .map_or_else(String::new, |e| format!("; no device is visible: {e}"));
            Err(fail(
                ACL_ERROR_RT_INVALID_DEVICEID as aclError,
                format!(
                    "{function}: device id {id} is out of range [0, {count}) (the visible \
                     devices){why}"
                ),
            ))
        }
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
    if let Some(code) = faults::check("aclrtGetDeviceCount") {
        return code;
    }
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

/// `aclrtGetRunMode`: `ACL_HOST` — the simulated program runs on a host
/// with the devices attached. The real runtime maps the driver's offline
/// mode to `ACL_DEVICE` and every other to `ACL_HOST`, and needs no device
/// or context (hicann/runtime `src/acl/aclrt_impl/device.cpp`
/// `aclrtGetRunModeImpl`).
///
/// Null `run_mode` → `ACL_ERROR_INVALID_PARAM` (100000).
///
/// # Safety
///
/// `run_mode` is null or valid for writing an `aclrtRunMode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetRunMode(run_mode: *mut aclrtRunMode) -> aclError {
    if let Some(code) = faults::check("aclrtGetRunMode") {
        return code;
    }
    if run_mode.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is null");
    }
    let mode = if rt::device::runs_on_host() {
        ACL_HOST
    } else {
        ACL_DEVICE
    };
    // SAFETY: checked non-null; the caller passes a writable aclrtRunMode.
    unsafe { *run_mode = mode };
    ACL_SUCCESS
}

/// `aclrtSetDevice`: retains `device_id` (creating its primary context on
/// the first reference) and makes the primary context the calling thread's
/// current context.
///
/// Out of range → 107001; no stream left for the primary context's default
/// stream (`CANN_SIM_MAX_STREAMS`) → 207008.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDevice(device_id: i32) -> aclError {
    if let Some(code) = faults::check("aclrtSetDevice") {
        return code;
    }
    let device = tri!(check_id("aclrtSetDevice", device_id));
    match rt::device::set(device) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail("aclrtSetDevice", e),
    }
}

fn reset(function: &str, device_id: i32, force: bool) -> aclError {
    let device = tri!(check_id(function, device_id));
    match rt::device::reset(device, force) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtResetDevice`: drops one reference on `device_id`; at 0 its default
/// context is destroyed.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDevice(device_id: i32) -> aclError {
    if let Some(code) = faults::check("aclrtResetDevice") {
        return code;
    }
    reset("aclrtResetDevice", device_id, false)
}

/// `aclrtResetDeviceForce`: drops every reference on `device_id`, however
/// many `aclrtSetDevice` calls took them.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtResetDeviceForce(device_id: i32) -> aclError {
    if let Some(code) = faults::check("aclrtResetDeviceForce") {
        return code;
    }
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
    if let Some(code) = faults::check("aclrtGetDevice") {
        return code;
    }
    if device_id.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is null");
    }
    // Without a context, the default device of aclInit's config is reported
    // (not set): `ApiImpl::GetDevice`, hicann/runtime `api_impl.cc`.
    match state::own_context()
        .map(|c| c.device)
        .or_else(state::default_device)
    {
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

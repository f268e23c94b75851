//! `aclprof*`: profiling sessions (`acl/acl_prof.h`).

use super::{forward, non_null};
use crate::error::Result;
use acl_sys as sys;
use std::ffi::CStr;

/// `aclprofInit`: starts profiling, writing under `path` (created when
/// missing).
#[doc(alias = "aclprofInit")]
pub fn prof_init(path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string and its length, read during the call.
    unsafe { call!(aclprofInit(path.as_ptr(), path.to_bytes().len())) }
}

/// `aclprofFinalize`: ends profiling (after stopping what still runs).
#[doc(alias = "aclprofFinalize")]
pub fn prof_finalize() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclprofFinalize()) }
}

/// `aclprofSetConfig`: an option of later runs (`ACL_PROF_STORAGE_LIMIT`,
/// ...), before [`prof_start`].
#[doc(alias = "aclprofSetConfig")]
pub fn prof_set_config(kind: sys::aclprofConfigType, value: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string and its length, read during the call.
    unsafe {
        call!(aclprofSetConfig(
            kind,
            value.as_ptr(),
            value.to_bytes().len()
        ))
    }
}

/// `aclprofCreateConfig` without AI Core events: what to profile on which
/// devices. The runtime returns null for invalid devices (out of range,
/// repeated, none without `ACL_PROF_MSPROFTX`); that is
/// `ACL_ERROR_FAILURE` here, with the runtime's message.
#[doc(alias = "aclprofCreateConfig")]
pub fn prof_create_config(
    devices: &[u32],
    metrics: sys::aclprofAicoreMetrics,
    data_types: u64,
) -> Result<*mut sys::aclprofConfig> {
    let mut ids = devices.to_vec();
    let count = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    // SAFETY: `ids` holds `count` ids (the runtime reads them only); null
    // AI Core events.
    let ptr = unsafe {
        sys::aclprofCreateConfig(
            ids.as_mut_ptr(),
            count,
            metrics,
            std::ptr::null(),
            data_types,
        )
    }?;
    non_null("aclprofCreateConfig", ptr)
}

forward! {
    /// `aclprofDestroyConfig`.
    #[doc(alias = "aclprofDestroyConfig")]
    prof_destroy_config = aclprofDestroyConfig(config: *const sys::aclprofConfig);
    /// `aclprofStart`: profiles the config's devices until
    /// [`prof_stop`] with the same config.
    #[doc(alias = "aclprofStart")]
    prof_start = aclprofStart(config: *const sys::aclprofConfig);
    /// `aclprofStop`: stops what `config` started and writes its data.
    #[doc(alias = "aclprofStop")]
    prof_stop = aclprofStop(config: *const sys::aclprofConfig);
}

/// `aclprofCreateStamp`: a msproftx stamp. The runtime returns null outside
/// a run with `ACL_PROF_MSPROFTX`; that is `ACL_ERROR_FAILURE` here, with
/// the runtime's message.
#[doc(alias = "aclprofCreateStamp")]
pub fn prof_create_stamp() -> Result<*mut std::ffi::c_void> {
    // SAFETY: no arguments.
    let ptr = unsafe { sys::aclprofCreateStamp() }?;
    non_null("aclprofCreateStamp", ptr)
}

/// `aclprofDestroyStamp`.
///
/// # Safety
///
/// `stamp` came from [`prof_create_stamp`], is destroyed once and not used
/// afterwards.
#[doc(alias = "aclprofDestroyStamp")]
pub unsafe fn prof_destroy_stamp(stamp: *mut std::ffi::c_void) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclprofDestroyStamp(stamp) }?)
}

/// `aclprofSetStampTraceMessage`: the message of a stamp's marks (under
/// 128 bytes).
///
/// # Safety
///
/// `stamp` is live.
#[doc(alias = "aclprofSetStampTraceMessage")]
pub unsafe fn prof_set_stamp_trace_message(
    stamp: *mut std::ffi::c_void,
    message: &str,
) -> Result<()> {
    let len = u32::try_from(message.len()).unwrap_or(u32::MAX);
    // SAFETY: `message` is valid for `len` bytes during the call; `stamp`
    // is live (the caller's contract).
    unsafe {
        call!(aclprofSetStampTraceMessage(
            stamp,
            message.as_ptr().cast(),
            len
        ))
    }
}

/// `aclprofMarkEx`: a mark on the host and, in `stream`'s order, on the
/// device.
///
/// # Safety
///
/// `stream` is live.
#[doc(alias = "aclprofMarkEx")]
pub unsafe fn prof_mark_ex(message: &CStr, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: a NUL-terminated string and its length, read during the call;
    // the stream is live (the caller's contract).
    unsafe {
        call!(aclprofMarkEx(
            message.as_ptr(),
            message.to_bytes().len(),
            stream
        ))
    }
}

/// `aclprofRangeStart`: opens a range with the stamp's message; its id.
///
/// # Safety
///
/// `stamp` is live.
#[doc(alias = "aclprofRangeStart")]
pub unsafe fn prof_range_start(stamp: *mut std::ffi::c_void) -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: a live stamp (the caller's contract) and a valid out-pointer.
    unsafe { call!(aclprofRangeStart(stamp, &mut id)) }?;
    Ok(id)
}

/// `aclprofPop`: closes the calling thread's latest push.
#[doc(alias = "aclprofPop")]
pub fn prof_pop() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclprofPop()) }
}

/// `aclprofRangeStop`: closes a range by id.
#[doc(alias = "aclprofRangeStop")]
pub fn prof_range_stop(range_id: u32) -> Result<()> {
    // SAFETY: a plain integer argument.
    unsafe { call!(aclprofRangeStop(range_id)) }
}

/// `aclprofCreateStepInfo`: a step marker pair (null from the runtime is
/// `ACL_ERROR_FAILURE` here).
#[doc(alias = "aclprofCreateStepInfo")]
pub fn prof_create_step_info() -> Result<*mut sys::aclprofStepInfo> {
    // SAFETY: no arguments.
    let ptr = unsafe { sys::aclprofCreateStepInfo() }?;
    non_null("aclprofCreateStepInfo", ptr)
}

/// `aclprofDestroyStepInfo`.
///
/// # Safety
///
/// `step` came from [`prof_create_step_info`], is destroyed once and not
/// used afterwards.
#[doc(alias = "aclprofDestroyStepInfo")]
pub unsafe fn prof_destroy_step_info(step: *mut sys::aclprofStepInfo) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclprofDestroyStepInfo(step) }?)
}

forward! {
    /// `aclprofMark`: an instant event with the stamp's message.
    #[doc(alias = "aclprofMark")]
    prof_mark = aclprofMark(stamp: *mut std::ffi::c_void);
    /// `aclprofPush`: opens a range on the calling thread.
    #[doc(alias = "aclprofPush")]
    prof_push = aclprofPush(stamp: *mut std::ffi::c_void);
    /// `aclprofGetStepTimestamp`: marks a step's start or end on a stream.
    #[doc(alias = "aclprofGetStepTimestamp")]
    prof_get_step_timestamp = aclprofGetStepTimestamp(step: *mut sys::aclprofStepInfo, tag: sys::aclprofStepTag, stream: sys::aclrtStream);
}

//! The runtime's error state: `aclrtGetLastError`, `aclrtPeekAtLastError`,
//! `aclrtGetErrorVerbose`, `aclrtGetMemUceInfo`, `aclrtMemUceRepair`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/context.cpp`,
//! `event.cpp`; `src/runtime/api/api_c.cc` `rtGetLastError`,
//! `api_impl/api_error.cc` `GetErrorVerbose`/`GetMemUceInfo`,
//! `api_impl/api_impl.cc`):
//!
//! - The last error is per thread: the code of the latest failing runtime
//!   call ([`crate::recent_error::last_error`]); `aclrtGetLastError` returns
//!   and resets it, `aclrtPeekAtLastError` only returns it. The only level
//!   the ACL layer accepts is `ACL_RT_THREAD_LEVEL`: another is
//!   `ACL_ERROR_INVALID_PARAM` (`ACL_REQUIRES_PARAM_EQUAL_REPORT`).
//! - The simulated devices have no hardware faults: `aclrtGetErrorVerbose`
//!   reports `ACL_RT_NO_ERROR` with no detail (`ApiImpl::GetErrorVerbose`,
//!   a device whose fault type is none), and `aclrtGetMemUceInfo` finds no
//!   uncorrectable memory error (0 entries). A device id out of range is
//!   107001; `aclrtGetMemUceInfo` needs a current context on that device
//!   (`CheckCurCtxValid`: 107002).

use super::common::code;
use super::device::check_id;
use crate::faults;
use crate::recent_error::{self, fail};
use crate::state;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_RT_NO_ERROR, ACL_RT_THREAD_LEVEL,
    ACL_SUCCESS, aclError, aclrtErrorInfo, aclrtLastErrLevel, aclrtMemUceInfo,
};

fn last_error(function: &str, level: aclrtLastErrLevel, clear: bool) -> aclError {
    if let Some(code) = faults::check(function) {
        return code;
    }
    if level != ACL_RT_THREAD_LEVEL {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: level {level} is invalid; it must be ACL_RT_THREAD_LEVEL (0)"),
        );
    }
    recent_error::last_error(clear)
}

/// `aclrtGetLastError`: the calling thread's last runtime error, which it
/// resets to `ACL_SUCCESS`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetLastError(level: aclrtLastErrLevel) -> aclError {
    last_error("aclrtGetLastError", level, true)
}

/// `aclrtPeekAtLastError`: the calling thread's last runtime error, kept.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtPeekAtLastError(level: aclrtLastErrLevel) -> aclError {
    last_error("aclrtPeekAtLastError", level, false)
}

/// `aclrtGetErrorVerbose`: the device's fault — none on the simulator.
///
/// Null `errorInfo` → 100000; device out of range → 107001.
///
/// # Safety
///
/// `error_info` is null or valid for writing an `aclrtErrorInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetErrorVerbose(
    device_id: i32,
    error_info: *mut aclrtErrorInfo,
) -> aclError {
    const F: &str = "aclrtGetErrorVerbose";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if error_info.is_null() {
        return super::common::null_arg(F, "errorInfo");
    }
    tri!(check_id(F, device_id));
    // SAFETY: checked non-null; the caller passes a writable aclrtErrorInfo.
    let info = unsafe { &mut *error_info };
    info.tryRepair = 0;
    info.hasDetail = 0;
    info.errorType = ACL_RT_NO_ERROR;
    ACL_SUCCESS
}

/// `aclrtGetMemUceInfo`: the uncorrectable memory errors of a device —
/// none on the simulator (`*retSize = 0`).
///
/// Null `memUceInfoArray` or `retSize` → 100000; device out of range →
/// 107001; no current context on that device → 107002.
///
/// # Safety
///
/// `ret_size` is null or valid for writing a `usize`; the array is not
/// written.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemUceInfo(
    device_id: i32,
    mem_uce_info_array: *mut aclrtMemUceInfo,
    _array_size: usize,
    ret_size: *mut usize,
) -> aclError {
    const F: &str = "aclrtGetMemUceInfo";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if mem_uce_info_array.is_null() {
        return super::common::null_arg(F, "memUceInfoArray");
    }
    if ret_size.is_null() {
        return super::common::null_arg(F, "retSize");
    }
    let device = tri!(check_id(F, device_id));
    if state::current_context().is_none_or(|c| c.device != device) {
        return fail(
            code(ACL_ERROR_RT_CONTEXT_NULL),
            format!("{F}: the current context is null or not on device {device_id}"),
        );
    }
    // SAFETY: checked non-null; the caller passes a writable usize.
    unsafe { *ret_size = 0 };
    ACL_SUCCESS
}

/// `aclrtMemUceRepair`: repairs the device memory ranges that
/// `aclrtGetMemUceInfo` reported with uncorrectable errors.
///
/// Checks, in the release's order (hicann/runtime `src/acl/aclrt_impl/event.cpp`
/// `aclrtMemUceRepairImpl`, `src/runtime/api/impl/api_error.cc`
/// `MemUceRepair`, `api_impl.cc`): a null array → 100000; more than
/// `RT_MAX_RECORD_PA_NUM_PER_DEV` (20) entries → 100000; an entry whose
/// `reserved` is not zero → 100000 (the release compares the first
/// `UCE_INFO_RESERVED_SIZE` = 14 *bytes* of it, so only those are checked
/// here too); a device id out of range → 107001; no current context on
/// that device → 107002. The simulated devices have no uncorrectable
/// errors, so there is nothing to repair: each range must lie in device
/// memory of the device (the driver's `halMemCtl` repair is not open; a
/// range elsewhere is 107000, assumed), and the call succeeds.
///
/// # Safety
///
/// `mem_uce_info_array` is null or readable for `array_size` entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemUceRepair(
    device_id: i32,
    mem_uce_info_array: *mut acl_sys::aclrtMemUceInfo,
    array_size: usize,
) -> aclError {
    const F: &str = "aclrtMemUceRepair";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if mem_uce_info_array.is_null() {
        return super::common::null_arg(F, "memUceInfoArray");
    }
    let max = acl_sys::ACL_RT_MAX_RECORD_PA_NUM_PER_DEV as usize;
    if array_size > max {
        return fail(
            acl_sys::ACL_ERROR_INVALID_PARAM,
            format!("{F}: arraySize {array_size} must be less than or equal to {max}"),
        );
    }
    // SAFETY: non-null and readable for `array_size` entries (C contract).
    let entries = unsafe { std::slice::from_raw_parts(mem_uce_info_array, array_size) };
    let checked = acl_sys::UCE_INFO_RESERVED_SIZE as usize;
    for e in entries {
        // The first 14 bytes of `reserved`, as the release's memcmp reads.
        // SAFETY: `reserved` is 14 × 8 bytes, more than `checked`.
        let head = unsafe { std::slice::from_raw_parts(e.reserved.as_ptr().cast::<u8>(), checked) };
        if head.iter().any(|&b| b != 0) {
            return fail(
                acl_sys::ACL_ERROR_INVALID_PARAM,
                format!("{F}: memUceInfoArray.reserved is a reserved parameter and must be 0"),
            );
        }
    }
    let device = tri!(check_id(F, device_id));
    if state::current_context().is_none_or(|c| c.device != device) {
        return fail(
            code(ACL_ERROR_RT_CONTEXT_NULL),
            format!("{F}: the current context is null or not on device {device_id}"),
        );
    }
    let table = state::memory().read();
    for (i, e) in entries.iter().enumerate() {
        match table.check_range(e.addr as usize, e.len) {
            Ok(state::Region::Device { device: d, .. }) if d == device => {}
            Ok(other) => {
                return fail(
                    super::common::PARAM_INVALID,
                    format!(
                        "{F}: entry {i}: {:p} + {} bytes is not device memory of device \
                         {device_id} ({other})",
                        e.addr, e.len
                    ),
                );
            }
            Err(why) => {
                return fail(
                    super::common::PARAM_INVALID,
                    format!("{F}: entry {i}: {why}"),
                );
            }
        }
    }
    ACL_SUCCESS
}

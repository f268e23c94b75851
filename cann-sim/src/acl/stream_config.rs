//! Stream configuration handles (`aclrtCreateStreamConfigHandle`,
//! `aclrtSetStreamConfigOpt`, `aclrtDestroyStreamConfigHandle`) and
//! `aclrtCreateStreamV2`, which creates a stream from one.
//!
//! `aclrtStreamConfigHandle` is a public C struct (work memory address and
//! size, flags, priority): `aclrtSetStreamConfigOpt` writes one field of the
//! struct it is given and `aclrtCreateStreamV2` reads it, as the C contract
//! says; `aclrtDestroyStreamConfigHandle` only frees handles
//! `aclrtCreateStreamConfigHandle` made. The priority and flags mean what
//! they mean for `aclrtCreateStreamWithConfig`; work memory, when given,
//! must be device memory of the current device (models on the stream may
//! use it on hardware; the simulator's models allocate their own).

#![allow(non_snake_case)]

use crate::faults;
use crate::recent_error::fail;
use crate::state::{self, Region};
use acl_sys::*;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::ffi::c_void;

/// Handles made by `aclrtCreateStreamConfigHandle`, not yet destroyed.
static HANDLES: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

/// `aclrtCreateStreamConfigHandle`: a zeroed config (priority 0, no flags,
/// no work memory); null when an injected fault says so.
///
/// # Safety
///
/// None: no arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamConfigHandle() -> *mut aclrtStreamConfigHandle {
    const F: &str = "aclrtCreateStreamConfigHandle";
    if let Some(code) = faults::check(F) {
        fail(code, format!("{F}: injected fault"));
        return std::ptr::null_mut();
    }
    let h = Box::into_raw(Box::new(aclrtStreamConfigHandle {
        workptr: std::ptr::null_mut(),
        workSize: 0,
        flag: 0,
        priority: 0,
    }));
    HANDLES
        .lock()
        .get_or_insert_with(HashSet::new)
        .insert(h as usize);
    h
}

/// `aclrtDestroyStreamConfigHandle`: frees a handle
/// `aclrtCreateStreamConfigHandle` made.
///
/// # Safety
///
/// None: the handle is looked up before it is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamConfigHandle(
    handle: *mut aclrtStreamConfigHandle,
) -> aclError {
    const F: &str = "aclrtDestroyStreamConfigHandle";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: handle is null"));
    }
    let known = HANDLES
        .lock()
        .as_mut()
        .is_some_and(|s| s.remove(&(handle as usize)));
    if !known {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: {handle:p} is not a handle aclrtCreateStreamConfigHandle made (or it was \
                 destroyed)"
            ),
        );
    }
    // SAFETY: made by `Box::into_raw` in aclrtCreateStreamConfigHandle and
    // freed once (just removed from the set).
    drop(unsafe { Box::from_raw(handle) });
    ACL_SUCCESS
}

/// Reads a `u32` or `u64` option value of `size` bytes.
///
/// # Safety
///
/// `value` readable for `size` bytes.
unsafe fn int_value(value: *const c_void, size: usize) -> Option<u64> {
    // SAFETY: the caller's contract; unaligned reads.
    unsafe {
        match size {
            4 => Some(u64::from(value.cast::<u32>().read_unaligned())),
            8 => Some(value.cast::<u64>().read_unaligned()),
            _ => None,
        }
    }
}

/// `aclrtSetStreamConfigOpt`: sets one field of `handle` from `attrValue`
/// (`valueSize` bytes: a pointer for the work address, 4 or 8 bytes for the
/// size, flags and priority).
///
/// # Safety
///
/// `handle` null or a writable `aclrtStreamConfigHandle`; `attrValue` null
/// or readable for `valueSize` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamConfigOpt(
    handle: *mut aclrtStreamConfigHandle,
    attr: aclrtStreamConfigAttr,
    attrValue: *const c_void,
    valueSize: usize,
) -> aclError {
    const F: &str = "aclrtSetStreamConfigOpt";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() || attrValue.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: handle or attrValue is null"),
        );
    }
    // SAFETY: checked non-null; the caller's contract.
    let h = unsafe { &mut *handle };
    let bad_size = |what: &str| {
        fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: valueSize {valueSize} does not fit {what}"),
        )
    };
    match attr {
        ACL_RT_STREAM_WORK_ADDR_PTR => {
            if valueSize != size_of::<*mut c_void>() {
                return bad_size("a pointer");
            }
            // SAFETY: `valueSize` readable bytes (the caller's contract).
            h.workptr = unsafe { attrValue.cast::<*mut c_void>().read_unaligned() };
        }
        ACL_RT_STREAM_WORK_SIZE | ACL_RT_STREAM_FLAG | ACL_RT_STREAM_PRIORITY => {
            // SAFETY: as above.
            let Some(v) = (unsafe { int_value(attrValue, valueSize) }) else {
                return bad_size("a 4- or 8-byte integer");
            };
            let too_big = || {
                fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!("{F}: value {v} is too large for attr {attr}"),
                )
            };
            match attr {
                ACL_RT_STREAM_WORK_SIZE => match usize::try_from(v) {
                    Ok(x) => h.workSize = x,
                    Err(_) => return too_big(),
                },
                ACL_RT_STREAM_FLAG => match usize::try_from(v) {
                    Ok(x) => h.flag = x,
                    Err(_) => return too_big(),
                },
                _ => match u32::try_from(v) {
                    Ok(x) => h.priority = x,
                    Err(_) => return too_big(),
                },
            }
        }
        other => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: attr {other} is not an aclrtStreamConfigAttr"),
            );
        }
    }
    ACL_SUCCESS
}

/// `aclrtCreateStreamV2`: a stream with the config's priority and flags
/// (as `aclrtCreateStreamWithConfig`), its work memory checked.
///
/// # Safety
///
/// `stream` null or writable; `handle` null or a readable
/// `aclrtStreamConfigHandle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamV2(
    stream: *mut aclrtStream,
    handle: *const aclrtStreamConfigHandle,
) -> aclError {
    const F: &str = "aclrtCreateStreamV2";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: handle is null"));
    }
    // SAFETY: checked non-null; the caller's contract.
    let h = unsafe { &*handle };
    if !h.workptr.is_null() || h.workSize != 0 {
        let Some(device) = state::current_device() else {
            return super::memory::no_device(F);
        };
        let region = state::memory()
            .read()
            .check_range(h.workptr as usize, h.workSize);
        match region {
            Ok(Region::Device { device: d, .. }) if d == device && !h.workptr.is_null() => {}
            other => {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                        "{F}: work memory {:p} ({} bytes) is not device memory of device {device}: \
                         {}",
                        h.workptr,
                        h.workSize,
                        match other {
                            Ok(r) => r.to_string(),
                            Err(e) => e,
                        }
                    ),
                );
            }
        }
    }
    let flag = u32::try_from(h.flag).unwrap_or(u32::MAX);
    // SAFETY: forwarded caller contract.
    unsafe { super::stream::create(F, stream, h.priority, flag) }
}

//! Process lifecycle and identity: `aclInit`, `aclFinalize`,
//! `aclFinalizeReference`, `aclrtGetVersion`, `aclrtGetSocName`,
//! `aclGetRecentErrMsg`.
//!
//! Semantics (hicann/runtime `acl.cpp`, its unit tests): `aclInit` keeps a
//! reference count; a second call answers `ACL_ERROR_REPEAT_INITIALIZE`
//! (100002) and counts another reference. `aclFinalize` ends the session
//! whatever the count; with no session it answers `ACL_ERROR_REPEAT_FINALIZE`
//! (100037). `aclFinalizeReference` drops one reference and finalizes at zero.
//! A new `aclInit` after finalizing is allowed.

use crate::recent_error::{self, fail};
use crate::{faults, state};
use acl_sys::{
    ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_REPEAT_FINALIZE,
    ACL_ERROR_REPEAT_INITIALIZE, ACL_SUCCESS, aclError,
};
use std::ffi::{CStr, c_char};

/// The ACL version the simulator reports: that of the headers it implements.
pub const VERSION: (i32, i32, i32) = (1, 17, 0);

/// `aclInit`.
///
/// # Safety
///
/// `config_path` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config_path: *const c_char) -> aclError {
    if let Some(code) = faults::check("aclInit") {
        return code;
    }
    if let Some(msg) = faults::env_error().or_else(crate::check::env_error) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("aclInit: cann-sim configuration: {msg}"),
        );
    }
    if !config_path.is_null() {
        // SAFETY: the caller passes a NUL-terminated string.
        let path = unsafe { CStr::from_ptr(config_path) }
            .to_string_lossy()
            .into_owned();
        if !path.is_empty() {
            match std::fs::read_to_string(&path) {
                Err(e) => {
                    return fail(
                        ACL_ERROR_INVALID_FILE,
                        format!("aclInit: cannot read the config file {path:?}: {e}"),
                    );
                }
                Ok(text) if !looks_like_json_object(&text) => {
                    return fail(
                        ACL_ERROR_INVALID_FILE,
                        format!("aclInit: the config file {path:?} is not a JSON object"),
                    );
                }
                Ok(_) => {}
            }
        }
    }
    if let Err(msg) = crate::config::get() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("aclInit: cann-sim configuration: {msg}"),
        );
    }
    let mut s = state::global().lock();
    if s.init_refs > 0 {
        s.init_refs += 1;
        return fail(
            ACL_ERROR_REPEAT_INITIALIZE,
            "aclInit: AscendCL is already initialized in this process",
        );
    }
    s.init_refs = 1;
    ACL_SUCCESS
}

/// The config file is JSON; the simulator accepts any JSON object (it has no
/// dump or profiling options to apply) and rejects anything else.
fn looks_like_json_object(text: &str) -> bool {
    let t = text.trim();
    t.is_empty() || (t.starts_with('{') && t.ends_with('}'))
}

/// `aclFinalize`.
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> aclError {
    if let Some(code) = faults::check("aclFinalize") {
        return code;
    }
    let mut s = state::global().lock();
    if s.init_refs == 0 {
        return fail(
            ACL_ERROR_REPEAT_FINALIZE,
            "aclFinalize: AscendCL is not initialized (finalized twice, or never initialized)",
        );
    }
    s.init_refs = 0;
    ACL_SUCCESS
}

/// `aclFinalizeReference`.
///
/// # Safety
///
/// `ref_count` is null or valid for writing a `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclFinalizeReference(ref_count: *mut u64) -> aclError {
    if let Some(code) = faults::check("aclFinalizeReference") {
        return code;
    }
    let mut s = state::global().lock();
    if s.init_refs == 0 {
        if !ref_count.is_null() {
            // SAFETY: checked non-null; the caller passes a writable u64.
            unsafe { *ref_count = 0 };
        }
        return fail(
            ACL_ERROR_REPEAT_FINALIZE,
            "aclFinalizeReference: AscendCL is not initialized",
        );
    }
    s.init_refs -= 1;
    if !ref_count.is_null() {
        // SAFETY: as above.
        unsafe { *ref_count = s.init_refs };
    }
    ACL_SUCCESS
}

/// `aclrtGetVersion`.
///
/// # Safety
///
/// Each pointer is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetVersion(
    major: *mut i32,
    minor: *mut i32,
    patch: *mut i32,
) -> aclError {
    if let Some(code) = faults::check("aclrtGetVersion") {
        return code;
    }
    if major.is_null() || minor.is_null() || patch.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            "aclrtGetVersion: an output pointer is null",
        );
    }
    // SAFETY: all three are non-null and, by contract, writable.
    unsafe {
        *major = VERSION.0;
        *minor = VERSION.1;
        *patch = VERSION.2;
    }
    ACL_SUCCESS
}

/// `aclrtGetSocName`: the configured SoC name, or null (with a recorded
/// message) when the configuration is malformed.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtGetSocName() -> *const c_char {
    if faults::check("aclrtGetSocName").is_some() {
        return std::ptr::null();
    }
    match state::soc_name() {
        Ok(name) => name.as_ptr(),
        Err(msg) => {
            recent_error::record(format!("aclrtGetSocName: cann-sim configuration: {msg}"));
            std::ptr::null()
        }
    }
}

/// `aclGetRecentErrMsg`: this thread's most recent error message, cleared by
/// reading; null when there is none. The pointer stays valid until the next
/// call on the same thread. (No fault can be injected here: it is how
/// injected faults are read.)
#[unsafe(no_mangle)]
pub extern "C" fn aclGetRecentErrMsg() -> *const c_char {
    recent_error::take()
}

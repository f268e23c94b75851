//! Process lifecycle and identity: `aclInit`, `aclFinalize`,
//! `aclFinalizeReference`, `aclrtGetVersion`, `aclrtGetSocName`,
//! `aclGetRecentErrMsg`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/acl.cpp`, `aclInitImpl`,
//! `aclFinalizeImpl`, `aclFinalizeReferenceImpl`; the config file through
//! `acl_rt_impl_base.cpp` `GetStrFromConfigPath` and
//! `src/acl/common/json_parser.cpp`):
//!
//! - `aclInit` keeps a reference count; a second call answers
//!   `ACL_ERROR_REPEAT_INITIALIZE` (100002) and counts another reference.
//! - The config file (null or empty path: none) must exist
//!   (`ACL_ERROR_INVALID_FILE`, 100003, also for a directory or a file over
//!   10 MiB) and be JSON (`ACL_ERROR_PARSE_FILE`, 100006, also for objects or
//!   arrays nested deeper than 10); an empty file is accepted.
//! - The content of the first successful `aclInit`'s config is remembered
//!   for the process: an `aclInit` after `aclFinalize` with different
//!   content (no file counts as empty content) is refused with
//!   `ACL_ERROR_INVALID_PARAM` (100000).
//! - `{"defaultDevice": {"default_device": "N"}}` (a string of digits) makes
//!   device N the default device: a thread without a context that calls an
//!   API needing one gets N set implicitly (see `state::current_context`).
//!   A value that is not a string of digits fails `aclInit` with
//!   `ACL_ERROR_FAILURE` (500001, `HandleDefaultDeviceAndStackSize`); an id
//!   that is not a visible device with 107001 (`rtSetDefaultDeviceId`).
//! - `aclFinalize` ends the session whatever the count, and succeeds without
//!   any `aclInit`; only a finalize right after a finalize answers
//!   `ACL_ERROR_REPEAT_FINALIZE` (100037). `aclFinalizeReference` drops one
//!   reference and finalizes at one; with none it answers 100037. Finalizing
//!   clears the default device.

use crate::recent_error::{self, fail};
use crate::{faults, state};
use acl_sys::{
    ACL_ERROR_FAILURE, ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_PARSE_FILE,
    ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_SUCCESS, aclError,
};
use std::ffi::{CStr, c_char};

/// The ACL version the simulator reports: that of the headers it implements.
pub const VERSION: (i32, i32, i32) = (1, 17, 0);

/// Largest config file the runtime reads (`MAX_CONFIG_FILE_BYTE`, json_parser.cpp).
const MAX_CONFIG_BYTES: u64 = 10 * 1024 * 1024;
/// Deepest nesting of objects (and, separately, arrays) it accepts
/// (`MAX_CONFIG_OBJ_DEPTH`, `MAX_CONFIG_ARRAY_DEPTH`).
const MAX_CONFIG_DEPTH: usize = 10;

/// `aclInit`.
///
/// # Safety
///
/// `config_path` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclInit(config_path: *const c_char) -> aclError {
    const F: &str = "aclInit";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if let Some(msg) = faults::env_error()
        .or_else(crate::check::env_error)
        .or_else(crate::trace::env_error)
    {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: cann-sim configuration: {msg}"),
        );
    }
    if let Err(msg) = crate::config::get() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: cann-sim configuration: {msg}"),
        );
    }
    let path = if config_path.is_null() {
        String::new()
    } else {
        // SAFETY: the caller passes a NUL-terminated string.
        unsafe { CStr::from_ptr(config_path) }
            .to_string_lossy()
            .into_owned()
    };
    let mut s = state::global().lock();
    if s.init_refs > 0 {
        s.init_refs += 1;
        return fail(
            ACL_ERROR_REPEAT_INITIALIZE,
            "aclInit: AscendCL is already initialized in this process",
        );
    }
    let content = tri!(read_config(&path));
    if let Some((first_path, first)) = &s.init_config
        && *first != content
    {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: the config {path:?} differs from that of the first aclInit of this process \
                 ({first_path:?}); AscendCL can be initialized again only with the same config"
            ),
        );
    }
    let default_device = if content.trim().is_empty() {
        None
    } else {
        let json = tri!(parse_config(&path, &content));
        tri!(default_device(&path, &json))
    };
    s.finalized = false;
    s.init_refs = 1;
    if s.init_config.is_none() {
        s.init_config = Some((path, content));
    }
    state::set_default_device(default_device);
    drop(s);
    crate::trace::init_from_env();
    ACL_SUCCESS
}

/// The config file's content: empty for no path (`GetStrFromConfigPath`,
/// hicann/runtime `src/acl/aclrt_impl/acl_rt_impl_base.cpp`).
fn read_config(path: &str) -> Result<String, aclError> {
    if path.is_empty() {
        return Ok(String::new());
    }
    let invalid = |why: String| {
        fail(
            ACL_ERROR_INVALID_FILE,
            format!("aclInit: the config file {path:?} {why}"),
        )
    };
    // `JsonParser::IsValidFileName` (json_parser.cpp): a regular file of at
    // most 10 MiB.
    match std::fs::metadata(path) {
        Err(e) => return Err(invalid(format!("cannot be read: {e}"))),
        Ok(m) if !m.is_file() => return Err(invalid("is not a regular file".into())),
        Ok(m) if m.len() > MAX_CONFIG_BYTES => {
            return Err(invalid(format!(
                "is {} bytes, more than the 10 MiB the runtime reads",
                m.len()
            )));
        }
        Ok(_) => {}
    }
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| invalid(format!("cannot be read: {e}")))
}

/// Parses the config as JSON (`JsonParser::GetConfigStrFromFile` and
/// `ParseJson`, json_parser.cpp): nesting deeper than 10 or invalid JSON is
/// `ACL_ERROR_PARSE_FILE` (100006).
fn parse_config(path: &str, content: &str) -> Result<serde_json::Value, aclError> {
    let (max_objects, max_arrays) = super::common::json_depth(content);
    if max_objects > MAX_CONFIG_DEPTH || max_arrays > MAX_CONFIG_DEPTH {
        return Err(fail(
            ACL_ERROR_PARSE_FILE,
            format!(
                "aclInit: the config file {path:?} nests objects {max_objects} deep and arrays \
                 {max_arrays} deep; the runtime accepts at most {MAX_CONFIG_DEPTH}"
            ),
        ));
    }
    serde_json::from_str(content).map_err(|e| {
        fail(
            ACL_ERROR_PARSE_FILE,
            format!("aclInit: the config file {path:?} is not valid JSON: {e}; fix or remove it"),
        )
    })
}

/// `defaultDevice.default_device` (`JsonParser::GetDefaultDeviceIdFromFile`,
/// json_parser.cpp; `HandleDefaultDeviceAndStackSize`, acl.cpp).
fn default_device(path: &str, json: &serde_json::Value) -> Result<Option<u32>, aclError> {
    let Some(value) = json
        .get("defaultDevice")
        .and_then(|d| d.get("default_device"))
    else {
        return Ok(None);
    };
    // The value must be a JSON string of digits without a leading zero
    // (regex `0|[1-9]\d*`); anything else fails the whole aclInit with
    // ACL_ERROR_FAILURE.
    let id = value
        .as_str()
        .filter(|v| {
            *v == "0"
                || (v.starts_with(|c: char| matches!(c, '1'..='9'))
                    && v.bytes().all(|b| b.is_ascii_digit()))
        })
        .and_then(|v| v.parse::<i32>().ok());
    let Some(id) = id else {
        return Err(fail(
            ACL_ERROR_FAILURE,
            format!(
                "aclInit: defaultDevice.default_device {value} in {path:?} must be a string of \
                 a device id (\"0\", \"1\", ...)"
            ),
        ));
    };
    let count = crate::config::get().map_or(0, crate::config::Config::device_count);
    match u32::try_from(id) {
        Ok(d) if d < count => Ok(Some(d)),
        _ => Err(fail(
            ACL_ERROR_RT_INVALID_DEVICEID as aclError,
            format!(
                "aclInit: defaultDevice.default_device {id} in {path:?} is out of range [0, \
                 {count}) (the visible devices)"
            ),
        )),
    }
}

/// Ends the session (`aclFinalizeInternal`, acl.cpp): no reference left,
/// the default device disabled, a later `aclFinalize` refused.
fn finalize_internal(s: &mut state::State) {
    state::set_default_device(None);
    s.finalized = true;
    s.init_refs = 0;
}

/// `aclFinalize`: succeeds unless the previous `aclInit`/`aclFinalize` was
/// a finalize (`aclFinalizeFlag`, acl.cpp).
#[unsafe(no_mangle)]
pub extern "C" fn aclFinalize() -> aclError {
    if let Some(code) = faults::check("aclFinalize") {
        return code;
    }
    let mut s = state::global().lock();
    if s.finalized {
        return fail(
            ACL_ERROR_REPEAT_FINALIZE,
            "aclFinalize: AscendCL was already finalized (call aclInit before finalizing again)",
        );
    }
    finalize_internal(&mut s);
    drop(s);
    crate::trace::write_env_file();
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
    if s.init_refs == 1 {
        finalize_internal(&mut s);
    } else {
        s.init_refs -= 1;
    }
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

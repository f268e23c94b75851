//! Profiling (`acl_prof.h`): `aclprofInit`, `aclprofSetConfig`,
//! `aclprofCreateConfig`, `aclprofDestroyConfig`, `aclprofStart`,
//! `aclprofStop`, `aclprofFinalize`, with the released runtime's checks and
//! codes (CANN 8.5.0, hicann/runtime `v8.5.0`: `msprofiler_acl_api.cpp`
//! `ProfInit`, `prof_acl_api.cpp` `aclprofCreateConfig`, `prof_acl_mgr.cpp`
//! prechecks); the sessions are [`crate::profiler`]'s.
//!
//! - `aclprofInit`: NULL path, length 0 or ≥ 4096, or a length other than
//!   the string's: `ACL_ERROR_INVALID_PARAM` (100000); twice: 100002; a
//!   path that is not a writable directory (a missing one is created):
//!   `ACL_ERROR_INVALID_FILE` (100003).
//! - `aclprofStart`/`aclprofStop`/`aclprofFinalize` before `aclprofInit`:
//!   `ACL_ERROR_PROF_NOT_RUN` (100043); `aclprofSetConfig` before it:
//!   `ACL_ERROR_UNINITIALIZE` (100001).
//! - `aclprofCreateConfig` returns NULL (with a message, no code) for a
//!   device id out of range or repeated, more ids than devices or 64, a NULL
//!   list with ids, AI Core events (not supported), or no device without
//!   `ACL_PROF_MSPROFTX`. It normalises the data types as the runtime does.
//! - `aclprofStart`: a data type set of 0 or over 65 devices: 100000; bits
//!   the runtime does not know: `ACL_ERROR_PROF_MODULES_UNSUPPORTED`
//!   (200007); a device already profiling: `ACL_ERROR_PROF_ALREADY_RUN`
//!   (100042). A NULL config profiles the current device (device 0 without
//!   one) with the default data (`ACL_PROF_ACL_API | ACL_PROF_TASK_TIME`).
//! - `aclprofStop`: another config than Start's for a running device:
//!   `ACL_ERROR_INVALID_PROFILING_CONFIG` (100010); devices not profiling are
//!   skipped; NULL stops everything.
//! - `aclprofDestroyConfig` of NULL or of anything `aclprofCreateConfig`
//!   did not make: 100000.

#![allow(non_snake_case)]

use crate::faults;
use crate::profiler::{self, ProfError, ProfErrorKind, Settings};
use crate::recent_error::{fail, record};
use acl_sys::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{CStr, c_char};

/// Longest result path (`MAX_PATH_LENGTH`, bytes).
const MAX_PATH: usize = 4096;
/// Longest `aclprofSetConfig` value.
const MAX_CONFIG_VALUE: usize = 256;
/// Most devices a config may name.
const MAX_DEVICES: u32 = 64;

/// Every `ACL_PROF_*` data type bit of the headers.
const KNOWN_BITS: u64 = (ACL_PROF_ACL_API
    | ACL_PROF_TASK_TIME
    | ACL_PROF_AICORE_METRICS
    | ACL_PROF_AICPU
    | ACL_PROF_L2CACHE
    | ACL_PROF_HCCL_TRACE
    | ACL_PROF_TRAINING_TRACE
    | ACL_PROF_MSPROFTX
    | ACL_PROF_RUNTIME_API
    | ACL_PROF_GE_API_L0
    | ACL_PROF_TASK_TIME_L0
    | ACL_PROF_TASK_MEMORY
    | ACL_PROF_GE_API_L1
    | ACL_PROF_TASK_TIME_L2
    | ACL_PROF_OP_ATTR
    | ACL_PROF_TASK_TIME_L3) as u64
    | ACL_PROF_API_STATS;

/// Configs made by `aclprofCreateConfig`, by address (the handle is the
/// address of the boxed settings; it is looked up, never dereferenced).
static CONFIGS: Mutex<Option<HashMap<usize, Box<Settings>>>> = Mutex::new(None);

fn code_of(e: &ProfError) -> aclError {
    match e.kind {
        ProfErrorKind::NotInitialized => ACL_ERROR_PROF_NOT_RUN,
        ProfErrorKind::AlreadyInitialized => ACL_ERROR_REPEAT_INITIALIZE,
        ProfErrorKind::BadPath => ACL_ERROR_INVALID_FILE,
        ProfErrorKind::AlreadyRunning => ACL_ERROR_PROF_ALREADY_RUN,
        ProfErrorKind::ConfigMismatch => ACL_ERROR_INVALID_PROFILING_CONFIG,
    }
}

fn prof_fail(function: &str, e: &ProfError) -> aclError {
    fail(code_of(e), format!("{function}: {}", e.msg))
}

/// The data types as the runtime keeps them (`aclprofCreateConfig`,
/// `prof_acl_api.cpp`): the task-time levels imply the lower ones and the
/// training trace; `ACL_PROF_API_STATS` keeps only itself and the API.
fn normalise(mut bits: u64) -> u64 {
    let b = |c: u32| u64::from(c);
    if bits & ACL_PROF_API_STATS != 0 {
        return b(ACL_PROF_ACL_API) | ACL_PROF_API_STATS;
    }
    if bits & b(ACL_PROF_TASK_TIME_L3) != 0 {
        bits |= b(ACL_PROF_TASK_TIME_L2);
    }
    if bits & b(ACL_PROF_TASK_TIME_L2 | ACL_PROF_OP_ATTR) != 0 {
        bits |= b(ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME);
    }
    if bits & b(ACL_PROF_TASK_TIME | ACL_PROF_TASK_TIME_L0) != 0 {
        bits |= b(ACL_PROF_TRAINING_TRACE);
    }
    bits
}

/// A C string argument with its length: not null, `length` in
/// `[1, max]` and equal to the string's (`ProfInit`, `CheckProfInitPath`;
/// `CheckAclProfSetConfigInput`).
///
/// # Safety
///
/// `text` is null or NUL-terminated.
unsafe fn c_text(
    function: &str,
    name: &str,
    text: *const c_char,
    length: usize,
    max: usize,
) -> Result<String, aclError> {
    let invalid = |why: String| fail(ACL_ERROR_INVALID_PARAM, format!("{function}: {why}"));
    if text.is_null() {
        return Err(invalid(format!("{name} is null")));
    }
    if length == 0 || length > max {
        return Err(invalid(format!(
            "the length {length} of {name} is not in [1, {max}]"
        )));
    }
    // SAFETY: non-null and NUL-terminated by contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    if bytes.len() != length {
        return Err(invalid(format!(
            "the length {length} is not that of {name} ({} bytes)",
            bytes.len()
        )));
    }
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// `profiling is not initialized`, as the code of `function`.
fn not_initialized(function: &str, code: aclError) -> aclError {
    fail(
        code,
        format!("{function}: profiling is not initialized: call aclprofInit first"),
    )
}

/// `aclprofInit`.
///
/// # Safety
///
/// `path` is null or valid for reading `length` bytes and NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofInit(path: *const c_char, length: usize) -> aclError {
    const F: &str = "aclprofInit";
    if let Some(code) = faults::check(F) {
        return code;
    }
    // SAFETY: `path` is null or NUL-terminated by contract.
    let path = tri!(unsafe { c_text(F, "profilerResultPath", path, length, MAX_PATH - 1) });
    match profiler::init(std::path::Path::new(&path)) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => prof_fail(F, &e),
    }
}

/// `aclprofFinalize`: stops every running profile (writing its data) and
/// ends the session.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofFinalize() -> aclError {
    const F: &str = "aclprofFinalize";
    if let Some(code) = faults::check(F) {
        return code;
    }
    match profiler::finalize() {
        Ok(()) => ACL_SUCCESS,
        Err(e) => prof_fail(F, &e),
    }
}

/// `aclprofSetConfig`: an option for later runs (kept, without effect on
/// the simulator's data).
///
/// # Safety
///
/// `config` is null or valid for reading `length` bytes and NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofSetConfig(
    kind: aclprofConfigType,
    config: *const c_char,
    length: usize,
) -> aclError {
    const F: &str = "aclprofSetConfig";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !profiler::initialized() {
        return not_initialized(F, ACL_ERROR_UNINITIALIZE);
    }
    if kind == ACL_PROF_ARGS_MIN || kind >= ACL_PROF_ARGS_MAX {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: config type {kind} is not in ({ACL_PROF_ARGS_MIN}, {ACL_PROF_ARGS_MAX})"),
        );
    }
    // SAFETY: `config` is null or NUL-terminated by contract.
    let value = tri!(unsafe { c_text(F, "config", config, length, MAX_CONFIG_VALUE) });
    match profiler::set_option(kind, value) {
        Ok(()) => ACL_SUCCESS,
        Err(_) => not_initialized(F, ACL_ERROR_UNINITIALIZE),
    }
}

/// `aclprofCreateConfig`: a config, or NULL (with a message) when the
/// devices or events are invalid.
///
/// # Safety
///
/// `device_ids` is null or valid for reading `count` ids.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofCreateConfig(
    device_ids: *mut u32,
    count: u32,
    metrics: aclprofAicoreMetrics,
    events: *const aclprofAicoreEvents,
    data_types: u64,
) -> *mut aclprofConfig {
    const F: &str = "aclprofCreateConfig";
    if let Some(code) = faults::check(F) {
        fail(code, format!("{F}: injected fault"));
        return std::ptr::null_mut();
    }
    let refuse = |why: String| {
        record(format!("{F}: {why}; no config was made"));
        std::ptr::null_mut()
    };
    let devices = crate::config::get().map_or(0, crate::config::Config::device_count);
    if !events.is_null() {
        return refuse("aicoreEvents must be null (AI Core events are not supported)".into());
    }
    if count > devices || count > MAX_DEVICES {
        return refuse(format!(
            "deviceNums {count} is more than the {devices} devices (at most {MAX_DEVICES})"
        ));
    }
    if count == 0 && data_types & u64::from(ACL_PROF_MSPROFTX) == 0 {
        return refuse("deviceNums is 0, which only ACL_PROF_MSPROFTX allows".into());
    }
    if count > 0 && device_ids.is_null() {
        return refuse(format!("deviceIdList is null with deviceNums {count}"));
    }
    let ids: Vec<u32> = if count == 0 {
        Vec::new()
    } else {
        // SAFETY: non-null and, by contract, valid for `count` ids.
        unsafe { std::slice::from_raw_parts(device_ids, count as usize) }.to_vec()
    };
    for (i, &d) in ids.iter().enumerate() {
        if d >= devices {
            return refuse(format!(
                "device id {d} is out of range [0, {devices}) (the visible devices)"
            ));
        }
        if ids[..i].contains(&d) {
            return refuse(format!("device id {d} is repeated"));
        }
    }
    let settings = Box::new(Settings {
        devices: ids,
        metrics,
        data_types: normalise(data_types),
    });
    let handle = std::ptr::from_ref::<Settings>(&settings) as usize;
    CONFIGS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle, settings);
    handle as *mut aclprofConfig
}

/// The settings of a config `aclprofCreateConfig` made.
fn lookup(config: *const aclprofConfig) -> Option<Settings> {
    CONFIGS
        .lock()
        .as_ref()?
        .get(&(config as usize))
        .map(|s| (**s).clone())
}

/// `aclprofDestroyConfig`.
///
/// # Safety
///
/// None: the handle is looked up, never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofDestroyConfig(config: *const aclprofConfig) -> aclError {
    const F: &str = "aclprofDestroyConfig";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if config.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: profilerConfig is null"),
        );
    }
    let removed = CONFIGS
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&(config as usize)));
    match removed {
        Some(_) => ACL_SUCCESS,
        None => fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: {config:p} is not a config aclprofCreateConfig made (or it was destroyed)"
            ),
        ),
    }
}

/// The settings of a Start or Stop: the config's, checked
/// (`preCheckProfConfig`).
fn checked(function: &str, config: *const aclprofConfig) -> Result<Settings, aclError> {
    let Some(s) = lookup(config) else {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: {config:p} is not a config aclprofCreateConfig made (or it was destroyed)"
            ),
        ));
    };
    if s.data_types == 0 || s.devices.len() > 65 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: the config has no data type or too many devices"),
        ));
    }
    let unknown = s.data_types & !KNOWN_BITS;
    if unknown != 0 {
        return Err(fail(
            ACL_ERROR_PROF_MODULES_UNSUPPORTED,
            format!("{function}: data type bits {unknown:#x} are not supported"),
        ));
    }
    Ok(s)
}

/// `aclprofStart`.
///
/// # Safety
///
/// None: the config is looked up, never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofStart(config: *const aclprofConfig) -> aclError {
    const F: &str = "aclprofStart";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !profiler::initialized() {
        return not_initialized(F, ACL_ERROR_PROF_NOT_RUN);
    }
    let settings = if config.is_null() {
        Settings {
            devices: vec![crate::state::current_device().unwrap_or(0)],
            metrics: ACL_AICORE_NONE,
            data_types: normalise(u64::from(ACL_PROF_ACL_API | ACL_PROF_TASK_TIME)),
        }
    } else {
        tri!(checked(F, config))
    };
    match profiler::start(&settings) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => prof_fail(F, &e),
    }
}

/// `aclprofStop`.
///
/// # Safety
///
/// None: the config is looked up, never dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofStop(config: *const aclprofConfig) -> aclError {
    const F: &str = "aclprofStop";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !profiler::initialized() {
        return not_initialized(F, ACL_ERROR_PROF_NOT_RUN);
    }
    let settings = if config.is_null() {
        None
    } else {
        Some(tri!(checked(F, config)))
    };
    match profiler::stop(settings.as_ref()) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => prof_fail(F, &e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_types_are_normalised_as_the_runtime_does() {
        let b = |c: u32| u64::from(c);
        let trace = b(ACL_PROF_TRAINING_TRACE);
        assert_eq!(normalise(b(ACL_PROF_ACL_API)), b(ACL_PROF_ACL_API));
        assert_eq!(
            normalise(b(ACL_PROF_TASK_TIME)),
            b(ACL_PROF_TASK_TIME) | trace
        );
        assert_eq!(
            normalise(b(ACL_PROF_OP_ATTR)),
            b(ACL_PROF_OP_ATTR | ACL_PROF_TASK_TIME_L0 | ACL_PROF_TASK_TIME) | trace
        );
        assert_eq!(
            normalise(b(ACL_PROF_TASK_TIME_L3)),
            b(ACL_PROF_TASK_TIME_L3 | ACL_PROF_TASK_TIME_L2 | ACL_PROF_TASK_TIME_L0)
                | b(ACL_PROF_TASK_TIME)
                | trace
        );
        assert_eq!(
            normalise(ACL_PROF_API_STATS | b(ACL_PROF_TASK_TIME)),
            b(ACL_PROF_ACL_API) | ACL_PROF_API_STATS
        );
    }
}

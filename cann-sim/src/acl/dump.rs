//! The dump API: `aclmdlInitDump`, `aclmdlSetDump`, `aclmdlFinalizeDump`,
//! `acldumpRegCallback`, `acldumpUnregCallback`, `acldumpGetPath`,
//! `aclopStartDumpArgs`, `aclopStopDumpArgs` — argument checks and codes
//! (hicann/runtime `src/acl/aclrt_impl/toolchain/dump.cpp`,
//! `src/acl/common/json_parser.cpp`, `src/dfx/adump/adump/host/adx_datadump_callback.cpp`,
//! `src/dfx/adump/adump/manage/adump_api_platform.cpp`). What is dumped, and
//! the file format, are [`crate::model::dump`]'s.

use super::common;
use crate::faults;
use crate::model::dump::{self, ConfigError};
use crate::recent_error::fail;
use crate::state;
use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_DUMP_NOT_RUN, ACL_ERROR_FAILURE,
    ACL_ERROR_INVALID_DUMP_CONFIG, ACL_ERROR_INVALID_FILE, ACL_ERROR_PARSE_FILE,
    ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_UNINITIALIZE, ACL_OP_DUMP_OP_AICORE_ARGS, ACL_SUCCESS,
    DATA_DUMP, OVERFLOW_DUMP, aclError, acldumpChunk, acldumpType,
};
use parking_lot::Mutex;
use std::ffi::{CStr, CString, c_char};

/// Config files the runtime reads: at most 10 MiB (`JsonParser::IsValidFileName`).
const MAX_CONFIG_BYTES: u64 = 10 << 20;
/// Nesting the runtime accepts (`MAX_CONFIG_OBJ_DEPTH`, `MAX_CONFIG_ARRAY_DEPTH`).
const MAX_DEPTH: usize = 10;

/// `aclInit` must come first: 100001 (the EP0008 checks of `dump.cpp`).
fn acl_initialized(function: &str) -> Result<(), aclError> {
    if state::global().lock().init_refs > 0 {
        return Ok(());
    }
    Err(fail(
        ACL_ERROR_UNINITIALIZE,
        format!("{function}: aclInit must be executed before {function} is called"),
    ))
}

/// `aclmdlInitDump` must come first: 100045.
fn dump_initialized(function: &str) -> Result<(), aclError> {
    if dump::initialized() {
        return Ok(());
    }
    Err(fail(
        ACL_ERROR_DUMP_NOT_RUN,
        format!("{function}: aclmdlInitDump must be executed before {function} is called"),
    ))
}

/// `aclmdlInitDump`: turns the dump on (the config comes with
/// `aclmdlSetDump`, or the data goes to a callback).
///
/// Before `aclInit` → 100001; called twice → 100002.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlInitDump() -> aclError {
    const F: &str = "aclmdlInitDump";
    if let Some(code) = faults::check(F) {
        return code;
    }
    tri!(acl_initialized(F));
    if !dump::init() {
        return fail(
            ACL_ERROR_REPEAT_INITIALIZE,
            format!("{F}: this API cannot be called repeatedly (aclmdlFinalizeDump first)"),
        );
    }
    ACL_SUCCESS
}

/// The text of the dump config file (`JsonParser::GetConfigStrFromFile`):
/// not a regular file of at most 10 MiB → 100003; nested deeper than 10 →
/// 100006.
fn read_config(function: &str, path: &str) -> Result<String, aclError> {
    let invalid = |why: String| {
        fail(
            ACL_ERROR_INVALID_FILE,
            format!("{function}: the dump config file {path:?} {why}"),
        )
    };
    match std::fs::metadata(path) {
        Err(e) => return Err(invalid(format!("cannot be read: {e}"))),
        Ok(m) if !m.is_file() => return Err(invalid("is not a regular file".into())),
        Ok(m) if m.len() > MAX_CONFIG_BYTES => {
            return Err(invalid(format!("is {} bytes, more than 10 MiB", m.len())));
        }
        Ok(_) => {}
    }
    let text = std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| invalid(format!("cannot be read: {e}")))?;
    let (max_objects, max_arrays) = super::common::json_depth(&text);
    if max_objects > MAX_DEPTH || max_arrays > MAX_DEPTH {
        return Err(fail(
            ACL_ERROR_PARSE_FILE,
            format!(
                "{function}: the dump config file {path:?} nests objects {max_objects} deep and \
                 arrays {max_arrays} deep; the runtime accepts at most {MAX_DEPTH}"
            ),
        ));
    }
    Ok(text)
}

/// `aclmdlSetDump`: reads the dump config (see `crate::model::dump` for
/// what the simulator dumps); a later call replaces the config.
///
/// Before `aclInit` → 100001; before `aclmdlInitDump` → 100045; null →
/// 100000; not a readable regular file → 100003; nested deeper than 10 →
/// 100006; not JSON, a field of the wrong type or value, a `dump_path`
/// missing, empty, longer than 512 or not a directory → 100009
/// (`dump_config_converter.cpp`); a dump the simulator does not make
/// (model layers, exceptions, overflow) → 200000; `dump_stats` without
/// `dump_data` `stats`, empty, or naming an unknown item → 100009
/// (`CheckDumpStats`, `InitDumpStatsItem`). An empty
/// file, or one without a `"dump"` object, turns nothing on.
///
/// # Safety
///
/// `dumpCfgPath` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlSetDump(dump_cfg_path: *const c_char) -> aclError {
    const F: &str = "aclmdlSetDump";
    if let Some(code) = faults::check(F) {
        return code;
    }
    tri!(acl_initialized(F));
    tri!(dump_initialized(F));
    if dump_cfg_path.is_null() {
        return common::null_arg(F, "dumpCfgPath");
    }
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let path = unsafe { CStr::from_ptr(dump_cfg_path) }
        .to_string_lossy()
        .into_owned();
    let text = tri!(read_config(F, &path));
    if text.is_empty() {
        return ACL_SUCCESS;
    }
    match dump::parse_config(&text) {
        Ok(config) => {
            dump::set(config);
            ACL_SUCCESS
        }
        Err(ConfigError::Invalid(why)) => fail(
            ACL_ERROR_INVALID_DUMP_CONFIG,
            format!("{F}: the dump config {path:?} is invalid: {why}"),
        ),
        Err(ConfigError::NotSupported(why)) => fail(
            ACL_ERROR_API_NOT_SUPPORT,
            format!("{F}: the dump config {path:?}: {why} by cann-sim"),
        ),
    }
}

/// `aclmdlFinalizeDump`: waits for the dump records of the operators run
/// so far to be written (or given to the callback), then turns the dump
/// off.
///
/// Before `aclInit` → 100001; before `aclmdlInitDump` → 100045.
#[unsafe(no_mangle)]
pub extern "C" fn aclmdlFinalizeDump() -> aclError {
    const F: &str = "aclmdlFinalizeDump";
    if let Some(code) = faults::check(F) {
        return code;
    }
    tri!(acl_initialized(F));
    tri!(dump_initialized(F));
    dump::finalize();
    ACL_SUCCESS
}

/// `acldumpRegCallback`: the dump data goes to `messageCallback` in chunks
/// instead of files (on the simulator's dump thread, after the operator
/// ran). `flag` must be 0 (no files are written).
///
/// Null callback, or `flag` not 0 → 500001 (`adx_datadump_callback.cpp`).
///
/// # Safety
///
/// `messageCallback` is null or a function safe to call with a valid chunk
/// from another thread until `acldumpUnregCallback` returns.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acldumpRegCallback(
    message_callback: Option<unsafe extern "C" fn(*const acldumpChunk, i32) -> i32>,
    flag: i32,
) -> aclError {
    const F: &str = "acldumpRegCallback";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let Some(cb) = message_callback else {
        return fail(ACL_ERROR_FAILURE, format!("{F}: messageCallback is null"));
    };
    if flag != 0 {
        return fail(
            ACL_ERROR_FAILURE,
            format!("{F}: flag {flag} is invalid; the reserved parameter must be 0"),
        );
    }
    dump::register(cb);
    ACL_SUCCESS
}

/// `acldumpUnregCallback`: waits for the chunks in flight, then forgets the
/// callback.
#[unsafe(no_mangle)]
pub extern "C" fn acldumpUnregCallback() {
    const F: &str = "acldumpUnregCallback";
    if faults::check(F).is_some() {
        return;
    }
    dump::unregister();
}

/// The C strings `acldumpGetPath` returned: kept for the process's life (a
/// caller may hold the pointer).
static PATHS: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// `acldumpGetPath`: the dump path of `aclmdlSetDump` for `DATA_DUMP` and
/// `OVERFLOW_DUMP` (`adump_api_platform.cpp`), null when none is set; the
/// exception dump paths (`AIC_ERR_*`) are null (exception dumps are not
/// simulated), as is any other type.
#[unsafe(no_mangle)]
pub extern "C" fn acldumpGetPath(dump_type: acldumpType) -> *const c_char {
    const F: &str = "acldumpGetPath";
    if faults::check(F).is_some() {
        return std::ptr::null();
    }
    if dump_type != DATA_DUMP && dump_type != OVERFLOW_DUMP {
        return std::ptr::null();
    }
    let Some(path) = dump::data_path() else {
        return std::ptr::null();
    };
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return std::ptr::null();
    };
    let mut paths = PATHS.lock();
    if let Some(same) = paths.iter().find(|p| **p == c) {
        return same.as_ptr();
    }
    let p = c.as_ptr();
    paths.push(c);
    p
}

/// `aclopStartDumpArgs`: from now on, each aclnn or aclop operator queued
/// writes its information file (type, data types, formats and shapes of its
/// inputs and outputs; one file per distinct shape) into `path`, made if
/// needed.
///
/// Null `path`, `dumpType` without `ACL_OP_DUMP_OP_AICORE_ARGS`, or a
/// directory that cannot be made → 500001 (`adump_api_platform.cpp`).
///
/// # Safety
///
/// `path` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopStartDumpArgs(dump_type: u32, path: *const c_char) -> aclError {
    const F: &str = "aclopStartDumpArgs";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if path.is_null() {
        return fail(ACL_ERROR_FAILURE, format!("{F}: path is null"));
    }
    if dump_type & ACL_OP_DUMP_OP_AICORE_ARGS != ACL_OP_DUMP_OP_AICORE_ARGS {
        return fail(
            ACL_ERROR_FAILURE,
            format!(
                "{F}: dumpType {dump_type:#x} is invalid; expected ACL_OP_DUMP_OP_AICORE_ARGS \
                 ({ACL_OP_DUMP_OP_AICORE_ARGS:#x})"
            ),
        );
    }
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    let dir =
        std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
    match dump::start_args(dir) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => fail(ACL_ERROR_FAILURE, format!("{F}: {}", e.msg)),
    }
}

/// `aclopStopDumpArgs`: stops the operator information files when
/// `dumpType` has `ACL_OP_DUMP_OP_AICORE_ARGS` (success either way).
#[unsafe(no_mangle)]
pub extern "C" fn aclopStopDumpArgs(dump_type: u32) -> aclError {
    const F: &str = "aclopStopDumpArgs";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dump_type & ACL_OP_DUMP_OP_AICORE_ARGS == ACL_OP_DUMP_OP_AICORE_ARGS {
        dump::stop_args();
    }
    ACL_SUCCESS
}

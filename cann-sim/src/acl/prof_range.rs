//! mstx-style tensor-info ranges (`acl_prof.h`): `aclprofStr2Id`,
//! `aclprofRangePushEx`, `aclprofRangePop`.
//!
//! Semantics of the release (hicann/runtime `src/dfx/msprof/collector/dvvp/`):
//!
//! - `aclprofStr2Id` (`msprofiler/prof_acl_core.cpp`, `profapi/src/prof_impl_inner_api.cpp`
//!   `MsprofGetHashId`): the id of a string, the same for the same string;
//!   an empty string is `UINT64_MAX`. (A null string crashes the release,
//!   which calls `strlen` on it; the simulator answers `UINT64_MAX` with a
//!   message.)
//! - `aclprofRangePushEx` (`profapi/src/prof_tx_plugin.cpp`
//!   `ProfTxPlugin::ProftxRangePushEx`): a null `attr` is 100000, a
//!   `messageType` other than `ACL_PROF_MESSAGE_TYPE_TENSOR_INFO` is -1;
//!   otherwise it keeps `attr` — one slot for the process, not a stack —
//!   and the time.
//! - `aclprofRangePop` (`ProftxRangePop`): without a push since the start,
//!   100000; else it reads the kept `attr`'s tensor info (the caller keeps
//!   it alive until then) and reports it with the push and pop times. The
//!   slot is not cleared: a second pop reports the same push again.
//!
//! The report is an msproftx span named after `opNameId`'s string (from
//! `aclprofStr2Id`) in a profiling run's trace and `msprof_tx` summary
//! (event type `push_pop_ex`), beside the marks and ranges of
//! [`super::prof_tx`]; outside a run it is dropped.

#![allow(non_snake_case)]

use super::common;
use crate::faults;
use crate::recent_error::{fail, record};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_PROF_MESSAGE_TYPE_TENSOR_INFO, ACL_SUCCESS, aclError,
    aclprofEventAttributes,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{CStr, c_char};

/// The profiler's failure status (`PROFILING_FAILED`).
const PROFILING_FAILED: aclError = -1;

/// The ids `aclprofStr2Id` gave, both ways.
#[derive(Default)]
struct Ids {
    by_text: HashMap<String, u64>,
    by_id: HashMap<u64, String>,
}

static IDS: Mutex<Option<Ids>> = Mutex::new(None);

/// The kept push: the caller's `attr` (an address, read at the pop) and
/// the push time.
static PUSHED: Mutex<Option<(usize, u64)>> = Mutex::new(None);

/// `aclprofStr2Id`: the id of `message` (`UINT64_MAX` for an empty or null
/// one).
///
/// # Safety
///
/// `message` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofStr2Id(message: *const c_char) -> u64 {
    const F: &str = "aclprofStr2Id";
    if faults::check(F).is_some() {
        return u64::MAX;
    }
    if message.is_null() {
        record(format!("{F}: message is null"));
        return u64::MAX;
    }
    // SAFETY: non-null and NUL-terminated (the C contract).
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    if text.is_empty() {
        record(format!("{F}: the message is empty, so it has no id"));
        return u64::MAX;
    }
    let mut guard = IDS.lock();
    let ids = guard.get_or_insert_with(Ids::default);
    if let Some(&id) = ids.by_text.get(&text) {
        return id;
    }
    let id = ids.by_text.len() as u64 + 1;
    ids.by_text.insert(text.clone(), id);
    ids.by_id.insert(id, text);
    id
}

/// `aclprofRangePushEx`: keeps `attr` and the time for the next
/// `aclprofRangePop`.
///
/// # Safety
///
/// `attr` is null or valid for reading, and stays so until the pops that
/// report it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofRangePushEx(attr: *mut aclprofEventAttributes) -> aclError {
    const F: &str = "aclprofRangePushEx";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if attr.is_null() {
        return common::null_arg(F, "attr");
    }
    // SAFETY: non-null and readable (the C contract).
    let kind = unsafe { (*attr).messageType };
    if kind != ACL_PROF_MESSAGE_TYPE_TENSOR_INFO {
        return fail(
            PROFILING_FAILED,
            format!(
                "{F}: messageType {kind} is invalid; expected \
                 ACL_PROF_MESSAGE_TYPE_TENSOR_INFO ({ACL_PROF_MESSAGE_TYPE_TENSOR_INFO})"
            ),
        );
    }
    *PUSHED.lock() = Some((attr as usize, crate::state::now_ns()));
    ACL_SUCCESS
}

/// `aclprofRangePop`: reports the kept push's tensor info with the push
/// and pop times.
///
/// # Safety
///
/// The `attr` of the last `aclprofRangePushEx`, and its tensor info, are
/// still valid for reading.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofRangePop() -> aclError {
    const F: &str = "aclprofRangePop";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let Some((attr, start)) = *PUSHED.lock() else {
        return fail(
            ACL_ERROR_INVALID_PARAM as aclError,
            format!("{F}: no aclprofRangePushEx came first"),
        );
    };
    let attr = attr as *const aclprofEventAttributes;
    // SAFETY: the pushed attributes are still readable (the C contract);
    // the union's one member is a pointer.
    let info = unsafe { (*attr).message.tensorInfo };
    if info.is_null() {
        return fail(
            PROFILING_FAILED,
            format!("{F}: the pushed attributes hold no tensor info"),
        );
    }
    // SAFETY: non-null and readable (the C contract).
    let (name_id, stream) = unsafe { ((*info).opNameId, (*info).stream) };
    // The release asks the runtime for the stream's attributes
    // (`rtsStreamGetAttribute`): a bad stream fails with -1.
    if common::stream_arg(F, stream).is_err() {
        return fail(
            PROFILING_FAILED,
            format!("{F}: the tensor info's stream {stream:p} is not a live stream"),
        );
    }
    let name = IDS
        .lock()
        .as_ref()
        .and_then(|ids| ids.by_id.get(&name_id).cloned())
        .unwrap_or_else(|| format!("opNameId {name_id}"));
    crate::trace::tx_span(F, &name, start, crate::state::now_ns());
    ACL_SUCCESS
}

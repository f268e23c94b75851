//! msproftx marks and ranges, and step timestamps (`acl_prof.h`):
//! `aclprofCreateStamp`, `aclprofDestroyStamp`, `aclprofSetStampTraceMessage`,
//! `aclprofMark`, `aclprofMarkEx`, `aclprofPush`, `aclprofPop`,
//! `aclprofRangeStart`, `aclprofRangeStop`; `aclprofCreateStepInfo`,
//! `aclprofGetStepTimestamp`, `aclprofDestroyStepInfo`.
//!
//! Semantics of the release (hicann/runtime `src/dfx/msprof/collector/dvvp/`:
//! `msprofiler/prof_acl_core.cpp`, `profimpl/adapter/src/msproftx_adaptor.cpp`,
//! `msprof/msproftx/src/msprof_tx_manager.cpp`,
//! `profapi/src/prof_cann_plugin.cpp` `ProfSetStepInfo`):
//!
//! - The msproftx calls work while a profiling run with `ACL_PROF_MSPROFTX`
//!   goes on ([`crate::profiler::tx_running`]). Outside one,
//!   `aclprofCreateStamp` returns null and the marks fail.
//! - Their failures return `PROFILING_FAILED`, that is **-1**, not an
//!   `aclError` of the headers (the release returns the profiler's own
//!   status as is), with a message for `aclGetRecentErrMsg`; a null `stamp`
//!   to `aclprofPush` or `aclprofRangeStart`, or a null `rangeId`, is
//!   `ACL_ERROR_INVALID_PARAM` (100000).
//! - `aclprofSetStampTraceMessage`: a message of 128 bytes or more fails.
//!   `aclprofMarkEx`: a null message or stream, a length other than the
//!   string's, or one outside 1–127 fails; the mark is also queued on the
//!   stream (a task named `MarkEx: <message>` in the device timeline).
//! - `aclprofPush`/`aclprofPop` pair on one thread (a pop without a push
//!   fails); `aclprofRangeStart` returns an id that `aclprofRangeStop` (on
//!   any thread) ends once.
//! - Step infos: `aclprofGetStepTimestamp` of a null step info, a second
//!   start or a second end is 100000 (any tag but `ACL_STEP_START` is an
//!   end); it queues a step marker on the stream
//!   whether or not a run goes on (the data is dropped without one).
//!
//! Marks and ranges are recorded as `msproftx` spans on the host thread (the
//! run's `msprof_*.json` and its `msprof_tx_*.csv` summary); the simulator
//! checks the stamps it is given against those it made, where the release
//! would dereference a stale pointer (a destroyed stamp fails instead).

#![allow(non_snake_case)]

use super::common;
use super::memory_async::enqueue;
use crate::faults;
use crate::recent_error::{fail, record};
use crate::rt::stream::TaskKind;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_STEP_START, ACL_SUCCESS, aclError, aclprofStepInfo,
    aclprofStepTag, aclrtStream,
};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The profiler's failure status (`PROFILING_FAILED`).
const PROFILING_FAILED: aclError = -1;
/// Messages are shorter than this (`MAX_MSG_LEN`, bytes).
const MAX_MESSAGE: usize = 128;

/// A stamp: its message and the start of its open push or range.
#[derive(Debug, Default)]
struct Stamp {
    message: String,
}

/// Live stamps by handle (the address of their box, looked up, never
/// dereferenced).
static STAMPS: Mutex<Option<HashMap<usize, Box<Stamp>>>> = Mutex::new(None);
/// Open ranges by id: message and start.
static RANGES: Mutex<Option<HashMap<u32, (String, u64)>>> = Mutex::new(None);
static NEXT_RANGE: AtomicU32 = AtomicU32::new(1);

thread_local! {
    /// The calling thread's open pushes: message and start.
    static PUSHED: RefCell<Vec<(String, u64)>> = const { RefCell::new(Vec::new()) };
}

/// Fails `function` with -1 and `why`.
fn failed(function: &str, why: &str) -> aclError {
    fail(PROFILING_FAILED, format!("{function}: {why}"))
}

/// The -1 of a call made while no msproftx run goes on.
fn not_running(function: &str) -> aclError {
    failed(
        function,
        "msproftx is not initialised: call it between aclprofStart and aclprofStop of a \
         config with ACL_PROF_MSPROFTX",
    )
}

/// The message of a live stamp.
fn stamp_message(stamp: *mut c_void) -> Option<String> {
    STAMPS
        .lock()
        .as_ref()?
        .get(&(stamp as usize))
        .map(|s| s.message.clone())
}

/// `aclprofCreateStamp`: a new stamp, or null outside a msproftx run.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofCreateStamp() -> *mut c_void {
    const F: &str = "aclprofCreateStamp";
    if faults::check(F).is_some() {
        return std::ptr::null_mut();
    }
    if !crate::profiler::tx_running() {
        record(format!(
            "{F}: msproftx is not initialised: call aclprofStart (with ACL_PROF_MSPROFTX) \
             before aclprofCreateStamp"
        ));
        return std::ptr::null_mut();
    }
    let stamp = Box::new(Stamp::default());
    let handle = (&*stamp as *const Stamp).cast_mut().cast::<c_void>();
    STAMPS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle as usize, stamp);
    handle
}

/// `aclprofDestroyStamp`: releases a stamp; null or unknown is ignored
/// (with a message for null).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroyStamp(stamp: *mut c_void) {
    const F: &str = "aclprofDestroyStamp";
    if faults::check(F).is_some() {
        return;
    }
    if stamp.is_null() {
        record(format!("{F}: stamp is nullptr"));
        return;
    }
    if let Some(all) = STAMPS.lock().as_mut() {
        all.remove(&(stamp as usize));
    }
}

/// `aclprofSetStampTraceMessage`: the message the stamp's marks carry.
///
/// # Safety
///
/// `msg` is null or valid for `msg_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofSetStampTraceMessage(
    stamp: *mut c_void,
    msg: *const c_char,
    msg_len: u32,
) -> aclError {
    const F: &str = "aclprofSetStampTraceMessage";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stamp.is_null() {
        return failed(F, "stamp is nullptr");
    }
    if msg_len as usize >= MAX_MESSAGE {
        return failed(
            F,
            &format!("msg len ({msg_len}) is invalid, must be less than {MAX_MESSAGE} bytes"),
        );
    }
    if msg.is_null() {
        return failed(F, "msg is nullptr");
    }
    // SAFETY: `msg` is valid for `msg_len` bytes (the C contract).
    let bytes = unsafe { std::slice::from_raw_parts(msg.cast::<u8>(), msg_len as usize) };
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut guard = STAMPS.lock();
    match guard
        .as_mut()
        .and_then(|all| all.get_mut(&(stamp as usize)))
    {
        Some(s) => {
            s.message = text;
            ACL_SUCCESS
        }
        None => failed(
            F,
            "stamp was not made by aclprofCreateStamp or was destroyed",
        ),
    }
}

/// The message of `stamp` for `function`, or its failure.
fn live_stamp(function: &str, stamp: *mut c_void) -> Result<String, aclError> {
    if !crate::profiler::tx_running() {
        return Err(not_running(function));
    }
    if stamp.is_null() {
        return Err(failed(function, "stamp is nullptr"));
    }
    stamp_message(stamp).ok_or_else(|| {
        failed(
            function,
            "stamp was not made by aclprofCreateStamp or was destroyed",
        )
    })
}

/// `aclprofMark`: an instant event with the stamp's message.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofMark(stamp: *mut c_void) -> aclError {
    const F: &str = "aclprofMark";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let message = tri!(live_stamp(F, stamp));
    let now = crate::state::now_ns();
    crate::trace::tx_span(F, &message, now, now);
    ACL_SUCCESS
}

/// `aclprofPush`: opens a range on this thread with the stamp's message.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofPush(stamp: *mut c_void) -> aclError {
    const F: &str = "aclprofPush";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stamp.is_null() {
        return common::null_arg(F, "stamp");
    }
    let message = tri!(live_stamp(F, stamp));
    let now = crate::state::now_ns();
    PUSHED.with(|p| p.borrow_mut().push((message, now)));
    ACL_SUCCESS
}

/// `aclprofPop`: closes this thread's latest `aclprofPush`.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofPop() -> aclError {
    const F: &str = "aclprofPop";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !crate::profiler::tx_running() {
        return not_running(F);
    }
    let Some((message, start)) = PUSHED.with(|p| p.borrow_mut().pop()) else {
        return failed(
            F,
            "no aclprofPush of this thread is open (aclprofPush and aclprofPop pair on one thread)",
        );
    };
    crate::trace::tx_span(F, &message, start, crate::state::now_ns());
    ACL_SUCCESS
}

/// `aclprofRangeStart`: opens a range with the stamp's message; its id goes
/// to `*range_id`.
///
/// # Safety
///
/// `range_id` is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofRangeStart(stamp: *mut c_void, range_id: *mut u32) -> aclError {
    const F: &str = "aclprofRangeStart";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stamp.is_null() {
        return common::null_arg(F, "stamp");
    }
    if range_id.is_null() {
        return common::null_arg(F, "rangeId");
    }
    let message = tri!(live_stamp(F, stamp));
    let id = NEXT_RANGE.fetch_add(1, Ordering::Relaxed);
    RANGES
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(id, (message, crate::state::now_ns()));
    // SAFETY: non-null and writable (the C contract).
    unsafe { range_id.write(id) };
    ACL_SUCCESS
}

/// `aclprofRangeStop`: closes the range `range_id` (from any thread).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofRangeStop(range_id: u32) -> aclError {
    const F: &str = "aclprofRangeStop";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !crate::profiler::tx_running() {
        return not_running(F);
    }
    let Some((message, start)) = RANGES.lock().as_mut().and_then(|r| r.remove(&range_id)) else {
        return failed(
            F,
            &format!("range {range_id} is not open (aclprofRangeStart returns the ids)"),
        );
    };
    crate::trace::tx_span(F, &message, start, crate::state::now_ns());
    ACL_SUCCESS
}

/// Queues a marker task named `name` on `stream` (the runtime's
/// `rtProfilerTraceEx`): it does nothing but appear in the device timeline.
fn queue_marker(function: &'static str, stream: aclrtStream, name: String) -> aclError {
    let s = tri!(common::stream_arg(function, stream));
    let ctx = tri!(common::current(function));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(function, &s, &ctx));
    let kernel = Arc::new(move || {
        crate::trace::name_task(&name);
        Ok(())
    });
    enqueue(
        function,
        &s,
        TaskKind::Op {
            api: function,
            ranges: Vec::new(),
            kernel,
        },
    )
}

/// `aclprofMarkEx`: a mark on the host thread and, at the same point of
/// `stream`'s order, on the device.
///
/// # Safety
///
/// `msg` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclprofMarkEx(
    msg: *const c_char,
    msg_len: usize,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclprofMarkEx";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !crate::profiler::tx_running() {
        return not_running(F);
    }
    if msg.is_null() || stream.is_null() {
        return failed(
            F,
            "invalid input param for markEx: msg and stream must not be nullptr",
        );
    }
    // SAFETY: non-null and NUL-terminated (the C contract).
    let raw = unsafe { CStr::from_ptr(msg) };
    // The release compares `strlen(msg)`: bytes, before any decoding.
    let len = raw.to_bytes().len();
    if len != msg_len {
        return failed(
            F,
            &format!("msgLen {msg_len} is not the length of the message ({len})"),
        );
    }
    let text = raw.to_string_lossy().into_owned();
    if msg_len == 0 || msg_len >= MAX_MESSAGE {
        return failed(
            F,
            &format!(
                "the length of input message should be in range of 1~{}",
                MAX_MESSAGE - 1
            ),
        );
    }
    let rc = queue_marker(F, stream, format!("MarkEx: {text}"));
    if rc != ACL_SUCCESS {
        return rc;
    }
    let now = crate::state::now_ns();
    crate::trace::tx_span(F, &text, now, now);
    ACL_SUCCESS
}

/// A step info: its number and which of its two timestamps were taken.
#[derive(Debug)]
struct StepInfo {
    index: u64,
    started: bool,
    ended: bool,
}

/// Live step infos by handle (looked up, never dereferenced).
static STEPS: Mutex<Option<HashMap<usize, Box<StepInfo>>>> = Mutex::new(None);
static NEXT_STEP: AtomicU64 = AtomicU64::new(0);

/// `aclprofCreateStepInfo`: a new step info, numbered in creation order.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofCreateStepInfo() -> *mut aclprofStepInfo {
    const F: &str = "aclprofCreateStepInfo";
    if faults::check(F).is_some() {
        return std::ptr::null_mut();
    }
    let step = Box::new(StepInfo {
        index: NEXT_STEP.fetch_add(1, Ordering::Relaxed),
        started: false,
        ended: false,
    });
    let handle = (&*step as *const StepInfo)
        .cast_mut()
        .cast::<aclprofStepInfo>();
    STEPS
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(handle as usize, step);
    handle
}

/// `aclprofDestroyStepInfo`: releases a step info (null: a message only).
#[unsafe(no_mangle)]
pub extern "C" fn aclprofDestroyStepInfo(step: *mut aclprofStepInfo) {
    const F: &str = "aclprofDestroyStepInfo";
    if faults::check(F).is_some() {
        return;
    }
    if step.is_null() {
        record(format!(
            "{F}: destroy stepInfo failed, stepInfo must not be nullptr"
        ));
        return;
    }
    if let Some(all) = STEPS.lock().as_mut() {
        all.remove(&(step as usize));
    }
}

/// `aclprofGetStepTimestamp`: marks the start or the end of a step on
/// `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn aclprofGetStepTimestamp(
    step: *mut aclprofStepInfo,
    tag: aclprofStepTag,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclprofGetStepTimestamp";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if step.is_null() {
        return common::null_arg(F, "stepInfo");
    }
    let index = {
        let mut guard = STEPS.lock();
        let Some(info) = guard.as_mut().and_then(|all| all.get_mut(&(step as usize))) else {
            return fail(
                ACL_ERROR_INVALID_PARAM as aclError,
                format!("{F}: stepInfo was not made by aclprofCreateStepInfo or was destroyed"),
            );
        };
        // Any tag but ACL_STEP_START is an end, as the release reads it.
        let (done, what) = if tag == ACL_STEP_START {
            (&mut info.started, "started")
        } else {
            (&mut info.ended, "stopped")
        };
        if *done {
            return fail(
                ACL_ERROR_INVALID_PARAM as aclError,
                format!("{F}: this stepInfo already {what}"),
            );
        }
        *done = true;
        info.index
    };
    let edge = if tag == ACL_STEP_START {
        "start"
    } else {
        "end"
    };
    queue_marker(F, stream, format!("step {index} {edge}"))
}

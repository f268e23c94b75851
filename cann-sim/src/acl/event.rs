//! Events: creation, record, reset, query, synchronisation, timing.
//!
//! An event completes when the worker of the stream it was recorded on
//! reaches the record, which stamps it with the simulator's monotonic clock.
//! A re-recorded event reflects its latest record (as in CUDA): status,
//! synchronisation and timing use the record made by the latest
//! `aclrtRecordEvent` call.
//!
//! Semantics and codes (hicann/runtime `src/acl/aclrt_impl/event.cpp`,
//! `src/runtime/api/api_c.cc` `rtEvent*`, `src/runtime/api/impl/api_error.cc`
//! `Event*`, `api_impl.cc`, `api_impl_event_common.cc`,
//! `src/runtime/core/src/event/event.cc`; `docs/zh/api_ref/07_event_management.md`):
//!
//! - Null pointers → 100000 (ACL layer); destroyed or unknown handles →
//!   107017; no current context → 107002 (creation, record, reset).
//! - `aclrtCreateEvent` makes a timed, waitable event (`RT_EVENT_DEFAULT` =
//!   `DDSYNC | TIME_LINE | STREAM_MARK` = 0xE).
//! - `aclrtCreateEventWithFlag`: flag 0 or bits above 0x3F → 107000;
//!   `ACL_EVENT_DEVICE_USE_ONLY` or `ACL_EVENT_EXTERNAL` with another flag →
//!   107000 (`ApiErrorDecorator::EventCreate`).
//!   `aclrtCreateEventExWithFlag`: `ACL_EVENT_DEVICE_USE_ONLY`,
//!   `ACL_EVENT_EXTERNAL` or `ACL_EVENT_IPC` with another flag → 107000;
//!   no bit of 0x4F or bits above it → 107000 (`EventCreateEx`).
//! - IPC events (`ACL_EVENT_IPC`, `event_ipc.rs`, `rt::ipc_event`): record,
//!   wait, synchronise and `aclrtQueryEventStatus` work across processes;
//!   reset, the deprecated query, timing and use in a capture → 207000
//!   (`ApiErrorDecorator::EventReset`, `EventQuery`, `EventElapsedTime`,
//!   `EventGetTimeStamp`, `EventRecord`, `StreamWaitEvent` in
//!   `src/runtime/api/impl/api_error.cc`).
//! - More than `CANN_SIM_MAX_EVENTS` live events on a device → 207007.
//! - Record/wait/reset on a stream of another context → 107003;
//!   `ACL_EVENT_DEVICE_USE_ONLY` events → 107000.
//! - `aclrtResetEvent`: events without `ACL_EVENT_SYNC`, and events made by
//!   `aclrtCreateEventExWithFlag`, → 207000.
//! - `aclrtQueryEventStatus`: `ACL_EVENT_RECORDED_STATUS_COMPLETE` (1) when
//!   the latest record is done, else `..._NOT_READY` (0); before any record,
//!   NOT_READY, except for `aclrtCreateEventExWithFlag` events (COMPLETE).
//!   Deprecated `aclrtQueryEvent`: `ACL_EVENT_STATUS_COMPLETE` (0) unless a
//!   record is pending (`ACL_EVENT_STATUS_NOT_READY`, 1); Ex events → 207000.
//! - `aclrtSynchronizeEvent` waits for the latest record (an event never
//!   recorded returns at once); it returns the fault of a task that failed on
//!   the recording stream before the record. The timeout variant takes −1
//!   or a positive number of ms (below −1 or 0 → 107000); expiry →
//!   `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` (507047).
//! - `aclrtEventElapsedTime(ms, start, end)`: either event never recorded →
//!   `ACL_ERROR_RT_INTERNAL_ERROR` (507000, `RT_ERROR_EVENT_RECORDER_NULL`);
//!   recorded but not complete → `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID`
//!   (107006). The result is `end - start` in ms and may be negative. An event
//!   created without `ACL_EVENT_TIME_LINE` records no timestamp (the flag is
//!   what "records timestamp information", per the API reference), so it
//!   gives 107006 too. `aclrtEventGetTimestamp` gives microseconds on the
//!   simulator's clock, with the same errors.
//! - `ACL_EVENT_EXTERNAL` events cannot be synchronised, queried or timed
//!   (207000).

use super::common::code;
use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use super::stream::takes_host_work;
use crate::faults;
use crate::recent_error::fail;
use crate::rt;
use crate::rt::completion::{Status, Wait};
use crate::rt::event::{Event, Record};
use crate::rt::stream::TaskKind;
use acl_sys::{
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_DEVICE_USE_ONLY, ACL_EVENT_EXTERNAL,
    ACL_EVENT_IPC, ACL_EVENT_RECORDED_STATUS_COMPLETE, ACL_EVENT_RECORDED_STATUS_NOT_READY,
    ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY, ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE,
    ACL_SUCCESS, aclError, aclrtEvent, aclrtEventRecordedStatus, aclrtEventStatus, aclrtStream,
};
use std::sync::Arc;
use std::time::Instant;

/// `RT_EVENT_DDSYNC` (`pkg_inc/runtime/runtime/event.h`): a runtime flag
/// (no ACL name) that the default event carries; it makes the event waitable.
pub const RT_EVENT_DDSYNC: u32 = 0x4;
/// `RT_EVENT_DEFAULT = DDSYNC | TIME_LINE | STREAM_MARK`: the flags of
/// `aclrtCreateEvent` (`pkg_inc/runtime/runtime/event.h`).
pub const RT_EVENT_DEFAULT: u32 =
    RT_EVENT_DDSYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_CAPTURE_STREAM_PROGRESS;

/// Whether `e` can be waited for (`IsEventWithoutWaitTask` in
/// `src/runtime/core/inc/event/event.hpp`, inverted).
pub(super) fn is_waitable(e: &Event) -> bool {
    e.flags & (RT_EVENT_DDSYNC | ACL_EVENT_SYNC | ACL_EVENT_EXTERNAL | ACL_EVENT_IPC) != 0
}

/// `RT_EVENT_FLAG_MAX` (`src/runtime/core/inc/event/event.hpp`): the bits
/// `aclrtCreateEventWithFlag` accepts.
const FLAG_MAX: u32 = ACL_EVENT_SYNC
    | ACL_EVENT_CAPTURE_STREAM_PROGRESS
    | RT_EVENT_DDSYNC
    | ACL_EVENT_TIME_LINE
    | ACL_EVENT_DEVICE_USE_ONLY
    | ACL_EVENT_EXTERNAL;
/// The bits `aclrtCreateEventExWithFlag` accepts (`EventCreateEx`).
const EX_FLAG_MAX: u32 = ACL_EVENT_SYNC
    | ACL_EVENT_CAPTURE_STREAM_PROGRESS
    | RT_EVENT_DDSYNC
    | ACL_EVENT_TIME_LINE
    | ACL_EVENT_IPC;

fn feature(function: &str, why: String) -> aclError {
    fail(
        code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        format!("{function}: {why}"),
    )
}

/// IPC events refuse what their shared record cannot answer (207000).
pub(super) fn not_ipc(function: &str, e: &Event, what: &str) -> Result<(), aclError> {
    if e.ipc.is_some() {
        return Err(feature(
            function,
            format!("an IPC event (ACL_EVENT_IPC) cannot be {what}"),
        ));
    }
    Ok(())
}

fn external(function: &str, e: &Event) -> Result<(), aclError> {
    if e.flags == ACL_EVENT_EXTERNAL {
        return Err(feature(
            function,
            "an ACL_EVENT_EXTERNAL event cannot be synchronised, queried or timed".into(),
        ));
    }
    Ok(())
}

fn device_only(function: &str, e: &Event) -> Result<(), aclError> {
    if e.flags & ACL_EVENT_DEVICE_USE_ONLY != 0 {
        return Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: the event was created ACL_EVENT_DEVICE_USE_ONLY: it can be used on \
                 the device only"
            ),
        ));
    }
    Ok(())
}

unsafe fn create(function: &str, event: *mut aclrtEvent, flags: u32, ex_mode: bool) -> aclError {
    let ctx = tri!(common::current(function));
    match rt::create_event(ctx.device, flags, ex_mode) {
        Ok(e) => {
            // SAFETY: the callers checked `event` non-null; it is writable.
            unsafe { *event = e.handle() as aclrtEvent };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtCreateEvent`: a timed, waitable event in the current context.
///
/// # Safety
///
/// `event` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEvent(event: *mut aclrtEvent) -> aclError {
    const F: &str = "aclrtCreateEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    // SAFETY: checked non-null; forwarded caller contract.
    unsafe { create(F, event, RT_EVENT_DEFAULT, false) }
}

fn solo(function: &str, flag: u32, solo_flags: &[(u32, &str)]) -> Result<(), aclError> {
    for &(bit, name) in solo_flags {
        if flag & bit != 0 && flag & !bit != 0 {
            return Err(fail(
                PARAM_INVALID,
                format!("{function}: flag {flag:#x}: {name} cannot be combined with other flags"),
            ));
        }
    }
    Ok(())
}

/// `aclrtCreateEventWithFlag`: an event with `ACL_EVENT_*` flags.
///
/// # Safety
///
/// `event` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    const F: &str = "aclrtCreateEventWithFlag";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    if flag & FLAG_MAX == 0 || flag > FLAG_MAX {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: flag {flag:#x} is invalid; expected an OR of ACL_EVENT_SYNC (0x1), \
                 ACL_EVENT_CAPTURE_STREAM_PROGRESS (0x2) and ACL_EVENT_TIME_LINE (0x8), or \
                 ACL_EVENT_DEVICE_USE_ONLY (0x10) or ACL_EVENT_EXTERNAL (0x20) alone"
            ),
        );
    }
    if let Err(rc) = solo(
        F,
        flag,
        &[
            (ACL_EVENT_DEVICE_USE_ONLY, "ACL_EVENT_DEVICE_USE_ONLY"),
            (ACL_EVENT_EXTERNAL, "ACL_EVENT_EXTERNAL"),
        ],
    ) {
        return rc;
    }
    // SAFETY: checked non-null; forwarded caller contract.
    unsafe { create(F, event, flag, false) }
}

/// `aclrtCreateEventExWithFlag`: an event of the runtime's "new mode"
/// (reusable by re-recording; complete before its first record).
///
/// # Safety
///
/// `event` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateEventExWithFlag(event: *mut aclrtEvent, flag: u32) -> aclError {
    const F: &str = "aclrtCreateEventExWithFlag";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    if let Err(rc) = solo(
        F,
        flag,
        &[
            (ACL_EVENT_DEVICE_USE_ONLY, "ACL_EVENT_DEVICE_USE_ONLY"),
            (ACL_EVENT_EXTERNAL, "ACL_EVENT_EXTERNAL"),
            (ACL_EVENT_IPC, "ACL_EVENT_IPC"),
        ],
    ) {
        return rc;
    }
    if flag == ACL_EVENT_IPC {
        // SAFETY: checked non-null; forwarded caller contract.
        return unsafe { super::event_ipc::create_ipc(F, event) };
    }
    if flag & EX_FLAG_MAX == 0 || flag > EX_FLAG_MAX {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: flag {flag:#x} is invalid; expected an OR of ACL_EVENT_SYNC (0x1), \
                 ACL_EVENT_CAPTURE_STREAM_PROGRESS (0x2) and ACL_EVENT_TIME_LINE (0x8), or \
                 ACL_EVENT_IPC (0x40) alone"
            ),
        );
    }
    // SAFETY: checked non-null; forwarded caller contract.
    unsafe { create(F, event, flag, true) }
}

/// `aclrtDestroyEvent`: destroys the event at once; records still queued
/// complete normally (the docs allow destroying before completion).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyEvent(event: aclrtEvent) -> aclError {
    const F: &str = "aclrtDestroyEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    match common::event_arg(F, event) {
        Ok(e) => {
            rt::destroy_event(&e);
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtRecordEvent`: queues a record of `event` on `stream`; the event
/// completes when the stream reaches it.
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRecordEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const F: &str = "aclrtRecordEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let e = tri!(common::event_arg(F, event));
    let s = tri!(common::stream_arg(F, stream));
    tri!(device_only(F, &e));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    let capturing = s.capture.lock().clone();
    if let Some(m) = capturing {
        tri!(not_ipc(F, &e, "recorded in a capture"));
        return match rt::capture::record_event(&m, &s, &e) {
            Ok(()) => ACL_SUCCESS,
            Err(e) => rt_fail(F, e),
        };
    }
    let shared = s.shared.clone();
    match s.enqueue(|seq| TaskKind::Record(e.new_record(&shared, seq))) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtResetEvent`: queues a reset of `event` on `stream`: once the stream
/// reaches it, the records made before the call are forgotten.
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtResetEvent(event: aclrtEvent, stream: aclrtStream) -> aclError {
    const F: &str = "aclrtResetEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let e = tri!(common::event_arg(F, event));
    let s = tri!(common::stream_arg(F, stream));
    tri!(device_only(F, &e));
    tri!(not_ipc(F, &e, "reset (record it again instead)"));
    if !is_waitable(&e) {
        return feature(
            F,
            format!(
                "the event was created without ACL_EVENT_SYNC (flags {:#x}); there is nothing \
                 to reset",
                e.flags
            ),
        );
    }
    let ctx = tri!(common::current(F));
    if e.ex_mode {
        return feature(
            F,
            "events made by aclrtCreateEventExWithFlag cannot be reset (re-record them instead)"
                .into(),
        );
    }
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    let capturing = s.capture.lock().clone();
    if let Some(m) = capturing {
        return match rt::capture::reset_event(&m, &s, &e) {
            Ok(()) => ACL_SUCCESS,
            Err(e) => rt_fail(F, e),
        };
    }
    let upto = e.generation();
    match s.enqueue(|_| TaskKind::ResetEvent(e.clone(), upto)) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtQueryEventStatus`: whether the event's latest record is complete.
///
/// # Safety
///
/// `status` is null or valid for writing an `aclrtEventRecordedStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEventStatus(
    event: aclrtEvent,
    status: *mut aclrtEventRecordedStatus,
) -> aclError {
    const F: &str = "aclrtQueryEventStatus";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    if status.is_null() {
        return common::null_arg(F, "status");
    }
    let e = tri!(common::event_arg(F, event));
    tri!(common::event_not_captured(F, &e));
    tri!(external(F, &e));
    let complete = e.is_complete().unwrap_or(e.ex_mode);
    // SAFETY: checked non-null; the caller passes a writable status.
    unsafe {
        *status = if complete {
            ACL_EVENT_RECORDED_STATUS_COMPLETE
        } else {
            ACL_EVENT_RECORDED_STATUS_NOT_READY
        };
    }
    ACL_SUCCESS
}

/// `aclrtQueryEvent` (deprecated): `ACL_EVENT_STATUS_NOT_READY` while the
/// latest record is pending, else `ACL_EVENT_STATUS_COMPLETE`.
///
/// # Safety
///
/// `status` is null or valid for writing an `aclrtEventStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtQueryEvent(
    event: aclrtEvent,
    status: *mut aclrtEventStatus,
) -> aclError {
    const F: &str = "aclrtQueryEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    if status.is_null() {
        return common::null_arg(F, "status");
    }
    let e = tri!(common::event_arg(F, event));
    tri!(not_ipc(
        F,
        &e,
        "queried with the deprecated aclrtQueryEvent (use aclrtQueryEventStatus)"
    ));
    if e.ex_mode {
        return feature(
            F,
            "events made by aclrtCreateEventExWithFlag cannot be queried with the deprecated \
             aclrtQueryEvent (use aclrtQueryEventStatus)"
                .into(),
        );
    }
    tri!(common::event_not_captured(F, &e));
    tri!(external(F, &e));
    let pending = e.is_complete() == Some(false);
    // SAFETY: checked non-null; the caller passes a writable status.
    unsafe {
        *status = if pending {
            ACL_EVENT_STATUS_NOT_READY
        } else {
            ACL_EVENT_STATUS_COMPLETE
        };
    }
    ACL_SUCCESS
}

fn synchronize(function: &str, e: &Arc<Event>, deadline: Option<Instant>) -> aclError {
    tri!(common::event_not_captured(function, e));
    tri!(external(function, e));
    if let Some(ipc) = &e.ipc {
        // `IpcEvent::IpcEventSync`: the latest record of any process.
        let Some(n) = ipc.pending() else {
            return ACL_SUCCESS;
        };
        let timed_out = || rt::Error::new(rt::ErrorKind::TaskTimeout, String::new());
        return match ipc.wait(n, None, deadline, timed_out) {
            Ok(()) => ACL_SUCCESS,
            Err(err) if err.kind == rt::ErrorKind::TaskTimeout => fail(
                code(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
                format!(
                    "{function}: the IPC event's latest record did not complete within the \
                     timeout"
                ),
            ),
            Err(err) => rt_fail(function, err),
        };
    }
    let Some(record) = e.latest() else {
        return ACL_SUCCESS;
    };
    let stream = record.stream.upgrade();
    if let Some(shared) = &stream
        && rt::report::running_blocking_callback_of() == Arc::as_ptr(shared) as usize
        && !matches!(record.done.status(), Status::Done(_))
    {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: called from a blocking callback or host function of {}, which \
                 waits for the callback to return before it reaches the record; this would \
                 never return",
                shared.label()
            ),
        );
    }
    match record.done.wait(None, deadline) {
        Wait::Done(_) => {}
        Wait::TimedOut => {
            return fail(
                code(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
                format!(
                    "{function}: the event's latest record did not complete within the timeout"
                ),
            );
        }
        Wait::Cancelled(why) => {
            return fail(
                code(ACL_ERROR_RT_INTERNAL_ERROR),
                format!("{function}: {why}"),
            );
        }
        Wait::Aborted => {}
    }
    if let Some(shared) = stream
        && let Some(f) = shared.take_fault_upto(record.seq)
    {
        return common::report_fault(function, f);
    }
    ACL_SUCCESS
}

/// `aclrtSynchronizeEvent`: blocks until the event's latest record is
/// complete.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEvent(event: aclrtEvent) -> aclError {
    const F: &str = "aclrtSynchronizeEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let _span = crate::trace::host_span(F);
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    match common::event_arg(F, event) {
        Ok(e) => synchronize(F, &e, None),
        Err(rc) => rc,
    }
}

/// `aclrtSynchronizeEventWithTimeout`: like `aclrtSynchronizeEvent`, giving
/// up after `timeout` ms (−1: never).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeEventWithTimeout(
    event: aclrtEvent,
    timeout: i32,
) -> aclError {
    const F: &str = "aclrtSynchronizeEventWithTimeout";
    if let Some(code) = faults::check(F) {
        return code;
    }
    // The ACL layer checks timeout >= -1 before the event (event.cpp).
    if timeout < -1 {
        return fail(
            PARAM_INVALID,
            format!("{F}: timeout {timeout} is invalid; expected -1 or a positive number of ms"),
        );
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let e = tri!(common::event_arg(F, event));
    let deadline = tri!(common::deadline(F, timeout));
    synchronize(F, &e, deadline)
}

/// The completion time (ns) of the event's latest record.
fn timestamp(function: &str, which: &str, e: &Event) -> Result<u64, aclError> {
    let Some(record): Option<Arc<Record>> = e.latest() else {
        return Err(fail(
            code(ACL_ERROR_RT_INTERNAL_ERROR),
            format!("{function}: {which} has never been recorded (aclrtRecordEvent)"),
        ));
    };
    let invalid = |why: String| {
        fail(
            code(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID),
            format!("{function}: {which} {why}"),
        )
    };
    if e.flags & ACL_EVENT_TIME_LINE == 0 {
        return Err(invalid(format!(
            "was created without ACL_EVENT_TIME_LINE (flags {:#x}): it records no timestamp",
            e.flags
        )));
    }
    match record.done.status() {
        Status::Done(t) => Ok(t),
        _ => Err(invalid(
            "has not completed yet: its latest record is still queued (synchronise first)".into(),
        )),
    }
}

/// `aclrtEventElapsedTime`: milliseconds from `start`'s latest record to
/// `end`'s (negative when `end` completed first).
///
/// # Safety
///
/// `ms` is null or valid for writing an `f32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventElapsedTime(
    ms: *mut f32,
    start: aclrtEvent,
    end: aclrtEvent,
) -> aclError {
    const F: &str = "aclrtEventElapsedTime";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if ms.is_null() {
        return common::null_arg(F, "ms");
    }
    if start.is_null() {
        return common::null_arg(F, "startEvent");
    }
    if end.is_null() {
        return common::null_arg(F, "endEvent");
    }
    let (s, e) = match (common::event_arg(F, start), common::event_arg(F, end)) {
        (Ok(s), Ok(e)) => (s, e),
        (Err(rc), _) | (_, Err(rc)) => return rc,
    };
    if s.flags == ACL_EVENT_EXTERNAL || e.flags == ACL_EVENT_EXTERNAL {
        return feature(F, "ACL_EVENT_EXTERNAL events cannot be timed".into());
    }
    tri!(not_ipc(F, &s, "timed"));
    tri!(not_ipc(F, &e, "timed"));
    tri!(common::event_not_captured(F, &s));
    tri!(common::event_not_captured(F, &e));
    // The runtime checks "recorded" for both before the timestamps.
    for (which, ev) in [("startEvent", &s), ("endEvent", &e)] {
        if ev.latest().is_none() {
            return fail(
                code(ACL_ERROR_RT_INTERNAL_ERROR),
                format!("{F}: {which} has never been recorded (aclrtRecordEvent)"),
            );
        }
    }
    let t0 = tri!(timestamp(F, "startEvent", &s));
    let t1 = tri!(timestamp(F, "endEvent", &e));
    let elapsed = ((t1 as f64) - (t0 as f64)) / 1e6;
    // SAFETY: checked non-null; the caller passes a writable f32.
    unsafe { *ms = elapsed as f32 };
    ACL_SUCCESS
}

/// `aclrtEventGetTimestamp`: when the event's latest record completed, in
/// microseconds on the simulator's clock (since the simulated device's
/// "boot": the simulator's first use in the process).
///
/// # Safety
///
/// `timestamp_us` is null or valid for writing a `u64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtEventGetTimestamp(
    event: aclrtEvent,
    timestamp_us: *mut u64,
) -> aclError {
    const F: &str = "aclrtEventGetTimestamp";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if timestamp_us.is_null() {
        return common::null_arg(F, "timestamp");
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let e = tri!(common::event_arg(F, event));
    if e.flags == ACL_EVENT_EXTERNAL {
        return feature(F, "ACL_EVENT_EXTERNAL events have no timestamp".into());
    }
    tri!(not_ipc(F, &e, "timed (it has no timestamp)"));
    tri!(common::event_not_captured(F, &e));
    match timestamp(F, "the event", &e) {
        Ok(t) => {
            // SAFETY: checked non-null; the caller passes a writable u64.
            unsafe { *timestamp_us = t / 1000 };
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

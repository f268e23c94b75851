//! Streams: creation, destruction, synchronisation, query, cross-stream
//! waits and attributes.
//!
//! Each stream executes its tasks in order on a host worker thread, later
//! than the call that queued them (see `rt::stream`). A null `aclrtStream`
//! is the current context's default stream.
//!
//! Semantics and codes (hicann/runtime `src/acl/aclrt_impl/stream.cpp`, then
//! `src/runtime/api/api_c_stream.cc`, `src/runtime/api/impl/api_error.cc`
//! and `api_impl.cc`; `docs/zh/api_ref/06_stream_management.md`):
//!
//! - Handles are validated first: a destroyed or unknown stream or event is
//!   `ACL_ERROR_RT_INVALID_HANDLE` (107017, `api_handle_guard.cc`).
//! - No current context → `ACL_ERROR_RT_CONTEXT_NULL` (107002). A stream of
//!   another context → `ACL_ERROR_RT_STREAM_CONTEXT` (107003) for destroy and
//!   for queueing work; synchronisation switches to the stream's context
//!   instead, and queries need only some current context.
//! - `aclrtCreateStreamWithConfig`: the priority is clamped to `[0, 7]` (0 is
//!   the highest); flag bits other than the six `ACL_STREAM_*` ones are
//!   ignored (the ACL layer translates only those), and
//!   `ACL_STREAM_DEVICE_USE_ONLY` combined with another flag → 107000
//!   (`CheckStreamFlags`). Streams made `ACL_STREAM_PERSISTENT`,
//!   `ACL_STREAM_CPU_SCHEDULE` or `ACL_STREAM_DEVICE_USE_ONLY` take no host
//!   work: synchronising or querying them returns success at once, and the
//!   simulator refuses to queue work on them (`ACL_ERROR_API_NOT_SUPPORT`).
//! - More than `CANN_SIM_MAX_STREAMS` live streams on a device (default
//!   streams included) → `ACL_ERROR_RT_NO_STREAM_RESOURCE` (207008).
//! - `aclrtDestroyStream` waits for the queued work, then destroys the
//!   stream (the docs ask the user to synchronise first; the real runtime
//!   also waits). `aclrtDestroyStreamForce` drops the work not yet started
//!   (its callbacks are never called) and aborts a waiting task.
//! - `aclrtSynchronizeStreamWithTimeout`: −1 waits forever; below −1 or 0 →
//!   107000; expiry → `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046).
//! - A fault of queued work is returned by the next synchronisation or query
//!   of the stream (see `rt::stream`), with the failing task in the message.

use super::common::code;
use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use crate::faults;
use crate::recent_error::fail;
use crate::rt;
use crate::rt::stream::{Stream, SyncError, TaskKind};
use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_EVENT_DEVICE_USE_ONLY, ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT,
    ACL_STREAM_STATUS_COMPLETE, ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS, aclError, aclrtEvent,
    aclrtStream, aclrtStreamStatus,
};
use std::sync::Arc;

/// The `ACL_STREAM_*` flags the ACL layer translates.
const KNOWN_FLAGS: u32 = ACL_STREAM_FAST_LAUNCH
    | ACL_STREAM_FAST_SYNC
    | ACL_STREAM_PERSISTENT
    | ACL_STREAM_HUGE
    | ACL_STREAM_CPU_SCHEDULE
    | ACL_STREAM_DEVICE_USE_ONLY;

/// Highest priority (`RT_STREAM_GREATEST_PRIORITY`, `src/runtime/core/inc/spec/base_info.hpp`).
pub const GREATEST_PRIORITY: i32 = 0;
/// Lowest priority (`RT_STREAM_LEAST_PRIORITY`).
pub const LEAST_PRIORITY: i32 = 7;

/// Refuses host work on a stream that takes none.
pub(crate) fn takes_host_work(function: &str, s: &Stream) -> Result<(), aclError> {
    // A persistent stream bound to a model being built records its work
    // into the model (`crate::model::build`).
    if !common::is_non_host(s) || crate::model::build::records(s) {
        return Ok(());
    }
    Err(fail(
        ACL_ERROR_API_NOT_SUPPORT,
        format!(
            "{function}: {} was created ACL_STREAM_PERSISTENT, ACL_STREAM_CPU_SCHEDULE or \
             ACL_STREAM_DEVICE_USE_ONLY (flags {:#x}); cann-sim does not model the work of such \
             streams (model capture, AI CPU scheduling, device-side launch)",
            s.label(),
            s.flags
        ),
    ))
}

/// Creates a stream (the body of the `aclrtCreateStream*` functions).
///
/// # Safety
///
/// `stream` is null or valid for writing a handle.
pub(crate) unsafe fn create(
    function: &str,
    stream: *mut aclrtStream,
    priority: u32,
    flag: u32,
) -> aclError {
    if stream.is_null() {
        return common::null_arg(function, "stream");
    }
    let flags = flag & KNOWN_FLAGS;
    if flags & ACL_STREAM_DEVICE_USE_ONLY != 0 && flags != ACL_STREAM_DEVICE_USE_ONLY {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: flag {flag:#x}: ACL_STREAM_DEVICE_USE_ONLY cannot be combined with \
                 other flags"
            ),
        );
    }
    let priority = (priority as i32).clamp(GREATEST_PRIORITY, LEAST_PRIORITY) as u32;
    let ctx = tri!(common::current(function));
    match rt::create_stream(&ctx, priority, flags) {
        Ok(s) => {
            // SAFETY: checked non-null; the caller passes a writable handle.
            unsafe { *stream = s.handle() as aclrtStream };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtCreateStream`: a stream of priority 0 (the highest) in the current
/// context.
///
/// # Safety
///
/// `stream` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStream(stream: *mut aclrtStream) -> aclError {
    if let Some(code) = faults::check("aclrtCreateStream") {
        return code;
    }
    // SAFETY: forwarded caller contract.
    unsafe { create("aclrtCreateStream", stream, 0, 0) }
}

/// `aclrtCreateStreamWithConfig`: a stream with a priority (clamped to
/// `[0, 7]`) and `ACL_STREAM_*` flags.
///
/// # Safety
///
/// `stream` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateStreamWithConfig(
    stream: *mut aclrtStream,
    priority: u32,
    flag: u32,
) -> aclError {
    if let Some(code) = faults::check("aclrtCreateStreamWithConfig") {
        return code;
    }
    // SAFETY: forwarded caller contract.
    unsafe { create("aclrtCreateStreamWithConfig", stream, priority, flag) }
}

fn destroy(function: &str, stream: aclrtStream, force: bool) -> aclError {
    if stream.is_null() {
        return common::null_arg(function, "stream");
    }
    let s = match common::stream_arg(function, stream) {
        Ok(Some(s)) => s,
        Ok(None) => return common::null_arg(function, "stream"),
        Err(rc) => return rc,
    };
    let ctx = tri!(common::current(function));
    tri!(common::in_context(function, &s, &ctx));
    if s.is_default {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: {} is the default stream of {}; it lives as long as its context",
                s.label(),
                ctx.label()
            ),
        );
    }
    tri!(common::not_capturing(function, &s));
    tri!(common::not_inside_own_callback(function, &s));
    rt::destroy_stream(&s, force);
    ACL_SUCCESS
}

/// `aclrtDestroyStream`: waits for the stream's queued work, then destroys
/// it.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStream(stream: aclrtStream) -> aclError {
    if let Some(code) = faults::check("aclrtDestroyStream") {
        return code;
    }
    destroy("aclrtDestroyStream", stream, false)
}

/// `aclrtDestroyStreamForce`: destroys the stream at once, dropping the work
/// not yet started.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyStreamForce(stream: aclrtStream) -> aclError {
    if let Some(code) = faults::check("aclrtDestroyStreamForce") {
        return code;
    }
    destroy("aclrtDestroyStreamForce", stream, true)
}

fn synchronize(function: &str, stream: aclrtStream, timeout: i32, check_zero: bool) -> aclError {
    let s = tri!(common::stream_arg(function, stream));
    let deadline = if check_zero {
        match common::deadline(function, timeout) {
            Ok(d) => d,
            Err(rc) => return rc,
        }
    } else {
        None
    };
    let ctx = tri!(common::current(function));
    let s = common::or_default(s, &ctx);
    tri!(common::not_capturing(function, &s));
    if common::is_non_host(&s) {
        return ACL_SUCCESS;
    }
    tri!(common::not_inside_own_callback(function, &s));
    match s.synchronize(deadline) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => common::report_sync(function, &s, e, code(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)),
    }
}

/// `aclrtSynchronizeStream`: blocks until every task queued on the stream
/// before the call is done; returns the fault of a failed task.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStream(stream: aclrtStream) -> aclError {
    if let Some(code) = faults::check("aclrtSynchronizeStream") {
        return code;
    }
    let _span = crate::trace::host_span("aclrtSynchronizeStream");
    synchronize("aclrtSynchronizeStream", stream, -1, false)
}

/// `aclrtSynchronizeStreamWithTimeout`: like `aclrtSynchronizeStream`,
/// giving up after `timeout` ms (−1: never).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSynchronizeStreamWithTimeout(
    stream: aclrtStream,
    timeout: i32,
) -> aclError {
    const F: &str = "aclrtSynchronizeStreamWithTimeout";
    if let Some(code) = faults::check(F) {
        return code;
    }
    // The ACL layer rejects timeout < -1 before anything else (stream.cpp).
    if timeout < -1 {
        return fail(
            PARAM_INVALID,
            format!("{F}: timeout {timeout} is invalid; expected -1 or a positive number of ms"),
        );
    }
    synchronize(F, stream, timeout, true)
}

/// `aclrtSynchronizeDevice`: blocks until every stream of the current
/// device (in every context) has finished its queued work; returns the
/// first fault found.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDevice() -> aclError {
    const F: &str = "aclrtSynchronizeDevice";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let _span = crate::trace::host_span(F);
    synchronize_device(F, None)
}

/// `aclrtSynchronizeDeviceWithTimeout`: like `aclrtSynchronizeDevice`,
/// giving up after `timeout` ms (−1: never) with
/// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046).
///
/// Below −1 or 0 → 107000 (the ACL layer refuses below −1,
/// `ApiErrorDecorator::DeviceSynchronize` also 0; hicann/runtime
/// `src/acl/aclrt_impl/device.cpp`, `src/runtime/api/impl/api_error.cc`).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSynchronizeDeviceWithTimeout(timeout: i32) -> aclError {
    const F: &str = "aclrtSynchronizeDeviceWithTimeout";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let _span = crate::trace::host_span(F);
    let deadline = tri!(common::deadline(F, timeout));
    synchronize_device(F, deadline)
}

/// Waits for every stream of the current device, until `deadline`.
fn synchronize_device(function: &str, deadline: Option<std::time::Instant>) -> aclError {
    let ctx = tri!(common::current(function));
    let streams: Vec<Arc<Stream>> = rt::STREAMS
        .lock()
        .all()
        .into_iter()
        .filter(|s| s.device == ctx.device && !common::is_non_host(s))
        .collect();
    let mut first = None;
    // `context.cc` `Context::Synchronize`: not while a stream of the
    // current context captures (another context's capture is not checked).
    for s in streams.iter().filter(|s| s.ctx_id == ctx.id) {
        tri!(common::not_capturing(function, s));
    }
    for s in &streams {
        tri!(common::not_inside_own_callback(function, s));
    }
    for s in &streams {
        if let Err(e) = s.synchronize(deadline)
            && first.is_none()
        {
            let timed_out = matches!(e, SyncError::TimedOut);
            first = Some((s.clone(), e));
            if timed_out {
                break;
            }
        }
    }
    match first {
        None => ACL_SUCCESS,
        Some((s, e)) => {
            common::report_sync(function, &s, e, code(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT))
        }
    }
}

/// `aclrtStreamQuery`: `ACL_STREAM_STATUS_COMPLETE` (0) when every queued
/// task is done, else `ACL_STREAM_STATUS_NOT_READY` (1); a pending fault is
/// returned instead.
///
/// # Safety
///
/// `status` is null or valid for writing an `aclrtStreamStatus`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamQuery(
    stream: aclrtStream,
    status: *mut aclrtStreamStatus,
) -> aclError {
    const F: &str = "aclrtStreamQuery";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if status.is_null() {
        return common::null_arg(F, "status");
    }
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::not_capturing(F, &s));
    let done = if common::is_non_host(&s) {
        true
    } else {
        match s.query() {
            Ok(d) => d,
            Err(f) => return common::report_fault(F, f),
        }
    };
    // SAFETY: checked non-null; the caller passes a writable status.
    unsafe {
        *status = if done {
            ACL_STREAM_STATUS_COMPLETE
        } else {
            ACL_STREAM_STATUS_NOT_READY
        };
    }
    ACL_SUCCESS
}

/// `aclrtStreamWaitEvent`: work queued on `stream` after this call waits
/// until `event`'s latest record (as of this call) has completed. An event
/// never recorded makes it a no-op.
///
/// Null event → 100000; event without `ACL_EVENT_SYNC` (or the default
/// events' runtime sync bit) → `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000,
/// `IsEventWithoutWaitTask`); `ACL_EVENT_DEVICE_USE_ONLY` events → 107000.
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamWaitEvent(stream: aclrtStream, event: aclrtEvent) -> aclError {
    const F: &str = "aclrtStreamWaitEvent";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let s = tri!(common::stream_arg(F, stream));
    let e = tri!(common::event_arg(F, event));
    if e.flags & ACL_EVENT_DEVICE_USE_ONLY != 0 {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the event was created ACL_EVENT_DEVICE_USE_ONLY: it is for the device only"
            ),
        );
    }
    if !super::event::is_waitable(&e) {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: the event was created without ACL_EVENT_SYNC (flags {:#x}); there is no \
                 need (and no way) to wait for it",
                e.flags
            ),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    let capturing = s.capture.lock().clone();
    if let Some(ipc) = &e.ipc {
        if capturing.is_some() {
            return fail(
                code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
                format!("{F}: an IPC event (ACL_EVENT_IPC) cannot be waited for in a capture"),
            );
        }
        // `IpcEvent::IpcEventWait`: the latest record of any process at the
        // time of the call; none pending is a no-op.
        let Some(n) = ipc.pending() else {
            return ACL_SUCCESS;
        };
        let ipc = ipc.clone();
        return match s.enqueue(|_| TaskKind::WaitIpc(ipc, n)) {
            Ok(_) => ACL_SUCCESS,
            Err(e) => rt_fail(F, e),
        };
    }
    let in_capture = match &capturing {
        Some(m) => rt::capture::wait_event(m, &s, &e).map(|()| true),
        None => rt::capture::join_by_wait(&s, &e),
    };
    match in_capture {
        // Recorded earlier in the capture: ordered by the recorded order.
        Ok(true) => return ACL_SUCCESS,
        Ok(false) => {}
        Err(err) => return rt_fail(F, err),
    }
    let Some(record) = e.latest() else {
        return ACL_SUCCESS;
    };
    match s.enqueue(|_| TaskKind::Wait(record)) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

fn stream_for_attr(function: &str, stream: aclrtStream) -> Result<Arc<Stream>, aclError> {
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    Ok(common::or_default(s, &ctx))
}

/// `aclrtStreamGetPriority`: the stream's priority (after clamping).
///
/// # Safety
///
/// `priority` is null or valid for writing a `u32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetPriority(
    stream: aclrtStream,
    priority: *mut u32,
) -> aclError {
    const F: &str = "aclrtStreamGetPriority";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if priority.is_null() {
        return common::null_arg(F, "priority");
    }
    match stream_for_attr(F, stream) {
        Ok(s) => {
            // SAFETY: checked non-null; the caller passes a writable u32.
            unsafe { *priority = s.priority };
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtStreamGetFlags`: the `ACL_STREAM_*` flags the stream was created
/// with (unknown bits were dropped at creation).
///
/// # Safety
///
/// `flags` is null or valid for writing a `u32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetFlags(stream: aclrtStream, flags: *mut u32) -> aclError {
    const F: &str = "aclrtStreamGetFlags";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if flags.is_null() {
        return common::null_arg(F, "flags");
    }
    match stream_for_attr(F, stream) {
        Ok(s) => {
            // SAFETY: checked non-null; the caller passes a writable u32.
            unsafe { *flags = s.flags };
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtStreamGetId`: the stream's id on its device (the smallest free
/// one at creation). A null stream needs a current context.
///
/// # Safety
///
/// `stream_id` is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamGetId(stream: aclrtStream, stream_id: *mut i32) -> aclError {
    const F: &str = "aclrtStreamGetId";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream_id.is_null() {
        return common::null_arg(F, "streamId");
    }
    match stream_for_attr(F, stream) {
        Ok(s) => {
            // SAFETY: checked non-null; the caller passes a writable i32.
            unsafe { *stream_id = s.id };
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtDeviceGetStreamPriorityRange`: least (7) and greatest (0)
/// priority; either pointer may be null (`ApiImpl::DeviceGetStreamPriorityRange`).
///
/// # Safety
///
/// Each pointer is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetStreamPriorityRange(
    least_priority: *mut i32,
    greatest_priority: *mut i32,
) -> aclError {
    if let Some(code) = faults::check("aclrtDeviceGetStreamPriorityRange") {
        return code;
    }
    if !least_priority.is_null() {
        // SAFETY: checked non-null; the caller passes a writable i32.
        unsafe { *least_priority = LEAST_PRIORITY };
    }
    if !greatest_priority.is_null() {
        // SAFETY: as above.
        unsafe { *greatest_priority = GREATEST_PRIORITY };
    }
    ACL_SUCCESS
}

/// `aclrtSetStreamFailureMode`: `ACL_CONTINUE_ON_FAILURE` (0, the default)
/// or `ACL_STOP_ON_FAILURE` (1) for `stream` (null: the current context's
/// default stream); see `rt::stream` for what stopping does.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetStreamFailureMode(stream: aclrtStream, mode: u64) -> aclError {
    const F: &str = "aclrtSetStreamFailureMode";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(common::stream_arg(F, stream));
    if mode != u64::from(acl_sys::ACL_CONTINUE_ON_FAILURE)
        && mode != u64::from(acl_sys::ACL_STOP_ON_FAILURE)
    {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: mode {mode} is neither ACL_CONTINUE_ON_FAILURE (0) nor ACL_STOP_ON_FAILURE (1)"
            ),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    s.shared.stop_on_failure.store(
        mode == u64::from(acl_sys::ACL_STOP_ON_FAILURE),
        std::sync::atomic::Ordering::Relaxed,
    );
    ACL_SUCCESS
}

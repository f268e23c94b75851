//! `aclmdlRI*` graph capture: `aclmdlRICaptureBegin`, `…End`, `…GetInfo`,
//! `…ThreadExchangeMode`, `aclmdlRIExecuteAsync`, `aclmdlRIExecute`,
//! `aclmdlRIDestroy`, task groups and their update (`aclmdlRICaptureTaskGrpBegin`,
//! `…TaskGrpEnd`, `…TaskUpdateBegin`, `…TaskUpdateEnd`) and `aclmdlRIUpdate`
//! — argument checks and codes; the capture itself is [`crate::rt::capture`].
//!
//! The ACL layer null-checks and forwards (hicann/runtime
//! `src/acl/aclrt_impl/model_ri.cpp`); the runtime's rules are cited in
//! `rt::capture`.

use super::common::{self, PARAM_INVALID, code, rt_fail};
use crate::faults;
use crate::model::build::{self, Built};
use crate::recent_error::fail;
use crate::rt::capture::{self, Group, Mode, Model};
use crate::rt::handles::{self, Lookup};
use crate::rt::{ErrorKind, Stream};
use acl_sys::{
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_MODEL_CONTEXT,
    ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_CONTEXT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, ACL_MODEL_RI_CAPTURE_STATUS_NONE, ACL_SUCCESS, aclError,
    aclmdlRI, aclmdlRICaptureMode, aclmdlRICaptureStatus, aclrtStream, aclrtTaskGrp,
};
use std::sync::Arc;

fn model_arg(function: &str, h: aclmdlRI) -> Result<Arc<Model>, aclError> {
    match ri_arg(function, h)? {
        Ri::Captured(m) => Ok(m),
        Ri::Built(m) => Err(fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{function}: model {} was built with aclmdlRIBuildBegin; cann-sim supports \
                 {function} for captured models only",
                m.id
            ),
        )),
    }
}

/// A model run instance: captured (`aclmdlRICaptureBegin`) or built
/// (`aclmdlRIBuildBegin`).
pub(crate) enum Ri {
    /// Made by a capture.
    Captured(Arc<Model>),
    /// Built explicitly.
    Built(Arc<Built>),
}

/// A model run instance handle of either kind: null → 100000, unknown or
/// destroyed → 107017.
pub(crate) fn ri_arg(function: &str, h: aclmdlRI) -> Result<Ri, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "modelRI"));
    }
    if let Lookup::Live(m) = build::lookup(h as usize) {
        return Ok(Ri::Built(m));
    }
    match capture::lookup(h as usize) {
        Lookup::Live(m) => Ok(Ri::Captured(m)),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("model run instance", h as usize, &bad)
            ),
        )),
    }
}

fn mode_arg(function: &str, mode: aclmdlRICaptureMode) -> Result<Mode, aclError> {
    Mode::from_raw(mode).ok_or_else(|| {
        fail(
            PARAM_INVALID,
            format!(
                "{function}: capture mode {mode} is invalid; expected GLOBAL (0), THREAD_LOCAL \
                 (1) or RELAXED (2)"
            ),
        )
    })
}

/// `aclmdlRICaptureBegin`: from now on, the work queued on `stream` is
/// recorded into a new model instead of run.
///
/// Null stream → 100000 (the ACL layer's check); the default stream →
/// 207000; a stream capturing already → 107027; an invalid mode → 107000
/// (`api_error_aclgraph.cc` `ApiErrorDecorator::StreamBeginCapture`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureBegin(
    stream: aclrtStream,
    mode: aclmdlRICaptureMode,
) -> aclError {
    const F: &str = "aclmdlRICaptureBegin";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let mode = tri!(mode_arg(F, mode));
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    match capture::begin(&s, mode, common::is_non_host(&s)) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureEnd`: ends the capture of `stream`; `*modelRI` is the
/// model holding its work (null after a failure).
///
/// Null stream → 100000; null `modelRI` → 107000 (allowed when the stream
/// captures into a sub-model of a conditional task); not capturing → 107029;
/// a sub-model of one of its conditional tasks not captured → 107046;
/// another thread, mode not RELAXED → 107038 (the capture ends and its
/// model is destroyed all the same).
///
/// # Safety
///
/// `modelRI` is null or valid for writing an `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureEnd(
    stream: aclrtStream,
    model_ri: *mut aclmdlRI,
) -> aclError {
    const F: &str = "aclmdlRICaptureEnd";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    // `api_impl_aclgraph.cc` `ApiImpl::StreamEndCapture`: the capture of a
    // sub-model of a conditional task takes a null `modelRI` and leaves it
    // alone on failure; a root capture needs one, nulled on failure.
    let into_sub = match common::stream_arg(F, stream) {
        Ok(Some(s)) => capture::info(&s).is_some_and(|m| m.sub),
        _ => false,
    };
    if model_ri.is_null() && !into_sub {
        return fail(PARAM_INVALID, format!("{F}: modelRI is null"));
    }
    if !into_sub {
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe { *model_ri = std::ptr::null_mut() };
    }
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    match capture::end(&s) {
        Ok(m) => {
            if !model_ri.is_null() {
                // SAFETY: non-null; the caller passes a writable handle.
                unsafe { *model_ri = m.handle() as aclmdlRI };
            }
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureGetInfo`: whether `stream` captures, and into which
/// model (`ACL_MODEL_RI_CAPTURE_STATUS_NONE` and null when it does not).
///
/// Null stream, or both outputs null → 100000.
///
/// # Safety
///
/// `status` and `modelRI` are null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureGetInfo(
    stream: aclrtStream,
    status: *mut aclmdlRICaptureStatus,
    model_ri: *mut aclmdlRI,
) -> aclError {
    const F: &str = "aclmdlRICaptureGetInfo";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if status.is_null() && model_ri.is_null() {
        return common::null_arg(F, "status and modelRI");
    }
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    let m = capture::info(&s);
    if !status.is_null() {
        // SAFETY: checked non-null; the caller passes a writable status.
        unsafe {
            *status = if m.is_some() {
                ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
            } else {
                ACL_MODEL_RI_CAPTURE_STATUS_NONE
            };
        }
    }
    if !model_ri.is_null() {
        // SAFETY: checked non-null; the caller passes a writable handle.
        unsafe {
            *model_ri = m.map_or(std::ptr::null_mut(), |m| m.handle() as aclmdlRI);
        }
    }
    ACL_SUCCESS
}

/// `aclmdlRICaptureThreadExchangeMode`: sets the calling thread's capture
/// mode to `*mode` and writes the previous one there (GLOBAL at first).
///
/// Null or invalid → 107000 (`ApiErrorDecorator::ThreadExchangeCaptureMode`).
///
/// # Safety
///
/// `mode` is null or valid for reading and writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureThreadExchangeMode(
    mode: *mut aclmdlRICaptureMode,
) -> aclError {
    const F: &str = "aclmdlRICaptureThreadExchangeMode";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if mode.is_null() {
        return fail(PARAM_INVALID, format!("{F}: mode is null"));
    }
    // SAFETY: checked non-null; the caller passes a readable mode.
    let new = tri!(mode_arg(F, unsafe { *mode }));
    let old = capture::exchange_thread_mode(new);
    // SAFETY: as above, writable.
    unsafe { *mode = old as aclmdlRICaptureMode };
    ACL_SUCCESS
}

/// `aclmdlRIExecuteAsync`: queues the captured work on `stream` (null: the
/// current context's default stream).
///
/// Null model → 100000; a model still capturing → 107026; a capturing
/// stream → 107027; a stream of another context than the model's → 107003.
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIExecuteAsync(model_ri: aclmdlRI, stream: aclrtStream) -> aclError {
    const F: &str = "aclmdlRIExecuteAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let m = match tri!(ri_arg(F, model_ri)) {
        Ri::Captured(m) => m,
        Ri::Built(m) => return execute_built_async(F, &m, stream),
    };
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    if s.ctx_id != m.ctx_id {
        // `model.cc` `Model::Execute`: RT_ERROR_STREAM_CONTEXT.
        return fail(
            code(ACL_ERROR_RT_STREAM_CONTEXT),
            format!(
                "{F}: {} is not in the context the model was captured in",
                s.label()
            ),
        );
    }
    if common::is_non_host(&s) {
        return fail(
            PARAM_INVALID,
            format!("{F}: {} takes no host work", s.label()),
        );
    }
    match m.execute(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIExecute`: synchronous execution of a built model
/// (`aclmdlRIBuildBegin/End`), waiting at most `timeout` ms (−1: no limit);
/// the simulator runs it on the context's default stream. A captured model
/// is refused with 107000 (`api_error.cc` `ApiErrorDecorator::ModelExecuteSync`:
/// "ACL Graph mode is not supported"), as is a timeout of 0 or below −1.
/// A model of another context → 107004; not built yet → 107000; expiry →
/// 507046.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIExecute(model_ri: aclmdlRI, timeout: i32) -> aclError {
    const F: &str = "aclmdlRIExecute";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let m = tri!(ri_arg(F, model_ri));
    if timeout == 0 || timeout < -1 {
        return fail(
            PARAM_INVALID,
            format!("{F}: timeout {timeout} is invalid; expected -1 or a positive number of ms"),
        );
    }
    let m = match m {
        Ri::Built(m) => m,
        Ri::Captured(_) => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: the model was made by a capture; run it with aclmdlRIExecuteAsync and \
                     synchronise the stream"
                ),
            );
        }
    };
    let ctx = tri!(common::current(F));
    tri!(super::model_build::model_in_context(F, &m, &ctx));
    let s = ctx.default_stream.clone();
    if let Err(e) = m.execute(&s) {
        return rt_fail(F, e);
    }
    let deadline = (timeout > 0)
        .then(|| std::time::Instant::now() + std::time::Duration::from_millis(timeout as u64));
    match s.synchronize(deadline) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => common::report_sync(F, &s, e, code(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)),
    }
}

/// `aclmdlRIExecuteAsync` of a built model: a stream bound to a model →
/// 107000, a capturing stream → 107027, a persistent, CPU-schedule or
/// device-only stream → 107000 (`ApiErrorDecorator::ModelExecuteAsync`);
/// no context → 107002; a model of another context → 107004
/// (`ApiImpl::ModelExecuteAsync`); a stream of another context than the
/// model's → 107003 (`model.cc` `Model::ExecuteAsync`); not built yet →
/// 107000.
fn execute_built_async(function: &str, m: &Arc<Built>, stream: aclrtStream) -> aclError {
    let s = tri!(common::stream_arg(function, stream));
    let ctx = tri!(common::current(function));
    let s = common::or_default(s, &ctx);
    if build::bound_model(&s).is_some() {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: {} is bound to a model; the executing stream cannot be a model \
                 stream",
                s.label()
            ),
        );
    }
    if s.capture.lock().is_some() {
        return fail(
            code(ACL_ERROR_RT_STREAM_CAPTURED),
            format!("{function}: {} is capturing", s.label()),
        );
    }
    if common::is_non_host(&s) {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: {} was created with flags {:#x}: sink, AI CPU and device-only \
                 streams do not execute models",
                s.label(),
                s.flags
            ),
        );
    }
    tri!(super::model_build::model_in_context(function, m, &ctx));
    if s.ctx_id != m.ctx_id {
        return fail(
            code(ACL_ERROR_RT_STREAM_CONTEXT),
            format!(
                "{function}: {} is not in the context the model was built in",
                s.label()
            ),
        );
    }
    match m.execute(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(function, e),
    }
}

/// `aclmdlRIDestroy`: destroys a captured model once no execution of it is
/// queued (polling for up to 10 s).
///
/// Null → 100000; still capturing → 107026; still running after 10 s →
/// 107037 (`context.cc` `Context::ModelDestroy`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIDestroy(model_ri: aclmdlRI) -> aclError {
    const F: &str = "aclmdlRIDestroy";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let m = match tri!(ri_arg(F, model_ri)) {
        Ri::Captured(m) => m,
        Ri::Built(m) => {
            return match m.destroy() {
                Ok(()) => ACL_SUCCESS,
                Err(e) => rt_fail(F, e),
            };
        }
    };
    match m.destroy() {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// The stream of a task-group call: null → 100000 (the ACL layer's
/// `ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT`); then whether it captures —
/// `capturing` says whether it must (107029 if not: group calls) or must not
/// (107027 if it does: update calls) — as the error decorator checks
/// (`api_error_aclgraph.cc`) before the context (107003, `api_impl_aclgraph.cc`).
fn group_stream(
    function: &str,
    stream: aclrtStream,
    capturing: bool,
) -> Result<Arc<Stream>, aclError> {
    if stream.is_null() {
        return Err(common::null_arg(function, "stream"));
    }
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    let s = common::or_default(s, &ctx);
    let captures = s.capture.lock().is_some();
    if capturing && !captures {
        return Err(rt_fail(
            function,
            crate::rt::Error::new(
                ErrorKind::StreamNotCaptured,
                format!(
                    "{} is not capturing; task groups are marked inside a capture",
                    s.label()
                ),
            ),
        ));
    }
    if !capturing && captures {
        return Err(rt_fail(
            function,
            crate::rt::Error::new(
                ErrorKind::StreamCaptured,
                format!(
                    "{} is capturing; a task group is updated from a stream that does not capture",
                    s.label()
                ),
            ),
        ));
    }
    common::in_context(function, &s, &ctx)?;
    Ok(s)
}

/// A task-group handle: null → 100000; a handle the simulator did not hand
/// out, or of a destroyed model → 107017 (the runtime does not check it: a
/// group dies with its model and its handle then dangles).
fn group_arg(function: &str, h: aclrtTaskGrp) -> Result<Arc<Group>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "handle"));
    }
    match capture::lookup_group(h as usize) {
        Lookup::Live(g) => Ok(g),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {} (a group lives as long as its model: aclmdlRIDestroy ends it)",
                handles::describe_bad("task group", h as usize, &bad)
            ),
        )),
    }
}

/// `aclmdlRICaptureTaskGrpBegin`: the kernels captured on `stream` from now
/// on form a task group, which a later update can change.
///
/// Null stream → 100000; not capturing → 107029; a group open on it already
/// (no nesting) → 107033 (`context_aclgraph.cc` `Context::StreamBeginTaskGrp`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpBegin(stream: aclrtStream) -> aclError {
    const F: &str = "aclmdlRICaptureTaskGrpBegin";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(group_stream(F, stream, true));
    match capture::group_begin(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureTaskGrpEnd`: closes the task group open on `stream`;
/// `*handle` is it (null after a failure).
///
/// Null stream or handle → 100000; not capturing → 107029; no group open →
/// 107033; a task of the group failed (507009) or interrupted it (107034),
/// or the capture was invalidated (507903) → that code, the group closed
/// and dropped (`Context::StreamEndTaskGrp`).
///
/// # Safety
///
/// `handle` is null or valid for writing an `aclrtTaskGrp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskGrpEnd(
    stream: aclrtStream,
    handle: *mut aclrtTaskGrp,
) -> aclError {
    const F: &str = "aclmdlRICaptureTaskGrpEnd";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if handle.is_null() {
        return common::null_arg(F, "handle");
    }
    // SAFETY: checked non-null; the caller passes a writable handle.
    unsafe { *handle = std::ptr::null_mut() };
    let s = tri!(group_stream(F, stream, true));
    match capture::group_end(&s) {
        Ok(g) => {
            // SAFETY: as above.
            unsafe { *handle = g.handle() as aclrtTaskGrp };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureTaskUpdateBegin`: the kernels issued on `stream` from
/// now on replace the tasks of the group `handle`, one each, in capture
/// order.
///
/// Null stream or handle → 100000; an unknown or stale handle → 107017 (the
/// simulator's check); `stream` capturing → 107027; another context →
/// 107003; `stream` in a group or an update already, or the group updated
/// by another stream → 107033 (`Context::StreamBeginTaskUpdate`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskUpdateBegin(
    stream: aclrtStream,
    handle: aclrtTaskGrp,
) -> aclError {
    const F: &str = "aclmdlRICaptureTaskUpdateBegin";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let g = tri!(group_arg(F, handle));
    let s = tri!(group_stream(F, stream, false));
    match capture::update_begin(&s, &g) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureTaskUpdateEnd`: ends the update on `stream`.
///
/// Null → 100000; capturing → 107027; not updating → 107033; fewer kernels
/// issued than the group holds → 507000, the update ended and the kernels
/// issued applied all the same (`Context::StreamEndTaskUpdate`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureTaskUpdateEnd(stream: aclrtStream) -> aclError {
    const F: &str = "aclmdlRICaptureTaskUpdateEnd";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(group_stream(F, stream, false));
    match capture::update_end(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIUpdate`: applies the task changes of `aclmdlRITaskSetParams`
/// and `aclmdlRITaskDisable` (not simulated), so for a captured model it
/// succeeds and does nothing; task-group updates do not need it.
///
/// Null → 107000 (no ACL-layer check; `api_error.cc`
/// `ApiErrorDecorator::ModelUpdate`); still capturing or abandoned → 107040
/// (`api_impl.cc` `ApiImpl::ModelUpdate`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIUpdate(model_ri: aclmdlRI) -> aclError {
    const F: &str = "aclmdlRIUpdate";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return fail(PARAM_INVALID, format!("{F}: modelRI is null"));
    }
    let m = tri!(model_arg(F, model_ri));
    match m.update() {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIDebugJsonPrint`: writes the model's task list to `path` as a
/// JSON array of trace events, in the release's layout (see
/// `crate::model::debug_json`); `flags` (`DEBUG_JSON_PRINT_VERBOSE`:
/// kernel arguments) adds nothing on the simulator.
///
/// Null model or path → 100000 (the ACL layer); a bad handle → 107017; no
/// context → 107002; a model of another context → 107004
/// (`api_impl_aclgraph.cc` `ApiImpl::ModelDebugJsonPrint`); a path that
/// names a directory, FIFO, socket or device, or a file that cannot be
/// written → 107000 (`model_aclgraph.cc` `Model::ModelDebugJsonPrint`).
///
/// # Safety
///
/// `path` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIDebugJsonPrint(
    model_ri: aclmdlRI,
    path: *const std::ffi::c_char,
    flags: u32,
) -> aclError {
    const F: &str = "aclmdlRIDebugJsonPrint";
    let _ = flags;
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if path.is_null() {
        return common::null_arg(F, "path");
    }
    let m = tri!(ri_arg(F, model_ri));
    let ctx = tri!(common::current(F));
    let (ctx_id, id, streams) = match &m {
        Ri::Built(b) => (b.ctx_id, b.id, b.describe()),
        Ri::Captured(c) => (c.ctx_id, c.uid_for_json(), c.describe()),
    };
    if ctx_id != ctx.id {
        return fail(
            code(ACL_ERROR_RT_MODEL_CONTEXT),
            format!(
                "{F}: the model belongs to context {ctx_id}, not to the current {}",
                ctx.label()
            ),
        );
    }
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let bytes = unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes();
    let path = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes);
    match crate::model::debug_json::write(std::path::Path::new(path), id, &streams) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

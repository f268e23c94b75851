//! Checks shared by the context, stream, event and callback exports, each
//! returning the runtime's code with a message that starts with the
//! function's name.

use crate::ops::{Attrs, OpError};
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup};
use crate::rt::op::{LaunchInput, LaunchOutput};
use crate::rt::stream::Expect;
use crate::rt::stream::{Fault, SyncError};
use crate::rt::{self, Context, ErrorKind, Event, Stream};
use crate::state;
use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_RT_CAPTURE_DEPENDENCY,
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_EVENT_CAPTURED, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_MODEL_RUNNING, ACL_ERROR_RT_MODEL_UPDATE_FAILED,
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
    ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_MODEL, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_STREAM_UNJOINED, ACL_ERROR_RT_TASK_TIMEOUT, ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
    ACL_ERROR_STREAM_CAPTURE_CONFLICT, ACL_ERROR_STREAM_TASK_GROUP_INTR,
    ACL_ERROR_STREAM_TASK_GROUP_STATUS,
};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_OP_ATTR_NOT_MATCH, ACL_ERROR_OP_INPUT_NOT_MATCH,
    ACL_ERROR_OP_NOT_FOUND, ACL_ERROR_OP_OUTPUT_NOT_MATCH, ACL_ERROR_RT_AICORE_EXCEPTION,
    ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, ACL_ERROR_RT_DRV_INTERNAL_ERROR,
    ACL_ERROR_RT_FFTS_PLUS_TIMEOUT, ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MEMORY_FREE, ACL_ERROR_RT_MODEL_EXECUTE, ACL_ERROR_RT_NO_EVENT_RESOURCE,
    ACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
    ACL_ERROR_RT_STREAM_CONTEXT, ACL_ERROR_RT_STREAM_NOT_COMPLETE, ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_SUSPECT_REMOTE_ERROR, ACL_ERROR_RT_SYS_DMA, ACL_ERROR_RT_THREAD_SUBSCRIBE,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE, ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_PERSISTENT, ACL_SUCCESS, aclError, aclrtEvent, aclrtStream,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An rt error constant (the bindings type them `u32`) as an `aclError`.
pub const fn code(c: u32) -> aclError {
    c as aclError
}

/// The code of a runtime failure of `kind` (see [`rt::ErrorKind`]).
pub fn rt_code(kind: ErrorKind) -> aclError {
    code(match kind {
        ErrorKind::ParamInvalid => ACL_ERROR_RT_PARAM_INVALID,
        ErrorKind::NoStreamResource => ACL_ERROR_RT_NO_STREAM_RESOURCE,
        ErrorKind::NoEventResource => ACL_ERROR_RT_NO_EVENT_RESOURCE,
        ErrorKind::ContextRelease => ACL_ERROR_RT_CONTEXT_RELEASE_ERROR,
        ErrorKind::ResourceAllocFail => ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
        ErrorKind::StreamSubscribe => ACL_ERROR_RT_STREAM_SUBSCRIBE,
        ErrorKind::ThreadSubscribe => ACL_ERROR_RT_THREAD_SUBSCRIBE,
        ErrorKind::Internal => ACL_ERROR_RT_INTERNAL_ERROR,
        ErrorKind::DrvInternal => ACL_ERROR_RT_DRV_INTERNAL_ERROR,
        // Copies and fills run on the SDMA engine; the runtime maps its copy
        // errors (`RT_ERROR_TSFW_SDMA_COPY_ERROR`) to `ACL_ERROR_RT_SYS_DMA`
        // (507013, hicann/runtime `src/runtime/core/src/common/errcode_manage.cc`),
        // the closest documented code for "a queued copy touched memory it
        // may not".
        ErrorKind::MemoryFault => ACL_ERROR_RT_SYS_DMA,
        ErrorKind::KernelFault => ACL_ERROR_RT_AICORE_EXCEPTION,
        ErrorKind::ModelFault => ACL_ERROR_RT_MODEL_EXECUTE,
        ErrorKind::CollectiveTimeout => ACL_ERROR_RT_FFTS_PLUS_TIMEOUT,
        ErrorKind::RemoteFault => ACL_ERROR_RT_SUSPECT_REMOTE_ERROR,
        ErrorKind::StreamNotComplete => ACL_ERROR_RT_STREAM_NOT_COMPLETE,
        ErrorKind::MemoryFree => ACL_ERROR_RT_MEMORY_FREE,
        ErrorKind::FeatureNotSupport => ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        ErrorKind::StreamCaptured => ACL_ERROR_RT_STREAM_CAPTURED,
        ErrorKind::StreamNotCaptured => ACL_ERROR_RT_STREAM_NOT_CAPTURED,
        ErrorKind::CaptureWrongThread => ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
        ErrorKind::ModelCaptured => ACL_ERROR_RT_MODEL_CAPTURED,
        ErrorKind::ModelRunning => ACL_ERROR_RT_MODEL_RUNNING,
        ErrorKind::CaptureModeNotSupport => ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
        ErrorKind::EventCaptured => ACL_ERROR_RT_EVENT_CAPTURED,
        ErrorKind::StreamCaptureImplicit => ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
        ErrorKind::CaptureDependency => ACL_ERROR_RT_CAPTURE_DEPENDENCY,
        ErrorKind::CaptureConflict => ACL_ERROR_STREAM_CAPTURE_CONFLICT,
        ErrorKind::CaptureUnmatched => ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
        ErrorKind::StreamUnjoined => ACL_ERROR_RT_STREAM_UNJOINED,
        ErrorKind::TaskGroupStatus => ACL_ERROR_STREAM_TASK_GROUP_STATUS,
        ErrorKind::TaskGroupInterrupted => ACL_ERROR_STREAM_TASK_GROUP_INTR,
        ErrorKind::TaskTypeNotSupport => ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
        ErrorKind::ModelUpdateFailed => ACL_ERROR_RT_MODEL_UPDATE_FAILED,
        ErrorKind::CaptureInvalidated => ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
        ErrorKind::TaskTimeout => ACL_ERROR_RT_TASK_TIMEOUT,
        ErrorKind::StreamModel => ACL_ERROR_RT_STREAM_MODEL,
        ErrorKind::SubGraphCapturing => acl_sys::ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
        ErrorKind::ModelAborted => acl_sys::ACL_ERROR_RT_MODEL_ABORT_NORMAL,
        ErrorKind::InvalidHandle => ACL_ERROR_RT_INVALID_HANDLE,
    })
}

/// Records a runtime failure in `function` and returns its code.
pub fn rt_fail(function: &str, e: rt::Error) -> aclError {
    fail(rt_code(e.kind), format!("{function}: {}", e.msg))
}

/// Flags whose streams do not take host work: the runtime returns at once
/// from synchronising them (`docs/zh/api_ref/06_stream_management.md`).
pub const NON_HOST_FLAGS: u32 =
    ACL_STREAM_PERSISTENT | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;

/// Whether `s` takes no host work (persistent, CPU-schedule or
/// device-only).
pub fn is_non_host(s: &Stream) -> bool {
    s.flags & NON_HOST_FLAGS != 0
}

/// [`rt::op::device_range`], its failure recorded in `function`.
pub(crate) fn device_range(
    function: &str,
    what: &str,
    addr: usize,
    bytes: usize,
    device: u32,
) -> Result<Option<Expect>, aclError> {
    rt::op::device_range(function, what, addr, bytes, device).map_err(|e| rt_fail(function, e))
}

/// [`rt::op::launch`], its failure recorded in `function`.
pub(crate) fn launch_op(
    function: &'static str,
    s: &Stream,
    op_type: String,
    attrs: Attrs,
    inputs: Vec<LaunchInput>,
    outputs: Vec<LaunchOutput>,
) -> aclError {
    match rt::op::launch(function, s, op_type, attrs, inputs, outputs) {
        Ok(()) => ACL_SUCCESS as aclError,
        Err(e) => rt_fail(function, e),
    }
}

/// `ACL_ERROR_RT_PARAM_INVALID` (107000) as an `aclError`.
pub const PARAM_INVALID: aclError = code(ACL_ERROR_RT_PARAM_INVALID);

/// 100000 for a null pointer argument (`ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT`).
pub fn null_arg(function: &str, name: &str) -> aclError {
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!("{function}: {name} is null"),
    )
}

/// The calling thread's current context.
///
/// # Errors
///
/// `ACL_ERROR_RT_CONTEXT_NULL` (107002) when it has none
/// (`CHECK_CONTEXT_VALID_WITH_RETURN(curCtx, RT_ERROR_CONTEXT_NULL)`).
pub fn current(function: &str) -> Result<Arc<Context>, aclError> {
    state::current_context().ok_or_else(|| {
        fail(
            code(ACL_ERROR_RT_CONTEXT_NULL),
            format!(
                "{function}: the context is empty: no context is current on this thread (call \
                 aclrtSetDevice or aclrtSetCurrentContext first)"
            ),
        )
    })
}

/// Validates a stream handle: `None` for null (the default stream).
///
/// # Errors
///
/// `ACL_ERROR_RT_INVALID_HANDLE` (107017) for a destroyed or unknown handle
/// (`ValidateStreamHandleForApi`, `src/runtime/api/api_handle_guard.cc`).
pub fn stream_arg(function: &str, h: aclrtStream) -> Result<Option<Arc<Stream>>, aclError> {
    if h.is_null() {
        return Ok(None);
    }
    match rt::stream::lookup(h as usize) {
        Lookup::Live(s) => Ok(Some(s)),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("stream", h as usize, &bad)
            ),
        )),
    }
}

/// Validates a (non-null) event handle.
///
/// # Errors
///
/// 107017 for a destroyed or unknown handle (`ValidateEventHandleForApi`).
pub fn event_arg(function: &str, h: aclrtEvent) -> Result<Arc<Event>, aclError> {
    match rt::EVENTS.lock().get(h as usize) {
        Lookup::Live(e) => Ok(e),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("event", h as usize, &bad)
            ),
        )),
    }
}

/// The stream a call acts on: `s`, or the context's default stream.
pub fn or_default(s: Option<Arc<Stream>>, ctx: &Context) -> Arc<Stream> {
    s.unwrap_or_else(|| ctx.default_stream.clone())
}

/// Checks that `s` belongs to `ctx`.
///
/// # Errors
///
/// `ACL_ERROR_RT_STREAM_CONTEXT` (107003) otherwise
/// (`COND_RETURN_AND_MSG_INVALID_CONTEXT_STREAM_WITH_FUNC_DESC`).
pub fn in_context(function: &str, s: &Stream, ctx: &Context) -> Result<(), aclError> {
    if s.ctx_id == ctx.id {
        return Ok(());
    }
    Err(fail(
        code(ACL_ERROR_RT_STREAM_CONTEXT),
        format!(
            "{function}: {} belongs to context {}, not to the current {} (switch with \
             aclrtSetCurrentContext)",
            s.label(),
            s.ctx_id,
            ctx.label()
        ),
    ))
}

/// Refuses a synchronisation, query or destruction of a capturing stream.
///
/// # Errors
///
/// `ACL_ERROR_RT_STREAM_CAPTURED` (107027; hicann/runtime
/// `src/runtime/api/impl/api_error.cc` `StreamSynchronize`, `StreamQuery`,
/// `StreamDestroy`).
pub fn not_capturing(function: &str, s: &Stream) -> Result<(), aclError> {
    if s.capture.lock().is_none() {
        return Ok(());
    }
    Err(fail(
        code(ACL_ERROR_RT_STREAM_CAPTURED),
        format!(
            "{function}: {} is capturing (aclmdlRICaptureBegin); end the capture first",
            s.label()
        ),
    ))
}

/// Refuses a synchronisation or query of an event recorded in an active
/// capture (107028, `api_error.cc` `EventSynchronize`, `EventQuery`...).
///
/// # Errors
///
/// `ACL_ERROR_RT_EVENT_CAPTURED`.
pub fn event_not_captured(function: &str, e: &Arc<Event>) -> Result<(), aclError> {
    rt::capture::event_captured(e).map_err(|e| rt_fail(function, e))
}

/// Refuses a synchronous copy or fill that an active capture's mode forbids
/// on this thread (107030, `api_impl.cc` `MemCopySync`, `MemSetSync`,
/// `MemCopy2DSync`).
///
/// # Errors
///
/// `ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT`.
pub fn capture_mode_allows(function: &str) -> Result<(), aclError> {
    match state::current_context() {
        Some(ctx) => rt::capture::check_unsafe_call(ctx.id).map_err(|e| rt_fail(function, e)),
        None => Ok(()),
    }
}

/// Refuses an asynchronous copy with pageable host memory (a stream
/// synchronisation and a synchronous copy) on a capturing stream (107000),
/// or that an active capture's mode forbids on this thread (107041) —
/// hicann/runtime HEAD `api_error.cc` `ApiErrorDecorator::MemcpyAsync`,
/// `MemCopy2DAsync`.
///
/// # Errors
///
/// `ACL_ERROR_RT_PARAM_INVALID` or `ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC`.
pub fn pageable_copy_allowed(function: &str, s: &Stream) -> Result<(), aclError> {
    if crate::model::build::bound_model(s).is_some() {
        // A pageable copy is done at once, on the host: it cannot be a task
        // of a model.
        return Err(fail(
            ACL_ERROR_API_NOT_SUPPORT,
            format!(
                "{function}: {} is bound to a model, and cann-sim cannot record a copy with \
                 pageable host memory into a model; use pinned host memory (aclrtMallocHost)",
                s.label()
            ),
        ));
    }
    if s.capture.lock().is_some() {
        return Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: {} is capturing, and a copy with pageable host memory cannot be                  captured; use pinned host memory (aclrtMallocHost)",
                s.label()
            ),
        ));
    }
    rt::capture::check_unsafe_call(s.ctx_id).map_err(|e| {
        fail(
            code(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC),
            format!(
                "{function}: a copy with pageable host memory is synchronous: {}",
                e.msg
            ),
        )
    })
}

/// Refuses a call that waits for `s` from inside a blocking callback or host
/// function of `s` itself: it would wait for itself forever.
///
/// # Errors
///
/// 107000 with a message. (On a device the call would hang; the docs forbid
/// synchronising, destroying or launching from a callback.)
pub fn not_inside_own_callback(function: &str, s: &Stream) -> Result<(), aclError> {
    if rt::report::running_blocking_callback_of() == Arc::as_ptr(&s.shared) as usize {
        return Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: called from a blocking callback or host function of {} itself; the \
                 stream waits for the callback to return, so this would never return",
                s.label()
            ),
        ));
    }
    Ok(())
}

/// A `timeout` argument in ms: −1 waits forever, `> 0` gives a deadline.
///
/// # Errors
///
/// 107000 for 0 or below −1 (`StreamSynchronize`/`EventSynchronize` in
/// `src/runtime/api/impl/api_error.cc`).
pub fn deadline(function: &str, timeout: i32) -> Result<Option<Instant>, aclError> {
    match timeout {
        -1 => Ok(None),
        t if t > 0 => Ok(Some(
            Instant::now() + Duration::from_millis(u64::from(t.unsigned_abs())),
        )),
        t => Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: timeout {t} is invalid; expected -1 (wait forever) or a positive \
                 number of milliseconds"
            ),
        )),
    }
}

/// The `aclError` of an operator that cannot run.
pub fn op_error_code(e: &OpError) -> aclError {
    match e {
        OpError::NotFound(_) => ACL_ERROR_OP_NOT_FOUND,
        OpError::Input(_) => ACL_ERROR_OP_INPUT_NOT_MATCH,
        OpError::Output(_) => ACL_ERROR_OP_OUTPUT_NOT_MATCH,
        OpError::Attr(_) => ACL_ERROR_OP_ATTR_NOT_MATCH,
        OpError::DType(_) => ACL_ERROR_UNSUPPORTED_DATA_TYPE,
    }
}

/// Reports a fault of queued work from `function`.
pub fn report_fault(function: &str, f: Fault) -> aclError {
    fail(
        rt_code(f.kind),
        format!("{function}: a task queued earlier failed: {}", f.msg),
    )
}

/// Reports a failed stream synchronisation from `function`.
pub fn report_sync(function: &str, s: &Stream, e: SyncError, timeout_code: aclError) -> aclError {
    match e {
        SyncError::TimedOut => fail(
            timeout_code,
            format!(
                "{function}: {} did not finish its queued tasks within the timeout",
                s.label()
            ),
        ),
        SyncError::Fault(f) => report_fault(function, f),
    }
}

/// The deepest nesting of objects and of arrays in a JSON text, counted
/// over the raw bytes, strings included, as the runtime's `CountDepth`
/// does (hicann/runtime `src/acl/common/json_parser.cpp`): the config files
/// of `aclInit` and `aclmdlSetDump` may nest at most 10 deep.
pub(crate) fn json_depth(text: &str) -> (usize, usize) {
    let (mut objects, mut arrays, mut max_objects, mut max_arrays) = (0usize, 0usize, 0, 0);
    for b in text.bytes() {
        match b {
            b'{' => {
                objects += 1;
                max_objects = max_objects.max(objects);
            }
            b'}' => objects = objects.saturating_sub(1),
            b'[' => {
                arrays += 1;
                max_arrays = max_arrays.max(arrays);
            }
            b']' => arrays = arrays.saturating_sub(1),
            _ => {}
        }
    }
    (max_objects, max_arrays)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_errors_map_to_the_runtime_codes() {
        let code = |e: OpError| op_error_code(&e);
        assert_eq!(code(OpError::NotFound(String::new())), 100024);
        assert_eq!(code(OpError::Input(String::new())), 100021);
        assert_eq!(code(OpError::Output(String::new())), 100022);
        assert_eq!(code(OpError::Attr(String::new())), 100023);
        assert_eq!(code(OpError::DType(String::new())), 100026);
    }
}

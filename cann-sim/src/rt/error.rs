//! Why a runtime operation failed, or why a queued task faulted: an
//! [`Error`], whose [`ErrorKind`] the exports turn into the library's code
//! (`crate::acl::common::rt_code` for AscendCL; aclnn and HCCL report any
//! runtime failure as their own "runtime error" code).

/// What kind of failure: one per code AscendCL returns for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument or object state the runtime refuses: a stream being
    /// destroyed, memory freed twice (`ACL_ERROR_RT_PARAM_INVALID`).
    ParamInvalid,
    /// No stream left on the device (`ACL_ERROR_RT_NO_STREAM_RESOURCE`).
    NoStreamResource,
    /// No event left on the device (`ACL_ERROR_RT_NO_EVENT_RESOURCE`).
    NoEventResource,
    /// A device reset that was not set (`ACL_ERROR_RT_CONTEXT_RELEASE_ERROR`).
    ContextRelease,
    /// A thread that cannot be started (`ACL_ERROR_RT_RESOURCE_ALLOC_FAIL`).
    ResourceAllocFail,
    /// A stream already bound to, or not bound to, a callback thread
    /// (`ACL_ERROR_RT_STREAM_SUBSCRIBE`).
    StreamSubscribe,
    /// A callback thread of another device or stream
    /// (`ACL_ERROR_RT_THREAD_SUBSCRIBE`).
    ThreadSubscribe,
    /// Too many callback threads (`ACL_ERROR_RT_INTERNAL_ERROR`).
    Internal,
    /// A queued task that could not do its work: a callback nobody runs
    /// any more, a panic of the simulator (`ACL_ERROR_RT_DRV_INTERNAL_ERROR`).
    DrvInternal,
    /// A queued copy or fill whose memory went away
    /// (`ACL_ERROR_RT_SYS_DMA`).
    MemoryFault,
    /// A queued kernel or operator whose memory went away, or that failed
    /// (`ACL_ERROR_RT_AICORE_EXCEPTION`).
    KernelFault,
    /// A queued model whose execution failed (`ACL_ERROR_RT_MODEL_EXECUTE`).
    ModelFault,
    /// A queued collective whose peer never came
    /// (`ACL_ERROR_RT_FFTS_PLUS_TIMEOUT`).
    CollectiveTimeout,
    /// A queued collective whose peers failed, are gone or were called
    /// differently (`ACL_ERROR_RT_SUSPECT_REMOTE_ERROR`).
    RemoteFault,
    /// Work still pending that an access would race (check mode:
    /// `ACL_ERROR_RT_STREAM_NOT_COMPLETE`).
    StreamNotComplete,
    /// A free of memory a pending task uses (check mode:
    /// `ACL_ERROR_RT_MEMORY_FREE`).
    MemoryFree,
    /// Something the runtime does not support, such as capturing on a
    /// default stream (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`).
    FeatureNotSupport,
    /// A stream that is capturing (`ACL_ERROR_RT_STREAM_CAPTURED`).
    StreamCaptured,
    /// A stream that is not capturing (`ACL_ERROR_RT_STREAM_NOT_CAPTURED`).
    StreamNotCaptured,
    /// A capture ended by another thread
    /// (`ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD`).
    CaptureWrongThread,
    /// A model still being captured (`ACL_ERROR_RT_MODEL_CAPTURED`).
    ModelCaptured,
    /// A model still running (`ACL_ERROR_RT_MODEL_RUNNING`).
    ModelRunning,
    /// A synchronous call a capture mode forbids
    /// (`ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT`).
    CaptureModeNotSupport,
    /// An event part of an active capture (`ACL_ERROR_RT_EVENT_CAPTURED`).
    EventCaptured,
    /// A capture's event used on a default stream
    /// (`ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT`).
    StreamCaptureImplicit,
    /// A capture depending on work outside it
    /// (`ACL_ERROR_RT_CAPTURE_DEPENDENCY`).
    CaptureDependency,
    /// An event linking two captures (`ACL_ERROR_STREAM_CAPTURE_CONFLICT`).
    CaptureConflict,
    /// A capture ended on a stream that only joined it
    /// (`ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED`).
    CaptureUnmatched,
    /// A stream that joined a capture and did not rejoin
    /// (`ACL_ERROR_RT_STREAM_UNJOINED`).
    StreamUnjoined,
    /// A task group begun twice, ended or updated in the wrong state
    /// (`ACL_ERROR_STREAM_TASK_GROUP_STATUS`).
    TaskGroupStatus,
    /// A task of another stream of a capture while a task group is open
    /// (`ACL_ERROR_STREAM_TASK_GROUP_INTR`).
    TaskGroupInterrupted,
    /// A task a task group or a task update cannot hold
    /// (`ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT`).
    TaskTypeNotSupport,
    /// `aclmdlRIUpdate` of a model that cannot be updated
    /// (`ACL_ERROR_RT_MODEL_UPDATE_FAILED`).
    ModelUpdateFailed,
    /// A capture invalidated by an earlier failure
    /// (`ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED`).
    CaptureInvalidated,
    /// A stream bound to a model already, or not bound to the model named
    /// (`ACL_ERROR_RT_STREAM_MODEL`).
    StreamModel,
    /// A queued wait that outlived the operator wait timeout
    /// (`ACL_ERROR_RT_TASK_TIMEOUT`, the runtime's code for the task
    /// scheduler's `RT_ERROR_TSFW_TASK_TIMEOUT`, hicann/runtime
    /// `src/runtime/core/src/common/errcode_manage.cc`).
    TaskTimeout,
    /// A capture ended while a sub-model of one of its conditional tasks is
    /// still capturing, or was never captured
    /// (`ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING`, the runtime's
    /// `RT_ERROR_STREAM_SUB_ACLGRAPH_IS_CAPTURING`).
    SubGraphCapturing,
    /// A model execution stopped by `aclmdlRIAbort`, reported by the next
    /// synchronisation of its stream (`ACL_ERROR_RT_MODEL_ABORT_NORMAL`: the
    /// task scheduler's `TS_ERROR_MODEL_ABORTED` is `RT_ERROR_MODEL_ABORT_NORMAL`,
    /// hicann/runtime `src/runtime/core/src/stream/stream.cc` `Stream::GetError`,
    /// `src/runtime/api/api_c_stream.cc` `rtStreamSynchronize`).
    ModelAborted,
    /// A handle that is not (any more) a live object of its kind
    /// (`ACL_ERROR_RT_INVALID_HANDLE`, hicann/runtime
    /// `src/runtime/core/src/common/runtime_handle_guard.cc`).
    InvalidHandle,
}

/// Why a runtime operation failed: its kind and a sentence (without the
/// calling function's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// What happened.
    pub msg: String,
}

impl Error {
    /// A failure of `kind`.
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Error {
        Error {
            kind,
            msg: msg.into(),
        }
    }
}

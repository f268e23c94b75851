//! The tasks of a captured model: `aclmdlRIGetStreams`,
//! `aclmdlRIGetTasksByStream`, `aclmdlRITaskGetType`, `aclmdlRITaskGetSeqId`,
//! `aclmdlRITaskGetParams`, `aclmdlRITaskSetParams`, `aclmdlRITaskDisable`
//! — argument checks and codes; the engine is [`crate::rt::ri_task`].
//!
//! The ACL layer forwards without checks (hicann/runtime
//! `src/acl/aclrt_impl/model_ri.cpp` `aclmdlRIGetStreamsImpl`, `stream.cpp`
//! `aclmdlRIGetTasksByStreamImpl`, `kernel.cpp` `aclmdlRITask*Impl`); the
//! runtime's error decorator null-checks every pointer with
//! RT_ERROR_INVALID_VALUE (107000, `src/runtime/api/impl/api_error.cc`
//! `ApiErrorDecorator::ModelGetStreams` … `ModelTaskDisable`), then
//! `api_impl.cc` applies the rules cited in the engine. A handle the
//! simulator did not hand out, or of a destroyed model, is 107017.

use super::common::{self, PARAM_INVALID, code, rt_fail};
use super::model_ri::{Ri, ri_arg};
use crate::faults;
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup};
use crate::rt::ri_task::{self, Change, Params, RiStream, RiTask, TaskType};
use crate::rt::value::Cond;
use crate::rt::{Error, ErrorKind};
use acl_sys::{
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
    ACL_ERROR_RT_INVALID_HANDLE, ACL_MODEL_RI_TASK_EVENT_RECORD, ACL_MODEL_RI_TASK_EVENT_RESET,
    ACL_MODEL_RI_TASK_EVENT_WAIT, ACL_MODEL_RI_TASK_KERNEL, ACL_MODEL_RI_TASK_VALUE_WAIT,
    ACL_MODEL_RI_TASK_VALUE_WRITE, ACL_SUCCESS, aclError, aclmdlRI, aclmdlRITask,
    aclmdlRITaskParams, aclmdlRITaskType, aclrtEvent, aclrtStream,
};
use std::sync::Arc;

/// A null pointer the runtime's decorator refuses (107000).
fn null(function: &str, name: &str) -> aclError {
    fail(PARAM_INVALID, format!("{function}: {name} is null"))
}

pub(super) fn task_arg(function: &str, h: aclmdlRITask) -> Result<Arc<RiTask>, aclError> {
    match ri_task::lookup_task(h as usize) {
        Lookup::Live(t) => Ok(t),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {} (a task lives as long as its model: aclmdlRIDestroy ends it)",
                handles::describe_bad("model task", h as usize, &bad)
            ),
        )),
    }
}

/// The captured model of a call: a fault injected; null → 107000 (the
/// decorator); a bad handle → 107017; a built model → 207000 (the
/// simulator `does` captured models only).
fn captured_arg(
    function: &str,
    model_ri: aclmdlRI,
    does: &str,
) -> Result<Arc<crate::rt::capture::Model>, aclError> {
    if let Some(code) = faults::check(function) {
        return Err(code);
    }
    if model_ri.is_null() {
        return Err(null(function, "modelRI"));
    }
    match ri_arg(function, model_ri)? {
        Ri::Captured(m) => Ok(m),
        Ri::Built(_) => Err(fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!("{function}: cann-sim {does} captured models only"),
        )),
    }
}

/// Writes the first `out.len()` handles of `all` to `array` (the rest of
/// its `*num` entries null), `*num` to how many were written: the
/// runtime's `Model::ModelGetStreams` and `Stream::StreamGetTasks`. With a
/// null `array`, `*num` is the count. 107039 when the array is too small.
///
/// # Safety
///
/// `array` is null or valid for writing `*num` pointers; `num` is valid.
unsafe fn fill(
    function: &str,
    what: &str,
    all: &[usize],
    array: *mut *mut std::ffi::c_void,
    num: *mut u32,
) -> aclError {
    let total = all.len() as u32;
    if array.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *num = total };
        return ACL_SUCCESS;
    }
    // SAFETY: the caller's contract.
    let cap = unsafe { *num };
    let n = cap.min(total);
    for i in 0..cap as usize {
        let h = all.get(i).filter(|_| i < n as usize).copied().unwrap_or(0);
        // SAFETY: `i < *num`, the array's size (the caller's contract).
        unsafe { *array.add(i) = h as *mut std::ffi::c_void };
    }
    // SAFETY: the caller's contract.
    unsafe { *num = n };
    if n < total {
        return fail(
            code(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY),
            format!(
                "{function}: the array holds {n} entries, fewer than the {total} {what}; the \
                 first {n} were written (call with a null array to get the count)"
            ),
        );
    }
    ACL_SUCCESS
}

/// `aclmdlRIGetStreams`: the model's streams (a null `streams`: their
/// number in `*numStreams`).
///
/// Null model or `numStreams` → 107000; a bad handle → 107017; a built
/// model → 207000 (not simulated); a sub-model → 207000; no context →
/// 107002; a model of another context → 107004 (`api_impl.cc`
/// `ApiImpl::ModelGetStreams`); an array smaller than the count → 107039,
/// the first entries written (`model.cc` `Model::ModelGetStreams`).
///
/// # Safety
///
/// `streams` is null or valid for writing `*numStreams` handles;
/// `numStreams` is null or valid for reading and writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetStreams(
    model_ri: aclmdlRI,
    streams: *mut aclrtStream,
    num_streams: *mut u32,
) -> aclError {
    const F: &str = "aclmdlRIGetStreams";
    let m = tri!(captured_arg(F, model_ri, "lists the streams of"));
    if num_streams.is_null() {
        return null(F, "numStreams");
    }
    let all = match ri_task::streams(&m) {
        Ok(all) => all,
        Err(e) => return rt_fail(F, e),
    };
    tri!(super::model_ri_name::in_current_context(F, m.ctx_id));
    // SAFETY: the caller's contract.
    unsafe { fill(F, "streams of the model", &all, streams.cast(), num_streams) }
}

/// The stream of `aclmdlRIGetTasksByStream`: a stream of a captured model
/// (from `aclmdlRIGetStreams`); a stream of the application → 107000
/// ("not bound to a model", `ApiImpl::StreamGetTasks`), or 207000 when it
/// is bound to a built model (not simulated); anything else → 107017.
fn model_stream(function: &str, h: aclrtStream) -> Result<Arc<RiStream>, aclError> {
    if let Lookup::Live(s) = ri_task::lookup_stream(h as usize) {
        return Ok(s);
    }
    let s = common::stream_arg(function, h)?;
    let Some(s) = s else {
        return Err(null(function, "stream"));
    };
    if crate::model::build::bound_model(&s).is_some() {
        return Err(fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{function}: {} is bound to a built model; cann-sim lists the tasks of captured \
                 models only",
                s.label()
            ),
        ));
    }
    Err(fail(
        PARAM_INVALID,
        format!(
            "{function}: {} is not bound to a model; pass a stream aclmdlRIGetStreams returned",
            s.label()
        ),
    ))
}

/// `aclmdlRIGetTasksByStream`: the tasks of a model stream, in capture
/// order (a null `tasks`: their number in `*numTasks`).
///
/// Null stream or `numTasks` → 107000; an application stream → 107000; an
/// array smaller than the count → 107039, the first entries written
/// (`stream.cc` `Stream::StreamGetTasks`).
///
/// # Safety
///
/// `tasks` is null or valid for writing `*numTasks` handles; `numTasks` is
/// null or valid for reading and writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetTasksByStream(
    stream: aclrtStream,
    tasks: *mut aclmdlRITask,
    num_tasks: *mut u32,
) -> aclError {
    const F: &str = "aclmdlRIGetTasksByStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return null(F, "stream");
    }
    if num_tasks.is_null() {
        return null(F, "numTasks");
    }
    let s = tri!(model_stream(F, stream));
    let all = match ri_task::tasks(&s) {
        Ok(all) => all,
        Err(e) => return rt_fail(F, e),
    };
    // SAFETY: the caller's contract.
    unsafe { fill(F, "tasks of the stream", &all, tasks.cast(), num_tasks) }
}

/// The task of a task call: null task or output → 107000 (the decorator),
/// then the handle (107017).
fn task_and_out<T>(
    function: &str,
    task: aclmdlRITask,
    out: *mut T,
    out_name: &str,
) -> Result<Arc<RiTask>, aclError> {
    if task.is_null() {
        return Err(null(function, "task"));
    }
    if out.is_null() {
        return Err(null(function, out_name));
    }
    task_arg(function, task)
}

/// `aclmdlRITaskGetType`: the task's `aclmdlRITaskType`.
///
/// Null task or type → 107000; a task of a sub-model → 207000.
///
/// # Safety
///
/// `type_` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetType(
    task: aclmdlRITask,
    type_: *mut aclmdlRITaskType,
) -> aclError {
    const F: &str = "aclmdlRITaskGetType";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let t = tri!(task_and_out(F, task, type_, "type"));
    match ri_task::task_type(&t) {
        Ok(ty) => {
            // SAFETY: checked non-null; the caller passes a writable type.
            unsafe { *type_ = ty as aclmdlRITaskType };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRITaskGetSeqId`: the task's number in its capture, from 0.
///
/// Null task or id → 107000; a task of a sub-model → 207000 (`api_impl.cc`
/// `ApiImpl::TaskGetSeqId`).
///
/// # Safety
///
/// `id` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetSeqId(task: aclmdlRITask, id: *mut u32) -> aclError {
    const F: &str = "aclmdlRITaskGetSeqId";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let t = tri!(task_and_out(F, task, id, "id"));
    match ri_task::seq_id(&t) {
        Ok(v) => {
            // SAFETY: checked non-null; the caller passes a writable id.
            unsafe { *id = v };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRITaskGetParams`: the task's parameters, the struct zeroed first
/// (`ApiImpl::TaskGetParams`; `taskGrp`, `opInfoPtr`, `opInfoSize` stay 0,
/// `memory_task.cc` `SetCommonTaskParams`). Event tasks: the event, the
/// flags it was created with, and whether it is external (record and wait
/// flags 1); value write: address and value; value wait: address, value
/// and flag.
///
/// Null task or params → 107000; a DEFAULT task → 107000; a kernel
/// launch: its function handle, arguments, their size and block count
/// (`crate::rt::ri_kernel`); an operator's kernel → 207000 (the simulator
/// keeps no function handle for it).
///
/// # Safety
///
/// `params` is null or valid for writing an `aclmdlRITaskParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskGetParams(
    task: aclmdlRITask,
    params: *mut aclmdlRITaskParams,
) -> aclError {
    const F: &str = "aclmdlRITaskGetParams";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let t = tri!(task_and_out(F, task, params, "params"));
    let p = match ri_task::params(&t) {
        Ok(p) => p,
        Err(e) => return rt_fail(F, e),
    };
    let mut out = aclmdlRITaskParams::default();
    let event = |e: &Arc<crate::rt::event::Event>| e.handle() as aclrtEvent;
    match p {
        Params::EventRecord(e, external) => {
            out.type_ = ACL_MODEL_RI_TASK_EVENT_RECORD;
            out.__bindgen_anon_1.eventRecordTaskParams = acl_sys::aclmdlRIEventRecordTaskParams {
                event: event(&e),
                eventFlag: e.flags,
                recordFlag: external as u32,
            };
        }
        Params::EventWait(e, external) => {
            out.type_ = ACL_MODEL_RI_TASK_EVENT_WAIT;
            out.__bindgen_anon_1.eventWaitTaskParams = acl_sys::aclmdlRIEventWaitTaskParams {
                event: event(&e),
                eventFlag: e.flags,
                waitFlag: external as u32,
            };
        }
        Params::EventReset(e) => {
            out.type_ = ACL_MODEL_RI_TASK_EVENT_RESET;
            out.__bindgen_anon_1.eventResetTaskParams = acl_sys::aclmdlRIEventResetTaskParams {
                event: event(&e),
                eventFlag: e.flags,
                resetFlag: 0,
            };
        }
        Params::ValueWrite(addr, value) => {
            out.type_ = ACL_MODEL_RI_TASK_VALUE_WRITE;
            out.__bindgen_anon_1.valueWriteTaskParams = acl_sys::aclmdlRIValueWriteTaskParams {
                devAddr: addr as *mut std::ffi::c_void,
                value,
            };
        }
        Params::Kernel(k) => {
            out.type_ = ACL_MODEL_RI_TASK_KERNEL;
            out.__bindgen_anon_1.kernelTaskParams = acl_sys::aclmdlRIKernelTaskParams {
                funcHandle: k.handle() as acl_sys::aclrtFuncHandle,
                cfg: std::ptr::null_mut(),
                // The task's own copy, alive while the task is (until the
                // model is destroyed or the task set again).
                args: k.args.as_ptr() as *mut std::ffi::c_void,
                isHostArgs: 0,
                argsSize: k.args.len(),
                numBlocks: k.blocks,
                rsv: [0; 10],
            };
        }
        Params::ValueWait(addr, value, flag) => {
            out.type_ = ACL_MODEL_RI_TASK_VALUE_WAIT;
            out.__bindgen_anon_1.valueWaitTaskParams = acl_sys::aclmdlRIValueWaitTaskParams {
                devAddr: addr as *mut std::ffi::c_void,
                value,
                flag,
            };
        }
    }
    // SAFETY: checked non-null; the caller passes a writable struct.
    unsafe { params.write(out) };
    ACL_SUCCESS
}

/// The change a value write or wait asks for: `taskGrp`, `opInfoPtr`,
/// `opInfoSize` must be null/0 (`memory_task.cc` `CheckUpdatingTaskParams`);
/// the simulator also requires the 8 bytes at `devAddr` to be live device
/// memory of the current device, and a wait flag 0–3.
fn value_change(p: &aclmdlRITaskParams, wait: bool) -> Change {
    let refused = |msg: String| Change::Refused(Error::new(ErrorKind::ParamInvalid, msg));
    if !p.taskGrp.is_null() {
        return refused("params->taskGrp must be null".into());
    }
    if !p.opInfoPtr.is_null() {
        return refused("params->opInfoPtr must be null".into());
    }
    if p.opInfoSize != 0 {
        return refused(format!(
            "params->opInfoSize must be 0, not {}",
            p.opInfoSize
        ));
    }
    // SAFETY: a plain-data union: every field is valid for any bytes.
    let (addr, value, flag) = unsafe {
        if wait {
            let w = p.__bindgen_anon_1.valueWaitTaskParams;
            (w.devAddr as usize, w.value, w.flag)
        } else {
            let w = p.__bindgen_anon_1.valueWriteTaskParams;
            (w.devAddr as usize, w.value, 0)
        }
    };
    let device = match crate::state::current_context() {
        Some(ctx) => ctx.device,
        None => return refused("no context is set on this thread".into()),
    };
    let at = match crate::rt::op::device_range("", "devAddr", addr, 8, device) {
        Ok(Some(at)) => at,
        Ok(None) => return refused("devAddr lies in no allocation".into()),
        Err(e) => return Change::Refused(e),
    };
    if wait {
        match Cond::from_flag(flag) {
            Some(cond) => Change::ValueWait {
                addr,
                value,
                cond,
                at,
            },
            None => refused(format!(
                "params->valueWaitTaskParams.flag {flag} is invalid; expected 0 (>=), 1 (==), \
                 2 (and) or 3 (nor)"
            )),
        }
    } else {
        Change::ValueWrite { addr, value, at }
    }
}

/// `aclmdlRITaskSetParams`: changes a task; the model must be updated
/// (`aclmdlRIUpdate`) before its next execution, which runs the changed
/// task. A value write or wait replaces any task that is not DEFAULT.
///
/// Null task or params → 107000; a task of a sub-model → 207000; the model
/// running or not READY/UPDATING → 107040; event types, unknown types, a
/// DEFAULT task, or value parameters with `taskGrp`/`opInfoPtr`/`opInfoSize`
/// set → 107000 and the model FAULT (`api_impl.cc` `ApiImpl::TaskSetParams`,
/// `memory_task.cc` `CheckUpdatingTaskParams`); kernel parameters for a
/// task that is not a kernel, with `taskGrp` set, a null function handle,
/// null arguments or a size of 0 → 107000 and the model FAULT; a function
/// handle that is not live → 107017 (`kernel_utils.cc` `UpdateKernelParams`).
///
/// # Safety
///
/// `params` is null or valid for reading an `aclmdlRITaskParams`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskSetParams(
    task: aclmdlRITask,
    params: *mut aclmdlRITaskParams,
) -> aclError {
    const F: &str = "aclmdlRITaskSetParams";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let t = tri!(task_and_out(F, task, params, "params"));
    // SAFETY: checked non-null; the caller passes a readable struct.
    let p = unsafe { &*params };
    let change = match p.type_ {
        // SAFETY: forwarded from the caller (the struct is readable).
        ACL_MODEL_RI_TASK_KERNEL => Change::Kernel(unsafe { super::ri_kernel::kernel_change(p) }),
        ACL_MODEL_RI_TASK_EVENT_RECORD => Change::Event(TaskType::EventRecord),
        ACL_MODEL_RI_TASK_EVENT_WAIT => Change::Event(TaskType::EventWait),
        ACL_MODEL_RI_TASK_EVENT_RESET => Change::Event(TaskType::EventReset),
        ACL_MODEL_RI_TASK_VALUE_WRITE => value_change(p, false),
        ACL_MODEL_RI_TASK_VALUE_WAIT => value_change(p, true),
        other => Change::Unknown(other),
    };
    match ri_task::set_params(&t, change) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRITaskDisable`: the task does nothing from the model's next
/// execution (after `aclmdlRIUpdate`) until it is set again.
///
/// Null → 107000; a task of a sub-model → 207000; the model running or not
/// READY/UPDATING → 107040; a DEFAULT task → 107000, the model FAULT
/// (`api_impl.cc` `ApiImpl::ModelTaskDisable`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRITaskDisable(task: aclmdlRITask) -> aclError {
    const F: &str = "aclmdlRITaskDisable";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if task.is_null() {
        return null(F, "task");
    }
    let t = tri!(task_arg(F, task));
    match ri_task::disable(&t) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIAbort`: stops the model's executions in flight (hicann/runtime
/// `model_ri.cpp` `aclmdlRIAbortImpl`, `api_c.cc` `rtModelAbort`); the
/// model can be executed again afterwards.
///
/// Null → 107000; a bad handle → 107017; a sub-model → 207000
/// (`ApiErrorDecorator::ModelAbort`); no context → 107002; a model of
/// another context → 107004 (`ApiImpl::ModelAbort`). Each execution
/// queued or running is stopped, and its stream's next synchronisation
/// reports 507023 (`ACL_ERROR_RT_MODEL_ABORT_NORMAL`; see
/// `rt::ri_task::abort`), for captured and built models alike.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIAbort(model_ri: aclmdlRI) -> aclError {
    const F: &str = "aclmdlRIAbort";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return null(F, "modelRI");
    }
    match tri!(ri_arg(F, model_ri)) {
        Ri::Captured(m) => {
            if m.sub {
                return rt_fail(
                    F,
                    Error::new(
                        ErrorKind::FeatureNotSupport,
                        "the model is a sub-model of a conditional task (sub ACL Graph), which \
                         does not support aborting",
                    ),
                );
            }
            tri!(super::model_ri_name::in_current_context(F, m.ctx_id));
            ri_task::abort(&m);
        }
        Ri::Built(m) => {
            tri!(super::model_ri_name::in_current_context(F, m.ctx_id));
            m.abort(&ri_task::aborted());
        }
    }
    ACL_SUCCESS
}

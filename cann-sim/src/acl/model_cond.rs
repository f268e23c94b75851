//! Conditional tasks of captured models: `aclmdlRICondHandleCreate`,
//! `aclmdlRICondHandleGetCondPtr`, `aclmdlRIAddCondTask` and
//! `aclmdlRICaptureToModelRIBegin` — argument checks and codes, in the
//! order of hicann/runtime `src/acl/aclrt_impl/model_ri.cpp` (the ACL
//! layer's null checks, 100000), `src/runtime/api/api_c_standard_soc.cc`
//! (handle validation, 107017), `src/runtime/feature/aclgraph/api_error_aclgraph.cc`
//! (`ApiErrorDecorator`) and `v100/api_impl_aclgraph.cc` (`ApiImpl`). The
//! engine is [`crate::rt::cond`] and [`crate::rt::capture`].

use super::common::{self, PARAM_INVALID, code, rt_fail};
use crate::faults;
use crate::model::build;
use crate::recent_error::fail;
use crate::rt::capture::{self, Mode, Model};
use crate::rt::cond::{self, CondHandle, CondType};
use crate::rt::handles::{self, Lookup};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_MODEL_CONTEXT, ACL_ERROR_RT_STREAM_MODEL,
    ACL_ERROR_RT_STREAM_NOT_CAPTURED, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, ACL_SUCCESS,
    aclError, aclmdlRI, aclmdlRICaptureMode, aclmdlRICondHandle, aclmdlRICondHandleFlag,
    aclmdlRICondTaskParams, aclrtStream,
};
use std::sync::Arc;

/// A model handle of this API (`RT_VALIDATE_AND_UNWRAP_OBJECT`): a captured
/// model (`Ok(Some)`), a built one (`Ok(None)`: the decorators refuse it
/// later, by type), anything else 107017.
fn model_arg(function: &str, h: aclmdlRI) -> Result<Option<Arc<Model>>, aclError> {
    if let Lookup::Live(_) = build::lookup(h as usize) {
        return Ok(None);
    }
    match capture::lookup(h as usize) {
        Lookup::Live(m) => Ok(Some(m)),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("model run instance", h as usize, &bad)
            ),
        )),
    }
}

/// A condition handle: 107017 when it is not a live one.
fn cond_arg(function: &str, h: aclmdlRICondHandle) -> Result<Arc<CondHandle>, aclError> {
    match cond::lookup(h as usize) {
        Lookup::Live(c) => Ok(c),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("condition handle", h as usize, &bad)
            ),
        )),
    }
}

/// `aclmdlRICondHandleCreate`: a condition handle on `modelRI`, a model
/// whose capture is active; its value (8 bytes of device memory, zeroed)
/// selects the branch of the conditional task added with it. With
/// `ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT` each execution starts by
/// setting it to `defaultLaunchValue`.
///
/// Null `modelRI` or `handle` → 100000; a bad model handle → 107017;
/// `flag` above 1 → 107000; a built model → 207000
/// (`ApiErrorDecorator::ModelCondHandleCreate`); a capture not active →
/// 107000; no context → 107002; a model of another context → 107004
/// (`ApiImpl::ModelCondHandleCreate`).
///
/// # Safety
///
/// `handle` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleCreate(
    model_ri: aclmdlRI,
    default_launch_value: u32,
    flag: aclmdlRICondHandleFlag,
    handle: *mut aclmdlRICondHandle,
) -> aclError {
    const F: &str = "aclmdlRICondHandleCreate";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if handle.is_null() {
        return common::null_arg(F, "handle");
    }
    let m = tri!(model_arg(F, model_ri));
    if flag > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT {
        return fail(
            PARAM_INVALID,
            format!("{F}: flag {flag} is invalid; expected [0, 1]"),
        );
    }
    let Some(m) = m else {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: the model run instance was built with aclmdlRIBuildBegin; condition \
                 handles are made on models being captured (ACL Graph)"
            ),
        );
    };
    if !m.capture_active() {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: model {:#x} is not in the capture stage; create condition handles while \
                 it is being captured",
                m.handle()
            ),
        );
    }
    let ctx = tri!(common::current(F));
    if m.ctx_id != ctx.id {
        return fail(
            code(ACL_ERROR_RT_MODEL_CONTEXT),
            format!(
                "{F}: model {:#x} was captured in context {}, not in the current {}",
                m.handle(),
                m.ctx_id,
                ctx.label()
            ),
        );
    }
    let budget = match crate::config::get() {
        Ok(c) => c.hbm_bytes,
        Err(msg) => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: cann-sim configuration: {msg}"),
            );
        }
    };
    let assign = flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT;
    match cond::create(&m, ctx.device, budget, default_launch_value, assign) {
        Ok(h) => {
            // SAFETY: checked non-null; the caller passes a writable handle.
            unsafe { *handle = h.handle() as aclmdlRICondHandle };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICondHandleGetCondPtr`: the device address of the handle's
/// 8-byte value, which the program (a kernel, a copy) writes to choose a
/// branch; the runtime frees it with the model.
///
/// Null `handle` or `ptr` → 100000; a bad handle → 107017; no context →
/// 107002 (`ApiImpl::ModelCondHandleGetCondPtr`).
///
/// # Safety
///
/// `ptr` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICondHandleGetCondPtr(
    handle: aclmdlRICondHandle,
    ptr: *mut *mut u64,
) -> aclError {
    const F: &str = "aclmdlRICondHandleGetCondPtr";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() {
        return common::null_arg(F, "handle");
    }
    if ptr.is_null() {
        return common::null_arg(F, "ptr");
    }
    let h = tri!(cond_arg(F, handle));
    tri!(common::current(F));
    // SAFETY: checked non-null; the caller passes a writable pointer.
    unsafe { *ptr = h.ptr() as *mut u64 };
    ACL_SUCCESS
}

/// `aclmdlRIAddCondTask`: adds a conditional task of `params.handle` on
/// `stream`, a stream capturing into the handle's model; writes the
/// `params.size` sub-models it makes to `params.modelRIArray`, for
/// `aclmdlRICaptureToModelRIBegin`. At each execution the task runs the
/// sub-model the value selects (IF: 0 when not 0, else 1 if there is one;
/// WHILE: 0 as long as the value is not 0; SWITCH: the one it indexes).
///
/// Null stream → 100000; a bad handle or stream → 107017; `params.type`
/// above 2, `flags` not 0, a null `params.handle` or `params.modelRIArray`
/// → 107000 (`ApiErrorDecorator::StreamAddCondTask`); a handle used already
/// → 107000; no context → 107002; a stream of another context → 107003; a
/// stream not capturing → 107029; a stream capturing into another model
/// than the handle's → 107000; a size the type does not take → 107000
/// (`ApiImpl::StreamAddCondTaskParasCheck`, `CheckCondTaskParamsSize`).
///
/// # Safety
///
/// `params.modelRIArray` is null or valid for writing `params.size`
/// handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIAddCondTask(
    params: aclmdlRICondTaskParams,
    stream: aclrtStream,
    flags: u32,
) -> aclError {
    const F: &str = "aclmdlRIAddCondTask";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    // `rtStreamAddCondTask` validates the handle (a null one passes, for the
    // decorator's null check), then the stream.
    let h = if params.handle.is_null() {
        None
    } else {
        Some(tri!(cond_arg(F, params.handle)))
    };
    let s = tri!(common::stream_arg(F, stream));
    let Some(ty) = CondType::from_raw(params.type_) else {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: params.type {} is invalid; expected [0, 2]",
                params.type_
            ),
        );
    };
    if flags != 0 {
        return fail(
            PARAM_INVALID,
            format!("{F}: flags {flags} is invalid; it is reserved and must be 0"),
        );
    }
    let Some(h) = h else {
        return fail(PARAM_INVALID, format!("{F}: params.handle is null"));
    };
    if params.modelRIArray.is_null() {
        return fail(PARAM_INVALID, format!("{F}: params.modelRIArray is null"));
    }
    if h.used() {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: params.handle was used by a conditional task already; create a new handle \
                 before adding another conditional task"
            ),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    let Some(m) = capture::info(&s) else {
        return fail(
            code(ACL_ERROR_RT_STREAM_NOT_CAPTURED),
            format!(
                "{F}: {} must be capturing (aclmdlRICaptureBegin) before a conditional task is \
                 added to it",
                s.label()
            ),
        );
    };
    if !h.model().is_some_and(|p| Arc::ptr_eq(&p, &m)) {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the condition handle was made on another model than the one {} captures \
                 into ({:#x})",
                s.label(),
                m.handle()
            ),
        );
    }
    match h.add_task(&m, &s, ty, params.size) {
        Ok(subs) => {
            // SAFETY: checked non-null; the caller passes room for
            // `params.size` handles, and `subs` has that many.
            let out = unsafe { std::slice::from_raw_parts_mut(params.modelRIArray, subs.len()) };
            for (o, sub) in out.iter_mut().zip(&subs) {
                *o = sub.handle() as aclmdlRI;
            }
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRICaptureToModelRIBegin`: from now on, the work queued on
/// `stream` is recorded into `modelRI`, a sub-model of a conditional task
/// (`aclmdlRIAddCondTask`); `aclmdlRICaptureEnd` ends it (its `modelRI`
/// may then be null). A sub-model runs only through its parent's
/// executions and is destroyed with it.
///
/// Null stream or `modelRI` → 100000; a bad handle → 107017; an invalid
/// mode → 107000; a stream whose flags do not support capture → 507000; a
/// model that is not a sub-model of a conditional task → 107000
/// (`ApiErrorDecorator::StreamBeginCapture`); no context → 107002; a stream
/// of another context → 107003; a stream bound to a built model → 107005;
/// the default stream → 207000 (`ApiImpl::StreamBeginCapture`); a sub-model
/// captured already → 107026; a stream capturing already → 107027
/// (`Context::StreamBeginCapture`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRICaptureToModelRIBegin(
    stream: aclrtStream,
    model_ri: aclmdlRI,
    mode: aclmdlRICaptureMode,
) -> aclError {
    const F: &str = "aclmdlRICaptureToModelRIBegin";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    let m = tri!(model_arg(F, model_ri));
    let s = tri!(common::stream_arg(F, stream));
    let Some(mode) = Mode::from_raw(mode) else {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: capture mode {mode} is invalid; expected GLOBAL (0), THREAD_LOCAL (1) or \
                 RELAXED (2)"
            ),
        );
    };
    if let Some(s) = &s
        && common::is_non_host(s)
    {
        // RT_ERROR_STREAM_INVALID, returned by the ACL layer as 507000.
        return fail(
            code(ACL_ERROR_RT_INTERNAL_ERROR),
            format!(
                "{F}: {} was created with flags {:#x}, which do not support capture",
                s.label(),
                s.flags
            ),
        );
    }
    let Some(m) = m.filter(|m| m.sub) else {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the model run instance is not a sub-model of a conditional task (sub ACL \
                 Graph); aclmdlRIAddCondTask makes them"
            ),
        );
    };
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    if let Some(b) = build::bound_model(&s) {
        return fail(
            code(ACL_ERROR_RT_STREAM_MODEL),
            format!("{F}: {} is bound to model {} already", s.label(), b.id),
        );
    }
    match capture::begin_into(&s, mode, false, Some(m)) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

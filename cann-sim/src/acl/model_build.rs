//! Explicit model construction: `aclmdlRIBuildBegin`, `aclmdlRIBindStream`,
//! `aclmdlRIUnbindStream`, `aclmdlRIEndTask`, `aclmdlRIBuildEnd`, and the
//! label API (`aclrtCreateLabel`, `aclrtSetLabel`, `aclrtDestroyLabel`,
//! `aclrtCreateLabelList`, `aclrtDestroyLabelList`,
//! `aclrtSwitchLabelByIndex`) — argument checks and codes, in the order of
//! hicann/runtime `src/acl/aclrt_impl/model_ri.cpp` and `label.cpp` (the
//! ACL layer's null checks, 100000), then `src/runtime/api/api_c_model.cc`
//! (flags, handles), `src/runtime/api/impl/api_error.cc` (the
//! `ApiErrorDecorator` checks) and `api_impl.cc` (contexts). The engine is
//! [`crate::model::build`].

use super::common::{self, PARAM_INVALID, code, rt_fail};
use crate::faults;
use crate::model::build::{self, Built, Label, LabelList};
use crate::recent_error::fail;
use crate::rt::capture;
use crate::rt::handles::{self, Lookup};
use crate::rt::{Context, Stream};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_LABEL_CONTEXT, ACL_ERROR_RT_MODEL_CONTEXT, ACL_ERROR_RT_STREAM_CAPTURED,
    ACL_ERROR_RT_STREAM_MODEL, ACL_MODEL_STREAM_FLAG_DEFAULT, ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STREAM_DEVICE_USE_ONLY, ACL_STREAM_FAST_LAUNCH, ACL_STREAM_PERSISTENT, ACL_SUCCESS,
    aclError, aclmdlRI, aclrtLabel, aclrtLabelList, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

/// A model handle of the build API: a built model; a captured one is
/// refused with 107000 ("ACL Graph mode is not supported",
/// `ApiErrorDecorator::ModelBindStream` and its siblings); anything else is
/// 107017 (`RT_VALIDATE_AND_UNWRAP_OBJECT`).
fn built_arg(function: &str, h: aclmdlRI) -> Result<Arc<Built>, aclError> {
    match build::lookup(h as usize) {
        Lookup::Live(m) => Ok(m),
        bad => {
            if let Lookup::Live(_) = capture::lookup(h as usize) {
                return Err(fail(
                    PARAM_INVALID,
                    format!(
                        "{function}: the model run instance was made by a capture (ACL Graph \
                         mode), which the build API does not take"
                    ),
                ));
            }
            Err(fail(
                code(ACL_ERROR_RT_INVALID_HANDLE),
                format!(
                    "{function}: {}",
                    handles::describe_bad("model run instance", h as usize, &bad)
                ),
            ))
        }
    }
}

/// The model must belong to the current context: 107004
/// (`COND_RETURN_AND_MSG_INVALID_CONTEXT_MODEL_WITH_FUNC_DESC`).
pub(crate) fn model_in_context(function: &str, m: &Built, ctx: &Context) -> Result<(), aclError> {
    if m.ctx_id == ctx.id {
        return Ok(());
    }
    Err(fail(
        code(ACL_ERROR_RT_MODEL_CONTEXT),
        format!(
            "{function}: model {} was built in context {}, not in the current {}",
            m.id,
            m.ctx_id,
            ctx.label()
        ),
    ))
}

/// A capturing stream: 107027 (the decorators' `IsCapturing` check).
fn not_capturing(function: &str, s: &Stream) -> Result<(), aclError> {
    if s.capture.lock().is_none() {
        return Ok(());
    }
    Err(fail(
        code(ACL_ERROR_RT_STREAM_CAPTURED),
        format!(
            "{function}: {} is capturing, which the build API does not support",
            s.label()
        ),
    ))
}

/// The stream of a build call (`GetCurStream`: null is the default stream).
fn build_stream(function: &str, stream: aclrtStream) -> Result<Arc<Stream>, aclError> {
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    Ok(common::or_default(s, &ctx))
}

/// A built model, a stream and the current context.
type BuildCall = (Arc<Built>, Arc<Stream>, Arc<Context>);

/// The first checks of `aclmdlRIUnbindStream` and `aclmdlRIEndTask`: a null
/// model (100000), the handles (107017), a captured model (107000), a
/// capturing stream (107027), no context (107002); the model, the stream
/// (null: the default stream) and the current context.
fn model_and_stream(
    function: &str,
    model_ri: aclmdlRI,
    stream: aclrtStream,
) -> Result<BuildCall, aclError> {
    if model_ri.is_null() {
        return Err(common::null_arg(function, "modelRI"));
    }
    let m = built_arg(function, model_ri)?;
    let s = build_stream(function, stream)?;
    not_capturing(function, &s)?;
    let ctx = common::current(function)?;
    Ok((m, s, ctx))
}

/// `aclmdlRIBuildBegin`: a new, empty model run instance; streams bound to
/// it with `aclmdlRIBindStream` record their work into it.
///
/// Null `modelRI` → 100000; `flag` other than 0 → 107000
/// (`rtsModelCreate`); no current context → 107002.
///
/// # Safety
///
/// `modelRI` is null or valid for writing an `aclmdlRI`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIBuildBegin(model_ri: *mut aclmdlRI, flag: u32) -> aclError {
    const F: &str = "aclmdlRIBuildBegin";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if flag != 0 {
        return fail(
            PARAM_INVALID,
            format!("{F}: flag {flag} is invalid; expected 0"),
        );
    }
    let ctx = tri!(common::current(F));
    let m = build::begin(ctx.id);
    // SAFETY: checked non-null; the caller passes a writable handle.
    unsafe { *model_ri = m.handle() as aclmdlRI };
    ACL_SUCCESS
}

/// `aclmdlRIBindStream`: binds a persistent stream to a model being built;
/// its work is recorded into the model from now on. `flag` is
/// `ACL_MODEL_STREAM_FLAG_HEAD` (the stream runs when the model is
/// executed) or `ACL_MODEL_STREAM_FLAG_DEFAULT` (it runs when activated).
///
/// Null `modelRI` → 100000; another flag → 107000; bad handles → 107017;
/// a non-persistent stream → 107000; a stream bound already → 107005
/// (`rtsModelBindStream`); a captured model → 107000; a capturing stream →
/// 107027; `ACL_STREAM_DEVICE_USE_ONLY` → 507000; `ACL_STREAM_FAST_LAUNCH`
/// → 207000 (`ApiErrorDecorator::ModelBindStream`); no context → 107002;
/// a model of another context → 107004 (`ApiImpl::ModelBindStream`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIBindStream(
    model_ri: aclmdlRI,
    stream: aclrtStream,
    flag: u32,
) -> aclError {
    const F: &str = "aclmdlRIBindStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if flag != ACL_MODEL_STREAM_FLAG_HEAD && flag != ACL_MODEL_STREAM_FLAG_DEFAULT {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: flag {flag:#x} is invalid; expected ACL_MODEL_STREAM_FLAG_HEAD (0) or \
                 ACL_MODEL_STREAM_FLAG_DEFAULT (0x7fffffff)"
            ),
        );
    }
    // `rtsModelBindStream` validates the model, then the stream.
    let m = match build::lookup(model_ri as usize) {
        Lookup::Live(m) => Some(m),
        _ if matches!(capture::lookup(model_ri as usize), Lookup::Live(_)) => None,
        bad => {
            return fail(
                code(ACL_ERROR_RT_INVALID_HANDLE),
                format!(
                    "{F}: {}",
                    handles::describe_bad("model run instance", model_ri as usize, &bad)
                ),
            );
        }
    };
    let explicit = tri!(common::stream_arg(F, stream));
    if let Some(s) = &explicit {
        if s.flags & ACL_STREAM_PERSISTENT == 0 {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: {} is not persistent: only streams made with ACL_STREAM_PERSISTENT \
                     (aclrtCreateStreamWithConfig) can be bound to a model",
                    s.label()
                ),
            );
        }
        if let Some(other) = build::bound_model(s) {
            return fail(
                code(ACL_ERROR_RT_STREAM_MODEL),
                format!(
                    "{F}: {} is bound to model {} already and cannot be bound to another model",
                    s.label(),
                    other.id
                ),
            );
        }
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(explicit, &ctx);
    let Some(m) = m else {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the model run instance was made by a capture (ACL Graph mode), which the \
                 build API does not take"
            ),
        );
    };
    tri!(not_capturing(F, &s));
    if s.flags & ACL_STREAM_DEVICE_USE_ONLY != 0 {
        // RT_ERROR_STREAM_INVALID, returned by the ACL layer as 507000.
        return fail(
            code(acl_sys::ACL_ERROR_RT_INTERNAL_ERROR),
            format!(
                "{F}: {} was created ACL_STREAM_DEVICE_USE_ONLY and cannot be bound to a model",
                s.label()
            ),
        );
    }
    if s.flags & ACL_STREAM_FAST_LAUNCH != 0 {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: {} was created ACL_STREAM_FAST_LAUNCH and cannot be bound to a model",
                s.label()
            ),
        );
    }
    if s.flags & ACL_STREAM_PERSISTENT == 0 {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: {} is not persistent (the default stream never is): only streams made \
                 with ACL_STREAM_PERSISTENT can be bound to a model",
                s.label()
            ),
        );
    }
    tri!(model_in_context(F, &m, &ctx));
    match m.bind(&s, flag == ACL_MODEL_STREAM_FLAG_HEAD) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIUnbindStream`: `stream` leaves the model; the tasks it recorded
/// stay in it.
///
/// Null `modelRI` → 100000; bad handles → 107017; a captured model →
/// 107000; a capturing stream → 107027 (`ApiErrorDecorator::ModelUnbindStream`);
/// no context → 107002; a model of another context → 107004; a stream not
/// bound to this model → 107005 (`Model::UnbindStream`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIUnbindStream(model_ri: aclmdlRI, stream: aclrtStream) -> aclError {
    const F: &str = "aclmdlRIUnbindStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let (m, s, ctx) = tri!(model_and_stream(F, model_ri, stream));
    tri!(model_in_context(F, &m, &ctx));
    match m.unbind(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIEndTask`: adds the model's end task on `stream`; an execution
/// that reaches it ends.
///
/// Null `modelRI` → 100000; bad handles → 107017; a captured model →
/// 107000; a capturing stream → 107027 (`ApiErrorDecorator::ModelEndGraph`);
/// no context → 107002; a stream of another context → 107003; a model of
/// another context → 107004 (`ApiImpl::ModelEndGraph`); a second end task,
/// or a stream not bound to this model → 507000
/// (`Context::ModelAddEndGraph`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIEndTask(model_ri: aclmdlRI, stream: aclrtStream) -> aclError {
    const F: &str = "aclmdlRIEndTask";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let (m, s, ctx) = tri!(model_and_stream(F, model_ri, stream));
    tri!(common::in_context(F, &s, &ctx));
    tri!(model_in_context(F, &m, &ctx));
    match m.end_task(&s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclmdlRIBuildEnd`: ends the build; the model can then be executed
/// (`aclmdlRIExecuteAsync`, `aclmdlRIExecute`).
///
/// Null `modelRI`, or `reserve` not null → 100000 (the ACL layer); a bad
/// handle → 107017; a captured model → 107000
/// (`ApiErrorDecorator::ModelLoadComplete`); no context → 107002; a model
/// of another context → 107004; tasks on a non-head stream that nothing
/// reaches → 207000 (the simulator does not model stream activation).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIBuildEnd(model_ri: aclmdlRI, reserve: *mut c_void) -> aclError {
    const F: &str = "aclmdlRIBuildEnd";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if !reserve.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: reserve is a reserved parameter and must be nullptr"),
        );
    }
    let m = tri!(built_arg(F, model_ri));
    let ctx = tri!(common::current(F));
    tri!(model_in_context(F, &m, &ctx));
    match m.load_complete() {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

fn label_arg(function: &str, h: aclrtLabel) -> Result<Arc<Label>, aclError> {
    match build::LABELS.lock().get(h as usize) {
        Lookup::Live(l) => Ok(l),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("label", h as usize, &bad)
            ),
        )),
    }
}

fn label_list_arg(function: &str, h: aclrtLabelList) -> Result<Arc<LabelList>, aclError> {
    match build::LABEL_LISTS.lock().get(h as usize) {
        Lookup::Live(l) => Ok(l),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("label list", h as usize, &bad)
            ),
        )),
    }
}

/// The label must belong to the current context: 507031
/// (`COND_RETURN_AND_MSG_INVALID_CONTEXT_LABEL_WITH_FUNC_DESC`).
fn label_in_context(function: &str, l: &Label, ctx: &Context) -> Result<(), aclError> {
    if l.ctx_id == ctx.id {
        return Ok(());
    }
    Err(fail(
        code(ACL_ERROR_RT_LABEL_CONTEXT),
        format!(
            "{function}: label {} was created in context {}, not in the current {}",
            l.id,
            l.ctx_id,
            ctx.label()
        ),
    ))
}

/// The stream must be bound to a model: 107005.
pub(crate) fn bound_of(function: &str, s: &Stream) -> Result<Arc<Built>, aclError> {
    build::bound_model(s).ok_or_else(|| {
        fail(
            code(ACL_ERROR_RT_STREAM_MODEL),
            format!(
                "{function}: {} is not bound to a model (aclmdlRIBindStream first)",
                s.label()
            ),
        )
    })
}

/// `aclrtCreateLabel`: a new label (at most 65535 per process).
///
/// Null `label` → 100000; no context → 107002 (`ApiImpl::LabelCreate`);
/// too many labels → 507000.
///
/// # Safety
///
/// `label` is null or valid for writing an `aclrtLabel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateLabel(label: *mut aclrtLabel) -> aclError {
    const F: &str = "aclrtCreateLabel";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if label.is_null() {
        return common::null_arg(F, "label");
    }
    let ctx = tri!(common::current(F));
    match build::create_label(ctx.id) {
        Ok(l) => {
            // SAFETY: checked non-null; the caller passes a writable handle.
            unsafe { *label = l.handle() as aclrtLabel };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtDestroyLabel`. A model it is set in keeps its position.
///
/// Null → 100000; a bad handle → 107017; no context → 107002; a label of
/// another context → 507031 (`ApiImpl::LabelDestroy`).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyLabel(label: aclrtLabel) -> aclError {
    const F: &str = "aclrtDestroyLabel";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if label.is_null() {
        return common::null_arg(F, "label");
    }
    let l = tri!(label_arg(F, label));
    let ctx = tri!(common::current(F));
    tri!(label_in_context(F, &l, &ctx));
    build::LABELS.lock().remove_by(l.handle(), F);
    ACL_SUCCESS
}

/// `aclrtCreateLabelList`: a list of `num` labels for
/// `aclrtSwitchLabelByIndex`.
///
/// Null `labels` or `labelList` → 100000; `num` 0 or above 65535 → 107000;
/// a bad label handle → 107017 (`rtsLabelSwitchListCreate`); no context →
/// 107002.
///
/// # Safety
///
/// `labels` is null or valid for reading `num` handles; `labelList` is null
/// or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateLabelList(
    labels: *mut aclrtLabel,
    num: usize,
    label_list: *mut aclrtLabelList,
) -> aclError {
    const F: &str = "aclrtCreateLabelList";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if labels.is_null() {
        return common::null_arg(F, "labels");
    }
    if label_list.is_null() {
        return common::null_arg(F, "labelList");
    }
    if num == 0 || num > build::MAX_LABELS {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: num {num} is out of range; expected (0, {}]",
                build::MAX_LABELS
            ),
        );
    }
    // SAFETY: checked non-null; the caller passes `num` readable handles.
    let handles = unsafe { std::slice::from_raw_parts(labels, num) };
    let mut list = Vec::with_capacity(num);
    for (i, &h) in handles.iter().enumerate() {
        if h.is_null() {
            return fail(PARAM_INVALID, format!("{F}: labels[{i}] is null"));
        }
        list.push(tri!(label_arg(&format!("{F}: labels[{i}]"), h)));
    }
    tri!(common::current(F));
    match build::create_list(list) {
        Ok(l) => {
            // SAFETY: checked non-null; the caller passes a writable handle.
            unsafe { *label_list = l.handle() as aclrtLabelList };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtDestroyLabelList`. A model switching on it keeps its labels.
///
/// Null → 100000; a bad handle → 107017.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyLabelList(label_list: aclrtLabelList) -> aclError {
    const F: &str = "aclrtDestroyLabelList";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if label_list.is_null() {
        return common::null_arg(F, "labelList");
    }
    let l = tri!(label_list_arg(F, label_list));
    build::LABEL_LISTS.lock().remove_by(l.handle(), F);
    ACL_SUCCESS
}

/// `aclrtSetLabel`: sets `label` at the current end of `stream`, a stream
/// bound to a model being built.
///
/// Null label or stream → 100000; bad handles → 107017; no context →
/// 107002; a label of another context → 507031; a stream of another
/// context → 107003 (`ApiImpl::LabelSet`); a stream bound to no model →
/// 107005; a label set already, or in no label list yet → 507000
/// (`label.cc` `Label::Set`).
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetLabel(label: aclrtLabel, stream: aclrtStream) -> aclError {
    const F: &str = "aclrtSetLabel";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if label.is_null() {
        return common::null_arg(F, "label");
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let l = tri!(label_arg(F, label));
    let s = tri!(build_stream(F, stream));
    let ctx = tri!(common::current(F));
    tri!(label_in_context(F, &l, &ctx));
    tri!(common::in_context(F, &s, &ctx));
    let m = tri!(bound_of(F, &s));
    match m.set_label(&s, &l) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtSwitchLabelByIndex`: when the model runs, reads the `uint32`
/// index at `ptr` (device memory) and continues at the label of that index
/// in `labelList` (the last label for an index beyond the list), on the
/// label's stream; the rest of the current stream is not run.
///
/// Null `ptr`, `labelList` or `stream` → 100000; bad handles → 107017; no
/// context → 107002; a stream of another context → 107003; a stream bound
/// to no model → 107005 (`ApiImpl::LabelSwitchByIndex`); `ptr` not 4 bytes
/// of device memory of the stream's device → 107000 (the simulator's
/// pointer check).
///
/// # Safety
///
/// None beyond the C contract: the handles and `ptr` are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSwitchLabelByIndex(
    ptr: *mut c_void,
    max_value: u32,
    label_list: aclrtLabelList,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtSwitchLabelByIndex";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if ptr.is_null() {
        return common::null_arg(F, "ptr");
    }
    if label_list.is_null() {
        return common::null_arg(F, "labelList");
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let list = tri!(label_list_arg(F, label_list));
    let s = tri!(build_stream(F, stream));
    let ctx = tri!(common::current(F));
    tri!(common::in_context(F, &s, &ctx));
    let m = tri!(bound_of(F, &s));
    let Some(at) = tri!(common::device_range(F, "ptr", ptr as usize, 4, s.device)) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: internal: ptr lies in no allocation"),
        );
    };
    match m.switch_by_index(&s, ptr as usize, at, max_value, &list) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

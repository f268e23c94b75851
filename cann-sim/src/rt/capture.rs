//! Graph capture (`aclmdlRI*`): the work queued on a capturing stream is
//! recorded into a model run instance instead of run, and the model queues
//! copies of it on any stream of its context, as often as it is executed.
//!
//! The rules follow hicann/runtime (`src/runtime/feature/aclgraph/`,
//! `src/runtime/core/src/context/context.cc`, `src/runtime/api/impl/api_error.cc`;
//! the research notes cite lines):
//!
//! - [`begin`]: not on a default stream (207000, `api_impl_aclgraph.cc`
//!   `ApiImpl::StreamBeginCapture`), not on a stream capturing already
//!   (107027, `context_aclgraph.cc` `Context::StreamBeginCapture`). Captures
//!   of several streams may be active at once; their modes are counted per
//!   context and per beginning thread (`Context::CaptureModeEnter`).
//! - While a stream captures, [`super::Stream::enqueue`] hands its tasks to
//!   [`Model::record_task`]: copies, fills, operators and kernels are kept as
//!   data (operator kernels are shared closures) and run at each execution.
//!   Host functions, callbacks and collectives are refused (see
//!   [`Model::record_task`]).
//! - [`end`]: the stream must capture (107029); another thread may end it
//!   only in RELAXED mode (107038, `capture_model_utils.cc`
//!   `CheckCaptureStreamThreadIsMatch`); a failed end still takes the
//!   stream out of capture and destroys the model (`Context::StreamEndCapture`,
//!   `ClearCaptureModel`).
//! - [`Model::execute`]: not while the model captures (107026,
//!   `capture_model.cc` `CaptureModel::CheckExecuteReady`), not on a
//!   capturing stream (107027, `api_error.cc` `ModelExecute`).
//! - [`Model::destroy`]: not while it captures (107026); while launches are
//!   queued, it polls every 1 ms up to 10 000 times, then fails with 107037
//!   (`context.cc` `Context::ModelDestroy`).
//! - [`check_unsafe_call`]: the mode rule for synchronous copies and fills
//!   (107030, `context_aclgraph.cc` `Context::IsCaptureModeSupport`).
//! - Events recorded in a capture are part of it while it is active: their
//!   synchronisation and queries fail with 107028 (`api_error.cc`
//!   `EventSynchronize`, `EventQuery`...). A capturing stream waiting on an
//!   event recorded outside the capture is 107024 (`api_impl.cc`
//!   `StreamWaitEvent`). A stream waiting on an event of an active capture
//!   joins it (cross-stream capture, [`join_by_wait`]); it must rejoin
//!   before the end (107025), and only the stream that began the capture
//!   can end it (107036). Each execution runs the recorded tasks of all
//!   its streams in the order they were recorded, on the executing stream
//!   (an order every recorded dependency allows).
//! - Task groups and task update ([`group_begin`], [`group_end`],
//!   [`update_begin`], [`update_task`], [`update_end`]; research notes:
//!   `/work/shared/reference/graph_task_update.md`): a group marks kernel
//!   tasks of a capture; afterwards the kernels issued on a stream that
//!   updates the group replace its tasks one by one, in capture order
//!   (`context_aclgraph.cc` `Context::StreamBeginTaskGrp`…`StreamEndTaskUpdate`,
//!   `stream.cc` `Stream::PackingTaskGroup`, `Stream::UpdateTask`,
//!   `Stream::AllocTask`). The device applies a replacement when the update
//!   stream runs the copy of its new task descriptor (`aix_stars.cc`
//!   `InternalUpdateNormalKernelTask`); the simulator applies it when the
//!   kernel is issued, so a launch queued after the update sees it and one
//!   queued before does not — the same as on the device when launches are
//!   ordered after the update stream, as they must be.

use super::cond::CondHandle;
use super::error::{Error, ErrorKind};
use super::event::Event;
use super::handles::{Lookup, Table};
use super::stream::{Stream, TaskKind};
use crate::check;
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::thread::ThreadId;

/// Which threads' unsafe calls (synchronous copies and fills) a capture
/// forbids (`aclmdlRICaptureMode`; the runtime's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every thread of the context, unless it exchanged its mode.
    Global = 0,
    /// The thread that began the capture.
    ThreadLocal = 1,
    /// None.
    Relaxed = 2,
}

impl Mode {
    /// The mode of a runtime value, `None` for an invalid one.
    pub fn from_raw(v: u32) -> Option<Mode> {
        match v {
            0 => Some(Mode::Global),
            1 => Some(Mode::ThreadLocal),
            2 => Some(Mode::Relaxed),
            _ => None,
        }
    }
}

/// Where a model is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// A sub-model of a conditional task that no stream captured into yet
    /// (`RtCaptureModelStatus::NONE`).
    Empty,
    /// Its stream is capturing into it.
    Capturing,
    /// Captured: it can be executed.
    Ready,
    /// Its stream was destroyed with its context while capturing.
    Abandoned,
    /// A task was changed (`aclmdlRITaskSetParams`, `aclmdlRITaskDisable`)
    /// and `aclmdlRIUpdate` not called yet (`RtCaptureModelStatus::UPDATING`).
    Updating,
    /// A task change failed (`RtCaptureModelStatus::FAULT`).
    Fault,
}

/// One recorded step of a captured model.
pub(super) enum Step {
    /// A copy, upload, fill, operator or kernel: queued again as a replica.
    Task(TaskKind),
    /// `aclrtRecordEvent` in the capture: each execution records the event
    /// on the executing stream.
    Record(Arc<Event>),
    /// `aclrtResetEvent` in the capture.
    Reset(Arc<Event>),
    /// `aclrtStreamWaitEvent` on an `ACL_EVENT_EXTERNAL` event: each
    /// execution waits for the event's record at the time it runs.
    WaitExternal(Arc<Event>),
    /// `aclmdlRIAddCondTask`: each execution reads the handle's value and
    /// runs the sub-model it selects ([`super::cond`]).
    Cond(Arc<CondHandle>),
    /// `aclrtValueWrite` in the capture, or a task that
    /// `aclmdlRITaskSetParams` made one: each execution writes `value` at
    /// `addr` (checked at `at`).
    ValueWrite {
        /// The word's address.
        addr: usize,
        /// The value.
        value: u64,
        /// Where the word must still be.
        at: super::stream::Expect,
    },
}

pub(super) struct Inner {
    pub(super) phase: Phase,
    /// A task of a group failed, or a task interrupted a group: the capture
    /// is invalidated (`CaptureModel::TerminateCapture`).
    invalidated: bool,
    /// The first such failure (`CaptureModel::taskGroupErrCode_`, never
    /// reset): every later group end fails with it.
    group_error: Option<Error>,
    /// Streams of the capture with a group open (`taskGroupStmIds_`).
    open_groups: usize,
    /// Its ended groups, registered in [`GROUPS`] until it is destroyed.
    groups: Vec<Arc<Group>>,
    pub(super) steps: Vec<Step>,
    /// The `Shared::uid` of the stream each step was captured on.
    pub(super) owners: Vec<u64>,
    /// Task and stream handles given out for it, disabled tasks
    /// ([`super::ri_task`]).
    pub(super) ri: super::ri_task::State,
    /// Events recorded in the capture.
    events: Vec<Weak<Event>>,
    /// Events waited on in the capture, by address.
    waited: HashSet<usize>,
    /// Streams that joined the capture by waiting on one of its events.
    joined: Vec<Joined>,
    /// Condition handles created on it (`aclmdlRICondHandleCreate`); they
    /// live as long as it does (`CaptureModel::ModelPushBackCondHandle`).
    conds: Vec<Arc<CondHandle>>,
}

/// A stream that joined a capture (cross-stream capture).
struct Joined {
    /// Its `Shared::uid`.
    uid: u64,
    stream: Weak<Stream>,
    label: String,
    /// The event its last captured task recorded, if that task was a
    /// record (the rejoin rule at the end).
    last_record: Option<usize>,
}

/// Who began the capture of a model.
struct Origin {
    /// The capture mode.
    mode: Mode,
    /// The thread that began the capture.
    thread: ThreadId,
    /// The capturing stream, for messages.
    label: String,
    /// The capturing stream's id (the JSON dump's stream).
    id: i32,
    /// The capturing stream's `Shared::uid`.
    uid: u64,
}

impl Origin {
    fn of(s: &Stream, mode: Mode) -> Origin {
        Origin {
            mode,
            thread: std::thread::current().id(),
            label: s.label(),
            id: s.id,
            uid: s.shared.uid,
        }
    }
}

/// A model run instance made by a capture (`aclmdlRI`), or a sub-model of a
/// conditional task (`aclmdlRIAddCondTask`) that a capture fills
/// (`aclmdlRICaptureToModelRIBegin`).
pub struct Model {
    /// The capturing stream's context.
    pub ctx_id: u64,
    /// Who began its capture; unset for a sub-model not captured yet.
    origin: std::sync::OnceLock<Origin>,
    /// A sub-model of a conditional task (`CaptureModel::IsSubCaptureModel`):
    /// it runs only through its parent's executions, and is destroyed with
    /// the parent.
    pub sub: bool,
    /// Unique for the process (the check mode's key for its memory).
    uid: u64,
    pub(super) inner: Mutex<Inner>,
    /// Executions queued and not yet finished.
    running: Arc<AtomicUsize>,
    /// Where its executions were queued, for `aclmdlRIAbort`.
    executions: super::stream::Executions,
    /// Its name (`aclmdlRISetName`; empty at first).
    pub name: Mutex<String>,
}

/// Live models.
pub static MODELS: Table<Model> = Table::new(Default::default);

/// Active captures (a fast path for [`check_unsafe_call`]).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Active captures per context and per beginning thread, by mode.
#[derive(Default)]
struct Modes {
    contexts: HashMap<u64, [u32; 3]>,
    threads: HashMap<ThreadId, [u32; 3]>,
}

static MODES: LazyLock<Mutex<Modes>> = LazyLock::new(Default::default);

/// An event recorded in a capture, and that capture's model.
type CapturedEvent = (Weak<Event>, Weak<Model>);

/// Events recorded in an active capture, by address.
static CAPTURED_EVENTS: LazyLock<Mutex<HashMap<usize, CapturedEvent>>> =
    LazyLock::new(Default::default);

thread_local! {
    /// `aclmdlRICaptureThreadExchangeMode`'s value; GLOBAL at first
    /// (`src/runtime/core/src/common/inner_thread_local.cpp`).
    static EXCHANGE: Cell<Mode> = const { Cell::new(Mode::Global) };
}

fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg)
}

fn enter(m: &Model) {
    let Some(o) = m.origin.get() else { return };
    let mut modes = MODES.lock();
    modes.contexts.entry(m.ctx_id).or_default()[o.mode as usize] += 1;
    modes.threads.entry(o.thread).or_default()[o.mode as usize] += 1;
    ACTIVE.fetch_add(1, Ordering::AcqRel);
}

fn exit(m: &Model) {
    let Some(o) = m.origin.get() else { return };
    let mut modes = MODES.lock();
    if let Some(c) = modes.contexts.get_mut(&m.ctx_id) {
        c[o.mode as usize] = c[o.mode as usize].saturating_sub(1);
        if *c == [0; 3] {
            modes.contexts.remove(&m.ctx_id);
        }
    }
    if let Some(t) = modes.threads.get_mut(&o.thread) {
        t[o.mode as usize] = t[o.mode as usize].saturating_sub(1);
        if *t == [0; 3] {
            modes.threads.remove(&o.thread);
        }
    }
    ACTIVE.fetch_sub(1, Ordering::AcqRel);
}

/// A process-unique number for a model (captured or built): the check
/// mode's key for the memory it holds.
pub(crate) fn next_model_uid() -> u64 {
    static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT_UID.fetch_add(1, Ordering::Relaxed)
}

/// `aclmdlRICaptureBegin`: `s` (of context `ctx_id`) records its work into
/// a new model from now on.
///
/// # Errors
///
/// 207000 for a default stream, 107027 for a stream capturing already,
/// 507000 for a stream that takes no host work.
pub fn begin(s: &Stream, mode: Mode, non_host: bool) -> Result<(), Error> {
    begin_into(s, mode, non_host, None)
}

/// `aclmdlRICaptureToModelRIBegin` (`into`: a sub-model of a conditional
/// task) or `aclmdlRICaptureBegin` (`None`: a new model).
///
/// # Errors
///
/// As [`begin`]; 107026 for a sub-model captured already
/// (`context_aclgraph.cc` `CheckCaptureModelIsCaptured`,
/// `RT_ERROR_MODEL_CAPTURED`), checked first (`Context::StreamBeginCapture`).
pub fn begin_into(
    s: &Stream,
    mode: Mode,
    non_host: bool,
    into: Option<Arc<Model>>,
) -> Result<(), Error> {
    if s.is_default {
        return Err(err(
            ErrorKind::FeatureNotSupport,
            format!(
                "{} is its context's default stream, which cannot capture; capture on a stream \
                 made with aclrtCreateStream",
                s.label()
            ),
        ));
    }
    if non_host {
        // hicann/runtime v100/capture_adapt_v100.cc StreamFlagIsSupportCapture:
        // RT_ERROR_STREAM_INVALID, which the ACL layer returns as 507000.
        return Err(err(
            ErrorKind::Internal,
            format!(
                "{} was created with flags {:#x}, which do not support capture",
                s.label(),
                s.flags
            ),
        ));
    }
    if let Some(m) = &into
        && m.inner.lock().phase != Phase::Empty
    {
        return Err(err(
            ErrorKind::ModelCaptured,
            format!(
                "sub-model {:#x} is captured already; a sub-model is captured once",
                m.handle()
            ),
        ));
    }
    let mut slot = s.capture.lock();
    if slot.is_some() {
        return Err(err(
            ErrorKind::StreamCaptured,
            format!("{} is capturing already", s.label()),
        ));
    }
    let m = match into {
        Some(m) => {
            let _ = m.origin.set(Origin::of(s, mode));
            m.inner.lock().phase = Phase::Capturing;
            m
        }
        None => {
            let m = Model::new(s.ctx_id, false, Phase::Capturing);
            let _ = m.origin.set(Origin::of(s, mode));
            MODELS.lock().insert(m.clone());
            m
        }
    };
    enter(&m);
    *slot = Some(m);
    Ok(())
}

/// The sub-models of a conditional task added on `s`, a stream capturing
/// into `parent` (`Context::CreateSubCaptureModels`): `n` empty models of
/// the parent's context, registered as handles.
pub(crate) fn new_sub_models(parent: &Model, n: usize) -> Vec<Arc<Model>> {
    let mut table = MODELS.lock();
    (0..n)
        .map(|_| {
            let m = Model::new(parent.ctx_id, true, Phase::Empty);
            table.insert(m.clone());
            m
        })
        .collect()
}

/// `aclmdlRICaptureEnd`: ends the capture of `s` and returns its model.
///
/// # Errors
///
/// 107029 when `s` is not capturing; 107036 when it joined the capture
/// but did not begin it. Then, with the capture ended and its model
/// destroyed all the same (the runtime's `ClearCaptureModel`): 107038 when
/// another thread ends a capture whose mode is not RELAXED
/// (`capture_model_utils.cc` `CheckCaptureStreamThreadIsMatch`), 107025
/// when a stream that joined did not rejoin: its last captured task must
/// record an event that is waited on in the capture
/// (`context_aclgraph.cc` `Context::CheckCaptureModelValidity`).
pub fn end(s: &Stream) -> Result<Arc<Model>, Error> {
    let Some(m) = s.capture.lock().clone() else {
        return Err(err(
            ErrorKind::StreamNotCaptured,
            format!("{} is not capturing", s.label()),
        ));
    };
    let Some(o) = m.origin.get() else {
        return Err(err(
            ErrorKind::Internal,
            format!("{} captures into a model nobody began", s.label()),
        ));
    };
    if o.uid != s.shared.uid {
        return Err(err(
            ErrorKind::CaptureUnmatched,
            format!(
                "{} joined the capture of {}; end it there",
                s.label(),
                o.label
            ),
        ));
    }
    let failure = if o.mode != Mode::Relaxed && o.thread != std::thread::current().id() {
        Some(err(
            ErrorKind::CaptureWrongThread,
            format!(
                "the capture of {} was begun on another thread and its mode is not RELAXED; the \
                 capture is ended and its model destroyed",
                s.label()
            ),
        ))
    } else if m.inner.lock().invalidated {
        // `Context::StreamEndCapture`: RT_ERROR_STREAM_CAPTURE_INVALIDATED.
        Some(err(
            ErrorKind::CaptureInvalidated,
            format!(
                "the capture of {} was invalidated by an earlier failure in a task group; the \
                 capture is ended and its model destroyed",
                s.label()
            ),
        ))
    } else if m.inner.lock().open_groups > 0 {
        // `Context::CheckCaptureModelValidity`: RT_ERROR_STREAM_TASKGRP_STATUS.
        // The streams keep their group state (only aclmdlRICaptureTaskGrpEnd
        // resets it): they answer 107033 to group calls from now on.
        Some(err(
            ErrorKind::TaskGroupStatus,
            format!(
                "a task group is still open in the capture of {} (end it with \
                 aclmdlRICaptureTaskGrpEnd first); the capture is ended and its model destroyed",
                s.label()
            ),
        ))
    } else if let Some(sub) = m.capturing_sub() {
        // `Context::StreamEndCapture`, `CheckSubModelsIsEndCapture`.
        Some(err(
            ErrorKind::SubGraphCapturing,
            format!(
                "sub-model {sub:#x} of a conditional task of the capture of {} is still \
                 capturing or was never captured (end its capture with aclmdlRICaptureEnd \
                 first); the capture is ended and its model destroyed",
                s.label()
            ),
        ))
    } else {
        m.unjoined().map(|label| {
            err(
                ErrorKind::StreamUnjoined,
                format!(
                    "{label} joined the capture of {} and did not rejoin it (its last captured \
                     task must record an event that a stream of the capture waits on); the \
                     capture is ended and its model destroyed",
                    s.label()
                ),
            )
        })
    };
    *s.capture.lock() = None;
    match failure {
        Some(e) => {
            finish(&m, Phase::Abandoned);
            // A sub-model is destroyed with its parent only
            // (`ClearCaptureModel`).
            if !m.sub {
                m.unregister();
            }
            Err(e)
        }
        None => {
            finish(&m, Phase::Ready);
            Ok(m)
        }
    }
}

/// Leaves the capturing phase: the events recorded in it are no longer
/// part of a capture, the mode no longer counts.
fn finish(m: &Model, phase: Phase) {
    if phase == Phase::Abandoned && check::enabled() {
        // It can no longer be executed: it holds no memory.
        check::on_model_gone(m.uid);
    }
    let (events, joined) = {
        let mut inner = m.inner.lock();
        inner.phase = phase;
        (
            std::mem::take(&mut inner.events),
            std::mem::take(&mut inner.joined),
        )
    };
    // The joined streams leave the capture too (`ExitCaptureNotify`).
    for j in joined {
        if let Some(js) = j.stream.upgrade() {
            let mut slot = js.capture.lock();
            if slot
                .as_ref()
                .is_some_and(|c| std::ptr::eq(Arc::as_ptr(c), m))
            {
                *slot = None;
            }
        }
    }
    let mut captured = CAPTURED_EVENTS.lock();
    for e in events {
        let addr = e.as_ptr() as usize;
        if captured
            .get(&addr)
            .is_some_and(|(_, owner)| std::ptr::eq(owner.as_ptr(), m))
        {
            captured.remove(&addr);
        }
    }
    drop(captured);
    exit(m);
}

/// Ends the capture of a stream being destroyed with its context or
/// device: its model can no longer be executed.
pub fn abandon(s: &Stream) {
    let taken = s.capture.lock().take();
    if let Some(m) = taken {
        finish(&m, Phase::Abandoned);
    }
}

/// `aclmdlRICaptureGetInfo`: the model `s` captures into, if any.
pub fn info(s: &Stream) -> Option<Arc<Model>> {
    s.capture.lock().clone()
}

/// `aclmdlRICaptureThreadExchangeMode`: sets the calling thread's mode and
/// returns the previous one (`Context::ThreadExchangeCaptureMode`).
pub fn exchange_thread_mode(mode: Mode) -> Mode {
    EXCHANGE.with(|c| c.replace(mode))
}

fn strictest(counts: &[u32; 3]) -> Option<Mode> {
    [Mode::Global, Mode::ThreadLocal, Mode::Relaxed]
        .into_iter()
        .find(|m| counts[*m as usize] > 0)
}

/// Whether the calling thread may make an unsafe call (a synchronous copy
/// or fill) in context `ctx_id`: the rule of hicann/runtime
/// `context_aclgraph.cc` `Context::IsCaptureModeSupport`.
///
/// # Errors
///
/// 107030, naming the capture mode that forbids it.
pub fn check_unsafe_call(ctx_id: u64) -> Result<(), Error> {
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let exchange = EXCHANGE.with(Cell::get);
    if exchange == Mode::Relaxed {
        return Ok(());
    }
    let modes = MODES.lock();
    let Some(ctx) = modes.contexts.get(&ctx_id).and_then(strictest) else {
        return Ok(());
    };
    let thread = modes
        .threads
        .get(&std::thread::current().id())
        .and_then(strictest);
    drop(modes);
    let blocked = match exchange {
        Mode::Global => ctx == Mode::Global || thread == Some(Mode::ThreadLocal),
        _ => matches!(thread, Some(Mode::Global | Mode::ThreadLocal)),
    };
    if !blocked {
        return Ok(());
    }
    let why = if ctx == Mode::Global && exchange == Mode::Global {
        "a GLOBAL capture is active in the context"
    } else {
        "this thread began a capture that is not RELAXED"
    };
    Err(err(
        ErrorKind::CaptureModeNotSupport,
        format!(
            "synchronous copies and fills are not allowed while {why}; queue the work \
             asynchronously (pinned host memory for host copies), copy before the capture, or \
             exchange the thread's mode to RELAXED (aclmdlRICaptureThreadExchangeMode)"
        ),
    ))
}

/// The 107028 error if `e` was recorded in an active capture.
pub fn event_captured(e: &Arc<Event>) -> Result<(), Error> {
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    match captured_by(e) {
        Some(m) => Err(err(
            ErrorKind::EventCaptured,
            format!(
                "the event was recorded in the capture of {}, which is still active: it cannot \
                 be synchronised or queried until the capture ends",
                m.origin_label()
            ),
        )),
        None => Ok(()),
    }
}

/// The active capture `e` was recorded in.
fn captured_by(e: &Arc<Event>) -> Option<Arc<Model>> {
    let captured = CAPTURED_EVENTS.lock();
    let (ev, m) = captured.get(&(Arc::as_ptr(e) as usize))?;
    if !std::ptr::eq(ev.as_ptr(), Arc::as_ptr(e)) {
        return None;
    }
    m.upgrade()
        .filter(|m| m.inner.lock().phase == Phase::Capturing)
}

/// `aclrtStreamWaitEvent` on a stream that is not capturing, of an event
/// that may be part of a capture: the stream joins that capture (cross-stream
/// capture, `capture_model_utils.cc` `GetCaptureStream`): its later work is
/// recorded into the same model until the capture ends, and it must rejoin
/// (see [`end`]). Returns whether it joined (the wait itself is then ordered
/// by the capture: each execution runs the recorded tasks in order).
///
/// # Errors
///
/// 107031 on a default stream (`api_impl.cc` `StreamWaitEvent`).
pub fn join_by_wait(s: &Arc<Stream>, e: &Arc<Event>) -> Result<bool, Error> {
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return Ok(false);
    }
    let Some(m) = captured_by(e) else {
        return Ok(false);
    };
    if s.is_default {
        return Err(err(
            ErrorKind::StreamCaptureImplicit,
            format!(
                "the event is part of the capture of {}; the default stream cannot wait on it",
                m.origin_label()
            ),
        ));
    }
    *s.capture.lock() = Some(m.clone());
    let mut inner = m.inner.lock();
    inner.waited.insert(Arc::as_ptr(e) as usize);
    inner.joined.push(Joined {
        uid: s.shared.uid,
        stream: Arc::downgrade(s),
        label: s.label(),
        last_record: None,
    });
    Ok(true)
}

impl Model {
    fn new(ctx_id: u64, sub: bool, phase: Phase) -> Arc<Model> {
        Arc::new(Model {
            ctx_id,
            origin: std::sync::OnceLock::new(),
            sub,
            uid: next_model_uid(),
            inner: Mutex::new(Inner {
                phase,
                invalidated: false,
                group_error: None,
                open_groups: 0,
                groups: Vec::new(),
                steps: Vec::new(),
                owners: Vec::new(),
                ri: Default::default(),
                events: Vec::new(),
                waited: HashSet::new(),
                joined: Vec::new(),
                conds: Vec::new(),
            }),
            running: Arc::new(AtomicUsize::new(0)),
            executions: Default::default(),
            name: Mutex::new(String::new()),
        })
    }

    /// Its handle: its address, under which [`MODELS`] knows it.
    pub fn handle(&self) -> usize {
        self as *const Model as usize
    }

    /// The `Shared::uid` of the stream that began its capture.
    pub(super) fn origin_uid(&self) -> Option<u64> {
        self.origin.get().map(|o| o.uid)
    }

    /// Whether an execution of it is queued or running
    /// (`CaptureModel::IsCaptureModelRunning`).
    pub(super) fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire) > 0
    }

    /// The stream that began its capture, for messages.
    fn origin_label(&self) -> String {
        match self.origin.get() {
            Some(o) => o.label.clone(),
            None => format!(
                "no stream (sub-model {:#x} was never captured)",
                self.handle()
            ),
        }
    }

    /// Whether it was made by a capture that is active
    /// (`CaptureModel::IsCaptureActive`).
    pub fn capture_active(&self) -> bool {
        self.inner.lock().phase == Phase::Capturing
    }

    /// Whether it is captured and can run (`READY`).
    pub(crate) fn is_ready(&self) -> bool {
        self.inner.lock().phase == Phase::Ready
    }

    /// A sub-model of one of its conditional tasks that is not captured
    /// (`CaptureModel::CheckSubModelsIsEndCapture`), by handle.
    fn capturing_sub(&self) -> Option<usize> {
        let conds: Vec<Arc<CondHandle>> = self
            .inner
            .lock()
            .steps
            .iter()
            .filter_map(|st| match st {
                Step::Cond(h) => Some(h.clone()),
                _ => None,
            })
            .collect();
        conds
            .iter()
            .flat_map(|h| h.sub_models())
            .find(|m| !m.is_ready())
            .map(|m| m.handle())
    }

    /// Registers condition handle `h`, created on it.
    pub(crate) fn push_cond_handle(&self, h: Arc<CondHandle>) {
        self.inner.lock().conds.push(h);
    }

    /// Records a conditional task of handle `h` on `s`, a stream capturing
    /// into it.
    ///
    /// # Errors
    ///
    /// As [`Model::group_allows`]: a conditional task is not a kernel.
    pub(crate) fn record_cond(&self, s: &Stream, h: Arc<CondHandle>) -> Result<(), Error> {
        let in_group = s.task_group.lock().sampling().is_some();
        let mut inner = self.inner.lock();
        Model::group_allows(&mut inner, s, in_group, false, "conditional")?;
        Model::push(&mut inner, s, Step::Cond(h));
        Model::note_last(&mut inner, s.shared.uid, None);
        Ok(())
    }

    /// Its steps as a program for a conditional task of its parent: copies,
    /// fills and operators, and its own conditional tasks.
    pub(crate) fn nodes(&self) -> Vec<super::cond::Node> {
        use super::cond::Node;
        self.inner
            .lock()
            .steps
            .iter()
            .filter_map(|st| match st {
                Step::Task(t) => Node::of_task(t),
                Step::ValueWrite { addr, value, at } => {
                    Node::of_task(&super::value::write_task(*addr, *value, *at))
                }
                Step::Cond(h) => Some(Node::Cond(h.program())),
                // `record_event`, `wait_event` and `reset_event` refuse
                // event tasks in a sub-model.
                _ => None,
            })
            .collect()
    }

    /// The condition handles of it and of its sub-models, recursively.
    fn all_conds(&self, out: &mut Vec<Arc<CondHandle>>) {
        let conds = self.inner.lock().conds.clone();
        for h in conds {
            for m in h.sub_models() {
                m.all_conds(out);
            }
            out.push(h);
        }
    }

    /// The label of a joined stream that did not rejoin.
    fn unjoined(&self) -> Option<String> {
        let inner = self.inner.lock();
        inner
            .joined
            .iter()
            .find(|j| !j.last_record.is_some_and(|e| inner.waited.contains(&e)))
            .map(|j| j.label.clone())
    }

    /// Appends `step`, captured on `s`.
    fn push(inner: &mut Inner, s: &Stream, step: Step) {
        inner.steps.push(step);
        inner.owners.push(s.shared.uid);
    }

    /// Notes the last captured task of stream `uid`: a record of `event`, or
    /// other work.
    fn note_last(inner: &mut Inner, uid: u64, event: Option<usize>) {
        if let Some(j) = inner.joined.iter_mut().find(|j| j.uid == uid) {
            j.last_record = event;
        }
    }

    /// Its id (`aclmdlRIGetId`, the JSON dump): its process-unique number.
    pub fn uid_for_json(&self) -> u32 {
        self.uid as u32
    }

    /// Its task list for `aclmdlRIDebugJsonPrint`: the capturing stream
    /// (id) and each recorded step's type and name
    /// ([`crate::model::debug_json`]; the simulator keeps the steps of all
    /// the capture's streams in one list, in capture order).
    pub fn describe(&self) -> Vec<(i32, Vec<crate::model::debug_json::Task>)> {
        use crate::model::debug_json::Task;
        let task = |kind: &'static str, name: &'static str| Task {
            kind,
            name: name.to_string(),
        };
        let tasks = self
            .inner
            .lock()
            .steps
            .iter()
            .map(|st| match st {
                Step::Task(k @ TaskKind::Op { api, .. }) => {
                    task(crate::model::build::type_name(k), api)
                }
                Step::ValueWrite { addr, value, at } => {
                    let k = super::value::write_task(*addr, *value, *at);
                    task(crate::model::build::type_name(&k), super::value::WRITE_API)
                }
                Step::Task(k) => {
                    let kind = crate::model::build::type_name(k);
                    task(kind, kind)
                }
                Step::Record(_) => task("EVENT_RECORD", "EVENT_RECORD"),
                Step::Reset(_) => task("EVENT_RESET", "EVENT_RESET"),
                Step::WaitExternal(_) => task("EVENT_WAIT", "EVENT_WAIT"),
                // `aclgraph_cond_task.cc` `CaptureConditionTaskInit`.
                Step::Cond(_) => task("CONDITION_OP", "CONDITION_OP"),
            })
            .collect();
        vec![(self.origin.get().map_or(-1, |o| o.id), tasks)]
    }

    /// Whether its stream is still capturing into it.
    pub fn is_capturing(&self) -> bool {
        self.inner.lock().phase == Phase::Capturing
    }

    /// Records the task `make(seq)` builds (`seq`: its number in the
    /// capture) instead of queueing it; called by
    /// [`super::Stream::enqueue`] while the stream captures.
    ///
    /// # Errors
    ///
    /// 207000 for host functions, callbacks and collectives: a host
    /// function is called once (`aclrtLaunchHostFunc` takes a function and
    /// its data, but the simulator's host-function tasks are one-shot), and
    /// collectives in a capture are not simulated; event tasks come through
    /// [`record_event`], [`wait_event`] and [`reset_event`].
    pub(crate) fn record_task(
        &self,
        s: &Stream,
        make: impl FnOnce(u64) -> TaskKind,
    ) -> Result<u64, Error> {
        let group = s.task_group.lock().sampling();
        let mut inner = self.inner.lock();
        let seq = inner.steps.len() as u64 + 1;
        let kind = make(seq);
        let is_kernel = matches!(kind, TaskKind::Op { .. });
        if let Err(e) = Model::group_allows(&mut inner, s, group.is_some(), is_kernel, kind.name())
        {
            if let TaskKind::Record(r) = &kind {
                r.done
                    .cancel("the record was refused by a capture".to_string());
            }
            return Err(e);
        }
        match kind {
            TaskKind::Copy { .. }
            | TaskKind::Upload { .. }
            | TaskKind::Fill { .. }
            | TaskKind::ValueWait { .. }
            | TaskKind::Op { .. } => {
                if let Some(g) = group {
                    g.tasks.lock().push(inner.steps.len());
                }
                if check::enabled() {
                    // Joined streams' work too: it is part of the capture.
                    check::on_capture(self.uid, self.handle(), inner.steps.len(), s, &kind);
                }
                Model::push(&mut inner, s, Step::Task(kind));
                Model::note_last(&mut inner, s.shared.uid, None);
                Ok(seq)
            }
            other => {
                if let TaskKind::Record(r) = &other {
                    r.done
                        .cancel("the record was refused by a capture".to_string());
                }
                Err(err(
                    ErrorKind::FeatureNotSupport,
                    format!(
                        "{} tasks cannot be captured by cann-sim ({} is capturing); queue them \
                         outside the capture",
                        other.name(),
                        s.label()
                    ),
                ))
            }
        }
    }

    /// Keeps what the kernel launch captured as task `seq` (as
    /// [`Model::record_task`] numbers it) was made of, for
    /// `aclmdlRITaskGetParams`/`SetParams` and
    /// `aclmdlRIKernelTaskGetAttribute` ([`super::ri_kernel`]).
    pub(crate) fn note_kernel(&self, seq: u64, k: Arc<super::ri_kernel::Captured>) {
        let mut inner = self.inner.lock();
        let Some(i) = (seq as usize).checked_sub(1) else {
            return;
        };
        if matches!(inner.steps.get(i), Some(Step::Task(TaskKind::Op { api, .. }))
            if api.starts_with("aclrtLaunchKernel"))
        {
            inner.ri.kernels.insert(i, k);
        }
    }

    /// `aclrtValueWrite` on `s`, a stream capturing into it: each execution
    /// writes `value` at `addr` (a value-write task that
    /// `aclmdlRITaskSetParams` can change).
    ///
    /// # Errors
    ///
    /// As [`Model::record_task`] for a task that is not a kernel.
    pub(crate) fn record_value_write(
        &self,
        s: &Stream,
        addr: usize,
        value: u64,
        at: super::stream::Expect,
    ) -> Result<(), Error> {
        let in_group = s.task_group.lock().sampling().is_some();
        let mut inner = self.inner.lock();
        Model::group_allows(&mut inner, s, in_group, false, super::value::WRITE_API)?;
        if check::enabled() {
            let kind = super::value::write_task(addr, value, at);
            check::on_capture(self.uid, self.handle(), inner.steps.len(), s, &kind);
        }
        Model::push(&mut inner, s, Step::ValueWrite { addr, value, at });
        Model::note_last(&mut inner, s.shared.uid, None);
        Ok(())
    }

    /// `aclmdlRIExecuteAsync`: queues a copy of every recorded task on `s`.
    ///
    /// # Errors
    ///
    /// 107026 while the model captures; 107027 on a capturing stream;
    /// 507011 for a model whose capture was abandoned; the stream's error
    /// (it is being destroyed; check mode: a race) — the tasks queued before
    /// it stay queued.
    pub fn execute(&self, s: &Stream) -> Result<(), Error> {
        if s.capture.lock().is_some() {
            return Err(err(
                ErrorKind::StreamCaptured,
                format!(
                    "{} is capturing; a captured model cannot be executed inside a capture",
                    s.label()
                ),
            ));
        }
        if self.sub {
            // `api_error.cc` `ApiErrorDecorator::ModelExecute`.
            return Err(err(
                ErrorKind::FeatureNotSupport,
                "the model is a sub-model of a conditional task (sub ACL Graph), which runs only \
                 through its parent's executions",
            ));
        }
        // Each execution first sets the handles made with
        // ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT to their default value
        // (`InitAllSubCaptureModelCondTaskByDefValue`, `CondHandle::InitCondTaskByDefValue`).
        let mut conds = Vec::new();
        self.all_conds(&mut conds);
        let defaults: Vec<TaskKind> = conds.iter().filter_map(|h| h.default_task()).collect();
        if check::enabled() {
            for sub in conds.iter().flat_map(|h| h.sub_models()) {
                check::on_inline_execution(sub.uid);
            }
        }
        let inner = self.inner.lock();
        match inner.phase {
            Phase::Capturing => {
                return Err(err(
                    ErrorKind::ModelCaptured,
                    format!(
                        "the model is still being captured on {}",
                        self.origin_label()
                    ),
                ));
            }
            Phase::Updating | Phase::Fault => {
                // `capture_model.cc` `CaptureModel::CheckExecuteReady`:
                // RT_ERROR_MODEL_EXE_FAILED unless READY.
                return Err(err(
                    ErrorKind::ModelFault,
                    format!(
                        "the model is not ready (status {}): its tasks were changed by                          aclmdlRITaskSetParams or aclmdlRITaskDisable; call aclmdlRIUpdate                          before executing it",
                        if inner.phase == Phase::Fault {
                            "FAULT"
                        } else {
                            "UPDATING"
                        }
                    ),
                ));
            }
            Phase::Abandoned | Phase::Empty => {
                return Err(err(
                    ErrorKind::ModelFault,
                    format!(
                        "the capture of {} was abandoned (its stream was destroyed)",
                        self.origin_label()
                    ),
                ));
            }
            Phase::Ready => {}
        }
        self.running.fetch_add(1, Ordering::AcqRel);
        // The end of the execution: `guard` goes when the last task is done
        // (or dropped by a forced destroy), or here if it is not queued.
        let mut guard = Some(Running(self.running.clone()));
        let n = inner.steps.len();
        let launch = check::Launch {
            model: self.handle(),
        };
        let first = defaults.len();
        let count = first + n + 1;
        let mut defaults = defaults.into_iter();
        let last = s.enqueue_all(count, launch, |i, seq| {
            if i < first {
                return defaults.next().unwrap_or_else(super::cond::nothing);
            }
            let i = i - first;
            if inner.ri.disabled.contains(&i) {
                // `aclmdlRITaskDisable`: the task does nothing.
                return super::cond::nothing();
            }
            match inner.steps.get(i) {
                Some(Step::Task(t)) => replica(t),
                Some(Step::ValueWrite { addr, value, at }) => {
                    super::value::write_task(*addr, *value, *at)
                }
                Some(Step::Record(e)) => TaskKind::Record(e.new_record(&s.shared, seq)),
                // An external event is a flag: the captured reset clears whatever
                // record it finds when it runs (the host records it between
                // executions), not only the records made before the execution
                // was queued.
                Some(Step::Reset(e)) if e.is_external() => {
                    TaskKind::ResetEvent(e.clone(), u64::MAX)
                }
                Some(Step::Reset(e)) => TaskKind::ResetEvent(e.clone(), e.generation()),
                Some(Step::WaitExternal(e)) => TaskKind::WaitExternal(e.clone()),
                Some(Step::Cond(h)) => h.task(),
                None => {
                    let guard = guard.take();
                    TaskKind::Op {
                        api: "aclmdlRIExecuteAsync",
                        ranges: Vec::new(),
                        kernel: Arc::new(move || {
                            let _ = &guard;
                            Ok(())
                        }),
                    }
                }
            }
        })?;
        self.executions.push(s, last + 1 - count as u64, last);
        Ok(())
    }

    /// `aclmdlRIAbort`: stops its executions queued or running
    /// ([`super::stream::Executions::abort_all`]). Returns how many were
    /// stopped.
    pub(crate) fn abort_executions(&self, fault: &Error) -> usize {
        self.executions.abort_all(fault)
    }

    /// `aclmdlRIDestroy`: unregisters the model once no execution is
    /// queued (polling every 1 ms, at most 10 000 times).
    ///
    /// # Errors
    ///
    /// 107026 while it captures; 107037 when executions are still queued
    /// after the polling.
    pub fn destroy(&self) -> Result<(), Error> {
        if self.sub {
            // `api_error.cc` `ApiErrorDecorator::ModelDestroy`.
            return Err(err(
                ErrorKind::FeatureNotSupport,
                "the model is a sub-model of a conditional task (sub ACL Graph); it is destroyed \
                 with its parent",
            ));
        }
        if self.is_capturing() {
            return Err(err(
                ErrorKind::ModelCaptured,
                format!(
                    "the model is still being captured on {}; end the capture first",
                    self.origin_label()
                ),
            ));
        }
        wait_for_executions(&self.running)?;
        self.unregister();
        Ok(())
    }

    /// Unregisters the model and its groups (their handles become stale),
    /// its condition handles and their sub-models (`CondHandle::~CondHandle`).
    fn unregister(&self) {
        let conds = std::mem::take(&mut self.inner.lock().conds);
        for h in conds {
            for m in h.release() {
                m.unregister();
            }
        }
        let ri = std::mem::take(&mut self.inner.lock().ri);
        ri.unregister();
        let groups = std::mem::take(&mut self.inner.lock().groups);
        let mut table = GROUPS.lock();
        for g in &groups {
            table.remove(Arc::as_ptr(g) as usize);
        }
        drop(table);
        MODELS.lock().remove(self.handle());
        if check::enabled() {
            check::on_model_gone(self.uid);
        }
    }

    /// Whether a captured task may be recorded as far as task groups go: in
    /// a group only kernels (`capture_adapt_v100.cc`
    /// `TaskTypeIsSupportTaskGroup`: AI Core and vector kernels), outside a
    /// group none while another stream of the capture has one open
    /// (`stream_capture.cc` `AllocCaptureTaskWithoutLock`,
    /// `Stream::IsTaskGroupBreak`). A refusal invalidates the capture and is
    /// remembered for the group's end (`Stream::SetTaskGroupErrCode`).
    ///
    /// # Errors
    ///
    /// 507009 for a task that is not a kernel in a group; 107034 for a task
    /// that interrupts another stream's group.
    fn group_allows(
        inner: &mut Inner,
        s: &Stream,
        in_group: bool,
        is_kernel: bool,
        what: &str,
    ) -> Result<(), Error> {
        let e = if in_group && !is_kernel {
            err(
                ErrorKind::TaskTypeNotSupport,
                format!(
                    "a {what} task cannot be part of a task group (only kernels can: operators \
                     and aclrtLaunchKernel) — {} is in one; the capture is invalidated",
                    s.label()
                ),
            )
        } else if !in_group && inner.open_groups > 0 {
            err(
                ErrorKind::TaskGroupInterrupted,
                format!(
                    "{} issued a task while another stream of its capture has a task group open; \
                     the group is interrupted and the capture invalidated",
                    s.label()
                ),
            )
        } else {
            return Ok(());
        };
        inner.invalidated = true;
        if inner.group_error.is_none() {
            inner.group_error = Some(e.clone());
        }
        Err(e)
    }

    /// `aclmdlRIUpdate`: applies the changes made by `aclmdlRITaskSetParams`
    /// and `aclmdlRITaskDisable` (not simulated); a ready model has none, so
    /// this succeeds and does nothing — task-group updates need no call of
    /// it (hicann/runtime `api_impl.cc` `ApiImpl::ModelUpdate`: READY →
    /// success).
    ///
    /// # Errors
    ///
    /// 107040 for a model still capturing or abandoned (neither READY nor
    /// UPDATING).
    pub fn update(&self) -> Result<(), Error> {
        if self.sub {
            // `api_error.cc` `ApiErrorDecorator::ModelUpdate`.
            return Err(err(
                ErrorKind::FeatureNotSupport,
                "the model is a sub-model of a conditional task (sub ACL Graph), which does not \
                 support updating",
            ));
        }
        let mut inner = self.inner.lock();
        match inner.phase {
            Phase::Ready => Ok(()),
            // `ApiImpl::ModelUpdate`: UPDATING → READY (the simulator
            // applies each change when it is made; executions were refused
            // until now).
            Phase::Updating => {
                inner.phase = Phase::Ready;
                Ok(())
            }
            Phase::Fault => Err(err(
                ErrorKind::ModelUpdateFailed,
                "a task change (aclmdlRITaskSetParams or aclmdlRITaskDisable) failed: the model                  is in FAULT status and cannot be updated",
            )),
            Phase::Capturing => Err(err(
                ErrorKind::ModelUpdateFailed,
                format!(
                    "the model is still being captured on {}; end the capture first",
                    self.origin_label()
                ),
            )),
            Phase::Abandoned | Phase::Empty => Err(err(
                ErrorKind::ModelUpdateFailed,
                format!(
                    "the capture of {} was abandoned (its stream was destroyed)",
                    self.origin_label()
                ),
            )),
        }
    }
}

/// Waits until no execution of a model is queued (`running`), polling every
/// 1 ms up to 10 000 times (`context.cc` `Context::ModelDestroy`).
///
/// # Errors
///
/// 107037 when executions are still queued after the polling.
pub(crate) fn wait_for_executions(running: &AtomicUsize) -> Result<(), Error> {
    let mut polls = 0;
    while running.load(Ordering::Acquire) > 0 {
        if polls == 10_000 {
            return Err(err(
                ErrorKind::ModelRunning,
                "the model is still running after 10 s of polling; synchronise the streams it \
                 runs on first",
            ));
        }
        polls += 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Ok(())
}

/// Counts an execution until its last task is done (or dropped).
pub(crate) struct Running(pub(crate) Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A copy of a recorded copy, upload, fill or operator task.
fn replica(t: &TaskKind) -> TaskKind {
    match t {
        TaskKind::Copy {
            api,
            dst,
            src,
            count,
            dst_at,
            src_at,
        } => TaskKind::Copy {
            api,
            dst: *dst,
            src: *src,
            count: *count,
            dst_at: *dst_at,
            src_at: *src_at,
        },
        TaskKind::Upload {
            api,
            dst,
            data,
            dst_at,
        } => TaskKind::Upload {
            api,
            dst: *dst,
            data: data.clone(),
            dst_at: *dst_at,
        },
        TaskKind::Fill {
            api,
            dst,
            count,
            value,
            dst_at,
        } => TaskKind::Fill {
            api,
            dst: *dst,
            count: *count,
            value: *value,
            dst_at: *dst_at,
        },
        TaskKind::Op {
            api,
            ranges,
            kernel,
        } => TaskKind::Op {
            api,
            ranges: ranges.clone(),
            kernel: kernel.clone(),
        },
        TaskKind::ValueWait {
            api,
            addr,
            value,
            cond,
            at,
        } => TaskKind::ValueWait {
            api,
            addr: *addr,
            value: *value,
            cond: *cond,
            at: *at,
        },
        // `record_task` keeps nothing else.
        _ => unreachable!("only copies, uploads, fills and operators are recorded"),
    }
}

/// `aclrtRecordEvent` on the capturing stream `s`: each execution records
/// `e`; until the capture ends, `e` is part of it.
///
/// # Errors
///
/// 207000 for an event not made by `aclrtCreateEventExWithFlag`
/// (`api_impl.cc` `EventRecord`); 107032 for an event part of another
/// active capture.
pub fn record_event(m: &Arc<Model>, s: &Stream, e: &Arc<Event>) -> Result<(), Error> {
    if !e.ex_mode {
        return Err(not_ex());
    }
    event_task_allowed(m, s, "event record")?;
    let mut captured = CAPTURED_EVENTS.lock();
    let addr = Arc::as_ptr(e) as usize;
    if let Some((ev, other)) = captured.get(&addr)
        && std::ptr::eq(ev.as_ptr(), Arc::as_ptr(e))
        && let Some(other) = other.upgrade()
        && !Arc::ptr_eq(&other, m)
        && other.is_capturing()
    {
        return Err(conflict(&other));
    }
    captured.insert(addr, (Arc::downgrade(e), Arc::downgrade(m)));
    drop(captured);
    let mut inner = m.inner.lock();
    inner.events.push(Arc::downgrade(e));
    Model::push(&mut inner, s, Step::Record(e.clone()));
    Model::note_last(&mut inner, s.shared.uid, Some(addr));
    Ok(())
}

/// `aclrtStreamWaitEvent` on the capturing stream of `m`: a wait on an
/// event recorded earlier in the same capture is ordered by the stream
/// already; an event never recorded is a no-op. A wait on an
/// `ACL_EVENT_EXTERNAL` event is captured: each execution of the model
/// waits, when it reaches it, until the event is recorded (by the host,
/// outside the model; hicann/runtime `docs/zh/dev_guide/04-03_task_update.md`
/// and the `model_ri/1_model_update` example, which pair it with a
/// captured `aclrtResetEvent` so that every execution waits anew).
///
/// # Errors
///
/// 107024 for an event recorded outside the capture (`api_impl.cc`
/// `StreamWaitEvent`: wait for it before the capture, or record it inside);
/// 107032 for an event part of another active capture.
pub fn wait_event(m: &Arc<Model>, s: &Stream, e: &Arc<Event>) -> Result<(), Error> {
    if e.is_external() && captured_by(e).is_none() {
        event_task_allowed(m, s, "event wait")?;
        let mut inner = m.inner.lock();
        Model::push(&mut inner, s, Step::WaitExternal(e.clone()));
        Model::note_last(&mut inner, s.shared.uid, None);
        return Ok(());
    }
    match captured_by(e) {
        Some(owner) if Arc::ptr_eq(&owner, m) => {
            event_task_allowed(m, s, "event wait")?;
            m.inner.lock().waited.insert(Arc::as_ptr(e) as usize);
            Ok(())
        }
        Some(owner) => Err(conflict(&owner)),
        None if e.latest().is_some() => Err(err(
            ErrorKind::CaptureDependency,
            format!(
                "the event was recorded outside the capture of {}; a capture cannot depend on \
                 work outside it (wait for the event before beginning the capture)",
                m.origin_label()
            ),
        )),
        None => Ok(()),
    }
}

/// `aclrtResetEvent` on the capturing stream of `m`: each execution resets
/// `e`.
///
/// # Errors
///
/// 107032 for an event part of another active capture.
pub fn reset_event(m: &Arc<Model>, s: &Stream, e: &Arc<Event>) -> Result<(), Error> {
    if let Some(owner) = captured_by(e)
        && !Arc::ptr_eq(&owner, m)
    {
        return Err(conflict(&owner));
    }
    event_task_allowed(m, s, "event reset")?;
    let mut inner = m.inner.lock();
    Model::push(&mut inner, s, Step::Reset(e.clone()));
    Model::note_last(&mut inner, s.shared.uid, None);
    Ok(())
}

/// The task-group rule for an event task captured on `s`
/// ([`Model::group_allows`]: event tasks are not kernels).
fn event_task_allowed(m: &Model, s: &Stream, what: &str) -> Result<(), Error> {
    if m.sub {
        return Err(err(
            ErrorKind::FeatureNotSupport,
            format!(
                "cann-sim does not capture an {what} into a sub-model of a conditional task \
                 ({} captures into one); a sub-model runs copies, fills, operators, kernels and \
                 conditional tasks",
                s.label()
            ),
        ));
    }
    let in_group = s.task_group.lock().sampling().is_some();
    Model::group_allows(&mut m.inner.lock(), s, in_group, false, what)
}

fn not_ex() -> Error {
    err(
        ErrorKind::FeatureNotSupport,
        "events recorded or waited on in a capture must be created with \
         aclrtCreateEventExWithFlag",
    )
}

fn conflict(other: &Model) -> Error {
    err(
        ErrorKind::CaptureConflict,
        format!(
            "the event is part of another active capture (of {})",
            other.origin_label()
        ),
    )
}

/// Looks a model handle up.
pub fn lookup(addr: usize) -> Lookup<Model> {
    MODELS.lock().get(addr)
}

/// A task group (`aclrtTaskGrp`; the runtime's `TaskGroup`,
/// `src/runtime/core/src/stream/stream.hpp`): kernel tasks of a captured
/// model, in capture order, which an update replaces.
pub struct Group {
    /// The model it belongs to.
    model: Weak<Model>,
    /// Its tasks: indices in the model's steps.
    tasks: Mutex<Vec<usize>>,
    /// A stream is updating it (`TaskGroup::isUpdate`).
    updating: std::sync::atomic::AtomicBool,
}

/// Ended groups of live models, by handle; a model's destruction
/// unregisters its groups (on the runtime a handle of a destroyed model is
/// a dangling pointer: the simulator reports it instead).
pub static GROUPS: Table<Group> = Table::new(Default::default);

impl Group {
    /// Its handle.
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// How many tasks it holds.
    fn len(&self) -> usize {
        self.tasks.lock().len()
    }

    /// The model it belongs to, while that model is live.
    pub fn model(&self) -> Option<Arc<Model>> {
        self.model.upgrade()
    }
}

/// A stream's task-group state (the runtime's `StreamTaskGroupStatus`:
/// NONE, SAMPLE, UPDATE).
#[derive(Default)]
pub enum GroupState {
    /// Neither.
    #[default]
    None,
    /// A group is open in the stream's capture.
    Sample(Arc<Group>),
    /// The stream updates `group`; `next` is the number of its tasks
    /// replaced so far (`TaskGroup::updateTaskIndex`).
    Update {
        /// The group.
        group: Arc<Group>,
        /// Tasks replaced so far.
        next: usize,
    },
}

impl GroupState {
    /// Whether the stream updates a group.
    pub fn is_update(&self) -> bool {
        matches!(self, GroupState::Update { .. })
    }

    /// The group open on the stream, if any.
    fn sampling(&self) -> Option<Arc<Group>> {
        match self {
            GroupState::Sample(g) => Some(g.clone()),
            _ => None,
        }
    }
}

fn group_status(msg: String) -> Error {
    err(ErrorKind::TaskGroupStatus, msg)
}

/// `aclmdlRICaptureTaskGrpBegin`: the kernels `s` captures from now on form
/// a group (`context_aclgraph.cc` `Context::StreamBeginTaskGrp`).
///
/// # Errors
///
/// 107029 when `s` is not capturing (`api_error_aclgraph.cc`
/// `ApiErrorDecorator::StreamBeginTaskGrp`); 107033 when a group is open on
/// it already (groups do not nest) or it updates a group.
pub fn group_begin(s: &Stream) -> Result<(), Error> {
    let Some(m) = s.capture.lock().clone() else {
        return Err(err(
            ErrorKind::StreamNotCaptured,
            format!(
                "{} is not capturing; task groups are marked inside a capture",
                s.label()
            ),
        ));
    };
    let mut st = s.task_group.lock();
    if !matches!(*st, GroupState::None) {
        return Err(group_status(format!(
            "{} has a task group open already (groups do not nest), or is updating one",
            s.label()
        )));
    }
    *st = GroupState::Sample(Arc::new(Group {
        model: Arc::downgrade(&m),
        tasks: Mutex::new(Vec::new()),
        updating: false.into(),
    }));
    m.inner.lock().open_groups += 1;
    Ok(())
}

/// `aclmdlRICaptureTaskGrpEnd`: closes the group open on `s` and returns
/// it (`Context::StreamEndTaskGrp`).
///
/// # Errors
///
/// 107029 when `s` is not capturing; 107033 when no group is open on it.
/// Then, with the group closed all the same and dropped: the failure a task
/// of a group met in this capture (507009, 107034: remembered by the model,
/// `CaptureModel::GetTaskGroupErrCode`), or 507903 when the capture was
/// invalidated.
pub fn group_end(s: &Stream) -> Result<Arc<Group>, Error> {
    let Some(m) = s.capture.lock().clone() else {
        return Err(err(
            ErrorKind::StreamNotCaptured,
            format!("{} is not capturing", s.label()),
        ));
    };
    let g = {
        let mut st = s.task_group.lock();
        let GroupState::Sample(g) = std::mem::take(&mut *st) else {
            return Err(group_status(format!(
                "{} has no task group open (aclmdlRICaptureTaskGrpBegin first)",
                s.label()
            )));
        };
        g
    };
    let mut inner = m.inner.lock();
    inner.open_groups = inner.open_groups.saturating_sub(1);
    if let Some(e) = &inner.group_error {
        return Err(err(
            e.kind,
            format!(
                "the capture's task groups failed earlier: {}; no group is returned",
                e.msg
            ),
        ));
    }
    if inner.invalidated {
        return Err(err(
            ErrorKind::CaptureInvalidated,
            format!("the capture of {} has been invalidated", s.label()),
        ));
    }
    inner.groups.push(g.clone());
    drop(inner);
    GROUPS.lock().insert(g.clone());
    Ok(g)
}

/// `aclmdlRICaptureTaskUpdateBegin`: the kernels issued on `s` from now on
/// replace the tasks of `g`, in order (`Context::StreamBeginTaskUpdate`,
/// `Stream::SetUpdateTaskGroup`).
///
/// # Errors
///
/// 107027 when `s` captures (`ApiErrorDecorator::StreamBeginTaskUpdate`);
/// 107033 when `s` has a group open or updates one, or another stream
/// updates `g`.
pub fn update_begin(s: &Stream, g: &Arc<Group>) -> Result<(), Error> {
    if s.capture.lock().is_some() {
        return Err(err(
            ErrorKind::StreamCaptured,
            format!(
                "{} is capturing; a task group is updated from a stream that does not capture",
                s.label()
            ),
        ));
    }
    let mut st = s.task_group.lock();
    if !matches!(*st, GroupState::None) {
        return Err(group_status(format!(
            "{} is updating a task group already, or has one open",
            s.label()
        )));
    }
    if g.updating.swap(true, Ordering::AcqRel) {
        return Err(group_status(
            "the task group is being updated by another stream; a group is updated by one \
             stream at a time"
                .to_string(),
        ));
    }
    *st = GroupState::Update {
        group: g.clone(),
        next: 0,
    };
    s.updating.store(true, Ordering::Release);
    Ok(())
}

/// A task issued on `s` while it updates a group
/// ([`super::Stream::enqueue`]; `Stream::AllocTask`, `Stream::UpdateTask`):
/// a kernel replaces the group's next task; returns 0 (nothing is queued).
/// `st` is the stream's locked state, in update mode.
///
/// # Errors
///
/// 507000 for a kernel beyond the group's tasks (`RT_ERROR_STREAM_TASKGRP_UPDATE`);
/// 507009 for any other task (copies, fills, event tasks: `RT_ERROR_TASK_NOT_SUPPORT`).
/// Either way the stream stays in update mode.
pub fn update_task(s: &Stream, st: &mut GroupState, kind: TaskKind) -> Result<u64, Error> {
    let GroupState::Update { group, next } = st else {
        return Err(err(
            ErrorKind::Internal,
            format!("{} is not updating a task group", s.label()),
        ));
    };
    if !matches!(kind, TaskKind::Op { .. }) {
        if let TaskKind::Record(r) = &kind {
            r.done
                .cancel("the record was refused by a task update".to_string());
        }
        return Err(err(
            ErrorKind::TaskTypeNotSupport,
            format!(
                "{} is updating a task group: only kernels (operators, aclrtLaunchKernel) can be \
                 issued on it until aclmdlRICaptureTaskUpdateEnd, not a {} task",
                s.label(),
                kind.name()
            ),
        ));
    }
    let (step, total) = {
        let tasks = group.tasks.lock();
        (tasks.get(*next).copied(), tasks.len())
    };
    let Some(step) = step else {
        return Err(err(
            ErrorKind::Internal,
            format!(
                "the task group holds {total} tasks and all of them were replaced already; an \
                 update issues exactly as many kernels as the group captured"
            ),
        ));
    };
    let Some(m) = group.model() else {
        return Err(err(
            ErrorKind::Internal,
            "the task group's model has been destroyed",
        ));
    };
    let mut inner = m.inner.lock();
    if let Some(slot) = inner.steps.get_mut(step) {
        if check::enabled() {
            check::on_capture(m.uid, m.handle(), step, s, &kind);
        }
        *slot = Step::Task(kind);
        // What a kernel launch kept of the replaced task no longer holds.
        inner.ri.kernels.remove(&step);
    }
    drop(inner);
    *next += 1;
    Ok(0)
}

/// `aclmdlRICaptureTaskUpdateEnd`: ends the update on `s`
/// (`Context::StreamEndTaskUpdate`).
///
/// # Errors
///
/// 107027 when `s` captures; 107033 when it is not updating a group; then,
/// with the update ended all the same, 507000 when fewer kernels were issued
/// than the group holds — the ones issued stay applied (the runtime does
/// not roll back).
pub fn update_end(s: &Stream) -> Result<(), Error> {
    if s.capture.lock().is_some() {
        return Err(err(
            ErrorKind::StreamCaptured,
            format!("{} is capturing", s.label()),
        ));
    }
    let mut st = s.task_group.lock();
    let GroupState::Update { group, next } = std::mem::take(&mut *st) else {
        return Err(group_status(format!(
            "{} is not updating a task group (aclmdlRICaptureTaskUpdateBegin first)",
            s.label()
        )));
    };
    s.updating.store(false, Ordering::Release);
    drop(st);
    group.updating.store(false, Ordering::Release);
    let total = group.len();
    if next != total {
        return Err(err(
            ErrorKind::Internal,
            format!(
                "the update issued {next} kernels and the task group holds {total}: its first \
                 {next} tasks were replaced, the others were not"
            ),
        ));
    }
    Ok(())
}

/// Looks a task-group handle up.
pub fn lookup_group(addr: usize) -> Lookup<Group> {
    GROUPS.lock().get(addr)
}

//! Model runtime instances built explicitly (`aclmdlRIBuildBegin` …
//! `aclmdlRIBuildEnd`), their labels and label switches.
//!
//! The rules follow hicann/runtime (`src/acl/aclrt_impl/model_ri.cpp`,
//! `src/acl/aclrt_impl/label.cpp`, `src/runtime/api/api_c_model.cc`,
//! `src/runtime/api/impl/api_error.cc`, `api_impl.cc`,
//! `src/runtime/feature/model/model.cc`, `src/runtime/core/src/context/context.cc`,
//! `src/runtime/core/src/launch/label.cc`; `docs/zh/api_ref/10_label_management.md`,
//! `docs/zh/api_ref/15_model_running_instance__management.md`, and the sample
//! `example/2_advanced_features/label/0_simple_label`):
//!
//! - [`Built::bind`]: only persistent streams (`ACL_STREAM_PERSISTENT`) are
//!   bound; a stream is bound to one model at a time (107005,
//!   `api_c_model.cc` `rtsModelBindStream`). From then on, the work queued
//!   on it is recorded into the model instead of run (the stream's tasks
//!   sink into the model, `Stream::enqueue` hands them to [`Built::record`]).
//! - [`Built::set_label`], [`Built::switch_by_index`] (`aclrtSetLabel`,
//!   `aclrtSwitchLabelByIndex`): a label marks a position of a bound stream;
//!   a switch reads a `uint32` index from device memory *when the model
//!   runs* and continues at the label of that index in its list — on the
//!   label's stream, the current stream's later tasks are not run; an index
//!   beyond the list takes its last label (the API page).
//! - [`Built::end_task`] (`aclmdlRIEndTask`, `rtsEndGraph`): one end per
//!   model (507000, `Context::ModelAddEndGraph`); reaching it ends the
//!   execution.
//! - [`Built::load_complete`] (`aclmdlRIBuildEnd`): the model is ready; each
//!   execution ([`Built::program`]) runs its head streams
//!   (`ACL_MODEL_STREAM_FLAG_HEAD`), in the order they were bound, from
//!   their first task; other streams run only when a task activates them
//!   ([`Built::active`], `aclrtActiveStream`) or a label or stream switch
//!   ([`Built::switch_stream`], `aclrtSwitchStream`) jumps to them.
//!
//! An execution is one task on the executing stream: it runs the model's
//! program (copies, fills, operators, label switches) in order on the
//! stream's worker, with every memory range of the model validated first.

use crate::check::Use;
use crate::rt::capture::Running;
use crate::rt::handles::{Lookup, Table};
use crate::rt::stream::{Executions, Expect, Stream, TaskKind, TaskRange};
use crate::rt::{Error, ErrorKind};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

/// Jumps one execution may take before it is stopped as a runaway loop.
pub const MAX_JUMPS: u64 = 10_000_000;

/// Stream activations nested in one execution (a stream activated by a
/// stream activated by …) before it is stopped as a cycle.
pub const MAX_ACTIVATION_DEPTH: usize = 1_000;

fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg)
}

/// A label (`aclrtLabel`, `aclrtCreateLabel`).
pub struct Label {
    /// The context it was created in.
    pub ctx_id: u64,
    /// Its number, for messages and the JSON dump.
    pub id: u32,
    /// Where it is set: the model, the stream's uid, and the position in
    /// that stream's steps (`Label::Set` sets a label once).
    set: Mutex<Option<(Weak<Built>, u64, usize)>>,
    /// Whether a label list holds it (`aclrtSetLabel` needs one first:
    /// `label.cc` `Label::Set`, `RT_ERROR_LABEL_PHY_ADDR_NULL`).
    listed: std::sync::atomic::AtomicBool,
}

/// A label list (`aclrtLabelList`, `aclrtCreateLabelList`).
pub struct LabelList {
    /// Its labels, in order.
    pub labels: Vec<Arc<Label>>,
}

/// Live labels.
pub static LABELS: Table<Label> = Table::new(Default::default);
/// Live label lists.
pub static LABEL_LISTS: Table<LabelList> = Table::new(Default::default);
/// Live built models.
pub static BUILT: Table<Built> = Table::new(Default::default);

/// Labels per process (`docs/zh/api_ref/10_label_management.md`: at most
/// 65535).
pub const MAX_LABELS: usize = 65_535;

impl Label {
    /// Its handle.
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

impl LabelList {
    /// Its handle.
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

/// `aclrtCreateLabel` in context `ctx_id`.
///
/// # Errors
///
/// 507000 beyond [`MAX_LABELS`] live labels (`RT_ERROR_LABEL_ALLOCATOR`).
pub fn create_label(ctx_id: u64) -> Result<Arc<Label>, Error> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mut table = LABELS.lock();
    if table.all().len() >= MAX_LABELS {
        return Err(err(
            ErrorKind::Internal,
            format!("{MAX_LABELS} labels exist already (the limit per process); destroy some"),
        ));
    }
    let l = Arc::new(Label {
        ctx_id,
        id: (NEXT.fetch_add(1, Ordering::Relaxed) % 65_536) as u32,
        set: Mutex::new(None),
        listed: false.into(),
    });
    table.insert(l.clone());
    Ok(l)
}

/// `aclrtCreateLabelList`.
///
/// # Errors
///
/// 107000 for an empty list or one of more than 65535 labels
/// (`rtsLabelSwitchListCreate`).
pub fn create_list(labels: Vec<Arc<Label>>) -> Result<Arc<LabelList>, Error> {
    if labels.is_empty() || labels.len() > MAX_LABELS {
        return Err(err(
            ErrorKind::ParamInvalid,
            format!(
                "num {} is out of range; expected (0, {MAX_LABELS}]",
                labels.len()
            ),
        ));
    }
    for l in &labels {
        l.listed.store(true, Ordering::Release);
    }
    let list = Arc::new(LabelList { labels });
    LABEL_LISTS.lock().insert(list.clone());
    Ok(list)
}

/// Where a built model is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Streams are bound and tasks added.
    Building,
    /// `aclmdlRIBuildEnd` was called: it can be executed.
    Ready,
}

/// One step of a bound stream.
enum Step {
    /// A copy, upload, fill or operator, the ranges it touches and the
    /// enqueueing API.
    Task(Inst, Vec<TaskRange>, &'static str),
    /// `aclrtSetLabel`: a position a switch can jump to.
    Label(Arc<Label>),
    /// `aclrtSwitchLabelByIndex`.
    Switch {
        /// The `uint32` index in device memory.
        index: usize,
        /// Its allocation.
        at: Expect,
        /// `maxValue`.
        max: u32,
        /// The list's labels.
        labels: Vec<Arc<Label>>,
    },
    /// `aclmdlRIEndTask`.
    End,
    /// `aclrtActiveStream`: the bound stream (its uid) starts running.
    Active(u64),
    /// `aclrtSwitchStream`: when `left cond right` holds, the execution
    /// continues at the start of the bound stream `target` (its uid).
    SwitchStream {
        /// The two operands in device memory, and their allocations.
        left: (usize, Expect),
        right: (usize, Expect),
        /// The comparison.
        cond: Compare,
        /// 8-byte operands (`ACL_RT_SWITCH_INT64`), else 4.
        wide: bool,
        target: u64,
    },
}

/// The comparison of a stream switch (`aclrtCondition`, in the order of
/// its values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// `ACL_RT_EQUAL`.
    Eq,
    /// `ACL_RT_NOT_EQUAL`.
    Ne,
    /// `ACL_RT_GREATER`.
    Gt,
    /// `ACL_RT_GREATER_OR_EQUAL`.
    Ge,
    /// `ACL_RT_LESS`.
    Lt,
    /// `ACL_RT_LESS_OR_EQUAL`.
    Le,
}

impl Compare {
    /// The comparison of a runtime value, `None` beyond `LESS_OR_EQUAL`.
    pub fn from_raw(v: u32) -> Option<Compare> {
        [
            Compare::Eq,
            Compare::Ne,
            Compare::Gt,
            Compare::Ge,
            Compare::Lt,
            Compare::Le,
        ]
        .get(v as usize)
        .copied()
    }

    fn holds(self, l: i64, r: i64) -> bool {
        match self {
            Compare::Eq => l == r,
            Compare::Ne => l != r,
            Compare::Gt => l > r,
            Compare::Ge => l >= r,
            Compare::Lt => l < r,
            Compare::Le => l <= r,
        }
    }
}

impl Step {
    /// Its name in the JSON dump: the kernel's (the operator API) for
    /// kernels, the type otherwise (`Stream::ConstructTraceEventFromTask`).
    fn name(&self) -> &'static str {
        match self {
            Step::Task(Inst::Kernel(_), _, api) => api,
            other => other.type_name(),
        }
    }

    /// The task type the runtime's JSON dump names it by
    /// (`TaskInfo::typeName`, `src/runtime/core/src/task/task_info/`).
    fn type_name(&self) -> &'static str {
        match self {
            Step::Task(i, ..) => i.type_name(),
            Step::Label(_) => "LABEL_SET",
            Step::Switch { .. } => "STREAM_LABEL_SWITCH_BY_INDEX",
            Step::End => "MODEL_END_GRAPH",
            // `stream_task_active.cc`, `cond_op_stream_task.cc`.
            Step::Active(_) => "STREAM_ACTIVE",
            Step::SwitchStream { .. } => "STREAM_SWITCH",
        }
    }
}

/// The runtime's task type name of a recorded task (`TaskInfo::typeName`:
/// `memory_memcpy_async_task.cc` "MEMCPY_ASYNC", `memory_task_v200_base.cc`
/// "MEMSET_ASYNC", `davinci_kernel_task.cc` "KERNEL_AIVEC").
pub fn type_name(k: &TaskKind) -> &'static str {
    match k {
        TaskKind::Copy { .. } | TaskKind::Upload { .. } => "MEMCPY_ASYNC",
        TaskKind::Fill { .. } => "MEMSET_ASYNC",
        _ => "KERNEL_AIVEC",
    }
}

/// A stream bound to a model.
struct Bound {
    stream: Weak<Stream>,
    uid: u64,
    id: i32,
    label: String,
    head: bool,
    steps: Vec<Step>,
    /// The task type and name of each step, for the JSON dump (kept when
    /// the steps are frozen into the program).
    types: Vec<(&'static str, &'static str)>,
}

struct Inner {
    phase: Phase,
    /// In the order they were bound.
    streams: Vec<Bound>,
    ended: bool,
    /// Set by `aclmdlRIBuildEnd`: the ranges it touches and the program.
    program: Option<(Vec<TaskRange>, Arc<Program>)>,
}

/// A model runtime instance built with `aclmdlRIBuildBegin` (`aclmdlRI`).
pub struct Built {
    /// The context it was built in.
    pub ctx_id: u64,
    /// Its id (`aclmdlRIGetId`), for messages and the JSON dump.
    pub id: u32,
    inner: Mutex<Inner>,
    /// Executions queued and not yet finished.
    running: Arc<AtomicUsize>,
    /// Unique for the process: the check mode's key for the memory it
    /// holds ([`crate::check::on_capture`]).
    uid: u64,
    /// Steps recorded so far, over all its streams (the check mode's step
    /// numbers).
    recorded: AtomicUsize,
    /// Its name (`aclmdlRISetName`; empty at first).
    pub name: Mutex<String>,
    /// Where its executions were queued, for `aclmdlRIAbort`.
    executions: Executions,
    /// Raised by `aclmdlRIAbort` while it stops the executions: a running
    /// program ends at its next step.
    stop: Arc<AtomicBool>,
}

/// `aclmdlRIBuildBegin` in context `ctx_id`.
pub fn begin(ctx_id: u64) -> Arc<Built> {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    let m = Arc::new(Built {
        ctx_id,
        id: NEXT.fetch_add(1, Ordering::Relaxed) as u32,
        inner: Mutex::new(Inner {
            phase: Phase::Building,
            streams: Vec::new(),
            ended: false,
            program: None,
        }),
        running: Arc::new(AtomicUsize::new(0)),
        uid: crate::rt::capture::next_model_uid(),
        recorded: AtomicUsize::new(0),
        name: Mutex::new(String::new()),
        executions: Executions::default(),
        stop: Arc::new(AtomicBool::new(false)),
    });
    BUILT.lock().insert(m.clone());
    m
}

/// Looks a built model's handle up.
pub fn lookup(addr: usize) -> Lookup<Built> {
    BUILT.lock().get(addr)
}

/// The model `s` is bound to, if any.
pub fn bound_model(s: &Stream) -> Option<Arc<Built>> {
    s.bound.lock().clone()
}

/// Whether `s` is bound to a model that is still being built (its work is
/// recorded, so a persistent stream takes it).
pub fn records(s: &Stream) -> bool {
    bound_model(s).is_some_and(|m| m.inner.lock().phase == Phase::Building)
}

impl Built {
    /// Its handle.
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// `aclmdlRIBindStream`: `s` sinks its work into the model from now on.
    /// The caller checked the flags (persistent, `flag` HEAD or DEFAULT). A
    /// stream bound again after an unbind keeps its recorded steps.
    ///
    /// # Errors
    ///
    /// 107005 when `s` is bound to a model already (`rtsModelBindStream`).
    pub fn bind(self: &Arc<Self>, s: &Arc<Stream>, head: bool) -> Result<(), Error> {
        let mut slot = s.bound.lock();
        if let Some(other) = slot.as_ref() {
            return Err(err(
                ErrorKind::StreamModel,
                format!(
                    "{} is bound to model {} already and cannot be bound to model {}",
                    s.label(),
                    other.id,
                    self.id
                ),
            ));
        }
        *slot = Some(self.clone());
        s.bound_once.store(true, Ordering::Release);
        let mut inner = self.inner.lock();
        if let Some(b) = inner.streams.iter_mut().find(|b| b.uid == s.shared.uid) {
            b.head = head;
            b.stream = Arc::downgrade(s);
            return Ok(());
        }
        inner.streams.push(Bound {
            stream: Arc::downgrade(s),
            uid: s.shared.uid,
            id: s.id,
            label: s.label(),
            head,
            steps: Vec::new(),
            types: Vec::new(),
        });
        Ok(())
    }

    /// `aclmdlRIUnbindStream`: `s` no longer belongs to the model; the tasks
    /// it recorded stay in the model (`Model::UnbindStream` only tells the
    /// scheduler).
    ///
    /// # Errors
    ///
    /// 107005 when `s` is not bound to this model (`model.cc`
    /// `Model::UnbindStream`).
    pub fn unbind(self: &Arc<Self>, s: &Stream) -> Result<(), Error> {
        let mut slot = s.bound.lock();
        match slot.as_ref() {
            Some(m) if Arc::ptr_eq(m, self) => {
                *slot = None;
                Ok(())
            }
            _ => Err(err(
                ErrorKind::StreamModel,
                format!("{} is not bound to model {}", s.label(), self.id),
            )),
        }
    }

    /// Records a step on bound stream `s`.
    fn push(&self, s: &Stream, step: Step) -> Result<usize, Error> {
        let mut inner = self.inner.lock();
        if inner.phase != Phase::Building {
            return Err(err(
                ErrorKind::FeatureNotSupport,
                format!(
                    "model {} was built already (aclmdlRIBuildEnd); cann-sim does not add tasks \
                     to a built model ({} is bound to it)",
                    self.id,
                    s.label()
                ),
            ));
        }
        let Some(b) = inner.streams.iter_mut().find(|b| b.uid == s.shared.uid) else {
            return Err(err(
                ErrorKind::StreamModel,
                format!("{} is not bound to model {}", s.label(), self.id),
            ));
        };
        b.types.push((step.type_name(), step.name()));
        b.steps.push(step);
        Ok(b.steps.len())
    }

    /// A task queued on bound stream `s` ([`Stream::enqueue`]): recorded,
    /// not run; returns its number in the stream's steps.
    ///
    /// # Errors
    ///
    /// 207000 for event tasks, waits, host functions, callbacks and
    /// collectives: the simulator records copies, fills and operators only.
    pub(crate) fn record(
        self: &Arc<Self>,
        s: &Stream,
        make: impl FnOnce(u64) -> TaskKind,
    ) -> Result<u64, Error> {
        let kind = make(0);
        let ranges = task_ranges(&kind);
        let api = kind.name();
        let held = ranges.clone();
        let Some(inst) = Inst::of(&kind) else {
            if let TaskKind::Record(r) = &kind {
                r.done
                    .cancel("the record was refused by a model build".to_string());
            }
            return Err(err(
                ErrorKind::FeatureNotSupport,
                format!(
                    "{api} tasks cannot be added to a built model by cann-sim ({} is bound to \
                     model {}); only copies, fills and operators can",
                    s.label(),
                    self.id
                ),
            ));
        };
        let n = self.push(s, Step::Task(inst, ranges, api))? as u64;
        self.hold(s, api, held);
        Ok(n)
    }

    /// Check mode: the model holds the memory of a recorded step from now
    /// on, until it is destroyed (`free-while-captured`), and what the step
    /// writes of memory nothing wrote before is unreadable until an
    /// execution is queued (`uninitialised-read`), as for captured models.
    fn hold(self: &Arc<Self>, s: &Stream, api: &'static str, ranges: Vec<TaskRange>) {
        if !crate::check::enabled() || ranges.is_empty() {
            return;
        }
        let step = self.recorded.fetch_add(1, Ordering::Relaxed);
        let kind = TaskKind::Op {
            api,
            ranges,
            kernel: Arc::new(|| Ok(())),
        };
        crate::check::on_build(self.uid, self.handle(), step, s, &kind);
    }

    /// `aclrtSetLabel` on bound stream `s` (`label.cc` `Label::Set`).
    ///
    /// # Errors
    ///
    /// 507000 for a label set already, or not in a label list yet
    /// (`RT_ERROR_LABEL_SET`, `RT_ERROR_LABEL_PHY_ADDR_NULL`).
    pub fn set_label(self: &Arc<Self>, s: &Stream, l: &Arc<Label>) -> Result<(), Error> {
        let mut set = l.set.lock();
        if set.is_some() {
            return Err(err(
                ErrorKind::Internal,
                format!(
                    "label {} is set already; a label cannot be set repeatedly",
                    l.id
                ),
            ));
        }
        if !l.listed.load(Ordering::Acquire) {
            return Err(err(
                ErrorKind::Internal,
                format!(
                    "label {} is in no label list: before setting a label with aclrtSetLabel, \
                     create a label list holding it (aclrtCreateLabelList)",
                    l.id
                ),
            ));
        }
        let at = self.push(s, Step::Label(l.clone()))? - 1;
        *set = Some((Arc::downgrade(self), s.shared.uid, at));
        Ok(())
    }

    /// `aclrtSwitchLabelByIndex` on bound stream `s`: at run time, reads the
    /// `uint32` at `index` (validated by the caller: 4 bytes of device
    /// memory in `at`).
    ///
    /// # Errors
    ///
    /// As [`Built::record`] for a model built already.
    pub fn switch_by_index(
        self: &Arc<Self>,
        s: &Stream,
        index: usize,
        at: Expect,
        max: u32,
        list: &LabelList,
    ) -> Result<(), Error> {
        self.push(
            s,
            Step::Switch {
                index,
                at,
                max,
                labels: list.labels.clone(),
            },
        )?;
        self.hold(s, "aclrtSwitchLabelByIndex", vec![index_range(index, at)]);
        Ok(())
    }

    /// `aclmdlRIEndTask` on bound stream `s`.
    ///
    /// # Errors
    ///
    /// 507000 for a second end (`context.cc` `Context::ModelAddEndGraph`,
    /// `RT_ERROR_MODEL_ENDGRAPH`: "The model must have only one end
    /// graph"); 507000 for a stream not bound to this model
    /// (`RT_ERROR_STREAM_INVALID`, which the ACL layer returns as 507000).
    pub fn end_task(&self, s: &Stream) -> Result<(), Error> {
        if self.inner.lock().ended {
            return Err(err(
                ErrorKind::Internal,
                format!(
                    "model {} has an end task already; a model has only one",
                    self.id
                ),
            ));
        }
        let bound_here = bound_model(s).is_some_and(|m| std::ptr::eq(Arc::as_ptr(&m), self));
        if !bound_here {
            return Err(err(
                ErrorKind::Internal,
                format!("{} must be bound to model {}", s.label(), self.id),
            ));
        }
        self.push(s, Step::End)?;
        self.inner.lock().ended = true;
        Ok(())
    }

    /// The uid of `target`, a stream bound to this model.
    ///
    /// # Errors
    ///
    /// 207000 for a stream bound to another model: the simulator runs the
    /// streams of one model only.
    fn own_stream(&self, target: &Stream) -> Result<u64, Error> {
        match bound_model(target) {
            Some(m) if std::ptr::eq(Arc::as_ptr(&m), self) => Ok(target.shared.uid),
            _ => Err(err(
                ErrorKind::FeatureNotSupport,
                format!(
                    "{} is bound to another model than model {}; cann-sim activates and switches \
                     to streams of the same model only",
                    target.label(),
                    self.id
                ),
            )),
        }
    }

    /// `aclrtActiveStream` on bound stream `s`: when an execution reaches
    /// it, `target` (bound to this model) starts running from its first
    /// task, beside `s` (the simulator runs it there, before the rest of
    /// `s`: one order parallel streams allow).
    ///
    /// # Errors
    ///
    /// 207000 for a target of another model; as [`Built::record`] for a
    /// model built already.
    pub fn active(self: &Arc<Self>, s: &Stream, target: &Stream) -> Result<(), Error> {
        let uid = self.own_stream(target)?;
        self.push(s, Step::Active(uid)).map(drop)
    }

    /// `aclrtSwitchStream` on bound stream `s`: when an execution reaches
    /// it and `*left cond *right` holds (signed, 4 or 8 bytes), it
    /// continues at the first task of `target` and the rest of `s` is not
    /// run; otherwise `s` goes on.
    ///
    /// # Errors
    ///
    /// As [`Built::active`].
    pub fn switch_stream(
        self: &Arc<Self>,
        s: &Stream,
        left: (usize, Expect),
        right: (usize, Expect),
        cond: Compare,
        wide: bool,
        target: &Stream,
    ) -> Result<(), Error> {
        let uid = self.own_stream(target)?;
        self.push(
            s,
            Step::SwitchStream {
                left,
                right,
                cond,
                wide,
                target: uid,
            },
        )?;
        let len = if wide { 8 } else { 4 };
        let ranges = vec![
            operand_range("leftValue", left, len),
            operand_range("rightValue", right, len),
        ];
        self.hold(s, "aclrtSwitchStream", ranges);
        Ok(())
    }

    /// `aclmdlRIBuildEnd`: the model can be executed.
    ///
    /// A stream bound with `ACL_MODEL_STREAM_FLAG_DEFAULT` runs only when a
    /// task activates it (`aclrtActiveStream`) or jumps to it (a label or
    /// stream switch); one nothing reaches never runs.
    ///
    /// # Errors
    ///
    /// None: the `Result` is the model engine's convention.
    pub fn load_complete(&self) -> Result<(), Error> {
        let mut inner = self.inner.lock();
        inner.phase = Phase::Ready;
        self.freeze(&mut inner);
        Ok(())
    }

    /// `aclmdlRIExecuteAsync`: queues one execution on `s`.
    ///
    /// # Errors
    ///
    /// 107000 for a model not built yet (no `aclmdlRIBuildEnd`); the
    /// stream's error when it is being destroyed.
    pub fn execute(self: &Arc<Self>, s: &Stream) -> Result<(), Error> {
        let Some((ranges, program)) = self.inner.lock().program.clone() else {
            return Err(err(
                ErrorKind::ParamInvalid,
                format!(
                    "model {} is still being built; end the build with aclmdlRIBuildEnd first",
                    self.id
                ),
            ));
        };
        if crate::check::enabled() {
            crate::check::on_inline_execution(self.uid);
        }
        self.running.fetch_add(1, Ordering::AcqRel);
        let guard = Running(self.running.clone());
        let queued = s.queues_directly();
        let seq = s.enqueue(move |_| TaskKind::Op {
            api: "aclmdlRIExecuteAsync",
            ranges,
            kernel: Arc::new(move || {
                let _ = &guard;
                program.run()
            }),
        })?;
        if queued {
            self.executions.push(s, seq, seq);
        }
        Ok(())
    }

    /// `aclmdlRIAbort`: stops its executions queued or running (a running
    /// program ends before its next step; see `crate::rt::ri_task::abort`
    /// for the release's semantics). Returns how many were stopped.
    pub fn abort(&self, fault: &Error) -> usize {
        self.stop.store(true, Ordering::Release);
        let n = self.executions.abort_all(fault);
        self.stop.store(false, Ordering::Release);
        n
    }

    /// Freezes the recorded steps into the model's program, with every
    /// memory range it touches.
    fn freeze(&self, inner: &mut Inner) {
        let mut ranges = Vec::new();
        let mut streams = Vec::new();
        let mut labels = HashMap::new();
        let index_of: HashMap<u64, usize> = inner
            .streams
            .iter()
            .enumerate()
            .map(|(i, b)| (b.uid, i))
            .collect();
        // Bound to this model when recorded (`own_stream`), and a model
        // keeps the streams it ever bound.
        let at = |uid: u64| index_of.get(&uid).copied().unwrap_or(usize::MAX);
        for (si, b) in inner.streams.iter_mut().enumerate() {
            let mut ops = Vec::new();
            for (pi, st) in std::mem::take(&mut b.steps).into_iter().enumerate() {
                ops.push(match st {
                    Step::Task(inst, r, _) => {
                        ranges.extend(r);
                        Op::Task(inst)
                    }
                    Step::Label(l) => {
                        labels.insert(Arc::as_ptr(&l) as usize, (si, pi));
                        Op::Nop
                    }
                    Step::Switch {
                        index,
                        at,
                        max,
                        labels,
                    } => {
                        ranges.push(index_range(index, at));
                        Op::Switch {
                            index,
                            max,
                            labels: labels.iter().map(|l| Arc::as_ptr(l) as usize).collect(),
                        }
                    }
                    Step::End => Op::End,
                    Step::Active(uid) => Op::Active(at(uid)),
                    Step::SwitchStream {
                        left,
                        right,
                        cond,
                        wide,
                        target,
                    } => {
                        let len = if wide { 8 } else { 4 };
                        ranges.push(operand_range("leftValue", left, len));
                        ranges.push(operand_range("rightValue", right, len));
                        Op::SwitchStream {
                            left: left.0,
                            right: right.0,
                            cond,
                            wide,
                            target: at(target),
                        }
                    }
                });
            }
            streams.push((b.head, b.label.clone(), ops));
        }
        inner.program = Some((
            ranges,
            Arc::new(Program {
                model: self.id,
                streams,
                labels,
                stop: self.stop.clone(),
            }),
        ));
    }

    /// `aclmdlRIDestroy`: waits (polling every 1 ms, at most 10 000 times)
    /// for its executions, unbinds its streams and unregisters it
    /// (`context.cc` `Context::ModelDestroy`).
    ///
    /// # Errors
    ///
    /// 107037 when executions are still queued after the polling.
    pub fn destroy(self: &Arc<Self>) -> Result<(), Error> {
        crate::rt::capture::wait_for_executions(&self.running)?;
        let streams: Vec<Weak<Stream>> = self
            .inner
            .lock()
            .streams
            .iter()
            .map(|b| b.stream.clone())
            .collect();
        for s in streams.iter().filter_map(Weak::upgrade) {
            let _ = self.unbind(&s);
        }
        BUILT.lock().remove(self.handle());
        if crate::check::enabled() {
            crate::check::on_model_gone(self.uid);
        }
        Ok(())
    }

    /// Its task list for `aclmdlRIDebugJsonPrint`: per stream (id), each
    /// step's type and name; the last stream bound first, as the runtime
    /// lists them (`Model::BindStream` pushes each stream at the front).
    pub fn describe(&self) -> Vec<(i32, Vec<super::debug_json::Task>)> {
        self.inner
            .lock()
            .streams
            .iter()
            .rev()
            .map(|b| {
                let tasks = b
                    .types
                    .iter()
                    .map(|&(kind, name)| super::debug_json::Task {
                        kind,
                        name: name.to_string(),
                    })
                    .collect();
                (b.id, tasks)
            })
            .collect()
    }
}

/// An operand of a stream switch.
fn operand_range(what: &'static str, (addr, at): (usize, Expect), len: usize) -> TaskRange {
    TaskRange {
        what,
        addr,
        len,
        at,
        how: Use::Read,
    }
}

/// The `uint32` index a label switch reads.
fn index_range(index: usize, at: Expect) -> TaskRange {
    TaskRange {
        what: "label index",
        addr: index,
        len: 4,
        at,
        how: Use::Read,
    }
}

/// The ranges a recorded task touches.
pub(crate) fn task_ranges(k: &TaskKind) -> Vec<TaskRange> {
    let r = |what, addr, len, at, how| TaskRange {
        what,
        addr,
        len,
        at,
        how,
    };
    match k {
        TaskKind::Copy {
            dst,
            src,
            count,
            dst_at,
            src_at,
            ..
        } => vec![
            r("dst", *dst, *count, *dst_at, Use::Write),
            r("src", *src, *count, *src_at, Use::Read),
        ],
        TaskKind::Upload {
            dst, data, dst_at, ..
        } => vec![r("dst", *dst, data.len(), *dst_at, Use::Write)],
        TaskKind::Fill {
            dst, count, dst_at, ..
        } => vec![r("devPtr", *dst, *count, *dst_at, Use::Write)],
        TaskKind::Op { ranges, .. } => ranges.clone(),
        _ => Vec::new(),
    }
}

/// A recorded copy, upload, fill or operator (shared by the executions;
/// also a step of a conditional task's sub-model, [`crate::rt::cond`]).
pub(crate) enum Inst {
    Copy {
        dst: usize,
        src: usize,
        count: usize,
    },
    Upload {
        dst: usize,
        data: Vec<u8>,
    },
    Fill {
        dst: usize,
        count: usize,
        value: u8,
    },
    Kernel(Arc<dyn Fn() -> Result<(), Error> + Send + Sync>),
}

impl Inst {
    /// The instruction of a copy, upload, fill or operator task.
    pub(crate) fn of(k: &TaskKind) -> Option<Inst> {
        Some(match k {
            TaskKind::Copy {
                dst, src, count, ..
            } => Inst::Copy {
                dst: *dst,
                src: *src,
                count: *count,
            },
            TaskKind::Upload { dst, data, .. } => Inst::Upload {
                dst: *dst,
                data: data.clone(),
            },
            TaskKind::Fill {
                dst, count, value, ..
            } => Inst::Fill {
                dst: *dst,
                count: *count,
                value: *value,
            },
            TaskKind::Op { kernel, .. } => Inst::Kernel(kernel.clone()),
            _ => return None,
        })
    }

    /// The runtime's task type name (see [`type_name`]).
    fn type_name(&self) -> &'static str {
        match self {
            Inst::Copy { .. } | Inst::Upload { .. } => "MEMCPY_ASYNC",
            Inst::Fill { .. } => "MEMSET_ASYNC",
            Inst::Kernel(_) => "KERNEL_AIVEC",
        }
    }
}

/// One instruction of an execution.
enum Op {
    Task(Inst),
    Nop,
    Switch {
        index: usize,
        max: u32,
        /// Label addresses.
        labels: Vec<usize>,
    },
    End,
    /// Starts the stream of this index.
    Active(usize),
    SwitchStream {
        left: usize,
        right: usize,
        cond: Compare,
        wide: bool,
        /// The stream index.
        target: usize,
    },
}

/// A built model's frozen program: what one execution runs.
struct Program {
    model: u32,
    /// Per bound stream: whether it is a head stream, its label, its ops.
    streams: Vec<(bool, String, Vec<Op>)>,
    /// Where each label set in the model is: (stream, op).
    labels: HashMap<usize, (usize, usize)>,
    /// The model's abort flag ([`Built::abort`]).
    stop: Arc<AtomicBool>,
}

impl Program {
    /// Runs the program. Called on the executing stream's worker inside an
    /// operator task, so every range of [`Built::program`] was validated
    /// and the allocation table's read lock is held.
    fn run(&self) -> Result<(), Error> {
        let mut jumps = 0u64;
        // The head streams, in the order they were bound, each from its
        // first task, until one reaches the end task.
        for (start, (head, ..)) in self.streams.iter().enumerate() {
            if *head && self.run_from(start, &mut jumps, 0)? {
                break;
            }
        }
        Ok(())
    }

    /// Runs stream `start` from its first task, following label and stream
    /// switches; an activated stream runs, from its first task, where it is
    /// activated (before the rest of the activating stream: one order the
    /// two parallel streams allow). Returns whether the end task was
    /// reached.
    fn run_from(&self, start: usize, jumps: &mut u64, depth: usize) -> Result<bool, Error> {
        {
            let (mut si, mut pc) = (start, 0usize);
            while let Some(op) = self.streams.get(si).and_then(|s| s.2.get(pc)) {
                if self.stop.load(Ordering::Acquire) {
                    // `aclmdlRIAbort`: the execution ends here; the abort
                    // reports it to the stream.
                    return Ok(true);
                }
                pc += 1;
                match op {
                    Op::Nop => {}
                    Op::End => return Ok(true),
                    Op::Task(k) => run_task(k)?,
                    Op::Active(t) => {
                        self.count_jump(jumps)?;
                        if depth >= MAX_ACTIVATION_DEPTH {
                            return Err(err(
                                ErrorKind::ModelFault,
                                format!(
                                    "model {}: {MAX_ACTIVATION_DEPTH} stream activations nested \
                                     in one execution; do streams activate each other in a \
                                     cycle?",
                                    self.model
                                ),
                            ));
                        }
                        if self.run_from(*t, jumps, depth + 1)? {
                            return Ok(true);
                        }
                    }
                    Op::SwitchStream {
                        left,
                        right,
                        cond,
                        wide,
                        target,
                    } => {
                        let read = |addr: usize| {
                            if *wide {
                                // SAFETY: 8 bytes of a live allocation
                                // (validated as a range of the task, kept
                                // alive by the read lock the worker holds).
                                unsafe { std::ptr::read_unaligned(addr as *const i64) }
                            } else {
                                // SAFETY: as above, 4 bytes.
                                i64::from(unsafe { std::ptr::read_unaligned(addr as *const i32) })
                            }
                        };
                        if cond.holds(read(*left), read(*right)) {
                            self.count_jump(jumps)?;
                            (si, pc) = (*target, 0);
                        }
                    }
                    Op::Switch { index, max, labels } => {
                        // SAFETY: the 4 bytes at `index` lie in a live
                        // allocation (validated as a range of the task,
                        // kept alive by the read lock the worker holds).
                        let i = unsafe { std::ptr::read_unaligned(*index as *const u32) };
                        let limit = if *max == 0 {
                            labels.len()
                        } else {
                            (*max as usize).min(labels.len())
                        };
                        let target = labels[(i as usize).min(limit.saturating_sub(1))];
                        let Some(&(ts, tp)) = self.labels.get(&target) else {
                            return Err(err(
                                ErrorKind::ModelFault,
                                format!(
                                    "model {}: the label switch on {} took index {i}, whose \
                                     label is not set on a stream of the model",
                                    self.model, self.streams[si].1
                                ),
                            ));
                        };
                        self.count_jump(jumps)?;
                        (si, pc) = (ts, tp + 1);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Counts a jump or activation of one execution.
    ///
    /// # Errors
    ///
    /// 507011 beyond [`MAX_JUMPS`]: a runaway loop.
    fn count_jump(&self, jumps: &mut u64) -> Result<(), Error> {
        *jumps += 1;
        if *jumps > MAX_JUMPS {
            return Err(err(
                ErrorKind::ModelFault,
                format!(
                    "model {}: {MAX_JUMPS} jumps or activations in one execution; a loop whose \
                     condition never changes?",
                    self.model
                ),
            ));
        }
        Ok(())
    }
}

/// Runs a copy, upload, fill or operator of a model's program (or of a
/// conditional task); its ranges were validated (see [`Program::run`]).
pub(crate) fn run_task(i: &Inst) -> Result<(), Error> {
    match i {
        Inst::Copy { dst, src, count } => {
            // SAFETY: both ends lie in live allocations, validated as ranges
            // of the execution task and kept alive by the read lock its
            // worker holds; `copy` allows overlap.
            unsafe { std::ptr::copy(*src as *const u8, *dst as *mut u8, *count) }
        }
        Inst::Upload { dst, data } => {
            // SAFETY: as above; `data` is a separate buffer.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), *dst as *mut u8, data.len()) }
        }
        Inst::Fill { dst, count, value } => {
            // SAFETY: as above.
            unsafe { std::ptr::write_bytes(*dst as *mut u8, *value, *count) }
        }
        Inst::Kernel(kernel) => return kernel(),
    }
    Ok(())
}

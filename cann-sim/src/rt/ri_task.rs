//! The tasks of a captured model, seen from outside (`aclmdlRIGetStreams`,
//! `aclmdlRIGetTasksByStream`, `aclmdlRITaskGetType`, `…GetSeqId`,
//! `…GetParams`, `…SetParams`, `aclmdlRITaskDisable`): torch_npu's graph
//! mode reads a captured graph's tasks and changes them between replays.
//!
//! The rules follow hicann/runtime:
//!
//! - A model's streams (`model.cc` `Model::ModelGetStreams`) are the
//!   streams its tasks were captured on, the one that began the capture
//!   first; the simulator hands out a handle for each ([`RiStream`]), which
//!   only these calls take. A stream's tasks (`stream.cc`
//!   `Stream::StreamGetTasks`) are its captured tasks in capture order; the
//!   simulator does not make the runtime's own tasks (stream activation,
//!   end of graph), and waits on events of the same capture are no tasks
//!   of it (each execution runs the steps in capture order).
//! - A task's type (`kernel_utils.cc` `ConvertTaskType`): operators and
//!   kernels are KERNEL, event records, waits and resets their kinds, value
//!   writes and waits theirs; copies, fills and conditional tasks DEFAULT.
//!   Its sequence number is its place in the capture (`CaptureModel::GenerateSeqId`,
//!   from 0).
//! - Parameters (`api_impl.cc` `ApiImpl::TaskGetParams`, `memory_task.cc`
//!   `Get*TaskParams`): a DEFAULT task has none (107000); a kernel
//!   launch's are its function handle and arguments ([`super::ri_kernel`]),
//!   which the simulator's operator tasks do not keep (207000).
//! - Changes (`ApiImpl::TaskSetParams`, `ApiImpl::ModelTaskDisable`,
//!   `capture_model_utils.cc` `CheckCaptureModelForUpdate`): not while an
//!   execution runs, nor on a model that is not READY or UPDATING (107040);
//!   the model becomes UPDATING, and executing it fails (507011) until
//!   `aclmdlRIUpdate`; a failed change leaves it FAULT. A value write or
//!   wait replaces any task that is not DEFAULT (`UpdateWriteValueTaskParams`,
//!   `UpdateWaitValueTaskParams`); event tasks cannot be set (107000); a
//!   kernel task takes a new launch ([`super::ri_kernel`]). A disabled task
//!   does nothing until it is set again.
//!
//! A handle stays valid while its model lives; the model's destruction
//! unregisters it (107017 afterwards; on the runtime it dangles).

use super::capture::{Model, Phase, Step};
use super::error::{Error, ErrorKind};
use super::event::Event;
use super::handles::{Lookup, Table};
use super::ri_kernel::Captured;
use super::stream::{Expect, TaskKind};
use super::value::Cond;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};

/// A model's task and stream handles, and its disabled tasks.
#[derive(Default)]
pub struct State {
    streams: Vec<Arc<RiStream>>,
    tasks: Vec<Option<Arc<RiTask>>>,
    /// Steps `aclmdlRITaskDisable` turned off.
    pub(super) disabled: HashSet<usize>,
    /// What the kernel launches among its steps were made of, by step.
    pub(super) kernels: HashMap<usize, Arc<Captured>>,
}

impl State {
    /// Unregisters its handles (the model is destroyed).
    pub(super) fn unregister(self) {
        let mut t = TASKS.lock();
        for task in self.tasks.into_iter().flatten() {
            t.remove(Arc::as_ptr(&task) as usize);
        }
        drop(t);
        let mut s = STREAMS.lock();
        for st in self.streams {
            s.remove(Arc::as_ptr(&st) as usize);
        }
    }
}

/// A stream of a captured model (`aclmdlRIGetStreams`).
pub struct RiStream {
    model: Weak<Model>,
    /// The `Shared::uid` of the stream its tasks were captured on.
    uid: u64,
}

/// A task of a captured model (`aclmdlRITask`).
pub struct RiTask {
    model: Weak<Model>,
    /// Its step in the model.
    index: usize,
}

/// Live model streams, by handle.
pub static STREAMS: Table<RiStream> = Table::new(Default::default);
/// Live tasks, by handle.
pub static TASKS: Table<RiTask> = Table::new(Default::default);

/// A task's type (`aclmdlRITaskType`; the runtime's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskType {
    /// Not one of the kinds below (`ACL_MODEL_RI_TASK_DEFAULT`).
    Default = 0,
    /// An operator or kernel.
    Kernel = 1,
    /// An event record.
    EventRecord = 2,
    /// An event wait.
    EventWait = 3,
    /// An event reset.
    EventReset = 4,
    /// A value write.
    ValueWrite = 5,
    /// A value wait.
    ValueWait = 6,
}

/// A task's parameters (`aclmdlRITaskParams`).
pub enum Params {
    /// An event record: the event, whether it is an external event.
    EventRecord(Arc<Event>, bool),
    /// An event wait (the simulator captures waits on external events only).
    EventWait(Arc<Event>, bool),
    /// An event reset.
    EventReset(Arc<Event>),
    /// A value write: address, value.
    ValueWrite(usize, u64),
    /// A value wait: address, value, flag.
    ValueWait(usize, u64, u32),
    /// A kernel launch: what it was made of.
    Kernel(Arc<Captured>),
}

/// The launch `aclmdlRITaskSetParams` puts in place of a kernel task.
pub struct KernelChange {
    /// The kernel.
    pub func: Arc<super::kernel::Function>,
    /// Its block count.
    pub blocks: u32,
    /// Its argument buffer (copied at the call).
    pub args: Vec<u8>,
    /// Its launch attributes.
    pub attrs: super::ri_kernel::Attrs,
    /// The device it runs on (the current context's).
    pub device: u32,
}

/// A change `aclmdlRITaskSetParams` asks for.
pub enum Change {
    /// `ACL_MODEL_RI_TASK_KERNEL`: the new launch, or why its parameters
    /// are refused (`UpdateKernelParams`, checked after the task's type).
    Kernel(Result<KernelChange, Error>),
    /// An event kind (record, wait, reset), which cannot be set.
    Event(TaskType),
    /// A value write at a checked address.
    ValueWrite {
        /// The word.
        addr: usize,
        /// The value.
        value: u64,
        /// Where the word is.
        at: Expect,
    },
    /// A value wait at a checked address.
    ValueWait {
        /// The word.
        addr: usize,
        /// The operand.
        value: u64,
        /// The condition.
        cond: Cond,
        /// Where the word is.
        at: Expect,
    },
    /// A type the release does not know.
    Unknown(u32),
    /// A value write or wait whose parameters are refused (`taskGrp`,
    /// `opInfoPtr` or `opInfoSize` set, `CheckUpdatingTaskParams`; or an
    /// address outside device memory, the simulator's check).
    Refused(Error),
}

fn err(kind: ErrorKind, msg: impl Into<String>) -> Error {
    Error::new(kind, msg)
}

/// The type of a step (`ConvertTaskType`).
fn type_of(step: &Step) -> TaskType {
    match step {
        Step::Task(TaskKind::Op { api, .. })
            if api.starts_with("aclnn")
                || api.starts_with("aclop")
                || api.starts_with("aclrtLaunchKernel") =>
        {
            TaskType::Kernel
        }
        Step::Task(TaskKind::ValueWait { .. }) => TaskType::ValueWait,
        Step::ValueWrite { .. } => TaskType::ValueWrite,
        Step::Record(_) => TaskType::EventRecord,
        Step::WaitExternal(_) => TaskType::EventWait,
        Step::Reset(_) => TaskType::EventReset,
        _ => TaskType::Default,
    }
}

fn sub_refused(what: &str) -> Error {
    err(
        ErrorKind::FeatureNotSupport,
        format!(
            "the model is a sub-model of a conditional task (sub ACL Graph), which does not support {what}"
        ),
    )
}

/// `aclmdlRIGetStreams`: the model's streams, the one that began the
/// capture first (handles stable for the model's life).
///
/// # Errors
///
/// 207000 for a sub-model (`ApiErrorDecorator::ModelGetStreams`).
pub fn streams(m: &Arc<Model>) -> Result<Vec<usize>, Error> {
    if m.sub {
        return Err(sub_refused("getting streams"));
    }
    let mut inner = m.inner.lock();
    let mut uids: Vec<u64> = m.origin_uid().into_iter().collect();
    for &u in &inner.owners {
        if !uids.contains(&u) {
            uids.push(u);
        }
    }
    let mut out = Vec::with_capacity(uids.len());
    for uid in uids {
        let h = match inner.ri.streams.iter().find(|s| s.uid == uid) {
            Some(s) => Arc::as_ptr(s) as usize,
            None => {
                let s = Arc::new(RiStream {
                    model: Arc::downgrade(m),
                    uid,
                });
                inner.ri.streams.push(s.clone());
                STREAMS.lock().insert(s)
            }
        };
        out.push(h);
    }
    Ok(out)
}

/// Looks a model stream handle up.
pub fn lookup_stream(addr: usize) -> Lookup<RiStream> {
    STREAMS.lock().get(addr)
}

/// Looks a task handle up.
pub fn lookup_task(addr: usize) -> Lookup<RiTask> {
    TASKS.lock().get(addr)
}

fn model_of(model: &Weak<Model>) -> Result<Arc<Model>, Error> {
    model.upgrade().ok_or_else(|| {
        err(
            ErrorKind::ParamInvalid,
            "the model of this handle has been destroyed",
        )
    })
}

/// `aclmdlRIGetTasksByStream`: the tasks captured on model stream `s`, in
/// capture order (handles stable for the model's life).
///
/// # Errors
///
/// 107000 when its model is gone.
pub fn tasks(s: &RiStream) -> Result<Vec<usize>, Error> {
    let m = model_of(&s.model)?;
    let mut inner = m.inner.lock();
    let n = inner.steps.len();
    if inner.ri.tasks.len() < n {
        inner.ri.tasks.resize(n, None);
    }
    let mut out = Vec::new();
    for i in 0..n {
        if inner.owners.get(i) != Some(&s.uid) {
            continue;
        }
        let h = match &inner.ri.tasks[i] {
            Some(t) => Arc::as_ptr(t) as usize,
            None => {
                let t = Arc::new(RiTask {
                    model: Arc::downgrade(&m),
                    index: i,
                });
                inner.ri.tasks[i] = Some(t.clone());
                TASKS.lock().insert(t)
            }
        };
        out.push(h);
    }
    Ok(out)
}

/// `aclmdlRITaskGetType`.
///
/// # Errors
///
/// 107000 when its model is gone; 207000 for a task of a sub-model.
pub fn task_type(t: &RiTask) -> Result<TaskType, Error> {
    let m = model_of(&t.model)?;
    if m.sub {
        return Err(sub_refused("querying task types"));
    }
    let inner = m.inner.lock();
    Ok(inner.steps.get(t.index).map_or(TaskType::Default, type_of))
}

/// `aclmdlRITaskGetSeqId`: its number in the capture, from 0.
///
/// # Errors
///
/// 107000 when its model is gone; 207000 for a task of a sub-model.
pub fn seq_id(t: &RiTask) -> Result<u32, Error> {
    let m = model_of(&t.model)?;
    if m.sub {
        return Err(sub_refused("querying task sequence IDs"));
    }
    Ok(t.index as u32)
}

/// `aclmdlRITaskGetParams`.
///
/// # Errors
///
/// 207000 for a task of a sub-model or an operator's kernel (not kept by
/// the simulator); 107000 for a DEFAULT task.
pub fn params(t: &RiTask) -> Result<Params, Error> {
    let m = model_of(&t.model)?;
    if m.sub {
        return Err(sub_refused("getting task parameters"));
    }
    let inner = m.inner.lock();
    let step = inner.steps.get(t.index);
    Ok(match step {
        Some(Step::Record(e)) => Params::EventRecord(e.clone(), e.is_external()),
        Some(Step::WaitExternal(e)) => Params::EventWait(e.clone(), true),
        Some(Step::Reset(e)) => Params::EventReset(e.clone()),
        Some(Step::ValueWrite { addr, value, .. }) => Params::ValueWrite(*addr, *value),
        Some(Step::Task(TaskKind::ValueWait {
            addr, value, cond, ..
        })) => Params::ValueWait(*addr, *value, *cond as u32),
        Some(s) if type_of(s) == TaskType::Kernel => match inner.ri.kernels.get(&t.index) {
            Some(k) => Params::Kernel(k.clone()),
            None => return Err(operator_kernel()),
        },
        _ => {
            return Err(err(
                ErrorKind::ParamInvalid,
                "the task type is DEFAULT (copies, fills and conditional tasks), which has no \
                 parameters; only kernel, event and value tasks have",
            ));
        }
    })
}

/// An operator task's kernel, which keeps no function handle (207000).
fn operator_kernel() -> Error {
    err(
        ErrorKind::FeatureNotSupport,
        "the task is an operator (aclnn or aclop); cann-sim keeps no function handle and \
         arguments for an operator's kernels, only for kernels launched with aclrtLaunchKernel \
         or aclrtLaunchKernelWithConfig",
    )
}

/// What the kernel launch of task `t` was made of
/// (`aclmdlRIKernelTaskGetAttribute`).
///
/// # Errors
///
/// 107000 when its model is gone or the task is not a kernel
/// (`GetKernelAttribute`); 207000 for an operator's kernel.
pub fn kernel_of(t: &RiTask) -> Result<Arc<Captured>, Error> {
    let m = model_of(&t.model)?;
    let inner = m.inner.lock();
    if inner.steps.get(t.index).map(type_of) != Some(TaskType::Kernel) {
        return Err(not_a_kernel());
    }
    inner
        .ri
        .kernels
        .get(&t.index)
        .cloned()
        .ok_or_else(operator_kernel)
}

fn not_a_kernel() -> Error {
    err(
        ErrorKind::ParamInvalid,
        "the task is not a kernel task (AI Core or Vector Core); check its type with \
         aclmdlRITaskGetType first",
    )
}

/// The update rule (`CheckCaptureModelForUpdate`): a sub-model → 207000;
/// running, or neither READY nor UPDATING → 107040. Returns the model.
fn updatable(t: &RiTask) -> Result<Arc<Model>, Error> {
    let m = model_of(&t.model)?;
    if m.sub {
        return Err(sub_refused("update operations"));
    }
    let phase = m.inner.lock().phase;
    if m.is_running() || !matches!(phase, Phase::Ready | Phase::Updating) {
        return Err(err(
            ErrorKind::ModelUpdateFailed,
            format!(
                "the model is {}; tasks are changed only while no execution of it runs and \
                 its capture is complete (synchronise the streams it runs on first)",
                if m.is_running() {
                    "running".to_string()
                } else {
                    format!("in status {phase:?}")
                }
            ),
        ));
    }
    Ok(m)
}

/// `aclmdlRITaskSetParams`: applies `change` to the task; the model is
/// UPDATING afterwards (FAULT when the change is refused).
///
/// # Errors
///
/// As [`updatable`]; 107000 for event kinds, unknown types, DEFAULT
/// tasks, kernel parameters for a task that is not a kernel, and refused
/// kernel parameters.
pub fn set_params(t: &RiTask, change: Change) -> Result<(), Error> {
    let m = updatable(t)?;
    let mut inner = m.inner.lock();
    inner.phase = Phase::Updating;
    let current = inner.steps.get(t.index).map_or(TaskType::Default, type_of);
    let refused = |inner: &mut super::capture::Inner, e: Error| {
        inner.phase = Phase::Fault;
        Err(e)
    };
    let step = match change {
        Change::Kernel(_) if current != TaskType::Kernel => {
            return refused(&mut inner, not_a_kernel());
        }
        Change::Kernel(Err(e)) => return refused(&mut inner, e),
        Change::Kernel(Ok(k)) => {
            let launch = super::kernel::Launch {
                words: super::kernel::words_of(&k.args),
                placeholders: Vec::new(),
                data: k.args,
                attrs: k.attrs,
            };
            let kind = match super::kernel::task(
                "aclrtLaunchKernel",
                k.device,
                &k.func,
                k.blocks,
                &launch,
            ) {
                Ok(kind) => kind,
                Err(e) => return refused(&mut inner, e),
            };
            inner.ri.kernels.insert(
                t.index,
                Arc::new(Captured {
                    func: k.func,
                    blocks: k.blocks,
                    args: launch.data,
                    attrs: launch.attrs,
                }),
            );
            inner.steps[t.index] = Step::Task(kind);
            inner.ri.disabled.remove(&t.index);
            return Ok(());
        }
        Change::Event(kind) => {
            return refused(
                &mut inner,
                err(
                    ErrorKind::ParamInvalid,
                    format!(
                        "params->type {} ({kind:?}) cannot be set; expected TASK_KERNEL(1), \
                         TASK_VALUE_WRITE(5) or TASK_VALUE_WAIT(6)",
                        kind as u32
                    ),
                ),
            );
        }
        Change::Unknown(v) => {
            return refused(
                &mut inner,
                err(
                    ErrorKind::ParamInvalid,
                    format!(
                        "params->type {v} is invalid; expected TASK_KERNEL(1), \
                         TASK_VALUE_WRITE(5) or TASK_VALUE_WAIT(6)"
                    ),
                ),
            );
        }
        _ if current == TaskType::Default => {
            return refused(
                &mut inner,
                err(
                    ErrorKind::ParamInvalid,
                    "the task type is DEFAULT (copies, fills and conditional tasks), which cannot \
                     be converted",
                ),
            );
        }
        Change::Refused(e) => return refused(&mut inner, e),
        Change::ValueWrite { addr, value, at } => Step::ValueWrite { addr, value, at },
        Change::ValueWait {
            addr,
            value,
            cond,
            at,
        } => Step::Task(TaskKind::ValueWait {
            api: "aclrtValueWait",
            addr,
            value,
            cond,
            at,
        }),
    };
    inner.steps[t.index] = step;
    inner.ri.disabled.remove(&t.index);
    inner.ri.kernels.remove(&t.index);
    Ok(())
}

/// `aclmdlRITaskDisable`: the task does nothing from the next execution
/// (after `aclmdlRIUpdate`) until it is set again.
///
/// # Errors
///
/// As [`updatable`]; 107000 for a DEFAULT task (the model is FAULT then).
pub fn disable(t: &RiTask) -> Result<(), Error> {
    let m = updatable(t)?;
    let mut inner = m.inner.lock();
    inner.phase = Phase::Updating;
    if inner.steps.get(t.index).map_or(TaskType::Default, type_of) == TaskType::Default {
        inner.phase = Phase::Fault;
        return Err(err(
            ErrorKind::ParamInvalid,
            "the task type is DEFAULT, which cannot be disabled",
        ));
    }
    inner.ri.disabled.insert(t.index);
    Ok(())
}

/// `aclmdlRIAbort` of a captured model: stops its executions in flight
/// (hicann/runtime `src/runtime/feature/model/model.cc` `Model::ModelAbort`
/// sends the task scheduler an abort of the model and waits for it); later
/// executions run normally.
///
/// Each execution queued or running when the call is made is stopped: its
/// tasks not yet started are dropped, a wait it is blocked in ends, a
/// kernel it runs finishes first (the call returns once nothing of it
/// runs). Its stream's next synchronisation then reports 507023
/// (`ACL_ERROR_RT_MODEL_ABORT_NORMAL`): the model-execute task ends with
/// `TS_ERROR_MODEL_ABORTED` (`src/runtime/core/src/task/task_info/model/
/// model_execute_task.cc` `ModelExecuteTaskaProcError`), which
/// `Stream::GetError` (`src/runtime/core/src/stream/stream.cc`) turns into
/// `RT_ERROR_MODEL_ABORT_NORMAL` and `rtStreamSynchronize`
/// (`src/runtime/api/api_c_stream.cc`) into 507023. Work queued on the
/// stream before or after the execution is not touched. That an execution
/// still queued behind other work (not yet handed to the task scheduler) is
/// stopped too is the simulator's reading: the scheduler's side is not
/// open source.
///
/// Returns how many executions were stopped.
pub fn abort(m: &Model) -> usize {
    m.abort_executions(&aborted())
}

/// The fault an aborted execution's stream reports.
pub fn aborted() -> Error {
    err(
        ErrorKind::ModelAborted,
        "the model execution was aborted (aclmdlRIAbort)",
    )
}

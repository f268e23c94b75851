//! Streams: an ordered task queue executed by a host worker thread.
//!
//! Each stream owns a `VecDeque` of tasks behind a mutex and a condition
//! variable. Enqueueing numbers the task (`seq`, from 1) and wakes the
//! worker; the worker pops tasks in order and runs them with no simulator
//! lock held except what the task itself needs (copies hold the allocation
//! table's read lock). `completed` is the seq of the last finished task, so
//! "everything submitted before this call is done" is `completed >= target`.
//!
//! The worker thread is spawned with the first task and joined when the
//! stream is destroyed (by the user, by `aclrtDestroyContext`, or by the
//! last `aclrtResetDevice` of its primary context).
//!
//! A task that faults (memory freed before it ran, a callback cancelled...)
//! does not stop the stream: as on the device in its default failure mode
//! (`ACL_CONTINUE_ON_FAILURE`, `aclrtSetStreamFailureMode` in
//! `docs/zh/api_ref/06_stream_management.md`), later tasks still run. The
//! first fault is kept until the next synchronisation or query of the
//! stream (or of an event recorded after it) reports it; later faults before
//! that report are counted in its message.
//!
//! In `ACL_STOP_ON_FAILURE` mode the stream stops at a fault: until the
//! fault is reported, later work (copies, fills, operators, kernels,
//! collectives, host functions and callbacks) is skipped — host functions
//! and callbacks are never called, as after `aclrtDestroyStreamForce` —
//! while event records and waits still run, so that nothing waits forever.
//! The report counts the skipped tasks; work queued after it runs again. A
//! skipped HCCL task fails at once (telling its peers) instead of running.
//!
//! With the check mode on ([`crate::check`]), a task's memory is checked
//! and registered when it is queued (with the queue locked, so that its
//! worker cannot finish it first) and forgotten when it is done, skipped or
//! dropped, before the stream counts it completed.

use super::completion::{Completion, Wait};
use super::error::{Error, ErrorKind};
use super::event::{Event, Record};
use super::report::{self, HostFn, Report};
use super::{Context, STREAMS};
use crate::check::{self, Access, Clock, Use};
use crate::state::{self, MemTable, Region};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

/// A fault of queued work, reported by the next synchronisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What kind of fault (the code the synchronising call returns).
    pub kind: ErrorKind,
    /// What failed and why (without the reporting function's name).
    pub msg: String,
    /// The task's seq on its stream.
    pub seq: u64,
}

/// Who handles the stream's host callbacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscription {
    /// Nobody yet.
    None,
    /// A user thread (`aclrtSubscribeReport`), by its `pthread_self()` id.
    User(u64),
    /// The context's host-function thread (`aclrtLaunchHostFunc`).
    Runtime,
}

/// Where one end of a queued memory access must still be when the task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// The device for device memory, `None` for pinned host memory.
    pub device: Option<u32>,
    /// The allocation the range was in at enqueue time.
    pub alloc_id: u64,
}

impl Expect {
    /// The expectation for a range validated at enqueue time, if it lies in
    /// an allocation.
    pub fn of(region: Region) -> Option<Expect> {
        Some(Expect {
            device: region.device(),
            alloc_id: region.alloc_id()?,
        })
    }
}

/// A range an operator task touches: validated again when it runs, and
/// known to the check mode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TaskRange {
    /// The argument, for messages (`input`, `output`, `kernel argument`...).
    pub what: &'static str,
    /// First byte.
    pub addr: usize,
    /// Bytes.
    pub len: usize,
    /// Where it must still be when the task runs.
    pub at: Expect,
    /// How the task uses it.
    pub how: Use,
}

/// What a task does.
pub enum TaskKind {
    /// `aclrtMemcpyAsync`: copy `count` bytes.
    Copy {
        /// The enqueueing function.
        api: &'static str,
        /// Destination address.
        dst: usize,
        /// Source address.
        src: usize,
        /// Bytes.
        count: usize,
        /// Where `dst` must still be.
        dst_at: Expect,
        /// Where `src` must still be.
        src_at: Expect,
    },
    /// `aclrtMemcpyAsync` with `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: copy host
    /// data staged at enqueue time.
    Upload {
        /// The enqueueing function.
        api: &'static str,
        /// Destination address.
        dst: usize,
        /// The staged bytes.
        data: Vec<u8>,
        /// Where `dst` must still be.
        dst_at: Expect,
    },
    /// `aclrtMemsetAsync`: fill `count` bytes with `value`.
    Fill {
        /// The enqueueing function.
        api: &'static str,
        /// Destination address.
        dst: usize,
        /// Bytes.
        count: usize,
        /// The byte.
        value: u8,
        /// Where `dst` must still be.
        dst_at: Expect,
    },
    /// An operator (`aclopExecuteV2`, `aclnnXxx`): every device range it
    /// touches is validated again, then its CPU kernel runs with the
    /// allocation table's read lock held.
    Op {
        /// The enqueueing function.
        api: &'static str,
        /// Device ranges the kernel reads or writes.
        ranges: Vec<TaskRange>,
        /// Runs the kernel; called only when every range is still valid.
        /// Shared, so that a captured operator runs again at each launch of
        /// its graph ([`super::capture`]).
        kernel: Arc<dyn Fn() -> Result<(), Error> + Send + Sync>,
    },
    /// `aclrtRecordEvent`: complete the record.
    Record(Arc<Record>),
    /// `aclrtResetEvent`: forget the event's records up to `generation`.
    ResetEvent(Arc<Event>, u64),
    /// `aclrtStreamWaitEvent`: wait for a record (of another stream).
    Wait(Arc<Record>),
    /// `aclrtLaunchCallback`: hand the callback to the subscribed thread.
    Callback {
        /// The function and its data.
        f: HostFn,
        /// `ACL_CALLBACK_BLOCK`: later tasks wait for it to return.
        block: bool,
    },
    /// `aclrtLaunchHostFunc`: run on the context's host-function thread;
    /// later tasks wait for it to return.
    HostFunc {
        /// The function and its data.
        f: HostFn,
        /// The stream's context (its thread runs `f`).
        ctx: Weak<Context>,
    },
    /// A wait captured on an `ACL_EVENT_EXTERNAL` event, run by an execution
    /// of the model: waits until the event has a record not reset since
    /// (made before or after this task was queued) and that record is done.
    WaitExternal(Arc<Event>),
    /// `aclrtStreamWaitEvent` on an IPC event: wait until record `n` of the
    /// shared record is complete (recorded by any process).
    WaitIpc(Arc<super::ipc_event::IpcEventShared>, u64),
    /// `aclrtValueWait`: block the stream until the 64-bit value at `addr`
    /// meets `cond` against `value` (polled; see [`super::value`]).
    ValueWait {
        /// The enqueueing function.
        api: &'static str,
        /// The watched word.
        addr: usize,
        /// The operand.
        value: u64,
        /// The condition.
        cond: super::value::Cond,
        /// Where `addr` must still be.
        at: Expect,
    },
    /// An HCCL collective or send/receive batch: runs on the worker,
    /// exchanging data with the other ranks; `run` is given the stream's
    /// abort flag (raised by a forced destroy).
    Hccl {
        /// The enqueueing function.
        api: &'static str,
        /// The work; its error becomes the task's fault.
        #[allow(clippy::type_complexity)]
        run: Box<dyn FnOnce(&AtomicBool) -> Result<(), Error> + Send>,
        /// The buffers it reads and writes (for the check mode; empty when
        /// the check is off).
        mem: Vec<Access>,
    },
}

impl TaskKind {
    /// Whether it does work (skipped by a stopped stream), rather than
    /// ordering (event records, resets and waits).
    fn is_work(&self) -> bool {
        !matches!(
            self,
            TaskKind::Record(_)
                | TaskKind::ResetEvent(..)
                | TaskKind::Wait(_)
                | TaskKind::WaitExternal(_)
                | TaskKind::WaitIpc(..)
                | TaskKind::ValueWait { .. }
        )
    }

    /// The enqueueing API (`aclrtMemcpyAsync`, `aclnnAdd`...).
    pub fn name(&self) -> &'static str {
        match self {
            TaskKind::Copy { api, .. }
            | TaskKind::Upload { api, .. }
            | TaskKind::Fill { api, .. }
            | TaskKind::Op { api, .. }
            | TaskKind::ValueWait { api, .. } => api,
            TaskKind::Record(_) => "aclrtRecordEvent",
            TaskKind::ResetEvent(..) => "aclrtResetEvent",
            TaskKind::Wait(_) | TaskKind::WaitExternal(_) | TaskKind::WaitIpc(..) => {
                "aclrtStreamWaitEvent"
            }
            TaskKind::Callback { .. } => "aclrtLaunchCallback",
            TaskKind::HostFunc { .. } => "aclrtLaunchHostFunc",
            TaskKind::Hccl { api, .. } => api,
        }
    }

    /// The memory it reads and writes (for the check mode).
    pub(crate) fn accesses(&self) -> Vec<Access> {
        match self {
            TaskKind::Copy {
                dst, src, count, ..
            } => vec![
                Access::new("dst", *dst, *count, Use::Write),
                Access::new("src", *src, *count, Use::Read),
            ],
            TaskKind::Upload { dst, data, .. } => {
                vec![Access::new("dst", *dst, data.len(), Use::Write)]
            }
            TaskKind::Fill { dst, count, .. } => {
                vec![Access::new("devPtr", *dst, *count, Use::Write)]
            }
            TaskKind::Op { ranges, .. } => ranges
                .iter()
                .map(|r| Access::new(r.what, r.addr, r.len, r.how))
                .collect(),
            TaskKind::Hccl { mem, .. } => mem.clone(),
            // A synchronisation word, read atomically while other streams
            // write it: checked for frees, not for races.
            TaskKind::ValueWait { addr, .. } => {
                vec![Access::new("devAddr", *addr, 8, Use::Opaque)]
            }
            TaskKind::Record(_)
            | TaskKind::ResetEvent(..)
            | TaskKind::Wait(_)
            | TaskKind::WaitExternal(_)
            | TaskKind::WaitIpc(..)
            | TaskKind::Callback { .. }
            | TaskKind::HostFunc { .. } => Vec::new(),
        }
    }
}

struct Task {
    seq: u64,
    kind: TaskKind,
    /// Registered with the check mode (done or dropped: `check::on_complete`).
    tracked: bool,
}

struct Queue {
    tasks: VecDeque<Task>,
    submitted: u64,
    completed: u64,
    shutdown: bool,
    fault: Option<Fault>,
    more_faults: u64,
    /// Tasks skipped since the pending fault (stop-on-failure mode).
    skipped: u64,
    /// The last task submitted when a fault was reported: in
    /// stop-on-failure mode, tasks up to it are skipped even after the
    /// report (they were queued before it).
    skip_through: u64,
    /// The seq of the task the worker runs, 0 when it runs none.
    running: u64,
    /// Set while a model abort waits for the task in flight to give up: the
    /// worker starts no other task until it is cleared, so that no task of
    /// other work starts with the abort flag raised.
    held: bool,
}

/// The part of a stream its worker shares.
pub struct Shared {
    q: Mutex<Queue>,
    cv: Condvar,
    /// Raised by a forced destroy: in-flight waits give up.
    pub abort: AtomicBool,
    /// `ACL_STOP_ON_FAILURE`: skip work while a fault is pending.
    pub stop_on_failure: AtomicBool,
    /// Who handles host callbacks.
    pub subscription: Mutex<Subscription>,
    /// Stream id.
    pub id: i32,
    /// Logical device.
    pub device: u32,
    /// Unique for the process (the check mode's vector clocks use it).
    pub uid: u64,
    /// The check mode's vector clock: what the stream's next task is known
    /// to come after (empty when the check is off).
    pub clock: Mutex<Clock>,
}

impl Shared {
    /// "stream 3 on device 0", for messages.
    pub fn label(&self) -> String {
        format!("stream {} on device {}", self.id, self.device)
    }

    /// Records a fault of the task numbered `seq`.
    pub fn record_fault(&self, kind: ErrorKind, msg: String, seq: u64) {
        let mut q = self.q.lock();
        record(&mut q, Fault { kind, msg, seq });
    }

    /// Takes the pending fault if it happened at or before task `seq`.
    pub fn take_fault_upto(&self, seq: u64) -> Option<Fault> {
        let mut q = self.q.lock();
        take(&mut q, seq)
    }

    /// Whether every task up to `seq` is done.
    pub fn done_through(&self, seq: u64) -> bool {
        self.q.lock().completed >= seq
    }

    /// Stops the tasks `first..=last` (one model execution, `aclmdlRIAbort`):
    /// those not yet started become tasks that do nothing, a task of them
    /// in flight is told to give up (a wait ends; a kernel runs to its end)
    /// and waited for, and `fault` is recorded for the next
    /// synchronisation. Work queued before or after the range is untouched.
    /// Returns `false`, and does nothing, when the range is done already.
    pub fn abort_range(&self, first: u64, last: u64, fault: &Error) -> bool {
        let within = |seq: u64| (first..=last).contains(&seq);
        let replaced: Vec<(u64, TaskKind)> = {
            let mut q = self.q.lock();
            if q.completed >= last && !within(q.running) {
                return false;
            }
            let mut replaced = Vec::new();
            for t in q.tasks.iter_mut().filter(|t| within(t.seq)) {
                let kind = std::mem::replace(&mut t.kind, super::cond::nothing());
                replaced.push((t.seq, kind));
            }
            if within(q.running) {
                q.held = true;
                self.abort.store(true, Ordering::Release);
                self.cv.notify_all();
                while within(q.running) {
                    self.cv.wait(&mut q);
                }
                self.abort.store(false, Ordering::Release);
                q.held = false;
                self.cv.notify_all();
            }
            record(
                &mut q,
                Fault {
                    kind: fault.kind,
                    msg: fault.msg.clone(),
                    seq: last,
                },
            );
            replaced
        };
        // Outside the queue's lock: a dropped task may hold the last
        // reference to something whose drop takes other locks.
        for (seq, kind) in replaced {
            if let TaskKind::Record(r) = kind {
                r.done.cancel(format!(
                    "the event's latest record (task #{seq} on {}) was dropped: the model \
                     execution it belongs to was aborted (aclmdlRIAbort)",
                    self.label()
                ));
            }
        }
        true
    }
}

fn record(q: &mut Queue, f: Fault) {
    if q.fault.is_none() {
        q.fault = Some(f);
    } else {
        q.more_faults += 1;
    }
}

fn take(q: &mut Queue, upto: u64) -> Option<Fault> {
    if q.fault.as_ref().is_none_or(|f| f.seq > upto) {
        return None;
    }
    let mut f = q.fault.take()?;
    q.skip_through = q.submitted;
    if q.skipped > 0 {
        f.msg = format!(
            "{} ({} later task(s) skipped: the stream stops on failure)",
            f.msg, q.skipped
        );
        q.skipped = 0;
    }
    if q.more_faults > 0 {
        f.msg = format!(
            "{} (and {} later task fault(s) on the same stream)",
            f.msg, q.more_faults
        );
        q.more_faults = 0;
    }
    Some(f)
}

/// One model execution queued on a stream: its tasks `first..=last`
/// (`aclmdlRIAbort` stops it, [`Shared::abort_range`]).
struct Execution {
    stream: Weak<Shared>,
    first: u64,
    last: u64,
}

impl Execution {
    /// Whether it has finished, or its stream is gone.
    fn finished(&self) -> bool {
        self.stream
            .upgrade()
            .is_none_or(|s| s.done_through(self.last))
    }
}

/// Where a model's executions were queued, for `aclmdlRIAbort`. Finished
/// ones are pruned when the list has doubled since the last pruning (and at
/// each abort): a model launched many times on a busy stream pays a constant
/// cost per execution, not one test per execution still listed.
#[derive(Default)]
pub(crate) struct Executions(Mutex<ExecutionList>);

#[derive(Default)]
struct ExecutionList {
    all: Vec<Execution>,
    /// The length at which the next push prunes.
    prune_at: usize,
}

impl Executions {
    /// Notes an execution queued on `s` as its tasks `first..=last`.
    pub(crate) fn push(&self, s: &Stream, first: u64, last: u64) {
        let mut list = self.0.lock();
        if list.all.len() >= list.prune_at {
            list.all.retain(|e| !e.finished());
            list.prune_at = (2 * list.all.len()).max(16);
        }
        list.all.push(Execution {
            stream: Arc::downgrade(&s.shared),
            first,
            last,
        });
    }

    /// Stops every execution queued or running ([`Shared::abort_range`]);
    /// each one's stream then reports `fault` at its next synchronisation.
    /// Returns how many were stopped.
    pub(crate) fn abort_all(&self, fault: &Error) -> usize {
        let all: Vec<Execution> = std::mem::take(&mut self.0.lock().all);
        all.iter()
            .filter(|e| {
                e.stream
                    .upgrade()
                    .is_some_and(|s| s.abort_range(e.first, e.last, fault))
            })
            .count()
    }
}

/// A stream.
pub struct Stream {
    /// The worker's side.
    pub shared: Arc<Shared>,
    /// Stream id (per device, smallest free).
    pub id: i32,
    /// Logical device.
    pub device: u32,
    /// Its context (streams die with their context).
    pub ctx: Weak<Context>,
    /// The context's id.
    pub ctx_id: u64,
    /// Priority after clamping to `[0, 7]`.
    pub priority: u32,
    /// The ACL flags it was created with (known bits only).
    pub flags: u32,
    /// Whether it is its context's default stream.
    pub is_default: bool,
    /// The model it captures into, while it captures ([`super::capture`]).
    pub capture: Mutex<Option<Arc<super::capture::Model>>>,
    /// Its task-group state: a group open in a capture, or a group being
    /// updated ([`super::capture`]).
    pub task_group: Mutex<super::capture::GroupState>,
    /// The model it is bound to (`aclmdlRIBindStream`), whose build records
    /// its work ([`crate::model::build`]).
    pub bound: Mutex<Option<Arc<crate::model::build::Built>>>,
    /// Whether it was ever bound to a model (the fast path of
    /// [`Stream::enqueue`]: `bound` is locked only then).
    pub bound_once: AtomicBool,
    /// Whether `task_group` is in update mode (the fast path of
    /// [`Stream::enqueue`]; changed with `task_group` locked).
    pub updating: AtomicBool,
    worker: Mutex<Option<JoinHandle<()>>>,
}

/// Why a synchronisation did not succeed.
pub enum SyncError {
    /// The deadline passed.
    TimedOut,
    /// A task faulted.
    Fault(Fault),
}

impl Stream {
    /// A new stream object (not registered; see [`super::create_stream`]).
    pub fn new(
        ctx: Weak<Context>,
        ctx_id: u64,
        device: u32,
        id: i32,
        priority: u32,
        flags: u32,
        is_default: bool,
    ) -> Stream {
        Stream {
            shared: Arc::new(Shared {
                q: Mutex::new(Queue {
                    tasks: VecDeque::new(),
                    submitted: 0,
                    completed: 0,
                    shutdown: false,
                    fault: None,
                    more_faults: 0,
                    skipped: 0,
                    skip_through: 0,
                    running: 0,
                    held: false,
                }),
                cv: Condvar::new(),
                abort: AtomicBool::new(false),
                stop_on_failure: AtomicBool::new(false),
                subscription: Mutex::new(Subscription::None),
                id,
                device,
                uid: {
                    static NEXT_UID: AtomicU64 = AtomicU64::new(1);
                    NEXT_UID.fetch_add(1, Ordering::Relaxed)
                },
                clock: Mutex::new(Clock::new()),
            }),
            id,
            device,
            ctx,
            ctx_id,
            priority,
            flags,
            is_default,
            capture: Mutex::new(None),
            task_group: Mutex::new(super::capture::GroupState::None),
            bound: Mutex::new(None),
            bound_once: AtomicBool::new(false),
            updating: AtomicBool::new(false),
            worker: Mutex::new(None),
        }
    }

    /// Its handle: its address, under which the handle table knows it
    /// (the exports give it to C as an opaque pointer).
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// "stream 3 on device 0".
    pub fn label(&self) -> String {
        self.shared.label()
    }

    /// Queues the task `make(seq)` builds; returns its seq. While the
    /// stream captures, the task is recorded into the capture's model
    /// instead (`seq` is then its number in the model).
    ///
    /// # Errors
    ///
    /// The code and message (without the function's name) when the stream
    /// is being destroyed or its worker cannot be started.
    pub fn enqueue(&self, make: impl FnOnce(u64) -> TaskKind) -> Result<u64, Error> {
        // While the stream updates a task group, its kernels replace the
        // group's tasks instead of running.
        if self.updating.load(Ordering::Acquire) {
            let mut st = self.task_group.lock();
            if st.is_update() {
                return super::capture::update_task(self, &mut st, make(0));
            }
        }
        // While the stream captures, its work is recorded, not run.
        let capturing = self.capture.lock().clone();
        if let Some(m) = capturing {
            return m.record_task(self, make);
        }
        // While the stream is bound to a model being built, its work sinks
        // into the model.
        if self.bound_once.load(Ordering::Acquire) {
            let bound = self.bound.lock().clone();
            if let Some(m) = bound {
                return m.record(self, make);
            }
        }
        self.ensure_worker()?;
        let mut q = self.shared.q.lock();
        if q.shutdown {
            return Err(self.destroyed());
        }
        let seq = q.submitted + 1;
        let kind = make(seq);
        // Checked and registered before it is queued, so that its worker
        // cannot finish it first.
        let tracked = if check::enabled() {
            check::on_enqueue(self, seq, &kind, None)?
        } else {
            false
        };
        q.submitted = seq;
        q.tasks.push_back(Task { seq, kind, tracked });
        self.shared.cv.notify_all();
        Ok(seq)
    }

    /// Queues `count` tasks at once, the `i`th built by `make(i, seq)`
    /// (one lock of the queue and one wake-up of the worker: a captured
    /// model's execution, [`super::capture`], which `launch` names to the
    /// check mode); returns the last seq. The stream must not be capturing.
    ///
    /// # Errors
    ///
    /// As [`Stream::enqueue`]; the tasks built before a task the check mode
    /// refuses stay queued.
    pub(crate) fn enqueue_all(
        &self,
        count: usize,
        launch: check::Launch,
        mut make: impl FnMut(usize, u64) -> TaskKind,
    ) -> Result<u64, Error> {
        self.ensure_worker()?;
        let mut q = self.shared.q.lock();
        if q.shutdown {
            return Err(self.destroyed());
        }
        let check = check::enabled();
        let mut outcome = Ok(q.submitted);
        for i in 0..count {
            let seq = q.submitted + 1;
            let kind = make(i, seq);
            let tracked = if check {
                match check::on_enqueue(self, seq, &kind, Some(launch)) {
                    Ok(t) => t,
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            } else {
                false
            };
            q.submitted = seq;
            q.tasks.push_back(Task { seq, kind, tracked });
            outcome = Ok(seq);
        }
        self.shared.cv.notify_all();
        outcome
    }

    fn destroyed(&self) -> Error {
        Error::new(
            ErrorKind::ParamInvalid,
            format!("{} is being destroyed", self.label()),
        )
    }

    fn ensure_worker(&self) -> Result<(), Error> {
        let mut w = self.worker.lock();
        if w.is_some() {
            return Ok(());
        }
        // Not once the stream is shutting down: its worker was (or is being)
        // joined.
        if self.shared.q.lock().shutdown {
            return Err(self.destroyed());
        }
        let shared = self.shared.clone();
        let handle = std::thread::Builder::new()
            .name(format!("cann-sim-stream-{}-dev{}", self.id, self.device))
            .spawn(move || worker_main(shared))
            .map_err(|e| {
                Error::new(
                    ErrorKind::ResourceAllocFail,
                    format!("cannot start the worker thread of {}: {e}", self.label()),
                )
            })?;
        *w = Some(handle);
        Ok(())
    }

    /// Waits until every task queued before the call is done (or
    /// `deadline`), then reports a pending fault.
    ///
    /// # Errors
    ///
    /// [`SyncError::TimedOut`] or the first pending fault.
    pub fn synchronize(&self, deadline: Option<Instant>) -> Result<(), SyncError> {
        let mut q = self.shared.q.lock();
        let target = q.submitted;
        while q.completed < target {
            match deadline {
                Some(d) => {
                    if self.shared.cv.wait_until(&mut q, d).timed_out() && q.completed < target {
                        return Err(SyncError::TimedOut);
                    }
                }
                None => self.shared.cv.wait(&mut q),
            }
        }
        match take(&mut q, u64::MAX) {
            Some(f) => Err(SyncError::Fault(f)),
            None => Ok(()),
        }
    }

    /// Whether every queued task is done.
    ///
    /// # Errors
    ///
    /// The pending fault, reported (and cleared) first.
    pub fn query(&self) -> Result<bool, Fault> {
        let mut q = self.shared.q.lock();
        if let Some(f) = take(&mut q, u64::MAX) {
            return Err(f);
        }
        Ok(q.completed >= q.submitted)
    }

    /// Stops the stream: waits for the queue to drain (or, when `force`,
    /// drops the tasks not yet started and aborts a waiting one), then joins
    /// the worker. Dropped callbacks are never called; dropped event records
    /// are cancelled, so that nothing waits for them forever.
    pub fn shut_down(&self, force: bool) {
        let dropped: Vec<Task> = {
            let mut q = self.shared.q.lock();
            q.shutdown = true;
            let dropped = if force {
                self.shared.abort.store(true, Ordering::Release);
                let d = self.drain(&mut q);
                q.completed = q.completed.max(q.submitted);
                d
            } else {
                Vec::new()
            };
            self.shared.cv.notify_all();
            dropped
        };
        self.cancel_records(dropped, "destroyed with aclrtDestroyStreamForce");
        let handle = self.worker.lock().take();
        if let Some(h) = handle {
            // The worker catches panics of the tasks it runs, so joining
            // cannot fail but for a bug; nothing to do then.
            let _ = h.join();
        }
    }

    /// Takes the tasks not yet started out of the queue; they are no longer
    /// pending for the check mode.
    fn drain(&self, q: &mut Queue) -> Vec<Task> {
        let d: Vec<Task> = q.tasks.drain(..).collect();
        // No longer pending before anyone can see them completed.
        for t in d.iter().filter(|t| t.tracked) {
            check::on_complete(self.shared.uid, t.seq);
        }
        d
    }

    /// Cancels the event records among `dropped`, so that nothing waits for
    /// them forever (`how`: what dropped them).
    fn cancel_records(&self, dropped: Vec<Task>, how: &str) {
        for t in dropped {
            if let TaskKind::Record(r) = t.kind {
                r.done.cancel(format!(
                    "the event's latest record (task #{} on {}) was dropped: the stream was \
                     {how} before reaching it",
                    t.seq,
                    self.label()
                ));
            }
        }
    }

    /// Aborts the stream's work (`aclrtStreamAbort`): drops the tasks not
    /// yet started, makes a task blocked in a wait give up, and returns
    /// once the task in flight (if any) has finished; the stream then takes
    /// work again. Returns how many tasks were dropped.
    pub fn abort(&self) -> usize {
        let (dropped, target) = {
            let mut q = self.shared.q.lock();
            let d = self.drain(&mut q);
            self.shared.abort.store(true, Ordering::Release);
            self.shared.cv.notify_all();
            (d, q.submitted)
        };
        let n = dropped.len();
        {
            let mut q = self.shared.q.lock();
            while q.running != 0 && q.running <= target {
                self.shared.cv.wait(&mut q);
            }
            self.shared.abort.store(false, Ordering::Release);
            q.completed = q.completed.max(target);
            self.shared.cv.notify_all();
        }
        self.cancel_records(dropped, "aborted with aclrtStreamAbort");
        n
    }

    /// Whether work given to it now is queued on it (not recorded by a
    /// capture, a model build or a task update).
    pub(crate) fn queues_directly(&self) -> bool {
        !self.updating.load(Ordering::Acquire)
            && self.capture.lock().is_none()
            && (!self.bound_once.load(Ordering::Acquire) || self.bound.lock().is_none())
    }

    /// Whether its worker thread is running.
    pub fn has_worker(&self) -> bool {
        self.worker.lock().is_some()
    }
}

fn worker_main(shared: Arc<Shared>) {
    loop {
        let task = {
            let mut q = shared.q.lock();
            loop {
                if !q.held
                    && let Some(t) = q.tasks.pop_front()
                {
                    q.running = t.seq;
                    break t;
                }
                if q.shutdown {
                    return;
                }
                shared.cv.wait(&mut q);
            }
        };
        let seq = task.seq;
        let tracked = task.tracked;
        if shared.stop_on_failure.load(Ordering::Relaxed) && task.kind.is_work() {
            let stopped = {
                let q = shared.q.lock();
                q.fault.is_some() || seq <= q.skip_through
            };
            if stopped {
                // Stopped: dropped without running (host functions and
                // callbacks are never called). An HCCL task is told so,
                // so that it fails at once and its peers learn of it.
                if let TaskKind::Hccl { run, .. } = task.kind {
                    let _ = run(&AtomicBool::new(true));
                }
                if tracked {
                    check::on_complete(shared.uid, seq);
                }
                let mut q = shared.q.lock();
                if q.fault.is_some() {
                    // Counted in the pending fault's report.
                    q.skipped += 1;
                }
                q.running = 0;
                q.completed = q.completed.max(seq);
                shared.cv.notify_all();
                continue;
            }
        }
        let name = task.kind.name();
        // The timeline (`crate::trace`): one relaxed load when it is off.
        let traced = crate::trace::enabled().then(|| {
            crate::trace::TaskStart::new(&shared, seq, &crate::trace::TaskInfo::of(&task.kind))
        });
        let started = std::time::Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&shared, task)));
        if let Some(t) = traced {
            t.finish(!matches!(outcome, Ok(Ok(()))));
        }
        // Busy time feeds the telemetry another process reads (npu-smi-rs).
        crate::telemetry::record_busy(shared.device, started.elapsed());
        let fault = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(Fault {
                kind: e.kind,
                msg: format!("{name} task #{seq} on {} failed: {}", shared.label(), e.msg),
                seq,
            }),
            Err(_) => Some(Fault {
                kind: ErrorKind::DrvInternal,
                msg: format!(
                    "{name} task #{seq} on {} failed: the simulator panicked running it \
                     (a cann-sim bug)",
                    shared.label()
                ),
                seq,
            }),
        };
        // No longer pending before anyone can see it completed.
        if tracked {
            check::on_complete(shared.uid, seq);
        }
        let mut q = shared.q.lock();
        if let Some(f) = fault {
            record(&mut q, f);
        }
        q.running = 0;
        q.completed = q.completed.max(seq);
        shared.cv.notify_all();
    }
}

fn check_at(
    table: &MemTable,
    role: &str,
    addr: usize,
    count: usize,
    at: Expect,
) -> Result<(), String> {
    let was = match at.device {
        Some(d) => format!("device memory on device {d}"),
        None => "pinned host memory".to_string(),
    };
    match table.check_range(addr, count) {
        Ok(r) if r.alloc_id() == Some(at.alloc_id) => Ok(()),
        Ok(Region::Unregistered) => Err(format!(
            "{role} {addr:#x} ({count} bytes, {was} when queued) was freed before the task ran"
        )),
        Ok(r) => Err(format!(
            "{role} {addr:#x} ({count} bytes, {was} when queued) was freed before the task ran; \
             the address now lies in another allocation ({r})"
        )),
        Err(e) => Err(format!(
            "{role} ({was} when queued) is out of bounds when the task ran: {e}"
        )),
    }
}

fn run(shared: &Arc<Shared>, task: Task) -> Result<(), Error> {
    let seq = task.seq;
    match task.kind {
        TaskKind::Copy {
            dst,
            src,
            count,
            dst_at,
            src_at,
            ..
        } => {
            let table = state::memory().read();
            check_at(&table, "dst", dst, count, dst_at)
                .and_then(|()| check_at(&table, "src", src, count, src_at))
                .map_err(|e| Error::new(ErrorKind::MemoryFault, e))?;
            // SAFETY: both ranges lie in live allocations (checked just now,
            // kept alive by the read lock); `copy` allows overlap.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, count) };
            drop(table);
            Ok(())
        }
        TaskKind::Upload {
            dst, data, dst_at, ..
        } => {
            let table = state::memory().read();
            check_at(&table, "dst", dst, data.len(), dst_at)
                .map_err(|e| Error::new(ErrorKind::MemoryFault, e))?;
            // SAFETY: the range lies in a live allocation (checked just now,
            // kept alive by the read lock); `data` is a separate buffer.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
            drop(table);
            Ok(())
        }
        TaskKind::Fill {
            dst,
            count,
            value,
            dst_at,
            ..
        } => {
            let table = state::memory().read();
            check_at(&table, "devPtr", dst, count, dst_at)
                .map_err(|e| Error::new(ErrorKind::MemoryFault, e))?;
            // SAFETY: the range lies in a live allocation, kept alive by the
            // read lock.
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, count) };
            drop(table);
            Ok(())
        }
        TaskKind::Op { ranges, kernel, .. } => {
            let table = state::memory().read();
            for r in &ranges {
                check_at(&table, r.what, r.addr, r.len, r.at)
                    .map_err(|e| Error::new(ErrorKind::KernelFault, e))?;
            }
            // The ranges lie in live allocations (checked just now), kept
            // alive by the read lock while the kernel runs.
            let outcome = kernel();
            drop(table);
            outcome
        }
        TaskKind::Record(record) => {
            record.complete(state::now_ns());
            Ok(())
        }
        TaskKind::ResetEvent(event, generation) => {
            event.reset_upto(generation);
            Ok(())
        }
        TaskKind::Wait(record) => {
            let limit = super::settings::op_wait_timeout();
            match record
                .done
                .wait(Some(&shared.abort), limit.map(|t| Instant::now() + t))
            {
                Wait::Done(_) | Wait::Aborted => Ok(()),
                Wait::TimedOut => Err(super::value::wait_timed_out("the event wait", limit)),
                Wait::Cancelled(why) => Err(Error::new(ErrorKind::DrvInternal, why)),
            }
        }
        TaskKind::WaitExternal(event) => wait_external(shared, &event),
        TaskKind::WaitIpc(ipc, n) => {
            let limit = super::settings::op_wait_timeout();
            ipc.wait(
                n,
                Some(&shared.abort),
                limit.map(|t| Instant::now() + t),
                || super::value::wait_timed_out("the IPC event wait", limit),
            )
        }
        TaskKind::ValueWait {
            addr,
            value,
            cond,
            at,
            ..
        } => super::value::run_wait(&shared.abort, addr, value, cond, |table| {
            check_at(table, "devAddr", addr, 8, at)
        }),
        TaskKind::Callback { f, block } => {
            let tid = match *shared.subscription.lock() {
                Subscription::User(tid) => tid,
                _ => {
                    return Err(Error::new(
                        ErrorKind::DrvInternal,
                        "no thread is subscribed to the stream any more (aclrtUnSubscribeReport \
                         before the callback ran); the callback was not called"
                            .to_string(),
                    ));
                }
            };
            let done = block.then(|| Arc::new(Completion::new()));
            report::post_user(
                tid,
                Report {
                    f,
                    done: done.clone(),
                    stream: Arc::downgrade(shared),
                    seq,
                },
            )
            .map_err(|e| Error::new(ErrorKind::DrvInternal, e))?;
            wait_done(shared, done)
        }
        TaskKind::HostFunc { f, ctx } => {
            let Some(ctx) = ctx.upgrade() else {
                return Err(Error::new(
                    ErrorKind::DrvInternal,
                    "the stream's context is gone; the host function was not called".to_string(),
                ));
            };
            let done = Arc::new(Completion::new());
            ctx.post_host_func(Report {
                f,
                done: Some(done.clone()),
                stream: Arc::downgrade(shared),
                seq,
            })
            .map_err(|e| Error::new(ErrorKind::DrvInternal, e))?;
            drop(ctx);
            wait_done(shared, Some(done))
        }
        TaskKind::Hccl { run, .. } => run(&shared.abort),
    }
}

/// Runs a captured wait on an external event: polls for a record (the
/// event may be recorded by the host after the model was queued), then
/// waits for it, within the operator wait timeout; an abort ends it.
fn wait_external(shared: &Shared, event: &Event) -> Result<(), Error> {
    let limit = super::settings::op_wait_timeout();
    let deadline = limit.map(|t| Instant::now() + t);
    let mut pause = std::time::Duration::from_micros(20);
    loop {
        if let Some(record) = event.latest() {
            return match record.done.wait(Some(&shared.abort), deadline) {
                Wait::Done(_) | Wait::Aborted => Ok(()),
                Wait::TimedOut => Err(super::value::wait_timed_out("the event wait", limit)),
                Wait::Cancelled(why) => Err(Error::new(ErrorKind::DrvInternal, why)),
            };
        }
        if shared.abort.load(Ordering::Acquire) {
            return Ok(());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(super::value::wait_timed_out("the event wait", limit));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(1));
    }
}

fn wait_done(shared: &Shared, done: Option<Arc<Completion>>) -> Result<(), Error> {
    let Some(done) = done else { return Ok(()) };
    match done.wait(Some(&shared.abort), None) {
        Wait::Done(_) | Wait::Aborted | Wait::TimedOut => Ok(()),
        Wait::Cancelled(why) => Err(Error::new(ErrorKind::DrvInternal, why)),
    }
}

/// Looks a stream handle up.
pub fn lookup(addr: usize) -> super::handles::Lookup<Stream> {
    STREAMS.lock().get(addr)
}

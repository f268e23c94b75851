//! Graph capture: record the work queued on a stream once, launch it many
//! times (CUDA graphs; torch_npu's `NPUGraph`), over `aclmdlRI*` (CANN 8.1
//! and later).
//!
//! [`Stream::capture`] runs a closure with the stream in capture mode
//! (`aclmdlRICaptureBegin`): the copies, fills, operators and kernels it
//! queues on that stream are recorded into a [`Graph`] instead of run
//! (`aclmdlRICaptureEnd`). [`Graph::launch`] queues the whole recording on
//! any stream of the device (`aclmdlRIExecuteAsync`) with one call, as often
//! as wanted; a decoder step or a training step costs one launch instead of
//! hundreds of calls.
//!
//! # Memory
//!
//! A graph's tasks name fixed addresses. So the graph holds every buffer its
//! captured work uses — including temporaries dropped inside the closure,
//! such as an operator's workspace — until the graph is dropped: the memory
//! cannot be freed or handed to another buffer while a launch could still
//! use it. Each launch counts as a use of all of them on the launch stream,
//! ordered with other streams and with host access like any operator
//! (see [`crate::memory`]); change inputs between launches by copying into
//! the captured buffers.
//!
//! Nothing runs during the capture, so nothing is ordered then: work on
//! other streams and host access inside the closure see the memory as it
//! was before the capture.
//!
//! A program that uses one stream alone keeps paying no event for its
//! ordering after a capture: events are on during the capture (and while
//! memory the capture initialises waits for the graph's first launch),
//! then off again, so a launch on the capturing stream costs the runtime
//! call and no more. [`Graph::abort`] stops the launches queued or running.
//!
//! # Task groups and updates
//!
//! Inside the capture closure, [`Stream::task_group`] marks the operators
//! and kernels its own closure queues as a [`TaskGroup`]
//! (`aclmdlRICaptureTaskGrpBegin/End`). Afterwards, [`Graph::update`] runs a
//! closure on another stream in update mode
//! (`aclmdlRICaptureTaskUpdateBegin/End`): the operators it queues do not
//! run; each one replaces the group's next captured operator, in capture
//! order, for every later launch — new scalars, new inputs and outputs, the
//! same kinds of kernels (torch_npu's `graph_task_update_begin`, which
//! vLLM-Ascend uses to change attention's sequence lengths between decoding
//! steps). A group holds kernels only: copies and fills inside it fail
//! (`ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT`, 507009) and invalidate the
//! capture; an update issues exactly as many kernels as the group captured.
//!
//! The graph holds the buffers the replacement operators use as it holds
//! the captured ones; an update is ordered after the launches queued before
//! it and before the launches queued after it. The runtime applies each
//! replacement as it is issued and does not roll back: an update that fails
//! part way (too few or too many kernels, a copy, the closure's own error
//! or panic) may leave the group partly replaced, so the graph then refuses
//! to launch until the group is updated again successfully. An update the
//! runtime refuses at its start (`ACL_ERROR_STREAM_TASK_GROUP_STATUS`,
//! 107033, for a group another stream is updating) leaves the graph as it
//! was. (hicann/runtime `src/runtime/feature/aclgraph/context_aclgraph.cc`,
//! `src/runtime/core/src/stream/stream.cc` `Stream::UpdateTask`.)
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::aclnn::{self, Scalar, TensorArg, TensorArgMut};
//! use acl::{Device, Runtime, graph::CaptureMode};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let (stream, updater) = (npu.new_stream()?, npu.new_stream()?);
//! let x = stream.clone_from_host(&[1.0f32, 2.0])?;
//! let y = stream.clone_from_host(&[10.0f32, 20.0])?;
//! let mut out = stream.alloc_zeros::<f32>(2)?;
//! // out = x + alpha * y
//! let mut scaled_add = |s: &acl::Stream, alpha: f32| -> acl::Result<()> {
//!     let (tx, ty) = (TensorArg::new(&x, &[2])?, TensorArg::new(&y, &[2])?);
//!     let mut to = TensorArgMut::new(&mut out, &[2])?;
//!     aclnn::add(s, &tx, &ty, &Scalar::new(alpha)?, &mut to)
//! };
//! let (graph, group) = stream.capture(CaptureMode::Global, |s| {
//!     let (group, ()) = s.task_group(|s| scaled_add(s, 1.0))?;
//!     Ok::<_, acl::Error>(group)
//! })?;
//! graph.launch(&stream)?;
//! graph.update(&updater, &group, |s| scaled_add(s, 3.0))?;
//! graph.launch(&stream)?;
//! drop(scaled_add);
//! assert_eq!(out.to_host_vec()?, [31.0, 62.0]);
//! # Ok::<(), acl::Error>(())
//! ```
//!
//! # Rules of the runtime
//!
//! While a stream captures, the runtime refuses to synchronise or query it
//! (`ACL_ERROR_RT_STREAM_CAPTURED`, 107027), to synchronise the device
//! (107027), to query or synchronise an event recorded in the capture
//! (107028), and — in [`CaptureMode::Global`] and
//! [`CaptureMode::ThreadLocal`] — synchronous copies and fills on the
//! threads the mode covers (`ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT`,
//! 107030): copies from ordinary host memory are synchronous, so stage host
//! data in a [`PinnedHostBuffer`](crate::PinnedHostBuffer) or copy it
//! before the capture. The default stream cannot capture: its handle here
//! is null, which `aclmdlRICaptureBegin` refuses with
//! `ACL_ERROR_INVALID_PARAM` (100000; given the context's real default
//! stream handle, the runtime answers `ACL_ERROR_RT_FEATURE_NOT_SUPPORT`,
//! 207000). These come back as errors
//! from the calls inside the closure; [`Stream::capture`] then returns the
//! closure's error and destroys the partial graph.
//! (Rules and codes: hicann/runtime `src/runtime/api/impl/api_error.cc`,
//! `src/runtime/api/impl/api_impl.cc` and
//! `src/runtime/feature/aclgraph/context_aclgraph.cc`; the simulator follows
//! them, see cann-sim's README.)
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, graph::CaptureMode};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let x = stream.clone_from_host(&[1u32, 2, 3])?;
//! let mut y = stream.alloc_zeros::<u32>(3)?;
//! let (graph, ()) = stream.capture(CaptureMode::Global, |s| {
//!     s.copy_dtod(&x, &mut y)?;
//!     s.fill(&mut y.slice_mut(0..1)?, 9)
//! })?;
//! assert_eq!(y.to_host_vec()?, [0, 0, 0]); // captured, not run
//! graph.launch(&stream)?;
//! assert_eq!(y.to_host_vec()?, [9, 2, 3]);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::memory::gate::Gate;
use crate::memory::track::{LaunchBook, LaunchSlot, LaunchWindow};
use crate::memory::{Allocation, DeviceBuffer, DeviceMemory};
use crate::result::{self, raw};
use crate::{Device, Stream, lock, release};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which threads' unsafe calls a capture forbids
/// (`aclmdlRICaptureMode`).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CaptureMode {
    /// Synchronous copies and fills fail on every thread while the capture
    /// is active (`ACL_MODEL_RI_CAPTURE_MODE_GLOBAL`).
    #[default]
    Global,
    /// Only on the thread that began the capture
    /// (`ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL`).
    ThreadLocal,
    /// Nowhere (`ACL_MODEL_RI_CAPTURE_MODE_RELAXED`).
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> raw::aclmdlRICaptureMode {
        match self {
            CaptureMode::Global => raw::ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
            CaptureMode::ThreadLocal => raw::ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Relaxed => raw::ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
        }
    }
}

/// Whether a stream captures (`aclmdlRICaptureStatus`).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureStatus {
    /// Not capturing.
    None,
    /// Capturing.
    Active,
    /// Capturing, but the capture failed: ending it will fail.
    Invalidated,
    /// A status this crate does not know.
    Raw(u32),
}

/// The capture or task update under way on a queue: the accesses of the
/// work recorded instead of run.
///
/// A queue captures its own capture or one it joined (by waiting for an
/// event recorded in it, [`Stream::wait_event`]): both add to one
/// [`CaptureRecord`]. Its state changes only with the queue's
/// [`gate`](crate::memory::gate) held exclusively, so that work queued on it
/// is wholly in the capture or wholly out.
#[derive(Debug, Default)]
pub(crate) struct CaptureState {
    /// Entered shared by work from its wait to its commit, exclusively by a
    /// change of the state below.
    pub(crate) gate: Gate,
    active: AtomicBool,
    /// The record this queue's work goes to (its own capture's, one it
    /// joined, or a task update's).
    record: Mutex<Option<Arc<CaptureRecord>>>,
    /// The capture under way (0: none, or a task update).
    capture: AtomicU64,
    /// A task group is open in the capture.
    in_group: AtomicBool,
    /// Task groups made in the capture under way.
    groups: AtomicUsize,
}

/// The accesses of one capture (or task update), shared by its stream and
/// the streams that joined it.
#[derive(Debug, Default)]
pub(crate) struct CaptureRecord {
    /// The capture's number (0 for a task update).
    id: u64,
    /// The launch slot of the graph the work goes to: each captured
    /// allocation is linked to it as soon as its work is captured (see
    /// `memory::track::window`).
    slot: Option<Arc<LaunchSlot>>,
    uses: Mutex<Vec<(Arc<Allocation>, bool)>>,
    /// Streams that joined the capture: they leave it at its end.
    joined: Mutex<Vec<Stream>>,
    ended: AtomicBool,
}

/// Capture numbers, to tell which graph a [`TaskGroup`] belongs to.
static NEXT_CAPTURE: AtomicU64 = AtomicU64::new(1);

/// How long a change of capture state waits for work being queued on the
/// stream (normally microseconds; a [`Prepared`](crate::memory::Prepared)
/// kept by the same thread would wait forever).
const GATE_LIMIT: Duration = Duration::from_secs(2);

/// The error when work queued on `stream` keeps its gate past
/// [`GATE_LIMIT`].
fn gate_busy(function: &'static str) -> Error {
    Error::invalid(
        function,
        "work is being queued on the stream (a memory::Prepared of it is neither committed nor \
         dropped); commit or drop it first",
    )
}

impl CaptureState {
    #[inline]
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// The number of the capture this queue's work goes to (its own or
    /// one it joined), 0 when it captures nothing (or updates a graph).
    #[inline]
    pub(crate) fn capture_id(&self) -> u64 {
        if !self.is_active() {
            return 0;
        }
        lock::lock(&self.record).as_ref().map_or(0, |r| r.id)
    }

    /// The record of the capture this queue's work goes to, if any.
    pub(crate) fn current(&self) -> Option<Arc<CaptureRecord>> {
        if !self.is_active() {
            return None;
        }
        lock::lock(&self.record).clone()
    }

    /// Adds the accesses of captured work, each allocation linked to the
    /// graph's launch slot now: a use of it that conflicts with this one
    /// cannot be between its wait and its commit (it would need a borrow
    /// this work holds), and later ones see the link.
    pub(crate) fn add(&self, uses: impl Iterator<Item = (Arc<Allocation>, bool)>) {
        if let Some(r) = lock::lock(&self.record).as_ref() {
            let mut all = lock::lock(&r.uses);
            for (a, w) in uses {
                if let Some(slot) = &r.slot {
                    crate::memory::track::link_captured(&a, slot, w);
                }
                all.push((a, w));
            }
        }
    }

    /// Starts recording into a new record: capture `id` of a graph to be
    /// launched through `slot` (or an update of that graph, `id` 0).
    fn start(&self, id: u64, slot: Arc<LaunchSlot>) {
        if id != 0 {
            // Ended in `finish_with_slot`, the one way a started record ends.
            crate::memory::track::begin_events();
        }
        *lock::lock(&self.record) = Some(Arc::new(CaptureRecord {
            id,
            slot: Some(slot),
            ..Default::default()
        }));
        self.capture.store(id, Ordering::Release);
    }

    /// Joins `record` (the queue waited for an event recorded in it).
    /// Called with the queue's gate held exclusively.
    fn join(&self, stream: &Stream, record: Arc<CaptureRecord>) {
        lock::lock(&record.joined).push(stream.clone());
        *lock::lock(&self.record) = Some(record);
        self.active.store(true, Ordering::Release);
    }

    /// Leaves the record (the queue captures nothing any more).
    fn leave(&self) -> Option<Arc<CaptureRecord>> {
        self.capture.store(0, Ordering::Release);
        self.active.store(false, Ordering::Release);
        lock::lock(&self.record).take()
    }

    /// Ends the record: the streams that joined leave it (each with its
    /// gate held), and the accesses come back, one per allocation (a write
    /// if any captured access wrote it).
    fn finish(&self) -> Vec<(Arc<Allocation>, bool)> {
        self.finish_with_slot().0
    }

    /// [`CaptureState::finish`], with the record's launch slot.
    fn finish_with_slot(&self) -> (Captured, Option<Arc<LaunchSlot>>) {
        let Some(record) = self.leave() else {
            return (Vec::new(), None);
        };
        record.ended.store(true, Ordering::Release);
        if record.id != 0 {
            crate::memory::track::end_events();
        }
        let joined = std::mem::take(&mut *lock::lock(&record.joined));
        for j in &joined {
            let st = &j.shared().capture;
            // Best effort past the limit: the state changes anyway.
            let _gate = st.gate.enter_exclusive(GATE_LIMIT);
            if st.current().is_some_and(|r| Arc::ptr_eq(&r, &record)) {
                st.leave();
            }
        }
        let all = std::mem::take(&mut *lock::lock(&record.uses));
        (merge(Vec::new(), all), record.slot.clone())
    }
}

/// The accesses of a capture: one per allocation, a write if any wrote it.
type Captured = Vec<(Arc<Allocation>, bool)>;

/// The allocations of a capture that made no graph forget its slot.
fn unlink_all(uses: &[(Arc<Allocation>, bool)], slot: Option<&Arc<LaunchSlot>>) {
    if let Some(slot) = slot {
        for (a, _) in uses {
            crate::memory::track::unlink(a, slot);
        }
    }
}

impl CaptureRecord {
    /// Whether its capture is still under way.
    pub(crate) fn is_open(&self) -> bool {
        !self.ended.load(Ordering::Acquire)
    }
}

/// Queues a wait of `stream` for an event with `wait` (the runtime call),
/// joining the capture the event was recorded in, if one is under way and
/// `stream` is not in it yet: from then on `stream`'s work is captured too
/// (the runtime's cross-stream capture) and the crate records it so.
pub(crate) fn wait_joining(
    function: &'static str,
    stream: &Stream,
    record: Option<Arc<CaptureRecord>>,
    wait: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let state = &stream.shared().capture;
    let joins = record
        .filter(|r| r.is_open() && !state.current().is_some_and(|mine| Arc::ptr_eq(&mine, r)));
    let Some(record) = joins else {
        let _gate = state.gate.enter();
        return wait();
    };
    let _gate = state
        .gate
        .enter_exclusive(GATE_LIMIT)
        .ok_or_else(|| gate_busy(function))?;
    wait()?;
    if record.is_open() {
        state.join(stream, record);
    }
    Ok(())
}

/// `into` with `more` added, one entry per allocation (a write if any
/// access wrote it).
fn merge(
    mut into: Vec<(Arc<Allocation>, bool)>,
    more: impl IntoIterator<Item = (Arc<Allocation>, bool)>,
) -> Vec<(Arc<Allocation>, bool)> {
    for (a, w) in more {
        match into.iter_mut().find(|(b, _)| Arc::ptr_eq(&a, b)) {
            Some((_, bw)) => *bw |= w,
            None => into.push((a, w)),
        }
    }
    into
}

/// Ends a capture that did not complete (the closure failed or panicked):
/// the partial model is destroyed and the stream leaves capture mode.
struct Abandon<'a> {
    stream: &'a Stream,
    armed: bool,
}

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let state = &self.stream.shared().capture;
        let _gate = state.gate.enter_exclusive(GATE_LIMIT);
        let (uses, slot) = state.finish_with_slot();
        unlink_all(&uses, slot.as_ref());
        // SAFETY: the stream is live (borrowed).
        match unsafe { result::mdl_ri_capture_end(self.stream.as_raw()) } {
            Ok(model) if !model.is_null() => {
                // SAFETY: the model was just made and never launched.
                if let Err(e) = unsafe { result::mdl_ri_destroy(model) } {
                    release::record("Graph", e);
                }
            }
            Ok(_) => {}
            Err(e) => release::record("Graph", e),
        }
        drop(uses);
    }
}

/// Closes the task group open on a capturing stream (when `armed`: its
/// closure failed or panicked) and marks the stream as out of the group.
struct CloseGroup<'a> {
    stream: &'a Stream,
    armed: bool,
}

impl Drop for CloseGroup<'_> {
    fn drop(&mut self) {
        if self.armed {
            // The group is dropped: nothing can update it. A failure of the
            // end (the capture is invalidated) shows at the capture's end.
            // SAFETY: the stream is live (borrowed), its group open.
            let _ = unsafe { result::mdl_ri_capture_task_grp_end(self.stream.as_raw()) };
        }
        self.stream
            .shared()
            .capture
            .in_group
            .store(false, Ordering::Release);
    }
}

/// Ends a task update that did not complete (its closure panicked): the
/// stream leaves update mode and the group counts as broken.
struct EndUpdate<'a> {
    graph: &'a Graph,
    stream: &'a Stream,
    group: usize,
    seen: Option<crate::memory::track::Seen>,
}

impl Drop for EndUpdate<'_> {
    fn drop(&mut self) {
        let Some(seen) = self.seen.take() else {
            return;
        };
        // Fails when the closure issued fewer kernels than the group holds
        // (507000): the group counts as broken either way.
        // SAFETY: the stream is live (borrowed), in update mode.
        let _ = unsafe { result::mdl_ri_capture_task_update_end(self.stream.as_raw()) };
        self.graph.finish_update(
            self.stream,
            &seen,
            self.group,
            Err("its update panicked".to_string()),
        );
    }
}

impl Stream {
    /// Records the work `f` queues on this stream into a [`Graph`] instead
    /// of running it (see the [module docs](crate::graph)); returns the
    /// graph and `f`'s value.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this stream is capturing already
    /// (a capture inside `f`) or updating a graph ([`Graph::update`]); the runtime's error from
    /// `aclmdlRICaptureBegin` (100000 for the default stream, whose handle is
    /// null; 207000 on a runtime without capture) or `aclmdlRICaptureEnd` (507903 for a
    /// capture the runtime invalidated, 107025 when another stream joined
    /// and did not rejoin); `f`'s error, after the capture is ended and its
    /// partial graph destroyed.
    ///
    /// The error type is `f`'s own, so a framework's error flows through
    /// unchanged; the crate's errors reach it through `E: From<acl::Error>`.
    /// A closure whose error type is not fixed by its body names it, e.g.
    /// `Ok::<_, acl::Error>(value)`.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::graph::CaptureMode;
    /// use acl::{Device, Runtime};
    ///
    /// #[derive(Debug)]
    /// enum BackendError {
    ///     Acl(acl::Error),
    ///     Shape(String),
    /// }
    /// impl From<acl::Error> for BackendError {
    ///     fn from(e: acl::Error) -> Self {
    ///         BackendError::Acl(e)
    ///     }
    /// }
    ///
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let stream = npu.new_stream()?;
    /// let mut buf = stream.alloc_zeros::<f32>(16)?;
    /// let failed = stream.capture(CaptureMode::Global, |s| {
    ///     s.memset(&mut buf, 0)?; // an acl::Error would convert
    ///     Err::<(), _>(BackendError::Shape("rank 5 is not supported".into()))
    /// });
    /// assert!(matches!(failed, Err(BackendError::Shape(_))));
    /// // The capture ended: the stream captures again.
    /// let (graph, ()) = stream.capture(CaptureMode::Global, |s| s.memset(&mut buf, 0))?;
    /// # drop(graph);
    /// # Ok::<(), acl::Error>(())
    /// ```
    #[doc(alias = "aclmdlRICaptureBegin")]
    #[doc(alias = "aclmdlRICaptureEnd")]
    pub fn capture<R, E: From<Error>>(
        &self,
        mode: CaptureMode,
        f: impl FnOnce(&Stream) -> std::result::Result<R, E>,
    ) -> std::result::Result<(Graph, R), E> {
        let capture = self.capture_begin(mode)?;
        let mut abandon = Abandon {
            stream: self,
            armed: true,
        };
        let value = f(self)?;
        Ok((self.capture_end(capture, &mut abandon)?, value))
    }

    /// [`Stream::capture`] up to the closure: checks, then
    /// `aclmdlRICaptureBegin`; returns the capture's number.
    fn capture_begin(&self, mode: CaptureMode) -> Result<u64> {
        const F: &str = "Stream::capture";
        let state = &self.shared().capture;
        if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error(F));
        }
        self.device().bind()?;
        let gate = state
            .gate
            .enter_exclusive(GATE_LIMIT)
            .ok_or_else(|| gate_busy(F))?;
        if state.active.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(
                F,
                "this stream is capturing already (its own capture or one it joined), or \
                 updating a graph",
            ));
        }
        // Marks carry events while the capture is under way (`start`): work
        // outside the capture is then ordered by events, never by
        // synchronising or recording on this stream (which the runtime
        // refuses, or captures, while it captures). Marks made before
        // without an event stand for a point of their stream: this one's are
        // all finished once it is synchronised (as torch synchronises before
        // a capture).
        if !crate::memory::track::is_multi_stream_for_good()
            && let Err(e) = self.synchronize()
        {
            state.active.store(false, Ordering::Release);
            return Err(e);
        }
        let capture = NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed);
        state.start(capture, LaunchSlot::new(capture));
        state.groups.store(0, Ordering::Release);
        // SAFETY: the stream is live (borrowed).
        if let Err(e) = unsafe { result::mdl_ri_capture_begin(self.as_raw(), mode.raw()) } {
            state.finish();
            return Err(e);
        }
        drop(gate);
        Ok(capture)
    }

    /// [`Stream::capture`] after the closure succeeded: `aclmdlRICaptureEnd`
    /// and the graph. `abandon` ends the capture on a failure before that.
    fn capture_end(&self, capture: u64, abandon: &mut Abandon<'_>) -> Result<Graph> {
        let state = &self.shared().capture;
        // A failure from here on still ends the capture (the guard), until
        // `aclmdlRICaptureEnd` itself is called.
        self.device().bind()?;
        abandon.armed = false;
        // Best effort past the limit (a `Prepared` this thread keeps).
        let gate = state.gate.enter_exclusive(GATE_LIMIT);
        let groups = state.groups.load(Ordering::Acquire);
        let (uses, slot) = state.finish_with_slot();
        // SAFETY: the stream is live (borrowed) and capturing.
        let ended = unsafe { result::mdl_ri_capture_end(self.as_raw()) };
        drop(gate);
        let (model, slot) = match (ended, slot) {
            (Ok(model), Some(slot)) if !model.is_null() => (model, slot),
            (ended, slot) => {
                unlink_all(&uses, slot.as_ref());
                ended?;
                return Err(Error::from_code(
                    "aclmdlRICaptureEnd",
                    raw::ACL_ERROR_INTERNAL_ERROR,
                ));
            }
        };
        // Made now, so that the inner graph destroys the model on failure.
        let mut inner = GraphInner {
            raw: model as usize,
            device: self.device().clone(),
            capture,
            token: None,
            uses: Mutex::new(Uses {
                all: Arc::new(uses.clone()),
                host: host_of(&uses),
                captured: uses,
                updates: HashMap::new(),
                broken: HashMap::new(),
            }),
            launched: Mutex::new(Vec::new()),
            launch: Mutex::new(LaunchState::default()),
            uses_changes: AtomicU64::new(0),
            slot,
        };
        if groups > 0 {
            // The parameters of the grouped tasks, as a device "buffer" that
            // launches read and updates write: the memory tracking orders
            // them. Never read or written on the device.
            // SAFETY: never read.
            inner.token = Some(unsafe { self.alloc::<u8>(1) }?);
        }
        Ok(Graph {
            inner: Arc::new(inner),
        })
    }

    /// Inside [`Stream::capture`]'s closure, on the capturing stream:
    /// marks the operators and kernels `f` queues on this stream as a
    /// [`TaskGroup`], which [`Graph::update`] can later change (see the
    /// [module docs](crate::graph#task-groups-and-updates)); returns the
    /// group and `f`'s value.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] outside a capture of this stream, or
    /// inside another task group (groups do not nest); the runtime's error
    /// from `aclmdlRICaptureTaskGrpBegin`, or from `aclmdlRICaptureTaskGrpEnd`:
    /// `ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT` (507009) when `f` queued a copy
    /// or a fill (only kernels belong in a group; the capture is then
    /// invalidated and fails with 507903), `ACL_ERROR_STREAM_TASK_GROUP_INTR`
    /// (107034) when another stream of the capture queued work meanwhile;
    /// `f`'s error, after the group is closed.
    #[doc(alias = "aclmdlRICaptureTaskGrpBegin")]
    #[doc(alias = "aclmdlRICaptureTaskGrpEnd")]
    pub fn task_group<R>(&self, f: impl FnOnce(&Stream) -> Result<R>) -> Result<(TaskGroup, R)> {
        const F: &str = "Stream::task_group";
        let state = &self.shared().capture;
        let capture = state.capture.load(Ordering::Acquire);
        if !state.is_active() || capture == 0 {
            return Err(Error::invalid(
                F,
                "task groups are made inside Stream::capture's closure, on the capturing stream",
            ));
        }
        if state.in_group.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(
                F,
                "a task group is open already: groups do not nest",
            ));
        }
        let mut close = CloseGroup {
            stream: self,
            armed: false,
        };
        close.stream.device().bind()?;
        // SAFETY: the stream is live (borrowed) and capturing.
        unsafe { result::mdl_ri_capture_task_grp_begin(self.as_raw()) }?;
        close.armed = true;
        let value = f(self)?;
        close.armed = false;
        let ended = self.device().bind().and_then(|()| {
            // SAFETY: the stream is live (borrowed), its group open.
            unsafe { result::mdl_ri_capture_task_grp_end(self.as_raw()) }
        });
        drop(close);
        let group = ended?;
        if group.is_null() {
            return Err(Error::from_code(
                "aclmdlRICaptureTaskGrpEnd",
                raw::ACL_ERROR_INTERNAL_ERROR,
            ));
        }
        state.groups.fetch_add(1, Ordering::AcqRel);
        Ok((
            TaskGroup {
                raw: group as usize,
                capture,
            },
            value,
        ))
    }

    /// Whether this stream is capturing (`aclmdlRICaptureGetInfo`); the
    /// default stream never is.
    ///
    /// # Errors
    ///
    /// The runtime's error.
    #[doc(alias = "aclmdlRICaptureGetInfo")]
    pub fn capture_status(&self) -> Result<CaptureStatus> {
        if self.as_raw().is_null() {
            // The default stream (a null handle, which the runtime's query
            // refuses) never captures.
            return Ok(CaptureStatus::None);
        }
        self.device().bind()?;
        // SAFETY: the stream is live (borrowed).
        let (status, _) = unsafe { result::mdl_ri_capture_get_info(self.as_raw()) }?;
        Ok(match status {
            raw::ACL_MODEL_RI_CAPTURE_STATUS_NONE => CaptureStatus::None,
            raw::ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE => CaptureStatus::Active,
            raw::ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED => CaptureStatus::Invalidated,
            other => CaptureStatus::Raw(other),
        })
    }
}

/// Sets the calling thread's capture mode, returning the previous one
/// (`aclmdlRICaptureThreadExchangeMode`): with [`CaptureMode::Relaxed`] a
/// thread may make synchronous calls while another thread's global capture
/// is active (torch_npu does this around a synchronous fill).
///
/// # Errors
///
/// The runtime's error (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT` where capture is
/// not available).
#[doc(alias = "aclmdlRICaptureThreadExchangeMode")]
pub fn exchange_thread_capture_mode(mode: CaptureMode) -> Result<CaptureMode> {
    let old = result::mdl_ri_capture_thread_exchange_mode(mode.raw())?;
    Ok(match old {
        raw::ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL => CaptureMode::ThreadLocal,
        raw::ACL_MODEL_RI_CAPTURE_MODE_RELAXED => CaptureMode::Relaxed,
        _ => CaptureMode::Global,
    })
}

/// Captured work, launched with [`Graph::launch`] (see the
/// [module docs](self)). Dropping it destroys the model once its launches
/// have finished, then releases the memory it held.
///
/// Cloning gives another handle to the same graph. `Send + Sync`: the model
/// is a runtime object usable from any thread; launches are ordered by the
/// memory tracking, and the list of launch streams is behind a lock.
#[derive(Clone)]
pub struct Graph {
    inner: Arc<GraphInner>,
}

struct GraphInner {
    /// The `aclmdlRI` handle.
    raw: usize,
    device: Device,
    /// The number of the capture that made it (its [`TaskGroup`]s carry it).
    capture: u64,
    /// With task groups: the stand-in for the grouped tasks' parameters
    /// (launches read it, updates write it).
    token: Option<DeviceBuffer<u8>>,
    /// The allocations its tasks use.
    uses: Mutex<Uses>,
    /// The streams it was launched on (one handle per queue).
    launched: Mutex<Vec<Stream>>,
    /// Held by a launch from its wait to its commit (and by an update's
    /// start): two launches on two streams are one after the other, each
    /// ordered after the previous one's marks. It keeps what the last launch
    /// that went through every buffer left (whether the next may skip them).
    launch: Mutex<LaunchState>,
    /// Bumped, under the `uses` lock, by every change of `uses` (an
    /// update): a launch that saw the same count may skip that lock.
    uses_changes: AtomicU64,
    /// The last launch's mark, shared by the records of the buffers
    /// (`memory::track::launch`).
    slot: Arc<LaunchSlot>,
}

/// What a graph's launches keep under its launch lock.
#[derive(Debug, Default)]
struct LaunchState {
    /// What the last launch that went through every buffer left.
    book: LaunchBook,
    /// Set by a full launch that found the uses (at `uses_changes` = the
    /// value) plain: memory to order, no pinned memory, no broken group. A
    /// launch that finds the same count may take the short path.
    plain: Option<PlainUses>,
}

/// The uses a full launch found plain (see [`LaunchState::plain`]).
#[derive(Debug, Clone, Copy)]
struct PlainUses {
    /// `uses_changes` then.
    changes: u64,
    /// The address of the list of uses (`memory::track::launch_fast`'s
    /// test that the list is the same).
    id: usize,
    /// The raw handle of the stream of that launch, which `launched`
    /// holds (so that no other stream has that handle while the graph
    /// lives).
    stream: usize,
}

/// The allocations a graph's tasks use, and whether they write them.
struct Uses {
    /// Those of the captured work.
    captured: Vec<(Arc<Allocation>, bool)>,
    /// Those of each group's replacement operators, by group handle.
    updates: HashMap<usize, Vec<(Arc<Allocation>, bool)>>,
    /// All of them, one entry per allocation (what a launch uses).
    all: Arc<Vec<(Arc<Allocation>, bool)>>,
    /// Those of pinned host memory (a launch excludes host views of them).
    host: Arc<Vec<Arc<Allocation>>>,
    /// Groups whose last update failed part way, and why.
    broken: HashMap<usize, String>,
}

impl Uses {
    fn rebuild(&mut self) {
        let mut all = self.captured.clone();
        for more in self.updates.values() {
            all = merge(all, more.iter().cloned());
        }
        self.host = host_of(&all);
        self.all = Arc::new(all);
    }
}

/// The pinned host memory among `uses`.
fn host_of(uses: &[(Arc<Allocation>, bool)]) -> Arc<Vec<Arc<Allocation>>> {
    Arc::new(
        uses.iter()
            .filter(|(a, _)| a.is_host())
            .map(|(a, _)| a.clone())
            .collect(),
    )
}

/// A task group of a captured [`Graph`], made by [`Stream::task_group`]:
/// operators [`Graph::update`] can replace. It belongs to the graph of the
/// capture that made it; [`Graph::update`] refuses it for any other graph.
///
/// `Send + Sync`: a handle the runtime keeps in the graph's model, used
/// only through that graph.
#[derive(Debug)]
pub struct TaskGroup {
    /// The `aclrtTaskGrp` handle (owned by the model).
    raw: usize,
    /// The capture that made it.
    capture: u64,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("raw", &self.inner.raw)
            .field("device", &self.inner.device.ordinal())
            .field("buffers", &lock::lock(&self.inner.uses).all.len())
            .finish()
    }
}

impl Graph {
    /// Queues a run of the captured work on `stream`, after the work its
    /// memory's other users queued before (see the module docs).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a stream of another device or inside
    /// a host function, and when a use of the graph's memory stays between
    /// its wait and its commit for 2 s (a [`memory::Prepared`](crate::memory::Prepared)
    /// kept uncommitted: the launch cannot be ordered after it); the
    /// runtime's error from `aclmdlRIExecuteAsync` (107027 on a capturing
    /// stream).
    ///
    /// # Concurrency
    ///
    /// A launch writes the graph's memory through `&self`, so other threads
    /// may use that memory meanwhile: the launch is queued only while no
    /// such use is between its wait and its commit, and uses that begin
    /// while it is queued wait for its marks. Launches (of any graph) are
    /// queued one at a time in the process; their work runs as the streams
    /// allow.
    #[doc(alias = "aclmdlRIExecuteAsync")]
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        const F: &str = "Graph::launch";
        self.check_device(F, stream)?;
        // One launch at a time: a second one waits for this one's marks.
        let state = lock::lock(&self.inner.launch);
        if let Some(plain) = state.plain
            && plain.stream == stream.as_raw() as usize
            && plain.changes == self.inner.uses_changes.load(Ordering::Acquire)
            && let Some(done) = self.launch_plain(stream, &state.book, plain.id)
        {
            return done;
        }
        self.launch_full(stream, state)
    }

    /// [`Graph::launch`] past its short path: every check, and a wait for
    /// each buffer's conflicts unless `launch_fast` may skip them.
    #[inline(never)]
    fn launch_full(
        &self,
        stream: &Stream,
        mut state: std::sync::MutexGuard<'_, LaunchState>,
    ) -> Result<()> {
        const F: &str = "Graph::launch";
        state.plain = None;
        let book = &mut state.book;
        let changes = self.inner.uses_changes.load(Ordering::Acquire);
        let (all, host, plain) = {
            let uses = lock::lock(&self.inner.uses);
            if let Some(why) = uses.broken.values().next() {
                return Err(Error::invalid(
                    F,
                    format!(
                        "a task group of the graph may be partly updated ({why}); update it again \
                         successfully before launching"
                    ),
                ));
            }
            let plain = uses.broken.is_empty() && uses.host.is_empty();
            (uses.all.clone(), uses.host.clone(), plain)
        };
        // No `&[T]` of pinned memory the graph uses may live while the
        // launch is queued; views taken later wait for it (its marks).
        let mut views = Vec::with_capacity(host.len());
        for a in host.iter() {
            match a.views.enter_exclusive(Duration::ZERO) {
                Some(v) => views.push(v),
                None => {
                    return Err(Error::invalid(
                        F,
                        "the graph uses pinned memory that a host view (PinnedHostBuffer::as_slice \
                         or as_mut_slice) still borrows; drop the view before launching",
                    ));
                }
            }
        }
        let token = self.inner.token.as_ref().map(|t| (t.allocation(), false));
        let uses = || all.iter().map(|(a, w)| (a, *w)).chain(token);
        let _gate = stream.shared().capture.gate.enter();
        // SAFETY: the model and stream are live; the memory its tasks use
        // is held by the graph and ordered by the waits before the call and
        // the marks recorded after it; no host view of its pinned memory
        // lives (the views' gates are held until the marks are recorded).
        let execute = || unsafe {
            result::mdl_ri_execute_async(self.inner.raw as raw::aclmdlRI, stream.as_raw())
        };
        let slot = &self.inner.slot;
        let uses_id = Arc::as_ptr(&all) as usize;
        if all.is_empty() && token.is_none() {
            // No memory to order.
            crate::memory::track::wait_entered(stream, uses(), self.inner.capture)?;
            execute()?;
        } else if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error("memory::prepare"));
        } else {
            // No use of the graph's memory between its wait and its commit
            // while this launch is queued, nor one beginning before its
            // marks are recorded (see `memory::track::window`).
            let window = LaunchWindow::begin(F, slot)?;
            if let Some(done) =
                crate::memory::track::launch_fast(stream, slot, book, uses_id, execute)
            {
                // Nothing touched the buffers since the last full launch:
                // one wait for that launch, one mark for all of them.
                done?;
            } else {
                let touched = crate::memory::track::touched(slot);
                let seen = crate::memory::track::wait_entered(stream, uses(), self.inner.capture)?;
                execute()?;
                if stream.shared().capture.is_active() {
                    // (The runtime refuses this: 107027.) Recorded into the
                    // capture, as any work.
                    crate::memory::track::record_launch(stream, &seen, uses(), self.inner.capture);
                } else {
                    // One mark for every buffer, each record linked to the
                    // graph's slot (and the memory the capture initialises
                    // counts as written), in one pass: one lock per
                    // allocation.
                    crate::memory::track::record_launch_linked(
                        stream,
                        &seen,
                        uses(),
                        slot,
                        book,
                        touched,
                        uses_id,
                    );
                }
            }
            drop(window);
        }
        drop(views);
        {
            let mut launched = lock::lock(&self.inner.launched);
            if !launched.iter().any(|s| s.same_queue(stream)) {
                launched.push(stream.clone());
            }
        }
        // The next launch on this stream may take the short path if the
        // uses do not change meanwhile (the count read before them).
        state.plain = (plain && !all.is_empty()).then_some(PlainUses {
            changes,
            id: uses_id,
            stream: stream.as_raw() as usize,
        });
        drop(state);
        Ok(())
    }

    /// [`Graph::launch`] when its last full launch found the uses plain
    /// (see [`LaunchState::plain`]), unchanged since, on a stream `launched`
    /// holds: no lock of the uses, no host views to exclude, no stream to
    /// note. `None` when `launch_fast` cannot skip the buffers (take the
    /// full path). Called under the launch lock.
    #[inline(always)]
    fn launch_plain(
        &self,
        stream: &Stream,
        book: &LaunchBook,
        uses_id: usize,
    ) -> Option<Result<()>> {
        if crate::device::in_host_fn() {
            return Some(Err(crate::device::host_fn_error("memory::prepare")));
        }
        let _gate = stream.shared().capture.gate.enter();
        let slot = &self.inner.slot;
        let window = match LaunchWindow::begin("Graph::launch", slot) {
            Ok(w) => w,
            Err(e) => return Some(Err(e)),
        };
        // SAFETY: as in `Graph::launch`: the model and stream are live; the
        // memory its tasks use is held by the graph and ordered by the wait
        // for the last launch's mark and the mark recorded after it; the
        // graph uses no pinned memory.
        let execute = || unsafe {
            result::mdl_ri_execute_async(self.inner.raw as raw::aclmdlRI, stream.as_raw())
        };
        let done = crate::memory::track::launch_fast(stream, slot, book, uses_id, execute);
        drop(window);
        done
    }

    /// Stops this graph's launches that are queued or running
    /// (`aclmdlRIAbort`, an experimental feature of CANN): a queued launch
    /// is dropped, a running one ends early (a kernel it is running
    /// finishes first). Work queued before or after them is untouched, and
    /// the graph can be launched again.
    ///
    /// What the stopped launches would have written stays as it was, or is
    /// partly written: the buffers hold valid values of their types, not
    /// the graph's results. (Memory the capture initialises counts as
    /// written from the first launch on, stopped or not.)
    ///
    /// Each stream a stopped launch was queued on reports
    /// `ACL_ERROR_RT_MODEL_ABORT_NORMAL` (507023) once, at its next
    /// synchronisation — including one this crate makes for a host read of
    /// the graph's memory, or the graph's drop (which takes it silently);
    /// synchronise the stream after the abort to take the report there.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] inside a host function; the runtime's
    /// error (a runtime without `aclmdlRIAbort`: [`Error::Load`]).
    #[doc(alias = "aclmdlRIAbort")]
    pub fn abort(&self) -> Result<()> {
        if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error("Graph::abort"));
        }
        self.inner.device.bind()?;
        // SAFETY: the model is live (held by `self`). Stopping its runs
        // leaves their memory with unspecified contents, which every
        // `DeviceRepr` type accepts; the marks of the stopped launches are
        // recorded after them on their streams, so later uses still wait
        // for whatever of them ran.
        unsafe { result::mdl_ri_abort(self.inner.raw as raw::aclmdlRI) }
    }

    /// [`Error::InvalidArgument`] for `function` when `stream` is on another
    /// device than the graph.
    fn check_device(&self, function: &'static str, stream: &Stream) -> Result<()> {
        if stream.device() == &self.inner.device {
            return Ok(());
        }
        Err(Error::invalid(
            function,
            format!(
                "the graph was captured on device {} and the stream is on device {}",
                self.inner.device.ordinal(),
                stream.device().ordinal()
            ),
        ))
    }

    /// The device it was captured on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// How many buffers the graph's work uses (and the graph holds): the
    /// captured work's and its updates'.
    pub fn buffer_count(&self) -> usize {
        lock::lock(&self.inner.uses).all.len()
    }

    /// Runs `f` with `stream` in update mode for `group`: the operators and
    /// kernels `f` queues on `stream` do not run; each replaces the group's
    /// next captured task, in capture order, for the launches queued after
    /// this call (see the [module docs](crate::graph#task-groups-and-updates)).
    /// `f` must queue exactly as many kernels as the group captured, of the
    /// same kinds, and nothing else. Returns `f`'s value.
    ///
    /// The graph holds the buffers the new operators use from now on (those
    /// of the group's previous update are released once the launches that
    /// used them are done). The update waits for the launches queued before
    /// it; later launches wait for it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a group of another graph, a stream of
    /// another device, a stream that is capturing or updating, inside a host
    /// function — the graph is unchanged. The runtime's error from
    /// `aclmdlRICaptureTaskUpdateBegin` (`ACL_ERROR_STREAM_TASK_GROUP_STATUS`,
    /// 107033, while another stream updates the group) — unchanged too.
    /// Then, with the update ended and the group possibly partly replaced
    /// (the graph refuses to launch until the group is updated again
    /// successfully): `f`'s error, including the runtime's refusal of what
    /// it queued (`ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT`, 507009, for a copy or
    /// a fill; `ACL_ERROR_RT_INTERNAL_ERROR`, 507000, for a kernel more than
    /// the group holds — aclnn operators report it as their runtime error);
    /// the error from `aclmdlRICaptureTaskUpdateEnd` (507000 when `f` queued
    /// fewer kernels than the group holds).
    #[doc(alias = "aclmdlRICaptureTaskUpdateBegin")]
    #[doc(alias = "aclmdlRICaptureTaskUpdateEnd")]
    pub fn update<R>(
        &self,
        stream: &Stream,
        group: &TaskGroup,
        f: impl FnOnce(&Stream) -> Result<R>,
    ) -> Result<R> {
        const F: &str = "Graph::update";
        if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error(F));
        }
        let token = match &self.inner.token {
            Some(t) if group.capture == self.inner.capture => t.allocation(),
            _ => {
                return Err(Error::invalid(
                    F,
                    "the task group was made in the capture of another graph; a group is \
                     updated through its own graph",
                ));
            }
        };
        self.check_device(F, stream)?;
        let state = &stream.shared().capture;
        let busy = || {
            Error::invalid(
                F,
                "the stream is capturing or updating a graph already; update from a stream that \
                 does neither",
            )
        };
        let gate = state
            .gate
            .enter_exclusive(GATE_LIMIT)
            .ok_or_else(|| gate_busy(F))?;
        if state.is_active() {
            return Err(busy());
        }
        // After the launches queued before (none is between its wait and
        // its commit: the launch lock) and the updates: while the stream is
        // not yet in update mode, so that the wait is queued.
        let launch = lock::lock(&self.inner.launch);
        let seen = crate::memory::track::wait_entered(stream, std::iter::once((token, true)), 0)?;
        if state.active.swap(true, Ordering::AcqRel) {
            return Err(busy());
        }
        state.start(0, self.inner.slot.clone());
        // SAFETY: the stream is live (borrowed); the group belongs to this
        // graph's model, which is live while `self` is.
        let begun = unsafe {
            result::mdl_ri_capture_task_update_begin(
                stream.as_raw(),
                group.raw as raw::aclrtTaskGrp,
            )
        };
        drop(launch);
        if let Err(e) = begun {
            state.finish();
            return Err(e);
        }
        drop(gate);
        let mut end = EndUpdate {
            graph: self,
            stream,
            group: group.raw,
            seen: Some(seen),
        };
        let value = f(stream);
        let seen = end.seen.take();
        // Best effort past the limit (a `Prepared` this thread keeps).
        let gate = state.gate.enter_exclusive(GATE_LIMIT);
        let ended = stream.device().bind().and_then(|()| {
            // SAFETY: the stream is live (borrowed), in update mode.
            unsafe { result::mdl_ri_capture_task_update_end(stream.as_raw()) }
        });
        let outcome = match (&value, &ended) {
            (Ok(_), Ok(())) => Ok(()),
            (Err(e), _) | (Ok(_), Err(e)) => Err(e.to_string()),
        };
        if let Some(seen) = seen {
            self.finish_update(stream, &seen, group.raw, outcome);
        }
        drop(gate);
        // The closure's error first: it is the cause of a failed end.
        let value = value?;
        ended?;
        Ok(value)
    }

    /// After an update of `group` on `stream`: the stream leaves update
    /// mode, the update counts as a write of the token, and the graph holds
    /// the new operators' buffers — instead of the previous update's on
    /// success, besides them on failure (then the group is broken).
    fn finish_update(
        &self,
        stream: &Stream,
        seen: &crate::memory::track::Seen,
        group: usize,
        outcome: std::result::Result<(), String>,
    ) {
        let new = stream.shared().capture.finish();
        if let Some(t) = &self.inner.token {
            crate::memory::track::record_accesses(
                stream,
                seen,
                std::iter::once((t.allocation(), true)),
            );
        }
        let mut uses = lock::lock(&self.inner.uses);
        // Launches look at the uses again (`LaunchState::plain`).
        self.inner.uses_changes.fetch_add(1, Ordering::AcqRel);
        let old = match outcome {
            Ok(()) => {
                uses.broken.remove(&group);
                uses.updates.insert(group, new)
            }
            Err(why) => {
                uses.broken.insert(group, why);
                let kept = uses.updates.remove(&group).unwrap_or_default();
                uses.updates.insert(group, merge(kept, new));
                None
            }
        };
        let before = uses.all.clone();
        uses.rebuild();
        // Buffers the graph no longer uses forget it (their records take
        // the last launch's mark first).
        let now: std::collections::HashSet<*const Allocation> =
            uses.all.iter().map(|(a, _)| Arc::as_ptr(a)).collect();
        drop(uses);
        for (a, _) in before.iter() {
            if !now.contains(&Arc::as_ptr(a)) {
                crate::memory::track::unlink(a, &self.inner.slot);
            }
        }
        // Released after the launches that used them (their marks).
        drop(old);
    }
}

impl Drop for GraphInner {
    fn drop(&mut self) {
        let launched = std::mem::take(&mut *lock::lock(&self.launched));
        let raw = self.raw;
        let device = self.device.clone();
        let uses = std::mem::replace(
            &mut *lock::lock(&self.uses),
            Uses {
                captured: Vec::new(),
                updates: HashMap::new(),
                all: Arc::new(Vec::new()),
                host: Arc::new(Vec::new()),
                broken: HashMap::new(),
            },
        );
        let token = self.token.take();
        let slot = self.slot.clone();
        let now = launched.is_empty() && !crate::device::in_host_fn();
        let destroy = move || {
            // The runtime refuses (after polling for 10 s) to destroy a
            // model that is running: its launches finish first.
            let mut first = Ok(());
            for s in &launched {
                // A launch stopped by `Graph::abort` is reported at the
                // stream's next synchronisation: this one, when nobody
                // synchronised since. It is not a failure to release.
                let synced = s.synchronize().or_else(|e| match e.code() {
                    Some(crate::ErrorCode::RtModelAbortNormal) => Ok(()),
                    _ => Err(e),
                });
                first = first.and(synced);
            }
            first = first.and(device.bind());
            // SAFETY: a model made by `capture`, destroyed once, with no
            // launch queued any more.
            first = first.and(unsafe { result::mdl_ri_destroy(raw as raw::aclmdlRI) });
            if let Err(e) = first {
                release::record("Graph", e);
            }
            // The records take the last launch's mark and forget the graph
            // (not inside a host function: the locks).
            for (a, _) in uses.all.iter() {
                crate::memory::track::unlink(a, &slot);
            }
            if let Some(t) = &token {
                crate::memory::track::unlink(t.allocation(), &slot);
            }
            // The memory goes back after the launches' marks.
            drop(uses);
            drop(token);
        };
        if now {
            destroy();
        } else {
            release::in_background(Box::new(destroy));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CaptureMode;
    use crate::memory::DeviceMemory;
    use crate::{Device, Runtime};

    fn device() -> Device {
        cann_sim::install().expect("cann-sim installs");
        Device::new(&Runtime::init().expect("aclInit"), 0).expect("device")
    }

    /// Captured work links its buffers to the graph's launch slot as it is
    /// captured; a capture that ends without a graph (its closure failed or
    /// panicked) unlinks them, and so does the graph's drop. A link left
    /// behind would keep the slot alive and make every later use of the
    /// buffer count as touching a graph that no longer exists.
    #[test]
    fn an_abandoned_capture_and_a_dropped_graph_unlink_their_buffers() {
        let npu = device();
        let s = npu.new_stream().unwrap();
        let mut x = s.alloc_zeros::<u8>(64).unwrap();
        let failed = s.capture(CaptureMode::Global, |s| {
            s.fill(&mut x, 1u8)?;
            assert_eq!(x.allocation().graph_links(), 1, "linked while captured");
            Err::<(), _>(crate::Error::invalid("test", "closure fails"))
        });
        assert!(failed.is_err());
        assert_eq!(
            x.allocation().graph_links(),
            0,
            "unlinked after a failed closure"
        );

        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = s.capture(CaptureMode::Global, |s| {
                s.fill(&mut x, 2u8)?;
                panic!("closure panics");
                #[allow(unreachable_code)]
                Ok::<(), crate::Error>(())
            });
        }));
        assert!(panicked.is_err());
        assert_eq!(x.allocation().graph_links(), 0, "unlinked after a panic");

        let (graph, ()) = s
            .capture(CaptureMode::Global, |s| s.fill(&mut x, 3u8))
            .unwrap();
        assert_eq!(x.allocation().graph_links(), 1);
        graph.launch(&s).unwrap();
        // A launched graph is destroyed on the release thread, after its
        // launches: its buffers are unlinked there.
        drop(graph);
        let start = std::time::Instant::now();
        while x.allocation().graph_links() != 0 && start.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(
            x.allocation().graph_links(),
            0,
            "unlinked by the graph's drop"
        );
        assert_eq!(x.to_host_vec().unwrap(), vec![3u8; 64]);
    }
}

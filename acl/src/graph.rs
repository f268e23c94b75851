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
use crate::memory::Allocation;
use crate::result::{self, raw};
use crate::{Device, Stream, lock, release};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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

/// The capture under way on a queue: the accesses of the captured work.
#[derive(Debug, Default)]
pub(crate) struct CaptureState {
    active: AtomicBool,
    uses: Mutex<Vec<(Arc<Allocation>, bool)>>,
}

impl CaptureState {
    #[inline]
    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Adds the accesses of captured work.
    pub(crate) fn add(&self, uses: impl Iterator<Item = (Arc<Allocation>, bool)>) {
        lock::lock(&self.uses).extend(uses);
    }

    /// Ends the record: the accesses, one per allocation (a write if any
    /// captured access wrote it).
    fn finish(&self) -> Vec<(Arc<Allocation>, bool)> {
        self.active.store(false, Ordering::Release);
        let all = std::mem::take(&mut *lock::lock(&self.uses));
        let mut out: Vec<(Arc<Allocation>, bool)> = Vec::with_capacity(all.len());
        for (a, w) in all {
            match out.iter_mut().find(|(b, _)| Arc::ptr_eq(&a, b)) {
                Some((_, bw)) => *bw |= w,
                None => out.push((a, w)),
            }
        }
        out
    }
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
        let uses = self.stream.shared().capture.finish();
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

impl Stream {
    /// Records the work `f` queues on this stream into a [`Graph`] instead
    /// of running it (see the [module docs](crate::graph)); returns the
    /// graph and `f`'s value.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this stream is capturing already
    /// (a capture inside `f`); the runtime's error from
    /// `aclmdlRICaptureBegin` (100000 for the default stream, whose handle is
    /// null; 207000 on a runtime without capture) or `aclmdlRICaptureEnd` (507903 for a
    /// capture the runtime invalidated, 107025 when another stream joined
    /// and did not rejoin); `f`'s error, after the capture is ended and its
    /// partial graph destroyed.
    #[doc(alias = "aclmdlRICaptureBegin")]
    #[doc(alias = "aclmdlRICaptureEnd")]
    pub fn capture<R>(
        &self,
        mode: CaptureMode,
        f: impl FnOnce(&Stream) -> Result<R>,
    ) -> Result<(Graph, R)> {
        const F: &str = "Stream::capture";
        let state = &self.shared().capture;
        if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error(F));
        }
        self.device().bind()?;
        if state.active.swap(true, Ordering::AcqRel) {
            return Err(Error::invalid(F, "this stream is capturing already"));
        }
        // SAFETY: the stream is live (borrowed).
        if let Err(e) = unsafe { result::mdl_ri_capture_begin(self.as_raw(), mode.raw()) } {
            state.finish();
            return Err(e);
        }
        let mut abandon = Abandon {
            stream: self,
            armed: true,
        };
        let value = f(self)?;
        // A failure from here on still ends the capture (the guard), until
        // `aclmdlRICaptureEnd` itself is called.
        self.device().bind()?;
        abandon.armed = false;
        let uses = state.finish();
        // SAFETY: the stream is live (borrowed) and capturing.
        let model = unsafe { result::mdl_ri_capture_end(self.as_raw()) }?;
        if model.is_null() {
            return Err(Error::from_code(
                "aclmdlRICaptureEnd",
                raw::ACL_ERROR_INTERNAL_ERROR,
            ));
        }
        Ok((
            Graph {
                inner: Arc::new(GraphInner {
                    raw: model as usize,
                    device: self.device().clone(),
                    uses,
                    launched: Mutex::new(Vec::new()),
                }),
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
    /// Every allocation the captured work uses, and whether it writes it.
    uses: Vec<(Arc<Allocation>, bool)>,
    /// The streams it was launched on (one handle per queue).
    launched: Mutex<Vec<Stream>>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("raw", &self.inner.raw)
            .field("device", &self.inner.device.ordinal())
            .field("buffers", &self.inner.uses.len())
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
    /// a host function; the runtime's error from `aclmdlRIExecuteAsync`
    /// (107027 on a capturing stream).
    #[doc(alias = "aclmdlRIExecuteAsync")]
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        const F: &str = "Graph::launch";
        if stream.device() != &self.inner.device {
            return Err(Error::invalid(
                F,
                format!(
                    "the graph was captured on device {} and the stream is on device {}",
                    self.inner.device.ordinal(),
                    stream.device().ordinal()
                ),
            ));
        }
        let uses = || self.inner.uses.iter().map(|(a, w)| (a, *w));
        let seen = crate::memory::track::wait_for_conflicts(stream, uses())?;
        // SAFETY: the model and stream are live; the memory its tasks use
        // is held by the graph and ordered by the waits above and the marks
        // recorded below.
        unsafe { result::mdl_ri_execute_async(self.inner.raw as raw::aclmdlRI, stream.as_raw()) }?;
        crate::memory::track::record_accesses(stream, &seen, uses());
        let mut launched = lock::lock(&self.inner.launched);
        if !launched.iter().any(|s| s.same_queue(stream)) {
            launched.push(stream.clone());
        }
        Ok(())
    }

    /// The device it was captured on.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// How many buffers the captured work uses (and the graph holds).
    pub fn buffer_count(&self) -> usize {
        self.inner.uses.len()
    }
}

impl Drop for GraphInner {
    fn drop(&mut self) {
        let launched = std::mem::take(&mut *lock::lock(&self.launched));
        let raw = self.raw;
        let device = self.device.clone();
        let uses = std::mem::take(&mut self.uses);
        let now = launched.is_empty() && !crate::device::in_host_fn();
        let destroy = move || {
            // The runtime refuses (after polling for 10 s) to destroy a
            // model that is running: its launches finish first.
            let mut first = Ok(());
            for s in &launched {
                first = first.and(s.synchronize());
            }
            first = first.and(device.bind());
            // SAFETY: a model made by `capture`, destroyed once, with no
            // launch queued any more.
            first = first.and(unsafe { result::mdl_ri_destroy(raw as raw::aclmdlRI) });
            if let Err(e) = first {
                release::record("Graph", e);
            }
            // The memory goes back after the launches' marks.
            drop(uses);
        };
        if now {
            destroy();
        } else {
            release::in_background(Box::new(destroy));
        }
    }
}

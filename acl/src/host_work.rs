//! Host work queued on streams: host functions and callbacks, as Rust closures.
//!
//! AscendCL has two mechanisms, and a stream may use only one of them:
//!
//! - **Host functions** ([`Stream::launch_host_fn`], `aclrtLaunchHostFunc`,
//!   Atlas A2/A3 and later): the runtime runs the function on a thread of
//!   its own; later work on the stream waits for it.
//! - **Callbacks** ([`Stream::launch_callback`], `aclrtLaunchCallback`, all
//!   parts): the runtime hands the callback to a user thread subscribed to
//!   the stream (`aclrtSubscribeReport`), which runs it inside
//!   `aclrtProcessReport`. This crate runs that thread for you, one per
//!   device, started by the first callback and stopped with the device.
//!   A callback may block later work on the stream ([`CallbackMode::Blocking`])
//!   or not.
//!
//! Either way the closure runs on another thread, later. It must not call
//! back into this crate: the runtime forbids synchronising or queueing work
//! from host work (it deadlocks), so such calls fail with
//! [`Error::InvalidArgument`]. A panic is
//! caught — it never unwinds into C — and the stream's next
//! [`Stream::synchronize`] returns [`Error::HostFunctionPanicked`].
//! If the runtime refuses the launch, the closure is dropped without running.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{CallbackMode, Device, Runtime};
//! use std::sync::mpsc;
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let (tx, rx) = mpsc::channel();
//! stream.launch_callback(CallbackMode::NonBlocking, move || tx.send("done").unwrap())?;
//! assert_eq!(rx.recv().unwrap(), "done");
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, Stream, result};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Whether a callback holds back the work queued after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackMode {
    /// Later work waits until the callback returns (`ACL_CALLBACK_BLOCK`).
    Blocking,
    /// Later work proceeds; the callback runs when its thread gets to it
    /// (`ACL_CALLBACK_NO_BLOCK`).
    NonBlocking,
}

/// Which mechanism a queue uses (the runtime forbids mixing them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mechanism {
    #[default]
    None,
    HostFn,
    /// Callbacks, subscribed to the thread with this id.
    Callback(u64),
}

/// Per-queue state shared by all handles of a stream.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    panics: Mutex<Vec<String>>,
    mechanism: Mutex<Mechanism>,
    /// Callbacks launched and not yet run: unsubscribing drops those, so
    /// teardown waits for them first.
    pending_callbacks: AtomicUsize,
    /// Accesses recorded on the queue so far (their generation numbers).
    pub(crate) commits: std::sync::atomic::AtomicU64,
    /// Every access of a generation up to this one has finished (a
    /// synchronisation of the queue succeeded after it was recorded).
    pub(crate) synced: std::sync::atomic::AtomicU64,
    /// The graph capture under way on the queue, if any.
    pub(crate) capture: crate::graph::CaptureState,
}

impl Shared {
    /// Whether the queue runs callbacks (so host functions are refused).
    #[cfg(feature = "async")]
    pub(crate) fn uses_callbacks(&self) -> bool {
        matches!(*crate::lock::lock(&self.mechanism), Mechanism::Callback(_))
    }

    fn push(&self, msg: String) {
        crate::lock::lock(&self.panics).push(msg);
    }

    /// The panics not yet reported, as one error.
    pub(crate) fn take_failure(&self) -> Option<Error> {
        let mut v = crate::lock::lock(&self.panics);
        if v.is_empty() {
            return None;
        }
        Some(Error::HostFunctionPanicked {
            message: std::mem::take(&mut *v).join("; "),
        })
    }
}

struct Payload {
    f: Box<dyn FnOnce() + Send>,
    shared: Arc<Shared>,
    /// Counted in `Shared::pending_callbacks` until it has run.
    callback: bool,
    /// The logical device of the stream it was queued on (a device-wide
    /// abort drops the work of all its streams).
    device: i32,
}

/// The payloads handed to the runtime and not yet run, by the id passed as
/// the runtime's user data (a number, not an address: a call back with an id
/// that is gone — its payload was dropped by an abort — finds nothing, so a
/// payload is run or dropped exactly once and never leaked).
static PENDING: Mutex<Pending> = Mutex::new(Pending {
    next: 1,
    payloads: std::collections::BTreeMap::new(),
});

struct Pending {
    /// The next id (0 would be a null user-data pointer).
    next: usize,
    payloads: std::collections::BTreeMap<usize, Payload>,
}

fn register(payload: Payload) -> usize {
    if payload.callback {
        payload
            .shared
            .pending_callbacks
            .fetch_add(1, Ordering::AcqRel);
    }
    let mut pending = crate::lock::lock(&PENDING);
    let id = pending.next;
    // Ids wrap after 2^64 launches on 64-bit targets; 0 stays unused.
    pending.next = pending.next.wrapping_add(1).max(1);
    pending.payloads.insert(id, payload);
    id
}

/// Takes a payload out of the registry, if it is still there.
fn take(id: usize) -> Option<Payload> {
    let payload = crate::lock::lock(&PENDING).payloads.remove(&id)?;
    if payload.callback {
        payload
            .shared
            .pending_callbacks
            .fetch_sub(1, Ordering::AcqRel);
    }
    Some(payload)
}

/// After an abort: drops, without running them, the payloads queued on the
/// aborted queues (those `aborted` selects), which the runtime dropped and
/// will never call back with. A payload whose run has begun is not among
/// them (a run takes its payload out of the registry first).
fn drop_aborted(aborted: impl Fn(&Payload) -> bool) {
    let dropped: Vec<Payload> = {
        let mut pending = crate::lock::lock(&PENDING);
        let ids: Vec<usize> = pending
            .payloads
            .iter()
            .filter(|(_, p)| aborted(p))
            .map(|(id, _)| *id)
            .collect();
        ids.iter()
            .filter_map(|id| pending.payloads.remove(id))
            .collect()
    };
    for payload in &dropped {
        if payload.callback {
            payload
                .shared
                .pending_callbacks
                .fetch_sub(1, Ordering::AcqRel);
        }
    }
    // The closures' own drops run here, outside the registry's lock.
    drop(dropped);
}

/// After `aclrtStreamAbort` on the queue `shared` belongs to.
pub(crate) fn drop_aborted_on_stream(shared: &Arc<Shared>) {
    drop_aborted(|p| Arc::ptr_eq(&p.shared, shared));
}

/// After `aclrtDeviceTaskAbort` on `device`: every stream of it, in every context.
pub(crate) fn drop_aborted_on_device(device: i32) {
    drop_aborted(|p| p.device == device);
}

/// Runs a payload the runtime calls back with: device calls refused, panics caught.
fn run(id: usize) {
    let Some(Payload { f, shared, .. }) = take(id) else {
        return;
    };
    let outcome = crate::device::forbid_device_calls(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
    });
    if let Err(panic) = outcome {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with a non-string payload".to_string());
        shared.push(msg);
    }
}

unsafe extern "C" fn trampoline(raw: *mut c_void) {
    // The user data is the payload's id (see `PENDING`), never dereferenced.
    run(raw.addr())
}

/// Launches a payload; on failure the payload is taken back and dropped.
fn launch(
    stream: &Stream,
    f: Box<dyn FnOnce() + Send>,
    callback: bool,
    go: impl FnOnce(*mut c_void) -> Result<()>,
) -> Result<()> {
    let id = register(Payload {
        f,
        shared: stream.shared().clone(),
        callback,
        device: stream.device().ordinal() as i32,
    });
    // An id as a pointer-sized number: the runtime only hands it back.
    let outcome = go(std::ptr::without_provenance_mut(id));
    if outcome.is_err() {
        // The runtime refused it, so it will never call back with it.
        drop(take(id));
    }
    outcome
}

impl Stream {
    /// Queues `f` as a host function (`aclrtLaunchHostFunc`): a runtime
    /// thread runs it when the stream reaches it, and later work waits for it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this stream already uses
    /// [`launch_callback`](Self::launch_callback); the runtime's error from
    /// `aclrtLaunchHostFunc`. On error `f` is dropped without running.
    #[doc(alias = "aclrtLaunchHostFunc")]
    pub fn launch_host_fn<F: FnOnce() + Send + 'static>(&self, f: F) -> Result<()> {
        self.device().bind()?;
        crate::memory::track::note_host_work();
        let shared = self.shared();
        {
            let mut m = crate::lock::lock(&shared.mechanism);
            match *m {
                Mechanism::Callback(_) => {
                    return Err(Error::invalid(
                        "Stream::launch_host_fn",
                        "this stream runs callbacks (launch_callback); the runtime does not allow \
                         host functions on it too",
                    ));
                }
                _ => *m = Mechanism::HostFn,
            }
        }
        launch(self, Box::new(f), false, |raw| {
            // SAFETY: `trampoline` runs the payload once; the stream is live.
            unsafe { result::launch_host_func(self.as_raw(), Some(trampoline), raw) }
        })
    }

    /// Queues `f` as a callback (`aclrtLaunchCallback`), run by the device's
    /// callback thread when the stream reaches it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when this stream already uses
    /// [`launch_host_fn`](Self::launch_host_fn); the runtime's error from
    /// subscribing the stream or launching. On error `f` is dropped without
    /// running.
    #[doc(alias = "aclrtLaunchCallback")]
    pub fn launch_callback<F: FnOnce() + Send + 'static>(
        &self,
        mode: CallbackMode,
        f: F,
    ) -> Result<()> {
        self.device().bind()?;
        crate::memory::track::note_host_work();
        let shared = self.shared();
        {
            let mut m = crate::lock::lock(&shared.mechanism);
            match *m {
                Mechanism::HostFn => {
                    return Err(Error::invalid(
                        "Stream::launch_callback",
                        "this stream runs host functions (launch_host_fn); the runtime does not \
                         allow callbacks on it too",
                    ));
                }
                Mechanism::Callback(_) => {}
                Mechanism::None => {
                    let tid = self.device().inner.callback_thread.ensure(self.device())?;
                    // SAFETY: the stream is live.
                    unsafe { result::subscribe_report(tid, self.as_raw())? };
                    *m = Mechanism::Callback(tid);
                }
            }
        }
        let block = match mode {
            CallbackMode::Blocking => raw::ACL_CALLBACK_BLOCK,
            CallbackMode::NonBlocking => raw::ACL_CALLBACK_NO_BLOCK,
        };
        launch(self, Box::new(f), true, |raw| {
            // SAFETY: `trampoline` runs the payload once; the stream is live.
            unsafe { result::launch_callback(Some(trampoline), raw, block, self.as_raw()) }
        })
    }
}

/// Ends a stream's callback subscription, if it has one (stream teardown).
///
/// # Safety
///
/// `raw` is the live stream `shared` belongs to, on `device`'s context.
pub(crate) unsafe fn unsubscribe(
    device: &Device,
    raw: raw::aclrtStream,
    shared: &Shared,
) -> Result<()> {
    let m = *crate::lock::lock(&shared.mechanism);
    match m {
        Mechanism::Callback(tid) => {
            device.inner.callback_thread.drain(shared);
            device.bind()?;
            // SAFETY: the caller's contract.
            unsafe { result::unsubscribe_report(tid, raw) }
        }
        _ => Ok(()),
    }
}

/// Ends the default stream's subscription (device teardown; the context is current).
pub(crate) fn unsubscribe_default(thread: &CallbackThread, shared: &Shared) -> Result<()> {
    let m = *crate::lock::lock(&shared.mechanism);
    if matches!(m, Mechanism::Callback(_)) {
        thread.drain(shared);
    }
    match m {
        // SAFETY: the null stream is the current context's default stream.
        Mechanism::Callback(tid) => unsafe {
            result::unsubscribe_report(tid, std::ptr::null_mut())
        },
        _ => Ok(()),
    }
}

/// The per-device thread that runs callbacks (`aclrtProcessReport` in a loop).
#[derive(Default)]
pub(crate) struct CallbackThread {
    worker: Mutex<Option<Worker>>,
}

struct Worker {
    tid: u64,
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

/// How long one `aclrtProcessReport` waits before the thread checks whether
/// to stop.
const POLL_MS: i32 = 20;

impl CallbackThread {
    /// The thread's id (starting it if needed).
    fn ensure(&self, device: &Device) -> Result<u64> {
        let mut w = crate::lock::lock(&self.worker);
        if let Some(worker) = w.as_ref() {
            return Ok(worker.tid);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let ordinal = device.ordinal();
        // The context without ownership (the device owns this thread and
        // stops it before its context goes).
        let ctx = device.context_ref();
        let handle = std::thread::Builder::new()
            .name(format!("acl-callbacks-{ordinal}"))
            .spawn(move || {
                // `aclrtProcessReport` acts on the thread's current context.
                if let Err(e) = ctx.bind() {
                    log::warn!(target: "acl", "callback thread of device {ordinal}: {e}");
                }
                while !flag.load(Ordering::Acquire) {
                    // Timeouts (507012) and "no stream subscribed yet" (107012)
                    // are the normal idle states; anything else is reported.
                    if let Err(e) = result::process_report(POLL_MS) {
                        let idle = matches!(
                            e.code(),
                            Some(
                                crate::ErrorCode::RtReportTimeout
                                    | crate::ErrorCode::RtThreadSubscribe
                            )
                        );
                        if !idle {
                            log::warn!(target: "acl", "callback thread of device {ordinal}: {e}");
                        }
                        if !matches!(e.code(), Some(crate::ErrorCode::RtReportTimeout)) {
                            std::thread::sleep(std::time::Duration::from_millis(POLL_MS as u64));
                        }
                    }
                }
            })
            .map_err(|e| {
                Error::invalid(
                    "Stream::launch_callback",
                    format!("cannot start the callback thread: {e}"),
                )
            })?;
        use std::os::unix::thread::JoinHandleExt;
        let tid = handle.as_pthread_t() as u64;
        *w = Some(Worker { tid, stop, handle });
        Ok(tid)
    }

    /// Waits (up to a minute) until every callback launched on `shared`'s
    /// queue has run, unless called from the callback thread itself, which
    /// would wait for itself.
    fn drain(&self, shared: &Shared) {
        let on_worker = crate::lock::lock(&self.worker)
            .as_ref()
            .is_some_and(|w| w.handle.thread().id() == std::thread::current().id());
        if on_worker {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while shared.pending_callbacks.load(Ordering::Acquire) > 0
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Stops and joins the thread (device teardown, after every stream is gone).
    pub(crate) fn stop(&self) {
        let worker = crate::lock::lock(&self.worker).take();
        if let Some(w) = worker {
            w.stop.store(true, Ordering::Release);
            // A callback that owned the device's last handle drops it on the
            // callback thread itself: that thread cannot join itself, and
            // leaves its loop on its own once the flag is seen.
            if w.handle.thread().id() == std::thread::current().id() {
                return;
            }
            if w.handle.join().is_err() {
                log::warn!(target: "acl", "the callback thread panicked");
            }
        }
    }
}

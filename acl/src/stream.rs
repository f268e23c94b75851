//! Streams: in-order queues of work on a device.
//!
//! Work queued on a [`Stream`] (copies, fills, operators, event records, host
//! functions) runs in the order it was queued, asynchronously to the host:
//! the call that queues it returns before it runs. Work on different streams
//! may run concurrently; [`Stream::wait_event`] orders one stream after a
//! point of another. [`Stream::synchronize`] blocks the host until the
//! stream's queue is empty, and is where faults of queued work surface (the
//! 507xxx codes).
//!
//! Every device has a *default stream* ([`Device::default_stream`]), the
//! null stream of its context; [`Device::new_stream`] and [`Stream::new`]
//! create more.
//!
//! # Host work
//!
//! [`Stream::launch_host_fn`] and [`Stream::launch_callback`] queue Rust
//! closures that run on another thread when the stream reaches them; see
//! [`host_work`](crate::host_work) for the two mechanisms, what a closure may
//! not do, and how a panic is reported.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, PinnedHostBuffer, Runtime};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let host = PinnedHostBuffer::from_slice(&npu, &[1.0f32; 256])?;
//! let mut x = stream.alloc_zeros::<f32>(256)?;
//! stream.copy_htod(&host, &mut x)?;            // queued, returns at once
//! let done = stream.record_event()?;
//! stream.launch_host_fn(|| println!("the copy has run"))?;
//! done.synchronize()?;                         // the host waits here
//! assert_eq!(x.to_host_vec()?, vec![1.0; 256]);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, Event, release, result};
use std::sync::Arc;
use std::time::Duration;

/// Creation options for [`Stream::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamConfig {
    /// Priority, 0 (highest) to 7 (lowest) on current runtimes; the runtime
    /// clamps values out of range.
    pub priority: u32,
    /// `ACL_STREAM_*` flags (e.g. `ACL_STREAM_FAST_LAUNCH`). The runtime
    /// silently ignores unknown bits; [`Stream::new`] rejects them.
    pub flags: u32,
}

/// Every `ACL_STREAM_*` creation flag the headers define.
pub const KNOWN_STREAM_FLAGS: u32 = raw::ACL_STREAM_FAST_LAUNCH
    | raw::ACL_STREAM_FAST_SYNC
    | raw::ACL_STREAM_PERSISTENT
    | raw::ACL_STREAM_HUGE
    | raw::ACL_STREAM_CPU_SCHEDULE
    | raw::ACL_STREAM_DEVICE_USE_ONLY;

/// A stream on one device. Cheap to clone (an `Arc`).
///
/// `Send + Sync`: streams may be used from any thread; the runtime
/// serialises what is queued. Work queued from several threads runs in the
/// order the calls reached the runtime.
#[derive(Clone)]
pub struct Stream {
    inner: Arc<Inner>,
}

struct Inner {
    /// Null for the device's default stream.
    raw: raw::aclrtStream,
    device: Device,
    /// State shared by every handle of this queue: host-work panics not yet
    /// reported, and which host-work mechanism the queue uses.
    pub(crate) shared: Arc<crate::host_work::Shared>,
}

// SAFETY: `raw` is an opaque runtime handle usable from any thread.
unsafe impl Send for Inner {}
// SAFETY: as above; every use goes through the runtime.
unsafe impl Sync for Inner {}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("raw", &self.inner.raw)
            .field("device", &self.inner.device.ordinal())
            .finish()
    }
}

impl PartialEq for Stream {
    fn eq(&self, other: &Stream) -> bool {
        self.same_queue(other)
    }
}

impl Eq for Stream {}

impl Stream {
    /// Creates a stream on `device`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for flag bits the headers do not define
    /// (the runtime would ignore them silently);
    /// `ACL_ERROR_RT_NO_STREAM_RESOURCE` (207008) when the device's
    /// stream limit is reached.
    #[doc(alias = "aclrtCreateStreamWithConfig")]
    pub fn new(device: &Device, config: StreamConfig) -> Result<Stream> {
        let unknown = config.flags & !KNOWN_STREAM_FLAGS;
        if unknown != 0 {
            return Err(Error::invalid(
                "Stream::new",
                format!("unknown stream flag bits {unknown:#x} (known: {KNOWN_STREAM_FLAGS:#x})"),
            ));
        }
        device.bind()?;
        let raw = result::create_stream_with_config(config.priority, config.flags)?;
        Ok(Stream {
            inner: Arc::new(Inner {
                raw,
                device: device.clone(),
                shared: Arc::default(),
            }),
        })
    }

    pub(crate) fn default_for(device: &Device) -> Stream {
        Stream {
            inner: Arc::new(Inner {
                raw: std::ptr::null_mut(),
                device: device.clone(),
                shared: device.inner.default_stream_shared.clone(),
            }),
        }
    }

    /// The device the stream belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The raw handle, for C APIs; null for the default stream.
    pub fn as_raw(&self) -> raw::aclrtStream {
        self.inner.raw
    }

    pub(crate) fn shared(&self) -> &Arc<crate::host_work::Shared> {
        &self.inner.shared
    }

    /// Whether this is the only handle to the stream.
    pub(crate) fn is_last_handle(&self) -> bool {
        Arc::strong_count(&self.inner) == 1
    }

    /// Whether this is its device's default stream.
    pub fn is_default(&self) -> bool {
        self.inner.raw.is_null()
    }

    /// Whether two handles name the same queue.
    #[inline]
    pub fn same_queue(&self, other: &Stream) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
            || (self.inner.raw == other.inner.raw && self.inner.device == other.inner.device)
    }

    /// Blocks until every task queued so far has finished.
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of queued work (507xxx), and
    /// [`Error::HostFunctionPanicked`] when a host function panicked.
    #[doc(alias = "aclrtSynchronizeStream")]
    pub fn synchronize(&self) -> Result<()> {
        use std::sync::atomic::Ordering::{AcqRel, Acquire};
        self.inner.device.bind()?;
        let recorded = self.inner.shared.commits.load(Acquire);
        // SAFETY: the stream is live (held by `self`).
        unsafe { result::synchronize_stream(self.inner.raw)? };
        // Every access recorded before the wait has finished.
        self.inner.shared.synced.fetch_max(recorded, AcqRel);
        self.host_failure()
    }

    /// Like [`Stream::synchronize`], giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046) when the time runs out;
    /// [`Error::InvalidArgument`] for a zero timeout or one above `i32::MAX` ms.
    #[doc(alias = "aclrtSynchronizeStreamWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: Duration) -> Result<()> {
        let ms = crate::event::timeout_ms("Stream::synchronize_timeout", timeout)?;
        self.inner.device.bind()?;
        // SAFETY: the stream is live.
        unsafe { result::synchronize_stream_with_timeout(self.inner.raw, ms)? };
        self.host_failure()
    }

    fn host_failure(&self) -> Result<()> {
        match self.inner.shared.take_failure() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether every task queued so far has finished (without waiting).
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtStreamQuery`.
    #[doc(alias = "aclrtStreamQuery")]
    pub fn is_complete(&self) -> Result<bool> {
        self.inner.device.bind()?;
        // SAFETY: the stream is live.
        unsafe { result::stream_query(self.inner.raw) }
    }

    /// Makes work queued on this stream from now on wait until `event`
    /// completes (as last recorded before this call). The host does not wait.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an event without [`EventFlags::SYNC`](crate::EventFlags::SYNC)
    /// (or [`EventFlags::IPC`](crate::EventFlags::IPC), which waits for the
    /// latest record of any process); the runtime's error from
    /// `aclrtStreamWaitEvent`.
    #[doc(alias = "aclrtStreamWaitEvent")]
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        if !event.flags().contains(crate::EventFlags::SYNC)
            && event.flags() != crate::EventFlags::IPC
        {
            return Err(Error::invalid(
                "Stream::wait_event",
                "the event was created without EventFlags::SYNC (or EventFlags::IPC)",
            ));
        }
        if event.device() != self.device() {
            // hicann/runtime docs/zh/dev_guide/05_multi_device_programming.md:
            // waiting for an event of another device fails.
            return Err(Error::invalid(
                "Stream::wait_event",
                format!(
                    "the event belongs to device {} and the stream to device {}: CANN does \
                     not wait for events across devices; synchronize the event on the host",
                    event.device().ordinal(),
                    self.device().ordinal()
                ),
            ));
        }
        // Waiting for an event recorded in a capture under way joins that
        // capture: this stream's work is captured too from now on, until
        // the capture ends (the runtime's cross-stream capture).
        crate::graph::wait_joining("Stream::wait_event", self, event.capture(), || {
            self.inner.device.bind()?;
            // SAFETY: both handles are live.
            unsafe { result::stream_wait_event(self.inner.raw, event.as_raw()) }
        })?;
        event.note_waiter(self);
        Ok(())
    }

    /// Records a new event (sync + timed) at the current end of the queue.
    ///
    /// # Errors
    ///
    /// The runtime's error from creating or recording the event.
    #[doc(alias = "aclrtRecordEvent")]
    pub fn record_event(&self) -> Result<Event> {
        let event = Event::new(&self.inner.device, crate::EventFlags::default())?;
        event.record(self)?;
        Ok(event)
    }

    /// Orders this stream after everything queued so far on `other` (same
    /// device), without blocking the host.
    ///
    /// # Errors
    ///
    /// The runtime's error from recording or waiting.
    pub fn wait_for(&self, other: &Stream) -> Result<()> {
        crate::event::order_after(self, other)
    }
}

/// When a [`Stream::wait_value`] ends, comparing the 64-bit word in device
/// memory with the operand. A plain value: `Send + Sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueCondition {
    /// `word >= operand`.
    GreaterOrEqual,
    /// `word == operand`.
    Equal,
    /// `word & operand != 0`.
    AnyBitSet,
    /// `!(word | operand) != 0`: some bit is clear in both.
    Nor,
}

impl ValueCondition {
    fn flag(self) -> u32 {
        match self {
            ValueCondition::GreaterOrEqual => 0,
            ValueCondition::Equal => 1,
            ValueCondition::AnyBitSet => 2,
            ValueCondition::Nor => 3,
        }
    }
}

impl Stream {
    /// Aborts the work queued on this stream: tasks not yet started are
    /// dropped (a host function among them is never called), a task blocked
    /// in a wait gives up, and the call returns once the task in flight has
    /// finished. The stream takes work again afterwards. Data the dropped
    /// tasks would have written is not written; a wait for an event whose
    /// record was dropped fails; the closures of dropped host functions and
    /// callbacks are dropped without running.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// let npu = acl::Device::new(&acl::Runtime::init()?, 0)?;
    /// let stream = npu.new_stream()?;
    /// let (started, has_started) = std::sync::mpsc::channel::<()>();
    /// let (go, wait) = std::sync::mpsc::channel::<()>();
    /// stream.launch_host_fn(move || {                      // holds the stream
    ///     started.send(()).unwrap();
    ///     drop(wait.recv());
    /// })?;
    /// stream.launch_host_fn(|| unreachable!("dropped by the abort"))?;
    /// has_started.recv().unwrap();
    /// stream.abort()?;                 // the second one is dropped, not run
    /// go.send(()).unwrap();
    /// stream.synchronize()?;
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtStreamAbort`.
    #[doc(alias = "aclrtStreamAbort")]
    pub fn abort(&self) -> Result<()> {
        self.device().bind()?;
        // SAFETY: the stream is live (held by `self`).
        unsafe { result::stream_abort(self.as_raw()) }?;
        crate::host_work::drop_aborted_on_stream(&self.inner.shared);
        Ok(())
    }

    /// Queues the write of `value` to the 64-bit word at `dev_addr`.
    ///
    /// # Safety
    ///
    /// `dev_addr` points at 8 bytes of device memory of this stream's
    /// device that stay allocated until the write has run, and no other
    /// queued work reads or writes them unordered with it (the write is not
    /// tracked by this crate's buffers).
    ///
    /// # Errors
    ///
    /// The runtime's error (107000 when `dev_addr` is not device memory).
    #[doc(alias = "aclrtValueWrite")]
    pub unsafe fn write_value(&self, dev_addr: *mut std::ffi::c_void, value: u64) -> Result<()> {
        self.device().bind()?;
        // SAFETY: the stream is live; the caller's contract covers `dev_addr`.
        unsafe { result::value_write(dev_addr, value, 0, self.as_raw()) }
    }

    /// Queues a wait: work queued on this stream after it runs once the
    /// 64-bit word at `dev_addr` meets `condition` against `operand`
    /// (written by another stream, or by the host). The host does not wait.
    ///
    /// # Safety
    ///
    /// `dev_addr` points at 8 bytes of device memory of this stream's
    /// device that stay allocated until the wait has ended.
    ///
    /// # Errors
    ///
    /// The runtime's error (107000 when `dev_addr` is not device memory).
    #[doc(alias = "aclrtValueWait")]
    pub unsafe fn wait_value(
        &self,
        dev_addr: *mut std::ffi::c_void,
        condition: ValueCondition,
        operand: u64,
    ) -> Result<()> {
        self.device().bind()?;
        // SAFETY: the stream is live; the caller's contract covers `dev_addr`.
        unsafe { result::value_wait(dev_addr, operand, condition.flag(), self.as_raw()) }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.raw.is_null() {
            return;
        }
        let raw = self.raw as usize;
        let (device, shared) = (self.device.clone(), self.shared.clone());
        // Inside a host function (of this very stream, possibly) the
        // synchronisation below would deadlock: release on another thread.
        release::outside_host_fn(move || {
            let raw = raw as raw::aclrtStream;
            let outcome = device.bind().and_then(|()| {
                // The runtime expects queued work to be finished before a
                // stream is destroyed, and its callback thread unsubscribed.
                // SAFETY: this was the last handle; the stream is live until
                // here and used by no one else.
                unsafe {
                    let synced = result::synchronize_stream(raw);
                    let unsubscribed = crate::host_work::unsubscribe(&device, raw, &shared);
                    let destroyed = result::destroy_stream(raw);
                    synced.and(unsubscribed).and(destroyed)
                }
            });
            if let Err(e) = outcome {
                release::record("Stream", e);
            }
            if let Some(e) = shared.take_failure() {
                release::record("Stream", e);
            }
        });
    }
}

//! Events: markers in a stream's queue.
//!
//! An [`Event`] is *recorded* on a stream ([`Event::record`]); it completes
//! when the stream's work queued before the record has finished. The host
//! can poll ([`Event::is_complete`]) or wait ([`Event::synchronize`]);
//! another stream can wait for it without blocking the host
//! ([`Stream::wait_event`](crate::Stream::wait_event)). Events created with
//! [`EventFlags::TIMING`] carry a timestamp, so two of them measure the time
//! between two points of a stream ([`Event::elapsed_since`]).
//!
//! Events are relatively costly to create (the runtime limits them per
//! device); the crate keeps a per-device pool of synchronisation events for
//! its own cross-stream ordering.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let start = stream.record_event()?;
//! let buf = stream.alloc_zeros::<u8>(1 << 20)?;
//! let end = stream.record_event()?;
//! end.synchronize()?;
//! println!("zeroing 1 MiB took {:?}", end.elapsed_since(&start)?.unsigned_abs());
//! # drop(buf);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, Stream, release, result};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Event creation flags (`ACL_EVENT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventFlags(u32);

impl EventFlags {
    /// `ACL_EVENT_SYNC`: usable by `Stream::wait_event` and resettable.
    pub const SYNC: EventFlags = EventFlags(raw::ACL_EVENT_SYNC);
    /// `ACL_EVENT_TIME_LINE`: records a timestamp (costs some performance).
    pub const TIMING: EventFlags = EventFlags(raw::ACL_EVENT_TIME_LINE);
    /// `ACL_EVENT_CAPTURE_STREAM_PROGRESS`.
    pub const CAPTURE_STREAM_PROGRESS: EventFlags =
        EventFlags(raw::ACL_EVENT_CAPTURE_STREAM_PROGRESS);
    /// `ACL_EVENT_DEVICE_USE_ONLY`: only devices wait on it, never the host.
    pub const DEVICE_USE_ONLY: EventFlags = EventFlags(raw::ACL_EVENT_DEVICE_USE_ONLY);
    /// `ACL_EVENT_IPC`, alone: an event other processes wait for, through
    /// the handle [`crate::ipc::event_handle`] gives (see [`crate::ipc`]).
    /// It cannot be timed, reset or used in a graph capture.
    pub const IPC: EventFlags = EventFlags(raw::ACL_EVENT_IPC);

    /// The raw flag bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Flags from raw bits, passed to the runtime unchecked (it validates them).
    pub const fn from_bits(bits: u32) -> EventFlags {
        EventFlags(bits)
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: EventFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for EventFlags {
    type Output = EventFlags;
    fn bitor(self, rhs: EventFlags) -> EventFlags {
        EventFlags(self.0 | rhs.0)
    }
}

impl Default for EventFlags {
    /// Synchronising and timed.
    fn default() -> EventFlags {
        EventFlags::SYNC | EventFlags::TIMING
    }
}

/// An event on one device. Cheap to clone (an `Arc`); destroyed after the
/// last handle, once the host no longer waits on it.
///
/// `Send + Sync`: events may be recorded, queried and waited on from any
/// thread; the runtime serialises them.
#[derive(Clone)]
pub struct Event {
    inner: Arc<Inner>,
}

struct Inner {
    raw: raw::aclrtEvent,
    flags: EventFlags,
    device: Device,
    /// Streams that queued a wait on it, kept only where destroying an
    /// event with queued waits is not allowed (CANN before 8.0.RC2): they
    /// are waited for before the event is destroyed.
    waiters: Mutex<Vec<Stream>>,
    /// The capture its last record was part of (a record on a capturing
    /// stream): a stream that waits for it joins that capture.
    captured_in: Mutex<std::sync::Weak<crate::graph::CaptureRecord>>,
}

/// Whether events with queued waits must not be destroyed (no Ex events).
pub(crate) fn legacy_events() -> bool {
    HAS_EX.load(std::sync::atomic::Ordering::Relaxed) == 2
}

// SAFETY: `raw` is an opaque runtime handle usable from any thread.
unsafe impl Send for Inner {}
// SAFETY: as above; every use goes through the runtime.
unsafe impl Sync for Inner {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("raw", &self.inner.raw)
            .field("flags", &self.inner.flags)
            .field("device", &self.inner.device.ordinal())
            .finish()
    }
}

impl Event {
    /// Creates an event with `flags` ([`EventFlags::default`] is sync + timed).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_PARAM_INVALID` (107000) for invalid flags; the runtime's
    /// error when the device's event limit is reached.
    ///
    /// With CANN 8.0.RC2 and later the event is made by
    /// `aclrtCreateEventExWithFlag`, whose records and waits behave as
    /// described here and which may be dropped with waits still queued;
    /// older libraries get `aclrtCreateEventWithFlag` (see the module docs).
    #[doc(alias = "aclrtCreateEventWithFlag")]
    #[doc(alias = "aclrtCreateEventExWithFlag")]
    pub fn new(device: &Device, flags: EventFlags) -> Result<Event> {
        device.bind()?;
        let raw = create_reusable_event(flags.bits())?;
        Ok(Event::from_raw(device, raw, flags))
    }

    /// An event over `raw`, which it destroys when dropped (a new one, or
    /// an event of an IPC handle, for [`crate::ipc::open_event`]).
    pub(crate) fn from_raw(device: &Device, raw: raw::aclrtEvent, flags: EventFlags) -> Event {
        Event {
            inner: Arc::new(Inner {
                raw,
                flags,
                device: device.clone(),
                waiters: Mutex::new(Vec::new()),
                captured_in: Mutex::new(std::sync::Weak::new()),
            }),
        }
    }

    /// The flags it was created with.
    pub fn flags(&self) -> EventFlags {
        self.inner.flags
    }

    /// The device it belongs to.
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The raw handle, for C APIs.
    pub fn as_raw(&self) -> raw::aclrtEvent {
        self.inner.raw
    }

    /// Records the event on `stream`: it completes when the work queued on
    /// `stream` so far has finished. Re-recording moves it to the new point.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the stream is on another device; the
    /// runtime's error from `aclrtRecordEvent`.
    #[doc(alias = "aclrtRecordEvent")]
    pub fn record(&self, stream: &Stream) -> Result<()> {
        if stream.device() != &self.inner.device {
            return Err(Error::invalid(
                "Event::record",
                format!(
                    "the event belongs to device {} and the stream to device {}",
                    self.inner.device.ordinal(),
                    stream.device().ordinal()
                ),
            ));
        }
        self.inner.device.bind()?;
        // One step with the stream's capture state (see `memory::gate`).
        let _gate = stream.shared().capture.gate.enter();
        // SAFETY: both handles are live (held by `self` and `stream`).
        unsafe { result::record_event(self.inner.raw, stream.as_raw()) }?;
        *crate::lock::lock(&self.inner.captured_in) = stream
            .shared()
            .capture
            .current()
            .map_or_else(std::sync::Weak::new, |r| Arc::downgrade(&r));
        Ok(())
    }

    /// The capture under way that its last record was part of.
    pub(crate) fn capture(&self) -> Option<Arc<crate::graph::CaptureRecord>> {
        crate::lock::lock(&self.inner.captured_in).upgrade()
    }

    /// Whether the recorded work has completed (without waiting).
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtQueryEventStatus`.
    #[doc(alias = "aclrtQueryEventStatus")]
    pub fn is_complete(&self) -> Result<bool> {
        self.inner.device.bind()?;
        // SAFETY: the event is live.
        unsafe { result::query_event_status(self.inner.raw) }
    }

    /// Blocks the calling thread until the recorded work has completed.
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the awaited work.
    #[doc(alias = "aclrtSynchronizeEvent")]
    pub fn synchronize(&self) -> Result<()> {
        self.inner.device.bind()?;
        // SAFETY: the event is live.
        unsafe { result::synchronize_event(self.inner.raw) }
    }

    /// Like [`Event::synchronize`], giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` (507047) when the time runs out;
    /// [`Error::InvalidArgument`] for a zero timeout or one above `i32::MAX` ms.
    #[doc(alias = "aclrtSynchronizeEventWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: Duration) -> Result<()> {
        let ms = timeout_ms("Event::synchronize_timeout", timeout)?;
        self.inner.device.bind()?;
        // SAFETY: the event is live.
        unsafe { result::synchronize_event_with_timeout(self.inner.raw, ms) }
    }

    /// The time from `start` to this event, both recorded with
    /// [`EventFlags::TIMING`] and complete: the end's timestamp minus the
    /// start's, so it is **negative** when `start` completed after this
    /// event (the runtime's `aclrtEventElapsedTime` reports the signed
    /// difference; hicann/runtime `src/acl/aclrt_impl/event.cpp`,
    /// `aclrtEventElapsedTimeImpl`, passes `rtEventElapsedTime`'s value
    /// through). The runtime measures in `f32` milliseconds, so the value has
    /// that resolution (about 0.1 µs near one second).
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::{Device, Runtime};
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let stream = npu.new_stream()?;
    /// let (a, b) = (stream.record_event()?, stream.record_event()?);
    /// b.synchronize()?;
    /// assert!(b.elapsed_since(&a)? >= acl::event::SignedDuration::ZERO);
    /// assert!(a.elapsed_since(&b)? <= acl::event::SignedDuration::ZERO);
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID` (107006) when an event has not
    /// completed yet; [`Error::InvalidArgument`] when an event lacks the
    /// timing flag or the runtime reports a non-finite time.
    #[doc(alias = "aclrtEventElapsedTime")]
    pub fn elapsed_since(&self, start: &Event) -> Result<SignedDuration> {
        for (which, e) in [("start", start), ("end", self)] {
            if !e.flags().contains(EventFlags::TIMING) {
                return Err(Error::invalid(
                    "Event::elapsed_since",
                    format!("the {which} event was created without EventFlags::TIMING"),
                ));
            }
        }
        self.inner.device.bind()?;
        // SAFETY: both events are live.
        let ms = unsafe { result::event_elapsed_time(start.inner.raw, self.inner.raw)? };
        SignedDuration::from_millis_f32(ms).ok_or_else(|| {
            Error::invalid(
                "Event::elapsed_since",
                format!("the runtime reported a non-finite time ({ms} ms)"),
            )
        })
    }
}

/// A time difference that may be negative, in whole nanoseconds: what
/// [`Event::elapsed_since`] returns (negative when the start event completed
/// after the end event).
///
/// Ordered and compared like the signed number of nanoseconds it holds;
/// [`SignedDuration::to_duration`] converts a non-negative one to a
/// [`Duration`], [`SignedDuration::unsigned_abs`] gives the magnitude.
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SignedDuration {
    nanos: i64,
}

impl SignedDuration {
    /// No time at all.
    pub const ZERO: SignedDuration = SignedDuration { nanos: 0 };

    /// A difference of `nanos` nanoseconds (negative: backwards).
    pub const fn from_nanos(nanos: i64) -> Self {
        SignedDuration { nanos }
    }

    /// From the runtime's `f32` milliseconds, rounded to the nearest
    /// nanosecond and saturating at ±`i64::MAX` ns (about 292 years);
    /// `None` for NaN or an infinity.
    fn from_millis_f32(ms: f32) -> Option<Self> {
        // A float-to-int `as` saturates; finite is checked first.
        ms.is_finite()
            .then(|| Self::from_nanos((f64::from(ms) * 1e6).round() as i64))
    }

    /// The signed number of nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.nanos
    }

    /// The signed number of seconds, as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.nanos as f64 / 1e9
    }

    /// The signed number of milliseconds, as a float (the unit of
    /// `aclrtEventElapsedTime`).
    pub fn as_millis_f64(self) -> f64 {
        self.nanos as f64 / 1e6
    }

    /// Whether the difference is below zero (the start came after the end).
    pub const fn is_negative(self) -> bool {
        self.nanos < 0
    }

    /// The magnitude, whichever the direction.
    pub const fn unsigned_abs(self) -> Duration {
        Duration::from_nanos(self.nanos.unsigned_abs())
    }

    /// The difference as a [`Duration`]; `None` when it is negative.
    pub const fn to_duration(self) -> Option<Duration> {
        if self.nanos < 0 {
            None
        } else {
            Some(self.unsigned_abs())
        }
    }
}

impl std::ops::Neg for SignedDuration {
    type Output = SignedDuration;

    /// The opposite direction (saturating at `i64::MIN` ns).
    fn neg(self) -> Self {
        Self::from_nanos(self.nanos.saturating_neg())
    }
}

impl From<Duration> for SignedDuration {
    /// A non-negative difference, saturating at `i64::MAX` ns.
    fn from(d: Duration) -> Self {
        Self::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }
}

impl Event {
    /// Notes that `stream` queued a wait on this event (see `waiters`).
    pub(crate) fn note_waiter(&self, stream: &Stream) {
        if legacy_events() {
            let mut w = crate::lock::lock(&self.inner.waiters);
            if !w.iter().any(|s| s.same_queue(stream)) {
                w.push(stream.clone());
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        let waiters = std::mem::take(self.waiters.get_mut().unwrap_or_else(|p| p.into_inner()));
        let (raw, device) = (self.raw as usize, self.device.clone());
        release::outside_host_fn(move || {
            for s in waiters {
                // Older CANN: the queued waits must have run before the destroy.
                if let Err(e) = s.synchronize() {
                    release::record("Event", e);
                }
            }
            let outcome = device.bind().and_then(|()| {
                // SAFETY: the last handle is gone, so nothing waits on it from
                // the host; queued waits may remain only where the runtime
                // allows it (Ex events; legacy events waited for above).
                unsafe { result::destroy_event(raw as raw::aclrtEvent) }
            });
            if let Err(e) = outcome {
                release::record("Event", e);
            }
        });
    }
}

/// Converts a timeout to the runtime's milliseconds (`> 0`, `-1` for none).
pub(crate) fn timeout_ms(function: &'static str, timeout: Duration) -> Result<i32> {
    let ms = timeout.as_millis();
    if ms == 0 {
        return Err(Error::invalid(
            function,
            "the timeout must be at least 1 ms",
        ));
    }
    i32::try_from(ms)
        .map_err(|_| Error::invalid(function, format!("the timeout {ms} ms exceeds i32::MAX ms")))
}

/// Whether the library has `aclrtCreateEventExWithFlag` (0 unknown, 1 yes,
/// 2 no).
static HAS_EX: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Creates an event with the re-record semantics the crate relies on.
///
/// CANN documents them only for `aclrtCreateEventExWithFlag` events
/// (hicann/runtime `docs/zh/api_ref/07_event_management.md`, aclrtRecordEvent:
/// each record overwrites the event, and `aclrtStreamWaitEvent` waits for the
/// record made before it, unaffected by later records; destroying one whose
/// waits are still queued is allowed and does not block). Older CANN (before
/// 8.0.RC2) lacks that function: there `aclrtCreateEvent` events are used,
/// which take a new hardware event at every record (so a wait also sees the
/// latest record), whereas `aclrtCreateEventWithFlag(ACL_EVENT_SYNC)` events
/// keep one fixed id and need `aclrtResetEvent` after each wait.
pub(crate) fn create_reusable_event(flags: u32) -> Result<raw::aclrtEvent> {
    use std::sync::atomic::Ordering::Relaxed;
    if flags == raw::ACL_EVENT_IPC {
        // Only the Ex call makes IPC events (`EventCreateEx`).
        return result::create_event_ex_with_flag(flags);
    }
    if flags & raw::ACL_EVENT_SYNC == 0 {
        // Not waitable: the re-record semantics do not matter.
        return result::create_event_with_flag(flags);
    }
    if HAS_EX.load(Relaxed) != 2 {
        match result::create_event_ex_with_flag(flags) {
            Ok(e) => {
                HAS_EX.store(1, Relaxed);
                return Ok(e);
            }
            Err(Error::Load(_)) => HAS_EX.store(2, Relaxed),
            Err(e) => return Err(e),
        }
    }
    if flags == raw::ACL_EVENT_SYNC {
        result::create_event()
    } else {
        result::create_event_with_flag(flags)
    }
}

/// The per-device pool of synchronising events the crate uses to order
/// work across streams (made by [`create_reusable_event`]). An event goes
/// back to the pool when the last mark holding it is dropped, possibly with
/// waits on it still queued: a wait captures the record made before it, so
/// re-recording a pooled event later does not move it.
#[derive(Default)]
pub(crate) struct EventPool {
    free: Mutex<Vec<usize>>,
}

impl EventPool {
    /// An event from the pool (or a new one). The device must be bound.
    pub(crate) fn acquire(&self) -> Result<raw::aclrtEvent> {
        let pooled = crate::lock::lock(&self.free).pop();
        match pooled {
            Some(raw) => Ok(raw as raw::aclrtEvent),
            None => create_reusable_event(raw::ACL_EVENT_SYNC),
        }
    }

    /// Returns an event to the pool.
    pub(crate) fn release(&self, raw: raw::aclrtEvent) {
        crate::lock::lock(&self.free).push(raw as usize);
    }

    /// Destroys every pooled event (the device must be bound).
    pub(crate) fn destroy_all(&self) {
        let all = std::mem::take(&mut *crate::lock::lock(&self.free));
        for raw in all {
            // SAFETY: pooled events have no host waiters; the device's work
            // is finished when its last handle goes.
            if let Err(e) = unsafe { result::destroy_event(raw as raw::aclrtEvent) } {
                release::record("Event", e);
            }
        }
    }
}

/// Orders `later` after the work queued so far on `earlier`, on the
/// device: an event of the pool recorded on `earlier` and waited for by
/// `later` (across devices too: the wait is queued on `later`'s device). No
/// host thread blocks. No-op when they are the same stream.
pub(crate) fn order_after(later: &Stream, earlier: &Stream) -> Result<()> {
    if later.same_queue(earlier) {
        return Ok(());
    }
    if later.device() != earlier.device() {
        // hicann/runtime docs/zh/dev_guide/05_multi_device_programming.md:
        // a stream cannot wait for an event of another device.
        if earlier.is_complete()? {
            return Ok(());
        }
        return Err(Error::invalid(
            "Stream::wait_for",
            format!(
                "the streams are on devices {} and {}: CANN cannot make a stream wait for \
                 another device's work; synchronize the other stream first",
                later.device().ordinal(),
                earlier.device().ordinal()
            ),
        ));
    }
    let record = earlier.shared().capture.current();
    let ev = {
        let _gate = earlier.shared().capture.gate.enter();
        crate::memory::track::PooledEvent::record(earlier)?
    };
    // Waiting for an event of a capture joins it.
    crate::graph::wait_joining("Stream::wait_for", later, record, || {
        later.device().bind()?;
        // SAFETY: the event (held by `ev`) and the stream are live.
        unsafe { result::stream_wait_event(later.as_raw(), ev.as_raw()) }
    })
}

#[cfg(test)]
mod signed_duration_tests {
    use super::SignedDuration;
    use std::time::Duration;

    #[test]
    fn runtime_milliseconds_convert_with_their_sign_to_the_nearest_nanosecond() {
        let d = SignedDuration::from_millis_f32(-1.5).unwrap();
        assert_eq!(d.as_nanos(), -1_500_000);
        assert!(d.is_negative());
        assert_eq!(d.to_duration(), None);
        assert_eq!(d.unsigned_abs(), Duration::from_micros(1500));
        assert_eq!(-d, SignedDuration::from(Duration::from_micros(1500)));
        assert_eq!((-d).to_duration(), Some(Duration::from_micros(1500)));
        assert_eq!(d.as_millis_f64(), -1.5);
        assert_eq!(d.as_secs_f64(), -0.0015);
        assert_eq!(
            SignedDuration::from_millis_f32(0.0),
            Some(SignedDuration::ZERO)
        );
        assert!(SignedDuration::from_millis_f32(-0.25).unwrap() < SignedDuration::ZERO);
    }

    #[test]
    fn non_finite_runtime_times_are_rejected_and_huge_ones_saturate() {
        assert_eq!(SignedDuration::from_millis_f32(f32::NAN), None);
        assert_eq!(SignedDuration::from_millis_f32(f32::INFINITY), None);
        assert_eq!(SignedDuration::from_millis_f32(f32::NEG_INFINITY), None);
        assert_eq!(
            SignedDuration::from_millis_f32(f32::MAX)
                .unwrap()
                .as_nanos(),
            i64::MAX
        );
        assert_eq!(
            SignedDuration::from_millis_f32(f32::MIN)
                .unwrap()
                .as_nanos(),
            i64::MIN
        );
        assert_eq!(
            -SignedDuration::from_nanos(i64::MIN),
            SignedDuration::from_nanos(i64::MAX)
        );
        assert_eq!(SignedDuration::from(Duration::MAX).as_nanos(), i64::MAX);
    }
}

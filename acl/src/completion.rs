//! Stream and event completion as [`Future`]s (feature `async`).
//!
//! A server that runs a device step per request should not park a thread in
//! [`Stream::synchronize`] for each one. [`Stream::completion`] returns a
//! future that resolves when the work queued on the stream so far has
//! finished; [`Event::completion`] one that resolves when a recorded event
//! has completed. They work with any executor (this crate depends on none):
//! the waker is called from the runtime's own thread, by a host function
//! (`aclrtLaunchHostFunc`) queued behind the work — or a non-blocking
//! callback (`aclrtLaunchCallback`) on a stream that already runs callbacks,
//! since the runtime allows one mechanism per stream.
//!
//! The result is the runtime's verdict on an event recorded with the work:
//! `Ok(())`, or the fault of the awaited work (as [`Event::synchronize`]
//! would report it). Polling never blocks while the work runs; dropping the
//! future early is fine (the wake-up then wakes nobody).
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime};
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! #     rt.block_on(f)
//! # }
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let x = stream.clone_from_host(&[1.0f32, 2.0, 3.0])?;
//! let mut y = stream.alloc_zeros::<f32>(3)?;
//! stream.copy_dtod(&x, &mut y)?;
//! block_on(async {
//!     stream.completion()?.await?;
//!     assert_eq!(y.to_host_vec()?, [1.0, 2.0, 3.0]);
//!     Ok::<(), acl::Error>(())
//! })?;
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::Result;
use crate::event::{Event, EventFlags};
use crate::host_work::CallbackMode;
use crate::{Stream, lock};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// The state a completion shares with its wake-up.
#[derive(Debug, Default)]
struct Signal {
    /// Whether the wake-up ran (or was dropped without running), and the
    /// waker of the last poll.
    state: Mutex<(bool, Option<Waker>)>,
}

impl Signal {
    fn fire(&self) {
        let waker = {
            let mut s = lock::lock(&self.state);
            s.0 = true;
            s.1.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// Fires its signal when run or dropped: a wake-up the runtime discards
/// (its launch refused, the stream torn down) still wakes the future, which
/// then asks the event.
struct WakeUp(Arc<Signal>);

impl Drop for WakeUp {
    fn drop(&mut self) {
        self.0.fire();
    }
}

/// A future that resolves when the work before it on a stream has finished
/// (see the [module docs](self)).
///
/// `Send + Sync`: it holds an [`Event`] and shared state behind a lock.
#[derive(Debug)]
#[must_use = "a completion does nothing unless awaited"]
pub struct Completion {
    event: Event,
    signal: Arc<Signal>,
    /// The stream awaited, whose host-function panics are reported as the
    /// result (as [`Stream::synchronize`] reports them).
    stream: Stream,
}

impl Completion {
    /// Records a fresh event on `stream` and queues the wake-up behind it.
    fn on(stream: &Stream, event: Event) -> Result<Completion> {
        let signal = Arc::new(Signal::default());
        let wake = WakeUp(signal.clone());
        let run = move || drop(wake);
        if stream.shared().uses_callbacks() {
            stream.launch_callback(CallbackMode::NonBlocking, run)?;
        } else {
            stream.launch_host_fn(run)?;
        }
        Ok(Completion {
            event,
            signal,
            stream: stream.clone(),
        })
    }
}

impl Future for Completion {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        let fired = {
            let mut s = lock::lock(&this.signal.state);
            if !s.0 {
                // Registered under the lock: a wake-up that fires after this
                // sees the waker.
                s.1 = Some(cx.waker().clone());
            }
            s.0
        };
        if !fired {
            return Poll::Pending;
        }
        let done = match this.event.is_complete() {
            Ok(true) => Ok(()),
            Err(e) => Err(e),
            // The wake-up was discarded before the work finished (the
            // runtime refused or dropped it): nothing will wake us again, so
            // the event decides, waiting for it.
            Ok(false) => this.event.synchronize(),
        };
        Poll::Ready(
            done.and_then(|()| match this.stream.shared().take_failure() {
                Some(e) => Err(e),
                None => Ok(()),
            }),
        )
    }
}

impl Stream {
    /// A future that resolves when the work queued on this stream so far
    /// has finished, with its fault if it failed (feature `async`; see
    /// [`crate::completion`]).
    ///
    /// # Errors
    ///
    /// The runtime's error from creating or recording the event or from
    /// queueing the wake-up (`aclrtLaunchHostFunc`/`aclrtLaunchCallback`);
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) inside a
    /// host function. The future's own output is the awaited work's fault.
    #[doc(alias = "aclrtLaunchHostFunc")]
    pub fn completion(&self) -> Result<Completion> {
        let event = Event::new(self.device(), EventFlags::SYNC)?;
        event.record(self)?;
        Completion::on(self, event)
    }
}

impl Event {
    /// A future that resolves when this event, recorded on `stream`, has
    /// completed (feature `async`). The wake-up is queued on `stream` now,
    /// so record the event there first; the future then resolves when the
    /// event's work has finished, reported as [`Event::synchronize`] would.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when
    /// `stream` is on another device; the runtime's error from queueing the
    /// wake-up.
    pub fn completion(&self, stream: &Stream) -> Result<Completion> {
        if stream.device() != self.device() {
            return Err(crate::Error::invalid(
                "Event::completion",
                format!(
                    "the event belongs to device {} and the stream to device {}",
                    self.device().ordinal(),
                    stream.device().ordinal()
                ),
            ));
        }
        Completion::on(stream, self.clone())
    }
}

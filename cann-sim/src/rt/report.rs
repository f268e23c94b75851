//! Host callbacks: the threads that run them and the reports queued for them.
//!
//! The real model (`docs/zh/api_ref/12_execution_control.md`):
//!
//! - `aclrtLaunchCallback` needs a user thread bound to the stream with
//!   `aclrtSubscribeReport(threadId, stream)` (`threadId` is that thread's
//!   `pthread_self()`); when the stream reaches the callback task, the
//!   callback is handed to that thread, which runs it inside its next
//!   `aclrtProcessReport(timeout)`. With `ACL_CALLBACK_BLOCK` later tasks
//!   of the stream wait until it returns.
//! - `aclrtLaunchHostFunc` needs no subscription: the runtime creates one
//!   host-function thread per context and runs the function there; later
//!   tasks always wait for it.
//!
//! Each such thread has a [`Subscriber`]: a queue of [`Report`]s. A worker
//! posts a report and (when blocking) waits for its completion; the thread
//! runs reports with no simulator lock held.

use super::completion::Completion;
use super::error::{Error, ErrorKind};
use super::stream::{Shared, Stream, Subscription};
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, LazyLock, Weak};
use std::time::Instant;

/// A user function, called once on a callback or host-function thread
/// (the exports wrap the C function and its argument in it).
pub struct HostFn(Box<dyn FnOnce() + Send>);

impl HostFn {
    /// `f`, to be called once.
    pub fn new(f: impl FnOnce() + Send + 'static) -> HostFn {
        HostFn(Box::new(f))
    }
}

impl std::fmt::Debug for HostFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostFn")
    }
}

/// A callback handed to a thread.
pub struct Report {
    /// What to call.
    pub f: HostFn,
    /// Completed when it returned, for blocking callbacks.
    pub done: Option<Arc<Completion>>,
    /// The stream it came from.
    pub stream: Weak<Shared>,
    /// Its task's seq on that stream.
    pub seq: u64,
}

struct SubQueue {
    reports: VecDeque<Report>,
    /// Streams bound to this thread.
    streams: usize,
    closed: bool,
}

/// A thread that runs callbacks.
pub struct Subscriber {
    /// The device of its streams (one device per thread).
    pub device: u32,
    q: Mutex<SubQueue>,
    cv: Condvar,
}

/// What [`Subscriber::take`] found.
pub enum Take {
    /// Reports to run.
    Reports(Vec<Report>),
    /// The deadline passed with none.
    TimedOut,
    /// The subscriber was closed.
    Closed,
}

impl Subscriber {
    /// A subscriber for a thread serving `device`.
    pub fn new(device: u32) -> Subscriber {
        Subscriber {
            device,
            q: Mutex::new(SubQueue {
                reports: VecDeque::new(),
                streams: 0,
                closed: false,
            }),
            cv: Condvar::new(),
        }
    }

    /// Queues a report.
    ///
    /// # Errors
    ///
    /// A message when the subscriber is closed.
    pub fn post(&self, r: Report) -> Result<(), String> {
        let mut q = self.q.lock();
        if q.closed {
            return Err(
                "the thread that runs the stream's callbacks is gone; the callback was \
                        not called"
                    .into(),
            );
        }
        q.reports.push_back(r);
        self.cv.notify_all();
        Ok(())
    }

    /// Takes every queued report, waiting until there is one, `deadline`
    /// passes or the subscriber is closed.
    pub fn take(&self, deadline: Option<Instant>) -> Take {
        let mut q = self.q.lock();
        loop {
            if !q.reports.is_empty() {
                return Take::Reports(q.reports.drain(..).collect());
            }
            if q.closed {
                return Take::Closed;
            }
            match deadline {
                Some(d) => {
                    if self.cv.wait_until(&mut q, d).timed_out() && q.reports.is_empty() {
                        return if q.closed {
                            Take::Closed
                        } else {
                            Take::TimedOut
                        };
                    }
                }
                None => self.cv.wait(&mut q),
            }
        }
    }

    /// Closes the subscriber: later posts fail and queued reports are
    /// cancelled.
    pub fn close(&self, why: &str) {
        let dropped: Vec<Report> = {
            let mut q = self.q.lock();
            q.closed = true;
            self.cv.notify_all();
            q.reports.drain(..).collect()
        };
        for r in dropped {
            cancel(r, why);
        }
    }

    /// Cancels the queued reports of `stream`.
    fn cancel_stream(&self, stream: &Arc<Shared>, why: &str) {
        let dropped: Vec<Report> = {
            let mut q = self.q.lock();
            let (mine, rest): (Vec<Report>, Vec<Report>) = q
                .reports
                .drain(..)
                .partition(|r| r.stream.as_ptr() == Arc::as_ptr(stream));
            q.reports = rest.into();
            mine
        };
        for r in dropped {
            cancel(r, why);
        }
    }
}

/// Cancels a report that will never run: its waiter (if blocking) is
/// released and its stream records the fault.
fn cancel(r: Report, why: &str) {
    let msg = format!(
        "aclrtLaunchCallback task #{}: the callback was never called: {why}",
        r.seq
    );
    if let Some(done) = &r.done {
        done.cancel(msg);
    } else if let Some(s) = r.stream.upgrade() {
        s.record_fault(
            ErrorKind::DrvInternal,
            format!("{msg} (on {})", s.label()),
            r.seq,
        );
    }
}

thread_local! {
    /// The stream whose blocking callback this thread is running (its
    /// `Shared` address), 0 for none: calls that wait for that stream from
    /// inside the callback would deadlock.
    static RUNNING_FOR: Cell<usize> = const { Cell::new(0) };
    /// The stream (its unique id) and task number of the blocking callback
    /// or host function this thread is running, (0, 0) for none.
    static RUNNING_TASK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// The stream (its unique id) and task number of the blocking callback or
/// host function the calling thread is running: that stream's later tasks
/// wait for it to return.
pub fn running_blocking_task() -> Option<(u64, u64)> {
    RUNNING_TASK
        .try_with(Cell::get)
        .ok()
        .filter(|&(uid, _)| uid != 0)
}

/// The stream (its `Shared` address) whose blocking callback the calling
/// thread is running, or 0.
pub fn running_blocking_callback_of() -> usize {
    RUNNING_FOR.try_with(Cell::get).unwrap_or(0)
}

/// Runs one report on the calling thread: the user function with no
/// simulator lock held, then its completion.
pub fn run(r: Report) {
    let marker = if r.done.is_some() {
        r.stream.as_ptr() as usize
    } else {
        0
    };
    let previous = RUNNING_FOR.try_with(|c| c.replace(marker)).unwrap_or(0);
    let task = match (&r.done, r.stream.upgrade()) {
        (Some(_), Some(s)) => (s.uid, r.seq),
        _ => (0, 0),
    };
    let previous_task = RUNNING_TASK.try_with(|c| c.replace(task)).unwrap_or((0, 0));
    let f = r.f.0;
    // A panic cannot unwind out of an `extern "C"` function (Rust aborts),
    // but catch one anyway so that nothing unwinds into the simulator's
    // thread loops.
    let _ = catch_unwind(AssertUnwindSafe(f));
    let _ = RUNNING_FOR.try_with(|c| c.set(previous));
    let _ = RUNNING_TASK.try_with(|c| c.set(previous_task));
    if let Some(done) = r.done {
        done.complete(crate::state::now_ns());
    }
}

/// User subscriber threads, by `pthread_self()` id.
static USER: LazyLock<Mutex<HashMap<u64, Arc<Subscriber>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Most user threads that may be subscribed at once
/// (`docs/zh/api_ref/12_execution_control.md`, aclrtSubscribeReport).
pub const MAX_SUBSCRIBED_THREADS: usize = 1024;

/// Binds user thread `tid` to `stream` (`aclrtSubscribeReport`).
///
/// # Errors
///
/// The runtime's code and a message (`CbSubscribe::Insert`,
/// `src/runtime/core/src/utils/subscribe.cc`): the stream already has a
/// callback thread → `ACL_ERROR_RT_STREAM_SUBSCRIBE` (107011); the thread
/// serves another device → `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012); too
/// many threads → 507000 (`RT_ERROR_SUBSCRIBE_GROUP`).
pub fn subscribe(tid: u64, stream: &Stream) -> Result<(), Error> {
    let mut users = USER.lock();
    let mut sub = stream.shared.subscription.lock();
    match *sub {
        Subscription::None => {}
        Subscription::User(t) => {
            return Err(Error::new(
                ErrorKind::StreamSubscribe,
                format!(
                    "{} is already bound to thread {t:#x}; a stream has one callback thread",
                    stream.label()
                ),
            ));
        }
        Subscription::Runtime => {
            return Err(Error::new(
                ErrorKind::StreamSubscribe,
                format!(
                    "{} runs host functions (aclrtLaunchHostFunc) and cannot be bound to a \
                     callback thread; the two callback APIs cannot be mixed on one stream",
                    stream.label()
                ),
            ));
        }
    }
    let s = match users.get(&tid) {
        Some(s) if s.device != stream.device => {
            return Err(Error::new(
                ErrorKind::ThreadSubscribe,
                format!(
                    "thread {tid:#x} already handles callbacks of device {}; a thread serves one \
                     device",
                    s.device
                ),
            ));
        }
        Some(s) => s.clone(),
        None => {
            if users.len() >= MAX_SUBSCRIBED_THREADS {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("{MAX_SUBSCRIBED_THREADS} threads are subscribed already"),
                ));
            }
            let s = Arc::new(Subscriber::new(stream.device));
            users.insert(tid, s.clone());
            s
        }
    };
    s.q.lock().streams += 1;
    *sub = Subscription::User(tid);
    Ok(())
}

/// Unbinds user thread `tid` from `stream` (`aclrtUnSubscribeReport`).
/// Callbacks of the stream still queued for the thread are cancelled.
///
/// # Errors
///
/// The stream has no callback thread → 107011; another thread → 107012
/// (`CbSubscribe::Delete`).
pub fn unsubscribe(tid: u64, stream: &Stream) -> Result<(), Error> {
    let mut users = USER.lock();
    let mut sub = stream.shared.subscription.lock();
    match *sub {
        Subscription::User(t) if t == tid => {}
        Subscription::User(t) => {
            return Err(Error::new(
                ErrorKind::ThreadSubscribe,
                format!(
                    "{} is bound to thread {t:#x}, not to thread {tid:#x}",
                    stream.label()
                ),
            ));
        }
        _ => {
            return Err(Error::new(
                ErrorKind::StreamSubscribe,
                format!("{} is not bound to a callback thread", stream.label()),
            ));
        }
    }
    *sub = Subscription::None;
    drop(sub);
    if let Some(s) = users.get(&tid).cloned() {
        s.cancel_stream(
            &stream.shared,
            &format!("thread {tid:#x} unsubscribed from {}", stream.label()),
        );
        let left = {
            let mut q = s.q.lock();
            q.streams = q.streams.saturating_sub(1);
            q.streams
        };
        if left == 0 {
            users.remove(&tid);
            s.close(&format!(
                "thread {tid:#x} unsubscribed from its last stream"
            ));
        }
    }
    Ok(())
}

/// Unbinds whatever user thread serves `stream` (the stream is being
/// destroyed).
pub fn forget_stream(stream: &Stream) {
    let tid = match *stream.shared.subscription.lock() {
        Subscription::User(t) => t,
        _ => return,
    };
    let _ = unsubscribe(tid, stream);
}

/// Hands a report to user thread `tid`.
///
/// # Errors
///
/// A message when the thread is no longer subscribed.
pub fn post_user(tid: u64, r: Report) -> Result<(), String> {
    let s = USER.lock().get(&tid).cloned();
    match s {
        Some(s) => s.post(r),
        None => Err(format!(
            "thread {tid:#x} is no longer subscribed; the callback was not called"
        )),
    }
}

/// The subscriber of user thread `tid`.
pub fn user_subscriber(tid: u64) -> Option<Arc<Subscriber>> {
    USER.lock().get(&tid).cloned()
}

/// User threads subscribed now.
pub fn user_subscriber_count() -> usize {
    USER.lock().len()
}

/// This thread's id as `aclrtSubscribeReport` takes it: `pthread_self()`
/// (`PidTidFetcher::GetCurrentUserTid`, `src/runtime/core/src/utils/osal.cc`).
#[allow(
    clippy::unnecessary_cast,
    reason = "pthread_t is not u64 on every target"
)]
pub fn current_tid() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    let t = unsafe { libc::pthread_self() };
    t as u64
}

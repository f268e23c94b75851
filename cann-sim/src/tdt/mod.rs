//! The simulated data-transfer engine behind the `acltdt*` exports: bounded
//! message queues with blocking, timed and non-blocking ends, in Rust types
//! only (the exports in `crate::acl::tdt_*` translate C arguments and codes).
//!
//! Two kinds of queue exist, as in the released runtime (hicann/runtime
//! `src/acl/acl_tdt_channel/tensor_data_transfer.cpp`,
//! `src/acl/acl_tdt_queue/queue_process.cpp`):
//!
//! - memory queues (`rtMemQueueCreate`): numbered by a queue id, bounded by
//!   their depth; `acltdtCreateQueue` and `acltdtCreateChannelWithCapacity`
//!   make them, and both number them from one id space;
//! - the data-transfer channels of `acltdtCreateChannel` (`libdatatransfer`'s
//!   `TdtHostPushData`/`TdtHostPopData`), named per device, unbounded, and
//!   stoppable (`TdtHostStop` wakes the receivers).
//!
//! Routes (`acltdtBindQueueRoutes`) stand for the device's queue scheduler:
//! a message entering a route's source queue is moved, as soon as every
//! destination has room, to each destination (one-to-many: a copy each).

use parking_lot::{Condvar, Mutex};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// One tensor of a message (a serialised `acltdtDataItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorItem {
    /// The `acltdtTensorType` value.
    pub kind: i32,
    /// The shape.
    pub dims: Vec<i64>,
    /// The `aclDataType` value.
    pub dtype: i32,
    /// The bytes, copied when sent.
    pub data: Vec<u8>,
    /// Slice count and index (`acltdtGetSliceInfoFromItem`).
    pub slice: (u16, u16),
}

/// What a queue carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A dataset sent through a channel.
    Tensors(Vec<TensorItem>),
    /// A buffer of `acltdtEnqueueData`, with its user data.
    Data {
        /// The bytes.
        data: Vec<u8>,
        /// The user data (at most [`MAX_USER_DATA`] bytes).
        user: Vec<u8>,
    },
}

impl Message {
    /// The length a peek reports: the data bytes of a buffer, the serialised
    /// size of a dataset.
    pub fn byte_len(&self) -> usize {
        match self {
            Message::Data { data, .. } => data.len(),
            Message::Tensors(items) => items
                .iter()
                .map(|i| 64 + 8 * i.dims.len() + i.data.len())
                .sum(),
        }
    }
}

/// The most user-data bytes a buffer carries (`acltdtEnqueueData`'s page:
/// "userDataSize ≤ 96").
pub const MAX_USER_DATA: usize = 96;

/// How long an end of a queue waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Until it can proceed (a negative timeout).
    Forever,
    /// Not at all (timeout 0).
    Never,
    /// Until this instant (a positive timeout in ms).
    Until(Instant),
}

impl Wait {
    /// The wait of a C `timeout` in milliseconds: negative waits forever,
    /// 0 not at all, a positive number that many milliseconds.
    pub fn from_ms(timeout: i32) -> Wait {
        match u64::try_from(timeout) {
            Err(_) => Wait::Forever,
            Ok(0) => Wait::Never,
            Ok(ms) => Wait::Until(Instant::now() + Duration::from_millis(ms)),
        }
    }
}

/// Why an end of a queue did not proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueError {
    /// The queue stayed full for the whole wait.
    Full,
    /// The queue stayed empty for the whole wait.
    Empty,
    /// The channel was stopped (`acltdtStopChannel`).
    Stopped,
    /// The queue was destroyed while waiting.
    Destroyed,
}

#[derive(Default)]
struct State {
    items: VecDeque<Message>,
    stopped: bool,
    destroyed: bool,
}

/// A bounded FIFO of messages with blocking ends.
pub struct MemQueue {
    /// Its depth: the most messages it holds.
    pub depth: usize,
    state: Mutex<State>,
    changed: Condvar,
}

impl MemQueue {
    /// An empty queue.
    pub fn new(depth: usize) -> MemQueue {
        MemQueue {
            depth,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    /// Waits on the condition variable; false when the wait is over.
    fn wait(&self, st: &mut parking_lot::MutexGuard<'_, State>, wait: Wait) -> bool {
        match wait {
            Wait::Never => false,
            Wait::Forever => {
                self.changed.wait(st);
                true
            }
            Wait::Until(t) => {
                if Instant::now() >= t {
                    return false;
                }
                let _ = self.changed.wait_until(st, t);
                true
            }
        }
    }

    /// Adds `msg` at the tail, waiting for room as `wait` says.
    ///
    /// # Errors
    ///
    /// [`QueueError::Full`] when no room came in time; `Stopped` or
    /// `Destroyed` when the queue was stopped or destroyed.
    pub fn push(&self, msg: Message, wait: Wait) -> Result<(), QueueError> {
        let mut st = self.state.lock();
        loop {
            if st.destroyed {
                return Err(QueueError::Destroyed);
            }
            if st.stopped {
                return Err(QueueError::Stopped);
            }
            if st.items.len() < self.depth {
                st.items.push_back(msg);
                self.changed.notify_all();
                return Ok(());
            }
            if !self.wait(&mut st, wait) {
                return Err(QueueError::Full);
            }
        }
    }

    /// Takes the head, waiting for one as `wait` says; `accept` sees it
    /// first and may refuse it (it then stays at the head).
    ///
    /// # Errors
    ///
    /// [`QueueError::Empty`] when nothing came in time; `Stopped` or
    /// `Destroyed` when the queue was stopped or destroyed; `accept`'s error.
    pub fn pop_if<E: From<QueueError>>(
        &self,
        wait: Wait,
        accept: impl FnOnce(&Message) -> Result<(), E>,
    ) -> Result<Message, E> {
        let mut st = self.state.lock();
        loop {
            if st.destroyed {
                return Err(QueueError::Destroyed.into());
            }
            if st.stopped {
                return Err(QueueError::Stopped.into());
            }
            if let Some(head) = st.items.front() {
                accept(head)?;
                let msg = st.items.pop_front().ok_or(QueueError::Empty)?;
                self.changed.notify_all();
                return Ok(msg);
            }
            if !self.wait(&mut st, wait) {
                return Err(QueueError::Empty.into());
            }
        }
    }

    /// Takes the head, waiting for one as `wait` says.
    ///
    /// # Errors
    ///
    /// As [`MemQueue::pop_if`].
    pub fn pop(&self, wait: Wait) -> Result<Message, QueueError> {
        self.pop_if(wait, |_| Ok(()))
    }

    /// The number of messages held.
    pub fn count(&self) -> usize {
        self.state.lock().items.len()
    }

    /// Drops every message (`rtMemQueueReset`); waiting senders get room.
    pub fn reset(&self) {
        self.state.lock().items.clear();
        self.changed.notify_all();
    }

    /// Stops the queue: every waiter, and every later call, fails with
    /// [`QueueError::Stopped`].
    pub fn stop(&self) {
        self.state.lock().stopped = true;
        self.changed.notify_all();
    }

    /// Marks the queue destroyed: waiters fail with
    /// [`QueueError::Destroyed`].
    fn destroy(&self) {
        self.state.lock().destroyed = true;
        self.changed.notify_all();
    }
}

/// The memory queues, by queue id.
static QUEUES: LazyLock<Mutex<HashMap<u32, Arc<MemQueue>>>> = LazyLock::new(Default::default);
static NEXT_QID: AtomicU32 = AtomicU32::new(1);

/// Creates a memory queue of `depth` messages; returns its id.
pub fn create_queue(depth: usize) -> u32 {
    let qid = NEXT_QID.fetch_add(1, Ordering::Relaxed);
    QUEUES.lock().insert(qid, Arc::new(MemQueue::new(depth)));
    qid
}

/// The memory queue `qid`.
pub fn queue(qid: u32) -> Option<Arc<MemQueue>> {
    QUEUES.lock().get(&qid).cloned()
}

/// Why a queue could not be destroyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestroyError {
    /// No such queue.
    Unknown,
    /// A route still uses it.
    Routed,
}

/// Destroys the memory queue `qid`; its waiters fail.
///
/// # Errors
///
/// [`DestroyError`]: no such queue, or a bound route uses it.
pub fn destroy_queue(qid: u32) -> Result<(), DestroyError> {
    if ROUTES.lock().iter().any(|&(s, d)| s == qid || d == qid) {
        return Err(DestroyError::Routed);
    }
    let q = QUEUES.lock().remove(&qid).ok_or(DestroyError::Unknown)?;
    q.destroy();
    Ok(())
}

/// The bound routes, (source, destination), in binding order.
static ROUTES: LazyLock<Mutex<Vec<(u32, u32)>>> = LazyLock::new(Default::default);

/// Why a route could not be bound or unbound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// A queue of the route does not exist.
    NoQueue,
    /// The route is bound already (bind) or not bound (unbind).
    State,
    /// Binding it would close a cycle of routes (its page: "不允许成环").
    Cycle,
}

/// Binds the route `src` → `dst`, then moves what `src` holds.
///
/// # Errors
///
/// [`RouteError`].
pub fn bind(src: u32, dst: u32) -> Result<(), RouteError> {
    if queue(src).is_none() || queue(dst).is_none() {
        return Err(RouteError::NoQueue);
    }
    {
        let mut routes = ROUTES.lock();
        if routes.contains(&(src, dst)) {
            return Err(RouteError::State);
        }
        // A cycle: `src` reachable from `dst`.
        let mut seen = vec![dst];
        let mut i = 0;
        while let Some(&q) = seen.get(i) {
            if q == src {
                return Err(RouteError::Cycle);
            }
            for &(s, d) in routes.iter() {
                if s == q && !seen.contains(&d) {
                    seen.push(d);
                }
            }
            i += 1;
        }
        routes.push((src, dst));
    }
    forward(src);
    Ok(())
}

/// Unbinds the route `src` → `dst`.
///
/// # Errors
///
/// [`RouteError::State`] when it is not bound.
pub fn unbind(src: u32, dst: u32) -> Result<(), RouteError> {
    let mut routes = ROUTES.lock();
    let i = routes
        .iter()
        .position(|&r| r == (src, dst))
        .ok_or(RouteError::State)?;
    routes.remove(i);
    Ok(())
}

/// The bound routes `keep` selects.
pub fn routes(keep: impl Fn(u32, u32) -> bool) -> Vec<(u32, u32)> {
    ROUTES
        .lock()
        .iter()
        .copied()
        .filter(|&(s, d)| keep(s, d))
        .collect()
}

/// Moves messages out of `src` along its routes while every destination
/// has room, then onwards from the destinations.
pub fn forward(src: u32) {
    let dsts: Vec<u32> = routes(|s, _| s == src)
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    let (Some(from), false) = (queue(src), dsts.is_empty()) else {
        return;
    };
    let to: Vec<Arc<MemQueue>> = dsts.iter().filter_map(|&d| queue(d)).collect();
    loop {
        let room = to.iter().all(|q| q.count() < q.depth);
        if !room {
            break;
        }
        let Ok(msg) = from.pop(Wait::Never) else {
            break;
        };
        for q in &to {
            // Room was checked; a racing producer may have filled it: the
            // scheduler then drops the copy, as an overwriting queue would.
            let _ = q.push(msg.clone(), Wait::Never);
        }
    }
    for d in dsts {
        forward(d);
    }
}

/// After a message left `qid`: moves messages into it from the sources of
/// routes ending there.
pub fn refill(qid: u32) {
    for (s, _) in routes(|_, d| d == qid) {
        forward(s);
    }
}

/// The data-transfer channels, by device and name.
static CHANNELS: LazyLock<Mutex<HashMap<ChannelKey, Arc<MemQueue>>>> =
    LazyLock::new(Default::default);

/// A data-transfer channel's device and name.
type ChannelKey = (u32, String);

/// The data-transfer channel `name` of `device`, made on first use.
pub fn channel(device: u32, name: &str) -> Arc<MemQueue> {
    CHANNELS
        .lock()
        .entry((device, name.to_string()))
        .or_insert_with(|| Arc::new(MemQueue::new(usize::MAX)))
        .clone()
}

/// Forgets the data-transfer channel `name` of `device` (its last handle
/// was destroyed): a later channel of that name starts empty and running.
pub fn forget_channel(device: u32, name: &str) {
    if let Some(q) = CHANNELS.lock().remove(&(device, name.to_string())) {
        q.destroy();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(b: u8) -> Message {
        Message::Data {
            data: vec![b],
            user: Vec::new(),
        }
    }

    #[test]
    fn a_full_queue_refuses_without_waiting_and_after_a_timeout() {
        let q = MemQueue::new(2);
        q.push(data(1), Wait::Never).unwrap();
        q.push(data(2), Wait::Never).unwrap();
        assert_eq!(q.push(data(3), Wait::Never), Err(QueueError::Full));
        let t = Instant::now();
        assert_eq!(q.push(data(3), Wait::from_ms(30)), Err(QueueError::Full));
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert_eq!(q.pop(Wait::Never), Ok(data(1)));
        assert_eq!(q.count(), 1);
    }

    #[test]
    fn a_stopped_queue_wakes_its_blocked_receiver() {
        let q = Arc::new(MemQueue::new(2));
        let r = {
            let q = q.clone();
            std::thread::spawn(move || q.pop(Wait::Forever))
        };
        std::thread::sleep(Duration::from_millis(20));
        q.stop();
        assert_eq!(r.join().unwrap(), Err(QueueError::Stopped));
    }

    #[test]
    fn a_refused_head_stays_in_the_queue() {
        let q = MemQueue::new(2);
        q.push(data(7), Wait::Never).unwrap();
        let r: Result<Message, QueueError> = q.pop_if(Wait::Never, |_| Err(QueueError::Full));
        assert_eq!(r, Err(QueueError::Full));
        assert_eq!(q.pop(Wait::Never), Ok(data(7)));
    }
}

//! Events: the latest record of each event, completed by a stream's worker.
//!
//! `aclrtRecordEvent` creates a new [`Record`] (the event's latest: a
//! re-recorded event reflects its latest record, as in CUDA) and queues a
//! task that completes it, with a timestamp from the simulator's clock.
//! `aclrtStreamWaitEvent` captures the latest record at the time of the call
//! and queues a wait for it on the other stream; an event never recorded
//! makes the wait a no-op. `aclrtResetEvent` queues a task that forgets the
//! records made up to its call.

use super::completion::{Completion, Status};
use super::stream::Shared;
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// One record of an event.
#[derive(Debug)]
pub struct Record {
    /// The event's record counter at this record.
    pub generation: u64,
    /// Completed (with the time) when the stream reaches the record.
    pub done: Completion,
    /// The recording stream.
    pub stream: Weak<Shared>,
    /// The record task's seq on that stream.
    pub seq: u64,
    /// The recording stream's vector clock at the record (check mode only).
    pub clock: Option<crate::check::Clock>,
}

impl Record {
    /// Completes the record at `now_ns`.
    pub fn complete(&self, now_ns: u64) {
        self.done.complete(now_ns);
    }
}

#[derive(Debug, Default)]
struct EventState {
    generation: u64,
    latest: Option<Arc<Record>>,
}

/// `ACL_EVENT_EXTERNAL` (`RT_EVENT_EXTERNAL`, 0x20): an event recorded and
/// waited for like a flag, from outside a captured model as well
/// (hicann/runtime `include/external/acl/acl_rt.h`,
/// `docs/zh/dev_guide/04-03_task_update.md`).
pub const EXTERNAL: u32 = 0x20;

/// An event.
#[derive(Debug)]
pub struct Event {
    /// The device of the context it was created in.
    pub device: u32,
    /// Its flags (runtime values; the ACL ones are the same bits).
    pub flags: u32,
    /// Created by `aclrtCreateEventExWithFlag` (the runtime's "new mode").
    pub ex_mode: bool,
    state: Mutex<EventState>,
}

impl Event {
    /// A new event.
    pub fn new(device: u32, flags: u32, ex_mode: bool) -> Event {
        Event {
            device,
            flags,
            ex_mode,
            state: Mutex::new(EventState::default()),
        }
    }

    /// Its handle: its address, under which the handle table knows it
    /// (the exports give it to C as an opaque pointer).
    pub fn handle(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    /// Whether it was made with [`EXTERNAL`] (alone).
    pub fn is_external(&self) -> bool {
        self.flags == EXTERNAL
    }

    /// Starts a new record on `stream` as task `seq`; it becomes the latest.
    pub fn new_record(&self, stream: &Arc<Shared>, seq: u64) -> Arc<Record> {
        let mut s = self.state.lock();
        s.generation += 1;
        let r = Arc::new(Record {
            generation: s.generation,
            done: Completion::new(),
            stream: Arc::downgrade(stream),
            seq,
            clock: crate::check::capture(stream, seq),
        });
        s.latest = Some(r.clone());
        r
    }

    /// The latest record, if any (and not reset).
    pub fn latest(&self) -> Option<Arc<Record>> {
        self.state.lock().latest.clone()
    }

    /// The record counter now (for a reset queued now).
    pub fn generation(&self) -> u64 {
        self.state.lock().generation
    }

    /// Forgets the latest record if no record was made after `generation`.
    pub fn reset_upto(&self, generation: u64) {
        let mut s = self.state.lock();
        if s.latest
            .as_ref()
            .is_some_and(|r| r.generation <= generation)
        {
            s.latest = None;
        }
    }

    /// Whether the latest record is complete: `None` when never recorded.
    pub fn is_complete(&self) -> Option<bool> {
        self.latest()
            .map(|r| matches!(r.done.status(), Status::Done(_)))
    }
}

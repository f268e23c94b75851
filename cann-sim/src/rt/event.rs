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
use super::ipc_event::IpcEventShared;
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
    /// For an IPC event: its shared record and this record's number there,
    /// published when the record completes.
    pub publish: Option<(Arc<IpcEventShared>, u64)>,
}

impl Record {
    /// Completes the record at `now_ns`.
    pub fn complete(&self, now_ns: u64) {
        self.done.complete(now_ns);
        if let Some((ipc, n)) = &self.publish {
            ipc.complete(*n);
        }
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

/// `ACL_EVENT_IPC` (`RT_EVENT_IPC`, 0x40): an event shared between
/// processes ([`super::ipc_event`]).
pub const IPC: u32 = 0x40;

/// An event.
#[derive(Debug)]
pub struct Event {
    /// The device of the context it was created in.
    pub device: u32,
    /// Its flags (runtime values; the ACL ones are the same bits).
    pub flags: u32,
    /// Created by `aclrtCreateEventExWithFlag` (the runtime's "new mode").
    pub ex_mode: bool,
    /// For an IPC event (`ACL_EVENT_IPC`): the record shared between
    /// processes ([`super::ipc_event`]).
    pub ipc: Option<Arc<IpcEventShared>>,
    state: Mutex<EventState>,
}

impl Event {
    /// A new event.
    pub fn new(device: u32, flags: u32, ex_mode: bool) -> Event {
        Event {
            device,
            flags,
            ex_mode,
            ipc: None,
            state: Mutex::new(EventState::default()),
        }
    }

    /// A new IPC event over `ipc` (the flags `ACL_EVENT_IPC`, the runtime's
    /// new mode, as `aclrtCreateEventExWithFlag` makes it).
    pub fn with_ipc(device: u32, ipc: Arc<IpcEventShared>) -> Event {
        Event {
            ipc: Some(ipc),
            ..Event::new(device, IPC, true)
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
            publish: self.ipc.as_ref().map(|ipc| (ipc.clone(), ipc.issue())),
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
    /// For an IPC event, the latest record of any process (`None` when none
    /// is pending: the release's `IpcEventQuery` answers complete then).
    pub fn is_complete(&self) -> Option<bool> {
        if let Some(ipc) = &self.ipc {
            return ipc.pending().map(|_| false);
        }
        self.latest()
            .map(|r| matches!(r.done.status(), Status::Done(_)))
    }
}

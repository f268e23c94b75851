//! The process-wide multi-stream switch: while one stream alone has queued
//! tracked work (and no host work was launched), marks are streams without
//! events and uses wait for nothing; the first use of a second stream turns
//! events on for the rest of the process.
//!
//! Two things turn events on for a while only: a capture under way (work
//! outside it is ordered by events, never by recording on or synchronising
//! the capturing stream), and memory a capture initialises that its graph
//! has not written yet (its reads must be refused, which only the
//! multi-stream path looks at). Once neither is left, a process that still
//! used one stream alone goes back to marks without events: every mark
//! made meanwhile is of that stream (a second stream would have turned
//! events on for good), or was made by captured work, which made none.

use crate::Stream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The key of the first stream that queued tracked work in this process
/// (0: none yet): the raw handle of a created stream (runtime handles are
/// addresses, hence even), or the device's address with the low bit set for
/// a default stream.
static FIRST_STREAM: AtomicUsize = AtomicUsize::new(0);
/// Why marks carry events now: [`FOR_GOOD`] once a second stream queued
/// tracked work or host work was launched, plus one per temporary reason
/// (a capture under way, an allocation awaiting its graph's launch).
static EVENTS: AtomicUsize = AtomicUsize::new(0);
/// The bit of [`EVENTS`] for multi-stream mode proper, which stays on.
const FOR_GOOD: usize = 1 << (usize::BITS - 1);

/// Notes that `stream` queues tracked work; whether marks need events
/// (multi-stream mode). While it answers `false`, every mark in the process
/// without an event is on `stream` (or on a stream that never queued
/// tracked work), and no other mark is still needed.
#[inline]
pub(super) fn note_stream(stream: &Stream) -> bool {
    let events = EVENTS.load(Relaxed);
    if events & FOR_GOOD != 0 {
        return true;
    }
    let raw = stream.as_raw() as usize;
    let key = if raw == 0 {
        Arc::as_ptr(&stream.device().inner) as usize | 1
    } else if raw & 1 == 0 {
        raw
    } else {
        // Not an address: no key can be trusted to be unique.
        EVENTS.fetch_or(FOR_GOOD, Relaxed);
        return true;
    };
    if FIRST_STREAM.load(Relaxed) == key {
        return events != 0;
    }
    match FIRST_STREAM.compare_exchange(0, key, Relaxed, Relaxed) {
        Ok(_) => events != 0,
        Err(first) if first == key => events != 0,
        Err(_) => {
            EVENTS.fetch_or(FOR_GOOD, Relaxed);
            true
        }
    }
}

/// Host work can block a stream on the host: from then on marks carry
/// events, so that a host wait for an access never waits for a host
/// function queued after it (which may be waiting for that very thread).
/// Marks recorded before the first host function still stand for their
/// whole stream.
pub(crate) fn note_host_work() {
    EVENTS.fetch_or(FOR_GOOD, Relaxed);
}

/// Whether marks carry events now (multi-stream mode, or a temporary
/// reason).
#[inline]
pub(crate) fn is_multi_stream() -> bool {
    EVENTS.load(Relaxed) != 0
}

/// Whether the process is in multi-stream mode for good: marks without an
/// event made before stand for their whole stream.
pub(crate) fn is_multi_stream_for_good() -> bool {
    EVENTS.load(Relaxed) & FOR_GOOD != 0
}

/// A temporary reason for events begins (see the module docs); each is
/// ended by one [`end_events`].
pub(crate) fn begin_events() {
    EVENTS.fetch_add(1, Relaxed);
}

/// A temporary reason for events ends.
pub(crate) fn end_events() {
    EVENTS.fetch_sub(1, Relaxed);
}

/// An allocation's capture that will initialise it (0: none): while one is
/// set, marks carry events (see the module docs), so that every use goes
/// through the path that refuses its reads.
#[derive(Default)]
pub(crate) struct Awaiting(u64);

impl Awaiting {
    /// The capture (0: none).
    #[inline]
    pub(super) fn get(&self) -> u64 {
        self.0
    }

    /// The memory is initialised by capture `capture`'s graph (not 0).
    pub(super) fn set(&mut self, capture: u64) {
        if self.0 == 0 && capture != 0 {
            begin_events();
        }
        self.0 = capture;
    }

    /// The memory was written: nothing to wait for any more.
    #[inline]
    pub(super) fn clear(&mut self) {
        if self.0 != 0 {
            self.0 = 0;
            end_events();
        }
    }
}

impl Drop for Awaiting {
    fn drop(&mut self) {
        self.clear();
    }
}

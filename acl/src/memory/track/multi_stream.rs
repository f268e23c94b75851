//! The process-wide multi-stream switch: while one stream alone has queued
//! tracked work (and no host work was launched), marks are streams without
//! events and uses wait for nothing; the first use of a second stream turns
//! events on for the rest of the process.

use crate::Stream;
use std::sync::Arc;

/// The key of the first stream that queued tracked work in this process
/// (0: none yet): the raw handle of a created stream (runtime handles are
/// addresses, hence even), or the device's address with the low bit set for
/// a default stream.
static FIRST_STREAM: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Whether a second stream has queued tracked work (multi-stream mode).
static MULTI_STREAM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that `stream` queues tracked work; whether marks need events
/// (multi-stream mode). While it answers `false`, every mark in the process
/// is on `stream` (or on a stream that never queued tracked work).
#[inline]
pub(super) fn note_stream(stream: &Stream) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    if MULTI_STREAM.load(Relaxed) {
        return true;
    }
    let raw = stream.as_raw() as usize;
    let key = if raw == 0 {
        Arc::as_ptr(&stream.device().inner) as usize | 1
    } else if raw & 1 == 0 {
        raw
    } else {
        // Not an address: no key can be trusted to be unique.
        MULTI_STREAM.store(true, Relaxed);
        return true;
    };
    if FIRST_STREAM.load(Relaxed) == key {
        return false;
    }
    match FIRST_STREAM.compare_exchange(0, key, Relaxed, Relaxed) {
        Ok(_) => false,
        Err(first) if first == key => false,
        Err(_) => {
            MULTI_STREAM.store(true, Relaxed);
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
    MULTI_STREAM.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the process is in multi-stream mode.
#[inline]
pub(crate) fn is_multi_stream() -> bool {
    MULTI_STREAM.load(std::sync::atomic::Ordering::Relaxed)
}

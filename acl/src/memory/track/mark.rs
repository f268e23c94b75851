//! Marks: points in a stream's queue right after an access.
//!
//! A mark is the stream alone (single-stream mode: all the work queued on
//! it so far covers the access, no runtime call) or an event recorded there
//! (multi-stream mode, see [`multi_stream`](super::multi_stream)). A stream
//! mark also carries the stream's generation, so that a host wait after a
//! synchronisation of the stream costs nothing.

use super::event::PooledEvent;
use crate::error::Result;
use crate::{Stream, result};
use std::sync::Arc;

/// A point in a stream's queue right after an access: an event recorded
/// there (multi-stream mode), or the stream alone, where all the work queued
/// so far covers the access (see the module docs). Cloning is cheap (one
/// reference count).
#[derive(Clone)]
pub(crate) enum Mark {
    /// The stream alone.
    Stream(MarkStream),
    /// An event recorded right after the access.
    Event(Arc<EventMark>),
}

/// An event recorded on a stream.
pub(crate) struct EventMark {
    pub(super) stream: MarkStream,
    pub(super) event: PooledEvent,
}

/// A stream held by a mark. A mark may hold the last handle of a stream
/// whose user dropped it; destroying a stream waits for its queued work,
/// which may include a host function waiting for the thread that happens
/// to drop the mark (a host read, a replaced mark): the last handle is
/// therefore dropped on the crate's release thread, never where the mark
/// goes.
///
/// It also carries the generation of the access on its stream: a stream
/// synchronised since that generation has finished the access, so a host
/// wait need not synchronise it again (and wait for later work).
pub(crate) struct MarkStream(pub(super) std::mem::ManuallyDrop<Stream>, pub(super) u64);

impl MarkStream {
    /// The stream with the generation of an access recorded now.
    pub(super) fn new(stream: &Stream) -> MarkStream {
        let generation = stream
            .shared()
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        MarkStream(std::mem::ManuallyDrop::new(stream.clone()), generation)
    }

    /// The stream with a given generation.
    pub(super) fn with_generation(stream: &Stream, generation: u64) -> MarkStream {
        MarkStream(std::mem::ManuallyDrop::new(stream.clone()), generation)
    }

    /// The mark of a cached block's previous owners for a block taken from
    /// `stream`'s pool: a generation no later than every access recorded on
    /// `stream` so far; none when a synchronisation of `stream` showed all
    /// of them finished.
    ///
    /// Every access of the previous owners that the new one must follow
    /// was recorded on `stream` before the block came back to its pool:
    /// each commit happens before the drop of the handle it used, and the
    /// last drop frees the block (uses on other streams hold the block in
    /// the allocator until their events complete; uses on another device
    /// are waited for before the free). So when `synced` has reached
    /// `commits`, they have all finished, and the mark (a stream handle to
    /// hold and drop) is not needed.
    #[inline]
    pub(super) fn previous_owner(stream: &Stream) -> Option<MarkStream> {
        use std::sync::atomic::Ordering::Acquire;
        let shared = stream.shared();
        let commits = shared.commits.load(Acquire);
        if shared.synced.load(Acquire) >= commits {
            return None;
        }
        Some(MarkStream(
            std::mem::ManuallyDrop::new(stream.clone()),
            commits.saturating_add(1),
        ))
    }

    /// Whether a synchronisation of the stream since showed it finished.
    pub(super) fn known_done(&self) -> bool {
        self.0
            .shared()
            .synced
            .load(std::sync::atomic::Ordering::Acquire)
            >= self.1
    }
}

impl Clone for MarkStream {
    fn clone(&self) -> MarkStream {
        MarkStream(std::mem::ManuallyDrop::new((*self.0).clone()), self.1)
    }
}

impl std::ops::Deref for MarkStream {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        &self.0
    }
}

impl Drop for MarkStream {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the stream is taken once, here, and never used again.
        let stream = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        if stream.is_last_handle() && !stream.is_default() {
            drop_in_background(stream);
        }
    }
}

/// Drops a stream's last handle on the release thread (see [`MarkStream`]).
#[cold]
#[inline(never)]
pub(super) fn drop_in_background(stream: Stream) {
    crate::release::in_background(Box::new(move || drop(stream)));
}

impl Mark {
    pub(super) fn with(stream: &Stream, event: Option<PooledEvent>) -> Mark {
        match event {
            Some(event) => Mark::Event(Arc::new(EventMark {
                stream: MarkStream::new(stream),
                event,
            })),
            None => Mark::Stream(MarkStream::new(stream)),
        }
    }

    pub(super) fn stream(&self) -> &Stream {
        match self {
            Mark::Stream(s) => s,
            Mark::Event(m) => &m.stream,
        }
    }

    pub(super) fn event(&self) -> Option<&PooledEvent> {
        match self {
            Mark::Stream(_) => None,
            Mark::Event(m) => Some(&m.event),
        }
    }

    /// This mark with an event, recording one on its stream now if it has
    /// none (which covers the access and possibly later work).
    pub(super) fn with_event(&self) -> Result<Mark> {
        match self {
            Mark::Event(_) => Ok(self.clone()),
            Mark::Stream(s) => Ok(Mark::with(s, Some(PooledEvent::record(s)?))),
        }
    }

    /// Whether a synchronisation of its stream showed the access finished
    /// (marks without an event only; no runtime call).
    #[inline]
    pub(super) fn known_done(&self) -> bool {
        matches!(self, Mark::Stream(s) if s.known_done())
    }

    /// Whether the access has finished (without waiting).
    pub(super) fn is_complete(&self) -> Result<bool> {
        match self {
            Mark::Event(m) => {
                m.event.device.bind()?;
                // SAFETY: the event is live (pooled, held by `m`).
                unsafe { result::query_event_status(m.event.as_raw()) }
            }
            Mark::Stream(s) => Ok(s.known_done() || s.is_complete()?),
        }
    }

    /// Blocks the host until the access has finished.
    pub(super) fn host_wait(&self) -> Result<()> {
        match self {
            Mark::Event(m) => m.event.synchronize(),
            Mark::Stream(s) if s.known_done() => Ok(()),
            Mark::Stream(s) => s.synchronize(),
        }
    }

    /// An event of this device's pool after the access: the mark's own when
    /// nobody else holds it, else a new one recorded on its stream now
    /// (later, so sound). On failure, the stream to wait for instead.
    pub(super) fn into_event(self) -> std::result::Result<PooledEvent, (crate::Error, MarkStream)> {
        match self {
            Mark::Event(m) => match Arc::try_unwrap(m) {
                Ok(m) => Ok(m.event),
                Err(shared) => {
                    PooledEvent::record(&shared.stream).map_err(|e| (e, shared.stream.clone()))
                }
            },
            Mark::Stream(s) => PooledEvent::record(&s).map_err(|e| (e, s)),
        }
    }
}

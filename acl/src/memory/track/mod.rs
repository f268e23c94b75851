//! Per-allocation access tracking: what keeps queued work, host access and
//! frees of the same memory in order.
//!
//! Every allocation ([`Allocation`]: device memory, or pinned host memory)
//! remembers its **last write** and the **reads since**, each as a *mark*:
//! a point in one stream's queue, right after the access, as cudarc's
//! `CudaSlice` does with its read and write events. A new use on stream `S`
//! ([`prepare`]) makes `S` wait, on the device (`aclrtStreamWaitEvent`),
//! only for the marks it conflicts with — a read waits for the last write, a
//! write for the last write and every read — and only for those on *other*
//! streams: the stream itself keeps its own order. After the work is queued,
//! [`Prepared::commit`] records one mark on `S` for all the memory of that
//! call. Nothing waits for unrelated work, and the host never blocks.
//!
//! # Events only when needed
//!
//! A mark carries an event in *multi-stream mode*: once a second stream has
//! queued tracked work in the process, or host work (a host function or
//! callback, which can hold a stream on the host) has been launched; and for
//! a while only, during a capture and while memory a capture initialises
//! waits for its graph's first launch. Otherwise, a mark is just "stream
//! `S`, generation `g`" (no runtime call at all): a host wait for it
//! synchronises `S` unless a synchronisation of `S` since generation `g`
//! already did; if another stream later needs to wait for it, an event is
//! recorded on `S` then — later than the access, so the wait is longer than
//! needed, never shorter. This keeps a single-stream program at the cost of
//! the raw calls, graph launches included.
//!
//! # Concurrent uses
//!
//! Waits and commits of one allocation can interleave (two threads writing
//! disjoint slices, an HCCL group, a [`Prepared`] kept across another use):
//! a commit replaces the recorded marks only if nothing was committed since
//! its wait, and otherwise adds its own beside them, so no access is ever
//! forgotten.
//!
//! # Frees
//!
//! Dropping the last handle of an allocation frees it *after* its marks:
//! memory from `aclrtMalloc` (and pinned memory) waits in the device's list
//! of pending frees until the marks' events have completed (polled at each
//! allocation, waited for at [`Device::synchronize`](crate::Device::synchronize)
//! and before an out-of-memory error is returned); a block of the caching
//! allocator goes back to its stream's pool at once, with an event on every
//! other stream that used it. A drop inside a host function only queues the
//! release: AscendCL may not be called there.
//!
//! # Host access
//!
//! Synchronous copies and host views of pinned memory wait, on the host,
//!
//! # Where each part lives
//!
//! - `event`: the pooled event a mark or a deferred free holds.
//! - `mark`: marks, the points in a stream's queue after an access.
//! - `access_state`: an allocation's marks (the last write and the reads
//!   since) and the epoch that lets concurrent uses commit in any order.
//! - `allocation`: the allocation record itself: its memory, what owns
//!   it (`Backing`) and its access state, and what its last handle does.
//! - `recycle`: the device's spare heap record for the next allocation.
//! - `registered`: host memory registered with the runtime, as a backing.
//! - `release`: giving memory back after its marks, and the device's
//!   frees that wait for events.
//! - `multi_stream`: the process-wide switch from stream-only marks to
//!   marks with events.
//! - `order`: ordering queued work: the waits before a use and the
//!   marks recorded after it ([`prepare`], [`Prepared::commit`], [`record`]).
//! - `launch`: one mark per graph launch, kept in the graph's slot and
//!   brought into each allocation's record when it is next locked.
//! - `host_wait`: the host's wait for the accesses a host
//!   access conflicts with.
//! - `window`: uses between their wait and their commit, and the graph
//!   launches that must not overlap them.

mod access_state;
mod allocation;
mod event;
mod host_wait;
mod launch;
mod mark;
mod multi_stream;
mod order;
mod recycle;
mod registered;
mod release;
mod window;

pub use allocation::Allocation;
pub use order::{Access, Prepared, prepare, record};

pub(crate) use allocation::Backing;
pub(crate) use event::PooledEvent;
pub(crate) use host_wait::{host_wait, host_window};
pub(crate) use launch::{
    LaunchBook, LaunchSlot, launch_fast, link_captured, record_launch_linked, touched, unlink,
};
pub(crate) use multi_stream::{begin_events, end_events, is_multi_stream_for_good, note_host_work};
pub(crate) use order::{Seen, record_accesses, record_launch, wait_entered, wait_for_conflicts};
pub(crate) use registered::RegisteredHost;
pub(crate) use release::Tracking;
pub(crate) use window::LaunchWindow;

//! One mark per graph launch: the launch's mark kept once, in the graph's
//! [`LaunchSlot`], instead of in each of the graph's allocations.
//!
//! A launch of a graph uses all of its buffers. Recording its mark in every
//! allocation costs a lock and two reference counts per buffer (~140
//! instructions each, 15,000 for a graph of 100 buffers). Instead, each
//! allocation the graph uses keeps a [`Link`] to the graph's slot, saying
//! which launch its marks were last brought up to; the slot keeps the mark
//! of the last launch. Whoever locks the allocation's record next (a use's
//! wait or commit, a host wait, a free: [`Allocation::lock_state`]) first
//! brings it up to date ([`sync`]): exactly the commit the launch would have
//! made then, the mark of a later launch standing for the earlier ones.
//!
//! ## Why a launch may skip its buffers (the fast path, [`launch_fast`])
//!
//! A launch looks at no buffer when, since the last launch that went
//! through all of them ([`record_launch_linked`]),
//!
//! 1. no other commit touched any of them: every commit on a linked
//!    allocation other than this graph's own launches counts in the slot's
//!    `touched`, bumped under the allocation's lock before the commit
//!    returns (a commit concurrent with the launch is as unordered with it
//!    as with a launch that looks at every buffer: neither sees it);
//! 2. the graph's list of buffers is the same (an update changes it);
//! 3. no buffer is used by another graph (`exclusive`): another graph's
//!    launches do not bump this slot (they do not look at the buffers
//!    either).
//!
//! Then every buffer's record is what that last full launch `K` left, with
//! the mark of launch `K` standing for every launch since. Each launch
//! since waited for the previous one's mark (or followed it on its stream),
//! so the last launch's mark comes after all of them, and after every
//! access launch `K` waited for. A new launch therefore waits for the last
//! launch's mark alone, and the conflicts of each buffer are covered: the
//! marks it replaces in a write's record are launch `K`'s (the only marks
//! there after a launch whose wait covered them, the `replaceable` flag)
//! and the reads it does not wait for are reads (no conflict for a read).

use super::access_state::AccessState;
use super::allocation::Allocation;
use super::event::PooledEvent;
use super::mark::Mark;
use super::multi_stream::{is_multi_stream, note_stream};
use super::order::{Seen, needs_wait, wait_mark};
use crate::Stream;
use crate::error::Result;
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The last launch of one graph, shared by the records of its buffers.
#[derive(Debug)]
pub(crate) struct LaunchSlot {
    /// The number of the graph's capture (also the "launching" number of
    /// its launches' commits).
    capture: u64,
    /// Commits on the graph's buffers by anything but this graph's launches.
    touched: AtomicU64,
    /// No buffer of the graph is linked to another graph.
    exclusive: AtomicBool,
    /// `last.number`, readable without the lock (never ahead of `last`).
    launches: AtomicU64,
    last: Mutex<LastLaunch>,
    /// A launch is being queued: uses of the linked memory wait for its
    /// marks (see [`window`](super::window)).
    pub(super) launching: AtomicBool,
    /// Uses of the linked memory between their wait and their commit.
    pub(super) users: std::sync::atomic::AtomicUsize,
}

// A panic never leaves the slot half-updated: the last launch changes in one
// assignment under its lock, and the counters are atomics that only grow.
impl std::panic::RefUnwindSafe for LaunchSlot {}
impl std::panic::UnwindSafe for LaunchSlot {}

#[derive(Default)]
struct LastLaunch {
    /// Launches made so far (0: none).
    number: u64,
    mark: Option<Mark>,
}

impl std::fmt::Debug for LastLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LastLaunch")
            .field("number", &self.number)
            .finish()
    }
}

/// What the last launch that went through every buffer left, for the next
/// launch's choice of path (kept by the graph under its launch lock).
#[derive(Debug, Default)]
pub(crate) struct LaunchBook {
    /// A full launch was recorded and `touched`/`uses` below are its.
    ready: bool,
    /// The slot's `touched` read before that launch waited.
    touched: u64,
    /// The graph's list of uses then (its address).
    uses: usize,
}

/// An allocation's link to a graph that uses it.
pub(crate) struct Link {
    slot: Arc<LaunchSlot>,
    write: bool,
    /// The launch the record was brought up to.
    synced: u64,
    /// The record's epoch right after that.
    epoch: u64,
    /// That launch's wait covered every mark there was (its commit replaced
    /// them), so a later launch's mark may replace its mark in a write's
    /// record, if nothing was committed since.
    replaceable: bool,
}

impl Link {
    /// The slot of the graph linked.
    pub(super) fn slot(&self) -> &Arc<LaunchSlot> {
        &self.slot
    }
}

impl LaunchSlot {
    pub(crate) fn new(capture: u64) -> Arc<LaunchSlot> {
        Arc::new(LaunchSlot {
            capture,
            touched: AtomicU64::new(0),
            exclusive: AtomicBool::new(true),
            launches: AtomicU64::new(0),
            last: Mutex::new(LastLaunch::default()),
            launching: AtomicBool::new(false),
            users: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Whether no buffer of the graph is used by another graph.
    #[cfg(test)]
    fn is_exclusive(&self) -> bool {
        self.exclusive.load(Ordering::Acquire)
    }
}

/// Brings `st` up to the last launch of every graph linked to it (see the
/// module docs). Called under the allocation's lock, before anything reads
/// or changes its marks.
#[inline(always)]
pub(super) fn sync(st: &mut AccessState) {
    if !st.links.is_empty() {
        sync_links(st);
    }
}

#[inline(never)]
fn sync_links(st: &mut AccessState) {
    for i in 0..st.links.len() {
        let link = &st.links[i];
        if link.slot.launches.load(Ordering::Acquire) <= link.synced {
            continue;
        }
        let (number, mark) = {
            let last = link.slot.last.lock();
            (last.number, last.mark.clone())
        };
        let Some(mark) = mark else { continue };
        if number <= link.synced {
            continue;
        }
        let write = link.write;
        let replace = link.replaceable && link.epoch == st.epoch;
        apply(st, mark, write, replace);
        st.epoch = st.epoch.wrapping_add(1);
        let epoch = st.epoch;
        let link = &mut st.links[i];
        link.synced = number;
        link.epoch = epoch;
        link.replaceable = replace;
    }
}

/// Records `mark` for a use (`write` or not): replacing the marks a write's
/// wait covered (`covered`), else beside them; a read replaces an earlier
/// read of the same stream (stream order).
fn apply(st: &mut AccessState, mark: Mark, write: bool, covered: bool) {
    if write {
        if covered {
            st.reads.clear();
            st.more_writes.clear();
            st.write = Some(mark);
        } else if st.write.is_none() {
            st.write = Some(mark);
        } else {
            st.more_writes.push(mark);
        }
    } else {
        let stream = mark.stream();
        match st.reads.iter_mut().find(|m| m.stream().same_queue(stream)) {
            Some(m) => *m = mark,
            None => st.reads.push(mark),
        }
    }
}

/// A commit other than the launches of graph `launching` changed `st`:
/// the launches of every other graph linked to it must look at it again.
#[inline(always)]
pub(super) fn touch(st: &AccessState, launching: u64) {
    if !st.links.is_empty() {
        touch_links(st, launching);
    }
}

#[inline(never)]
fn touch_links(st: &AccessState, launching: u64) {
    for l in &st.links {
        if l.slot.capture != launching {
            l.slot.touched.fetch_add(1, Ordering::AcqRel);
        }
    }
}

/// Links `st` to `slot` as brought up to launch `number`.
fn link(st: &mut AccessState, slot: &Arc<LaunchSlot>, write: bool, number: u64, covered: bool) {
    let epoch = st.epoch;
    match st.links.iter_mut().find(|l| Arc::ptr_eq(&l.slot, slot)) {
        Some(l) => {
            l.write = write;
            l.synced = number;
            l.epoch = epoch;
            l.replaceable = covered;
        }
        None => st.links.push(Link {
            slot: slot.clone(),
            write,
            synced: number,
            epoch,
            replaceable: covered,
        }),
    }
    if st.links.len() > 1 {
        // Shared with another graph: neither may skip its buffers (the
        // other's launches do not bump its `touched`).
        for l in &st.links {
            l.slot.exclusive.store(false, Ordering::Release);
        }
    }
}

/// Links `alloc` to `slot` when work using it (`write` or not) is
/// captured for that slot's graph, or recorded by an update of it (see
/// [`window`](super::window)). A link the record has already is kept as it
/// is (its launches' state), only made a write's if this use writes; a new
/// one starts at the slot's current launch, with nothing to bring in.
pub(crate) fn link_captured(alloc: &Allocation, slot: &Arc<LaunchSlot>, write: bool) {
    let mut st = alloc.lock_state();
    match st.links.iter_mut().find(|l| Arc::ptr_eq(&l.slot, slot)) {
        Some(l) => l.write |= write,
        None => {
            let number = slot.launches.load(Ordering::Acquire);
            link(&mut st, slot, write, number, false);
        }
    }
}

/// Removes the link of `alloc` to `slot`, its record brought up to date
/// first (the graph no longer uses it).
pub(crate) fn unlink(alloc: &Allocation, slot: &Arc<LaunchSlot>) {
    let mut st = alloc.lock_state();
    st.links.retain(|l| !Arc::ptr_eq(&l.slot, slot));
}

/// A launch of the graph of `slot` that looks at no buffer (see the module
/// docs): `None` when the conditions do not hold (take the full path);
/// otherwise `execute`'s result, the launch's mark recorded in the slot on
/// success. Called under the graph's launch lock, with `stream`'s gate
/// entered, not inside a host function.
#[inline]
pub(crate) fn launch_fast(
    stream: &Stream,
    slot: &Arc<LaunchSlot>,
    book: &LaunchBook,
    uses: usize,
    execute: impl FnOnce() -> Result<()>,
) -> Option<Result<()>> {
    if !book.ready
        || book.uses != uses
        || !slot.exclusive.load(Ordering::Acquire)
        || slot.touched.load(Ordering::Acquire) != book.touched
        || stream.shared().capture.is_active()
    {
        return None;
    }
    // The previous launch's mark, cloned only when this launch must wait
    // for it (another stream's).
    let (number, previous) = {
        let last = slot.last.lock();
        let previous = match &last.mark {
            Some(m) if needs_wait(m, stream) => Some(m.clone()),
            _ => None,
        };
        (last.number, previous)
    };
    let multi = note_stream(stream);
    Some((|| {
        let mut bound = false;
        if let Some(mut m) = previous {
            // A write of every buffer's memory: after the last launch.
            wait_mark(stream, &mut m, true, true, &mut bound)?;
        }
        if !bound {
            stream.device().bind()?;
        }
        execute()?;
        let ev = if multi {
            PooledEvent::record(stream).ok()
        } else {
            None
        };
        let mut last = slot.last.lock();
        // The previous mark is updated in place when it is of this stream
        // and of the same kind: a stream mark takes the new generation; an
        // event mark's heap record, when nothing else holds it (no record
        // took it since), takes the new event (its old event goes back to
        // the pool once the lock is released).
        let old = match (&mut last.mark, ev) {
            (Some(Mark::Stream(ms)), None) if ms.same_queue(stream) => {
                ms.1 = next_generation(stream);
                None
            }
            (Some(Mark::Event(m)), Some(ev)) => match Arc::get_mut(m) {
                Some(m) if m.stream.same_queue(stream) => {
                    m.stream.1 = next_generation(stream);
                    Some(std::mem::replace(&mut m.event, ev))
                }
                _ => {
                    last.mark = Some(Mark::with(stream, Some(ev)));
                    None
                }
            },
            (_, ev) => {
                last.mark = Some(Mark::with(stream, ev));
                None
            }
        };
        last.number = number + 1;
        slot.launches.store(number + 1, Ordering::Release);
        drop(last);
        drop(old);
        Ok(())
    })())
}

/// The generation of an access recorded on `stream` now (as
/// `MarkStream::new`).
fn next_generation(stream: &Stream) -> u64 {
    stream.shared().commits.fetch_add(1, Ordering::AcqRel) + 1
}

/// The slot's `touched` now, read before a full launch's wait.
pub(crate) fn touched(slot: &LaunchSlot) -> u64 {
    slot.touched.load(Ordering::Acquire)
}

/// The commit of a launch that went through every buffer (after its wait
/// saw `seen`, and `touched` was read before it): one mark for all of
/// them, each record linked to `slot` as brought up to this launch; the
/// memory the capture initialises counts as written. Never on a capturing
/// stream (the runtime refuses to launch a graph there).
pub(crate) fn record_launch_linked<'a>(
    stream: &Stream,
    seen: &Seen,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
    slot: &Arc<LaunchSlot>,
    book: &mut LaunchBook,
    touched: u64,
    uses_id: usize,
) {
    let multi = match seen {
        Seen::Single => is_multi_stream(),
        _ => note_stream(stream),
    };
    let ev = if multi {
        PooledEvent::record(stream).ok()
    } else {
        None
    };
    let mark = Mark::with(stream, ev);
    let number = slot.last.lock().number + 1;
    for (n, (alloc, write)) in uses.enumerate() {
        let mut st = alloc.lock_state();
        if st.awaiting.get() == slot.capture {
            st.awaiting.clear();
        }
        // As in `commit_uses`: whether the wait covered every mark there is.
        let covered = match (seen, seen.epoch(n)) {
            (Seen::Unknown, _) => false,
            (_, Some(e)) => e == st.epoch,
            (_, None) => !multi,
        };
        apply(&mut st, mark.clone(), write, covered);
        st.epoch = st.epoch.wrapping_add(1);
        touch(&st, slot.capture);
        link(&mut st, slot, write, number, covered);
    }
    *slot.last.lock() = LastLaunch {
        number,
        mark: Some(mark),
    };
    slot.launches.store(number, Ordering::Release);
    *book = LaunchBook {
        ready: true,
        touched,
        uses: uses_id,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_slot_is_exclusive_and_has_no_launch() {
        let slot = LaunchSlot::new(7);
        assert!(slot.is_exclusive());
        assert_eq!(slot.launches.load(Ordering::Acquire), 0);
        assert_eq!(touched(&slot), 0);
    }

    #[test]
    fn touch_bumps_other_graphs_only() {
        let (mine, other) = (LaunchSlot::new(1), LaunchSlot::new(2));
        let mut st = AccessState::default();
        link(&mut st, &mine, true, 1, true);
        assert!(mine.is_exclusive(), "one graph alone");
        link(&mut st, &other, false, 1, true);
        assert!(!mine.is_exclusive() && !other.is_exclusive());
        touch(&st, 1);
        assert_eq!((touched(&mine), touched(&other)), (0, 1));
        touch(&st, 0);
        assert_eq!((touched(&mine), touched(&other)), (1, 2));
    }
}

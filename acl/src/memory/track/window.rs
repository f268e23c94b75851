//! Uses in their window, and the graph launches that must not overlap them.
//!
//! A use of memory waits for the marks it conflicts with, queues its work,
//! and then records its own mark ([`order`](super::order)). Between the
//! wait and the commit it is *in its window*: its work may be queued, its
//! mark is not there yet. For uses that hold the memory as Rust borrows say
//! (`&mut` to write), a conflicting use cannot be in its window at the same
//! time. A graph launch is the exception: [`Graph::launch`](crate::graph::Graph::launch)
//! writes its buffers through `&self`, while other threads may use them.
//! A launch queued while a conflicting use is in its window would wait for
//! none of it, and that use waited for none of the launch: the two would run
//! unordered. So:
//!
//! - a use in its window counts itself in each allocation's record
//!   (`in_window`) and in the launch slot of each graph linked to it
//!   (`users`), and leaves when its [`Held`] is dropped, after its commit;
//! - a launch first makes new uses of its memory wait ([`LaunchWindow`]: the
//!   slot's `launching` for linked records, each record's own `launching`
//!   on the full path), then waits for the uses already in their window to
//!   leave, and lifts both only once its own marks are recorded;
//! - a use that finds a launch going on leaves its window on everything it
//!   entered, waits for the launch, and starts over (so a use never holds a
//!   window while it waits: no two parties wait for each other);
//! - launches go one at a time in the process (`LAUNCHES`), so no launch
//!   waits for another's windows.
//!
//! In single-stream mode a use looks at no record (every mark is on one
//! stream, which keeps its own order). It counts itself in `SINGLE_USES`
//! instead; the first launch after the switch to multi-stream mode waits
//! for those counted before the switch ([`drain_single_uses`]). A use
//! that counted itself and then sees the switch takes the general path.
//!
//! A launch waits at most [`LIMIT`] for uses to leave their window (a thread
//! that keeps a [`Prepared`](super::Prepared) would otherwise hold it for
//! ever), and fails with an error saying so.

use super::access_state::AccessState;
use super::allocation::Allocation;
use super::launch::LaunchSlot;
use super::multi_stream::is_multi_stream;
use crate::error::Result;
use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a launch waits for the uses of its memory to leave their window.
pub(crate) const LIMIT: Duration = Duration::from_secs(2);

/// One launch at a time in the process: a launch never waits for another's
/// window, nor two launches sharing a buffer for each other.
static LAUNCHES: Mutex<()> = Mutex::new(());

/// Uses in their window in single-stream mode.
static SINGLE_USES: AtomicUsize = AtomicUsize::new(0);
/// The single-stream uses from before the switch to multi-stream mode have
/// all left their window.
static DRAINED: AtomicBool = AtomicBool::new(false);

/// A single-stream use in its window (see the module docs).
#[derive(Debug)]
pub(crate) struct SingleUse(());

impl SingleUse {
    /// Counts a use in single-stream mode; `None` if the process switched to
    /// multi-stream mode meanwhile (take the general path).
    #[inline(always)]
    pub(crate) fn enter() -> Option<SingleUse> {
        SINGLE_USES.fetch_add(1, Ordering::SeqCst);
        // Paired with the switch's store (`note_stream`, SeqCst): either this
        // sees it, or the first launch after it sees this count.
        if is_multi_stream_seq_cst() {
            SINGLE_USES.fetch_sub(1, Ordering::Release);
            return None;
        }
        Some(SingleUse(()))
    }
}

impl Drop for SingleUse {
    #[inline(always)]
    fn drop(&mut self) {
        SINGLE_USES.fetch_sub(1, Ordering::Release);
    }
}

fn is_multi_stream_seq_cst() -> bool {
    super::multi_stream::is_multi_stream_ordered()
}

/// What a use in its window entered: released (in this order: records,
/// then slots) when dropped, which is after its commit, or instead of it.
#[derive(Default)]
pub(crate) struct Held {
    allocs: SmallVec<[Arc<Allocation>; 4]>,
    slots: SmallVec<[Arc<LaunchSlot>; 2]>,
}

impl Held {
    /// Enters `alloc`'s window, its record locked as `st`: `Err` with what
    /// to wait for when a launch is going on (nothing entered then).
    pub(super) fn enter(
        &mut self,
        alloc: &Arc<Allocation>,
        st: &mut AccessState,
    ) -> std::result::Result<(), Busy> {
        if st.launching {
            return Err(Busy::Record(alloc.clone()));
        }
        let before = self.slots.len();
        for link in &st.links {
            let slot = link.slot();
            slot.users.fetch_add(1, Ordering::SeqCst);
            self.slots.push(slot.clone());
            // Paired with `LaunchWindow::begin`: either this sees the
            // launch, or the launch sees this user.
            if slot.launching.load(Ordering::SeqCst) {
                for s in self.slots.drain(before..) {
                    s.users.fetch_sub(1, Ordering::Release);
                }
                return Err(Busy::Slot(slot.clone()));
            }
        }
        st.in_window += 1;
        self.allocs.push(alloc.clone());
        Ok(())
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for a in self.allocs.drain(..) {
            a.state.lock().in_window -= 1;
        }
        for s in self.slots.drain(..) {
            s.users.fetch_sub(1, Ordering::Release);
        }
    }
}

/// A launch a use met: wait for it with [`Busy::wait`], then start over.
pub(super) enum Busy {
    Record(Arc<Allocation>),
    Slot(Arc<LaunchSlot>),
}

impl Busy {
    /// Waits, holding nothing, until that launch has recorded its marks.
    pub(super) fn wait(self) {
        let mut spins = 0u32;
        let busy = || match &self {
            Busy::Record(a) => a.state.lock().launching,
            Busy::Slot(s) => s.launching.load(Ordering::Acquire),
        };
        while busy() {
            backoff(&mut spins);
        }
    }
}

fn backoff(spins: &mut u32) {
    *spins += 1;
    if *spins < 64 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(20));
    }
}

/// The error of a launch whose memory stays in another use's window.
fn held_open(function: &'static str) -> crate::Error {
    crate::Error::invalid(
        function,
        format!(
            "a use of the graph's memory stayed between its wait and its commit for {} s (a \
             memory::Prepared kept uncommitted, on this thread or another); commit or drop it \
             before launching",
            LIMIT.as_secs()
        ),
    )
}

/// Waits until `done` holds, or fails after [`LIMIT`].
fn wait_until(function: &'static str, mut done: impl FnMut() -> bool) -> Result<()> {
    let start = Instant::now();
    let mut spins = 0u32;
    while !done() {
        if start.elapsed() >= LIMIT {
            return Err(held_open(function));
        }
        backoff(&mut spins);
    }
    Ok(())
}

/// The first launch after the switch to multi-stream mode waits for the
/// uses counted in single-stream mode before it to leave their window.
pub(crate) fn drain_single_uses(function: &'static str) -> Result<()> {
    if DRAINED.load(Ordering::Acquire) || !is_multi_stream() {
        return Ok(());
    }
    wait_until(function, || SINGLE_USES.load(Ordering::SeqCst) == 0)?;
    DRAINED.store(true, Ordering::Release);
    Ok(())
}

/// A launch's exclusion of new uses of its memory (see the module docs),
/// lifted when dropped.
pub(crate) struct LaunchWindow<'s> {
    _one: MutexGuard<'static, ()>,
    slot: &'s LaunchSlot,
    flagged: SmallVec<[&'s Arc<Allocation>; 8]>,
}

impl<'s> LaunchWindow<'s> {
    /// Makes new uses of the graph's linked memory wait, and waits for the
    /// uses in their window to leave.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when a use
    /// stays in its window for [`LIMIT`].
    pub(crate) fn begin(
        function: &'static str,
        stream: &crate::Stream,
        slot: &'s LaunchSlot,
    ) -> Result<Self> {
        let one = LAUNCHES.lock();
        // Noted first: if this launch is what switches the process to
        // multi-stream mode, it drains the single-stream uses below.
        super::multi_stream::note_stream(stream);
        slot.launching.store(true, Ordering::SeqCst);
        let w = LaunchWindow {
            _one: one,
            slot,
            flagged: SmallVec::new(),
        };
        wait_until(function, || slot.users.load(Ordering::SeqCst) == 0)?;
        drain_single_uses(function)?;
        Ok(w)
    }

    /// The full path: makes new uses of each buffer wait (linked or not)
    /// and waits for those in their window to leave.
    ///
    /// # Errors
    ///
    /// As [`LaunchWindow::begin`].
    pub(crate) fn flag(
        &mut self,
        function: &'static str,
        uses: impl Iterator<Item = &'s Arc<Allocation>>,
    ) -> Result<()> {
        for a in uses {
            let mut st = a.state.lock();
            if !st.launching {
                st.launching = true;
                self.flagged.push(a);
            }
            if st.in_window != 0 {
                drop(st);
                wait_until(function, || a.state.lock().in_window == 0)?;
            }
        }
        Ok(())
    }
}

impl Drop for LaunchWindow<'_> {
    fn drop(&mut self) {
        for a in self.flagged.drain(..) {
            a.state.lock().launching = false;
        }
        self.slot.launching.store(false, Ordering::Release);
    }
}

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
//! - every allocation a capture (or a task update) uses is linked to the
//!   graph's launch slot when that work is captured
//!   ([`link_captured`](super::launch::link_captured)). The captured call
//!   borrows the memory as it uses it, so no conflicting use is in its
//!   window then, and every later one sees the link;
//! - a use of linked memory counts itself in each linked slot's `users`
//!   while in its window ([`Held`], dropped after its commit);
//! - a launch ([`LaunchWindow`]) raises its slot's `launching`, so that new
//!   uses of its memory wait, then waits for the uses in their window to
//!   leave, and lowers it once its own marks are recorded;
//! - a use that finds a launch going on leaves every slot it entered, waits
//!   for the launch, and starts over: a use never holds a window while it
//!   waits, so no two parties wait for each other;
//! - launches go one at a time in the process (`LAUNCHES`), so no launch
//!   waits for another's window.
//!
//! Memory no graph uses pays one test of its record's (empty) links.
//!
//! A launch waits at most [`LIMIT`] for uses to leave their window (a
//! [`Prepared`](super::Prepared) kept uncommitted would otherwise hold it
//! for ever), and fails with an error saying so.

use super::access_state::AccessState;
use super::launch::LaunchSlot;
use crate::error::Result;
use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How long a launch waits for the uses of its memory to leave their window.
pub(crate) const LIMIT: Duration = Duration::from_secs(2);

/// One launch at a time in the process: a launch never waits for another's
/// window, nor two launches sharing a buffer for each other.
static LAUNCHES: Mutex<()> = Mutex::new(());

/// The launch slots a use in its window counted itself in, left when it is
/// dropped (after its commit, or instead of it). Empty, and allocation-free,
/// for memory no graph uses.
#[derive(Default)]
pub(crate) struct Held(Vec<Arc<LaunchSlot>>);

impl Held {
    /// Enters the window of the memory whose record is locked as `st`:
    /// `Err` with the slot to wait for when a launch of a graph using it is
    /// being queued (nothing more is entered then; leave what `self` holds
    /// before waiting).
    #[inline]
    pub(super) fn enter(&mut self, st: &AccessState) -> std::result::Result<(), Busy> {
        if st.links.is_empty() {
            return Ok(());
        }
        self.enter_links(st)
    }

    #[inline(never)]
    fn enter_links(&mut self, st: &AccessState) -> std::result::Result<(), Busy> {
        let held = &mut self.0;
        for link in &st.links {
            let slot = link.slot();
            slot.users.fetch_add(1, Ordering::SeqCst);
            held.push(slot.clone());
            // Paired with `LaunchWindow::begin`: either this sees the
            // launch, or the launch sees this user.
            if slot.launching.load(Ordering::SeqCst) {
                return Err(Busy(slot.clone()));
            }
        }
        Ok(())
    }
}

impl Held {
    /// Whether no window was entered.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Drop for Held {
    #[inline]
    fn drop(&mut self) {
        // Usually empty: memory no graph uses enters no slot.
        for s in self.0.iter() {
            s.users.fetch_sub(1, Ordering::Release);
        }
    }
}

/// A launch a use met: leave every window, [`Busy::wait`], start over.
pub(super) struct Busy(Arc<LaunchSlot>);

impl Busy {
    /// Waits, holding nothing, until that launch has recorded its marks.
    pub(super) fn wait(self) {
        let mut spins = 0u32;
        while self.0.launching.load(Ordering::Acquire) {
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

/// A launch's exclusion of new uses of its memory (see the module docs),
/// lifted when dropped.
pub(crate) struct LaunchWindow<'s> {
    _one: MutexGuard<'static, ()>,
    slot: &'s LaunchSlot,
}

impl<'s> LaunchWindow<'s> {
    /// Makes new uses of the graph's memory wait, and waits for the uses in
    /// their window to leave.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) when a use
    /// stays in its window for [`LIMIT`].
    #[inline]
    pub(crate) fn begin(function: &'static str, slot: &'s LaunchSlot) -> Result<Self> {
        let one = LAUNCHES.lock();
        slot.launching.store(true, Ordering::SeqCst);
        let w = LaunchWindow { _one: one, slot };
        if slot.users.load(Ordering::SeqCst) == 0 {
            return Ok(w);
        }
        w.wait_for_users(function)
    }

    /// [`LaunchWindow::begin`] when uses are in their window: waits for
    /// them to leave (at most [`LIMIT`]).
    #[cold]
    #[inline(never)]
    fn wait_for_users(self, function: &'static str) -> Result<Self> {
        let slot = self.slot;
        let start = Instant::now();
        let mut spins = 0u32;
        while slot.users.load(Ordering::SeqCst) != 0 {
            if start.elapsed() >= LIMIT {
                return Err(crate::Error::invalid(
                    function,
                    format!(
                        "a use of the graph's memory stayed between its wait and its commit for \
                         {} s (a memory::Prepared kept uncommitted, on this thread or another); \
                         commit or drop it before launching",
                        LIMIT.as_secs()
                    ),
                ));
            }
            backoff(&mut spins);
        }
        Ok(self)
    }
}

impl Drop for LaunchWindow<'_> {
    fn drop(&mut self) {
        self.slot.launching.store(false, Ordering::Release);
    }
}

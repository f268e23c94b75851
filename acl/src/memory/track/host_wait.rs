//! The host wait: synchronous copies and host views of pinned memory wait,
//! on the host, for the recorded accesses they conflict with, holding the
//! allocation's lock so that a second thread cannot slip past the wait.

use super::access_state::AccessState;
use super::allocation::Allocation;
use super::order::awaiting_launch;
use super::window::Held;
use crate::error::Result;
use std::sync::Arc;

/// Blocks the host until the recorded accesses that a host access
/// conflicts with have finished: the last write for a host read, every
/// access for a host write. Holds the allocation's lock meanwhile, and
/// forgets the marks only once they are known to be done.
///
/// # Errors
///
/// The runtime's error, including faults of the awaited work; the marks
/// are kept then.
pub(crate) fn host_wait(alloc: &Allocation, write: bool) -> Result<()> {
    let mut st = if crate::device::in_host_fn() {
        // A host function may not wait (nor call AscendCL), and must not
        // block on a lock whose holder may be waiting for this very host
        // function: it gets the memory only if nothing is pending on it.
        let st = alloc.try_lock_state();
        match st {
            Some(st)
                if st.write.is_none()
                    && st.more_writes.is_empty()
                    && (!write || st.reads.is_empty()) =>
            {
                return Ok(());
            }
            _ => {
                return Err(crate::Error::invalid(
                    "host access",
                    "inside a host function, memory that queued work may still use cannot be \
                     waited for; wait for it before the host function, or read it after",
                ));
            }
        }
    } else {
        alloc.lock_state()
    };
    wait_locked(&mut st, write)
}

/// [`host_wait`] on the locked record.
fn wait_locked(st: &mut AccessState, write: bool) -> Result<()> {
    if st.awaiting.get() != 0 && !write {
        return Err(awaiting_launch("host access"));
    }
    while let Some(m) = st.more_writes.last() {
        m.host_wait()?;
        st.more_writes.pop();
    }
    if let Some(m) = &st.write {
        m.host_wait()?;
        st.write = None;
    }
    if write {
        while let Some(m) = st.reads.last() {
            m.host_wait()?;
            st.reads.pop();
        }
    }
    Ok(())
}

/// A host access in its window (see [`window`](super::window)): graph
/// launches using the memory wait until it is dropped.
#[must_use = "the host access is in its window until this is dropped"]
pub(crate) struct HostWindow(#[allow(dead_code, reason = "held for its drop")] Held);

/// [`host_wait`] for a host access that then goes on outside the lock (a
/// synchronous copy): also enters the memory's window, so that no graph
/// launch writing it is queued until the returned guard is dropped. Inside a
/// host function, as [`host_wait`] (AscendCL may not be called there: the
/// copy that would follow fails anyway).
///
/// # Errors
///
/// As [`host_wait`].
pub(crate) fn host_window(alloc: &Arc<Allocation>, write: bool) -> Result<HostWindow> {
    if crate::device::in_host_fn() {
        host_wait(alloc, write)?;
        return Ok(HostWindow(Held::default()));
    }
    loop {
        let mut st = alloc.lock_state();
        let mut held = Held::default();
        match held.enter(&st) {
            Ok(()) => {
                let waited = wait_locked(&mut st, write);
                // On an error `held` is dropped with the return; its drop
                // only leaves the slots it entered (no lock), so the order
                // against the record's lock does not matter.
                drop(st);
                waited?;
                return Ok(HostWindow(held));
            }
            Err(busy) => {
                // Leaves what it entered before waiting: the launch waits
                // for that.
                drop(held);
                drop(st);
                busy.wait();
            }
        }
    }
}

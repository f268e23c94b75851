//! The host wait: synchronous copies and host views of pinned memory wait,
//! on the host, for the recorded accesses they conflict with, holding the
//! allocation's lock so that a second thread cannot slip past the wait.

use super::allocation::Allocation;
use super::order::awaiting_launch;
use crate::error::Result;

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
    if st.awaiting != 0 && !write {
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

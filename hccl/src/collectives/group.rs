//! Groups: several calls queued as one (`HcclGroupStart`/`HcclGroupEnd`).

use super::*;

/// Runs `f` inside `HcclGroupStart`/`HcclGroupEnd`: the sends and receives
/// it issues (on this thread) are queued together, so their order cannot
/// deadlock. The group is ended even when `f` fails.
///
/// # Errors
///
/// `f`'s error, else HCCL's error from starting or ending the group.
#[doc(alias = "HcclGroupStart")]
#[doc(alias = "HcclGroupEnd")]
pub fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    result::group_start()?;
    GROUP.with(|g| g.borrow_mut().0 += 1);
    let guard = OpenGroup { ended: false };
    let out = f();
    let ended = guard.end();
    let value = out?;
    ended.map(|()| value)
}

/// A group started on this thread: ended exactly once, by [`OpenGroup::end`]
/// or, if the closure panicked, by its drop.
struct OpenGroup {
    ended: bool,
}

impl OpenGroup {
    fn end(mut self) -> Result<()> {
        self.ended = true;
        end_group()
    }
}

impl Drop for OpenGroup {
    fn drop(&mut self) {
        if !self.ended
            && let Err(e) = end_group()
        {
            crate::release::record("group", e);
        }
    }
}

/// Ends the innermost group. At the outermost one, where HCCL queues the
/// group's sends and receives, their streams first wait for the accesses
/// the memory conflicts with, and the new accesses are recorded after.
fn end_group() -> Result<()> {
    let owed = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        g.0 = g.0.saturating_sub(1);
        if g.0 == 0 {
            std::mem::take(&mut g.1)
        } else {
            Vec::new()
        }
    });
    let mut prepared = Vec::with_capacity(owed.len());
    let mut unordered = Vec::new();
    let mut ordering = Ok(());
    for (stream, uses) in &owed {
        match acl::memory::prepare(stream, uses.as_slice()) {
            Ok(p) => prepared.push(p),
            Err(e) => {
                // The device-side wait failed: wait on the host for what
                // these uses conflict with (on whichever device), so that
                // nothing the group queues can race with earlier work.
                for u in uses {
                    if let Err(e2) = u.wait_on_host() {
                        ordering = ordering.and(Err(Error::Acl(e2)));
                    }
                }
                ordering = ordering.and(Err(Error::Acl(e)));
                unordered.push((stream, uses));
            }
        }
    }
    // Ends the group started by `group`.
    let ended = result::group_end();
    // Queued (or not, on failure: recording extra accesses is harmless).
    for p in prepared {
        p.commit();
    }
    for (stream, uses) in unordered {
        acl::memory::record(stream, uses);
    }
    if GROUP.with(|g| g.borrow().0 == 0) {
        end_group_comms();
    }
    ended.and(ordering)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(e: Error) -> (&'static str, String) {
        match e {
            Error::InvalidArgument { function, reason } => (function, reason),
            other => panic!("expected InvalidArgument, got {other}"),
        }
    }

    #[test]
    fn buffer_lengths_times_ranks_are_checked_not_wrapped() {
        assert_eq!(times_ranks("Comm::all_gather", "send", 4, 2).unwrap(), 8);
        assert_eq!(
            times_ranks("Comm::all_gather", "send", 0, u32::MAX).unwrap(),
            0
        );
        let e = times_ranks("Comm::all_gather", "send", usize::MAX / 2 + 1, 2).unwrap_err();
        assert_eq!(
            reason(e),
            (
                "Comm::all_gather",
                format!(
                    "send × ranks = {} × 2 elements is more than usize::MAX",
                    usize::MAX / 2 + 1
                )
            )
        );
    }
}

//! [`Gate`]: what makes queueing tracked work one step per stream.
//!
//! Queueing work on a stream reads the stream's capture state twice: when
//! it waits for conflicting accesses (a capturing stream waits for nothing:
//! its work does not run now) and when it commits its accesses (into the
//! capture's record, or as marks). A capture begun, joined or ended by
//! another thread between the two would leave the work unordered. So work
//! *enters* the gate shared from its wait to its commit, and a capture
//! changes state only while it holds the gate *exclusively*.
//!
//! Shared entries never wait for each other (a thread may hold several, on
//! one stream or many: an HCCL group's sends), only for an exclusive holder,
//! which holds it for one runtime call. An exclusive entry waits for the
//! shared ones to leave, with a time limit: a thread that keeps a
//! [`Prepared`](super::Prepared) of the stream and then begins a capture of
//! it would otherwise wait for itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The bit an exclusive holder sets; the rest counts shared holders.
const HELD: usize = 1 << (usize::BITS - 1);

/// A shared/exclusive gate of one queue (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Gate(AtomicUsize);

/// A shared entry: the gate stays open to other shared entries and closed
/// to exclusive ones until it is dropped. `Send + Sync`: it is a count.
#[derive(Debug)]
pub(crate) struct Shared<'g>(&'g Gate);

/// The exclusive entry.
#[derive(Debug)]
pub(crate) struct Exclusive<'g>(&'g Gate);

impl Gate {
    /// Enters shared, waiting while an exclusive holder is inside (one
    /// runtime call).
    #[inline]
    pub(crate) fn enter(&self) -> Shared<'_> {
        let v = self.0.load(Ordering::Relaxed);
        if v & HELD == 0
            && self
                .0
                .compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return Shared(self);
        }
        self.enter_slow()
    }

    #[cold]
    #[inline(never)]
    fn enter_slow(&self) -> Shared<'_> {
        loop {
            let v = self.0.load(Ordering::Relaxed);
            if v & HELD != 0 {
                std::thread::yield_now();
                continue;
            }
            if self
                .0
                .compare_exchange_weak(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Shared(self);
            }
        }
    }

    /// Enters exclusively once no shared entry is inside, or gives up after
    /// `limit` (`None`).
    pub(crate) fn enter_exclusive(&self, limit: Duration) -> Option<Exclusive<'_>> {
        let start = Instant::now();
        let mut spins = 0u32;
        loop {
            if self
                .0
                .compare_exchange_weak(0, HELD, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                return Some(Exclusive(self));
            }
            if start.elapsed() >= limit {
                return None;
            }
            spins += 1;
            if spins < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

impl Drop for Shared<'_> {
    #[inline]
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Release);
    }
}

impl Drop for Exclusive<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_and(!HELD, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_entries_coexist_and_exclude_an_exclusive_one() {
        let g = Gate::default();
        let a = g.enter();
        let b = g.enter(); // a thread may hold several
        assert!(g.enter_exclusive(Duration::from_millis(5)).is_none());
        drop(a);
        assert!(g.enter_exclusive(Duration::from_millis(5)).is_none());
        drop(b);
        let x = g.enter_exclusive(Duration::from_millis(5));
        assert!(x.is_some());
        assert!(g.enter_exclusive(Duration::from_millis(5)).is_none());
        drop(x);
        drop(g.enter());
        assert_eq!(g.0.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_shared_entry_waits_for_the_exclusive_holder_to_leave() {
        let g = Gate::default();
        let inside = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let x = g.enter_exclusive(Duration::from_secs(1)).unwrap();
            let t = s.spawn(|| {
                let _e = g.enter();
                assert!(inside.load(Ordering::SeqCst), "entered while held");
            });
            std::thread::sleep(Duration::from_millis(20));
            inside.store(true, Ordering::SeqCst);
            drop(x);
            t.join().unwrap();
        });
    }
}

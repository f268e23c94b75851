//! The device's spare allocation record: the heap record of a dropped
//! allocation, kept for the device's next allocation, so that a buffer
//! allocated and dropped in a loop costs no heap allocation (with the
//! caching allocator, a new record and its free cost about twice the
//! safe layer's other work on an alloc+free pair).
//!
//! [`SpareSlot`] keeps one `Arc<T>` that nothing else holds (a lock-free
//! slot: an atomic pointer from [`Arc::into_raw`]). A record in it
//! is an [`Allocation`](super::Allocation) with no memory, no marks and no
//! device handle (the device owns the slot: a handle there would keep the
//! device alive for ever); reusing it writes the new allocation's fields in
//! place through [`Arc::get_mut`].

use std::sync::Arc;
use std::sync::atomic::{AtomicPtr, Ordering};

/// One spare `Arc<T>` for reuse, meant to be unique so that whoever takes
/// it may write through [`Arc::get_mut`]. Lock-free: a `take` and a `put`
/// racing each other at most drop a record instead of keeping it.
pub(crate) struct SpareSlot<T>(AtomicPtr<T>);

impl<T> Default for SpareSlot<T> {
    fn default() -> Self {
        SpareSlot(AtomicPtr::new(std::ptr::null_mut()))
    }
}

impl<T> SpareSlot<T> {
    /// The record kept, if there is one. Only what [`put`](Self::put) was
    /// given: writing to it goes through [`Arc::get_mut`], which refuses a
    /// record someone else holds.
    #[inline]
    pub(crate) fn take(&self) -> Option<Arc<T>> {
        let p = self.0.swap(std::ptr::null_mut(), Ordering::Acquire);
        // SAFETY: a non-null pointer in the slot came from `Arc::into_raw`
        // in `put`, and the swap handed it to this call alone.
        (!p.is_null()).then(|| unsafe { Arc::from_raw(p) })
    }

    /// Keeps `record` for the next [`take`](Self::take) if the slot is
    /// empty; otherwise drops it. Meant for records nothing else holds
    /// (whoever takes a shared one cannot write to it, and makes a new one).
    #[inline]
    pub(crate) fn put(&self, record: Arc<T>) {
        let p = Arc::into_raw(record).cast_mut();
        if self
            .0
            .compare_exchange(
                std::ptr::null_mut(),
                p,
                Ordering::Release,
                Ordering::Relaxed,
            )
            .is_err()
        {
            // Full: the record already there stays; this one goes.
            // SAFETY: `p` came from `Arc::into_raw` just above and was not
            // stored.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

impl<T> Drop for SpareSlot<T> {
    fn drop(&mut self) {
        drop(self.take());
    }
}

// SAFETY: the slot owns at most one `Arc<T>`, moved in and out whole; it is
// Send and Sync exactly when `Arc<T>` is.
unsafe impl<T: Send + Sync> Send for SpareSlot<T> {}
// SAFETY: as above; shared access only moves the `Arc` in or out atomically.
unsafe impl<T: Send + Sync> Sync for SpareSlot<T> {}

#[cfg(test)]
mod tests {
    use super::SpareSlot;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_put_record_is_taken_back_once() {
        let slot = SpareSlot::default();
        let record = Arc::new(vec![1u8, 2, 3]);
        let addr = Arc::as_ptr(&record);
        slot.put(record);
        let mut again = slot.take().expect("the record kept");
        assert_eq!(Arc::as_ptr(&again), addr, "the same heap record");
        assert!(
            Arc::get_mut(&mut again).is_some(),
            "writable: nothing else holds it"
        );
        assert!(slot.take().is_none(), "taken once");
    }

    #[test]
    fn a_shared_record_taken_back_cannot_be_written() {
        let slot = SpareSlot::default();
        let record = Arc::new(7u32);
        let other = Arc::clone(&record);
        slot.put(record);
        let mut taken = slot.take().expect("kept");
        assert!(
            Arc::get_mut(&mut taken).is_none(),
            "still shared with `other`"
        );
        drop(other);
        assert!(Arc::get_mut(&mut taken).is_some());
    }

    /// Counts its drops.
    struct Counted(Arc<AtomicUsize>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_full_slot_keeps_its_record_and_drops_the_new_one() {
        let drops = Arc::new(AtomicUsize::new(0));
        let slot = SpareSlot::default();
        let first = Arc::new(Counted(drops.clone()));
        let first_addr = Arc::as_ptr(&first);
        slot.put(first);
        slot.put(Arc::new(Counted(drops.clone())));
        assert_eq!(drops.load(Ordering::Relaxed), 1, "the second one dropped");
        let kept = slot.take().expect("a record");
        assert_eq!(Arc::as_ptr(&kept), first_addr, "the first one kept");
        assert!(slot.take().is_none());
    }

    #[test]
    fn threads_taking_and_putting_at_once_never_share_a_record() {
        let slot = Arc::new(SpareSlot::default());
        let drops = Arc::new(AtomicUsize::new(0));
        let made = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (slot, drops, made) = (slot.clone(), drops.clone(), made.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        let mut r = slot.take().unwrap_or_else(|| {
                            made.fetch_add(1, Ordering::Relaxed);
                            Arc::new(Counted(drops.clone()))
                        });
                        assert!(
                            Arc::get_mut(&mut r).is_some(),
                            "a taken record is not shared"
                        );
                        slot.put(r);
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("worker");
        }
        let kept = slot.take();
        assert_eq!(
            drops.load(Ordering::Relaxed) + usize::from(kept.is_some()),
            made.load(Ordering::Relaxed),
            "every record made is dropped or kept, once"
        );
        drop(kept);
        assert_eq!(drops.load(Ordering::Relaxed), made.load(Ordering::Relaxed));
    }

    #[test]
    fn a_dropped_slot_drops_its_record() {
        let drops = Arc::new(AtomicUsize::new(0));
        let slot = SpareSlot::default();
        slot.put(Arc::new(Counted(drops.clone())));
        assert_eq!(drops.load(Ordering::Relaxed), 0, "kept");
        drop(slot);
        assert_eq!(drops.load(Ordering::Relaxed), 1, "dropped with the slot");
    }
}

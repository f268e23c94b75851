//! The device's spare heap record: the record of a dropped allocation,
//! kept for the device's next allocation, so that a buffer allocated and
//! dropped in a loop costs no heap allocation.

use super::access_state::AccessState;
use super::allocation::{Allocation, Backing};
use super::mark::{Mark, MarkStream};
use crate::Device;
use crate::Stream;
use crate::allocator::Block;
use crate::memory::gate::Gate;
use parking_lot::Mutex;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// The heap record of an [`Allocation`] between two uses, kept by its
/// device for the next allocation (see [`Allocation::recycle`]). Its locks
/// are whole, holding no backing and no marks (the access state keeps the
/// capacity of its lists); `ptr`, `bytes`, `device` and `views` are not initialised
/// (they own nothing). Unique: no other handle to it exists, strong or weak.
pub(crate) struct Spare(pub(super) Arc<MaybeUninit<Allocation>>);

impl Spare {
    /// A new record.
    #[cold]
    #[inline(never)]
    pub(super) fn new() -> Spare {
        let mut record = MaybeUninit::<Allocation>::uninit();
        let p = record.as_mut_ptr();
        // SAFETY: `p` is the local record's value; its two locks are
        // written whole, as `Spare` requires.
        unsafe {
            (&raw mut (*p).backing).write(Mutex::new(None));
            (&raw mut (*p).state).write(Mutex::new(AccessState::default()));
        }
        Spare(Arc::new(record))
    }

    /// The record as a pointer from `Arc::into_raw`, without dropping it.
    #[inline]
    pub(super) fn into_raw(self) -> *mut MaybeUninit<Allocation> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: the `Arc` is moved out of `me` once, and `me` is never
        // dropped.
        Arc::into_raw(unsafe { std::ptr::read(&me.0) }).cast_mut()
    }

    /// Completes the record: an allocation of `bytes` at `ptr` of `device`
    /// with these marks.
    #[inline]
    pub(crate) fn fill(
        self,
        ptr: *mut c_void,
        bytes: usize,
        device: &Device,
        backing: Backing,
        write: Option<Mark>,
    ) -> Arc<Allocation> {
        let p = self.into_raw().cast::<Allocation>();
        // SAFETY: the record is unique (see `Spare`), so writing through
        // `p` races with nothing. Its locks are whole, holding no backing
        // and no marks: overwriting those `None`s without dropping them
        // loses nothing. `ptr`, `bytes`, `device` and `views` are written here, so
        // the value is whole before it is an `Allocation` again; `p` came
        // from `Arc::into_raw` of an `Arc<MaybeUninit<Allocation>>`, of the
        // same layout as `Arc<Allocation>`.
        unsafe {
            std::ptr::write((*p).backing.get_mut(), Some(backing));
            (&raw mut (*p).ptr).write(ptr);
            (&raw mut (*p).bytes).write(bytes);
            (&raw mut (*p).device).write(std::mem::ManuallyDrop::new(device.clone()));
            (&raw mut (*p).views).write(Gate::default());
            std::ptr::write(&raw mut (*p).state.get_mut().write, write);
            Arc::from_raw(p)
        }
    }

    /// Completes the record with a block of the device's caching
    /// allocator, taken for `stream` (the block's pool): every use follows
    /// the block's previous owner's work on it.
    ///
    /// # Safety
    ///
    /// `block` is a live handle that is never used again: the record takes
    /// it over.
    #[inline]
    pub(crate) unsafe fn fill_cached(
        self,
        block: &Block<usize>,
        bytes: usize,
        device: &Device,
        stream: &Stream,
    ) -> Arc<Allocation> {
        let ptr = block.ptr().as_ptr().cast::<c_void>();
        let write = MarkStream::previous_owner(stream).map(Mark::Stream);
        // SAFETY: the caller gives the handle up: it stays in one place,
        // the record.
        let block = unsafe { std::ptr::read(block) };
        self.fill(ptr, bytes, device, Backing::Cached(block), write)
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let p = Arc::as_ptr(&self.0).cast_mut().cast::<Allocation>();
        // SAFETY: the record is unique (no one else reads or writes it) and
        // its two locks are whole (the type's invariant): each is dropped
        // once, here (freeing the lists' capacity); the `Arc` then frees the
        // memory without dropping anything else (`MaybeUninit`).
        unsafe {
            std::ptr::drop_in_place(&raw mut (*p).backing);
            std::ptr::drop_in_place(&raw mut (*p).state);
        }
    }
}

/// One [`Spare`] record of a device: a lock-free slot.
#[derive(Default)]
pub(crate) struct SpareRecord(std::sync::atomic::AtomicPtr<MaybeUninit<Allocation>>);

impl SpareRecord {
    #[inline]
    pub(super) fn take(&self) -> Option<Spare> {
        let p = self
            .0
            .swap(std::ptr::null_mut(), std::sync::atomic::Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Arc::into_raw` of a `Spare`
        // in `put`, and the swap handed it to this call alone.
        (!p.is_null()).then(|| Spare(unsafe { Arc::from_raw(p) }))
    }

    #[inline]
    pub(super) fn put(&self, spare: Spare) {
        let p = spare.into_raw();
        let stored = self.0.compare_exchange(
            std::ptr::null_mut(),
            p,
            std::sync::atomic::Ordering::Release,
            std::sync::atomic::Ordering::Relaxed,
        );
        if stored.is_err() {
            // Full (the error holds the record already there, which stays):
            // free this one.
            // SAFETY: `p` came from `Arc::into_raw` of a `Spare` just above
            // and was not stored.
            drop(Spare(unsafe { Arc::from_raw(p) }));
        }
    }
}

impl Drop for SpareRecord {
    fn drop(&mut self) {
        drop(self.take());
    }
}

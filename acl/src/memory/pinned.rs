//! [`PinnedHostBuffer`]: page-locked host memory for asynchronous copies.

use super::DeviceRepr;
use super::gate::Shared;
use super::track::{Access, Allocation, Backing, host_wait};
use crate::error::{Error, Result};
use crate::{Device, result};
use std::marker::PhantomData;
use std::sync::Arc;

/// `len` elements of `T` in page-locked host memory (`aclrtMallocHost`),
/// the memory the runtime copies to and from truly asynchronously.
///
/// Its queued reads and writes are tracked like device memory's (see
/// [`track`](super::track)): a copy on one stream waits on the device for
/// conflicting copies on others, host access ([`as_slice`](Self::as_slice),
/// [`as_mut_slice`](Self::as_mut_slice)) waits on the host for the queued
/// copies it conflicts with — holding the buffer's lock while it waits, so
/// that no second thread gets a view the device is still writing — and
/// dropping frees the memory only after every queued copy has run.
///
/// `Send + Sync`: host access is gated as above, writes need `&mut self`.
pub struct PinnedHostBuffer<T: DeviceRepr> {
    ptr: *mut T,
    len: usize,
    alloc: Arc<Allocation>,
    _marker: PhantomData<T>,
}

// SAFETY: the memory is owned; host access waits for queued work (see
// above) and is otherwise governed by `&`/`&mut`.
unsafe impl<T: DeviceRepr> Send for PinnedHostBuffer<T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for PinnedHostBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for PinnedHostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: DeviceRepr> PinnedHostBuffer<T> {
    /// Allocates `len` elements of pinned memory, set to zero bytes.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the host cannot pin that much.
    #[doc(alias = "aclrtMallocHost")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        let bytes = super::buffer::byte_len::<T>("PinnedHostBuffer::zeroed", len)?;
        device.bind()?;
        let (ptr, backing) = if bytes == 0 {
            (std::ptr::NonNull::<T>::dangling().as_ptr(), Backing::Empty)
        } else {
            let p = result::malloc_host(bytes)?.cast::<T>();
            // SAFETY: `p` is a fresh allocation of `bytes` bytes, aligned for
            // any primitive (64 bytes), that nothing else references.
            unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
            (p, Backing::Pinned)
        };
        Ok(PinnedHostBuffer {
            ptr,
            len,
            alloc: Allocation::new(ptr.cast(), bytes, device, backing),
            _marker: PhantomData,
        })
    }

    /// A buffer of `len` elements, set to zero bytes, over a pool's block.
    ///
    /// # Safety
    ///
    /// `ptr` is pinned memory of `device` valid for `len` elements, aligned
    /// for `T`, that nothing else uses while the buffer and its queued
    /// copies live; `backing` gives it back.
    pub(crate) unsafe fn from_block(
        device: &Device,
        ptr: *mut std::ffi::c_void,
        len: usize,
        backing: Backing,
    ) -> Self {
        let bytes = len * std::mem::size_of::<T>();
        // SAFETY: valid for `bytes` bytes, unused by anything else (the
        // caller's contract).
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        PinnedHostBuffer {
            ptr: ptr.cast(),
            len,
            alloc: Allocation::new(ptr, bytes, device, backing),
            _marker: PhantomData,
        }
    }

    /// Allocates pinned memory holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuffer::zeroed`].
    pub fn from_slice(device: &Device, data: &[T]) -> Result<Self> {
        let mut buf = Self::zeroed(device, data.len())?;
        buf.as_mut_slice()?.copy_from_slice(data);
        Ok(buf)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device whose runtime pinned the memory.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// Waits until every queued copy that uses the buffer has finished.
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the copies; they stay
    /// recorded then (a later wait waits again).
    pub fn wait(&self) -> Result<()> {
        host_wait(&self.alloc, true)
    }

    /// The contents, after queued copies into them have finished, borrowed
    /// through a guard: while it lives, no graph launch may queue work on
    /// this memory ([`Graph::launch`](crate::graph::Graph::launch) refuses),
    /// so the `&[T]` cannot change under it. A launch queued before waits
    /// here like any queued copy.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuffer::wait`].
    pub fn as_slice(&self) -> Result<PinnedRef<'_, T>> {
        // SAFETY: `ptr` holds `len` initialised elements (zeroed at
        // allocation, written only as `T` since) for as long as `self`; a new
        // queued write needs `&mut self`.
        unsafe { view(&self.alloc, self.ptr, self.len) }
    }

    /// The contents, mutable, after every queued copy that uses them has
    /// finished; while the guard lives, no graph launch may queue work on
    /// this memory (see [`as_slice`](Self::as_slice)).
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuffer::wait`].
    pub fn as_mut_slice(&mut self) -> Result<PinnedMut<'_, T>> {
        // SAFETY: as `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { view_mut(&self.alloc, self.ptr, self.len) }
    }

    /// The host address, for queued copies.
    pub(crate) fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// The host address, for queued copies that write.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr
    }

    /// The allocation (its access record).
    pub(crate) fn allocation(&self) -> &Arc<Allocation> {
        &self.alloc
    }

    /// A read of this memory by a copy about to be queued.
    pub fn read_access(&self) -> Access {
        Access::read(&self.alloc)
    }

    /// A write of this memory by a copy about to be queued.
    pub fn write_access(&mut self) -> Access {
        Access::write(&self.alloc)
    }

    /// Frees the memory now (after its queued copies, as dropping does),
    /// reporting a failure instead of recording it. While a captured
    /// [`Graph`](crate::graph::Graph) holds the memory, only this handle is
    /// released: the memory is freed after the graph.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtFreeHost` or from recording an event.
    #[doc(alias = "aclrtFreeHost")]
    pub fn close(self) -> Result<()> {
        Allocation::close(&self.alloc)
    }
}

/// A host view of the `len` elements at `ptr`, the host side of `alloc`:
/// after the queued writes to them have finished, and holding the memory's
/// view gate, so that no graph launch queues work on it while the view
/// lives.
///
/// # Safety
///
/// `ptr` is valid for reading `len` initialised elements for `'a`, and no
/// new work writing them can be queued while the view lives (the caller
/// holds `&` of the buffer, whose writers need `&mut`).
pub(crate) unsafe fn view<'a, T>(
    alloc: &'a Allocation,
    ptr: *const T,
    len: usize,
) -> Result<PinnedRef<'a, T>> {
    let view = alloc.views.enter();
    host_wait(alloc, false)?;
    // SAFETY: the caller's contract; no queued work writes the elements
    // (waited for above; new work is excluded by the caller's borrow, a
    // graph launch by the view's gate, held by the guard).
    let slice = unsafe { std::slice::from_raw_parts(ptr, len) };
    Ok(PinnedRef::new(slice, view))
}

/// [`view`], mutable: after every queued access to the elements.
///
/// # Safety
///
/// As [`view`], for writing, and the caller's borrow of the buffer is
/// exclusive (`&mut`).
pub(crate) unsafe fn view_mut<'a, T>(
    alloc: &'a Allocation,
    ptr: *mut T,
    len: usize,
) -> Result<PinnedMut<'a, T>> {
    let view = alloc.views.enter();
    host_wait(alloc, true)?;
    // SAFETY: as in `view`, and no other host access (the `&mut` borrow).
    let slice = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
    Ok(PinnedMut::new(slice, view))
}

#[inline]
pub(crate) fn check_same_len(function: &'static str, what: &str, a: usize, b: usize) -> Result<()> {
    if a == b {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("{what}: the source has {a} elements, the destination {b}"),
        ))
    }
}

/// The contents of a [`PinnedHostBuffer`] (or a
/// [`RegisteredHostBuffer`](super::RegisteredHostBuffer)), borrowed from
/// [`as_slice`](PinnedHostBuffer::as_slice): dereferences to `&[T]`; while
/// it lives no graph launch queues work on the memory.
///
/// `Send + Sync` when `T` is (a shared slice and a count).
pub struct PinnedRef<'a, T> {
    slice: &'a [T],
    _view: Shared<'a>,
}

/// The contents of a [`PinnedHostBuffer`] (or a
/// [`RegisteredHostBuffer`](super::RegisteredHostBuffer)), borrowed mutably
/// from [`as_mut_slice`](PinnedHostBuffer::as_mut_slice): dereferences to
/// `&mut [T]`; while it lives no graph launch queues work on the memory.
///
/// `Send + Sync` when `T` is.
pub struct PinnedMut<'a, T> {
    slice: &'a mut [T],
    _view: Shared<'a>,
}

impl<'a, T> PinnedRef<'a, T> {
    /// The guard of `slice`, with its view of the memory's gate.
    pub(crate) fn new(slice: &'a [T], view: Shared<'a>) -> Self {
        PinnedRef { slice, _view: view }
    }
}

impl<'a, T> PinnedMut<'a, T> {
    /// The guard of `slice`, with its view of the memory's gate.
    pub(crate) fn new(slice: &'a mut [T], view: Shared<'a>) -> Self {
        PinnedMut { slice, _view: view }
    }
}

impl<T> std::ops::Deref for PinnedRef<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> std::ops::Deref for PinnedMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> std::ops::DerefMut for PinnedMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PinnedRef<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.slice.fmt(f)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PinnedMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.slice.fmt(f)
    }
}

impl<T, U: ?Sized> PartialEq<U> for PinnedRef<'_, T>
where
    [T]: PartialEq<U>,
{
    fn eq(&self, other: &U) -> bool {
        *self.slice == *other
    }
}

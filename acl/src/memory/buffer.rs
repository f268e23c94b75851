//! [`DeviceBuffer`]: owned device memory.

use super::cached::stream_key;
use super::track::{Allocation, Backing};
use super::{DeviceMemory, DeviceMemoryMut, DeviceRepr, DeviceSlice, DeviceSliceMut, sealed};
use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, Stream, release, result};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

/// `len` elements of `T` in device memory, owned; its queued reads and
/// writes are tracked (see the [module docs](super)).
///
/// `Send + Sync`: a handle to device memory that the host never
/// dereferences; writes need `&mut self`, and queued work is ordered by the
/// allocation's access record.
pub struct DeviceBuffer<T: DeviceRepr> {
    /// Taken once, by `Drop`.
    alloc: std::mem::ManuallyDrop<Arc<Allocation>>,
    len: usize,
    _marker: PhantomData<T>,
}

// SAFETY: the host never dereferences the memory through a `DeviceBuffer`;
// the allocation is Send + Sync, `&mut self` serialises writes, and `T` only
// describes the device's bytes (no `T` value lives on the host).
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: as above; shared access only queues reads.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &self.alloc.ptr())
            .field("len", &self.len)
            .field("device", &self.alloc.device().ordinal())
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

const UNINIT: &str = "DeviceBuffer::uninit";

/// `bytes` of uninitialised memory for use on `stream` (see
/// [`DeviceBuffer::uninit_on`]).
#[inline]
fn allocate(stream: &Stream, bytes: usize) -> Result<Arc<Allocation>> {
    let device = stream.device();
    if bytes != 0
        && !crate::device::in_host_fn()
        && !device.inner.tracking.has_backlog()
        && let Some(cache) = device.inner.allocator.get()
    {
        return from_cache(cache, stream, bytes);
    }
    allocate_slow(stream, bytes)
}

/// A block of `bytes` from the device's caching allocator, in `stream`'s pool.
#[inline]
fn from_cache(
    cache: &crate::memory::DeviceAllocator,
    stream: &Stream,
    bytes: usize,
) -> Result<Arc<Allocation>> {
    // The block's previous owner may have queued work on `stream`: every
    // use on another stream, or by the host, follows it.
    // SAFETY: the allocator hands the block over and never uses it again.
    cache.allocate_with(bytes, stream_key(stream), |b| unsafe {
        Allocation::new_cached(b, bytes, stream.device(), stream)
    })
}

/// [`allocate`] without the caching allocator, for no bytes, or after
/// giving back memory whose users have finished.
#[cold]
#[inline(never)]
fn allocate_slow(stream: &Stream, bytes: usize) -> Result<Arc<Allocation>> {
    let device = stream.device();
    if crate::device::in_host_fn() {
        return Err(crate::device::host_fn_error(UNINIT));
    }
    if device.inner.tracking.has_backlog() {
        // Memory whose users have finished goes back first.
        if let Err(e) = device.reap(false) {
            release::record("DeviceBuffer", e);
        }
    }
    Ok(if bytes == 0 {
        Allocation::new(std::ptr::null_mut(), 0, device, Backing::Empty)
    } else if let Some(cache) = device.inner.allocator.get() {
        from_cache(cache, stream, bytes)?
    } else {
        device.bind()?;
        let ptr = match result::malloc(bytes, raw::ACL_MEM_MALLOC_HUGE_FIRST) {
            Err(e) if crate::allocator::is_oom(&e) && device.inner.tracking.has_backlog() => {
                // Frees waiting for queued work: wait for it, then retry.
                device.reap(true)?;
                device.bind()?;
                result::malloc(bytes, raw::ACL_MEM_MALLOC_HUGE_FIRST)?
            }
            other => other?,
        };
        Allocation::new(ptr, bytes, device, Backing::Direct)
    })
}

pub(crate) fn byte_len<T>(function: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(
            function,
            format!("{len} elements overflow the address space"),
        )
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` elements for use on `stream` (the caching
    /// allocator's pool is that stream's), without initialising them.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the device is out of
    /// memory; [`Error::InvalidArgument`] inside a host function.
    ///
    /// # Safety
    ///
    /// The contents are unspecified until written; every element must be
    /// written before it is read (reading gives arbitrary but valid values of
    /// `T`, since `DeviceRepr` types accept any bit pattern).
    #[doc(alias = "aclrtMalloc")]
    #[inline]
    pub(crate) unsafe fn uninit_on(stream: &Stream, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(UNINIT, len)?;
        let alloc = allocate(stream, bytes)?;
        // Memory allocated in a capture is written (if at all) by captured
        // work: unwritten until the graph runs.
        let capture = stream.shared().capture.capture_id();
        if capture != 0 {
            alloc.await_launch(capture);
        }
        Ok(DeviceBuffer {
            alloc: std::mem::ManuallyDrop::new(alloc),
            len,
            _marker: PhantomData,
        })
    }

    /// Allocates `len` uninitialised elements on `device` (for its default
    /// stream): shorthand for `device.default_stream().alloc(len)`
    /// ([`Stream::alloc`]), where allocation belongs to a stream.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the device is out of memory.
    ///
    /// # Safety
    ///
    /// As [`Stream::alloc`]: every element must be written before it is read.
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: forwarded to the caller.
        unsafe { Self::uninit_on(&device.default_stream(), len) }
    }

    /// Allocates `len` elements set to zero bytes, on `device`'s default
    /// stream: shorthand for [`Stream::alloc_zeros`] on it.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::uninit`], or the runtime's error from `aclrtMemset`.
    #[doc(alias = "aclrtMemset")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        device.default_stream().alloc_zeros(len)
    }

    /// Allocates a buffer holding a copy of `data`, for `device`'s default
    /// stream: shorthand for [`Stream::clone_from_host`] on it. The copy is
    /// complete when this returns.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::uninit`], or the runtime's error from `aclrtMemcpy`.
    #[doc(alias = "aclrtMemcpy")]
    pub fn from_host(device: &Device, data: &[T]) -> Result<Self> {
        device.default_stream().clone_from_host(data)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device the memory lives on.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// The raw device pointer, for passing to C APIs. Null for an empty
    /// buffer. Work queued with it outside this crate must be ordered with
    /// [`prepare`](super::prepare) and [`read_access`](DeviceMemory::read_access).
    pub fn as_raw_ptr(&self) -> *const c_void {
        self.alloc.ptr()
    }

    /// The raw device pointer, for C APIs that write into the buffer (order
    /// it with [`write_access`](DeviceMemoryMut::write_access)).
    pub fn as_raw_mut_ptr(&mut self) -> *mut c_void {
        self.alloc.ptr()
    }

    /// A shared view of `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        let (start, end) = super::slice::bounds("DeviceBuffer::slice", &range, self.len)?;
        Ok(DeviceSlice::new(&self.alloc, start, end - start))
    }

    /// A mutable view of `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, end) = super::slice::bounds("DeviceBuffer::slice_mut", &range, self.len)?;
        Ok(DeviceSliceMut::new(&self.alloc, start, end - start))
    }

    /// Copies `data` into the buffer; the lengths must be equal. Waits for
    /// the buffer's queued work first; the copy is complete on return.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        super::copy::htod_sync("DeviceBuffer::copy_from_host", data, self)
    }

    /// Copies the buffer into `out`; the lengths must be equal. Waits for
    /// the buffer's queued work first.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error,
    /// including faults of the queued work that was waited for.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<()> {
        super::copy::dtoh_sync("DeviceBuffer::copy_to_host", self, out)
    }

    /// Copies the buffer into a new `Vec`, waiting for its queued work first.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::copy_to_host`].
    pub fn to_host_vec(&self) -> Result<Vec<T>> {
        super::copy::dtoh_vec(self)
    }

    /// Waits for the queued work that uses the buffer, then frees the
    /// memory (or returns it to the caching allocator), reporting a failure
    /// instead of recording it. Dropping does not wait: the memory is freed
    /// once that work has finished.
    ///
    /// While something else holds the memory for work it may still queue —
    /// a captured [`Graph`](crate::graph::Graph), an open HCCL group, an
    /// [`Access`](super::Access) — `close` releases only this handle, as
    /// dropping does: the memory is freed after the last holder.
    ///
    /// # Errors
    ///
    /// The runtime's error from waiting (including faults of that work) or
    /// from `aclrtFree`; the memory is released either way.
    #[doc(alias = "aclrtFree")]
    pub fn close(self) -> Result<()> {
        Allocation::close(&self.alloc)
    }

    /// A copy of the buffer in new device memory, queued on the device's
    /// default stream (see [`Stream::clone_dtod`] for another stream).
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc`], or the runtime's error from `aclrtMemcpyAsync`.
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn try_clone(&self) -> Result<DeviceBuffer<T>> {
        self.device().default_stream().clone_dtod(self)
    }

    /// The whole buffer viewed as elements of another plain type `U` (the
    /// bytes unchanged): `f32` as `u32` bits, `u8` bytes as `f16`, ...
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the size in bytes is not a multiple
    /// of `U`'s size or the address is not aligned for `U`.
    pub fn reinterpret<U: DeviceRepr>(&self) -> Result<DeviceSlice<'_, U>> {
        DeviceSlice::<T>::new(&self.alloc, 0, self.len).reinterpret()
    }

    /// As [`DeviceBuffer::reinterpret`], mutably.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::reinterpret`].
    pub fn reinterpret_mut<U: DeviceRepr>(&mut self) -> Result<DeviceSliceMut<'_, U>> {
        DeviceSliceMut::<T>::new(&self.alloc, 0, self.len).reinterpret()
    }

    /// Takes ownership of `len` elements at `ptr`, memory of `device` from
    /// `aclrtMalloc` that another library hands over: this buffer frees it
    /// with `aclrtFree`, after the work this crate queued on it.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `len` elements overflow the address
    /// space, or `ptr` is null for a non-empty buffer.
    ///
    /// # Safety
    ///
    /// `ptr` came from `aclrtMalloc` on `device`, holds at least `len`
    /// initialised elements of `T`, is not freed or used by anyone else
    /// afterwards (the buffer owns it), and no work queued outside this
    /// crate still uses it.
    #[doc(alias = "aclrtFree")]
    pub unsafe fn from_raw(device: &Device, ptr: *mut c_void, len: usize) -> Result<Self> {
        Self::adopt("DeviceBuffer::from_raw", device, ptr, len, Backing::Direct)
    }

    /// Borrows `len` elements at `ptr`, device memory of `device` that
    /// another library owns (a torch_npu tensor's `data_ptr()`, a DLPack
    /// tensor's data): the buffer orders the work queued through this crate
    /// as for its own memory, and never frees it.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::from_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` is device memory of `device` holding at least `len`
    /// initialised elements of `T`; it stays allocated until the buffer is
    /// dropped **and** the work queued on it through this crate has
    /// finished (synchronize the streams used before the owner frees it);
    /// nothing outside this crate writes it (or reads it, for a buffer
    /// written through this crate) while such work is queued, unless that
    /// is ordered by the caller (events or stream synchronisation).
    pub unsafe fn from_raw_borrowed(device: &Device, ptr: *mut c_void, len: usize) -> Result<Self> {
        Self::adopt(
            "DeviceBuffer::from_raw_borrowed",
            device,
            ptr,
            len,
            Backing::Foreign,
        )
    }

    fn adopt(
        function: &'static str,
        device: &Device,
        ptr: *mut c_void,
        len: usize,
        backing: Backing,
    ) -> Result<Self> {
        let bytes = byte_len::<T>(function, len)?;
        if ptr.is_null() && bytes > 0 {
            return Err(Error::invalid(
                function,
                "a null pointer for a non-empty buffer",
            ));
        }
        let backing = if bytes == 0 { Backing::Empty } else { backing };
        Ok(DeviceBuffer {
            alloc: std::mem::ManuallyDrop::new(Allocation::new(ptr, bytes, device, backing)),
            len,
            _marker: PhantomData,
        })
    }

    /// Gives up ownership of memory from `aclrtMalloc`: waits until the
    /// work this crate queued on it has finished, then returns the address,
    /// which the caller (another library) frees with `aclrtFree`. Memory
    /// this crate borrowed ([`DeviceBuffer::from_raw_borrowed`]) is
    /// returned the same way, still the owner's.
    ///
    /// # Errors
    ///
    /// The buffer back with [`Error::InvalidArgument`] when its memory
    /// belongs to the caching allocator (blocks are not `aclrtMalloc`
    /// allocations; copy into a buffer made without the allocator) or it is
    /// empty, or while a captured graph or an HCCL group still holds it; or
    /// with the runtime's error from waiting for the queued work
    /// (including its faults).
    pub fn into_raw(self) -> std::result::Result<*mut c_void, (Error, Self)> {
        const F: &str = "DeviceBuffer::into_raw";
        if Arc::strong_count(&self.alloc) > 1 {
            // A graph or an HCCL group holds the memory for work it may
            // still queue: handing it over would let the new owner free it
            // under that work.
            return Err((
                Error::invalid(
                    F,
                    "the memory is still held by other work (a captured graph or an HCCL \
                     group) that may use it later",
                ),
                self,
            ));
        }
        if let Err(e) = super::track::host_wait(&self.alloc, true) {
            return Err((e, self));
        }
        if !self.alloc.release_ownership() {
            return Err((
                Error::invalid(
                    F,
                    "the memory belongs to the caching allocator (or the buffer is empty): it is \
                     not an aclrtMalloc allocation another library could free",
                ),
                self,
            ));
        }
        Ok(self.alloc.ptr())
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; `self.alloc` is not used again.
        let alloc = unsafe { std::mem::ManuallyDrop::take(&mut self.alloc) };
        Allocation::recycle(alloc);
    }
}

impl<T: DeviceRepr> sealed::Sealed for DeviceBuffer<T> {}

impl<T: DeviceRepr> DeviceMemory<T> for DeviceBuffer<T> {
    fn device_ptr(&self) -> *const c_void {
        self.alloc.ptr()
    }
    fn len(&self) -> usize {
        self.len
    }
    fn allocation(&self) -> &Arc<Allocation> {
        &self.alloc
    }
}

impl<T: DeviceRepr> DeviceMemoryMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.alloc.ptr()
    }
}

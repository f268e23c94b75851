//! [`DeviceBuffer`]: owned device memory.

use super::cached::{DeviceAllocator, stream_key};
use super::{DeviceMemory, DeviceMemoryMut, DeviceRepr, DeviceSlice, DeviceSliceMut, sealed};
use crate::allocator::Block;
use crate::error::{Error, Result};
use crate::{Device, Stream, release, result};
use acl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

/// `len` elements of `T` in device memory, owned, with a home stream (see
/// the [module docs](super)).
///
/// `Send + Sync`: a handle to device memory that the host never
/// dereferences; writes need `&mut self`, and queued work is ordered on the
/// home stream.
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: *mut c_void,
    len: usize,
    stream: Stream,
    /// Set when the memory is a block of the device's caching allocator.
    block: Option<(Arc<DeviceAllocator>, Block<usize>)>,
    _marker: PhantomData<T>,
}

// SAFETY: the pointer is device memory the host never dereferences; the
// runtime's calls on it are thread-safe, and `&mut self` serialises writes.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: shared access only reads (copies out of) the buffer.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("device", &self.stream.device().ordinal())
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
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
    /// Allocates `len` elements on `stream`'s device, with `stream` as home,
    /// without initialising them.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the device is out of memory.
    ///
    /// # Safety
    ///
    /// The contents are unspecified until written; every element must be
    /// written before it is read (reading gives arbitrary but valid values of
    /// `T`, since `DeviceRepr` types accept any bit pattern).
    #[doc(alias = "aclrtMalloc")]
    pub(crate) unsafe fn uninit_on(stream: &Stream, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>("DeviceBuffer::uninit", len)?;
        let mut block = None;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else if let Some(alloc) = stream.device().caching_allocator() {
            let b = alloc.allocate(bytes, stream_key(stream))?;
            let ptr = b.ptr().as_ptr().cast::<c_void>();
            block = Some((alloc, b));
            ptr
        } else {
            stream.device().bind()?;
            result::malloc(bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST)?
        };
        Ok(DeviceBuffer {
            ptr,
            len,
            stream: stream.clone(),
            block,
            _marker: PhantomData,
        })
    }

    /// Allocates `len` uninitialised elements on `device`'s default stream.
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

    /// Allocates `len` elements set to zero bytes, on `device`'s default stream.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::uninit`], or the runtime's error from `aclrtMemset`.
    #[doc(alias = "aclrtMemset")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        device.default_stream().alloc_zeros(len)
    }

    /// Allocates a buffer holding a copy of `data`, on `device`'s default
    /// stream. The copy is complete when this returns.
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
        self.stream.device()
    }

    /// The home stream (see the [module docs](super)).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// The raw device pointer, for passing to C APIs. Null for an empty buffer.
    pub fn as_raw_ptr(&self) -> *const c_void {
        self.ptr
    }

    /// The raw device pointer, for C APIs that write into the buffer.
    pub fn as_raw_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }

    /// A shared view of `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        let (start, end) = super::slice::bounds("DeviceBuffer::slice", &range, self.len)?;
        Ok(DeviceSlice::new(self.ptr, start, end - start, &self.stream))
    }

    /// A mutable view of `range`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the range is out of bounds or decreasing.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, end) = super::slice::bounds("DeviceBuffer::slice_mut", &range, self.len)?;
        Ok(DeviceSliceMut::new(
            self.ptr,
            start,
            end - start,
            &self.stream,
        ))
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

    /// Frees the memory now (or returns it to the caching allocator),
    /// reporting a failure instead of recording it.
    ///
    /// # Errors
    ///
    /// The runtime's error from synchronizing the home stream or `aclrtFree`
    /// (the memory is freed either way).
    #[doc(alias = "aclrtFree")]
    pub fn close(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        let ptr = std::mem::replace(&mut self.ptr, std::ptr::null_mut());
        if let Some((alloc, block)) = self.block.take() {
            // Back to the home stream's pool: only work queued later on the
            // home stream — which runs after every queued use — can reuse it.
            return alloc.free(block);
        }
        if ptr.is_null() {
            return Ok(());
        }
        // Queued work may still use the memory: let it finish. A fault of
        // that work is reported, and the memory is freed all the same.
        let synced = self.stream.synchronize();
        self.stream.device().bind()?;
        // SAFETY: `ptr` came from aclrtMalloc, is freed only here (it was
        // swapped out above), and the home stream — on which all queued use
        // of it is ordered — has drained.
        let freed = unsafe { result::free(ptr) };
        synced.and(freed)
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            release::record("DeviceBuffer", e);
        }
    }
}

impl<T: DeviceRepr> sealed::Sealed for DeviceBuffer<T> {}

impl<T: DeviceRepr> DeviceMemory<T> for DeviceBuffer<T> {
    fn device_ptr(&self) -> *const c_void {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn home_stream(&self) -> &Stream {
        &self.stream
    }
}

impl<T: DeviceRepr> DeviceMemoryMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.ptr
    }
}

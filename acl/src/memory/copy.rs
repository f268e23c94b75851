//! Copies and fills: synchronous ones for ordinary host memory, and
//! stream-ordered ones (methods of [`Stream`]).

use super::pinned::check_same_len;
use super::track::{host_window, record_accesses, wait_for_conflicts};
use super::{DeviceBuffer, DeviceMemory, DeviceMemoryMut, DeviceRepr, PinnedHostBuffer};
use crate::error::Result;
use crate::result::raw;
use crate::{Stream, result};

/// Synchronous host → device copy: waits on the host for the queued
/// accesses of `dst` (any: the copy overwrites), then copies.
pub(crate) fn htod_sync<T: DeviceRepr>(
    function: &'static str,
    data: &[T],
    dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
) -> Result<()> {
    check_same_len(function, "host to device", data.len(), dst.len())?;
    if data.is_empty() {
        return Ok(());
    }
    // Held until the copy is done: no graph launch writes `dst` meanwhile.
    let _window = host_window(dst.allocation(), true)?;
    dst.device().bind()?;
    let bytes = std::mem::size_of_val(data);
    // SAFETY: `dst` is live device memory of `bytes` bytes with no queued
    // access left (waited for above; `&mut` excludes new ones), `data` a host
    // slice of the same size.
    unsafe {
        result::memcpy(
            dst.device_ptr_mut(),
            bytes,
            data.as_ptr().cast(),
            bytes,
            raw::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }
}

/// Synchronous device → host copy into `out` (`len` elements, possibly
/// uninitialised host memory): waits for the queued writes of `src`.
///
/// # Safety
///
/// `out` is valid for writing `src.len()` elements.
unsafe fn dtoh_raw<T: DeviceRepr>(
    src: &(impl DeviceMemory<T> + ?Sized),
    out: *mut T,
) -> Result<()> {
    if src.is_empty() {
        return Ok(());
    }
    // Held until the copy is done: no graph launch writes `src` meanwhile.
    let _window = host_window(src.allocation(), false)?;
    src.device().bind()?;
    let bytes = src.size_bytes();
    // SAFETY: `out` is valid for `bytes` bytes (the caller's contract);
    // `src` is live device memory of the same size whose queued writers have
    // finished. `T: DeviceRepr` accepts any bytes.
    unsafe {
        result::memcpy(
            out.cast(),
            bytes,
            src.device_ptr(),
            bytes,
            raw::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
}

/// Synchronous device → host copy, after the source's queued writes.
pub(crate) fn dtoh_sync<T: DeviceRepr>(
    function: &'static str,
    src: &(impl DeviceMemory<T> + ?Sized),
    out: &mut [T],
) -> Result<()> {
    check_same_len(function, "device to host", src.len(), out.len())?;
    // SAFETY: `out` holds `src.len()` elements.
    unsafe { dtoh_raw(src, out.as_mut_ptr()) }
}

pub(crate) fn dtoh_vec<T: DeviceRepr>(src: &(impl DeviceMemory<T> + ?Sized)) -> Result<Vec<T>> {
    let len = src.len();
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(len).map_err(|e| {
        crate::Error::invalid(
            "to_host_vec",
            format!("cannot allocate {len} elements on the host: {e}"),
        )
    })?;
    // SAFETY: the spare capacity holds at least `len` elements; it is only
    // written through a raw pointer (no reference to uninitialised memory is
    // made), and `set_len` runs after the copy has written all of them.
    unsafe {
        dtoh_raw(src, out.spare_capacity_mut().as_mut_ptr().cast::<T>())?;
        out.set_len(len);
    }
    Ok(out)
}

impl Stream {
    /// Allocates `len` uninitialised elements for use on this stream (with
    /// the caching allocator, from this stream's pool).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the device is out of memory.
    ///
    /// # Safety
    ///
    /// Every element must be written (by a copy, a fill or a kernel) before
    /// it is read; until then reads give arbitrary values.
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: forwarded to the caller.
        unsafe { DeviceBuffer::uninit_on(self, len) }
    }

    /// Allocates `len` elements set to zero bytes (a fill queued on this stream).
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc`], or the runtime's error from `aclrtMemsetAsync`.
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn alloc_zeros<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: the fill below writes every byte before any read, in stream order.
        let mut buf = unsafe { self.alloc::<T>(len)? };
        self.memset(&mut buf, 0)?;
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `data` (ordinary host memory:
    /// the copy is complete on return).
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc`], or the runtime's error from `aclrtMemcpy`.
    #[doc(alias = "aclrtMemcpy")]
    pub fn clone_from_host<T: DeviceRepr>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        // SAFETY: the copy below writes every element before any read.
        let mut buf = unsafe { self.alloc::<T>(data.len())? };
        // Ordered after the previous owner's work on a reused block.
        htod_sync("Stream::clone_from_host", data, &mut buf)?;
        // Written now, on the host side (synchronous), even in a capture.
        buf.allocation().written_now();
        Ok(buf)
    }

    /// Allocates a buffer and queues a copy of `src` into it.
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc`], or the runtime's error from `aclrtMemcpyAsync`.
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn clone_from_pinned<T: DeviceRepr>(
        &self,
        src: &PinnedHostBuffer<T>,
    ) -> Result<DeviceBuffer<T>> {
        // SAFETY: the queued copy writes every element before any later work reads it.
        let mut buf = unsafe { self.alloc::<T>(src.len())? };
        self.copy_htod(src, &mut buf)?;
        Ok(buf)
    }

    /// Queues a copy from pinned host memory to device memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a length mismatch; the runtime's error
    /// from `aclrtMemcpyAsync`.
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_htod<T: DeviceRepr>(
        &self,
        src: &PinnedHostBuffer<T>,
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
    ) -> Result<()> {
        check_same_len("Stream::copy_htod", "host to device", src.len(), dst.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let bytes = dst.size_bytes();
        let dst_ptr = dst.device_ptr_mut();
        let uses = [(src.allocation(), false), (dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        // SAFETY: `dst` is live device memory of `bytes` bytes and `src`
        // pinned memory of the same size; both stay allocated and unaliased
        // until the copy has run (the accesses are recorded below, and a
        // free waits for them).
        unsafe {
            result::memcpy_async(
                dst_ptr,
                bytes,
                src.as_ptr().cast(),
                bytes,
                raw::ACL_MEMCPY_HOST_TO_DEVICE,
                self.as_raw(),
            )?;
        }
        record_accesses(self, &seen, uses.into_iter());
        Ok(())
    }

    /// Queues a copy from device memory to pinned host memory. The host sees
    /// the data once `dst` is accessed ([`PinnedHostBuffer::as_slice`]
    /// waits for the copy).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a length mismatch; the runtime's error
    /// from `aclrtMemcpyAsync`.
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_dtoh<T: DeviceRepr>(
        &self,
        src: &(impl DeviceMemory<T> + ?Sized),
        dst: &mut PinnedHostBuffer<T>,
    ) -> Result<()> {
        check_same_len("Stream::copy_dtoh", "device to host", src.len(), dst.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let bytes = src.size_bytes();
        let host = dst.as_mut_ptr();
        let uses = [(src.allocation(), false), (dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        // SAFETY: as `copy_htod`, in the other direction.
        unsafe {
            result::memcpy_async(
                host.cast(),
                bytes,
                src.device_ptr(),
                bytes,
                raw::ACL_MEMCPY_DEVICE_TO_HOST,
                self.as_raw(),
            )?;
        }
        record_accesses(self, &seen, uses.into_iter());
        Ok(())
    }

    /// Queues a device-to-device copy. Between two devices, peer access must
    /// be enabled from this stream's device ([`Device::enable_peer_access`](crate::Device::enable_peer_access)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a length mismatch; the runtime's error
    /// from `aclrtMemcpyAsync` (`ACL_ERROR_RT_PARAM_INVALID` without peer access).
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn copy_dtod<T: DeviceRepr>(
        &self,
        src: &(impl DeviceMemory<T> + ?Sized),
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
    ) -> Result<()> {
        check_same_len(
            "Stream::copy_dtod",
            "device to device",
            src.len(),
            dst.len(),
        )?;
        if src.is_empty() {
            return Ok(());
        }
        let bytes = src.size_bytes();
        let dst_ptr = dst.device_ptr_mut();
        let uses = [(src.allocation(), false), (dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        // SAFETY: both are live device memory of `bytes` bytes, kept and
        // ordered with their other uses by the recorded accesses; `&mut dst`
        // excludes overlap with `src`.
        unsafe {
            result::memcpy_async(
                dst_ptr,
                bytes,
                src.device_ptr(),
                bytes,
                raw::ACL_MEMCPY_DEVICE_TO_DEVICE,
                self.as_raw(),
            )?;
        }
        record_accesses(self, &seen, uses.into_iter());
        Ok(())
    }

    /// Queues a fill of every byte of `dst` with `value`.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtMemsetAsync`.
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn memset<T: DeviceRepr>(
        &self,
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
        value: u8,
    ) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let bytes = dst.size_bytes();
        let dst_ptr = dst.device_ptr_mut();
        let uses = [(dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        // SAFETY: `dst` is live device memory of `bytes` bytes, ordered with
        // its other uses by the recorded accesses.
        unsafe {
            result::memset_async(dst_ptr, bytes, i32::from(value), bytes, self.as_raw())?;
        }
        record_accesses(self, &seen, uses.into_iter());
        Ok(())
    }

    /// Allocates a buffer and queues a copy of `src` (device memory) into
    /// it: a device-side clone.
    ///
    /// # Errors
    ///
    /// As [`Stream::alloc`], or the runtime's error from `aclrtMemcpyAsync`
    /// (`ACL_ERROR_RT_PARAM_INVALID` for another device's memory without
    /// peer access).
    #[doc(alias = "aclrtMemcpyAsync")]
    pub fn clone_dtod<T: DeviceRepr>(
        &self,
        src: &(impl DeviceMemory<T> + ?Sized),
    ) -> Result<DeviceBuffer<T>> {
        // SAFETY: the queued copy writes every element before later work
        // on this stream reads it.
        let mut buf = unsafe { self.alloc::<T>(src.len())? };
        self.copy_dtod(src, &mut buf)?;
        Ok(buf)
    }

    /// Queues a fill of every element of `dst` with `value`, for any
    /// element type: one `aclrtMemsetAsync` when all bytes of `value` are
    /// equal, one `aclrtMemsetD32Async` for other 4-byte values, otherwise a
    /// copy of a pinned block of values followed by device-side copies that
    /// double the filled part (about log2(len / 4 KiB) copies).
    ///
    /// # Errors
    ///
    /// The runtime's error from the fill or copies (work queued before a
    /// failing call stays queued and ordered); an allocation failure for
    /// the pinned block.
    #[doc(alias = "aclrtMemsetAsync")]
    #[doc(alias = "aclrtMemsetD32Async")]
    pub fn fill<T: DeviceRepr>(
        &self,
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
        value: T,
    ) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        // SAFETY: `DeviceRepr` types have no padding, so all `size` bytes of
        // `value` are initialised.
        let pattern = unsafe { std::slice::from_raw_parts((&raw const value).cast::<u8>(), size) };
        let (len, bytes) = (dst.len(), dst.size_bytes());
        let ptr = dst.device_ptr_mut();
        if pattern.iter().all(|&b| b == pattern[0]) {
            return self.memset(dst, pattern[0]);
        }
        if size == 4 && (ptr as usize).is_multiple_of(4) {
            let word = u32::from_ne_bytes([pattern[0], pattern[1], pattern[2], pattern[3]]);
            let uses = [(dst.allocation(), true)];
            let seen = wait_for_conflicts(self, uses.into_iter())?;
            // SAFETY: `dst` is live device memory of `len` 4-byte elements,
            // ordered with its other uses by the recorded accesses.
            unsafe { result::memset_d32_async(ptr, bytes, word, len, self.as_raw())? };
            record_accesses(self, &seen, uses.into_iter());
            return Ok(());
        }
        let chunk = len.min((4096 / size).max(1));
        let seed = PinnedHostBuffer::from_slice(self.device(), &vec![value; chunk])?;
        let uses = [(seed.allocation(), false), (dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        let stream = self.as_raw();
        let mut queued = Ok(());
        let mut done = chunk * size;
        // SAFETY: the seed is pinned memory of `done` bytes and `dst` live
        // device memory of `bytes >= done` bytes; both stay allocated and
        // unaliased until the copies have run (accesses recorded below).
        unsafe {
            result::memcpy_async(
                ptr,
                done,
                seed.as_ptr().cast(),
                done,
                raw::ACL_MEMCPY_HOST_TO_DEVICE,
                stream,
            )
        }?;
        while done < bytes {
            let n = done.min(bytes - done);
            let to = ptr.cast::<u8>().wrapping_add(done).cast();
            // SAFETY: `[0, n)` (filled by the copies before, in stream
            // order) and `[done, done + n)` are disjoint ranges of `dst`.
            queued = unsafe {
                result::memcpy_async(to, n, ptr, n, raw::ACL_MEMCPY_DEVICE_TO_DEVICE, stream)
            };
            if queued.is_err() {
                break;
            }
            done += n;
        }
        record_accesses(self, &seen, uses.into_iter());
        queued
    }
}

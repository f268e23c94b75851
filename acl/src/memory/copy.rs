//! Copies and fills: synchronous ones for ordinary host memory, and
//! stream-ordered ones (methods of [`Stream`]).

use super::pinned::check_same_len;
use super::{DeviceBuffer, DeviceMemory, DeviceMemoryMut, DeviceRepr, PinnedHostBuffer};
use crate::error::Result;
use crate::event::order_after;
use crate::{Stream, result};
use acl_sys as sys;

/// The homes among `homes` that are not `stream` itself (owned, so that the
/// memory they came from can be borrowed mutably by the operation).
fn foreign_homes<const N: usize>(stream: &Stream, homes: [&Stream; N]) -> [Option<Stream>; N] {
    homes.map(|h| (!stream.same_queue(h)).then(|| h.clone()))
}

/// Runs `op`, which queues work on `stream` touching memory whose homes are
/// `foreign` (see [`foreign_homes`]), ordered as the module docs describe:
/// after the homes' queued work, and before their later work. Work on a
/// buffer's own home stream needs no ordering and costs nothing extra.
fn with_homes<const N: usize>(
    stream: &Stream,
    foreign: [Option<Stream>; N],
    op: impl FnOnce() -> Result<()>,
) -> Result<()> {
    for home in foreign.iter().flatten() {
        order_after(stream, home)?;
    }
    op()?;
    for home in foreign.iter().flatten() {
        order_after(home, stream)?;
    }
    Ok(())
}

/// [`with_homes`] for any number of memories (kernel launches, model
/// executions): `homes` are the home streams of every memory `op` queues
/// work on; each foreign one (not `stream`, counted once) is ordered as
/// [`with_homes`] does.
pub(crate) fn with_home_streams(
    stream: &Stream,
    homes: &[&Stream],
    op: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let mut foreign: Vec<&Stream> = Vec::new();
    for &h in homes {
        if !stream.same_queue(h) && !foreign.iter().any(|f| f.same_queue(h)) {
            foreign.push(h);
        }
    }
    for home in &foreign {
        order_after(stream, home)?;
    }
    op()?;
    for home in &foreign {
        order_after(home, stream)?;
    }
    Ok(())
}

/// Synchronous host → device copy into memory that may have queued work.
pub(crate) fn htod_sync<T: DeviceRepr>(
    function: &'static str,
    data: &[T],
    dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
) -> Result<()> {
    check_same_len(function, "host to device", data.len(), dst.len())?;
    if data.is_empty() {
        return Ok(());
    }
    dst.home_stream().synchronize()?;
    // SAFETY: queued work on `dst` has finished; the ranges have equal size.
    unsafe { htod_now(data, dst) }
}

/// # Safety
///
/// No queued work uses `dst`; lengths are equal.
unsafe fn htod_now<T: DeviceRepr>(
    data: &[T],
    dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
) -> Result<()> {
    dst.home_stream().device().bind()?;
    let bytes = std::mem::size_of_val(data);
    // SAFETY: `dst` is live device memory of `bytes` bytes (the caller's
    // contract), `data` a host slice of the same size.
    unsafe {
        result::memcpy(
            dst.device_ptr_mut(),
            bytes,
            data.as_ptr().cast(),
            bytes,
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    }
}

/// Synchronous device → host copy, after the source's queued work.
pub(crate) fn dtoh_sync<T: DeviceRepr>(
    function: &'static str,
    src: &(impl DeviceMemory<T> + ?Sized),
    out: &mut [T],
) -> Result<()> {
    check_same_len(function, "device to host", src.len(), out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    src.home_stream().synchronize()?;
    src.home_stream().device().bind()?;
    let bytes = std::mem::size_of_val(out);
    // SAFETY: `out` is a host slice of `bytes` bytes; `src` live device memory
    // of the same size whose queued writers have finished. `T: DeviceRepr`
    // accepts any bytes.
    unsafe {
        result::memcpy(
            out.as_mut_ptr().cast(),
            bytes,
            src.device_ptr(),
            bytes,
            sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
}

pub(crate) fn dtoh_vec<T: DeviceRepr>(src: &(impl DeviceMemory<T> + ?Sized)) -> Result<Vec<T>> {
    let len = src.len();
    let mut out: Vec<T> = Vec::with_capacity(len);
    // SAFETY: the copy writes all `len` elements before `set_len`; on error
    // the Vec is dropped with length 0. `T: DeviceRepr` accepts any bytes.
    unsafe {
        let spare = std::slice::from_raw_parts_mut(out.as_mut_ptr(), len);
        dtoh_sync("to_host_vec", src, spare)?;
        out.set_len(len);
    }
    Ok(out)
}

impl Stream {
    /// Allocates `len` uninitialised elements with this stream as their home.
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
        if !data.is_empty() {
            // SAFETY: the buffer is new: no queued work uses it.
            unsafe { htod_now(data, &mut buf)? };
        }
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
        let foreign = foreign_homes(self, [dst.home_stream()]);
        with_homes(self, foreign, || {
            let host = src.queue_on(self)?;
            self.device().bind()?;
            // SAFETY: `dst` is live device memory of `bytes` bytes, kept alive
            // and unaliased until the copy runs by the home-stream ordering;
            // `host` is pinned memory of the same size, guarded by `queue_on`.
            unsafe {
                result::memcpy_async(
                    dst.device_ptr_mut(),
                    bytes,
                    host.cast(),
                    bytes,
                    sys::ACL_MEMCPY_HOST_TO_DEVICE,
                    self.as_raw(),
                )
            }
        })
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
        let foreign = foreign_homes(self, [src.home_stream()]);
        with_homes(self, foreign, || {
            let host = dst.queue_on(self)?;
            self.device().bind()?;
            // SAFETY: as `copy_htod`, in the other direction.
            unsafe {
                result::memcpy_async(
                    host.cast(),
                    bytes,
                    src.device_ptr(),
                    bytes,
                    sys::ACL_MEMCPY_DEVICE_TO_HOST,
                    self.as_raw(),
                )
            }
        })
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
        let foreign = foreign_homes(self, [src.home_stream(), dst.home_stream()]);
        with_homes(self, foreign, || {
            self.device().bind()?;
            // SAFETY: both are live device memory of `bytes` bytes, ordered
            // with their other uses by the home streams; `&mut dst` excludes
            // overlap with `src` within one buffer.
            unsafe {
                result::memcpy_async(
                    dst.device_ptr_mut(),
                    bytes,
                    src.device_ptr(),
                    bytes,
                    sys::ACL_MEMCPY_DEVICE_TO_DEVICE,
                    self.as_raw(),
                )
            }
        })
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
        let foreign = foreign_homes(self, [dst.home_stream()]);
        with_homes(self, foreign, || {
            self.device().bind()?;
            // SAFETY: `dst` is live device memory of `bytes` bytes, ordered
            // with its other uses by the home stream.
            unsafe {
                result::memset_async(
                    dst.device_ptr_mut(),
                    bytes,
                    i32::from(value),
                    bytes,
                    self.as_raw(),
                )
            }
        })
    }
}

//! [`PinnedHostBuffer`]: page-locked host memory for asynchronous copies.

use super::DeviceRepr;
use crate::error::{Error, Result};
use crate::{Device, Stream, release, result};
use std::marker::PhantomData;
use std::sync::Mutex;

/// `len` elements of `T` in page-locked host memory (`aclrtMallocHost`),
/// the memory the runtime copies to and from truly asynchronously.
///
/// It remembers the stream of its last queued copy. A copy queued on another
/// stream waits for it; host access ([`as_slice`](Self::as_slice),
/// [`as_mut_slice`](Self::as_mut_slice)) and dropping first wait for that
/// stream, so the host never sees or frees memory a queued copy still uses.
///
/// `Send + Sync`: host access is gated as above, writes need `&mut self`.
pub struct PinnedHostBuffer<T: DeviceRepr> {
    ptr: *mut T,
    len: usize,
    device: Device,
    pending: Mutex<Option<Stream>>,
    _marker: PhantomData<T>,
}

// SAFETY: the memory is owned; host access synchronizes with queued work
// (see above) and is otherwise governed by `&`/`&mut`.
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
        let ptr = if bytes == 0 {
            std::ptr::NonNull::<T>::dangling().as_ptr()
        } else {
            let p = result::malloc_host(bytes)?.cast::<T>();
            // SAFETY: `p` is a fresh allocation of `bytes` bytes, aligned for
            // any primitive (64 bytes), that nothing else references.
            unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
            p
        };
        Ok(PinnedHostBuffer {
            ptr,
            len,
            device: device.clone(),
            pending: Mutex::new(None),
            _marker: PhantomData,
        })
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
        &self.device
    }

    /// Waits for the stream of the last queued copy, if any.
    ///
    /// # Errors
    ///
    /// The runtime's error from synchronizing that stream.
    pub fn wait(&self) -> Result<()> {
        let pending = crate::sync::lock(&self.pending).take();
        match pending {
            Some(stream) => stream.synchronize(),
            None => Ok(()),
        }
    }

    /// The contents, after queued copies that use them have finished.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuffer::wait`].
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait()?;
        // SAFETY: `ptr` holds `len` initialised elements (zeroed at
        // allocation, written only as `T` since); no queued copy uses them.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents, mutable, after queued copies that use them have finished.
    ///
    /// # Errors
    ///
    /// As [`PinnedHostBuffer::wait`].
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait()?;
        // SAFETY: as `as_slice`, and `&mut self` makes the access exclusive.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Prepares a copy on `stream`: orders it after the previous copy's
    /// stream and records `stream` as the one to wait for. Returns the
    /// host pointer.
    pub(crate) fn queue_on(&self, stream: &Stream) -> Result<*mut T> {
        let mut pending = crate::sync::lock(&self.pending);
        match pending.as_ref() {
            Some(prev) if prev.same_queue(stream) => {}
            Some(prev) => {
                crate::event::order_after(stream, prev)?;
                *pending = Some(stream.clone());
            }
            None => *pending = Some(stream.clone()),
        }
        Ok(self.ptr)
    }

    fn release(&mut self) -> Result<()> {
        if self.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(());
        }
        let waited = self.wait();
        self.device.bind()?;
        // SAFETY: `ptr` came from aclrtMallocHost and is freed only here
        // (drop runs once); queued copies using it have finished.
        let freed = unsafe { result::free_host(self.ptr.cast()) };
        waited.and(freed)
    }
}

impl<T: DeviceRepr> Drop for PinnedHostBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            release::record("PinnedHostBuffer", e);
        }
    }
}

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

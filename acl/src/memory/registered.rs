//! [`RegisteredHostBuffer`]: a host buffer the device reads and writes in
//! place (`aclrtHostRegister`), without a copy.

use super::track::{Access, Allocation, Backing, RegisteredHost, host_wait};
use super::{DeviceMemory, DeviceMemoryMut, DeviceRepr, PinnedMut, PinnedRef};
use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, result};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

/// A `Vec<T>` registered with the runtime (`aclrtHostRegister`, mapped):
/// queued work on the device reads and writes its elements in place, as
/// device memory ([`DeviceMemory`], [`DeviceMemoryMut`]: copies, operators,
/// kernels), and the host reads and writes them through guards.
///
/// It is tracked like any device memory (see [`track`](super::track)): work
/// queued on it is ordered with its other users; a host view
/// ([`as_slice`](Self::as_slice), [`as_mut_slice`](Self::as_mut_slice)) waits
/// for the queued work it conflicts with and, while it lives, no graph
/// launch may queue work on the memory. The buffer owns the `Vec`: it is
/// unregistered and dropped once every queued access has run and every
/// holder (a captured graph, an HCCL group) is gone — never while the
/// device may still reach it.
///
/// `Send + Sync`: host access is gated as above, writes need `&mut self`.
#[doc(alias = "aclrtHostRegister")]
#[doc(alias = "aclrtHostUnregister")]
pub struct RegisteredHostBuffer<T: DeviceRepr> {
    /// The host address of the first element.
    host: *mut T,
    len: usize,
    /// Its device address is the runtime's for the registration.
    alloc: Arc<Allocation>,
    _marker: PhantomData<T>,
}

// SAFETY: the memory is owned (by the allocation's backing); host access
// waits for queued work and is otherwise governed by `&`/`&mut`.
unsafe impl<T: DeviceRepr> Send for RegisteredHostBuffer<T> {}
// SAFETY: as above.
unsafe impl<T: DeviceRepr> Sync for RegisteredHostBuffer<T> {}

/// [`RegisteredHostBuffer::new`] failed: the error, and the data given
/// back unchanged.
#[derive(Debug)]
pub struct RegisterError<T> {
    /// Why the registration failed.
    pub error: Error,
    /// The vector that was to be registered.
    pub data: Vec<T>,
}

impl<T> std::fmt::Display for RegisterError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl<T: std::fmt::Debug> std::error::Error for RegisterError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl<T: DeviceRepr> std::fmt::Debug for RegisteredHostBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredHostBuffer")
            .field("host", &self.host)
            .field("device", &self.alloc.ptr())
            .field("len", &self.len)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<T: DeviceRepr> RegisteredHostBuffer<T> {
    /// Registers `data` for `device`, mapped: the device reaches its
    /// elements at the address the runtime gives.
    ///
    /// # Errors
    ///
    /// With `data` given back: [`Error::InvalidArgument`] for an empty
    /// vector (the runtime registers at least one byte); the runtime's
    /// error from `aclrtHostRegister` (`ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED`,
    /// 507910, when the memory overlaps a registration).
    #[allow(
        clippy::result_large_err,
        reason = "the error gives the vector back; a failed registration is rare"
    )]
    pub fn new(device: &Device, mut data: Vec<T>) -> std::result::Result<Self, RegisterError<T>> {
        const F: &str = "RegisteredHostBuffer::new";
        let len = data.len();
        let bytes = std::mem::size_of_val(data.as_slice());
        if bytes == 0 {
            return Err(RegisterError {
                error: Error::invalid(F, "nothing to register (an empty vector)"),
                data,
            });
        }
        let host = data.as_mut_ptr();
        let registered = device.bind().and_then(|()| {
            // SAFETY: `host` is `bytes` bytes of the vector's buffer, which
            // the allocation's backing keeps allocated at this address (a
            // `Vec`'s buffer does not move with it) until it is unregistered.
            unsafe {
                result::host_register(host.cast(), bytes as u64, raw::ACL_HOST_REGISTER_MAPPED)
            }
        });
        let dev = match registered {
            Ok(dev) => dev,
            Err(error) => return Err(RegisterError { error, data }),
        };
        // SAFETY: registered just above; the backing owns the vector.
        let backing = unsafe { RegisteredHost::new(host.cast::<c_void>(), Box::new(data)) };
        Ok(RegisteredHostBuffer {
            host,
            len,
            alloc: Allocation::new(dev, bytes, device, Backing::Registered(backing)),
            _marker: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements (never: registration needs one).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device it is registered for.
    pub fn device(&self) -> &Device {
        self.alloc.device()
    }

    /// The host address of the first element.
    pub fn host_ptr(&self) -> *const T {
        self.host
    }

    /// Waits until every queued access to the memory has finished.
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the awaited work.
    pub fn wait(&self) -> Result<()> {
        host_wait(&self.alloc, true)
    }

    /// The contents, after queued writes to them have finished, through a
    /// guard: while it lives, no graph launch may queue work on this memory,
    /// so the `&[T]` cannot change under it.
    ///
    /// # Errors
    ///
    /// As [`RegisteredHostBuffer::wait`].
    pub fn as_slice(&self) -> Result<PinnedRef<'_, T>> {
        // SAFETY: `host` holds `len` initialised elements (the vector's),
        // allocated while the allocation lives (as long as `self`); a new
        // queued write needs `&mut self`.
        unsafe { super::pinned::view(&self.alloc, self.host, self.len) }
    }

    /// The contents, mutable, after every queued access to them has
    /// finished; while the guard lives, no graph launch may queue work on
    /// this memory.
    ///
    /// # Errors
    ///
    /// As [`RegisteredHostBuffer::wait`].
    pub fn as_mut_slice(&mut self) -> Result<PinnedMut<'_, T>> {
        // SAFETY: as `as_slice`, and `&mut self` makes the access exclusive.
        unsafe { super::pinned::view_mut(&self.alloc, self.host, self.len) }
    }

    /// A read of this memory by work about to be queued.
    pub fn read_access(&self) -> Access {
        Access::read(&self.alloc)
    }

    /// A write of this memory by work about to be queued.
    pub fn write_access(&mut self) -> Access {
        Access::write(&self.alloc)
    }

    /// Unregisters the memory and drops the vector now, after its queued
    /// accesses (as dropping does), reporting a failure instead of recording
    /// it. While a captured graph or an HCCL group holds the memory, only
    /// this handle is released: the rest happens after the last holder.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtHostUnregister` (the memory is then
    /// leaked: the device may still reach it) or from waiting.
    pub fn close(self) -> Result<()> {
        Allocation::close(&self.alloc)
    }
}

impl<T: DeviceRepr> super::sealed::Sealed for RegisteredHostBuffer<T> {}

impl<T: DeviceRepr> DeviceMemory<T> for RegisteredHostBuffer<T> {
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

impl<T: DeviceRepr> DeviceMemoryMut<T> for RegisteredHostBuffer<T> {
    fn device_ptr_mut(&mut self) -> *mut c_void {
        self.alloc.ptr()
    }
}

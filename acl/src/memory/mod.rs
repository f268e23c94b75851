//! Device memory, pinned host memory, and copies between them.
//!
//! # The types
//!
//! - [`DeviceBuffer<T>`]: `len` elements of `T` in an NPU's HBM, owned.
//!   [`DeviceSlice`] and [`DeviceSliceMut`] borrow a range of one
//!   ([`DeviceBuffer::slice`], [`DeviceBuffer::slice_mut`],
//!   [`DeviceSliceMut::split_at_mut`]).
//! - [`PinnedHostBuffer<T>`]: page-locked host memory (`aclrtMallocHost`),
//!   the only host memory the runtime copies truly asynchronously.
//! - [`RegisteredHostBuffer<T>`]: your `Vec<T>`, registered with the
//!   runtime (`aclrtHostRegister`): the device reads and writes it in place,
//!   as device memory, with no copy; the host through guards.
//! - Element types implement [`DeviceRepr`]: the integer types, `f32`, `f64`,
//!   `half::f16`, `half::bf16`, or your own plain `#[repr(C)]` types through
//!   an `unsafe impl`.
//!
//! # How memory stays safe while work is queued
//!
//! The runtime runs queued work later; freeing or rewriting memory that
//! queued work still uses is undefined behaviour on the device. This crate
//! rules it out by tracking, per allocation, the last write and the reads
//! since (see [`track`] for the details):
//!
//! - Work queued on stream `S` first makes `S` wait, **on the device**, for
//!   the recorded accesses it conflicts with on other streams: a read waits
//!   for the last write; a write for the last write and every read since.
//!   Nothing else: a copy on an idle stream does not wait for a busy one
//!   unless it touches memory the busy one uses. Afterwards the access is
//!   recorded (an event on `S`, once a second stream is in use).
//! - Synchronous host copies ([`DeviceBuffer::to_host_vec`],
//!   [`DeviceBuffer::copy_from_host`], …) and host views of pinned and
//!   registered memory wait on the host for exactly those conflicting
//!   accesses.
//! - Dropping a buffer never waits: its memory is freed once every recorded
//!   access has completed (polled at later allocations, and waited for by
//!   [`Device::synchronize`](crate::Device::synchronize)), or, with the
//!   caching allocator ([`Device::enable_caching_allocator`](crate::Device::enable_caching_allocator)),
//!   goes back to the pool of the stream it was allocated on, where only
//!   work queued later on that stream reuses it, and every other stream that
//!   used it must first pass an event.
//! - Tracking is per allocation, not per byte: two disjoint slices of one
//!   buffer written on two streams are ordered as if they overlapped (the
//!   second waits for the first). Allocate separate buffers for work meant
//!   to overlap.
//! - A buffer is borrowed (`&`) while work is queued that reads it and
//!   mutably (`&mut`) while work is queued that writes it, so the Rust
//!   borrow rules keep the host from racing with itself; the tracking keeps
//!   the device in order.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, DeviceBuffer, Runtime};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let buf = DeviceBuffer::from_host(&npu, &[1.0f32, 2.0, 3.0])?;
//! assert_eq!(buf.to_host_vec()?, vec![1.0, 2.0, 3.0]);
//! # Ok::<(), acl::Error>(())
//! ```

mod buffer;
mod cached;
mod copy;
mod dtype;
pub(crate) mod gate;
mod pinned;
mod pinned_pool;
mod registered;
mod repr;
mod slice;
pub mod track;

pub use buffer::DeviceBuffer;
pub use cached::{CachingAllocatorHandle, DeviceAllocator, DeviceBackend};
pub use dtype::{DataType, Element};
pub use pinned::{PinnedHostBuffer, PinnedMut, PinnedRef};
pub use pinned_pool::{PinnedPool, PinnedPoolStats};
pub use registered::{RegisterError, RegisteredHostBuffer};
pub use repr::{Bool, DeviceRepr};
pub use slice::{DeviceSlice, DeviceSliceMut};
pub use track::{Access, Allocation, Prepared, prepare, record};

use crate::Device;
use std::ffi::c_void;
use std::sync::Arc;

mod sealed {
    pub trait Sealed {}
}

/// Device memory that queued work may read: a buffer or a slice of one.
///
/// Sealed: implemented by [`DeviceBuffer`], [`DeviceSlice`], [`DeviceSliceMut`]
/// and [`RegisteredHostBuffer`] (host memory the device reaches in place).
pub trait DeviceMemory<T: DeviceRepr>: sealed::Sealed {
    /// The device address of the first element.
    fn device_ptr(&self) -> *const c_void;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Whether there are no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Size in bytes.
    fn size_bytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
    /// The allocation the memory is part of (its access record).
    fn allocation(&self) -> &Arc<Allocation>;
    /// The device the memory lives on.
    fn device(&self) -> &Device {
        self.allocation().device()
    }
    /// A read of this memory by work about to be queued, for [`prepare`].
    fn read_access(&self) -> Access {
        Access::read(self.allocation())
    }
}

/// Device memory that queued work may write.
pub trait DeviceMemoryMut<T: DeviceRepr>: DeviceMemory<T> {
    /// The device address of the first element, for writing.
    fn device_ptr_mut(&mut self) -> *mut c_void;
    /// A write of this memory by work about to be queued, for [`prepare`].
    fn write_access(&mut self) -> Access {
        Access::write(self.allocation())
    }
}

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
//! - Element types implement [`DeviceRepr`]: the integer types, `f32`, `f64`,
//!   `half::f16`, `half::bf16`, or your own plain `#[repr(C)]` types through
//!   an `unsafe impl`.
//!
//! # How memory stays safe while work is queued
//!
//! The runtime runs queued work later; freeing or rewriting memory that
//! queued work still uses is undefined behaviour on the device. This crate
//! rules it out with one invariant:
//!
//! > **Every device buffer has a home stream, and all queued work that
//! > touches the buffer is ordered before the home stream's later work.**
//!
//! - A buffer is allocated on a stream (its home): [`Stream::alloc`](crate::Stream::alloc)
//!   and friends, or the device's default stream for [`DeviceBuffer::from_host`].
//! - Work on the home stream is ordered by the stream itself: no cost.
//! - Work on *another* stream first waits for the home stream's queued work
//!   (an event recorded on the home stream), and afterwards the home stream
//!   waits for it (an event recorded on the other stream). The events come
//!   from a per-device pool, and no host thread blocks.
//! - The host reads or writes a buffer (the synchronous copies) only after
//!   synchronizing its home stream.
//! - Dropping a buffer synchronizes its home stream before `aclrtFree`, or,
//!   with the caching allocator ([`Device::enable_caching_allocator`](crate::Device::enable_caching_allocator)),
//!   returns the block to the home stream's pool without waiting: only work
//!   queued later on the same stream, which runs after every earlier use,
//!   can reuse it. The allocator frees cached segments back to the runtime
//!   only after synchronizing the device.
//!
//! Pinned host buffers track the stream of their last queued copy: a later
//! copy on another stream waits for it, and host access
//! ([`PinnedHostBuffer::as_slice`], [`PinnedHostBuffer::as_mut_slice`]) or
//! dropping first waits for that stream. Copies from or to ordinary
//! (pageable) host memory are synchronous: they return when the data has
//! arrived.
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
mod pinned;
mod repr;
mod slice;

pub use buffer::DeviceBuffer;
pub use cached::{BackendEvent, DeviceAllocator, DeviceBackend, stream_key};
pub(crate) use copy::with_home_streams;
pub use dtype::{DataType, Element};
pub use pinned::PinnedHostBuffer;
pub use repr::DeviceRepr;
pub use slice::{DeviceSlice, DeviceSliceMut};

use crate::Stream;
use std::ffi::c_void;

mod sealed {
    pub trait Sealed {}
}

/// Device memory that queued work may read: a buffer or a slice of one.
///
/// Sealed: implemented by [`DeviceBuffer`], [`DeviceSlice`] and [`DeviceSliceMut`].
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
    /// The stream every use of this memory is ordered on (see the module docs).
    fn home_stream(&self) -> &Stream;
}

/// Device memory that queued work may write.
pub trait DeviceMemoryMut<T: DeviceRepr>: DeviceMemory<T> {
    /// The device address of the first element, for writing.
    fn device_ptr_mut(&mut self) -> *mut c_void;
}

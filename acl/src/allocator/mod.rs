//! A stream-aware caching allocator for device memory, after torch_npu's
//! `NPUCachingAllocator` (itself a port of PyTorch's
//! `CUDACachingAllocator`).
//!
//! `aclrtMalloc`/`aclrtFree` are slow, and the runtime's own guidance is not
//! to call them per tensor. [`CachingAllocator`] takes memory from a
//! [`Backend`] in segments and hands out blocks carved from them; freed
//! blocks stay cached for reuse.
//!
//! # Policies (torch_npu's)
//!
//! - **Rounding**: a request of `n` bytes takes a block of
//!   `n + padding` (32) rounded up to a multiple of 512 bytes
//!   ([`AllocatorConfig::round_size`]).
//! - **Pools**: blocks of at most 1 MiB come from the small pool, packed in
//!   2 MiB segments; larger ones from the large pool, where blocks below
//!   10 MiB share 20 MiB segments and larger ones get a segment of their own
//!   rounded up to 2 MiB ([`AllocatorConfig::allocation_size`]).
//! - **Best fit per stream**: a request takes the smallest cached free block
//!   that was allocated on the *same stream* and is large enough. A block
//!   is split when the rest is worth keeping: at least 512 bytes in the
//!   small pool, more than 1 MiB in the large pool (and never at or above
//!   `max_split_size`). Freed blocks merge with free neighbours of their
//!   segment.
//! - **Streams**: a block is usable in stream order on the stream it was
//!   allocated for; reuse there needs no synchronisation. If it was also used
//!   on other streams ([`CachingAllocator::record_stream`]), freeing it
//!   records an event on each of them, and the block returns to the cache
//!   only when they have all completed (checked at each allocation).
//! - **Alignment**: every block starts at a multiple of [`ALIGNMENT`] (512
//!   bytes), the alignment of `aclrtMalloc`'s memory on a real device and on
//!   cann-sim, so a block may be handed to anything that needs the
//!   hardware allocator's alignment (ggml-cann's allocator assumes 128
//!   bytes; vector loads want 32). A [`Backend`] must return segments so
//!   aligned; the allocator gives back one that is not and fails the
//!   request with [`Error::InvalidArgument`](crate::Error::InvalidArgument).
//! - **Out of memory**: when the backend reports
//!   `ACL_ERROR_RT_MEMORY_ALLOCATION` (or `ACL_ERROR_RT_DEVICE_OOM`), the
//!   allocator frees cached oversize blocks if `max_split_size` is set, then
//!   waits for every outstanding event, synchronises the device, returns
//!   every entirely free segment, and retries once. If that fails too, the
//!   error keeps the backend's code and carries a message with the
//!   allocator's figures ("Tried to allocate …; … already allocated; …").
//!
//! # Backends
//!
//! The logic is independent of the runtime: a [`Backend`] supplies memory
//! and events. The device layer implements it with `aclrtMalloc`,
//! `aclrtFree` and ACL events; tests use a mock.
//!
//! Blocks are plain handles ([`Block`]), not RAII: each must be given back
//! with [`CachingAllocator::free`], once, to the allocator that made it (a
//! stale or foreign handle is rejected with
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument)).
//!
//! ```
//! use acl::allocator::{AllocatorConfig, Backend, CachingAllocator};
//! use std::ptr::NonNull;
//!
//! /// A backend that hands out fake addresses (nothing is dereferenced).
//! struct Fake(std::sync::atomic::AtomicUsize);
//! impl Backend for Fake {
//!     type Stream = usize;
//!     type Event = ();
//!     fn malloc(&self, bytes: usize) -> acl::Result<NonNull<u8>> {
//!         let addr = self.0.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
//!         Ok(NonNull::new(std::ptr::without_provenance_mut(addr)).unwrap())
//!     }
//!     unsafe fn free(&self, _: NonNull<u8>, _: usize) -> acl::Result<()> { Ok(()) }
//!     fn record_event(&self, _: usize) -> acl::Result<()> { Ok(()) }
//!     fn event_complete(&self, _: &()) -> acl::Result<bool> { Ok(true) }
//!     fn synchronize_event(&self, _: &()) -> acl::Result<()> { Ok(()) }
//! }
//!
//! let alloc = CachingAllocator::new(Fake(0x1000.into()), AllocatorConfig::default())?;
//! let a = alloc.allocate(1000, 0)?;
//! assert_eq!(a.size(), 1536); // 1000 + 32, rounded up to 512
//! let addr = a.ptr();
//! alloc.free(a)?;
//! let b = alloc.allocate(1000, 0)?; // same stream: the cached block again
//! assert_eq!(b.ptr(), addr);
//! assert_eq!(alloc.stats().aggregate.backend_mallocs, 1);
//! alloc.free(b)?;
//! # Ok::<(), acl::Error>(())
//! ```

mod config;
pub mod external;
mod state;
mod stats;
#[cfg(test)]
mod tests;

pub use config::{
    ALIGNMENT, AllocatorConfig, DEFAULT_PADDING, LARGE_BUFFER, LARGE_SEGMENT_RANGE, MAX_PADDING,
    MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, OVERSIZE_SLACK, PoolKind, ROUND_LARGE, SMALL_BUFFER,
    SMALL_SIZE, format_size,
};
pub use stats::{AllocatorStats, BlockInfo, BlockState, PoolStats, SegmentInfo, Stat};

use crate::error::Result;
use crate::release;
use parking_lot::Mutex;
use state::State;
pub(crate) use state::is_oom;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the allocator needs from the runtime.
///
/// Implemented for real devices with `aclrtMalloc`, `aclrtFree` and ACL
/// events, and by mocks in tests. The allocator calls it with its lock held:
/// an implementation must not call back into the same allocator.
pub trait Backend: Send + Sync + 'static {
    /// A stream identity (the raw `aclrtStream` as `usize` in the real
    /// backend).
    type Stream: Copy + Eq + Ord + std::hash::Hash + Send + Sync + fmt::Debug + 'static;
    /// A recorded event. Dropping it releases it (or returns it to a pool).
    type Event: Send + 'static;

    /// Allocates `bytes` of device memory, at an address that is a multiple
    /// of [`ALIGNMENT`] (as `aclrtMalloc`'s is).
    ///
    /// # Errors
    ///
    /// Out of memory must be `Err(e)` with `e.code()` equal to
    /// `Some(ErrorCode::RtMemoryAllocation)` (or `RtDeviceOom`): only those
    /// make the allocator release its cache and retry.
    fn malloc(&self, bytes: usize) -> Result<NonNull<u8>>;

    /// Frees a segment.
    ///
    /// # Safety
    ///
    /// `ptr` came from [`malloc`](Self::malloc) with `bytes`, and is freed
    /// once. No handle to it remains and every event recorded for its blocks
    /// has completed. The allocator calls
    /// [`synchronize_device`](Self::synchronize_device) before each batch of
    /// frees, since work queued on the block's own stream may still use it
    /// and `aclrtFree` does not wait.
    unsafe fn free(&self, ptr: NonNull<u8>, bytes: usize) -> Result<()>;

    /// Records an event on `stream` now: it completes when the work queued
    /// on `stream` so far has.
    fn record_event(&self, stream: Self::Stream) -> Result<Self::Event>;

    /// Whether `event` has completed, without waiting.
    fn event_complete(&self, event: &Self::Event) -> Result<bool>;

    /// Waits until `event` has completed.
    fn synchronize_event(&self, event: &Self::Event) -> Result<()>;

    /// Waits until all work queued on the device has completed; called once
    /// before segments are returned with [`free`](Self::free) (torch_npu's
    /// `npuSynchronizeDevice` before `aclrtFree`). The default does nothing,
    /// which is right only for a backend whose `free` waits by itself
    /// (e.g. `aclrtFreeWithDevSync`) or that has no asynchronous work.
    fn synchronize_device(&self) -> Result<()> {
        Ok(())
    }
}

/// A device address, never dereferenced by this module.
#[derive(Clone, Copy, PartialEq, Eq)]
struct DevicePtr(NonNull<u8>);

// SAFETY: a `DevicePtr` is only an address of device memory; this module
// never reads or writes through it, so it may move between threads.
unsafe impl Send for DevicePtr {}
// SAFETY: as above; shared access only copies the address.
unsafe impl Sync for DevicePtr {}

impl DevicePtr {
    #[inline]
    fn addr(self) -> usize {
        self.0.as_ptr().addr()
    }

    /// `bytes` further on (keeps the segment pointer's provenance).
    #[inline]
    fn offset(self, bytes: usize) -> Option<DevicePtr> {
        NonNull::new(self.0.as_ptr().wrapping_add(bytes)).map(DevicePtr)
    }
}

/// A block handed out by a [`CachingAllocator`]: a plain handle, to be given
/// back with [`CachingAllocator::free`] (dropping it leaks the block).
///
/// The block is usable on [`stream`](Self::stream) in stream order, and on
/// other streams after [`CachingAllocator::record_stream`].
pub struct Block<S> {
    ptr: DevicePtr,
    size: usize,
    requested: usize,
    stream: S,
    index: u32,
    serial: u64,
    allocator: u64,
}

impl<S: Copy> Block<S> {
    /// The device address: a multiple of [`ALIGNMENT`] (512 bytes).
    pub fn ptr(&self) -> NonNull<u8> {
        self.ptr.0
    }

    /// The block's size: at least [`requested`](Self::requested), a multiple
    /// of [`MIN_BLOCK_SIZE`].
    pub fn size(&self) -> usize {
        self.size
    }

    /// The byte count passed to [`CachingAllocator::allocate`].
    pub fn requested(&self) -> usize {
        self.requested
    }

    /// The stream it was allocated for.
    pub fn stream(&self) -> S {
        self.stream
    }

    /// A number unique to this hand-out within its allocator.
    pub fn id(&self) -> u64 {
        self.serial
    }
}

impl<S: fmt::Debug> fmt::Debug for Block<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Block")
            .field("ptr", &self.ptr.0)
            .field("size", &self.size)
            .field("requested", &self.requested)
            .field("stream", &self.stream)
            .field("id", &self.serial)
            .finish()
    }
}

static NEXT_ALLOCATOR_ID: AtomicU64 = AtomicU64::new(1);

/// A caching device allocator over a [`Backend`]; see the [module
/// docs](self).
///
/// `Send + Sync`: every operation takes one internal mutex.
pub struct CachingAllocator<B: Backend> {
    backend: B,
    config: AllocatorConfig,
    id: u64,
    state: Mutex<State<B>>,
}

// Every operation leaves the pools whole under the one mutex (a panic in
// between at most strands a block, which is never handed out twice): a
// reference across `catch_unwind` sees a consistent allocator.
impl<B: Backend + std::panic::RefUnwindSafe> std::panic::RefUnwindSafe for CachingAllocator<B> {}

impl<B: Backend> fmt::Debug for CachingAllocator<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachingAllocator")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<B: Backend> CachingAllocator<B> {
    /// An empty allocator over `backend`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] if `config` is invalid
    /// ([`AllocatorConfig::validate`]).
    ///
    /// [`Error::InvalidArgument`]: crate::Error::InvalidArgument
    pub fn new(backend: B, config: AllocatorConfig) -> Result<Self> {
        config.validate()?;
        Ok(CachingAllocator {
            backend,
            config,
            id: NEXT_ALLOCATOR_ID.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(State::new()),
        })
    }

    /// An empty allocator with torch_npu's default settings.
    pub fn with_default_config(backend: B) -> Self {
        CachingAllocator {
            backend,
            config: AllocatorConfig::default(),
            id: NEXT_ALLOCATOR_ID.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(State::new()),
        }
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The settings.
    pub fn config(&self) -> &AllocatorConfig {
        &self.config
    }

    /// A block of at least `bytes`, usable on `stream` in stream order.
    ///
    /// First retires completed events of cross-stream frees, then takes the
    /// best-fitting cached block of `stream`, or a new segment (see the
    /// [module docs](self) for the out-of-memory path).
    ///
    /// # Errors
    ///
    /// - The backend's out-of-memory error (its code, e.g.
    ///   `ACL_ERROR_RT_MEMORY_ALLOCATION`) with the allocator's figures in
    ///   the message, when even the retry failed.
    /// - Any other backend error, unchanged.
    /// - [`Error::InvalidArgument`] if `bytes` overflows when rounded.
    ///
    /// [`Error::InvalidArgument`]: crate::Error::InvalidArgument
    pub fn allocate(&self, bytes: usize, stream: B::Stream) -> Result<Block<B::Stream>> {
        let size = self.config.round_size(bytes)?;
        self.state
            .lock()
            .allocate(&self.backend, &self.config, self.id, bytes, size, stream)
    }

    /// [`allocate`](Self::allocate), handing the block to `wrap` where the
    /// allocator put it, for `wrap` to move it where it stays (the block is
    /// not used again). `wrap` runs under the allocator's lock: it must not
    /// block or call the allocator.
    #[inline]
    pub(crate) fn allocate_with<R>(
        &self,
        bytes: usize,
        stream: B::Stream,
        wrap: impl FnOnce(&Block<B::Stream>) -> R,
    ) -> Result<R> {
        let size = self.config.round_size(bytes)?;
        let mut state = self.state.lock();
        let wrapped =
            match state.allocate(&self.backend, &self.config, self.id, bytes, size, stream) {
                Ok(ref block) => wrap(block),
                Err(e) => return Err(e),
            };
        drop(state);
        Ok(wrapped)
    }

    /// Gives a block back.
    ///
    /// If it was used on other streams ([`record_stream`](Self::record_stream)),
    /// an event is recorded on each of them and the block is reused only
    /// after they complete; otherwise it is cached at once, merged with free
    /// neighbours.
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidArgument`] for a block already freed or from another
    ///   allocator (nothing changes).
    /// - The backend's error if an event could not be recorded: the block
    ///   is then retired for good (never reused, its segment never
    ///   returned), since nothing tells when that stream is done with it.
    ///
    /// [`Error::InvalidArgument`]: crate::Error::InvalidArgument
    pub fn free(&self, block: Block<B::Stream>) -> Result<()> {
        self.free_in_place(&block)
    }

    /// [`free`](Self::free) through a reference: the caller never uses the
    /// block again (not even to free it twice, which would be refused).
    #[inline]
    pub(crate) fn free_in_place(&self, block: &Block<B::Stream>) -> Result<()> {
        self.state.lock().free(&self.backend, block, self.id)
    }

    /// Marks that `block` is also used on `stream` (torch's
    /// `recordStream`), so that freeing it waits for the work queued there
    /// until then. Uses on the block's own stream need nothing and are
    /// ignored, as are stale handles (logged).
    pub fn record_stream(&self, block: &Block<B::Stream>, stream: B::Stream) {
        if let Err(e) = self.state.lock().record_stream(block, self.id, stream) {
            log::warn!(target: "acl", "record_stream ignored: {e}");
        }
    }

    /// Returns every cached, unused segment to the backend: waits for the
    /// events of cross-stream frees, synchronises the device (if there is
    /// anything to free), then frees each segment that has no block in use.
    /// Segments with blocks in use stay.
    ///
    /// # Errors
    ///
    /// The first backend error. Segments whose `free` failed are dropped
    /// from the books all the same (never freed twice).
    pub fn empty_cache(&self) -> Result<()> {
        self.state.lock().release_cached_blocks(&self.backend)
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> AllocatorStats {
        let st = self.state.lock();
        let mut stats = st.stats;
        stats.pending_events = st.pending_events() as u64;
        stats
    }

    /// Every segment held from the backend, with its blocks (torch
    /// `snapshot`). Takes the lock for a walk over all blocks: for
    /// debugging, not for hot paths.
    pub fn snapshot(&self) -> Vec<SegmentInfo<B::Stream>> {
        self.state.lock().snapshot()
    }

    /// Sets every peak to its current value.
    pub fn reset_peak_stats(&self) {
        self.state.lock().stats.reset_peak();
    }

    /// Zeroes the accumulated figures (`allocated`/`freed` of each
    /// [`Stat`], and the counters).
    pub fn reset_accumulated_stats(&self) {
        self.state.lock().stats.reset_accumulated();
    }
}

impl<B: Backend> Drop for CachingAllocator<B> {
    /// Returns the unused segments (as [`empty_cache`](Self::empty_cache);
    /// failures go to [`take_release_errors`](crate::take_release_errors)).
    /// Segments with blocks still allocated are left alone.
    fn drop(&mut self) {
        let state = self.state.get_mut();
        if let Err(e) = state.release_cached_blocks(&self.backend) {
            release::record("CachingAllocator", e);
        }
        let s = &state.stats.aggregate;
        if s.segments.current > 0 {
            log::warn!(
                target: "acl",
                "CachingAllocator dropped with {} blocks in use: {} segments ({}) not returned",
                s.allocations.current,
                s.segments.current,
                format_size(s.reserved_bytes.current),
            );
        }
    }
}

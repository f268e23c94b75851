//! The caching allocator on a real device: [`DeviceBackend`] implements
//! [`allocator::Backend`](crate::allocator::Backend) with `aclrtMalloc`,
//! `aclrtFree` and events, and [`Device::enable_caching_allocator`] puts a
//! [`CachingAllocator`](crate::allocator::CachingAllocator) behind the
//! device's [`DeviceBuffer`](super::DeviceBuffer)s.

use crate::allocator::{AllocatorConfig, Backend, CachingAllocator};
use crate::device::ContextRef;
use crate::error::{Error, Result};
use crate::result::raw;
use crate::{Device, Stream, result};
use std::ptr::NonNull;
use std::sync::Arc;

/// The allocator type behind a device's buffers.
pub type DeviceAllocator = CachingAllocator<DeviceBackend>;

/// The stream identity the caching allocator uses: the raw handle's address
/// (0 for the default stream).
pub(crate) fn stream_key(stream: &Stream) -> usize {
    stream.as_raw() as usize
}

/// `aclrtMalloc`, `aclrtFree` and ACL events for one device. Holds the
/// context without owning the device, so that the device can own its
/// allocator. Not constructible outside this crate: its stream keys are raw
/// stream handles, which only the crate's buffers pass (live ones).
pub struct DeviceBackend {
    ctx: ContextRef,
}

impl std::fmt::Debug for DeviceBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBackend")
            .field("ctx", &self.ctx)
            .finish()
    }
}

/// An event the allocator recorded; destroyed when dropped.
#[doc(hidden)]
pub struct BackendEvent {
    raw: usize,
    ctx: ContextRef,
}

impl Drop for BackendEvent {
    fn drop(&mut self) {
        let outcome = self.ctx.bind().and_then(|()| {
            // SAFETY: the allocator drops its events only after they
            // completed or were waited for; the handle is ours.
            unsafe { result::destroy_event(self.raw as raw::aclrtEvent) }
        });
        if let Err(e) = outcome {
            crate::release::record("Event", e);
        }
    }
}

impl Backend for DeviceBackend {
    type Stream = usize;
    type Event = BackendEvent;

    fn malloc(&self, bytes: usize) -> Result<NonNull<u8>> {
        self.ctx.bind()?;
        let ptr = result::malloc(bytes, raw::ACL_MEM_MALLOC_HUGE_FIRST)?;
        NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| Error::from_code("aclrtMalloc", raw::ACL_ERROR_INTERNAL_ERROR))
    }

    unsafe fn free(&self, ptr: NonNull<u8>, _bytes: usize) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the allocator's contract: a segment from `malloc`, freed
        // once, unused (the device was synchronised first).
        unsafe { result::free(ptr.as_ptr().cast()) }
    }

    fn record_event(&self, stream: usize) -> Result<BackendEvent> {
        self.ctx.bind()?;
        let raw = result::create_event_with_flag(raw::ACL_EVENT_SYNC)?;
        let event = BackendEvent {
            raw: raw as usize,
            ctx: self.ctx.clone(),
        };
        // SAFETY: the event is new; the stream is live (a block's streams are
        // kept alive by the buffers that use them).
        unsafe { result::record_event(raw, stream as raw::aclrtStream)? };
        Ok(event)
    }

    fn event_complete(&self, event: &BackendEvent) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: the event is live (owned by `event`).
        unsafe { result::query_event_status(event.raw as raw::aclrtEvent) }
    }

    fn synchronize_event(&self, event: &BackendEvent) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: as above.
        unsafe { result::synchronize_event(event.raw as raw::aclrtEvent) }
    }

    fn synchronize_device(&self) -> Result<()> {
        self.ctx.bind()?;
        result::synchronize_device()
    }
}

impl Device {
    /// Puts a caching allocator behind this device's [`DeviceBuffer`](super::DeviceBuffer)s:
    /// from now on they take blocks from it (reused in stream order) instead
    /// of calling `aclrtMalloc`/`aclrtFree` each time. Buffers allocated
    /// before keep their direct memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an invalid configuration, or when the
    /// device already has one.
    pub fn enable_caching_allocator(&self, config: AllocatorConfig) -> Result<()> {
        let alloc = CachingAllocator::new(
            DeviceBackend {
                ctx: self.context_ref(),
            },
            config,
        )?;
        self.inner.allocator.set(Arc::new(alloc)).map_err(|_| {
            Error::invalid(
                "Device::enable_caching_allocator",
                "this device already has a caching allocator",
            )
        })
    }

    /// The device's caching allocator, if enabled: its statistics,
    /// snapshot and [`CachingAllocatorHandle::empty_cache`].
    pub fn caching_allocator(&self) -> Option<CachingAllocatorHandle> {
        self.inner
            .allocator
            .get()
            .map(|alloc| CachingAllocatorHandle {
                alloc: alloc.clone(),
                device: self.clone(),
            })
    }
}

/// A handle to a device's caching allocator (see
/// [`Device::caching_allocator`]): its figures and cache control. It holds
/// the device, so the allocator never outlives its context.
///
/// `Send + Sync`: every operation takes the allocator's lock.
#[derive(Debug, Clone)]
pub struct CachingAllocatorHandle {
    alloc: Arc<DeviceAllocator>,
    device: Device,
}

impl CachingAllocatorHandle {
    /// A snapshot of the statistics.
    pub fn stats(&self) -> crate::allocator::AllocatorStats {
        self.alloc.stats()
    }

    /// Every segment with its blocks (for debugging).
    pub fn snapshot(&self) -> Vec<crate::allocator::SegmentInfo<usize>> {
        self.alloc.snapshot()
    }

    /// The settings.
    pub fn config(&self) -> &AllocatorConfig {
        self.alloc.config()
    }

    /// Returns every cached, unused segment to the runtime (after waiting
    /// for the device, as torch_npu's `empty_cache` does).
    ///
    /// # Errors
    ///
    /// The runtime's first error.
    #[doc(alias = "aclrtFree")]
    pub fn empty_cache(&self) -> Result<()> {
        if crate::device::in_host_fn() {
            return Err(crate::device::host_fn_error(
                "CachingAllocatorHandle::empty_cache",
            ));
        }
        self.alloc.empty_cache()
    }

    /// Sets every peak to its current value.
    pub fn reset_peak_stats(&self) {
        self.alloc.reset_peak_stats();
    }

    /// Zeroes the accumulated figures.
    pub fn reset_accumulated_stats(&self) {
        self.alloc.reset_accumulated_stats();
    }

    /// The device it allocates on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The allocator itself, for its block-level API.
    ///
    /// # Safety
    ///
    /// Its stream keys are raw `aclrtStream` handles passed to the runtime
    /// as they are: every key given to [`CachingAllocator::allocate`] or
    /// [`CachingAllocator::record_stream`] must be a live stream of this
    /// device (or 0, the default stream) until the block is freed and its
    /// events have completed; blocks are freed only to this allocator, and
    /// work using a block is queued only on its stream in stream order.
    ///
    /// Safe code cannot reach it (a bogus stream key would go to the runtime
    /// as a stream handle):
    ///
    /// ```compile_fail,E0133
    /// # cann_sim::install().unwrap();
    /// let npu = acl::Device::new(&acl::Runtime::init()?, 0)?;
    /// let _ = npu.enable_caching_allocator(Default::default());
    /// let alloc = npu.caching_allocator().unwrap();
    /// let block = alloc.raw().allocate(64, 0xdead_beef)?;
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// With `unsafe` and a live stream's key:
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// let npu = acl::Device::new(&acl::Runtime::init()?, 0)?;
    /// let _ = npu.enable_caching_allocator(Default::default());
    /// let stream = npu.new_stream()?;
    /// let alloc = npu.caching_allocator().unwrap();
    /// // SAFETY: the key is a live stream of this device; the block is
    /// // never used and is freed to this allocator.
    /// let raw = unsafe { alloc.raw() };
    /// let block = raw.allocate(64, stream.as_raw() as usize)?;
    /// raw.free(block)?;
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub unsafe fn raw(&self) -> &DeviceAllocator {
        &self.alloc
    }
}

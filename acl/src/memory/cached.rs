//! The caching allocator on a real device: [`DeviceBackend`] implements
//! [`allocator::Backend`](crate::allocator::Backend) with `aclrtMalloc`,
//! `aclrtFree` and events, and [`Device::enable_caching_allocator`] puts a
//! [`CachingAllocator`](crate::allocator::CachingAllocator) behind the
//! device's [`DeviceBuffer`](super::DeviceBuffer)s.

use crate::allocator::{AllocatorConfig, Backend, CachingAllocator};
use crate::device::ContextRef;
use crate::error::{Error, Result};
use crate::{Device, Stream, result};
use acl_sys as sys;
use std::ptr::NonNull;
use std::sync::Arc;

/// The allocator type behind a device's buffers.
pub type DeviceAllocator = CachingAllocator<DeviceBackend>;

/// The stream identity the caching allocator uses: the raw handle's address
/// (0 for the default stream).
pub fn stream_key(stream: &Stream) -> usize {
    stream.as_raw() as usize
}

/// `aclrtMalloc`, `aclrtFree` and ACL events for one device. Holds the
/// context without owning the device, so that the device can own its
/// allocator.
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
pub struct BackendEvent {
    raw: usize,
    ctx: ContextRef,
}

impl Drop for BackendEvent {
    fn drop(&mut self) {
        let outcome = self.ctx.bind().and_then(|()| {
            // SAFETY: the allocator drops its events only after they
            // completed or were waited for; the handle is ours.
            unsafe { result::destroy_event(self.raw as sys::aclrtEvent) }
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
        let ptr = result::malloc(bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST)?;
        NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| Error::from_code("aclrtMalloc", sys::ACL_ERROR_INTERNAL_ERROR))
    }

    unsafe fn free(&self, ptr: NonNull<u8>, _bytes: usize) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the allocator's contract: a segment from `malloc`, freed
        // once, unused (the device was synchronised first).
        unsafe { result::free(ptr.as_ptr().cast()) }
    }

    fn record_event(&self, stream: usize) -> Result<BackendEvent> {
        self.ctx.bind()?;
        let raw = result::create_event_with_flag(sys::ACL_EVENT_SYNC)?;
        let event = BackendEvent {
            raw: raw as usize,
            ctx: self.ctx.clone(),
        };
        // SAFETY: the event is new; the stream is live (a block's streams are
        // kept alive by the buffers that use them).
        unsafe { result::record_event(raw, stream as sys::aclrtStream)? };
        Ok(event)
    }

    fn event_complete(&self, event: &BackendEvent) -> Result<bool> {
        self.ctx.bind()?;
        // SAFETY: the event is live (owned by `event`).
        unsafe { result::query_event_status(event.raw as sys::aclrtEvent) }
    }

    fn synchronize_event(&self, event: &BackendEvent) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: as above.
        unsafe { result::synchronize_event(event.raw as sys::aclrtEvent) }
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

    /// The device's caching allocator, if enabled: for its statistics
    /// ([`CachingAllocator::stats`]) and [`CachingAllocator::empty_cache`].
    pub fn caching_allocator(&self) -> Option<Arc<DeviceAllocator>> {
        self.inner.allocator.get().cloned()
    }
}

//! Release and deferred frees: giving an allocation's memory back after
//! its marks. A block of the caching allocator goes back to its stream's
//! pool at once (with an event on every other stream that used it); memory
//! from `aclrtMalloc` or `aclrtMallocHost` waits in the device's list of
//! pending frees until the marks' events have completed ([`Tracking`]).

use super::access_state::AccessState;
use super::allocation::Allocation;
use super::allocation::Backing;
use super::recycle::SpareSlot;
use crate::error::Result;
use crate::memory::DeviceAllocator;
use crate::result::raw;
use crate::{Device, release, result};
use parking_lot::Mutex;
use std::ffi::c_void;

/// The caching allocator a cached block came from (the device keeps it
/// until its teardown, which no allocation outlives).
#[inline]
pub(super) fn cache_of(device: &Device) -> Result<&DeviceAllocator> {
    device.inner.allocator.get().map(|a| &**a).ok_or_else(|| {
        crate::Error::invalid(
            "DeviceBuffer::drop",
            "a cached block of a device without a caching allocator",
        )
    })
}

/// A release of an allocation's memory, after its marks.
pub(crate) struct Release {
    pub(super) ptr: usize,
    pub(super) backing: Backing,
    pub(super) marks: AccessState,
    pub(super) device: Device,
}

// SAFETY: `ptr` is an address, never dereferenced; the rest is Send.
unsafe impl Send for Release {}

impl Release {
    /// Frees now, or queues the free behind events on the marks' streams.
    /// Where that cannot be done here, the release thread does it (and the
    /// outcome is recorded, not returned): inside a host function, where
    /// AscendCL may not be called (the events it records on the marks'
    /// streams come later than the accesses: sound); and for marks of
    /// another device's streams (peer copies), which this device cannot
    /// wait for: the release thread waits for them on the host, so that a
    /// drop never blocks.
    pub(crate) fn run(self) -> Result<()> {
        let foreign = self
            .marks
            .iter()
            .any(|m| m.stream().device() != &self.device);
        if crate::device::in_host_fn() || (foreign && !crate::release::on_release_thread()) {
            crate::release::in_background(Box::new(move || {
                if let Err(e) = self.run() {
                    release::record("DeviceBuffer", e);
                }
            }));
            return Ok(());
        }
        let device = self.device;
        match self.backing {
            Backing::Empty | Backing::Foreign => Ok(()),
            Backing::Cached(block) => {
                let alloc = cache_of(&device)?;
                // Reuse is stream-ordered on the block's stream; every other
                // stream of the device that used it gets an event the block
                // waits for. Another device's streams (peer copies) cannot
                // be keyed by the allocator (their handles mean nothing
                // here): their work is waited for on the host.
                let mut first_error = None;
                for m in self.marks.iter().filter(|m| !m.known_done()) {
                    if m.stream().device() != &device {
                        if let Err(e) = m.host_wait() {
                            first_error.get_or_insert(e);
                        }
                        continue;
                    }
                    let key = crate::memory::cached::stream_key(m.stream());
                    if key != block.stream() {
                        alloc.record_stream(&block, key);
                    }
                }
                // The marks (and the streams they hold) outlive the free,
                // which records events on those streams.
                let freed = alloc.free(block);
                drop(self.marks);
                match first_error {
                    Some(e) => freed.and(Err(e)),
                    None => freed,
                }
            }
            backing @ (Backing::Direct
            | Backing::Pinned
            | Backing::PinnedPooled(..)
            | Backing::Registered(..)) => {
                if self.marks.is_empty() {
                    return free_now(&device.context_ref(), self.ptr, &backing);
                }
                let mut events =
                    Vec::with_capacity(1 + self.marks.more_writes.len() + self.marks.reads.len());
                let mut first_error = None;
                for m in self.marks.into_marks().filter(|m| !m.known_done()) {
                    match m.into_event() {
                        Ok(ev) if ev.device == device => events.push(ev.into_raw()),
                        Ok(ev) => {
                            // Another device's stream: wait here (rare: peer copies).
                            if let Err(e) = ev.synchronize() {
                                first_error.get_or_insert(e);
                            }
                        }
                        Err((e, stream)) => {
                            // No event: wait for the stream itself.
                            if let Err(e2) = stream.synchronize() {
                                first_error.get_or_insert(e2);
                            }
                            first_error.get_or_insert(e);
                        }
                    }
                }
                let tracking = &device.inner.tracking;
                tracking.push_pending(PendingFree {
                    ptr: self.ptr,
                    backing,
                    events,
                });
                let reaped =
                    tracking.reap(&device.context_ref(), &device.inner.events, false, false);
                match first_error {
                    Some(e) => Err(e),
                    None => reaped,
                }
            }
        }
    }
}

pub(super) fn free_now(
    ctx: &crate::device::ContextRef,
    ptr: usize,
    backing: &Backing,
) -> Result<()> {
    match backing {
        // SAFETY: memory from aclrtMalloc, released once (the backing was
        // taken out of its allocation), with every recorded access finished.
        Backing::Direct => ctx
            .bind()
            .and_then(|()| unsafe { result::free(ptr as *mut c_void) }),
        // SAFETY: as above, from aclrtMallocHost.
        Backing::Pinned => ctx
            .bind()
            .and_then(|()| unsafe { result::free_host(ptr as *mut c_void) }),
        // Every recorded access has finished: the block is free for reuse.
        // Host bookkeeping only: no context needed, so a failed bind cannot
        // lose the block (nor leave it counted as in use).
        Backing::PinnedPooled(pool, class) => {
            pool.give_back(ptr, *class);
            Ok(())
        }
        Backing::Registered(host) => ctx.bind().and_then(|()| host.unregister()),
        Backing::Empty | Backing::Cached(_) | Backing::Foreign => Ok(()),
    }
}

/// A free waiting for events (raw, taken from the device's pool).
pub(crate) struct PendingFree {
    pub(super) ptr: usize,
    pub(super) backing: Backing,
    pub(super) events: Vec<usize>,
}

/// A device's frees waiting for events. Holds no handle to the device, so
/// that the device can own it.
#[derive(Default)]
pub(crate) struct Tracking {
    pub(super) pending: Mutex<Vec<PendingFree>>,
    /// `pending.len()`, read without the lock.
    pub(super) backlog: std::sync::atomic::AtomicUsize,
    /// A heap record for the next allocation.
    pub(super) spare: SpareSlot<Allocation>,
}

// As for `Allocation`: the pending frees are a list that each step leaves
// whole.
impl std::panic::RefUnwindSafe for Tracking {}

impl Tracking {
    pub(super) fn push_pending(&self, free: PendingFree) {
        self.pending.lock().push(free);
        self.backlog
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether frees wait for events.
    #[inline]
    pub(crate) fn has_backlog(&self) -> bool {
        self.backlog.load(std::sync::atomic::Ordering::Relaxed) != 0
    }

    /// Frees what waited for events that have completed; with `wait`,
    /// waits for all of them first. Does nothing inside a host function.
    pub(crate) fn reap(
        &self,
        ctx: &crate::device::ContextRef,
        pool: &crate::event::EventPool,
        wait: bool,
        teardown: bool,
    ) -> Result<()> {
        if crate::device::in_host_fn() || !self.has_backlog() {
            return Ok(());
        }
        ctx.bind()?;
        let mut first_error = None;
        let ready: Vec<PendingFree> = {
            let mut pending = self.pending.lock();
            let mut ready = Vec::new();
            let mut i = 0;
            while i < pending.len() {
                let done = pending[i].events.iter().all(|&ev| {
                    let ev = ev as raw::aclrtEvent;
                    // SAFETY: events taken from the pool, live until given
                    // back below.
                    let status = unsafe {
                        if wait {
                            result::synchronize_event(ev).map(|()| true)
                        } else {
                            result::query_event_status(ev)
                        }
                    };
                    status.unwrap_or_else(|e| {
                        // A fault of the work says nothing about later work
                        // still using the memory (the stream goes on): keep
                        // the free pending, except at teardown (the device
                        // reset ends every task).
                        first_error.get_or_insert(e);
                        teardown
                    })
                });
                if done {
                    ready.push(pending.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            ready
        };
        self.backlog
            .fetch_sub(ready.len(), std::sync::atomic::Ordering::Relaxed);
        for f in ready {
            for ev in f.events {
                pool.release(ev as raw::aclrtEvent);
            }
            if let Err(e) = free_now(ctx, f.ptr, &f.backing) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

//! The pooled event: an event of the device's pool ([`EventPool`](crate::event::EventPool)),
//! held by a mark or a deferred free, given back to the pool when dropped.
//!
//! Marks in multi-stream mode and frees that wait for queued work each need
//! an event; taking it from the device's pool instead of creating one keeps
//! a commit at one runtime call (`aclrtRecordEvent`).

use crate::error::Result;
use crate::result::raw;
use crate::{Device, Stream, result};

/// An event of the device's pool, given back when dropped.
pub(crate) struct PooledEvent {
    pub(super) raw: usize,
    pub(super) device: Device,
}

impl PooledEvent {
    /// Records a pooled event on `stream` now.
    pub(crate) fn record(stream: &Stream) -> Result<PooledEvent> {
        let device = stream.device();
        device.bind()?;
        let raw = device.inner.events.acquire()?;
        let ev = PooledEvent {
            raw: raw as usize,
            device: device.clone(),
        };
        // SAFETY: the event (from the pool, live until the device is torn
        // down, which `ev.device` prevents) and the stream (held) are live.
        unsafe { result::record_event(raw, stream.as_raw())? };
        Ok(ev)
    }

    pub(crate) fn as_raw(&self) -> raw::aclrtEvent {
        self.raw as raw::aclrtEvent
    }

    pub(super) fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the event is live (pooled, held by `self`).
        unsafe { result::synchronize_event(self.as_raw()) }
    }

    /// The raw event, taken out of this handle: the caller gives it back to
    /// the device's pool.
    pub(super) fn into_raw(self) -> usize {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again; its device handle is
        // moved out once and dropped here.
        drop(unsafe { std::ptr::read(&me.device) });
        me.raw
    }
}

impl Drop for PooledEvent {
    fn drop(&mut self) {
        self.device
            .inner
            .events
            .release(self.raw as raw::aclrtEvent);
    }
}

//! The simulator's process-wide state.
//!
//! - [`State`] (one `Mutex`): `aclInit` references, per-device
//!   `aclrtSetDevice` references and primary (default) contexts, per-device
//!   stream and event counts, stream ids, and peer access.
//! - The calling thread's current context (a thread-local),
//!   [`current_context`]; the thread's current device is that context's
//!   device ([`current_device`]).
//! - The allocation table now lives in the memory engine, `crate::mem`; its
//!   items are re-exported here under their old paths.
//! - The simulator's monotonic clock ([`now_ns`]), for event timestamps.

use crate::rt::Context;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::ffi::CString;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Instant;

pub(crate) use crate::mem::table::host_available;
#[allow(
    unused_imports,
    reason = "the old paths of the memory engine's items, kept for code written against them"
)]
pub use crate::mem::{
    ALIGN, AllocError, Allocation, MAPPED_BLOCK, MemKind, MemTable, POISON, Region, SharedFile,
    check_device_range, memory,
};

/// Per-device bookkeeping.
#[derive(Debug, Default)]
pub struct DeviceState {
    /// `aclrtSetDevice` references. The primary context exists while this is
    /// above 0.
    pub refs: u64,
    /// The primary (default) context, while the device is set.
    pub primary: Option<Arc<Context>>,
    /// Ids of the live streams (default streams of contexts included).
    pub stream_ids: BTreeSet<i32>,
    /// Live events.
    pub events: u32,
}

/// Everything the simulated runtime remembers, behind one lock.
#[derive(Debug, Default)]
pub struct State {
    /// `aclInit` references; 0 means not initialized.
    pub init_refs: u64,
    /// Whether the last `aclInit`/`aclFinalize` was a finalize
    /// (hicann/runtime `src/acl/aclrt_impl/acl.cpp`, `aclFinalizeFlag`):
    /// only a finalize after a finalize is refused; one without any
    /// `aclInit` succeeds.
    pub finalized: bool,
    /// The content of the config file of the first successful `aclInit`
    /// (`aclInitJsonHash` in acl.cpp): a later `aclInit` with other content
    /// is refused. `None` until the first success.
    pub init_config: Option<(String, String)>,
    /// Per logical device.
    devices: Vec<DeviceState>,
    /// Enabled peer access, as (from, to) logical devices.
    pub peers: HashSet<(u32, u32)>,
}

impl State {
    /// The bookkeeping of `device`, created on first use.
    pub fn device(&mut self, device: u32) -> &mut DeviceState {
        let i = device as usize;
        if self.devices.len() <= i {
            self.devices.resize_with(i + 1, DeviceState::default);
        }
        &mut self.devices[i]
    }

    /// The `aclrtSetDevice` references held on `device`.
    #[cfg(test)]
    pub fn device_refs(&self, device: u32) -> u64 {
        self.devices.get(device as usize).map_or(0, |d| d.refs)
    }

    /// Takes one reference on `device`; returns the new count.
    pub fn retain_device(&mut self, device: u32) -> u64 {
        let d = self.device(device);
        d.refs += 1;
        d.refs
    }

    /// Drops one reference on `device` (all of them when `force`); returns the
    /// count left, or `None` when the device held no reference.
    pub fn release_device(&mut self, device: u32, force: bool) -> Option<u64> {
        let d = self
            .devices
            .get_mut(device as usize)
            .filter(|d| d.refs > 0)?;
        d.refs = if force { 0 } else { d.refs - 1 };
        Some(d.refs)
    }

    /// Takes a stream slot on `device`: the smallest free stream id, or
    /// `None` when `max` streams are live.
    pub fn alloc_stream_id(&mut self, device: u32, max: u32) -> Option<i32> {
        let d = self.device(device);
        if d.stream_ids.len() >= max as usize {
            return None;
        }
        let mut id = 0;
        for &used in &d.stream_ids {
            if used != id {
                break;
            }
            id += 1;
        }
        d.stream_ids.insert(id);
        Some(id)
    }

    /// Gives a stream slot back.
    pub fn free_stream_id(&mut self, device: u32, id: i32) {
        self.device(device).stream_ids.remove(&id);
    }

    /// Every device's bookkeeping, by logical id.
    pub fn devices(&self) -> &[DeviceState] {
        &self.devices
    }
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));

/// The process-wide state.
pub fn global() -> &'static Mutex<State> {
    &STATE
}

thread_local! {
    /// The context this thread last made current (`aclrtSetDevice`,
    /// `aclrtCreateContext`, `aclrtSetCurrentContext`).
    static CURRENT: RefCell<Option<Arc<Context>>> = const { RefCell::new(None) };
}

/// Makes `ctx` the calling thread's current context (or clears it).
pub fn set_current_context(ctx: Option<Arc<Context>>) {
    // A thread-local access fails only while the thread is being torn down.
    let _ = CURRENT.try_with(|c| *c.borrow_mut() = ctx);
}

/// The calling thread's own current context, if it is still alive, without
/// the implicit default device.
pub fn own_context() -> Option<Arc<Context>> {
    CURRENT
        .try_with(|c| c.borrow().as_ref().filter(|c| c.is_alive()).cloned())
        .ok()
        .flatten()
}

/// The default device named in `aclInit`'s config (`defaultDevice` /
/// `default_device`), or -1: read without a lock by every call that needs a
/// context.
static DEFAULT_DEVICE: AtomicI64 = AtomicI64::new(-1);

/// Sets (or, with `None`, clears) the default device.
pub fn set_default_device(device: Option<u32>) {
    DEFAULT_DEVICE.store(device.map_or(-1, i64::from), Ordering::Release);
}

/// The default device set by `aclInit`'s config, if any.
pub fn default_device() -> Option<u32> {
    u32::try_from(DEFAULT_DEVICE.load(Ordering::Acquire)).ok()
}

/// The calling thread's current context, if it is still alive. (On the real
/// runtime a thread keeps a reference to its context; once the context is
/// destroyed, by `aclrtDestroyContext` or by the last `aclrtResetDevice` of a
/// primary context, the thread has no context until it sets one again.)
///
/// A thread without one gets the default device's primary context when
/// `aclInit`'s config named a default device: the device is set on the
/// thread implicitly, as `aclrtSetDevice` would (hicann/runtime
/// `src/runtime/core/src/runtime.cc`, `Runtime::CurrentContext(isNeedSetDevice,
/// deviceId)`, which `ApiImpl::CurrentContext()` calls with
/// `isNeedSetDevice = true`).
pub fn current_context() -> Option<Arc<Context>> {
    own_context().or_else(|| crate::rt::device::set_implicitly(default_device()?))
}

/// The calling thread's current device: its current context's device.
pub fn current_device() -> Option<u32> {
    current_context().map(|c| c.device)
}

static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Nanoseconds on the simulator's monotonic clock (since its first use in the
/// process: the simulated device's "boot").
pub fn now_ns() -> u64 {
    u64::try_from(EPOCH.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The SoC name as a C string with a static lifetime.
pub fn soc_name() -> Result<&'static CString, &'static str> {
    static NAME: OnceLock<CString> = OnceLock::new();
    let config = crate::config::get()?;
    Ok(NAME.get_or_init(|| CString::new(config.soc_name.clone()).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_are_the_smallest_free_and_limited() {
        let mut s = State::default();
        assert_eq!(s.alloc_stream_id(2, 3), Some(0));
        assert_eq!(s.alloc_stream_id(2, 3), Some(1));
        assert_eq!(s.alloc_stream_id(2, 3), Some(2));
        assert_eq!(s.alloc_stream_id(2, 3), None);
        s.free_stream_id(2, 1);
        assert_eq!(s.alloc_stream_id(2, 3), Some(1));
        assert_eq!(s.alloc_stream_id(3, 3), Some(0));
    }

    #[test]
    fn device_references_count_and_force_release_drops_all() {
        let mut s = State::default();
        assert_eq!(s.release_device(4, false), None);
        assert_eq!(s.retain_device(4), 1);
        assert_eq!(s.retain_device(4), 2);
        assert_eq!(s.release_device(4, false), Some(1));
        assert_eq!(s.retain_device(4), 2);
        assert_eq!(s.release_device(4, true), Some(0));
        assert_eq!(s.release_device(4, true), None);
        assert_eq!(s.device_refs(4), 0);
    }
}

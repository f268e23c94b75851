//! A snapshot of what the simulator holds: allocations, contexts, streams,
//! events, threads. Tests use it to assert that everything they created was
//! released ("allocation table empty at the end").

use crate::rt::{self, CONTEXTS, STREAMS};
use crate::state;

/// What one logical device holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Live device allocations (`aclrtMalloc` and variants).
    pub allocations: usize,
    /// HBM bytes reserved by them (after the runtime's rounding).
    pub hbm_used: u64,
    /// `aclrtSetDevice` references.
    pub device_refs: u64,
    /// Live contexts on the device (its primary context included).
    pub contexts: usize,
    /// Live streams, the default streams of contexts included (what
    /// `CANN_SIM_MAX_STREAMS` limits).
    pub streams: usize,
    /// Live streams that have a worker thread.
    pub stream_workers: usize,
    /// Live events (what `CANN_SIM_MAX_EVENTS` limits).
    pub events: usize,
    /// Live contexts whose host-function thread (`aclrtLaunchHostFunc`) runs.
    pub host_func_threads: usize,
}

/// What the whole process holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Per logical device, index = device id (every visible device).
    pub devices: Vec<DeviceStats>,
    /// Live pinned host allocations (`aclrtMallocHost`).
    pub host_allocations: usize,
    /// User threads subscribed with `aclrtSubscribeReport`.
    pub subscribed_threads: usize,
    /// Live captured models (`aclmdlRICaptureBegin` … `aclmdlRIDestroy`).
    pub captured_models: usize,
}

impl Stats {
    /// The stats of `device` (all zero for a device never used).
    pub fn device(&self, device: u32) -> DeviceStats {
        self.devices
            .get(device as usize)
            .cloned()
            .unwrap_or_default()
    }
}

/// A snapshot of the simulator's live objects.
pub fn stats() -> Stats {
    let count = crate::config::get().map_or(0, crate::config::Config::device_count) as usize;
    let mut devices = vec![DeviceStats::default(); count];
    let grow = |devices: &mut Vec<DeviceStats>, d: u32| -> usize {
        let i = d as usize;
        if devices.len() <= i {
            devices.resize(i + 1, DeviceStats::default());
        }
        i
    };
    let (allocs, host_allocations) = {
        let t = state::memory().read();
        let (per_device, host) = t.counts();
        let used: Vec<u64> = (0..per_device.len().max(count))
            .map(|d| t.hbm_used(d as u32))
            .collect();
        ((per_device, used), host)
    };
    for (d, n) in allocs.0.iter().enumerate() {
        let i = grow(&mut devices, d as u32);
        devices[i].allocations = *n;
    }
    for (d, used) in allocs.1.iter().enumerate() {
        let i = grow(&mut devices, d as u32);
        devices[i].hbm_used = *used;
    }
    {
        let st = state::global().lock();
        for (d, ds) in st.devices().iter().enumerate() {
            let i = grow(&mut devices, d as u32);
            devices[i].device_refs = ds.refs;
            devices[i].events = ds.events as usize;
        }
    }
    let contexts = CONTEXTS.lock().all();
    for c in contexts {
        let i = grow(&mut devices, c.device);
        devices[i].contexts += 1;
        if c.has_host_thread() {
            devices[i].host_func_threads += 1;
        }
    }
    let streams = STREAMS.lock().all();
    for s in streams {
        let i = grow(&mut devices, s.device);
        devices[i].streams += 1;
        if s.has_worker() {
            devices[i].stream_workers += 1;
        }
    }
    Stats {
        devices,
        host_allocations,
        subscribed_threads: rt::report::user_subscriber_count(),
        captured_models: rt::capture::MODELS.lock().all().len(),
    }
}

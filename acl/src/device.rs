//! NPUs, their contexts, and the calling thread's current context.
//!
//! AscendCL keeps a *current context* per host thread, and most calls act on
//! it: the device they allocate on, the default stream they mean by a null
//! stream. A thread that never selected one gets `ACL_ERROR_RT_CONTEXT_NULL`
//! (107002) — the most reported Ascend pitfall, typical of thread pools and
//! async runtimes, where work hops between threads.
//!
//! A [`Device`] is an `Arc` handle to one NPU's primary context (the one
//! `aclrtSetDevice` creates). Every method of this crate that needs a
//! device first calls [`Device::bind`], which makes that context current on
//! the calling thread with `aclrtSetCurrentContext` — unless a thread-local
//! says it already is, so a repeated bind costs one comparison. Handles can
//! therefore be sent to and used from any thread.
//!
//! Device numbers are logical: with `ASCEND_RT_VISIBLE_DEVICES=4,5` the
//! process sees two devices, 0 and 1, which are physical NPUs 4 and 5. The
//! variable is read by the runtime at initialisation.
//!
//! Teardown follows ownership: streams, events and buffers hold their
//! `Device`, which holds the [`Runtime`]; when the last handle goes, the
//! device is reset (`aclrtResetDevice`), and after the last device and
//! runtime handle, AscendCL is finalized.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, DeviceAttribute, Runtime};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let mem = npu.memory_info()?;
//! println!("{} AI cores, {} MiB free", npu.attribute(DeviceAttribute::AiCoreCount)?, mem.free_bytes >> 20);
//! // Handles work from any thread: no aclrtSetDevice needed there.
//! std::thread::spawn(move || npu.default_stream().alloc_zeros::<f32>(16).map(drop)).join().unwrap()?;
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::event::EventPool;
use crate::result::raw;
use crate::{Runtime, Stream, release, result};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// One NPU's primary context, selected for this process (`aclrtSetDevice`)
/// while any handle to it lives, and reset (`aclrtResetDevice`) after the
/// last one.
///
/// Cheap to clone. `Send + Sync`: any thread may use it; each call binds the
/// context to the calling thread first.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    ordinal: i32,
    ctx: raw::aclrtContext,
    /// Unique per opening of the device, so that a thread-local binding
    /// never outlives the context it was made for.
    id: u64,
    pub(crate) events: EventPool,
    /// Access tracking: multi-stream mode and frees waiting for events.
    pub(crate) tracking: crate::memory::track::Tracking,
    /// The caching allocator behind this device's buffers, once enabled.
    pub(crate) allocator: OnceLock<Arc<crate::memory::DeviceAllocator>>,
    /// Host-work state of the default stream, shared by its handles.
    pub(crate) default_stream_shared: Arc<crate::host_work::Shared>,
    /// The thread that runs `Stream::launch_callback` callbacks, once started.
    pub(crate) callback_thread: crate::host_work::CallbackThread,
    runtime: Runtime,
}

// SAFETY: `ctx` is an opaque runtime handle; AscendCL contexts may be made
// current on, and used from, any thread. Everything else is Send + Sync.
unsafe impl Send for Inner {}
// SAFETY: as above; shared access only passes the handle to the runtime.
unsafe impl Sync for Inner {}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.inner.ordinal)
            .field("context", &self.inner.ctx)
            .finish()
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        self.inner.id == other.inner.id
    }
}

impl Eq for Device {}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The `Inner::id` of the context bound to this thread, 0 for none,
    /// [`IN_HOST_FN`] while a host function runs on this thread.
    static BOUND: Cell<u64> = const { Cell::new(0) };
}

/// The binding of a thread that is running a host function: no device may
/// be bound there (ids count up from 1 and never reach it).
const IN_HOST_FN: u64 = u64::MAX;

/// Runs `f` with every device call on this thread refused (for host functions).
pub(crate) fn forbid_device_calls<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            BOUND.with(|b| b.set(self.0));
        }
    }
    let _restore = Restore(BOUND.with(|b| b.replace(IN_HOST_FN)));
    f()
}

/// Whether the calling thread is running a host function (where AscendCL
/// may not be called).
#[inline]
pub(crate) fn in_host_fn() -> bool {
    BOUND.with(Cell::get) == IN_HOST_FN
}

/// The live device of each ordinal: one [`Device`] per ordinal, shared by
/// every [`Device::new`] while any handle to it lives.
static OPEN: std::sync::Mutex<Vec<std::sync::Weak<Inner>>> = std::sync::Mutex::new(Vec::new());

/// A device's context without ownership (for the allocator backend, which
/// the device owns): binds like [`Device::bind`].
#[derive(Debug, Clone)]
pub(crate) struct ContextRef {
    ctx: usize,
    id: u64,
}

impl ContextRef {
    pub(crate) fn bind(&self) -> Result<()> {
        if BOUND.with(Cell::get) == self.id {
            return Ok(());
        }
        bind_context(self.ctx as raw::aclrtContext, self.id)
    }
}

#[cold]
fn bind_context(ctx: raw::aclrtContext, id: u64) -> Result<()> {
    if BOUND.with(Cell::get) == IN_HOST_FN {
        return Err(host_fn_error("Device::bind"));
    }
    // SAFETY: callers hold the device (or its allocator, which the device
    // drops before resetting), so the context is live.
    unsafe { result::set_current_context(ctx)? };
    BOUND.with(|b| b.set(id));
    Ok(())
}

/// Free and total bytes of a device's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes not allocated.
    pub free_bytes: usize,
    /// Bytes in all.
    pub total_bytes: usize,
}

/// A device attribute (`aclrtDevAttr`) for [`Device::attribute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceAttribute {
    /// AI CPU cores.
    AiCpuCoreCount,
    /// AI Core (Cube) cores.
    AiCoreCount,
    /// Cube cores.
    CubeCoreCount,
    /// Vector cores.
    VectorCoreCount,
    /// Global memory (HBM) in bytes.
    TotalGlobalMemBytes,
    /// L2 cache in bytes.
    L2CacheBytes,
    /// Physical chip id.
    PhysicalChipId,
    /// Whether this is a virtual NPU (1) or not (0).
    IsVirtual,
    /// Any other `aclrtDevAttr` value.
    Raw(u32),
}

impl DeviceAttribute {
    fn raw(self) -> raw::aclrtDevAttr {
        match self {
            DeviceAttribute::AiCpuCoreCount => raw::ACL_DEV_ATTR_AICPU_CORE_NUM,
            DeviceAttribute::AiCoreCount => raw::ACL_DEV_ATTR_AICORE_CORE_NUM,
            DeviceAttribute::CubeCoreCount => raw::ACL_DEV_ATTR_CUBE_CORE_NUM,
            DeviceAttribute::VectorCoreCount => raw::ACL_DEV_ATTR_VECTOR_CORE_NUM,
            DeviceAttribute::TotalGlobalMemBytes => raw::ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE,
            DeviceAttribute::L2CacheBytes => raw::ACL_DEV_ATTR_L2_CACHE_SIZE,
            DeviceAttribute::PhysicalChipId => raw::ACL_DEV_ATTR_PHY_CHIP_ID,
            DeviceAttribute::IsVirtual => raw::ACL_DEV_ATTR_IS_VIRTUAL,
            DeviceAttribute::Raw(v) => v,
        }
    }
}

/// A device feature (`aclrtDevFeatureType`) for [`Device::supports`].
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceFeature {
    /// `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV`: the task scheduler
    /// can update AI Core and vector tasks of a captured model.
    TaskUpdateAicAiv,
    /// `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV`: memory-queue events
    /// across devices.
    MemqEventCrossDevice,
    /// Any other `aclrtDevFeatureType` value.
    Raw(u32),
}

impl DeviceFeature {
    fn raw(self) -> raw::aclrtDevFeatureType {
        match self {
            DeviceFeature::TaskUpdateAicAiv => raw::ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV,
            DeviceFeature::MemqEventCrossDevice => raw::ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV,
            DeviceFeature::Raw(v) => v,
        }
    }
}

impl Device {
    /// Opens device `ordinal` (logical, `0..device_count`): retains its
    /// primary context and makes it current on the calling thread. While a
    /// handle to the device lives, every `Device::new` of the same ordinal
    /// returns that same device (one allocator, one event pool, equal
    /// handles), as [`Runtime::device`] does.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_INVALID_DEVICEID` (107001) for an ordinal out of range,
    /// or the runtime's error when the device cannot be opened.
    #[doc(alias = "aclrtSetDevice")]
    pub fn new(runtime: &Runtime, ordinal: u32) -> Result<Device> {
        let id = i32::try_from(ordinal).map_err(|_| {
            Error::invalid("Device::new", format!("device {ordinal} is out of range"))
        })?;
        if in_host_fn() {
            return Err(host_fn_error("Device::new"));
        }
        let mut open = crate::lock::lock(&OPEN);
        if let Some(inner) = open
            .get(ordinal as usize)
            .and_then(std::sync::Weak::upgrade)
        {
            return Ok(Device { inner });
        }
        // SAFETY: `BOUND` is set for this device below, before any other call
        // of this crate on this thread; the retain is balanced by the reset on
        // the error path or when the last handle is dropped.
        unsafe { result::set_device(id) }?;
        let ctx = match result::get_current_context() {
            Ok(ctx) => ctx,
            Err(e) => {
                // Undo the retain: nothing half-built is left behind.
                // SAFETY: releases the retain just taken; no handle of this
                // device exists yet.
                if let Err(undo) = unsafe { result::reset_device(id) } {
                    release::record("Device", undo);
                }
                return Err(e);
            }
        };
        let inner = Arc::new(Inner {
            ordinal: id,
            ctx,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            events: EventPool::default(),
            tracking: Default::default(),
            allocator: OnceLock::new(),
            default_stream_shared: Arc::default(),
            callback_thread: Default::default(),
            runtime: runtime.clone(),
        });
        BOUND.with(|b| b.set(inner.id));
        let slot = ordinal as usize;
        if open.len() <= slot {
            open.resize_with(slot + 1, std::sync::Weak::new);
        }
        open[slot] = Arc::downgrade(&inner);
        Ok(Device { inner })
    }

    pub(crate) fn context_ref(&self) -> ContextRef {
        ContextRef {
            ctx: self.inner.ctx as usize,
            id: self.inner.id,
        }
    }

    /// The logical device number.
    pub fn ordinal(&self) -> u32 {
        self.inner.ordinal as u32
    }

    /// The raw context handle.
    pub fn raw_context(&self) -> raw::aclrtContext {
        self.inner.ctx
    }

    /// The runtime session this device belongs to.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Makes this device's context current on the calling thread, unless it
    /// already is. Every method that needs a device calls this first, so
    /// user code rarely needs to.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtSetCurrentContext`.
    #[doc(alias = "aclrtSetCurrentContext")]
    #[inline]
    pub fn bind(&self) -> Result<()> {
        if BOUND.with(Cell::get) == self.inner.id {
            return Ok(());
        }
        self.bind_slow()
    }

    #[cold]
    fn bind_slow(&self) -> Result<()> {
        bind_context(self.inner.ctx, self.inner.id)
    }

    /// The device's default stream (the null stream of its context).
    pub fn default_stream(&self) -> Stream {
        Stream::default_for(self)
    }

    /// A new stream with default priority and flags.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtCreateStreamWithConfig` (e.g. when the
    /// device's stream limit is reached).
    #[doc(alias = "aclrtCreateStream")]
    pub fn new_stream(&self) -> Result<Stream> {
        Stream::new(self, crate::StreamConfig::default())
    }

    /// The device's 16-byte UUID: stable for a device, distinct between
    /// devices (like `nvmlDeviceGetUUID`).
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtDeviceGetUuid`.
    #[doc(alias = "aclrtDeviceGetUuid")]
    pub fn uuid(&self) -> Result<[u8; 16]> {
        result::device_get_uuid(self.ordinal() as i32)
    }

    /// Free and total HBM of this device.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtGetMemInfo`.
    #[doc(alias = "aclrtGetMemInfo")]
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        self.bind()?;
        let (free_bytes, total_bytes) = result::get_mem_info(raw::ACL_HBM_MEM)?;
        Ok(MemoryInfo {
            free_bytes,
            total_bytes,
        })
    }

    /// A device attribute, e.g. the AI Core count.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtGetDeviceInfo` (an attribute the
    /// device does not have, for instance).
    #[doc(alias = "aclrtGetDeviceInfo")]
    pub fn attribute(&self, attr: DeviceAttribute) -> Result<i64> {
        self.bind()?;
        result::get_device_info(self.inner.ordinal as u32, attr.raw())
    }

    /// Whether the device supports `feature` (`aclrtGetDeviceCapability`).
    ///
    /// # Errors
    ///
    /// The runtime's error for a feature it does not know.
    #[doc(alias = "aclrtGetDeviceCapability")]
    pub fn supports(&self, feature: DeviceFeature) -> Result<bool> {
        self.bind()?;
        Ok(
            result::get_device_capability(self.inner.ordinal, feature.raw())?
                == raw::ACL_DEV_FEATURE_SUPPORT as i32,
        )
    }

    /// Whether this device can access `peer`'s memory directly.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtDeviceCanAccessPeer`.
    #[doc(alias = "aclrtDeviceCanAccessPeer")]
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        self.bind()?;
        result::device_can_access_peer(self.inner.ordinal, peer.inner.ordinal)
    }

    /// Enables direct access from this device to `peer`'s memory, needed for
    /// device-to-device copies between them.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtDeviceEnablePeerAccess`.
    #[doc(alias = "aclrtDeviceEnablePeerAccess")]
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        self.bind()?;
        result::device_enable_peer_access(peer.inner.ordinal, 0)
    }

    /// Disables what [`Device::enable_peer_access`] enabled.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtDeviceDisablePeerAccess`.
    #[doc(alias = "aclrtDeviceDisablePeerAccess")]
    pub fn disable_peer_access(&self, peer: &Device) -> Result<()> {
        self.bind()?;
        result::device_disable_peer_access(peer.inner.ordinal)
    }

    /// Waits for all work queued on every stream of this device
    /// (`aclrtSynchronizeDevice`), then gives back memory whose frees were
    /// waiting for that work.
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of queued work (507xxx codes),
    /// and [`Error::HostFunctionPanicked`] when a host function of the
    /// default stream panicked.
    #[doc(alias = "aclrtSynchronizeDevice")]
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        result::synchronize_device()?;
        self.reap(true)?;
        match self.inner.default_stream_shared.take_failure() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Like [`Device::synchronize`], giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_STREAM_SYNC_TIMEOUT` (507046) when the time runs out;
    /// [`Error::InvalidArgument`] for a zero timeout or one above
    /// `i32::MAX` ms; as [`Device::synchronize`] otherwise.
    #[doc(alias = "aclrtSynchronizeDeviceWithTimeout")]
    pub fn synchronize_timeout(&self, timeout: std::time::Duration) -> Result<()> {
        let ms = crate::event::timeout_ms("Device::synchronize_timeout", timeout)?;
        self.bind()?;
        result::synchronize_device_with_timeout(ms)?;
        self.reap(true)?;
        match self.inner.default_stream_shared.take_failure() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Aborts the work queued on every stream of this device, in every
    /// context: tasks not yet started are dropped (a host function among
    /// them is never called), a task blocked in a wait gives up, and the
    /// call returns once the tasks in flight have finished. The streams take
    /// work again afterwards. Data the dropped tasks would have written is
    /// not written; a wait for an event whose record was dropped fails; the
    /// closures of dropped host functions and callbacks are dropped without
    /// running.
    /// `timeout` bounds the whole abort (`None`: no limit).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_WAIT_TIMEOUT` (107019) when the abort takes longer than
    /// `timeout`; [`Error::InvalidArgument`] for a timeout above 36 minutes
    /// (the runtime's limit) or of 0 ms; the runtime's error.
    #[doc(alias = "aclrtDeviceTaskAbort")]
    pub fn abort_tasks(&self, timeout: Option<std::time::Duration>) -> Result<()> {
        const MAX_MS: u128 = 36 * 60 * 1000;
        let ms = match timeout {
            None => 0,
            Some(t) if t.as_millis() == 0 || t.as_millis() > MAX_MS => {
                return Err(Error::invalid(
                    "Device::abort_tasks",
                    format!(
                        "the timeout must lie in [1 ms, 36 min]; {} ms was given",
                        t.as_millis()
                    ),
                ));
            }
            Some(t) => t.as_millis() as u32,
        };
        result::device_task_abort(self.inner.ordinal, ms)?;
        crate::host_work::drop_aborted_on_device(self.inner.ordinal);
        Ok(())
    }

    /// Frees memory whose queued users have finished (see
    /// [`memory`](crate::memory)); with `wait`, waits for them first.
    pub(crate) fn reap(&self, wait: bool) -> Result<()> {
        self.inner
            .tracking
            .reap(&self.context_ref(), &self.inner.events, wait, false)
    }
}

/// The error for a device call from inside a host function.
pub(crate) fn host_fn_error(function: &'static str) -> Error {
    Error::invalid(
        function,
        "AscendCL may not be called from inside a host function (it would deadlock); \
         queue the work after the host function instead",
    )
}

impl Drop for Inner {
    fn drop(&mut self) {
        let teardown = Teardown {
            ordinal: self.ordinal,
            ctx: self.ctx as usize,
            id: self.id,
            events: std::mem::take(&mut self.events),
            tracking: std::mem::take(&mut self.tracking),
            callback_thread: std::mem::take(&mut self.callback_thread),
            default_stream_shared: self.default_stream_shared.clone(),
            allocator: self.allocator.take(),
            // Finalized (if last) after the reset, by the teardown.
            runtime: self.runtime.clone(),
        };
        // Inside a host function AscendCL may not be called, and the
        // callback thread may be this very thread: the release thread
        // tears down then.
        release::outside_host_fn(move || teardown.run());
    }
}

/// What a device's last handle releases, movable to another thread.
struct Teardown {
    ordinal: i32,
    ctx: usize,
    id: u64,
    events: EventPool,
    tracking: crate::memory::track::Tracking,
    callback_thread: crate::host_work::CallbackThread,
    default_stream_shared: Arc<crate::host_work::Shared>,
    allocator: Option<Arc<crate::memory::DeviceAllocator>>,
    runtime: Runtime,
}

impl Teardown {
    fn run(self) {
        // Make the context current for the releases below, whatever thread
        // drops the last handle.
        // SAFETY: the device is still retained (reset below).
        if let Err(e) = unsafe { result::set_current_context(self.ctx as raw::aclrtContext) } {
            release::record("Device", e);
        }
        BOUND.with(|b| b.set(self.id));
        if let Err(e) = crate::host_work::unsubscribe_default(
            &self.callback_thread,
            &self.default_stream_shared,
        ) {
            release::record("Device", e);
        }
        self.callback_thread.stop();
        if let Some(alloc) = self.allocator
            && let Err(e) = alloc.empty_cache()
        {
            release::record("CachingAllocator", e);
        }
        // Memory whose free waited for events: the device's work is over.
        let ctx = ContextRef {
            ctx: self.ctx,
            id: self.id,
        };
        if let Err(e) = self.tracking.reap(&ctx, &self.events, true, true) {
            release::record("DeviceBuffer", e);
        }
        self.events.destroy_all();
        // SAFETY: releases the retain `Device::new` took, once the last handle
        // is gone and the device's streams, events and allocations were
        // released above.
        if let Err(e) = unsafe { result::reset_device(self.ordinal) } {
            release::record("Device", e);
        }
        // The context may be gone: nothing is bound on this thread now.
        BOUND.with(|b| b.set(0));
        drop(self.runtime);
    }
}

//! NPUs and the calling thread's current device.
//!
//! AscendCL keeps a *current device* per host thread: most calls act on it,
//! and a thread that never selected one gets `ACL_ERROR_RT_CONTEXT_NULL`
//! (107002) — the most reported Ascend pitfall, typical of thread pools and
//! async runtimes. A [`Device`] therefore binds itself to the calling thread
//! before every call that needs it ([`Device::bind`]); a thread-local
//! remembers what is bound, so a repeated bind costs a comparison.
//!
//! Device numbers are logical: with `ASCEND_RT_VISIBLE_DEVICES=4,5` the
//! process sees two devices, 0 and 1, which are physical NPUs 4 and 5.

use crate::error::{Error, Result};
use crate::{Runtime, release, result};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// One NPU, selected for use by this process (`aclrtSetDevice`) while any
/// handle to it lives, and released (`aclrtResetDevice`) after the last one.
///
/// Cheap to clone; `Send + Sync`: any thread may use it, each call binds the
/// device to the calling thread first.
#[derive(Clone, Debug)]
pub struct Device {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    ordinal: i32,
    /// Unique per `Device::new`, so a thread-local binding never outlives the
    /// device it was made for.
    id: u64,
    /// `aclrtSetDevice` calls made for this handle (each one is a reference
    /// the runtime counts); undone one by one on drop.
    set_calls: AtomicU32,
    runtime: Runtime,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The `Inner::id` of the device bound to this thread, 0 for none.
    static BOUND: Cell<u64> = const { Cell::new(0) };
}

/// Free and total bytes of a device's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes not allocated.
    pub free_bytes: usize,
    /// Bytes in all.
    pub total_bytes: usize,
}

impl Device {
    /// Opens device `ordinal` (logical, `0..device_count`) and makes it the
    /// calling thread's current device.
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
        result::set_device(id)?;
        let inner = Arc::new(Inner {
            ordinal: id,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            set_calls: AtomicU32::new(1),
            runtime: runtime.clone(),
        });
        BOUND.with(|b| b.set(inner.id));
        Ok(Device { inner })
    }

    /// The logical device number.
    pub fn ordinal(&self) -> u32 {
        self.inner.ordinal as u32
    }

    /// The runtime session this device belongs to.
    pub fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    /// Makes this device the calling thread's current device, unless it
    /// already is. Every method that needs a device calls this first, so
    /// user code rarely needs to.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtSetDevice`.
    #[doc(alias = "aclrtSetDevice")]
    pub fn bind(&self) -> Result<()> {
        if BOUND.with(Cell::get) == self.inner.id {
            return Ok(());
        }
        result::set_device(self.inner.ordinal)?;
        self.inner.set_calls.fetch_add(1, Ordering::Relaxed);
        BOUND.with(|b| b.set(self.inner.id));
        Ok(())
    }

    /// Free and total HBM of this device.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtGetMemInfo`.
    #[doc(alias = "aclrtGetMemInfo")]
    pub fn memory_info(&self) -> Result<MemoryInfo> {
        self.bind()?;
        let (free_bytes, total_bytes) = result::get_mem_info(acl_sys::ACL_HBM_MEM)?;
        Ok(MemoryInfo {
            free_bytes,
            total_bytes,
        })
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        BOUND.with(|b| {
            if b.get() == self.id {
                b.set(0);
            }
        });
        for _ in 0..*self.set_calls.get_mut() {
            if let Err(e) = result::reset_device(self.ordinal) {
                release::record("Device", e);
                break;
            }
        }
    }
}

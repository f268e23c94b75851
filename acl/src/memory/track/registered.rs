//! [`RegisteredHost`]: host memory registered with the runtime
//! (`aclrtHostRegister`), as an allocation's backing.
//!
//! The allocation's address is the device address the runtime gave; the
//! host memory itself is owned here (the buffer it came from, type-erased),
//! so that it outlives every queued access and every holder of the
//! allocation (a captured graph, an HCCL group). It is unregistered once
//! those accesses are done, and only then handed back (dropped): if the
//! runtime refuses to unregister it, it is leaked instead, since the device
//! may still reach it.

use crate::error::Result;
use crate::result;
use std::any::Any;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};

/// Registered host memory and its owner (see the module docs).
pub(crate) struct RegisteredHost {
    /// The host address registered (the start of the owner's buffer).
    host: *mut c_void,
    /// The buffer the memory belongs to; dropped only once unregistered.
    owner: ManuallyDrop<Box<dyn Any + Send + Sync>>,
    unregistered: AtomicBool,
}

// SAFETY: `host` is an address this type passes to the runtime and never
// dereferences; the owner is `Send + Sync`.
unsafe impl Send for RegisteredHost {}
// SAFETY: as above; `unregistered` is atomic.
unsafe impl Sync for RegisteredHost {}

impl RegisteredHost {
    /// The registration of the memory at `host`, which `owner` holds.
    ///
    /// # Safety
    ///
    /// `host` was registered with `aclrtHostRegister` on the allocation's
    /// device, and `owner` keeps that memory allocated, at that address,
    /// until it is dropped.
    pub(crate) unsafe fn new(host: *mut c_void, owner: Box<dyn Any + Send + Sync>) -> Self {
        RegisteredHost {
            host,
            owner: ManuallyDrop::new(owner),
            unregistered: AtomicBool::new(false),
        }
    }

    /// Unregisters the memory (its device bound, every recorded access
    /// finished). Once only; a failure leaves the memory leaked when this
    /// is dropped.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtHostUnregister`.
    pub(super) fn unregister(&self) -> Result<()> {
        if self.unregistered.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: `host` is the start of a live registration (`new`'s
        // contract; not unregistered yet), and the caller says no queued
        // work uses it any more.
        unsafe { result::host_unregister(self.host) }?;
        self.unregistered.store(true, Ordering::Release);
        Ok(())
    }
}

impl Drop for RegisteredHost {
    fn drop(&mut self) {
        if *self.unregistered.get_mut() {
            // SAFETY: dropped once, here; the runtime no longer maps it.
            unsafe { ManuallyDrop::drop(&mut self.owner) };
        }
        // Otherwise the memory stays registered (the runtime refused, or it
        // was never given back): leaked, since the device may still reach it.
    }
}

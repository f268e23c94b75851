//! [`Window`]: device memory registered with a communicator
//! (`HcclCommRegister`), which chosen peers can be told about
//! ([`Window::exchange`], `HcclCommExchangeMem`).
//!
//! Registration lets HCCL move data to and from the buffer without staging
//! it in its own communication buffers. The window borrows both the
//! communicator and the memory, so neither can go away while it is
//! registered; dropping it deregisters (`HcclCommDeregister`; a failure is
//! kept for [`take_release_errors`](crate::take_release_errors)).

use crate::comm::Comm;
use crate::error::{Error, Result};
use crate::result;
use acl::{DeviceMemory, DeviceRepr};
use std::ffi::c_void;
use std::marker::PhantomData;

/// A registered window of device memory (see the module docs).
///
/// `Send + Sync`: the handle is an opaque token of the communicator, which
/// any thread may use (as [`Comm`] itself).
#[derive(Debug)]
pub struct Window<'a> {
    comm: &'a Comm,
    /// The registered memory's allocation: deregistration waits for the
    /// work queued on it (collectives that may use the registration).
    memory: &'a acl::memory::Allocation,
    handle: *mut c_void,
    bytes: usize,
    _memory: PhantomData<&'a ()>,
}

// SAFETY: `handle` is an opaque token HCCL gave for `comm`, valid from any
// thread; nothing is dereferenced on this side.
unsafe impl Send for Window<'_> {}
// SAFETY: `&Window` only passes the token to HCCL with the communicator.
unsafe impl Sync for Window<'_> {}

impl Comm {
    /// Registers `memory` (device memory of this rank's device) with the
    /// communicator.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for empty memory; HCCL's error otherwise
    /// (e.g. [`ErrorCode::Para`](crate::ErrorCode::Para) for memory of
    /// another device).
    #[doc(alias = "HcclCommRegister")]
    pub fn register<'a, T: DeviceRepr>(
        &'a self,
        memory: &'a (impl DeviceMemory<T> + ?Sized),
    ) -> Result<Window<'a>> {
        let bytes = memory.size_bytes();
        if bytes == 0 {
            return Err(Error::invalid("Comm::register", "the memory is empty"));
        }
        // SAFETY: a live communicator and live device memory of `bytes`
        // bytes (borrowed for the window's life).
        let handle = unsafe {
            result::comm_register(
                self.as_raw(),
                memory.device_ptr().cast_mut(),
                bytes as u64,
                0,
            )
        }?;
        Ok(Window {
            comm: self,
            memory: memory.allocation(),
            handle,
            bytes,
            _memory: PhantomData,
        })
    }
}

impl Window<'_> {
    /// Bytes registered.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    /// Tells each of `peers` (ranks of the communicator, not this one)
    /// about this window and learns theirs. Blocks until every listed peer
    /// has called it with this rank (each pair calls it equally often).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a peer out of range, this rank, or a
    /// peer listed twice; [`ErrorCode::Timeout`](crate::ErrorCode::Timeout)
    /// when a peer does not call it within `HCCL_CONNECT_TIMEOUT`.
    #[doc(alias = "HcclCommExchangeMem")]
    pub fn exchange(&self, peers: &[u32]) -> Result<()> {
        for (i, &p) in peers.iter().enumerate() {
            if p >= self.comm.size() || p == self.comm.rank() || peers[..i].contains(&p) {
                return Err(Error::invalid(
                    "Window::exchange",
                    format!(
                        "peer {p} is out of range (0..{}), this rank, or listed twice",
                        self.comm.size()
                    ),
                ));
            }
        }
        let mut ranks = peers.to_vec();
        // SAFETY: a live communicator and window.
        unsafe { result::comm_exchange_mem(self.comm.as_raw(), self.handle, &mut ranks) }
    }

    /// Deregisters now, reporting a failure. Like dropping, it first waits
    /// for the queued work that uses the memory (a collective queued
    /// before may rely on the registration until it has run).
    ///
    /// # Errors
    ///
    /// The error of that work (it is deregistered anyway); HCCL's error
    /// from `HcclCommDeregister`.
    #[doc(alias = "HcclCommDeregister")]
    pub fn deregister(mut self) -> Result<()> {
        let out = self.release();
        self.handle = std::ptr::null_mut();
        out
    }

    fn release(&self) -> Result<()> {
        let waited = self.memory.wait_idle().map_err(Error::Acl);
        // SAFETY: a live communicator and a window deregistered only here;
        // the work queued on the memory has finished (or failed) above.
        let out = unsafe { result::comm_deregister(self.comm.as_raw(), self.handle) };
        waited.and(out)
    }
}

impl Drop for Window<'_> {
    fn drop(&mut self) {
        if self.handle.is_null() {
            return;
        }
        if let Err(e) = self.release() {
            crate::release::record("Window", e);
        }
    }
}

/// A reserved range of virtual memory given to a communicator
/// (`HcclCommSetMemoryRange`): parts of it mapped with
/// [`VirtualRange::map`](acl::vmm::VirtualRange::map) can be activated for
/// HCCL ([`MemoryRange::activate`]). Dropping it takes the range back
/// (`HcclCommUnsetMemoryRange`; a failure is kept for
/// [`take_release_errors`](crate::take_release_errors)).
///
/// `Send + Sync`: an address and the communicator, which any thread may use.
#[derive(Debug)]
pub struct MemoryRange<'a> {
    comm: &'a Comm,
    base: *mut c_void,
}

// SAFETY: `base` is an address token of AscendCL's reservation, passed to
// HCCL only; the communicator is `Sync`.
unsafe impl Send for MemoryRange<'_> {}
// SAFETY: as above.
unsafe impl Sync for MemoryRange<'_> {}

/// Mapped memory activated for a communicator
/// (`HcclCommActivateCommMemory`); dropping it deactivates it.
///
/// `Send + Sync`, as [`MemoryRange`].
#[derive(Debug)]
pub struct ActiveMemory<'a> {
    comm: &'a Comm,
    ptr: *mut c_void,
}

// SAFETY: as for `MemoryRange`.
unsafe impl Send for ActiveMemory<'_> {}
// SAFETY: as above.
unsafe impl Sync for ActiveMemory<'_> {}

impl Comm {
    /// Gives the reserved `range` (of this rank's device) to the
    /// communicator.
    ///
    /// # Errors
    ///
    /// HCCL's error ([`ErrorCode::Para`](crate::ErrorCode::Para) for a range
    /// of another device, or one already given).
    #[doc(alias = "HcclCommSetMemoryRange")]
    pub fn set_memory_range<'a>(
        &'a self,
        range: &'a acl::vmm::VirtualRange,
    ) -> Result<MemoryRange<'a>> {
        // SAFETY: a live communicator and reservation (borrowed for the
        // result's life).
        unsafe {
            result::comm_set_memory_range(self.as_raw(), range.as_ptr(), range.size_bytes(), 0, 0)
        }?;
        Ok(MemoryRange {
            comm: self,
            base: range.as_ptr(),
        })
    }
}

impl MemoryRange<'_> {
    /// Activates `mapping` (of this range, mapping all of `memory`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the mapping's size is not the
    /// memory's; HCCL's error ([`ErrorCode::Para`](crate::ErrorCode::Para)
    /// for a mapping outside the range, or of other memory).
    #[doc(alias = "HcclCommActivateCommMemory")]
    pub fn activate<'b>(
        &'b self,
        mapping: &'b acl::vmm::Mapping<'_>,
        memory: &'b acl::vmm::PhysicalMemory,
    ) -> Result<ActiveMemory<'b>> {
        if mapping.size_bytes() != memory.size_bytes() {
            return Err(Error::invalid(
                "MemoryRange::activate",
                format!(
                    "the mapping has {} bytes but the memory {}",
                    mapping.size_bytes(),
                    memory.size_bytes()
                ),
            ));
        }
        // SAFETY: a live communicator, mapping and handle (all borrowed for
        // the result's life).
        unsafe {
            result::comm_activate_comm_memory(
                self.comm.as_raw(),
                mapping.device_ptr(),
                mapping.size_bytes(),
                0,
                memory.as_raw(),
                0,
            )
        }?;
        Ok(ActiveMemory {
            comm: self.comm,
            ptr: mapping.device_ptr(),
        })
    }

    /// Takes the range back now, reporting a failure.
    ///
    /// # Errors
    ///
    /// HCCL's error.
    #[doc(alias = "HcclCommUnsetMemoryRange")]
    pub fn unset(mut self) -> Result<()> {
        let out = self.give_back();
        self.base = std::ptr::null_mut();
        out
    }

    fn give_back(&self) -> Result<()> {
        // SAFETY: a live communicator and a range set by `set_memory_range`.
        unsafe { result::comm_unset_memory_range(self.comm.as_raw(), self.base) }
    }
}

impl Drop for MemoryRange<'_> {
    fn drop(&mut self) {
        if !self.base.is_null()
            && let Err(e) = self.give_back()
        {
            crate::release::record("MemoryRange", e);
        }
    }
}

impl ActiveMemory<'_> {
    /// Deactivates now, reporting a failure.
    ///
    /// # Errors
    ///
    /// HCCL's error.
    #[doc(alias = "HcclCommDeactivateCommMemory")]
    pub fn deactivate(mut self) -> Result<()> {
        let out = self.give_back();
        self.ptr = std::ptr::null_mut();
        out
    }

    fn give_back(&self) -> Result<()> {
        // SAFETY: a live communicator and memory activated by `activate`.
        unsafe { result::comm_deactivate_comm_memory(self.comm.as_raw(), self.ptr) }
    }
}

impl Drop for ActiveMemory<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null()
            && let Err(e) = self.give_back()
        {
            crate::release::record("ActiveMemory", e);
        }
    }
}

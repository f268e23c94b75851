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
use crate::error::{Error, Result, check, clear_recent};
use acl::{DeviceMemory, DeviceRepr};
use hccl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;

/// A registered window of device memory (see the module docs).
///
/// `Send + Sync`: the handle is an opaque token of the communicator, which
/// any thread may use (as [`Comm`] itself).
#[derive(Debug)]
pub struct Window<'a> {
    comm: &'a Comm,
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
        let mut handle = std::ptr::null_mut();
        clear_recent();
        // SAFETY: a live communicator, live device memory of `bytes` bytes
        // (borrowed for the window's life) and a valid out-pointer.
        check("HcclCommRegister", unsafe {
            sys::HcclCommRegister(
                self.as_raw(),
                memory.device_ptr().cast_mut(),
                bytes as u64,
                &mut handle,
                0,
            )
        })?;
        Ok(Window {
            comm: self,
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
        clear_recent();
        // SAFETY: a live communicator and window; `ranks` holds `len` ranks.
        check("HcclCommExchangeMem", unsafe {
            sys::HcclCommExchangeMem(
                self.comm.as_raw(),
                self.handle,
                ranks.as_mut_ptr(),
                ranks.len() as u32,
            )
        })
    }

    /// Deregisters now, reporting a failure.
    ///
    /// # Errors
    ///
    /// HCCL's error from `HcclCommDeregister`.
    #[doc(alias = "HcclCommDeregister")]
    pub fn deregister(mut self) -> Result<()> {
        let out = self.release();
        self.handle = std::ptr::null_mut();
        out
    }

    fn release(&self) -> Result<()> {
        clear_recent();
        // SAFETY: a live communicator and a window deregistered only here.
        check("HcclCommDeregister", unsafe {
            sys::HcclCommDeregister(self.comm.as_raw(), self.handle)
        })
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

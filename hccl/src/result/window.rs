//! One-sided memory: device memory registered with a communicator and
//! exchanged with peers (windows), and virtual memory given to it.

use super::forward;
use crate::error::Result;
use acl_sys::aclrtDrvMemHandle;
use hccl_sys as sys;
use std::ffi::c_void;

/// `HcclCommRegister`: registers `size` bytes of device memory at `addr`
/// with `comm`; returns the window's handle.
///
/// # Safety
///
/// `comm` is a live communicator and `addr` live device memory of `size`
/// bytes on its device, kept alive until the window is deregistered.
#[doc(alias = "HcclCommRegister")]
pub unsafe fn comm_register(
    comm: sys::HcclComm,
    addr: *mut c_void,
    size: u64,
    flag: u32,
) -> Result<*mut c_void> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(HcclCommRegister(comm, addr, size, &mut handle, flag)) }?;
    Ok(handle)
}

/// `HcclCommExchangeMem`: exchanges the window `window_handle` with the
/// ranks `peer_ranks`.
///
/// # Safety
///
/// `comm` is a live communicator and `window_handle` a window registered
/// with it and not deregistered.
#[doc(alias = "HcclCommExchangeMem")]
pub unsafe fn comm_exchange_mem(
    comm: sys::HcclComm,
    window_handle: *mut c_void,
    peer_ranks: &mut [u32],
) -> Result<()> {
    // SAFETY: the caller's contract; `peer_ranks` holds `len` ranks.
    unsafe {
        call!(HcclCommExchangeMem(
            comm,
            window_handle,
            peer_ranks.as_mut_ptr(),
            peer_ranks.len() as u32
        ))
    }
}

forward! {
    /// `HcclCommDeregister`: deregisters a window (once; not used afterwards).
    #[doc(alias = "HcclCommDeregister")]
    comm_deregister = HcclCommDeregister(comm: sys::HcclComm, handle: *mut c_void);
    /// `HcclCommSetMemoryRange`: gives `comm` the virtual range of `size`
    /// bytes at `base_vir_ptr` (reserved with AscendCL, kept until unset).
    #[doc(alias = "HcclCommSetMemoryRange")]
    comm_set_memory_range = HcclCommSetMemoryRange(
        comm: sys::HcclComm,
        base_vir_ptr: *mut c_void,
        size: usize,
        alignment: usize,
        flags: u64,
    );
    /// `HcclCommUnsetMemoryRange`: takes back a range given by
    /// [`comm_set_memory_range`].
    #[doc(alias = "HcclCommUnsetMemoryRange")]
    comm_unset_memory_range = HcclCommUnsetMemoryRange(comm: sys::HcclComm, base_vir_ptr: *mut c_void);
    /// `HcclCommActivateCommMemory`: activates `size` bytes of the range at
    /// `vir_ptr`, mapped to the physical memory `handle` (both kept until
    /// deactivated).
    #[doc(alias = "HcclCommActivateCommMemory")]
    comm_activate_comm_memory = HcclCommActivateCommMemory(
        comm: sys::HcclComm,
        vir_ptr: *mut c_void,
        size: usize,
        offset: usize,
        handle: aclrtDrvMemHandle,
        flags: u64,
    );
    /// `HcclCommDeactivateCommMemory`: deactivates memory activated by
    /// [`comm_activate_comm_memory`].
    #[doc(alias = "HcclCommDeactivateCommMemory")]
    comm_deactivate_comm_memory = HcclCommDeactivateCommMemory(comm: sys::HcclComm, vir_ptr: *mut c_void);
}

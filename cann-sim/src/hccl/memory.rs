//! Memory registration: `HcclCommRegister` and `HcclCommDeregister` (a
//! window of device memory known to the communicator) and
//! `HcclCommExchangeMem` (telling chosen peers about it, and learning
//! theirs); and virtual memory given to a communicator
//! (`HcclCommSetMemoryRange` / `UnsetMemoryRange`: a range from
//! `aclrtReserveMemAddress`; `HcclCommActivateCommMemory` / `Deactivate…`:
//! parts of it mapped with `aclrtMapMem`), checked and recorded the same way.
//!
//! The bookkeeping, the checks against the memory and the exchange are the
//! engine's ([`crate::comm::window`]).

#![allow(non_snake_case)]

use super::common::{arg_fail, check_injected, comm_arg, fail_with, null, para, tri};
use hccl_sys::*;
use std::ffi::c_void;

/// `HcclCommRegister`: registers `size` bytes of device memory at `addr`
/// with `comm`; `*handle` identifies the window. `flag` is reserved (0).
///
/// # Safety
///
/// `handle` null or writable; `addr` is only checked against the
/// allocation table, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommRegister(
    comm: HcclComm,
    addr: *mut c_void,
    size: u64,
    handle: *mut *mut c_void,
    flag: u32,
) -> HcclResult {
    const F: &str = "HcclCommRegister";
    check_injected!(F);
    if handle.is_null() {
        return null(F, "handle");
    }
    if addr.is_null() {
        return null(F, "addr");
    }
    if size == 0 {
        return para(F, "size is 0");
    }
    if flag != 0 {
        return para(F, format!("flag is {flag}; it is reserved and must be 0"));
    }
    let c = tri!(comm_arg(F, comm));
    let id = match c.register_window(addr as usize, size) {
        Ok(id) => id,
        Err(e) => return arg_fail(F, e),
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *handle = id as *mut c_void };
    HCCL_SUCCESS
}

/// `HcclCommDeregister`: forgets a window of `comm`.
///
/// # Safety
///
/// Handles are looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeregister(comm: HcclComm, handle: *mut c_void) -> HcclResult {
    const F: &str = "HcclCommDeregister";
    check_injected!(F);
    if handle.is_null() {
        return null(F, "handle");
    }
    let c = tri!(comm_arg(F, comm));
    match c.deregister_window(handle as u64) {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => arg_fail(F, e),
    }
}

/// `HcclCommExchangeMem`: sends the window's address and size to each of
/// `peerRanks` and waits for theirs.
///
/// # Safety
///
/// `peerRanks` null or `peerRankNum` readable ranks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommExchangeMem(
    comm: HcclComm,
    windowHandle: *mut c_void,
    peerRanks: *mut u32,
    peerRankNum: u32,
) -> HcclResult {
    const F: &str = "HcclCommExchangeMem";
    check_injected!(F);
    if windowHandle.is_null() {
        return null(F, "windowHandle");
    }
    if peerRankNum > 0 && peerRanks.is_null() {
        return null(F, "peerRanks");
    }
    let c = tri!(comm_arg(F, comm));
    let peers: Vec<u32> = if peerRankNum == 0 {
        Vec::new()
    } else {
        // SAFETY: checked non-null; the caller's contract: `peerRankNum` ranks.
        unsafe { std::slice::from_raw_parts(peerRanks, peerRankNum as usize) }.to_vec()
    };
    for (i, &p) in peers.iter().enumerate() {
        if p >= c.nranks || p == c.rank || peers[..i].contains(&p) {
            return para(
                F,
                format!(
                    "peer rank {p} is out of range (0..{}), this rank, or repeated",
                    c.nranks
                ),
            );
        }
    }
    let key = windowHandle as u64;
    let w = match c.live_window(key) {
        Ok(w) => w,
        Err(e) => return arg_fail(F, e),
    };
    match c.exchange_window(key, &w, &peers) {
        Ok(()) => HCCL_SUCCESS,
        Err(f) => fail_with(F, f),
    }
}

/// `HcclCommSetMemoryRange`: gives the communicator a range reserved with
/// `aclrtReserveMemAddress` on its device (`alignment` and `flags` must be
/// 0); parts of it mapped with `aclrtMapMem` can then be activated.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
    size: usize,
    alignment: usize,
    flags: u64,
) -> HcclResult {
    const F: &str = "HcclCommSetMemoryRange";
    check_injected!(F);
    if baseVirPtr.is_null() {
        return null(F, "baseVirPtr");
    }
    if alignment != 0 || flags != 0 {
        return para(F, "alignment and flags must be 0");
    }
    let c = tri!(comm_arg(F, comm));
    match c.set_memory_range(baseVirPtr as usize, size) {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => arg_fail(F, e),
    }
}

/// `HcclCommUnsetMemoryRange`: takes back a range with nothing activated.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommUnsetMemoryRange(
    comm: HcclComm,
    baseVirPtr: *mut c_void,
) -> HcclResult {
    const F: &str = "HcclCommUnsetMemoryRange";
    check_injected!(F);
    if baseVirPtr.is_null() {
        return null(F, "baseVirPtr");
    }
    let c = tri!(comm_arg(F, comm));
    match c.unset_memory_range(baseVirPtr as usize) {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => arg_fail(F, e),
    }
}

/// `HcclCommActivateCommMemory`: activates `size` bytes at `virPtr`, inside
/// a range set with `HcclCommSetMemoryRange` and mapped there with
/// `aclrtMapMem` to `handle` (`offset` and `flags` must be 0).
///
/// # Safety
///
/// None: addresses and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommActivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: acl_sys::aclrtDrvMemHandle,
    flags: u64,
) -> HcclResult {
    const F: &str = "HcclCommActivateCommMemory";
    check_injected!(F);
    if virPtr.is_null() {
        return null(F, "virPtr");
    }
    if handle.is_null() {
        return null(F, "handle");
    }
    if offset != 0 || flags != 0 {
        return para(F, "offset and flags must be 0");
    }
    let c = tri!(comm_arg(F, comm));
    match c.activate_memory(virPtr as usize, size, handle as u64) {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => arg_fail(F, e),
    }
}

/// `HcclCommDeactivateCommMemory`: deactivates memory activated at `virPtr`.
///
/// # Safety
///
/// None: addresses are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDeactivateCommMemory(
    comm: HcclComm,
    virPtr: *mut c_void,
) -> HcclResult {
    const F: &str = "HcclCommDeactivateCommMemory";
    check_injected!(F);
    if virPtr.is_null() {
        return null(F, "virPtr");
    }
    let c = tri!(comm_arg(F, comm));
    match c.deactivate_memory(virPtr as usize) {
        Ok(()) => HCCL_SUCCESS,
        Err(e) => arg_fail(F, e),
    }
}

//! Virtual memory management: address reservations, physical memory and
//! mappings (`aclrtReserveMemAddress`, `aclrtMallocPhysical`, `aclrtMapMem`
//! and their inverses).

use super::forward;
use crate::error::Result;
use acl_sys as sys;
use std::ffi::c_void;

/// `aclrtMemGetAllocationGranularity`, in bytes.
#[doc(alias = "aclrtMemGetAllocationGranularity")]
pub fn mem_get_allocation_granularity(
    prop: &sys::aclrtPhysicalMemProp,
    option: sys::aclrtMemGranularityOptions,
) -> Result<usize> {
    let mut p = *prop;
    let mut g = 0usize;
    // SAFETY: valid pointers for the call (the runtime takes a mutable
    // pointer but only reads; it gets a copy).
    unsafe { call!(aclrtMemGetAllocationGranularity(&mut p, option, &mut g)) }?;
    Ok(g)
}

/// `aclrtReserveMemAddress` at any address, no flags: a range of
/// `size` bytes of device address space on the current device.
#[doc(alias = "aclrtReserveMemAddress")]
pub fn reserve_mem_address(size: usize) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; no fixed address is asked for.
    unsafe {
        call!(aclrtReserveMemAddress(
            &mut ptr,
            size,
            0,
            std::ptr::null_mut(),
            0
        ))
    }?;
    Ok(ptr)
}

/// `aclrtMallocPhysical`, no flags.
#[doc(alias = "aclrtMallocPhysical")]
pub fn malloc_physical(
    size: usize,
    prop: &sys::aclrtPhysicalMemProp,
) -> Result<sys::aclrtDrvMemHandle> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: valid pointers for the call.
    unsafe { call!(aclrtMallocPhysical(&mut handle, size, prop, 0)) }?;
    Ok(handle)
}

forward! {
    /// `aclrtMapMem`: maps physical memory at `ptr` inside a reservation.
    #[doc(alias = "aclrtMapMem")]
    map_mem = aclrtMapMem(
        ptr: *mut c_void,
        size: usize,
        offset: usize,
        handle: sys::aclrtDrvMemHandle,
        flags: u64,
    );
    /// `aclrtUnmapMem`.
    #[doc(alias = "aclrtUnmapMem")]
    unmap_mem = aclrtUnmapMem(ptr: *mut c_void);
    /// `aclrtReleaseMemAddress`: gives a reservation back (nothing mapped).
    #[doc(alias = "aclrtReleaseMemAddress")]
    release_mem_address = aclrtReleaseMemAddress(ptr: *mut c_void);
    /// `aclrtFreePhysical` (not mapped anywhere).
    #[doc(alias = "aclrtFreePhysical")]
    free_physical = aclrtFreePhysical(handle: sys::aclrtDrvMemHandle);
}

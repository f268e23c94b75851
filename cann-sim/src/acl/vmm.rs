#![allow(non_snake_case)]

//! Virtual memory management: reserve a range of device addresses
//! (`aclrtReserveMemAddress`), allocate physical memory on its own
//! (`aclrtMallocPhysical`) and map the one into the other (`aclrtMapMem`)
//! — what torch_npu's expandable segments are built on: a segment grows by
//! mapping more physical memory behind its end, its address staying put.
//!
//! The reservations, physical memory and mappings are the runtime's
//! ([`crate::rt::vmm`]).
//!
//! Sizes, mapped addresses and offsets are multiples of the granularity,
//! 2 MiB ([`GRANULARITY`], the huge-page size `aclrtMemGetAllocationGranularity`
//! reports for HBM). Physical memory is device memory only (host physical
//! memory is `ACL_ERROR_API_NOT_SUPPORT`); it can be mapped into ranges
//! reserved on its own device. A reservation with mappings cannot be
//! released, a mapped physical allocation cannot be freed
//! (`ACL_ERROR_INVALID_PARAM` naming what is still mapped), and each byte of
//! physical memory is mapped at most once: the simulator refuses aliases,
//! which would let an operator's input and output share bytes at different
//! addresses unseen.

use super::common::{code, rt_fail};
use super::memory::no_device;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::vmm::{self, GRANULARITY, VmError};
use crate::state;
use acl_sys::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::LazyLock;

const NO_MEMORY: aclError = code(ACL_ERROR_RT_MEMORY_ALLOCATION);

/// The properties each physical allocation was made with, by handle (for
/// `aclrtMemGetAllocationPropertiesFromHandle`).
static PROPS: LazyLock<Mutex<HashMap<u64, aclrtPhysicalMemProp>>> = LazyLock::new(Default::default);

/// Records a failure of the runtime's virtual memory in `function`.
fn vm_fail(function: &str, e: VmError) -> aclError {
    match e {
        VmError::Invalid(msg) => fail(ACL_ERROR_INVALID_PARAM, format!("{function}: {msg}")),
        VmError::NoMemory(msg) => fail(NO_MEMORY, format!("{function}: {msg}")),
        VmError::Check(e) => rt_fail(function, e),
    }
}

fn granular(function: &str, what: &str, v: usize, positive: bool) -> Result<(), aclError> {
    if (positive && v == 0) || !v.is_multiple_of(GRANULARITY) {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: {what} {v:#x} is not a {}multiple of the granularity ({GRANULARITY:#x}, \
                 2 MiB; see aclrtMemGetAllocationGranularity)",
                if positive { "positive " } else { "" }
            ),
        ));
    }
    Ok(())
}

/// `aclrtMemGetAllocationGranularity`: 2 MiB for either option.
///
/// # Safety
///
/// `prop` null or readable; `granularity` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationGranularity(
    prop: *mut aclrtPhysicalMemProp,
    option: aclrtMemGranularityOptions,
    granularity: *mut usize,
) -> aclError {
    const F: &str = "aclrtMemGetAllocationGranularity";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if prop.is_null() || granularity.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: prop or granularity is null"),
        );
    }
    if option != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM
        && option != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED
    {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: option {option} is neither MINIMUM (0) nor RECOMMENDED (1)"),
        );
    }
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *granularity = GRANULARITY };
    ACL_SUCCESS
}

/// `aclrtReserveMemAddress`: `size` bytes of addresses on the current
/// device, aligned to `alignment` (0: the granularity); `expectPtr` must be
/// null, `flags` 0 or 1 (the page type).
///
/// # Safety
///
/// `virPtr` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReserveMemAddress(
    virPtr: *mut *mut c_void,
    size: usize,
    alignment: usize,
    expectPtr: *mut c_void,
    flags: u64,
) -> aclError {
    const F: &str = "aclrtReserveMemAddress";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if virPtr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: virPtr is null"));
    }
    tri!(granular(F, "size", size, true));
    if alignment != 0 && !alignment.is_power_of_two() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: alignment {alignment:#x} is not 0 or a power of two"),
        );
    }
    if !expectPtr.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: expectPtr must be null (fixed addresses are not supported)"),
        );
    }
    if flags > 1 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: flags {flags} is not a page type (0 or 1)"),
        );
    }
    let Some(device) = state::current_device() else {
        return no_device(F);
    };
    match vmm::reserve(size, alignment.max(GRANULARITY), device) {
        Ok(base) => {
            // SAFETY: checked non-null; the caller's contract.
            unsafe { *virPtr = base as *mut c_void };
            ACL_SUCCESS
        }
        Err(e) => vm_fail(F, e),
    }
}

/// `aclrtReleaseMemAddress`: gives back a reservation with no mappings.
///
/// # Safety
///
/// None: the address is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReleaseMemAddress(virPtr: *mut c_void) -> aclError {
    const F: &str = "aclrtReleaseMemAddress";
    if let Some(code) = faults::check(F) {
        return code;
    }
    match vmm::release(virPtr as usize) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => vm_fail(F, e),
    }
}

/// `aclrtMallocPhysical`: `size` bytes of physical HBM of the device
/// `prop.location` names; `*handle` identifies it.
///
/// # Safety
///
/// `handle` null or writable; `prop` null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocPhysical(
    handle: *mut aclrtDrvMemHandle,
    size: usize,
    prop: *const aclrtPhysicalMemProp,
    flags: u64,
) -> aclError {
    const F: &str = "aclrtMallocPhysical";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() || prop.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: handle or prop is null"),
        );
    }
    if flags != 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: flags must be 0, not {flags}"),
        );
    }
    tri!(granular(F, "size", size, true));
    // SAFETY: checked non-null; the caller's contract.
    let p = unsafe { *prop };
    if p.location.type_ == ACL_MEM_LOCATION_TYPE_HOST
        || p.location.type_ == ACL_MEM_LOCATION_TYPE_HOST_NUMA
    {
        return fail(
            ACL_ERROR_API_NOT_SUPPORT,
            format!("{F}: host physical memory is not simulated; use a device location"),
        );
    }
    let count = crate::config::get().map_or(0, crate::config::Config::device_count);
    if p.location.type_ != ACL_MEM_LOCATION_TYPE_DEVICE || p.location.id >= count {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: location (type {}, id {}) is not a device of this machine ({count} devices)",
                p.location.type_, p.location.id
            ),
        );
    }
    if p.allocationType != ACL_MEM_ALLOCATION_TYPE_PINNED
        || (p.handleType != ACL_MEM_HANDLE_TYPE_NONE && p.handleType != ACL_MEM_HANDLE_TYPE_POSIX)
    {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: allocationType {} / handleType {} are not PINNED / NONE or POSIX",
                p.allocationType, p.handleType
            ),
        );
    }
    match vmm::malloc_physical(size, p.location.id) {
        Ok(id) => {
            PROPS.lock().insert(id, p);
            // SAFETY: checked non-null; the caller's contract.
            unsafe { *handle = id as aclrtDrvMemHandle };
            ACL_SUCCESS
        }
        Err(e) => vm_fail(F, e),
    }
}

/// `aclrtFreePhysical`: frees physical memory that is not mapped.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreePhysical(handle: aclrtDrvMemHandle) -> aclError {
    const F: &str = "aclrtFreePhysical";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let id = handle as u64;
    match vmm::free_physical(id) {
        Ok(()) => {
            PROPS.lock().remove(&id);
            ACL_SUCCESS
        }
        Err(e) => vm_fail(F, e),
    }
}

/// `aclrtMemGetAllocationPropertiesFromHandle`: the properties physical
/// memory was allocated with.
///
/// # Safety
///
/// `prop` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAllocationPropertiesFromHandle(
    handle: aclrtDrvMemHandle,
    prop: *mut aclrtPhysicalMemProp,
) -> aclError {
    const F: &str = "aclrtMemGetAllocationPropertiesFromHandle";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if prop.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: prop is null"));
    }
    let id = handle as u64;
    let Some(p) = PROPS
        .lock()
        .get(&id)
        .copied()
        .filter(|_| vmm::is_physical(id))
    else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: {handle:p} is not a handle aclrtMallocPhysical returned"),
        );
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *prop = p };
    ACL_SUCCESS
}

/// `aclrtMapMem`: maps `size` bytes of `handle`, from `offset`, at `virPtr`
/// inside a reservation; `flags` must be 0.
///
/// # Safety
///
/// None: addresses and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMapMem(
    virPtr: *mut c_void,
    size: usize,
    offset: usize,
    handle: aclrtDrvMemHandle,
    flags: u64,
) -> aclError {
    const F: &str = "aclrtMapMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if flags != 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: flags must be 0, not {flags}"),
        );
    }
    tri!(granular(F, "size", size, true));
    tri!(granular(F, "offset", offset, false));
    match vmm::map(virPtr as usize, size, offset, handle as u64) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => vm_fail(F, e),
    }
}

/// `aclrtUnmapMem`: unmaps the range mapped at `virPtr`.
///
/// # Safety
///
/// None: the address is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnmapMem(virPtr: *mut c_void) -> aclError {
    const F: &str = "aclrtUnmapMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    match vmm::unmap(F, virPtr as usize) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => vm_fail(F, e),
    }
}

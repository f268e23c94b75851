#![allow(non_snake_case)]

//! Virtual memory management: reserve a range of device addresses
//! (`aclrtReserveMemAddress`), allocate physical memory on its own
//! (`aclrtMallocPhysical`) and map the one into the other (`aclrtMapMem`)
//! — what torch_npu's expandable segments are built on: a segment grows by
//! mapping more physical memory behind its end, its address staying put.
//!
//! In the simulator a reservation is an inaccessible host mapping
//! (`PROT_NONE`, nothing committed), physical memory a memory file charged
//! to the device's HBM, and a mapping puts the file at the reserved address
//! (`MAP_FIXED`) and registers the range in the allocation table as device
//! memory, so copies, operators, kernels and collectives use it like memory
//! from `aclrtMalloc`. Unmapping takes it out of the table (queued work that
//! still uses it faults, as for freed memory) and makes the range
//! inaccessible again.
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

use super::common::code;
use super::common::rt_fail;
use super::memory::no_device;
use crate::faults;
use crate::recent_error::fail;
use crate::state;
use acl_sys::*;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::LazyLock;

/// The allocation granularity: 2 MiB.
pub const GRANULARITY: usize = 2 << 20;
const NO_MEMORY: aclError = code(ACL_ERROR_RT_MEMORY_ALLOCATION);

/// A reserved range of addresses.
#[derive(Debug)]
struct Reservation {
    size: usize,
    /// The host mapping behind it (larger, for the alignment).
    map: usize,
    map_len: usize,
    device: u32,
    /// Mapped ranges by first address: (bytes, physical handle, offset in it).
    mapped: BTreeMap<usize, (usize, u64, usize)>,
}

/// Physical memory from `aclrtMallocPhysical`.
#[derive(Debug)]
struct Physical {
    file: OwnedFd,
    size: usize,
    device: u32,
    prop: aclrtPhysicalMemProp,
    /// Its mapped parts: (offset, bytes).
    mapped: Vec<(usize, usize)>,
}

#[derive(Debug, Default)]
struct Vmm {
    reservations: BTreeMap<usize, Reservation>,
    physical: HashMap<u64, Physical>,
    next: u64,
}

static VMM: LazyLock<Mutex<Vmm>> = LazyLock::new(Default::default);

/// Live reservations and physical allocations (for leak checks).
pub fn live() -> (usize, usize) {
    let v = VMM.lock();
    (v.reservations.len(), v.physical.len())
}

/// The physical handle mapped at exactly `[addr, addr + size)`, if any
/// (for HCCL's `HcclCommActivateCommMemory`), and its device.
pub(crate) fn mapped_handle(addr: usize, size: usize) -> Option<(u64, u32)> {
    let v = VMM.lock();
    let (_, r) = v.reservations.range(..=addr).next_back()?;
    match r.mapped.get(&addr) {
        Some(&(len, h, _)) if len == size => Some((h, r.device)),
        _ => None,
    }
}

/// The reservation starting at `addr`: its size and device.
pub(crate) fn reservation(addr: usize) -> Option<(usize, u32)> {
    VMM.lock()
        .reservations
        .get(&addr)
        .map(|r| (r.size, r.device))
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
    let align = alignment.max(GRANULARITY);
    let Some(map_len) = size.checked_add(align) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: size {size:#x} is too large"),
        );
    };
    // SAFETY: a fresh inaccessible mapping; no existing memory is touched.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return fail(
            NO_MEMORY,
            format!(
                "{F}: cannot reserve {size:#x} bytes of addresses: {}",
                std::io::Error::last_os_error()
            ),
        );
    }
    let base = (map as usize).next_multiple_of(align);
    VMM.lock().reservations.insert(
        base,
        Reservation {
            size,
            map: map as usize,
            map_len,
            device,
            mapped: BTreeMap::new(),
        },
    );
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *virPtr = base as *mut c_void };
    ACL_SUCCESS
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
    let mut v = VMM.lock();
    let addr = virPtr as usize;
    match v.reservations.get(&addr) {
        None => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: {virPtr:p} is not an address aclrtReserveMemAddress returned"),
            );
        }
        Some(r) if !r.mapped.is_empty() => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{F}: {virPtr:p} still has {} mapping(s); unmap them with aclrtUnmapMem first",
                    r.mapped.len()
                ),
            );
        }
        Some(_) => {}
    }
    if let Some(r) = v.reservations.remove(&addr) {
        // Its addresses may be reused by anything now: the check mode
        // forgets the unmapped ranges it remembered there.
        if crate::check::enabled() {
            state::memory().write().forget_freed(addr, r.size);
        }
        // SAFETY: the reservation's own mapping, released once (just removed).
        unsafe { libc::munmap(r.map as *mut c_void, r.map_len) };
    }
    ACL_SUCCESS
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
    let device = p.location.id;
    let budget = crate::config::get().map_or(0, |c| c.hbm_bytes);
    if let Err(e) = state::memory().write().charge(device, size as u64, budget) {
        return fail(NO_MEMORY, format!("{F}: {e}"));
    }
    let file = match memory_file(size) {
        Ok(f) => f,
        Err(e) => {
            state::memory().write().uncharge(device, size as u64);
            return fail(NO_MEMORY, format!("{F}: cannot back {size:#x} bytes: {e}"));
        }
    };
    let mut v = VMM.lock();
    v.next += 1;
    let id = v.next;
    v.physical.insert(
        id,
        Physical {
            file,
            size,
            device,
            prop: p,
            mapped: Vec::new(),
        },
    );
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *handle = id as aclrtDrvMemHandle };
    ACL_SUCCESS
}

/// A memory file of `size` bytes filled with [`state::POISON`] (as every
/// allocation is, to make reads of uninitialised memory visible).
fn memory_file(size: usize) -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and valid flags.
    let fd = unsafe { libc::memfd_create(c"cann-sim-physical".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    let file = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the file is ours; the mapping is fresh, filled, then unmapped.
    unsafe {
        if libc::ftruncate(file.as_raw_fd(), size as libc::off_t) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let m = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        if m == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        std::ptr::write_bytes(m.cast::<u8>(), state::POISON, size);
        libc::munmap(m, size);
    }
    Ok(file)
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
    let mut v = VMM.lock();
    let id = handle as u64;
    match v.physical.get(&id) {
        None => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: {handle:p} is not a handle aclrtMallocPhysical returned"),
            );
        }
        Some(p) if !p.mapped.is_empty() => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{F}: {handle:p} is still mapped {} time(s); unmap it with aclrtUnmapMem first",
                    p.mapped.len()
                ),
            );
        }
        Some(_) => {}
    }
    if let Some(p) = v.physical.remove(&id) {
        state::memory().write().uncharge(p.device, p.size as u64);
    }
    ACL_SUCCESS
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
    let v = VMM.lock();
    let Some(p) = v.physical.get(&(handle as u64)) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: {handle:p} is not a handle aclrtMallocPhysical returned"),
        );
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *prop = p.prop };
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
    let addr = virPtr as usize;
    let mut v = VMM.lock();
    let id = handle as u64;
    let Some((fd, psize, pdevice, aliased)) = v.physical.get(&id).map(|p| {
        let aliased = p
            .mapped
            .iter()
            .any(|&(o, len)| o < offset.saturating_add(size) && offset < o + len);
        (p.file.as_raw_fd(), p.size, p.device, aliased)
    }) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: {handle:p} is not a handle aclrtMallocPhysical returned"),
        );
    };
    if aliased {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: bytes [{offset:#x}, +{size:#x}) of {handle:p} are already mapped elsewhere; \
                 cann-sim maps each byte of physical memory once (an alias would let an \
                 operator's input and output share bytes unseen)"
            ),
        );
    }
    if offset.checked_add(size).is_none_or(|end| end > psize) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: offset {offset:#x} + size {size:#x} is past the physical memory ({psize:#x} \
                 bytes)"
            ),
        );
    }
    let Some((&base, r)) = v.reservations.range_mut(..=addr).next_back() else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: {virPtr:p} is not in a range aclrtReserveMemAddress reserved"),
        );
    };
    let end = base + r.size;
    if addr >= end || addr.checked_add(size).is_none_or(|e| e > end) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: [{virPtr:p}, +{size:#x}) is not inside the reservation at {base:#x} ({:#x} \
                 bytes)",
                r.size
            ),
        );
    }
    tri!(granular(
        F,
        "the address's offset in its reservation",
        addr - base,
        false
    ));
    if r.device != pdevice {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: the physical memory is on device {pdevice} but the reservation on device {}",
                r.device
            ),
        );
    }
    let overlaps = r
        .mapped
        .range(..addr + size)
        .next_back()
        .is_some_and(|(&a, &(len, _, _))| a + len > addr);
    if overlaps {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: [{virPtr:p}, +{size:#x}) overlaps a range already mapped"),
        );
    }
    let device = r.device;
    let mut table = state::memory().write();
    // SAFETY: `[addr, addr + size)` lies inside the reservation's own
    // inaccessible mapping (checked), which MAP_FIXED replaces; the file has
    // `offset + size` bytes (checked).
    let m = unsafe {
        libc::mmap(
            virPtr,
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_FIXED,
            fd,
            offset as libc::off_t,
        )
    };
    if m == libc::MAP_FAILED {
        let e = std::io::Error::last_os_error();
        // A failed MAP_FIXED may have unmapped part of the reservation:
        // make the range reserved (inaccessible) again.
        // SAFETY: the range lies inside the reservation (checked).
        unsafe { reserve_again(virPtr, size) };
        return fail(NO_MEMORY, format!("{F}: cannot map: {e}"));
    }
    table.insert_mapped(addr, size, device);
    drop(table);
    r.mapped.insert(addr, (size, id, offset));
    if let Some(p) = v.physical.get_mut(&id) {
        p.mapped.push((offset, size));
    }
    ACL_SUCCESS
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
    let addr = virPtr as usize;
    let mut v = VMM.lock();
    if crate::check::enabled() {
        // Refused while a pending task uses the mapping: nothing is
        // unmapped then. The check holds its lock until the unmap is done.
        return match crate::check::guard_free(F, addr, None, || unmap(&mut v, virPtr)) {
            Ok(rc) => rc,
            Err(e) => rt_fail(F, e),
        };
    }
    unmap(&mut v, virPtr)
}

/// Unmaps the range mapped at `virPtr`.
fn unmap(v: &mut Vmm, virPtr: *mut c_void) -> aclError {
    const F: &str = "aclrtUnmapMem";
    let addr = virPtr as usize;
    let found = v
        .reservations
        .range_mut(..=addr)
        .next_back()
        .and_then(|(_, r)| r.mapped.remove(&addr));
    let Some((size, id, offset)) = found else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: nothing is mapped at {virPtr:p} (aclrtMapMem maps ranges)"),
        );
    };
    {
        // Out of the table first, and made inaccessible while no access
        // can be running (the table's write lock is held).
        let mut table = state::memory().write();
        table.remove_mapped(addr);
        // SAFETY: `[addr, addr + size)` is the mapping aclrtMapMem made
        // inside the reservation; replacing it keeps the addresses reserved.
        unsafe { reserve_again(virPtr, size) };
    }
    if let Some(p) = v.physical.get_mut(&id) {
        p.mapped.retain(|&(o, _)| o != offset);
    }
    ACL_SUCCESS
}

/// Makes `[at, at + size)` reserved and inaccessible again: a fresh
/// `PROT_NONE` mapping in its place, or, if the system cannot make one,
/// the protection of whatever is there taken away.
///
/// # Safety
///
/// The range lies inside a reservation this module made, and nothing
/// accesses it.
unsafe fn reserve_again(at: *mut c_void, size: usize) {
    // SAFETY: the caller's contract.
    let m = unsafe {
        libc::mmap(
            at,
            size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if m == libc::MAP_FAILED {
        // SAFETY: as above; removing access cannot break anything here.
        unsafe { libc::mprotect(at, size, libc::PROT_NONE) };
    }
}

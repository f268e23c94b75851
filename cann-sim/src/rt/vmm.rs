//! Virtual memory: reserved ranges of device addresses, physical memory on
//! its own, and the mappings of the one into the other — what torch_npu's
//! expandable segments are built on (the exports: `acl::vmm`).
//!
//! A reservation is an inaccessible host mapping (`PROT_NONE`, nothing
//! committed), physical memory a memory file charged to the device's HBM,
//! and a mapping puts the file at the reserved address (`MAP_FIXED`) and
//! registers the range in the allocation table as device memory, so copies,
//! operators, kernels and collectives use it like memory from
//! `aclrtMalloc`. Unmapping takes it out of the table (queued work that
//! still uses it faults, as for freed memory) and makes the range
//! inaccessible again.
//!
//! Sizes, mapped addresses and offsets are multiples of [`GRANULARITY`]
//! (the callers check). Physical memory can be mapped into ranges reserved
//! on its own device. A reservation with mappings cannot be released, a
//! mapped physical allocation cannot be freed, and each byte of physical
//! memory is mapped at most once: the simulator refuses aliases, which
//! would let an operator's input and output share bytes at different
//! addresses unseen.

use crate::state;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::LazyLock;

/// The allocation granularity: 2 MiB (the huge-page size).
pub const GRANULARITY: usize = 2 << 20;

/// Why a virtual-memory operation failed.
#[derive(Debug)]
pub enum VmError {
    /// An address, handle or range that does not fit (the exports'
    /// `ACL_ERROR_INVALID_PARAM`).
    Invalid(String),
    /// Memory or addresses the system cannot give
    /// (`ACL_ERROR_RT_MEMORY_ALLOCATION`).
    NoMemory(String),
    /// The check mode refused an unmap ([`crate::check`]).
    Check(super::Error),
}

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

/// Physical memory.
#[derive(Debug)]
struct Physical {
    file: OwnedFd,
    size: usize,
    device: u32,
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

fn invalid(msg: String) -> VmError {
    VmError::Invalid(msg)
}

/// Live reservations and physical allocations (for leak checks).
pub fn live() -> (usize, usize) {
    let v = VMM.lock();
    (v.reservations.len(), v.physical.len())
}

/// The physical handle mapped at exactly `[addr, addr + size)`, if any
/// (for HCCL's `HcclCommActivateCommMemory`), and its device.
pub fn mapped_handle(addr: usize, size: usize) -> Option<(u64, u32)> {
    let v = VMM.lock();
    let (_, r) = v.reservations.range(..=addr).next_back()?;
    match r.mapped.get(&addr) {
        Some(&(len, h, _)) if len == size => Some((h, r.device)),
        _ => None,
    }
}

/// The reservation starting at `addr`: its size and device.
pub fn reservation(addr: usize) -> Option<(usize, u32)> {
    VMM.lock()
        .reservations
        .get(&addr)
        .map(|r| (r.size, r.device))
}

/// Reserves `size` bytes of addresses on `device`, aligned to `align` (a
/// power of two, at least [`GRANULARITY`]); returns the first.
///
/// # Errors
///
/// [`VmError::Invalid`] for a size too large, [`VmError::NoMemory`] when
/// the system has no room for the range.
pub fn reserve(size: usize, align: usize, device: u32) -> Result<usize, VmError> {
    let Some(map_len) = size.checked_add(align) else {
        return Err(invalid(format!("size {size:#x} is too large")));
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
        return Err(VmError::NoMemory(format!(
            "cannot reserve {size:#x} bytes of addresses: {}",
            std::io::Error::last_os_error()
        )));
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
    Ok(base)
}

/// Gives back the reservation at `addr`, which has no mappings.
///
/// # Errors
///
/// [`VmError::Invalid`] when `addr` is no reservation, or one still mapped.
pub fn release(addr: usize) -> Result<(), VmError> {
    let mut v = VMM.lock();
    match v.reservations.get(&addr) {
        None => {
            return Err(invalid(format!(
                "{addr:#x} is not an address aclrtReserveMemAddress returned"
            )));
        }
        Some(r) if !r.mapped.is_empty() => {
            return Err(invalid(format!(
                "{addr:#x} still has {} mapping(s); unmap them with aclrtUnmapMem first",
                r.mapped.len()
            )));
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
    Ok(())
}

/// Allocates `size` bytes of physical memory of `device`, charged to its
/// HBM; returns its handle.
///
/// # Errors
///
/// [`VmError::NoMemory`] beyond the HBM or when the host cannot back it.
pub fn malloc_physical(size: usize, device: u32) -> Result<u64, VmError> {
    let budget = crate::config::get().map_or(0, |c| c.hbm_bytes);
    if let Err(e) = state::memory().write().charge(device, size as u64, budget) {
        return Err(VmError::NoMemory(e.to_string()));
    }
    let file = match memory_file(size) {
        Ok(f) => f,
        Err(e) => {
            state::memory().write().uncharge(device, size as u64);
            return Err(VmError::NoMemory(format!(
                "cannot back {size:#x} bytes: {e}"
            )));
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
            mapped: Vec::new(),
        },
    );
    Ok(id)
}

/// A memory file of `size` bytes: filled with [`state::POISON`] when it is
/// smaller than [`state::MAPPED_BLOCK`] (as small allocations are, to make
/// reads of uninitialised memory visible); a larger one is left sparse, so
/// that its pages cost the host nothing until written (they read as zero).
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
        if size < state::MAPPED_BLOCK {
            std::ptr::write_bytes(m.cast::<u8>(), state::POISON, size);
        }
        libc::munmap(m, size);
    }
    Ok(file)
}

fn not_physical(id: u64) -> VmError {
    invalid(format!(
        "{id:#x} is not a handle aclrtMallocPhysical returned"
    ))
}

/// Whether `id` is live physical memory.
pub fn is_physical(id: u64) -> bool {
    VMM.lock().physical.contains_key(&id)
}

/// Frees physical memory `id`, which is not mapped.
///
/// # Errors
///
/// [`VmError::Invalid`] when `id` is no physical memory, or mapped.
pub fn free_physical(id: u64) -> Result<(), VmError> {
    let mut v = VMM.lock();
    match v.physical.get(&id) {
        None => return Err(not_physical(id)),
        Some(p) if !p.mapped.is_empty() => {
            return Err(invalid(format!(
                "{id:#x} is still mapped {} time(s); unmap it with aclrtUnmapMem first",
                p.mapped.len()
            )));
        }
        Some(_) => {}
    }
    if let Some(p) = v.physical.remove(&id) {
        state::memory().write().uncharge(p.device, p.size as u64);
    }
    Ok(())
}

/// Maps `size` bytes of physical memory `id`, from `offset`, at `addr`
/// inside a reservation of its device (`size` and `offset` multiples of
/// [`GRANULARITY`]; so must `addr`'s offset in the reservation be).
///
/// # Errors
///
/// [`VmError::Invalid`] for an unknown handle, bytes of it already mapped,
/// a range past its end or outside a reservation, another device, a range
/// already mapped, an address off the granularity; [`VmError::NoMemory`] when
/// the system cannot map it.
pub fn map(addr: usize, size: usize, offset: usize, id: u64) -> Result<(), VmError> {
    let mut v = VMM.lock();
    let Some((fd, psize, pdevice, aliased)) = v.physical.get(&id).map(|p| {
        let aliased = p
            .mapped
            .iter()
            .any(|&(o, len)| o < offset.saturating_add(size) && offset < o + len);
        (p.file.as_raw_fd(), p.size, p.device, aliased)
    }) else {
        return Err(not_physical(id));
    };
    if aliased {
        return Err(invalid(format!(
            "bytes [{offset:#x}, +{size:#x}) of {id:#x} are already mapped elsewhere; cann-sim \
             maps each byte of physical memory once (an alias would let an operator's input and \
             output share bytes unseen)"
        )));
    }
    if offset.checked_add(size).is_none_or(|end| end > psize) {
        return Err(invalid(format!(
            "offset {offset:#x} + size {size:#x} is past the physical memory ({psize:#x} bytes)"
        )));
    }
    let Some((&base, r)) = v.reservations.range_mut(..=addr).next_back() else {
        return Err(invalid(format!(
            "{addr:#x} is not in a range aclrtReserveMemAddress reserved"
        )));
    };
    let end = base + r.size;
    if addr >= end || addr.checked_add(size).is_none_or(|e| e > end) {
        return Err(invalid(format!(
            "[{addr:#x}, +{size:#x}) is not inside the reservation at {base:#x} ({:#x} bytes)",
            r.size
        )));
    }
    if !(addr - base).is_multiple_of(GRANULARITY) {
        return Err(invalid(format!(
            "the address's offset in its reservation {:#x} is not a multiple of the granularity \
             ({GRANULARITY:#x}, 2 MiB; see aclrtMemGetAllocationGranularity)",
            addr - base
        )));
    }
    if r.device != pdevice {
        return Err(invalid(format!(
            "the physical memory is on device {pdevice} but the reservation on device {}",
            r.device
        )));
    }
    let overlaps = r
        .mapped
        .range(..addr + size)
        .next_back()
        .is_some_and(|(&a, &(len, _, _))| a + len > addr);
    if overlaps {
        return Err(invalid(format!(
            "[{addr:#x}, +{size:#x}) overlaps a range already mapped"
        )));
    }
    let device = r.device;
    let mut table = state::memory().write();
    // SAFETY: `[addr, addr + size)` lies inside the reservation's own
    // inaccessible mapping (checked), which MAP_FIXED replaces; the file has
    // `offset + size` bytes (checked).
    let m = unsafe {
        libc::mmap(
            addr as *mut c_void,
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
        unsafe { reserve_again(addr, size) };
        return Err(VmError::NoMemory(format!("cannot map: {e}")));
    }
    table.insert_mapped(addr, size, device);
    drop(table);
    r.mapped.insert(addr, (size, id, offset));
    if let Some(p) = v.physical.get_mut(&id) {
        p.mapped.push((offset, size));
    }
    Ok(())
}

/// Unmaps the range mapped at `addr` (`api` names the call, for the check
/// mode's reports).
///
/// # Errors
///
/// [`VmError::Invalid`] when nothing is mapped there; [`VmError::Check`]
/// when the check mode refuses it (a pending task uses the mapping).
pub fn unmap(api: &str, addr: usize) -> Result<(), VmError> {
    let mut v = VMM.lock();
    if crate::check::enabled() {
        // Refused while a pending task uses the mapping: nothing is
        // unmapped then. The check holds its lock until the unmap is done.
        return crate::check::guard_free(api, addr, None, || unmap_locked(&mut v, addr))
            .map_err(VmError::Check)?;
    }
    unmap_locked(&mut v, addr)
}

/// Unmaps the range mapped at `addr`.
fn unmap_locked(v: &mut Vmm, addr: usize) -> Result<(), VmError> {
    let found = v
        .reservations
        .range_mut(..=addr)
        .next_back()
        .and_then(|(_, r)| r.mapped.remove(&addr));
    let Some((size, id, offset)) = found else {
        return Err(invalid(format!(
            "nothing is mapped at {addr:#x} (aclrtMapMem maps ranges)"
        )));
    };
    {
        // Out of the table first, and made inaccessible while no access
        // can be running (the table's write lock is held).
        let mut table = state::memory().write();
        table.remove_mapped(addr);
        // SAFETY: `[addr, addr + size)` is the mapping `map` made inside the
        // reservation; replacing it keeps the addresses reserved.
        unsafe { reserve_again(addr, size) };
    }
    if let Some(p) = v.physical.get_mut(&id) {
        p.mapped.retain(|&(o, _)| o != offset);
    }
    Ok(())
}

/// Makes `[at, at + size)` reserved and inaccessible again: a fresh
/// `PROT_NONE` mapping in its place, or, if the system cannot make one,
/// the protection of whatever is there taken away.
///
/// # Safety
///
/// The range lies inside a reservation this module made, and nothing
/// accesses it.
unsafe fn reserve_again(at: usize, size: usize) {
    let at = at as *mut c_void;
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

//! Virtual memory management: device addresses reserved apart from the
//! memory behind them.
//!
//! `aclrtMalloc` gives an address and memory together. With virtual memory
//! the two are separate: [`VirtualRange::reserve`] reserves a range of
//! device addresses (no memory yet), [`PhysicalMemory::new`] allocates HBM
//! with no address, and [`VirtualRange::map`] puts physical memory at an
//! offset of the range. A range can be filled piece by piece, so a buffer
//! can grow in place: torch_npu's *expandable segments* keep one segment
//! per stream and map another piece behind its end when it runs out,
//! instead of allocating a larger block and copying. Adjacent mapped pieces
//! are one contiguous stretch of device memory.
//!
//! Sizes and offsets are multiples of the [`granularity`] (2 MiB on Atlas
//! A2 and the simulator). The borrows enforce the order of release: a
//! [`Mapping`] borrows its range and its physical memory, so neither can be
//! released while mapped; dropping a mapping unmaps it
//! (`aclrtUnmapMem`), dropping the others releases them. Synchronise the
//! streams that use mapped memory before unmapping it.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::vmm::{PhysicalMemory, VirtualRange, granularity};
//! let rt = acl::Runtime::init()?;
//! let npu = acl::Device::new(&rt, 0)?;
//! let g = granularity(&npu)?;
//! let range = VirtualRange::reserve(&npu, 4 * g)?;
//! let first = PhysicalMemory::new(&npu, g)?;
//! let a = range.map(0, &first)?;
//! // Grow: a second piece right behind the first.
//! let second = PhysicalMemory::new(&npu, g)?;
//! let b = range.map(g, &second)?;
//! a.copy_from_host(g - 4, &[1, 2, 3, 4])?;
//! b.copy_from_host(0, &[5, 6, 7, 8])?;
//! let mut seam = [0u8; 8];
//! a.copy_to_host(g - 4, &mut seam[..4])?;
//! b.copy_to_host(0, &mut seam[4..])?;
//! assert_eq!(seam, [1, 2, 3, 4, 5, 6, 7, 8]);
//! # Ok::<(), acl::Error>(())
//! ```
//!
//! `Send + Sync` for all three types: they hold device addresses and an
//! opaque handle, which AscendCL lets any thread use.

use crate::error::{Error, Result};
use crate::result::{self, raw};
use crate::{Device, release};
use std::ffi::c_void;

fn prop(device: &Device) -> raw::aclrtPhysicalMemProp {
    raw::aclrtPhysicalMemProp {
        handleType: raw::ACL_MEM_HANDLE_TYPE_NONE,
        allocationType: raw::ACL_MEM_ALLOCATION_TYPE_PINNED,
        memAttr: raw::ACL_HBM_MEM_HUGE,
        location: raw::aclrtMemLocation {
            id: device.ordinal(),
            type_: raw::ACL_MEM_LOCATION_TYPE_DEVICE,
        },
        reserve: 0,
    }
}

/// The granularity of sizes and offsets on `device`, in bytes.
///
/// # Errors
///
/// The library's error.
#[doc(alias = "aclrtMemGetAllocationGranularity")]
pub fn granularity(device: &Device) -> Result<usize> {
    let p = prop(device);
    result::mem_get_allocation_granularity(&p, raw::ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
}

/// A reserved range of device addresses (see the module docs).
///
/// `Send + Sync`: an address reservation AscendCL lets any thread map, unmap or
/// release (each method binds the device first).
#[derive(Debug)]
pub struct VirtualRange {
    ptr: *mut c_void,
    size: usize,
    device: Device,
}

// SAFETY: the range is an address reservation AscendCL manages; any thread
// may map, unmap or release it (with the device bound, which the methods do).
unsafe impl Send for VirtualRange {}
// SAFETY: `&VirtualRange` methods only pass the address to AscendCL.
unsafe impl Sync for VirtualRange {}

impl VirtualRange {
    /// Reserves `size_bytes` of addresses on `device`.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_INVALID_PARAM` for a size that is not a multiple of the
    /// [`granularity`]; the library's error otherwise.
    #[doc(alias = "aclrtReserveMemAddress")]
    pub fn reserve(device: &Device, size_bytes: usize) -> Result<VirtualRange> {
        device.bind()?;
        let ptr = result::reserve_mem_address(size_bytes)?;
        Ok(VirtualRange {
            ptr,
            size: size_bytes,
            device: device.clone(),
        })
    }

    /// The first address.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Bytes reserved.
    pub fn size_bytes(&self) -> usize {
        self.size
    }

    /// Maps all of `memory` at `offset` bytes into the range.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when it does not fit in the range;
    /// `ACL_ERROR_INVALID_PARAM` for an offset that is not a multiple of the
    /// [`granularity`], a place already mapped, or memory of another
    /// device.
    #[doc(alias = "aclrtMapMem")]
    pub fn map<'a>(&'a self, offset: usize, memory: &'a PhysicalMemory) -> Result<Mapping<'a>> {
        if offset
            .checked_add(memory.size)
            .is_none_or(|end| end > self.size)
        {
            return Err(Error::invalid(
                "VirtualRange::map",
                format!(
                    "{} bytes at offset {offset} do not fit in a range of {} bytes",
                    memory.size, self.size
                ),
            ));
        }
        self.device.bind()?;
        let at = self.ptr.cast::<u8>().wrapping_add(offset).cast::<c_void>();
        // SAFETY: `at` lies inside the reservation (checked above); the
        // handle is live (borrowed for the mapping's life).
        unsafe { result::map_mem(at, memory.size, 0, memory.handle, 0) }?;
        Ok(Mapping {
            range: self,
            memory,
            ptr: at,
            size: memory.size,
        })
    }

    /// Releases the range now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "aclrtReleaseMemAddress")]
    pub fn release(mut self) -> Result<()> {
        let out = self.give_back();
        self.ptr = std::ptr::null_mut();
        out
    }

    fn give_back(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: our reservation, released once; no mapping borrows it.
        unsafe { result::release_mem_address(self.ptr) }
    }
}

impl Drop for VirtualRange {
    fn drop(&mut self) {
        if !self.ptr.is_null()
            && let Err(e) = self.give_back()
        {
            release::record("VirtualRange", e);
        }
    }
}

/// Physical device memory with no address (see the module docs).
///
/// `Send + Sync`: an opaque AscendCL handle any thread may use.
#[derive(Debug)]
pub struct PhysicalMemory {
    handle: raw::aclrtDrvMemHandle,
    size: usize,
    device: Device,
    /// Host copies through any of its mappings: reads shared, writes
    /// exclusive, so that two threads never write (or write and read) the
    /// same bytes at once through `&Mapping`s.
    copies: std::sync::RwLock<()>,
}

// SAFETY: the handle is an opaque AscendCL token any thread may use.
unsafe impl Send for PhysicalMemory {}
// SAFETY: `&PhysicalMemory` only passes the handle to AscendCL.
unsafe impl Sync for PhysicalMemory {}

impl PhysicalMemory {
    /// Allocates `size_bytes` of HBM on `device`.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_INVALID_PARAM` for a size that is not a multiple of the
    /// [`granularity`], `ACL_ERROR_RT_MEMORY_ALLOCATION` when the HBM is
    /// full; the library's error otherwise.
    #[doc(alias = "aclrtMallocPhysical")]
    pub fn new(device: &Device, size_bytes: usize) -> Result<PhysicalMemory> {
        device.bind()?;
        let p = prop(device);
        let handle = result::malloc_physical(size_bytes, &p)?;
        Ok(PhysicalMemory {
            handle,
            size: size_bytes,
            device: device.clone(),
            copies: std::sync::RwLock::new(()),
        })
    }

    /// Bytes allocated.
    pub fn size_bytes(&self) -> usize {
        self.size
    }

    /// The raw handle, for C APIs (HCCL's `HcclCommActivateCommMemory`).
    pub fn as_raw(&self) -> raw::aclrtDrvMemHandle {
        self.handle
    }

    /// Frees the memory now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "aclrtFreePhysical")]
    pub fn free(mut self) -> Result<()> {
        let out = self.give_back();
        self.handle = std::ptr::null_mut();
        out
    }

    fn give_back(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: our handle, freed once; no mapping borrows it.
        unsafe { result::free_physical(self.handle) }
    }
}

impl Drop for PhysicalMemory {
    fn drop(&mut self) {
        if !self.handle.is_null()
            && let Err(e) = self.give_back()
        {
            release::record("PhysicalMemory", e);
        }
    }
}

/// Physical memory mapped into a [`VirtualRange`]: device memory at
/// [`Mapping::device_ptr`] until dropped (see the module docs).
///
/// `Send + Sync`: device addresses AscendCL lets any thread copy to or unmap.
#[derive(Debug)]
pub struct Mapping<'a> {
    range: &'a VirtualRange,
    memory: &'a PhysicalMemory,
    ptr: *mut c_void,
    size: usize,
}

// SAFETY: a device address inside a reservation; AscendCL lets any thread
// copy to it or unmap it.
unsafe impl Send for Mapping<'_> {}
// SAFETY: `&Mapping` only copies through AscendCL.
unsafe impl Sync for Mapping<'_> {}

impl Mapping<'_> {
    /// The first device address.
    pub fn device_ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Bytes mapped.
    pub fn size_bytes(&self) -> usize {
        self.size
    }

    fn span(&self, function: &'static str, offset: usize, len: usize) -> Result<*mut c_void> {
        if offset.checked_add(len).is_none_or(|end| end > self.size) {
            return Err(Error::invalid(
                function,
                format!(
                    "{len} bytes at offset {offset} are past the mapping's {} bytes",
                    self.size
                ),
            ));
        }
        self.range.device.bind()?;
        Ok(self.ptr.cast::<u8>().wrapping_add(offset).cast())
    }

    /// Copies `data` to `offset` bytes into the mapping (synchronously).
    /// Host copies into and out of one physical memory (through any of its
    /// mappings) are one at a time: no two threads write the same bytes at
    /// once, nor read bytes being written.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] past the end; the copy's error.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_from_host(&self, offset: usize, data: &[u8]) -> Result<()> {
        let at = self.span("Mapping::copy_from_host", offset, data.len())?;
        let _excl = self
            .memory
            .copies
            .write()
            .unwrap_or_else(|p| p.into_inner());
        // SAFETY: `at` starts `data.len()` mapped device bytes (checked);
        // `data` is host memory of that length.
        unsafe {
            crate::result::memcpy(
                at,
                data.len(),
                data.as_ptr().cast(),
                data.len(),
                raw::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }
    }

    /// Copies `out.len()` bytes from `offset` bytes into the mapping
    /// (synchronously).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] past the end; the copy's error.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_to_host(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let at = self.span("Mapping::copy_to_host", offset, out.len())?;
        let _shared = self.memory.copies.read().unwrap_or_else(|p| p.into_inner());
        let len = out.len();
        // SAFETY: as in `copy_from_host`, the other way round.
        unsafe {
            crate::result::memcpy(
                out.as_mut_ptr().cast(),
                len,
                at,
                len,
                raw::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }
    }

    /// Unmaps now, reporting a failure.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "aclrtUnmapMem")]
    pub fn unmap(mut self) -> Result<()> {
        let out = self.give_back();
        self.ptr = std::ptr::null_mut();
        out
    }

    fn give_back(&self) -> Result<()> {
        self.range.device.bind()?;
        // SAFETY: our mapping, unmapped once.
        unsafe { result::unmap_mem(self.ptr) }
    }
}

impl Drop for Mapping<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null()
            && let Err(e) = self.give_back()
        {
            release::record("Mapping", e);
        }
    }
}

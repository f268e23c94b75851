//! Host memory registration: `aclrtHostRegister`, `aclrtHostRegisterV2`,
//! `aclrtHostGetDevicePointer`, `aclrtHostUnregister`.
//!
//! The release (hicann/runtime `src/runtime/api/impl/api_impl.cc`
//! `ApiImpl::HostRegister`, `HostRegisterV2`, `HostUnregister`,
//! `HostGetDevicePointer`; `src/runtime/core/src/common/register_memory.cc`)
//! keeps two tables of registered host ranges when the driver does not pin
//! by itself: *pinned* ranges (`ACL_HOST_REG_PINNED`: the memory counts as
//! page-locked, so asynchronous copies of it are queued like copies of
//! `aclrtMallocHost` memory) and *mapped* ranges (`ACL_HOST_REG_MAPPED`,
//! `IOMEMORY`, `READONLY`, and every `aclrtHostRegister`: the device can
//! address the memory through the pointer `aclrtHostGetDevicePointer`
//! answers). A range overlapping a registered one is refused
//! (`RT_ERROR_HOST_MEMORY_ALREADY_REGISTERED` → 507910); unregistering a
//! pointer that starts no registration is `..._NOT_REGISTERED` → 507911;
//! `aclrtHostGetDevicePointer` finds only the first address of a mapped
//! range (`GetMappedDevicePointer`), else `RT_ERROR_INVALID_VALUE` → 107000.
//! `aclrtHostRegisterV2` with neither a pin nor a map flag registers nothing
//! and succeeds, as the release's code does.
//!
//! **The device pointer is the host pointer.** The simulated device
//! addresses host memory directly, so a mapped range is entered in the
//! memory table as device memory of the current device at its own address:
//! operators, kernels and copies accept it, and host writes are seen by the
//! device at once (zero copy, which is what mapping is for). A device gives
//! a different address; programs must use the one the call answers (they
//! do: the pointer is only obtainable from it). FIDELITY.md lists this, and
//! that `READONLY` is not enforced on device writes.
//!
//! A range that overlaps memory the table already holds (`aclrtMallocHost`
//! memory, say) is refused with 507910 too: the driver refuses to register a
//! range twice (`DRV_ERROR_BUSY`, `NpuDriver::HostRegister`), and pinned
//! memory is registered by the driver.

use super::table::memory;

/// Why a registration call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    /// The range overlaps a registered range or an allocation (507910).
    AlreadyRegistered(String),
    /// No registration starts at the pointer (507911).
    NotRegistered(String),
    /// No mapped registration starts at the pointer, or the range wraps
    /// (107000).
    Invalid(String),
}

/// What to register: the flag bits of `aclrtHostRegisterV2` that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// Mapped for the device.
    pub mapped: bool,
    /// Page-locked.
    pub pinned: bool,
}

impl Registration {
    /// The registration `aclrtHostRegisterV2` makes for `flag`
    /// (`ACL_HOST_REG_MAPPED` 0x2, `IOMEMORY` 0x4 and `READONLY` 0x8 map;
    /// `PINNED` 0x1000_0000 pins; other bits are passed to the driver and
    /// ignored here).
    pub fn from_v2_flag(flag: u32) -> Registration {
        let map_bits = acl_sys::ACL_HOST_REG_MAPPED
            | acl_sys::ACL_HOST_REG_IOMEMORY
            | acl_sys::ACL_HOST_REG_READONLY;
        Registration {
            mapped: flag & map_bits != 0,
            pinned: flag & acl_sys::ACL_HOST_REG_PINNED != 0,
        }
    }
}

/// Registers `[base, base + size)` (`size` > 0) for `device`.
///
/// # Errors
///
/// [`RegisterError::AlreadyRegistered`] when the range overlaps a
/// registration or an allocation; [`RegisterError::Invalid`] when it wraps
/// around the address space.
pub fn register(
    base: usize,
    size: usize,
    what: Registration,
    device: u32,
) -> Result<(), RegisterError> {
    if base.checked_add(size).is_none() {
        return Err(RegisterError::Invalid(format!(
            "the range {base:#x} + {size} bytes wraps around the address space"
        )));
    }
    let mut table = memory().write();
    if let Some((at, a)) = table.overlapping(base, size) {
        return Err(RegisterError::AlreadyRegistered(format!(
            "the range {base:#x} + {size} bytes overlaps {}",
            super::table::describe_allocation(at, a)
        )));
    }
    if what.mapped || what.pinned {
        table.insert_registered(base, size, what.mapped, device);
    }
    Ok(())
}

/// Unregisters the registration starting at `base`.
///
/// # Errors
///
/// [`RegisterError::NotRegistered`] when none starts there.
pub fn unregister(base: usize) -> Result<(), RegisterError> {
    let mut table = memory().write();
    table.remove_registered(base).map(|_| ()).ok_or_else(|| {
        RegisterError::NotRegistered(format!(
            "{base:#x} is not the first address of host memory registered with \
             aclrtHostRegister or aclrtHostRegisterV2"
        ))
    })
}

/// The device address of the mapped registration starting at `base`.
///
/// # Errors
///
/// [`RegisterError::Invalid`] when no mapped registration starts there.
pub fn device_pointer(base: usize) -> Result<usize, RegisterError> {
    match memory().read().registered_at(base) {
        Some((true, _)) => Ok(base),
        Some((false, _)) => Err(RegisterError::Invalid(format!(
            "the host memory {base:#x} is registered pinned only, not mapped for the device \
             (register it with ACL_HOST_REG_MAPPED)"
        ))),
        None => Err(RegisterError::Invalid(format!(
            "the host pointer {base:#x} has not been registered for device address mapping (it \
             must be the first address given to aclrtHostRegister or aclrtHostRegisterV2)"
        ))),
    }
}

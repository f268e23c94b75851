//! Host memory registration: `aclrtHostRegister`, `aclrtHostRegisterV2`,
//! `aclrtHostGetDevicePointer`, `aclrtHostUnregister`. The engine
//! (`mem::register`) keeps the registrations; these check the C arguments in
//! the release's order and translate its errors.
//!
//! Order of the checks (hicann/runtime `src/acl/aclrt_impl/memory.cpp`
//! `aclrtHostRegisterImpl`, `aclrtHostRegisterV2Impl`,
//! `aclrtHostGetDevicePointerImpl`, `aclrtHostUnregisterImpl`, then
//! `src/runtime/api/impl/api_impl.cc`): null pointers and a zero size →
//! 100000, a `flag` other than 0 for `aclrtHostGetDevicePointer` → 100000
//! (`ACL_CHECK_RESERVED_PARAM_REPORT_RET`); no context on the thread →
//! 107002; then the engine's answer (507910 already registered, 507911 not
//! registered, 107000 not mapped).

use super::common::{self, PARAM_INVALID, code};
use crate::faults;
use crate::mem::register::{self, RegisterError, Registration};
use crate::recent_error::fail;
use acl_sys::{
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED, ACL_ERROR_HOST_MEMORY_NOT_REGISTERED,
    ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclError, aclrtHostRegisterType,
};
use std::ffi::c_void;

fn register_fail(function: &str, e: RegisterError) -> aclError {
    let (rc, msg) = match e {
        RegisterError::AlreadyRegistered(m) => (code(ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED), m),
        RegisterError::NotRegistered(m) => (code(ACL_ERROR_HOST_MEMORY_NOT_REGISTERED), m),
        RegisterError::Invalid(m) => (PARAM_INVALID, m),
    };
    fail(rc, format!("{function}: {msg}"))
}

/// The common head of the two register calls: the injected fault, a null
/// `ptr` (or `devPtr`, when the call has one), a zero `size` (100000), no
/// context (107002); answers the context's device and the size.
fn register_head(
    function: &str,
    ptr: *mut c_void,
    dev_ptr: Option<*mut *mut c_void>,
    size: u64,
) -> Result<(u32, usize), aclError> {
    if let Some(code) = faults::check(function) {
        return Err(code);
    }
    if ptr.is_null() {
        return Err(common::null_arg(function, "ptr"));
    }
    if dev_ptr.is_some_and(|p| p.is_null()) {
        return Err(common::null_arg(function, "devPtr"));
    }
    if size == 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: size must be greater than 0"),
        ));
    }
    let size = usize::try_from(size).map_err(|_| {
        fail(
            PARAM_INVALID,
            format!("{function}: size {size} is larger than the address space"),
        )
    })?;
    Ok((common::current(function)?.device, size))
}

/// `aclrtHostRegister`: maps `size` bytes of host memory at `ptr` for the
/// current device and writes the device address to `devPtr` (every `type`
/// maps; `ACL_HOST_REGISTER_READONLY` is not enforced on device writes).
///
/// # Safety
///
/// `devPtr` is null or writable; `[ptr, ptr + size)` is host memory the
/// caller keeps valid until `aclrtHostUnregister`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegister(
    ptr: *mut c_void,
    size: u64,
    _type: aclrtHostRegisterType,
    dev_ptr: *mut *mut c_void,
) -> aclError {
    const F: &str = "aclrtHostRegister";
    let (device, size) = tri!(register_head(F, ptr, Some(dev_ptr), size));
    let what = Registration {
        mapped: true,
        pinned: false,
    };
    if let Err(e) = register::register(ptr as usize, size, what, device) {
        return register_fail(F, e);
    }
    // SAFETY: checked non-null; writable by the C contract.
    unsafe { *dev_ptr = ptr };
    ACL_SUCCESS
}

/// `aclrtHostRegisterV2`: pins (`ACL_HOST_REG_PINNED`) and/or maps
/// (`ACL_HOST_REG_MAPPED`, `IOMEMORY`, `READONLY`) `size` bytes of host
/// memory at `ptr`; the device address of a mapped range comes from
/// `aclrtHostGetDevicePointer`.
///
/// # Safety
///
/// `[ptr, ptr + size)` is host memory the caller keeps valid until
/// `aclrtHostUnregister`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostRegisterV2(ptr: *mut c_void, size: u64, flag: u32) -> aclError {
    const F: &str = "aclrtHostRegisterV2";
    let (device, size) = tri!(register_head(F, ptr, None, size));
    let what = Registration::from_v2_flag(flag);
    match register::register(ptr as usize, size, what, device) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => register_fail(F, e),
    }
}

/// `aclrtHostGetDevicePointer`: the device address of the mapped
/// registration starting at `pHost`; `flag` is reserved (0).
///
/// # Safety
///
/// `pDevice` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostGetDevicePointer(
    p_host: *mut c_void,
    p_device: *mut *mut c_void,
    flag: u32,
) -> aclError {
    const F: &str = "aclrtHostGetDevicePointer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if p_host.is_null() {
        return common::null_arg(F, "pHost");
    }
    if p_device.is_null() {
        return common::null_arg(F, "pDevice");
    }
    if flag != 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: flag is a reserved parameter and must be 0, current value={flag}"),
        );
    }
    tri!(common::current(F));
    match register::device_pointer(p_host as usize) {
        Ok(addr) => {
            // SAFETY: checked non-null; writable by the C contract.
            unsafe { *p_device = addr as *mut c_void };
            ACL_SUCCESS
        }
        Err(e) => register_fail(F, e),
    }
}

/// `aclrtHostUnregister`: ends the registration starting at `ptr`. Work
/// queued on the device that still reads or writes the range must have
/// finished, as for a free; afterwards the range is plain (pageable) host
/// memory again.
///
/// # Safety
///
/// None beyond the C contract (`ptr` is only compared).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtHostUnregister(ptr: *mut c_void) -> aclError {
    const F: &str = "aclrtHostUnregister";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if ptr.is_null() {
        return common::null_arg(F, "ptr");
    }
    tri!(common::current(F));
    match register::unregister(ptr as usize) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => register_fail(F, e),
    }
}

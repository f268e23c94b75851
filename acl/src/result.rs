//! Thin, `Result`-returning calls: one function per AscendCL function, no
//! ownership, no state. The safe types of this crate are built on these.
//!
//! **Naming rule**: the C name without its `acl`/`aclrt` prefix, in
//! snake_case (`aclrtGetDeviceCount` → [`get_device_count`], `aclrtMalloc` →
//! [`malloc`], `aclInit` → [`init`]). Out-parameters become return values;
//! a non-zero `aclError` becomes [`Error::Acl`](crate::Error::Acl) with the
//! runtime's message.
//!
//! Functions that take raw pointers are `unsafe`, with the C contract as
//! their safety condition.

use crate::error::{Result, check};
use acl_sys as sys;
use std::ffi::{CStr, c_void};

/// `aclInit`. Returns the raw code so that callers can tell
/// `ACL_ERROR_REPEAT_INITIALIZE` (someone else initialised) from success.
#[doc(alias = "aclInit")]
pub fn init(config: Option<&CStr>) -> Result<i32> {
    let ptr = config.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: `ptr` is null or a NUL-terminated string that outlives the call.
    Ok(unsafe { sys::aclInit(ptr) }?)
}

/// `aclFinalize`.
#[doc(alias = "aclFinalize")]
pub fn finalize() -> Result<()> {
    // SAFETY: no arguments.
    check("aclFinalize", unsafe { sys::aclFinalize() })
}

/// `aclrtGetVersion`: (major, minor, patch).
#[doc(alias = "aclrtGetVersion")]
pub fn get_version() -> Result<(i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    check("aclrtGetVersion", unsafe {
        sys::aclrtGetVersion(&mut a, &mut b, &mut c)
    })?;
    Ok((a, b, c))
}

/// `aclrtGetSocName`.
#[doc(alias = "aclrtGetSocName")]
pub fn get_soc_name() -> Result<String> {
    // SAFETY: no arguments; the result is null or a NUL-terminated string
    // owned by the runtime for the life of the process.
    let ptr = unsafe { sys::aclrtGetSocName() }?;
    if ptr.is_null() {
        return Err(crate::Error::from_code(
            "aclrtGetSocName",
            sys::ACL_ERROR_INTERNAL_ERROR,
        ));
    }
    // SAFETY: non-null and NUL-terminated, as above.
    Ok(unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned())
}

/// `aclrtGetDeviceCount`.
#[doc(alias = "aclrtGetDeviceCount")]
pub fn get_device_count() -> Result<u32> {
    let mut n = 0u32;
    // SAFETY: valid out-pointer.
    check("aclrtGetDeviceCount", unsafe {
        sys::aclrtGetDeviceCount(&mut n)
    })?;
    Ok(n)
}

/// `aclrtSetDevice`.
#[doc(alias = "aclrtSetDevice")]
pub fn set_device(device: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(device) })
}

/// `aclrtResetDevice`.
#[doc(alias = "aclrtResetDevice")]
pub fn reset_device(device: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    check("aclrtResetDevice", unsafe { sys::aclrtResetDevice(device) })
}

/// `aclrtGetDevice`: the calling thread's current device.
#[doc(alias = "aclrtGetDevice")]
pub fn get_device() -> Result<i32> {
    let mut d = 0i32;
    // SAFETY: valid out-pointer.
    check("aclrtGetDevice", unsafe { sys::aclrtGetDevice(&mut d) })?;
    Ok(d)
}

/// `aclrtGetMemInfo`: (free, total) bytes of `attr` on the current device.
#[doc(alias = "aclrtGetMemInfo")]
pub fn get_mem_info(attr: sys::aclrtMemAttr) -> Result<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two valid out-pointers.
    check("aclrtGetMemInfo", unsafe {
        sys::aclrtGetMemInfo(attr, &mut free, &mut total)
    })?;
    Ok((free, total))
}

/// `aclrtMalloc` on the current device.
#[doc(alias = "aclrtMalloc")]
pub fn malloc(size: usize, policy: sys::aclrtMemMallocPolicy) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtMalloc", unsafe {
        sys::aclrtMalloc(&mut ptr, size, policy)
    })?;
    Ok(ptr)
}

/// `aclrtFree`.
///
/// # Safety
///
/// `ptr` came from `aclrtMalloc`, is not freed yet, and no queued work uses it.
#[doc(alias = "aclrtFree")]
pub unsafe fn free(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtFree", unsafe { sys::aclrtFree(ptr) })
}

/// `aclrtMemcpy`: a synchronous copy of `count` bytes.
///
/// # Safety
///
/// `dst` is valid for `dest_max` bytes and `src` for `count` bytes, in the
/// memory kinds `kind` names.
#[doc(alias = "aclrtMemcpy")]
pub unsafe fn memcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemcpy", unsafe {
        sys::aclrtMemcpy(dst, dest_max, src, count, kind)
    })
}

/// `aclrtMemset`: fills `count` bytes of device memory with the byte `value`.
///
/// # Safety
///
/// `dst` is device memory valid for `max_count` bytes.
#[doc(alias = "aclrtMemset")]
pub unsafe fn memset(dst: *mut c_void, max_count: usize, value: i32, count: usize) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemset", unsafe {
        sys::aclrtMemset(dst, max_count, value, count)
    })
}

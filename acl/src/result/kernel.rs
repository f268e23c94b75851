//! `aclrtBinary*`, `aclrtKernelArgs*` and `aclrtLaunchKernel*`: kernel
//! binaries, their functions, argument lists and launches.

use super::forward;
use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, c_void};

/// `aclrtBinaryLoadFromFile` (no options) on the current device.
#[doc(alias = "aclrtBinaryLoadFromFile")]
pub fn binary_load_from_file(path: &CStr) -> Result<sys::aclrtBinHandle> {
    let mut handle: sys::aclrtBinHandle = std::ptr::null_mut();
    // SAFETY: NUL-terminated path; no options; valid out-pointer.
    unsafe {
        call!(aclrtBinaryLoadFromFile(
            path.as_ptr(),
            std::ptr::null_mut(),
            &mut handle
        ))
    }?;
    Ok(handle)
}

/// `aclrtBinaryLoadFromData` (no options) on the current device; the
/// runtime copies what it keeps.
#[doc(alias = "aclrtBinaryLoadFromData")]
pub fn binary_load_from_data(data: &[u8]) -> Result<sys::aclrtBinHandle> {
    let mut handle: sys::aclrtBinHandle = std::ptr::null_mut();
    // SAFETY: `data` is valid for its length during the call; no options;
    // valid out-pointer.
    unsafe {
        call!(aclrtBinaryLoadFromData(
            data.as_ptr().cast(),
            data.len(),
            std::ptr::null(),
            &mut handle
        ))
    }?;
    Ok(handle)
}

/// `aclrtBinaryGetFunction`: the kernel `name` of a binary.
///
/// # Safety
///
/// `binary` is live (and stays so while the function handle is used).
#[doc(alias = "aclrtBinaryGetFunction")]
pub unsafe fn binary_get_function(
    binary: sys::aclrtBinHandle,
    name: &CStr,
) -> Result<sys::aclrtFuncHandle> {
    let mut func: sys::aclrtFuncHandle = std::ptr::null_mut();
    // SAFETY: the caller's contract; NUL-terminated name; valid out-pointer.
    unsafe { call!(aclrtBinaryGetFunction(binary, name.as_ptr(), &mut func)) }?;
    Ok(func)
}

/// `aclrtKernelArgsInit`: starts the calling thread's argument list for
/// `func`.
///
/// # Safety
///
/// `func` is live.
#[doc(alias = "aclrtKernelArgsInit")]
pub unsafe fn kernel_args_init(func: sys::aclrtFuncHandle) -> Result<sys::aclrtArgsHandle> {
    let mut args: sys::aclrtArgsHandle = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclrtKernelArgsInit(func, &mut args)) }?;
    Ok(args)
}

/// `aclrtKernelArgsAppend`: appends a by-value parameter (copied).
///
/// # Safety
///
/// `args` is this thread's live list.
#[doc(alias = "aclrtKernelArgsAppend")]
pub unsafe fn kernel_args_append(
    args: sys::aclrtArgsHandle,
    value: &mut [u8],
) -> Result<sys::aclrtParamHandle> {
    let mut param: sys::aclrtParamHandle = std::ptr::null_mut();
    // SAFETY: the caller's contract; `value` is valid for its length and
    // copied by the call; valid out-pointer.
    unsafe {
        call!(aclrtKernelArgsAppend(
            args,
            value.as_mut_ptr().cast(),
            value.len(),
            &mut param
        ))
    }?;
    Ok(param)
}

/// `aclrtKernelArgsAppendPlaceHolder`: appends a parameter whose data is
/// written later into the buffer of
/// [`kernel_args_get_place_holder_buffer`].
///
/// # Safety
///
/// `args` is this thread's live list.
#[doc(alias = "aclrtKernelArgsAppendPlaceHolder")]
pub unsafe fn kernel_args_append_place_holder(
    args: sys::aclrtArgsHandle,
) -> Result<sys::aclrtParamHandle> {
    let mut param: sys::aclrtParamHandle = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclrtKernelArgsAppendPlaceHolder(args, &mut param)) }?;
    Ok(param)
}

/// `aclrtKernelArgsGetPlaceHolderBuffer`: `size` writable bytes for a
/// placeholder's data (a null result is an error).
///
/// # Safety
///
/// `args` is this thread's live list and `param` one of its placeholders.
#[doc(alias = "aclrtKernelArgsGetPlaceHolderBuffer")]
pub unsafe fn kernel_args_get_place_holder_buffer(
    args: sys::aclrtArgsHandle,
    param: sys::aclrtParamHandle,
    size: usize,
) -> Result<*mut c_void> {
    let mut buf: *mut c_void = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe {
        call!(aclrtKernelArgsGetPlaceHolderBuffer(
            args, param, size, &mut buf
        ))
    }?;
    if buf.is_null() {
        return Err(crate::Error::from_code(
            "aclrtKernelArgsGetPlaceHolderBuffer",
            sys::ACL_ERROR_INTERNAL_ERROR,
        ));
    }
    Ok(buf)
}

forward! {
    /// `aclrtBinaryUnLoad`.
    #[doc(alias = "aclrtBinaryUnLoad")]
    binary_un_load = aclrtBinaryUnLoad(binary: sys::aclrtBinHandle);
    /// `aclrtKernelArgsFinalize`: closes an argument list for launching.
    #[doc(alias = "aclrtKernelArgsFinalize")]
    kernel_args_finalize = aclrtKernelArgsFinalize(args: sys::aclrtArgsHandle);
    /// `aclrtLaunchKernelWithConfig`: queues `func` on `stream` with a
    /// finalized argument list; the kernel's own contract (what memory it
    /// touches) is the caller's too.
    #[doc(alias = "aclrtLaunchKernelWithConfig")]
    launch_kernel_with_config = aclrtLaunchKernelWithConfig(
        func: sys::aclrtFuncHandle,
        blocks: u32,
        stream: sys::aclrtStream,
        config: *mut sys::aclrtLaunchKernelCfg,
        args: sys::aclrtArgsHandle,
        reserve: *mut c_void,
    );
}

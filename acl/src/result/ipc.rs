//! IPC memory sharing between processes.

use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, c_void};

/// The key buffer's length the documentation fixes (64 characters and a
/// NUL).
pub const IPC_KEY_LEN: usize = 65;

/// `aclrtIpcMemGetExportKey`: shares `size` bytes of device memory at
/// `dev_ptr` with other processes; returns the key.
///
/// # Safety
///
/// `dev_ptr` is device memory from `aclrtMalloc`, live while the key is
/// open.
#[doc(alias = "aclrtIpcMemGetExportKey")]
pub unsafe fn ipc_mem_get_export_key(
    dev_ptr: *mut c_void,
    size: usize,
    flags: u64,
) -> Result<String> {
    let mut key = [0 as std::ffi::c_char; IPC_KEY_LEN];
    // SAFETY: `key` is writable for its length; the caller's contract for
    // `dev_ptr`.
    unsafe {
        call!(aclrtIpcMemGetExportKey(
            dev_ptr,
            size,
            key.as_mut_ptr(),
            IPC_KEY_LEN,
            flags
        ))
    }?;
    // SAFETY: the runtime wrote a NUL-terminated key into `key`; the last
    // byte is still NUL if it wrote more.
    let k = unsafe { CStr::from_ptr(key.as_ptr()) };
    Ok(k.to_string_lossy().into_owned())
}

/// `aclrtIpcMemSetImportPid`: adds `pids` to the whitelist of `key`.
#[doc(alias = "aclrtIpcMemSetImportPid")]
pub fn ipc_mem_set_import_pid(key: &CStr, pids: &[i32]) -> Result<()> {
    let mut pids = pids.to_vec();
    // SAFETY: a NUL-terminated key and `pids.len()` readable ids (the C
    // declaration takes a mutable pointer it only reads).
    unsafe {
        call!(aclrtIpcMemSetImportPid(
            key.as_ptr(),
            pids.as_mut_ptr(),
            pids.len()
        ))
    }
}

/// `aclrtIpcMemImportByKey`: maps another process's exported memory into
/// this process, on the current device; returns its address here.
#[doc(alias = "aclrtIpcMemImportByKey")]
pub fn ipc_mem_import_by_key(key: &CStr, flags: u64) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and a NUL-terminated key.
    unsafe { call!(aclrtIpcMemImportByKey(&mut ptr, key.as_ptr(), flags)) }?;
    Ok(ptr)
}

/// `aclrtIpcMemClose`: closes `key` in this process (an import is unmapped,
/// an export withdrawn).
///
/// # Safety
///
/// For an imported key, no work still uses the imported memory.
#[doc(alias = "aclrtIpcMemClose")]
pub unsafe fn ipc_mem_close(key: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated key; the caller's contract for the memory.
    unsafe { call!(aclrtIpcMemClose(key.as_ptr())) }
}

/// `aclrtDeviceGetBareTgid`: this process's id as the driver sees it (the
/// host's pid inside a container), the id to whitelist.
#[doc(alias = "aclrtDeviceGetBareTgid")]
pub fn device_get_bare_tgid() -> Result<i32> {
    let mut pid = 0;
    // SAFETY: a valid out-pointer.
    unsafe { call!(aclrtDeviceGetBareTgid(&mut pid)) }?;
    Ok(pid)
}

/// `ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION`: any process may
/// import the key.
pub const IPC_EXPORT_NO_PID_CHECK: u64 =
    sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION as u64;

/// `ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT`: only whitelisted processes may
/// import the key.
pub const IPC_EXPORT_PID_CHECK: u64 = sys::ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT as u64;

/// `ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT`.
pub const IPC_IMPORT_DEFAULT: u64 = sys::ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT as u64;

/// `aclrtIpcGetEventHandle`: the handle another process opens an
/// `ACL_EVENT_IPC` event with.
///
/// # Safety
///
/// `event` is a live event handle.
#[doc(alias = "aclrtIpcGetEventHandle")]
pub unsafe fn ipc_get_event_handle(event: sys::aclrtEvent) -> Result<[u8; 64]> {
    let mut h = sys::aclrtIpcEventHandle { reserved: [0; 64] };
    // SAFETY: a valid out-pointer; the caller's contract for `event`.
    unsafe { call!(aclrtIpcGetEventHandle(event, &mut h)) }?;
    Ok(h.reserved.map(|c| c as u8))
}

/// `aclrtIpcOpenEventHandle`: an event of this process for the IPC event
/// `handle` names; destroy it with `aclrtDestroyEvent`.
#[doc(alias = "aclrtIpcOpenEventHandle")]
pub fn ipc_open_event_handle(handle: &[u8; 64]) -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    let handle = sys::aclrtIpcEventHandle {
        reserved: handle.map(|b| b as std::ffi::c_char),
    };
    // SAFETY: a valid out-pointer; the handle is passed by value.
    unsafe { call!(aclrtIpcOpenEventHandle(handle, &mut e)) }?;
    Ok(e)
}

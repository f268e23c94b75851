//! IPC memory sharing: `aclrtIpcMemGetExportKey`, `aclrtIpcMemSetImportPid`,
//! `aclrtIpcMemImportByKey`, `aclrtIpcMemClose`. The engine (`mem::ipc`)
//! shares the memory; these check the C arguments in the release's order
//! and translate its errors.
//!
//! Order of the checks (hicann/runtime `src/acl/aclrt_impl/memory.cpp`
//! `aclrtIpcMem*Impl`, then `src/runtime/api/impl/api_error.cc`
//! `ApiErrorDecorator::IpcSetMemoryName` / `SetIpcMemPid` / `IpcOpenMemory` /
//! `IpcCloseMemoryByName`, then `api_impl_standard_soc.cc` / `api_impl.cc`):
//! null pointers → 100000 (the ACL front end); a zero size or key length, a
//! pid count that is not positive as an `int32_t`, flags above 1 → 107000;
//! no context on the thread → 107002; then the driver's answer (see
//! `mem::ipc`: 107000, 207006 for a process outside the whitelist, 207005
//! when no memory file backs the block).

use super::common::{self, PARAM_INVALID, code};
use crate::faults;
use crate::mem::ipc::{self, IpcError};
use crate::recent_error::fail;
use acl_sys::{
    ACL_ERROR_RT_NO_PERMISSION, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
    ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
    ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS, ACL_SUCCESS, aclError,
};
use std::ffi::{CStr, c_char, c_void};

fn ipc_fail(function: &str, e: IpcError) -> aclError {
    let (rc, msg) = match e {
        IpcError::Invalid(m) => (PARAM_INVALID, m),
        IpcError::NotPermitted(m) => (code(ACL_ERROR_RT_NO_PERMISSION), m),
        IpcError::NoResources(m) => (code(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL), m),
    };
    fail(rc, format!("{function}: {msg}"))
}

/// The key at `key` (non-null), or a 107000 for one that is not a key
/// (not UTF-8).
///
/// # Safety
///
/// `key` is a NUL-terminated string.
unsafe fn key_arg<'a>(function: &str, key: *const c_char) -> Result<&'a str, aclError> {
    // SAFETY: the caller's contract.
    let k = unsafe { CStr::from_ptr(key) };
    k.to_str().map_err(|_| {
        fail(
            PARAM_INVALID,
            format!("{function}: the key is not one aclrtIpcMemGetExportKey returned (not UTF-8)"),
        )
    })
}

/// The common head of a call that takes a key: the injected fault, a null
/// key (100000), no context (107002), a key that is not UTF-8 (107000).
///
/// # Safety
///
/// `key` is null or a NUL-terminated string.
unsafe fn keyed<'a>(function: &str, key: *const c_char) -> Result<&'a str, aclError> {
    if let Some(code) = faults::check(function) {
        return Err(code);
    }
    if key.is_null() {
        return Err(common::null_arg(function, "key"));
    }
    common::current(function)?;
    // SAFETY: the caller's contract.
    unsafe { key_arg(function, key) }
}

/// `flags` above `max` → 107000.
fn flags_arg(function: &str, flags: u64, max: u32) -> Result<(), aclError> {
    if flags > u64::from(max) {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: flags {flags} is out of range [0, {max}]"),
        ));
    }
    Ok(())
}

/// `aclrtIpcMemGetExportKey`: shares `size` bytes of device memory at
/// `devPtr` under a key written to `key` (`len` bytes, 65 in the
/// documentation). Flags: 0 checks importers against the whitelist
/// (`aclrtIpcMemSetImportPid`), 1
/// (`ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION`) does not.
///
/// # Safety
///
/// `key` is null or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemGetExportKey(
    dev_ptr: *mut c_void,
    size: usize,
    key: *mut c_char,
    len: usize,
    flags: u64,
) -> aclError {
    const F: &str = "aclrtIpcMemGetExportKey";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dev_ptr.is_null() {
        return common::null_arg(F, "devPtr");
    }
    if key.is_null() {
        return common::null_arg(F, "key");
    }
    if size == 0 {
        return fail(PARAM_INVALID, format!("{F}: size must be greater than 0"));
    }
    // The runtime takes `len` as a uint32_t (`static_cast<uint32_t>(len)`).
    let len32 = len as u32;
    if len32 == 0 {
        return fail(PARAM_INVALID, format!("{F}: len must be greater than 0"));
    }
    tri!(flags_arg(
        F,
        flags,
        ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION
    ));
    tri!(common::current(F));
    let check_pid = flags & u64::from(ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION) == 0;
    let name = match ipc::export(dev_ptr as usize, size, check_pid) {
        Ok(k) => k,
        Err(e) => return ipc_fail(F, e),
    };
    if name.len() >= len32 as usize {
        let _ = ipc::close(&name);
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: len {len32} cannot hold the key and its NUL ({} bytes; pass 65)",
                name.len() + 1
            ),
        );
    }
    // SAFETY: `key` is writable for `len` bytes (the C contract), and the
    // key and its NUL fit them (checked above).
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), key, name.len());
        *key.add(name.len()) = 0;
    }
    ACL_SUCCESS
}

/// `aclrtIpcMemSetImportPid`: adds `num` process ids at `pid` to the
/// whitelist of `key` (exported by this process).
///
/// # Safety
///
/// `key` is null or a NUL-terminated string; `pid` is null or readable for
/// `num` ids.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetImportPid(
    key: *const c_char,
    pid: *mut i32,
    num: usize,
) -> aclError {
    const F: &str = "aclrtIpcMemSetImportPid";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if key.is_null() {
        return common::null_arg(F, "key");
    }
    if pid.is_null() {
        return common::null_arg(F, "pid");
    }
    // `rtsIpcMemSetImportPid(key, pid, static_cast<int32_t>(num))`, then
    // `num <= 0` is refused.
    let n = num as i32;
    if n <= 0 {
        return fail(
            PARAM_INVALID,
            format!("{F}: num {n} (as int32_t) is out of range (0, 2147483647]"),
        );
    }
    tri!(common::current(F));
    // SAFETY: the C contract.
    let name = tri!(unsafe { key_arg(F, key) });
    // SAFETY: `pid` is readable for `num` ids (the C contract); `n > 0`.
    let pids = unsafe { std::slice::from_raw_parts(pid, n as usize) };
    match ipc::set_import_pids(name, pids) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => ipc_fail(F, e),
    }
}

/// `aclrtIpcMemImportByKey`: maps the memory another process exported
/// under `key` into this process, as device memory of the current device;
/// writes its address to `devPtr`. Flag 1
/// (`ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS`) enables peer access
/// on a device (the simulated devices of one host all reach each other's
/// memory, so it changes nothing here).
///
/// # Safety
///
/// `devPtr` is null or writable; `key` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemImportByKey(
    dev_ptr: *mut *mut c_void,
    key: *const c_char,
    flags: u64,
) -> aclError {
    const F: &str = "aclrtIpcMemImportByKey";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dev_ptr.is_null() {
        return common::null_arg(F, "devPtr");
    }
    if key.is_null() {
        return common::null_arg(F, "key");
    }
    tri!(flags_arg(
        F,
        flags,
        ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS
    ));
    let ctx = tri!(common::current(F));
    // SAFETY: the C contract.
    let name = tri!(unsafe { key_arg(F, key) });
    match ipc::import(name, ctx.device) {
        Ok(addr) => {
            // SAFETY: checked non-null; writable by the C contract.
            unsafe { *dev_ptr = addr as *mut c_void };
            ACL_SUCCESS
        }
        Err(e) => ipc_fail(F, e),
    }
}

/// `aclrtIpcMemClose`: in an importing process, unmaps the (oldest) import
/// of `key`; in the exporting process, withdraws the key. Importers close
/// first, as the documentation requires.
///
/// # Safety
///
/// `key` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemClose(key: *const c_char) -> aclError {
    const F: &str = "aclrtIpcMemClose";
    // SAFETY: the C contract.
    let name = tri!(unsafe { keyed(F, key) });
    match ipc::close(name) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => ipc_fail(F, e),
    }
}

/// `aclrtDeviceGetBareTgid`: this process's id as the driver sees it, the
/// id `aclrtIpcMemSetImportPid` whitelists (hicann/runtime
/// `src/runtime/api/impl/api_error.cc` `DeviceGetBareTgid`: a null `pid` is
/// refused; no device or context is needed). Inside a container the driver
/// answers the host's pid; the simulator, which has no driver outside the
/// container, answers the process's own.
///
/// # Safety
///
/// `pid` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetBareTgid(pid: *mut i32) -> aclError {
    const F: &str = "aclrtDeviceGetBareTgid";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if pid.is_null() {
        return common::null_arg(F, "pid");
    }
    // SAFETY: checked non-null; writable by the C contract.
    unsafe { *pid = std::process::id() as i32 };
    ACL_SUCCESS
}

/// `aclrtIpcMemSetAttr`: the die-to-die link (`ACL_RT_IPC_MEM_ATTR_ACCESS_LINK`:
/// SIO 0, HCCS 1) importers of `key` use, on Atlas A3 parts only.
///
/// The release (hicann/runtime `src/acl/aclrt_impl/memory.cpp`
/// `aclrtIpcMemSetAttrImpl`, `src/runtime/api/impl/api_error.cc`
/// `ApiErrorDecorator::IpcSetMemoryAttr`, `api_impl.cc`
/// `ApiImpl::IpcSetMemoryAttr`): a null key, a type other than 0 or an
/// attribute outside `[0, 4)` → 107000; no context → 107002; a SoC without
/// the flat device address space (every one but the A3 family here) →
/// 207000; then the driver (`halShmemSetAttribute`, not in the open
/// source): the simulator accepts SIO and HCCS for a key this process
/// exports (the link changes nothing on one host), and refuses an unknown
/// key with 107000 and the UB paths (2, 3: Ascend 950 only) with 207000.
///
/// # Safety
///
/// `key` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcMemSetAttr(
    key: *const c_char,
    type_: acl_sys::aclrtIpcMemAttrType,
    attr: u64,
) -> aclError {
    const F: &str = "aclrtIpcMemSetAttr";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if key.is_null() {
        return fail(PARAM_INVALID, format!("{F}: key is null"));
    }
    if type_ != acl_sys::ACL_RT_IPC_MEM_ATTR_ACCESS_LINK {
        return fail(
            PARAM_INVALID,
            format!("{F}: type {type_} is out of range [0, 1) (ACL_RT_IPC_MEM_ATTR_ACCESS_LINK)"),
        );
    }
    if attr >= 4 {
        return fail(
            PARAM_INVALID,
            format!("{F}: attr {attr} is out of range [0, 4)"),
        );
    }
    tri!(common::current(F));
    let soc = crate::config::get().map_or(crate::config::DEFAULT_SOC_NAME, |c| c.soc_name.as_str());
    if !soc.starts_with("Ascend910_93") {
        return fail(
            code(acl_sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: the access link of IPC memory is set on Atlas A3 parts only; this is {soc}"
            ),
        );
    }
    if attr > u64::from(acl_sys::ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS) {
        return fail(
            code(acl_sys::ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: attr {attr} (a UB path) is for Ascend 950 parts; an A3 part has SIO (0) and HCCS (1)"
            ),
        );
    }
    // SAFETY: checked non-null; NUL-terminated by the C contract.
    let name = tri!(unsafe { key_arg(F, key) });
    if !ipc::is_exported(name) {
        return fail(
            PARAM_INVALID,
            format!("{F}: \"{name}\" is not a key this process exported (aclrtIpcMemGetExportKey)"),
        );
    }
    ACL_SUCCESS
}

//! Memory: `aclrtMalloc`, `aclrtMallocAlign32`, `aclrtMallocCached`,
//! `aclrtFree`, `aclrtMallocHost`, `aclrtFreeHost`, `aclrtMemcpy`,
//! `aclrtMemset`, `aclrtGetMemInfo`.
//!
//! Device memory is real host memory, 512-byte aligned as the driver gives
//! it (`state::ALIGN`, where the source is cited), charged against the
//! device's HBM (`CANN_SIM_HBM_MIB`). A small block is filled with
//! `state::POISON` (memory is not initialised on a device either); a block of
//! 2 MiB or more is reserved lazily (its pages cost the host nothing until
//! written, and read as zero), and the process's large blocks in all must
//! fit what the host can back, else 207001 (`ACL_ERROR_RT_MEMORY_ALLOCATION`)
//! with a message saying so, rather than the kernel's out-of-memory killer.
//! Every pointer is checked against the
//! process-wide allocation table (`state::memory`): live, in bounds, device
//! or host, on which device. The usable size of an allocation is the size
//! asked for; the rounding padding is reserved but not addressable.
//!
//! Semantics and codes (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, then
//! `src/runtime/api/impl/api_error.cc` and `api_impl.cc`; API reference
//! `docs/zh/api_ref/11-0*`):
//!
//! - The ACL front end answers `ACL_ERROR_INVALID_PARAM` (100000) for null
//!   pointers, a zero size, a size that overflows when rounded and a copy kind
//!   outside 0..=5; checks inside the runtime answer
//!   `ACL_ERROR_RT_PARAM_INVALID` (107000).
//! - No device set on the thread: `ACL_ERROR_RT_CONTEXT_NULL` (107002), for
//!   device allocation, pinned host allocation (`ApiImpl::HostMalloc` checks
//!   the context), copies, fills and `aclrtGetMemInfo`. Freeing needs none.
//! - `aclrtMalloc`/`aclrtMallocCached` round to `(size + 32 + 31) / 32 * 32`
//!   (no padding for the 1G-huge-page policies), `aclrtMallocAlign32` to
//!   `(size + 31) / 32 * 32`; out of HBM is `ACL_ERROR_RT_MEMORY_ALLOCATION`
//!   (207001). An unknown policy falls back to the default one.
//! - Freeing a pointer that is not the start of a live allocation of the right
//!   kind is 107000. (On hardware the driver's code for this is not visible in
//!   the open source; 107000 is the runtime's invalid-value code.)

use super::common::{self, rt_fail};
use crate::check;
use crate::faults;
pub(crate) use crate::mem::copy::report_copy_kind;
use crate::mem::copy::{self, CheckedCopy, CopyKind, SyncError};
use crate::recent_error::fail;
use crate::state::{self, MemKind, Region};
use acl_sys::{
    ACL_DDR_MEM, ACL_DDR_MEM_HUGE, ACL_DDR_MEM_NORMAL, ACL_DDR_MEM_P2P_HUGE,
    ACL_DDR_MEM_P2P_NORMAL, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_MEMORY_TYPE, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
    ACL_MEM_MALLOC_HUGE1G_ONLY, ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, ACL_MEM_P2P_HUGE1G,
    ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    ACL_SUCCESS, aclError, aclrtMemAttr, aclrtMemMallocPolicy, aclrtMemcpyKind,
};
use std::ffi::c_void;

const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;
const MEMORY_ALLOCATION: aclError = ACL_ERROR_RT_MEMORY_ALLOCATION as aclError;

/// The runtime's size rounding: to a multiple of 32 plus, with `padding`,
/// 32 more bytes (`acl::GetAlignedAndPaddingSize`). `None` on overflow.
fn rounded_size(size: usize, padding: bool) -> Option<usize> {
    let append = if padding { 64 } else { 32 };
    size.checked_add(append).map(|s| (s - 1) / 32 * 32)
}

pub(crate) fn no_device(function: &str) -> aclError {
    fail(
        CONTEXT_NULL,
        format!("{function}: no device is set on this thread (call aclrtSetDevice first)"),
    )
}

fn hbm_budget(function: &str) -> Result<u64, aclError> {
    crate::config::get().map(|c| c.hbm_bytes).map_err(|msg| {
        fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: cann-sim configuration: {msg}"),
        )
    })
}

/// `aclrtMalloc` and its variants.
///
/// # Safety
///
/// `dev_ptr` is null or valid for writing a pointer.
unsafe fn malloc_device(
    function: &str,
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
    padding: bool,
) -> aclError {
    if dev_ptr.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: devPtr is null"),
        );
    }
    if size == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: size must be greater than 0"),
        );
    }
    // Any other policy value (unknown, or OR-ed flags) means the default one,
    // as in memory.cpp `aclMallocMemInner`: it only changes page sizes, which
    // the simulator does not model.
    let huge1g = matches!(
        policy,
        ACL_MEM_MALLOC_HUGE1G_ONLY | ACL_MEM_MALLOC_HUGE1G_ONLY_P2P
    );
    let Some(reserved) = rounded_size(size, padding && !huge1g) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: size {size} is too large (it overflows when rounded up)"),
        );
    };
    let Some(device) = state::current_device() else {
        return no_device(function);
    };
    let budget = tri!(hbm_budget(function));
    let result = state::memory()
        .write()
        .alloc(MemKind::Device(device), size, reserved, budget);
    match result {
        Ok(p) => {
            // SAFETY: checked non-null; the caller passes a writable pointer.
            unsafe { *dev_ptr = p.cast() };
            ACL_SUCCESS
        }
        Err(e) => fail(MEMORY_ALLOCATION, format!("{function}: {e}")),
    }
}

/// `aclrtMalloc`: `size` bytes of device memory on the current device.
///
/// # Safety
///
/// `dev_ptr` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMalloc(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
) -> aclError {
    if let Some(code) = faults::check("aclrtMalloc") {
        return code;
    }
    // SAFETY: forwarded caller contract.
    unsafe { malloc_device("aclrtMalloc", dev_ptr, size, policy, true) }
}

/// `aclrtMallocAlign32`: like `aclrtMalloc`, rounded to 32 bytes without the
/// 32-byte padding.
///
/// # Safety
///
/// `dev_ptr` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocAlign32(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
) -> aclError {
    if let Some(code) = faults::check("aclrtMallocAlign32") {
        return code;
    }
    // SAFETY: forwarded caller contract.
    unsafe { malloc_device("aclrtMallocAlign32", dev_ptr, size, policy, false) }
}

/// `aclrtMallocCached`: like `aclrtMalloc` (the simulator has no caches).
///
/// # Safety
///
/// `dev_ptr` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocCached(
    dev_ptr: *mut *mut c_void,
    size: usize,
    policy: aclrtMemMallocPolicy,
) -> aclError {
    if let Some(code) = faults::check("aclrtMallocCached") {
        return code;
    }
    // SAFETY: forwarded caller contract.
    unsafe { malloc_device("aclrtMallocCached", dev_ptr, size, policy, true) }
}

/// `aclrtFree`: frees device memory at once (no synchronisation, as on the
/// real runtime). Needs no current device.
///
/// # Safety
///
/// Nothing may use the memory afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFree(dev_ptr: *mut c_void) -> aclError {
    if let Some(code) = faults::check("aclrtFree") {
        return code;
    }
    if dev_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is null");
    }
    free_checked("aclrtFree", dev_ptr as usize, true)
}

/// Frees `addr` (device or pinned host memory), through the check mode's
/// guard when it is on.
fn free_checked(function: &str, addr: usize, device: bool) -> aclError {
    let free = || state::memory().write().free(addr, device);
    let result = if check::enabled() {
        match check::guard_free(function, addr, Some(device), free) {
            Ok(r) => r,
            Err(e) => return rt_fail(function, e),
        }
    } else {
        free()
    };
    match result {
        Ok(_) => ACL_SUCCESS,
        Err(e) => fail(PARAM_INVALID, format!("{function}: {e}")),
    }
}

/// `aclrtMallocHost`: `size` bytes of pinned host memory, 512-byte aligned
/// as the driver gives it (`state::ALIGN`; the runtime rounds the size to 32
/// bytes).
///
/// # Safety
///
/// `host_ptr` is null or valid for writing a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMallocHost(host_ptr: *mut *mut c_void, size: usize) -> aclError {
    if let Some(code) = faults::check("aclrtMallocHost") {
        return code;
    }
    if host_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is null");
    }
    if size == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            "aclrtMallocHost: size must be greater than 0",
        );
    }
    if state::current_device().is_none() {
        return no_device("aclrtMallocHost");
    }
    let Some(reserved) = rounded_size(size, false) else {
        return fail(
            MEMORY_ALLOCATION,
            format!("aclrtMallocHost: {size} bytes cannot be allocated"),
        );
    };
    let result = state::memory()
        .write()
        .alloc(MemKind::Host, size, reserved, 0);
    match result {
        Ok(p) => {
            // SAFETY: checked non-null; the caller passes a writable pointer.
            unsafe { *host_ptr = p.cast() };
            ACL_SUCCESS
        }
        Err(e) => fail(MEMORY_ALLOCATION, format!("aclrtMallocHost: {e}")),
    }
}

/// `aclrtFreeHost`: frees pinned host memory at once.
///
/// # Safety
///
/// Nothing may use the memory afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtFreeHost(host_ptr: *mut c_void) -> aclError {
    if let Some(code) = faults::check("aclrtFreeHost") {
        return code;
    }
    if host_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is null");
    }
    free_checked("aclrtFreeHost", host_ptr as usize, false)
}

/// The engine's name for the copy kind `kind`, or `None` outside 0..=5.
pub(crate) fn copy_kind(kind: aclrtMemcpyKind) -> Option<CopyKind> {
    Some(match kind {
        ACL_MEMCPY_HOST_TO_HOST => CopyKind::HostToHost,
        ACL_MEMCPY_HOST_TO_DEVICE => CopyKind::HostToDevice,
        ACL_MEMCPY_DEVICE_TO_HOST => CopyKind::DeviceToHost,
        ACL_MEMCPY_DEVICE_TO_DEVICE => CopyKind::DeviceToDevice,
        ACL_MEMCPY_DEFAULT => CopyKind::Default,
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => CopyKind::HostToBufToDevice,
        _ => return None,
    })
}

pub(crate) fn kind_name(kind: aclrtMemcpyKind) -> &'static str {
    copy_kind(kind).map_or("an unknown kind", CopyKind::name)
}

/// [`copy::check_copy`] for a C copy kind (an unknown one is refused).
pub(crate) fn check_copy(
    kind: aclrtMemcpyKind,
    dst: usize,
    dst_region: Region,
    src: usize,
    src_region: Region,
    current: u32,
) -> Result<CheckedCopy, String> {
    let kind = copy_kind(kind).ok_or_else(|| format!("kind {kind} is not an aclrtMemcpyKind"))?;
    copy::check_copy(kind, dst, dst_region, src, src_region, current)
}

/// Records the failure of a synchronous copy or fill.
pub(crate) fn sync_fail(function: &str, e: SyncError) -> aclError {
    match e {
        SyncError::Invalid(msg) => fail(PARAM_INVALID, msg),
        SyncError::Check(e) => rt_fail(function, e),
    }
}

/// `aclrtMemcpy`: a synchronous copy of `count` bytes. No implicit device or
/// stream synchronisation, as on the real runtime.
///
/// Checks, in the runtime's order: `count == 0` → success (even with null
/// pointers); null `dst`/`src` → 100000; `kind` outside 0..=5 → 100000;
/// `dest_max == 0` or `count > dest_max` → 107000; `dst == src` → success
/// without copying; no current device → 107002. Then provenance, each failure
/// 107000: both ranges must be in bounds of the allocation they start in;
/// the kind is corrected from the pointers as the runtime does
/// (`check_copy`: between device and pinned memory any kind is replaced
/// by the one the addresses imply; a pageable end accepts only the kinds it
/// allows); device ends must be on the current device; device to device
/// across devices needs one end on the current device and peer access
/// enabled from it to the other end's device (`aclrtDeviceEnablePeerAccess`).
/// Host to host with overlapping ranges fails with 107000 and clears
/// `destMax` bytes of `dst` (securec `memcpy_s`). With `CANN_SIM_CHECK`, a
/// corrected kind is a `copy-kind` report (the copy is still done).
///
/// # Safety
///
/// Host ends that are not `aclrtMallocHost` memory must be valid for `count`
/// bytes (reads of `src`, writes of `dst`; `destMax` bytes of a host `dst`
/// when the host ranges overlap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    if let Some(code) = faults::check("aclrtMemcpy") {
        return code;
    }
    const F: &str = "aclrtMemcpy";
    let _span = crate::trace::host_span(F);
    if count == 0 {
        return ACL_SUCCESS;
    }
    if dst.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: dst is null"));
    }
    if src.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: src is null"));
    }
    if kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: kind {kind} is not supported; expected ACL_MEMCPY_HOST_TO_HOST (0) to \
                 ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE (5)"
            ),
        );
    }
    if dest_max == 0 {
        return fail(PARAM_INVALID, format!("{F}: destMax is 0"));
    }
    if count > dest_max {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} is larger than destMax {dest_max}"),
        );
    }
    if std::ptr::eq(dst.cast_const(), src) {
        return ACL_SUCCESS;
    }
    let Some(current) = state::current_device() else {
        return no_device(F);
    };
    tri!(common::capture_mode_allows(F));
    let Some(kind) = copy_kind(kind) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: kind is not a copy kind"),
        );
    };
    // SAFETY: forwarded caller contract.
    let copied = unsafe {
        copy::copy_sync(
            F,
            (dst as usize, dest_max),
            src as usize,
            count,
            kind,
            current,
        )
    };
    match copied {
        Ok(finding) => {
            report_copy_kind(F, finding);
            ACL_SUCCESS
        }
        Err(e) => sync_fail(F, e),
    }
}

/// `aclrtMemset`: fills `count` bytes of device memory with the low byte of
/// `value`.
///
/// `count == 0` → success; null `dev_ptr` → 100000; no current device →
/// 107002; `count > max_count` → 107000; a range that is not inside one live
/// device allocation on the current device → 107000. (The runtime checks the
/// context in `ApiImpl::MemSetSync` before the driver checks `count`.)
///
/// # Safety
///
/// None beyond the C contract: the range is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemset(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
) -> aclError {
    if let Some(code) = faults::check("aclrtMemset") {
        return code;
    }
    const F: &str = "aclrtMemset";
    if count == 0 {
        return ACL_SUCCESS;
    }
    if dev_ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: devPtr is null"));
    }
    let Some(current) = state::current_device() else {
        return no_device(F);
    };
    tri!(common::capture_mode_allows(F));
    if count > max_count {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} is larger than maxCount {max_count}"),
        );
    }
    // The header: "the memory to be initialized is on the Host or device
    // side; the system determines which from the address" (the engine's
    // `fill_sync`; issue 12).
    // SAFETY: forwarded caller contract.
    match unsafe { copy::fill_sync(F, dev_ptr as usize, count, value as u8, current) } {
        Ok(()) => ACL_SUCCESS,
        Err(e) => sync_fail(F, e),
    }
}

/// `aclrtGetMemInfo`: free and total bytes of one kind of memory on the
/// current device.
///
/// HBM attributes (`ACL_HBM_MEM*`, and the page-size-only `ACL_MEM_*` that
/// the runtime maps to HBM) give the device's HBM (`CANN_SIM_HBM_MIB`, less
/// what is allocated). DDR attributes give 0 and 0: a 910B-class device has
/// no DDR for user data, and the API reference says attributes the hardware
/// does not have report 0. Null `free`/`total` → 100000; an attribute beyond
/// `ACL_MEM_P2P_HUGE1G` → `ACL_ERROR_RT_INVALID_MEMORY_TYPE` (107016); no
/// current device → 107002.
///
/// # Safety
///
/// `free` and `total` are null or valid for writing a `usize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetMemInfo(
    attr: aclrtMemAttr,
    free: *mut usize,
    total: *mut usize,
) -> aclError {
    if let Some(code) = faults::check("aclrtGetMemInfo") {
        return code;
    }
    const F: &str = "aclrtGetMemInfo";
    if free.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: free is null"));
    }
    if total.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: total is null"));
    }
    if attr > ACL_MEM_P2P_HUGE1G {
        return fail(
            ACL_ERROR_RT_INVALID_MEMORY_TYPE as aclError,
            format!("{F}: attr {attr} is not an aclrtMemAttr (expected 0 to {ACL_MEM_P2P_HUGE1G})"),
        );
    }
    let Some(device) = state::current_device() else {
        return no_device(F);
    };
    let budget = tri!(hbm_budget(F));
    let is_ddr = matches!(
        attr,
        ACL_DDR_MEM
            | ACL_DDR_MEM_HUGE
            | ACL_DDR_MEM_NORMAL
            | ACL_DDR_MEM_P2P_HUGE
            | ACL_DDR_MEM_P2P_NORMAL
    );
    let (f, t) = if is_ddr {
        (0, 0)
    } else {
        let used = state::memory().read().hbm_used(device);
        (budget.saturating_sub(used), budget)
    };
    // SAFETY: both checked non-null; the caller passes writable usizes.
    unsafe {
        *free = usize::try_from(f).unwrap_or(usize::MAX);
        *total = usize::try_from(t).unwrap_or(usize::MAX);
    }
    ACL_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_adds_32_bytes_of_padding_then_rounds_to_32() {
        assert_eq!(rounded_size(1, true), Some(64));
        assert_eq!(rounded_size(32, true), Some(64));
        assert_eq!(rounded_size(33, true), Some(96));
        assert_eq!(rounded_size(100, true), Some(160));
        assert_eq!(rounded_size(1, false), Some(32));
        assert_eq!(rounded_size(32, false), Some(32));
        assert_eq!(rounded_size(100, false), Some(128));
        assert_eq!(rounded_size(usize::MAX - 40, true), None);
        assert_eq!(rounded_size(usize::MAX - 20, false), None);
    }

    #[test]
    fn a_failure_records_a_message_that_names_the_function() {
        // SAFETY: null is allowed and rejected.
        let rc = unsafe { aclrtFree(std::ptr::null_mut()) };
        assert_eq!(rc, ACL_ERROR_INVALID_PARAM);
        assert_eq!(
            crate::recent_error::peek().as_deref(),
            Some("aclrtFree: devPtr is null")
        );
    }
}

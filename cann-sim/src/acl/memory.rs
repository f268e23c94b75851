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
use crate::check::{self, Access, Use};
use crate::faults;
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

pub(crate) fn kind_name(kind: aclrtMemcpyKind) -> &'static str {
    match kind {
        ACL_MEMCPY_HOST_TO_HOST => "ACL_MEMCPY_HOST_TO_HOST",
        ACL_MEMCPY_HOST_TO_DEVICE => "ACL_MEMCPY_HOST_TO_DEVICE",
        ACL_MEMCPY_DEVICE_TO_HOST => "ACL_MEMCPY_DEVICE_TO_HOST",
        ACL_MEMCPY_DEVICE_TO_DEVICE => "ACL_MEMCPY_DEVICE_TO_DEVICE",
        ACL_MEMCPY_DEFAULT => "ACL_MEMCPY_DEFAULT",
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE => "ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE",
        _ => "an unknown kind",
    }
}

/// Where one end of a copy lies, as the runtime classifies a pointer
/// (`rtMemLocationType`: device, registered/pinned host, unregistered).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Loc {
    Device,
    Pinned,
    Pageable,
}

impl Loc {
    fn of(r: Region) -> Loc {
        match r {
            Region::Device { .. } => Loc::Device,
            Region::Host { .. } => Loc::Pinned,
            Region::Unregistered => Loc::Pageable,
        }
    }
}

/// The copy kind the runtime uses for `kind` between `src` and `dst`
/// (`ApiErrorDecorator::MemcpyKindAutoCorrect` and its table
/// `MemcpyKindReviseMap`, hicann/runtime `src/runtime/api/impl/api_error.cc`):
/// between device and pinned memory (either way, or within one of them) the
/// kind is whatever the locations imply, the kind passed is ignored; with a
/// pageable (unregistered) end only the kinds that end allows are accepted,
/// `ACL_MEMCPY_DEFAULT` taking the first. Kind 5 (`HOST_TO_BUF_TO_DEVICE`)
/// is not corrected.
///
/// # Errors
///
/// A sentence naming the kinds allowed (`RT_ERROR_INVALID_VALUE`, 107000).
fn corrected_kind(
    kind: aclrtMemcpyKind,
    src_region: Region,
    dst_region: Region,
) -> Result<aclrtMemcpyKind, String> {
    use Loc::{Device, Pageable, Pinned};
    let (src, dst) = (Loc::of(src_region), Loc::of(dst_region));
    const H2H: aclrtMemcpyKind = ACL_MEMCPY_HOST_TO_HOST;
    const H2D: aclrtMemcpyKind = ACL_MEMCPY_HOST_TO_DEVICE;
    const D2H: aclrtMemcpyKind = ACL_MEMCPY_DEVICE_TO_HOST;
    const D2D: aclrtMemcpyKind = ACL_MEMCPY_DEVICE_TO_DEVICE;
    if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        return Ok(kind);
    }
    let allowed: &[aclrtMemcpyKind] = match (src, dst) {
        (Pinned, Device) => return Ok(H2D),
        (Device, Pinned) => return Ok(D2H),
        (Pinned, Pinned) => return Ok(H2H),
        (Device, Device) => return Ok(D2D),
        (Pageable, Device) => &[H2D, D2D],
        (Device, Pageable) => &[D2H, D2D],
        (Pinned, Pageable) => &[H2H, H2D],
        (Pageable, Pinned) => &[H2H, D2H],
        (Pageable, Pageable) => &[H2H, H2D, D2H, D2D],
    };
    if kind == ACL_MEMCPY_DEFAULT {
        return Ok(allowed[0]);
    }
    if allowed.contains(&kind) {
        return Ok(kind);
    }
    let names: Vec<&str> = allowed.iter().map(|&k| kind_name(k)).collect();
    Err(format!(
        "{} is invalid from src, {src_region}, to dst, {dst_region}; expected one of {} (or \
         ACL_MEMCPY_DEFAULT)",
        kind_name(kind),
        names.join(", ")
    ))
}

/// A copy that passed [`check_copy`].
#[derive(Debug)]
pub(crate) struct CheckedCopy {
    /// The kind the runtime uses (see [`corrected_kind`]).
    pub kind: aclrtMemcpyKind,
    /// When the kind passed was not `ACL_MEMCPY_DEFAULT` and the runtime
    /// corrected it: the check mode's `copy-kind` finding (see
    /// [`report_copy_kind`]).
    pub finding: Option<String>,
}

/// The provenance checks of a copy, as the runtime makes them: the kind
/// corrected from the pointers ([`corrected_kind`]); kind 5 from host to
/// device memory; device ends on the current device, or, between two
/// devices, one of them current with peer access enabled to the other.
pub(crate) fn check_copy(
    kind: aclrtMemcpyKind,
    dst: usize,
    dst_region: Region,
    src: usize,
    src_region: Region,
    current: u32,
) -> Result<CheckedCopy, String> {
    let (src_loc, dst_loc) = (Loc::of(src_region), Loc::of(dst_region));
    let effective = corrected_kind(kind, src_region, dst_region)?;
    // The runtime also accepts a kind that names a pageable end as device
    // memory (e.g. ACL_MEMCPY_DEVICE_TO_DEVICE from pageable host memory to
    // the device). The simulator cannot tell pageable host memory from
    // freed device memory (both are in no allocation), so it refuses those:
    // a known difference (FIDELITY.md), which keeps it from touching freed
    // memory.
    let (src_device, dst_device) = match effective {
        ACL_MEMCPY_DEVICE_TO_HOST => (true, false),
        ACL_MEMCPY_HOST_TO_DEVICE => (false, true),
        ACL_MEMCPY_DEVICE_TO_DEVICE => (true, true),
        _ => (false, false),
    };
    for (role, addr, loc, region, device) in [
        ("dst", dst, dst_loc, dst_region, dst_device),
        ("src", src, src_loc, src_region, src_device),
    ] {
        if device && loc == Loc::Pageable {
            return Err(format!(
                "{role} {addr:#x} is not device memory: it is {region}; {} needs device memory \
                 there",
                kind_name(effective)
            ));
        }
    }
    if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        if src_loc == Loc::Device {
            return Err(format!(
                "src {src:#x} is {src_region}, but ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE needs host \
                 memory there"
            ));
        }
        if dst_loc != Loc::Device {
            return Err(format!(
                "dst {dst:#x} is not device memory: it is {dst_region}; \
                 ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE needs device memory there"
            ));
        }
    }
    match (dst_region.device(), src_region.device()) {
        (Some(d), Some(s)) if d != s => {
            // Between devices: one end on the current device, the other on a
            // peer that the current device has enabled access to.
            let other = if d == current {
                s
            } else if s == current {
                d
            } else {
                return Err(format!(
                    "dst {dst:#x} is on device {d} and src {src:#x} on device {s}, but the \
                     current device of this thread is {current}"
                ));
            };
            if !state::global().lock().peers.contains(&(current, other)) {
                return Err(format!(
                    "dst {dst:#x} is on device {d} and src {src:#x} on device {s}: peer access \
                     not enabled from device {current} to device {other} (call \
                     aclrtDeviceEnablePeerAccess({other}, 0) on device {current} first)"
                ));
            }
        }
        (d, s) => {
            for (role, addr, device, region) in
                [("dst", dst, d, dst_region), ("src", src, s, src_region)]
            {
                if let Some(device) = device
                    && device != current
                {
                    return Err(format!(
                        "{role} {addr:#x} is {region}, but the current device of this thread is \
                         {current}"
                    ));
                }
            }
        }
    }
    let finding = (kind != ACL_MEMCPY_DEFAULT && effective != kind).then(|| {
        format!(
            "kind {} does not match the pointers (src {src:#x} is {src_region}, dst {dst:#x} is \
             {dst_region}); the runtime ignores it and copies as {}. Pass {} (or \
             ACL_MEMCPY_DEFAULT). The copy was done.",
            kind_name(kind),
            kind_name(effective),
            kind_name(effective),
        )
    });
    Ok(CheckedCopy {
        kind: effective,
        finding,
    })
}

/// Makes the check mode's `copy-kind` report for `finding` (nothing when
/// the check is off or there is no finding): the runtime corrects a kind
/// between device and pinned memory silently, so the call still succeeds;
/// `CANN_SIM_CHECK=report` counts it, `abort` aborts.
pub(crate) fn report_copy_kind(function: &str, finding: Option<String>) {
    if let Some(body) = finding
        && check::enabled()
    {
        check::report(check::Kind::CopyKind, function, &body);
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
    let (dst_addr, src_addr) = (dst as usize, src as usize);
    let validate = |table: &state::MemTable| -> Result<(CheckedCopy, Region), aclError> {
        let dst_region = check::range(table, F, "dst", dst_addr, count)
            .map_err(|e| fail(PARAM_INVALID, format!("{F}: dst: {e}")))?;
        let src_region = check::range(table, F, "src", src_addr, count)
            .map_err(|e| fail(PARAM_INVALID, format!("{F}: src: {e}")))?;
        let checked = check_copy(kind, dst_addr, dst_region, src_addr, src_region, current)
            .map_err(|e| fail(PARAM_INVALID, format!("{F} ({}): {e}", kind_name(kind))))?;
        Ok((checked, dst_region))
    };
    if check::enabled() {
        // A valid copy must not race queued work (checked without the
        // table's lock, which the check takes after its own).
        tri!(validate(&state::memory().read()));
        let ends = [
            Access::new("dst", dst_addr, count, Use::Write),
            Access::new("src", src_addr, count, Use::Read),
        ];
        if let Err(e) = check::host_access(F, &ends) {
            return rt_fail(F, e);
        }
    }
    // Held until the copy is done, so neither end can be freed under it.
    let table = state::memory().read();
    let (checked, dst_region) = tri!(validate(&table));
    let overlap =
        dst_addr < src_addr.saturating_add(count) && src_addr < dst_addr.saturating_add(count);
    if checked.kind == ACL_MEMCPY_HOST_TO_HOST && overlap {
        // The driver copies host to host with securec's memcpy_s, which
        // refuses overlapping ranges and clears the destination
        // (`EOVERLAP_AND_RESET`: destMax bytes set to 0); the runtime
        // answers 107000 (hicann/runtime `src/runtime/driver/npu_driver_mem.cc`
        // `NpuDriver::MemCopySync` → drvMemcpy; issue 12).
        let cleared = match dst_region {
            Region::Host { base, size, .. } => dest_max.min(base + size - dst_addr),
            _ => dest_max,
        };
        // SAFETY: dst is host memory valid for destMax bytes by the C
        // contract (pinned memory: clamped to its allocation, kept alive by
        // the read lock).
        unsafe { std::ptr::write_bytes(dst.cast::<u8>(), 0, cleared) };
        drop(table);
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the host ranges overlap (dst [{dst_addr:#x}, {:#x}), src [{src_addr:#x}, \
                 {:#x})); memcpy_s refuses overlapping copies and cleared the {cleared} bytes of \
                 dst. Copy with memmove on the host instead",
                dst_addr + count,
                src_addr + count
            ),
        );
    }
    // SAFETY: each end is either inside a live allocation for all `count`
    // bytes (checked above, kept alive by the read lock) or caller-provided
    // host memory valid for `count` bytes by contract. `copy` allows overlap.
    unsafe { std::ptr::copy(src.cast::<u8>(), dst.cast::<u8>(), count) };
    drop(table);
    report_copy_kind(F, checked.finding);
    ACL_SUCCESS
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
    let addr = dev_ptr as usize;
    // The header: "the memory to be initialized is on the Host or device
    // side; the system determines which from the address". Device memory
    // must be the current device's; pinned host memory (aclrtMallocHost) is
    // bounds-checked; other (pageable) host memory is filled as a host
    // memset, as the driver does (hicann/runtime
    // `src/runtime/driver/npu_driver_mem.cc` `NpuDriver::MemSetSync` →
    // drvMemsetD8; issue 12), its bounds the caller's contract.
    let validate = |table: &state::MemTable| -> Result<(), aclError> {
        match check::range(table, F, "devPtr", addr, count) {
            Ok(Region::Device { device, .. }) if device == current => Ok(()),
            Ok(Region::Device { device, .. }) => Err(fail(
                PARAM_INVALID,
                format!(
                    "{F}: devPtr {addr:#x} is on device {device}, but the current device of this \
                     thread is {current}"
                ),
            )),
            Ok(Region::Host { .. } | Region::Unregistered) => Ok(()),
            Err(e) => Err(fail(PARAM_INVALID, format!("{F}: devPtr: {e}"))),
        }
    };
    if check::enabled() {
        tri!(validate(&state::memory().read()));
        let range = [Access::new("devPtr", addr, count, Use::Write)];
        if let Err(e) = check::host_access(F, &range) {
            return rt_fail(F, e);
        }
    }
    let table = state::memory().read();
    tri!(validate(&table));
    // SAFETY: `[dev_ptr, dev_ptr + count)` lies inside a live device or
    // pinned host allocation, kept alive by the read lock, or in pageable
    // host memory valid for `count` bytes by the C contract.
    unsafe { std::ptr::write_bytes(dev_ptr.cast::<u8>(), value as u8, count) };
    drop(table);
    ACL_SUCCESS
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

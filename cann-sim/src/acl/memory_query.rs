//! Questions about pointers and 32-bit fills: `aclrtPointerGetAttributes`
//! (where memory lives), `aclrtMemGetAddressRange` (the allocation around an
//! address), `aclrtMemsetD32` / `aclrtMemsetD32Async` (a `u32` pattern);
//! `aclrtMemcpy2d` / `aclrtMemcpy2dAsync` (pitched copies); and
//! `aclrtDeviceGetUuid`.
//!
//! Answers come from the allocation table: device memory (from
//! `aclrtMalloc`, or mapped with `aclrtMapMem`), pinned host memory
//! (`aclrtMallocHost`), or neither (`ACL_MEM_LOCATION_TYPE_UNREGISTERED`:
//! ordinary host memory, or memory already freed). Page sizes are 2 MiB for
//! blocks the simulator maps on their own (2 MiB and more), 4 KiB
//! otherwise. The 32-bit fills accept what `aclrtMemset` / `aclrtMemsetAsync`
//! accept, and `ptr` aligned to 4 bytes.

#![allow(non_snake_case)]

use super::common::code;
use super::common::{self, PARAM_INVALID};
use super::memory::no_device;
use crate::faults;
use crate::mem::copy::{CopyKind, Rows};
use crate::recent_error::fail;
use crate::rt::stream::{Expect, TaskKind};
use crate::state::{self, MAPPED_BLOCK, Region};
use acl_sys::*;
use std::ffi::c_void;

/// `aclrtPointerGetAttributes`: the location (device and id, pinned host,
/// or unregistered) and page size of the memory at `ptr`.
///
/// # Safety
///
/// `attributes` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtPointerGetAttributes(
    ptr: *const c_void,
    attributes: *mut aclrtPtrAttributes,
) -> aclError {
    const F: &str = "aclrtPointerGetAttributes";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if ptr.is_null() || attributes.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: ptr or attributes is null"),
        );
    }
    let table = state::memory().read();
    let (type_, id, size) = match table.check_range(ptr as usize, 1) {
        Ok(Region::Device { device, size, .. }) => (ACL_MEM_LOCATION_TYPE_DEVICE, device, size),
        Ok(Region::Host { size, .. }) => (ACL_MEM_LOCATION_TYPE_HOST, 0, size),
        _ => (ACL_MEM_LOCATION_TYPE_UNREGISTERED, 0, 0),
    };
    let page = if size >= MAPPED_BLOCK {
        MAPPED_BLOCK
    } else {
        4096
    };
    // SAFETY: checked non-null; the caller's contract.
    unsafe {
        *attributes = aclrtPtrAttributes {
            location: aclrtMemLocation { id, type_ },
            pageSize: page as u32,
            rsv: [0; 4],
        }
    };
    ACL_SUCCESS
}

/// `aclrtMemGetAddressRange`: the first address and size of the allocation
/// containing `ptr` (either out-pointer may be null).
///
/// # Safety
///
/// `pbase` and `psize` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemGetAddressRange(
    ptr: *mut c_void,
    pbase: *mut *mut c_void,
    psize: *mut usize,
) -> aclError {
    const F: &str = "aclrtMemGetAddressRange";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if ptr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: ptr is null"));
    }
    // The allocation itself (a virtual-memory mapping alone, not the
    // adjacent mappings its range may run into).
    let found = match state::memory().read().find(ptr as usize) {
        Some((base, a)) if (ptr as usize) < base + a.size => (base, a.size),
        _ => {
            return fail(
                PARAM_INVALID,
                format!("{F}: {ptr:p} lies in no live allocation of the runtime"),
            );
        }
    };
    // SAFETY: each checked non-null before writing; the caller's contract.
    unsafe {
        if !pbase.is_null() {
            *pbase = found.0 as *mut c_void;
        }
        if !psize.is_null() {
            *psize = found.1;
        }
    }
    ACL_SUCCESS
}

/// The checks of the 32-bit fills: `n` elements fit in `mem_size`, `ptr`
/// is 4-byte aligned. Returns the byte count.
fn d32_args(
    function: &str,
    ptr: *mut c_void,
    mem_size: usize,
    n: usize,
) -> Result<usize, aclError> {
    if ptr.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: ptr is null"),
        ));
    }
    let Some(bytes) = n.checked_mul(4).filter(|&b| b <= mem_size) else {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: N = {n} elements of 4 bytes do not fit in memSize {mem_size}"),
        ));
    };
    if !(ptr as usize).is_multiple_of(4) {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: ptr {ptr:p} is not aligned to 4 bytes"),
        ));
    }
    Ok(bytes)
}

fn pattern(value: u32, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n * 4);
    for _ in 0..n {
        v.extend_from_slice(&value.to_ne_bytes());
    }
    v
}

/// `aclrtMemsetD32`: fills `N` `u32` elements at `ptr` with `value`
/// (device memory of the current device, or pinned host memory).
///
/// # Safety
///
/// None: the range is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetD32(
    ptr: *mut c_void,
    memSize: usize,
    value: u32,
    N: usize,
) -> aclError {
    const F: &str = "aclrtMemsetD32";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if N == 0 {
        return ACL_SUCCESS;
    }
    tri!(d32_args(F, ptr, memSize, N));
    let Some(current) = state::current_device() else {
        return no_device(F);
    };
    match crate::mem::copy::fill_d32_sync(F, ptr as usize, N, value, current) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => super::memory::sync_fail(F, e),
    }
}

/// `aclrtMemsetD32Async`: [`aclrtMemsetD32`] of device memory of the
/// current device, queued on `stream` (null: the default stream). The
/// pattern is staged in host memory at the call (`4·N` bytes).
///
/// # Safety
///
/// None: the range and the stream are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetD32Async(
    ptr: *mut c_void,
    memSize: usize,
    value: u32,
    N: usize,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtMemsetD32Async";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if N == 0 {
        return ACL_SUCCESS;
    }
    let bytes = tri!(d32_args(F, ptr, memSize, N));
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(super::stream::takes_host_work(F, &s));
    let region = match crate::check::range(&state::memory().read(), F, "ptr", ptr as usize, bytes) {
        Ok(r @ Region::Device { device, .. }) if device == ctx.device => r,
        Ok(other) => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: {ptr:p} is not device memory of device {}: {other}",
                    ctx.device
                ),
            );
        }
        Err(e) => return fail(PARAM_INVALID, format!("{F}: ptr: {e}")),
    };
    let Some(dst_at) = Expect::of(region) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: internal: ptr lies in no allocation"),
        );
    };
    // The pattern is staged now and written when the task runs.
    super::memory_async::enqueue(
        F,
        &s,
        TaskKind::Upload {
            api: F,
            dst: ptr as usize,
            data: pattern(value, N),
            dst_at,
        },
    )
}

/// `aclrtDeviceGetUuid`: a 16-byte identifier of device `deviceId`, stable
/// for the simulated machine (derived from the device id and the host).
///
/// # Safety
///
/// `uuid` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceGetUuid(deviceId: i32, uuid: *mut aclrtUuid) -> aclError {
    const F: &str = "aclrtDeviceGetUuid";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if uuid.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: uuid is null"));
    }
    let count = crate::config::get().map_or(0, crate::config::Config::device_count);
    if deviceId < 0 || deviceId as u32 >= count {
        return fail(
            code(ACL_ERROR_RT_INVALID_DEVICEID),
            format!("{F}: device {deviceId} does not exist ({count} devices)"),
        );
    }
    let host = crate::comm::local::host_key();
    let hi = crate::comm::wire::fnv(
        &[host.to_le_bytes(), u64::from(deviceId as u32).to_le_bytes()].concat(),
    );
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&hi.to_le_bytes());
    bytes[8..12].copy_from_slice(b"CSIM");
    bytes[12..].copy_from_slice(&(deviceId as u32).to_le_bytes());
    // SAFETY: checked non-null; the caller's contract.
    unsafe {
        *uuid = aclrtUuid {
            bytes: bytes.map(|b| b as core::ffi::c_char),
        }
    };
    ACL_SUCCESS
}

/// The argument checks of a 2-D copy (as the runtime's
/// `CheckMemcpy2dParam`: null pointers, zero sizes, a width beyond a pitch,
/// and a kind other than H2D, D2H, D2D or DEFAULT are all 100000); returns
/// the copy and its kind.
fn args_2d(
    function: &str,
    (dst, dpitch): (*mut c_void, usize),
    (src, spitch): (*const c_void, usize),
    (width, height): (usize, usize),
    kind: aclrtMemcpyKind,
) -> Result<(Rows, CopyKind), aclError> {
    if dst.is_null() || src.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: dst or src is null"),
        ));
    }
    if width == 0 || height == 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: width {width} and height {height} must both be positive"),
        ));
    }
    if width > dpitch || width > spitch {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: width {width} is larger than dpitch {dpitch} or spitch {spitch}"),
        ));
    }
    if !matches!(
        kind,
        ACL_MEMCPY_HOST_TO_DEVICE
            | ACL_MEMCPY_DEVICE_TO_HOST
            | ACL_MEMCPY_DEVICE_TO_DEVICE
            | ACL_MEMCPY_DEFAULT
    ) {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: kind {kind} is not ACL_MEMCPY_HOST_TO_DEVICE, _DEVICE_TO_HOST, \
                 _DEVICE_TO_DEVICE or _DEFAULT"
            ),
        ));
    }
    let rows = Rows {
        dst: (dst as usize, dpitch),
        src: (src as usize, spitch),
        width,
        height,
    };
    if rows.spans().is_none() {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: the spans overflow"),
        ));
    }
    let kind = super::memory::copy_kind(kind).unwrap_or(CopyKind::Default);
    Ok((rows, kind))
}

/// `aclrtMemcpy2d`: copies `height` rows of `width` bytes, row `i` from
/// `src + i·spitch` to `dst + i·dpitch`, all checked first and copied under
/// one lock of the allocation table.
///
/// # Safety
///
/// Host ends that are not `aclrtMallocHost` memory must be valid for their
/// spans.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: aclrtMemcpyKind,
) -> aclError {
    const F: &str = "aclrtMemcpy2d";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let (rows, kind) = tri!(args_2d(
        F,
        (dst, dpitch),
        (src, spitch),
        (width, height),
        kind
    ));
    let Some(current) = state::current_device() else {
        return no_device(F);
    };
    tri!(common::capture_mode_allows(F));
    // SAFETY: the C caller's contract for host ends in no allocation.
    match unsafe { crate::mem::copy::copy_2d_sync(F, rows, kind, current) } {
        Ok(()) => ACL_SUCCESS,
        Err(e) => super::memory::sync_fail(F, e),
    }
}

/// `aclrtMemcpy2dAsync`: [`aclrtMemcpy2d`] on `stream` (null: the default
/// stream): one queued copy per row, all checked first; with pageable host
/// memory the stream is synchronised and the rows copied at once, as
/// `aclrtMemcpyAsync` does.
///
/// # Safety
///
/// As `aclrtMemcpyAsync`, for every row.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpy2dAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtMemcpy2dAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(common::stream_arg(F, stream));
    let (rows, kind) = tri!(args_2d(
        F,
        (dst, dpitch),
        (src, spitch),
        (width, height),
        kind
    ));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    let regions = rows.regions(F, &state::memory().read(), kind, ctx.device);
    let (dr, sr) = match regions {
        Ok(r) => r,
        Err(msg) => return fail(PARAM_INVALID, msg),
    };
    if dr.device().is_none() && sr.device().is_none() {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!("{F}: host-to-host asynchronous copies are not supported; use aclrtMemcpy2d"),
        );
    }
    if dr == Region::Unregistered || sr == Region::Unregistered {
        // Pageable host memory: wait for the stream, then copy now.
        tri!(common::pageable_copy_allowed(F, &s));
        if !common::is_non_host(&s) {
            tri!(common::not_inside_own_callback(F, &s));
            if let Err(e) = s.synchronize(None) {
                return common::report_sync(F, &s, e, code(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT));
            }
        }
        // SAFETY: the C caller's contract for host ends in no allocation.
        return match unsafe { crate::mem::copy::copy_2d_sync(F, rows, kind, ctx.device) } {
            Ok(()) => ACL_SUCCESS,
            Err(e) => super::memory::sync_fail(F, e),
        };
    }
    tri!(super::stream::takes_host_work(F, &s));
    let (Some(dst_at), Some(src_at)) = (Expect::of(dr), Expect::of(sr)) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: internal: an end lies in no allocation"),
        );
    };
    for i in 0..height {
        let rc = super::memory_async::enqueue(
            F,
            &s,
            TaskKind::Copy {
                api: F,
                dst: dst as usize + i * dpitch,
                src: src as usize + i * spitch,
                count: width,
                dst_at,
                src_at,
            },
        );
        if rc != ACL_SUCCESS {
            return rc;
        }
    }
    ACL_SUCCESS
}

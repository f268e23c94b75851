//! Asynchronous memory: `aclrtMemcpyAsync`, `aclrtMemsetAsync`.
//!
//! Arguments are checked when the call is made, with the runtime's codes and
//! order (hicann/runtime `src/acl/aclrt_impl/memory.cpp`, then
//! `src/runtime/api/impl/api_error.cc` `MemcpyAsync`/`MemsetAsync` and
//! `api_impl.cc`): `count == 0` → success; null pointers and a kind outside
//! 0..=5 → 100000; a destroyed stream → 107017; `count > destMax` (so
//! `destMax == 0` too) → 107000; no current context → 107002; the pointers'
//! provenance as for `aclrtMemcpy` (bounds, host vs device, current device,
//! peer access between devices) → 107000; host to host →
//! `ACL_ERROR_RT_FEATURE_NOT_SUPPORT` (207000); `dst == src` → success; a
//! stream of another context → 107003.
//!
//! What happens next depends on the host memory (`docs/zh/api_ref/11-03_memory_copy_and_set.md`):
//!
//! - device memory and pinned host memory (`aclrtMallocHost`): the copy is
//!   queued and really happens later, on the stream's worker. When it runs,
//!   both ranges are validated again; memory freed (or reallocated) in
//!   between, or out of bounds, is a fault of the queued task
//!   (`ACL_ERROR_RT_SYS_DMA`, 507013, see `rt::stream`), reported by the next
//!   synchronisation, not by this call.
//! - pageable host memory (plain `malloc`, a Rust `Vec`): the call waits for
//!   the stream's earlier work, then copies synchronously and returns when
//!   the copy is done (`ApiErrorDecorator::MemcpyAsync` turns it into
//!   "implicit stream synchronisation + synchronous copy"). A fault of the
//!   earlier work is returned by this call then.
//! - `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: the host data is staged at the call
//!   (so the host buffer may be reused at once) and the device write is
//!   queued.
//!
//! `aclrtMemsetAsync` fills device memory of the current device: checks as
//! for `aclrtMemset` (count 0, null, `count > maxCount`, provenance), the
//! fill queued and re-validated when it runs.

use super::common::code;
use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use super::memory::{check_copy, kind_name};
use super::stream::takes_host_work;
use crate::check::{self, Access, Use};
use crate::faults;
use crate::recent_error::fail;
use crate::rt::stream::{Expect, Stream, TaskKind};
use crate::state::{self, Region};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_SUCCESS, aclError, aclrtMemcpyKind, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

pub(crate) fn enqueue(function: &str, s: &Stream, task: TaskKind) -> aclError {
    match s.enqueue(|_| task) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtMemcpyAsync`: a copy of `count` bytes queued on `stream` (see the
/// module documentation for pageable host memory).
///
/// # Safety
///
/// Host ends that are not `aclrtMallocHost` memory must be valid for `count`
/// bytes during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemcpyAsync(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtMemcpyAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if count == 0 {
        return ACL_SUCCESS;
    }
    if dst.is_null() {
        return common::null_arg(F, "dst");
    }
    if src.is_null() {
        return common::null_arg(F, "src");
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
    let s = tri!(common::stream_arg(F, stream));
    if count > dest_max {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} is larger than destMax {dest_max}"),
        );
    }
    let ctx = tri!(common::current(F));
    let (dst_addr, src_addr) = (dst as usize, src as usize);
    let (dst_region, src_region) = {
        let table = state::memory().read();
        let d = match check::range(&table, F, "dst", dst_addr, count) {
            Ok(r) => r,
            Err(e) => return fail(PARAM_INVALID, format!("{F}: dst: {e}")),
        };
        let sr = match check::range(&table, F, "src", src_addr, count) {
            Ok(r) => r,
            Err(e) => return fail(PARAM_INVALID, format!("{F}: src: {e}")),
        };
        (d, sr)
    };
    let checked = match check_copy(kind, dst_addr, dst_region, src_addr, src_region, ctx.device) {
        Ok(c) => c,
        Err(e) => return fail(PARAM_INVALID, format!("{F} ({}): {e}", kind_name(kind))),
    };
    // SAFETY: forwarded caller contract.
    let rc =
        unsafe { memcpy_async_checked(dst, src, count, kind, s, &ctx, (dst_region, src_region)) };
    if rc == ACL_SUCCESS {
        super::memory::report_copy_kind(F, checked.finding);
    }
    rc
}

/// The rest of `aclrtMemcpyAsync`, once the copy is checked.
///
/// # Safety
///
/// As `aclrtMemcpyAsync`.
unsafe fn memcpy_async_checked(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    s: Option<Arc<Stream>>,
    ctx: &Arc<crate::rt::Context>,
    (dst_region, src_region): (Region, Region),
) -> aclError {
    const F: &str = "aclrtMemcpyAsync";
    let (dst_addr, src_addr) = (dst as usize, src as usize);
    if dst_region.device().is_none() && src_region.device().is_none() {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: host-to-host asynchronous copies are not supported (dst and src are both \
                 host memory); use aclrtMemcpy or a host copy"
            ),
        );
    }
    if dst_addr == src_addr {
        return ACL_SUCCESS;
    }
    let s = common::or_default(s, ctx);
    let pageable = dst_region == Region::Unregistered || src_region == Region::Unregistered;
    if kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE {
        return upload(F, &s, ctx, dst_addr, dst_region, src, count);
    }
    // The stream must belong to the current context whatever the host
    // memory is (pageable copies included).
    tri!(common::in_context(F, &s, ctx));
    if pageable {
        return pageable_copy(F, &s, dst, src, count, kind, ctx.device);
    }
    tri!(takes_host_work(F, &s));
    let (Some(dst_at), Some(src_at)) = (Expect::of(dst_region), Expect::of(src_region)) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: internal: a queued end lies in no allocation"),
        );
    };
    enqueue(
        F,
        &s,
        TaskKind::Copy {
            api: F,
            dst: dst_addr,
            src: src_addr,
            count,
            dst_at,
            src_at,
        },
    )
}

/// `ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE`: stage the host bytes now, queue the
/// device write.
fn upload(
    function: &str,
    s: &Arc<Stream>,
    ctx: &crate::rt::Context,
    dst: usize,
    dst_region: Region,
    src: *const c_void,
    count: usize,
) -> aclError {
    tri!(common::in_context(function, s, ctx));
    tri!(takes_host_work(function, s));
    let Some(dst_at) = Expect::of(dst_region) else {
        return fail(
            PARAM_INVALID,
            format!("{function}: internal: dst lies in no allocation"),
        );
    };
    // The host data is read now: a pinned source must not be written by
    // queued work meanwhile.
    let read = [Access::new("src", src as usize, count, Use::Read)];
    if let Err(e) = check::host_access(function, &read) {
        return rt_fail(function, e);
    }
    let data = {
        // Held while reading, so a pinned source cannot be freed meanwhile.
        let _table = state::memory().read();
        // SAFETY: `src` is host memory valid for `count` bytes: a live pinned
        // allocation (validated) or, by the caller's contract, plain memory.
        unsafe { std::slice::from_raw_parts(src.cast::<u8>(), count) }.to_vec()
    };
    enqueue(
        function,
        s,
        TaskKind::Upload {
            api: "aclrtMemcpyAsync",
            dst,
            data,
            dst_at,
        },
    )
}

/// Pageable host memory: wait for the stream, then copy synchronously.
fn pageable_copy(
    function: &str,
    s: &Arc<Stream>,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: aclrtMemcpyKind,
    current: u32,
) -> aclError {
    tri!(common::pageable_copy_allowed(function, s));
    if !common::is_non_host(s) {
        tri!(common::not_inside_own_callback(function, s));
        if let Err(e) = s.synchronize(None) {
            return common::report_sync(function, s, e, code(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT));
        }
    }
    let Some(kind) = super::memory::copy_kind(kind) else {
        return fail(
            PARAM_INVALID,
            format!("{function}: kind {kind} is not an aclrtMemcpyKind"),
        );
    };
    // Validated again inside: the wait above held no lock.
    // SAFETY: the C caller's contract for pageable host ends.
    let copied = unsafe {
        crate::mem::copy::copy_now(function, dst as usize, src as usize, count, kind, current)
    };
    match copied {
        Ok(()) => ACL_SUCCESS,
        Err(e) => super::memory::sync_fail(function, e),
    }
}

/// `aclrtMemsetAsync`: a fill of `count` bytes of device memory with the low
/// byte of `value`, queued on `stream`.
///
/// # Safety
///
/// None beyond the C contract: the range is validated now and when the fill
/// runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtMemsetAsync(
    dev_ptr: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtMemsetAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if count == 0 {
        return ACL_SUCCESS;
    }
    if dev_ptr.is_null() {
        return common::null_arg(F, "devPtr");
    }
    let s = tri!(common::stream_arg(F, stream));
    if count > max_count {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} is larger than maxCount {max_count}"),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    let addr = dev_ptr as usize;
    let region = match check::range(&state::memory().read(), F, "devPtr", addr, count) {
        Ok(r) => r,
        Err(e) => return fail(PARAM_INVALID, format!("{F}: devPtr: {e}")),
    };
    match region {
        Region::Device { device, .. } if device == ctx.device => {}
        Region::Device { device, .. } => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: devPtr {addr:#x} is on device {device}, but the current device of this \
                     thread is {}",
                    ctx.device
                ),
            );
        }
        other => {
            return fail(
                PARAM_INVALID,
                format!("{F}: devPtr: {addr:#x} is not device memory: it is {other}"),
            );
        }
    }
    let Some(dst_at) = Expect::of(region) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: internal: devPtr lies in no allocation"),
        );
    };
    enqueue(
        F,
        &s,
        TaskKind::Fill {
            api: F,
            dst: addr,
            count,
            value: value as u8,
            dst_at,
        },
    )
}

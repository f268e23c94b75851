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
//! their safety condition; so are the ones that can invalidate live handles
//! ([`set_device`], [`reset_device`], [`finalize`]).

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

/// `aclFinalize`: ends the process's AscendCL session.
///
/// [`Runtime`](crate::Runtime) calls it when its last handle is dropped;
/// call it yourself only for a session you started with [`init`] and that
/// no safe handle uses.
///
/// # Safety
///
/// `aclFinalize` releases every device, context, stream, event and
/// allocation of the process. The caller must make sure that no handle of
/// this crate (a [`Runtime`](crate::Runtime), [`Device`](crate::Device),
/// [`Stream`](crate::Stream), buffer, event, operator or model) and no raw
/// handle still in use exists, on any thread: their later calls and drops
/// would reach freed runtime objects.
///
/// # Errors
///
/// The runtime's error (e.g. `ACL_ERROR_REPEAT_FINALIZE`).
///
/// See [`set_device`] for an example. Without an `unsafe` block the call
/// does not compile (error E0133):
///
/// ```compile_fail,E0133
/// let _ = acl::result::finalize();
/// ```
#[doc(alias = "aclFinalize")]
pub unsafe fn finalize() -> Result<()> {
    // SAFETY: no arguments; the caller's contract covers what it releases.
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

/// `aclrtSetDevice`: retains `device`'s primary context (creating it on
/// first use) and makes it the calling thread's current context.
/// [`Device::new`](crate::Device::new) is the safe way to open a device.
///
/// # Safety
///
/// The caller must make sure that no handle of this crate is used on the
/// calling thread afterwards while it relies on the thread's previous
/// current context: this crate remembers, per thread, which device's context
/// it made current and skips binding it again, so a context switched behind
/// its back would make later calls on this thread run against another
/// device (e.g. free or copy memory of one device with another's context
/// current). Each successful call retains the context once; balance it with
/// one [`reset_device`].
///
/// # Errors
///
/// `ACL_ERROR_RT_INVALID_DEVICEID` (107001) for an ordinal out of range;
/// the runtime's error.
///
/// # Examples
///
/// A whole session by hand, with no safe handle around it:
///
/// ```
/// # cann_sim::install().unwrap();
/// acl::result::init(None)?;
/// // SAFETY: this program holds no handle of this crate, so no cached
/// // binding can go stale and nothing uses what the resets release.
/// unsafe {
///     acl::result::set_device(0)?;
///     acl::result::reset_device(0)?;
///     acl::result::finalize()?;
/// }
/// # Ok::<(), acl::Error>(())
/// ```
///
/// Each of the three is `unsafe`; without an `unsafe` block the call does
/// not compile (error E0133):
///
/// ```compile_fail,E0133
/// let _ = acl::result::set_device(0);
/// ```
#[doc(alias = "aclrtSetDevice")]
pub unsafe fn set_device(device: i32) -> Result<()> {
    // SAFETY: plain integer argument; the caller's contract covers the
    // change of the thread's current context.
    check("aclrtSetDevice", unsafe { sys::aclrtSetDevice(device) })
}

/// `aclrtResetDevice`: releases one retain of `device`'s primary context;
/// the last release destroys the context with every stream, event and
/// allocation made in it.
///
/// # Safety
///
/// The caller must own the retain it releases (a successful
/// [`set_device`] of its own), and, when that may be the last one, no handle
/// of this crate on `device` ([`Device`](crate::Device),
/// [`Stream`](crate::Stream), buffers, events, operators, models) may still
/// exist: their later calls and drops would use destroyed runtime objects.
/// `Device` itself balances its retain when its last handle is dropped.
///
/// # Errors
///
/// The runtime's error.
///
/// See [`set_device`] for an example. Without an `unsafe` block the call
/// does not compile (error E0133):
///
/// ```compile_fail,E0133
/// let _ = acl::result::reset_device(0);
/// ```
#[doc(alias = "aclrtResetDevice")]
pub unsafe fn reset_device(device: i32) -> Result<()> {
    // SAFETY: plain integer argument; the caller's contract covers what the
    // release destroys.
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

/// `aclrtDeviceGetUuid`: the 16-byte identifier of `device`.
#[doc(alias = "aclrtDeviceGetUuid")]
pub fn device_get_uuid(device: i32) -> Result<[u8; 16]> {
    let mut u = sys::aclrtUuid { bytes: [0; 16] };
    // SAFETY: a valid out-pointer.
    check("aclrtDeviceGetUuid", unsafe {
        sys::aclrtDeviceGetUuid(device, &mut u)
    })?;
    Ok(u.bytes.map(|b| b as u8))
}

/// `aclrtPointerGetAttributes`: where the memory at `ptr` lives. The
/// runtime only looks the address up.
#[doc(alias = "aclrtPointerGetAttributes")]
#[allow(
    clippy::not_unsafe_ptr_arg_deref,
    reason = "the runtime looks the address up, never dereferences it"
)]
pub fn pointer_get_attributes(ptr: *const c_void) -> Result<sys::aclrtPtrAttributes> {
    let mut a = sys::aclrtPtrAttributes {
        location: sys::aclrtMemLocation { id: 0, type_: 0 },
        pageSize: 0,
        rsv: [0; 4],
    };
    // SAFETY: a valid out-pointer; `ptr` is only looked up.
    check("aclrtPointerGetAttributes", unsafe {
        sys::aclrtPointerGetAttributes(ptr, &mut a)
    })?;
    Ok(a)
}

/// `aclrtMemGetAddressRange`: the first address and size of the
/// allocation containing `ptr`. The runtime only looks the address up.
#[doc(alias = "aclrtMemGetAddressRange")]
#[allow(
    clippy::not_unsafe_ptr_arg_deref,
    reason = "the runtime looks the address up, never dereferences it"
)]
pub fn mem_get_address_range(ptr: *mut c_void) -> Result<(*mut c_void, usize)> {
    let (mut base, mut size) = (std::ptr::null_mut(), 0usize);
    // SAFETY: valid out-pointers; `ptr` is only looked up.
    check("aclrtMemGetAddressRange", unsafe {
        sys::aclrtMemGetAddressRange(ptr, &mut base, &mut size)
    })?;
    Ok((base, size))
}

/// `aclrtMemsetD32`: fills `n` `u32` elements at `ptr` with `value`.
///
/// # Safety
///
/// `ptr` is device memory (or pinned host memory) of at least `mem_size`
/// bytes that nothing else uses meanwhile.
#[doc(alias = "aclrtMemsetD32")]
pub unsafe fn memset_d32(ptr: *mut c_void, mem_size: usize, value: u32, n: usize) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemsetD32", unsafe {
        sys::aclrtMemsetD32(ptr, mem_size, value, n)
    })
}

/// `aclrtMemsetD32Async`: [`memset_d32`] queued on `stream`.
///
/// # Safety
///
/// As [`memset_d32`], until the fill has run.
#[doc(alias = "aclrtMemsetD32Async")]
pub unsafe fn memset_d32_async(
    ptr: *mut c_void,
    mem_size: usize,
    value: u32,
    n: usize,
    stream: sys::aclrtStream,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemsetD32Async", unsafe {
        sys::aclrtMemsetD32Async(ptr, mem_size, value, n, stream)
    })
}

/// `aclrtMemcpy2d`: `height` rows of `width` bytes, row `i` from
/// `src + i·spitch` to `dst + i·dpitch`.
///
/// # Safety
///
/// Both spans (`(height − 1) · pitch + width` bytes) are valid memory of
/// the kinds `kind` names, unused by queued work meanwhile.
#[doc(alias = "aclrtMemcpy2d")]
pub unsafe fn memcpy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    (width, height): (usize, usize),
    kind: sys::aclrtMemcpyKind,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemcpy2d", unsafe {
        sys::aclrtMemcpy2d(dst, dpitch, src, spitch, width, height, kind)
    })
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

// ---- contexts ----

/// `aclrtGetCurrentContext`.
#[doc(alias = "aclrtGetCurrentContext")]
pub fn get_current_context() -> Result<sys::aclrtContext> {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtGetCurrentContext", unsafe {
        sys::aclrtGetCurrentContext(&mut ctx)
    })?;
    Ok(ctx)
}

/// `aclrtSetCurrentContext`.
///
/// # Safety
///
/// `ctx` is a live context.
#[doc(alias = "aclrtSetCurrentContext")]
pub unsafe fn set_current_context(ctx: sys::aclrtContext) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSetCurrentContext", unsafe {
        sys::aclrtSetCurrentContext(ctx)
    })
}

// ---- streams ----

/// `aclrtCreateStreamWithConfig`.
#[doc(alias = "aclrtCreateStreamWithConfig")]
pub fn create_stream_with_config(priority: u32, flags: u32) -> Result<sys::aclrtStream> {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtCreateStreamWithConfig", unsafe {
        sys::aclrtCreateStreamWithConfig(&mut s, priority, flags)
    })?;
    Ok(s)
}

/// `aclrtDestroyStream`.
///
/// # Safety
///
/// `stream` is live, not the default stream, and not used afterwards.
#[doc(alias = "aclrtDestroyStream")]
pub unsafe fn destroy_stream(stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtDestroyStream", unsafe {
        sys::aclrtDestroyStream(stream)
    })
}

/// `aclrtSynchronizeStream`.
///
/// # Safety
///
/// `stream` is live or null (the current context's default stream).
#[doc(alias = "aclrtSynchronizeStream")]
pub unsafe fn synchronize_stream(stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSynchronizeStream", unsafe {
        sys::aclrtSynchronizeStream(stream)
    })
}

/// `aclrtSynchronizeStreamWithTimeout` (milliseconds, -1 for no limit).
///
/// # Safety
///
/// `stream` is live or null.
#[doc(alias = "aclrtSynchronizeStreamWithTimeout")]
pub unsafe fn synchronize_stream_with_timeout(
    stream: sys::aclrtStream,
    timeout_ms: i32,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSynchronizeStreamWithTimeout", unsafe {
        sys::aclrtSynchronizeStreamWithTimeout(stream, timeout_ms)
    })
}

/// `aclrtStreamQuery`: `true` when all queued work is complete.
///
/// # Safety
///
/// `stream` is live or null.
#[doc(alias = "aclrtStreamQuery")]
#[inline]
pub unsafe fn stream_query(stream: sys::aclrtStream) -> Result<bool> {
    let mut status = sys::ACL_STREAM_STATUS_NOT_READY;
    // SAFETY: the caller's contract; valid out-pointer.
    check("aclrtStreamQuery", unsafe {
        sys::aclrtStreamQuery(stream, &mut status)
    })?;
    Ok(status == sys::ACL_STREAM_STATUS_COMPLETE)
}

/// `aclrtStreamWaitEvent`.
///
/// # Safety
///
/// `stream` is live or null; `event` is live.
#[doc(alias = "aclrtStreamWaitEvent")]
pub unsafe fn stream_wait_event(stream: sys::aclrtStream, event: sys::aclrtEvent) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtStreamWaitEvent", unsafe {
        sys::aclrtStreamWaitEvent(stream, event)
    })
}

/// `aclrtLaunchHostFunc`.
///
/// # Safety
///
/// `stream` is live or null; `func(args)` is sound to call once on any thread.
#[doc(alias = "aclrtLaunchHostFunc")]
pub unsafe fn launch_host_func(
    stream: sys::aclrtStream,
    func: sys::aclrtHostFunc,
    args: *mut c_void,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtLaunchHostFunc", unsafe {
        sys::aclrtLaunchHostFunc(stream, func, args)
    })
}

// ---- events ----

/// `aclrtCreateEventWithFlag`.
#[doc(alias = "aclrtCreateEventWithFlag")]
pub fn create_event_with_flag(flags: u32) -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtCreateEventWithFlag", unsafe {
        sys::aclrtCreateEventWithFlag(&mut e, flags)
    })?;
    Ok(e)
}

/// `aclrtCreateEventExWithFlag` (CANN 8.0.RC2 and later): an event that
/// can be recorded again and again, each `aclrtStreamWaitEvent` waiting for
/// the record made before it.
#[doc(alias = "aclrtCreateEventExWithFlag")]
pub fn create_event_ex_with_flag(flags: u32) -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtCreateEventExWithFlag", unsafe {
        sys::aclrtCreateEventExWithFlag(&mut e, flags)
    })?;
    Ok(e)
}

/// `aclrtCreateEvent`.
#[doc(alias = "aclrtCreateEvent")]
pub fn create_event() -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtCreateEvent", unsafe { sys::aclrtCreateEvent(&mut e) })?;
    Ok(e)
}

/// `aclrtDestroyEvent`.
///
/// # Safety
///
/// `event` is live, no queued wait or synchronize uses it, and it is not used afterwards.
#[doc(alias = "aclrtDestroyEvent")]
pub unsafe fn destroy_event(event: sys::aclrtEvent) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtDestroyEvent", unsafe {
        sys::aclrtDestroyEvent(event)
    })
}

/// `aclrtRecordEvent`.
///
/// # Safety
///
/// `event` is live; `stream` is live or null.
#[doc(alias = "aclrtRecordEvent")]
pub unsafe fn record_event(event: sys::aclrtEvent, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtRecordEvent", unsafe {
        sys::aclrtRecordEvent(event, stream)
    })
}

/// `aclrtQueryEventStatus`: `true` when the recorded work is complete.
///
/// # Safety
///
/// `event` is live.
#[doc(alias = "aclrtQueryEventStatus")]
pub unsafe fn query_event_status(event: sys::aclrtEvent) -> Result<bool> {
    let mut status = sys::ACL_EVENT_RECORDED_STATUS_NOT_READY;
    // SAFETY: the caller's contract; valid out-pointer.
    check("aclrtQueryEventStatus", unsafe {
        sys::aclrtQueryEventStatus(event, &mut status)
    })?;
    Ok(status == sys::ACL_EVENT_RECORDED_STATUS_COMPLETE)
}

/// `aclrtSynchronizeEvent`.
///
/// # Safety
///
/// `event` is live.
#[doc(alias = "aclrtSynchronizeEvent")]
pub unsafe fn synchronize_event(event: sys::aclrtEvent) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSynchronizeEvent", unsafe {
        sys::aclrtSynchronizeEvent(event)
    })
}

/// `aclrtSynchronizeEventWithTimeout` (milliseconds, -1 for no limit).
///
/// # Safety
///
/// `event` is live.
#[doc(alias = "aclrtSynchronizeEventWithTimeout")]
pub unsafe fn synchronize_event_with_timeout(
    event: sys::aclrtEvent,
    timeout_ms: i32,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSynchronizeEventWithTimeout", unsafe {
        sys::aclrtSynchronizeEventWithTimeout(event, timeout_ms)
    })
}

/// `aclrtEventElapsedTime`: milliseconds from `start` to `end`.
///
/// # Safety
///
/// Both events are live.
#[doc(alias = "aclrtEventElapsedTime")]
pub unsafe fn event_elapsed_time(start: sys::aclrtEvent, end: sys::aclrtEvent) -> Result<f32> {
    let mut ms = 0f32;
    // SAFETY: the caller's contract; valid out-pointer.
    check("aclrtEventElapsedTime", unsafe {
        sys::aclrtEventElapsedTime(&mut ms, start, end)
    })?;
    Ok(ms)
}

// ---- asynchronous memory ----

/// `aclrtMemcpyAsync`.
///
/// # Safety
///
/// As [`memcpy`]; both ranges stay valid and unaliased by the host until the
/// copy has run; `stream` is live or null.
#[doc(alias = "aclrtMemcpyAsync")]
pub unsafe fn memcpy_async(
    dst: *mut c_void,
    dest_max: usize,
    src: *const c_void,
    count: usize,
    kind: sys::aclrtMemcpyKind,
    stream: sys::aclrtStream,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemcpyAsync", unsafe {
        sys::aclrtMemcpyAsync(dst, dest_max, src, count, kind, stream)
    })
}

/// `aclrtMemsetAsync`.
///
/// # Safety
///
/// `dst` is device memory valid for `max_count` bytes until the fill has run;
/// `stream` is live or null.
#[doc(alias = "aclrtMemsetAsync")]
pub unsafe fn memset_async(
    dst: *mut c_void,
    max_count: usize,
    value: i32,
    count: usize,
    stream: sys::aclrtStream,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtMemsetAsync", unsafe {
        sys::aclrtMemsetAsync(dst, max_count, value, count, stream)
    })
}

/// `aclrtMallocHost`: page-locked host memory.
#[doc(alias = "aclrtMallocHost")]
pub fn malloc_host(size: usize) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("aclrtMallocHost", unsafe {
        sys::aclrtMallocHost(&mut ptr, size)
    })?;
    Ok(ptr)
}

/// `aclrtFreeHost`.
///
/// # Safety
///
/// `ptr` came from `aclrtMallocHost`, is not freed yet, and no queued work uses it.
#[doc(alias = "aclrtFreeHost")]
pub unsafe fn free_host(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtFreeHost", unsafe { sys::aclrtFreeHost(ptr) })
}

// ---- devices ----

/// `aclrtDeviceCanAccessPeer`.
#[doc(alias = "aclrtDeviceCanAccessPeer")]
pub fn device_can_access_peer(device: i32, peer: i32) -> Result<bool> {
    let mut can = 0i32;
    // SAFETY: valid out-pointer.
    check("aclrtDeviceCanAccessPeer", unsafe {
        sys::aclrtDeviceCanAccessPeer(&mut can, device, peer)
    })?;
    Ok(can != 0)
}

/// `aclrtDeviceEnablePeerAccess` (from the current device; `flags` must be 0).
#[doc(alias = "aclrtDeviceEnablePeerAccess")]
pub fn device_enable_peer_access(peer: i32, flags: u32) -> Result<()> {
    // SAFETY: plain integer arguments.
    check("aclrtDeviceEnablePeerAccess", unsafe {
        sys::aclrtDeviceEnablePeerAccess(peer, flags)
    })
}

/// `aclrtDeviceDisablePeerAccess`.
#[doc(alias = "aclrtDeviceDisablePeerAccess")]
pub fn device_disable_peer_access(peer: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    check("aclrtDeviceDisablePeerAccess", unsafe {
        sys::aclrtDeviceDisablePeerAccess(peer)
    })
}

/// `aclrtGetDeviceInfo`.
#[doc(alias = "aclrtGetDeviceInfo")]
pub fn get_device_info(device: u32, attr: sys::aclrtDevAttr) -> Result<i64> {
    let mut v = 0i64;
    // SAFETY: valid out-pointer.
    check("aclrtGetDeviceInfo", unsafe {
        sys::aclrtGetDeviceInfo(device, attr, &mut v)
    })?;
    Ok(v)
}

/// `aclrtGetDeviceCapability`.
#[doc(alias = "aclrtGetDeviceCapability")]
pub fn get_device_capability(device: i32, feature: sys::aclrtDevFeatureType) -> Result<i32> {
    let mut v = 0i32;
    // SAFETY: valid out-pointer.
    check("aclrtGetDeviceCapability", unsafe {
        sys::aclrtGetDeviceCapability(device, feature, &mut v)
    })?;
    Ok(v)
}

/// `aclrtDeviceGetStreamPriorityRange`: (least, greatest).
#[doc(alias = "aclrtDeviceGetStreamPriorityRange")]
pub fn device_get_stream_priority_range() -> Result<(i32, i32)> {
    let (mut least, mut greatest) = (0i32, 0i32);
    // SAFETY: valid out-pointers.
    check("aclrtDeviceGetStreamPriorityRange", unsafe {
        sys::aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest)
    })?;
    Ok((least, greatest))
}

/// `aclrtSynchronizeDevice`: waits for all work queued on the current device.
#[doc(alias = "aclrtSynchronizeDevice")]
pub fn synchronize_device() -> Result<()> {
    // SAFETY: no arguments.
    check("aclrtSynchronizeDevice", unsafe {
        sys::aclrtSynchronizeDevice()
    })
}

// ---- callbacks ----

/// `aclrtSubscribeReport`: callbacks of `stream` will run on thread `thread_id`.
///
/// # Safety
///
/// `stream` is live or null.
#[doc(alias = "aclrtSubscribeReport")]
pub unsafe fn subscribe_report(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtSubscribeReport", unsafe {
        sys::aclrtSubscribeReport(thread_id, stream)
    })
}

/// `aclrtUnSubscribeReport`.
///
/// # Safety
///
/// `stream` is live or null.
#[doc(alias = "aclrtUnSubscribeReport")]
pub unsafe fn unsubscribe_report(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtUnSubscribeReport", unsafe {
        sys::aclrtUnSubscribeReport(thread_id, stream)
    })
}

/// `aclrtLaunchCallback`.
///
/// # Safety
///
/// `stream` is live or null; `func(user_data)` is sound to call once on the
/// subscribed thread.
#[doc(alias = "aclrtLaunchCallback")]
pub unsafe fn launch_callback(
    func: sys::aclrtCallback,
    user_data: *mut c_void,
    block: sys::aclrtCallbackBlockType,
    stream: sys::aclrtStream,
) -> Result<()> {
    // SAFETY: the caller's contract.
    check("aclrtLaunchCallback", unsafe {
        sys::aclrtLaunchCallback(func, user_data, block, stream)
    })
}

/// `aclrtProcessReport`: runs the callbacks queued for the calling thread,
/// waiting up to `timeout_ms` (-1: forever).
#[doc(alias = "aclrtProcessReport")]
pub fn process_report(timeout_ms: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    check("aclrtProcessReport", unsafe {
        sys::aclrtProcessReport(timeout_ms)
    })
}

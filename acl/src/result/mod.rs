//! Thin, `Result`-returning calls: one function per AscendCL function, no
//! ownership, no state. The safe types of this crate are built on these, and
//! this module is the only one that names `acl_sys`: every C call of the
//! crate is made here (`cargo xtask lint`, run in CI, fails otherwise).
//!
//! **Naming rule**: the C name without its `aclrt`/`acl` prefix, in
//! snake_case (`aclrtGetDeviceCount` → [`get_device_count`], `aclrtMalloc` →
//! [`malloc`], `aclInit` → [`init`], `aclmdlLoadFromFile` →
//! [`mdl_load_from_file`], `aclopSetAttrInt` → [`op_set_attr_int`],
//! `aclCreateTensorDesc` → [`create_tensor_desc`]). Every function carries
//! `#[doc(alias = "<C name>")]` for each C function it calls. Out-parameters
//! become return values; a non-zero `aclError` becomes
//! [`Error::Acl`](crate::Error::Acl) with the runtime's message. The files
//! of this module group the functions by family; all are re-exported here.
//!
//! Functions that take raw pointers or handles are `unsafe`, with the C
//! contract as their safety condition; so are the ones that can invalidate
//! live handles ([`set_device`], [`reset_device`], [`finalize`]).
//!
//! The C types and constants the safe layer holds (handles, enums, limits)
//! are re-exported in [`raw`], which has no functions.

use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, c_void};

/// Calls the C function `$f` and checks the `aclError` it returns: the
/// name is written once, for the call and for the error. Expands to a call
/// of an `unsafe` function, so it is used inside an `unsafe` block whose
/// `SAFETY` comment states the C contract.
macro_rules! call {
    ($f:ident($($arg:expr),* $(,)?)) => {
        $crate::error::check(stringify!($f), sys::$f($($arg),*))
    };
}

mod aclnn;
mod aclop;
mod control;
mod dump;
mod graph;
mod ipc;
mod kernel;
mod mdl;
mod prof;
pub mod raw;
mod tdt;
mod vmm;

pub use aclnn::*;
pub use aclop::*;
pub use control::*;
pub use dump::*;
pub use graph::*;
pub use ipc::*;
pub use kernel::*;
pub use mdl::*;
pub use prof::*;
pub use tdt::*;
pub use vmm::*;

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
    unsafe { call!(aclFinalize()) }
}

/// `aclGetRecentErrMsg`: the text the runtime keeps for the calling
/// thread (empty when it has none), copied.
/// [`crate::error::take_recent_message`] tells a new text from one read
/// before.
#[doc(alias = "aclGetRecentErrMsg")]
pub fn get_recent_err_msg() -> Result<String> {
    // SAFETY: no arguments; the result is null or a NUL-terminated string
    // owned by the runtime, valid until the next call on this thread, and
    // copied at once.
    Ok(unsafe { c_string(sys::aclGetRecentErrMsg()?) })
}

/// `aclrtGetRunMode`: whether the program runs on the device's own CPU
/// (`ACL_DEVICE`) or on a host with the devices attached (`ACL_HOST`).
#[doc(alias = "aclrtGetRunMode")]
pub fn get_run_mode() -> Result<sys::aclrtRunMode> {
    let mut mode: sys::aclrtRunMode = 0;
    // SAFETY: a valid out-pointer.
    unsafe { call!(aclrtGetRunMode(&mut mode)) }?;
    Ok(mode)
}

/// `aclrtGetVersion`: (major, minor, patch).
#[doc(alias = "aclrtGetVersion")]
pub fn get_version() -> Result<(i32, i32, i32)> {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: three valid out-pointers.
    unsafe { call!(aclrtGetVersion(&mut a, &mut b, &mut c)) }?;
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
    unsafe { call!(aclrtGetDeviceCount(&mut n)) }?;
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
    unsafe { call!(aclrtSetDevice(device)) }
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
    unsafe { call!(aclrtResetDevice(device)) }
}

/// `aclrtGetDevice`: the calling thread's current device.
#[doc(alias = "aclrtGetDevice")]
pub fn get_device() -> Result<i32> {
    let mut d = 0i32;
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtGetDevice(&mut d)) }?;
    Ok(d)
}

/// `aclrtDeviceGetUuid`: the 16-byte identifier of `device`.
#[doc(alias = "aclrtDeviceGetUuid")]
pub fn device_get_uuid(device: i32) -> Result<[u8; 16]> {
    let mut u = sys::aclrtUuid { bytes: [0; 16] };
    // SAFETY: a valid out-pointer.
    unsafe { call!(aclrtDeviceGetUuid(device, &mut u)) }?;
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
    unsafe { call!(aclrtPointerGetAttributes(ptr, &mut a)) }?;
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
    unsafe { call!(aclrtMemGetAddressRange(ptr, &mut base, &mut size)) }?;
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
    unsafe { call!(aclrtMemsetD32(ptr, mem_size, value, n)) }
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
    unsafe { call!(aclrtMemsetD32Async(ptr, mem_size, value, n, stream)) }
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
    unsafe { call!(aclrtMemcpy2d(dst, dpitch, src, spitch, width, height, kind)) }
}

/// `aclrtGetMemInfo`: (free, total) bytes of `attr` on the current device.
#[doc(alias = "aclrtGetMemInfo")]
pub fn get_mem_info(attr: sys::aclrtMemAttr) -> Result<(usize, usize)> {
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two valid out-pointers.
    unsafe { call!(aclrtGetMemInfo(attr, &mut free, &mut total)) }?;
    Ok((free, total))
}

/// `aclrtMalloc` on the current device.
#[doc(alias = "aclrtMalloc")]
pub fn malloc(size: usize, policy: sys::aclrtMemMallocPolicy) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtMalloc(&mut ptr, size, policy)) }?;
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
    unsafe { call!(aclrtFree(ptr)) }
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
    unsafe { call!(aclrtMemcpy(dst, dest_max, src, count, kind)) }
}

/// `aclrtMemset`: fills `count` bytes of device memory with the byte `value`.
///
/// # Safety
///
/// `dst` is device memory valid for `max_count` bytes.
#[doc(alias = "aclrtMemset")]
pub unsafe fn memset(dst: *mut c_void, max_count: usize, value: i32, count: usize) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclrtMemset(dst, max_count, value, count)) }
}

// ---- contexts ----

/// `aclrtGetCurrentContext`.
#[doc(alias = "aclrtGetCurrentContext")]
pub fn get_current_context() -> Result<sys::aclrtContext> {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtGetCurrentContext(&mut ctx)) }?;
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
    unsafe { call!(aclrtSetCurrentContext(ctx)) }
}

// ---- streams ----

/// `aclrtCreateStreamWithConfig`.
#[doc(alias = "aclrtCreateStreamWithConfig")]
pub fn create_stream_with_config(priority: u32, flags: u32) -> Result<sys::aclrtStream> {
    let mut s = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtCreateStreamWithConfig(&mut s, priority, flags)) }?;
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
    unsafe { call!(aclrtDestroyStream(stream)) }
}

/// `aclrtSynchronizeStream`.
///
/// # Safety
///
/// `stream` is live or null (the current context's default stream).
#[doc(alias = "aclrtSynchronizeStream")]
pub unsafe fn synchronize_stream(stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclrtSynchronizeStream(stream)) }
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
    unsafe { call!(aclrtSynchronizeStreamWithTimeout(stream, timeout_ms)) }
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
    unsafe { call!(aclrtStreamQuery(stream, &mut status)) }?;
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
    unsafe { call!(aclrtStreamWaitEvent(stream, event)) }
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
    unsafe { call!(aclrtLaunchHostFunc(stream, func, args)) }
}

// ---- events ----

/// `aclrtCreateEventWithFlag`.
#[doc(alias = "aclrtCreateEventWithFlag")]
pub fn create_event_with_flag(flags: u32) -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtCreateEventWithFlag(&mut e, flags)) }?;
    Ok(e)
}

/// `aclrtCreateEventExWithFlag` (CANN 8.0.RC2 and later): an event that
/// can be recorded again and again, each `aclrtStreamWaitEvent` waiting for
/// the record made before it.
#[doc(alias = "aclrtCreateEventExWithFlag")]
pub fn create_event_ex_with_flag(flags: u32) -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtCreateEventExWithFlag(&mut e, flags)) }?;
    Ok(e)
}

/// `aclrtCreateEvent`.
#[doc(alias = "aclrtCreateEvent")]
pub fn create_event() -> Result<sys::aclrtEvent> {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtCreateEvent(&mut e)) }?;
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
    unsafe { call!(aclrtDestroyEvent(event)) }
}

/// `aclrtRecordEvent`.
///
/// # Safety
///
/// `event` is live; `stream` is live or null.
#[doc(alias = "aclrtRecordEvent")]
pub unsafe fn record_event(event: sys::aclrtEvent, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclrtRecordEvent(event, stream)) }
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
    unsafe { call!(aclrtQueryEventStatus(event, &mut status)) }?;
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
    unsafe { call!(aclrtSynchronizeEvent(event)) }
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
    unsafe { call!(aclrtSynchronizeEventWithTimeout(event, timeout_ms)) }
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
    unsafe { call!(aclrtEventElapsedTime(&mut ms, start, end)) }?;
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
    unsafe { call!(aclrtMemcpyAsync(dst, dest_max, src, count, kind, stream)) }
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
    unsafe { call!(aclrtMemsetAsync(dst, max_count, value, count, stream)) }
}

/// `aclrtMallocHost`: page-locked host memory.
#[doc(alias = "aclrtMallocHost")]
pub fn malloc_host(size: usize) -> Result<*mut c_void> {
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtMallocHost(&mut ptr, size)) }?;
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
    unsafe { call!(aclrtFreeHost(ptr)) }
}

/// `aclrtHostRegister`: maps `size` bytes of host memory at `ptr` for the
/// current device and returns the device address the runtime gives them.
///
/// # Safety
///
/// `ptr` is valid host memory of `size` bytes that stays allocated, and is
/// used by the host only as the runtime allows, until it is unregistered.
#[doc(alias = "aclrtHostRegister")]
pub unsafe fn host_register(
    ptr: *mut c_void,
    size: u64,
    kind: sys::aclrtHostRegisterType,
) -> Result<*mut c_void> {
    let mut dev = std::ptr::null_mut();
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(aclrtHostRegister(ptr, size, kind, &mut dev)) }?;
    Ok(dev)
}

/// `aclrtHostUnregister`.
///
/// # Safety
///
/// `ptr` is the start of a registration, and no queued work uses it.
#[doc(alias = "aclrtHostUnregister")]
pub unsafe fn host_unregister(ptr: *mut c_void) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclrtHostUnregister(ptr)) }
}

// ---- devices ----

/// `aclrtDeviceCanAccessPeer`.
#[doc(alias = "aclrtDeviceCanAccessPeer")]
pub fn device_can_access_peer(device: i32, peer: i32) -> Result<bool> {
    let mut can = 0i32;
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtDeviceCanAccessPeer(&mut can, device, peer)) }?;
    Ok(can != 0)
}

/// `aclrtDeviceEnablePeerAccess` (from the current device; `flags` must be 0).
#[doc(alias = "aclrtDeviceEnablePeerAccess")]
pub fn device_enable_peer_access(peer: i32, flags: u32) -> Result<()> {
    // SAFETY: plain integer arguments.
    unsafe { call!(aclrtDeviceEnablePeerAccess(peer, flags)) }
}

/// `aclrtDeviceDisablePeerAccess`.
#[doc(alias = "aclrtDeviceDisablePeerAccess")]
pub fn device_disable_peer_access(peer: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    unsafe { call!(aclrtDeviceDisablePeerAccess(peer)) }
}

/// `aclrtGetDeviceInfo`.
#[doc(alias = "aclrtGetDeviceInfo")]
pub fn get_device_info(device: u32, attr: sys::aclrtDevAttr) -> Result<i64> {
    let mut v = 0i64;
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtGetDeviceInfo(device, attr, &mut v)) }?;
    Ok(v)
}

/// `aclrtGetDeviceCapability`.
#[doc(alias = "aclrtGetDeviceCapability")]
pub fn get_device_capability(device: i32, feature: sys::aclrtDevFeatureType) -> Result<i32> {
    let mut v = 0i32;
    // SAFETY: valid out-pointer.
    unsafe { call!(aclrtGetDeviceCapability(device, feature, &mut v)) }?;
    Ok(v)
}

/// `aclrtDeviceGetStreamPriorityRange`: (least, greatest).
#[doc(alias = "aclrtDeviceGetStreamPriorityRange")]
pub fn device_get_stream_priority_range() -> Result<(i32, i32)> {
    let (mut least, mut greatest) = (0i32, 0i32);
    // SAFETY: valid out-pointers.
    unsafe { call!(aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest)) }?;
    Ok((least, greatest))
}

/// `aclrtSynchronizeDevice`: waits for all work queued on the current device.
#[doc(alias = "aclrtSynchronizeDevice")]
pub fn synchronize_device() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclrtSynchronizeDevice()) }
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
    unsafe { call!(aclrtSubscribeReport(thread_id, stream)) }
}

/// `aclrtUnSubscribeReport`.
///
/// # Safety
///
/// `stream` is live or null.
#[doc(alias = "aclrtUnSubscribeReport")]
pub unsafe fn unsubscribe_report(thread_id: u64, stream: sys::aclrtStream) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclrtUnSubscribeReport(thread_id, stream)) }
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
    unsafe { call!(aclrtLaunchCallback(func, user_data, block, stream)) }
}

/// `aclrtProcessReport`: runs the callbacks queued for the calling thread,
/// waiting up to `timeout_ms` (-1: forever).
#[doc(alias = "aclrtProcessReport")]
pub fn process_report(timeout_ms: i32) -> Result<()> {
    // SAFETY: plain integer argument.
    unsafe { call!(aclrtProcessReport(timeout_ms)) }
}

/// A copy of a C string the runtime owns (empty for null).
///
/// # Safety
///
/// `ptr` is null or NUL-terminated and valid for the call.
unsafe fn c_string(ptr: *const std::ffi::c_char) -> String {
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned()
}

/// `ptr`, or `ACL_ERROR_FAILURE` from `function` when the runtime returned
/// null (the creation functions report failure that way).
fn non_null<T>(function: &'static str, ptr: *mut T) -> Result<*mut T> {
    if ptr.is_null() {
        Err(crate::Error::from_code(function, sys::ACL_ERROR_FAILURE))
    } else {
        Ok(ptr)
    }
}

/// Whether two strings are equal, at compile time: the check of the
/// wrapper macros of this crate and of `hccl` that a doc alias names the C
/// function called.
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Wrappers that only forward their arguments to one C function and check
/// the `aclError` it returns. Each entry is written
/// `#[doc(alias = "cName")] rust_name = cName(args);`; the alias must name
/// the function called (checked at compile time), so the C name cannot get
/// out of step between the docs, the call and the error.
macro_rules! forward {
    ($(
        $(#[doc = $doc:literal])*
        #[doc(alias = $alias:literal)]
        $name:ident = $c:ident($($arg:ident: $ty:ty),* $(,)?);
    )*) => {$(
        const _: () = assert!(
            $crate::result::same_name($alias, stringify!($c)),
            concat!("doc alias ", $alias, " does not name the C function called")
        );
        $(#[doc = $doc])*
        ///
        /// # Safety
        ///
        /// The handles passed are live and the pointers valid for the
        /// lengths passed, as the C function requires.
        #[doc(alias = $alias)]
        #[allow(clippy::too_many_arguments, reason = "the C function's parameters")]
        pub unsafe fn $name($($arg: $ty),*) -> Result<()> {
            // SAFETY: the caller's contract.
            unsafe { call!($c($($arg),*)) }
        }
    )*};
}
pub(crate) use forward;

/// Like [`forward!`], for C functions that return a value instead of a
/// status (`name = cName(args) -> T;`): the wrapper returns it as is.
macro_rules! forward_value {
    ($(
        $(#[doc = $doc:literal])*
        #[doc(alias = $alias:literal)]
        $name:ident = $c:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty;
    )*) => {$(
        const _: () = assert!(
            $crate::result::same_name($alias, stringify!($c)),
            concat!("doc alias ", $alias, " does not name the C function called")
        );
        $(#[doc = $doc])*
        ///
        /// # Safety
        ///
        /// The handles passed are live, as the C function requires.
        #[doc(alias = $alias)]
        pub unsafe fn $name($($arg: $ty),*) -> Result<$ret> {
            // SAFETY: the caller's contract.
            Ok(unsafe { sys::$c($($arg),*) }?)
        }
    )*};
}
pub(crate) use forward_value;

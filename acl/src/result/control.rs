//! Runtime control: the last error, operator timeouts, device
//! synchronisation with a timeout, aborting queued work, the saturation
//! mode, and 64-bit values written and awaited in stream order.

use super::forward;
use crate::error::Result;
use acl_sys as sys;
use std::ffi::c_void;

/// `aclrtGetLastError`: the calling thread's last runtime error code
/// (`ACL_SUCCESS` when none), which the runtime resets.
#[doc(alias = "aclrtGetLastError")]
pub fn get_last_error(level: sys::aclrtLastErrLevel) -> Result<sys::aclError> {
    // SAFETY: no pointers; any level is checked by the runtime.
    Ok(unsafe { sys::aclrtGetLastError(level) }?)
}

/// `aclrtPeekAtLastError`: the calling thread's last runtime error code,
/// left in place.
#[doc(alias = "aclrtPeekAtLastError")]
pub fn peek_at_last_error(level: sys::aclrtLastErrLevel) -> Result<sys::aclError> {
    // SAFETY: no pointers; any level is checked by the runtime.
    Ok(unsafe { sys::aclrtPeekAtLastError(level) }?)
}

/// `aclrtSetOpWaitTimeout`: how long (seconds, 0 for ever) a queued wait
/// may block its stream.
#[doc(alias = "aclrtSetOpWaitTimeout")]
pub fn set_op_wait_timeout(seconds: u32) -> Result<()> {
    // SAFETY: no pointers.
    unsafe { call!(aclrtSetOpWaitTimeout(seconds)) }
}

/// `aclrtSetOpExecuteTimeOut`: the operator execution timeout, seconds.
#[doc(alias = "aclrtSetOpExecuteTimeOut")]
pub fn set_op_execute_time_out(seconds: u32) -> Result<()> {
    // SAFETY: no pointers.
    unsafe { call!(aclrtSetOpExecuteTimeOut(seconds)) }
}

/// `aclrtSynchronizeDeviceWithTimeout`: waits for the current device's
/// streams, giving up after `timeout_ms` (−1: never).
#[doc(alias = "aclrtSynchronizeDeviceWithTimeout")]
pub fn synchronize_device_with_timeout(timeout_ms: i32) -> Result<()> {
    // SAFETY: no pointers.
    unsafe { call!(aclrtSynchronizeDeviceWithTimeout(timeout_ms)) }
}

/// `aclrtDeviceTaskAbort`: aborts the queued work of every stream of a
/// device, within `timeout_ms` (0: no limit).
#[doc(alias = "aclrtDeviceTaskAbort")]
pub fn device_task_abort(device: i32, timeout_ms: u32) -> Result<()> {
    // SAFETY: no pointers.
    unsafe { call!(aclrtDeviceTaskAbort(device, timeout_ms)) }
}

/// `aclrtGetDeviceSatMode`: the floating-point overflow mode.
#[doc(alias = "aclrtGetDeviceSatMode")]
pub fn get_device_sat_mode() -> Result<sys::aclrtFloatOverflowMode> {
    let mut mode = sys::ACL_RT_OVERFLOW_MODE_UNDEF;
    // SAFETY: a valid out-pointer.
    unsafe { call!(aclrtGetDeviceSatMode(&mut mode)) }?;
    Ok(mode)
}

/// `aclrtSetDeviceSatMode`: sets the floating-point overflow mode.
#[doc(alias = "aclrtSetDeviceSatMode")]
pub fn set_device_sat_mode(mode: sys::aclrtFloatOverflowMode) -> Result<()> {
    // SAFETY: no pointers; the runtime checks the value.
    unsafe { call!(aclrtSetDeviceSatMode(mode)) }
}

forward! {
    /// `aclrtStreamAbort`: drops the stream's queued tasks and stops a
    /// waiting one.
    #[doc(alias = "aclrtStreamAbort")]
    stream_abort = aclrtStreamAbort(stream: sys::aclrtStream);
    /// `aclrtValueWrite`: queues the write of a 64-bit value to device
    /// memory.
    #[doc(alias = "aclrtValueWrite")]
    value_write = aclrtValueWrite(dev_addr: *mut c_void, value: u64, flag: u32, stream: sys::aclrtStream);
    /// `aclrtValueWait`: queues a wait until the 64-bit value at `dev_addr`
    /// meets the condition `flag` names.
    #[doc(alias = "aclrtValueWait")]
    value_wait = aclrtValueWait(dev_addr: *mut c_void, value: u64, flag: u32, stream: sys::aclrtStream);
    /// `aclrtReduceAsync`: queues `dst[i] = dst[i] kind src[i]` over
    /// `count` bytes of `type_` elements.
    #[doc(alias = "aclrtReduceAsync")]
    reduce_async = aclrtReduceAsync(dst: *mut c_void, src: *const c_void, count: u64, kind: sys::aclrtReduceKind, type_: sys::aclDataType, stream: sys::aclrtStream, reserve: *mut c_void);
    /// `aclrtRandomNumAsync`: queues the runtime's random-number task.
    #[doc(alias = "aclrtRandomNumAsync")]
    random_num_async = aclrtRandomNumAsync(task_info: *const sys::aclrtRandomNumTaskInfo, stream: sys::aclrtStream, reserve: *mut c_void);
}

/// `aclrtAllocatorCreateDesc`: an empty external-allocator description
/// (null from the runtime is `ACL_ERROR_FAILURE` here).
#[doc(alias = "aclrtAllocatorCreateDesc")]
pub fn allocator_create_desc() -> Result<sys::aclrtAllocatorDesc> {
    // SAFETY: no arguments.
    let desc = unsafe { sys::aclrtAllocatorCreateDesc() }?;
    super::non_null("aclrtAllocatorCreateDesc", desc)
}

forward! {
    /// `aclrtAllocatorDestroyDesc`.
    #[doc(alias = "aclrtAllocatorDestroyDesc")]
    allocator_destroy_desc = aclrtAllocatorDestroyDesc(desc: sys::aclrtAllocatorDesc);
    /// `aclrtAllocatorSetObjToDesc`: the object the functions are given.
    #[doc(alias = "aclrtAllocatorSetObjToDesc")]
    allocator_set_obj_to_desc = aclrtAllocatorSetObjToDesc(desc: sys::aclrtAllocatorDesc, allocator: sys::aclrtAllocator);
    /// `aclrtAllocatorSetAllocFuncToDesc`.
    #[doc(alias = "aclrtAllocatorSetAllocFuncToDesc")]
    allocator_set_alloc_func_to_desc = aclrtAllocatorSetAllocFuncToDesc(desc: sys::aclrtAllocatorDesc, func: sys::aclrtAllocatorAllocFunc);
    /// `aclrtAllocatorSetFreeFuncToDesc`.
    #[doc(alias = "aclrtAllocatorSetFreeFuncToDesc")]
    allocator_set_free_func_to_desc = aclrtAllocatorSetFreeFuncToDesc(desc: sys::aclrtAllocatorDesc, func: sys::aclrtAllocatorFreeFunc);
    /// `aclrtAllocatorSetAllocAdviseFuncToDesc`.
    #[doc(alias = "aclrtAllocatorSetAllocAdviseFuncToDesc")]
    allocator_set_alloc_advise_func_to_desc = aclrtAllocatorSetAllocAdviseFuncToDesc(desc: sys::aclrtAllocatorDesc, func: sys::aclrtAllocatorAllocAdviseFunc);
    /// `aclrtAllocatorSetGetAddrFromBlockFuncToDesc`.
    #[doc(alias = "aclrtAllocatorSetGetAddrFromBlockFuncToDesc")]
    allocator_set_get_addr_from_block_func_to_desc = aclrtAllocatorSetGetAddrFromBlockFuncToDesc(desc: sys::aclrtAllocatorDesc, func: sys::aclrtAllocatorGetAddrFromBlockFunc);
    /// `aclrtAllocatorRegister`: registers a copy of `desc` for `stream`.
    #[doc(alias = "aclrtAllocatorRegister")]
    allocator_register = aclrtAllocatorRegister(stream: sys::aclrtStream, desc: sys::aclrtAllocatorDesc);
    /// `aclrtAllocatorUnregister`.
    #[doc(alias = "aclrtAllocatorUnregister")]
    allocator_unregister = aclrtAllocatorUnregister(stream: sys::aclrtStream);
}

/// What `aclrtAllocatorGetByStream` returns: the description's handle, the
/// object and the four functions.
pub type RegisteredAllocator = (
    sys::aclrtAllocatorDesc,
    sys::aclrtAllocator,
    sys::aclrtAllocatorAllocFunc,
    sys::aclrtAllocatorFreeFunc,
    sys::aclrtAllocatorAllocAdviseFunc,
    sys::aclrtAllocatorGetAddrFromBlockFunc,
);

/// `aclrtAllocatorGetByStream`: what is registered for `stream`.
///
/// # Safety
///
/// `stream` is a live stream handle (the runtime keys by its value).
#[doc(alias = "aclrtAllocatorGetByStream")]
pub unsafe fn allocator_get_by_stream(stream: sys::aclrtStream) -> Result<RegisteredAllocator> {
    let mut out: RegisteredAllocator = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        None,
        None,
        None,
        None,
    );
    // SAFETY: six valid out-pointers; the stream per the caller's contract.
    unsafe {
        call!(aclrtAllocatorGetByStream(
            stream, &mut out.0, &mut out.1, &mut out.2, &mut out.3, &mut out.4, &mut out.5
        ))
    }?;
    Ok(out)
}

//! Inter-process events: `aclrtCreateEventExWithFlag(ACL_EVENT_IPC)` (its
//! shared record), `aclrtIpcGetEventHandle`, `aclrtIpcOpenEventHandle`. The
//! engine is `rt::ipc_event`; record, wait, synchronise and query are the
//! ordinary event calls (`event.rs`, `stream.rs`).
//!
//! Order of the checks (hicann/runtime `src/acl/aclrt_impl/event.cpp`
//! `aclrtIpcGetEventHandleImpl`, `aclrtIpcOpenEventHandleImpl`, then
//! `src/runtime/api/impl/api_impl_event.cc` `IpcGetEventHandle`,
//! `IpcOpenEventHandle`): a null `handle`, then a null `event` → 100000; an
//! event that is not an IPC event → 107000 (`RT_ERROR_INVALID_VALUE`, "Only
//! IPC events are supported"); opening without a context → 107002; a handle
//! that names no live event → 107000 (the driver's import of the shareable
//! handle fails with an invalid value).

use super::common::{self, PARAM_INVALID, code, rt_fail};
use crate::faults;
use crate::recent_error::fail;
use crate::rt;
use crate::rt::ipc_event::{HANDLE_SIZE, IpcEventShared, OpenError};
use acl_sys::{
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, ACL_SUCCESS, aclError, aclrtEvent, aclrtIpcEventHandle,
};

/// Creates an IPC event with its shared record, for
/// `aclrtCreateEventExWithFlag(ACL_EVENT_IPC)` (`IpcEvent::Setup` allocates
/// the shared memory at creation).
///
/// # Safety
///
/// `event` is non-null and writable.
pub(super) unsafe fn create_ipc(function: &str, event: *mut aclrtEvent) -> aclError {
    let ctx = tri!(common::current(function));
    let shared = match IpcEventShared::create() {
        Ok(s) => s,
        Err(why) => {
            return fail(
                code(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
                format!("{function}: the IPC event's shared record cannot be made: {why}"),
            );
        }
    };
    match rt::create_ipc_event(ctx.device, shared) {
        Ok(e) => {
            // SAFETY: the caller's contract.
            unsafe { *event = e.handle() as aclrtEvent };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtIpcGetEventHandle`: the handle another process opens the IPC
/// event `event` with.
///
/// # Safety
///
/// `handle` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcGetEventHandle(
    event: aclrtEvent,
    handle: *mut aclrtIpcEventHandle,
) -> aclError {
    const F: &str = "aclrtIpcGetEventHandle";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if handle.is_null() {
        return common::null_arg(F, "handle");
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let e = tri!(common::event_arg(F, event));
    let Some(ipc) = &e.ipc else {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: the event's flags are {:#x}; only IPC events are supported (create it with \
                 aclrtCreateEventExWithFlag(ACL_EVENT_IPC))",
                e.flags
            ),
        );
    };
    let bytes = ipc.handle();
    // SAFETY: checked non-null; the handle is `HANDLE_SIZE` bytes of `c_char`.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            (*handle).reserved.as_mut_ptr().cast(),
            HANDLE_SIZE,
        )
    };
    ACL_SUCCESS
}

/// `aclrtIpcOpenEventHandle`: an event of this process for the IPC event
/// `handle` names (made by another process, or this one); waits on it wait
/// for the records of every process. Destroy it with `aclrtDestroyEvent`.
///
/// # Safety
///
/// `event` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtIpcOpenEventHandle(
    handle: aclrtIpcEventHandle,
    event: *mut aclrtEvent,
) -> aclError {
    const F: &str = "aclrtIpcOpenEventHandle";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if event.is_null() {
        return common::null_arg(F, "event");
    }
    let ctx = tri!(common::current(F));
    let mut bytes = [0u8; HANDLE_SIZE];
    for (b, c) in bytes.iter_mut().zip(handle.reserved.iter()) {
        *b = *c as u8;
    }
    let shared = match IpcEventShared::open(&bytes) {
        Ok(s) => s,
        Err(OpenError::Invalid(why)) => return fail(PARAM_INVALID, format!("{F}: {why}")),
        Err(OpenError::Resource(why)) => {
            return fail(
                code(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
                format!("{F}: {why}"),
            );
        }
    };
    match rt::create_ipc_event(ctx.device, shared) {
        Ok(e) => {
            // SAFETY: checked non-null; writable by the C contract.
            unsafe { *event = e.handle() as aclrtEvent };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

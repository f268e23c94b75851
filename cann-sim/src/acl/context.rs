//! Contexts: `aclrtCreateContext`, `aclrtDestroyContext`,
//! `aclrtSetCurrentContext`, `aclrtGetCurrentContext`,
//! `aclrtCtxGetCurrentDefaultStream`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/context.cpp`, then
//! `src/runtime/api/impl/api_error.cc` and `api_impl.cc` `Context*`,
//! `src/runtime/core/src/context/context_manage.cc`;
//! `docs/zh/api_ref/05_context_management.md`):
//!
//! - A context belongs to one device and has a default stream, the stream a
//!   null `aclrtStream` means while it is current. The calling thread has one
//!   current context; its current device is that context's device.
//! - `aclrtCreateContext` creates a context (no `aclrtSetDevice` needed) and
//!   makes it current. Null out-pointer → 100000; bad device → 107001; no
//!   stream left for its default stream → 207008.
//! - `aclrtDestroyContext` waits for the work queued on its streams, destroys
//!   them and the context; threads whose current context it was have none.
//!   Null → 100000; a destroyed or unknown handle, or a primary context (the
//!   one `aclrtSetDevice` made: only `aclrtResetDevice` ends it) →
//!   `ACL_ERROR_RT_CONTEXT_NULL` (107002, `ApiImpl::ContextDestroy`).
//! - `aclrtSetCurrentContext`: null → 100000; destroyed or unknown →
//!   107000 (`ApiErrorDecorator::ContextSetCurrent` checks with
//!   `RT_ERROR_INVALID_VALUE`). It does not take a device reference.
//! - `aclrtGetCurrentContext`: null → 100000; none → 107002.
//! - `aclrtCtxGetCurrentDefaultStream`: null → 100000; none → 107002.

use super::common::code;
use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup};
use crate::rt::{self, CONTEXTS};
use crate::{faults, state};
use acl_sys::{ACL_ERROR_RT_CONTEXT_NULL, ACL_SUCCESS, aclError, aclrtContext, aclrtStream};
use std::sync::Arc;

/// `aclrtCreateContext`: a new context on `device_id`, made current.
///
/// # Safety
///
/// `context` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCreateContext(
    context: *mut aclrtContext,
    device_id: i32,
) -> aclError {
    const F: &str = "aclrtCreateContext";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if context.is_null() {
        return common::null_arg(F, "context");
    }
    let device = tri!(super::device::check_id(F, device_id));
    let ctx = match rt::create_context(device, false) {
        Ok(c) => c,
        Err(e) => return rt_fail(F, e),
    };
    let h = ctx.handle() as aclrtContext;
    state::set_current_context(Some(ctx));
    // SAFETY: checked non-null; the caller passes a writable handle.
    unsafe { *context = h };
    ACL_SUCCESS
}

/// `aclrtDestroyContext`: finishes the work of the context's streams, then
/// destroys them and the context.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDestroyContext(context: aclrtContext) -> aclError {
    const F: &str = "aclrtDestroyContext";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if context.is_null() {
        return common::null_arg(F, "context");
    }
    let ctx = match CONTEXTS.lock().get(context as usize) {
        Lookup::Live(c) => c,
        bad => {
            return fail(
                code(ACL_ERROR_RT_CONTEXT_NULL),
                format!(
                    "{F}: {}",
                    handles::describe_bad("context", context as usize, &bad)
                ),
            );
        }
    };
    if ctx.primary {
        return fail(
            code(ACL_ERROR_RT_CONTEXT_NULL),
            format!(
                "{F}: {} is a primary context: it cannot be destroyed explicitly (aclrtResetDevice \
                 releases it)",
                ctx.label()
            ),
        );
    }
    for s in ctx
        .streams()
        .iter()
        .chain(std::iter::once(&ctx.default_stream))
    {
        tri!(common::not_inside_own_callback(F, s));
    }
    ctx.tear_down();
    ACL_SUCCESS
}

/// `aclrtSetCurrentContext`: makes `context` the calling thread's context
/// (and its device the thread's device).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSetCurrentContext(context: aclrtContext) -> aclError {
    const F: &str = "aclrtSetCurrentContext";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if context.is_null() {
        return common::null_arg(F, "context");
    }
    match CONTEXTS.lock().get(context as usize) {
        Lookup::Live(c) if c.is_alive() => {
            state::set_current_context(Some(c));
            ACL_SUCCESS
        }
        Lookup::Live(c) => fail(
            PARAM_INVALID,
            format!("{F}: {} is being destroyed", c.label()),
        ),
        bad => fail(
            PARAM_INVALID,
            format!(
                "{F}: {}",
                handles::describe_bad("context", context as usize, &bad)
            ),
        ),
    }
}

/// `aclrtGetCurrentContext`: the calling thread's context.
///
/// # Safety
///
/// `context` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetCurrentContext(context: *mut aclrtContext) -> aclError {
    const F: &str = "aclrtGetCurrentContext";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if context.is_null() {
        return common::null_arg(F, "context");
    }
    let ctx = tri!(common::current(F));
    // SAFETY: checked non-null; the caller passes a writable handle.
    unsafe { *context = ctx.handle() as aclrtContext };
    ACL_SUCCESS
}

/// `aclrtCtxGetCurrentDefaultStream`: the default stream of the calling
/// thread's context (the stream a null `aclrtStream` means).
///
/// # Safety
///
/// `stream` is null or valid for writing a handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCtxGetCurrentDefaultStream(stream: *mut aclrtStream) -> aclError {
    const F: &str = "aclrtCtxGetCurrentDefaultStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let ctx = tri!(common::current(F));
    let h = Arc::clone(&ctx.default_stream).handle() as aclrtStream;
    // SAFETY: checked non-null; the caller passes a writable handle.
    unsafe { *stream = h };
    ACL_SUCCESS
}

//! Host callbacks: `aclrtSubscribeReport`, `aclrtLaunchCallback`,
//! `aclrtProcessReport`, `aclrtUnSubscribeReport`, `aclrtLaunchHostFunc`.
//!
//! The threading model is the runtime's (`docs/zh/api_ref/12_execution_control.md`,
//! `rt::report`): `aclrtLaunchCallback` callbacks run on the user thread
//! bound to the stream, inside its `aclrtProcessReport`; `aclrtLaunchHostFunc`
//! functions run on the context's host-function thread, which the first
//! launch starts. Neither ever runs on the calling thread, and the simulator
//! holds none of its locks while one runs. A callback that is never run
//! (its stream force-destroyed, its thread unsubscribed) is not called.
//!
//! Codes (hicann/runtime `src/acl/aclrt_impl/callback.cpp`,
//! `src/runtime/api/impl/api_error.cc` `SubscribeReport`, `CallbackLaunch`,
//! `ProcessReport`, `UnSubscribeReport`, `LaunchHostFunc`, `api_impl.cc`,
//! `src/runtime/core/src/utils/subscribe.cc`):
//!
//! - `aclrtLaunchCallback`: `blockType` not `ACL_CALLBACK_NO_BLOCK`/`BLOCK` →
//!   100000; null `fn` → 107000; a stream that runs host functions → 107011;
//!   no current context → 107002; another context's stream → 107003; no
//!   thread subscribed to the stream → `ACL_ERROR_RT_STREAM_NO_CB_REG` (107015).
//! - `aclrtSubscribeReport`: the stream already has a thread, or runs host
//!   functions → `ACL_ERROR_RT_STREAM_SUBSCRIBE` (107011); the thread
//!   already serves another device → `ACL_ERROR_RT_THREAD_SUBSCRIBE` (107012).
//!   `threadId` is the thread's `pthread_self()`.
//! - `aclrtProcessReport(timeout)`: −1 or a positive number of ms, else
//!   100000; the calling thread subscribed to no stream → 107012; nothing
//!   to run before the timeout → `ACL_ERROR_RT_REPORT_TIMEOUT` (507012).
//!   It runs every callback queued for the thread.
//! - `aclrtUnSubscribeReport`: the stream has no thread → 107011; another
//!   thread → 107012.
//! - `aclrtLaunchHostFunc`: null `fn` → 107000; a stream bound to a user
//!   thread → 107011; no context → 107002; another context's stream → 107003.

use super::common::{self, PARAM_INVALID, code, rt_fail};
use super::stream::takes_host_work;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::report::{self, HostFn, Take};
use crate::rt::stream::{Subscription, TaskKind};
use acl_sys::{
    ACL_CALLBACK_BLOCK, ACL_CALLBACK_NO_BLOCK, ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE, ACL_ERROR_RT_THREAD_SUBSCRIBE, ACL_SUCCESS, aclError,
    aclrtCallback, aclrtCallbackBlockType, aclrtHostFunc, aclrtStream,
};
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// A C function and its argument.
struct UserFn {
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
}

// SAFETY: `data` is the user's opaque pointer; the C API hands it to another
// thread by design (callbacks run on the subscribed thread or the runtime's
// host-function thread), so the user is responsible for its thread safety.
// The simulator never dereferences it.
unsafe impl Send for UserFn {}

impl UserFn {
    fn call(self) {
        // SAFETY: the caller of aclrtLaunchCallback/aclrtLaunchHostFunc
        // passed a function that may be called with its own argument on a
        // runtime thread.
        unsafe { (self.f)(self.data) }
    }
}

/// `f(data)` as the runtime's host function, called once.
fn user_fn(f: unsafe extern "C" fn(*mut c_void), data: *mut c_void) -> HostFn {
    let u = UserFn { f, data };
    HostFn::new(move || u.call())
}

/// `aclrtLaunchCallback`: queues `fn_(user_data)` on `stream`; when the
/// stream reaches it, the thread subscribed to the stream runs it in its
/// `aclrtProcessReport`. With `ACL_CALLBACK_BLOCK`, later tasks wait for it.
///
/// # Safety
///
/// `fn_` may be called with `user_data` on another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchCallback(
    fn_: aclrtCallback,
    user_data: *mut c_void,
    block_type: aclrtCallbackBlockType,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtLaunchCallback";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if block_type != ACL_CALLBACK_BLOCK && block_type != ACL_CALLBACK_NO_BLOCK {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: blockType {block_type} is invalid; expected ACL_CALLBACK_NO_BLOCK (0) or \
                 ACL_CALLBACK_BLOCK (1)"
            ),
        );
    }
    let s = tri!(common::stream_arg(F, stream));
    let Some(f) = fn_ else {
        return fail(PARAM_INVALID, format!("{F}: fn is null"));
    };
    if let Some(s) = &s
        && *s.shared.subscription.lock() == Subscription::Runtime
    {
        return fail(
            code(ACL_ERROR_RT_STREAM_SUBSCRIBE),
            format!(
                "{F}: {} runs host functions (aclrtLaunchHostFunc); the two callback APIs cannot \
                 be mixed on one stream",
                s.label()
            ),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    if !matches!(*s.shared.subscription.lock(), Subscription::User(_)) {
        return fail(
            code(ACL_ERROR_RT_STREAM_NO_CB_REG),
            format!(
                "{F}: {} is not bound to any thread; call aclrtSubscribeReport to bind a thread \
                 that runs aclrtProcessReport",
                s.label()
            ),
        );
    }
    tri!(takes_host_work(F, &s));
    let task = TaskKind::Callback {
        f: user_fn(f, user_data),
        block: block_type == ACL_CALLBACK_BLOCK,
    };
    match s.enqueue(|_| task) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtSubscribeReport`: binds thread `thread_id` (its `pthread_self()`)
/// to `stream`: the stream's callbacks run in that thread's
/// `aclrtProcessReport`.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSubscribeReport(thread_id: u64, stream: aclrtStream) -> aclError {
    const F: &str = "aclrtSubscribeReport";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = match common::stream_arg(F, stream) {
        Ok(Some(s)) => s,
        Ok(None) => match common::current(F) {
            Ok(ctx) => ctx.default_stream.clone(),
            Err(rc) => return rc,
        },
        Err(rc) => return rc,
    };
    match report::subscribe(thread_id, &s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtUnSubscribeReport`: unbinds thread `thread_id` from `stream`;
/// callbacks of the stream still waiting for the thread are cancelled (not
/// called; the stream reports the fault at its next synchronisation).
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtUnSubscribeReport(thread_id: u64, stream: aclrtStream) -> aclError {
    const F: &str = "aclrtUnSubscribeReport";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = match common::stream_arg(F, stream) {
        Ok(Some(s)) => s,
        Ok(None) => match common::current(F) {
            Ok(ctx) => ctx.default_stream.clone(),
            Err(rc) => return rc,
        },
        Err(rc) => return rc,
    };
    match report::unsubscribe(thread_id, &s) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtProcessReport`: waits up to `timeout` ms (−1: forever) for
/// callbacks of the streams bound to the calling thread, and runs every one
/// queued.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtProcessReport(timeout: i32) -> aclError {
    const F: &str = "aclrtProcessReport";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if timeout < -1 || timeout == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: timeout {timeout} is invalid: -1 waits forever, a positive value waits that \
                 many milliseconds"
            ),
        );
    }
    let tid = report::current_tid();
    let Some(sub) = report::user_subscriber(tid) else {
        return fail(
            code(ACL_ERROR_RT_THREAD_SUBSCRIBE),
            format!(
                "{F}: this thread ({tid:#x}) is not subscribed to any stream (aclrtSubscribeReport)"
            ),
        );
    };
    let deadline = (timeout > 0)
        .then(|| Instant::now() + Duration::from_millis(u64::from(timeout.unsigned_abs())));
    match sub.take(deadline) {
        Take::Reports(reports) => {
            for r in reports {
                report::run(r);
            }
            ACL_SUCCESS
        }
        Take::TimedOut => fail(
            code(ACL_ERROR_RT_REPORT_TIMEOUT),
            format!("{F}: no callback arrived within {timeout} ms"),
        ),
        Take::Closed => fail(
            code(ACL_ERROR_RT_THREAD_SUBSCRIBE),
            format!("{F}: this thread ({tid:#x}) was unsubscribed from its last stream"),
        ),
    }
}

/// `aclrtLaunchHostFunc`: queues `fn_(args)` on `stream`; when the stream
/// reaches it, the context's host-function thread runs it, and later tasks
/// wait until it returns.
///
/// # Safety
///
/// `fn_` may be called with `args` on another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchHostFunc(
    stream: aclrtStream,
    fn_: aclrtHostFunc,
    args: *mut c_void,
) -> aclError {
    const F: &str = "aclrtLaunchHostFunc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(common::stream_arg(F, stream));
    let Some(f) = fn_ else {
        return fail(PARAM_INVALID, format!("{F}: fn is null"));
    };
    if let Some(s) = &s
        && let Subscription::User(t) = *s.shared.subscription.lock()
    {
        return fail(
            code(ACL_ERROR_RT_STREAM_SUBSCRIBE),
            format!(
                "{F}: {} is bound to callback thread {t:#x} (aclrtSubscribeReport); the two \
                 callback APIs cannot be mixed on one stream",
                s.label()
            ),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    {
        let mut sub = s.shared.subscription.lock();
        match *sub {
            Subscription::User(t) => {
                return fail(
                    code(ACL_ERROR_RT_STREAM_SUBSCRIBE),
                    format!(
                        "{F}: {} is bound to callback thread {t:#x} (aclrtSubscribeReport)",
                        s.label()
                    ),
                );
            }
            _ => *sub = Subscription::Runtime,
        }
    }
    if let Err(msg) = ctx.ensure_host_thread() {
        return fail(
            code(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL),
            format!("{F}: {msg}"),
        );
    }
    let task = TaskKind::HostFunc {
        f: user_fn(f, args),
        ctx: std::sync::Arc::downgrade(&ctx),
    };
    match s.enqueue(|_| task) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

//! Stopping queued work: `aclrtStreamAbort`, `aclrtDeviceTaskAbort`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/stream.cpp`, `device.cpp`;
//! `src/runtime/api/impl/api_error.cc` `StreamAbort`/`DeviceTaskAbort`,
//! `api_impl.cc` `StreamAbort`, `src/runtime/core/src/context/context_manage.cc`
//! `ContextManage::DeviceTaskAbort`):
//!
//! - Aborting drops the tasks queued but not yet started, makes a task
//!   blocked in a wait give up, and returns once the task in flight has
//!   finished ([`crate::rt::Stream::abort`]); the stream takes work again
//!   afterwards. Event records among the dropped tasks are cancelled, so a
//!   wait for them fails instead of hanging.
//! - `aclrtStreamAbort` acts on a stream of the current context (null: its
//!   default stream): no context 107002, a stream of another context 107003,
//!   an unknown handle 107017.
//! - `aclrtDeviceTaskAbort` aborts every stream of the device, in every
//!   context. `timeout` is in milliseconds, at most 36 minutes
//!   (`TASK_ABORT_TIMEOUT_MAX`, else 107000), 0 for no limit; when the abort
//!   takes longer it returns `ACL_ERROR_RT_WAIT_TIMEOUT` (107019,
//!   `RT_ERROR_WAIT_TIMEOUT`). A device id out of range is 107001. The
//!   simulated SoCs (910B, 910_93) have `RT_FEATURE_DFX_FAST_RECOVER`
//!   (`src/runtime/config/910_B_93/dev_info_reg.cc`), so it is supported.
//! - Neither may run inside a blocking callback of a stream it would wait
//!   for (107000, as the synchronisations).

use super::common::{self, PARAM_INVALID, code};
use super::device::check_id;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::{self, Stream};
use acl_sys::{ACL_ERROR_RT_WAIT_TIMEOUT, ACL_SUCCESS, aclError, aclrtStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `TASK_ABORT_TIMEOUT_MAX`: 36 minutes, in milliseconds.
const TASK_ABORT_TIMEOUT_MAX_MS: u32 = 36 * 60 * 1000;

/// `aclrtStreamAbort`: drops the stream's queued tasks and stops a waiting
/// one.
///
/// # Safety
///
/// None beyond the C contract: the handle is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtStreamAbort(stream: aclrtStream) -> aclError {
    const F: &str = "aclrtStreamAbort";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(common::not_inside_own_callback(F, &s));
    s.abort();
    ACL_SUCCESS
}

/// `aclrtDeviceTaskAbort`: aborts the work of every stream of a device.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceTaskAbort(device_id: i32, timeout: u32) -> aclError {
    const F: &str = "aclrtDeviceTaskAbort";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if timeout > TASK_ABORT_TIMEOUT_MAX_MS {
        return fail(
            PARAM_INVALID,
            format!("{F}: timeout {timeout} ms is out of range [0, {TASK_ABORT_TIMEOUT_MAX_MS}]"),
        );
    }
    let device = tri!(check_id(F, device_id));
    let streams: Vec<Arc<Stream>> = rt::STREAMS
        .lock()
        .all()
        .into_iter()
        .filter(|s| s.device == device)
        .collect();
    for s in &streams {
        tri!(common::not_inside_own_callback(F, s));
    }
    let started = Instant::now();
    for s in &streams {
        s.abort();
    }
    let took = started.elapsed();
    if timeout != 0 && took > Duration::from_millis(u64::from(timeout)) {
        return fail(
            code(ACL_ERROR_RT_WAIT_TIMEOUT),
            format!(
                "{F}: aborting the work of device {device_id} took {} ms, longer than the \
                 timeout of {timeout} ms",
                took.as_millis()
            ),
        );
    }
    ACL_SUCCESS
}

//! Stream-ordered values in device memory: `aclrtValueWrite`,
//! `aclrtValueWait`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/memory.cpp`,
//! `src/runtime/api/api_c_memory.cc` `rtsValueWrite`/`rtsValueWait`,
//! `api_impl/api_error.cc` `MemWriteValue`/`MemWaitValue`, `api_impl.cc`):
//!
//! - A null `devAddr` is 100000 (the ACL layer's check).
//! - `aclrtValueWrite` takes flag 0 only; `aclrtValueWait` flags 0–3
//!   (`MEM_WAIT_VALUE_TYPE_GEQ`, `EQ`, `AND`, `NOR`); another flag is 107000.
//! - `devAddr` must be device memory (else 107000); the simulator also
//!   requires the 8 bytes to lie in one live allocation of the current
//!   device, as for every task it queues.
//! - A null stream is the current context's default stream; no context is
//!   107002, a stream of another context 107003.
//! - The write stores the 64-bit value when the stream reaches it; the wait
//!   blocks the stream until the word meets the condition (see
//!   [`crate::rt::value`]). Both can be captured into a model; a captured
//!   task's parameters can be read and changed (`aclmdlRITaskGetParams`,
//!   `aclmdlRITaskSetParams`, [`crate::rt::ri_task`]).

use super::common::{self, PARAM_INVALID, device_range, rt_fail};
use super::memory_async::enqueue;
use super::stream::takes_host_work;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::stream::{Expect, Stream, TaskKind};
use crate::rt::value::{self, Cond};
use acl_sys::{ACL_SUCCESS, aclError, aclrtStream};
use std::ffi::c_void;
use std::sync::Arc;

/// The checks both functions share: the stream and the 8 bytes at
/// `dev_addr`.
fn target(
    function: &'static str,
    dev_addr: *mut c_void,
    stream: aclrtStream,
) -> Result<(Arc<Stream>, Expect), aclError> {
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    let s = common::or_default(s, &ctx);
    common::in_context(function, &s, &ctx)?;
    takes_host_work(function, &s)?;
    let at = device_range(function, "devAddr", dev_addr as usize, 8, ctx.device)?;
    let at = at.ok_or_else(|| {
        fail(
            PARAM_INVALID,
            format!("{function}: internal: devAddr lies in no allocation"),
        )
    })?;
    Ok((s, at))
}

/// `aclrtValueWrite`: queues the write of a 64-bit value to device memory.
///
/// # Safety
///
/// None beyond the C contract: the address is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtValueWrite(
    dev_addr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtValueWrite";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dev_addr.is_null() {
        return common::null_arg(F, "devAddr");
    }
    if flag != 0 {
        return fail(
            PARAM_INVALID,
            format!("{F}: flag {flag} is invalid; it must be 0"),
        );
    }
    let (s, at) = tri!(target(F, dev_addr, stream));
    match value::enqueue_write(&s, dev_addr as usize, value, at) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtValueWait`: blocks the stream until the 64-bit value at `devAddr`
/// meets the condition `flag` names against `value`.
///
/// # Safety
///
/// None beyond the C contract: the address is validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtValueWait(
    dev_addr: *mut c_void,
    value: u64,
    flag: u32,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtValueWait";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dev_addr.is_null() {
        return common::null_arg(F, "devAddr");
    }
    let Some(cond) = Cond::from_flag(flag) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: flag {flag} is invalid; expected 0 (>=), 1 (==), 2 (and) or 3 (nor)"),
        );
    };
    let (s, at) = tri!(target(F, dev_addr, stream));
    enqueue(
        F,
        &s,
        TaskKind::ValueWait {
            api: F,
            addr: dev_addr as usize,
            value,
            cond,
            at,
        },
    )
}

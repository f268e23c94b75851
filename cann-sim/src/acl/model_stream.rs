//! Stream activation and stream switches in built models:
//! `aclrtActiveStream` and `aclrtSwitchStream` — argument checks and codes
//! in the order of hicann/runtime `src/acl/aclrt_impl/stream.cpp` (the ACL
//! layer's null checks, 100000), `src/runtime/api/api_c_stream.cc`
//! (`rtsSwitchStream`, `rtsActiveStream`: handle validation, 107017),
//! `src/runtime/api/impl/api_error.cc` and `api_impl.cc` (`StreamActive`,
//! `StreamSwitchEx`). The engine is [`crate::model::build`].

use super::common::{self, PARAM_INVALID, rt_fail};
use super::model_build::bound_of;
use crate::faults;
use crate::model::build::Compare;
use crate::recent_error::fail;
use crate::rt::Stream;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_RT_SWITCH_INT64, ACL_SUCCESS, aclError, aclrtCompareDataType,
    aclrtCondition, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

/// A live stream handle (null was checked before): 107017 otherwise.
fn live_stream(function: &str, h: aclrtStream) -> Result<Arc<Stream>, aclError> {
    match common::stream_arg(function, h)? {
        Some(s) => Ok(s),
        None => Err(common::null_arg(function, "stream")),
    }
}

/// `aclrtActiveStream`: adds to `stream` (bound to a model being built) a
/// task that, when an execution reaches it, starts `activeStream` (bound
/// to the same model), whose tasks then run beside `stream`'s.
///
/// Null `activeStream` or `stream` → 100000; bad handles → 107017; no
/// context → 107002; `stream`, then `activeStream`, not bound to a model →
/// 107005; a stream of another context → 107003 (`ApiImpl::StreamActive`);
/// an `activeStream` of another model → 207000 (the simulator's limit); a
/// model built already → 207000.
///
/// # Safety
///
/// None beyond the C contract: the handles are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtActiveStream(
    active_stream: aclrtStream,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtActiveStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if active_stream.is_null() {
        return common::null_arg(F, "activeStream");
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let active = tri!(live_stream(F, active_stream));
    let s = tri!(live_stream(F, stream));
    let ctx = tri!(common::current(F));
    let m = tri!(bound_of(F, &s));
    tri!(bound_of(F, &active));
    tri!(common::in_context(F, &s, &ctx));
    match m.active(&s, &active) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtSwitchStream`: adds to `stream` (bound to a model being built) a
/// task that, when an execution reaches it, compares the signed 32-bit
/// (`ACL_RT_SWITCH_INT32`) or 64-bit values at `leftValue` and
/// `rightValue` (device memory) with `cond`; when it holds, the execution
/// continues at the first task of `trueStream` and the rest of `stream` is
/// not run.
///
/// Null `leftValue`, `rightValue`, `trueStream` or `stream`, or a
/// `falseStream` that is not null → 100000; bad handles → 107017; `cond`
/// above `ACL_RT_LESS_OR_EQUAL`, `dataType` above `ACL_RT_SWITCH_INT64` →
/// 107000 (`ApiErrorDecorator::StreamSwitchEx`); `trueStream`, then
/// `stream`, not bound to a model → 107005; no context → 107002; a stream
/// of another context → 107003 (`ApiImpl::StreamSwitchEx`); operands not
/// device memory of the stream's device → 107000 (the simulator's pointer
/// check); a `trueStream` of another model, a model built already → 207000.
///
/// # Safety
///
/// None beyond the C contract: the handles and pointers are validated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtSwitchStream(
    left_value: *mut c_void,
    cond: aclrtCondition,
    right_value: *mut c_void,
    data_type: aclrtCompareDataType,
    true_stream: aclrtStream,
    false_stream: aclrtStream,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtSwitchStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if left_value.is_null() {
        return common::null_arg(F, "leftValue");
    }
    if right_value.is_null() {
        return common::null_arg(F, "rightValue");
    }
    if true_stream.is_null() {
        return common::null_arg(F, "trueStream");
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if !false_stream.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: falseStream is a reserved parameter and must be nullptr"),
        );
    }
    let target = tri!(live_stream(F, true_stream));
    let s = tri!(live_stream(F, stream));
    let Some(cond) = Compare::from_raw(cond) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: condition {cond} is invalid; expected [0, 5]"),
        );
    };
    if data_type > ACL_RT_SWITCH_INT64 {
        return fail(
            PARAM_INVALID,
            format!("{F}: dataType {data_type} is invalid; expected [0, 1]"),
        );
    }
    tri!(bound_of(F, &target));
    let m = tri!(bound_of(F, &s));
    let ctx = tri!(common::current(F));
    tri!(common::in_context(F, &s, &ctx));
    let wide = data_type == ACL_RT_SWITCH_INT64;
    let len = if wide { 8 } else { 4 };
    let operand = |name: &str, p: *mut c_void| match common::device_range(
        F, name, p as usize, len, s.device,
    )? {
        Some(at) => Ok((p as usize, at)),
        None => Err(fail(
            PARAM_INVALID,
            format!("{F}: {name} lies in no allocation"),
        )),
    };
    let left = tri!(operand("leftValue", left_value));
    let right = tri!(operand("rightValue", right_value));
    match m.switch_stream(&s, left, right, cond, wide, &target) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

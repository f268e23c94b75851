//! Runtime settings and device resources: `aclrtSetOpWaitTimeout`,
//! `aclrtSetOpExecuteTimeOut`, `aclrtGetDeviceSatMode`,
//! `aclrtSetDeviceSatMode`, `aclrtGetSysParamOpt`, `aclrtSetSysParamOpt`,
//! `aclrtCtxGetSysParamOpt`, `aclrtCtxSetSysParamOpt`,
//! `aclrtGetResInCurrentThread`, `aclrtGetDeviceUtilizationRate`.
//!
//! Semantics (hicann/runtime `src/acl/aclrt_impl/event.cpp`, `device.cpp`,
//! `context.cpp`; `src/runtime/api/impl/api_error.cc` and `api_impl.cc`;
//! the engine side is [`crate::rt::settings`]):
//!
//! - The timeouts take any `uint32_t` (seconds) and need no device: on the
//!   910B/910_93 parts the wait timeout is applied to event waits
//!   (`ApiImpl::SetOpWaitTimeOut`, `prop.isStars`).
//! - `aclrtSetDeviceSatMode` takes `ACL_RT_OVERFLOW_MODE_SATURATION` or
//!   `…_INFNAN` (else 107000, `ApiErrorDecorator::SetDeviceSatMode`) and sets
//!   the process's mode; `aclrtGetDeviceSatMode` returns it (null → 100000).
//! - System parameters: the ACL layer accepts options 0–2 per context and
//!   0–3 per process (else 100000, `GetSysParamOpt`/`SetSysParamOpt` in
//!   `context.cpp`); values must lie in `[0, 4)` for `ACL_OPT_DETERMINISTIC`
//!   and `[0, 2)` otherwise (else 107000); a context call needs a current
//!   context (107002); reading an option never set is
//!   `ACL_ERROR_RT_SYSPARAMOPT_NOT_SET` (107021).
//! - `aclrtGetResInCurrentThread` answers the device's cube or vector core
//!   count (`RawDevice::InitResource`, `src/runtime/core/src/device/raw_device_res.cc`;
//!   the simulator has no per-stream resource limits); a type other than
//!   cube (0) or vector (1) is 107000, no current context 107002.
//! - `aclrtGetDeviceUtilizationRate`: the reserved `utilizationExtend` must
//!   be null (100000); cube and vector utilisation are the device's busy
//!   percentage over the last second (the figure DCMI reports, from
//!   [`crate::telemetry`]), AI CPU 0 (the simulator runs no AI CPU work),
//!   memory −1 ("not supported", as the runtime reports it). A failed query
//!   (an invalid device) yields −1 for each and still `ACL_SUCCESS`
//!   (`GetAllUtilizations`, `device.cpp`).

use super::common::{self, PARAM_INVALID, code};
use crate::faults;
use crate::recent_error::fail;
use crate::rt::settings::{self, PROCESS_PARAMS, SatMode, SysParams};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, ACL_OPT_DETERMINISTIC,
    ACL_RT_DEV_RES_CUBE_CORE, ACL_RT_DEV_RES_VECTOR_CORE, ACL_RT_OVERFLOW_MODE_INFNAN,
    ACL_RT_OVERFLOW_MODE_SATURATION, ACL_SUCCESS, aclError, aclSysParamOpt, aclrtDevResLimitType,
    aclrtFloatOverflowMode, aclrtUtilizationInfo,
};

/// `aclrtSetOpWaitTimeout`: how long (seconds, 0: for ever) a queued event
/// wait may block its stream before it fails with
/// `ACL_ERROR_RT_TASK_TIMEOUT`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetOpWaitTimeout(timeout: u32) -> aclError {
    if let Some(code) = faults::check("aclrtSetOpWaitTimeout") {
        return code;
    }
    settings::set_op_wait_timeout(timeout);
    ACL_SUCCESS
}

/// `aclrtSetOpExecuteTimeOut`: the operator execution timeout (seconds).
/// Every value is accepted (`ApiImpl::SetOpExecuteTimeOut`); it has no
/// effect on the simulator, whose kernels run on host threads and are never
/// interrupted.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetOpExecuteTimeOut(_timeout: u32) -> aclError {
    if let Some(code) = faults::check("aclrtSetOpExecuteTimeOut") {
        return code;
    }
    ACL_SUCCESS
}

/// `aclrtGetDeviceSatMode`: the process's floating-point overflow mode.
///
/// # Safety
///
/// `mode` is null or valid for writing an `aclrtFloatOverflowMode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceSatMode(mode: *mut aclrtFloatOverflowMode) -> aclError {
    const F: &str = "aclrtGetDeviceSatMode";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if mode.is_null() {
        return common::null_arg(F, "mode");
    }
    let m = match settings::sat_mode() {
        SatMode::Saturation => ACL_RT_OVERFLOW_MODE_SATURATION,
        SatMode::InfNan => ACL_RT_OVERFLOW_MODE_INFNAN,
    };
    // SAFETY: checked non-null; the caller passes a writable value.
    unsafe { *mode = m };
    ACL_SUCCESS
}

/// `aclrtSetDeviceSatMode`: sets the process's floating-point overflow
/// mode (saturation or inf/NaN).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetDeviceSatMode(mode: aclrtFloatOverflowMode) -> aclError {
    const F: &str = "aclrtSetDeviceSatMode";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let m = match mode {
        ACL_RT_OVERFLOW_MODE_SATURATION => SatMode::Saturation,
        ACL_RT_OVERFLOW_MODE_INFNAN => SatMode::InfNan,
        other => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: mode {other} is invalid; expected ACL_RT_OVERFLOW_MODE_SATURATION (0) \
                     or ACL_RT_OVERFLOW_MODE_INFNAN (1)"
                ),
            );
        }
    };
    settings::set_sat_mode(m);
    ACL_SUCCESS
}

/// `ACL_OPT_ENABLE_KERNEL_EARLY_START`: a process-level option only.
const OPT_KERNEL_EARLY_START: aclSysParamOpt = 3;

/// Checks `opt` for a context (`per_context`) or process call: 100000 when
/// the ACL layer refuses it.
fn check_opt(function: &str, opt: aclSysParamOpt, per_context: bool) -> Result<usize, aclError> {
    let last = if per_context {
        OPT_KERNEL_EARLY_START - 1
    } else {
        OPT_KERNEL_EARLY_START
    };
    if opt <= last {
        return Ok(opt as usize);
    }
    Err(fail(
        ACL_ERROR_INVALID_PARAM,
        format!(
            "{function}: opt {opt} is invalid; expected ACL_OPT_DETERMINISTIC (0), \
             ACL_OPT_ENABLE_DEBUG_KERNEL (1) or ACL_OPT_STRONG_CONSISTENCY (2){}",
            if per_context {
                ""
            } else {
                " or ACL_OPT_ENABLE_KERNEL_EARLY_START (3)"
            }
        ),
    ))
}

/// Reads `opt` from `params` into `value`.
///
/// # Safety
///
/// `value` is null or valid for writing an `i64`.
unsafe fn get_param(function: &str, params: &SysParams, opt: usize, value: *mut i64) -> aclError {
    match params.get(opt) {
        Some(v) => {
            // SAFETY: the callers check it non-null; writable by contract.
            unsafe { *value = v };
            ACL_SUCCESS
        }
        None => fail(
            code(ACL_ERROR_RT_SYSPARAMOPT_NOT_SET),
            format!("{function}: option {opt} has not been set"),
        ),
    }
}

/// The runtime's range check of `value` for `opt`: 107000 when out of
/// range.
fn check_value(function: &str, opt: usize, value: i64) -> Result<(), aclError> {
    // `SYS_OPT_DETERMINISTIC_LEVEL_MAX` (4) for determinism, `SYS_OPT_MAX` (2)
    // for the switches (`ApiErrorDecorator::CtxSetSysParamOpt`).
    let max = if opt == ACL_OPT_DETERMINISTIC as usize {
        4
    } else {
        2
    };
    if (0..max).contains(&value) {
        return Ok(());
    }
    Err(fail(
        PARAM_INVALID,
        format!("{function}: value {value} of option {opt} is out of range [0, {max})"),
    ))
}

/// `aclrtGetSysParamOpt`: a process-level system parameter.
///
/// # Safety
///
/// `value` is null or valid for writing an `i64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetSysParamOpt(opt: aclSysParamOpt, value: *mut i64) -> aclError {
    const F: &str = "aclrtGetSysParamOpt";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    let opt = tri!(check_opt(F, opt, false));
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { get_param(F, &PROCESS_PARAMS, opt, value) }
}

/// `aclrtSetSysParamOpt`: sets a process-level system parameter.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtSetSysParamOpt(opt: aclSysParamOpt, value: i64) -> aclError {
    const F: &str = "aclrtSetSysParamOpt";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let opt = tri!(check_opt(F, opt, false));
    tri!(check_value(F, opt, value));
    PROCESS_PARAMS.set(opt, value);
    ACL_SUCCESS
}

/// `aclrtCtxGetSysParamOpt`: a system parameter of the current context.
///
/// # Safety
///
/// `value` is null or valid for writing an `i64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtCtxGetSysParamOpt(opt: aclSysParamOpt, value: *mut i64) -> aclError {
    const F: &str = "aclrtCtxGetSysParamOpt";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    let opt = tri!(check_opt(F, opt, true));
    let ctx = tri!(common::current(F));
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { get_param(F, &ctx.sys_params, opt, value) }
}

/// `aclrtCtxSetSysParamOpt`: sets a system parameter of the current
/// context.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtCtxSetSysParamOpt(opt: aclSysParamOpt, value: i64) -> aclError {
    const F: &str = "aclrtCtxSetSysParamOpt";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let opt = tri!(check_opt(F, opt, true));
    // The value is checked before the context is looked for
    // (`ApiErrorDecorator` before `ApiImpl`).
    tri!(check_value(F, opt, value));
    let ctx = tri!(common::current(F));
    ctx.sys_params.set(opt, value);
    ACL_SUCCESS
}

/// `aclrtGetResInCurrentThread`: the cube or vector cores the calling
/// thread may use — all of its device's.
///
/// # Safety
///
/// `value` is null or valid for writing a `u32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetResInCurrentThread(
    type_: aclrtDevResLimitType,
    value: *mut u32,
) -> aclError {
    const F: &str = "aclrtGetResInCurrentThread";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    if type_ != ACL_RT_DEV_RES_CUBE_CORE && type_ != ACL_RT_DEV_RES_VECTOR_CORE {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: type {type_} is invalid; expected ACL_RT_DEV_RES_CUBE_CORE (0) or \
                 ACL_RT_DEV_RES_VECTOR_CORE (1)"
            ),
        );
    }
    tri!(common::current(F));
    let soc = match crate::config::get() {
        Ok(c) => c.soc(),
        Err(msg) => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: cann-sim configuration: {msg}"),
            );
        }
    };
    let cores = if type_ == ACL_RT_DEV_RES_CUBE_CORE {
        soc.cube_cores
    } else {
        soc.vector_cores
    };
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *value = u32::try_from(cores).unwrap_or(0) };
    ACL_SUCCESS
}

/// "Not supported" in the utilisation figures (`DEVICE_UTILIZATION_NOT_SUPPORT`).
const UTILIZATION_NOT_SUPPORT: i32 = -1;

/// `aclrtGetDeviceUtilizationRate`: the device's busy percentages.
///
/// # Safety
///
/// `utilization_info` is null or valid for reading and writing an
/// `aclrtUtilizationInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceUtilizationRate(
    device_id: i32,
    utilization_info: *mut aclrtUtilizationInfo,
) -> aclError {
    const F: &str = "aclrtGetDeviceUtilizationRate";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if utilization_info.is_null() {
        return common::null_arg(F, "utilizationInfo");
    }
    // SAFETY: checked non-null; the caller passes a valid struct.
    let info = unsafe { &mut *utilization_info };
    if !info.utilizationExtend.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: utilizationInfo->utilizationExtend is a reserved parameter and must be null"
            ),
        );
    }
    let physical = crate::config::get().ok().and_then(|c| {
        let logical = usize::try_from(device_id).ok()?;
        c.visible.get(logical).copied()
    });
    let busy = physical.map(|p| {
        let load = crate::telemetry::snapshot().device(p);
        (load.busy.clamp(0.0, 1.0) * 100.0).round() as i32
    });
    info.cubeUtilization = busy.unwrap_or(UTILIZATION_NOT_SUPPORT);
    info.vectorUtilization = busy.unwrap_or(UTILIZATION_NOT_SUPPORT);
    info.aicpuUtilization = busy.map_or(UTILIZATION_NOT_SUPPORT, |_| 0);
    info.memoryUtilization = UTILIZATION_NOT_SUPPORT;
    ACL_SUCCESS
}

//! Process-wide runtime settings: the floating-point saturation mode, the
//! operator timeouts and the system parameters (per process and per
//! context).
//!
//! - The saturation mode is one value for the process, `INFNAN` from the
//!   start on the simulated SoCs: `Runtime::Init` sets
//!   `RT_OVERFLOW_MODE_INFNAN` on chips with `RT_FEATURE_OVERFLOW_MODE`
//!   (hicann/runtime `src/runtime/core/src/runtime.cc`), which the 910B and
//!   910_93 parts list (`src/runtime/config/910_B_93/dev_info_reg.cc`).
//!   `ApiImpl::SetDeviceSatMode` sets the process's mode (and the current
//!   device's), `GetDeviceSatMode` reads the process's (`api_impl.cc`).
//! - The operator wait timeout (seconds, 0: never) bounds how long a queued
//!   event wait may block its stream (`ApiImpl::SetOpWaitTimeOut`,
//!   `Runtime::SetTimeoutConfig(RT_TIMEOUT_TYPE_OP_WAIT, …)`); past it the
//!   wait task fails with the task timeout. (The execute timeout has no
//!   counterpart: the simulator's kernels run on host threads and are never
//!   interrupted.)
//! - System parameters (`aclrtSetSysParamOpt`, `aclrtCtxSetSysParamOpt`)
//!   are kept per option, unset until set: reading an unset one is
//!   `ACL_ERROR_RT_SYSPARAMOPT_NOT_SET` (`Context::CtxGetSysParamOpt`,
//!   `src/runtime/core/src/context/context.cc`).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

/// The floating-point overflow mode (`aclrtFloatOverflowMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SatMode {
    /// Results saturate at the type's limits (`ACL_RT_OVERFLOW_MODE_SATURATION`).
    Saturation,
    /// Results overflow to inf and NaN (`ACL_RT_OVERFLOW_MODE_INFNAN`).
    InfNan,
}

/// `true` when the mode is saturation (default: inf/NaN, see the module
/// documentation).
static SATURATION: AtomicBool = AtomicBool::new(false);

/// The process's saturation mode.
pub fn sat_mode() -> SatMode {
    if SATURATION.load(Ordering::Acquire) {
        SatMode::Saturation
    } else {
        SatMode::InfNan
    }
}

/// Sets the process's saturation mode.
pub fn set_sat_mode(mode: SatMode) {
    SATURATION.store(mode == SatMode::Saturation, Ordering::Release);
}

static OP_WAIT_TIMEOUT_S: AtomicU32 = AtomicU32::new(0);

/// Sets the operator wait timeout in seconds (0: never time out).
pub fn set_op_wait_timeout(seconds: u32) {
    OP_WAIT_TIMEOUT_S.store(seconds, Ordering::Release);
}

/// The operator wait timeout, `None` when waits never time out.
pub fn op_wait_timeout() -> Option<Duration> {
    match OP_WAIT_TIMEOUT_S.load(Ordering::Acquire) {
        0 => None,
        s => Some(Duration::from_secs(u64::from(s))),
    }
}

/// The system parameters (`rtSysParamOpt`), `SYS_OPT_RESERVED` of them.
pub const SYS_PARAMS: usize = 4;

/// System parameter values, each unset until set.
#[derive(Debug, Default)]
pub struct SysParams(Mutex<[Option<i64>; SYS_PARAMS]>);

impl SysParams {
    /// No parameter set.
    pub const fn new() -> SysParams {
        SysParams(Mutex::new([None; SYS_PARAMS]))
    }

    /// The value of `opt`, `None` when it was never set (or `opt` is out of
    /// range).
    pub fn get(&self, opt: usize) -> Option<i64> {
        self.0.lock().get(opt).copied().flatten()
    }

    /// Sets `opt` (ignored when out of range: the exports check it).
    pub fn set(&self, opt: usize, value: i64) {
        if let Some(slot) = self.0.lock().get_mut(opt) {
            *slot = Some(value);
        }
    }
}

/// The process-level system parameters (`aclrtSetSysParamOpt`).
pub static PROCESS_PARAMS: SysParams = SysParams::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_is_unset_until_set_and_out_of_range_options_are_ignored() {
        let p = SysParams::new();
        assert_eq!(p.get(0), None);
        p.set(0, 2);
        assert_eq!(p.get(0), Some(2));
        p.set(SYS_PARAMS, 1);
        assert_eq!(p.get(SYS_PARAMS), None);
    }
}

//! HCCL settings: what a communicator config may hold
//! (`HcclGetCommConfigCapability`), and the settings made outside it,
//! process-wide (`HcclSetConfig` / `HcclGetConfig`, e.g. torch_npu's
//! deterministic switch) or per communicator (`HcclSetCommConfig` /
//! `HcclGetCommConfig`).
//!
//! | `HcclConfig` | values | in the simulator |
//! |---|---|---|
//! | `HCCL_DETERMINISTIC` | 0 off, 1 on | stored and reported; the simulator's reductions are deterministic either way (each block is reduced in a fixed order) |
//! | `HCCL_ACCELERATOR` | 0 default, 1 CCU, 2 AIV, 3 AICPU_TS, 4 HOSTCPU_TS, 5 AICPU | 0 only: the other engines are not simulated (`HCCL_E_NOT_SUPPORT`) |
//!
//! The process-wide deterministic setting starts from `HCCL_DETERMINISTIC`
//! in the environment (`true` or `strict` on, `false` or unset off; any
//! other value fails the environment check, see [`crate::comm::env`]) and is the
//! default of communicators created afterwards whose config does not set
//! `hcclDeterministic`.

#![allow(non_snake_case)]

use super::common::{check_injected, comm_arg, null, para, tri};
use crate::comm::settings;
use crate::recent_error::fail;
use hccl_sys::*;
use std::sync::atomic::Ordering;

fn accelerator_name(v: i32) -> Option<&'static str> {
    Some(match v {
        0 => "default",
        1 => "CCU",
        2 => "AIV",
        3 => "AICPU_TS",
        4 => "HOSTCPU_TS",
        5 => "AICPU",
        _ => return None,
    })
}

/// Checks `value` for `config`.
fn check(f: &str, config: HcclConfig, value: i32) -> Result<(), HcclResult> {
    match config {
        HCCL_DETERMINISTIC if value == 0 || value == 1 => Ok(()),
        HCCL_DETERMINISTIC => Err(para(
            f,
            format!("HCCL_DETERMINISTIC takes 0 (off) or 1 (on), not {value}"),
        )),
        HCCL_ACCELERATOR if value == 0 => Ok(()),
        HCCL_ACCELERATOR => match accelerator_name(value) {
            Some(name) => Err(fail(
                HCCL_E_NOT_SUPPORT,
                format!(
                    "{f}: accelerator {name} ({value}) is not simulated: cann-sim runs collectives \
                     on its stream workers; only 0 (default) is accepted"
                ),
            )),
            None => Err(para(
                f,
                format!("HCCL_ACCELERATOR takes 0..=5, not {value}"),
            )),
        },
        other => Err(para(f, unknown(other))),
    }
}

/// `HcclGetCommConfigCapability`: every `HcclCommConfigCapability` item
/// below the returned number may be set in an `HcclCommConfig`. The
/// simulator reads and checks the items up to `HCCL_COMM_CONFIG_EXEC_TIMEOUT`
/// (buffer size, deterministic, name, op expansion mode 0–3, world rank id,
/// job id, ACL graph zero-copy 0–1, exec timeout); the later ones (algorithm,
/// retry, buffer name) are not read.
///
/// # Safety
///
/// None: no arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommConfigCapability() -> u32 {
    HCCL_COMM_CONFIG_EXEC_TIMEOUT + 1
}

/// `HcclSetConfig`: a process-wide setting.
///
/// # Safety
///
/// None beyond the C signature.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclSetConfig(
    config: HcclConfig,
    configValue: HcclConfigValue,
) -> HcclResult {
    const F: &str = "HcclSetConfig";
    check_injected!(F);
    // SAFETY: the union has one member, an i32.
    let v = unsafe { configValue.value };
    tri!(check(F, config, v));
    match config {
        HCCL_DETERMINISTIC => settings::set_deterministic(v),
        _ => settings::set_accelerator(v),
    }
    HCCL_SUCCESS
}

/// `HcclGetConfig`: a process-wide setting.
///
/// # Safety
///
/// `configValue` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetConfig(
    config: HcclConfig,
    configValue: *mut HcclConfigValue,
) -> HcclResult {
    const F: &str = "HcclGetConfig";
    check_injected!(F);
    if configValue.is_null() {
        return null(F, "configValue");
    }
    // SAFETY: checked non-null; the caller's contract.
    unsafe {
        report(
            F,
            config,
            configValue,
            settings::deterministic(),
            settings::accelerator(),
        )
    }
}

/// `HcclSetCommConfig`: a setting of one communicator.
///
/// # Safety
///
/// Handles are looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclSetCommConfig(
    comm: HcclComm,
    config: HcclConfig,
    configValue: HcclConfigValue,
) -> HcclResult {
    const F: &str = "HcclSetCommConfig";
    check_injected!(F);
    let c = tri!(comm_arg(F, comm));
    // SAFETY: the union has one member, an i32.
    let v = unsafe { configValue.value };
    tri!(check(F, config, v));
    match config {
        HCCL_DETERMINISTIC => c.deterministic.store(v, Ordering::Relaxed),
        _ => c.accelerator.store(v, Ordering::Relaxed),
    }
    HCCL_SUCCESS
}

/// `HcclGetCommConfig`: a setting of one communicator.
///
/// # Safety
///
/// `configValue` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommConfig(
    comm: HcclComm,
    config: HcclConfig,
    configValue: *mut HcclConfigValue,
) -> HcclResult {
    const F: &str = "HcclGetCommConfig";
    check_injected!(F);
    if configValue.is_null() {
        return null(F, "configValue");
    }
    let c = tri!(comm_arg(F, comm));
    // SAFETY: checked non-null; the caller's contract.
    unsafe {
        report(
            F,
            config,
            configValue,
            c.deterministic.load(Ordering::Relaxed),
            c.accelerator.load(Ordering::Relaxed),
        )
    }
}

/// Writes the value of `config` (`deterministic` or `accelerator`) to `out`.
///
/// # Safety
///
/// `out` is writable.
unsafe fn report(
    f: &str,
    config: HcclConfig,
    out: *mut HcclConfigValue,
    deterministic: i32,
    accelerator: i32,
) -> HcclResult {
    let value = match config {
        HCCL_DETERMINISTIC => deterministic,
        HCCL_ACCELERATOR => accelerator,
        other => return para(f, unknown(other)),
    };
    // SAFETY: the caller's contract.
    unsafe { *out = HcclConfigValue { value } };
    HCCL_SUCCESS
}

fn unknown(config: HcclConfig) -> String {
    format!("config {config} is not an HcclConfig (HCCL_DETERMINISTIC, HCCL_ACCELERATOR)")
}

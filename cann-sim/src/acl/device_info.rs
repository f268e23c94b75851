//! Device queries: `aclGetDeviceCapability`, `aclrtGetDeviceInfo`,
//! `aclrtGetDeviceCapability`.
//!
//! The figures are those of the configured SoC (`CANN_SIM_SOC_NAME`), from
//! its platform file in hicann/runtime
//! (`src/platform/platform_config/cann/<SoC>.ini`): for the default
//! Ascend910B3, 20 AI cores (20 cube, 40 vector), 6 AI CPUs, 192 MiB of L2,
//! NPU arch 2201. Total memory is the simulated HBM (`CANN_SIM_HBM_MIB`).
//!
//! Codes:
//!
//! - `aclGetDeviceCapability` (`src/acl/aclrt_impl/acl.cpp`): null value,
//!   device id out of range, or an info type other than AI core count,
//!   vector core count and L2 size → 100000.
//! - `aclrtGetDeviceInfo` (`src/acl/aclrt_impl/device.cpp`, then
//!   `ApiErrorDecorator::GetDeviceInfoByAttr` and
//!   `ApiImpl::GetDeviceInfoByAttr[Misc]`): null value → 100000; device out
//!   of range → 107000; an unknown attribute → 107000. The SIMT attributes
//!   (202–212) are 0 on parts without SIMT, as documented
//!   (`docs/zh/api_ref/25-02_Enumerations.md`, aclrtDevAttr). The
//!   super-pod, chip, mainboard and connection attributes (401–408) describe
//!   a physical installation the simulator does not model:
//!   `ACL_ERROR_API_NOT_SUPPORT` (200001).
//! - `aclrtGetDeviceCapability` (`rtsDeviceGetCapability`): null value →
//!   100000; a feature type other than the two defined → 107000; device out
//!   of range → 107001. `ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV` is
//!   supported (Atlas A2/A3 support `aclrtTaskUpdateAsync`,
//!   `docs/zh/api_ref/12_execution_control.md`);
//!   `ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV` is not (the simulator has no
//!   shared queues).

use super::common::{self, PARAM_INVALID};
use super::device::{check_id, device_count};
use crate::config;
use crate::faults;
use crate::recent_error::fail;
use acl_sys::{
    ACL_DEV_ATTR_AICORE_CORE_NUM, ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_CUBE_CORE_NUM,
    ACL_DEV_ATTR_HD_CONNECT_TYPE, ACL_DEV_ATTR_IS_VIRTUAL, ACL_DEV_ATTR_L2_CACHE_SIZE,
    ACL_DEV_ATTR_MAX_BLOCK_DIM_Z, ACL_DEV_ATTR_NPU_ARCH, ACL_DEV_ATTR_SMP_ID,
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, ACL_DEV_ATTR_VECTOR_CORE_NUM, ACL_DEV_ATTR_WARP_SIZE,
    ACL_DEV_FEATURE_NOT_SUPPORT, ACL_DEV_FEATURE_SUPPORT, ACL_DEVICE_INFO_AI_CORE_NUM,
    ACL_DEVICE_INFO_L2_SIZE, ACL_DEVICE_INFO_VECTOR_CORE_NUM, ACL_ERROR_API_NOT_SUPPORT,
    ACL_ERROR_INVALID_PARAM, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV,
    ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, ACL_SUCCESS, aclDeviceInfo, aclError,
    aclrtDevAttr, aclrtDevFeatureType,
};

fn config(function: &str) -> Result<&'static config::Config, aclError> {
    config::get().map_err(|msg| {
        fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: cann-sim configuration: {msg}"),
        )
    })
}

/// `aclGetDeviceCapability`: AI core count, vector core count or L2 size
/// of `device_id`.
///
/// # Safety
///
/// `value` is null or valid for writing an `i64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDeviceCapability(
    device_id: u32,
    device_info: aclDeviceInfo,
    value: *mut i64,
) -> aclError {
    const F: &str = "aclGetDeviceCapability";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    let count = tri!(device_count(F));
    if device_id >= count {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: deviceId {device_id} is out of range [0, {count})"),
        );
    }
    let soc = match config(F) {
        Ok(c) => c.soc(),
        Err(rc) => return rc,
    };
    let v = match device_info {
        ACL_DEVICE_INFO_AI_CORE_NUM => soc.ai_cores,
        ACL_DEVICE_INFO_VECTOR_CORE_NUM => soc.vector_cores,
        ACL_DEVICE_INFO_L2_SIZE => soc.l2_bytes,
        other => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{F}: deviceInfo {other} is invalid; expected ACL_DEVICE_INFO_AI_CORE_NUM (0), \
                     ACL_DEVICE_INFO_VECTOR_CORE_NUM (1) or ACL_DEVICE_INFO_L2_SIZE (2)"
                ),
            );
        }
    };
    // SAFETY: checked non-null; the caller passes a writable i64.
    unsafe { *value = v };
    ACL_SUCCESS
}

/// `aclrtGetDeviceInfo`: one attribute of `device_id`.
///
/// # Safety
///
/// `value` is null or valid for writing an `i64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceInfo(
    device_id: u32,
    attr: aclrtDevAttr,
    value: *mut i64,
) -> aclError {
    const F: &str = "aclrtGetDeviceInfo";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    let cfg = tri!(config(F));
    if device_id >= cfg.device_count() {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: deviceId {device_id} is out of range [0, {})",
                cfg.device_count()
            ),
        );
    }
    let soc = cfg.soc();
    let v = match attr {
        ACL_DEV_ATTR_AICPU_CORE_NUM => soc.ai_cpus,
        ACL_DEV_ATTR_AICORE_CORE_NUM => soc.ai_cores,
        ACL_DEV_ATTR_CUBE_CORE_NUM => soc.cube_cores,
        ACL_DEV_ATTR_VECTOR_CORE_NUM => soc.vector_cores,
        ACL_DEV_ATTR_WARP_SIZE..=ACL_DEV_ATTR_MAX_BLOCK_DIM_Z => 0,
        ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE => i64::try_from(cfg.hbm_bytes).unwrap_or(i64::MAX),
        ACL_DEV_ATTR_L2_CACHE_SIZE => soc.l2_bytes,
        ACL_DEV_ATTR_IS_VIRTUAL => 0,
        ACL_DEV_ATTR_NPU_ARCH => soc.npu_arch,
        ACL_DEV_ATTR_SMP_ID..=ACL_DEV_ATTR_HD_CONNECT_TYPE => {
            return fail(
                ACL_ERROR_API_NOT_SUPPORT,
                format!(
                    "{F}: attribute {attr} describes the physical installation (chip, super pod, \
                     mainboard, host connection), which cann-sim does not model"
                ),
            );
        }
        other => {
            return fail(
                PARAM_INVALID,
                format!("{F}: attr {other} is not an aclrtDevAttr"),
            );
        }
    };
    // SAFETY: checked non-null; the caller passes a writable i64.
    unsafe { *value = v };
    ACL_SUCCESS
}

/// `aclrtGetDeviceCapability`: whether `device_id` supports a feature
/// (`ACL_DEV_FEATURE_SUPPORT` 1 / `ACL_DEV_FEATURE_NOT_SUPPORT` 0).
///
/// # Safety
///
/// `value` is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtGetDeviceCapability(
    device_id: i32,
    dev_feature_type: aclrtDevFeatureType,
    value: *mut i32,
) -> aclError {
    const F: &str = "aclrtGetDeviceCapability";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    let v = match dev_feature_type {
        ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV => ACL_DEV_FEATURE_SUPPORT,
        ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV => ACL_DEV_FEATURE_NOT_SUPPORT,
        other => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: devFeatureType {other} is invalid; expected \
                     ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV (1) or \
                     ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV (21)"
                ),
            );
        }
    };
    tri!(check_id(F, device_id));
    // SAFETY: checked non-null; the caller passes a writable i32.
    unsafe { *value = v as i32 };
    ACL_SUCCESS
}

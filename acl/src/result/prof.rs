//! `aclprof*`: profiling sessions (`acl/acl_prof.h`).

use super::{forward, non_null};
use crate::error::Result;
use acl_sys as sys;
use std::ffi::CStr;

/// `aclprofInit`: starts profiling, writing under `path` (created when
/// missing).
#[doc(alias = "aclprofInit")]
pub fn prof_init(path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string and its length, read during the call.
    unsafe { call!(aclprofInit(path.as_ptr(), path.to_bytes().len())) }
}

/// `aclprofFinalize`: ends profiling (after stopping what still runs).
#[doc(alias = "aclprofFinalize")]
pub fn prof_finalize() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclprofFinalize()) }
}

/// `aclprofSetConfig`: an option of later runs (`ACL_PROF_STORAGE_LIMIT`,
/// ...), before [`prof_start`].
#[doc(alias = "aclprofSetConfig")]
pub fn prof_set_config(kind: sys::aclprofConfigType, value: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string and its length, read during the call.
    unsafe {
        call!(aclprofSetConfig(
            kind,
            value.as_ptr(),
            value.to_bytes().len()
        ))
    }
}

/// `aclprofCreateConfig` without AI Core events: what to profile on which
/// devices. The runtime returns null for invalid devices (out of range,
/// repeated, none without `ACL_PROF_MSPROFTX`); that is
/// `ACL_ERROR_FAILURE` here, with the runtime's message.
#[doc(alias = "aclprofCreateConfig")]
pub fn prof_create_config(
    devices: &[u32],
    metrics: sys::aclprofAicoreMetrics,
    data_types: u64,
) -> Result<*mut sys::aclprofConfig> {
    let mut ids = devices.to_vec();
    let count = u32::try_from(ids.len()).unwrap_or(u32::MAX);
    // SAFETY: `ids` holds `count` ids (the runtime reads them only); null
    // AI Core events.
    let ptr = unsafe {
        sys::aclprofCreateConfig(
            ids.as_mut_ptr(),
            count,
            metrics,
            std::ptr::null(),
            data_types,
        )
    }?;
    non_null("aclprofCreateConfig", ptr)
}

forward! {
    /// `aclprofDestroyConfig`.
    #[doc(alias = "aclprofDestroyConfig")]
    prof_destroy_config = aclprofDestroyConfig(config: *const sys::aclprofConfig);
    /// `aclprofStart`: profiles the config's devices until
    /// [`prof_stop`] with the same config.
    #[doc(alias = "aclprofStart")]
    prof_start = aclprofStart(config: *const sys::aclprofConfig);
    /// `aclprofStop`: stops what `config` started and writes its data.
    #[doc(alias = "aclprofStop")]
    prof_stop = aclprofStop(config: *const sys::aclprofConfig);
}

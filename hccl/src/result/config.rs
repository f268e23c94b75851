//! Configuration: the options of a new communicator, and the settings of
//! the library (process-wide) or of one communicator.

use crate::error::Result;
use acl_sys::loader;
use hccl_sys as sys;

/// A new `HcclCommConfig`, as the loaded HCCL's `HcclCommConfigInit` would
/// initialise it. That function is inline in the header, not a library
/// export, so nothing is called: this is the Rust equivalent of the
/// `hccl-sys` crate, for the CANN release of the loaded AscendCL (releases
/// before CANN 8.5 do not know the "not set" values and write explicit
/// defaults instead).
pub fn comm_config_init() -> sys::HcclCommConfig {
    let mut config = sys::comm_config_default();
    sys::comm_config_init_for(&mut config, loaded_acl_version());
    config
}

/// The ACL version of the loaded AscendCL (the same CANN install as
/// `libhccl.so`, which has no version function), if known. AscendCL has no
/// C function for it either: this reads what the loader found.
fn loaded_acl_version() -> Option<(u32, u32, u32)> {
    let lib = acl_sys::library().ok()?;
    loader::parse_acl_version(lib.version())
}

/// `HcclGetCommConfigCapability`: the number of `HcclCommConfig` items the
/// loaded library reads (items are numbered from 0).
#[doc(alias = "HcclGetCommConfigCapability")]
pub fn get_comm_config_capability() -> Result<u32> {
    // SAFETY: no arguments; the result is a plain count, not an HcclResult.
    Ok(unsafe { sys::HcclGetCommConfigCapability() }?)
}

/// `HcclSetConfig`: sets a process-wide setting.
#[doc(alias = "HcclSetConfig")]
pub fn set_config(config: sys::HcclConfig, value: i32) -> Result<()> {
    // SAFETY: plain values.
    unsafe { call!(HcclSetConfig(config, sys::HcclConfigValue { value })) }
}

/// `HcclGetConfig`: a process-wide setting.
#[doc(alias = "HcclGetConfig")]
pub fn get_config(config: sys::HcclConfig) -> Result<i32> {
    let mut out = sys::HcclConfigValue { value: 0 };
    // SAFETY: a valid out-pointer.
    unsafe { call!(HcclGetConfig(config, &mut out)) }?;
    // SAFETY: the union has one member, an i32.
    Ok(unsafe { out.value })
}

/// `HcclSetCommConfig`: sets a setting of `comm`.
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclSetCommConfig")]
pub unsafe fn set_comm_config(
    comm: sys::HcclComm,
    config: sys::HcclConfig,
    value: i32,
) -> Result<()> {
    // SAFETY: the caller's contract; plain values.
    unsafe {
        call!(HcclSetCommConfig(
            comm,
            config,
            sys::HcclConfigValue { value }
        ))
    }
}

/// `HcclGetCommConfig`: a setting of `comm`.
///
/// # Safety
///
/// `comm` is a live communicator.
#[doc(alias = "HcclGetCommConfig")]
pub unsafe fn get_comm_config(comm: sys::HcclComm, config: sys::HcclConfig) -> Result<i32> {
    let mut out = sys::HcclConfigValue { value: 0 };
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(HcclGetCommConfig(comm, config, &mut out)) }?;
    // SAFETY: the union has one member, an i32.
    Ok(unsafe { out.value })
}

//! Peer access between devices: `aclrtDeviceCanAccessPeer`,
//! `aclrtDeviceEnablePeerAccess`, `aclrtDeviceDisablePeerAccess`.
//!
//! Every two distinct simulated devices can access each other. Access is
//! enabled per direction, from the current device to a peer
//! (`docs/zh/api_ref/04_device_management.md`: "单向"), and process-wide.
//! Copies between devices (`aclrtMemcpy`, `aclrtMemcpyAsync`, device to
//! device) need one end on the current device and access enabled from it to
//! the other end's device; otherwise they fail with 107000.
//!
//! Codes (hicann/runtime `src/acl/aclrt_impl/memory.cpp`
//! `aclrtDeviceCanAccessPeerImpl` and the two after it, then
//! `src/runtime/api/impl/api_error.cc` `DeviceCanAccessPeer`, `EnableP2P`):
//! the same device twice → 100000; a device id out of range → 107001; null
//! `canAccessPeer` → 107000 (checked by the runtime, not the ACL layer);
//! `flags != 0` → `ACL_ERROR_FEATURE_UNSUPPORTED` (200006); enable/disable
//! without a current device → 107002. Enabling twice and disabling access
//! that is not enabled succeed (the driver's answer for these is not in the
//! open source).

use super::common::{self, PARAM_INVALID};
use super::device::check_id;
use crate::recent_error::fail;
use crate::{faults, state};
use acl_sys::{ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclError};

fn same_device(function: &str, device: i32) -> aclError {
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!("{function}: deviceId {device} cannot be equal to peerDeviceId {device}"),
    )
}

/// `aclrtDeviceCanAccessPeer`: 1 for any two distinct simulated devices.
///
/// # Safety
///
/// `can_access_peer` is null or valid for writing an `i32`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtDeviceCanAccessPeer(
    can_access_peer: *mut i32,
    device_id: i32,
    peer_device_id: i32,
) -> aclError {
    const F: &str = "aclrtDeviceCanAccessPeer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if device_id == peer_device_id {
        return same_device(F, device_id);
    }
    tri!(check_id(F, peer_device_id));
    tri!(check_id(F, device_id));
    if can_access_peer.is_null() {
        return fail(PARAM_INVALID, format!("{F}: canAccessPeer is null"));
    }
    // SAFETY: checked non-null; the caller passes a writable i32.
    unsafe { *can_access_peer = 1 };
    ACL_SUCCESS
}

fn current_and_peer(function: &str, peer: i32) -> Result<(u32, u32), aclError> {
    let ctx = common::current(function)?;
    if i64::from(ctx.device) == i64::from(peer) {
        return Err(same_device(function, peer));
    }
    let peer = check_id(function, peer)?;
    Ok((ctx.device, peer))
}

/// `aclrtDeviceEnablePeerAccess`: lets the current device access
/// `peer_device_id`'s memory (one direction).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceEnablePeerAccess(peer_device_id: i32, flags: u32) -> aclError {
    const F: &str = "aclrtDeviceEnablePeerAccess";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if flags != 0 {
        return fail(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!("{F}: flags {flags:#x}: the parameter is reserved and must be 0"),
        );
    }
    match current_and_peer(F, peer_device_id) {
        Ok((from, to)) => {
            state::global().lock().peers.insert((from, to));
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `aclrtDeviceDisablePeerAccess`: withdraws what
/// `aclrtDeviceEnablePeerAccess` gave.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtDeviceDisablePeerAccess(peer_device_id: i32) -> aclError {
    const F: &str = "aclrtDeviceDisablePeerAccess";
    if let Some(code) = faults::check(F) {
        return code;
    }
    match current_and_peer(F, peer_device_id) {
        Ok((from, to)) => {
            state::global().lock().peers.remove(&(from, to));
            ACL_SUCCESS
        }
        Err(rc) => rc,
    }
}

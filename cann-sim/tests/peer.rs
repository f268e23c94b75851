//! Peer access and device queries on the simulator: copies between devices
//! need access enabled from the current device, and the 910B3 figures.
//!
//! Peer access is process-wide: this binary's tests use disjoint device
//! pairs (4↔5, 6↔7) and only set devices.

mod common;

use acl_sys::{
    ACL_DEV_ATTR_AICORE_CORE_NUM, ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_CUBE_CORE_NUM,
    ACL_DEV_ATTR_IS_VIRTUAL, ACL_DEV_ATTR_L2_CACHE_SIZE, ACL_DEV_ATTR_NPU_ARCH,
    ACL_DEV_ATTR_PHY_CHIP_ID, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, ACL_DEV_ATTR_VECTOR_CORE_NUM,
    ACL_DEV_ATTR_WARP_SIZE, ACL_DEVICE_INFO_AI_CORE_NUM, ACL_DEVICE_INFO_L2_SIZE,
    ACL_DEVICE_INFO_VECTOR_CORE_NUM, ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_FEATURE_UNSUPPORTED,
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_PARAM_INVALID, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV,
    ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_DEVICEID: i32 = rc(ACL_ERROR_RT_INVALID_DEVICEID);

fn can_access(a: i32, b: i32) -> Result<i32, i32> {
    let mut v = -1;
    // SAFETY: valid out-pointer.
    match unsafe { aclrtDeviceCanAccessPeer(&mut v, a, b) } {
        0 => Ok(v),
        r => Err(r),
    }
}

fn memcpy(dst: *mut u8, src: *const u8, n: usize, kind: u32) -> i32 {
    // SAFETY: device ends are validated by the simulator.
    unsafe { aclrtMemcpy(dst.cast(), n, src.cast(), n, kind) }
}

#[test]
fn every_two_distinct_devices_can_access_each_other() {
    assert_eq!(can_access(0, 1), Ok(1));
    assert_eq!(can_access(7, 2), Ok(1));
    let msg = assert_fails(
        can_access(3, 3).unwrap_err(),
        ACL_ERROR_INVALID_PARAM,
        "aclrtDeviceCanAccessPeer",
    );
    assert_contains(&msg, "cannot be equal");
    assert_fails(
        can_access(0, 8).unwrap_err(),
        INVALID_DEVICEID,
        "aclrtDeviceCanAccessPeer",
    );
    assert_fails(
        can_access(-1, 0).unwrap_err(),
        INVALID_DEVICEID,
        "aclrtDeviceCanAccessPeer",
    );
    // SAFETY: null is allowed and rejected (by the runtime layer: 107000).
    let r = unsafe { aclrtDeviceCanAccessPeer(null_mut(), 0, 1) };
    assert_fails(r, PARAM_INVALID, "aclrtDeviceCanAccessPeer");
}

#[test]
fn enable_peer_access_checks_flags_context_and_ids() {
    on_new_thread(|| {
        assert_fails(
            aclrtDeviceEnablePeerAccess(5, 0),
            rc(ACL_ERROR_RT_CONTEXT_NULL),
            "aclrtDeviceEnablePeerAccess",
        );
        assert_fails(
            aclrtDeviceDisablePeerAccess(5),
            rc(ACL_ERROR_RT_CONTEXT_NULL),
            "aclrtDeviceDisablePeerAccess",
        );
        use_device(4);
        let msg = assert_fails(
            aclrtDeviceEnablePeerAccess(5, 1),
            ACL_ERROR_FEATURE_UNSUPPORTED,
            "aclrtDeviceEnablePeerAccess",
        );
        assert_contains(&msg, "must be 0");
        assert_fails(
            aclrtDeviceEnablePeerAccess(4, 0),
            ACL_ERROR_INVALID_PARAM,
            "aclrtDeviceEnablePeerAccess",
        );
        assert_fails(
            aclrtDeviceDisablePeerAccess(4),
            ACL_ERROR_INVALID_PARAM,
            "aclrtDeviceDisablePeerAccess",
        );
        assert_fails(
            aclrtDeviceEnablePeerAccess(8, 0),
            INVALID_DEVICEID,
            "aclrtDeviceEnablePeerAccess",
        );
    });
}

#[test]
fn copies_between_devices_need_access_enabled_from_the_current_device() {
    on_new_thread(|| {
        use_device(7);
        let far = malloc(64);
        ok(memset_async(far, 64, 0x17, null_mut()));
        ok(sync(null_mut()));
        use_device(6);
        let near = malloc(64);
        let s = create_stream();
        for kind in [ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT] {
            let msg = assert_fails(memcpy(near, far, 64, kind), PARAM_INVALID, "aclrtMemcpy");
            assert_contains(&msg, "peer access not enabled from device 6 to device 7");
            let r = memcpy_async(near, far, 64, kind, s);
            assert_fails(r, PARAM_INVALID, "aclrtMemcpyAsync");
        }
        ok(aclrtDeviceEnablePeerAccess(7, 0));
        ok(aclrtDeviceEnablePeerAccess(7, 0));
        ok(memcpy(near, far, 64, ACL_MEMCPY_DEVICE_TO_DEVICE));
        assert_eq!(to_host(near, 64), vec![0x17; 64]);
        ok(memset_async(near, 64, 0x71, s));
        ok(memcpy_async(far, near, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
        ok(sync(s));
        // Access is one-way: from device 7, device 6 is still out of reach.
        use_device(7);
        assert_eq!(to_host(far, 64), vec![0x71; 64]);
        let r = memcpy(far, near, 64, ACL_MEMCPY_DEVICE_TO_DEVICE);
        let msg = assert_fails(r, PARAM_INVALID, "aclrtMemcpy");
        assert_contains(&msg, "from device 7 to device 6");
        use_device(6);
        ok(aclrtDeviceDisablePeerAccess(7));
        assert_fails(
            memcpy(near, far, 64, ACL_MEMCPY_DEVICE_TO_DEVICE),
            PARAM_INVALID,
            "aclrtMemcpy",
        );
        destroy_stream(s);
        free(near);
        free(far);
    });
}

#[test]
fn get_device_capability_reports_the_910b3_cores_and_l2() {
    let get = |info| {
        let mut v = -1i64;
        // SAFETY: valid out-pointer.
        ok(unsafe { aclGetDeviceCapability(0, info, &mut v) });
        v
    };
    assert_eq!(get(ACL_DEVICE_INFO_AI_CORE_NUM), 20);
    assert_eq!(get(ACL_DEVICE_INFO_VECTOR_CORE_NUM), 40);
    assert_eq!(get(ACL_DEVICE_INFO_L2_SIZE), 192 << 20);
    let mut v = 0i64;
    // SAFETY: valid or null out-pointers.
    unsafe {
        assert_fails(
            aclGetDeviceCapability(0, 0, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclGetDeviceCapability",
        );
        assert_fails(
            aclGetDeviceCapability(8, 0, &mut v),
            ACL_ERROR_INVALID_PARAM,
            "aclGetDeviceCapability",
        );
        assert_fails(
            aclGetDeviceCapability(0, 3, &mut v),
            ACL_ERROR_INVALID_PARAM,
            "aclGetDeviceCapability",
        );
        assert_fails(
            aclGetDeviceCapability(0, -1, &mut v),
            ACL_ERROR_INVALID_PARAM,
            "aclGetDeviceCapability",
        );
    }
}

#[test]
fn get_device_info_reports_the_documented_attributes() {
    let get = |attr| {
        let mut v = -1i64;
        // SAFETY: valid out-pointer.
        match unsafe { aclrtGetDeviceInfo(1, attr, &mut v) } {
            0 => Ok(v),
            r => Err(r),
        }
    };
    assert_eq!(get(ACL_DEV_ATTR_AICPU_CORE_NUM), Ok(6));
    assert_eq!(get(ACL_DEV_ATTR_AICORE_CORE_NUM), Ok(20));
    assert_eq!(get(ACL_DEV_ATTR_CUBE_CORE_NUM), Ok(20));
    assert_eq!(get(ACL_DEV_ATTR_VECTOR_CORE_NUM), Ok(40));
    assert_eq!(get(ACL_DEV_ATTR_WARP_SIZE), Ok(0), "no SIMT on 910B");
    assert_eq!(get(ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE), Ok(64 << 30));
    assert_eq!(get(ACL_DEV_ATTR_L2_CACHE_SIZE), Ok(192 << 20));
    assert_eq!(get(ACL_DEV_ATTR_IS_VIRTUAL), Ok(0));
    assert_eq!(get(ACL_DEV_ATTR_NPU_ARCH), Ok(2201));
    let msg = assert_fails(
        get(ACL_DEV_ATTR_PHY_CHIP_ID).unwrap_err(),
        ACL_ERROR_API_NOT_SUPPORT,
        "aclrtGetDeviceInfo",
    );
    assert_contains(&msg, "does not model");
    assert_fails(get(9999).unwrap_err(), PARAM_INVALID, "aclrtGetDeviceInfo");
    let mut v = 0i64;
    // SAFETY: valid or null out-pointers.
    unsafe {
        assert_fails(
            aclrtGetDeviceInfo(8, ACL_DEV_ATTR_NPU_ARCH, &mut v),
            PARAM_INVALID,
            "aclrtGetDeviceInfo",
        );
        assert_fails(
            aclrtGetDeviceInfo(0, ACL_DEV_ATTR_NPU_ARCH, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtGetDeviceInfo",
        );
    }
}

#[test]
fn get_device_capability_answers_the_two_defined_features() {
    let get = |dev, f| {
        let mut v = -1i32;
        // SAFETY: valid out-pointer.
        match unsafe { aclrtGetDeviceCapability(dev, f, &mut v) } {
            0 => Ok(v),
            r => Err(r),
        }
    };
    assert_eq!(get(0, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV), Ok(1));
    assert_eq!(get(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV), Ok(0));
    assert_fails(
        get(0, 2).unwrap_err(),
        PARAM_INVALID,
        "aclrtGetDeviceCapability",
    );
    assert_fails(
        get(8, ACL_FEATURE_TSCPU_TASK_UPDATE_SUPPORT_AIC_AIV).unwrap_err(),
        INVALID_DEVICEID,
        "aclrtGetDeviceCapability",
    );
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtGetDeviceCapability(0, 1, null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCapability");
}

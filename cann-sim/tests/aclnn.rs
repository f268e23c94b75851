//! aclnn on the simulator through its C ABI: objects in handle tables, the
//! two phases, and every error path with its exact status.

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR, ACLNN_SUCCESS, aclOpExecutor, aclTensor,
};
use acl_sys::{ACL_FLOAT, ACL_FORMAT_ND, ACL_INT32};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use cann_sim::check::{Kind, Mode};
use common::{
    assert_contains, check_mode_with_off_in_a_child, count_reports, discard_recent_error, free,
    malloc, recent_error, use_device,
};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

/// The tests count live handles: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn two_phases_run_once_and_every_handle_is_released() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let before = live_handles();
    let (a, b, c) = (
        upload(&[1.0f32, 2.0, 3.0, 4.0]),
        upload(&[10.0f32, 20.0]),
        malloc(16),
    );
    let (ta, tb, tc) = (
        tensor(&[2, 2], ACL_FLOAT, a),
        tensor(&[2], ACL_FLOAT, b),
        tensor(&[2, 2], ACL_FLOAT, c),
    );
    let mut one = 1.0f32;
    // SAFETY: one f32.
    let alpha = unsafe { aclCreateScalar((&mut one as *mut f32).cast(), ACL_FLOAT) };
    let (mut ws, mut ex) = (7u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers throughout.
    unsafe {
        assert_eq!(
            aclnnAddGetWorkspaceSize(ta, tb, alpha, tc, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(ws, 0);
        // The wrong launch function for this executor.
        fails(
            aclnnMul(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnMul",
        );
        assert_eq!(aclnnAdd(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
        // One use.
        fails(
            aclnnAdd(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnAdd",
        );
        fails(
            aclnnAdd(null_mut(), 0, null_mut(), null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnAdd",
        );
    }
    assert_eq!(download::<f32>(c, 4), [11.0, 22.0, 13.0, 24.0]);
    // An executor that will not run is released with aclDestroyAclOpExecutor.
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            aclnnReluGetWorkspaceSize(ta, tc, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(aclDestroyAclOpExecutor(ex), ACLNN_SUCCESS);
        fails(
            aclDestroyAclOpExecutor(ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclDestroyAclOpExecutor",
        );
        for t in [ta, tb, tc] {
            assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        }
        assert_eq!(aclDestroyScalar(alpha), ACLNN_SUCCESS);
        // Destroyed handles are refused, and null is a no-op.
        fails(
            aclDestroyTensor(ta),
            ACLNN_ERR_PARAM_INVALID,
            "aclDestroyTensor",
        );
        assert_eq!(aclDestroyTensor(null()), ACLNN_SUCCESS);
    }
    for p in [a, b, c] {
        free(p);
    }
    assert_eq!(live_handles(), before);
}

#[test]
fn arguments_are_checked_with_the_documented_statuses() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let before = live_handles();
    let a = upload(&[1.0f32, -2.0, 3.0, -4.0]);
    let ta = tensor(&[4], ACL_FLOAT, a);
    let ti = tensor(&[4], ACL_INT32, a);
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: every pointer is either valid or deliberately bad; handles are
    // looked up, never dereferenced.
    unsafe {
        fails(
            aclnnReluGetWorkspaceSize(null(), ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnReluGetWorkspaceSize",
        );
        fails(
            aclnnReluGetWorkspaceSize(ta, ta, null_mut(), &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnReluGetWorkspaceSize",
        );
        fails(
            aclnnReluGetWorkspaceSize(ta, ta, &mut ws, null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnReluGetWorkspaceSize",
        );
        // A pointer aclnn never made, and a handle of the wrong kind.
        let bogus = 0x1234usize as *const aclTensor;
        fails(
            aclnnReluGetWorkspaceSize(bogus, ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnReluGetWorkspaceSize",
        );
        let arr = aclCreateIntArray([0i64].as_ptr(), 1);
        fails(
            aclnnReluGetWorkspaceSize(arr.cast(), ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnReluGetWorkspaceSize",
        );
        // Dtypes that do not combine, an out of the wrong dtype.
        fails(
            aclnnSubGetWorkspaceSize(ta, ti, null(), ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnSubGetWorkspaceSize",
        );
        // A non-integral alpha for an integer out.
        let mut two = 2.5f32;
        let alpha = aclCreateScalar((&mut two as *mut f32).cast(), ACL_FLOAT);
        fails(
            aclnnSubGetWorkspaceSize(ti, ti, alpha, ti, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnSubGetWorkspaceSize",
        );
        fails(
            aclnnMaximumGetWorkspaceSize(ta, ti, ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnMaximumGetWorkspaceSize",
        );
        fails(
            aclnnNegGetWorkspaceSize(ta, ti, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnNegGetWorkspaceSize",
        );
        fails(
            aclnnMatmulGetWorkspaceSize(ta, ta, ta, 4, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnMatmulGetWorkspaceSize",
        );
        fails(
            aclnnReduceSumGetWorkspaceSize(ta, arr, false, ACL_INT32, ta, &mut ws, &mut ex),
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            "aclnnReduceSumGetWorkspaceSize",
        );
        fails(
            aclnnPermuteGetWorkspaceSize(ta, null(), ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnPermuteGetWorkspaceSize",
        );
        // An output view whose elements overlap (stride 0).
        let strided = aclCreateTensor(
            [2i64, 2].as_ptr(),
            2,
            ACL_FLOAT,
            [0i64, 1].as_ptr(),
            0,
            ACL_FORMAT_ND,
            [4i64].as_ptr(),
            1,
            a.cast(),
        );
        let t22 = tensor(&[2, 2], ACL_FLOAT, a);
        let msg = fails(
            aclnnReluGetWorkspaceSize(t22, strided, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnReluGetWorkspaceSize",
        );
        assert!(msg.contains("overlap"), "{msg}");
        assert_eq!(aclDestroyTensor(t22), ACLNN_SUCCESS);
        // A view beyond its storage.
        let over = aclCreateTensor(
            [4i64].as_ptr(),
            1,
            ACL_FLOAT,
            [1i64].as_ptr(),
            2,
            ACL_FORMAT_ND,
            [4i64].as_ptr(),
            1,
            a.cast(),
        );
        fails(
            aclnnReluGetWorkspaceSize(over, ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnReluGetWorkspaceSize",
        );
        // Bad creation arguments give null.
        assert!(
            aclCreateTensor(
                null(),
                2,
                ACL_FLOAT,
                null(),
                0,
                ACL_FORMAT_ND,
                null(),
                0,
                null_mut()
            )
            .is_null()
        );
        assert!(
            aclCreateTensor(
                [-1i64].as_ptr(),
                1,
                ACL_FLOAT,
                null(),
                0,
                ACL_FORMAT_ND,
                null(),
                0,
                null_mut()
            )
            .is_null()
        );
        assert!(aclCreateScalar(null_mut(), ACL_FLOAT).is_null());
        assert!(aclCreateScalar((&mut two as *mut f32).cast(), 999).is_null());
        assert!(aclCreateTensorList([bogus].as_ptr(), 1).is_null());
        discard_recent_error();
        let list = aclCreateTensorList([ta.cast_const(), ti.cast_const()].as_ptr(), 2);
        assert!(!list.is_null());
        fails(
            aclDestroyIntArray(list.cast()),
            ACLNN_ERR_PARAM_INVALID,
            "aclDestroyIntArray",
        );

        // Runtime failures at launch: an unknown stream, memory that is not
        // device memory.
        assert_eq!(
            aclnnReluGetWorkspaceSize(ta, ta, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        fails(
            aclnnRelu(null_mut(), 0, ex, 0x99usize as *mut c_void),
            ACLNN_ERR_RUNTIME_ERROR,
            "aclnnRelu",
        );
        let mut host = [0f32; 4];
        let th = tensor(&[4], ACL_FLOAT, host.as_mut_ptr().cast());
        assert_eq!(
            aclnnReluGetWorkspaceSize(ta, th, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        fails(
            aclnnRelu(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_RUNTIME_ERROR,
            "aclnnRelu",
        );

        // The list owns `ta` and `ti` (as in CANN): destroying it destroys them.
        assert_eq!(aclDestroyTensorList(list), ACLNN_SUCCESS);
        for h in [strided, over, th] {
            assert_eq!(aclDestroyTensor(h), ACLNN_SUCCESS);
        }
        assert_eq!(aclDestroyIntArray(arr), ACLNN_SUCCESS);
        assert_eq!(aclDestroyScalar(alpha), ACLNN_SUCCESS);
    }
    free(a);
    assert_eq!(live_handles(), before);
}

/// A tensor list destroys its members. A member destroyed before its list
/// (undefined on CANN) is skipped with the check off (in a child process);
/// with it on, it is the check's `double-destroy` report. Either way the
/// list and its live members are destroyed.
#[test]
fn a_null_required_argument_is_reported_before_a_dtype_the_page_does_not_list() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let before = live_handles();
    let a = upload(&[1.0f32, -2.0, 3.0, -4.0]);
    let ta = tensor(&[4], ACL_FLOAT, a);
    let ti = tensor(&[4], ACL_INT32, a);
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: handles are looked up, never dereferenced; the out-pointers
    // are live locals.
    unsafe {
        // aclnnSilu's page lists float16, float32, bfloat16 for self.
        let msg = fails(
            aclnnSiluGetWorkspaceSize(ti, null_mut(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            "aclnnSiluGetWorkspaceSize",
        );
        assert_contains(&msg, "out is null");
        let msg = fails(
            aclnnSiluGetWorkspaceSize(ti, ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnSiluGetWorkspaceSize",
        );
        assert_contains(&msg, "self is int32; the operator takes");
        // A handle of another kind is the planning function's to report,
        // with its own message.
        let arr = aclCreateIntArray([0i64].as_ptr(), 1);
        let msg = fails(
            aclnnSiluGetWorkspaceSize(arr.cast(), ta, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnSiluGetWorkspaceSize",
        );
        assert_contains(&msg, "self");
        assert_eq!(aclDestroyIntArray(arr), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(ta), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(ti), ACLNN_SUCCESS);
    }
    free(a);
    assert_eq!(live_handles(), before);
}

#[test]
fn tensor_list_destroy_destroys_its_members_and_skips_ones_already_destroyed() {
    let mode = check_mode_with_off_in_a_child(
        "tensor_list_destroy_destroys_its_members_and_skips_ones_already_destroyed",
    );
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let reports = count_reports();
    use_device(0);
    let a = malloc(16);
    let before = live_handles();
    let (t1, t2, t3, t4) = (
        tensor(&[4], ACL_FLOAT, a),
        tensor(&[4], ACL_FLOAT, a),
        tensor(&[4], ACL_FLOAT, a),
        tensor(&[4], ACL_FLOAT, a),
    );
    // SAFETY: arrays of live handles; every handle is looked up.
    unsafe {
        let list = aclCreateTensorList([t1.cast_const(), t2.cast_const()].as_ptr(), 2);
        assert!(!list.is_null());
        assert_eq!(live_handles(), before + 5);
        assert_eq!(aclDestroyTensorList(list), ACLNN_SUCCESS);
        assert_eq!(live_handles(), before + 2);
        // The members are gone: destroying one again is an error.
        let msg = fails(
            aclDestroyTensor(t1),
            ACLNN_ERR_PARAM_INVALID,
            "aclDestroyTensor",
        );
        assert!(msg.contains("already destroyed"), "{msg}");
        if mode != Mode::Off {
            reports.assert_made(1, Kind::DoubleDestroy, &msg);
            assert_contains(
                &msg,
                &format!(
                    "aclDestroyTensor: CANN_SIM_CHECK double-destroy: tensor {:#x} was already \
                     destroyed, by aclDestroyTensorList",
                    t1 as usize
                ),
            );
        }
        // A member destroyed before its list (undefined on CANN).
        let list = aclCreateTensorList([t3.cast_const(), t4.cast_const()].as_ptr(), 2);
        assert_eq!(aclDestroyTensor(t3), ACLNN_SUCCESS);
        let destroyed = aclDestroyTensorList(list);
        if mode == Mode::Off {
            // Skipped, as before the list owned its members.
            assert_eq!(destroyed, ACLNN_SUCCESS, "{}", recent_error());
        } else {
            let msg = fails(destroyed, ACLNN_ERR_PARAM_INVALID, "aclDestroyTensorList");
            reports.assert_made(2, Kind::DoubleDestroy, &msg);
            assert_contains(
                &msg,
                &format!(
                    "aclDestroyTensorList: CANN_SIM_CHECK double-destroy: member 0 of list {:#x}, \
                     tensor {:#x} was already destroyed, by aclDestroyTensor",
                    list as usize, t3 as usize
                ),
            );
        }
    }
    // The list and its live member are gone in both modes.
    assert_eq!(live_handles(), before);
    free(a);
    assert_eq!(reports.made(), if mode == Mode::Off { 0 } else { 2 });
}

#[test]
fn inplace_operators_write_self_and_reductions_use_the_dim_array() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let a = upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let o = malloc(8);
    let ta = tensor(&[2, 3], ACL_FLOAT, a);
    let to = tensor(&[2], ACL_FLOAT, o);
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid pointers.
    unsafe {
        let dim = aclCreateIntArray([1i64].as_ptr(), 1);
        assert_eq!(
            aclnnReduceSumGetWorkspaceSize(ta, dim, false, ACL_FLOAT, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(aclnnReduceSum(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
        assert_eq!(download::<f32>(o, 2), [6.0, 15.0]);
        let mut v = 7i32;
        let seven = aclCreateScalar((&mut v as *mut i32).cast(), ACL_INT32);
        assert_eq!(
            aclnnInplaceFillScalarGetWorkspaceSize(ta, seven, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(
            aclnnInplaceFillScalar(null_mut(), 0, ex, null_mut()),
            ACLNN_SUCCESS
        );
        assert_eq!(download::<f32>(a, 6), [7.0; 6]);
        assert_eq!(
            aclnnInplaceZeroGetWorkspaceSize(to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(
            aclnnInplaceZero(null_mut(), 0, ex, null_mut()),
            ACLNN_SUCCESS
        );
        assert_eq!(download::<f32>(o, 2), [0.0; 2]);
        for s in [
            aclDestroyTensor(ta),
            aclDestroyTensor(to),
            aclDestroyIntArray(dim),
            aclDestroyScalar(seven),
        ] {
            assert_eq!(s, ACLNN_SUCCESS);
        }
    }
    free(a);
    free(o);
}

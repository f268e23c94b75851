//! The operators llama.cpp's CANN backend calls beyond the first table,
//! through the simulator's C ABI: what the safe wrappers cannot pass (null
//! pointers, unknown handles), each with its exact status, and the SoC
//! check of `aclnnCalculateMatmulWeightSizeV2`.
//!
//! Sources: hicann/ops-nn `matmul/mat_mul_v3/op_host/op_api/aclnn_addmm.cpp`
//! (`CheckNotNull`: self, mat1, mat2, beta, alpha, out), hicann/ops-math
//! `math/equal/docs/aclnnEqTensor&aclnnInplaceEqTensor.md`,
//! `math/ger/docs/aclnnGer.md`,
//! `conversion/trans_data/op_api/aclnn_trans_matmul_weight.cpp`
//! (`aclnnCalculateMatmulWeightSizeV2`).

#![allow(non_snake_case)]

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_RUNTIME_ERROR, ACLNN_SUCCESS,
    aclIntArray, aclOpExecutor, aclScalar, aclTensor,
};
use acl_sys::{ACL_BF16, ACL_FLOAT, ACL_FLOAT16, ACL_INT8};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use common::{free, passes_in_a_child_with, use_device};
use std::ptr::{null, null_mut};

/// Set in the child process that runs a test's body on another SoC.
const CHILD: &str = "CANN_SIM_LLAMA_EXTRA_TEST_CHILD";

fn scalar(mut v: f32) -> *mut aclScalar {
    // SAFETY: one f32, copied by the call.
    let s = unsafe { aclCreateScalar((&mut v as *mut f32).cast(), ACL_FLOAT) };
    assert!(!s.is_null());
    s
}

fn int_array(v: &[i64]) -> *mut aclIntArray {
    // SAFETY: valid for `len` values, copied by the call.
    let a = unsafe { aclCreateIntArray(v.as_ptr(), v.len() as u64) };
    assert!(!a.is_null());
    a
}

#[test]
fn addmm_and_inplace_addmm_report_each_null_pointer_as_161001() {
    use_device(0);
    let d = upload(&[0f32; 4]);
    let t = tensor(&[2, 2], ACL_FLOAT, d);
    let one = scalar(1.0).cast_const();
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    let n: *mut aclTensor = null_mut();
    let ns: *const aclScalar = null();
    type Args = (
        *mut aclTensor,
        *mut aclTensor,
        *mut aclTensor,
        *const aclScalar,
        *const aclScalar,
        *mut aclTensor,
    );
    let f = "aclnnAddmmGetWorkspaceSize";
    // SAFETY: live handles or null, valid out-pointers.
    unsafe {
        let cases: [(&str, Args); 6] = [
            ("self", (n, t, t, one, one, t)),
            ("mat1", (t, n, t, one, one, t)),
            ("mat2", (t, t, n, one, one, t)),
            ("beta", (t, t, t, ns, one, t)),
            ("alpha", (t, t, t, one, ns, t)),
            ("out", (t, t, t, one, one, n)),
        ];
        for (what, (s, a, b, be, al, o)) in cases {
            let msg = fails(
                aclnnAddmmGetWorkspaceSize(s, a, b, be, al, o, 0, &mut ws, &mut ex),
                ACLNN_ERR_PARAM_NULLPTR,
                f,
            );
            assert!(msg.contains(what), "{what}: {msg}");
        }
        let g = "aclnnInplaceAddmmGetWorkspaceSize";
        fails(
            aclnnInplaceAddmmGetWorkspaceSize(n, t, t, one, one, 0, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            g,
        );
        fails(
            aclnnInplaceAddmmGetWorkspaceSize(t, t, t, ns, one, 0, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            g,
        );
        // cubeMathType 5 is past USE_FP32_ADD (4): 161002.
        let msg = fails(
            aclnnAddmmGetWorkspaceSize(t, t, t, one, one, t, 5, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            f,
        );
        assert!(msg.contains("cubeMathType 5"), "{msg}");
        aclDestroyTensor(t);
        aclDestroyScalar(one);
    }
    free(d);
}

#[test]
fn inplace_eq_tensor_and_ger_report_null_pointers_as_161001_and_ger_runs_through_the_c_abi() {
    use_device(0);
    let d = upload(&[3f32, -2.0]);
    let o = upload(&[0f32; 4]);
    let (v, m) = (tensor(&[2], ACL_FLOAT, d), tensor(&[2, 2], ACL_FLOAT, o));
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    let n: *mut aclTensor = null_mut();
    // SAFETY: live handles or null, valid out-pointers.
    unsafe {
        let f = "aclnnInplaceEqTensorGetWorkspaceSize";
        for (s, o) in [(n, v), (v, n)] {
            fails(
                aclnnInplaceEqTensorGetWorkspaceSize(s, o, &mut ws, &mut ex),
                ACLNN_ERR_PARAM_NULLPTR,
                f,
            );
        }
        let f = "aclnnGerGetWorkspaceSize";
        for (a, b, o) in [(n, v, m), (v, n, m), (v, v, n)] {
            fails(
                aclnnGerGetWorkspaceSize(a, b, o, &mut ws, &mut ex),
                ACLNN_ERR_PARAM_NULLPTR,
                f,
            );
        }
        assert_eq!(
            aclnnGerGetWorkspaceSize(v, v, m, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(aclnnGer(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
        assert_eq!(download::<f32>(o, 4), [9.0, -6.0, -6.0, 4.0]);
        aclDestroyTensor(v);
        aclDestroyTensor(m);
    }
    free(d);
    free(o);
}

#[test]
fn ger_on_an_a2_part_refuses_bfloat16_as_its_page_narrows_the_list() {
    // The default SoC, Ascend910B3, is an Atlas A2 part: the page's note
    // says A2/A3 take no BFLOAT16.
    use_device(0);
    let d = upload(&[0u16; 4]);
    let (v, m) = (tensor(&[2], ACL_BF16, d), tensor(&[2, 2], ACL_BF16, d));
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles, valid out-pointers.
    unsafe {
        let msg = fails(
            aclnnGerGetWorkspaceSize(v, v, m, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnGerGetWorkspaceSize",
        );
        assert!(msg.contains("self"), "{msg}");
        aclDestroyTensor(v);
        aclDestroyTensor(m);
    }
    free(d);
}

#[test]
fn calculate_matmul_weight_size_v2_reports_nulls_as_161001_and_a_bad_handle_as_161002() {
    let f = "aclnnCalculateMatmulWeightSizeV2";
    let shape = int_array(&[510, 270]);
    let mut size = 0u64;
    // SAFETY: live handles or null, a valid out-pointer or null.
    unsafe {
        fails(
            aclnnCalculateMatmulWeightSizeV2(null(), ACL_INT8, &mut size),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnCalculateMatmulWeightSizeV2(shape, ACL_INT8, null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        assert_eq!(
            aclnnCalculateMatmulWeightSizeV2(shape, ACL_INT8, &mut size),
            ACLNN_SUCCESS
        );
        assert_eq!(size, 512 * 288);
        // A negative dimension (the release's product would wrap): 161002.
        let neg = int_array(&[-1, 16]);
        fails(
            aclnnCalculateMatmulWeightSizeV2(neg, ACL_FLOAT16, &mut size),
            ACLNN_ERR_PARAM_INVALID,
            f,
        );
        aclDestroyIntArray(neg);
        aclDestroyIntArray(shape);
        // A destroyed handle is not an int array: 161002.
        fails(
            aclnnCalculateMatmulWeightSizeV2(shape, ACL_INT8, &mut size),
            ACLNN_ERR_PARAM_INVALID,
            f,
        );
    }
}

#[test]
fn calculate_matmul_weight_size_v2_is_361001_on_an_atlas_training_part() {
    cann_sim::sim_only!("runs the simulator as another SoC");
    if std::env::var_os(CHILD).is_none() {
        let test = "calculate_matmul_weight_size_v2_is_361001_on_an_atlas_training_part";
        passes_in_a_child_with(test, &[(CHILD, "1"), ("CANN_SIM_SOC_NAME", "Ascend910A")]);
        return;
    }
    let shape = int_array(&[32, 32]);
    let mut size = 0u64;
    // SAFETY: a live handle, a valid out-pointer.
    let rc = unsafe { aclnnCalculateMatmulWeightSizeV2(shape, ACL_FLOAT16, &mut size) };
    let msg = fails(
        rc,
        ACLNN_ERR_RUNTIME_ERROR,
        "aclnnCalculateMatmulWeightSizeV2",
    );
    assert!(msg.contains("Ascend910A"), "{msg}");
    // SAFETY: a live handle.
    unsafe { aclDestroyIntArray(shape) };
}

//! The transformer operators of cann-sim's aclnn through the C ABI:
//! `aclnnEmbedding`, `aclnnRmsNorm` (two outputs), `aclnnRotaryPositionEmbedding`,
//! `aclnnSwiGlu`, `aclnnArgMax`, `aclnnInplaceCopy`, `aclnnMuls`,
//! `aclnnInplaceMaskedFillScalar` — null arguments
//! (161001), the launch functions' pairing with their executors, a kernel
//! fault reported by the next synchronisation, and every handle released.
//! (Values, dtypes and shape errors are tested through `acl::aclnn` in
//! `acl/tests/aclnn.rs`.)

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, aclOpExecutor, aclTensor,
};
use acl_sys::{ACL_FLOAT, ACL_INT64, ACL_SUCCESS};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::acl::aclrtSynchronizeDevice;
use cann_sim::aclnn::*;
use common::{discard_recent_error, free, malloc, use_device};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

/// The tests count live handles: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[test]
fn null_arguments_are_161001_for_every_transformer_operator() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let before = live_handles();
    let p = malloc(64);
    let t = tensor(&[1, 1, 2, 2], ACL_FLOAT, p);
    let i = tensor(&[2], ACL_INT64, p);
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    let nt = null_mut::<aclTensor>();
    // SAFETY: every pointer is valid or deliberately null; handles are
    // looked up, never dereferenced.
    unsafe {
        let f = "aclnnEmbeddingGetWorkspaceSize";
        fails(
            aclnnEmbeddingGetWorkspaceSize(null(), i, t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnEmbeddingGetWorkspaceSize(t, null(), t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnEmbeddingGetWorkspaceSize(t, i, null(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let f = "aclnnRmsNormGetWorkspaceSize";
        fails(
            aclnnRmsNormGetWorkspaceSize(t, t, 1e-6, t, null(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnRmsNormGetWorkspaceSize(t, null(), 1e-6, t, t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnRmsNormGetWorkspaceSize(t, t, 1e-6, t, t, null_mut(), &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let f = "aclnnRotaryPositionEmbeddingGetWorkspaceSize";
        fails(
            aclnnRotaryPositionEmbeddingGetWorkspaceSize(t, null(), t, 0, t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnRotaryPositionEmbeddingGetWorkspaceSize(t, t, t, 0, nt, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        // A mode outside CANN's 0..=3 is the release's tiling error.
        fails(
            aclnnRotaryPositionEmbeddingGetWorkspaceSize(t, t, t, 4, t, &mut ws, &mut ex),
            acl_sys::aclnn::ACLNN_ERR_INNER_TILING_ERROR,
            f,
        );
        let f = "aclnnSwiGluGetWorkspaceSize";
        fails(
            aclnnSwiGluGetWorkspaceSize(null(), -1, t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnSwiGluGetWorkspaceSize(t, -1, t, &mut ws, null_mut()),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let f = "aclnnArgMaxGetWorkspaceSize";
        fails(
            aclnnArgMaxGetWorkspaceSize(null(), 0, false, i, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnArgMaxGetWorkspaceSize(t, 0, false, nt, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let f = "aclnnInplaceCopyGetWorkspaceSize";
        fails(
            aclnnInplaceCopyGetWorkspaceSize(nt, t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnInplaceCopyGetWorkspaceSize(t, null(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let mut zero = 0.0f32;
        let v = aclCreateScalar((&mut zero as *mut f32).cast(), ACL_FLOAT);
        let f = "aclnnMulsGetWorkspaceSize";
        fails(
            aclnnMulsGetWorkspaceSize(t, null(), t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnMulsGetWorkspaceSize(t, v, nt, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        let f = "aclnnInplaceMaskedFillScalarGetWorkspaceSize";
        fails(
            aclnnInplaceMaskedFillScalarGetWorkspaceSize(nt, t, v, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        fails(
            aclnnInplaceMaskedFillScalarGetWorkspaceSize(t, t, null(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            f,
        );
        // A tensor where the scalar belongs is the wrong kind of object.
        fails(
            aclnnMulsGetWorkspaceSize(t, t.cast(), t, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnMulsGetWorkspaceSize",
        );
        assert_eq!(aclDestroyScalar(v), ACLNN_SUCCESS);
        for h in [t, i] {
            assert_eq!(aclDestroyTensor(h), ACLNN_SUCCESS);
        }
    }
    free(p);
    assert_eq!(live_handles(), before);
}

#[test]
fn rms_norm_writes_both_outputs_and_each_launch_takes_only_its_executor() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let before = live_handles();
    let (x, g, y, r) = (
        upload(&[3.0f32, 4.0, 0.0, 2.0]),
        upload(&[1.0f32, 0.5]),
        malloc(16),
        malloc(8),
    );
    let (tx, tg, ty, tr) = (
        tensor(&[2, 2], ACL_FLOAT, x),
        tensor(&[2], ACL_FLOAT, g),
        tensor(&[2, 2], ACL_FLOAT, y),
        tensor(&[2, 1], ACL_FLOAT, r),
    );
    let (mut ws, mut ex) = (7u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers throughout.
    unsafe {
        assert_eq!(
            aclnnRmsNormGetWorkspaceSize(tx, tg, 0.0, ty, tr, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(ws, 0);
        fails(
            aclnnSwiGlu(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnSwiGlu",
        );
        assert_eq!(aclnnRmsNorm(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
        fails(
            aclnnRmsNorm(null_mut(), 0, ex, null_mut()),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnRmsNorm",
        );
    }
    // rms of [3, 4] is √12.5, of [0, 2] is √2.
    let (r0, r1) = (1.0 / 12.5f32.sqrt(), 1.0 / 2.0f32.sqrt());
    let want_y = [3.0 * r0, 4.0 * r0 * 0.5, 0.0, 2.0 * r1 * 0.5];
    for (got, want) in download::<f32>(y, 4).iter().zip(want_y) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    for (got, want) in download::<f32>(r, 2).iter().zip([r0, r1]) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    // SAFETY: live handles.
    unsafe {
        for t in [tx, tg, ty, tr] {
            assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        }
    }
    for p in [x, g, y, r] {
        free(p);
    }
    assert_eq!(live_handles(), before);
}

#[test]
fn an_embedding_index_out_of_range_fails_the_kernel_at_the_next_synchronisation() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    use_device(0);
    let (w, i, o) = (upload(&[1.0f32; 6]), upload(&[0i64, 3]), malloc(16));
    let (tw, ti, to) = (
        tensor(&[3, 2], ACL_FLOAT, w),
        tensor(&[2], ACL_INT64, i),
        tensor(&[2, 2], ACL_FLOAT, o),
    );
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers.
    unsafe {
        assert_eq!(
            aclnnEmbeddingGetWorkspaceSize(tw, ti, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        // The indices' values are the kernel's: planning and launch succeed.
        assert_eq!(aclnnEmbedding(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
    }
    let rc = aclrtSynchronizeDevice();
    assert_ne!(rc, ACL_SUCCESS);
    let msg = common::recent_error_text();
    assert!(msg.contains("index 3 is out of range"), "{msg}");
    discard_recent_error();
    // SAFETY: live handles.
    unsafe {
        for t in [tw, ti, to] {
            assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        }
    }
    for p in [w, i, o] {
        free(p);
    }
}

//! The per-product dtype lists of the operator table (`dtypes_a2`,
//! `dtypes_a3` in `acl-sys/operators.toml`), enforced for the SoC the
//! simulator runs as: an Atlas A2 part (`Ascend910B*`, the default
//! `Ascend910B3`) refuses the types its page excludes for A2 with 161002
//! naming the argument and the A2 list, and still takes every type of that
//! list; an Atlas A3 part (`Ascend910_93*`) is checked against the A3 lists
//! where the page gives A3 its own (a child process with
//! `CANN_SIM_SOC_NAME=Ascend910_9391`, as the SoC is read once per process).
//!
//! Pages: hicann/ops-math `math/sort/docs/aclnnArgsort.md` (A2/A3: no
//! UINT16/UINT32/UINT64), `conversion/concat_d/docs/aclnnCat.md` (A2/A3: no
//! UINT16/UINT32/UINT64 nor 8- and 4-bit floats), `math/cummax/docs/aclnnCummax.md`
//! (A3 only: `self`/`valuesOut` not BFLOAT16), `math/asin/docs/aclnnAsin&aclnnInplaceAsin.md`
//! (A3 adds BFLOAT16 to the table's types).
//! hicann/ops-nn `pooling/max_pool3d_grad_with_argmax/docs/aclnnMaxPool2dWithIndicesBackward.md`
//! (A2/A3: `indices` INT32 only).

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, aclOpExecutor, aclTensor, aclnnStatus,
};
use acl_sys::aclrtStream;
use acl_sys::{ACL_BF16, ACL_FLOAT, ACL_INT8, ACL_INT32, ACL_INT64, ACL_UINT16};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use common::{free, malloc, use_device};
use std::ffi::c_void;
use std::process::Command;
use std::ptr::null_mut;

/// Set in the child processes that run a test's body on another SoC.
const CHILD: &str = "CANN_SIM_DTYPES_TEST_CHILD";

/// `bfloat16` bits of small integers (1.0, 2.0, 3.0).
const BF16_1: u16 = 0x3F80;
const BF16_2: u16 = 0x4000;
const BF16_3: u16 = 0x4040;

/// Runs `test` of this binary again in a child process with
/// `CANN_SIM_SOC_NAME=soc` and checks that it passed there.
fn passes_in_a_child_on(test: &str, soc: &str) {
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--test-threads=1"])
        .env(CHILD, "1")
        .env("CANN_SIM_SOC_NAME", soc)
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} on {soc}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Plans `aclnnArgsort` of `self_` along dim 0 into `out`.
fn argsort(self_: *mut aclTensor, out: *mut aclTensor) -> (i32, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers.
    let rc = unsafe { aclnnArgsortGetWorkspaceSize(self_, 0, false, out, &mut ws, &mut ex) };
    (rc, ex)
}

/// Plans `aclnnCummax` of `self_` along dim 0.
fn cummax(
    self_: *mut aclTensor,
    values: *mut aclTensor,
    indices: *mut aclTensor,
) -> (i32, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers.
    let rc = unsafe { aclnnCummaxGetWorkspaceSize(self_, 0, values, indices, &mut ws, &mut ex) };
    (rc, ex)
}

/// Plans `aclnnAsin` of `self_` into `out`.
fn asin(self_: *mut aclTensor, out: *mut aclTensor) -> (i32, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers.
    let rc = unsafe { aclnnAsinGetWorkspaceSize(self_, out, &mut ws, &mut ex) };
    (rc, ex)
}

/// The launch function of an aclnn operator.
type Launch =
    unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> aclnnStatus;

/// Runs the executor `ex` just planned with `run`, on the default stream.
fn launch(run: Launch, ex: *mut aclOpExecutor) {
    // SAFETY: a planned executor; the operators of this file need no
    // workspace.
    let rc = unsafe { run(null_mut(), 0, ex, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
}

/// Destroys `tensors` and frees `memory`.
fn release(tensors: &[*mut aclTensor], memory: &[*mut u8]) {
    for &t in tensors {
        // SAFETY: live handles, destroyed once.
        assert_eq!(unsafe { aclDestroyTensor(t) }, ACLNN_SUCCESS);
    }
    for &p in memory {
        free(p);
    }
}

#[test]
fn argsort_on_atlas_a2_refuses_uint16_self_naming_the_argument_and_the_a2_list() {
    use_device(0);
    let (x, o) = (upload(&[3u16, 1, 2]), malloc(24));
    let (tx, to) = (tensor(&[3], ACL_UINT16, x), tensor(&[3], ACL_INT64, o));
    let (rc, _) = argsort(tx, to);
    let msg = fails(rc, ACLNN_ERR_PARAM_INVALID, "aclnnArgsortGetWorkspaceSize");
    assert_eq!(
        msg,
        "aclnnArgsortGetWorkspaceSize: self is uint16; on Atlas A2 (Ascend910B3) the \
         operator takes bfloat16, float16, float32, int8, int16, int32, int64, uint8"
    );
    release(&[tx, to], &[x, o]);
}

#[test]
fn argsort_on_atlas_a2_still_sorts_bfloat16_self_a_type_of_the_a2_list() {
    // The page restricts bfloat16 on A2 only for a sort axis of 1, a rule
    // of the kernel, not a list: the type itself is taken.
    use_device(0);
    let (x, o) = (upload(&[BF16_3, BF16_1, BF16_2]), malloc(24));
    let (tx, to) = (tensor(&[3], ACL_BF16, x), tensor(&[3], ACL_INT64, o));
    let (rc, ex) = argsort(tx, to);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
    launch(aclnnArgsort, ex);
    assert_eq!(download::<i64>(o, 3), [1, 2, 0]);
    release(&[tx, to], &[x, o]);
}

#[test]
fn cat_on_atlas_a2_refuses_a_uint16_member_and_concatenates_int8() {
    use_device(0);
    let (a, b, o) = (upload(&[1i8, 2]), upload(&[3u16]), malloc(8));
    let (ta, tb16, tb8, to) = (
        tensor(&[2], ACL_INT8, a),
        tensor(&[1], ACL_UINT16, b),
        tensor(&[1], ACL_INT8, b),
        tensor(&[3], ACL_INT8, o),
    );
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers; each list is destroyed
    // before its members are (aclDestroyTensorList destroys them too, so
    // the members of the first list are recreated for the second).
    unsafe {
        let list = aclCreateTensorList([ta.cast_const(), tb16.cast_const()].as_ptr(), 2);
        let msg = fails(
            aclnnCatGetWorkspaceSize(list, 0, to, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            "aclnnCatGetWorkspaceSize",
        );
        assert!(
            msg.starts_with(
                "aclnnCatGetWorkspaceSize: tensors is uint16; on Atlas A2 (Ascend910B3) the \
                 operator takes float32, float16, int32, int64, int16, int8, uint8, bool, \
                 float64, complex64, bfloat16"
            ),
            "{msg}"
        );
        assert_eq!(aclDestroyTensorList(list), ACLNN_SUCCESS);
        let ta = tensor(&[2], ACL_INT8, a);
        let list = aclCreateTensorList([ta.cast_const(), tb8.cast_const()].as_ptr(), 2);
        assert_eq!(
            aclnnCatGetWorkspaceSize(list, 0, to, &mut ws, &mut ex),
            ACLNN_SUCCESS,
            "{}",
            common::recent_error()
        );
        assert_eq!(aclnnCat(null_mut(), 0, ex, null_mut()), ACLNN_SUCCESS);
        assert_eq!(download::<i8>(o, 3), [1, 2, 3]);
        assert_eq!(aclDestroyTensorList(list), ACLNN_SUCCESS);
    }
    release(&[to], &[a, b, o]);
}

#[test]
fn asin_on_atlas_a2_refuses_bfloat16_that_only_atlas_a3_adds() {
    use_device(0);
    let (x, o) = (upload(&[BF16_1]), malloc(2));
    let (tx, to) = (tensor(&[1], ACL_BF16, x), tensor(&[1], ACL_BF16, o));
    let (rc, _) = asin(tx, to);
    let msg = fails(rc, ACLNN_ERR_PARAM_INVALID, "aclnnAsinGetWorkspaceSize");
    assert_eq!(
        msg,
        "aclnnAsinGetWorkspaceSize: self is bfloat16; on Atlas A2 (Ascend910B3) the operator \
         takes float32, float16, float64, int8, int16, int32, int64, uint8, bool"
    );
    release(&[tx, to], &[x, o]);
}

#[test]
fn cummax_on_atlas_a2_takes_bfloat16_which_atlas_a3_refuses() {
    use_device(0);
    let (x, v, i) = (upload(&[BF16_2, BF16_1, BF16_3]), malloc(6), malloc(24));
    let (tx, tv, ti) = (
        tensor(&[3], ACL_BF16, x),
        tensor(&[3], ACL_BF16, v),
        tensor(&[3], ACL_INT64, i),
    );
    let (rc, ex) = cummax(tx, tv, ti);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
    launch(aclnnCummax, ex);
    assert_eq!(download::<u16>(v, 3), [BF16_2, BF16_2, BF16_3]);
    assert_eq!(download::<i64>(i, 3), [0, 0, 2]);
    release(&[tx, tv, ti], &[x, v, i]);
}

#[test]
fn on_atlas_a3_cummax_refuses_bfloat16_and_asin_takes_it() {
    if std::env::var_os(CHILD).is_none() {
        cann_sim::sim_only!("CANN_SIM_SOC_NAME chooses the simulated SoC");
        passes_in_a_child_on(
            "on_atlas_a3_cummax_refuses_bfloat16_and_asin_takes_it",
            "Ascend910_9391",
        );
        return;
    }
    use_device(0);
    let (x, v, i) = (upload(&[BF16_2, BF16_1]), malloc(4), malloc(16));
    let (tx, tv, ti) = (
        tensor(&[2], ACL_BF16, x),
        tensor(&[2], ACL_BF16, v),
        tensor(&[2], ACL_INT64, i),
    );
    let (rc, _) = cummax(tx, tv, ti);
    let msg = fails(rc, ACLNN_ERR_PARAM_INVALID, "aclnnCummaxGetWorkspaceSize");
    assert_eq!(
        msg,
        "aclnnCummaxGetWorkspaceSize: self is bfloat16; on Atlas A3 (Ascend910_9391) the \
         operator takes float16, float32, float64, uint8, int8, int16, int32, int64, bool"
    );
    // Asin: A3 adds bfloat16; asin(1) = π/2 (1.5703125 in bfloat16).
    let o = malloc(4);
    let to = tensor(&[2], ACL_BF16, o);
    let (rc, ex) = asin(tx, to);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
    launch(aclnnAsin, ex);
    let got: Vec<f32> = download::<u16>(o, 2)
        .into_iter()
        .map(|b| half::bf16::from_bits(b).to_f32())
        .collect();
    assert_eq!(
        got[1],
        half::bf16::from_f32(std::f32::consts::FRAC_PI_2).to_f32()
    );
    assert!(got[0].is_nan(), "asin(2) is NaN: {got:?}");
    release(&[tx, tv, ti, to], &[x, v, i, o]);
}

#[test]
fn a_float32_tensor_where_the_a2_list_is_narrower_still_passes_on_atlas_a2() {
    // Asin's A2 list keeps float32: the narrowing is only what the page says.
    use_device(0);
    let (x, o) = (upload(&[0.5f32]), malloc(4));
    let (tx, to) = (tensor(&[1], ACL_FLOAT, x), tensor(&[1], ACL_FLOAT, o));
    let (rc, ex) = asin(tx, to);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
    launch(aclnnAsin, ex);
    let got = download::<f32>(o, 1)[0];
    assert!((got - 0.5f32.asin()).abs() < 1e-6, "{got}");
    release(&[tx, to], &[x, o]);
}

/// Plans `aclnnMaxPool2dWithIndicesBackward` of a `[1, 1, 2, 2]` input
/// with one 2×2 window (`grad` and `indices` `[1, 1, 1, 1]`).
fn max_pool_backward(
    grad: *mut aclTensor,
    self_: *mut aclTensor,
    indices: *mut aclTensor,
    grad_input: *mut aclTensor,
) -> (i32, *mut aclOpExecutor) {
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    // SAFETY: live handles and valid out-pointers; the arrays are
    // destroyed after planning (the executor keeps what it needs).
    unsafe {
        let (k, s, p, d) = (
            aclCreateIntArray([2i64, 2].as_ptr(), 2),
            aclCreateIntArray([2i64, 2].as_ptr(), 2),
            aclCreateIntArray([0i64].as_ptr(), 1),
            aclCreateIntArray([1i64].as_ptr(), 1),
        );
        let rc = aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(
            grad, self_, indices, k, s, p, d, false, grad_input, &mut ws, &mut ex,
        );
        for a in [k, s, p, d] {
            assert_eq!(aclDestroyIntArray(a), ACLNN_SUCCESS);
        }
        (rc, ex)
    }
}

#[test]
fn max_pool_backward_on_atlas_a2_refuses_int64_indices_and_routes_int32_ones() {
    // hicann/ops-nn pooling/max_pool3d_grad_with_argmax/docs/
    // aclnnMaxPool2dWithIndicesBackward.md, its A2/A3 block: indices INT32
    // only (the 950 parts take INT64 too).
    use_device(0);
    let (g, x, i64s, i32s, o) = (
        upload(&[5.0f32]),
        upload(&[1.0f32, 4.0, 2.0, 3.0]),
        upload(&[1i64]),
        upload(&[1i32]),
        malloc(16),
    );
    let (tg, tx, ti64, ti32, to) = (
        tensor(&[1, 1, 1, 1], ACL_FLOAT, g),
        tensor(&[1, 1, 2, 2], ACL_FLOAT, x),
        tensor(&[1, 1, 1, 1], ACL_INT64, i64s),
        tensor(&[1, 1, 1, 1], ACL_INT32, i32s),
        tensor(&[1, 1, 2, 2], ACL_FLOAT, o),
    );
    let (rc, _) = max_pool_backward(tg, tx, ti64, to);
    let msg = fails(
        rc,
        ACLNN_ERR_PARAM_INVALID,
        "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize",
    );
    assert_eq!(
        msg,
        "aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize: indices is int64; on Atlas A2 \
         (Ascend910B3) the operator takes int32"
    );
    let (rc, ex) = max_pool_backward(tg, tx, ti32, to);
    assert_eq!(rc, ACLNN_SUCCESS, "{}", common::recent_error());
    launch(aclnnMaxPool2dWithIndicesBackward, ex);
    assert_eq!(download::<f32>(o, 4), [0.0, 5.0, 0.0, 0.0]);
    release(&[tg, tx, ti64, ti32, to], &[g, x, i64s, i32s, o]);
}

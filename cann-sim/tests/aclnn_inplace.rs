//! The in-place aclnn operators (`aclnnInplaceAdd` ... `aclnnInplaceTanh`)
//! through the simulator's C ABI: values, a broadcast `other`, strided
//! views, and bad input with its exact status.

#![allow(non_snake_case)]

#[path = "common/aclnn.rs"]
mod aclnn_common;
mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR, ACLNN_SUCCESS, aclOpExecutor, aclScalar,
    aclTensor, aclnnStatus,
};
use acl_sys::{ACL_FLOAT, ACL_FORMAT_ND, ACL_INT32, aclrtStream};
use aclnn_common::{download, fails, tensor, upload};
use cann_sim::aclnn::*;
use common::{free, use_device};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

type Launch =
    unsafe extern "C" fn(*mut c_void, u64, *mut aclOpExecutor, aclrtStream) -> aclnnStatus;
type Unary = unsafe extern "C" fn(*mut aclTensor, *mut u64, *mut *mut aclOpExecutor) -> aclnnStatus;

/// A host reference of a unary operator.
type Ref1 = fn(f32) -> f32;

/// The eight unary in-place operators with their host reference.
const UNARY: [(&str, Unary, Launch, Ref1); 8] = [
    (
        "aclnnInplaceRelu",
        aclnnInplaceReluGetWorkspaceSize,
        aclnnInplaceRelu,
        |x| x.max(0.0),
    ),
    (
        "aclnnInplaceSigmoid",
        aclnnInplaceSigmoidGetWorkspaceSize,
        aclnnInplaceSigmoid,
        |x| 1.0 / (1.0 + (-x).exp()),
    ),
    (
        "aclnnInplaceExp",
        aclnnInplaceExpGetWorkspaceSize,
        aclnnInplaceExp,
        f32::exp,
    ),
    (
        "aclnnInplaceLog",
        aclnnInplaceLogGetWorkspaceSize,
        aclnnInplaceLog,
        f32::ln,
    ),
    (
        "aclnnInplaceSqrt",
        aclnnInplaceSqrtGetWorkspaceSize,
        aclnnInplaceSqrt,
        f32::sqrt,
    ),
    (
        "aclnnInplaceRsqrt",
        aclnnInplaceRsqrtGetWorkspaceSize,
        aclnnInplaceRsqrt,
        |x| 1.0 / x.sqrt(),
    ),
    (
        "aclnnInplaceNeg",
        aclnnInplaceNegGetWorkspaceSize,
        aclnnInplaceNeg,
        |x| -x,
    ),
    (
        "aclnnInplaceTanh",
        aclnnInplaceTanhGetWorkspaceSize,
        aclnnInplaceTanh,
        f32::tanh,
    ),
];

fn scalar(mut v: f32) -> *mut aclScalar {
    // SAFETY: one f32, copied by the call.
    let s = unsafe { aclCreateScalar((&mut v as *mut f32).cast(), ACL_FLOAT) };
    assert!(!s.is_null());
    s
}

/// Plans with `plan` (which must succeed) and runs the executor with `launch`.
fn run(plan: impl FnOnce(&mut u64, &mut *mut aclOpExecutor) -> aclnnStatus, launch: Launch) {
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    assert_eq!(
        plan(&mut ws, &mut ex),
        ACLNN_SUCCESS,
        "{}",
        common::recent_error()
    );
    assert_eq!(ws, 0);
    // SAFETY: a fresh executor; no workspace is needed.
    let rc = unsafe { launch(null_mut(), 0, ex, null_mut()) };
    assert_eq!(rc, ACLNN_SUCCESS);
}

fn destroy_tensors(ts: &[*mut aclTensor]) {
    for &t in ts {
        // SAFETY: live tensors, destroyed once.
        assert_eq!(unsafe { aclDestroyTensor(t) }, ACLNN_SUCCESS);
    }
}

/// The four in-place binary operators as (name, plan, launch); Add scales
/// `other` by `alpha`, Sub by 1 (`one`).
#[allow(clippy::type_complexity)]
fn binary_cases(
    alpha: *const aclScalar,
    one: *const aclScalar,
) -> Vec<(
    &'static str,
    Box<dyn Fn(*mut aclTensor, *mut aclTensor, &mut u64, &mut *mut aclOpExecutor) -> aclnnStatus>,
    Launch,
)> {
    vec![
        (
            "aclnnInplaceAdd",
            Box::new(move |s, o, ws, ex| {
                // SAFETY: the caller passes live handles (or null, to test
                // it) and valid out-pointers; alpha is live.
                unsafe { aclnnInplaceAddGetWorkspaceSize(s, o, alpha, ws, ex) }
            }),
            aclnnInplaceAdd,
        ),
        (
            "aclnnInplaceSub",
            Box::new(move |s, o, ws, ex| {
                // SAFETY: the caller passes live handles (or null, to test
                // it) and valid out-pointers; alpha is live.
                unsafe { aclnnInplaceSubGetWorkspaceSize(s, o, one, ws, ex) }
            }),
            aclnnInplaceSub,
        ),
        (
            "aclnnInplaceMul",
            Box::new(|s, o, ws, ex| {
                // SAFETY: as above.
                unsafe { aclnnInplaceMulGetWorkspaceSize(s, o, ws, ex) }
            }),
            aclnnInplaceMul,
        ),
        (
            "aclnnInplaceDiv",
            Box::new(|s, o, ws, ex| {
                // SAFETY: as above.
                unsafe { aclnnInplaceDivGetWorkspaceSize(s, o, ws, ex) }
            }),
            aclnnInplaceDiv,
        ),
    ]
}

/// Destroys scalars made by [`scalar`].
fn destroy_scalars(ss: &[*mut aclScalar]) {
    for &s in ss {
        // SAFETY: live scalars, destroyed once.
        assert_eq!(unsafe { aclDestroyScalar(s) }, ACLNN_SUCCESS);
    }
}

#[test]
fn inplace_binary_operators_write_self_with_other_broadcast_to_it() {
    use_device(0);
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let y = [10.0f32, 20.0, 40.0];
    let want: [fn(f32, f32) -> f32; 4] =
        [|a, b| a + 2.0 * b, |a, b| a - b, |a, b| a * b, |a, b| a / b];
    let (two, one) = (scalar(2.0), scalar(1.0));
    for ((name, plan, launch), f) in binary_cases(two, one).into_iter().zip(want) {
        let (s, o) = (upload(&x), upload(&y));
        let (ts, to) = (tensor(&[2, 3], ACL_FLOAT, s), tensor(&[3], ACL_FLOAT, o));
        run(|ws, ex| plan(ts, to, ws, ex), launch);
        let expect: Vec<f32> = x.iter().enumerate().map(|(i, &a)| f(a, y[i % 3])).collect();
        assert_eq!(download::<f32>(s, 6), expect, "{name}");
        // `other` is only read.
        assert_eq!(download::<f32>(o, 3), y, "{name}");
        destroy_tensors(&[ts, to]);
        free(s);
        free(o);
    }
    // Muls: a host scalar.
    let s = upload(&x);
    let ts = tensor(&[2, 3], ACL_FLOAT, s);
    let half = scalar(0.5);
    // SAFETY: live handles and out-pointers.
    run(
        |ws, ex| unsafe { aclnnInplaceMulsGetWorkspaceSize(ts, half, ws, ex) },
        aclnnInplaceMuls,
    );
    assert_eq!(download::<f32>(s, 6), x.map(|a| a * 0.5));
    destroy_scalars(&[half, two, one]);
    destroy_tensors(&[ts]);
    free(s);
}

#[test]
fn inplace_unary_operators_write_self() {
    use_device(0);
    let x = [0.25f32, 1.0, 2.0, 4.0];
    for (name, plan, launch, f) in UNARY {
        let s = upload(&x);
        let ts = tensor(&[2, 2], ACL_FLOAT, s);
        // SAFETY: a live handle and out-pointers.
        run(|ws, ex| unsafe { plan(ts, ws, ex) }, launch);
        let got = download::<f32>(s, 4);
        for (g, &a) in got.iter().zip(&x) {
            assert!(
                (g - f(a)).abs() <= 1e-6 * f(a).abs().max(1.0),
                "{name}({a}) = {g}"
            );
        }
        destroy_tensors(&[ts]);
        free(s);
    }
}

/// A view of `n` elements, every other one of a storage of `2n`, from
/// element 1.
fn every_other(n: i64, data: *mut u8) -> *mut aclTensor {
    // SAFETY: arrays valid for their lengths.
    let t = unsafe {
        aclCreateTensor(
            [n].as_ptr(),
            1,
            ACL_FLOAT,
            [2].as_ptr(),
            1,
            ACL_FORMAT_ND,
            [2 * n].as_ptr(),
            1,
            data.cast(),
        )
    };
    assert!(!t.is_null());
    t
}

#[test]
fn inplace_operators_on_a_strided_view_write_only_its_elements() {
    use_device(0);
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    // Binary: the odd elements (2, 4, 6) += 2 · [10, 20, 30].
    let (s, o) = (upload(&x), upload(&[10.0f32, 20.0, 30.0]));
    let (ts, to) = (every_other(3, s), tensor(&[3], ACL_FLOAT, o));
    let (two, one) = (scalar(2.0), scalar(1.0));
    let (name, plan, launch) = binary_cases(two, one).swap_remove(0);
    run(|ws, ex| plan(ts, to, ws, ex), launch);
    assert_eq!(
        download::<f32>(s, 6),
        [1.0, 22.0, 3.0, 44.0, 5.0, 66.0],
        "{name}"
    );
    destroy_tensors(&[ts, to]);
    destroy_scalars(&[two, one]);
    // Unary on the same kind of view: the odd elements negated.
    let ts = every_other(3, s);
    // SAFETY: a live handle and out-pointers.
    run(
        |ws, ex| unsafe { aclnnInplaceNegGetWorkspaceSize(ts, ws, ex) },
        aclnnInplaceNeg,
    );
    assert_eq!(download::<f32>(s, 6), [1.0, -22.0, 3.0, -44.0, 5.0, -66.0]);
    destroy_tensors(&[ts]);
    free(s);
    free(o);
}

#[test]
fn inplace_operators_refuse_bad_input_with_the_documented_status() {
    use_device(0);
    let f = upload(&[0f32; 6]);
    let i = upload(&[0i32; 6]);
    let (t23, t3, t4, t23i) = (
        tensor(&[2, 3], ACL_FLOAT, f),
        tensor(&[3], ACL_FLOAT, f),
        tensor(&[4], ACL_FLOAT, f),
        tensor(&[2, 3], ACL_INT32, i),
    );
    let one = scalar(1.0);
    let (mut ws, mut ex) = (0u64, null_mut::<aclOpExecutor>());
    let gws = |name: &str| format!("{name}GetWorkspaceSize");
    for (name, plan, _) in binary_cases(one, one) {
        // Null selfRef or other: 161001.
        fails(
            plan(null_mut(), t3, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            &gws(name),
        );
        fails(
            plan(t23, null_mut(), &mut ws, &mut ex),
            ACLNN_ERR_PARAM_NULLPTR,
            &gws(name),
        );
        // An other that does not broadcast to selfRef's shape: 161002,
        // whether it broadcasts to nothing or to a larger shape.
        let msg = fails(
            plan(t23, t4, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            &gws(name),
        );
        assert!(msg.contains("does not broadcast to selfRef"), "{msg}");
        let msg = fails(
            plan(t3, t23, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            &gws(name),
        );
        assert!(msg.contains("does not broadcast to selfRef"), "{msg}");
        // An int32 selfRef cannot hold the float result: 161002.
        fails(
            plan(t23i, t23, &mut ws, &mut ex),
            ACLNN_ERR_PARAM_INVALID,
            &gws(name),
        );
    }
    // SAFETY: live handles (or null, as each case says) and out-pointers.
    unsafe {
        // A null alpha or scalar: 161001 (each message read right after its call).
        let null_status = |r, name: &str| fails(r, ACLNN_ERR_PARAM_NULLPTR, &gws(name));
        null_status(
            aclnnInplaceAddGetWorkspaceSize(t23, t3, null(), &mut ws, &mut ex),
            "aclnnInplaceAdd",
        );
        null_status(
            aclnnInplaceSubGetWorkspaceSize(t23, t3, null(), &mut ws, &mut ex),
            "aclnnInplaceSub",
        );
        null_status(
            aclnnInplaceMulsGetWorkspaceSize(t23, null(), &mut ws, &mut ex),
            "aclnnInplaceMuls",
        );
        null_status(
            aclnnInplaceMulsGetWorkspaceSize(null_mut(), one, &mut ws, &mut ex),
            "aclnnInplaceMuls",
        );
        for (name, plan, _, _) in UNARY {
            fails(
                plan(null_mut(), &mut ws, &mut ex),
                ACLNN_ERR_PARAM_NULLPTR,
                &gws(name),
            );
        }
        // The transcendental ones take floating types only: 161002.
        for (name, plan, _, _) in &UNARY[1..6] {
            fails(
                plan(t23i, &mut ws, &mut ex),
                ACLNN_ERR_PARAM_INVALID,
                &gws(name),
            );
        }
    }
    destroy_scalars(&[one]);
    destroy_tensors(&[t23, t3, t4, t23i]);
    free(f);
    free(i);
}

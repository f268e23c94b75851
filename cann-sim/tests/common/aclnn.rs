//! aclnn helpers of the tests that call cann-sim's aclnn exports directly
//! (included by path, next to `common`).

use crate::common::{malloc, ok, recent_error};
use acl_sys::aclnn::{aclTensor, aclnnStatus};
use acl_sys::{ACL_FORMAT_ND, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE};
use cann_sim::acl::{aclrtMemcpy, aclrtSynchronizeDevice};
use cann_sim::aclnn::aclCreateTensor;

/// Checks that `got` is `want` and that the recent error names `function`;
/// returns the message.
#[track_caller]
pub fn fails(got: aclnnStatus, want: aclnnStatus, function: &str) -> String {
    assert_eq!(got, want, "{function}");
    let msg = recent_error();
    assert!(msg.starts_with(function), "{msg}");
    msg
}

/// A contiguous `ND` tensor of `dims` over `data`.
pub fn tensor(dims: &[i64], dtype: i32, data: *mut u8) -> *mut aclTensor {
    let n: i64 = dims.iter().product();
    let strides: Vec<i64> = (0..dims.len())
        .map(|i| dims[i + 1..].iter().product())
        .collect();
    // SAFETY: arrays valid for their lengths.
    let t = unsafe {
        aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            dtype,
            strides.as_ptr(),
            0,
            ACL_FORMAT_ND,
            [n].as_ptr(),
            1,
            data.cast(),
        )
    };
    assert!(!t.is_null(), "{}", recent_error());
    t
}

/// New device memory holding `v`.
pub fn upload<T: Copy>(v: &[T]) -> *mut u8 {
    let bytes = std::mem::size_of_val(v);
    let p = malloc(bytes);
    // SAFETY: both ranges hold `bytes` bytes.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            bytes,
            v.as_ptr().cast(),
            bytes,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    p
}

/// The first `n` elements at `p`, after the device's queued work.
pub fn download<T: Copy + Default>(p: *mut u8, n: usize) -> Vec<T> {
    ok(aclrtSynchronizeDevice());
    let mut v = vec![T::default(); n];
    let bytes = n * std::mem::size_of::<T>();
    // SAFETY: both ranges hold `bytes` bytes.
    ok(unsafe {
        aclrtMemcpy(
            v.as_mut_ptr().cast(),
            bytes,
            p.cast(),
            bytes,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    v
}

/// `out = a + alpha · b` over `n` f32 with aclnnAdd queued on `s`: the
/// aclnn status.
#[allow(
    dead_code,
    reason = "not every test binary including this file calls it"
)]
pub fn add_scaled(
    a: *mut u8,
    b: *mut u8,
    alpha: f32,
    out: *mut u8,
    n: i64,
    s: acl_sys::aclrtStream,
) -> aclnnStatus {
    use acl_sys::aclnn::ACLNN_SUCCESS;
    use cann_sim::aclnn::*;
    let (ta, tb, tc) = (
        tensor(&[n], acl_sys::ACL_FLOAT, a),
        tensor(&[n], acl_sys::ACL_FLOAT, b),
        tensor(&[n], acl_sys::ACL_FLOAT, out),
    );
    let mut alpha = alpha;
    // SAFETY: one f32, copied by the call.
    let sc = unsafe { aclCreateScalar((&mut alpha as *mut f32).cast(), acl_sys::ACL_FLOAT) };
    let (mut ws, mut ex) = (0u64, std::ptr::null_mut());
    // SAFETY: live handles and valid out-pointers.
    let mut r = unsafe { aclnnAddGetWorkspaceSize(ta, tb, sc, tc, &mut ws, &mut ex) };
    if r == ACLNN_SUCCESS {
        // SAFETY: the executor just made, no workspace needed.
        r = unsafe { aclnnAdd(std::ptr::null_mut(), 0, ex, s) };
    }
    // SAFETY: handles made above, destroyed once.
    unsafe {
        aclDestroyTensor(ta);
        aclDestroyTensor(tb);
        aclDestroyTensor(tc);
        aclDestroyScalar(sc);
    }
    r
}

//! A model run instance's id and name through the C ABI (`aclmdlRIGetId`,
//! `aclmdlRISetName`, `aclmdlRIGetName`), with the release's codes
//! (hicann/runtime `src/acl/aclrt_impl/model_ri.cpp`, `api_error.cc`,
//! `api_impl.cc`, `model.cc` `Model::GetModelName`).

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CONTEXT, ACL_ERROR_RT_PARAM_INVALID, ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    aclmdlRI, aclrtContext, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ffi::{CStr, c_char};
use std::ptr::null_mut;

fn own_context() -> aclrtContext {
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    ctx
}

/// A captured model of one fill on `s`.
fn captured(s: aclrtStream, buf: *mut u8) -> aclmdlRI {
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    ok(memset_async(buf, 8, 0, s));
    let mut m = null_mut();
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    m
}

fn get_name(m: aclmdlRI, max: u32) -> Result<String, i32> {
    let mut buf = vec![0x55 as c_char; max.max(1) as usize];
    // SAFETY: `buf` holds at least `max` bytes; the handle is validated.
    match unsafe { aclmdlRIGetName(m, max, buf.as_mut_ptr()) } {
        0 => {
            // SAFETY: the call wrote a NUL-terminated name.
            Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_str()
                .unwrap()
                .to_string())
        }
        r => Err(r),
    }
}

#[test]
fn a_model_keeps_the_name_set_and_a_distinct_id() {
    let ctx = own_context();
    let s = create_stream();
    let buf = malloc(8);
    let (a, b) = (captured(s, buf), captured(s, buf));
    let (mut ia, mut ib) = (0u32, 0u32);
    // SAFETY: valid out-pointers; the handles are validated.
    unsafe {
        ok(aclmdlRIGetId(a, &mut ia));
        ok(aclmdlRIGetId(b, &mut ib));
    }
    assert_ne!(ia, ib, "each model has its own id");
    assert_eq!(get_name(a, 16).unwrap(), "", "no name at first");
    // SAFETY: a NUL-terminated name; the handle is validated.
    ok(unsafe { aclmdlRISetName(a, c"decode step".as_ptr()) });
    assert_eq!(get_name(a, 12).unwrap(), "decode step");
    // The name and its NUL must fit (`memcpy_s`): 507899.
    assert_fails(
        get_name(a, 11).unwrap_err(),
        rc(ACL_ERROR_RT_INTERNAL_ERROR),
        "aclmdlRIGetName",
    );
    assert_fails(
        get_name(a, 0).unwrap_err(),
        rc(ACL_ERROR_RT_PARAM_INVALID),
        "aclmdlRIGetName",
    );
    // Another context's model: 107004 (`ApiImpl::ModelNameSet`).
    let other = own_context();
    // SAFETY: a NUL-terminated name; the handle is validated.
    let got = unsafe { aclmdlRISetName(a, c"x".as_ptr()) };
    assert_fails(got, rc(ACL_ERROR_RT_MODEL_CONTEXT), "aclmdlRISetName");
    let mut id = 0;
    // SAFETY: valid out-pointer; the handle is validated. No context rule.
    ok(unsafe { aclmdlRIGetId(a, &mut id) });
    assert_eq!(id, ia);
    // SAFETY: live contexts and models of the test's.
    unsafe {
        ok(aclrtDestroyContext(other));
        ok(aclrtSetCurrentContext(ctx));
        ok(aclmdlRIDestroy(a));
        ok(aclmdlRIDestroy(b));
    }
    // SAFETY: valid out-pointer; the handle is validated.
    let got = unsafe { aclmdlRIGetId(a, &mut id) };
    assert_fails(got, rc(ACL_ERROR_RT_INVALID_HANDLE), "aclmdlRIGetId");
    free(buf);
    destroy_stream(s);
    // SAFETY: a live context of the test's.
    ok(unsafe { aclrtDestroyContext(ctx) });
}

#[test]
fn null_arguments_are_refused_by_the_acl_layer() {
    let mut id = 0;
    let mut name = [0 as c_char; 4];
    let bad = 8usize as aclmdlRI;
    // SAFETY: the handles are validated; null on purpose.
    unsafe {
        let invalid = ACL_ERROR_INVALID_PARAM;
        assert_fails(aclmdlRIGetId(null_mut(), &mut id), invalid, "aclmdlRIGetId");
        assert_fails(aclmdlRIGetId(bad, null_mut()), invalid, "aclmdlRIGetId");
        assert_fails(
            aclmdlRISetName(null_mut(), c"x".as_ptr()),
            invalid,
            "aclmdlRISetName",
        );
        assert_fails(
            aclmdlRISetName(bad, std::ptr::null()),
            invalid,
            "aclmdlRISetName",
        );
        assert_fails(
            aclmdlRIGetName(null_mut(), 4, name.as_mut_ptr()),
            invalid,
            "aclmdlRIGetName",
        );
        assert_fails(
            aclmdlRIGetName(bad, 4, null_mut()),
            invalid,
            "aclmdlRIGetName",
        );
        let handle = rc(ACL_ERROR_RT_INVALID_HANDLE);
        assert_fails(aclmdlRIGetId(bad, &mut id), handle, "aclmdlRIGetId");
    }
}

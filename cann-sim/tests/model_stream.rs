//! Stream activation (`aclrtActiveStream`) and stream switches
//! (`aclrtSwitchStream`) in models built explicitly, through the C exports:
//! an execution runs an activated stream when it reaches the activation,
//! and a switch compares two device values at run time, so that
//! executions of one model take different streams; each misuse gets the
//! release's code (hicann/runtime `src/acl/aclrt_impl/stream.cpp`,
//! `api_c_stream.cc`, `api_error.cc`, `api_impl.cc`).

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_MODEL, ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_STREAM_FLAG_DEFAULT, ACL_MODEL_STREAM_FLAG_HEAD, ACL_RT_GREATER_OR_EQUAL,
    ACL_RT_LESS, ACL_RT_SWITCH_INT32, ACL_RT_SWITCH_INT64, ACL_STREAM_PERSISTENT, aclError,
    aclmdlRI, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const STREAM_MODEL: i32 = rc(ACL_ERROR_RT_STREAM_MODEL);
const FEATURE: i32 = rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
const BAD_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);

fn persistent_stream() -> aclrtStream {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_PERSISTENT) });
    s
}

/// A model being built, with `streams` bound (the first as the head).
fn building(streams: &[aclrtStream]) -> aclmdlRI {
    let mut m = null_mut();
    // SAFETY: valid out-pointer, live handles.
    unsafe {
        ok(aclmdlRIBuildBegin(&mut m, 0));
        for (i, &s) in streams.iter().enumerate() {
            let flag = if i == 0 {
                ACL_MODEL_STREAM_FLAG_HEAD
            } else {
                ACL_MODEL_STREAM_FLAG_DEFAULT
            };
            ok(aclmdlRIBindStream(m, s, flag));
        }
    }
    m
}

fn finish(m: aclmdlRI, end_on: aclrtStream) {
    // SAFETY: live handles.
    unsafe {
        ok(aclmdlRIEndTask(m, end_on));
        ok(aclmdlRIBuildEnd(m, null_mut()));
    }
}

fn run(m: aclmdlRI, exec: aclrtStream) {
    // SAFETY: live handles.
    ok(unsafe { aclmdlRIExecuteAsync(m, exec) });
    ok(sync(exec));
}

fn release(m: aclmdlRI, streams: &[aclrtStream]) {
    // SAFETY: a live model.
    ok(unsafe { aclmdlRIDestroy(m) });
    for &s in streams {
        destroy_stream(s);
    }
}

fn active(a: aclrtStream, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclrtActiveStream(a, s) }
}

fn switch(l: *mut u8, cond: u32, r: *mut u8, ty: u32, t: aclrtStream, s: aclrtStream) -> aclError {
    // SAFETY: the handles and pointers are validated.
    unsafe { aclrtSwitchStream(l.cast(), cond, r.cast(), ty, t, null_mut(), s) }
}

fn put<T: Copy>(p: *mut u8, v: T) {
    let n = std::mem::size_of::<T>();
    // SAFETY: `n` readable bytes to `n` bytes of device memory.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            n,
            (&v as *const T).cast(),
            n,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

#[test]
fn an_activated_stream_runs_when_an_execution_reaches_its_activation() {
    use_device(0);
    let (out, mark) = (malloc(16), malloc(16));
    let (head, other) = (persistent_stream(), persistent_stream());
    let m = building(&[head, other]);
    ok(memset_async(out, 16, 0x22, other));
    ok(memset_async(mark, 16, 0x11, head));
    ok(active(other, head));
    finish(m, head);
    let exec = create_stream();
    ok(memset_async(out, 16, 0, exec));
    run(m, exec);
    assert_eq!(to_host(mark, 16), vec![0x11; 16]);
    assert_eq!(to_host(out, 16), vec![0x22; 16], "the activated stream ran");
    release(m, &[head, other, exec]);
    free(out);
    free(mark);
}

#[test]
fn a_stream_switch_takes_the_true_stream_only_when_its_comparison_holds() {
    use_device(0);
    let (l, r, out) = (malloc(8), malloc(8), malloc(16));
    let (head, yes) = (persistent_stream(), persistent_stream());
    let m = building(&[head, yes]);
    ok(switch(
        l,
        ACL_RT_GREATER_OR_EQUAL,
        r,
        ACL_RT_SWITCH_INT32,
        yes,
        head,
    ));
    ok(memset_async(out, 16, 0x11, head));
    ok(memset_async(out, 16, 0x22, yes));
    finish(m, head);
    let exec = create_stream();

    put(l, 5i32);
    put(r, 3i32);
    run(m, exec);
    assert_eq!(to_host(out, 16), vec![0x22; 16], "5 >= 3: the true stream");

    put(l, -1i32);
    run(m, exec);
    assert_eq!(
        to_host(out, 16),
        vec![0x11; 16],
        "-1 < 3 (signed): the stream goes on"
    );
    release(m, &[head, yes, exec]);

    // 64-bit operands, signed.
    let (head, yes) = (persistent_stream(), persistent_stream());
    let m = building(&[head, yes]);
    ok(switch(l, ACL_RT_LESS, r, ACL_RT_SWITCH_INT64, yes, head));
    ok(memset_async(out, 16, 0x33, head));
    ok(memset_async(out, 16, 0x44, yes));
    finish(m, head);
    let exec = create_stream();
    put(l, -(1i64 << 40));
    put(r, 0i64);
    run(m, exec);
    assert_eq!(to_host(out, 16), vec![0x44; 16]);
    put(l, 1i64 << 40);
    run(m, exec);
    assert_eq!(to_host(out, 16), vec![0x33; 16]);
    release(m, &[head, yes, exec]);
    for p in [l, r, out] {
        free(p);
    }
}

#[test]
fn activation_and_switch_refuse_bad_arguments_with_the_release_codes() {
    use_device(0);
    let (l, r) = (malloc(8), malloc(8));
    let (head, other, loose) = (persistent_stream(), persistent_stream(), create_stream());
    let m = building(&[head, other]);
    let a = "aclrtActiveStream";
    assert_fails(active(null_mut(), head), ACL_ERROR_INVALID_PARAM, a);
    assert_fails(active(other, null_mut()), ACL_ERROR_INVALID_PARAM, a);
    assert_fails(active(8 as aclrtStream, head), BAD_HANDLE, a);
    let msg = assert_fails(active(other, loose), STREAM_MODEL, a);
    assert_contains(&msg, "is not bound to a model");
    assert_fails(active(loose, head), STREAM_MODEL, a);

    let f = "aclrtSwitchStream";
    let ge = ACL_RT_GREATER_OR_EQUAL;
    let i32t = ACL_RT_SWITCH_INT32;
    assert_fails(
        switch(null_mut(), ge, r, i32t, other, head),
        ACL_ERROR_INVALID_PARAM,
        f,
    );
    assert_fails(
        switch(l, ge, null_mut(), i32t, other, head),
        ACL_ERROR_INVALID_PARAM,
        f,
    );
    assert_fails(
        switch(l, ge, r, i32t, null_mut(), head),
        ACL_ERROR_INVALID_PARAM,
        f,
    );
    assert_fails(
        switch(l, ge, r, i32t, other, null_mut()),
        ACL_ERROR_INVALID_PARAM,
        f,
    );
    // SAFETY: validated arguments; falseStream is reserved.
    let got = unsafe { aclrtSwitchStream(l.cast(), ge, r.cast(), i32t, other, other, head) };
    let msg = assert_fails(got, ACL_ERROR_INVALID_PARAM, f);
    assert_contains(&msg, "falseStream is a reserved parameter");
    let msg = assert_fails(switch(l, 6, r, i32t, other, head), PARAM_INVALID, f);
    assert_contains(&msg, "condition 6 is invalid");
    let msg = assert_fails(switch(l, ge, r, 2, other, head), PARAM_INVALID, f);
    assert_contains(&msg, "dataType 2 is invalid");
    assert_fails(switch(l, ge, r, i32t, loose, head), STREAM_MODEL, f);
    assert_fails(switch(l, ge, r, i32t, other, loose), STREAM_MODEL, f);
    // Operands must be device memory.
    let host = [0u8; 8];
    let got = switch(host.as_ptr() as *mut u8, ge, r, i32t, other, head);
    assert_fails(got, PARAM_INVALID, f);

    // A stream of another model: the simulator runs one model's streams.
    let third = persistent_stream();
    let m2 = building(&[third]);
    let msg = assert_fails(active(third, head), FEATURE, a);
    assert_contains(&msg, "is bound to another model");
    assert_fails(switch(l, ge, r, i32t, third, head), FEATURE, f);
    finish(m2, third);
    finish(m, head);
    // Built already: nothing more is recorded.
    assert_fails(active(other, head), FEATURE, a);
    release(m2, &[third]);
    release(m, &[head, other, loose]);
    free(l);
    free(r);
}

//! Conditional tasks of captured models (`aclmdlRICondHandleCreate`,
//! `aclmdlRICondHandleGetCondPtr`, `aclmdlRIAddCondTask`) and the capture
//! of their sub-models (`aclmdlRICaptureToModelRIBegin`), through the C
//! exports: the condition value lives in device memory, the model itself
//! (a captured copy) or the host writes it, and executions of one model
//! take different branches (IF, WHILE, SWITCH); each misuse gets the
//! release's code (hicann/runtime `api_error_aclgraph.cc`,
//! `v100/api_impl_aclgraph.cc`, `aclgraph_cond_task.cc`).

#[path = "common/aclnn.rs"]
#[allow(dead_code)]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_ERROR_RT_MODEL_CAPTURED, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_NOT_CAPTURED,
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING, ACL_EVENT_SYNC, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE, ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT, ACL_MODEL_RI_COND_TYPE_IF,
    ACL_MODEL_RI_COND_TYPE_SWITCH, ACL_MODEL_RI_COND_TYPE_WHILE, ACL_MODEL_STREAM_FLAG_HEAD,
    ACL_STREAM_PERSISTENT, aclError, aclmdlRI, aclmdlRICondHandle, aclmdlRICondTaskParams,
    aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const FEATURE: i32 = rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
const BAD_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);
const NOT_CAPTURED: i32 = rc(ACL_ERROR_RT_STREAM_NOT_CAPTURED);
const MODEL_CAPTURED: i32 = rc(ACL_ERROR_RT_MODEL_CAPTURED);
const SUB_CAPTURING: i32 = rc(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING);

fn begin(s: aclrtStream) {
    // SAFETY: a live stream.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
}

fn begin_sub(s: aclrtStream, m: aclmdlRI) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRICaptureToModelRIBegin(s, m, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) }
}

fn end(s: aclrtStream) -> aclmdlRI {
    let mut m = null_mut();
    // SAFETY: a capturing stream, a valid out-pointer.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    m
}

/// Ends the capture of a sub-model: `modelRI` may be null.
fn end_sub(s: aclrtStream) {
    // SAFETY: a stream capturing into a sub-model; null is allowed there.
    ok(unsafe { aclmdlRICaptureEnd(s, null_mut()) });
}

fn info(s: aclrtStream) -> aclmdlRI {
    let mut status = 0;
    let mut m = null_mut();
    // SAFETY: valid out-pointers.
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut status, &mut m) });
    m
}

fn cond_handle(m: aclmdlRI, default: u32, flag: u32) -> aclmdlRICondHandle {
    let mut h = null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { aclmdlRICondHandleCreate(m, default, flag, &mut h) });
    assert!(!h.is_null());
    h
}

fn cond_ptr(h: aclmdlRICondHandle) -> *mut u8 {
    let mut p: *mut u64 = null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { aclmdlRICondHandleGetCondPtr(h, &mut p) });
    p.cast()
}

fn add_cond(h: aclmdlRICondHandle, ty: u32, subs: &mut [aclmdlRI], s: aclrtStream) -> aclError {
    let params = aclmdlRICondTaskParams {
        handle: h,
        type_: ty,
        size: subs.len() as u32,
        modelRIArray: subs.as_mut_ptr(),
    };
    // SAFETY: `subs` has room for `size` handles.
    unsafe { aclmdlRIAddCondTask(params, s, 0) }
}

fn execute(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn destroy(m: aclmdlRI) {
    // SAFETY: a live model.
    ok(unsafe { aclmdlRIDestroy(m) });
}

fn write_u64(p: *mut u8, v: u64) {
    // SAFETY: 8 readable bytes to 8 bytes of device memory.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            8,
            (&v as *const u64).cast(),
            8,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

fn write_u64s(p: *mut u8, v: &[u64]) {
    let n = v.len() * 8;
    // SAFETY: `n` readable bytes to `n` bytes of device memory.
    ok(unsafe { aclrtMemcpy(p.cast(), n, v.as_ptr().cast(), n, ACL_MEMCPY_HOST_TO_DEVICE) });
}

/// Four f32 of device memory (a synchronous copy: allowed while other
/// tests' RELAXED captures run, unlike a device synchronisation).
fn floats(p: *mut u8) -> Vec<f32> {
    to_host(p, 16)
        .chunks(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn read_u64(p: *mut u8) -> u64 {
    let b = to_host(p, 8);
    u64::from_ne_bytes(b.try_into().unwrap())
}

/// Captures one sub-model on `s`: `fill(out, value)` for 16 bytes.
fn capture_fill(s: aclrtStream, sub: aclmdlRI, out: *mut u8, value: i32) {
    ok(begin_sub(s, sub));
    ok(memset_async(out, 16, value, s));
    end_sub(s);
}

/// The IF sample of `docs/zh/design/features/aclgraph.md`: the parent,
/// captured on `s1`, first copies the selector `sel` into the handle's
/// value (the device writes the condition), then branches: sub-model 0
/// fills `out` with 0x11, sub-model 1 with 0x22.
struct IfModel {
    parent: aclmdlRI,
    streams: [aclrtStream; 3],
}

fn if_model(sel: *mut u8, out: *mut u8, size: usize) -> IfModel {
    let streams = [create_stream(), create_stream(), create_stream()];
    begin(streams[0]);
    let parent = info(streams[0]);
    let h = cond_handle(parent, 0, 0);
    ok(memcpy_async(
        cond_ptr(h),
        sel,
        8,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        streams[0],
    ));
    let mut subs = vec![null_mut(); size];
    ok(add_cond(
        h,
        ACL_MODEL_RI_COND_TYPE_IF,
        &mut subs,
        streams[0],
    ));
    for (i, &sub) in subs.iter().enumerate() {
        capture_fill(streams[1 + i], sub, out, 0x11 * (i as i32 + 1));
    }
    let parent_end = end(streams[0]);
    assert_eq!(parent_end, parent);
    IfModel { parent, streams }
}

impl IfModel {
    fn close(self) {
        destroy(self.parent);
        for s in self.streams {
            destroy_stream(s);
        }
    }
}

#[test]
fn an_if_task_runs_the_branch_the_device_value_selects_at_each_execution() {
    use_device(0);
    let (sel, out) = (malloc(8), malloc(16));
    let model = if_model(sel, out, 2);
    let exec = create_stream();

    write_u64(sel, 5);
    ok(execute(model.parent, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x11; 16], "not 0: branch 0");

    write_u64(sel, 0);
    ok(execute(model.parent, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x22; 16], "0: branch 1");

    model.close();
    destroy_stream(exec);
    free(sel);
    free(out);
}

#[test]
fn an_if_task_with_one_branch_runs_nothing_when_the_value_is_zero() {
    use_device(0);
    let (sel, out) = (malloc(8), malloc(16));
    let model = if_model(sel, out, 1);
    let exec = create_stream();
    ok(memset_async(out, 16, 0, exec));
    write_u64(sel, 0);
    ok(execute(model.parent, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0; 16]);
    write_u64(sel, 1);
    ok(execute(model.parent, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x11; 16]);
    model.close();
    destroy_stream(exec);
    free(sel);
    free(out);
}

#[test]
fn a_while_task_runs_its_body_until_the_body_writes_zero_to_the_value() {
    use_device(0);
    // The body adds `one` to `acc`, then pops the next value of the
    // queue `q` into the condition: q = [_, 1, 1, 0] runs it 3 times.
    let q = malloc(32);
    let one = aclnn_common::upload(&[1f32; 4]);
    let acc = malloc(16);
    let (s1, s2) = (create_stream(), create_stream());
    begin(s1);
    let parent = info(s1);
    // ASSIGN_DEFAULT: every execution starts with the value 1.
    let h = cond_handle(parent, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    let cond = cond_ptr(h);
    let mut body = [null_mut()];
    ok(add_cond(h, ACL_MODEL_RI_COND_TYPE_WHILE, &mut body, s1));
    ok(begin_sub(s2, body[0]));
    let r = aclnn_common::add_scaled(acc, one, 1.0, acc, 4, s2);
    assert_eq!(r, 0, "{}", recent_error());
    // SAFETY: device ranges, checked by the simulator.
    unsafe {
        ok(aclrtMemcpyAsync(
            cond.cast(),
            8,
            q.add(8).cast(),
            8,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            s2,
        ));
        ok(aclrtMemcpyAsync(
            q.cast(),
            24,
            q.add(8).cast(),
            24,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            s2,
        ));
    }
    end_sub(s2);
    let m = end(s1);
    let exec = create_stream();

    write_u64s(q, &[9, 1, 1, 0]);
    ok(memset_async(acc, 16, 0, exec));
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(floats(acc), vec![3.; 4], "three runs");
    assert_eq!(read_u64(cond), 0);

    // Next execution: the default value again, a shorter queue.
    write_u64s(q, &[9, 0, 0, 0]);
    ok(memset_async(acc, 16, 0, exec));
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(floats(acc), vec![1.; 4], "one run");

    destroy(m);
    for s in [s1, s2, exec] {
        destroy_stream(s);
    }
    for p in [q, one, acc] {
        free(p);
    }
}

#[test]
fn a_switch_task_runs_the_indexed_sub_model_and_nothing_beyond_the_last() {
    use_device(0);
    let out = malloc(16);
    let streams = [
        create_stream(),
        create_stream(),
        create_stream(),
        create_stream(),
    ];
    begin(streams[0]);
    let parent = info(streams[0]);
    let h = cond_handle(parent, 0, 0);
    let cond = cond_ptr(h);
    let mut subs = [null_mut(); 3];
    ok(add_cond(
        h,
        ACL_MODEL_RI_COND_TYPE_SWITCH,
        &mut subs,
        streams[0],
    ));
    for (i, &sub) in subs.iter().enumerate() {
        capture_fill(streams[1 + i], sub, out, 0x10 + i as i32);
    }
    let m = end(streams[0]);
    let exec = create_stream();
    for i in [2u64, 0, 1] {
        write_u64(cond, i);
        ok(execute(m, exec));
        ok(sync(exec));
        assert_eq!(to_host(out, 16), vec![0x10 + i as u8; 16], "index {i}");
    }
    ok(memset_async(out, 16, 0, exec));
    write_u64(cond, 3);
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0; 16], "beyond the last: nothing");
    destroy(m);
    for s in streams.into_iter().chain([exec]) {
        destroy_stream(s);
    }
    free(out);
}

#[test]
fn a_conditional_task_nests_inside_a_sub_model() {
    use_device(0);
    let out = malloc(16);
    let streams = [create_stream(), create_stream(), create_stream()];
    begin(streams[0]);
    let parent = info(streams[0]);
    let outer = cond_handle(parent, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    let mut sub = [null_mut()];
    ok(add_cond(
        outer,
        ACL_MODEL_RI_COND_TYPE_IF,
        &mut sub,
        streams[0],
    ));
    ok(begin_sub(streams[1], sub[0]));
    // A handle on the sub-model, made while it captures.
    let inner = cond_handle(sub[0], 0, 0);
    let mut inner_sub = [null_mut(); 2];
    ok(add_cond(
        inner,
        ACL_MODEL_RI_COND_TYPE_SWITCH,
        &mut inner_sub,
        streams[1],
    ));
    // Its own sub-models are captured before it ends (its end checks them).
    capture_fill(streams[2], inner_sub[0], out, 0x31);
    capture_fill(streams[2], inner_sub[1], out, 0x32);
    end_sub(streams[1]);
    let m = end(streams[0]);
    let exec = create_stream();
    write_u64(cond_ptr(inner), 1);
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x32; 16]);
    destroy(m);
    for s in streams.into_iter().chain([exec]) {
        destroy_stream(s);
    }
    free(out);
}

#[test]
fn condition_handles_refuse_bad_arguments_with_the_release_codes() {
    use_device(0);
    let s = create_stream();
    begin(s);
    let m = info(s);
    let mut h = null_mut();
    // SAFETY: each call is given the arguments its check is about.
    unsafe {
        assert_fails(
            aclmdlRICondHandleCreate(null_mut(), 0, 0, &mut h),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRICondHandleCreate",
        );
        assert_fails(
            aclmdlRICondHandleCreate(m, 0, 0, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRICondHandleCreate",
        );
        assert_fails(
            aclmdlRICondHandleCreate(m, 0, 2, &mut h),
            PARAM_INVALID,
            "aclmdlRICondHandleCreate",
        );
        assert_fails(
            aclmdlRICondHandleCreate(8 as aclmdlRI, 0, 0, &mut h),
            BAD_HANDLE,
            "aclmdlRICondHandleCreate",
        );
    }
    let handle = cond_handle(m, 0, 0);
    let mut p: *mut u64 = null_mut();
    // SAFETY: as above.
    unsafe {
        assert_fails(
            aclmdlRICondHandleGetCondPtr(null_mut(), &mut p),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRICondHandleGetCondPtr",
        );
        assert_fails(
            aclmdlRICondHandleGetCondPtr(handle, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRICondHandleGetCondPtr",
        );
        assert_fails(
            aclmdlRICondHandleGetCondPtr(16 as aclmdlRICondHandle, &mut p),
            BAD_HANDLE,
            "aclmdlRICondHandleGetCondPtr",
        );
    }
    // The value starts at 0 (`CondHandle::Setup` zeroes it).
    assert_eq!(read_u64(cond_ptr(handle)), 0);
    let done = end(s);
    // A capture that ended is not in the capture stage.
    // SAFETY: as above.
    let got = unsafe { aclmdlRICondHandleCreate(done, 0, 0, &mut h) };
    let msg = assert_fails(got, PARAM_INVALID, "aclmdlRICondHandleCreate");
    assert_contains(&msg, "is not in the capture stage");
    destroy(done);
    // Destroyed with its model.
    // SAFETY: as above.
    let got = unsafe { aclmdlRICondHandleGetCondPtr(handle, &mut p) };
    assert_fails(got, BAD_HANDLE, "aclmdlRICondHandleGetCondPtr");

    // A built model takes no condition handle: 207000.
    let mut ps = null_mut();
    let mut built = null_mut();
    // SAFETY: valid out-pointers and handles.
    unsafe {
        ok(aclrtCreateStreamWithConfig(
            &mut ps,
            0,
            ACL_STREAM_PERSISTENT,
        ));
        ok(aclmdlRIBuildBegin(&mut built, 0));
        ok(aclmdlRIBindStream(built, ps, ACL_MODEL_STREAM_FLAG_HEAD));
        let got = aclmdlRICondHandleCreate(built, 0, 0, &mut h);
        assert_fails(got, FEATURE, "aclmdlRICondHandleCreate");
        ok(aclmdlRIUnbindStream(built, ps));
    }
    destroy(built);
    destroy_stream(ps);
    destroy_stream(s);
}

#[test]
fn conditional_tasks_refuse_bad_parameters_with_the_release_codes() {
    use_device(0);
    let (s, other) = (create_stream(), create_stream());
    begin(s);
    let m = info(s);
    let h = cond_handle(m, 0, 0);
    let mut subs = [null_mut(); 3];
    let params = |h, ty, size, arr| aclmdlRICondTaskParams {
        handle: h,
        type_: ty,
        size,
        modelRIArray: arr,
    };
    let arr = subs.as_mut_ptr();
    let f = "aclmdlRIAddCondTask";
    // SAFETY: `arr` has room for 3 handles; the rest is validated.
    unsafe {
        let p = params(h, ACL_MODEL_RI_COND_TYPE_IF, 2, arr);
        assert_fails(
            aclmdlRIAddCondTask(p, null_mut(), 0),
            ACL_ERROR_INVALID_PARAM,
            f,
        );
        let bad = params(24 as aclmdlRICondHandle, ACL_MODEL_RI_COND_TYPE_IF, 2, arr);
        assert_fails(aclmdlRIAddCondTask(bad, s, 0), BAD_HANDLE, f);
        let msg = assert_fails(
            aclmdlRIAddCondTask(params(h, 3, 1, arr), s, 0),
            PARAM_INVALID,
            f,
        );
        assert_contains(&msg, "params.type 3 is invalid");
        let msg = assert_fails(aclmdlRIAddCondTask(p, s, 1), PARAM_INVALID, f);
        assert_contains(&msg, "flags 1 is invalid");
        let msg = assert_fails(
            aclmdlRIAddCondTask(params(null_mut(), 0, 1, arr), s, 0),
            PARAM_INVALID,
            f,
        );
        assert_contains(&msg, "params.handle is null");
        let msg = assert_fails(
            aclmdlRIAddCondTask(params(h, 0, 1, null_mut()), s, 0),
            PARAM_INVALID,
            f,
        );
        assert_contains(&msg, "params.modelRIArray is null");
        // A stream that does not capture.
        assert_fails(aclmdlRIAddCondTask(p, other, 0), NOT_CAPTURED, f);
        // Sizes per type (`CheckCondTaskParamsSize`).
        for (ty, size) in [
            (ACL_MODEL_RI_COND_TYPE_IF, 3),
            (ACL_MODEL_RI_COND_TYPE_IF, 0),
            (ACL_MODEL_RI_COND_TYPE_WHILE, 2),
            (ACL_MODEL_RI_COND_TYPE_SWITCH, 0),
        ] {
            let msg = assert_fails(
                aclmdlRIAddCondTask(params(h, ty, size, arr), s, 0),
                PARAM_INVALID,
                f,
            );
            assert_contains(&msg, &format!("params.size {size} is invalid"));
        }
        // A handle of another model than the stream captures into.
        begin(other);
        let msg = assert_fails(aclmdlRIAddCondTask(p, other, 0), PARAM_INVALID, f);
        assert_contains(&msg, "made on another model");
        // Once per handle.
        ok(aclmdlRIAddCondTask(
            params(h, ACL_MODEL_RI_COND_TYPE_IF, 1, arr),
            s,
            0,
        ));
        let msg = assert_fails(aclmdlRIAddCondTask(p, s, 0), PARAM_INVALID, f);
        assert_contains(&msg, "was used by a conditional task already");
    }
    // The parent's capture cannot end while its sub-model is not captured:
    // 107046, and the capture is ended and its model destroyed.
    let mut out = null_mut();
    // SAFETY: a capturing stream, a valid out-pointer.
    let got = unsafe { aclmdlRICaptureEnd(s, &mut out) };
    let msg = assert_fails(got, SUB_CAPTURING, "aclmdlRICaptureEnd");
    assert_contains(&msg, "is still capturing or was never captured");
    assert!(out.is_null());
    // SAFETY: a stale handle, validated.
    let got = unsafe { aclmdlRIExecuteAsync(m, other) };
    assert_fails(got, BAD_HANDLE, "aclmdlRIExecuteAsync");
    destroy(end(other));
    destroy_stream(s);
    destroy_stream(other);
}

#[test]
fn sub_models_are_captured_once_and_run_only_through_their_parent() {
    use_device(0);
    let out = malloc(16);
    let streams = [create_stream(), create_stream(), create_stream()];
    begin(streams[0]);
    let parent = info(streams[0]);
    let h = cond_handle(parent, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    let mut sub = [null_mut()];
    ok(add_cond(h, ACL_MODEL_RI_COND_TYPE_IF, &mut sub, streams[0]));
    let f = "aclmdlRICaptureToModelRIBegin";
    // SAFETY: each call is given the arguments its check is about.
    unsafe {
        assert_fails(
            aclmdlRICaptureToModelRIBegin(null_mut(), sub[0], 0),
            ACL_ERROR_INVALID_PARAM,
            f,
        );
        assert_fails(
            aclmdlRICaptureToModelRIBegin(streams[1], null_mut(), 0),
            ACL_ERROR_INVALID_PARAM,
            f,
        );
        assert_fails(
            aclmdlRICaptureToModelRIBegin(streams[1], sub[0], 3),
            PARAM_INVALID,
            f,
        );
        // The parent is not a sub-model.
        let msg = assert_fails(
            aclmdlRICaptureToModelRIBegin(streams[1], parent, 0),
            PARAM_INVALID,
            f,
        );
        assert_contains(&msg, "is not a sub-model of a conditional task");
    }
    ok(begin_sub(streams[1], sub[0]));
    // Event tasks in a sub-model are not simulated: 207000.
    let mut e = null_mut();
    // SAFETY: valid out-pointer; live handles.
    unsafe {
        ok(aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC));
        assert_fails(aclrtRecordEvent(e, streams[1]), FEATURE, "aclrtRecordEvent");
    }
    ok(memset_async(out, 16, 0x44, streams[1]));
    end_sub(streams[1]);
    // Captured once: 107026.
    assert_fails(begin_sub(streams[2], sub[0]), MODEL_CAPTURED, f);
    let m = end(streams[0]);
    let exec = create_stream();
    // A sub-model is neither executed nor destroyed on its own: 207000.
    assert_fails(execute(sub[0], exec), FEATURE, "aclmdlRIExecuteAsync");
    // SAFETY: a live sub-model; refused.
    assert_fails(
        unsafe { aclmdlRIDestroy(sub[0]) },
        FEATURE,
        "aclmdlRIDestroy",
    );
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x44; 16]);
    // Destroyed with the parent.
    destroy(m);
    assert_fails(execute(sub[0], exec), BAD_HANDLE, "aclmdlRIExecuteAsync");
    destroy_event(e);
    for s in streams.into_iter().chain([exec]) {
        destroy_stream(s);
    }
    free(out);
}

#[test]
fn a_sub_model_reading_memory_it_wrote_itself_runs_without_a_check_report() {
    use_device(0);
    // `tmp` is written only inside the sub-model, then read there: one
    // conditional task, ordered inside it (no uninitialised read under
    // CANN_SIM_CHECK).
    let (tmp, out) = (malloc(16), malloc(16));
    let (s1, s2) = (create_stream(), create_stream());
    begin(s1);
    let parent = info(s1);
    let h = cond_handle(parent, 1, ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT);
    let mut sub = [null_mut()];
    ok(add_cond(h, ACL_MODEL_RI_COND_TYPE_IF, &mut sub, s1));
    ok(begin_sub(s2, sub[0]));
    ok(memset_async(tmp, 16, 0x66, s2));
    ok(memcpy_async(out, tmp, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s2));
    end_sub(s2);
    let m = end(s1);
    let exec = create_stream();
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x66; 16]);
    destroy(m);
    for s in [s1, s2, exec] {
        destroy_stream(s);
    }
    free(tmp);
    free(out);
}

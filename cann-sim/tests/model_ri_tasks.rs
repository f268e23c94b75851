//! The tasks of a captured model through the C ABI: `aclmdlRIGetStreams`,
//! `aclmdlRIGetTasksByStream`, `aclmdlRITaskGetType`, `…GetSeqId`,
//! `…GetParams`, `…SetParams`, `aclmdlRITaskDisable`, with the release's
//! codes (hicann/runtime `src/runtime/api/impl/api_impl.cc`,
//! `memory_task.cc`, `capture_model_utils.cc`).
//!
//! Each test works in a context of its own (a capture blocks synchronous
//! calls in its context).

mod common;

use acl_sys::{
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_MODEL_EXECUTE,
    ACL_ERROR_RT_MODEL_UPDATE_FAILED, ACL_ERROR_RT_PARAM_INVALID, ACL_EVENT_SYNC,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED, ACL_MODEL_RI_TASK_DEFAULT, ACL_MODEL_RI_TASK_EVENT_RECORD,
    ACL_MODEL_RI_TASK_EVENT_RESET, ACL_MODEL_RI_TASK_VALUE_WAIT, ACL_MODEL_RI_TASK_VALUE_WRITE,
    aclError, aclmdlRI, aclmdlRITask, aclmdlRITaskParams, aclrtContext, aclrtEvent, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);
const MODEL_EXECUTE: i32 = rc(ACL_ERROR_RT_MODEL_EXECUTE);
const UPDATE_FAILED: i32 = rc(ACL_ERROR_RT_MODEL_UPDATE_FAILED);
const INSUFFICIENT: i32 = rc(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY);

/// A context of its own on device 0, current on this thread.
fn own_context() -> aclrtContext {
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    ctx
}

fn destroy_context(ctx: aclrtContext) {
    // SAFETY: a live context of the test's.
    ok(unsafe { aclrtDestroyContext(ctx) });
}

fn ex_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC) });
    e
}

/// An `ACL_EVENT_EXTERNAL` event (the kind a capture can reset).
fn external_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateEventWithFlag(&mut e, acl_sys::ACL_EVENT_EXTERNAL) });
    e
}

fn begin(s: aclrtStream) {
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
}

fn end(s: aclrtStream) -> aclmdlRI {
    let mut m = null_mut();
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    m
}

fn execute(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn update(m: aclmdlRI) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRIUpdate(m) }
}

fn value_write(p: *mut u8, v: u64, s: aclrtStream) {
    // SAFETY: the address is validated.
    ok(unsafe { aclrtValueWrite(p.cast(), v, 0, s) });
}

fn word(p: *mut u8) -> u64 {
    u64::from_le_bytes(to_host(p, 8).try_into().unwrap())
}

fn set_word(p: *mut u8, v: u64) {
    let bytes = v.to_le_bytes();
    // SAFETY: 8 readable host bytes to 8 bytes of device memory.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            8,
            bytes.as_ptr().cast(),
            8,
            acl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

fn streams_of(m: aclmdlRI) -> Vec<aclrtStream> {
    let mut n = 0u32;
    // SAFETY: valid out-pointer; null array asks for the count.
    ok(unsafe { aclmdlRIGetStreams(m, null_mut(), &mut n) });
    let mut v = vec![null_mut(); n as usize];
    // SAFETY: `v` holds `n` entries.
    ok(unsafe { aclmdlRIGetStreams(m, v.as_mut_ptr(), &mut n) });
    v
}

fn tasks_of(s: aclrtStream) -> Vec<aclmdlRITask> {
    let mut n = 0u32;
    // SAFETY: valid out-pointer; null array asks for the count.
    ok(unsafe { aclmdlRIGetTasksByStream(s, null_mut(), &mut n) });
    let mut v = vec![null_mut(); n as usize];
    // SAFETY: `v` holds `n` entries.
    ok(unsafe { aclmdlRIGetTasksByStream(s, v.as_mut_ptr(), &mut n) });
    v
}

/// A model of one value write of `v` at `p`, captured on `s`, and its task.
fn one_write(s: aclrtStream, p: *mut u8, v: u64) -> (aclmdlRI, aclmdlRITask) {
    begin(s);
    value_write(p, v, s);
    let m = end(s);
    (m, tasks_of_model(m)[0])
}

/// The tasks of the model's only stream.
fn tasks_of_model(m: aclmdlRI) -> Vec<aclmdlRITask> {
    let streams = streams_of(m);
    assert_eq!(streams.len(), 1);
    tasks_of(streams[0])
}

fn task_type(t: aclmdlRITask) -> u32 {
    let mut ty = 99;
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclmdlRITaskGetType(t, &mut ty) });
    ty
}

fn get_params(t: aclmdlRITask) -> Result<aclmdlRITaskParams, aclError> {
    let mut p = aclmdlRITaskParams::default();
    // SAFETY: valid out-pointer; the handle is validated.
    match unsafe { aclmdlRITaskGetParams(t, &mut p) } {
        0 => Ok(p),
        r => Err(r),
    }
}

fn set_params(t: aclmdlRITask, mut p: aclmdlRITaskParams) -> aclError {
    // SAFETY: a valid struct; the handle is validated.
    unsafe { aclmdlRITaskSetParams(t, &mut p) }
}

fn write_params(p: *mut u8, value: u64) -> aclmdlRITaskParams {
    let mut params = aclmdlRITaskParams {
        type_: ACL_MODEL_RI_TASK_VALUE_WRITE,
        ..Default::default()
    };
    params.__bindgen_anon_1.valueWriteTaskParams = acl_sys::aclmdlRIValueWriteTaskParams {
        devAddr: p.cast::<c_void>(),
        value,
    };
    params
}

fn wait_params(p: *mut u8, value: u64, flag: u32) -> aclmdlRITaskParams {
    let mut params = aclmdlRITaskParams {
        type_: ACL_MODEL_RI_TASK_VALUE_WAIT,
        ..Default::default()
    };
    params.__bindgen_anon_1.valueWaitTaskParams = acl_sys::aclmdlRIValueWaitTaskParams {
        devAddr: p.cast::<c_void>(),
        value,
        flag,
    };
    params
}

#[test]
fn a_capture_lists_its_stream_and_its_tasks_in_order_with_types_and_sequence_ids() {
    let ctx = own_context();
    let s = create_stream();
    let (buf, w) = (malloc(64), malloc(8));
    let e = ex_event();
    let x = external_event();
    begin(s);
    ok(memset_async(buf, 64, 1, s));
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtRecordEvent(e, s) });
    value_write(w, 5, s);
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtResetEvent(x, s) });
    let m = end(s);

    let streams = streams_of(m);
    assert_eq!(streams.len(), 1, "one capturing stream");
    assert_ne!(streams[0], s, "a model stream is the model's own");
    let tasks = tasks_of(streams[0]);
    let types: Vec<u32> = tasks.iter().map(|&t| task_type(t)).collect();
    assert_eq!(
        types,
        [
            ACL_MODEL_RI_TASK_DEFAULT,
            ACL_MODEL_RI_TASK_EVENT_RECORD,
            ACL_MODEL_RI_TASK_VALUE_WRITE,
            ACL_MODEL_RI_TASK_EVENT_RESET
        ]
    );
    let ids: Vec<u32> = tasks
        .iter()
        .map(|&t| {
            let mut id = 99;
            // SAFETY: valid out-pointer; the handle is validated.
            ok(unsafe { aclmdlRITaskGetSeqId(t, &mut id) });
            id
        })
        .collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    assert_eq!(streams_of(m), streams, "stream handles are stable");
    assert_eq!(tasks_of(streams[0]), tasks, "task handles are stable");

    let rec = get_params(tasks[1]).unwrap();
    assert_eq!(rec.type_, ACL_MODEL_RI_TASK_EVENT_RECORD);
    // SAFETY: the record member, as the type says.
    let r = unsafe { rec.__bindgen_anon_1.eventRecordTaskParams };
    assert_eq!((r.event, r.eventFlag, r.recordFlag), (e, ACL_EVENT_SYNC, 0));
    let wr = get_params(tasks[2]).unwrap();
    // SAFETY: the value-write member, as the type says.
    let v = unsafe { wr.__bindgen_anon_1.valueWriteTaskParams };
    assert_eq!((v.devAddr, v.value), (w.cast(), 5));
    assert!(wr.taskGrp.is_null() && wr.opInfoPtr.is_null() && wr.opInfoSize == 0);
    let rs = get_params(tasks[3]).unwrap();
    // SAFETY: the reset member, as the type says.
    let r = unsafe { rs.__bindgen_anon_1.eventResetTaskParams };
    assert_eq!(
        (r.event, r.eventFlag, r.resetFlag),
        (x, acl_sys::ACL_EVENT_EXTERNAL, 0)
    );
    let got = get_params(tasks[0]).err().unwrap_or(0);
    assert_fails(got, PARAM_INVALID, "aclmdlRITaskGetParams");

    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 5);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    // The handles die with the model.
    let mut ty = 0;
    // SAFETY: valid out-pointer; the handle is validated.
    let got = unsafe { aclmdlRITaskGetType(tasks[2], &mut ty) };
    assert_fails(got, INVALID_HANDLE, "aclmdlRITaskGetType");
    let mut n = 0;
    // SAFETY: valid out-pointer; the handle is validated.
    let got = unsafe { aclmdlRIGetTasksByStream(streams[0], null_mut(), &mut n) };
    assert_fails(got, INVALID_HANDLE, "aclmdlRIGetTasksByStream");
    destroy_event(e);
    destroy_event(x);
    free(buf);
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn a_value_write_changed_by_set_params_writes_the_new_value_after_update_and_not_before() {
    let ctx = own_context();
    let s = create_stream();
    let (a, b) = (malloc(8), malloc(8));
    set_word(a, 0);
    set_word(b, 0);
    let (m, task) = one_write(s, a, 5);

    ok(set_params(task, write_params(b, 9)));
    // UPDATING: not executable until aclmdlRIUpdate (`CheckExecuteReady`).
    assert_fails(execute(m, s), MODEL_EXECUTE, "aclmdlRIExecuteAsync");
    ok(update(m));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!((word(a), word(b)), (0, 9), "the new address and value");
    let p = get_params(task).unwrap();
    // SAFETY: the value-write member, as the type says.
    let v = unsafe { p.__bindgen_anon_1.valueWriteTaskParams };
    assert_eq!((v.devAddr, v.value), (b.cast(), 9));

    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(a);
    free(b);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn an_event_record_task_set_to_a_value_write_writes_instead_of_recording() {
    let ctx = own_context();
    let s = create_stream();
    let w = malloc(8);
    set_word(w, 0);
    let e = ex_event();
    begin(s);
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtRecordEvent(e, s) });
    let m = end(s);
    let task = tasks_of_model(m)[0];
    assert_eq!(task_type(task), ACL_MODEL_RI_TASK_EVENT_RECORD);
    ok(set_params(task, write_params(w, 77)));
    assert_eq!(task_type(task), ACL_MODEL_RI_TASK_VALUE_WRITE);
    ok(update(m));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 77);
    let p = get_params(task).unwrap();
    assert_eq!(p.type_, ACL_MODEL_RI_TASK_VALUE_WRITE);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    destroy_event(e);
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn a_value_write_set_to_a_value_wait_holds_each_execution_until_the_word_matches() {
    let ctx = own_context();
    let (s, other) = (create_stream(), create_stream());
    let (flag, out) = (malloc(8), malloc(8));
    set_word(flag, 0);
    set_word(out, 0);
    begin(s);
    value_write(flag, 1, s);
    value_write(out, 3, s);
    let m = end(s);
    let task = tasks_of_model(m)[0];
    // Wait until *flag == 7 (flag 1: EQ).
    ok(set_params(task, wait_params(flag, 7, 1)));
    assert_eq!(task_type(task), ACL_MODEL_RI_TASK_VALUE_WAIT);
    let p = get_params(task).unwrap();
    // SAFETY: the value-wait member, as the type says.
    let v = unsafe { p.__bindgen_anon_1.valueWaitTaskParams };
    assert_eq!((v.devAddr, v.value, v.flag), (flag.cast(), 7, 1));
    ok(update(m));
    ok(execute(m, s));
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert!(!is_complete(s), "the execution waits for the word");
    value_write(flag, 7, other);
    ok(sync(s));
    assert_eq!(word(out), 3);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(flag);
    free(out);
    destroy_stream(other);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn a_disabled_task_does_nothing_until_it_is_set_again() {
    let ctx = own_context();
    let s = create_stream();
    let w = malloc(8);
    set_word(w, 0);
    let (m, task) = one_write(s, w, 4);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRITaskDisable(task) });
    assert_fails(execute(m, s), MODEL_EXECUTE, "aclmdlRIExecuteAsync");
    ok(update(m));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 0, "disabled");
    ok(set_params(task, write_params(w, 6)));
    ok(update(m));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 6, "enabled again by the new parameters");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn refused_changes_fail_with_the_release_codes_and_leave_the_model_in_fault() {
    let ctx = own_context();
    let s = create_stream();
    let (buf, w) = (malloc(8), malloc(8));
    let e = ex_event();
    begin(s);
    ok(memset_async(buf, 8, 0, s));
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtRecordEvent(e, s) });
    value_write(w, 1, s);
    let m = end(s);
    let tasks = tasks_of_model(m);

    // Event kinds cannot be set: 107000, the model FAULT.
    let mut p = get_params(tasks[1]).unwrap();
    assert_fails(
        set_params(tasks[1], p),
        PARAM_INVALID,
        "aclmdlRITaskSetParams",
    );
    assert_fails(execute(m, s), MODEL_EXECUTE, "aclmdlRIExecuteAsync");
    assert_fails(update(m), UPDATE_FAILED, "aclmdlRIUpdate");
    // FAULT cannot be updated any more.
    assert_fails(
        set_params(tasks[2], write_params(w, 2)),
        UPDATE_FAILED,
        "aclmdlRITaskSetParams",
    );
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });

    // A fresh model for the other refusals.
    begin(s);
    ok(memset_async(buf, 8, 0, s));
    value_write(w, 1, s);
    let m = end(s);
    let tasks = tasks_of_model(m);
    // A DEFAULT task cannot become a value write (`CheckUpdatingTaskParams`).
    assert_fails(
        set_params(tasks[0], write_params(w, 2)),
        PARAM_INVALID,
        "aclmdlRITaskSetParams",
    );
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });

    let (m, task) = one_write(s, w, 1);
    p = write_params(w, 2);
    p.opInfoSize = 8;
    assert_fails(set_params(task, p), PARAM_INVALID, "aclmdlRITaskSetParams");
    let mut unknown = write_params(w, 2);
    unknown.type_ = 42;
    // FAULT already: the update check comes first.
    assert_fails(
        set_params(task, unknown),
        UPDATE_FAILED,
        "aclmdlRITaskSetParams",
    );
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });

    // Not while an execution runs (`CanUpdate`): 107040.
    let (m, task) = one_write(s, w, 1);
    let release = block_stream(s);
    ok(execute(m, s));
    assert_fails(
        set_params(task, write_params(w, 2)),
        UPDATE_FAILED,
        "aclmdlRITaskSetParams",
    );
    // SAFETY: the handle is validated.
    assert_fails(
        unsafe { aclmdlRITaskDisable(task) },
        UPDATE_FAILED,
        "aclmdlRITaskDisable",
    );
    drop(release);
    ok(sync(s));
    ok(set_params(task, write_params(w, 2)));
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });

    destroy_event(e);
    free(buf);
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn null_bad_and_short_arguments_get_the_release_codes() {
    let ctx = own_context();
    let (s, t) = (create_stream(), create_stream());
    let w = malloc(8);
    begin(s);
    value_write(w, 1, s);
    value_write(w, 2, s);
    let m = end(s);
    let mut n = 0u32;
    let mut ty = 0u32;
    // SAFETY: the handles are validated; the out-pointers are valid, or
    // null on purpose.
    unsafe {
        assert_fails(
            aclmdlRIGetStreams(null_mut(), null_mut(), &mut n),
            PARAM_INVALID,
            "aclmdlRIGetStreams",
        );
        assert_fails(
            aclmdlRIGetStreams(m, null_mut(), null_mut()),
            PARAM_INVALID,
            "aclmdlRIGetStreams",
        );
        assert_fails(
            aclmdlRIGetStreams(8usize as aclmdlRI, null_mut(), &mut n),
            INVALID_HANDLE,
            "aclmdlRIGetStreams",
        );
        assert_fails(
            aclmdlRIGetTasksByStream(null_mut(), null_mut(), &mut n),
            PARAM_INVALID,
            "aclmdlRIGetTasksByStream",
        );
        // An application stream is not bound to a model.
        assert_fails(
            aclmdlRIGetTasksByStream(t, null_mut(), &mut n),
            PARAM_INVALID,
            "aclmdlRIGetTasksByStream",
        );
        let ms = streams_of(m)[0];
        assert_fails(
            aclmdlRIGetTasksByStream(ms, null_mut(), null_mut()),
            PARAM_INVALID,
            "aclmdlRIGetTasksByStream",
        );
        // A short array: the first entries, the rest null, 107039.
        let mut arr = [1usize as aclmdlRITask; 1];
        n = 1;
        assert_fails(
            aclmdlRIGetTasksByStream(ms, arr.as_mut_ptr(), &mut n),
            INSUFFICIENT,
            "aclmdlRIGetTasksByStream",
        );
        assert_eq!(n, 1);
        assert_eq!(arr[0], tasks_of(ms)[0]);
        let mut none = [1usize as aclrtStream; 1];
        n = 0;
        assert_fails(
            aclmdlRIGetStreams(m, none.as_mut_ptr(), &mut n),
            INSUFFICIENT,
            "aclmdlRIGetStreams",
        );
        assert_eq!((n, none[0]), (0, 1usize as aclrtStream), "nothing written");
        let mut wide = [1usize as aclrtStream; 3];
        n = 3;
        ok(aclmdlRIGetStreams(m, wide.as_mut_ptr(), &mut n));
        assert_eq!(n, 1);
        assert!(wide[1].is_null() && wide[2].is_null(), "the rest nulled");
        let task = arr[0];
        assert_fails(
            aclmdlRITaskGetType(null_mut(), &mut ty),
            PARAM_INVALID,
            "aclmdlRITaskGetType",
        );
        assert_fails(
            aclmdlRITaskGetType(task, null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskGetType",
        );
        assert_fails(
            aclmdlRITaskGetType(8usize as aclmdlRITask, &mut ty),
            INVALID_HANDLE,
            "aclmdlRITaskGetType",
        );
        assert_fails(
            aclmdlRITaskGetSeqId(task, null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskGetSeqId",
        );
        assert_fails(
            aclmdlRITaskGetParams(task, null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskGetParams",
        );
        assert_fails(
            aclmdlRITaskSetParams(null_mut(), null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskSetParams",
        );
        assert_fails(
            aclmdlRITaskSetParams(task, null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskSetParams",
        );
        assert_fails(
            aclmdlRITaskDisable(null_mut()),
            PARAM_INVALID,
            "aclmdlRITaskDisable",
        );
        ok(aclmdlRIDestroy(m));
    }
    free(w);
    destroy_stream(t);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn aborting_an_idle_model_succeeds_and_it_runs_again_afterwards() {
    let ctx = own_context();
    let s = create_stream();
    let w = malloc(8);
    set_word(w, 0);
    let (m, _) = one_write(s, w, 3);
    // SAFETY: the handles are validated; null on purpose.
    unsafe {
        assert_fails(aclmdlRIAbort(null_mut()), PARAM_INVALID, "aclmdlRIAbort");
        assert_fails(
            aclmdlRIAbort(8usize as aclmdlRI),
            INVALID_HANDLE,
            "aclmdlRIAbort",
        );
        let other = own_context();
        assert_fails(
            aclmdlRIAbort(m),
            rc(acl_sys::ACL_ERROR_RT_MODEL_CONTEXT),
            "aclmdlRIAbort",
        );
        ok(aclrtDestroyContext(other));
        ok(aclrtSetCurrentContext(ctx));
        ok(aclmdlRIAbort(m));
    }
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 3, "an aborted model runs again");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

fn abort(m: aclmdlRI) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRIAbort(m) }
}

const ABORTED: i32 = rc(acl_sys::ACL_ERROR_RT_MODEL_ABORT_NORMAL);

#[test]
fn aborting_a_running_execution_ends_its_wait_and_its_stream_reports_507023_once() {
    // hicann/runtime model.cc Model::ModelAbort, stream.cc Stream::GetError,
    // api_c_stream.cc rtStreamSynchronize: the aborted execution's stream
    // answers ACL_ERROR_RT_MODEL_ABORT_NORMAL.
    let ctx = own_context();
    let (s, host) = (create_stream(), create_stream());
    let e = external_event();
    let w = malloc(8);
    set_word(w, 0);
    begin(s);
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtStreamWaitEvent(s, e) });
    value_write(w, 3, s);
    let m = end(s);
    ok(execute(m, s));
    // The execution is blocked in its wait for an event nobody records.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(!is_complete(s), "the execution waits for the event");
    ok(abort(m));
    assert_fails(sync(s), ABORTED, "aclrtSynchronizeStream");
    assert_eq!(word(w), 0, "the aborted execution's later task never ran");
    ok(sync(s));
    // The model runs again once the event is recorded.
    record(e, host);
    ok(sync(host));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 3, "an aborted model runs again");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(w);
    destroy_event(e);
    destroy_stream(host);
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn aborting_a_queued_execution_drops_it_and_keeps_the_work_queued_around_it() {
    cann_sim::sim_only!(
        "that an execution queued behind other work is stopped too is cann-sim's reading of \
         the task scheduler, which is not open source"
    );
    let ctx = own_context();
    let s = create_stream();
    let (w, after) = (malloc(8), malloc(8));
    set_word(w, 0);
    set_word(after, 0);
    let (m, _) = one_write(s, w, 3);
    let release = block_stream(s);
    ok(execute(m, s));
    value_write(after, 5, s);
    ok(abort(m));
    drop(release);
    assert_fails(sync(s), ABORTED, "aclrtSynchronizeStream");
    assert_eq!(word(w), 0, "the aborted execution did not run");
    assert_eq!(word(after), 5, "work queued after the execution ran");
    // Aborting a model with nothing in flight changes nothing.
    ok(abort(m));
    ok(execute(m, s));
    ok(sync(s));
    assert_eq!(word(w), 3, "the next execution runs");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(after);
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

/// The list of a model's executions that `aclmdlRIAbort` stops is pruned
/// of finished ones only now and then (so that each execution costs the
/// same however many are queued): every execution still queued is stopped,
/// however many finished before and were queued with it.
#[test]
fn aborting_stops_every_queued_execution_after_many_finished_ones() {
    cann_sim::sim_only!(
        "that an execution queued behind other work is stopped too is cann-sim's reading of \
         the task scheduler, which is not open source"
    );
    let ctx = own_context();
    let s = create_stream();
    let (w, after) = (malloc(8), malloc(8));
    set_word(after, 0);
    let (m, _) = one_write(s, w, 3);
    for _ in 0..100 {
        ok(execute(m, s));
    }
    ok(sync(s));
    assert_eq!(word(w), 3, "the first executions ran");
    set_word(w, 0);
    let release = block_stream(s);
    for _ in 0..40 {
        ok(execute(m, s));
    }
    value_write(after, 5, s);
    ok(abort(m));
    drop(release);
    assert_fails(sync(s), ABORTED, "aclrtSynchronizeStream");
    assert_eq!(word(w), 0, "none of the 40 queued executions ran");
    assert_eq!(word(after), 5, "work queued after them ran");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
    free(after);
    free(w);
    destroy_stream(s);
    destroy_context(ctx);
}

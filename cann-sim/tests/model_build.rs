//! Explicit model construction (`aclmdlRIBuildBegin` … `aclmdlRIBuildEnd`)
//! with labels and label switches, through the C exports: built models run
//! with `aclmdlRIExecuteAsync` and `aclmdlRIExecute`, a switch reads its
//! index from device memory at run time so that executions take different
//! branches, and each misuse gets the release's code.

#[path = "common/aclnn.rs"]
#[allow(dead_code)]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_MODEL,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
    ACL_MODEL_STREAM_FLAG_DEFAULT, ACL_MODEL_STREAM_FLAG_HEAD, ACL_STREAM_PERSISTENT, aclError,
    aclmdlRI, aclrtLabel, aclrtLabelList, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const STREAM_MODEL: i32 = rc(ACL_ERROR_RT_STREAM_MODEL);
const INTERNAL: i32 = rc(ACL_ERROR_RT_INTERNAL_ERROR);
const FEATURE: i32 = rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);

fn persistent_stream() -> aclrtStream {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_PERSISTENT) });
    s
}

fn build_begin() -> aclmdlRI {
    let mut m = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclmdlRIBuildBegin(&mut m, 0) });
    assert!(!m.is_null());
    m
}

fn bind(m: aclmdlRI, s: aclrtStream, flag: u32) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIBindStream(m, s, flag) }
}

fn end_task(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIEndTask(m, s) }
}

fn build_end(m: aclmdlRI) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRIBuildEnd(m, null_mut()) }
}

fn execute_async(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn destroy(m: aclmdlRI) {
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIDestroy(m) });
}

fn labels(n: usize) -> (Vec<aclrtLabel>, aclrtLabelList) {
    let mut ls = vec![null_mut(); n];
    for l in &mut ls {
        // SAFETY: valid out-pointer.
        ok(unsafe { aclrtCreateLabel(l) });
    }
    let mut list = null_mut();
    // SAFETY: `ls` holds `n` live labels; valid out-pointer.
    ok(unsafe { aclrtCreateLabelList(ls.as_mut_ptr(), n, &mut list) });
    (ls, list)
}

fn destroy_labels(ls: &[aclrtLabel], lists: &[aclrtLabelList]) {
    for &l in ls {
        // SAFETY: a live label of the test's.
        ok(unsafe { aclrtDestroyLabel(l) });
    }
    for &l in lists {
        // SAFETY: a live label list of the test's.
        ok(unsafe { aclrtDestroyLabelList(l) });
    }
}

fn set_label(l: aclrtLabel, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclrtSetLabel(l, s) }
}

fn switch(index: *mut u8, max: u32, list: aclrtLabelList, s: aclrtStream) -> aclError {
    // SAFETY: the handles and the pointer are validated.
    unsafe { aclrtSwitchLabelByIndex(index.cast(), max, list, s) }
}

fn write_u32(p: *mut u8, v: u32) {
    // SAFETY: 4 readable bytes to 4 bytes of device memory.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            4,
            (&v as *const u32).cast(),
            4,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

fn floats(p: *mut u8, n: usize) -> Vec<f32> {
    to_host(p, n * 4)
        .chunks(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `out = a + alpha · b` over `n` f32 with aclnnAdd queued on `s`.
fn add_scaled(a: *mut u8, b: *mut u8, alpha: f32, out: *mut u8, n: i64, s: aclrtStream) {
    let r = aclnn_common::add_scaled(a, b, alpha, out, n, s);
    assert_eq!(r, acl_sys::aclnn::ACLNN_SUCCESS, "{}", recent_error());
}

/// The label sample's model on two streams: the head stream switches on
/// the index at `idx`: label 0 (on the head stream) fills `out` with
/// 0x11 and ends; label 1 (on a second, non-head stream) computes
/// `out = a + 2·b` with aclnnAdd.
struct Branchy {
    m: aclmdlRI,
    head: aclrtStream,
    other: aclrtStream,
    ls: Vec<aclrtLabel>,
    list: aclrtLabelList,
}

fn branchy(idx: *mut u8, a: *mut u8, b: *mut u8, out: *mut u8) -> Branchy {
    let (head, other) = (persistent_stream(), persistent_stream());
    let m = build_begin();
    ok(bind(m, head, ACL_MODEL_STREAM_FLAG_HEAD));
    ok(bind(m, other, ACL_MODEL_STREAM_FLAG_DEFAULT));
    let (ls, list) = labels(2);
    ok(switch(idx, 2, list, head));
    ok(set_label(ls[0], head));
    ok(memset_async(out, 16, 0x11, head));
    ok(end_task(m, head));
    ok(set_label(ls[1], other));
    add_scaled(a, b, 2.0, out, 4, other);
    ok(build_end(m));
    Branchy {
        m,
        head,
        other,
        ls,
        list,
    }
}

impl Branchy {
    fn close(self) {
        // SAFETY: the handles are validated.
        ok(unsafe { aclmdlRIUnbindStream(self.m, self.head) });
        destroy(self.m);
        destroy_labels(&self.ls, &[self.list]);
        destroy_stream(self.head);
        destroy_stream(self.other);
    }
}

#[test]
fn a_built_model_takes_the_branch_its_device_index_names_at_each_execution() {
    use_device(0);
    let idx = malloc(4);
    let a = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let b = aclnn_common::upload(&[10f32, 20., 30., 40.]);
    let out = malloc(16);
    let model = branchy(idx, a, b, out);
    let exec = create_stream();

    // Index 0: label 0, the fill.
    write_u32(idx, 0);
    ok(execute_async(model.m, exec));
    ok(sync(exec));
    assert_eq!(to_host(out, 16), vec![0x11; 16]);

    // Index 1, same model: label 1 on the other stream, the operator.
    write_u32(idx, 1);
    ok(execute_async(model.m, exec));
    ok(sync(exec));
    assert_eq!(floats(out, 4), vec![21., 42., 63., 84.]);

    // Back to 0 with the synchronous execution.
    write_u32(idx, 0);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIExecute(model.m, -1) });
    assert_eq!(to_host(out, 16), vec![0x11; 16]);

    // An index beyond the list takes its last label (the API page).
    ok(memset_async(out, 16, 0, exec));
    write_u32(idx, 7);
    ok(execute_async(model.m, exec));
    ok(sync(exec));
    assert_eq!(floats(out, 4), vec![21., 42., 63., 84.]);

    model.close();
    destroy_stream(exec);
    for p in [idx, a, b, out] {
        free(p);
    }
}

#[test]
fn a_label_switch_back_to_an_earlier_label_loops_until_the_model_resets_its_index() {
    use_device(0);
    let (idx, zero) = (malloc(4), malloc(4));
    write_u32(zero, 0);
    let a = aclnn_common::upload(&[1f32, 1., 1., 1.]);
    let b = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let acc = malloc(16);
    let s = persistent_stream();
    let m = build_begin();
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    // [exit, again] for the loop test, [top] for the jump back.
    let (exit_again, list) = labels(2);
    let (top, top_list) = labels(1);
    ok(memcpy_async(acc, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ok(set_label(top[0], s));
    add_scaled(acc, b, 1.0, acc, 4, s);
    ok(switch(idx, 2, list, s));
    ok(set_label(exit_again[1], s));
    ok(memcpy_async(idx, zero, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ok(switch(zero, 1, top_list, s));
    ok(set_label(exit_again[0], s));
    ok(end_task(m, s));
    ok(build_end(m));
    let exec = create_stream();

    // Index 1: the body runs twice (the model resets the index in between).
    write_u32(idx, 1);
    ok(execute_async(m, exec));
    ok(sync(exec));
    assert_eq!(floats(acc, 4), vec![3., 5., 7., 9.]);
    assert_eq!(to_host(idx, 4), vec![0; 4]);
    // Index 0: once.
    ok(execute_async(m, exec));
    ok(sync(exec));
    assert_eq!(floats(acc, 4), vec![2., 3., 4., 5.]);

    destroy(m);
    destroy_labels(
        &[exit_again.clone(), top.clone()].concat(),
        &[list, top_list],
    );
    destroy_stream(exec);
    destroy_stream(s);
    for p in [idx, zero, a, b, acc] {
        free(p);
    }
}

#[test]
fn build_calls_refuse_bad_arguments_with_the_release_codes() {
    use_device(0);
    // SAFETY: null or validated handles, valid pointers.
    unsafe {
        assert_fails(
            aclmdlRIBuildBegin(null_mut(), 0),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRIBuildBegin",
        );
        let mut m = null_mut();
        assert_fails(
            aclmdlRIBuildBegin(&mut m, 1),
            PARAM_INVALID,
            "aclmdlRIBuildBegin",
        );
    }
    let m = build_begin();
    let plain = create_stream();
    let s = persistent_stream();
    // A stream that is not persistent, the default stream, a bad flag.
    assert_fails(
        bind(m, plain, ACL_MODEL_STREAM_FLAG_HEAD),
        PARAM_INVALID,
        "aclmdlRIBindStream",
    );
    assert_fails(
        bind(m, null_mut(), ACL_MODEL_STREAM_FLAG_HEAD),
        PARAM_INVALID,
        "aclmdlRIBindStream",
    );
    assert_fails(bind(m, s, 5), PARAM_INVALID, "aclmdlRIBindStream");
    assert_fails(
        bind(null_mut(), s, ACL_MODEL_STREAM_FLAG_HEAD),
        ACL_ERROR_INVALID_PARAM,
        "aclmdlRIBindStream",
    );
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    // Bound twice, or to a second model.
    let m2 = build_begin();
    assert_fails(
        bind(m2, s, ACL_MODEL_STREAM_FLAG_HEAD),
        STREAM_MODEL,
        "aclmdlRIBindStream",
    );
    // An end task on a stream not bound to the model; then a second end.
    let s2 = persistent_stream();
    assert_fails(end_task(m, s2), INTERNAL, "aclmdlRIEndTask");
    ok(end_task(m, s));
    assert_fails(end_task(m, s), INTERNAL, "aclmdlRIEndTask");
    // Executing before the build ends, and on a bound stream.
    assert_fails(
        execute_async(m, plain),
        PARAM_INVALID,
        "aclmdlRIExecuteAsync",
    );
    // SAFETY: `reserve` must be null; the handle is validated.
    let r = unsafe { aclmdlRIBuildEnd(m, 8usize as *mut _) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclmdlRIBuildEnd");
    ok(build_end(m));
    assert_fails(execute_async(m, s), PARAM_INVALID, "aclmdlRIExecuteAsync");
    // SAFETY: the handle is validated.
    assert_fails(
        unsafe { aclmdlRIExecute(m, 0) },
        PARAM_INVALID,
        "aclmdlRIExecute",
    );
    // Unbinding a stream the model does not hold.
    // SAFETY: the handles are validated.
    assert_fails(
        unsafe { aclmdlRIUnbindStream(m, s2) },
        STREAM_MODEL,
        "aclmdlRIUnbindStream",
    );
    // A captured model is not taken by the build API.
    let cs = create_stream();
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(cs, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    let mut captured = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclmdlRICaptureEnd(cs, &mut captured) });
    assert_fails(
        bind(captured, s2, ACL_MODEL_STREAM_FLAG_HEAD),
        PARAM_INVALID,
        "aclmdlRIBindStream",
    );
    assert_fails(build_end(captured), PARAM_INVALID, "aclmdlRIBuildEnd");
    destroy(captured);
    destroy(m);
    destroy(m2);
    // Destroying the model unbound its streams: `s` binds again.
    let m3 = build_begin();
    ok(bind(m3, s, ACL_MODEL_STREAM_FLAG_HEAD));
    destroy(m3);
    for st in [plain, s, s2, cs] {
        destroy_stream(st);
    }
}

#[test]
fn label_calls_refuse_bad_arguments_with_the_release_codes() {
    use_device(0);
    let s = persistent_stream();
    let unbound = persistent_stream();
    let m = build_begin();
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    let (ls, list) = labels(1);
    let mut lone = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateLabel(&mut lone) });
    // SAFETY: null or validated handles.
    unsafe {
        assert_fails(
            aclrtCreateLabel(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateLabel",
        );
        let mut out = null_mut();
        assert_fails(
            aclrtCreateLabelList(&mut lone, 0, &mut out),
            PARAM_INVALID,
            "aclrtCreateLabelList",
        );
        assert_fails(
            aclrtCreateLabelList(null_mut(), 1, &mut out),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateLabelList",
        );
    }
    // A stream bound to no model; a label in no list; a label set twice.
    assert_fails(set_label(ls[0], unbound), STREAM_MODEL, "aclrtSetLabel");
    assert_fails(set_label(lone, s), INTERNAL, "aclrtSetLabel");
    ok(set_label(ls[0], s));
    assert_fails(set_label(ls[0], s), INTERNAL, "aclrtSetLabel");
    // Switches: a null index, an index in host memory, an unbound stream.
    let idx = malloc(4);
    assert_fails(
        switch(null_mut(), 1, list, s),
        ACL_ERROR_INVALID_PARAM,
        "aclrtSwitchLabelByIndex",
    );
    let mut host = [0u8; 4];
    assert_fails(
        switch(host.as_mut_ptr(), 1, list, s),
        PARAM_INVALID,
        "aclrtSwitchLabelByIndex",
    );
    assert_fails(
        switch(idx, 1, list, unbound),
        STREAM_MODEL,
        "aclrtSwitchLabelByIndex",
    );
    // Destroyed handles.
    destroy_labels(&[lone], &[]);
    assert_fails(
        set_label(lone, s),
        rc(acl_sys::ACL_ERROR_RT_INVALID_HANDLE),
        "aclrtSetLabel",
    );
    destroy(m);
    destroy_labels(&ls, &[list]);
    free(idx);
    destroy_stream(s);
    destroy_stream(unbound);
}

#[test]
fn a_built_model_refuses_what_the_simulator_cannot_record() {
    use_device(0);
    let s = persistent_stream();
    let m = build_begin();
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    // An event record on a bound stream is not recorded by cann-sim.
    let e = create_event();
    // SAFETY: the handles are validated.
    assert_fails(
        unsafe { aclrtRecordEvent(e, s) },
        FEATURE,
        "aclrtRecordEvent",
    );
    // A copy from pageable host memory would happen now, not at run time.
    let dst = malloc(4);
    let host = [1u8; 4];
    assert_fails(
        memcpy_async(dst, host.as_ptr(), 4, ACL_MEMCPY_HOST_TO_DEVICE, s),
        ACL_ERROR_API_NOT_SUPPORT,
        "aclrtMemcpyAsync",
    );
    // Work on a non-head stream that nothing activates or jumps to never
    // runs; the build ends all the same (as the runtime's).
    let other = persistent_stream();
    ok(bind(m, other, ACL_MODEL_STREAM_FLAG_DEFAULT));
    write_u32(dst, 7);
    ok(memset_async(dst, 4, 0, other));
    ok(build_end(m));
    let exec = create_stream();
    ok(execute_async(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(dst, 4), 7u32.to_ne_bytes());
    destroy_stream(exec);
    destroy(m);
    destroy_event(e);
    free(dst);
    destroy_stream(s);
    destroy_stream(other);
}

fn json_print(m: aclmdlRI, path: &std::path::Path) -> aclError {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; the handle is validated.
    unsafe { aclmdlRIDebugJsonPrint(m, c.as_ptr(), 0) }
}

#[test]
fn debug_json_print_writes_each_streams_tasks_as_trace_events() {
    use_device(0);
    let dir = tempfile::TempDir::new().unwrap();
    let idx = malloc(4);
    let a = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let b = aclnn_common::upload(&[1f32, 2., 3., 4.]);
    let out = malloc(16);
    let model = branchy(idx, a, b, out);
    let path = dir.path().join("model.json");
    // An existing regular file is replaced.
    std::fs::write(&path, "old contents, longer than nothing").unwrap();
    ok(json_print(model.m, &path));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = v.as_array().unwrap();
    let kinds: Vec<(&str, &str, u64)> = events
        .iter()
        .map(|e| {
            (
                e["args"]["Task Type"].as_str().unwrap(),
                e["name"].as_str().unwrap(),
                e["ts"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            // The stream bound last comes first, as on the runtime.
            ("LABEL_SET", "LABEL_SET", 0),
            ("KERNEL_AIVEC", "aclnnAdd", 10),
            (
                "STREAM_LABEL_SWITCH_BY_INDEX",
                "STREAM_LABEL_SWITCH_BY_INDEX",
                0
            ),
            ("LABEL_SET", "LABEL_SET", 10),
            ("MEMSET_ASYNC", "MEMSET_ASYNC", 20),
            ("MODEL_END_GRAPH", "MODEL_END_GRAPH", 30),
        ]
    );
    let e = &events[1];
    assert_eq!(e["ph"], "X");
    assert_eq!(e["dur"], 9.5);
    assert_eq!(e["pid"], format!("{} aclGraph", std::process::id()));
    assert_eq!(e["args"]["Task Id"], 1);
    assert!(e["tid"].as_str().unwrap().starts_with("stream"));
    assert_eq!(
        events[0]["tid"],
        format!("stream{}", events[0]["args"]["Stream Id"])
    );
    assert_ne!(
        events[0]["args"]["Stream Id"],
        events[2]["args"]["Stream Id"]
    );
    model.close();
    for p in [idx, a, b, out] {
        free(p);
    }
}

#[test]
fn debug_json_print_of_a_captured_model_lists_its_captured_tasks() {
    use_device(0);
    let dir = tempfile::TempDir::new().unwrap();
    let s = create_stream();
    let d = malloc(8);
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
    ok(memset_async(d, 8, 1, s));
    ok(memcpy_async(
        d,
        d.wrapping_add(4),
        4,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        s,
    ));
    let mut m = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    let path = dir.path().join("captured.json");
    ok(json_print(m, &path));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let kinds: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["args"]["Task Type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["MEMSET_ASYNC", "MEMCPY_ASYNC"]);
    destroy(m);
    free(d);
    destroy_stream(s);
}

#[test]
fn debug_json_print_never_writes_into_a_fifo_a_device_or_a_directory() {
    use_device(0);
    let dir = tempfile::TempDir::new().unwrap();
    let m = build_begin();
    ok(build_end(m));
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for p in [
        fifo.as_path(),
        std::path::Path::new("/dev/null"),
        dir.path(),
    ] {
        let msg = assert_fails(json_print(m, p), PARAM_INVALID, "aclmdlRIDebugJsonPrint");
        assert_contains(&msg, "not a regular file");
    }
    // A directory that does not exist: the file cannot be opened.
    let missing = dir.path().join("no/such/dir/m.json");
    assert_fails(
        json_print(m, &missing),
        PARAM_INVALID,
        "aclmdlRIDebugJsonPrint",
    );
    // Null arguments.
    // SAFETY: null arguments are checked.
    unsafe {
        assert_fails(
            aclmdlRIDebugJsonPrint(m, null_mut(), 0),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRIDebugJsonPrint",
        );
        assert_fails(
            aclmdlRIDebugJsonPrint(null_mut(), c.as_ptr(), 0),
            ACL_ERROR_INVALID_PARAM,
            "aclmdlRIDebugJsonPrint",
        );
    }
    // An empty model is an empty array.
    let path = dir.path().join("empty.json");
    ok(json_print(m, &path));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[\n]");
    destroy(m);
}

#[test]
fn a_stream_bound_again_after_an_unbind_keeps_its_tasks_and_is_listed_once() {
    use_device(0);
    let dir = tempfile::TempDir::new().unwrap();
    let d = malloc(8);
    let s = persistent_stream();
    let m = build_begin();
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    ok(memset_async(d, 4, 1, s));
    // SAFETY: the handles are validated.
    ok(unsafe { aclmdlRIUnbindStream(m, s) });
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    ok(memset_async(d.wrapping_add(4), 4, 2, s));
    ok(build_end(m));
    let exec = create_stream();
    ok(execute_async(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(d, 8), [1, 1, 1, 1, 2, 2, 2, 2]);
    let path = dir.path().join("m.json");
    ok(json_print(m, &path));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let tids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["tid"].as_str().unwrap())
        .collect();
    assert_eq!(tids.len(), 2);
    assert_eq!(tids[0], tids[1]);
    destroy(m);
    destroy_stream(exec);
    destroy_stream(s);
    free(d);
}

/// A built model that fills `word` with 7, then loops back to its start
/// for ever (until the jump limit): an execution that runs until aborted.
fn endless_fill(
    word: *mut u8,
    zero: *mut u8,
) -> (aclmdlRI, aclrtStream, Vec<aclrtLabel>, aclrtLabelList) {
    let s = persistent_stream();
    let m = build_begin();
    ok(bind(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    let (top, list) = labels(1);
    ok(set_label(top[0], s));
    ok(memset_async(word, 4, 7, s));
    ok(switch(zero, 1, list, s));
    ok(end_task(m, s));
    ok(build_end(m));
    (m, s, top, list)
}

/// Releases what [`endless_fill`] made, the executing stream and `memory`.
fn release_endless(
    (m, s, top, list): (aclmdlRI, aclrtStream, Vec<aclrtLabel>, aclrtLabelList),
    exec: aclrtStream,
    memory: [*mut u8; 2],
) {
    destroy(m);
    destroy_labels(&top, &[list]);
    destroy_stream(exec);
    destroy_stream(s);
    for p in memory {
        free(p);
    }
}

#[test]
fn aborting_a_running_built_model_stops_it_and_its_stream_reports_507023_once() {
    // hicann/runtime model.cc Model::ModelAbort; stream.cc Stream::GetError.
    use_device(0);
    let (word, zero) = (malloc(4), malloc(4));
    write_u32(zero, 0);
    let built = endless_fill(word, zero);
    let m = built.0;
    let exec = create_stream();
    ok(execute_async(m, exec));
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(!is_complete(exec), "the execution loops");
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIAbort(m) });
    assert_fails(
        sync(exec),
        rc(acl_sys::ACL_ERROR_RT_MODEL_ABORT_NORMAL),
        "aclrtSynchronizeStream",
    );
    ok(sync(exec));
    assert_eq!(to_host(word, 4), vec![7; 4], "it ran until aborted");
    release_endless(built, exec, [word, zero]);
}

#[test]
fn aborting_a_queued_built_model_drops_its_execution() {
    cann_sim::sim_only!(
        "that an execution queued behind other work is stopped too is cann-sim's reading of \
         the task scheduler, which is not open source"
    );
    use_device(0);
    let (word, zero) = (malloc(4), malloc(4));
    write_u32(zero, 0);
    write_u32(word, 0);
    let built = endless_fill(word, zero);
    let m = built.0;
    let exec = create_stream();
    let release = block_stream(exec);
    ok(execute_async(m, exec));
    // SAFETY: the handle is validated.
    ok(unsafe { aclmdlRIAbort(m) });
    drop(release);
    assert_fails(
        sync(exec),
        rc(acl_sys::ACL_ERROR_RT_MODEL_ABORT_NORMAL),
        "aclrtSynchronizeStream",
    );
    assert_eq!(
        to_host(word, 4),
        vec![0; 4],
        "the aborted execution never ran"
    );
    release_endless(built, exec, [word, zero]);
}

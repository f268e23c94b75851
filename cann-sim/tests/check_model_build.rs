//! The check mode (`CANN_SIM_CHECK=report`) and models built explicitly
//! (`aclmdlRIBuildBegin` … `aclmdlRIBuildEnd`), through the C ABI: a built
//! model holds the memory its bound streams recorded until
//! `aclmdlRIDestroy` (`free-while-captured`), what only it writes is
//! unreadable until an execution is queued (`uninitialised-read`), two
//! executions on two streams without ordering race (`stream-race`), and a
//! correct program makes no report.
//!
//! The mode is fixed once per process (`set_mode` before any simulator
//! call); the tests count reports, so they run one at a time.

mod common;

use acl_sys::{
    ACL_ERROR_RT_MEMORY_FREE, ACL_ERROR_RT_STREAM_NOT_COMPLETE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MODEL_STREAM_FLAG_HEAD, ACL_STREAM_PERSISTENT, aclError, aclmdlRI, aclrtStream,
};
use cann_sim::acl::*;
use cann_sim::check::{self, Kind, Mode};
use common::*;
use std::ptr::null_mut;

const MEMORY_FREE: i32 = rc(ACL_ERROR_RT_MEMORY_FREE);
const NOT_COMPLETE: i32 = rc(ACL_ERROR_RT_STREAM_NOT_COMPLETE);

/// Report mode, device 0; counts the test's reports (one test at a time).
fn setup() -> ReportCount {
    check::set_mode(Mode::Report).expect("nothing fixed another mode before");
    let r = count_reports();
    use_device(0);
    r
}

/// Asserts that `got` failed with `code` and made report number `n` of the
/// test, of `kind`, whose message contains each of `parts`.
#[track_caller]
fn assert_report(
    r: &ReportCount,
    n: u64,
    got: aclError,
    code: aclError,
    kind: Kind,
    api: &str,
    parts: &[&str],
) {
    let msg = assert_fails(got, code, api);
    r.assert_made(n, kind, &msg);
    for p in parts {
        assert_contains(&msg, p);
    }
}

/// A built model whose one head stream records `aclrtMemsetAsync(d, len,
/// value)`; returns the model and its (bound) stream.
fn built_fill(d: *mut u8, len: usize, value: i32) -> (aclmdlRI, aclrtStream) {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateStreamWithConfig(&mut s, 0, ACL_STREAM_PERSISTENT) });
    let mut m = null_mut();
    // SAFETY: valid out-pointers and handles.
    unsafe {
        ok(aclmdlRIBuildBegin(&mut m, 0));
        ok(aclmdlRIBindStream(m, s, ACL_MODEL_STREAM_FLAG_HEAD));
    }
    ok(memset_async(d, len, value, s));
    // SAFETY: live handles.
    unsafe {
        ok(aclmdlRIEndTask(m, s));
        ok(aclmdlRIBuildEnd(m, null_mut()));
    }
    (m, s)
}

fn release(m: aclmdlRI, s: aclrtStream) {
    // SAFETY: live handles.
    ok(unsafe { aclmdlRIDestroy(m) });
    destroy_stream(s);
}

fn execute(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn read_back(src: *const u8, count: usize) -> aclError {
    let mut out = vec![0u8; count];
    // SAFETY: `out` holds `count` bytes; the device end is checked.
    unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            count,
            src.cast(),
            count,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
}

#[test]
fn freeing_memory_a_live_built_model_uses_is_free_while_captured_and_keeps_it() {
    let r = setup();
    let d = malloc(64);
    // SAFETY: 64 device bytes (written outside the model).
    ok(unsafe { aclrtMemset(d.cast(), 64, 0, 64) });
    let (m, bound) = built_fill(d, 64, 7);
    // SAFETY: a live allocation; the check refuses to free it.
    let got = unsafe { aclrtFree(d.cast()) };
    assert_report(
        &r,
        1,
        got,
        MEMORY_FREE,
        Kind::FreeWhileCaptured,
        "aclrtFree",
        &[
            &format!(
                "aclrtFree({:#x}) while model {:#x}, built and not destroyed, uses it: its \
                 recorded aclrtMemsetAsync (step #1",
                d as usize, m as usize
            ),
            "The memory was not freed.",
        ],
    );
    // Kept: the next execution still writes it.
    let exec = create_stream();
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(d, 64), [7; 64]);
    // Once the model is destroyed, the memory is free to go.
    release(m, bound);
    free(d);
    destroy_stream(exec);
    assert_eq!(r.made(), 1);
}

#[test]
fn reading_memory_only_a_built_model_writes_before_an_execution_is_an_uninitialised_read() {
    let r = setup();
    let d = malloc(32);
    let (m, bound) = built_fill(d, 32, 5);
    let got = read_back(d, 32);
    assert_report(
        &r,
        1,
        got,
        NOT_COMPLETE,
        Kind::UninitialisedRead,
        "aclrtMemcpy",
        &[
            &format!(
                "which only model {:#x} initialises: its recorded aclrtMemsetAsync",
                m as usize
            ),
            "or initialise the memory before the build)",
        ],
    );
    // After an execution is queued (and done), the read is fine.
    let exec = create_stream();
    ok(execute(m, exec));
    ok(sync(exec));
    ok(read_back(d, 32));
    release(m, bound);
    free(d);
    destroy_stream(exec);
    assert_eq!(r.made(), 1);
}

#[test]
fn one_built_model_executed_on_two_streams_without_ordering_is_a_stream_race() {
    let r = setup();
    let d = malloc(16);
    // SAFETY: 16 device bytes.
    ok(unsafe { aclrtMemset(d.cast(), 16, 0, 16) });
    let (m, bound) = built_fill(d, 16, 1);
    let (s1, s2) = (create_stream(), create_stream());
    let hold = block_stream(s1);
    ok(execute(m, s1));
    let got = execute(m, s2);
    assert_report(
        &r,
        1,
        got,
        NOT_COMPLETE,
        Kind::StreamRace,
        "aclmdlRIExecuteAsync",
        &["the task is still pending and nothing orders the two"],
    );
    drop(hold);
    ok(sync(s1));
    ok(sync(s2));
    release(m, bound);
    free(d);
    destroy_stream(s1);
    destroy_stream(s2);
    assert_eq!(r.made(), 1);
}

#[test]
fn a_correct_build_execution_and_release_make_no_report() {
    let r = setup();
    let d = malloc(16);
    let (m, bound) = built_fill(d, 16, 9);
    let exec = create_stream();
    ok(execute(m, exec));
    ok(sync(exec));
    assert_eq!(to_host(d, 16), [9; 16]);
    release(m, bound);
    free(d);
    destroy_stream(exec);
    assert_eq!(r.made(), 0, "{:#?}", check::reports().recent);
}

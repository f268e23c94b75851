//! Graph capture (`aclmdlRI*`) on the simulator: capture and replay, and
//! every rule of the runtime with its exact code.
//!
//! A GLOBAL capture blocks synchronous copies on every thread of its
//! context, so each test works in a context of its own.

#[path = "common/aclnn.rs"]
#[allow(dead_code)]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CAPTURE_DEPENDENCY,
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
    ACL_ERROR_RT_EVENT_CAPTURED, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_MODEL_CAPTURED,
    ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
    ACL_ERROR_RT_STREAM_CAPTURED, ACL_ERROR_RT_STREAM_NOT_CAPTURED, ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE, ACL_MODEL_RI_CAPTURE_STATUS_NONE, aclError, aclmdlRI,
    aclrtContext, aclrtEvent, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const STREAM_CAPTURED: i32 = rc(ACL_ERROR_RT_STREAM_CAPTURED);
const NOT_CAPTURED: i32 = rc(ACL_ERROR_RT_STREAM_NOT_CAPTURED);
const MODE_NOT_SUPPORT: i32 = rc(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT);
const EVENT_CAPTURED: i32 = rc(ACL_ERROR_RT_EVENT_CAPTURED);
const MODEL_CAPTURED: i32 = rc(ACL_ERROR_RT_MODEL_CAPTURED);
const WRONG_THREAD: i32 = rc(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD);
const FEATURE: i32 = rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const DEPENDENCY: i32 = rc(ACL_ERROR_RT_CAPTURE_DEPENDENCY);
const UNJOINED: i32 = rc(acl_sys::ACL_ERROR_RT_STREAM_UNJOINED);
const UNMATCHED: i32 = rc(acl_sys::ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED);
const IMPLICIT: i32 = rc(acl_sys::ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT);

/// A context of its own on device 0, current on this thread.
fn own_context() -> aclrtContext {
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
    ctx
}

fn set_context(ctx: aclrtContext) {
    // SAFETY: a live context of the test's.
    ok(unsafe { aclrtSetCurrentContext(ctx) });
}

fn destroy_context(ctx: aclrtContext) {
    // SAFETY: a live context of the test's.
    ok(unsafe { aclrtDestroyContext(ctx) });
}

/// Runs `f` on a new thread with `ctx` current; its code, and its message
/// when it failed.
fn on_thread_in(ctx: usize, f: impl FnOnce() -> aclError + Send + 'static) -> (aclError, String) {
    on_new_thread(move || {
        set_context(ctx as aclrtContext);
        let r = f();
        (
            r,
            if r == 0 {
                String::new()
            } else {
                recent_error()
            },
        )
    })
}

#[track_caller]
fn assert_failed(got: (aclError, String), want: aclError, function: &str) {
    assert_eq!(
        got.0, want,
        "{function} returned {}, expected {want}",
        got.0
    );
    assert!(got.1.starts_with(function), "{}", got.1);
}

fn begin(s: aclrtStream, mode: u32) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRICaptureBegin(s, mode) }
}

fn end(s: aclrtStream) -> Result<aclmdlRI, aclError> {
    let mut m = 1usize as aclmdlRI;
    // SAFETY: valid out-pointer; the handle is validated.
    match unsafe { aclmdlRICaptureEnd(s, &mut m) } {
        0 => Ok(m),
        r => {
            assert!(m.is_null(), "a failed end gives a null model");
            Err(r)
        }
    }
}

fn info(s: aclrtStream) -> (u32, aclmdlRI) {
    let (mut st, mut m) = (99, 1usize as aclmdlRI);
    // SAFETY: valid out-pointers; the handle is validated.
    ok(unsafe { aclmdlRICaptureGetInfo(s, &mut st, &mut m) });
    (st, m)
}

fn execute(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn destroy(m: aclmdlRI) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRIDestroy(m) }
}

fn exchange(mode: u32) -> u32 {
    let mut m = mode;
    // SAFETY: valid in/out pointer.
    ok(unsafe { aclmdlRICaptureThreadExchangeMode(&mut m) });
    m
}

fn ex_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC) });
    e
}

fn memset_sync(p: *mut u8, n: usize, v: i32) -> aclError {
    // SAFETY: the range is validated.
    unsafe { aclrtMemset(p.cast(), n, v, n) }
}

fn sync_event(e: aclrtEvent) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclrtSynchronizeEvent(e) }
}

fn wait(s: aclrtStream, e: aclrtEvent) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclrtStreamWaitEvent(s, e) }
}

#[test]
fn captured_work_runs_at_each_execution_on_any_stream() {
    let ctx = own_context();
    let (s, other) = (create_stream(), create_stream());
    let (a, b) = (malloc(64), malloc(64));
    ok(memset_async(a, 64, 1, s));
    ok(memset_async(b, 64, 0, s));
    ok(sync(s));
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    let (st, m) = info(s);
    assert_eq!(st, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    assert!(!m.is_null());
    ok(memset_async(a, 32, 7, s));
    ok(memcpy_async(b, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    let model = end(s).unwrap();
    assert_eq!(model, m, "GetInfo names the model End returns");
    assert_eq!(info(s), (ACL_MODEL_RI_CAPTURE_STATUS_NONE, null_mut()));
    // Captured, not run.
    ok(sync(s));
    assert_eq!(to_host(b, 64), vec![0; 64]);
    for round in 0..3 {
        ok(memset_async(a, 64, round, other));
        ok(execute(model, other));
        ok(sync(other));
        let mut want = vec![7u8; 32];
        want.extend(vec![round as u8; 32]);
        assert_eq!(to_host(b, 64), want);
    }
    // The capturing stream and the default stream (null) can run it too.
    ok(execute(model, s));
    ok(sync(s));
    ok(execute(model, null_mut()));
    ok(sync(null_mut()));
    ok(destroy(model));
    assert_fails(
        destroy(model),
        rc(acl_sys::ACL_ERROR_RT_INVALID_HANDLE),
        "aclmdlRIDestroy",
    );
    free(a);
    free(b);
    destroy_stream(s);
    destroy_stream(other);
    destroy_context(ctx);
}

#[test]
fn begin_and_end_refuse_what_the_runtime_refuses() {
    let ctx = own_context();
    let s = create_stream();
    assert_fails(
        begin(null_mut(), 0),
        ACL_ERROR_INVALID_PARAM,
        "aclmdlRICaptureBegin",
    );
    let mut default = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut default) });
    assert_fails(begin(default, 0), FEATURE, "aclmdlRICaptureBegin");
    assert_fails(begin(s, 3), PARAM_INVALID, "aclmdlRICaptureBegin");
    assert_fails(end(s).unwrap_err(), NOT_CAPTURED, "aclmdlRICaptureEnd");
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    assert_fails(
        begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
        STREAM_CAPTURED,
        "aclmdlRICaptureBegin",
    );
    // SAFETY: a null out-pointer, refused.
    let rc_null = unsafe { aclmdlRICaptureEnd(s, null_mut()) };
    assert_fails(rc_null, PARAM_INVALID, "aclmdlRICaptureEnd");
    // An empty capture ends with an empty model.
    let m = end(s).unwrap();
    ok(execute(m, s));
    ok(sync(s));
    ok(destroy(m));
    // GetInfo: both outputs null → 100000; a stream not capturing: NONE.
    // SAFETY: null outputs, refused.
    let r = unsafe { aclmdlRICaptureGetInfo(s, null_mut(), null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureGetInfo");
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn another_thread_ends_only_a_relaxed_capture() {
    let ctx = own_context();
    let s = create_stream();
    let (ctx_addr, s_addr) = (ctx as usize, s as usize);
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    let r = on_thread_in(ctx_addr, move || {
        end(s_addr as aclrtStream).map_or_else(|e| e, |_| 0)
    });
    assert_failed(r, WRONG_THREAD, "aclmdlRICaptureEnd");
    // The failed end ended the capture (the runtime's ClearCaptureModel).
    assert_eq!(info(s).0, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ok(sync(s));
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    let m = on_new_thread(move || {
        set_context(ctx_addr as aclrtContext);
        end(s_addr as aclrtStream).map(|m| m as usize)
    })
    .unwrap();
    ok(destroy(m as aclmdlRI));
    destroy_stream(s);
    destroy_context(ctx);
}

#[test]
fn a_capturing_stream_cannot_be_synchronised_queried_or_destroyed() {
    let ctx = own_context();
    let (s, other) = (create_stream(), create_stream());
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    assert_fails(sync(s), STREAM_CAPTURED, "aclrtSynchronizeStream");
    let mut status = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtStreamQuery(s, &mut status) };
    assert_fails(r, STREAM_CAPTURED, "aclrtStreamQuery");
    // SAFETY: the handle is validated.
    assert_fails(
        unsafe { aclrtDestroyStream(s) },
        STREAM_CAPTURED,
        "aclrtDestroyStream",
    );
    assert_fails(
        aclrtSynchronizeDevice(),
        STREAM_CAPTURED,
        "aclrtSynchronizeDevice",
    );
    // Other streams are not affected.
    ok(sync(other));
    // Executing on a capturing stream, or a model still capturing.
    let (_, in_capture) = info(s);
    assert_fails(
        execute(in_capture, other),
        MODEL_CAPTURED,
        "aclmdlRIExecuteAsync",
    );
    assert_fails(destroy(in_capture), MODEL_CAPTURED, "aclmdlRIDestroy");
    ok(begin(other, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    let m2 = end(other).unwrap();
    assert_fails(execute(m2, s), STREAM_CAPTURED, "aclmdlRIExecuteAsync");
    // SAFETY: the handle is validated.
    assert_fails(
        unsafe { aclmdlRIExecute(m2, -1) },
        PARAM_INVALID,
        "aclmdlRIExecute",
    );
    let m = end(s).unwrap();
    assert_eq!(m, in_capture);
    ok(aclrtSynchronizeDevice());
    ok(destroy(m));
    ok(destroy(m2));
    destroy_stream(s);
    destroy_stream(other);
    destroy_context(ctx);
}

#[test]
fn events_in_a_capture() {
    let ctx = own_context();
    let (s, other) = (create_stream(), create_stream());
    let p = malloc(16);
    let (e, outside, plain) = (ex_event(), ex_event(), create_event());
    record(outside, other);
    ok(sync(other));
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    // Only events of aclrtCreateEventExWithFlag take part in a capture.
    // SAFETY: the handles are validated.
    let r = unsafe { aclrtRecordEvent(plain, s) };
    assert_fails(r, FEATURE, "aclrtRecordEvent");
    ok(memset_async(p, 16, 3, s));
    record(e, s);
    assert_fails(sync_event(e), EVENT_CAPTURED, "aclrtSynchronizeEvent");
    let mut st = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtQueryEventStatus(e, &mut st) };
    assert_fails(r, EVENT_CAPTURED, "aclrtQueryEventStatus");
    // Waiting inside on the capture's own event is fine; on an event
    // recorded outside it is a dependency the capture cannot have.
    ok(wait(s, e));
    assert_fails(wait(s, outside), DEPENDENCY, "aclrtStreamWaitEvent");
    // Work that cannot be captured.
    assert_fails(host_fn(s, || {}), FEATURE, "aclrtLaunchHostFunc");
    let host = [0u8; 16];
    assert_fails(
        memcpy_async(p, host.as_ptr(), 16, ACL_MEMCPY_HOST_TO_DEVICE, s),
        PARAM_INVALID,
        "aclrtMemcpyAsync",
    );
    let m = end(s).unwrap();
    // The event is no longer part of a capture; it was never recorded.
    ok(sync_event(e));
    ok(execute(m, other));
    // Each execution records the event on the executing stream.
    ok(sync_event(e));
    assert_eq!(to_host(p, 16), vec![3; 16]);
    ok(destroy(m));
    for ev in [e, outside, plain] {
        destroy_event(ev);
    }
    free(p);
    destroy_stream(s);
    destroy_stream(other);
    destroy_context(ctx);
}

#[test]
fn another_stream_joins_a_capture_through_an_event_and_must_rejoin() {
    let ctx = own_context();
    let (s, side, other) = (create_stream(), create_stream(), create_stream());
    let (p, q) = (malloc(16), malloc(16));
    let (e1, e2) = (ex_event(), ex_event());
    // Joined and not rejoined: the end fails and ends the capture everywhere.
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ok(memset_async(p, 16, 1, s));
    record(e1, s);
    let mut default = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut default) });
    assert_fails(wait(default, e1), IMPLICIT, "aclrtStreamWaitEvent");
    ok(wait(side, e1));
    assert_eq!(info(side).0, ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
    assert_eq!(info(side).1, info(s).1, "the same model");
    ok(memset_async(q, 16, 2, side));
    assert_fails(sync(side), STREAM_CAPTURED, "aclrtSynchronizeStream");
    assert_fails(end(side).unwrap_err(), UNMATCHED, "aclmdlRICaptureEnd");
    assert_fails(end(s).unwrap_err(), UNJOINED, "aclmdlRICaptureEnd");
    assert_eq!(info(s).0, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    assert_eq!(info(side).0, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ok(sync(side));
    // Joined and rejoined: one model runs the work of both streams.
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ok(memset_async(p, 16, 1, s));
    record(e1, s);
    ok(wait(side, e1));
    ok(memset_async(q, 16, 2, side));
    record(e2, side);
    ok(wait(s, e2));
    ok(memcpy_async(p, q, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    let m = end(s).unwrap();
    assert_eq!(info(side).0, ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    ok(memset_async(q, 16, 0, side));
    ok(sync(side));
    ok(execute(m, other));
    ok(sync(other));
    assert_eq!(to_host(p, 16), [[2u8; 8], [1u8; 8]].concat());
    assert_eq!(to_host(q, 16), vec![2u8; 16]);
    ok(destroy(m));
    for e in [e1, e2] {
        destroy_event(e);
    }
    free(p);
    free(q);
    for st in [s, side, other] {
        destroy_stream(st);
    }
    destroy_context(ctx);
}

/// A context of its own, a stream and 16 bytes of device memory, for the
/// capture-mode tests.
struct ModeFixture {
    ctx: aclrtContext,
    s: aclrtStream,
    p: *mut u8,
}

impl ModeFixture {
    fn new() -> ModeFixture {
        let ctx = own_context();
        ModeFixture {
            ctx,
            s: create_stream(),
            p: malloc(16),
        }
    }

    /// A synchronous fill of the memory on a new thread in the context.
    fn fill_on_other_thread(&self) -> (aclError, String) {
        let p = self.p as usize;
        on_thread_in(self.ctx as usize, move || memset_sync(p as *mut u8, 16, 1))
    }

    fn close(self) {
        free(self.p);
        destroy_stream(self.s);
        destroy_context(self.ctx);
    }
}

#[test]
fn global_capture_blocks_synchronous_copies_on_every_thread_of_the_context() {
    let f = ModeFixture::new();
    let (ctx, s, p) = (f.ctx, f.s, f.p);
    let (ctx_addr, p_addr) = (ctx as usize, p as usize);
    let from_other_thread = || f.fill_on_other_thread();
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    assert_fails(memset_sync(p, 16, 1), MODE_NOT_SUPPORT, "aclrtMemset");
    assert_failed(from_other_thread(), MODE_NOT_SUPPORT, "aclrtMemset");
    // A thread that exchanged its mode to RELAXED may.
    let relaxed = on_new_thread(move || {
        set_context(ctx_addr as aclrtContext);
        assert_eq!(
            exchange(ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
            ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
        );
        memset_sync(p_addr as *mut u8, 16, 1)
    });
    ok(relaxed);
    // The capturing thread with THREAD_LOCAL is still blocked by its own
    // capture; with RELAXED it may.
    assert_eq!(
        exchange(ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL),
        ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
    );
    assert_fails(memset_sync(p, 16, 1), MODE_NOT_SUPPORT, "aclrtMemset");
    exchange(ACL_MODEL_RI_CAPTURE_MODE_RELAXED);
    ok(memset_sync(p, 16, 1));
    exchange(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
    // Another context is not affected.
    let other_ctx = on_new_thread(|| {
        let c = own_context();
        let q = malloc(16);
        let r = memset_sync(q, 16, 1);
        free(q);
        destroy_context(c);
        r
    });
    ok(other_ctx);
    // A pageable async copy on another stream is a synchronous copy: 107041.
    let other = create_stream();
    let mut host = [0u8; 16];
    let r = memcpy_async(
        host.as_mut_ptr(),
        p,
        16,
        acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        other,
    );
    assert_fails(
        r,
        rc(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC),
        "aclrtMemcpyAsync",
    );
    let m = end(s).unwrap();
    ok(memset_sync(p, 16, 1));
    ok(from_other_thread().0);
    ok(destroy(m));
    destroy_stream(other);
    f.close();
}

#[test]
fn thread_local_and_relaxed_captures() {
    let f = ModeFixture::new();
    let (s, p) = (f.s, f.p);
    let from_other_thread = || f.fill_on_other_thread();
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL));
    assert_fails(memset_sync(p, 16, 1), MODE_NOT_SUPPORT, "aclrtMemset");
    ok(from_other_thread().0);
    let m = end(s).unwrap();
    ok(destroy(m));
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ok(memset_sync(p, 16, 1));
    ok(from_other_thread().0);
    let m = end(s).unwrap();
    ok(destroy(m));
    f.close();
}

#[test]
fn exchange_mode_checks_its_argument() {
    // SAFETY: null, refused.
    let r = unsafe { aclmdlRICaptureThreadExchangeMode(null_mut()) };
    assert_fails(r, PARAM_INVALID, "aclmdlRICaptureThreadExchangeMode");
    let mut bad = 7;
    // SAFETY: valid in/out pointer.
    let r = unsafe { aclmdlRICaptureThreadExchangeMode(&mut bad) };
    assert_fails(r, PARAM_INVALID, "aclmdlRICaptureThreadExchangeMode");
    on_new_thread(|| {
        assert_eq!(
            exchange(ACL_MODEL_RI_CAPTURE_MODE_RELAXED),
            ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
        );
        assert_eq!(
            exchange(ACL_MODEL_RI_CAPTURE_MODE_GLOBAL),
            ACL_MODEL_RI_CAPTURE_MODE_RELAXED
        );
    });
}

#[test]
fn destroying_the_context_abandons_a_capture() {
    let ctx = own_context();
    let s = create_stream();
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    let (_, m) = info(s);
    destroy_context(ctx);
    // The model can no longer run, but can be destroyed.
    ok(destroy(m));
    // The GLOBAL capture no longer blocks anything.
    let c = own_context();
    let p = malloc(16);
    ok(memset_sync(p, 16, 0));
    free(p);
    destroy_context(c);
}

// ---- task groups and task update ----

const GROUP_STATUS: i32 = rc(acl_sys::ACL_ERROR_STREAM_TASK_GROUP_STATUS);
const GROUP_INTR: i32 = rc(acl_sys::ACL_ERROR_STREAM_TASK_GROUP_INTR);
const TASK_NOT_SUPPORT: i32 = rc(acl_sys::ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
const INTERNAL: i32 = rc(acl_sys::ACL_ERROR_RT_INTERNAL_ERROR);
const INVALIDATED: i32 = rc(acl_sys::ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
const UPDATE_FAILED: i32 = rc(acl_sys::ACL_ERROR_RT_MODEL_UPDATE_FAILED);
const INVALID_HANDLE: i32 = rc(acl_sys::ACL_ERROR_RT_INVALID_HANDLE);

fn grp_begin(s: aclrtStream) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRICaptureTaskGrpBegin(s) }
}

fn grp_end(s: aclrtStream) -> Result<acl_sys::aclrtTaskGrp, aclError> {
    let mut g = 1usize as acl_sys::aclrtTaskGrp;
    // SAFETY: valid out-pointer; the handle is validated.
    match unsafe { aclmdlRICaptureTaskGrpEnd(s, &mut g) } {
        0 => Ok(g),
        r => {
            // Nulled once the arguments are checked.
            assert!(
                s.is_null() || g.is_null(),
                "a failed end gives a null group"
            );
            Err(r)
        }
    }
}

fn upd_begin(s: aclrtStream, g: acl_sys::aclrtTaskGrp) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRICaptureTaskUpdateBegin(s, g) }
}

fn upd_end(s: aclrtStream) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRICaptureTaskUpdateEnd(s) }
}

fn model_update(m: aclmdlRI) -> aclError {
    // SAFETY: the handle is validated.
    unsafe { aclmdlRIUpdate(m) }
}

use aclnn_common::add_scaled;

fn floats(p: *mut u8, n: usize) -> Vec<f32> {
    to_host(p, n * 4)
        .chunks(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A capture of `c = a + 1·b; d = c + 2·b` in one group, after a fill of
/// `d` outside it: the model and the group.
fn captured_pair(s: aclrtStream, [a, b, c, d]: [*mut u8; 4]) -> (aclmdlRI, acl_sys::aclrtTaskGrp) {
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
    ok(memset_async(d, 16, 0, s));
    ok(grp_begin(s));
    assert_eq!(add_scaled(a, b, 1.0, c, 4, s), 0);
    assert_eq!(add_scaled(c, b, 2.0, d, 4, s), 0);
    let g = grp_end(s).unwrap();
    assert!(!g.is_null());
    (end(s).unwrap(), g)
}

/// Runs `f` in a context of its own with `N` new streams and four
/// 16-byte buffers (`a = [1, 2, 3, 4]`, `b = [10, 20, 30, 40]`, `c`, `d`),
/// then releases them.
fn with_streams<const N: usize>(f: impl FnOnce([aclrtStream; N], [*mut u8; 4])) {
    let ctx = own_context();
    let streams: [aclrtStream; N] = std::array::from_fn(|_| create_stream());
    let bufs = [
        aclnn_common::upload(&[1.0f32, 2.0, 3.0, 4.0]),
        aclnn_common::upload(&[10.0f32, 20.0, 30.0, 40.0]),
        malloc(16),
        malloc(16),
    ];
    f(streams, bufs);
    for p in bufs {
        free(p);
    }
    for st in streams {
        destroy_stream(st);
    }
    destroy_context(ctx);
}

#[test]
fn an_update_replaces_the_group_kernels_in_order_for_later_launches() {
    with_streams(|[s, u], bufs @ [a, b, c, d]| {
        let (model, g) = captured_pair(s, bufs);
        ok(execute(model, s));
        ok(sync(s));
        // c = a + b, d = c + 2b.
        assert_eq!(floats(d, 4), [31.0, 62.0, 93.0, 124.0]);
        // New scalars and another input: c = b + 10a, d = c + 0.5a.
        ok(upd_begin(u, g));
        assert_eq!(add_scaled(b, a, 10.0, c, 4, u), 0);
        assert_eq!(add_scaled(c, a, 0.5, d, 4, u), 0);
        ok(upd_end(u));
        ok(sync(u));
        // The update ran nothing: the buffers are as the launch left them.
        assert_eq!(floats(c, 4), [11.0, 22.0, 33.0, 44.0]);
        // aclmdlRIUpdate is not needed and does nothing for a ready model.
        ok(model_update(model));
        for _ in 0..2 {
            ok(execute(model, s));
            ok(sync(s));
            assert_eq!(floats(d, 4), [20.5, 41.0, 61.5, 82.0]);
        }
        // A group can be updated again, from any stream.
        ok(upd_begin(s, g));
        assert_eq!(add_scaled(a, b, 0.0, c, 4, s), 0);
        assert_eq!(add_scaled(c, c, 1.0, d, 4, s), 0);
        ok(upd_end(s));
        ok(execute(model, s));
        ok(sync(s));
        assert_eq!(floats(d, 4), [2.0, 4.0, 6.0, 8.0]);
        ok(destroy(model));
    });
}

#[test]
fn task_group_calls_refuse_what_the_runtime_refuses() {
    with_streams(|[s, u, v], [a, b, c, d]| {
        let calls: [(&dyn Fn() -> aclError, &str); 5] = [
            (&|| grp_begin(null_mut()), "aclmdlRICaptureTaskGrpBegin"),
            (
                &|| grp_end(null_mut()).unwrap_err(),
                "aclmdlRICaptureTaskGrpEnd",
            ),
            (
                &|| upd_begin(null_mut(), null_mut()),
                "aclmdlRICaptureTaskUpdateBegin",
            ),
            (
                &|| upd_begin(u, null_mut()),
                "aclmdlRICaptureTaskUpdateBegin",
            ),
            (&|| upd_end(null_mut()), "aclmdlRICaptureTaskUpdateEnd"),
        ];
        for (call, f) in calls {
            assert_fails(call(), ACL_ERROR_INVALID_PARAM, f);
        }
        // SAFETY: the stream is validated; a null out-pointer is refused.
        let r = unsafe { aclmdlRICaptureTaskGrpEnd(s, null_mut()) };
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureTaskGrpEnd");
        // Groups live in captures.
        assert_fails(grp_begin(s), NOT_CAPTURED, "aclmdlRICaptureTaskGrpBegin");
        assert_grp_end_fails(s, NOT_CAPTURED);
        ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        assert_grp_end_fails(s, GROUP_STATUS);
        ok(grp_begin(s));
        // No nesting.
        assert_fails(grp_begin(s), GROUP_STATUS, "aclmdlRICaptureTaskGrpBegin");
        assert_eq!(add_scaled(a, b, 1.0, c, 4, s), 0);
        let g = grp_end(s).unwrap();
        // A model still capturing cannot be updated as a whole.
        let (_, m) = info(s);
        assert_fails(model_update(m), UPDATE_FAILED, "aclmdlRIUpdate");
        // The update stream must not capture.
        assert_fails(
            upd_begin(s, g),
            STREAM_CAPTURED,
            "aclmdlRICaptureTaskUpdateBegin",
        );
        let model = end(s).unwrap();
        assert_fails(upd_end(u), GROUP_STATUS, "aclmdlRICaptureTaskUpdateEnd");
        ok(upd_begin(u, g));
        // One update at a time, per stream and per group.
        assert_fails(
            upd_begin(u, g),
            GROUP_STATUS,
            "aclmdlRICaptureTaskUpdateBegin",
        );
        assert_fails(
            upd_begin(v, g),
            GROUP_STATUS,
            "aclmdlRICaptureTaskUpdateBegin",
        );
        // Only kernels: a fill on the update stream is refused, the update
        // goes on.
        assert_fails(
            memset_async(d, 16, 0, u),
            TASK_NOT_SUPPORT,
            "aclrtMemsetAsync",
        );
        assert_eq!(add_scaled(a, b, 3.0, c, 4, u), 0);
        // One kernel more than the group holds: the runtime's internal
        // error, which aclnn reports as its runtime error.
        assert_eq!(
            add_scaled(a, b, 4.0, c, 4, u),
            acl_sys::aclnn::ACLNN_ERR_RUNTIME_ERROR
        );
        discard_recent_error();
        ok(upd_end(u));
        ok(execute(model, u));
        ok(sync(u));
        assert_eq!(floats(c, 4), [31.0, 62.0, 93.0, 124.0], "a + 3b");
        // Fewer kernels than the group holds (none): 507000, and the update
        // is ended all the same.
        ok(upd_begin(u, g));
        assert_fails(upd_end(u), INTERNAL, "aclmdlRICaptureTaskUpdateEnd");
        ok(upd_begin(u, g));
        assert_eq!(add_scaled(a, b, 1.0, c, 4, u), 0);
        ok(upd_end(u));
        assert_fails(model_update(null_mut()), PARAM_INVALID, "aclmdlRIUpdate");
        // A group dies with its model.
        ok(destroy(model));
        assert_fails(
            upd_begin(u, g),
            INVALID_HANDLE,
            "aclmdlRICaptureTaskUpdateBegin",
        );
    });
}

#[track_caller]
fn assert_grp_end_fails(s: aclrtStream, want: aclError) {
    assert_fails(grp_end(s).unwrap_err(), want, "aclmdlRICaptureTaskGrpEnd");
}

#[test]
fn an_update_with_too_few_kernels_keeps_the_ones_issued() {
    with_streams(|[s, u], bufs @ [a, b, c, d]| {
        let (model, g) = captured_pair(s, bufs);
        ok(upd_begin(u, g));
        assert_eq!(add_scaled(b, a, 10.0, c, 4, u), 0);
        assert_fails(upd_end(u), INTERNAL, "aclmdlRICaptureTaskUpdateEnd");
        ok(execute(model, s));
        ok(sync(s));
        // First task replaced (c = b + 10a), second as captured (d = c + 2b).
        assert_eq!(floats(d, 4), [40.0, 80.0, 120.0, 160.0]);
        ok(destroy(model));
    });
}

#[test]
fn a_copy_in_a_group_invalidates_the_capture() {
    with_streams(|[s], [p, ..]| {
        ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        ok(grp_begin(s));
        assert_fails(
            memset_async(p, 16, 0, s),
            TASK_NOT_SUPPORT,
            "aclrtMemsetAsync",
        );
        // The group's end reports the failure and gives no group; the
        // capture is invalidated.
        assert_grp_end_fails(s, TASK_NOT_SUPPORT);
        assert_fails(end(s).unwrap_err(), INVALIDATED, "aclmdlRICaptureEnd");
        assert_eq!(info(s), (ACL_MODEL_RI_CAPTURE_STATUS_NONE, null_mut()));
    });
}

#[test]
fn ending_a_capture_with_a_group_open_fails_and_leaves_the_stream_in_the_group() {
    with_streams(|[s], _| {
        ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        ok(grp_begin(s));
        assert_fails(end(s).unwrap_err(), GROUP_STATUS, "aclmdlRICaptureEnd");
        // As on the runtime, only aclmdlRICaptureTaskGrpEnd resets a
        // stream's group state: in a new capture the stream still counts as
        // in a group.
        assert_grp_end_fails(s, NOT_CAPTURED);
        ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        assert_fails(grp_begin(s), GROUP_STATUS, "aclmdlRICaptureTaskGrpBegin");
        ok(destroy(end(s).unwrap()));
    });
}

#[test]
fn a_task_on_another_stream_of_the_capture_interrupts_an_open_group() {
    with_streams(|[s, other], [p, ..]| {
        let e = ex_event();
        ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
        record(e, s);
        ok(wait(other, e));
        ok(grp_begin(s));
        assert_fails(
            memset_async(p, 16, 0, other),
            GROUP_INTR,
            "aclrtMemsetAsync",
        );
        assert_grp_end_fails(s, GROUP_INTR);
        assert_fails(end(s).unwrap_err(), INVALIDATED, "aclmdlRICaptureEnd");
        destroy_event(e);
    });
}

/// An `ACL_EVENT_EXTERNAL` event made in the current context.
fn external_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateEventWithFlag(&mut e, acl_sys::ACL_EVENT_EXTERNAL) });
    e
}

#[test]
fn a_captured_wait_on_an_external_event_blocks_each_execution_until_the_host_records_it() {
    // The task-update sample (hicann/runtime example/2_advanced_features/
    // model_ri/1_model_update): the model waits for an external event and
    // resets it; the host records it once per execution.
    let ctx = own_context();
    let (s, host) = (create_stream(), create_stream());
    let e = external_event();
    let out = malloc(8);
    ok(begin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
    ok(wait(s, e));
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtResetEvent(e, s) });
    ok(memset_async(out, 8, 7, s));
    let model = end(s).unwrap();
    for round in 0..2 {
        ok(memset_sync(out, 8, 0));
        ok(execute(model, s));
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(
            !is_complete(s),
            "execution {round} ran before the event was recorded"
        );
        // SAFETY: the handles are validated.
        ok(unsafe { aclrtRecordEvent(e, host) });
        ok(sync(host));
        ok(sync(s));
        assert_eq!(to_host(out, 8), vec![7; 8], "execution {round}");
    }
    ok(destroy(model));
    // SAFETY: the handle is validated.
    ok(unsafe { aclrtDestroyEvent(e) });
    free(out);
    destroy_stream(s);
    destroy_stream(host);
    destroy_context(ctx);
}

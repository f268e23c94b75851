//! Events on the simulator: flags, record/query/synchronise, timing,
//! re-recording, reset, and every error code.
//!
//! Tests only set devices 0 and 1 and never reset them.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT, ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_DEVICE_USE_ONLY,
    ACL_EVENT_EXTERNAL, ACL_EVENT_IPC, ACL_EVENT_RECORDED_STATUS_COMPLETE,
    ACL_EVENT_RECORDED_STATUS_NOT_READY, ACL_EVENT_STATUS_COMPLETE, ACL_EVENT_STATUS_NOT_READY,
    ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, aclrtEvent,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;
use std::time::Duration;

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);
const FEATURE: i32 = rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
const TIMESTAMP_INVALID: i32 = rc(ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
const INTERNAL: i32 = rc(ACL_ERROR_RT_INTERNAL_ERROR);

fn with_flag(flag: u32) -> Result<aclrtEvent, i32> {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtCreateEventWithFlag(&mut e, flag) } {
        0 => Ok(e),
        r => Err(r),
    }
}

fn ex_with_flag(flag: u32) -> Result<aclrtEvent, i32> {
    let mut e = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtCreateEventExWithFlag(&mut e, flag) } {
        0 => Ok(e),
        r => Err(r),
    }
}

fn status(e: aclrtEvent) -> u32 {
    let mut s = 99;
    // SAFETY: valid out-pointer; handle validated.
    ok(unsafe { aclrtQueryEventStatus(e, &mut s) });
    s
}

fn old_status(e: aclrtEvent) -> Result<u32, i32> {
    let mut s = 99;
    // SAFETY: valid out-pointer; handle validated.
    match unsafe { aclrtQueryEvent(e, &mut s) } {
        0 => Ok(s),
        r => Err(r),
    }
}

fn elapsed(a: aclrtEvent, b: aclrtEvent) -> Result<f32, i32> {
    let mut ms = f32::NAN;
    // SAFETY: valid out-pointer; handles validated.
    match unsafe { aclrtEventElapsedTime(&mut ms, a, b) } {
        0 => Ok(ms),
        r => Err(r),
    }
}

fn timestamp(e: aclrtEvent) -> Result<u64, i32> {
    let mut t = 0;
    // SAFETY: valid out-pointer; handle validated.
    match unsafe { aclrtEventGetTimestamp(e, &mut t) } {
        0 => Ok(t),
        r => Err(r),
    }
}

#[test]
fn create_event_null_out_or_no_context_fails() {
    use_device(0);
    // SAFETY: null is allowed and rejected.
    unsafe {
        assert_fails(
            aclrtCreateEvent(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateEvent",
        );
        assert_fails(
            aclrtCreateEventWithFlag(null_mut(), 1),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateEventWithFlag",
        );
        assert_fails(
            aclrtCreateEventExWithFlag(null_mut(), 1),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateEventExWithFlag",
        );
    }
    on_new_thread(|| {
        let mut e = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCreateEvent(&mut e) };
        assert_fails(r, rc(ACL_ERROR_RT_CONTEXT_NULL), "aclrtCreateEvent");
        assert_fails(
            with_flag(1).unwrap_err(),
            rc(ACL_ERROR_RT_CONTEXT_NULL),
            "aclrtCreateEventWithFlag",
        );
    });
}

#[test]
fn create_event_with_flag_accepts_the_documented_combinations() {
    use_device(0);
    for flag in [
        ACL_EVENT_SYNC,
        ACL_EVENT_CAPTURE_STREAM_PROGRESS,
        ACL_EVENT_TIME_LINE,
        ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE,
        ACL_EVENT_SYNC | ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_TIME_LINE,
        ACL_EVENT_DEVICE_USE_ONLY,
        ACL_EVENT_EXTERNAL,
    ] {
        destroy_event(with_flag(flag).unwrap_or_else(|r| panic!("flag {flag:#x}: {r}")));
    }
}

#[test]
fn create_event_with_flag_zero_unknown_or_combined_solo_flags_is_param_invalid() {
    use_device(0);
    for flag in [
        0,
        0x80,
        ACL_EVENT_IPC,
        ACL_EVENT_SYNC | 0x100,
        ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_SYNC,
        ACL_EVENT_EXTERNAL | ACL_EVENT_TIME_LINE,
    ] {
        let r = with_flag(flag).unwrap_err();
        assert_fails(r, PARAM_INVALID, "aclrtCreateEventWithFlag");
    }
}

#[test]
fn create_event_ex_with_flag_checks_its_flags() {
    use_device(0);
    destroy_event(ex_with_flag(ACL_EVENT_SYNC).unwrap());
    destroy_event(ex_with_flag(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE).unwrap());
    for flag in [
        0,
        ACL_EVENT_DEVICE_USE_ONLY,
        ACL_EVENT_EXTERNAL,
        ACL_EVENT_IPC | ACL_EVENT_SYNC,
        0x80,
    ] {
        let r = ex_with_flag(flag).unwrap_err();
        assert_fails(r, PARAM_INVALID, "aclrtCreateEventExWithFlag");
    }
    // ACL_EVENT_IPC alone makes an inter-process event (tests/ipc_event.rs).
    destroy_event(ex_with_flag(ACL_EVENT_IPC).unwrap());
}

#[test]
fn record_completes_when_the_stream_reaches_it() {
    use_device(0);
    let s = create_stream();
    let e = create_event();
    assert_eq!(
        status(e),
        ACL_EVENT_RECORDED_STATUS_NOT_READY,
        "never recorded"
    );
    assert_eq!(
        old_status(e),
        Ok(ACL_EVENT_STATUS_COMPLETE),
        "deprecated: nothing pending"
    );
    let release = block_stream(s);
    record(e, s);
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    assert_eq!(old_status(e), Ok(ACL_EVENT_STATUS_NOT_READY));
    assert_eq!(elapsed(e, e), Err(TIMESTAMP_INVALID));
    release.send(()).unwrap();
    // SAFETY: live event.
    ok(unsafe { aclrtSynchronizeEvent(e) });
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    assert_eq!(old_status(e), Ok(ACL_EVENT_STATUS_COMPLETE));
    destroy_event(e);
    destroy_stream(s);
}

#[test]
fn ex_events_are_complete_before_their_first_record_and_refuse_the_deprecated_query() {
    use_device(0);
    let e = ex_with_flag(ACL_EVENT_SYNC).unwrap();
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    let msg = assert_fails(old_status(e).unwrap_err(), FEATURE, "aclrtQueryEvent");
    assert_contains(&msg, "aclrtQueryEventStatus");
    destroy_event(e);
}

#[test]
fn synchronize_event_never_recorded_returns_at_once() {
    use_device(0);
    let e = create_event();
    // SAFETY: live event.
    unsafe {
        ok(aclrtSynchronizeEvent(e));
        ok(aclrtSynchronizeEventWithTimeout(e, 1));
    }
    destroy_event(e);
}

#[test]
fn synchronize_event_with_timeout_rejects_bad_timeouts_and_times_out() {
    use_device(0);
    let s = create_stream();
    let e = create_event();
    // SAFETY: handles validated; null allowed and rejected.
    unsafe {
        for bad in [0, -2] {
            assert_fails(
                aclrtSynchronizeEventWithTimeout(e, bad),
                PARAM_INVALID,
                "aclrtSynchronizeEventWithTimeout",
            );
        }
        // The ACL layer checks the timeout before the event.
        assert_fails(
            aclrtSynchronizeEventWithTimeout(null_mut(), -5),
            PARAM_INVALID,
            "aclrtSynchronizeEventWithTimeout",
        );
        assert_fails(
            aclrtSynchronizeEventWithTimeout(null_mut(), -1),
            ACL_ERROR_INVALID_PARAM,
            "aclrtSynchronizeEventWithTimeout",
        );
    }
    let release = block_stream(s);
    record(e, s);
    // SAFETY: live event.
    let r = unsafe { aclrtSynchronizeEventWithTimeout(e, 20) };
    assert_fails(
        r,
        rc(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT),
        "aclrtSynchronizeEventWithTimeout",
    );
    release.send(()).unwrap();
    // SAFETY: live event.
    ok(unsafe { aclrtSynchronizeEventWithTimeout(e, -1) });
    destroy_event(e);
    destroy_stream(s);
}

#[test]
fn elapsed_time_covers_work_between_the_records_and_may_be_negative() {
    use_device(0);
    let s = create_stream();
    let (a, b) = (create_event(), create_event());
    record(a, s);
    ok(host_fn(s, || std::thread::sleep(Duration::from_millis(30))));
    record(b, s);
    ok(sync(s));
    let ms = elapsed(a, b).unwrap();
    assert!(ms >= 30.0, "elapsed {ms} ms");
    assert!(ms < 5000.0, "elapsed {ms} ms");
    let back = elapsed(b, a).unwrap();
    assert!((back + ms).abs() < 0.01, "{back} vs {ms}");
    let (ta, tb) = (timestamp(a).unwrap(), timestamp(b).unwrap());
    assert!(tb >= ta + 30_000, "timestamps in µs: {ta} {tb}");
    destroy_event(a);
    destroy_event(b);
    destroy_stream(s);
}

#[test]
fn elapsed_time_of_unrecorded_pending_or_untimed_events_fails() {
    use_device(0);
    let s = create_stream();
    let (a, b) = (create_event(), create_event());
    let msg = assert_fails(
        elapsed(a, b).unwrap_err(),
        INTERNAL,
        "aclrtEventElapsedTime",
    );
    assert_contains(&msg, "never been recorded");
    assert_fails(
        timestamp(a).unwrap_err(),
        INTERNAL,
        "aclrtEventGetTimestamp",
    );
    record(a, s);
    ok(sync(s));
    assert_fails(
        elapsed(a, b).unwrap_err(),
        INTERNAL,
        "aclrtEventElapsedTime",
    );
    let release = block_stream(s);
    record(b, s);
    let msg = assert_fails(
        elapsed(a, b).unwrap_err(),
        TIMESTAMP_INVALID,
        "aclrtEventElapsedTime",
    );
    assert_contains(&msg, "not completed");
    assert_fails(
        timestamp(b).unwrap_err(),
        TIMESTAMP_INVALID,
        "aclrtEventGetTimestamp",
    );
    release.send(()).unwrap();
    ok(sync(s));
    elapsed(a, b).unwrap();
    let untimed = with_flag(ACL_EVENT_SYNC).unwrap();
    record(untimed, s);
    ok(sync(s));
    let msg = assert_fails(
        elapsed(a, untimed).unwrap_err(),
        TIMESTAMP_INVALID,
        "aclrtEventElapsedTime",
    );
    assert_contains(&msg, "ACL_EVENT_TIME_LINE");
    let mut ms = 0.0f32;
    // SAFETY: null pointers are allowed and rejected.
    unsafe {
        assert_fails(
            aclrtEventElapsedTime(null_mut(), a, b),
            ACL_ERROR_INVALID_PARAM,
            "aclrtEventElapsedTime",
        );
        assert_fails(
            aclrtEventElapsedTime(&mut ms, null_mut(), b),
            ACL_ERROR_INVALID_PARAM,
            "aclrtEventElapsedTime",
        );
        assert_fails(
            aclrtEventGetTimestamp(a, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtEventGetTimestamp",
        );
    }
    for e in [a, b, untimed] {
        destroy_event(e);
    }
    destroy_stream(s);
}

#[test]
fn a_re_recorded_event_reflects_its_latest_record() {
    use_device(0);
    let (a, b) = (create_stream(), create_stream());
    let e = create_event();
    record(e, a);
    ok(sync(a));
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    let first = timestamp(e).unwrap();
    let release = block_stream(b);
    record(e, b);
    assert_eq!(
        status(e),
        ACL_EVENT_RECORDED_STATUS_NOT_READY,
        "the new record is pending"
    );
    assert_fails(
        timestamp(e).unwrap_err(),
        TIMESTAMP_INVALID,
        "aclrtEventGetTimestamp",
    );
    release.send(()).unwrap();
    // SAFETY: live event.
    ok(unsafe { aclrtSynchronizeEvent(e) });
    assert!(timestamp(e).unwrap() >= first);
    destroy_event(e);
    destroy_stream(a);
    destroy_stream(b);
}

#[test]
fn reset_event_forgets_the_record_when_the_stream_reaches_it() {
    use_device(0);
    let s = create_stream();
    let e = with_flag(ACL_EVENT_SYNC).unwrap();
    record(e, s);
    ok(sync(s));
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    // SAFETY: live handles.
    ok(unsafe { aclrtResetEvent(e, s) });
    ok(sync(s));
    assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    destroy_event(e);
    destroy_stream(s);
}

#[test]
fn reset_event_of_untimed_ex_or_null_events_fails() {
    use_device(0);
    let s = create_stream();
    let no_sync = with_flag(ACL_EVENT_TIME_LINE).unwrap();
    let ex = ex_with_flag(ACL_EVENT_SYNC).unwrap();
    // SAFETY: handles validated; null allowed and rejected.
    unsafe {
        let msg = assert_fails(aclrtResetEvent(no_sync, s), FEATURE, "aclrtResetEvent");
        assert_contains(&msg, "ACL_EVENT_SYNC");
        assert_fails(aclrtResetEvent(ex, s), FEATURE, "aclrtResetEvent");
        assert_fails(
            aclrtResetEvent(null_mut(), s),
            ACL_ERROR_INVALID_PARAM,
            "aclrtResetEvent",
        );
    }
    destroy_event(no_sync);
    destroy_event(ex);
    destroy_stream(s);
}

#[test]
fn device_only_events_cannot_be_recorded_and_external_ones_cannot_be_synchronised() {
    use_device(0);
    let s = create_stream();
    let dev = with_flag(ACL_EVENT_DEVICE_USE_ONLY).unwrap();
    // SAFETY: live handles.
    let r = unsafe { aclrtRecordEvent(dev, s) };
    let msg = assert_fails(r, PARAM_INVALID, "aclrtRecordEvent");
    assert_contains(&msg, "ACL_EVENT_DEVICE_USE_ONLY");
    let ext = with_flag(ACL_EVENT_EXTERNAL).unwrap();
    let mut st = 0;
    // SAFETY: live handles.
    unsafe {
        assert_fails(aclrtSynchronizeEvent(ext), FEATURE, "aclrtSynchronizeEvent");
        assert_fails(
            aclrtQueryEventStatus(ext, &mut st),
            FEATURE,
            "aclrtQueryEventStatus",
        );
    }
    assert_fails(
        elapsed(ext, ext).unwrap_err(),
        FEATURE,
        "aclrtEventElapsedTime",
    );
    destroy_event(dev);
    destroy_event(ext);
    destroy_stream(s);
}

#[test]
fn destroyed_or_null_event_handles_fail_everywhere() {
    use_device(0);
    let s = create_stream();
    let e = create_event();
    destroy_event(e);
    let mut st = 0;
    // SAFETY: handles validated; null allowed and rejected.
    unsafe {
        let msg = assert_fails(aclrtRecordEvent(e, s), INVALID_HANDLE, "aclrtRecordEvent");
        assert_contains(&msg, "event");
        assert_fails(
            aclrtSynchronizeEvent(e),
            INVALID_HANDLE,
            "aclrtSynchronizeEvent",
        );
        assert_fails(
            aclrtQueryEventStatus(e, &mut st),
            INVALID_HANDLE,
            "aclrtQueryEventStatus",
        );
        assert_fails(aclrtDestroyEvent(e), INVALID_HANDLE, "aclrtDestroyEvent");
        assert_fails(aclrtResetEvent(e, s), INVALID_HANDLE, "aclrtResetEvent");
        assert_fails(
            aclrtRecordEvent(null_mut(), s),
            ACL_ERROR_INVALID_PARAM,
            "aclrtRecordEvent",
        );
        assert_fails(
            aclrtSynchronizeEvent(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtSynchronizeEvent",
        );
        assert_fails(
            aclrtQueryEventStatus(null_mut(), &mut st),
            ACL_ERROR_INVALID_PARAM,
            "aclrtQueryEventStatus",
        );
        assert_fails(
            aclrtQueryEventStatus(e, null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtQueryEventStatus",
        );
        assert_fails(
            aclrtQueryEvent(null_mut(), &mut st),
            ACL_ERROR_INVALID_PARAM,
            "aclrtQueryEvent",
        );
        assert_fails(
            aclrtDestroyEvent(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtDestroyEvent",
        );
    }
    destroy_stream(s);
}

#[test]
fn destroying_an_event_with_a_pending_record_is_allowed() {
    use_device(0);
    let s = create_stream();
    let e = create_event();
    let release = block_stream(s);
    record(e, s);
    destroy_event(e);
    release.send(()).unwrap();
    ok(sync(s));
    destroy_stream(s);
}

#[test]
fn record_on_a_stream_of_another_context_is_stream_context() {
    on_new_thread(|| {
        use_device(1);
        let s = create_stream();
        let e = create_event();
        let mut other = null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { aclrtCreateContext(&mut other, 1) });
        // SAFETY: live handles.
        let r = unsafe { aclrtRecordEvent(e, s) };
        assert_fails(r, rc(ACL_ERROR_RT_STREAM_CONTEXT), "aclrtRecordEvent");
        // The null stream is the new context's default stream.
        record(e, null_mut());
        ok(sync(null_mut()));
        assert_eq!(status(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(other) });
        use_device(1);
        destroy_event(e);
        destroy_stream(s);
    });
}

//! Streams on the simulator: creation and attributes, real asynchrony of
//! the worker, synchronisation (with timeouts), queries, destruction
//! (waiting and forced), cross-stream waits, and every error code.
//!
//! Tests only set devices 0 to 3 and never reset them.

mod common;

use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_EVENT_TIME_LINE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE, ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT,
    ACL_STREAM_STATUS_COMPLETE, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const CONTEXT_NULL: i32 = rc(ACL_ERROR_RT_CONTEXT_NULL);
const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);

fn create_with_config(priority: u32, flag: u32) -> Result<aclrtStream, i32> {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { aclrtCreateStreamWithConfig(&mut s, priority, flag) } {
        0 => Ok(s),
        e => Err(e),
    }
}

fn priority(s: aclrtStream) -> u32 {
    let mut p = 99;
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtStreamGetPriority(s, &mut p) });
    p
}

fn flags(s: aclrtStream) -> u32 {
    let mut f = 99;
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtStreamGetFlags(s, &mut f) });
    f
}

fn id(s: aclrtStream) -> i32 {
    let mut i = -1;
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtStreamGetId(s, &mut i) });
    i
}

#[test]
fn create_stream_without_context_is_context_null() {
    on_new_thread(|| {
        let mut s = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCreateStream(&mut s) };
        assert_fails(r, CONTEXT_NULL, "aclrtCreateStream");
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCreateStreamWithConfig(&mut s, 0, 0) };
        assert_fails(r, CONTEXT_NULL, "aclrtCreateStreamWithConfig");
        assert!(s.is_null());
    });
}

#[test]
fn create_stream_with_null_out_pointer_is_invalid_param() {
    use_device(0);
    // SAFETY: null is allowed and rejected.
    unsafe {
        assert_fails(
            aclrtCreateStream(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateStream",
        );
        assert_fails(
            aclrtCreateStreamWithConfig(null_mut(), 0, 0),
            ACL_ERROR_INVALID_PARAM,
            "aclrtCreateStreamWithConfig",
        );
    }
}

#[test]
fn create_stream_with_config_clamps_the_priority_to_0_through_7() {
    use_device(0);
    for (asked, got) in [(0, 0), (3, 3), (7, 7), (8, 7), (1000, 7), (u32::MAX, 0)] {
        let s = create_with_config(asked, 0).unwrap();
        assert_eq!(priority(s), got, "priority {asked}");
        destroy_stream(s);
    }
    let s = create_stream();
    assert_eq!(
        priority(s),
        0,
        "aclrtCreateStream uses the highest priority"
    );
    destroy_stream(s);
    assert_eq!(priority(null_mut()), 0, "the default stream");
}

#[test]
fn create_stream_with_config_keeps_the_known_flags_and_ignores_the_others() {
    use_device(0);
    let s = create_with_config(0, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | 0x1000).unwrap();
    assert_eq!(flags(s), ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC);
    destroy_stream(s);
    let s = create_with_config(0, ACL_STREAM_HUGE).unwrap();
    assert_eq!(flags(s), ACL_STREAM_HUGE);
    destroy_stream(s);
    assert_eq!(flags(null_mut()), 0);
}

#[test]
fn device_use_only_with_another_flag_is_param_invalid() {
    use_device(0);
    let r = create_with_config(0, ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_FAST_LAUNCH).unwrap_err();
    let msg = assert_fails(r, PARAM_INVALID, "aclrtCreateStreamWithConfig");
    assert_contains(&msg, "ACL_STREAM_DEVICE_USE_ONLY");
    let s = create_with_config(0, ACL_STREAM_DEVICE_USE_ONLY).unwrap();
    destroy_stream(s);
}

#[test]
fn non_host_streams_return_at_once_and_refuse_host_work() {
    use_device(0);
    let d = malloc(64);
    for flag in [
        ACL_STREAM_PERSISTENT,
        ACL_STREAM_CPU_SCHEDULE,
        ACL_STREAM_DEVICE_USE_ONLY,
    ] {
        let s = create_with_config(0, flag).unwrap();
        ok(sync(s));
        assert!(is_complete(s));
        let msg = assert_fails(
            memset_async(d, 64, 0, s),
            ACL_ERROR_API_NOT_SUPPORT,
            "aclrtMemsetAsync",
        );
        assert_contains(&msg, "does not model");
        destroy_stream(s);
    }
    free(d);
}

#[test]
fn stream_ids_are_distinct_and_the_smallest_free_is_reused() {
    on_new_thread(|| {
        use_device(1);
        let a = create_stream();
        let b = create_stream();
        let (ia, ib) = (id(a), id(b));
        assert_ne!(ia, ib);
        assert_ne!(ia, id(null_mut()));
        destroy_stream(a);
        let c = create_stream();
        assert!(id(c) <= ia, "a freed id is reused");
        destroy_stream(b);
        destroy_stream(c);
    });
}

#[test]
fn attribute_queries_check_their_arguments() {
    use_device(0);
    // SAFETY: null out-pointers are allowed and rejected.
    unsafe {
        assert_fails(
            aclrtStreamGetPriority(null_mut(), null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtStreamGetPriority",
        );
        assert_fails(
            aclrtStreamGetFlags(null_mut(), null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtStreamGetFlags",
        );
        assert_fails(
            aclrtStreamGetId(null_mut(), null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtStreamGetId",
        );
    }
    let s = create_stream();
    destroy_stream(s);
    let mut v = 0u32;
    let mut i = 0i32;
    // SAFETY: valid out-pointers; the stale handle is validated.
    unsafe {
        assert_fails(
            aclrtStreamGetPriority(s, &mut v),
            INVALID_HANDLE,
            "aclrtStreamGetPriority",
        );
        assert_fails(
            aclrtStreamGetFlags(s, &mut v),
            INVALID_HANDLE,
            "aclrtStreamGetFlags",
        );
        assert_fails(
            aclrtStreamGetId(s, &mut i),
            INVALID_HANDLE,
            "aclrtStreamGetId",
        );
    }
    on_new_thread(|| {
        let mut v = 0u32;
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtStreamGetPriority(null_mut(), &mut v) };
        assert_fails(r, CONTEXT_NULL, "aclrtStreamGetPriority");
    });
}

#[test]
fn device_get_stream_priority_range_is_7_to_0_and_accepts_nulls() {
    let (mut least, mut greatest) = (-1, -1);
    // SAFETY: valid out-pointers, or null.
    unsafe {
        ok(aclrtDeviceGetStreamPriorityRange(&mut least, &mut greatest));
        ok(aclrtDeviceGetStreamPriorityRange(null_mut(), null_mut()));
    }
    assert_eq!((least, greatest), (7, 0));
}

#[test]
fn destroyed_or_unknown_stream_handles_are_invalid_handle() {
    use_device(0);
    let s = create_stream();
    destroy_stream(s);
    let d = malloc(16);
    let mut status = 0;
    let mut junk = [0u64; 4];
    let fake: aclrtStream = junk.as_mut_ptr().cast();
    for h in [s, fake] {
        // SAFETY: handles are validated by lookup, never dereferenced.
        unsafe {
            let msg = assert_fails(
                aclrtSynchronizeStream(h),
                INVALID_HANDLE,
                "aclrtSynchronizeStream",
            );
            if h == s {
                assert_contains(&msg, "has been destroyed");
            } else {
                assert_contains(&msg, "is not a stream handle");
            }
            assert_fails(
                aclrtStreamQuery(h, &mut status),
                INVALID_HANDLE,
                "aclrtStreamQuery",
            );
            assert_fails(aclrtDestroyStream(h), INVALID_HANDLE, "aclrtDestroyStream");
            assert_fails(
                aclrtDestroyStreamForce(h),
                INVALID_HANDLE,
                "aclrtDestroyStreamForce",
            );
        }
        assert_fails(
            memset_async(d, 16, 0, h),
            INVALID_HANDLE,
            "aclrtMemsetAsync",
        );
    }
    // SAFETY: null is allowed and rejected.
    unsafe {
        assert_fails(
            aclrtDestroyStream(null_mut()),
            ACL_ERROR_INVALID_PARAM,
            "aclrtDestroyStream",
        );
    }
    free(d);
}

#[test]
fn queued_copy_happens_later_than_the_call_and_synchronize_waits_for_it() {
    use_device(0);
    let s = create_stream();
    let d = malloc(4096);
    let src = malloc_host(4096);
    let dst = malloc_host(4096);
    // SAFETY: 4096 writable pinned bytes each.
    unsafe {
        std::ptr::write_bytes(src, 0x5A, 4096);
        std::ptr::write_bytes(dst, 0, 4096);
    }
    let release = block_stream(s);
    ok(memcpy_async(d, src, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
    ok(memcpy_async(dst, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!is_complete(s), "the host function still blocks the stream");
    assert!(
        // SAFETY: 4096 readable pinned bytes.
        unsafe { std::slice::from_raw_parts(dst, 4096) }
            .iter()
            .all(|&b| b == 0),
        "not copied yet"
    );
    release.send(()).unwrap();
    ok(sync(s));
    assert!(is_complete(s));
    assert!(
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(dst, 4096) }
            .iter()
            .all(|&b| b == 0x5A)
    );
    destroy_stream(s);
    free(d);
    free_host(src);
    free_host(dst);
}

#[test]
fn synchronize_and_query_without_context_are_context_null() {
    use_device(0);
    let s = create_stream();
    let h = s as usize;
    on_new_thread(move || {
        let s = h as aclrtStream;
        assert_fails(sync(s), CONTEXT_NULL, "aclrtSynchronizeStream");
        let mut status = 0;
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtStreamQuery(s, &mut status) };
        assert_fails(r, CONTEXT_NULL, "aclrtStreamQuery");
    });
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtStreamQuery(s, null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery");
    destroy_stream(s);
}

#[test]
fn synchronize_with_timeout_rejects_0_and_below_minus_1_and_times_out() {
    use_device(0);
    let s = create_stream();
    // SAFETY: handles validated.
    unsafe {
        for bad in [0, -2, i32::MIN] {
            let msg = assert_fails(
                aclrtSynchronizeStreamWithTimeout(s, bad),
                PARAM_INVALID,
                "aclrtSynchronizeStreamWithTimeout",
            );
            assert_contains(&msg, "timeout");
        }
        ok(aclrtSynchronizeStreamWithTimeout(s, -1));
        ok(aclrtSynchronizeStreamWithTimeout(s, 1));
    }
    let release = block_stream(s);
    let t0 = Instant::now();
    // SAFETY: handle validated.
    let r = unsafe { aclrtSynchronizeStreamWithTimeout(s, 30) };
    assert!(t0.elapsed() >= Duration::from_millis(30));
    let msg = assert_fails(
        r,
        rc(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT),
        "aclrtSynchronizeStreamWithTimeout",
    );
    assert_contains(&msg, "within the timeout");
    release.send(()).unwrap();
    // SAFETY: handle validated.
    ok(unsafe { aclrtSynchronizeStreamWithTimeout(s, 5000) });
    destroy_stream(s);
}

#[test]
fn destroy_stream_waits_for_its_queued_work() {
    use_device(0);
    let s = create_stream();
    let d = malloc(1024);
    let host = malloc_host(1024);
    let release = block_stream(s);
    ok(memset_async(d, 1024, 0x11, s));
    ok(memcpy_async(host, d, 1024, ACL_MEMCPY_DEVICE_TO_HOST, s));
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        release.send(()).unwrap();
    });
    let t0 = Instant::now();
    destroy_stream(s);
    assert!(
        t0.elapsed() >= Duration::from_millis(25),
        "destroy waited for the host function"
    );
    t.join().unwrap();
    assert!(
        // SAFETY: 1024 readable pinned bytes.
        unsafe { std::slice::from_raw_parts(host, 1024) }
            .iter()
            .all(|&b| b == 0x11)
    );
    free(d);
    free_host(host);
}

#[test]
fn destroy_stream_force_drops_the_work_not_started() {
    use_device(2);
    let s = create_stream();
    let d = malloc(1024);
    ok(memset_async(d, 1024, 0, s));
    ok(sync(s));
    let release = block_stream(s);
    ok(memset_async(d, 1024, 0x77, s));
    let t0 = Instant::now();
    // SAFETY: live stream.
    ok(unsafe { aclrtDestroyStreamForce(s) });
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "force does not wait for the host function"
    );
    assert!(
        to_host(d, 1024).iter().all(|&b| b == 0),
        "the queued fill never ran"
    );
    release.send(()).unwrap();
    free(d);
}

#[test]
fn records_dropped_by_a_forced_destroy_release_their_waiters_with_an_error() {
    use_device(2);
    let (s, other) = (create_stream(), create_stream());
    let e = create_event();
    let release = block_stream(s);
    record(e, s);
    // SAFETY: live handles.
    ok(unsafe { aclrtStreamWaitEvent(other, e) });
    // SAFETY: live stream.
    ok(unsafe { aclrtDestroyStreamForce(s) });
    // SAFETY: live event.
    let r = unsafe { aclrtSynchronizeEvent(e) };
    let msg = assert_fails(
        r,
        rc(acl_sys::ACL_ERROR_RT_INTERNAL_ERROR),
        "aclrtSynchronizeEvent",
    );
    assert_contains(&msg, "aclrtDestroyStreamForce");
    let msg = assert_fails(
        sync(other),
        rc(acl_sys::ACL_ERROR_RT_DRV_INTERNAL_ERROR),
        "aclrtSynchronizeStream",
    );
    assert_contains(&msg, "aclrtStreamWaitEvent task #1");
    release.send(()).unwrap();
    destroy_event(e);
    destroy_stream(other);
}

#[test]
fn stream_wait_event_orders_work_across_streams() {
    use_device(0);
    let a = create_stream();
    let b = create_stream();
    let d = malloc(512);
    let host = malloc_host(512);
    // SAFETY: 512 writable pinned bytes.
    unsafe { std::ptr::write_bytes(host, 0, 512) };
    let e = create_event();
    let release = block_stream(a);
    ok(memset_async(d, 512, 0x42, a));
    record(e, a);
    // SAFETY: handles validated.
    ok(unsafe { aclrtStreamWaitEvent(b, e) });
    ok(memcpy_async(host, d, 512, ACL_MEMCPY_DEVICE_TO_HOST, b));
    std::thread::sleep(Duration::from_millis(20));
    assert!(!is_complete(b), "b waits for a's event");
    assert!(
        // SAFETY: 512 readable pinned bytes.
        unsafe { std::slice::from_raw_parts(host, 512) }
            .iter()
            .all(|&x| x == 0)
    );
    release.send(()).unwrap();
    ok(sync(b));
    assert!(
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(host, 512) }
            .iter()
            .all(|&x| x == 0x42)
    );
    ok(sync(a));
    destroy_event(e);
    destroy_stream(a);
    destroy_stream(b);
    free(d);
    free_host(host);
}

#[test]
fn stream_wait_event_checks_its_event() {
    use_device(0);
    let s = create_stream();
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtStreamWaitEvent(s, null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent");
    let timed = create_event_with_flag(ACL_EVENT_TIME_LINE);
    // SAFETY: handles validated.
    let r = unsafe { aclrtStreamWaitEvent(s, timed) };
    let msg = assert_fails(
        r,
        rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
        "aclrtStreamWaitEvent",
    );
    assert_contains(&msg, "ACL_EVENT_SYNC");
    // An event never recorded: nothing to wait for.
    let fresh = create_event();
    // SAFETY: handles validated.
    ok(unsafe { aclrtStreamWaitEvent(s, fresh) });
    ok(sync(s));
    destroy_event(fresh);
    // SAFETY: the destroyed event is validated.
    let r = unsafe { aclrtStreamWaitEvent(s, fresh) };
    assert_fails(r, INVALID_HANDLE, "aclrtStreamWaitEvent");
    destroy_event(timed);
    destroy_stream(s);
}

#[test]
fn host_functions_run_without_a_context_and_cannot_synchronize_their_own_stream() {
    use_device(0);
    let s = create_stream();
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtGetCurrentContext(&mut ctx) });
    let (h, c) = (s as usize, ctx as usize);
    let (tx, rx) = mpsc::channel();
    ok(host_fn(s, move || {
        // The runtime's host-function thread has no current context.
        let no_ctx = (sync(h as aclrtStream), recent_error());
        // SAFETY: a live context.
        let set = unsafe { aclrtSetCurrentContext(c as *mut _) };
        let own = (sync(h as aclrtStream), recent_error());
        tx.send((no_ctx, set, own)).unwrap();
    }));
    ok(sync(s));
    let ((r0, m0), set, (r1, m1)) = rx.recv().unwrap();
    assert_eq!((r0, set), (CONTEXT_NULL, 0), "{m0}");
    assert_eq!(r1, PARAM_INVALID);
    assert!(
        m1.starts_with("aclrtSynchronizeStream") && m1.contains("never return"),
        "{m1}"
    );
    destroy_stream(s);
}

#[test]
fn synchronize_device_waits_for_every_stream_of_the_device() {
    on_new_thread(|| {
        use_device(3);
        let (a, b) = (create_stream(), create_stream());
        // One buffer per stream: nothing orders the two streams' fills.
        let (da, db) = (malloc(64), malloc(64));
        let ra = block_stream(a);
        ok(memset_async(da, 64, 1, a));
        ok(memset_async(db, 64, 2, b));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            ra.send(()).unwrap();
        });
        ok(aclrtSynchronizeDevice());
        assert!(is_complete(a) && is_complete(b));
        assert_eq!(to_host(da, 64), vec![1; 64], "the held stream's fill ran");
        assert_eq!(to_host(db, 64), vec![2; 64]);
        t.join().unwrap();
        let mut status = 5;
        // SAFETY: valid out-pointer.
        ok(unsafe { aclrtStreamQuery(a, &mut status) });
        assert_eq!(status, ACL_STREAM_STATUS_COMPLETE);
        destroy_stream(a);
        destroy_stream(b);
        free(da);
        free(db);
    });
    on_new_thread(|| {
        assert_fails(
            aclrtSynchronizeDevice(),
            CONTEXT_NULL,
            "aclrtSynchronizeDevice",
        );
    });
}

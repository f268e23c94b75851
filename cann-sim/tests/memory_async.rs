//! Asynchronous copies and fills on the simulator: argument checks at the
//! call, real asynchrony with pinned memory, synchronous behaviour with
//! pageable memory, staging, and faults of queued work (use after free)
//! surfacing at the next synchronisation — with the check mode
//! (`CANN_SIM_CHECK`, on for the test suite) off, in a child process; with
//! it on, the frees are refused with the check's report.
//!
//! Tests only set devices 0 and 1 and never reset them.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
    ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CONTEXT, ACL_ERROR_RT_SYS_DMA,
    ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, aclError, aclrtStream,
};
use cann_sim::acl::*;
use cann_sim::check::{Kind, Mode};
use common::*;
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const SYS_DMA: i32 = rc(ACL_ERROR_RT_SYS_DMA);

fn pinned(len: usize, fill: u8) -> *mut u8 {
    let p = malloc_host(len);
    // SAFETY: `len` writable pinned bytes.
    unsafe { std::ptr::write_bytes(p, fill, len) };
    p
}

fn bytes(p: *const u8, len: usize) -> Vec<u8> {
    // SAFETY: callers pass `len` readable bytes.
    unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
}

#[test]
fn memcpy_async_count_zero_succeeds_even_with_nulls_and_no_context() {
    on_new_thread(|| {
        // SAFETY: count 0: nothing is touched.
        let r = unsafe { aclrtMemcpyAsync(null_mut(), 0, null(), 0, 99, null_mut()) };
        assert_eq!(r, 0);
        assert_eq!(memset_async(null_mut(), 0, 0, null_mut()), 0);
    });
}

#[test]
fn memcpy_async_null_pointers_and_bad_kinds_are_invalid_param() {
    use_device(0);
    let d = malloc(64);
    let s = create_stream();
    for (dst, src) in [(null_mut(), d.cast_const()), (d, null())] {
        let r = memcpy_async(dst, src, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s);
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync");
    }
    for kind in [
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
        99,
    ] {
        let r = memcpy_async(d, d, 64, kind, s);
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync");
    }
    destroy_stream(s);
    free(d);
}

#[test]
fn memcpy_async_count_above_dest_max_is_param_invalid() {
    use_device(0);
    let (a, b) = (malloc(64), malloc(64));
    for dest_max in [0, 63] {
        // SAFETY: rejected before any access.
        let r = unsafe {
            aclrtMemcpyAsync(
                a.cast(),
                dest_max,
                b.cast(),
                64,
                ACL_MEMCPY_DEVICE_TO_DEVICE,
                null_mut(),
            )
        };
        let msg = assert_fails(r, PARAM_INVALID, "aclrtMemcpyAsync");
        assert_contains(&msg, "destMax");
    }
    free(a);
    free(b);
}

#[test]
fn memcpy_async_without_context_is_context_null() {
    use_device(0);
    let (a, b) = (malloc(64) as usize, malloc(64) as usize);
    on_new_thread(move || {
        let r = memcpy_async(
            a as *mut u8,
            b as *const u8,
            64,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            null_mut(),
        );
        assert_fails(r, rc(ACL_ERROR_RT_CONTEXT_NULL), "aclrtMemcpyAsync");
    });
    free(a as *mut u8);
    free(b as *mut u8);
}

#[test]
fn memcpy_async_checks_provenance_at_the_call() {
    use_device(0);
    let d = malloc(64);
    let h = pinned(64, 0);
    // Past the end of the device allocation.
    let r = memcpy_async(h, d, 65, ACL_MEMCPY_DEVICE_TO_HOST, null_mut());
    let msg = assert_fails(r, PARAM_INVALID, "aclrtMemcpyAsync");
    assert_contains(&msg, "past the end");
    // A kind pageable memory does not allow (pinned memory would have it
    // corrected instead: `MemcpyKindAutoCorrect`, see fidelity_runtime.rs).
    let plain = [0u8; 64];
    let r = memcpy_async(d, plain.as_ptr(), 64, ACL_MEMCPY_DEVICE_TO_HOST, null_mut());
    let msg = assert_fails(r, PARAM_INVALID, "aclrtMemcpyAsync");
    assert_contains(&msg, "ACL_MEMCPY_DEVICE_TO_HOST is invalid");
    // Another device's memory.
    let other = on_new_thread(|| {
        use_device(1);
        malloc(64) as usize
    }) as *mut u8;
    let r = memcpy_async(other, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, null_mut());
    let msg = assert_fails(r, PARAM_INVALID, "aclrtMemcpyAsync");
    assert_contains(&msg, "current device of this thread is 0");
    free(other);
    free(d);
    free_host(h);
}

#[test]
fn memcpy_async_host_to_host_is_feature_not_support() {
    use_device(0);
    let (a, b) = (pinned(32, 1), pinned(32, 2));
    let r = memcpy_async(a, b, 32, ACL_MEMCPY_HOST_TO_HOST, null_mut());
    let msg = assert_fails(r, rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT), "aclrtMemcpyAsync");
    assert_contains(&msg, "host-to-host");
    let (mut x, y) = (vec![0u8; 32], vec![1u8; 32]);
    let r = memcpy_async(
        x.as_mut_ptr(),
        y.as_ptr(),
        32,
        ACL_MEMCPY_DEFAULT,
        null_mut(),
    );
    assert_fails(r, rc(ACL_ERROR_RT_FEATURE_NOT_SUPPORT), "aclrtMemcpyAsync");
    assert_eq!(bytes(a, 32), vec![1; 32], "nothing was copied");
    free_host(a);
    free_host(b);
}

#[test]
fn memcpy_async_onto_itself_succeeds_without_queueing() {
    use_device(0);
    let d = malloc(64);
    ok(memcpy_async(
        d,
        d,
        64,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        null_mut(),
    ));
    free(d);
}

#[test]
fn pinned_copies_and_fills_are_queued_and_run_in_order() {
    use_device(0);
    let s = create_stream();
    let (d1, d2) = (malloc(1024), malloc(1024));
    let (src, dst) = (pinned(1024, 0xAB), pinned(1024, 0));
    let release = block_stream(s);
    ok(memcpy_async(d1, src, 1024, ACL_MEMCPY_HOST_TO_DEVICE, s));
    ok(memset_async(d1, 512, 0xCD, s));
    ok(memcpy_async(d2, d1, 1024, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ok(memcpy_async(dst, d2, 1024, ACL_MEMCPY_DEFAULT, s));
    std::thread::sleep(Duration::from_millis(10));
    assert_eq!(bytes(dst, 1024), vec![0; 1024], "nothing ran yet");
    release.send(()).unwrap();
    ok(sync(s));
    let out = bytes(dst, 1024);
    assert!(out[..512].iter().all(|&b| b == 0xCD) && out[512..].iter().all(|&b| b == 0xAB));
    destroy_stream(s);
    free(d1);
    free(d2);
    free_host(src);
    free_host(dst);
}

#[test]
fn pageable_host_copies_wait_for_the_stream_then_copy_before_returning() {
    use_device(0);
    let s = create_stream();
    let d = malloc(4096);
    let release = block_stream(s);
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(40));
        release.send(()).unwrap();
    });
    let src = vec![0x6Eu8; 4096];
    let t0 = Instant::now();
    ok(memcpy_async(
        d,
        src.as_ptr(),
        4096,
        ACL_MEMCPY_HOST_TO_DEVICE,
        s,
    ));
    assert!(
        t0.elapsed() >= Duration::from_millis(35),
        "waited for the stream's earlier work"
    );
    drop(src);
    assert_eq!(
        to_host(d, 4096),
        vec![0x6E; 4096],
        "copied before returning"
    );
    let mut back = vec![0u8; 4096];
    ok(memcpy_async(
        back.as_mut_ptr(),
        d,
        4096,
        ACL_MEMCPY_DEVICE_TO_HOST,
        s,
    ));
    assert_eq!(back, vec![0x6E; 4096], "no synchronisation needed");
    releaser.join().unwrap();
    destroy_stream(s);
    free(d);
}

#[test]
fn host_to_buf_to_device_stages_the_host_data_at_the_call() {
    use_device(0);
    let s = create_stream();
    let d = malloc(256);
    let release = block_stream(s);
    let mut src = vec![1u8; 256];
    ok(memcpy_async(
        d,
        src.as_ptr(),
        256,
        ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE,
        s,
    ));
    src.fill(2);
    drop(src);
    release.send(()).unwrap();
    ok(sync(s));
    assert_eq!(to_host(d, 256), vec![1; 256]);
    destroy_stream(s);
    free(d);
}

/// `aclrtFree` of `p`, whose result the caller checks.
fn try_free(p: *mut u8) -> aclError {
    // SAFETY: the simulator looks the pointer up.
    unsafe { aclrtFree(p.cast()) }
}

/// `aclrtFreeHost` of `p`, whose result the caller checks.
fn try_free_host(p: *mut u8) -> aclError {
    // SAFETY: the simulator looks the pointer up.
    unsafe { aclrtFreeHost(p.cast()) }
}

/// The released runtime does not wait for queued work in `aclrtFree`: the
/// copy faults when it runs, reported at the synchronisation. With the check
/// on, the free is refused instead (and the copy runs).
#[test]
fn device_memory_freed_before_the_queued_copy_runs_faults_at_synchronize() {
    let mode = check_mode_with_off_in_a_child(
        "device_memory_freed_before_the_queued_copy_runs_faults_at_synchronize",
    );
    let reports = count_reports();
    use_device(0);
    let s = create_stream();
    let d = malloc(128);
    // SAFETY: 128 bytes of device memory.
    ok(unsafe { aclrtMemset(d.cast(), 128, 0x5A, 128) });
    let h = pinned(128, 0);
    let release = block_stream(s);
    ok(memcpy_async(h, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s));
    let freed = try_free(d); // aclrtFree does not wait for queued work.
    if mode == Mode::Off {
        ok(freed);
        release.send(()).unwrap();
        let msg = assert_fails(sync(s), SYS_DMA, "aclrtSynchronizeStream");
        assert_contains(&msg, "aclrtMemcpyAsync task #2");
        assert_contains(&msg, "freed before the task ran");
        assert_contains(&msg, &format!("src {d:p}"));
        assert_eq!(bytes(h, 128), vec![0; 128], "nothing was copied");
    } else {
        let msg = assert_free_refused(
            freed,
            "aclrtFree",
            d,
            "aclrtMemcpyAsync task #2",
            s,
            &format!(
                "reads {} of device memory on device 0, src)",
                byte_range(d, 128)
            ),
        );
        reports.assert_made(1, Kind::FreeWhilePending, &msg);
        release.send(()).unwrap();
        ok(sync(s));
        assert_eq!(bytes(h, 128), vec![0x5A; 128], "the copy ran");
        free(d);
    }
    ok(sync(s));
    destroy_stream(s);
    free_host(h);
    assert_eq!(reports.made(), u64::from(mode != Mode::Off));
}

/// As for device memory: pinned host memory freed under a queued copy is a
/// fault of the copy (with the check on, a refused free).
#[test]
fn pinned_host_memory_freed_before_the_queued_copy_runs_faults() {
    let mode = check_mode_with_off_in_a_child(
        "pinned_host_memory_freed_before_the_queued_copy_runs_faults",
    );
    let reports = count_reports();
    use_device(0);
    let s = create_stream();
    let d = malloc(128);
    let h = pinned(128, 7);
    let release = block_stream(s);
    ok(memcpy_async(d, h, 128, ACL_MEMCPY_HOST_TO_DEVICE, s));
    let freed = try_free_host(h);
    if mode == Mode::Off {
        ok(freed);
        release.send(()).unwrap();
        let msg = assert_fails(sync(s), SYS_DMA, "aclrtSynchronizeStream");
        assert_contains(&msg, "pinned host memory");
    } else {
        let msg = assert_free_refused(
            freed,
            "aclrtFreeHost",
            h,
            "aclrtMemcpyAsync task #2",
            s,
            &format!("reads {} of pinned host memory, src)", byte_range(h, 128)),
        );
        reports.assert_made(1, Kind::FreeWhilePending, &msg);
        release.send(()).unwrap();
        ok(sync(s));
        assert_eq!(to_host(d, 128), vec![7; 128], "the copy ran");
        free_host(h);
    }
    destroy_stream(s);
    free(d);
}

/// A fault of queued work (memory freed before a fill runs, with the check
/// off) is reported once, by the first synchronisation or query that sees
/// it, and the stream's later tasks still run. With the check on, the frees
/// are refused and every fill runs.
#[test]
fn a_fault_surfaces_at_query_or_event_sync_once_and_later_tasks_still_run() {
    let mode = check_mode_with_off_in_a_child(
        "a_fault_surfaces_at_query_or_event_sync_once_and_later_tasks_still_run",
    );
    let reports = count_reports();
    use_device(0);
    let s = create_stream();
    let (gone, kept) = (malloc(64), malloc(64));
    let release = block_stream(s);
    ok(memset_async(gone, 64, 1, s));
    ok(memset_async(kept, 64, 9, s));
    let e = create_event();
    record(e, s);
    let freed = try_free(gone);
    if mode == Mode::Off {
        ok(freed);
        release.send(()).unwrap();
        // SAFETY: live event.
        let r = unsafe { aclrtSynchronizeEvent(e) };
        let msg = assert_fails(r, SYS_DMA, "aclrtSynchronizeEvent");
        assert_contains(&msg, "aclrtMemsetAsync task #2");
    } else {
        let msg = assert_free_refused(
            freed,
            "aclrtFree",
            gone,
            "aclrtMemsetAsync task #2",
            s,
            &format!(
                "writes {} of device memory on device 0, devPtr)",
                byte_range(gone, 64)
            ),
        );
        reports.assert_made(1, Kind::FreeWhilePending, &msg);
        release.send(()).unwrap();
        // SAFETY: live event.
        ok(unsafe { aclrtSynchronizeEvent(e) });
        assert_eq!(to_host(gone, 64), vec![1; 64]);
        free(gone);
    }
    // Reported once; the stream went on (ACL_CONTINUE_ON_FAILURE).
    ok(sync(s));
    assert_eq!(to_host(kept, 64), vec![9; 64]);
    // A second fault, seen by a query.
    let again = malloc(64);
    let release = block_stream(s);
    ok(memset_async(again, 64, 1, s));
    let freed = try_free(again);
    if mode == Mode::Off {
        ok(freed);
        release.send(()).unwrap();
        while is_complete_or_fault(s) {}
    } else {
        let msg = assert_free_refused(
            freed,
            "aclrtFree",
            again,
            "aclrtMemsetAsync task #6",
            s,
            &format!(
                "writes {} of device memory on device 0, devPtr)",
                byte_range(again, 64)
            ),
        );
        reports.assert_made(2, Kind::FreeWhilePending, &msg);
        release.send(()).unwrap();
        while !is_complete(s) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(to_host(again, 64), vec![1; 64]);
        free(again);
    }
    destroy_event(e);
    destroy_stream(s);
    free(kept);
}

/// Polls `aclrtStreamQuery` until it reports the fault (returns false then).
fn is_complete_or_fault(s: aclrtStream) -> bool {
    let mut st = 0;
    // SAFETY: valid out-pointer.
    let r = unsafe { aclrtStreamQuery(s, &mut st) };
    if r == 0 {
        std::thread::sleep(Duration::from_millis(1));
        return true;
    }
    let msg = assert_fails(r, SYS_DMA, "aclrtStreamQuery");
    assert_contains(&msg, "freed before the task ran");
    false
}

#[test]
fn memset_async_checks_its_arguments() {
    use_device(0);
    let d = malloc(64);
    let h = pinned(64, 0);
    assert_fails(
        memset_async(null_mut(), 64, 0, null_mut()),
        ACL_ERROR_INVALID_PARAM,
        "aclrtMemsetAsync",
    );
    // SAFETY: rejected before any access.
    let r = unsafe { aclrtMemsetAsync(d.cast(), 32, 0, 64, null_mut()) };
    let msg = assert_fails(r, PARAM_INVALID, "aclrtMemsetAsync");
    assert_contains(&msg, "maxCount");
    let msg = assert_fails(
        memset_async(h, 64, 0, null_mut()),
        PARAM_INVALID,
        "aclrtMemsetAsync",
    );
    assert_contains(&msg, "not device memory");
    let msg = assert_fails(
        memset_async(d, 65, 0, null_mut()),
        PARAM_INVALID,
        "aclrtMemsetAsync",
    );
    assert_contains(&msg, "past the end");
    let dd = d as usize;
    on_new_thread(move || {
        let r = memset_async(dd as *mut u8, 64, 0, null_mut());
        assert_fails(r, rc(ACL_ERROR_RT_CONTEXT_NULL), "aclrtMemsetAsync");
        use_device(1);
        let r = memset_async(dd as *mut u8, 64, 0, null_mut());
        let msg = assert_fails(r, PARAM_INVALID, "aclrtMemsetAsync");
        assert_contains(&msg, "current device of this thread is 1");
    });
    let s = create_stream();
    let sh = s as usize;
    on_new_thread(move || {
        use_device(0);
        let mut ctx = null_mut();
        // SAFETY: valid out-pointer.
        ok(unsafe { aclrtCreateContext(&mut ctx, 0) });
        let r = memset_async(dd as *mut u8, 64, 0, sh as aclrtStream);
        assert_fails(r, rc(ACL_ERROR_RT_STREAM_CONTEXT), "aclrtMemsetAsync");
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(ctx) });
    });
    destroy_stream(s);
    free(d);
    free_host(h);
}

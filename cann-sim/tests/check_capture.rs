//! The check mode (`CANN_SIM_CHECK=report`) and graph capture: the raw
//! forms of issue 22's holes, each caught by a detector through the C ABI
//! (exact code and message), and the correct programs that make no report.
//!
//! - A launch (`aclmdlRIExecuteAsync`) makes the captured tasks pending with
//!   their byte ranges: `stream-race` (one graph launched on two streams
//!   without ordering), `host-race` (a synchronous copy into pinned memory a
//!   launch writes), `free-while-pending`.
//! - `free-while-captured`: memory a live captured model uses, the work of
//!   streams that joined the capture through an event included.
//! - `uninitialised-read`: device memory whose only initialisation is a
//!   captured task, read before a launch of the model was queued.
//! - A mark (event) recorded on a second stream that the first stream does
//!   not wait for orders nothing: `stream-race`.
//!
//! The mode is fixed once per process (`set_mode` before any simulator
//! call); the tests count reports, so they run one at a time. Captures are
//! RELAXED, so that synchronous copies stay allowed while one is active.

mod common;

use acl_sys::{
    ACL_ERROR_RT_MEMORY_FREE, ACL_ERROR_RT_STREAM_NOT_COMPLETE, ACL_EVENT_SYNC,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED, aclError, aclmdlRI, aclrtEvent, aclrtStream,
};
use cann_sim::acl::*;
use cann_sim::check::{self, Kind, Mode};
use common::*;

const MEMORY_FREE: i32 = rc(ACL_ERROR_RT_MEMORY_FREE);
const NOT_COMPLETE: i32 = rc(ACL_ERROR_RT_STREAM_NOT_COMPLETE);

/// Report mode, device 0; counts the test's reports (one test at a time).
fn setup() -> ReportCount {
    check::set_mode(Mode::Report).expect("nothing fixed another mode before");
    let r = count_reports();
    use_device(0);
    r
}

/// Asserts that `got` failed with `code`, and that it made report number
/// `n` of the test, of `kind`, whose message is the recorded one and equals
/// `want`.
#[track_caller]
fn assert_report(r: &ReportCount, n: u64, got: aclError, code: aclError, kind: Kind, want: &str) {
    let api = want.split(':').next().unwrap_or_default();
    let msg = assert_fails(got, code, api);
    r.assert_made(n, kind, &msg);
    assert_eq!(msg, want);
}

/// How the check names a stream: handle, id and device.
fn stream_ref(s: aclrtStream) -> String {
    let mut id = -1;
    // SAFETY: a live stream, a valid out-pointer.
    ok(unsafe { aclrtStreamGetId(s, &mut id) });
    format!("stream {:#x} (stream {id} on device 0)", s as usize)
}

fn stream_id(s: aclrtStream) -> i32 {
    let mut id = -1;
    // SAFETY: a live stream, a valid out-pointer.
    ok(unsafe { aclrtStreamGetId(s, &mut id) });
    id
}

/// How the check describes `[p, p + len)` of device memory used as `what`.
fn device_range(p: *const u8, len: usize, what: &str) -> String {
    format!(
        "{} of device memory on device 0, {what})",
        byte_range(p, len)
    )
}

fn begin(s: aclrtStream) {
    // SAFETY: a live stream.
    ok(unsafe { aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED) });
}

fn end(s: aclrtStream) -> aclmdlRI {
    let mut m = std::ptr::null_mut();
    // SAFETY: a capturing stream, a valid out-pointer.
    ok(unsafe { aclmdlRICaptureEnd(s, &mut m) });
    m
}

fn launch(m: aclmdlRI, s: aclrtStream) -> aclError {
    // SAFETY: the handles are validated.
    unsafe { aclmdlRIExecuteAsync(m, s) }
}

fn destroy(m: aclmdlRI) {
    // SAFETY: a live model.
    ok(unsafe { aclmdlRIDestroy(m) });
}

fn ex_event() -> aclrtEvent {
    let mut e = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_SYNC) });
    e
}

fn wait(s: aclrtStream, e: aclrtEvent) {
    // SAFETY: the handles are validated.
    ok(unsafe { aclrtStreamWaitEvent(s, e) });
}

/// `aclrtMemcpy` with `destMax == count`.
fn memcpy(dst: *mut u8, src: *const u8, count: usize, kind: u32) -> aclError {
    // SAFETY: host ends are valid for `count` bytes in every call of these
    // tests; device ends are checked by the simulator.
    unsafe { aclrtMemcpy(dst.cast(), count, src.cast(), count, kind) }
}

/// A synchronous device-to-host read into a fresh pageable buffer: its code.
fn read_back(src: *const u8, count: usize) -> aclError {
    let mut out = vec![0u8; count];
    memcpy(out.as_mut_ptr(), src, count, ACL_MEMCPY_DEVICE_TO_HOST)
}

/// Device memory written outside any capture (so: initialised).
fn written(len: usize, value: i32) -> *mut u8 {
    let d = malloc(len);
    // SAFETY: `len` device bytes.
    ok(unsafe { aclrtMemset(d.cast(), len, value, len) });
    d
}

/// A model of one captured `aclrtMemsetAsync(d, len, value)`.
fn captured_fill(s: aclrtStream, d: *mut u8, len: usize, value: i32) -> aclmdlRI {
    begin(s);
    ok(memset_async(d, len, value, s));
    end(s)
}

// ---- 1. a launch's tasks are pending with their ranges --------------------------

#[test]
fn one_graph_launched_on_two_streams_without_ordering_is_a_stream_race() {
    let r = setup();
    let (s0, s1, s2) = (create_stream(), create_stream(), create_stream());
    let d = written(64, 0);
    let m = captured_fill(s0, d, 64, 7);
    let release = block_stream(s1);
    ok(launch(m, s1));
    let want = format!(
        "aclmdlRIExecuteAsync: CANN_SIM_CHECK stream-race: the new aclmdlRIExecuteAsync task #1 \
         (the captured aclrtMemsetAsync of model {m:#x}) on {} writes {}, and \
         aclmdlRIExecuteAsync task #2 (the captured aclrtMemsetAsync of model {m:#x}) on {} \
         writes {}; the task is still pending and nothing orders the two (record an event on \
         stream {} after aclmdlRIExecuteAsync and make stream {} wait for it with \
         aclrtStreamWaitEvent, or synchronise first). The task was not queued.",
        stream_ref(s2),
        device_range(d, 64, "devPtr"),
        stream_ref(s1),
        device_range(d, 64, "devPtr"),
        stream_id(s1),
        stream_id(s2),
        m = m as usize,
    );
    assert_report(&r, 1, launch(m, s2), NOT_COMPLETE, Kind::StreamRace, &want);
    release.send(()).unwrap();
    ok(sync(s1));
    ok(sync(s2));
    assert_eq!(to_host(d, 64), [7; 64]);
    destroy(m);
    free(d);
    for s in [s0, s1, s2] {
        destroy_stream(s);
    }
}

#[test]
fn launches_on_two_streams_ordered_by_an_event_make_no_report() {
    let r = setup();
    let (s0, s1, s2) = (create_stream(), create_stream(), create_stream());
    let d = written(64, 0);
    let m = captured_fill(s0, d, 64, 7);
    let e = create_event();
    let release = block_stream(s1);
    ok(launch(m, s1));
    record(e, s1);
    wait(s2, e);
    ok(launch(m, s2));
    release.send(()).unwrap();
    ok(sync(s2));
    ok(sync(s1));
    assert_eq!(to_host(d, 64), [7; 64]);
    assert_eq!(r.made(), 0);
    destroy(m);
    free(d);
    destroy_event(e);
    for s in [s0, s1, s2] {
        destroy_stream(s);
    }
}

/// Captures one copy between device memory and pinned `h` (`h` to the
/// device when `upload`, else back into `h`), launches it on a blocked
/// stream and asserts that a synchronous copy into `h` is a `host-race`
/// against the launch, which reads (upload) or writes `h`. Then checks the
/// launch's copy saw only its own bytes.
fn sync_copy_into_pinned_memory_a_launch_uses(upload: bool) {
    let r = setup();
    let (s0, s1) = (create_stream(), create_stream());
    let d = written(64, 5);
    let h = malloc_host(64);
    // SAFETY: 64 pinned bytes, no task uses them yet.
    unsafe { std::ptr::write_bytes(h, 4, 64) };
    begin(s0);
    if upload {
        ok(memcpy_async(d, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s0));
    } else {
        ok(memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s0));
    }
    let m = end(s0);
    let release = block_stream(s1);
    ok(launch(m, s1));
    let other = written(64, 9);
    let launch_does = if upload { "reads" } else { "writes" };
    let end_name = if upload { "src" } else { "dst" };
    let want = format!(
        "aclrtMemcpy: CANN_SIM_CHECK host-race: aclrtMemcpy (a synchronous access, on the host) \
         writes {} of pinned host memory, dst), and aclmdlRIExecuteAsync task #2 (the captured \
         aclrtMemcpyAsync of model {:#x}) on {} {launch_does} {} of pinned host memory, \
         {end_name}); the task is still pending (synchronise stream {} or an event recorded \
         after the task first). Nothing was done.",
        byte_range(h, 64),
        m as usize,
        stream_ref(s1),
        byte_range(h, 64),
        stream_id(s1),
    );
    assert_report(
        &r,
        1,
        memcpy(h, other, 64, ACL_MEMCPY_DEVICE_TO_HOST),
        NOT_COMPLETE,
        Kind::HostRace,
        &want,
    );
    release.send(()).unwrap();
    ok(sync(s1));
    if upload {
        assert_eq!(to_host(d, 64), [4; 64], "the launch read the bytes kept");
    } else {
        // SAFETY: `h` holds 64 bytes, written by the launch only.
        assert_eq!(unsafe { std::slice::from_raw_parts(h, 64) }, [5; 64]);
    }
    destroy(m);
    free_host(h);
    free(d);
    free(other);
    destroy_stream(s0);
    destroy_stream(s1);
}

#[test]
fn a_synchronous_copy_into_pinned_memory_a_pending_launch_writes_is_a_host_race() {
    sync_copy_into_pinned_memory_a_launch_uses(false);
}

#[test]
fn a_synchronous_copy_into_pinned_memory_a_pending_launch_reads_is_a_host_race() {
    sync_copy_into_pinned_memory_a_launch_uses(true);
}

#[test]
fn freeing_memory_a_pending_launch_uses_is_free_while_pending() {
    let r = setup();
    let (s0, s1) = (create_stream(), create_stream());
    let d = written(64, 0);
    let m = captured_fill(s0, d, 64, 3);
    let release = block_stream(s1);
    ok(launch(m, s1));
    let want = format!(
        "aclrtFree: CANN_SIM_CHECK free-while-pending: aclrtFree({:#x}) while \
         aclmdlRIExecuteAsync task #2 (the captured aclrtMemsetAsync of model {:#x}) on {} \
         writes {}; the task is still pending (synchronise stream {} or an event recorded after \
         the task first). The memory was not freed.",
        d as usize,
        m as usize,
        stream_ref(s1),
        device_range(d, 64, "devPtr"),
        stream_id(s1),
    );
    // SAFETY: a live allocation; the check refuses to free it.
    let got = unsafe { aclrtFree(d.cast()) };
    assert_report(&r, 1, got, MEMORY_FREE, Kind::FreeWhilePending, &want);
    release.send(()).unwrap();
    ok(sync(s1));
    assert_eq!(to_host(d, 64), [3; 64], "the launch wrote the memory kept");
    destroy(m);
    free(d);
    destroy_stream(s0);
    destroy_stream(s1);
}

// ---- 2. free-while-captured ----------------------------------------------------------

#[test]
fn freeing_device_memory_a_live_captured_model_uses_is_free_while_captured() {
    let r = setup();
    let s = create_stream();
    let d = written(64, 0);
    let m = captured_fill(s, d, 64, 3);
    let want = format!(
        "aclrtFree: CANN_SIM_CHECK free-while-captured: aclrtFree({:#x}) while model {:#x}, \
         captured and not destroyed, uses it: its captured aclrtMemsetAsync (step #1, from {}) \
         writes {}; every launch of the model would use the freed memory (destroy the model \
         with aclmdlRIDestroy first). The memory was not freed.",
        d as usize,
        m as usize,
        stream_ref(s),
        device_range(d, 64, "devPtr"),
    );
    // SAFETY: a live allocation; the check refuses to free it.
    let got = unsafe { aclrtFree(d.cast()) };
    assert_report(&r, 1, got, MEMORY_FREE, Kind::FreeWhileCaptured, &want);
    // Kept: a launch still writes it.
    ok(launch(m, s));
    ok(sync(s));
    assert_eq!(to_host(d, 64), [3; 64]);
    destroy(m);
    free(d);
    destroy_stream(s);
    assert_eq!(r.made(), 1);
}

#[test]
fn freeing_pinned_memory_a_capture_in_progress_reads_is_free_while_captured() {
    let r = setup();
    let s = create_stream();
    let d = written(64, 0);
    let h = malloc_host(64);
    begin(s);
    ok(memcpy_async(d, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
    // Still capturing: the model is live already.
    // SAFETY: a live allocation; the check refuses to free it.
    let got = unsafe { aclrtFreeHost(h.cast()) };
    let m = end(s);
    let want = format!(
        "aclrtFreeHost: CANN_SIM_CHECK free-while-captured: aclrtFreeHost({:#x}) while model \
         {:#x}, captured and not destroyed, uses it: its captured aclrtMemcpyAsync (step #1, \
         from {}) reads {} of pinned host memory, src); every launch of the model would use the \
         freed memory (destroy the model with aclmdlRIDestroy first). The memory was not freed.",
        h as usize,
        m as usize,
        stream_ref(s),
        byte_range(h, 64),
    );
    assert_report(&r, 1, got, MEMORY_FREE, Kind::FreeWhileCaptured, &want);
    destroy(m);
    free_host(h);
    free(d);
    destroy_stream(s);
}

// ---- 3. joined streams -----------------------------------------------------------------

#[test]
fn a_temporary_of_a_stream_that_joined_the_capture_is_held_while_the_model_lives() {
    let r = setup();
    let (s, joined) = (create_stream(), create_stream());
    let (e1, e2) = (ex_event(), ex_event());
    let out = written(64, 0);
    let tmp = written(64, 0);
    begin(s);
    record(e1, s);
    // Joins the capture: its work is the model's.
    wait(joined, e1);
    ok(memset_async(tmp, 64, 4, joined));
    ok(memcpy_async(
        out,
        tmp,
        64,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        joined,
    ));
    record(e2, joined);
    wait(s, e2);
    let m = end(s);
    // Step #1 is the event record; the joined stream's fill is step #2 (its
    // copy, step #3, uses the memory too: the first use is named).
    let want = format!(
        "aclrtFree: CANN_SIM_CHECK free-while-captured: aclrtFree({:#x}) while model {:#x}, \
         captured and not destroyed, uses it: its captured aclrtMemsetAsync (step #2, from {}) \
         writes {}; every launch of the model would use the freed memory (destroy the model \
         with aclmdlRIDestroy first). The memory was not freed.",
        tmp as usize,
        m as usize,
        stream_ref(joined),
        device_range(tmp, 64, "devPtr"),
    );
    // SAFETY: a live allocation; the check refuses to free it.
    let got = unsafe { aclrtFree(tmp.cast()) };
    assert_report(&r, 1, got, MEMORY_FREE, Kind::FreeWhileCaptured, &want);
    // The model still runs the joined stream's work on the memory kept.
    ok(launch(m, s));
    ok(sync(s));
    assert_eq!(to_host(out, 64), [4; 64]);
    destroy(m);
    // Destroyed: the memory is free to go.
    free(tmp);
    free(out);
    destroy_event(e1);
    destroy_event(e2);
    destroy_stream(s);
    destroy_stream(joined);
    assert_eq!(r.made(), 1);
}

// ---- 4. uninitialised-read ("written-at-launch") ----------------------------------------

#[test]
fn reading_memory_only_a_capture_initialises_before_a_launch_is_an_uninitialised_read() {
    let r = setup();
    let (s, other) = (create_stream(), create_stream());
    let fresh = malloc(64);
    let m = captured_fill(s, fresh, 64, 6);
    let tail = |who: &str, what: &str, end: &str| {
        format!(
            "{who} reads {}, which only model {:#x} initialises: its captured aclrtMemsetAsync \
             (from {}) writes [{:#x}, {:#x}) and no launch of the model has been queued since, \
             so those bytes were never written (launch the model with aclmdlRIExecuteAsync \
             first, or initialise the memory before the capture). {end}",
            device_range(fresh, 32, what),
            m as usize,
            stream_ref(s),
            fresh as usize,
            fresh as usize + 64,
        )
    };
    // The host's synchronous copy out.
    let mut host = [0u8; 32];
    let want = format!(
        "aclrtMemcpy: CANN_SIM_CHECK uninitialised-read: {}",
        tail(
            "aclrtMemcpy (a synchronous access, on the host)",
            "src",
            "Nothing was done."
        )
    );
    assert_report(
        &r,
        1,
        memcpy(host.as_mut_ptr(), fresh, 32, ACL_MEMCPY_DEVICE_TO_HOST),
        NOT_COMPLETE,
        Kind::UninitialisedRead,
        &want,
    );
    // An eager task.
    let dst = written(32, 0);
    let want = format!(
        "aclrtMemcpyAsync: CANN_SIM_CHECK uninitialised-read: {}",
        tail(
            &format!("the new aclrtMemcpyAsync task #1 on {}", stream_ref(other)),
            "src",
            "The task was not queued."
        )
    );
    assert_report(
        &r,
        2,
        memcpy_async(dst, fresh, 32, ACL_MEMCPY_DEVICE_TO_DEVICE, other),
        NOT_COMPLETE,
        Kind::UninitialisedRead,
        &want,
    );
    // Once a launch is queued, the memory is written in stream order.
    ok(launch(m, s));
    ok(sync(s));
    assert_eq!(to_host(fresh, 64), [6; 64]);
    ok(memcpy_async(
        dst,
        fresh,
        32,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        other,
    ));
    ok(sync(other));
    assert_eq!(to_host(dst, 32), [6; 32]);
    assert_eq!(r.made(), 2, "no more");
    destroy(m);
    free(fresh);
    free(dst);
    destroy_stream(s);
    destroy_stream(other);
}

#[test]
fn memory_written_before_the_capture_or_after_it_is_readable_before_a_launch() {
    let r = setup();
    let s = create_stream();
    // Written before: reading the old value is defined.
    let before = written(64, 1);
    let m1 = captured_fill(s, before, 64, 2);
    assert_eq!(to_host(before, 64), [1; 64]);
    // Written after the capture, outside it: initialised, partly.
    let after = malloc(64);
    let m2 = captured_fill(s, after, 64, 3);
    ok(memcpy(
        after,
        [8u8; 16].as_ptr(),
        16,
        ACL_MEMCPY_HOST_TO_DEVICE,
    ));
    assert_eq!(to_host(after, 16), [8; 16]);
    assert_eq!(r.made(), 0);
    // The rest is still never written.
    let rest = after.wrapping_add(16);
    let msg = assert_fails(read_back(rest, 48), NOT_COMPLETE, "aclrtMemcpy");
    r.assert_made(1, Kind::UninitialisedRead, &msg);
    assert_contains(&msg, &format!("reads {}", device_range(rest, 48, "src")));
    assert_contains(
        &msg,
        &format!("writes [{:#x}, {:#x})", rest as usize, after as usize + 64),
    );
    destroy(m1);
    destroy(m2);
    free(before);
    free(after);
    destroy_stream(s);
    assert_eq!(r.made(), 1);
}

// ---- 5. a mark on a second stream that the first does not wait for ---------------------

#[test]
fn a_mark_recorded_on_a_second_stream_orders_nothing_until_the_first_waits_for_it() {
    let r = setup();
    let (first, second) = (create_stream(), create_stream());
    let d = written(64, 0);
    let h = malloc_host(64);
    let e = create_event();
    let release = block_stream(second);
    // Raw work on the second stream writes `d`; its mark is recorded there.
    ok(memset_async(d, 64, 2, second));
    record(e, second);
    // The first stream reads `d` without waiting for the mark.
    let got = memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, first);
    let want = format!(
        "aclrtMemcpyAsync: CANN_SIM_CHECK stream-race: the new aclrtMemcpyAsync task #1 on {} \
         reads {}, and aclrtMemsetAsync task #2 on {} writes {}; the task is still pending and \
         nothing orders the two (record an event on stream {} after aclrtMemsetAsync and make \
         stream {} wait for it with aclrtStreamWaitEvent, or synchronise first). The task was \
         not queued.",
        stream_ref(first),
        device_range(d, 64, "src"),
        stream_ref(second),
        device_range(d, 64, "devPtr"),
        stream_id(second),
        stream_id(first),
    );
    assert_report(&r, 1, got, NOT_COMPLETE, Kind::StreamRace, &want);
    // Waiting for the mark orders the read after the write.
    wait(first, e);
    ok(memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, first));
    release.send(()).unwrap();
    ok(sync(first));
    // SAFETY: `h` holds 64 bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(h, 64) }, [2; 64]);
    assert_eq!(r.made(), 1, "no more");
    destroy_event(e);
    free_host(h);
    free(d);
    destroy_stream(first);
    destroy_stream(second);
}

// ---- the correct program --------------------------------------------------------------

#[test]
fn a_correct_capture_launch_and_release_make_no_report() {
    let r = setup();
    let (s, joined, other) = (create_stream(), create_stream(), create_stream());
    let (e1, e2, done) = (ex_event(), ex_event(), create_event());
    let (input, tmp, out) = (written(64, 0), malloc(64), malloc(64));
    let h = malloc_host(64);
    // Captured: out = tmp = input + nothing, through a joined stream.
    begin(s);
    record(e1, s);
    wait(joined, e1);
    ok(memcpy_async(
        tmp,
        input,
        64,
        ACL_MEMCPY_DEVICE_TO_DEVICE,
        joined,
    ));
    record(e2, joined);
    wait(s, e2);
    ok(memcpy_async(out, tmp, 64, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ok(memcpy_async(h, out, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
    let m = end(s);
    for round in 1..=3u8 {
        ok(memset_async(input, 64, round.into(), other));
        record(done, other);
        wait(s, done);
        ok(launch(m, s));
        record(done, s);
        wait(other, done);
        ok(sync(s));
        // SAFETY: `h` holds 64 bytes; the launch is done.
        assert_eq!(unsafe { std::slice::from_raw_parts(h, 64) }, [round; 64]);
    }
    assert_eq!(to_host(out, 64), [3; 64]);
    destroy(m);
    for p in [input, tmp, out] {
        free(p);
    }
    free_host(h);
    for e in [e1, e2, done] {
        destroy_event(e);
    }
    for st in [s, joined, other] {
        destroy_stream(st);
    }
    assert_eq!(r.made(), 0, "{:#?}", check::reports());
}

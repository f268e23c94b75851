//! Host callbacks on the simulator: `aclrtLaunchCallback` run by the
//! subscribed thread's `aclrtProcessReport`, `aclrtLaunchHostFunc` run by the
//! context's host-function thread, blocking and non-blocking, and every
//! error code.
//!
//! Tests only set devices 0 and 1 and never reset them.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_DRV_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_REPORT_TIMEOUT, ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE, ACL_ERROR_RT_THREAD_SUBSCRIBE, ACL_MEMCPY_DEVICE_TO_HOST,
    aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::os::unix::thread::JoinHandleExt;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::{JoinHandle, ThreadId};
use std::time::Duration;

const STREAM_SUBSCRIBE: i32 = rc(ACL_ERROR_RT_STREAM_SUBSCRIBE);
const THREAD_SUBSCRIBE: i32 = rc(ACL_ERROR_RT_THREAD_SUBSCRIBE);

/// A user thread that runs `aclrtProcessReport` until stopped.
struct Reporter {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
    id: ThreadId,
}

impl Reporter {
    fn start() -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::Acquire) {
                if aclrtProcessReport(10) != 0 {
                    // Not subscribed yet, or nothing arrived: try again.
                    let _ = recent_error();
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        let id = handle.thread().id();
        Reporter { stop, handle, id }
    }

    /// The id `aclrtSubscribeReport` takes: the thread's `pthread_self()`.
    #[allow(
        clippy::unnecessary_cast,
        reason = "pthread_t is not u64 on every target"
    )]
    fn tid(&self) -> u64 {
        self.handle.as_pthread_t() as u64
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.handle.join().unwrap();
    }
}

fn subscribe(tid: u64, s: aclrtStream) -> i32 {
    // SAFETY: the handle is validated.
    unsafe { aclrtSubscribeReport(tid, s) }
}

fn unsubscribe(tid: u64, s: aclrtStream) -> i32 {
    // SAFETY: the handle is validated.
    unsafe { aclrtUnSubscribeReport(tid, s) }
}

#[test]
fn blocking_callback_runs_on_the_subscribed_thread_and_holds_the_stream() {
    use_device(0);
    let s = create_stream();
    let reporter = Reporter::start();
    ok(subscribe(reporter.tid(), s));
    let d = malloc(256);
    let host = malloc_host(256);
    // SAFETY: 256 writable pinned bytes.
    unsafe { std::ptr::write_bytes(host, 0, 256) };
    let (ran_tx, ran_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    ok(callback(s, true, move || {
        ran_tx.send(std::thread::current().id()).unwrap();
        release_rx.recv().unwrap();
    }));
    ok(memset_async(d, 256, 0x3C, s));
    ok(memcpy_async(host, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s));
    let ran_on = ran_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(
        ran_on, reporter.id,
        "the subscribed thread ran the callback"
    );
    std::thread::sleep(Duration::from_millis(10));
    assert!(!is_complete(s), "ACL_CALLBACK_BLOCK holds the stream");
    assert!(
        // SAFETY: 256 readable pinned bytes.
        unsafe { std::slice::from_raw_parts(host, 256) }
            .iter()
            .all(|&b| b == 0)
    );
    release_tx.send(()).unwrap();
    ok(sync(s));
    assert!(
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(host, 256) }
            .iter()
            .all(|&b| b == 0x3C)
    );
    ok(unsubscribe(reporter.tid(), s));
    reporter.stop();
    destroy_stream(s);
    free(d);
    free_host(host);
}

#[test]
fn non_blocking_callback_does_not_hold_the_stream() {
    use_device(0);
    let s = create_stream();
    let reporter = Reporter::start();
    ok(subscribe(reporter.tid(), s));
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    ok(callback(s, false, move || {
        release_rx.recv().unwrap();
        done_tx.send(()).unwrap();
    }));
    let d = malloc(64);
    ok(memset_async(d, 64, 1, s));
    ok(sync(s));
    assert!(is_complete(s));
    assert!(done_rx.try_recv().is_err(), "the callback is still running");
    release_tx.send(()).unwrap();
    done_rx.recv_timeout(Duration::from_secs(5)).unwrap();
    ok(unsubscribe(reporter.tid(), s));
    reporter.stop();
    destroy_stream(s);
    free(d);
}

#[test]
fn launch_callback_without_a_subscribed_thread_is_stream_no_cb_reg() {
    use_device(0);
    let s = create_stream();
    let msg = assert_fails(
        callback(s, true, || {}),
        rc(ACL_ERROR_RT_STREAM_NO_CB_REG),
        "aclrtLaunchCallback",
    );
    assert_contains(&msg, "aclrtSubscribeReport");
    destroy_stream(s);
}

#[test]
fn launch_callback_checks_block_type_function_and_context() {
    use_device(0);
    let s = create_stream();
    // SAFETY: the arguments are rejected before use.
    unsafe {
        let r = aclrtLaunchCallback(None, null_mut(), 2, s);
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtLaunchCallback");
        let r = aclrtLaunchCallback(None, null_mut(), 1, s);
        assert_fails(r, rc(ACL_ERROR_RT_PARAM_INVALID), "aclrtLaunchCallback");
    }
    let h = s as usize;
    on_new_thread(move || {
        let r = callback(h as aclrtStream, true, || {});
        assert_fails(r, rc(ACL_ERROR_RT_CONTEXT_NULL), "aclrtLaunchCallback");
    });
    destroy_stream(s);
}

#[test]
fn process_report_checks_its_timeout_subscription_and_times_out() {
    for bad in [0, -2] {
        assert_fails(
            aclrtProcessReport(bad),
            ACL_ERROR_INVALID_PARAM,
            "aclrtProcessReport",
        );
    }
    on_new_thread(|| {
        let msg = assert_fails(
            aclrtProcessReport(5),
            THREAD_SUBSCRIBE,
            "aclrtProcessReport",
        );
        assert_contains(&msg, "not subscribed");
    });
    use_device(0);
    let s = create_stream();
    let h = s as usize;
    on_new_thread(move || {
        #[allow(
            clippy::unnecessary_cast,
            reason = "pthread_t is not u64 on every target"
        )]
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        ok(subscribe(me, h as aclrtStream));
        assert_fails(
            aclrtProcessReport(10),
            rc(ACL_ERROR_RT_REPORT_TIMEOUT),
            "aclrtProcessReport",
        );
        ok(unsubscribe(me, h as aclrtStream));
    });
    destroy_stream(s);
}

#[test]
fn subscribe_and_unsubscribe_report_their_errors() {
    use_device(0);
    let (a, b) = (create_stream(), create_stream());
    let one = Reporter::start();
    let two = Reporter::start();
    ok(subscribe(one.tid(), a));
    ok(subscribe(one.tid(), b));
    let msg = assert_fails(
        subscribe(two.tid(), a),
        STREAM_SUBSCRIBE,
        "aclrtSubscribeReport",
    );
    assert_contains(&msg, "already bound");
    let msg = assert_fails(
        unsubscribe(two.tid(), a),
        THREAD_SUBSCRIBE,
        "aclrtUnSubscribeReport",
    );
    assert_contains(&msg, "is bound to thread");
    ok(unsubscribe(one.tid(), a));
    assert_fails(
        unsubscribe(one.tid(), a),
        STREAM_SUBSCRIBE,
        "aclrtUnSubscribeReport",
    );
    // One thread serves one device.
    let tid = one.tid();
    on_new_thread(move || {
        use_device(1);
        let other = create_stream();
        let msg = assert_fails(
            subscribe(tid, other),
            THREAD_SUBSCRIBE,
            "aclrtSubscribeReport",
        );
        assert_contains(&msg, "device 0");
        destroy_stream(other);
    });
    ok(unsubscribe(one.tid(), b));
    let gone = create_stream();
    destroy_stream(gone);
    assert_fails(
        subscribe(one.tid(), gone),
        rc(acl_sys::ACL_ERROR_RT_INVALID_HANDLE),
        "aclrtSubscribeReport",
    );
    one.stop();
    two.stop();
    destroy_stream(a);
    destroy_stream(b);
}

#[test]
fn the_two_callback_apis_cannot_be_mixed_on_one_stream() {
    use_device(0);
    let user = create_stream();
    let runtime = create_stream();
    let reporter = Reporter::start();
    ok(subscribe(reporter.tid(), user));
    assert_fails(
        host_fn(user, || {}),
        STREAM_SUBSCRIBE,
        "aclrtLaunchHostFunc",
    );
    ok(host_fn(runtime, || {}));
    ok(sync(runtime));
    assert_fails(
        callback(runtime, true, || {}),
        STREAM_SUBSCRIBE,
        "aclrtLaunchCallback",
    );
    assert_fails(
        subscribe(reporter.tid(), runtime),
        STREAM_SUBSCRIBE,
        "aclrtSubscribeReport",
    );
    ok(unsubscribe(reporter.tid(), user));
    reporter.stop();
    destroy_stream(user);
    destroy_stream(runtime);
}

#[test]
fn unsubscribing_cancels_callbacks_not_yet_run_and_the_stream_reports_it() {
    use_device(0);
    let s = create_stream();
    let idle = std::thread::spawn(std::thread::park);
    #[allow(
        clippy::unnecessary_cast,
        reason = "pthread_t is not u64 on every target"
    )]
    let tid = idle.as_pthread_t() as u64;
    ok(subscribe(tid, s));
    let called = Arc::new(AtomicBool::new(false));
    let flag = called.clone();
    let (launched, job) = callback_to_cancel(s, true, move || flag.store(true, Ordering::Release));
    ok(launched);
    std::thread::sleep(Duration::from_millis(10));
    assert!(!is_complete(s), "nobody processes the callback");
    ok(unsubscribe(tid, s));
    let msg = assert_fails(
        sync(s),
        rc(ACL_ERROR_RT_DRV_INTERNAL_ERROR),
        "aclrtSynchronizeStream",
    );
    assert_contains(&msg, "never called");
    assert!(!called.load(Ordering::Acquire));
    // SAFETY: the runtime said it cancelled the callback (LeakSanitizer
    // reported the job as leaked when the test left it).
    unsafe { free_cancelled(job) };
    ok(sync(s));
    idle.thread().unpark();
    idle.join().unwrap();
    destroy_stream(s);
}

#[test]
fn host_functions_run_in_order_on_one_thread_per_context() {
    use_device(0);
    let (a, b) = (create_stream(), create_stream());
    let (tx, rx) = mpsc::channel();
    for i in 0..4 {
        let tx = tx.clone();
        let s = if i % 2 == 0 { a } else { b };
        ok(host_fn(s, move || {
            tx.send((i, std::thread::current().id())).unwrap();
        }));
        ok(sync(s));
    }
    let got: Vec<(i32, ThreadId)> = rx.try_iter().collect();
    assert_eq!(
        got.iter().map(|g| g.0).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(
        got.iter().all(|g| g.1 == got[0].1),
        "one thread per context"
    );
    assert_ne!(got[0].1, std::thread::current().id());
    destroy_stream(a);
    destroy_stream(b);
}

#[test]
fn launch_host_func_checks_function_and_context() {
    use_device(0);
    let s = create_stream();
    // SAFETY: rejected before use.
    let r = unsafe { aclrtLaunchHostFunc(s, None, null_mut()) };
    assert_fails(r, rc(ACL_ERROR_RT_PARAM_INVALID), "aclrtLaunchHostFunc");
    let h = s as usize;
    on_new_thread(move || {
        assert_fails(
            host_fn(h as aclrtStream, || {}),
            rc(ACL_ERROR_RT_CONTEXT_NULL),
            "aclrtLaunchHostFunc",
        );
    });
    destroy_stream(s);
}

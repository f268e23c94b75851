//! Runtime control through the safe API: the last error, the overflow mode,
//! the operator wait timeout, device synchronisation with a timeout,
//! aborting a stream's or a device's work, and values written and awaited
//! in stream order.
//!
//! Device 3 belongs to the device-abort test (an abort reaches every stream
//! of its device); the others use devices 0 to 2.

mod common;

use acl::{Error, ErrorCode, OverflowMode, ValueCondition};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

fn on_new_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().unwrap()
}

#[test]
fn a_failed_runtime_call_is_the_threads_last_error_until_taken() {
    on_new_thread(|| {
        let rt = common::runtime();
        assert_eq!(rt.take_last_error().unwrap(), None);
        // 0 ms is refused by the runtime (107000).
        let err = acl::result::synchronize_device_with_timeout(0).unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid), "{err}");
        assert_eq!(
            rt.peek_last_error().unwrap(),
            Some(ErrorCode::RtParamInvalid)
        );
        assert_eq!(
            rt.take_last_error().unwrap(),
            Some(ErrorCode::RtParamInvalid)
        );
        assert_eq!(rt.take_last_error().unwrap(), None);
        // Per thread: another thread's failure is not this one's.
        on_new_thread(|| {
            let _ = acl::result::synchronize_device_with_timeout(0);
        });
        assert_eq!(rt.peek_last_error().unwrap(), None);
    });
}

#[test]
fn the_overflow_mode_is_process_wide_and_round_trips() {
    let rt = common::runtime();
    rt.set_overflow_mode(OverflowMode::Saturation).unwrap();
    let seen = on_new_thread(|| common::runtime().overflow_mode().unwrap());
    assert_eq!(seen, OverflowMode::Saturation);
    rt.set_overflow_mode(OverflowMode::InfNan).unwrap();
    assert_eq!(rt.overflow_mode().unwrap(), OverflowMode::InfNan);
}

#[test]
fn an_event_wait_past_the_op_wait_timeout_fails_with_the_task_timeout() {
    cann_sim::sim_only!("the code a timed-out wait reports on a device is not documented");
    let npu = common::device(0);
    let rt = npu.runtime().clone();
    let (slow, waiter) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let (release_tx, release_rx) = mpsc::channel::<()>();
    slow.launch_host_fn(move || {
        let _ = release_rx.recv_timeout(Duration::from_secs(10));
    })
    .unwrap();
    let after = slow.record_event().unwrap();
    rt.set_op_wait_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    waiter.wait_event(&after).unwrap();
    let err = waiter.synchronize().unwrap_err();
    rt.set_op_wait_timeout(None).unwrap();
    release_tx.send(()).unwrap();
    assert_eq!(err.code(), Some(ErrorCode::RtTaskTimeout), "{err}");
    slow.synchronize().unwrap();
    waiter.synchronize().unwrap();
}

#[test]
fn a_device_synchronisation_with_a_timeout_gives_up_then_succeeds() {
    let npu = common::device(1);
    let stream = npu.new_stream().unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = release_rx.recv_timeout(Duration::from_secs(10));
        })
        .unwrap();
    let err = npu
        .synchronize_timeout(Duration::from_millis(20))
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtStreamSyncTimeout), "{err}");
    release_tx.send(()).unwrap();
    npu.synchronize_timeout(Duration::from_secs(10)).unwrap();
    let err = npu.synchronize_timeout(Duration::ZERO).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
}

#[test]
fn a_stream_abort_drops_queued_work_and_the_stream_runs_again() {
    let npu = common::device(2);
    let stream = npu.new_stream().unwrap();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            started_tx.send(()).unwrap();
            let _ = release_rx.recv_timeout(Duration::from_secs(10));
        })
        .unwrap();
    let dropped = Arc::new(AtomicBool::new(false));
    let d = dropped.clone();
    stream
        .launch_host_fn(move || d.store(true, Ordering::SeqCst))
        .unwrap();
    started_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    stream.abort().unwrap();
    assert_eq!(
        Arc::strong_count(&dropped),
        1,
        "the aborted host function's closure is dropped, not leaked"
    );
    release_tx.send(()).unwrap();
    stream.synchronize().unwrap();
    assert!(
        !dropped.load(Ordering::SeqCst),
        "a host function queued behind the abort ran"
    );
    let again = Arc::new(AtomicBool::new(false));
    let a = again.clone();
    stream
        .launch_host_fn(move || a.store(true, Ordering::SeqCst))
        .unwrap();
    stream.synchronize().unwrap();
    assert!(again.load(Ordering::SeqCst), "the stream takes work again");
}

#[test]
fn a_device_task_abort_ends_the_waits_of_every_stream_of_the_device() {
    let npu = common::device(3);
    let (a, b) = (npu.new_stream().unwrap(), npu.default_stream());
    let mut word = a.alloc_zeros::<u64>(1).unwrap();
    let ptr = word.as_raw_mut_ptr();
    let ran = Arc::new(AtomicBool::new(false));
    for s in [&a, &b] {
        // SAFETY: 8 bytes of device memory of this device, alive (`word`)
        // until the streams are synchronised below.
        unsafe { s.wait_value(ptr, ValueCondition::Equal, 1) }.unwrap();
        let r = ran.clone();
        s.launch_host_fn(move || r.store(true, Ordering::SeqCst))
            .unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    npu.abort_tasks(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(
        Arc::strong_count(&ran),
        1,
        "the closures of both streams' aborted host functions are dropped, not leaked"
    );
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert!(!ran.load(Ordering::SeqCst), "work queued behind a wait ran");
    assert_eq!(word.to_host_vec().unwrap(), vec![0]);
    for bad in [Duration::ZERO, Duration::from_secs(36 * 60 + 1)] {
        let err = npu.abort_tasks(Some(bad)).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    }
    let err = acl::result::device_task_abort(3, 36 * 60 * 1000 + 1).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid), "{err}");
}

#[test]
fn a_device_task_abort_drops_a_streams_callbacks_and_the_stream_drops_at_once() {
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let mut word = stream.alloc_zeros::<u64>(1).unwrap();
    let ptr = word.as_raw_mut_ptr();
    // SAFETY: 8 bytes of device memory of this device, alive (`word`) until
    // the stream is synchronised below.
    unsafe { stream.wait_value(ptr, ValueCondition::Equal, 1) }.unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    stream
        .launch_callback(acl::CallbackMode::Blocking, move || {
            r.store(true, Ordering::SeqCst)
        })
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    npu.abort_tasks(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(
        Arc::strong_count(&ran),
        1,
        "the aborted callback is dropped"
    );
    stream.synchronize().unwrap();
    drop(word);
    // Teardown waits for callbacks still to run; an aborted one never will.
    let t = std::time::Instant::now();
    drop(stream);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "dropping the stream waited {:?} for an aborted callback",
        t.elapsed()
    );
    assert!(!ran.load(Ordering::SeqCst), "the aborted callback ran");
}

#[test]
fn a_value_wait_holds_its_stream_until_another_stream_writes_the_value() {
    let npu = common::device(0);
    let (waiter, writer) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let mut word = waiter.alloc_zeros::<u64>(1).unwrap();
    waiter.synchronize().unwrap();
    let ptr = word.as_raw_mut_ptr();
    let ran = Arc::new(AtomicBool::new(false));
    // SAFETY: 8 bytes of device memory of this device, alive until both
    // streams are synchronised below.
    unsafe { waiter.wait_value(ptr, ValueCondition::GreaterOrEqual, 7) }.unwrap();
    let r = ran.clone();
    waiter
        .launch_host_fn(move || r.store(true, Ordering::SeqCst))
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        !ran.load(Ordering::SeqCst),
        "the wait ended before the write"
    );
    // SAFETY: as above.
    unsafe { writer.write_value(ptr, 7) }.unwrap();
    writer.synchronize().unwrap();
    waiter.synchronize().unwrap();
    assert!(ran.load(Ordering::SeqCst));
    assert_eq!(word.to_host_vec().unwrap(), vec![7]);
    let mut host = 0u64;
    // SAFETY: refused (host memory) before anything is queued.
    let err = unsafe { waiter.write_value((&raw mut host).cast(), 1) }.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid), "{err}");
}

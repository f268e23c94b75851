//! Streams, events and host functions on the simulator: real asynchrony,
//! ordering across streams, timing, and every misuse with its exact error.

mod common;

use acl::{Error, ErrorCode, Event, EventFlags, SignedDuration, Stream, StreamConfig};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn host_fn_runs_later_and_blocks_the_stream_until_it_returns() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (ran_tx, ran_rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            ran_tx.send(()).unwrap();
            release_rx.recv().unwrap();
        })
        .unwrap();
    ran_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("host fn ran");
    assert!(
        !stream.is_complete().unwrap(),
        "the stream waits for the host fn"
    );
    release_tx.send(()).unwrap();
    stream.synchronize().unwrap();
    assert!(stream.is_complete().unwrap());
}

#[test]
fn panicking_host_fn_surfaces_at_synchronize_once() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    stream
        .launch_host_fn(|| panic!("boom in a host fn"))
        .unwrap();
    let err = stream.synchronize().unwrap_err();
    assert_eq!(
        err,
        Error::HostFunctionPanicked {
            message: "boom in a host fn".into()
        }
    );
    stream.synchronize().expect("reported once");
}

#[test]
fn calling_acl_from_a_host_fn_is_refused_instead_of_deadlocking() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel();
    let inner = stream.clone();
    stream
        .launch_host_fn(move || {
            tx.send(inner.synchronize()).unwrap();
        })
        .unwrap();
    stream.synchronize().unwrap();
    let got = rx.recv().unwrap();
    assert!(
        matches!(&got, Err(Error::InvalidArgument { function: "Device::bind", reason }) if reason.contains("host function")),
        "{got:?}"
    );
}

/// Two timed events on a new stream of device 1, 30 ms of work apart, both
/// complete (the stream is returned so that it outlives them).
fn events_30ms_apart() -> (Stream, Event, Event) {
    let stream = common::device(1).new_stream().unwrap();
    let start = stream.record_event().unwrap();
    stream
        .launch_host_fn(|| std::thread::sleep(Duration::from_millis(30)))
        .unwrap();
    let end = stream.record_event().unwrap();
    end.synchronize().unwrap();
    (stream, start, end)
}

#[test]
fn timed_events_measure_work_between_them() {
    cann_sim::require_devices!(2);
    let (_stream, start, end) = events_30ms_apart();
    assert!(start.is_complete().unwrap() && end.is_complete().unwrap());
    let dt = end.elapsed_since(&start).unwrap();
    assert!(!dt.is_negative(), "{dt:?}");
    let dt = dt.to_duration().unwrap();
    assert!(dt >= Duration::from_millis(25), "{dt:?}");
    assert!(dt < Duration::from_secs(5), "{dt:?}");
}

#[test]
fn elapsed_with_the_start_after_the_end_is_negative_not_an_error() {
    cann_sim::require_devices!(2);
    let (_stream, earlier, later) = events_30ms_apart();
    let forward = later.elapsed_since(&earlier).unwrap();
    let backward = earlier.elapsed_since(&later).unwrap();
    assert!(backward.is_negative(), "{backward:?}");
    assert_eq!(backward.to_duration(), None);
    assert!(
        backward <= -SignedDuration::from(Duration::from_millis(25)),
        "{backward:?}"
    );
    // The same interval both ways, up to the f32 milliseconds' rounding.
    assert!(
        (forward.as_nanos() + backward.as_nanos()).abs() <= 1_000,
        "{forward:?} vs {backward:?}"
    );
    assert!((backward.as_millis_f64() + forward.as_millis_f64()).abs() < 1e-3);
}

#[test]
fn elapsed_without_timing_flag_is_rejected() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let stream = npu.default_stream();
    let a = Event::new(&npu, EventFlags::SYNC).unwrap();
    let b = stream.record_event().unwrap();
    a.record(&stream).unwrap();
    stream.synchronize().unwrap();
    let err = b.elapsed_since(&a).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "Event::elapsed_since",
            reason: "the start event was created without EventFlags::TIMING".into()
        }
    );
}

#[test]
fn elapsed_on_an_incomplete_event_is_timestamp_invalid() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let start = stream.record_event().unwrap();
    stream.launch_host_fn(move || rx.recv().unwrap()).unwrap();
    let end = stream.record_event().unwrap();
    let err = end.elapsed_since(&start).unwrap_err();
    assert_eq!(
        err.code(),
        Some(ErrorCode::RtEventTimestampInvalid),
        "{err}"
    );
    tx.send(()).unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn wait_event_orders_one_stream_after_another() {
    cann_sim::require_devices!(3);
    let npu = common::device(2);
    let a = npu.new_stream().unwrap();
    let b = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    a.launch_host_fn(move || rx.recv().unwrap()).unwrap();
    let ev = a.record_event().unwrap();
    b.wait_event(&ev).unwrap();
    let marker = b.record_event().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!marker.is_complete().unwrap(), "b waits for a");
    tx.send(()).unwrap();
    marker.synchronize().unwrap();
}

#[test]
fn wait_on_an_event_without_sync_flag_is_rejected() {
    cann_sim::require_devices!(3);
    let npu = common::device(2);
    let ev = Event::new(&npu, EventFlags::TIMING).unwrap();
    let err = npu.default_stream().wait_event(&ev).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "Stream::wait_event",
            reason: "the event was created without EventFlags::SYNC (or EventFlags::IPC)".into()
        }
    );
}

#[test]
fn recording_on_a_stream_of_another_device_is_rejected() {
    cann_sim::require_devices!(2);
    let ev = Event::new(&common::device(0), EventFlags::default()).unwrap();
    let other = common::device(1).default_stream();
    let err = ev.record(&other).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "Event::record",
            reason: "the event belongs to device 0 and the stream to device 1".into()
        }
    );
}

#[test]
fn synchronize_with_timeout_times_out_with_the_runtime_code() {
    cann_sim::require_devices!(4);
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    stream.launch_host_fn(move || rx.recv().unwrap()).unwrap();
    let err = stream
        .synchronize_timeout(Duration::from_millis(20))
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtStreamSyncTimeout), "{err}");
    let ev = stream.record_event().unwrap();
    let err = ev
        .synchronize_timeout(Duration::from_millis(20))
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtEventSyncTimeout), "{err}");
    tx.send(()).unwrap();
    stream.synchronize_timeout(Duration::from_secs(10)).unwrap();
}

#[test]
fn zero_timeout_is_rejected_before_the_runtime() {
    cann_sim::require_devices!(4);
    let stream = common::device(3).default_stream();
    let err = stream.synchronize_timeout(Duration::ZERO).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "Stream::synchronize_timeout",
            reason: "the timeout must be at least 1 ms".into()
        }
    );
}

#[test]
fn unknown_stream_flags_are_rejected_before_the_runtime_ignores_them() {
    cann_sim::require_devices!(4);
    let npu = common::device(3);
    let err = Stream::new(
        &npu,
        StreamConfig {
            priority: 0,
            flags: 0x8000_0000,
        },
    )
    .unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "Stream::new",
            reason: "unknown stream flag bits 0x80000000 (known: 0x3f)".into()
        }
    );
}

#[test]
fn stream_with_priority_and_known_flags_works() {
    cann_sim::require_devices!(4);
    let npu = common::device(3);
    let s = Stream::new(
        &npu,
        StreamConfig {
            priority: 3,
            flags: acl_sys::ACL_STREAM_FAST_LAUNCH,
        },
    )
    .unwrap();
    s.synchronize().unwrap();
}

#[test]
fn invalid_event_flags_are_param_invalid() {
    cann_sim::require_devices!(4);
    let err = Event::new(&common::device(3), EventFlags::from_bits(0)).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid), "{err}");
}

#[test]
fn streams_and_events_work_from_foreign_threads() {
    cann_sim::require_devices!(5);
    let npu = common::device(4);
    let stream = npu.new_stream().unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let stream = stream.clone();
            s.spawn(move || {
                let ev = stream.record_event().unwrap();
                ev.synchronize().unwrap();
                stream.synchronize().unwrap();
            });
        }
    });
}

#[test]
fn default_stream_handles_compare_equal() {
    cann_sim::require_devices!(5);
    let npu = common::device(4);
    assert_eq!(npu.default_stream(), npu.default_stream());
    assert!(npu.default_stream().is_default());
    let s = npu.new_stream().unwrap();
    assert_ne!(s, npu.default_stream());
    assert_eq!(s, s.clone());
}

#[test]
fn blocking_callback_runs_later_and_holds_back_the_stream() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    let stream = npu.new_stream().unwrap();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (ran_tx, ran_rx) = mpsc::channel::<std::thread::ThreadId>();
    stream
        .launch_callback(acl::CallbackMode::Blocking, move || {
            ran_tx.send(std::thread::current().id()).unwrap();
            release_rx.recv().unwrap();
        })
        .unwrap();
    let marker = stream.record_event().unwrap();
    let ran_on = ran_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("callback ran");
    assert_ne!(ran_on, std::thread::current().id());
    assert!(
        !marker.is_complete().unwrap(),
        "later work waits for a blocking callback"
    );
    release_tx.send(()).unwrap();
    stream.synchronize().unwrap();
    assert!(marker.is_complete().unwrap());
}

#[test]
fn callbacks_on_the_default_stream_and_panics_are_reported() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    let stream = npu.default_stream();
    let (tx, rx) = mpsc::channel();
    stream
        .launch_callback(acl::CallbackMode::NonBlocking, move || tx.send(42).unwrap())
        .unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 42);
    stream
        .launch_callback(acl::CallbackMode::Blocking, || panic!("callback boom"))
        .unwrap();
    assert_eq!(
        stream.synchronize().unwrap_err(),
        Error::HostFunctionPanicked {
            message: "callback boom".into()
        }
    );
}

#[test]
fn one_stream_cannot_mix_host_fns_and_callbacks() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    let a = npu.new_stream().unwrap();
    a.launch_host_fn(|| {}).unwrap();
    assert_eq!(
        a.launch_callback(acl::CallbackMode::Blocking, || {}).unwrap_err(),
        Error::InvalidArgument {
            function: "Stream::launch_callback",
            reason: "this stream runs host functions (launch_host_fn); the runtime does not allow callbacks on it too".into()
        }
    );
    let b = npu.new_stream().unwrap();
    b.launch_callback(acl::CallbackMode::Blocking, || {})
        .unwrap();
    assert!(matches!(
        b.launch_host_fn(|| {}),
        Err(Error::InvalidArgument {
            function: "Stream::launch_host_fn",
            ..
        })
    ));
    a.synchronize().unwrap();
    b.synchronize().unwrap();
}

#[test]
fn wait_for_orders_a_stream_after_another_without_blocking_the_host() {
    cann_sim::require_devices!(7);
    let npu = common::device(6);
    let a = npu.new_stream().unwrap();
    let b = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    a.launch_host_fn(move || rx.recv().unwrap()).unwrap();
    b.wait_for(&a).unwrap();
    let marker = b.record_event().unwrap();
    assert!(!marker.is_complete().unwrap());
    tx.send(()).unwrap();
    marker.synchronize().unwrap();
    npu.synchronize().unwrap();
}

#[test]
fn event_flags_combine_and_report() {
    cann_sim::require_devices!(7);
    let f = EventFlags::SYNC | EventFlags::TIMING;
    assert!(f.contains(EventFlags::SYNC) && f.contains(EventFlags::TIMING));
    assert!(!f.contains(EventFlags::DEVICE_USE_ONLY));
    assert_eq!(f, EventFlags::default());
    assert_eq!(EventFlags::from_bits(f.bits()), f);
    let npu = common::device(6);
    let ev = Event::new(&npu, EventFlags::SYNC).unwrap();
    assert_eq!(ev.flags(), EventFlags::SYNC);
    assert_eq!(ev.device(), &npu);
    assert!(!ev.as_raw().is_null());
}

#[test]
fn a_callback_may_own_and_drop_the_last_device_handle() {
    cann_sim::require_devices!(8);
    let npu = common::device(7);
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = mpsc::channel();
    let owned = npu.clone();
    stream
        .launch_callback(acl::CallbackMode::NonBlocking, move || {
            drop(owned);
            tx.send(()).unwrap();
        })
        .unwrap();
    drop(npu);
    drop(stream); // the callback thread now holds the last handle
    rx.recv_timeout(Duration::from_secs(5))
        .expect("callback ran and dropped the device");
}

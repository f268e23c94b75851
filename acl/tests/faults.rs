//! Every failing runtime call of the safe layer, forced by the simulator's
//! fault injection: the error comes back with its code and function, nothing
//! leaks (the simulator's tables are as before), and no half-built object
//! remains.
//!
//! Injected faults count calls process-wide, so the tests of this binary run
//! one at a time.

mod common;

use acl::{
    Device, DeviceBuffer, Error, ErrorCode, Event, EventFlags, PinnedHostBuffer, Stream,
    StreamConfig,
};
use cann_sim::faults;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

static SERIAL: Mutex<()> = Mutex::new(());

/// Held for a whole test: injected faults and the simulator's statistics are
/// process-wide.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// The simulator's figures once releases still in flight from earlier tests
/// (streams whose last handle a mark held, frees waiting for events) have
/// landed: two equal readings 20 ms apart.
fn settled_stats() -> cann_sim::Stats {
    let mut last = cann_sim::stats();
    for _ in 0..100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = cann_sim::stats();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// Runs `f` with `api`'s next call failing with `code`; checks the error and
/// that the simulator's live objects are unchanged afterwards.
fn fails_cleanly<T: std::fmt::Debug>(
    api: &'static str,
    code: i32,
    f: impl FnOnce() -> acl::Result<T>,
) {
    let before = settled_stats();
    faults::clear();
    faults::inject(api, 1, code);
    let outcome = f();
    faults::clear();
    let err = outcome.expect_err("the injected fault must surface");
    assert_eq!(err.code(), Some(ErrorCode::from_raw(code)), "{err}");
    assert_eq!(err.function(), Some(api), "{err}");
    assert!(
        err.message().is_some_and(|m| m.contains("injected fault")),
        "{err}"
    );
    let after = cann_sim::stats();
    for (d, (b, a)) in before.devices.iter().zip(&after.devices).enumerate() {
        assert_eq!(
            (b.allocations, b.streams, b.events, b.hbm_used),
            (a.allocations, a.streams, a.events, a.hbm_used),
            "device {d} changed after a failed {api}"
        );
    }
    assert_eq!(before.host_allocations, after.host_allocations);
}

const OOM: i32 = acl_sys::ACL_ERROR_RT_MEMORY_ALLOCATION as i32;
const PARAM: i32 = acl_sys::ACL_ERROR_RT_PARAM_INVALID as i32;

#[test]
fn device_open_fails_at_set_device_and_at_context_query_without_leaking_a_reference() {
    cann_sim::sim_only!("reads the simulator's statistics (cann_sim::stats)");
    let _serial = serial();
    let rt = common::runtime();
    fails_cleanly("aclrtSetDevice", PARAM, || Device::new(&rt, 5));
    let refs = |s: &cann_sim::Stats| s.devices[5].device_refs;
    let before = refs(&cann_sim::stats());
    fails_cleanly("aclrtGetCurrentContext", PARAM, || Device::new(&rt, 5));
    assert_eq!(refs(&cann_sim::stats()), before, "the retain was undone");
}

#[test]
fn stream_and_event_creation_failures() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(1);
    fails_cleanly("aclrtCreateStreamWithConfig", PARAM, || {
        Stream::new(&npu, StreamConfig::default())
    });
    // Synchronising events are made by the Ex variant (CANN 8.0.RC2+).
    fails_cleanly("aclrtCreateEventExWithFlag", PARAM, || {
        Event::new(&npu, EventFlags::default())
    });
    fails_cleanly("aclrtCreateEventWithFlag", PARAM, || {
        Event::new(&npu, EventFlags::TIMING)
    });
}

#[test]
fn allocation_failures_leave_nothing_allocated() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(1);
    fails_cleanly("aclrtMalloc", OOM, || {
        DeviceBuffer::<u8>::zeroed(&npu, 1024)
    });
    fails_cleanly("aclrtMemsetAsync", PARAM, || {
        DeviceBuffer::<u8>::zeroed(&npu, 1024)
    });
    fails_cleanly("aclrtMemcpy", PARAM, || {
        DeviceBuffer::from_host(&npu, &[1u8; 64])
    });
    fails_cleanly("aclrtMallocHost", OOM, || {
        PinnedHostBuffer::<u8>::zeroed(&npu, 1024)
    });
}

#[test]
fn copy_and_sync_failures_report_the_call() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(2);
    let stream = npu.new_stream().unwrap();
    let src = PinnedHostBuffer::from_slice(&npu, &[1u8; 64]).unwrap();
    let mut dst = stream.alloc_zeros::<u8>(64).unwrap();
    fails_cleanly("aclrtMemcpyAsync", PARAM, || {
        stream.copy_htod(&src, &mut dst)
    });
    fails_cleanly("aclrtSynchronizeStream", PARAM, || stream.synchronize());
    fails_cleanly("aclrtStreamQuery", PARAM, || stream.is_complete());
    let ev = stream.record_event().unwrap();
    fails_cleanly("aclrtRecordEvent", PARAM, || ev.record(&stream));
    fails_cleanly("aclrtQueryEventStatus", PARAM, || ev.is_complete());
    fails_cleanly("aclrtSynchronizeEvent", PARAM, || ev.synchronize());
    fails_cleanly("aclrtStreamWaitEvent", PARAM, || stream.wait_event(&ev));
    // Ordering across streams: `other` must wait for the fill of `dst`
    // queued on `stream`; when that wait cannot be queued, the copy is not
    // queued either (and the pooled event goes back).
    let other = npu.new_stream().unwrap();
    let mut warm = stream.alloc_zeros::<u8>(64).unwrap();
    other.copy_htod(&src, &mut warm).unwrap();
    fails_cleanly("aclrtStreamWaitEvent", PARAM, || {
        other.copy_htod(&src, &mut dst)
    });
    assert_eq!(
        dst.to_host_vec().unwrap(),
        vec![0u8; 64],
        "no failed copy ran"
    );
}

#[test]
fn failed_host_fn_launch_drops_the_closure_without_running_it() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let guard = OnDrop(dropped.clone());
    let flag = ran.clone();
    fails_cleanly("aclrtLaunchHostFunc", PARAM, || {
        stream.launch_host_fn(move || {
            let _g = &guard;
            flag.store(true, Ordering::SeqCst);
        })
    });
    stream.synchronize().unwrap();
    assert!(!ran.load(Ordering::SeqCst));
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn failed_release_in_drop_is_recorded_not_panicked() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(4);
    let buf = DeviceBuffer::<u8>::zeroed(&npu, 64).unwrap();
    // Reading it waits for the queued fill, so nothing delays the free.
    assert_eq!(buf.to_host_vec().unwrap(), [0; 64]);
    let _ = acl::take_release_errors();
    faults::clear();
    faults::inject("aclrtFree", 1, PARAM);
    drop(buf);
    faults::clear();
    let errors = acl::take_release_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].resource, "DeviceBuffer");
    assert_eq!(errors[0].error.function(), Some("aclrtFree"));
    let _ = Error::from_code("test", 0); // the crate's API stays usable
}

#[test]
fn a_pooled_pinned_buffer_dropped_where_the_context_cannot_be_bound_still_returns_to_its_pool() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(0);
    let pool = acl::memory::PinnedPool::new(&npu);
    let staging = pool.from_slice(&[3u32; 1024]).unwrap();
    assert_eq!(pool.stats().in_use_bytes, 4096);
    faults::clear();
    // A fresh thread has no context bound: a bind there calls the runtime.
    faults::inject("aclrtSetCurrentContext", 1, 107002);
    std::thread::spawn(move || drop(staging)).join().unwrap();
    faults::clear();
    let st = pool.stats();
    assert_eq!(
        (st.in_use_bytes, st.cached_bytes),
        (0, 4096),
        "the block came back: {st:?}"
    );
    // And it is reused.
    let again = pool.zeroed::<u32>(1024).unwrap();
    assert_eq!(pool.stats().reuses, 1);
    drop(again);
}

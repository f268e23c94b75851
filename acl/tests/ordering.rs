//! The memory model under adversarial safe code: per-allocation access
//! tracking, overlap between streams, host access racing queued work,
//! recycled memory, and errors half-way. Each test states what it proves.

mod common;

use acl::allocator::AllocatorConfig;
use acl::{Device, DeviceBuffer, PinnedHostBuffer, Runtime, Stream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

/// Tests that fault-inject or count device-wide state run one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Blocks `stream` behind a host function until the returned sender is
/// dropped or sent to.
fn block(stream: &Stream) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv_timeout(Duration::from_secs(30));
        })
        .unwrap();
    tx
}

/// Puts the device in multi-stream mode: both streams queue tracked work.
fn warm_up(a: &Stream, b: &Stream) {
    for s in [a, b] {
        let mut x = s.alloc_zeros::<u8>(16).unwrap();
        s.memset(&mut x, 1).unwrap();
    }
}

#[test]
fn one_device_per_ordinal_shares_allocator_and_events() {
    cann_sim::require_devices!(3);
    let rt = common::runtime();
    let a = Device::new(&rt, 2).unwrap();
    let b = rt.device(2).unwrap();
    assert_eq!(a, b, "the same device, not a second handle to it");
    // An event of one handle records on a stream of the other.
    let s = b.new_stream().unwrap();
    let ev = acl::Event::new(&a, acl::EventFlags::SYNC).unwrap();
    ev.record(&s).unwrap();
    ev.synchronize().unwrap();
}

#[test]
fn h2d_on_an_idle_stream_does_not_wait_for_a_busy_stream() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let (compute, copy) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&compute, &copy);
    // The destination was last written on `compute`, and `compute` will
    // read a buffer last written on `copy`: neither conflicts with the copy.
    let mut dst = compute.alloc_zeros::<f32>(1024).unwrap();
    let other = copy.alloc_zeros::<f32>(1024).unwrap();
    compute.synchronize().unwrap();
    let release = block(&compute);
    let mut sink = compute.alloc_zeros::<f32>(1024).unwrap();
    compute.copy_dtod(&other, &mut sink).unwrap();
    let host = PinnedHostBuffer::from_slice(&npu, &[5.0f32; 1024]).unwrap();
    copy.copy_htod(&host, &mut dst).unwrap();
    copy.synchronize_timeout(Duration::from_secs(5))
        .expect("the copy must not wait for the busy stream");
    assert!(!compute.is_complete().unwrap(), "compute is still busy");
    drop(release);
    assert_eq!(dst.to_host_vec().unwrap(), vec![5.0; 1024]);
}

#[test]
fn a_read_on_another_stream_waits_for_the_queued_write() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&a, &b);
    let mut x = a.alloc_zeros::<u32>(256).unwrap();
    let release = block(&a);
    a.memset(&mut x, 0x11).unwrap();
    let mut out = PinnedHostBuffer::<u32>::zeroed(&npu, 256).unwrap();
    b.copy_dtoh(&x, &mut out).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !b.is_complete().unwrap(),
        "b waits for a's write, on the device"
    );
    drop(release);
    assert_eq!(out.as_slice().unwrap(), vec![0x1111_1111; 256]);
}

#[test]
fn a_write_on_another_stream_waits_for_every_queued_read() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let (a, b, c) = (
        npu.new_stream().unwrap(),
        npu.new_stream().unwrap(),
        npu.new_stream().unwrap(),
    );
    warm_up(&a, &b);
    let mut x = c.clone_from_host(&[3u8; 64]).unwrap();
    let (ra, rb) = (block(&a), block(&b));
    let mut pa = PinnedHostBuffer::<u8>::zeroed(&npu, 64).unwrap();
    let mut pb = PinnedHostBuffer::<u8>::zeroed(&npu, 64).unwrap();
    a.copy_dtoh(&x, &mut pa).unwrap();
    b.copy_dtoh(&x, &mut pb).unwrap();
    c.memset(&mut x, 9).unwrap();
    drop((ra, rb));
    assert_eq!(pa.as_slice().unwrap(), [3u8; 64], "a read before the write");
    assert_eq!(pb.as_slice().unwrap(), [3u8; 64], "b read before the write");
    assert_eq!(x.to_host_vec().unwrap(), [9u8; 64]);
}

#[test]
fn pinned_views_on_two_threads_both_wait_for_the_pending_copy() {
    cann_sim::require_devices!(4);
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let src = stream.clone_from_host(&[7u64; 4096]).unwrap();
    let mut pinned = PinnedHostBuffer::<u64>::zeroed(&npu, 4096).unwrap();
    let release = block(&stream);
    stream.copy_dtoh(&src, &mut pinned).unwrap();
    let done = [AtomicBool::new(false), AtomicBool::new(false)];
    std::thread::scope(|scope| {
        for flag in &done {
            let pinned = &pinned;
            scope.spawn(move || {
                let view = pinned.as_slice().unwrap();
                assert!(
                    view.iter().all(|&v| v == 7),
                    "a view saw the copy unfinished"
                );
                flag.store(true, Ordering::SeqCst);
            });
        }
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            done.iter().all(|d| !d.load(Ordering::SeqCst)),
            "no view before the copy has run"
        );
        drop(release);
    });
}

#[test]
fn a_failed_wait_keeps_the_pending_copy() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let src = stream.clone_from_host(&[7u8; 256]).unwrap();
    let mut pinned = PinnedHostBuffer::<u8>::zeroed(&npu, 256).unwrap();
    let release = block(&stream);
    stream.copy_dtoh(&src, &mut pinned).unwrap();
    cann_sim::faults::inject("aclrtSynchronizeStream", 1, 107000);
    cann_sim::faults::inject("aclrtSynchronizeEvent", 1, 107000);
    let first = pinned.as_slice().map(|s| s.to_vec());
    cann_sim::faults::clear();
    assert!(first.is_err(), "the wait failed: {first:?}");
    drop(release);
    assert_eq!(pinned.as_slice().unwrap(), [7u8; 256], "waited again");
}

#[test]
fn a_recycled_block_is_not_overwritten_while_queued_work_reads_it() {
    cann_sim::require_devices!(5);
    let npu = common::device(4);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let stream = npu.new_stream().unwrap();
    let a = stream.clone_from_host(&[1.0f32; 256]).unwrap();
    let addr = a.as_raw_ptr();
    let mut out = PinnedHostBuffer::<f32>::zeroed(&npu, 256).unwrap();
    let release = block(&stream);
    stream.copy_dtoh(&a, &mut out).unwrap();
    drop(a); // back to the stream's pool while the copy is queued
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(release);
    });
    let b = stream.clone_from_host(&[2.0f32; 256]).unwrap();
    releaser.join().unwrap();
    assert_eq!(b.as_raw_ptr(), addr, "the same block");
    assert_eq!(
        out.as_slice().unwrap(),
        vec![1.0; 256],
        "the queued read saw 1.0"
    );
    assert_eq!(b.to_host_vec().unwrap(), vec![2.0; 256]);
}

#[test]
fn a_failed_event_record_after_queued_work_still_orders_the_free() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _serial = serial();
    let npu = common::device(5);
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&a, &b);
    // Written on `a`, then filled on `b` behind a blocked host function:
    // recording the fill's access (an event on `b`) fails after the fill
    // was queued.
    let mut x = a.alloc_zeros::<u8>(1 << 20).unwrap();
    a.synchronize().unwrap();
    let release = block(&b);
    cann_sim::faults::inject("aclrtRecordEvent", 1, 207007);
    b.memset(&mut x, 5).expect("the fill was queued");
    cann_sim::faults::clear();
    drop(x); // must not free under the queued fill
    drop(release);
    b.synchronize().expect("the queued fill found its memory");
    npu.synchronize().unwrap();
}

#[test]
fn dropping_a_buffer_never_waits_and_frees_after_its_work() {
    cann_sim::require_devices!(6);
    let _serial = serial();
    let npu = common::device(5);
    let stream = npu.new_stream().unwrap();
    let before = npu.memory_info().unwrap().free_bytes;
    let mut x = stream.alloc_zeros::<u8>(8 << 20).unwrap();
    let release = block(&stream);
    stream.memset(&mut x, 1).unwrap();
    drop(x); // returns at once
    assert!(
        npu.memory_info().unwrap().free_bytes < before,
        "still in use"
    );
    drop(release);
    npu.synchronize().unwrap();
    assert_eq!(npu.memory_info().unwrap().free_bytes, before);
}

#[test]
fn a_buffer_dropped_inside_a_host_function_is_freed_after_it() {
    cann_sim::require_devices!(6);
    let _serial = serial();
    let npu = common::device(5);
    let stream = npu.new_stream().unwrap();
    let before = npu.memory_info().unwrap().free_bytes;
    let x = stream.alloc_zeros::<u8>(4 << 20).unwrap();
    stream.launch_host_fn(move || drop(x)).unwrap();
    stream.synchronize().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while npu.memory_info().unwrap().free_bytes != before {
        assert!(std::time::Instant::now() < deadline, "never freed");
        std::thread::sleep(Duration::from_millis(5));
        npu.synchronize().unwrap();
    }
}

#[test]
fn device_synchronize_waits_for_every_stream() {
    cann_sim::require_devices!(7);
    let npu = common::device(6);
    let flags: Vec<Arc<AtomicBool>> = (0..3).map(|_| Arc::default()).collect();
    let streams: Vec<Stream> = (0..3).map(|_| npu.new_stream().unwrap()).collect();
    for (s, f) in streams.iter().zip(&flags) {
        let f = f.clone();
        s.launch_host_fn(move || {
            std::thread::sleep(Duration::from_millis(30));
            f.store(true, Ordering::SeqCst);
        })
        .unwrap();
    }
    npu.synchronize().unwrap();
    assert!(flags.iter().all(|f| f.load(Ordering::SeqCst)));
}

#[test]
fn cross_device_waits_are_refused_while_the_work_is_queued() {
    cann_sim::require_devices!(8);
    let rt = common::runtime();
    let (d0, d1) = (rt.device(6).unwrap(), rt.device(7).unwrap());
    d1.enable_peer_access(&d0).unwrap();
    let s0 = d0.new_stream().unwrap();
    let s1 = d1.new_stream().unwrap();
    let src = s0.clone_from_host(&[4u32; 64]).unwrap();
    let mut src = src;
    let release = block(&s0);
    s0.memset(&mut src, 0).unwrap();
    let mut dst = s1.alloc_zeros::<u32>(64).unwrap();
    let e = s1.copy_dtod(&src, &mut dst).unwrap_err();
    assert!(
        e.to_string()
            .contains("CANN cannot make a stream of device 7 wait"),
        "{e}"
    );
    let e = s1.wait_for(&s0).unwrap_err();
    assert!(
        e.to_string().contains("synchronize the other stream first"),
        "{e}"
    );
    drop(release);
    s0.synchronize().unwrap();
    s1.copy_dtod(&src, &mut dst)
        .expect("finished work needs no wait");
    s1.wait_for(&s0).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), [0u32; 64]);
}

#[test]
fn allocator_handle_keeps_its_device_and_raw_access_is_unsafe() {
    cann_sim::require_devices!(5);
    let rt = common::runtime();
    let npu = rt.device(4).unwrap();
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let handle = npu.caching_allocator().unwrap();
    drop(npu);
    let _b = DeviceBuffer::<u8>::zeroed(handle.device(), 100).unwrap();
    assert!(handle.stats().aggregate.allocations.current >= 1);
    drop(_b);
    handle.device().synchronize().unwrap();
    let _ = Runtime::init().unwrap();
}

#[test]
fn a_host_function_touching_memory_another_thread_waits_for_cannot_deadlock() {
    cann_sim::require_devices!(4);
    let npu = common::device(3);
    let stream = npu.new_stream().unwrap();
    let src = stream.clone_from_host(&[9u8; 64]).unwrap();
    let mut pinned = PinnedHostBuffer::<u8>::zeroed(&npu, 64).unwrap();
    let release = block(&stream);
    stream.copy_dtoh(&src, &mut pinned).unwrap();
    let pinned = Arc::new(pinned);
    // Queued after the copy: reads the buffer inside a host function.
    let (in_fn_tx, in_fn_rx) = mpsc::channel();
    let inner = pinned.clone();
    stream
        .launch_host_fn(move || {
            let _ = in_fn_tx.send(inner.as_slice().map(|v| v.to_vec()));
        })
        .unwrap();
    // Another thread waits for the copy, holding the buffer's record while
    // the stream has to run the host function.
    let (host_tx, host_rx) = mpsc::channel();
    let waiter = pinned.clone();
    std::thread::spawn(move || {
        let _ = host_tx.send(waiter.as_slice().map(|v| v[0]));
    });
    std::thread::sleep(Duration::from_millis(50));
    drop(release);
    let host = host_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the waiting thread returned (no deadlock)");
    assert_eq!(host.unwrap(), 9);
    let in_fn = in_fn_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the host function returned (no deadlock)");
    // Inside the host function: the data if nothing was pending any more,
    // else a clear error — never a wait.
    match in_fn {
        Ok(v) => assert_eq!(v, vec![9u8; 64]),
        Err(e) => assert!(e.to_string().contains("inside a host function"), "{e}"),
    }
    stream.synchronize().unwrap();
}

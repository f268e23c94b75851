//! Device and pinned memory, slices and copies on the simulator: ordering
//! across streams, host access gated on queued work, drops that wait.

mod common;

use acl::{DeviceBuffer, DeviceFeature, DeviceMemory, Error, PinnedHostBuffer};
use std::sync::mpsc;
use std::time::Duration;

/// Blocks `stream` until the returned sender is used (or dropped).
fn gate(stream: &acl::Stream) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv();
        })
        .unwrap();
    tx
}

#[test]
fn async_round_trip_through_pinned_buffers() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let src = PinnedHostBuffer::from_slice(&npu, &[1.5f32, 2.5, 3.5, 4.5]).unwrap();
    let dev = stream.clone_from_pinned(&src).unwrap();
    let mut back = PinnedHostBuffer::<f32>::zeroed(&npu, 4).unwrap();
    stream.copy_dtoh(&dev, &mut back).unwrap();
    assert_eq!(back.as_slice().unwrap(), [1.5, 2.5, 3.5, 4.5]);
}

#[test]
fn queued_copy_really_happens_later_and_host_access_waits_for_it() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let dev = stream.clone_from_host(&[7u32; 1024]).unwrap();
    let mut host = PinnedHostBuffer::<u32>::zeroed(&npu, 1024).unwrap();
    let open = gate(&stream);
    stream.copy_dtoh(&dev, &mut host).unwrap();
    // The copy is queued behind the gate: the stream is busy.
    assert!(!stream.is_complete().unwrap());
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        open.send(()).unwrap();
    });
    // as_slice waits for the copy.
    assert!(host.as_slice().unwrap().iter().all(|&x| x == 7));
    opener.join().unwrap();
}

#[test]
fn reading_a_buffer_waits_for_queued_writes() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let mut dev = stream.alloc_zeros::<u8>(4096).unwrap();
    let open = gate(&stream);
    stream.memset(&mut dev, 0x5a).unwrap();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        open.send(()).unwrap();
    });
    assert!(dev.to_host_vec().unwrap().iter().all(|&b| b == 0x5a));
    opener.join().unwrap();
}

#[test]
fn dropping_a_buffer_with_queued_work_waits_instead_of_freeing_under_it() {
    let npu = common::device(0);
    let stream = npu.new_stream().unwrap();
    let mut dev = stream.alloc_zeros::<u64>(1 << 16).unwrap();
    let open = gate(&stream);
    stream.memset(&mut dev, 1).unwrap();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        open.send(()).unwrap();
    });
    drop(dev);
    opener.join().unwrap();
    stream
        .synchronize()
        .expect("no fault: the memset ran before the free");
    assert!(
        acl::take_release_errors()
            .iter()
            .all(|e| e.resource != "DeviceBuffer")
    );
}

#[test]
fn use_on_a_foreign_stream_is_ordered_both_ways() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let home = npu.new_stream().unwrap();
    let other = npu.new_stream().unwrap();
    let mut a = home.alloc_zeros::<u32>(256).unwrap();
    // A write queued on home behind a gate...
    let open = gate(&home);
    home.memset(&mut a, 0xff).unwrap();
    // ...then a copy on another stream must see it.
    let mut b = other.alloc_zeros::<u32>(256).unwrap();
    other.copy_dtod(&a, &mut b).unwrap();
    open.send(()).unwrap();
    assert!(b.to_host_vec().unwrap().iter().all(|&x| x == u32::MAX));
    // And home's later work waits for the foreign use: a write after it
    // does not overtake the copy.
    home.memset(&mut a, 0).unwrap();
    assert!(b.to_host_vec().unwrap().iter().all(|&x| x == u32::MAX));
    assert!(a.to_host_vec().unwrap().iter().all(|&x| x == 0));
}

#[test]
fn slices_copy_exactly_their_range() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let stream = npu.default_stream();
    let mut buf = stream
        .clone_from_host(&(0..100u16).collect::<Vec<_>>())
        .unwrap();
    {
        let mut mid = buf.slice_mut(10..20).unwrap();
        mid.copy_from_host(&[9999; 10]).unwrap();
    }
    let v = buf.to_host_vec().unwrap();
    assert_eq!(&v[..10], &(0..10).collect::<Vec<_>>()[..]);
    assert!(v[10..20].iter().all(|&x| x == 9999));
    assert_eq!(&v[20..], &(20..100).collect::<Vec<_>>()[..]);
    let s = buf.slice(95..).unwrap();
    assert_eq!(s.len(), 5);
    assert_eq!(s.to_host_vec().unwrap(), vec![95, 96, 97, 98, 99]);
    let (lo, hi) = s.split_at(2).unwrap();
    assert_eq!(lo.to_host_vec().unwrap(), vec![95, 96]);
    assert_eq!(hi.to_host_vec().unwrap(), vec![97, 98, 99]);
}

#[test]
fn split_at_mut_gives_disjoint_writable_halves() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let stream = npu.new_stream().unwrap();
    let mut buf = stream.alloc_zeros::<i32>(8).unwrap();
    let whole = buf.slice_mut(..).unwrap();
    let (mut lo, mut hi) = whole.split_at_mut(3).unwrap();
    stream.memset(&mut lo, 0x01).unwrap();
    stream.memset(&mut hi, 0x02).unwrap();
    let v = buf.to_host_vec().unwrap();
    assert_eq!(
        v,
        [
            0x01010101, 0x01010101, 0x01010101, 0x02020202, 0x02020202, 0x02020202, 0x02020202,
            0x02020202
        ]
    );
}

#[test]
fn slice_out_of_bounds_is_rejected() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let buf = DeviceBuffer::<u8>::zeroed(&npu, 10).unwrap();
    assert_eq!(
        buf.slice(5..11).unwrap_err(),
        Error::InvalidArgument {
            function: "DeviceBuffer::slice",
            reason: "the range ends at 11 but the memory has 10 elements".into()
        }
    );
}

#[test]
fn copy_length_mismatch_is_rejected_before_the_runtime() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let stream = npu.default_stream();
    let src = PinnedHostBuffer::<u8>::zeroed(&npu, 4).unwrap();
    let mut dst = stream.alloc_zeros::<u8>(5).unwrap();
    assert_eq!(
        stream.copy_htod(&src, &mut dst).unwrap_err(),
        Error::InvalidArgument {
            function: "Stream::copy_htod",
            reason: "host to device: the source has 4 elements, the destination 5".into()
        }
    );
}

#[test]
fn peer_copy_needs_peer_access_then_works() {
    cann_sim::require_devices!(4);
    let d0 = common::device(2);
    let d1 = common::device(3);
    assert!(d0.can_access_peer(&d1).unwrap());
    let src = d0.default_stream().clone_from_host(&[42u8; 64]).unwrap();
    let s1 = d1.new_stream().unwrap();
    let mut dst = s1.alloc_zeros::<u8>(64).unwrap();
    let err = s1.copy_dtod(&src, &mut dst).unwrap_err();
    assert_eq!(err.code(), Some(acl::ErrorCode::RtParamInvalid), "{err}");
    d1.enable_peer_access(&d0).unwrap();
    s1.copy_dtod(&src, &mut dst).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), vec![42u8; 64]);
    d1.disable_peer_access(&d0).unwrap();
}

#[test]
fn pinned_buffer_used_by_two_streams_orders_them() {
    cann_sim::require_devices!(5);
    let npu = common::device(4);
    let a = npu.new_stream().unwrap();
    let b = npu.new_stream().unwrap();
    let mut host = PinnedHostBuffer::<u8>::zeroed(&npu, 16).unwrap();
    let dev_a = a.clone_from_host(&[1u8; 16]).unwrap();
    let dev_b = b.clone_from_host(&[2u8; 16]).unwrap();
    let open = gate(&a);
    a.copy_dtoh(&dev_a, &mut host).unwrap();
    // The second copy, on b, must land after the gated one on a.
    b.copy_dtoh(&dev_b, &mut host).unwrap();
    open.send(()).unwrap();
    assert_eq!(host.as_slice().unwrap(), [2u8; 16]);
}

#[test]
fn device_attributes_and_memory_info() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    assert!(npu.attribute(acl::DeviceAttribute::AiCoreCount).unwrap() > 0);
    let info = npu.memory_info().unwrap();
    assert!(info.free_bytes <= info.total_bytes);
}

#[test]
fn uninit_then_written_buffer_and_pinned_accessors() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    // SAFETY: every element is written by the copy before it is read.
    let mut buf = unsafe { DeviceBuffer::<u16>::uninit(&npu, 8) }.unwrap();
    buf.copy_from_host(&[3; 8]).unwrap();
    assert_eq!(buf.to_host_vec().unwrap(), vec![3; 8]);
    assert_eq!(buf.device(), &npu);
    let mut pinned = PinnedHostBuffer::<u16>::zeroed(&npu, 8).unwrap();
    assert_eq!((pinned.len(), pinned.is_empty()), (8, false));
    assert_eq!(pinned.device(), &npu);
    npu.default_stream().copy_dtoh(&buf, &mut pinned).unwrap();
    pinned.wait().unwrap();
    pinned.as_mut_slice().unwrap()[0] = 9;
    assert_eq!(pinned.as_slice().unwrap()[..2], [9, 3]);
}

#[test]
fn nested_mutable_slices_and_their_shared_views() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    let stream = npu.new_stream().unwrap();
    let mut buf = stream.clone_from_host(&[0u32; 10]).unwrap();
    let mut outer = buf.slice_mut(2..8).unwrap();
    {
        let mut inner = outer.slice_mut(1..3).unwrap();
        stream.memset(&mut inner, 0xff).unwrap();
    }
    assert_eq!(
        outer.as_slice().to_host_vec().unwrap(),
        [0, u32::MAX, u32::MAX, 0, 0, 0]
    );
    assert_eq!(outer.len(), 6);
    let _ = outer;
    assert_eq!(buf.to_host_vec().unwrap()[3..5], [u32::MAX, u32::MAX]);
}

#[test]
fn device_capabilities_are_reported_and_unknown_features_rejected() {
    cann_sim::require_devices!(6);
    let npu = common::device(5);
    assert!(npu.supports(DeviceFeature::TaskUpdateAicAiv).unwrap());
    assert!(!npu.supports(DeviceFeature::MemqEventCrossDevice).unwrap());
    let err = npu.supports(DeviceFeature::Raw(12345)).unwrap_err();
    assert_eq!(err.function(), Some("aclrtGetDeviceCapability"), "{err}");
}

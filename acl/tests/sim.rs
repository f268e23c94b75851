//! The first slice of the safe API on the simulator: init, device
//! selection, device memory and copies, errors with their full contents.

use acl::{Device, DeviceBuffer, Error, ErrorCode, Runtime};

fn runtime() -> Runtime {
    cann_sim::install().expect("cann-sim installs");
    Runtime::init().expect("aclInit")
}

#[test]
fn public_types_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Runtime>();
    assert_send_sync::<Device>();
    assert_send_sync::<DeviceBuffer<f32>>();
    assert_send_sync::<DeviceBuffer<half::bf16>>();
    assert_send_sync::<Error>();
    assert_send_sync::<acl::ReleaseError>();
}

#[test]
fn runtime_reports_version_count_and_soc() {
    cann_sim::sim_only!("asserts the simulated machine's version, device count and SoC");
    let rt = runtime();
    assert_eq!(rt.version().unwrap().to_string(), "1.17.0");
    assert_eq!(rt.device_count().unwrap(), 8);
    assert_eq!(rt.soc_name().unwrap(), "Ascend910B3");
}

#[test]
fn a_server_program_runs_in_host_mode() {
    // Every Atlas server (and the simulator) runs programs on the host.
    assert_eq!(runtime().run_mode().unwrap(), acl::RunMode::Host);
}

#[test]
fn second_runtime_shares_the_session() {
    let a = runtime();
    let b = Runtime::init().unwrap();
    assert_eq!(a.owns_initialization(), b.owns_initialization());
}

#[test]
fn device_out_of_range_is_invalid_device_id_with_runtime_message() {
    let rt = runtime();
    // The first id past the machine's devices (8 on the simulator).
    let count = rt.device_count().unwrap();
    let err = Device::new(&rt, count).unwrap_err();
    match &err {
        Error::Acl {
            code,
            function,
            message,
        } => {
            assert_eq!(*code, ErrorCode::RtInvalidDeviceid);
            assert_eq!(*function, "aclrtSetDevice");
            assert!(
                message
                    .as_deref()
                    .is_some_and(|m| m.contains("aclrtSetDevice")),
                "{message:?}"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("aclrtSetDevice failed with ACL_ERROR_RT_INVALID_DEVICEID (107001): "),
        "{err}"
    );
}

#[test]
fn round_trip_of_every_element_type() {
    let rt = runtime();
    let npu = Device::new(&rt, 0).unwrap();
    fn check<T: acl::DeviceRepr + PartialEq + std::fmt::Debug>(npu: &Device, data: &[T]) {
        let buf = DeviceBuffer::from_host(npu, data).unwrap();
        assert_eq!(buf.len(), data.len());
        assert_eq!(buf.size_bytes(), std::mem::size_of_val(data));
        assert_eq!(buf.to_host_vec().unwrap(), data);
    }
    check(&npu, &[1i8, -2, 3]);
    check(&npu, &[1u16, 65535]);
    check(&npu, &[-7i32; 1000]);
    check(&npu, &[u64::MAX, 0]);
    check(&npu, &[1.5f32, -0.25]);
    check(&npu, &[std::f64::consts::PI]);
    check(&npu, &[half::f16::from_f32(0.5), half::f16::MAX]);
    check(&npu, &[half::bf16::from_f32(-3.0)]);
}

#[test]
fn zeroed_buffer_reads_back_zeros() {
    cann_sim::require_devices!(2);
    let rt = runtime();
    let npu = Device::new(&rt, 1).unwrap();
    let buf = DeviceBuffer::<u32>::zeroed(&npu, 4096).unwrap();
    assert!(buf.to_host_vec().unwrap().iter().all(|&x| x == 0));
}

#[test]
fn empty_buffer_needs_no_allocation() {
    let rt = runtime();
    let npu = Device::new(&rt, 0).unwrap();
    let buf = DeviceBuffer::<f32>::from_host(&npu, &[]).unwrap();
    assert!(buf.is_empty());
    assert!(buf.as_raw_ptr().is_null());
    assert_eq!(buf.to_host_vec().unwrap(), Vec::<f32>::new());
}

#[test]
fn length_mismatch_is_rejected_before_any_c_call() {
    let rt = runtime();
    let npu = Device::new(&rt, 0).unwrap();
    let mut buf = DeviceBuffer::from_host(&npu, &[0u8; 16]).unwrap();
    let err = buf.copy_from_host(&[0u8; 15]).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidArgument {
            function: "DeviceBuffer::copy_from_host",
            reason: "host to device: the source has 15 elements, the destination 16".into()
        }
    );
    let mut out = [0u8; 17];
    assert!(matches!(
        buf.copy_to_host(&mut out),
        Err(Error::InvalidArgument {
            function: "DeviceBuffer::copy_to_host",
            ..
        })
    ));
}

#[test]
fn buffers_work_from_threads_that_never_selected_a_device() {
    cann_sim::require_devices!(3);
    let rt = runtime();
    let npu = Device::new(&rt, 2).unwrap();
    let buf = DeviceBuffer::from_host(&npu, &[7u64; 256]).unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let npu = npu.clone();
            let buf = &buf;
            std::thread::scope(|s| {
                s.spawn(move || {
                    // A fresh thread: no current device until the handle binds one.
                    let mine = DeviceBuffer::from_host(&npu, &[1u64; 64]).unwrap();
                    (mine.to_host_vec().unwrap(), buf.to_host_vec().unwrap())
                })
                .join()
                .unwrap()
            })
        })
        .collect();
    for (mine, shared) in handles {
        assert_eq!(mine, vec![1u64; 64]);
        assert_eq!(shared, vec![7u64; 256]);
    }
}

#[test]
fn memory_info_sees_allocations() {
    cann_sim::require_devices!(4);
    let rt = runtime();
    let npu = Device::new(&rt, 3).unwrap();
    let before = npu.memory_info().unwrap();
    assert_eq!(before.total_bytes, 64 << 30);
    let buf = DeviceBuffer::<u8>::zeroed(&npu, 8 << 20).unwrap();
    let during = npu.memory_info().unwrap();
    assert!(before.free_bytes - during.free_bytes >= 8 << 20);
    buf.close().unwrap();
    let after = npu.memory_info().unwrap();
    assert_eq!(after.free_bytes, before.free_bytes);
}

#[test]
fn call_counting_sees_a_queued_copy_as_no_host_sync_and_a_synchronize_as_one() {
    cann_sim::sim_only!("reads the simulator's call counts (cann_sim::calls)");
    let rt = runtime();
    let dev = Device::new(&rt, 0).unwrap();
    let stream = dev.default_stream();
    let host = acl::PinnedHostBuffer::from_slice(&dev, &[1.0f32; 16]).unwrap();
    let mut buf = stream.alloc_zeros::<f32>(16).unwrap();
    let (r, queued) = cann_sim::calls::count(|| stream.copy_htod(&host, &mut buf));
    r.unwrap();
    assert_eq!(queued.host_syncs(), 0, "{queued}");
    assert_eq!(queued.get("aclrtMemcpyAsync"), 1, "{queued}");
    let (r, synced) = cann_sim::calls::count(|| stream.synchronize());
    r.unwrap();
    assert_eq!(synced.get("aclrtSynchronizeStream"), 1, "{synced}");
    assert_eq!(synced.host_syncs(), 1, "{synced}");
}

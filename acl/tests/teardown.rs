//! Last handles dropped where AscendCL may not be called: inside a host
//! function, and a device's teardown on a thread bound to another device.

use acl::{Device, Runtime};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn the_last_stream_device_and_runtime_dropped_inside_a_host_function_release_without_deadlock() {
    cann_sim::sim_only!("reads the simulator's statistics (cann_sim::stats)");
    cann_sim::install().unwrap();
    let before = cann_sim::stats();
    let rt = Runtime::init().unwrap();
    let npu = Device::new(&rt, 5).unwrap();
    let stream = npu.new_stream().unwrap();
    let buf = stream.alloc_zeros::<u8>(1 << 20).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let last = (stream.clone(), buf, rt);
    stream
        .launch_host_fn(move || {
            // The stream this function runs on, its device, a buffer and the
            // runtime session: all last handles.
            drop(last);
            tx.send(()).unwrap();
        })
        .unwrap();
    drop((stream, npu));
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the host function returned");
    // Released on threads of their own once the host function has returned:
    // the stream destroyed, the memory freed, the device reset.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // Device 5 is this test's alone (the other test uses 6 and 7).
        let now = cann_sim::stats();
        let (a, b) = (&now.devices[5], &before.devices[5]);
        if (a.allocations, a.streams, a.contexts) == (b.allocations, b.streams, b.contexts) {
            break;
        }
        assert!(Instant::now() < deadline, "never released: {now:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(acl::take_release_errors(), vec![]);
}

#[test]
fn dropping_the_last_handle_of_one_device_leaves_another_device_usable_on_this_thread() {
    cann_sim::require_devices!(8);
    cann_sim::install().unwrap();
    let rt = Runtime::init().unwrap();
    let (d6, d7) = (Device::new(&rt, 6).unwrap(), Device::new(&rt, 7).unwrap());
    let x = DeviceBufferOf::from_host(&d7, &[3u32; 16]).unwrap();
    // Device 7 is bound on this thread; device 6's teardown makes its own
    // context current to release it, then resets it.
    d7.bind().unwrap();
    drop(d6);
    // The next call on device 7 must bind it again, not run in the
    // destroyed context.
    assert_eq!(x.to_host_vec().unwrap(), [3u32; 16]);
    let y = DeviceBufferOf::<u32>::zeroed(&d7, 16).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [0u32; 16]);
}

type DeviceBufferOf<T> = acl::DeviceBuffer<T>;

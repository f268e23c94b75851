//! Last handles dropped where AscendCL may not be called: inside a host
//! function. One test per binary run, since it ends the process's session.

use acl::{Device, Runtime};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn the_last_stream_device_and_runtime_dropped_inside_a_host_function_release_without_deadlock() {
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
        let now = cann_sim::stats();
        let clean = now
            .devices
            .iter()
            .zip(&before.devices)
            .all(|(a, b)| (a.allocations, a.streams) == (b.allocations, b.streams));
        if clean {
            break;
        }
        assert!(Instant::now() < deadline, "never released: {now:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(acl::take_release_errors(), vec![]);
}

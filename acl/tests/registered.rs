//! `RegisteredHostBuffer`: a `Vec` the device reads and writes in place
//! (`aclrtHostRegister`, mapped), tracked like device memory, with cann-sim's
//! check mode reporting any unordered access.

mod common;

use acl::graph::CaptureMode;
use acl::memory::{RegisterError, RegisteredHostBuffer};
use acl::{DeviceMemory, Error};
use common::{block, recent, reports};
use std::time::Duration;

#[test]
fn the_device_reads_and_writes_a_registered_vector_in_place() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let data: Vec<u32> = (0..1024).collect();
    let host = data.as_ptr();
    let mut reg = RegisteredHostBuffer::new(&npu, data).unwrap();
    assert_eq!(reg.host_ptr(), host, "registered in place, not copied");
    assert_eq!(reg.len(), 1024);
    let before = reports();
    // The device reads it...
    let copy = s.clone_dtod(&reg).unwrap();
    assert_eq!(copy.to_host_vec().unwrap(), (0..1024).collect::<Vec<u32>>());
    // ... and writes it: the host sees the device's write, after it.
    s.memset(&mut reg, 0xab).unwrap();
    assert!(reg.as_slice().unwrap().iter().all(|&v| v == 0xabab_abab));
    // Host writes, then a device read of them.
    reg.as_mut_slice().unwrap().fill(7);
    assert_eq!(
        s.clone_dtod(&reg).unwrap().to_host_vec().unwrap(),
        vec![7; 1024]
    );
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn a_host_view_waits_for_a_queued_device_write() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let mut reg = RegisteredHostBuffer::new(&npu, vec![0u8; 4096]).unwrap();
    let release = block(&s);
    s.memset(&mut reg, 9).unwrap();
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(release);
    });
    // Queued behind the blocked stream: the view waits for the write.
    assert!(reg.as_slice().unwrap().iter().all(|&v| v == 9));
    opener.join().unwrap();
}

#[test]
fn an_empty_vector_is_refused_and_given_back() {
    let npu = common::device(0);
    let mut data: Vec<f32> = Vec::with_capacity(16);
    data.push(1.0);
    data.clear();
    let RegisterError { error, data } = RegisteredHostBuffer::new(&npu, data).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidArgument { function, reason }
            if *function == "RegisteredHostBuffer::new" && reason.contains("empty")),
        "{error}"
    );
    assert_eq!(data.capacity(), 16, "the same vector comes back");
}

#[test]
fn a_graph_keeps_the_registered_vector_alive_after_its_handle_is_dropped() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let src = s.clone_from_host(&[5u32; 256]).unwrap();
    let mut reg = RegisteredHostBuffer::new(&npu, vec![0u32; 256]).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::ThreadLocal, |c| c.copy_dtod(&src, &mut reg))
        .unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(reg.as_slice().unwrap().to_vec(), vec![5; 256]);
    let before = reports();
    // The handle goes; the graph still writes the memory, which stays
    // registered and allocated until the graph is gone.
    drop(reg);
    for _ in 0..3 {
        graph.launch(&s).unwrap();
    }
    s.synchronize().unwrap();
    drop(graph);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn a_graph_launch_refuses_while_a_host_view_of_registered_memory_lives() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let src = s.clone_from_host(&[1u32; 64]).unwrap();
    let mut reg = RegisteredHostBuffer::new(&npu, vec![0u32; 64]).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::ThreadLocal, |c| c.copy_dtod(&src, &mut reg))
        .unwrap();
    let view = reg.as_slice().unwrap();
    let err = graph.launch(&s).unwrap_err();
    assert!(err.to_string().contains("host view"), "{err}");
    drop(view);
    graph.launch(&s).unwrap();
    assert_eq!(reg.as_slice().unwrap().to_vec(), vec![1; 64]);
}

#[test]
fn close_unregisters_once_the_queued_work_is_done() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let mut reg = RegisteredHostBuffer::new(&npu, vec![0u16; 512]).unwrap();
    s.memset(&mut reg, 1).unwrap();
    let dev = reg.device_ptr();
    reg.close().unwrap();
    // Unregistered: the runtime no longer maps the address.
    // SAFETY: a query of an address, nothing dereferenced.
    let err = unsafe { acl::result::host_unregister(dev as *mut _) }.unwrap_err();
    assert_eq!(err.code(), Some(acl::ErrorCode::from_raw(507911)), "{err}");
}

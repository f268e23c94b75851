//! `Stream::reduce` (the runtime's reduce task, `aclrtReduceAsync`): values,
//! ordering with the other uses of both buffers, capture into a graph, and
//! each misuse's exact error.

use acl::graph::CaptureMode;
use acl::{Device, ErrorCode, ReduceKind, Runtime};

fn device() -> Device {
    cann_sim::install().expect("cann-sim installs");
    let rt = Runtime::init().expect("aclInit");
    Device::new(&rt, 0).expect("device 0")
}

#[test]
fn reduce_sums_maxes_and_mins_a_buffer_into_another() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let src = s.clone_from_host(&[1.0f32, -4.0, 2.5]).unwrap();
    let mut dst = s.clone_from_host(&[0.5f32, 3.0, 2.0]).unwrap();
    s.reduce(&src, &mut dst, ReduceKind::Sum).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), [1.5, -1.0, 4.5]);
    s.reduce(&src, &mut dst, ReduceKind::Max).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), [1.5, -1.0, 4.5]);
    s.reduce(&src, &mut dst, ReduceKind::Min).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), [1.0, -4.0, 2.5]);
    let a = s.clone_from_host(&[i32::MAX, 5]).unwrap();
    let mut b = s.clone_from_host(&[1i32, -7]).unwrap();
    s.reduce(&a, &mut b, ReduceKind::Sum).unwrap();
    assert_eq!(b.to_host_vec().unwrap(), [i32::MIN, -2], "integers wrap");
}

#[test]
fn a_reduce_on_another_stream_is_ordered_after_the_queued_writes_of_its_source() {
    let npu = device();
    let writer = npu.new_stream().unwrap();
    let reducer = npu.new_stream().unwrap();
    let mut src = writer.alloc_zeros::<f32>(4096).unwrap();
    let mut dst = reducer.clone_from_host(&vec![1.0f32; 4096]).unwrap();
    writer.fill(&mut src, 2.0f32).unwrap();
    // No synchronisation: the crate orders the reduce after the fill.
    reducer.reduce(&src, &mut dst, ReduceKind::Sum).unwrap();
    assert_eq!(dst.to_host_vec().unwrap(), vec![3.0f32; 4096]);
}

#[test]
fn gradient_accumulation_with_reduce_replays_in_a_captured_graph() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let grad = s.clone_from_host(&[0.5f32; 8]).unwrap();
    let mut acc = s.alloc_zeros::<f32>(8).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::ThreadLocal, |s| {
            s.reduce(&grad, &mut acc, ReduceKind::Sum)
        })
        .unwrap();
    for _ in 0..3 {
        graph.launch(&s).unwrap();
    }
    assert_eq!(acc.to_host_vec().unwrap(), vec![1.5f32; 8]);
}

#[test]
fn reduce_refuses_unequal_lengths_before_any_call() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let src = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let mut dst = s.alloc_zeros::<f32>(3).unwrap();
    let e = s.reduce(&src, &mut dst, ReduceKind::Sum).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Stream::reduce: the source has 4 elements, the destination 3"
    );
}

#[test]
fn types_the_runtime_does_not_reduce_fail_with_its_codes() {
    cann_sim::sim_only!("asserts the codes of the simulated Atlas A2");
    let npu = device();
    let s = npu.new_stream().unwrap();
    let a = s.clone_from_host(&[1i64, 2]).unwrap();
    let mut b = s.clone_from_host(&[3i64, 4]).unwrap();
    let e = s.reduce(&a, &mut b, ReduceKind::Sum).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
    let a = s.clone_from_host(&[1u8, 2]).unwrap();
    let mut b = s.clone_from_host(&[3u8, 4]).unwrap();
    let e = s.reduce(&a, &mut b, ReduceKind::Max).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtFeatureNotSupport), "{e}");
    assert_eq!(b.to_host_vec().unwrap(), [3, 4], "nothing was written");
}

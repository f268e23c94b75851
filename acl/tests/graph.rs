//! Graph capture through the safe API on the simulator: capture once,
//! launch many times; memory the captured work used stays alive; launches
//! are ordered with host reads on any stream; the runtime's refusals come
//! back as errors and leave the stream usable; a graph dropped while its
//! launches are queued is destroyed later without error.
//!
//! A global capture refuses synchronous copies on every thread of the
//! context, and the tests share the device's primary context: they run one
//! at a time.

mod common;

use acl::aclnn::{self, TensorArg, TensorArgMut};
use acl::graph::{CaptureMode, CaptureStatus, exchange_thread_capture_mode};
use acl::{Device, ErrorCode};
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (MutexGuard<'static, ()>, Device) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    (guard, common::device(0))
}

#[test]
fn a_graph_launched_many_times_gives_the_right_data() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let x = s.clone_from_host(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let mut acc = s.alloc_zeros::<f32>(4).unwrap();
    let mut tmp = s.alloc_zeros::<f32>(4).unwrap();
    s.synchronize().unwrap();
    // acc += x, by way of a temporary: one aclnn add and one copy.
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| {
            {
                let (tx, ta) = (TensorArg::new(&x, &[4])?, TensorArg::new(&acc, &[4])?);
                let mut tt = TensorArgMut::new(&mut tmp, &[4])?;
                aclnn::add(s, &tx, &ta, &aclnn::Scalar::new(1.0f32)?, &mut tt)?;
            }
            s.copy_dtod(&tmp, &mut acc)
        })
        .unwrap();
    assert_eq!(acc.to_host_vec().unwrap(), [0.0; 4], "captured, not run");
    for n in 1..=5 {
        graph.launch(&s).unwrap();
        let want: Vec<f32> = [1.0, 2.0, 3.0, 4.0].iter().map(|v| v * n as f32).collect();
        assert_eq!(acc.to_host_vec().unwrap(), want);
    }
    assert_eq!(graph.buffer_count(), 3);
}

#[test]
fn buffers_dropped_inside_the_closure_stay_alive_across_launches() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let x = s.clone_from_host(&[2.0f32, 4.0, 6.0]).unwrap();
    let mut y = s.alloc_zeros::<f32>(3).unwrap();
    s.synchronize().unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| {
            // Temporaries used and dropped inside: the graph keeps them.
            let mut t1 = s.alloc_zeros::<f32>(3)?;
            {
                let (tx, tx2) = (TensorArg::new(&x, &[3])?, TensorArg::new(&x, &[3])?);
                let mut to = TensorArgMut::new(&mut t1, &[3])?;
                aclnn::add(s, &tx, &tx2, &aclnn::Scalar::new(1.0f32)?, &mut to)?;
            }
            let mut t2 = s.alloc_zeros::<u8>(12)?;
            s.fill(&mut t2, 0)?;
            drop(t2);
            s.copy_dtod(&t1, &mut y)
        })
        .unwrap();
    // Allocations made now must not reuse the graph's temporaries.
    let mut junk = Vec::new();
    for _ in 0..4 {
        let mut b = s.alloc_zeros::<f32>(3).unwrap();
        s.fill(&mut b, 99.0).unwrap();
        junk.push(b);
    }
    for _ in 0..3 {
        graph.launch(&s).unwrap();
        assert_eq!(y.to_host_vec().unwrap(), [4.0, 8.0, 12.0]);
    }
    drop(junk);
}

#[test]
fn a_launch_on_another_stream_is_ordered_with_host_reads() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let other = npu.new_stream().unwrap();
    let x = s.clone_from_host(&[7u32; 1024]).unwrap();
    let mut y = s.alloc_zeros::<u32>(1024).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::ThreadLocal, |s| s.copy_dtod(&x, &mut y))
        .unwrap();
    graph.launch(&other).unwrap();
    // No synchronisation: the read waits for the launch.
    assert_eq!(y.to_host_vec().unwrap(), vec![7u32; 1024]);
    // The default stream launches it too.
    s.fill(&mut y, 0).unwrap();
    graph.launch(&npu.default_stream()).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), vec![7u32; 1024]);
}

#[test]
fn the_default_stream_cannot_capture() {
    let (_g, npu) = setup();
    let s = npu.default_stream();
    let e = s
        .capture(CaptureMode::Global, |_| Ok::<_, acl::Error>(()))
        .unwrap_err();
    // Its handle is null, which the ACL layer refuses (its real handle:
    // ACL_ERROR_RT_FEATURE_NOT_SUPPORT).
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
}

/// A framework backend's own error type, which `Stream::capture` passes through.
#[derive(Debug, PartialEq)]
enum BackendError {
    Acl(acl::Error),
    Unsupported(String),
}

impl From<acl::Error> for BackendError {
    fn from(e: acl::Error) -> Self {
        BackendError::Acl(e)
    }
}

#[test]
fn a_closures_own_error_type_flows_through_capture_and_the_capture_ends() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let mut y = s.alloc_zeros::<u32>(4).unwrap();
    s.synchronize().unwrap();
    let failed: Result<(acl::graph::Graph, ()), BackendError> =
        s.capture(CaptureMode::Global, |s| {
            s.fill(&mut y, 7)?; // captured, never run: the capture is abandoned
            Err(BackendError::Unsupported("rank-5 gather".into()))
        });
    assert_eq!(
        failed.err(),
        Some(BackendError::Unsupported("rank-5 gather".into()))
    );
    // Ended cleanly: the stream is out of capture mode, runs work again,
    // the abandoned fill never ran, and a new capture begins.
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    s.synchronize().unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [0; 4]);
    let (graph, n) = s
        .capture(CaptureMode::Global, |s| {
            s.fill(&mut y, 2)?;
            Ok::<_, BackendError>(4usize)
        })
        .unwrap();
    assert_eq!(n, 4);
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [2; 4]);
}

#[test]
fn acl_errors_inside_and_around_a_generic_capture_convert_into_the_callers_type() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    // From the closure: a synchronous copy refused by a global capture.
    let e = s
        .capture(CaptureMode::Global, |s| {
            s.clone_from_host(&[1u32, 2])?;
            Ok::<_, BackendError>(())
        })
        .unwrap_err();
    match e {
        BackendError::Acl(e) => {
            assert_eq!(e.code(), Some(ErrorCode::RtCaptureModeNotSupport), "{e}")
        }
        other => panic!("expected an acl::Error, got {other:?}"),
    }
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    // From the capture itself: the default stream cannot capture.
    let e = npu
        .default_stream()
        .capture(CaptureMode::Global, |_| Ok::<_, BackendError>(()))
        .unwrap_err();
    match e {
        BackendError::Acl(e) => assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}"),
        other => panic!("expected an acl::Error, got {other:?}"),
    }
}

#[test]
fn a_synchronous_copy_in_a_global_capture_fails_and_the_stream_stays_usable() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let mut y = s.alloc_zeros::<u32>(4).unwrap();
    let e = s
        .capture(CaptureMode::Global, |s| {
            assert_eq!(s.capture_status()?, CaptureStatus::Active);
            s.fill(&mut y, 1)?;
            // A copy from ordinary host memory is synchronous.
            let _staged = s.clone_from_host(&[1u32, 2, 3, 4])?;
            Ok::<_, acl::Error>(())
        })
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtCaptureModeNotSupport), "{e}");
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    s.fill(&mut y, 3).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [3; 4]);
    // In a relaxed capture the same copy is allowed (it runs now).
    let (graph, staged) = s
        .capture(CaptureMode::Relaxed, |s| {
            s.clone_from_host(&[5u32, 6, 7, 8])
        })
        .unwrap();
    assert_eq!(staged.to_host_vec().unwrap(), [5, 6, 7, 8]);
    drop(graph);
    // A thread that exchanged to relaxed may copy during a global capture.
    let old = exchange_thread_capture_mode(CaptureMode::Relaxed).unwrap();
    assert_eq!(old, CaptureMode::Global);
    let (graph, staged) = s
        .capture(CaptureMode::Global, |s| s.clone_from_host(&[9u32]))
        .unwrap();
    assert_eq!(
        exchange_thread_capture_mode(old).unwrap(),
        CaptureMode::Relaxed
    );
    assert_eq!(staged.to_host_vec().unwrap(), [9]);
    drop(graph);
}

#[test]
fn a_panic_inside_the_closure_ends_the_capture() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let mut y = s.alloc_zeros::<u32>(4).unwrap();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = s.capture(CaptureMode::Global, |s| -> acl::Result<()> {
            s.fill(&mut y, 1).unwrap();
            panic!("inside the capture");
        });
    }));
    assert!(r.is_err());
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    s.fill(&mut y, 2).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [2; 4]);
    // And it can capture again.
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| s.fill(&mut y, 4))
        .unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [4; 4]);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn a_graph_dropped_while_its_launch_is_queued_is_destroyed_later() {
    cann_sim::sim_only!("counts the simulator's captured models (cann_sim::stats)");
    let (_g, npu) = setup();
    // The graphs of the other tests (dropped in the background) go first.
    let settle = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while cann_sim::stats().captured_models != 0 && std::time::Instant::now() < settle {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let before = cann_sim::stats().captured_models;
    let s = npu.new_stream().unwrap();
    let mut y = s.alloc_zeros::<u32>(256).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| s.fill(&mut y, 5))
        .unwrap();
    assert_eq!(cann_sim::stats().captured_models, before + 1);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = rx.recv();
    })
    .unwrap();
    graph.launch(&s).unwrap();
    drop(graph);
    // The launch is held back by the host function: not destroyed yet.
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert_eq!(cann_sim::stats().captured_models, before + 1);
    tx.send(()).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), vec![5; 256]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while cann_sim::stats().captured_models != before {
        assert!(
            std::time::Instant::now() < deadline,
            "the model was never destroyed"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn a_buffer_a_graph_holds_cannot_be_handed_over_with_into_raw() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let mut y = s.alloc_zeros::<u32>(8).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| s.fill(&mut y, 3))
        .unwrap();
    // Handing the memory over would let its new owner free it under the
    // graph's next launch.
    let (err, y) = y.into_raw().unwrap_err();
    assert!(
        matches!(&err, acl::Error::InvalidArgument { function, .. } if *function == "DeviceBuffer::into_raw"),
        "{err}"
    );
    graph.launch(&s).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [3; 8]);
    // Once the graph is gone (destroyed in the background after its
    // launch) the memory is the buffer's own again.
    drop(graph);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut y = y;
    let p = loop {
        match y.into_raw() {
            Ok(p) => break p,
            Err((e, back)) => {
                assert!(std::time::Instant::now() < deadline, "{e}");
                y = back;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    };
    // SAFETY: handed over by into_raw, freed once; nothing uses it.
    unsafe { acl::result::free(p) }.unwrap();
}

// ---- task groups and updates ----

/// `out = a + alpha * b` over 2 floats.
fn scaled_add(
    s: &acl::Stream,
    a: &acl::DeviceBuffer<f32>,
    b: &acl::DeviceBuffer<f32>,
    alpha: f32,
    out: &mut acl::DeviceBuffer<f32>,
) -> acl::Result<()> {
    let (ta, tb) = (TensorArg::new(a, &[2])?, TensorArg::new(b, &[2])?);
    let mut to = TensorArgMut::new(out, &[2])?;
    aclnn::add(s, &ta, &tb, &aclnn::Scalar::new(alpha)?, &mut to)
}

/// A graph of `out = x + x` in one task group, captured on `s`.
fn doubling_graph(
    s: &acl::Stream,
    x: &acl::DeviceBuffer<f32>,
    out: &mut acl::DeviceBuffer<f32>,
) -> (acl::graph::Graph, acl::graph::TaskGroup) {
    s.capture(CaptureMode::Global, |s| {
        Ok::<_, acl::Error>(s.task_group(|s| scaled_add(s, x, x, 1.0, out))?.0)
    })
    .unwrap()
}

#[track_caller]
fn assert_invalid(e: &acl::Error, in_function: &str, says: &str) {
    match e {
        acl::Error::InvalidArgument { function, reason } => {
            assert_eq!(*function, in_function, "{e}");
            assert!(reason.contains(says), "{e}");
        }
        other => panic!("expected InvalidArgument from {in_function}, got {other}"),
    }
}

#[test]
fn an_update_changes_the_scalar_and_inputs_of_a_captured_scaled_add() {
    let (_g, npu) = setup();
    let (s, u) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let x = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let y = s.clone_from_host(&[10.0f32, 20.0]).unwrap();
    let z = s.clone_from_host(&[100.0f32, 200.0]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    let (graph, group) = s
        .capture(CaptureMode::Global, |s| {
            let (group, ()) = s.task_group(|s| scaled_add(s, &x, &y, 1.0, &mut out))?;
            Ok::<_, acl::Error>(group)
        })
        .unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(out.to_host_vec().unwrap(), [11.0, 22.0]);
    // A new scalar.
    graph
        .update(&u, &group, |s| scaled_add(s, &x, &y, 3.0, &mut out))
        .unwrap();
    assert_eq!(
        out.to_host_vec().unwrap(),
        [11.0, 22.0],
        "an update runs nothing"
    );
    graph.launch(&s).unwrap();
    assert_eq!(out.to_host_vec().unwrap(), [31.0, 62.0]);
    // New inputs and scalar, updated from the launch stream itself; every
    // later launch uses them.
    graph
        .update(&s, &group, |s| scaled_add(s, &z, &x, 0.5, &mut out))
        .unwrap();
    for _ in 0..3 {
        graph.launch(&u).unwrap();
        assert_eq!(out.to_host_vec().unwrap(), [100.5, 201.0]);
    }
}

#[test]
fn buffers_used_by_an_update_stay_alive_as_long_as_the_graph() {
    let (_g, npu) = setup();
    let (s, u) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let x = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    let (graph, group) = doubling_graph(&s, &x, &mut out);
    assert_eq!(graph.buffer_count(), 2);
    let tmp = u.clone_from_host(&[5.0f32, 6.0]).unwrap();
    graph
        .update(&u, &group, |s| {
            // Dropped at the end of the closure: the graph holds it.
            let tmp = tmp;
            scaled_add(s, &tmp, &x, 2.0, &mut out)
        })
        .unwrap();
    assert_eq!(graph.buffer_count(), 3);
    for _ in 0..2 {
        graph.launch(&s).unwrap();
        assert_eq!(out.to_host_vec().unwrap(), [7.0, 10.0]);
    }
}

#[test]
fn task_group_misuse_is_refused_with_the_exact_error() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let x = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    // Outside a capture.
    let e = s.task_group(|_| Ok(())).unwrap_err();
    assert_invalid(&e, "Stream::task_group", "inside Stream::capture");
    // Nested.
    let e = s
        .capture(CaptureMode::Global, |s| {
            s.task_group(|s| s.task_group(|_| Ok(())).map(drop))
                .map(drop)
        })
        .unwrap_err();
    assert_invalid(&e, "Stream::task_group", "do not nest");
    // A copy in a group: the runtime refuses it and invalidates the capture.
    let mut y = s.alloc_zeros::<f32>(2).unwrap();
    let e = s
        .capture(CaptureMode::Global, |s| {
            s.task_group(|s| s.copy_dtod(&x, &mut y)).map(drop)
        })
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtTaskTypeNotSupport), "{e}");
    // The stream captures again normally.
    let (graph, group) = doubling_graph(&s, &x, &mut out);
    graph.launch(&s).unwrap();
    // A group of another graph.
    let (other, _) = s
        .capture(CaptureMode::Global, |s| {
            s.task_group(|s| scaled_add(s, &x, &x, 2.0, &mut out))
        })
        .unwrap();
    let e = other.update(&s, &group, |_| Ok(())).unwrap_err();
    assert_invalid(&e, "Graph::update", "another graph");
    // An update on a capturing stream.
    let e = s
        .capture(CaptureMode::Global, |s| graph.update(s, &group, |_| Ok(())))
        .unwrap_err();
    assert_invalid(&e, "Graph::update", "capturing or updating");
    assert_eq!(out.to_host_vec().unwrap(), [2.0, 4.0]);
}

#[test]
fn a_failed_update_is_reported_and_the_graph_refuses_to_launch_until_updated_again() {
    let (_g, npu) = setup();
    let (s, u) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let x = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    let (graph, group) = doubling_graph(&s, &x, &mut out);
    // Fewer kernels than the group holds.
    let e = graph.update(&u, &group, |_| Ok(())).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtInternalError), "{e}");
    assert_eq!(e.function(), Some("aclmdlRICaptureTaskUpdateEnd"));
    let e = graph.launch(&s).unwrap_err();
    assert_invalid(&e, "Graph::launch", "partly updated");
    // A fill: only kernels can be issued in an update.
    let e = graph
        .update(&u, &group, |s| s.memset(&mut out, 0))
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtTaskTypeNotSupport), "{e}");
    // One kernel too many: the runtime's refusal of the second.
    let e = graph
        .update(&u, &group, |s| {
            scaled_add(s, &x, &x, 2.0, &mut out)?;
            scaled_add(s, &x, &x, 3.0, &mut out)
        })
        .unwrap_err();
    assert_eq!(e.function(), Some("aclnnAdd"), "{e}");
    // A panic in the closure: the stream leaves update mode.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        graph.update(&u, &group, |_| -> acl::Result<()> { panic!("boom") })
    }));
    assert!(panicked.is_err());
    u.synchronize().unwrap();
    assert!(graph.launch(&s).is_err());
    // A successful update repairs it.
    graph
        .update(&u, &group, |s| scaled_add(s, &x, &x, 4.0, &mut out))
        .unwrap();
    graph.launch(&s).unwrap();
    assert_eq!(out.to_host_vec().unwrap(), [5.0, 10.0]);
}

#[test]
fn a_panic_inside_a_task_group_leaves_the_stream_usable() {
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let x = s.clone_from_host(&[1.0f32, 2.0]).unwrap();
    let mut out = s.alloc_zeros::<f32>(2).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.capture(CaptureMode::Global, |s| {
            s.task_group(|_| -> acl::Result<()> { panic!("boom") })
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(s.capture_status().unwrap(), CaptureStatus::None);
    let (graph, _group) = doubling_graph(&s, &x, &mut out);
    graph.launch(&s).unwrap();
    assert_eq!(out.to_host_vec().unwrap(), [2.0, 4.0]);
}

/// `Graph::abort` drops a launch queued behind other work: its fill never
/// runs, work queued after it does, the stream reports 507023 once at its
/// next synchronisation, and the graph launches again afterwards.
#[test]
fn an_aborted_launch_does_not_run_and_its_stream_reports_it_once() {
    cann_sim::sim_only!(
        "that a queued execution is stopped too is cann-sim's reading of the task scheduler"
    );
    let (_g, npu) = setup();
    let s = npu.new_stream().unwrap();
    let mut x = s.alloc_zeros::<u32>(256).unwrap();
    let mut after = s.alloc_zeros::<u32>(256).unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| s.fill(&mut x, 7))
        .unwrap();
    // Nothing in flight: nothing to stop, nothing reported.
    graph.abort().unwrap();
    s.synchronize().unwrap();

    let (tx, rx) = std::sync::mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = rx.recv_timeout(std::time::Duration::from_secs(20));
    })
    .unwrap();
    graph.launch(&s).unwrap();
    s.fill(&mut after, 5).unwrap();
    graph.abort().unwrap();
    tx.send(()).unwrap();
    let e = s.synchronize().unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtModelAbortNormal), "{e}");
    s.synchronize().unwrap();
    assert_eq!(
        x.to_host_vec().unwrap(),
        vec![0; 256],
        "the launch was dropped"
    );
    assert_eq!(after.to_host_vec().unwrap(), vec![5; 256], "later work ran");

    graph.launch(&s).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), vec![7; 256], "it launches again");

    // Dropped right after an abort, before anyone synchronised: the drop's
    // synchronisation takes the report, which is not a release failure.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = rx.recv_timeout(std::time::Duration::from_secs(20));
    })
    .unwrap();
    let (other, ()) = s
        .capture(CaptureMode::Global, |s| s.fill(&mut after, 9))
        .unwrap();
    let before = cann_sim::stats().captured_models;
    other.launch(&s).unwrap();
    other.abort().unwrap();
    drop(other); // destroyed on the release thread, after synchronising `s`
    tx.send(()).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while cann_sim::stats().captured_models != before - 1 {
        assert!(std::time::Instant::now() < deadline, "never destroyed");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    s.synchronize().expect("the drop took the abort's report");
    assert!(acl::take_release_errors().is_empty());

    // Not from a host function (AscendCL may not be called there).
    let graph = std::sync::Arc::new(graph);
    let (g2, (tx, rx)) = (graph.clone(), std::sync::mpsc::channel());
    s.launch_host_fn(move || {
        let _ = tx.send(g2.abort());
    })
    .unwrap();
    s.synchronize().unwrap();
    let refused = rx.recv().unwrap().unwrap_err();
    assert!(
        matches!(
            &refused,
            acl::Error::InvalidArgument {
                function: "Graph::abort",
                ..
            }
        ),
        "{refused}"
    );
}

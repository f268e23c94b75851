//! A graph launch writes its buffers through `&self`, so other threads may
//! use those buffers while it is queued. Every other use of memory waits for
//! its conflicts and then records its own mark; between the two it is *in
//! its window* (its work is being queued, its mark is not there yet). A
//! launch must not be queued while a conflicting use of one of its buffers is
//! in its window, nor such a use begin while the launch is in its own: else
//! neither waits for the other (`acl/src/memory/track/window.rs`).
//!
//! These tests race launches against such uses on other threads, with
//! cann-sim's check mode reporting any unordered access; one checks the
//! error a launch gets when the use it would wait for is held open.
//!
//! A global capture refuses synchronous copies on every thread of the
//! context: the tests run one at a time.

mod common;

use acl::graph::{CaptureMode, Graph};
use acl::memory::DeviceMemory;
use acl::{DeviceBuffer, Stream};
use common::{recent, reports};
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `x` (`n` ones), the accumulator and its temporary, allocated on `s`,
/// and the graph doing `acc += x`, captured on `s`.
struct Accumulator {
    _x: DeviceBuffer<f32>,
    acc: DeviceBuffer<f32>,
    _tmp: DeviceBuffer<f32>,
    graph: Graph,
}

/// The tests' lock, two streams, and an accumulator of `n` values on the
/// first.
fn setup(n: usize) -> (MutexGuard<'static, ()>, Stream, Stream, Accumulator) {
    let guard = serial();
    let npu = common::device(0);
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let acc = accumulator(&a, n);
    (guard, a, b, acc)
}

fn accumulator(s: &Stream, n: usize) -> Accumulator {
    let x = s.clone_from_host(&vec![1.0f32; n]).unwrap();
    let mut acc = s.alloc_zeros::<f32>(n).unwrap();
    let mut tmp = s.alloc_zeros::<f32>(n).unwrap();
    let graph = common::accumulate(s, CaptureMode::ThreadLocal, &x, &mut acc, &mut tmp);
    Accumulator {
        _x: x,
        acc,
        _tmp: tmp,
        graph,
    }
}

const ROUNDS: usize = 300;

/// Runs `first` and `second` `rounds` times each, on two threads at once.
fn race(rounds: usize, first: impl Fn() + Sync, second: impl Fn() + Sync) {
    std::thread::scope(|sc| {
        sc.spawn(|| (0..rounds).for_each(|_| first()));
        sc.spawn(|| (0..rounds).for_each(|_| second()));
    });
}

#[test]
fn a_read_on_another_thread_is_ordered_with_concurrent_launches() {
    let n = 4096;
    let (_s, a, b, t) = setup(n);
    let seen = Mutex::new(b.alloc_zeros::<f32>(n).unwrap());
    let before = reports();
    race(
        ROUNDS,
        || t.graph.launch(&a).unwrap(),
        || b.copy_dtod(&t.acc, &mut *seen.lock().unwrap()).unwrap(),
    );
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    // Each value seen is a whole number of launches.
    let last = seen.into_inner().unwrap().to_host_vec().unwrap();
    assert!(last.iter().all(|v| *v == last[0]), "a torn read: {last:?}");
    assert_eq!(t.acc.to_host_vec().unwrap(), vec![ROUNDS as f32; n]);
}

#[test]
fn a_synchronous_read_on_another_thread_is_ordered_with_concurrent_launches() {
    let n = 4096;
    let (_s, a, _b, t) = setup(n);
    let before = reports();
    race(
        ROUNDS / 3,
        || t.graph.launch(&a).unwrap(),
        || {
            let host = t.acc.to_host_vec().unwrap();
            assert!(host.iter().all(|v| *v == host[0]), "a torn read");
        },
    );
    a.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn two_graphs_sharing_a_buffer_launched_on_two_threads_are_ordered() {
    let _s = serial();
    let npu = common::device(0);
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let n = 4096;
    let x = a.clone_from_host(&vec![1.0f32; n]).unwrap();
    let mut acc = a.alloc_zeros::<f32>(n).unwrap();
    let (mut t1, mut t2) = (
        a.alloc_zeros::<f32>(n).unwrap(),
        a.alloc_zeros::<f32>(n).unwrap(),
    );
    let g1 = common::accumulate(&a, CaptureMode::ThreadLocal, &x, &mut acc, &mut t1);
    let g2 = common::accumulate(&a, CaptureMode::ThreadLocal, &x, &mut acc, &mut t2);
    let before = reports();
    race(ROUNDS, || g1.launch(&a).unwrap(), || g2.launch(&b).unwrap());
    a.synchronize().unwrap();
    b.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    assert_eq!(acc.to_host_vec().unwrap(), vec![2.0 * ROUNDS as f32; n]);
}

#[test]
fn a_launch_refuses_while_a_use_of_its_buffer_is_held_between_wait_and_commit() {
    let n = 64;
    let (_s, a, b, t) = setup(n);
    // A raw read of `acc` on `b`, its wait done and its commit not yet,
    // before the graph's first launch.
    let uses = [t.acc.read_access()];
    let held = acl::memory::prepare(&b, &uses[..]).unwrap();
    let err = t.graph.launch(&a).unwrap_err();
    assert!(
        err.to_string().contains("between its wait and its commit"),
        "{err}"
    );
    held.commit();
    // Once committed, the launch goes ahead, after the read.
    t.graph.launch(&a).unwrap();
    assert_eq!(t.acc.to_host_vec().unwrap(), vec![1.0; n]);
}

#[test]
fn a_launch_waits_for_a_held_use_of_a_buffer_an_update_brought_in() {
    use acl::aclnn::{self, Scalar, TensorArg, TensorArgMut};
    let _s = serial();
    let npu = common::device(0);
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let n = 64;
    let x = a.clone_from_host(&vec![1.0f32; n]).unwrap();
    let (mut out1, mut out2) = (
        a.alloc_zeros::<f32>(n).unwrap(),
        a.alloc_zeros::<f32>(n).unwrap(),
    );
    let add = |s: &Stream, alpha: f32, out: &mut DeviceBuffer<f32>| {
        let (tx, mut to) = (TensorArg::new(&x, &[n])?, TensorArgMut::new(out, &[n])?);
        aclnn::add(s, &tx, &tx, &Scalar::new(alpha)?, &mut to)
    };
    let (graph, group) = a
        .capture(CaptureMode::ThreadLocal, |s| {
            Ok::<_, acl::Error>(s.task_group(|s| add(s, 1.0, &mut out1))?.0)
        })
        .unwrap();
    // The update writes `out2` from now on: linked to the graph at once.
    graph
        .update(&a, &group, |s| add(s, 2.0, &mut out2))
        .unwrap();
    let uses = [out2.read_access()];
    let held = acl::memory::prepare(&b, &uses[..]).unwrap();
    let err = graph.launch(&a).unwrap_err();
    assert!(
        err.to_string().contains("between its wait and its commit"),
        "{err}"
    );
    held.commit();
    graph.launch(&a).unwrap();
    assert_eq!(out2.to_host_vec().unwrap(), vec![3.0; n]);
}

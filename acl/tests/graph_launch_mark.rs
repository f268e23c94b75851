//! One mark per graph launch (`acl/src/memory/track/launch.rs`): a launch
//! whose buffers nothing else touched since the previous full launch waits
//! for that launch alone and records one mark in the graph, which each
//! buffer's record takes when it is next locked. These tests run the cases
//! where that shortcut would go wrong if it were unsound — launches on
//! alternating streams, other work on the graph's buffers between launches,
//! two graphs sharing a buffer, a host read behind queued launches — with
//! cann-sim's check mode reporting any unordered access, and check the data.
//!
//! A global capture refuses synchronous copies on every thread of the
//! context: the tests run one at a time.

mod common;

use acl::graph::{CaptureMode, Graph};
use acl::{Device, DeviceBuffer, Stream};
use common::{block, recent, reports};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (MutexGuard<'static, ()>, Device) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    (guard, common::device(0))
}

/// The accumulating graph, captured globally.
fn accumulate(
    s: &Stream,
    x: &DeviceBuffer<f32>,
    acc: &mut DeviceBuffer<f32>,
    tmp: &mut DeviceBuffer<f32>,
) -> Graph {
    common::accumulate(s, CaptureMode::Global, x, acc, tmp)
}

fn times(x: &[f32], n: usize) -> Vec<f32> {
    x.iter().map(|v| v * n as f32).collect()
}

/// Two streams, `x` (`n` copies of `v`), `acc` and the accumulating graph
/// launched once on the first stream.
struct Launched {
    a: Stream,
    b: Stream,
    xs: Vec<f32>,
    acc: DeviceBuffer<f32>,
    tmp: DeviceBuffer<f32>,
    graph: Graph,
    _x: DeviceBuffer<f32>,
}

fn launched_once(npu: &Device, v: f32, n: usize) -> Launched {
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let xs = vec![v; n];
    let x = a.clone_from_host(&xs).unwrap();
    let mut acc = a.alloc_zeros::<f32>(n).unwrap();
    let mut tmp = a.alloc_zeros::<f32>(n).unwrap();
    let graph = accumulate(&a, &x, &mut acc, &mut tmp);
    graph.launch(&a).unwrap();
    Launched {
        a,
        b,
        xs,
        acc,
        tmp,
        graph,
        _x: x,
    }
}

#[test]
fn launches_alternating_between_two_blocked_streams_are_ordered_with_each_other() {
    let (_g, npu) = setup();
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let xs = [1.0f32, 2.0, 3.0, 4.0];
    let x = a.clone_from_host(&xs).unwrap();
    let mut acc = a.alloc_zeros::<f32>(4).unwrap();
    let mut tmp = a.alloc_zeros::<f32>(4).unwrap();
    let graph = accumulate(&a, &x, &mut acc, &mut tmp);
    let before = reports();
    for round in 0..3 {
        // Both streams held: every launch is queued behind the others
        // before any runs, so only the waits order them.
        let (ha, hb) = (block(&a), block(&b));
        for n in 0..6 {
            graph.launch(if n % 2 == 0 { &a } else { &b }).unwrap();
        }
        drop(hb);
        drop(ha);
        assert_eq!(acc.to_host_vec().unwrap(), times(&xs, 6 * (round + 1)));
    }
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn work_on_a_graphs_buffers_between_launches_is_ordered_both_ways() {
    let (_g, npu) = setup();
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let xs = [1.0f32, 2.0, 3.0, 4.0];
    let mut x = a.clone_from_host(&xs).unwrap();
    let mut acc = a.alloc_zeros::<f32>(4).unwrap();
    let mut tmp = a.alloc_zeros::<f32>(4).unwrap();
    let mut seen = b.alloc_zeros::<f32>(4).unwrap();
    let graph = accumulate(&a, &x, &mut acc, &mut tmp);
    let before = reports();
    // Several launches first, so that the later ones skip the buffers.
    for _ in 0..3 {
        graph.launch(&a).unwrap();
    }
    let ha = block(&a);
    graph.launch(&a).unwrap();
    graph.launch(&a).unwrap();
    // On the other stream: read the graph's output (after both launches,
    // held on `a`), then change its input (after their reads of it).
    b.copy_dtod(&acc, &mut seen).unwrap();
    b.fill(&mut x, 10.0f32).unwrap();
    // The next launch follows that work of `b` on the graph's buffers.
    let hb = block(&b);
    graph.launch(&a).unwrap();
    drop(ha);
    drop(hb);
    assert_eq!(seen.to_host_vec().unwrap(), times(&xs, 5));
    let mut want = times(&xs, 5);
    want.iter_mut().for_each(|v| *v += 10.0);
    assert_eq!(acc.to_host_vec().unwrap(), want);
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn two_graphs_sharing_a_buffer_launched_on_two_blocked_streams_are_ordered() {
    let (_g, npu) = setup();
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let xs = [1.0f32, 2.0];
    let x = a.clone_from_host(&xs).unwrap();
    let mut acc = a.alloc_zeros::<f32>(2).unwrap();
    let (mut t1, mut t2) = (
        a.alloc_zeros::<f32>(2).unwrap(),
        a.alloc_zeros::<f32>(2).unwrap(),
    );
    let g1 = accumulate(&a, &x, &mut acc, &mut t1);
    let g2 = accumulate(&a, &x, &mut acc, &mut t2);
    let before = reports();
    for round in 0..3 {
        let (ha, hb) = (block(&a), block(&b));
        for _ in 0..3 {
            g1.launch(&a).unwrap();
            g2.launch(&b).unwrap();
        }
        drop(ha);
        drop(hb);
        assert_eq!(acc.to_host_vec().unwrap(), times(&xs, 6 * (round + 1)));
    }
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn a_host_read_waits_for_the_last_of_many_queued_launches() {
    let (_g, npu) = setup();
    let Launched {
        b, xs, acc, graph, ..
    } = launched_once(&npu, 3.0, 256);
    let before = reports();
    let hb = block(&b);
    for _ in 0..7 {
        graph.launch(&b).unwrap();
    }
    // Released from another thread while the host read waits.
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(hb);
    });
    assert_eq!(acc.to_host_vec().unwrap(), times(&xs, 8));
    release.join().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

#[test]
fn a_buffer_a_dropped_graph_used_is_reused_only_after_its_last_launch() {
    let (_g, npu) = setup();
    let Launched {
        a,
        b,
        xs,
        acc,
        tmp,
        graph,
        ..
    } = launched_once(&npu, 5.0, 64);
    let before = reports();
    let ha = block(&a);
    for _ in 0..4 {
        graph.launch(&a).unwrap();
    }
    // The graph goes (destroyed once its launches are done), and so does
    // the temporary: its memory must not be handed out and written on
    // another stream before the queued launches have used it.
    drop(graph);
    drop(tmp);
    let mut other = b.alloc_zeros::<f32>(64).unwrap();
    b.fill(&mut other, -1.0f32).unwrap();
    drop(ha);
    assert_eq!(acc.to_host_vec().unwrap(), times(&xs, 5));
    assert_eq!(other.to_host_vec().unwrap(), vec![-1.0f32; 64]);
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

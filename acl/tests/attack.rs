//! Adversarial safe code against the memory-ordering model
//! (`acl::memory::track`): each test tries to make the device or the host
//! touch memory that queued work still uses, and fails if cann-sim's check
//! mode (`CANN_SIM_CHECK=report`) reports it, the data is wrong, or a call
//! hangs. Tests that found a break say so in their doc comment; the others
//! are coverage of attacks that the model withstood.
//!
//! Every test runs under one lock: check reports and fault injection are
//! process-wide. Tests of the single-stream mode (before a second stream
//! ever queued tracked work) run in a child process of their own.

mod common;

use common::{recent, reports};

use acl::aclnn::{self, TensorArg, TensorArgMut};
use acl::allocator::AllocatorConfig;
use acl::{DeviceBuffer, DeviceMemoryMut, Event, EventFlags, PinnedHostBuffer, Stream};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::{Duration, Instant};

const N: usize = 4096;

/// One test at a time (reports and injected faults are process-wide).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    let g = LOCK.lock().unwrap_or_else(|p| p.into_inner());
    cann_sim::faults::clear();
    g
}

/// Blocks `stream` behind a host function until the sender is dropped (or
/// 20 s pass).
fn block(stream: &Stream) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = rx.recv_timeout(Duration::from_secs(20));
        })
        .unwrap();
    tx
}

/// Drops `release` on another thread after `after`.
fn release_after(release: mpsc::Sender<()>, after: Duration) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        drop(release);
    })
}

/// Multi-stream mode: two streams queued tracked work.
fn warm_up(a: &Stream, b: &Stream) {
    for s in [a, b] {
        let mut x = s.alloc_zeros::<u8>(16).unwrap();
        s.memset(&mut x, 1).unwrap();
        s.synchronize().unwrap();
    }
}

/// Runs `body` in a child process (this test binary, filtered to `name`),
/// so that it starts in single-stream mode; fails if the child fails or
/// runs longer than `limit` (then it is killed).
/// In the child, a panic exits the process at once (no unwinding through
/// handles that would synchronise a deadlocked stream).
fn in_child(name: &str, limit: Duration, body: impl FnOnce()) {
    const VAR: &str = "ACL_ATTACK_CHILD";
    if std::env::var(VAR).as_deref() == Ok(name) {
        std::panic::set_hook(Box::new(|info| {
            eprintln!("child failed: {info}");
            std::process::exit(1);
        }));
        body();
        std::process::exit(0);
    }
    let _g = serial();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(VAR, name)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (o, e) = (t_out.join().unwrap(), t_err.join().unwrap());
    match status {
        Some(st) if st.success() => {}
        Some(st) => panic!("the child failed ({st}):\n{o}\n{e}"),
        None => panic!("the child hung (killed after {limit:?}):\n{o}\n{e}"),
    }
}

// ---------------------------------------------------------------------------
// Breaks
// ---------------------------------------------------------------------------

/// Regression (found in review). A `Prepared` (safe, public) held across another stream's write
/// and committed afterwards replaces that write's mark without having
/// waited for it: the host then reads the buffer while the write is queued.
#[test]
fn a_prepared_use_committed_after_another_write_forgets_that_write() {
    let _g = serial();
    let npu = common::device(0);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let mut x = s1.clone_from_host(&[0u32; N]).unwrap();
    let prepared = acl::memory::prepare(&s2, vec![x.write_access()]).unwrap();
    let release = block(&s1);
    s1.memset(&mut x, 0x11).unwrap(); // queued, s1 blocked
    prepared.commit(); // x's last write is now "on s2" (done at once)
    let before = reports();
    let releaser = release_after(release, Duration::from_millis(300));
    let got = x.to_host_vec();
    releaser.join().unwrap();
    s1.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    assert_eq!(
        got.expect("the host read succeeds"),
        vec![0x1111_1111u32; N],
        "the host read the buffer before the queued fill"
    );
}

/// Regression (a race: found within a few iterations, found in review). Two threads write the two
/// halves of one buffer (`split_at_mut`) on two streams at the same time:
/// both wait for the marks they see, then each commit *replaces* the
/// allocation's write mark, so the first commit's write is forgotten and
/// the host reads the buffer while it is still queued.
#[test]
fn disjoint_halves_written_concurrently_on_two_streams_keep_both_writes() {
    let _g = serial();
    let npu = common::device(0);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let before = reports();
    let mut failure = None;
    for iter in 0..80 {
        let mut x = s1.clone_from_host(&[0u8; 2 * N]).unwrap(); // no marks
        // Alternate the blocked stream (one at a time: cann-sim runs a
        // device's host functions on one thread).
        let blocked = if iter % 2 == 0 { &s1 } else { &s2 };
        let release = block(blocked);
        {
            let whole = x.slice_mut(..).unwrap();
            let (mut a, mut b) = whole.split_at_mut(N).unwrap();
            let barrier = Barrier::new(2);
            std::thread::scope(|sc| {
                sc.spawn(|| {
                    barrier.wait();
                    s1.memset(&mut a, 1).unwrap();
                });
                sc.spawn(|| {
                    barrier.wait();
                    s2.memset(&mut b, 2).unwrap();
                });
            });
        }
        // The host read must wait for both fills, the blocked one included.
        let releaser = release_after(release, Duration::from_millis(60));
        let got = x.to_host_vec();
        releaser.join().unwrap();
        s1.synchronize().unwrap();
        s2.synchronize().unwrap();
        let mut want = vec![1u8; N];
        want.extend_from_slice(&[2u8; N]);
        match got {
            Ok(v) if v == want && reports() == before => {}
            Ok(v) => {
                let wrong = v.iter().zip(&want).filter(|(a, b)| a != b).count();
                failure = Some(format!(
                    "iteration {iter}: {wrong} wrong bytes, reports {:#?}",
                    recent()
                ));
                break;
            }
            Err(e) => {
                failure = Some(format!("iteration {iter}: {e}"));
                break;
            }
        }
    }
    assert!(failure.is_none(), "{}", failure.unwrap());
}

/// Regression (found in review). `wait_for_conflicts` skips an event it "already waited for" by
/// its raw handle; but the marks' locks are taken one allocation at a
/// time, and in between the event can go back to the device's pool (a host
/// read on another thread drops the mark) and be recorded again for the
/// next allocation's mark — which is then skipped. Here the skipped mark is
/// a reused cached block's previous owner, whose read is still queued on
/// another stream: the operator overwrites the block under it.
#[test]
fn an_event_recycled_during_a_wait_does_not_skip_the_next_wait() {
    cann_sim::require_devices!(5);
    let _g = serial();
    let npu = common::device(4);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let [s, xs, ys, zs] = [(); 4].map(|()| npu.new_stream().unwrap());
    warm_up(&s, &xs);
    warm_up(&ys, &zs);
    // a1: written on xs (finished); its mark's event is held by a1 alone.
    let a1 = xs.alloc_zeros::<f32>(N).unwrap();
    xs.synchronize().unwrap();
    // (cann-sim runs a device's host functions on one thread, in order:
    // zs's, released first, is launched first.)
    let mut mid = zs.alloc_zeros::<f32>(N).unwrap();
    zs.synchronize().unwrap();
    let release_z = block(&zs);
    std::thread::sleep(Duration::from_millis(20));
    // a2: a block whose previous owner is still read by a copy queued on ys.
    let old = ys.alloc_zeros::<f32>(N).unwrap();
    ys.synchronize().unwrap();
    let release_y = block(&ys);
    let mut out = PinnedHostBuffer::<f32>::zeroed(&npu, N).unwrap();
    ys.copy_dtoh(&old, &mut out).unwrap();
    let old_ptr = old.as_raw_ptr();
    drop(old);
    // SAFETY: written by the operator below before any read.
    let mut a2 = unsafe { ys.alloc::<f32>(N) }.unwrap();
    assert_eq!(a2.as_raw_ptr(), old_ptr, "the same block, from ys's pool");
    // mid: its write is queued on zs (blocked); the mark is shared with src.
    let src = PinnedHostBuffer::from_slice(&npu, &[1.0f32; N]).unwrap();
    zs.copy_htod(&src, &mut mid).unwrap();
    let before = reports();
    let op = std::thread::scope(|sc| {
        let (a1, mid, a2, s) = (&a1, &mid, &mut a2, &s);
        // Holds mid's record while it waits for zs.
        let reader = sc.spawn(move || mid.to_host_vec().map(|v| v[0]));
        std::thread::sleep(Duration::from_millis(50));
        // out = a1 + mid: waits for a1's write (its event), then blocks on
        // mid's record, then handles a2.
        let op = sc.spawn(move || {
            let ta = TensorArg::new(a1, &[N])?;
            let tb = TensorArg::new(mid, &[N])?;
            let mut tc = TensorArgMut::new(a2, &[N])?;
            aclnn::add(s, &ta, &tb, &aclnn::Scalar::new(1.0f32)?, &mut tc)
        });
        std::thread::sleep(Duration::from_millis(50));
        // The host read of a1 drops its mark: its event goes back to the pool.
        a1.to_host_vec().unwrap();
        drop(release_z);
        assert_eq!(reader.join().unwrap().unwrap(), 1.0);
        let op = op.join().unwrap();
        // Correct: the operator waits on the device for ys (blocked).
        std::thread::sleep(Duration::from_millis(50));
        let waits = !s.is_complete().unwrap();
        (op, waits)
    });
    drop(release_y);
    ys.synchronize().unwrap();
    let s_done = s.synchronize();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    let (op, waited) = op;
    op.expect("the operator was queued");
    s_done.unwrap();
    assert!(
        waited,
        "the operator did not wait for the queued read of the block's previous owner"
    );
    assert_eq!(out.as_slice().unwrap(), vec![0.0f32; N]);
    assert_eq!(a2.to_host_vec().unwrap(), vec![1.0f32; N]);
}

/// Regression (found in review). A cached block of device B written by device A's *default*
/// stream (a peer copy): the drop fast path compares raw stream handles
/// only, and both default streams are 0, so the block goes straight back to
/// B's default-stream pool while A's copy into it is queued; the next
/// buffer gets it and the host writes it under the copy.
#[test]
fn a_cached_block_written_by_another_devices_default_stream_is_not_reused_early() {
    cann_sim::require_devices!(4);
    let _g = serial();
    let rt = common::runtime();
    let (d0, d1) = (rt.device(2).unwrap(), rt.device(3).unwrap());
    let _ = d1.enable_caching_allocator(AllocatorConfig::default());
    let _ = d0.enable_peer_access(&d1);
    let (a, b) = (d0.new_stream().unwrap(), d1.new_stream().unwrap());
    warm_up(&a, &b);
    let mut x = DeviceBuffer::<u32>::zeroed(&d1, N).unwrap();
    d1.synchronize().unwrap();
    let src = DeviceBuffer::from_host(&d0, &[5u32; N]).unwrap();
    let s0 = d0.default_stream();
    let release = block(&s0);
    s0.copy_dtod(&src, &mut x).unwrap(); // queued: d0 writes d1's block
    let addr = x.as_raw_ptr();
    drop(x);
    let before = reports();
    let y = DeviceBuffer::from_host(&d1, &[9u32; N]);
    let reused = y.as_ref().is_ok_and(|y| y.as_raw_ptr() == addr);
    drop(release);
    d0.synchronize().unwrap();
    assert_eq!(
        reports(),
        before,
        "reused at once: {reused}; check reports: {:#?}",
        recent()
    );
    let y = y.expect("the allocation succeeds");
    assert_eq!(y.to_host_vec().unwrap(), vec![9u32; N], "reused: {reused}");
}

/// Regression (found in review). As above, through the slow path: the block (of device B, for a
/// created stream) is *read* by device A's default stream. The release
/// records that use under the raw key 0, which B's allocator takes for B's
/// own default stream: the event it waits for is recorded on the wrong
/// device's stream and completes at once.
#[test]
fn a_cached_block_read_by_another_devices_default_stream_waits_for_that_read() {
    cann_sim::require_devices!(4);
    let _g = serial();
    let rt = common::runtime();
    let (d0, d1) = (rt.device(2).unwrap(), rt.device(3).unwrap());
    let _ = d1.enable_caching_allocator(AllocatorConfig::default());
    let _ = d0.enable_peer_access(&d1);
    let t = d1.new_stream().unwrap();
    let a = d0.new_stream().unwrap();
    warm_up(&a, &t);
    let x = t.clone_from_host(&[4u32; N]).unwrap();
    t.synchronize().unwrap();
    let mut dst = DeviceBuffer::<u32>::zeroed(&d0, N).unwrap();
    d0.synchronize().unwrap();
    let s0 = d0.default_stream();
    let release = block(&s0);
    s0.copy_dtod(&x, &mut dst).unwrap(); // queued: d0 reads d1's block
    let addr = x.as_raw_ptr();
    drop(x);
    let before = reports();
    std::thread::sleep(Duration::from_millis(20));
    let y = t.clone_from_host(&[9u32; N]);
    let reused = y.as_ref().is_ok_and(|y| y.as_raw_ptr() == addr);
    drop(release);
    d0.synchronize().unwrap();
    assert_eq!(
        reports(),
        before,
        "reused: {reused}; check reports: {:#?}",
        recent()
    );
    y.expect("the allocation succeeds");
    assert_eq!(
        dst.to_host_vec().unwrap(),
        vec![4u32; N],
        "reused: {reused}"
    );
}

/// Regression (found in review). A pending free whose event query fails is freed at once
/// (`Tracking::reap` takes any error for "the work faulted and no longer
/// runs"): one failed `aclrtQueryEventStatus` frees memory a queued fill
/// still writes.
#[test]
fn a_failed_event_query_does_not_free_memory_under_queued_work() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _g = serial();
    let npu = common::device(5);
    let (s, other) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s, &other);
    let mut x = s.alloc_zeros::<u8>(1 << 20).unwrap();
    s.synchronize().unwrap();
    let release = block(&s);
    s.memset(&mut x, 1).unwrap();
    drop(x); // a pending free, behind the fill's event
    let _ = acl::take_release_errors();
    let before = reports();
    cann_sim::faults::inject("aclrtQueryEventStatus", 1, 507899);
    let y = other.alloc_zeros::<u8>(16); // reaps the pending frees first
    cann_sim::faults::clear();
    let after = reports();
    let released = acl::take_release_errors();
    drop(release);
    s.synchronize().unwrap();
    npu.synchronize().unwrap();
    y.unwrap();
    assert_eq!(
        after,
        before,
        "release errors: {released:?}; check reports: {:#?}",
        recent()
    );
}

/// Regression (a hang, found in review). A mark holds the last handle of a stream the user
/// dropped. A host read of a buffer whose write has long finished drops
/// that mark, and with it the stream, whose drop synchronises it: the read
/// waits for a host function queued later on that stream — here one that
/// waits for this very thread (a deadlock without the time limit).
/// Dropping such a buffer blocks the same way ("dropping never waits").
#[test]
fn a_host_read_does_not_wait_for_later_work_of_a_dropped_stream() {
    cann_sim::require_devices!(7);
    let _g = serial();
    let npu = common::device(6);
    let s_old = npu.new_stream().unwrap();
    let other = npu.new_stream().unwrap();
    warm_up(&s_old, &other);
    let y = s_old.alloc_zeros::<u8>(64).unwrap();
    s_old.synchronize().unwrap(); // the fill has run
    let (go_tx, go_rx) = mpsc::channel::<()>();
    s_old
        .launch_host_fn(move || {
            // Waits for the main thread (3 s at most, for the test's sake).
            let _ = go_rx.recv_timeout(Duration::from_secs(3));
        })
        .unwrap();
    drop(s_old); // y's mark holds the last handle
    let t0 = Instant::now();
    let v = y.to_host_vec().unwrap();
    let took = t0.elapsed();
    let _ = go_tx.send(());
    assert_eq!(v, vec![0u8; 64]);
    assert!(
        took < Duration::from_secs(1),
        "the host read of finished work took {took:?}: it dropped the last handle of the \
         stream (held by the buffer's mark), which synchronised the stream and so waited for \
         a host function that waits for this thread"
    );
}

/// Regression (single-stream mode: a hang, found in review). A host read of a buffer whose write
/// has run waits for *everything* queued on the stream since — here a host
/// function that waits for this very thread. With a second stream in the
/// process, the same program returns at once (the mark is an event).
#[test]
fn single_stream_host_read_does_not_wait_for_work_queued_after_the_write() {
    in_child(
        "single_stream_host_read_does_not_wait_for_work_queued_after_the_write",
        Duration::from_secs(30),
        || {
            let npu = common::device(0);
            let s = npu.new_stream().unwrap();
            let mut x = s.alloc_zeros::<u32>(N).unwrap();
            s.memset(&mut x, 1).unwrap();
            s.synchronize().unwrap();
            let (tx, rx) = mpsc::channel::<()>();
            s.launch_host_fn(move || {
                // Waits for the main thread (3 s at most, for the test).
                let _ = rx.recv_timeout(Duration::from_secs(3));
            })
            .unwrap();
            let t0 = Instant::now();
            let v = x.to_host_vec().unwrap();
            let waited = t0.elapsed();
            let _ = tx.send(());
            assert_eq!(v, vec![0x0101_0101; N]);
            assert!(
                waited < Duration::from_secs(1),
                "the host read waited {waited:?} for a host function queued after the write \
                 (a deadlock if that function waited for this thread)"
            );
        },
    );
}

/// A capture turns events on only while it lasts: a single-stream program
/// that captures a graph and launches it on the same stream goes back to
/// marks without events, so the launches record no event (before, the first
/// capture turned multi-stream mode on for the rest of the process: an
/// event per launch).
#[test]
fn single_stream_graph_launches_record_no_event_once_the_capture_ended() {
    cann_sim::sim_only!("counts the simulator's runtime calls");
    in_child(
        "single_stream_graph_launches_record_no_event_once_the_capture_ended",
        Duration::from_secs(60),
        || {
            let npu = common::device(0);
            let s = npu.new_stream().unwrap();
            let mut bufs: Vec<DeviceBuffer<u8>> =
                (0..4).map(|_| s.alloc_zeros::<u8>(64).unwrap()).collect();
            let (graph, ()) = s
                .capture(acl::graph::CaptureMode::Global, |s| {
                    bufs.iter_mut().try_for_each(|b| s.fill(b, 7u8))
                })
                .unwrap();
            let ((), calls) = cann_sim::calls::count(|| {
                for _ in 0..5 {
                    graph.launch(&s).unwrap();
                }
            });
            assert_eq!(calls.get("aclmdlRIExecuteAsync"), 5, "{calls}");
            assert_eq!(calls.get("aclrtRecordEvent"), 0, "{calls}");
            // The host reads wait for the launches (the stream's marks).
            for b in &bufs {
                assert_eq!(b.to_host_vec().unwrap(), vec![7u8; 64]);
            }
            // Ordinary work records no event either.
            let ((), calls) = cann_sim::calls::count(|| s.fill(&mut bufs[0], 1u8).unwrap());
            assert_eq!(calls.get("aclrtRecordEvent"), 0, "{calls}");
            assert_eq!(bufs[0].to_host_vec().unwrap(), vec![1u8; 64]);
        },
    );
}

/// Memory a capture initialises keeps events on after the capture ends
/// (only the path with events looks at it): in a single-stream program its
/// reads are refused until the graph has run, and once it has, work
/// records no event again.
#[test]
fn single_stream_memory_a_capture_initialises_is_refused_until_the_graph_runs() {
    cann_sim::sim_only!("counts the simulator's runtime calls");
    in_child(
        "single_stream_memory_a_capture_initialises_is_refused_until_the_graph_runs",
        Duration::from_secs(60),
        || {
            let npu = common::device(0);
            let s = npu.new_stream().unwrap();
            let mut other = s.alloc_zeros::<u32>(N).unwrap();
            let (graph, z) = s
                .capture(acl::graph::CaptureMode::Global, |s| s.alloc_zeros::<u32>(N))
                .unwrap();
            let e = s.copy_dtod(&z, &mut other).unwrap_err();
            assert!(
                matches!(&e, acl::Error::InvalidArgument { function: "memory::prepare", reason }
                    if reason.starts_with("the memory is initialised by captured work")),
                "{e}"
            );
            assert!(z.to_host_vec().is_err());
            graph.launch(&s).unwrap();
            let ((), calls) = cann_sim::calls::count(|| s.copy_dtod(&z, &mut other).unwrap());
            assert_eq!(calls.get("aclrtRecordEvent"), 0, "{calls}");
            assert_eq!(other.to_host_vec().unwrap(), vec![0u32; N]);
            // A second capture whose memory is dropped unread, with its
            // graph, leaves no reason for events behind.
            let (graph, z) = s
                .capture(acl::graph::CaptureMode::Global, |s| s.alloc_zeros::<u32>(N))
                .unwrap();
            drop((graph, z));
            let ((), calls) = cann_sim::calls::count(|| s.fill(&mut other, 2u32).unwrap());
            assert_eq!(calls.get("aclrtRecordEvent"), 0, "{calls}");
            assert_eq!(other.to_host_vec().unwrap(), vec![2u32; N]);
        },
    );
}

/// Regression (issue 22, hole 7). `memory::record` (the protocol for raw
/// work) put a mark on a second stream without leaving single-stream mode:
/// the next use on the first stream did not wait for that raw work.
#[test]
fn single_stream_raw_work_recorded_on_a_second_stream_is_waited_for() {
    in_child(
        "single_stream_raw_work_recorded_on_a_second_stream_is_waited_for",
        Duration::from_secs(60),
        || {
            const BIG: usize = 16 << 20;
            let npu = common::device(0);
            let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
            let mut x = s1.alloc_zeros::<u8>(BIG).unwrap();
            s1.synchronize().unwrap();
            // Raw work on s2, ordered by hand, then recorded.
            x.write_access().wait_on_host().unwrap();
            // SAFETY: `x` holds BIG bytes and lives until the fill has run
            // (its release waits for the recorded access); s2 is live.
            unsafe { acl::result::memset_async(x.as_raw_mut_ptr(), BIG, 7, BIG, s2.as_raw()) }
                .unwrap();
            acl::memory::record(&s2, &[x.write_access()]);
            let before = reports();
            let y = s1.clone_dtod(&x).expect("the copy waits for the raw fill");
            assert_eq!(reports(), before, "{:#?}", recent());
            assert!(y.to_host_vec().unwrap().iter().all(|&b| b == 7));
        },
    );
}

/// Regression (minor: a leak and a spurious release error, not a race, found in review). A cached
/// block read on another stream whose only handle is then a mark:
/// `Release::run` drops that mark (destroying the stream, after a blocking
/// synchronisation) before `CachingAllocator::free` records the event it
/// waits for on that stream's raw handle, which fails: the block is retired
/// for good and the failure recorded.
#[test]
fn a_cached_block_read_on_a_dropped_stream_is_released_cleanly() {
    cann_sim::require_devices!(2);
    let _g = serial();
    let npu = common::device(1);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let a = npu.new_stream().unwrap();
    let b = npu.new_stream().unwrap();
    warm_up(&a, &b);
    let _ = acl::take_release_errors();
    let before = reports();
    let x = a.clone_from_host(&[2u32; N]).unwrap();
    let mut out = PinnedHostBuffer::<u32>::zeroed(&npu, N).unwrap();
    b.copy_dtoh(&x, &mut out).unwrap();
    out.wait().unwrap(); // forgets out's mark on b
    drop(b); // x's read mark holds the last handle
    drop(x);
    npu.synchronize().unwrap();
    let released = acl::take_release_errors();
    let stats = npu.caching_allocator().unwrap().stats();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
    assert!(
        released.is_empty(),
        "release errors: {released:?}; retired blocks: {}",
        stats.retired_blocks
    );
    assert_eq!(out.as_slice().unwrap(), vec![2u32; N]);
}

// ---------------------------------------------------------------------------
// Coverage: attacks the model withstood
// ---------------------------------------------------------------------------

/// Coverage (a deadlock before commit cd2f302, "a host function never
/// blocks on an allocation's record"): the crate's own test
/// `a_host_function_touching_memory_another_thread_waits_for_cannot_deadlock`,
/// in a process that never used a second stream, where the host wait is a
/// whole-stream synchronisation holding the buffer's record.
#[test]
fn single_stream_host_wait_with_a_host_function_touching_the_memory_cannot_deadlock() {
    cann_sim::require_devices!(4);
    in_child(
        "single_stream_host_wait_with_a_host_function_touching_the_memory_cannot_deadlock",
        Duration::from_secs(30),
        || {
            let npu = common::device(3);
            let stream = npu.new_stream().unwrap();
            let src = stream.clone_from_host(&[9u8; 64]).unwrap();
            let mut pinned = PinnedHostBuffer::<u8>::zeroed(&npu, 64).unwrap();
            let release = block(&stream);
            stream.copy_dtoh(&src, &mut pinned).unwrap();
            let pinned = Arc::new(pinned);
            let (in_fn_tx, in_fn_rx) = mpsc::channel();
            let inner = pinned.clone();
            stream
                .launch_host_fn(move || {
                    let _ = in_fn_tx.send(inner.as_slice().map(|v| v.to_vec()));
                })
                .unwrap();
            let (host_tx, host_rx) = mpsc::channel();
            let waiter = pinned.clone();
            std::thread::spawn(move || {
                let _ = host_tx.send(waiter.as_slice().map(|v| v[0]));
            });
            std::thread::sleep(Duration::from_millis(50));
            drop(release);
            let host = host_rx
                .recv_timeout(Duration::from_secs(5))
                .expect("the waiting thread returned (no deadlock)");
            assert_eq!(host.unwrap(), 9);
            let _ = in_fn_rx
                .recv_timeout(Duration::from_secs(5))
                .expect("the host function returned (no deadlock)");
        },
    );
}

/// Single-stream mode, then a second stream: a write recorded before the
/// second stream existed (a mark without an event) is waited for by a read
/// on the second stream, and a read recorded then by a write there.
#[test]
fn single_to_multi_stream_transition_waits_for_earlier_marks() {
    cann_sim::require_devices!(2);
    in_child(
        "single_to_multi_stream_transition_waits_for_earlier_marks",
        Duration::from_secs(30),
        || {
            let npu = common::device(1);
            let _ = npu.enable_caching_allocator(AllocatorConfig::default());
            let s1 = npu.new_stream().unwrap();
            let mut x = s1.alloc_zeros::<u32>(N).unwrap();
            let y = s1.clone_from_host(&[7u32; N]).unwrap();
            let release = block(&s1);
            s1.memset(&mut x, 0x22).unwrap(); // single-stream mark, queued
            let mut sink = s1.alloc_zeros::<u32>(N).unwrap();
            s1.copy_dtod(&y, &mut sink).unwrap(); // a queued read of y
            let before = reports();
            let s2 = npu.new_stream().unwrap();
            let mut out = PinnedHostBuffer::<u32>::zeroed(&npu, N).unwrap();
            s2.copy_dtoh(&x, &mut out).unwrap(); // must wait for the fill
            let mut y = y;
            s2.memset(&mut y, 0).unwrap(); // must wait for the read
            // A cached block of s1's pool, reused on s1 and used on s2.
            drop(sink);
            // SAFETY: written below before any read.
            let mut z = unsafe { s1.alloc::<u32>(N) }.unwrap();
            s2.memset(&mut z, 3).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            assert!(!s2.is_complete().unwrap(), "s2 waits for s1");
            drop(release);
            assert_eq!(out.as_slice().unwrap(), vec![0x2222_2222u32; N]);
            assert_eq!(y.to_host_vec().unwrap(), vec![0u32; N]);
            assert_eq!(z.to_host_vec().unwrap(), vec![0x0303_0303u32; N]);
            npu.synchronize().unwrap();
            assert_eq!(reports(), before, "check reports: {:#?}", recent());
        },
    );
}

/// Single-stream mode: a cached block used by the host after its previous
/// owner's queued read, and a buffer dropped inside a host function.
#[test]
fn single_stream_reuse_and_drop_in_host_function() {
    cann_sim::require_devices!(2);
    in_child(
        "single_stream_reuse_and_drop_in_host_function",
        Duration::from_secs(30),
        || {
            let npu = common::device(1);
            let _ = npu.enable_caching_allocator(AllocatorConfig::default());
            let s = npu.new_stream().unwrap();
            let a = s.clone_from_host(&[1.0f32; N]).unwrap();
            let mut out = PinnedHostBuffer::<f32>::zeroed(&npu, N).unwrap();
            let release = block(&s);
            s.copy_dtoh(&a, &mut out).unwrap();
            let addr = a.as_raw_ptr();
            drop(a);
            let releaser = release_after(release, Duration::from_millis(100));
            let b = s.clone_from_host(&[2.0f32; N]).unwrap();
            releaser.join().unwrap();
            assert_eq!(b.as_raw_ptr(), addr);
            assert_eq!(out.as_slice().unwrap(), vec![1.0; N]);
            let c = s.alloc_zeros::<u8>(1 << 16).unwrap();
            s.launch_host_fn(move || drop(c)).unwrap();
            let mut d = s.alloc_zeros::<u8>(1 << 16).unwrap();
            s.memset(&mut d, 4).unwrap();
            s.synchronize().unwrap();
            npu.synchronize().unwrap();
            assert_eq!(d.to_host_vec().unwrap(), vec![4u8; 1 << 16]);
            assert_eq!(reports(), 0, "check reports: {:#?}", recent());
        },
    );
}

/// Two halves of one buffer on two streams, one after the other, then
/// dropped while both are queued.
#[test]
fn split_halves_on_two_streams_then_dropped() {
    let _g = serial();
    let npu = common::device(0);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let before = reports();
    let mut x = s1.alloc_zeros::<u8>(2 * N).unwrap();
    // One blocked stream at a time: cann-sim runs a device's host
    // functions on one thread.
    let r1 = block(&s1);
    {
        let whole = x.slice_mut(..).unwrap();
        let (mut a, mut b) = whole.split_at_mut(N).unwrap();
        s1.memset(&mut a, 1).unwrap();
        s2.memset(&mut b, 2).unwrap(); // waits for s1 (same allocation)
        let mut out = PinnedHostBuffer::<u8>::zeroed(&npu, N).unwrap();
        s1.copy_dtoh(&b.as_slice(), &mut out).unwrap();
        drop(out); // pinned memory dropped with a copy into it queued
    }
    std::thread::sleep(Duration::from_millis(30));
    assert!(!s2.is_complete().unwrap(), "s2's fill waits for s1's");
    let releaser = release_after(r1, Duration::from_millis(30));
    let got = x.to_host_vec();
    releaser.join().unwrap();
    let mut want = vec![1u8; N];
    want.extend_from_slice(&[2u8; N]);
    assert_eq!(got.unwrap(), want);
    let mut x = x;
    let r1 = block(&s1);
    s1.memset(&mut x, 9).unwrap();
    drop(x);
    drop(r1);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Three streams read a buffer, a fourth writes it, another thread drops
/// it while everything is queued.
#[test]
fn three_readers_then_a_writer_then_a_drop_on_another_thread() {
    let _g = serial();
    let npu = common::device(0);
    let s: Vec<Stream> = (0..4).map(|_| npu.new_stream().unwrap()).collect();
    warm_up(&s[0], &s[1]);
    let before = reports();
    let mut x = s[3].clone_from_host(&[3u16; N]).unwrap();
    let rel: Vec<_> = s[..3].iter().map(block).collect();
    let mut outs: Vec<PinnedHostBuffer<u16>> = (0..3)
        .map(|_| PinnedHostBuffer::zeroed(&npu, N).unwrap())
        .collect();
    for (st, out) in s[..3].iter().zip(&mut outs) {
        st.copy_dtoh(&x, out).unwrap();
    }
    s[3].memset(&mut x, 0).unwrap();
    let mut y = s[3].alloc_zeros::<u16>(N).unwrap();
    s[3].copy_dtod(&x, &mut y).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert!(
        !s[3].is_complete().unwrap(),
        "the write waits for every read"
    );
    std::thread::spawn(move || drop(x)).join().unwrap();
    for r in rel {
        drop(r);
    }
    for out in &outs {
        assert_eq!(out.as_slice().unwrap(), vec![3u16; N]);
    }
    assert_eq!(y.to_host_vec().unwrap(), vec![0u16; N]);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// A cached block used on stream B, freed (on A's pool) while B's read is
/// blocked, reallocated on A and written by the host.
#[test]
fn cached_block_used_on_another_stream_is_not_reused_under_its_read() {
    cann_sim::require_devices!(2);
    let _g = serial();
    let npu = common::device(1);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let (a, b) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&a, &b);
    let before = reports();
    let x = a.clone_from_host(&[1u32; N]).unwrap();
    let addr = x.as_raw_ptr();
    let release = block(&b);
    let mut sink = b.alloc_zeros::<u32>(N).unwrap();
    b.copy_dtod(&x, &mut sink).unwrap();
    drop(x);
    let mut y = a.clone_from_host(&[2u32; N]).unwrap();
    assert_ne!(y.as_raw_ptr(), addr, "not reused while b reads it");
    y.copy_from_host(&[5u32; N]).unwrap();
    // A buffer moved to a thread and dropped there with queued users.
    let mut z = a.alloc_zeros::<u32>(N).unwrap();
    b.copy_dtod(&y, &mut z).unwrap();
    std::thread::spawn(move || drop(z)).join().unwrap();
    drop(release);
    assert_eq!(sink.to_host_vec().unwrap(), vec![1u32; N]);
    npu.synchronize().unwrap();
    // Now it may be reused.
    let w = a.clone_from_host(&[3u32; N]).unwrap();
    assert_eq!(w.to_host_vec().unwrap(), vec![3u32; N]);
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Pinned memory read by copies on two streams, then written on the host;
/// then written by two streams in turn and read on the host.
#[test]
fn pinned_memory_on_two_streams_then_host_views() {
    let _g = serial();
    let npu = common::device(0);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let before = reports();
    let mut p = PinnedHostBuffer::from_slice(&npu, &[6u32; N]).unwrap();
    let mut d1 = s1.alloc_zeros::<u32>(N).unwrap();
    let mut d2 = s2.alloc_zeros::<u32>(N).unwrap();
    let (r1, r2) = (block(&s1), block(&s2));
    s1.copy_htod(&p, &mut d1).unwrap();
    s2.copy_htod(&p, &mut d2).unwrap();
    let rel = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        drop(r1);
        std::thread::sleep(Duration::from_millis(30));
        drop(r2);
    });
    p.as_mut_slice().unwrap().fill(7); // waits for both copies
    rel.join().unwrap();
    assert_eq!(d1.to_host_vec().unwrap(), vec![6u32; N]);
    assert_eq!(d2.to_host_vec().unwrap(), vec![6u32; N]);
    let r2 = block(&s2);
    s1.copy_dtoh(&d1, &mut p).unwrap();
    s2.copy_dtoh(&d2, &mut p).unwrap(); // waits for s1's write
    s2.memset(&mut d2, 0).unwrap();
    let releaser = release_after(r2, Duration::from_millis(30));
    assert_eq!(p.as_slice().unwrap(), vec![6u32; N]);
    releaser.join().unwrap();
    drop(p); // with nothing queued
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// User events and `Stream::wait_for` next to the tracking; the default
/// stream mixed with created streams.
#[test]
fn events_wait_for_and_the_default_stream() {
    cann_sim::require_devices!(8);
    let _g = serial();
    let npu = common::device(7);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    let d = npu.default_stream();
    warm_up(&s1, &d);
    let before = reports();
    let mut x = d.alloc_zeros::<u32>(N).unwrap();
    let release = block(&s1);
    s1.memset(&mut x, 1).unwrap();
    // The default stream reads x: waits for s1.
    let mut y = DeviceBuffer::<u32>::zeroed(&npu, N).unwrap();
    d.copy_dtod(&x, &mut y).unwrap();
    // s2 orders itself after d by hand (redundant: its write of y waits for
    // d's copy anyway), and a user event makes s1 wait for s2 afterwards:
    // neither confuses the tracking.
    s2.wait_for(&d).unwrap();
    s2.memset(&mut y, 2).unwrap();
    let ev = Event::new(&npu, EventFlags::SYNC).unwrap();
    ev.record(&s2).unwrap();
    s1.wait_event(&ev).unwrap();
    let mut z = s1.alloc_zeros::<u32>(N).unwrap();
    s1.copy_dtod(&y, &mut z).unwrap();
    let releaser = release_after(release, Duration::from_millis(50));
    assert_eq!(y.to_host_vec().unwrap(), vec![0x0202_0202u32; N]);
    releaser.join().unwrap();
    assert_eq!(x.to_host_vec().unwrap(), vec![0x0101_0101u32; N]);
    assert_eq!(z.to_host_vec().unwrap(), vec![0x0202_0202u32; N]);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Streams dropped while marks name them; `close` and drop of buffers with
/// work queued on other streams.
#[test]
fn streams_dropped_under_marks_and_close_versus_drop() {
    cann_sim::require_devices!(8);
    let _g = serial();
    let npu = common::device(7);
    let keep = npu.new_stream().unwrap();
    let s1 = npu.new_stream().unwrap();
    warm_up(&keep, &s1);
    let before = reports();
    let mut x = keep.alloc_zeros::<u8>(N).unwrap();
    let mut y = keep.alloc_zeros::<u8>(N).unwrap();
    let release = block(&s1);
    s1.memset(&mut x, 1).unwrap();
    s1.memset(&mut y, 2).unwrap();
    let s2 = npu.new_stream().unwrap();
    let mut z = s2.alloc_zeros::<u8>(N).unwrap();
    s2.copy_dtod(&x, &mut z).unwrap();
    drop(s2); // the marks keep it
    let closer = std::thread::spawn(move || x.close());
    std::thread::sleep(Duration::from_millis(30));
    assert!(!closer.is_finished(), "close waits for the queued work");
    drop(y);
    drop(s1);
    drop(release);
    closer.join().unwrap().unwrap();
    assert_eq!(z.to_host_vec().unwrap(), vec![1u8; N]);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Faults half-way: a failed device-side wait refuses the copy (nothing
/// queued, nothing recorded); a failed host wait keeps the marks; a failed
/// event record after queued work falls back to the stream.
#[test]
fn injected_faults_half_way_keep_the_order() {
    cann_sim::sim_only!("injects faults into the simulator (cann_sim::faults)");
    let _g = serial();
    let npu = common::device(7);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let before = reports();
    let mut x = s1.alloc_zeros::<u32>(N).unwrap();
    let release = block(&s1);
    s1.memset(&mut x, 1).unwrap();
    let mut y = s2.alloc_zeros::<u32>(N).unwrap();
    s2.synchronize().unwrap();
    cann_sim::faults::inject("aclrtStreamWaitEvent", 1, 507899);
    let e = s2.copy_dtod(&x, &mut y);
    cann_sim::faults::clear();
    assert!(e.is_err(), "the wait failed, so nothing was queued");
    cann_sim::faults::inject("aclrtSynchronizeEvent", 1, 507899);
    cann_sim::faults::inject("aclrtSynchronizeStream", 1, 507899);
    let e = x.copy_from_host(&[3u32; N]);
    cann_sim::faults::clear();
    assert!(e.is_err());
    // The fill's mark survived: this read waits for it.
    cann_sim::faults::inject("aclrtRecordEvent", 1, 507899);
    s2.copy_dtod(&x, &mut y).unwrap(); // its own mark falls back to s2
    cann_sim::faults::clear();
    let releaser = release_after(release, Duration::from_millis(50));
    assert_eq!(y.to_host_vec().unwrap(), vec![0x0101_0101u32; N]);
    releaser.join().unwrap();
    drop(x);
    drop(y);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// A cached block used on another stream and dropped inside a host
/// function of a third one; then the pool is hammered on the block's stream.
#[test]
fn cached_block_dropped_inside_a_host_function_after_cross_stream_use() {
    cann_sim::require_devices!(2);
    let _g = serial();
    let npu = common::device(1);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let [a, b, c] = [(); 3].map(|()| npu.new_stream().unwrap());
    warm_up(&a, &b);
    let before = reports();
    let x = Arc::new(a.clone_from_host(&[8u32; N]).unwrap());
    // c's host function holds the last handle and drops it when told; it
    // runs first on the device's host-function thread.
    let (drop_tx, drop_rx) = mpsc::channel::<()>();
    let x2 = x.clone();
    c.launch_host_fn(move || {
        let _ = drop_rx.recv_timeout(Duration::from_secs(10));
        drop(x2);
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let release = block(&b);
    let mut sink = b.alloc_zeros::<u32>(N).unwrap();
    b.copy_dtod(&*x, &mut sink).unwrap();
    drop(x);
    drop_tx.send(()).unwrap();
    c.synchronize().unwrap();
    std::thread::sleep(Duration::from_millis(20)); // the release thread ran
    let mut ys = Vec::new();
    for i in 0..8u32 {
        let mut y = a.clone_from_host(&[i; N]).unwrap();
        y.copy_from_host(&[i + 100; N]).unwrap();
        ys.push(y);
    }
    drop(release);
    assert_eq!(sink.to_host_vec().unwrap(), vec![8u32; N]);
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Peer copies between two devices' created streams (no caching): the
/// refusal of a wait across devices and frees after both devices' work.
#[test]
fn peer_copies_between_created_streams() {
    cann_sim::require_devices!(8);
    let _g = serial();
    let rt = common::runtime();
    let (d0, d1) = (rt.device(2).unwrap(), rt.device(7).unwrap());
    let _ = d0.enable_peer_access(&d1);
    let (a, b) = (d0.new_stream().unwrap(), d1.new_stream().unwrap());
    warm_up(&a, &b);
    let before = reports();
    let x = b.clone_from_host(&[6u32; N]).unwrap();
    let mut y = a.alloc_zeros::<u32>(N).unwrap();
    let release = block(&a);
    a.copy_dtod(&x, &mut y).unwrap();
    drop(x); // d1's memory read by d0's queued copy
    let mut z = b.alloc_zeros::<u32>(N).unwrap();
    b.memset(&mut z, 1).unwrap();
    drop(release);
    assert_eq!(y.to_host_vec().unwrap(), vec![6u32; N]);
    d0.synchronize().unwrap();
    d1.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Host-function panics and a panicking thread holding a buffer.
#[test]
fn panics_with_queued_work() {
    cann_sim::require_devices!(8);
    let _g = serial();
    let npu = common::device(7);
    let (s1, s2) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    warm_up(&s1, &s2);
    let before = reports();
    let mut x = s1.alloc_zeros::<u32>(N).unwrap();
    let release = block(&s1);
    s1.memset(&mut x, 1).unwrap();
    let y = s2.alloc_zeros::<u32>(N).unwrap();
    s2.launch_host_fn(move || {
        let _keep = &y;
        panic!("boom with a buffer inside");
    })
    .unwrap();
    let r = std::thread::spawn(move || {
        let _x = x;
        panic!("boom holding a buffer with queued work");
    })
    .join();
    assert!(r.is_err());
    drop(release);
    assert!(s2.synchronize().is_err(), "the panic is reported");
    npu.synchronize().unwrap();
    assert_eq!(reports(), before, "check reports: {:#?}", recent());
}

/// Regression (found while adding record recycling). A dropped buffer's
/// heap record is kept for the device's next allocation; a second drop
/// while the slot is full must free its own record, not the stored one
/// (which would be used after free by the next allocation). Threads drop
/// and allocate at once, so the slot is contended; every buffer keeps its
/// own contents.
#[test]
fn buffers_dropped_and_allocated_from_many_threads_keep_their_own_records() {
    let _g = serial();
    let npu = common::device(0);
    let workers: Vec<_> = (0..4u32)
        .map(|t| {
            let npu = npu.clone();
            std::thread::spawn(move || {
                let stream = npu.new_stream().unwrap();
                for round in 0..50u32 {
                    let tag = t * 1000 + round;
                    let bufs: Vec<_> = (0..3)
                        .map(|k| stream.clone_from_host(&[tag + k; 64]).unwrap())
                        .collect();
                    for (k, b) in bufs.iter().enumerate() {
                        assert_eq!(b.to_host_vec().unwrap(), vec![tag + k as u32; 64]);
                    }
                    drop(bufs);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let x = npu.default_stream().clone_from_host(&[9u8; 16]).unwrap();
    assert_eq!(x.to_host_vec().unwrap(), vec![9u8; 16]);
}

//! Stress: eight threads, each with its own streams, queue thousands of
//! copies, fills, event records and waits, host functions and callbacks;
//! every result is checked, nothing deadlocks, and the simulator holds
//! nothing afterwards (allocations, streams, events, subscribed threads).
//!
//! This binary has one test: it owns device 2 and checks its totals.

mod common;

use acl_sys::{ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_SUCCESS};
use cann_sim::acl::*;
use common::*;
use std::os::unix::thread::JoinHandleExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const DEVICE: i32 = 2;
const THREADS: usize = 8;
const ROUNDS: usize = 2000;
const CHUNK: usize = 64;

fn worker(t: usize) {
    use_device(DEVICE);
    let (a, b, c) = (create_stream(), create_stream(), create_stream());
    // A user thread that runs the callbacks of stream `c`.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let reporter = std::thread::spawn(move || {
        while !flag.load(Ordering::Acquire) {
            if aclrtProcessReport(5) != ACL_SUCCESS {
                let _ = aclGetRecentErrMsg();
            }
        }
    });
    #[allow(
        clippy::unnecessary_cast,
        reason = "pthread_t is not u64 on every target"
    )]
    let tid = reporter.as_pthread_t() as u64;
    // SAFETY: live stream.
    ok(unsafe { aclrtSubscribeReport(tid, c) });

    let len = ROUNDS * CHUNK;
    let (src, mid) = (malloc(len), malloc(len));
    let out = malloc_host(len);
    let events: Vec<_> = (0..4).map(|_| create_event()).collect();
    let host_fns = Arc::new(AtomicUsize::new(0));
    let callbacks = Arc::new(AtomicUsize::new(0));
    let value = |i: usize| ((t * 31 + i) % 251 + 1) as u8;
    for i in 0..ROUNDS {
        let off = i * CHUNK;
        // SAFETY: offsets stay inside the allocations.
        let (s, m, o) = unsafe { (src.add(off), mid.add(off), out.add(off)) };
        ok(memset_async(s, CHUNK, i32::from(value(i)), a));
        let e = events[i % events.len()];
        record(e, a);
        // SAFETY: live handles.
        ok(unsafe { aclrtStreamWaitEvent(b, e) });
        ok(memcpy_async(m, s, CHUNK, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
        ok(memcpy_async(o, m, CHUNK, ACL_MEMCPY_DEVICE_TO_HOST, b));
        if i % 16 == 0 {
            let n = host_fns.clone();
            ok(host_fn(a, move || {
                n.fetch_add(1, Ordering::Relaxed);
            }));
            let n = callbacks.clone();
            ok(callback(c, i % 32 == 0, move || {
                n.fetch_add(1, Ordering::Relaxed);
            }));
        }
    }
    for s in [a, b, c] {
        ok(sync(s));
    }
    // SAFETY: `len` readable pinned bytes.
    let got = unsafe { std::slice::from_raw_parts(out, len) };
    for i in 0..ROUNDS {
        assert!(
            got[i * CHUNK..(i + 1) * CHUNK]
                .iter()
                .all(|&x| x == value(i)),
            "thread {t} round {i}"
        );
    }
    assert_eq!(host_fns.load(Ordering::Relaxed), ROUNDS / 16);
    // Non-blocking callbacks may still be running after the sync.
    let deadline = Instant::now() + Duration::from_secs(5);
    while callbacks.load(Ordering::Relaxed) < ROUNDS / 16 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(callbacks.load(Ordering::Relaxed), ROUNDS / 16);

    // SAFETY: live stream.
    ok(unsafe { aclrtUnSubscribeReport(tid, c) });
    stop.store(true, Ordering::Release);
    reporter.join().unwrap();
    for e in events {
        destroy_event(e);
    }
    for s in [a, b, c] {
        destroy_stream(s);
    }
    free(src);
    free(mid);
    free_host(out);
}

#[test]
fn eight_threads_queue_thousands_of_tasks_with_correct_results_and_nothing_left() {
    use_device(DEVICE);
    let before = cann_sim::stats();
    let t0 = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| std::thread::spawn(move || worker(t)))
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let took = t0.elapsed();
    assert!(
        took < cann_sim::backend::time_limit(Duration::from_secs(20)),
        "took {took:?}"
    );
    let after = cann_sim::stats();
    let d = after.device(DEVICE as u32);
    assert_eq!(d.allocations, 0, "{after:?}");
    assert_eq!(d.hbm_used, 0);
    assert_eq!(d.events, 0);
    assert_eq!(d.streams, 1, "only the primary context's default stream");
    assert_eq!(d.stream_workers, 0, "every worker thread was joined");
    assert_eq!(d.contexts, 1);
    assert_eq!(after.host_allocations, before.host_allocations);
    assert_eq!(after.subscribed_threads, 0);
    eprintln!("stress: {} tasks in {took:?}", THREADS * ROUNDS * 5);
}

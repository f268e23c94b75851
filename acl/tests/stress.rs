//! Stress: 8 threads, each with its own streams, queue 10,000 copies, fills,
//! event records and host functions; every result is checked, nothing
//! deadlocks, and the simulator's allocation table is empty at the end.
//!
//! This file is its own test binary (its own process), so the simulator's
//! process-wide statistics belong to it alone.

mod common;

use acl::{PinnedHostBuffer, Stream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const THREADS: usize = 8;
const OPS_PER_THREAD: usize = 1252; // 8 × 1252 = 10,016 queued operations, 4 per iteration
const BUFFERS: usize = 4;
const LEN: usize = 256;

#[test]
fn eight_threads_ten_thousand_queued_operations_verified_and_nothing_leaks() {
    cann_sim::sim_only!("reads the simulator's statistics (cann_sim::stats)");
    let host_fns = Arc::new(AtomicU64::new(0));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let host_fns = host_fns.clone();
            s.spawn(move || {
                let npu = common::device((t % 4) as u32);
                let streams: Vec<Stream> = (0..2).map(|_| npu.new_stream().unwrap()).collect();
                let mut dev: Vec<_> = (0..BUFFERS)
                    .map(|j| streams[j % 2].alloc_zeros::<u8>(LEN).unwrap())
                    .collect();
                let mut host: Vec<_> = (0..BUFFERS)
                    .map(|_| PinnedHostBuffer::<u8>::zeroed(&npu, LEN).unwrap())
                    .collect();
                let mut last = [0u8; BUFFERS];
                let mut queued = 0;
                let mut i = 0usize;
                while queued < OPS_PER_THREAD {
                    let j = i % BUFFERS;
                    // Alternate streams so that half the uses are foreign to the buffer's home.
                    let stream = &streams[i % 2];
                    let value = (i % 251) as u8 + 1;
                    stream.memset(&mut dev[j], value).unwrap();
                    stream.copy_dtoh(&dev[j], &mut host[j]).unwrap();
                    stream.record_event().unwrap();
                    let counter = host_fns.clone();
                    stream
                        .launch_host_fn(move || {
                            counter.fetch_add(1, Ordering::Relaxed);
                        })
                        .unwrap();
                    last[j] = value;
                    queued += 4;
                    i += 1;
                }
                for (j, h) in host.iter().enumerate() {
                    assert!(
                        h.as_slice().unwrap().iter().all(|&b| b == last[j]),
                        "thread {t} buffer {j}"
                    );
                }
                for s in &streams {
                    s.synchronize().unwrap();
                }
            });
        }
    });
    assert_eq!(
        host_fns.load(Ordering::Relaxed),
        (THREADS * OPS_PER_THREAD / 4) as u64
    );
    // Streams whose last handle a mark held are released on the crate's
    // release thread: let it finish (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut stats = cann_sim::stats();
    while stats
        .devices
        .iter()
        .any(|d| d.allocations + d.streams + d.events > 0)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
        stats = cann_sim::stats();
    }
    for (d, dev) in stats.devices.iter().enumerate() {
        assert_eq!(
            dev.allocations, 0,
            "device {d} still has allocations: {dev:?}"
        );
        assert_eq!(dev.streams, 0, "device {d} still has streams: {dev:?}");
        assert_eq!(dev.events, 0, "device {d} still has events: {dev:?}");
    }
    assert_eq!(stats.host_allocations, 0);
    assert!(acl::take_release_errors().is_empty());
}

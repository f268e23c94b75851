//! Copy/compute overlap: how long a copy on an idle stream takes while
//! another stream of the device is busy (a 300 ms host function stands for
//! a long kernel), in the three cases where the previous ordering model
//! (one home stream per buffer) made the copy wait for the busy stream.
//!
//! ```text
//! cargo bench -p acl --bench overlap
//! ```
//!
//! Target: each copy completes within 1% of the busy time.

use acl::{Device, DeviceBuffer, PinnedHostBuffer, Runtime, Stream};
use std::time::{Duration, Instant};

const BUSY: Duration = Duration::from_millis(300);
const N: usize = 1 << 16;

/// Queues `BUSY` of work on `stream`.
fn busy(stream: &Stream) {
    stream
        .launch_host_fn(|| std::thread::sleep(BUSY))
        .expect("host fn");
}

/// Times `copy` (which queues a copy on `copy_stream`) until that stream
/// has drained, while `compute` is busy.
fn timed(compute: &Stream, copy_stream: &Stream, copy: impl FnOnce()) -> Duration {
    busy(compute);
    let t = Instant::now();
    copy();
    copy_stream.synchronize().expect("copy");
    let took = t.elapsed();
    assert!(
        !compute.is_complete().expect("query"),
        "the busy stream finished first: the measurement is void"
    );
    compute.synchronize().expect("compute");
    took
}

fn main() {
    cann_sim::install().expect("cann-sim");
    let rt = Runtime::init().expect("init");
    let npu = Device::new(&rt, 0).expect("device");
    let (compute, copy) = (npu.new_stream().unwrap(), npu.new_stream().unwrap());
    // Both streams in use from the start, as in a training loop.
    let mut warm = compute.alloc_zeros::<u8>(16).unwrap();
    copy.memset(&mut warm, 0).unwrap();
    npu.synchronize().unwrap();

    let host = PinnedHostBuffer::from_slice(&npu, &vec![1.0f32; N]).unwrap();
    let mut back = PinnedHostBuffer::<f32>::zeroed(&npu, N).unwrap();

    // 1. H2D into a buffer last written on the busy stream (before the
    //    busy work): the old model waited for all of compute's queue.
    let mut dst = compute.alloc_zeros::<f32>(N).unwrap();
    let t1 = timed(&compute, &copy, || copy.copy_htod(&host, &mut dst).unwrap());

    // 2. H2D into a buffer of the copy stream, right after compute queued a
    //    read of another buffer last written on the copy stream: the old
    //    model made the copy stream wait for compute's queue.
    let other = copy.clone_from_host(&vec![2.0f32; N]).unwrap();
    let mut sink = compute.alloc_zeros::<f32>(N).unwrap();
    let mut dst2: DeviceBuffer<f32> = copy.alloc_zeros(N).unwrap();
    npu.synchronize().unwrap();
    let t2 = timed(&compute, &copy, || {
        compute.copy_dtod(&other, &mut sink).unwrap();
        copy.copy_htod(&host, &mut dst2).unwrap();
    });

    // 3. D2H of a buffer last written on the busy stream (before the busy
    //    work) on the copy stream: the old model waited for compute.
    let t3 = timed(&compute, &copy, || copy.copy_dtoh(&dst, &mut back).unwrap());
    assert_eq!(back.as_slice().unwrap()[0], 1.0);

    println!(
        "| case | copy time while the other stream is busy for {} ms | share of the busy time |",
        BUSY.as_millis()
    );
    println!("|---|---:|---:|");
    for (name, t) in [
        ("H2D into a buffer last written on the busy stream", t1),
        (
            "H2D on the copy stream after the busy stream read a copy-stream buffer",
            t2,
        ),
        ("D2H of a buffer last written on the busy stream", t3),
    ] {
        println!(
            "| {name} | {:.3} ms | {:.2}% |",
            t.as_secs_f64() * 1e3,
            100.0 * t.as_secs_f64() / BUSY.as_secs_f64()
        );
    }
}

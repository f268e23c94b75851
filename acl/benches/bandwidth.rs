//! Copy bandwidth of the simulator against a plain host `memcpy`, for
//! 64 MiB host↔device copies (BENCHMARKS.md). Best of several runs, in one
//! process, on the same machine:
//!
//! ```text
//! cargo bench -p acl --bench bandwidth
//! ```

use acl::{Device, PinnedHostBuffer, Runtime};
use std::hint::black_box;
use std::time::{Duration, Instant};

const BYTES: usize = 64 << 20;
const RUNS: usize = 9;

fn best(mut f: impl FnMut()) -> Duration {
    f(); // warm up: page faults, caches
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn gib_s(d: Duration) -> f64 {
    BYTES as f64 / d.as_secs_f64() / f64::from(1u32 << 30)
}

fn main() {
    // `cargo bench` passes --bench; this harness takes no options.
    cann_sim::install().expect("cann-sim");
    let rt = Runtime::init().expect("init");
    let npu = Device::new(&rt, 0).expect("device");
    let stream = npu.new_stream().expect("stream");

    let src = vec![0x5au8; BYTES];
    let mut dst = vec![0u8; BYTES];
    let memcpy = best(|| {
        dst.copy_from_slice(black_box(&src));
        black_box(&mut dst);
    });

    let mut dev = stream.alloc_zeros::<u8>(BYTES).expect("alloc");
    let h2d = best(|| dev.copy_from_host(black_box(&src)).expect("h2d"));
    let d2h = best(|| dev.copy_to_host(black_box(&mut dst)).expect("d2h"));

    let pinned_src = PinnedHostBuffer::from_slice(&npu, &src).expect("pinned");
    let mut pinned_dst = PinnedHostBuffer::<u8>::zeroed(&npu, BYTES).expect("pinned");
    let h2d_async = best(|| {
        stream.copy_htod(&pinned_src, &mut dev).expect("copy");
        stream.synchronize().expect("sync");
    });
    let d2h_async = best(|| {
        stream.copy_dtoh(&dev, &mut pinned_dst).expect("copy");
        stream.synchronize().expect("sync");
    });

    println!("64 MiB copies, best of {RUNS}:");
    println!("| copy | GiB/s | vs memcpy |");
    println!("|---|---:|---:|");
    for (name, d) in [
        ("host memcpy (baseline)", memcpy),
        ("H2D, pageable, DeviceBuffer::copy_from_host", h2d),
        ("D2H, pageable, DeviceBuffer::copy_to_host", d2h),
        ("H2D, pinned, Stream::copy_htod + synchronize", h2d_async),
        ("D2H, pinned, Stream::copy_dtoh + synchronize", d2h_async),
    ] {
        println!(
            "| {name} | {:.2} | {:.2} |",
            gib_s(d),
            memcpy.as_secs_f64() / d.as_secs_f64()
        );
    }
}

//! Performance checks behind BENCHMARKS.md (ignored: run them in release,
//! `cargo test --release -p npu-smi-rs --test bench -- --ignored --nocapture`).
//!
//! - Reading every metric of 8 devices in process on the sim backend
//!   (target ≤ 1 ms).
//! - The exporter under 10 scrapes/s for 60 s over loopback (target: p99
//!   scrape latency ≤ 10 ms). Bounded: 600 requests to 127.0.0.1 only, each
//!   with a 5 s timeout.

use npu_smi_rs::{BackendChoice, Npu};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn npu() -> Npu {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let dir = std::env::temp_dir().join(format!("npu-smi-rs-bench-{}", std::process::id()));
        // SAFETY: set once, before the simulator reads the environment.
        unsafe { std::env::set_var("CANN_SIM_SHM_DIR", dir) };
    });
    Npu::with_backend(BackendChoice::Sim).unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[test]
#[ignore = "benchmark; run in release with --ignored --nocapture"]
fn bench_every_metric_of_8_devices_in_process() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let npu = npu();
    let devices = npu.devices().unwrap();
    assert_eq!(devices.len(), 8);
    let read_all = || devices.iter().map(|d| d.status()).collect::<Vec<_>>();
    for _ in 0..100 {
        std::hint::black_box(read_all());
    }
    let mut times = Vec::new();
    for _ in 0..2000 {
        let t = Instant::now();
        let s = read_all();
        times.push(t.elapsed());
        assert!(s.iter().all(|s| s.errors.is_empty()));
    }
    // Including enumeration, as a fresh `info` does.
    let mut with_enum = Vec::new();
    for _ in 0..500 {
        let t = Instant::now();
        let s: Vec<_> = npu.devices().unwrap().iter().map(|d| d.status()).collect();
        with_enum.push(t.elapsed());
        std::hint::black_box(s);
    }
    times.sort();
    with_enum.sort();
    println!(
        "every metric of 8 devices (sim, in process): median {:?}, p99 {:?}, max {:?}; with enumeration: median {:?}, p99 {:?}",
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1],
        percentile(&with_enum, 0.5),
        percentile(&with_enum, 0.99)
    );
    assert!(percentile(&times, 0.5) <= Duration::from_millis(1));
}

fn scrape(addr: &str) -> Duration {
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut body = Vec::new();
    s.read_to_end(&mut body).unwrap();
    let d = t.elapsed();
    assert!(
        body.starts_with(b"HTTP/1.0 200"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    d
}

#[test]
#[ignore = "60 s load test; run in release with --ignored --nocapture"]
fn bench_exporter_10_scrapes_per_second_for_60_s() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
        .min(60);
    let total = seconds * 10;
    let npu = npu();
    let server = npu_smi_rs::cli::export::bind("127.0.0.1:0").unwrap();
    let addr = server.server_addr().to_ip().unwrap().to_string();
    assert!(addr.starts_with("127.0.0.1:"));
    let srv =
        std::thread::spawn(move || npu_smi_rs::cli::export::serve(&npu, &server, Some(total)));
    let start = Instant::now();
    let mut times = Vec::new();
    for i in 0..total {
        let due = start + Duration::from_millis(100 * i);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        times.push(scrape(&addr));
    }
    srv.join().unwrap();
    times.sort();
    println!(
        "exporter, {total} scrapes at 10/s over {:?}: median {:?}, p99 {:?}, max {:?}",
        start.elapsed(),
        percentile(&times, 0.5),
        percentile(&times, 0.99),
        times[times.len() - 1]
    );
    assert!(percentile(&times, 0.99) <= Duration::from_millis(10));
}

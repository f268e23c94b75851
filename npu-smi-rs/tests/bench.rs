//! Performance checks behind BENCHMARKS.md (ignored: run them in release,
//! `cargo test --release -p npu-smi-rs --test bench -- --ignored --nocapture`).
//!
//! - Reading every metric of 8 devices in process on the sim backend
//!   (target ≤ 1 ms).
//! - The exporter under 10 scrapes/s for 60 s over loopback (target: p99
//!   scrape latency ≤ 10 ms). Bounded: 600 requests to 127.0.0.1 only, each
//!   with a 5 s timeout.
//! - The exporter binary while 200 slow or stuck clients hold connections
//!   (target: p99 scrape latency ≤ 10 ms, peak RSS bounded). 127.0.0.1
//!   only; `BENCH_SECONDS` (default 30, at most 60) long;
//!   `BENCH_EXPORTER_BIN` runs another build of the binary (to compare),
//!   `BENCH_SLOW_CLIENTS` sets their number (0 for a baseline).

mod common;

use npu_smi_rs::{BackendChoice, Npu};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

fn npu() -> Npu {
    common::private_sim_dir("npu-smi-rs-bench-");
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
    let listener = npu_smi_rs::cli::export::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    assert!(addr.starts_with("127.0.0.1:"));
    let options = npu_smi_rs::cli::export::Options {
        max_requests: Some(total),
        ..Default::default()
    };
    let srv = std::thread::spawn(move || {
        npu_smi_rs::cli::export::serve(&npu, listener, &options).unwrap()
    });
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

/// The exporter binary on the simulator, on 127.0.0.1: killed, and its
/// telemetry directory removed, on drop.
struct ExporterProcess {
    child: std::process::Child,
    addr: String,
    /// The telemetry directory, removed when dropped.
    _dir: tempfile::TempDir,
}

impl ExporterProcess {
    fn start() -> ExporterProcess {
        let bin = std::env::var("BENCH_EXPORTER_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_npu-smi-rs").to_string());
        let dir = tempfile::Builder::new()
            .prefix("npu-smi-rs-bench-slow-")
            .tempdir()
            .unwrap();
        let mut child = std::process::Command::new(bin)
            .args(["export", "--backend", "sim", "--listen", "127.0.0.1:0"])
            .env_clear()
            .env("CANN_SIM_SHM_DIR", dir.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8];
        while err.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        // Later messages (accept failures) are shown as they come.
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::stderr()));
        let line = String::from_utf8_lossy(&line).into_owned();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("{line}"))
            .to_string();
        ExporterProcess {
            child,
            addr,
            _dir: dir,
        }
    }

    /// `VmRSS` and `VmHWM` (peak) of the exporter, in KiB.
    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for ExporterProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The directory is removed after this, when the fields drop.
    }
}

/// How a slow client misbehaves.
#[derive(Clone, Copy, Debug)]
enum Slow {
    /// Sends a request head one byte every 100 ms, never finishing it.
    Trickle,
    /// Sends a request announcing a body, and no body.
    NoBody,
    /// Pipelines requests as fast as the server takes them, never reading.
    Pipeline,
    /// Connects and sends nothing.
    Idle,
}

struct SlowClient {
    kind: Slow,
    stream: Option<std::net::TcpStream>,
}

const PIPELINED: &[u8] =
    b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";

impl SlowClient {
    /// Keeps the client connected and misbehaving; returns whether it had
    /// to reconnect (the server closed it).
    fn tick(&mut self, addr: &str) -> bool {
        let mut reconnected = false;
        if self.stream.is_none() {
            let Ok(s) = std::net::TcpStream::connect(addr) else {
                return false;
            };
            let first: &[u8] = match self.kind {
                Slow::Trickle => b"GET /metrics HTTP/1.1\r\nX-Slow: ",
                Slow::NoBody => {
                    b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
                }
                Slow::Pipeline => PIPELINED,
                Slow::Idle => b"",
            };
            let ok = s.set_nonblocking(true).is_ok() && (&s).write(first).is_ok();
            self.stream = ok.then_some(s);
            reconnected = true;
        }
        let Some(s) = &self.stream else {
            return reconnected;
        };
        let alive = match self.kind {
            Slow::Trickle => {
                !matches!((&*s).write(b"a"), Err(e) if e.kind() != std::io::ErrorKind::WouldBlock)
            }
            Slow::Pipeline => {
                let mut alive = true;
                for _ in 0..100 {
                    match (&*s).write(PIPELINED) {
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => {
                            alive = false;
                            break;
                        }
                    }
                }
                alive
            }
            // Closed by the server once `peek` sees the end or an answer
            // (the 413's bytes are left unread).
            Slow::NoBody | Slow::Idle => {
                let mut b = [0u8; 1];
                match s.peek(&mut b) {
                    // The end, or a response: the server is done with it.
                    Ok(_) => false,
                    Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
                }
            }
        };
        if !alive {
            self.stream = None;
        }
        reconnected
    }
}

#[test]
#[ignore = "30 s load test; run in release with --ignored --nocapture"]
fn bench_exporter_scrapes_while_200_slow_clients_are_connected() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let seconds: u64 = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
        .min(60);
    // Fewer (0: a baseline under the same machine load) with BENCH_SLOW_CLIENTS.
    let slow_clients: usize = std::env::var("BENCH_SLOW_CLIENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let exporter = ExporterProcess::start();
    let addr = exporter.addr.clone();
    assert!(addr.starts_with("127.0.0.1:"));
    for _ in 0..20 {
        scrape_timed(&addr);
    }
    let (_, idle_peak) = exporter.rss_kib();

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reconnects = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let slow = {
        let (stop, reconnects, addr) = (stop.clone(), reconnects.clone(), addr.clone());
        std::thread::spawn(move || {
            let kinds = [Slow::Trickle, Slow::NoBody, Slow::Pipeline, Slow::Idle];
            let mut clients: Vec<SlowClient> = (0..slow_clients)
                .map(|i| SlowClient {
                    kind: kinds[i % kinds.len()],
                    stream: None,
                })
                .collect();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for c in &mut clients {
                    if c.tick(&addr) {
                        reconnects.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            clients.iter().filter(|c| c.stream.is_some()).count()
        })
    };
    std::thread::sleep(Duration::from_secs(1));

    let total = seconds * 10;
    let start = Instant::now();
    let mut times = Vec::new();
    let mut failures = 0;
    let mut peak_rss = 0;
    for i in 0..total {
        let due = start + Duration::from_millis(100 * i);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        match scrape_timed(&addr) {
            Some(t) => times.push(t),
            None => failures += 1,
        }
        if failures == 10 {
            println!("10 scrapes failed: stopping after {} scrapes", i + 1);
            break;
        }
        peak_rss = peak_rss.max(exporter.rss_kib().0);
    }
    // Keep-alive: 100 scrapes on one HTTP/1.1 connection, still under load.
    let keep_alive = keep_alive_scrapes(&addr, 100);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let still_connected = slow.join().unwrap();
    let (_, hwm) = exporter.rss_kib();
    times.sort();
    let (p50, p99, max) = if times.is_empty() {
        (None, None, None)
    } else {
        (
            Some(percentile(&times, 0.5)),
            Some(percentile(&times, 0.99)),
            times.last().copied(),
        )
    };
    println!(
        "exporter with {slow_clients} slow clients (a quarter each trickling a head, sending no body, pipelining \
         without reading, idle; {} reconnections, {still_connected} connected at the end): {} scrapes at 10/s over {:?}: \
         {failures} failed (5 s timeout), median {p50:?}, p99 {p99:?}, max {max:?}; keep-alive: {keep_alive}; \
         exporter RSS: peak before the slow clients {idle_peak} KiB, highest sampled during {peak_rss} KiB, peak after {hwm} KiB",
        reconnects.load(std::sync::atomic::Ordering::Relaxed),
        times.len() + failures,
        start.elapsed(),
    );
    assert_eq!(failures, 0);
    assert!(p99.is_some_and(|p| p <= Duration::from_millis(10)));
    assert!(hwm < 64 * 1024, "{hwm} KiB");
}

/// One HTTP/1.0 scrape on a new connection: its time, `None` on failure.
fn scrape_timed(addr: &str) -> Option<Duration> {
    let t = Instant::now();
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut body = Vec::new();
    s.read_to_end(&mut body).ok()?;
    (body.starts_with(b"HTTP/1.0 200") && body.ends_with(b"# EOF\n")).then(|| t.elapsed())
}

/// `n` scrapes on one keep-alive connection: their median and p99, or the
/// failure.
fn keep_alive_scrapes(addr: &str, n: usize) -> String {
    let run = || -> std::io::Result<Vec<Duration>> {
        let mut s = std::net::TcpStream::connect(addr)?;
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
        let mut times = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        for _ in 0..n {
            let t = Instant::now();
            s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")?;
            let mut got = Vec::new();
            while !got.ends_with(b"# EOF\n") {
                let k = s.read(&mut buf)?;
                if k == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                got.extend_from_slice(&buf[..k]);
            }
            times.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(10));
        }
        times.sort();
        Ok(times)
    };
    match run() {
        Ok(t) => format!(
            "{n} scrapes, median {:?}, p99 {:?}",
            percentile(&t, 0.5),
            percentile(&t, 0.99)
        ),
        Err(e) => format!("failed: {e}"),
    }
}

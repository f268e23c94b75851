//! `npu-smi-rs export` as a network service: hostile and stuck clients,
//! the connection limit, `accept` failures and a fatal bind error. Each test
//! runs the binary on the simulator with a private telemetry directory, and
//! kills it and removes the directory when done (also when it fails).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_npu-smi-rs");

/// An empty scratch directory, removed with its contents when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("npu-smi-rs-exporter-{name}-"))
        .tempdir()
        .unwrap()
}

/// The binary with a clean environment (no CANN variables, an empty PATH)
/// and a private simulator telemetry directory under `dir`.
fn command(dir: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_clear()
        .env("PATH", dir.join("bin"))
        .env("CANN_SIM_SHM_DIR", dir.join("shm"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// A running exporter: killed, and its directory removed, on drop.
struct Exporter {
    child: Child,
    addr: String,
    /// Removed after `Drop::drop` has stopped the child.
    _dir: tempfile::TempDir,
    /// Standard error after the first line, as it arrives.
    stderr: Arc<Mutex<String>>,
}

impl Exporter {
    fn start(name: &str, extra: &[&str]) -> Exporter {
        Exporter::start_with(name, extra, |_| {})
    }

    fn start_with(name: &str, extra: &[&str], setup: impl FnOnce(&mut Command)) -> Exporter {
        let mut args = vec!["--backend", "sim"];
        args.extend_from_slice(extra);
        Exporter::start_on(name, &args, setup)
    }

    /// `export --listen 127.0.0.1:0` with `args` (which choose the backend).
    fn start_on(name: &str, args: &[&str], setup: impl FnOnce(&mut Command)) -> Exporter {
        let dir = scratch(name);
        let mut all = vec!["export", "--listen", "127.0.0.1:0"];
        all.extend_from_slice(args);
        let mut c = command(dir.path(), &all);
        setup(&mut c);
        let mut child = c.spawn().unwrap();
        let mut err = child.stderr.take().unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8];
        while err.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut exporter = Exporter {
            child,
            addr: String::new(),
            _dir: dir,
            stderr,
        };
        exporter.addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no address in the exporter's first line: {line:?}"))
            .to_string();
        exporter
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// The exporter's peak resident memory, in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// Sends `raw` on a fresh connection and reads until the server closes it
/// (or resets it, or 5 s pass): what arrived.
fn exchange(addr: &str, raw: &[u8]) -> String {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    while let Ok(n @ 1..) = s.read(&mut buf) {
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// One `GET /metrics` (HTTP/1.0, as a simple scraper sends it): its time and
/// the response.
fn scrape(addr: &str) -> (Duration, String) {
    let t = Instant::now();
    let response = exchange(
        addr,
        format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes(),
    );
    (t.elapsed(), response)
}

fn assert_scrape_works(addr: &str) {
    let (_, response) = scrape(addr);
    assert!(response.starts_with("HTTP/1.0 200 OK"), "{response}");
    assert!(response.contains("npu_chip_info_power{"), "{response}");
}

/// Scrapes until one succeeds, for at most `limit`.
fn scrape_within(addr: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        let (_, response) = scrape(addr);
        if response.starts_with("HTTP/1.0 200 OK") {
            break;
        }
        assert!(Instant::now() < deadline, "{response}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_huge_content_length_is_refused_without_reading_and_the_exporter_lives() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut e = Exporter::start("content-length", &[]);
    for method in ["POST", "GET"] {
        let response = exchange(
            &e.addr,
            format!("{method} /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n")
                .as_bytes(),
        );
        assert!(
            response.starts_with("HTTP/1.1 413 Payload Too Large"),
            "{method}: {response}"
        );
        assert!(response.contains("takes no request body"), "{response}");
        assert!(e.alive());
    }
    // A chunked body is refused the same way.
    let response = exchange(
        &e.addr,
        b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffff\r\n",
    );
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert_scrape_works(&e.addr);
    assert!(e.alive());
    assert!(e.peak_rss_kib() < 64 * 1024, "{} KiB", e.peak_rss_kib());
}

#[test]
fn a_huge_header_is_refused_with_bounded_memory() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut e = Exporter::start("header", &[]);
    // Over the 8 KiB limit, small enough to be read whole: a clean 431.
    let long = format!(
        "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: {}\r\n\r\n",
        "a".repeat(10_000)
    );
    let response = exchange(&e.addr, long.as_bytes());
    assert!(
        response.starts_with("HTTP/1.1 431 Request Header Fields Too Large"),
        "{response}"
    );
    // A 300 MiB header line: the exporter stops reading it early.
    let mut s = connect(&e.addr);
    s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut sent = 0usize;
    if s.write_all(b"GET /metrics HTTP/1.1\r\nX-Long: ").is_ok() {
        while sent < 300 << 20 && s.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
    }
    drop(s);
    assert!(
        sent < 32 << 20,
        "the exporter took {} MiB of one header",
        sent >> 20
    );
    assert!(e.alive());
    assert!(e.peak_rss_kib() < 64 * 1024, "{} KiB", e.peak_rss_kib());
    assert_scrape_works(&e.addr);
}

/// Clients that hold a connection without finishing: half a request head,
/// requests whose announced body never comes, and pipelined requests whose
/// responses are never read (sent until the connection takes no more).
fn stuck_clients(addr: &str) -> Vec<TcpStream> {
    let mut stuck = Vec::new();
    let mut half = connect(addr);
    half.write_all(b"GET /metrics HTTP/1.1\r\nHo").unwrap();
    stuck.push(half);
    for method in ["GET", "POST"] {
        let mut no_body = connect(addr);
        no_body
            .write_all(
                format!("{method} /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
                    .as_bytes(),
            )
            .unwrap();
        stuck.push(no_body);
    }
    let pipelined = connect(addr);
    pipelined.set_nonblocking(true).unwrap();
    let requests = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".repeat(100);
    let mut blocked_since = None;
    let start = Instant::now();
    while blocked_since.is_none_or(|t: Instant| t.elapsed() < Duration::from_millis(300))
        && start.elapsed() < Duration::from_secs(10)
    {
        match (&pipelined).write(requests.as_bytes()) {
            Ok(_) => blocked_since = None,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                blocked_since.get_or_insert_with(Instant::now);
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => break,
        }
    }
    stuck.push(pipelined);
    stuck
}

#[test]
fn stuck_clients_do_not_delay_another_clients_scrape() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let e = Exporter::start("stuck", &[]);
    let sorted_scrape_times = || {
        let mut times: Vec<Duration> = (0..30)
            .map(|_| {
                let (t, response) = scrape(&e.addr);
                assert!(response.starts_with("HTTP/1.0 200 OK"), "{response}");
                t
            })
            .collect();
        times.sort();
        times
    };
    // What a scrape costs on this machine and build with nobody else
    // connected: an instrumented (sanitizer) build on a loaded machine is
    // many times slower than the release target, so the target alone is not
    // the bar.
    let alone = sorted_scrape_times();
    let _stuck = stuck_clients(&e.addr);
    std::thread::sleep(Duration::from_millis(200));
    let times = sorted_scrape_times();
    // The stuck clients hold their connections for 10 s (the I/O timeout).
    // The target is 10 ms; its p99 is the release benchmark's
    // (BENCHMARKS.md): here the median must meet it or stay within four
    // times the median of scrapes without the stuck clients (the stuck
    // connections' threads share the cores: 2.2× under AddressSanitizer on
    // a loaded machine), and every scrape take under a second (a scrape
    // queued behind a stuck client takes the 10 s timeout).
    let limit = cann_sim::backend::time_limit;
    let median_bar = limit(Duration::from_millis(10)).max(alone[15] * 4);
    assert!(times[15] <= median_bar, "{times:?} (alone: {alone:?})");
    assert!(times[29] <= limit(Duration::from_secs(1)), "{times:?}");
}

#[test]
fn a_client_that_does_not_read_its_responses_is_dropped_after_the_timeout() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let e = Exporter::start("no-reader", &["--io-timeout-ms", "300"]);
    let mut s = connect(&e.addr);
    s.set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    let start = Instant::now();
    let mut sent = 0u64;
    let closed = loop {
        match s.write(request) {
            Ok(_) => sent += 1,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => break e.kind(),
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still connected after {sent} requests and {:?}",
            start.elapsed()
        );
    };
    assert!(
        matches!(closed, ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
        "{closed:?}"
    );
    assert_scrape_works(&e.addr);
}

#[test]
fn connections_beyond_the_limit_are_refused_at_once() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let e = Exporter::start("limit", &["--max-connections", "3"]);
    let held: Vec<TcpStream> = (0..3).map(|_| connect(&e.addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let response = exchange(
        &e.addr,
        format!("GET /metrics HTTP/1.0\r\nHost: {}\r\n\r\n", e.addr).as_bytes(),
    );
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert!(
        response.is_empty() || response.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{response}"
    );
    drop(held);
    scrape_within(&e.addr, Duration::from_secs(5));
}

#[test]
fn accept_failures_for_lack_of_descriptors_are_retried_and_reported_once() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    use std::os::unix::process::CommandExt;
    let mut e = Exporter::start_with("emfile", &[], |c| {
        let limit = libc::rlimit {
            rlim_cur: 24,
            rlim_max: 24,
        };
        // SAFETY: the closure runs in the forked child before exec; it only
        // calls setrlimit, which is async-signal-safe, and reads errno.
        unsafe {
            c.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    // More idle connections than the exporter has descriptors.
    let held: Vec<TcpStream> = (0..40).map(|_| connect(&e.addr)).collect();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !e.stderr().contains("Too many open files") {
        assert!(
            Instant::now() < deadline,
            "nothing reported: {:?}",
            e.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(e.alive(), "{}", e.stderr());
    drop(held);
    scrape_within(&e.addr, Duration::from_secs(5));
    assert!(e.alive());
    let err = e.stderr();
    assert_eq!(err.matches("Too many open files").count(), 1, "{err}");
    assert!(err.contains("raise the descriptor limit"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_port_in_use_is_a_fatal_error_with_a_message() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dir = scratch("bind");
    let out = command(
        dir.path(),
        &["export", "--backend", "sim", "--listen", &addr],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "npu-smi-rs: error: `export --listen {addr}` failed: cannot listen on {addr}: "
        )),
        "{err}"
    );
    assert!(err.contains("choose another port with --listen"), "{err}");
}

#[test]
fn routes_and_methods_answer_as_before() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let e = Exporter::start("routes", &[]);
    let get = |path: &str| {
        exchange(
            &e.addr,
            format!("GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").as_bytes(),
        )
    };
    assert!(get("/").starts_with("HTTP/1.0 200 OK"));
    assert!(get("/").ends_with("metrics are at /metrics\n"));
    assert!(get("/nope").starts_with("HTTP/1.0 404 Not Found"));
    let head = exchange(&e.addr, b"HEAD /metrics HTTP/1.0\r\nHost: x\r\n\r\n");
    assert!(head.starts_with("HTTP/1.0 405"), "{head}");
    // Keep-alive: two scrapes on one HTTP/1.1 connection, each quick.
    let mut s = connect(&e.addr);
    for _ in 0..2 {
        let t = Instant::now();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        while !got.ends_with(b"# EOF\n") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got.starts_with(b"HTTP/1.1 200 OK"));
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
    }
}

/// A stand-in `npu-smi` in `dir`: runs `prelude`, then prints the 910B table
/// for `info` and fails every other query.
fn fake_npu_smi(dir: &std::path::Path, prelude: &str) -> std::path::PathBuf {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let fake = dir.join("npu-smi");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nPATH=/usr/bin:/bin\n{prelude}\
             if [ \"$#\" = 1 ]; then cat {}/info_910b.txt; exit 0; fi\nexit 1\n",
            fixtures.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

/// Some health checkers send their request and shut their side of the
/// connection down before reading the answer: they are answered (hyper
/// closed such connections unanswered).
#[test]
fn a_client_that_half_closes_after_its_request_is_answered() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let e = Exporter::start("half-close", &[]);
    for request in [
        "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    ] {
        let mut s = connect(&e.addr);
        s.write_all(request.as_bytes()).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        s.read_to_end(&mut got).unwrap();
        let got = String::from_utf8_lossy(&got);
        assert!(got.contains(" 200 OK\r\n"), "{request:?}: {got:?}");
    }
}

/// `npu-smi` wedges after a good read: scrapes are not stalled. The first
/// one after the wedge waits the read timeout, the next are answered at
/// once, all with the last good read's samples stamped with its time; the
/// exporter says so once on standard error, and again when reads work.
#[test]
fn a_wedged_npu_smi_gets_the_last_good_read_stamped_with_its_time() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the wedged driver");
    let tmp = scratch("wedge-npu-smi");
    let wedge = tmp.path().join("wedge");
    // While `wedge` exists, every run hangs (until it is removed).
    let fake = fake_npu_smi(
        tmp.path(),
        &format!("while [ -e {} ]; do sleep 0.02; done\n", wedge.display()),
    );
    let e = Exporter::start_on(
        "wedge",
        &[
            "--backend",
            "npu-smi",
            "--npu-smi",
            fake.to_str().unwrap(),
            "--read-timeout-ms",
            "400",
            "--npu-smi-timeout-ms",
            "60000",
        ],
        |_| {},
    );
    // Removed at the end whatever happens, so that no script lives on.
    struct Unwedge(std::path::PathBuf);
    impl Drop for Unwedge {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _unwedge = Unwedge(wedge.clone());

    let before = std::time::SystemTime::now();
    let (_, fresh) = scrape(&e.addr);
    let after = std::time::SystemTime::now();
    assert!(fresh.starts_with("HTTP/1.0 200 OK"), "{fresh}");
    let power = |response: &str| -> String {
        response
            .lines()
            .find(|l| l.starts_with("npu_chip_info_power{") && l.contains("id=\"0\""))
            .unwrap_or_else(|| panic!("no power of chip 0 in {response}"))
            .to_string()
    };
    let line = power(&fresh);
    assert!(
        line.ends_with("} 102.8"),
        "a fresh sample has no time: {line}"
    );

    std::fs::write(&wedge, "").unwrap();
    // The table is reused for 500 ms: past that, a read runs npu-smi.
    std::thread::sleep(Duration::from_millis(600));
    let (took, stale) = scrape(&e.addr);
    assert!(stale.starts_with("HTTP/1.0 200 OK"), "{stale}");
    assert!(took >= Duration::from_millis(350), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    let line = power(&stale);
    let (value, stamp) = line.rsplit_once(' ').unwrap();
    assert!(value.ends_with("} 102.8"), "{line}");
    let stamp: f64 = stamp.parse().unwrap();
    let secs = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    assert!(
        secs(before) - 0.001 <= stamp && stamp <= secs(after) + 0.001,
        "{stamp} is not the time of the first read"
    );
    assert!(
        !stale
            .lines()
            .any(|l| l.starts_with('#') && l.ends_with(&format!(" {stamp:.3}"))),
        "comments carry no time: {stale}"
    );
    // The read still hangs: later scrapes do not wait for it.
    for _ in 0..3 {
        let (took, again) = scrape(&e.addr);
        assert!(took < Duration::from_millis(300), "{took:?}");
        assert_eq!(power(&again), line);
    }
    let err = e.stderr();
    assert_eq!(
        err.matches("serving the last good read").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("npu-smi-rs: export: reading the NPUs did not finish within the read timeout (400 ms; it goes on); serving the last good read (from "),
        "{err}"
    );

    // The driver recovers: fresh answers again, without a time.
    std::fs::remove_file(&wedge).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, response) = scrape(&e.addr);
        if power(&response).ends_with("} 102.8") {
            break;
        }
        assert!(Instant::now() < deadline, "{response}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while !e
        .stderr()
        .contains("npu-smi-rs: export: reading the NPUs works again\n")
    {
        assert!(Instant::now() < deadline, "{}", e.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Before any good read, a read that fails is a 503 with the reason:
/// nothing old to serve.
#[test]
fn without_a_good_read_a_failing_npu_smi_is_an_error_answer() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the driver");
    let tmp = scratch("fail-npu-smi");
    let broken = tmp.path().join("broken");
    // The first run (the exporter's start) works; later ones fail while
    // `broken` exists.
    let fake = fake_npu_smi(
        tmp.path(),
        &format!(
            "if [ -e {} ]; then echo 'dcmi init failed' >&2; exit 3; fi\n",
            broken.display()
        ),
    );
    let e = Exporter::start_on(
        "fail",
        &["--backend", "npu-smi", "--npu-smi", fake.to_str().unwrap()],
        |_| {},
    );
    std::fs::write(&broken, "").unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let (_, response) = scrape(&e.addr);
    assert!(
        response.starts_with("HTTP/1.0 503 Service Unavailable"),
        "{response}"
    );
    assert!(
        response.ends_with(&format!(
            "\r\n\r\nreading the NPUs failed: `{} info` failed: exit status: 3: dcmi init failed; no earlier read to serve\n",
            fake.display()
        )),
        "{response}"
    );
}

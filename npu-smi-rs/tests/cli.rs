//! The `npu-smi-rs` binary: its output on the simulator (snapshots under
//! `tests/snapshots/`, reviewed with `cargo insta review` or regenerated with
//! `INSTA_UPDATE=always`), on `npu-smi` output (a stand-in `npu-smi` script
//! that prints the fixtures), the refusal to pick the simulator silently,
//! flag errors, and the Prometheus exporter read back by a Prometheus text
//! parser.

use std::io::{Read, Write};
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_npu-smi-rs");

/// An empty scratch directory, removed with its contents when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("npu-smi-rs-cli-{name}-"))
        .tempdir()
        .unwrap()
}

/// A command of the binary and the scratch directory it runs in (its `bin/`
/// is the PATH, its `shm/` the simulator's telemetry directory), removed
/// when the `Cmd` is dropped.
struct Cmd {
    command: Command,
    dir: tempfile::TempDir,
}

impl Deref for Cmd {
    type Target = Command;
    fn deref(&self) -> &Command {
        &self.command
    }
}

impl DerefMut for Cmd {
    fn deref_mut(&mut self) -> &mut Command {
        &mut self.command
    }
}

/// The binary with a clean environment: no CANN variables, an empty PATH
/// (so no `npu-smi`), and a private, empty simulator telemetry directory.
fn cmd(name: &str, args: &[&str]) -> Cmd {
    let dir = scratch(name);
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        // A sanitizer's options (`cargo xtask sanitize`: where reports go).
        .envs(
            ["ASAN_OPTIONS", "TSAN_OPTIONS"]
                .into_iter()
                .filter_map(|v| Some((v, std::env::var_os(v)?))),
        )
        .env("PATH", dir.path().join("bin"))
        .env("CANN_SIM_SHM_DIR", dir.path().join("shm"))
        .stdin(Stdio::null());
    Cmd { command, dir }
}

fn run(mut c: Cmd) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = c.output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

fn versionless(s: &str) -> String {
    s.replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
}

#[test]
fn info_on_the_sim_matches_the_snapshot() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let (code, out, err) = run(cmd("info-sim", &["info", "--backend", "sim"]));
    assert_eq!((code, err.as_str()), (0, ""));
    insta::assert_snapshot!("info_sim", versionless(&out));
}

#[test]
fn info_output_is_readable_by_the_npu_smi_parser() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let (_, out, _) = run(cmd("info-roundtrip", &["info", "--backend", "sim"]));
    let t = npu_smi_rs::parse::parse_info(&out).unwrap();
    assert_eq!(t.chips.len(), 8);
    assert_eq!(t.chips[7].bus_id.as_deref(), Some("0000:C8:00.0"));
    assert_eq!(t.chips[7].hbm_mib, Some((0, 65536)));
    assert_eq!(t.chips[7].phy_id, Some(7));
}

#[test]
fn cann_backend_variable_selects_the_sim() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut c = cmd("info-env", &["info"]);
    c.env("CANN_BACKEND", "sim");
    let (code, out, _) = run(c);
    assert_eq!(code, 0);
    assert!(out.contains("(sim)"), "{out}");
}

#[test]
fn info_json_on_the_sim_matches_the_snapshot() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let (code, out, _) = run(cmd("info-json", &["info", "--json", "--backend", "sim"]));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["backend"], "sim");
    assert_eq!(v["devices"].as_array().unwrap().len(), 8);
    assert_eq!(v["devices"][3]["hbm"]["total_mib"], 65536);
    assert_eq!(v["devices"][3]["power_watts"], 90.0);
    insta::assert_snapshot!("info_json_sim", versionless(&out));
}

#[test]
fn without_a_driver_info_says_what_it_searched_and_exits_1() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let (code, out, err) = run(cmd("no-driver", &["info"]));
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert!(
        err.starts_with("npu-smi-rs: error: no Ascend NPU driver found.\nSearched:\n"),
        "{err}"
    );
    assert!(
        err.contains("/usr/local/Ascend/driver/lib64/driver/libdcmi.so: no such file"),
        "{err}"
    );
    assert!(err.contains("- npu-smi: not on PATH ("), "{err}");
    assert!(
        err.ends_with(
            "To use the simulator instead, pass --backend sim or set CANN_BACKEND=sim.\n"
        ),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn bad_flags_exit_2_with_a_usage_message() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let (code, _, err) = run(cmd("bad-flag", &["info", "--backend", "gpu"]));
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "error: invalid value 'gpu' for '--backend <BACKEND>': \"gpu\" is not a backend: use auto, dcmi, npu-smi or sim"
        ),
        "{err}"
    );
    let (code, _, err) = run(cmd("no-cmd", &["--frobnicate"]));
    assert_eq!(code, 2);
    assert!(err.contains("unexpected argument '--frobnicate'"), "{err}");
    let (code, _, err) = run(cmd(
        "bad-listen",
        &["export", "--backend", "sim", "--listen", "not an address"],
    ));
    assert_eq!(code, 1);
    assert!(err.starts_with("npu-smi-rs: error: `export --listen not an address` failed: cannot listen on not an address"), "{err}");
}

/// A stand-in `npu-smi` that prints fixtures: `info` → `info_<layout>.txt`,
/// `info -m` → the mapping, `info -t T ...` → `T_910b.txt` (or fails).
fn fake_npu_smi(dir: &Path, layout: &str) -> PathBuf {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("npu-smi");
    let script = format!(
        "#!/bin/sh\nPATH=/usr/bin:/bin\nF={f}\nif [ \"$#\" = 1 ]; then cat $F/info_{layout}.txt; exit 0; fi\n\
         if [ \"$2\" = -m ]; then cat $F/mapping_910b.txt; exit 0; fi\n\
         if [ -f \"$F/$3_910b.txt\" ]; then cat \"$F/$3_910b.txt\"; exit 0; fi\n\
         echo \"Usage: npu-smi info -t $3 is not supported\" >&2; exit 255\n",
        f = fixtures.display()
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn without_dcmi_the_npu_smi_on_path_is_used() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let c = cmd("fallback", &["info", "--json"]);
    fake_npu_smi(c.dir.path(), "910b_tight_pairs");
    let (code, out, err) = run(c);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["backend"], "npu-smi");
    assert_eq!(v["driver_version"], "25.2.3");
    let d = &v["devices"][1];
    assert_eq!(d["hbm"]["used_mib"], 64536);
    assert_eq!(d["power_watts"], 84.6);
    assert_eq!(d["logical_id"], 1);
    assert_eq!(d["aicpu_utilization_percent"], 4, "from `-t usages`");
    assert_eq!(d["processes"][0]["pid"], 2034518);
    assert_eq!(d["processes"][0]["memory_bytes"], 61193u64 * 1024 * 1024);
    assert_eq!(d["errors"], serde_json::json!([]));
}

/// A 310P reports DDR, not HBM: `used_mib` is in the JSON as it is for HBM
/// (the fixture's `Memory-Usage(MB)` column: 1397 / 44280 and 1520 / 43693).
#[test]
fn json_reports_ddr_used_as_it_does_for_hbm() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let tmp = scratch("ddr-310p");
    let dir = tmp.path();
    let fake = fake_npu_smi(dir, "310p");
    let mut c = cmd(
        "ddr-310p-run",
        &["info", "--json", "--backend", "npu-smi", "--npu-smi"],
    );
    c.arg(&fake);
    let (code, out, err) = run(c);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ddr = |i: usize| v["devices"][i]["ddr"].clone();
    assert_eq!(
        ddr(0),
        serde_json::json!({
            "total_mib": 44280,
            "used_mib": 1397,
            "available_mib": 42883,
            "frequency_mhz": null,
            "utilization_percent": 3
        })
    );
    assert_eq!(ddr(1)["used_mib"], 1520);
    assert_eq!(ddr(1)["available_mib"], 43693 - 1520);
    assert_eq!(v["devices"][0]["hbm"], serde_json::Value::Null);
}

#[test]
fn npu_smi_backend_table_for_an_a3_machine_matches_the_snapshot() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let tmp = scratch("a3");
    let dir = tmp.path();
    let fake = fake_npu_smi(dir, "a3");
    let mut c = cmd("a3-run", &["info", "--backend", "npu-smi", "--npu-smi"]);
    c.arg(&fake);
    let (code, out, err) = run(c);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("info_npu_smi_a3", versionless(&out));
}

#[test]
fn malformed_npu_smi_output_is_an_error_not_a_panic() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let tmp = scratch("garbage");
    let dir = tmp.path();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("npu-smi");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '| NPU Name | Health |'\necho '| zero x | OK |'\necho '| 1 |'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = cmd(
        "garbage-run",
        &["info", "--backend", "npu-smi", "--npu-smi"],
    );
    c.arg(&fake);
    let (code, _, err) = run(c);
    assert_eq!(code, 1);
    assert_eq!(
        err,
        format!(
            "npu-smi-rs: error: cannot read the output of `{} info`: line 2: NPU: \"zero\" is not a number\n",
            fake.display()
        )
    );
}

#[test]
fn doctor_on_the_sim_reports_libraries_and_a_bad_visible_devices_list() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut c = cmd("doctor", &["doctor", "--backend", "sim"]);
    c.env("ASCEND_RT_VISIBLE_DEVICES", "0,9");
    let (code, out, _) = run(c);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("  DCMI: not found\n"), "{out}");
    assert!(
        out.contains("  backend: sim (driver version cann-sim "),
        "{out}"
    );
    assert!(out.contains("  devices: 8\n"), "{out}");
    assert!(
        out.contains(
            "✗ ASCEND_RT_VISIBLE_DEVICES=\"0,9\" names device 9, which does not exist (devices: 0, 1, 2, 3, 4, 5, 6, 7)\n    fix: list only existing device ids (see `npu-smi-rs info`), or unset the variable\n"
        ),
        "{out}"
    );
    assert!(out.ends_with("1 problem(s) found\n"), "{out}");
}

fn http_get(addr: &str, path: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

#[test]
fn exporter_serves_npu_exporter_metrics_that_a_prometheus_parser_reads() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut c = cmd(
        "export",
        &[
            "export",
            "--backend",
            "sim",
            "--listen",
            "127.0.0.1:0",
            "--max-requests",
            "2",
        ],
    );
    c.stderr(Stdio::piped()).stdout(Stdio::null());
    let mut child = c.spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    // "npu-smi-rs: serving Prometheus metrics on http://127.0.0.1:PORT/metrics (sim backend)"
    let mut line = Vec::new();
    let mut byte = [0u8];
    while stderr.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    let (head, body) = http_get(&addr, "/metrics");
    assert!(head.starts_with("HTTP/1.0 200 OK"), "{head}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    let (head404, _) = http_get(&addr, "/nope");
    assert!(head404.starts_with("HTTP/1.0 404"), "{head404}");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(
        status.success(),
        "the exporter exited with {status}: {rest}"
    );

    let scrape = prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();
    let value = |name: &str, id: &str| -> f64 {
        let s = scrape
            .samples
            .iter()
            .find(|s| s.metric == name && s.labels.get("id") == Some(id))
            .unwrap_or_else(|| panic!("no {name}{{id={id}}} in\n{body}"));
        match s.value {
            prometheus_parse::Value::Gauge(v) | prometheus_parse::Value::Untyped(v) => v,
            ref other => panic!("{name} is {other:?}"),
        }
    };
    assert_eq!(value("npu_chip_info_temperature", "0"), 35.0);
    assert_eq!(value("npu_chip_info_power", "3"), 90.0);
    assert_eq!(value("npu_chip_info_utilization", "7"), 0.0);
    assert_eq!(value("npu_chip_info_hbm_total_memory", "5"), 65536.0);
    assert_eq!(value("npu_chip_info_hbm_used_memory", "5"), 0.0);
    assert_eq!(value("npu_chip_info_health_status", "1"), 1.0);
    assert_eq!(value("npu_chip_info_voltage", "1"), 0.8);
    let s = scrape
        .samples
        .iter()
        .find(|s| s.metric == "npu_chip_info_power" && s.labels.get("id") == Some("2"))
        .unwrap();
    assert_eq!(s.labels.get("model_name"), Some("Ascend910B3"));
    assert_eq!(s.labels.get("pcie_bus_info"), Some("0000:C3:00.0"));
    let machine = scrape
        .samples
        .iter()
        .find(|s| s.metric == "machine_npu_nums")
        .unwrap();
    assert!(matches!(machine.value, prometheus_parse::Value::Gauge(v) if v == 8.0));
    for name in [
        "npu_chip_info_temperature",
        "npu_chip_info_power",
        "npu_chip_info_utilization",
        "npu_chip_info_hbm_used_memory",
        "npu_chip_info_hbm_total_memory",
        "npu_chip_info_health_status",
    ] {
        assert_eq!(
            scrape.samples.iter().filter(|s| s.metric == name).count(),
            8,
            "{name}"
        );
        assert!(scrape.docs.contains_key(name), "{name} has HELP");
    }
}

/// `npu-smi-rs info --json | head -c 10`: the reader goes away before the
/// output is written; the command ends quietly (it used to panic in
/// `println!`).
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    for args in [
        &["info", "--json", "--backend", "sim"][..],
        &["info", "--backend", "sim"],
    ] {
        let mut c = cmd("closed-pipe", args);
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `npu-smi-rs info > /dev/full`: the failed write is an error with the
/// reason, exit status 1, no panic.
#[test]
fn a_failed_write_is_an_error_not_a_panic() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut c = cmd("dev-full", &["info", "--json", "--backend", "sim"]);
    let (code, _, stderr) = run({
        c.stdout(full);
        c
    });
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("npu-smi-rs: error: cannot write the output: No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

//! The `npu-smi` backend against a hostile `npu-smi`: one that never ends,
//! one that prints without end, one whose numbers overflow, and the number
//! of runs a full read costs. Each test writes a stand-in `npu-smi` script
//! into a temporary directory and runs the binary on it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_npu-smi-rs");

/// A scratch directory with `bin/npu-smi` = `#!/bin/sh` + `body`.
fn fake(name: &str, body: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("npu-smi-rs-bounds-{name}-"))
        .tempdir()
        .unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join("npu-smi");
    std::fs::write(&path, format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{body}")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

/// `npu-smi-rs --backend npu-smi --npu-smi <fake> <args>`: exit code,
/// standard output and error, and the time it took.
fn run(dir: &Path, fake: &Path, args: &[&str]) -> (i32, String, String, Duration) {
    let t = Instant::now();
    let out = Command::new(BIN)
        .args(args)
        .arg("--backend")
        .arg("npu-smi")
        .arg("--npu-smi")
        .arg(fake)
        .env_clear()
        .env("PATH", dir.join("bin"))
        .env("CANN_SIM_SHM_DIR", dir.join("shm"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

/// Whether process `pid` is gone (or a zombie about to be reaped).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

/// An `npu-smi info` table of `npus` 910B NPUs, one chip each, and the
/// process rows `processes` (`| NPU Chip | pid | name | MB |`).
fn table(npus: u32, processes: &[&str]) -> String {
    let mut t = String::from(
        "| npu-smi 23.0.7                   Version: 23.0.7                     |\n\
         | NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n\
         | Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n",
    );
    for i in 0..npus {
        t.push_str(&format!(
            "| {i}     910B3               | OK            | 93.2        37                0    / 0             |\n\
             | 0                         | 0000:C{i:X}:00.0  | 0           0    / 0          3338 / 65536         |\n"
        ));
    }
    t.push_str("| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |\n");
    for p in processes {
        t.push_str(p);
        t.push('\n');
    }
    t
}

#[test]
fn a_wedged_npu_smi_is_killed_with_its_children_at_the_time_limit() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the wedged driver");
    let (dir, fake) = fake("wedged", "sleep 30 &\necho $! > \"$0.pid\"\nwait\n");
    let (code, out, err, took) = run(dir.path(), &fake, &["info", "--npu-smi-timeout-ms", "300"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!(
            "npu-smi-rs: error: `{} info` did not finish within 0.3 s (killed; the time limit guards against a wedged driver)\n",
            fake.display()
        )
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The script's own child (its `sleep`) was killed with it.
    let pid: u32 = std::fs::read_to_string(fake.with_extension("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !gone(pid) {
        assert!(
            Instant::now() < deadline,
            "the script's sleep {pid} lives on"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn endless_npu_smi_output_is_cut_at_the_default_output_limit() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the runaway output");
    let (dir, fake) = fake("endless", "exec yes '| 0     910B3               | OK |'\n");
    let (code, out, err, took) = run(dir.path(), &fake, &["info"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!(
            "npu-smi-rs: error: `{} info` printed more than 8388608 bytes (killed; the output limit guards against a runaway npu-smi)\n",
            fake.display()
        )
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn the_output_limit_is_a_flag() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the driver");
    let (dir, fake) = fake("limit", &format!("cat <<'EOF'\n{}EOF\n", table(64, &[])));
    let (code, _, err, _) = run(dir.path(), &fake, &["info", "--npu-smi-max-output", "4096"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.ends_with("info` printed more than 4096 bytes (killed; the output limit guards against a runaway npu-smi)\n"), "{err}");
    // The same table within the default limit.
    let (code, out, err, _) = run(dir.path(), &fake, &["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"].as_array().unwrap().len(), 64);
}

/// A full read (`info --json`: every metric of every chip) runs `npu-smi
/// info` and `info -m` about once, and each `-t` query type once per chip
/// (before: three `usages`, two `common` and two `ecc` runs per chip, and
/// the table again whenever the 500 ms cache had expired).
#[test]
fn a_full_read_runs_each_query_type_once_per_chip() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the driver");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let npus = 16;
    let (dir, fake) = fake(
        "batch",
        &format!(
            "echo \"$*\" >> \"$0.calls\"\n\
             if [ \"$#\" = 1 ]; then cat <<'EOF'\n{}EOF\nexit 0; fi\n\
             if [ \"$2\" = -m ]; then exit 1; fi\n\
             if [ -f \"{f}/$3_910b.txt\" ]; then cat \"{f}/$3_910b.txt\"; exit 0; fi\n\
             echo \"-t $3 is not supported\" >&2; exit 255\n",
            table(npus, &[]),
            f = fixtures.display()
        ),
    );
    let (code, out, err, _) = run(dir.path(), &fake, &["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["devices"].as_array().unwrap().len(), npus as usize);
    assert_eq!(v["devices"][5]["aicpu_utilization_percent"], 4);
    let calls = std::fs::read_to_string(fake.with_extension("calls")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    let count = |pred: &dyn Fn(&str) -> bool| calls.iter().filter(|c| pred(c)).count();
    assert!(count(&|c| c == "info") <= 2, "{calls:#?}");
    assert!(count(&|c| c == "info -m") <= 2, "{calls:#?}");
    for npu in 0..npus {
        for kind in ["health", "volt", "usages", "common", "memory", "ecc"] {
            let this = format!("info -t {kind} -i {npu} -c 0");
            assert_eq!(count(&|c| c == this), 1, "{this}: {calls:#?}");
        }
    }
    assert_eq!(count(&|c| c.contains("-t")), 6 * npus as usize);
}

/// A process row of more than 2^44 MiB (2^64 bytes) and a DDR use larger
/// than the DDR: the process list is an error of its chip (it panicked on
/// the multiplication), the utilisation is capped at 100 %.
#[test]
fn numbers_that_overflow_are_errors_of_their_metric_not_panics() {
    cann_sim::sim_only!("a stand-in npu-smi script plays the driver");
    let mut t = table(
        1,
        &[
            "| 0       0                 | 4242          | huge                     | 17592186044417          |",
        ],
    );
    t = t.replace(
        "0    / 0          3338 / 65536",
        "18446744073709551615 / 7   3338 / 65536",
    );
    let (dir, fake) = fake(
        "overflow",
        &format!("if [ \"$#\" = 1 ]; then cat <<'EOF'\n{t}EOF\nexit 0; fi\nexit 1\n"),
    );
    let (code, out, err, _) = run(dir.path(), &fake, &["info", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &v["devices"][0];
    assert_eq!(d["processes"], serde_json::Value::Null);
    assert_eq!(
        d["errors"],
        serde_json::json!([format!(
            "processes: cannot read the output of `{} info`: process 4242 uses 17592186044417 MB, more than 2^64 bytes",
            fake.display()
        )])
    );
    assert_eq!(d["ddr"]["utilization_percent"], 100);
    assert_eq!(d["ddr"]["used_mib"], 7);
}

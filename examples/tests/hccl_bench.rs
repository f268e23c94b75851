//! The hccl_bench example runs every collective on 2 and 3 ranks (processes
//! it launches itself) and every result check passes.

use std::path::PathBuf;
use std::process::Command;

fn bench() -> PathBuf {
    // target/<profile>/deps/<this test> → target/<profile>/examples/hccl_bench
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let bin = dir.join("examples").join("hccl_bench");
    assert!(
        bin.exists(),
        "{} is not built (cargo test builds examples)",
        bin.display()
    );
    bin
}

fn run(args: &[&str]) -> String {
    let out = Command::new(bench())
        .args(args)
        .env("CANN_BACKEND", "sim")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "hccl_bench {args:?} failed\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn hccl_bench_checks_every_collective_on_2_and_3_processes() {
    for n in ["2", "3"] {
        let out = run(&[
            "-b", "1K", "-e", "16K", "-f", "4", "-n", n, "-c", "all", "-w", "1", "-i", "2",
        ]);
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| !l.starts_with('#') && !l.contains("data_size"))
            .collect();
        // 8 collectives × sizes 1K, 4K, 16K.
        assert_eq!(rows.len(), 24, "{out}");
        assert!(
            rows.iter().all(|r| r.trim_end().ends_with("success")),
            "{out}"
        );
        assert!(out.contains(&format!("{n} ranks")), "{out}");
    }
}

#[test]
fn hccl_bench_reports_unsupported_reductions_instead_of_failing() {
    let out = run(&[
        "-b",
        "1K",
        "-e",
        "1K",
        "-d",
        "uint32",
        "-n",
        "2",
        "-c",
        "all_reduce",
    ]);
    assert!(out.contains("HCCL_E_NOT_SUPPORT"), "{out}");
}

#[test]
fn hccl_bench_rejects_unknown_options_with_usage() {
    let out = Command::new(bench()).arg("-x").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: hccl_bench"));
}

/// Runs hccl_bench with `env` and returns (exit code, stdout + stderr).
fn run_status(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = Command::new(bench())
        .args(args)
        .env("CANN_BACKEND", "sim")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A collective that fails for any reason but "not supported" (here an
/// injected HCCL_E_TIMEOUT, as a stopped peer gives) fails the run: it used
/// to be printed as a skipped reduction, with exit status 0.
#[test]
fn a_failing_collective_makes_the_benchmark_exit_non_zero() {
    cann_sim::sim_only!("configures the simulator through CANN_SIM_* variables");
    let (code, out) = run_status(
        &["-b", "8K", "-e", "64K", "-c", "all_reduce", "-n", "1"],
        &[("CANN_SIM_FAULTS", "HcclAllReduce:5+:9")],
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("HCCL_E_TIMEOUT (9)"), "{out}");
    assert!(out.contains("rank 0: exit status: 1"), "{out}");
}

#[test]
fn zero_ranks_and_sizes_past_the_address_space_are_usage_errors() {
    let (code, out) = run_status(&["-n", "0"], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("-n 0: a benchmark needs at least one rank"),
        "{out}"
    );
    let (code, out) = run_status(&["-b", "99999999999999G"], &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("\"99999999999999G\" is larger than this machine can address"),
        "{out}"
    );
}

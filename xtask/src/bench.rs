//! `cargo xtask bench-overhead`: the safe layer's instruction overhead over
//! the raw -sys calls, counted by callgrind (deterministic, unlike timings
//! on a shared 2-core machine).
//!
//! For each operation and variant (raw, safe) the `overhead` benchmark
//! binary of `acl` runs under `valgrind --tool=callgrind` twice, with two
//! iteration counts; the difference of the two totals divided by the
//! difference of the counts is the cost of one operation, setup excluded.

use crate::workspace_root;
use std::path::{Path, PathBuf};
use std::process::Command;

const OPS: [&str; 8] = [
    "event-record",
    "stream-query",
    "htod-64",
    "cached-alloc-free",
    "aclop-add",
    "aclop-matmul",
    "aclnn-add",
    "aclnn-matmul",
];
const LOW: u64 = 200;
const HIGH: u64 = 1200;

pub fn run(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask bench-overhead".into());
    }
    let root = workspace_root();
    let exe = build(&root)?;
    println!("| operation | raw (instructions/op) | safe (instructions/op) | safe / raw |");
    println!("|---|---:|---:|---:|");
    let mut worst: f64 = 0.0;
    for op in OPS {
        let raw = per_op(&exe, op, "raw")?;
        let safe = per_op(&exe, op, "safe")?;
        let ratio = safe / raw;
        worst = worst.max(ratio);
        println!("| {op} | {raw:.0} | {safe:.0} | {ratio:.3} |");
    }
    println!("\nworst ratio: {worst:.3} (target ≤ 1.10)");
    Ok(())
}

fn build(root: &Path) -> Result<PathBuf, String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            "acl",
            "--bench",
            "overhead",
            "--message-format=json",
        ])
        .output()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the overhead benchmark failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter(|l| l.contains("\"executable\":\"") && l.contains("overhead"))
        .filter_map(|l| {
            l.split("\"executable\":\"")
                .nth(1)?
                .split('"')
                .next()
                .map(PathBuf::from)
        })
        .next_back()
        .ok_or_else(|| "cargo did not report the overhead executable".to_string())
}

fn instructions(exe: &Path, op: &str, variant: &str, n: u64) -> Result<u64, String> {
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .args([op, variant, &n.to_string()])
        // The simulator as users run it: the sanitizer off (the test suite
        // turns it on through .cargo/config.toml).
        .env("CANN_SIM_CHECK", "off")
        .output()
        .map_err(|e| format!("cannot run valgrind (apt-get install valgrind): {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{op} {variant} {n} failed:\n{stderr}"));
    }
    stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| format!("no instruction count in callgrind's output:\n{stderr}"))
}

fn per_op(exe: &Path, op: &str, variant: &str) -> Result<f64, String> {
    let low = instructions(exe, op, variant, LOW)?;
    let high = instructions(exe, op, variant, HIGH)?;
    Ok((high.saturating_sub(low)) as f64 / (HIGH - LOW) as f64)
}

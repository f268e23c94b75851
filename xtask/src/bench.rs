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

const OPS: [&str; 12] = [
    "event-record",
    "stream-query",
    "htod-64",
    "cached-alloc-free",
    "aclop-add",
    "aclop-matmul",
    "aclnn-add",
    "aclnn-matmul",
    "ops-add",
    "ops-matmul",
    "fills-100",
    "graph-100",
];
const LOW: u64 = 200;
const HIGH: u64 = 1200;

pub fn run(args: &[String]) -> Result<(), String> {
    // With arguments, only the operations they name.
    if let Some(bad) = args.iter().find(|a| !OPS.contains(&a.as_str())) {
        return Err(format!(
            "usage: cargo xtask bench-overhead [OP...]; {bad} is not one of {}",
            OPS.join(", ")
        ));
    }
    let ops: Vec<&str> = if args.is_empty() {
        OPS.to_vec()
    } else {
        args.iter().map(String::as_str).collect()
    };
    let root = workspace_root();
    let exe = build(&root, "acl", "overhead")?;
    println!("| operation | raw (instructions/op) | safe (instructions/op) | safe / raw |");
    println!("|---|---:|---:|---:|");
    let mut worst: f64 = 0.0;
    for op in ops {
        let raw = per_op(&exe, op, "raw")?;
        let safe = per_op(&exe, op, "safe")?;
        let ratio = safe / raw;
        worst = worst.max(ratio);
        println!("| {op} | {raw:.0} | {safe:.0} | {ratio:.3} |");
    }
    println!("\nworst ratio: {worst:.3} (target ≤ 1.10)");
    Ok(())
}

/// Builds the benchmark target `bench` of `package` in release mode and
/// returns its executable.
pub fn build(root: &Path, package: &str, bench: &str) -> Result<PathBuf, String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "build",
            "--release",
            "-p",
            package,
            "--bench",
            bench,
            "--message-format=json",
        ])
        .output()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the {bench} benchmark failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter(|l| l.contains("\"executable\":\"") && l.contains(bench))
        .filter_map(|l| {
            l.split("\"executable\":\"")
                .nth(1)?
                .split('"')
                .next()
                .map(PathBuf::from)
        })
        .next_back()
        .ok_or_else(|| format!("cargo did not report the {bench} executable"))
}

fn instructions(exe: &Path, op: &str, variant: &str, n: u64) -> Result<u64, String> {
    // One output file per thread (`--separate-threads`), summed: the same
    // total as one whole-process count, but stable from run to run (whole-
    // process counts of this binary moved by up to 20% between runs).
    let dir = std::env::temp_dir().join(format!("cann-rs-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--separate-threads=yes"])
        .arg(format!("--callgrind-out-file={}/cg.%p", dir.display()))
        .arg(exe)
        .args([op, variant, &n.to_string()])
        // The simulator as users run it: the sanitizer off (the test suite
        // turns it on through .cargo/config.toml).
        .env("CANN_SIM_CHECK", "off")
        .output()
        .map_err(|e| format!("cannot run valgrind (apt-get install valgrind): {e}"));
    let total = out.and_then(|out| {
        if !out.status.success() {
            return Err(format!(
                "{op} {variant} {n} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        thread_totals(&dir)
    });
    let _ = std::fs::remove_dir_all(&dir);
    total
}

/// The sum of the `summary:` lines of every callgrind file in `dir`.
fn thread_totals(dir: &Path) -> Result<u64, String> {
    let mut total = 0u64;
    let mut files = 0;
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if text.is_empty() {
            // The file named without a thread suffix stays empty.
            continue;
        }
        let count = text
            .lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("no summary line in {}", path.display()))?;
        total += count;
        files += 1;
    }
    if files == 0 {
        return Err(format!("callgrind wrote no output in {}", dir.display()));
    }
    Ok(total)
}

fn per_op(exe: &Path, op: &str, variant: &str) -> Result<f64, String> {
    let low = instructions(exe, op, variant, LOW)?;
    let high = instructions(exe, op, variant, HIGH)?;
    Ok((high.saturating_sub(low)) as f64 / (HIGH - LOW) as f64)
}

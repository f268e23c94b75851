//! `cargo xtask bench-kernels [SECONDS_PER_CASE]`: the throughput of
//! cann-sim's operator kernels against NumPy's on this machine, one thread
//! each, measured in the same run.
//!
//! The simulator's side is the `kernels` benchmark of cann-sim (release
//! build; it calls `cann_sim::ops::run`, the engine under aclnn and aclop);
//! NumPy's is `xtask/bench_kernels.py`, run in a virtual environment under
//! the target directory where pip installs NumPy (its wheel bundles
//! OpenBLAS) the first time. The two alternate for three rounds and the
//! best time of each case on each side counts, so that a burst of load from
//! other processes does not fall on one side only. Targets (issue 21): f32
//! matmul 512³ at least 50% of OpenBLAS's f32 figure, f16/bf16 at least 25%
//! of it, element-wise operators on 1M elements at least 80% of NumPy's.
//! The command fails when a target is missed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::workspace_root;

const ROUNDS: usize = 3;

/// A row of the report: the case on the simulator's side, the NumPy case it
/// is compared with, what one operation does and the target ratio.
struct Case {
    sim: &'static str,
    numpy: &'static str,
    work: Work,
    target: f64,
}

enum Work {
    /// FLOPs of one operation.
    Flops(f64),
    /// Bytes read and written by one operation.
    Bytes(f64),
}

const N: f64 = 512.0;
const LEN: f64 = (1 << 20) as f64;

const CASES: [Case; 6] = [
    Case {
        sim: "matmul_f32_512",
        numpy: "matmul_f32_512",
        work: Work::Flops(2.0 * N * N * N),
        target: 0.50,
    },
    Case {
        sim: "matmul_f16_512",
        numpy: "matmul_f32_512",
        work: Work::Flops(2.0 * N * N * N),
        target: 0.25,
    },
    Case {
        sim: "matmul_bf16_512",
        numpy: "matmul_f32_512",
        work: Work::Flops(2.0 * N * N * N),
        target: 0.25,
    },
    Case {
        sim: "add_f32_1m",
        numpy: "add_f32_1m",
        work: Work::Bytes(3.0 * 4.0 * LEN),
        target: 0.80,
    },
    Case {
        sim: "mul_f32_1m",
        numpy: "mul_f32_1m",
        work: Work::Bytes(3.0 * 4.0 * LEN),
        target: 0.80,
    },
    Case {
        sim: "relu_f32_1m",
        numpy: "relu_f32_1m",
        work: Work::Bytes(2.0 * 4.0 * LEN),
        target: 0.80,
    },
];

pub fn run(args: &[String]) -> Result<(), String> {
    let budget = match args {
        [] => 1.0,
        [s] => s.parse::<f64>().ok().filter(|s| *s > 0.0).ok_or_else(|| {
            format!(
                "usage: cargo xtask bench-kernels [SECONDS_PER_CASE]; {s} is not a positive number"
            )
        })?,
        _ => return Err("usage: cargo xtask bench-kernels [SECONDS_PER_CASE]".into()),
    };
    let root = workspace_root();
    let python = numpy_python(&root)?;
    let exe = crate::bench::build(&root, "cann-sim", "kernels")?;
    let budget = budget.to_string();
    let (mut sim, mut numpy) = (BTreeMap::new(), BTreeMap::new());
    let mut blas = String::from("?");
    for round in 1..=ROUNDS {
        eprintln!("round {round} of {ROUNDS}: cann-sim, then NumPy");
        let mut cmd = Command::new(&exe);
        cmd.arg(&budget);
        best_of(&mut sim, &output(cmd)?, &mut blas)?;
        let mut cmd = Command::new(&python);
        cmd.arg(root.join("xtask/bench_kernels.py")).arg(&budget);
        best_of(&mut numpy, &output(cmd)?, &mut blas)?;
    }
    println!(
        "NumPy with {blas}, one thread; best of {ROUNDS} alternating rounds of {budget} s per case\n"
    );
    println!("| case | cann-sim | NumPy | cann-sim / NumPy | target |");
    println!("|---|---:|---:|---:|---|");
    let mut missed = Vec::new();
    for case in &CASES {
        let get = |side: &BTreeMap<String, f64>, name: &str, who: &str| {
            side.get(name)
                .copied()
                .ok_or_else(|| format!("{who} reported no time for {name}"))
        };
        let (s, n) = (
            get(&sim, case.sim, "cann-sim")?,
            get(&numpy, case.numpy, "NumPy")?,
        );
        let (rate, unit) = match case.work {
            Work::Flops(f) => (f / 1e9, "GFLOP/s"),
            Work::Bytes(b) => (b / 1e9, "GB/s"),
        };
        let ratio = n / s;
        let met = ratio >= case.target;
        if !met {
            missed.push(case.sim);
        }
        let against = if case.sim == case.numpy {
            String::new()
        } else {
            format!(" (vs {})", case.numpy)
        };
        println!(
            "| {}{against} | {:.1} {unit} | {:.1} {unit} | {:.0}% | ≥ {:.0}%{} |",
            case.sim,
            rate / s,
            rate / n,
            ratio * 100.0,
            case.target * 100.0,
            if met { "" } else { " **missed**" }
        );
    }
    if missed.is_empty() {
        println!("\nevery target met");
        Ok(())
    } else {
        Err(format!("targets missed: {}", missed.join(", ")))
    }
}

/// Runs `cmd` and returns its standard output.
fn output(mut cmd: Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().map_err(|e| format!("{shown}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{shown} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("{shown}: {e}"))
}

/// Folds the JSON lines of one side's output into its best times.
fn best_of(best: &mut BTreeMap<String, f64>, out: &str, blas: &mut String) -> Result<(), String> {
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{line:?}: {e}"))?;
        if let Some(name) = v.get("blas").and_then(|b| b.as_str()) {
            let version = v.get("numpy").and_then(|n| n.as_str()).unwrap_or("?");
            *blas = format!("{name} (NumPy {version})");
            continue;
        }
        let (Some(case), Some(secs)) = (
            v.get("case").and_then(|c| c.as_str()),
            v.get("seconds").and_then(|s| s.as_f64()),
        ) else {
            return Err(format!("unexpected benchmark output {line:?}"));
        };
        let entry = best.entry(case.to_string()).or_insert(f64::MAX);
        *entry = entry.min(secs);
    }
    Ok(())
}

/// The Python of a virtual environment with NumPy, under the target
/// directory: made, and NumPy installed into it with pip, when missing.
fn numpy_python(root: &Path) -> Result<PathBuf, String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let venv = target.join("bench-kernels-venv");
    let python = venv.join("bin/python");
    let has_numpy = |python: &Path| {
        Command::new(python)
            .args(["-c", "import numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has_numpy(&python) {
        return Ok(python);
    }
    if !python.exists() {
        eprintln!(
            "making a Python environment for NumPy in {}",
            venv.display()
        );
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "venv"]).arg(&venv);
        output(cmd)
            .map_err(|e| format!("{e}\n(the benchmark needs python3 with its venv module)"))?;
    }
    eprintln!("installing NumPy with pip");
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "pip", "install", "--quiet", "numpy"]);
    output(cmd)?;
    if has_numpy(&python) {
        Ok(python)
    } else {
        Err(format!(
            "{} cannot import numpy after pip installed it",
            python.display()
        ))
    }
}

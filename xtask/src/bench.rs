//! `cargo xtask bench-overhead`: the safe layer's overhead over the raw -sys
//! calls, as instruction counts under callgrind (deterministic, unlike
//! timings on a shared 2-core machine), and, in a program with a second
//! stream, as the runtime calls it adds.
//!
//! ```text
//! cargo xtask bench-overhead [--runs N] [--multi] [--calls-only] [OP...]
//! ```
//!
//! For each operation and variant (raw, safe) the `overhead` benchmark
//! binary of `acl` runs under `valgrind --tool=callgrind
//! --separate-threads=yes` with two iteration counts; the difference of the
//! two counts divided by the difference of the iterations is the cost of
//! one operation, setup excluded. Two figures, each from its own pair of
//! runs:
//!
//! - **the calling thread**, in the loop alone (callgrind's file of thread
//!   1, collecting only inside the binary's `measured` function:
//!   `--collect-atstart=no --toggle-collect=*measured*`): the safe layer's
//!   own work plus the simulator's entry points that the raw call runs too.
//!   The difference safe − raw is the safe layer's own cost per call. The
//!   streams are held while the loop runs (the simulator's workers run the
//!   queued work afterwards), so it does not depend on how threads were
//!   scheduled: the same from run to run.
//! - **the whole process** (every thread's file, summed, in runs that
//!   collect from start to exit), whose ratio safe / raw dilutes the safe
//!   layer's work with the simulated runtime's, the worker's execution of
//!   the queued work included. The simulator's telemetry publisher is left
//!   out: a timer thread, whose count grows with the run's wall time (up to
//!   50% between runs of one binary), not with the operations.
//!
//! `--runs N` repeats everything N times and reports the worst run of each
//! row. `--multi` runs every operation in a program with a second stream
//! in use (a copy stream, as every framework has), where marks carry events;
//! it adds the runtime calls the safe layer makes per operation beyond the
//! raw ones (counted in the binary with `cann_sim::calls::count`, without
//! valgrind). `--calls-only` reports those calls alone (no valgrind needed).
//!
//! `BENCH_OVERHEAD_EXE=path` measures another build of the benchmark binary
//! (for before/after figures) instead of building this one.

use crate::workspace_root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const OPS: [&str; 13] = [
    "event-record",
    "stream-query",
    "htod-64",
    "cached-alloc-free",
    "copy-then-use",
    "aclop-add",
    "aclop-matmul",
    "aclnn-add",
    "aclnn-matmul",
    "ops-add",
    "ops-matmul",
    "fills-100",
    "graph-100",
];
/// Rows that only mean something with a second stream.
const MULTI_ONLY: [&str; 1] = ["copy-then-use"];
const LOW: u64 = 200;
const HIGH: u64 = 1200;
/// Target: the safe layer's own instructions per call (calling thread).
const MAX_OWN: f64 = 300.0;
/// Target: safe / raw, whole process.
const MAX_RATIO: f64 = 1.10;
/// Target: runtime calls the safe layer adds per operation (multi-stream).
const MAX_ADDED_CALLS: f64 = 2.0;

struct Options {
    runs: usize,
    multi: bool,
    calls_only: bool,
    ops: Vec<&'static str>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let usage = || {
        format!(
            "usage: cargo xtask bench-overhead [--runs N] [--multi] [--calls-only] [OP...]; \
             OP is one of {}",
            OPS.join(", ")
        )
    };
    let mut o = Options {
        runs: 1,
        multi: false,
        calls_only: false,
        ops: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                o.runs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--runs takes a positive number; {}", usage()))?;
            }
            "--multi" => o.multi = true,
            "--calls-only" => {
                o.calls_only = true;
                o.multi = true;
            }
            op => match OPS.iter().find(|&&known| known == op) {
                Some(&known) => o.ops.push(known),
                None => return Err(format!("{op} is not an option or operation; {}", usage())),
            },
        }
    }
    if o.ops.is_empty() {
        o.ops = OPS
            .iter()
            .copied()
            .filter(|op| o.multi || !MULTI_ONLY.contains(op))
            .collect();
    }
    if !o.multi
        && let Some(op) = o.ops.iter().find(|op| MULTI_ONLY.contains(op))
    {
        return Err(format!("{op} needs a second stream: add --multi"));
    }
    Ok(o)
}

/// One row's figures from one run.
#[derive(Clone, Copy)]
struct Row {
    raw_caller: f64,
    safe_caller: f64,
    raw_all: f64,
    safe_all: f64,
}

impl Row {
    fn own(&self) -> f64 {
        self.safe_caller - self.raw_caller
    }
    fn ratio(&self) -> f64 {
        self.safe_all / self.raw_all
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    let root = workspace_root();
    let exe = match std::env::var_os("BENCH_OVERHEAD_EXE") {
        Some(p) => PathBuf::from(p),
        None => build(&root, "acl", "overhead")?,
    };
    let mode = if o.multi {
        "with a second (copy) stream in use: marks carry events"
    } else {
        "one stream: marks without events"
    };
    let mut failed = Vec::new();
    if !o.calls_only {
        println!(
            "Instructions per operation (fills-100: per fill; copy-then-use: per copy), {mode}; {} run(s), worst shown.\n",
            o.runs
        );
        println!(
            "| operation | raw, calling thread | safe, calling thread | safe layer's own (target ≤ {MAX_OWN:.0}) | raw, whole process | safe, whole process | safe / raw, whole process (target ≤ {MAX_RATIO:.2}) | runs (own; ratio) |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---|");
        for &op in &o.ops {
            let mut rows = Vec::with_capacity(o.runs);
            for _ in 0..o.runs {
                rows.push(measure(&exe, op, o.multi)?);
            }
            let worst_own = rows
                .iter()
                .copied()
                .max_by(|a, b| a.own().total_cmp(&b.own()))
                .ok_or("no run")?;
            let worst_ratio = rows
                .iter()
                .copied()
                .max_by(|a, b| a.ratio().total_cmp(&b.ratio()))
                .ok_or("no run")?;
            let runs: Vec<String> = rows
                .iter()
                .map(|r| format!("{:.0}; {:.3}", r.own(), r.ratio()))
                .collect();
            println!(
                "| {op} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.3} | {} |",
                worst_own.raw_caller,
                worst_own.safe_caller,
                worst_own.own(),
                worst_ratio.raw_all,
                worst_ratio.safe_all,
                worst_ratio.ratio(),
                runs.join(" / ")
            );
            if worst_own.own() > MAX_OWN {
                failed.push(format!(
                    "{op}: {:.0} own instructions per call (target ≤ {MAX_OWN:.0})",
                    worst_own.own()
                ));
            }
            if worst_ratio.ratio() > MAX_RATIO {
                failed.push(format!(
                    "{op}: {:.3} × raw in the whole process (target ≤ {MAX_RATIO:.2})",
                    worst_ratio.ratio()
                ));
            }
        }
    }
    if o.multi {
        println!(
            "\nRuntime calls per operation with a second stream in use (cann_sim::calls::count, \
             {HIGH} − {LOW} iterations):\n"
        );
        println!(
            "| operation | raw calls | safe calls | added by the safe layer (target ≤ {MAX_ADDED_CALLS:.0}) | which |"
        );
        println!("|---|---:|---:|---:|---|");
        for &op in &o.ops {
            let raw = calls_per_op(&exe, op, "raw")?;
            let safe = calls_per_op(&exe, op, "safe")?;
            // Rounded to hundredths (a count that moved by one between the
            // two runs is not a call per operation).
            let per = |c: &BTreeMap<String, f64>| (c.values().sum::<f64>() * 100.0).round() / 100.0;
            let added = per(&safe) - per(&raw);
            let mut which = Vec::new();
            for api in safe
                .keys()
                .chain(raw.keys().filter(|k| !safe.contains_key(*k)))
            {
                let d =
                    safe.get(api).copied().unwrap_or(0.0) - raw.get(api).copied().unwrap_or(0.0);
                if d.abs() > 0.005 {
                    which.push(format!("{api} {d:+.2}"));
                }
            }
            println!(
                "| {op} | {:.2} | {:.2} | {added:.2} | {} |",
                per(&raw),
                per(&safe),
                if which.is_empty() {
                    "none".to_string()
                } else {
                    which.join(", ")
                }
            );
            if added > MAX_ADDED_CALLS {
                failed.push(format!(
                    "{op}: {added:.2} added runtime calls per operation (target ≤ {MAX_ADDED_CALLS:.0})"
                ));
            }
        }
    }
    if failed.is_empty() {
        println!("\nevery target met");
    } else {
        println!("\ntargets missed:\n- {}", failed.join("\n- "));
    }
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

/// Which instructions a run counts.
#[derive(Clone, Copy)]
enum Count {
    /// The calling thread's, in the benchmark's `measured` function (the
    /// loop) alone.
    CallerLoop,
    /// Every thread's, from start to exit.
    WholeProcess,
}

/// Instructions of one run.
fn instructions(
    exe: &Path,
    op: &str,
    variant: &str,
    n: u64,
    multi: bool,
    count: Count,
) -> Result<u64, String> {
    // One output file per thread (`--separate-threads`): thread 1 is the
    // calling thread; the sum is the whole process.
    let dir = std::env::temp_dir().join(format!("cann-rs-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut cmd = Command::new("valgrind");
    cmd.args(["--tool=callgrind", "--separate-threads=yes"])
        .arg(format!("--callgrind-out-file={}/cg.%p", dir.display()));
    if let Count::CallerLoop = count {
        // Collect only while `measured` is on a thread's stack: the loop.
        cmd.arg("--collect-atstart=no")
            .arg("--toggle-collect=*measured*");
    }
    cmd.arg(exe).args([op, variant, &n.to_string()]);
    if multi {
        cmd.arg("--multi");
    }
    // The simulator as users run it: the sanitizer off (the test suite
    // turns it on through .cargo/config.toml).
    let out = cmd
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
    let (caller, all) = total?;
    Ok(match count {
        Count::CallerLoop => caller,
        Count::WholeProcess => all,
    })
}

/// The `summary:` of the calling thread's callgrind file in `dir` (the one
/// ending in `-01`) and the sum over every thread's file but the
/// simulator's telemetry publisher's.
fn thread_totals(dir: &Path) -> Result<(u64, u64), String> {
    let mut total = 0u64;
    let mut caller = None;
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
        if text.contains("telemetry::publisher_loop") {
            // The simulator's telemetry publisher: a timer thread whose
            // work grows with wall time (a slower run publishes more), not
            // with the operations.
            continue;
        }
        total += count;
        if path.to_string_lossy().ends_with("-01") {
            caller = Some(count);
        }
    }
    let caller = caller.ok_or_else(|| {
        format!(
            "callgrind wrote no file for thread 1 in {} (valgrind too old for --separate-threads?)",
            dir.display()
        )
    })?;
    Ok((caller, total))
}

/// One run of both variants of `op`, per operation.
fn measure(exe: &Path, op: &str, multi: bool) -> Result<Row, String> {
    let per = |variant: &str| -> Result<(f64, f64), String> {
        // Per operation (a fills-100 iteration is 100 fills).
        let d = ((HIGH - LOW) * ops_per_iteration(op)) as f64;
        let per_op = |count: Count| -> Result<f64, String> {
            let low = instructions(exe, op, variant, LOW, multi, count)?;
            let high = instructions(exe, op, variant, HIGH, multi, count)?;
            Ok(high.saturating_sub(low) as f64 / d)
        };
        Ok((per_op(Count::CallerLoop)?, per_op(Count::WholeProcess)?))
    };
    let (raw_caller, raw_all) = per("raw")?;
    let (safe_caller, safe_all) = per("safe")?;
    Ok(Row {
        raw_caller,
        safe_caller,
        raw_all,
        safe_all,
    })
}

/// Operations per iteration of the benchmark loop.
fn ops_per_iteration(op: &str) -> u64 {
    match op {
        "copy-then-use" => 2,
        "fills-100" => 100,
        _ => 1,
    }
}

/// The runtime calls per operation of `variant`, by function, in a program
/// with a second stream: the counts of a run of `HIGH` iterations less
/// those of a run of `LOW` (setup excluded).
fn calls_per_op(exe: &Path, op: &str, variant: &str) -> Result<BTreeMap<String, f64>, String> {
    let low = calls(exe, op, variant, LOW)?;
    let high = calls(exe, op, variant, HIGH)?;
    let ops = ((HIGH - LOW) * ops_per_iteration(op)) as f64;
    Ok(high
        .iter()
        .map(|(api, &n)| {
            let d = n as f64 - low.get(api).copied().unwrap_or(0) as f64;
            (api.clone(), d / ops)
        })
        .filter(|(_, d)| *d != 0.0)
        .collect())
}

/// The runtime calls a run of `n` iterations of `variant` made, by
/// function, in a program with a second stream (the binary counts them).
fn calls(exe: &Path, op: &str, variant: &str, n: u64) -> Result<BTreeMap<String, u64>, String> {
    let out = Command::new(exe)
        .args([op, variant, &n.to_string(), "--multi", "--calls"])
        .env("CANN_SIM_CHECK", "off")
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{op} {variant} --calls failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut words = line.split_whitespace();
        if let (Some("call"), Some(api), Some(n)) = (words.next(), words.next(), words.next()) {
            let n = n
                .parse::<u64>()
                .map_err(|e| format!("{op} {variant}: bad count in {line:?}: {e}"))?;
            counts.insert(api.to_string(), n);
        }
    }
    Ok(counts)
}

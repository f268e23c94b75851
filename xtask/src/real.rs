//! `cargo xtask test-real`: every test that means something on hardware, run
//! against the installed CANN (`CANN_BACKEND=real`), and a report a user can
//! attach to an issue.
//!
//! The team has no NPU; users do. This command:
//!
//! 1. runs `cargo run --example quickstart` with `CANN_BACKEND=real`: without
//!    a loadable AscendCL it prints the loader's message and exits 1 — it
//!    never falls back to the simulator;
//! 2. records the platform: the quickstart's lines (AscendCL version, device
//!    count, SoC, HBM) and `npu-smi-rs info` (driver version, NPUs);
//! 3. runs every test binary of the workspace but cann-sim's own (they test
//!    the simulator) with `CANN_BACKEND=real`, one JSON event per test
//!    (`--format json --report-time`, libtest's unstable output, enabled
//!    with `RUSTC_BOOTSTRAP=1` for the test binaries only), then the doc
//!    tests. Tests that only mean something on the simulator return at once
//!    and say why (`cann_sim::sim_only!`, `cann_sim::require_devices!`);
//!    they are listed as skipped with that reason;
//! 4. runs the copy/compute overlap benchmark;
//! 5. writes `real-npu-report.md` in the target directory (or `--report FILE`) and exits 1 if
//!    anything failed.
//!
//! `--library FILE` (or `--library sim`: cann-sim's, built first) points
//! `CANN_ACL_LIB`, `CANN_HCCL_LIB`, `CANN_DCMI_LIB`
//! and `CANN_OPAPI_LIB` at one file: with cann-sim's `libcann_sim.so` it
//! exercises this command on a machine without an NPU (the report then says
//! which library it ran on).

use crate::workspace_root;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// Crates whose tests are not run: they test the simulator or the tooling.
const EXCLUDED: [&str; 3] = ["cann-sim", "cann-sim-cdylib", "xtask"];

pub fn run(args: &[String]) -> Result<(), String> {
    let mut opts = Options::parse(args)?;
    let root = workspace_root();
    if opts.library.as_deref() == Some(Path::new("sim")) {
        opts.library = Some(build_sim_library(&root)?);
    }
    let env = opts.env();

    println!("== probing the installed CANN (cargo run --example quickstart) ==");
    let probe = cargo(
        &root,
        &env,
        &["run", "-q", "-p", "examples", "--example", "quickstart"],
    )?;
    if !probe.status.success() {
        return Err(format!(
            "no usable CANN installation: the quickstart example failed with CANN_BACKEND=real, so \
             nothing was run (this command never falls back to the simulator).\n{}{}",
            String::from_utf8_lossy(&probe.stdout),
            String::from_utf8_lossy(&probe.stderr)
        ));
    }
    let platform = String::from_utf8_lossy(&probe.stdout).into_owned();
    print!("{platform}");
    let smi = cargo(
        &root,
        &env,
        &[
            "run",
            "-q",
            "-p",
            "npu-smi-rs",
            "--features",
            "cli",
            "--",
            "info",
        ],
    )?;
    let smi_text = if smi.status.success() {
        String::from_utf8_lossy(&smi.stdout).into_owned()
    } else {
        format!(
            "npu-smi-rs info failed ({}):\n{}",
            smi.status,
            String::from_utf8_lossy(&smi.stderr)
        )
    };

    println!("== building the tests ==");
    let binaries = test_binaries(&root, &env)?;
    let target = target_dir(&root)?;
    let skips_file = target.join("real-npu-skips.txt");
    let _ = std::fs::remove_file(&skips_file);
    let mut results = Vec::new();
    for bin in &binaries {
        println!("== {} ({}) ==", bin.name, bin.package);
        results.extend(run_binary(bin, &env, &skips_file)?);
    }
    println!("== doc tests ==");
    results.extend(doc_tests(&root, &env, &skips_file)?);
    let skips = read_skips(&skips_file);
    let _ = std::fs::remove_file(&skips_file);
    for r in &mut results {
        if r.outcome == Outcome::Passed
            && let Some(why) = skips.get(&(r.binary.clone(), r.name.clone()))
        {
            r.outcome = Outcome::Skipped(why.clone());
        }
    }

    println!("== benchmark: copy/compute overlap ==");
    let bench = cargo(
        &root,
        &env,
        &["bench", "-q", "-p", "acl", "--bench", "overlap"],
    )?;
    let bench_text = format!(
        "{}{}",
        String::from_utf8_lossy(&bench.stdout),
        if bench.status.success() {
            String::new()
        } else {
            format!(
                "\nthe benchmark failed ({}):\n{}",
                bench.status,
                String::from_utf8_lossy(&bench.stderr)
            )
        }
    );

    let report = render(&opts, &platform, &smi_text, &results, &bench_text);
    let path = opts
        .report
        .clone()
        .unwrap_or_else(|| target.join("real-npu-report.md"));
    std::fs::write(&path, report).map_err(|e| format!("{}: {e}", path.display()))?;
    let failed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .count();
    let (passed, skipped) = counts(&results);
    println!(
        "\n{passed} passed, {failed} failed, {skipped} skipped; report: {}",
        path.display()
    );
    if failed > 0 || !bench.status.success() {
        return Err(format!(
            "{failed} test(s) failed on the NPU; see {}",
            path.display()
        ));
    }
    Ok(())
}

/// Builds cann-sim and returns its shared library (`--library sim`): the
/// simulator standing in for CANN, fresh for this checkout.
fn build_sim_library(root: &Path) -> Result<PathBuf, String> {
    let out = cargo(
        root,
        &[],
        &["build", "-p", "cann-sim-cdylib", "--message-format=json"],
    )?;
    if !out.status.success() {
        return Err(format!(
            "building cann-sim failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == "cann_sim" || m["target"]["name"] == "cann-sim")
        .flat_map(|m| {
            m["filenames"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|f| f.as_str().map(PathBuf::from))
        })
        .find(|f| f.extension().is_some_and(|e| e == "so"))
        .ok_or_else(|| "cargo did not report cann-sim's shared library".to_string())
}

/// Cargo's target directory (`CARGO_TARGET_DIR`, else `target/`), created.
fn target_dir(root: &Path) -> Result<PathBuf, String> {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

/// The command line.
#[derive(Debug, Default, PartialEq)]
struct Options {
    report: Option<PathBuf>,
    library: Option<PathBuf>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        const USAGE: &str = "usage: cargo xtask test-real [--report FILE] [--library FILE|sim]";
        let mut opts = Options::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let value = |it: &mut std::slice::Iter<'_, String>| {
                it.next()
                    .map(PathBuf::from)
                    .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
            };
            match a.as_str() {
                "--report" => opts.report = Some(value(&mut it)?),
                "--library" => opts.library = Some(value(&mut it)?),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
            }
        }
        Ok(opts)
    }

    /// The environment of every command run: the real backend, and the
    /// library override.
    fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![("CANN_BACKEND".to_string(), "real".to_string())];
        if let Some(lib) = &self.library {
            for var in [
                "CANN_ACL_LIB",
                "CANN_HCCL_LIB",
                "CANN_DCMI_LIB",
                "CANN_OPAPI_LIB",
            ] {
                env.push((var.to_string(), lib.display().to_string()));
            }
        }
        env
    }
}

fn cargo(root: &Path, env: &[(String, String)], args: &[&str]) -> Result<Output, String> {
    Command::new(env!("CARGO"))
        .current_dir(root)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .map_err(|e| format!("cargo {}: {e}", args.join(" ")))
}

/// One test executable.
#[derive(Debug)]
struct Binary {
    /// The target's name (an integration test's file stem, or the crate).
    name: String,
    package: String,
    executable: PathBuf,
    /// The package's directory (cargo runs tests there).
    dir: PathBuf,
}

fn test_binaries(root: &Path, env: &[(String, String)]) -> Result<Vec<Binary>, String> {
    let mut args = vec!["test", "--workspace", "--no-run", "--message-format=json"];
    for e in EXCLUDED {
        args.extend(["--exclude", e]);
    }
    let out = cargo(root, env, &args)?;
    if !out.status.success() {
        return Err(format!(
            "building the tests failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let mut bins = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let (Some(exe), Some(manifest), Some(name), Some(pkg)) = (
            msg["executable"].as_str(),
            msg["manifest_path"].as_str(),
            msg["target"]["name"].as_str(),
            msg["package_id"].as_str(),
        ) else {
            continue;
        };
        if msg["profile"]["test"] != true {
            continue;
        }
        bins.push(Binary {
            name: name.replace('-', "_"),
            package: package_name(pkg),
            executable: exe.into(),
            dir: Path::new(manifest)
                .parent()
                .map_or_else(|| root.to_path_buf(), Path::to_path_buf),
        });
    }
    if bins.is_empty() {
        return Err("cargo reported no test executables".into());
    }
    Ok(bins)
}

/// The package name in a cargo package id (`path+file:///…/acl#0.1.0` or
/// `registry+…#name@version`).
fn package_name(id: &str) -> String {
    let tail = id.rsplit('/').next().unwrap_or(id);
    let (path_part, frag) = tail.split_once('#').unwrap_or((tail, ""));
    match frag.split_once('@') {
        Some((name, _)) => name.to_string(),
        None => path_part.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Passed,
    Failed,
    Ignored,
    Skipped(String),
}

#[derive(Debug, Clone)]
struct TestResult {
    binary: String,
    name: String,
    outcome: Outcome,
    seconds: Option<f64>,
    output: String,
}

fn run_binary(
    bin: &Binary,
    env: &[(String, String)],
    skips: &Path,
) -> Result<Vec<TestResult>, String> {
    let started = Instant::now();
    let out = Command::new(&bin.executable)
        .current_dir(&bin.dir)
        .args([
            "-Z",
            "unstable-options",
            "--format",
            "json",
            "--report-time",
        ])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("CARGO_MANIFEST_DIR", &bin.dir)
        .env("CANN_REAL_SKIPS", skips)
        .env("RUSTC_BOOTSTRAP", "1")
        .output()
        .map_err(|e| format!("{}: {e}", bin.executable.display()))?;
    let mut results = parse_events(&bin.name, &String::from_utf8_lossy(&out.stdout));
    if results.is_empty() && !out.status.success() {
        // The binary failed before reporting any test (a crash, or a harness
        // without libtest's options): one failed entry for it.
        results.push(TestResult {
            binary: bin.name.clone(),
            name: "(the whole binary)".into(),
            outcome: Outcome::Failed,
            seconds: Some(started.elapsed().as_secs_f64()),
            output: format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    for r in &results {
        if r.outcome == Outcome::Failed {
            println!("FAILED {}::{}", r.binary, r.name);
        }
    }
    Ok(results)
}

/// libtest's JSON events (`{"type":"test","event":"ok","name":…,"exec_time":…}`).
fn parse_events(binary: &str, stdout: &str) -> Vec<TestResult> {
    let mut results = Vec::new();
    for line in stdout.lines() {
        let Ok(ev) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if ev["type"] != "test" {
            continue;
        }
        let outcome = match ev["event"].as_str() {
            Some("ok") => Outcome::Passed,
            // `timeout` is libtest's "has been running for over 60 seconds"
            // notice, not an outcome: the test's own `ok`/`failed` follows.
            Some("failed") => Outcome::Failed,
            Some("ignored") => Outcome::Ignored,
            _ => continue,
        };
        results.push(TestResult {
            binary: binary.to_string(),
            name: ev["name"].as_str().unwrap_or("?").to_string(),
            outcome,
            seconds: ev["exec_time"].as_f64(),
            output: ev["stdout"].as_str().unwrap_or("").to_string(),
        });
    }
    results
}

fn doc_tests(
    root: &Path,
    env: &[(String, String)],
    skips: &Path,
) -> Result<Vec<TestResult>, String> {
    let mut args = vec!["test", "--doc", "--workspace"];
    for e in EXCLUDED {
        args.extend(["--exclude", e]);
    }
    let mut env = env.to_vec();
    env.push(("CANN_REAL_SKIPS".into(), skips.display().to_string()));
    let out = cargo(root, &env, &args)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut results = Vec::new();
    for line in text.lines() {
        // `test acl/src/lib.rs - (line 12) ... ok`
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match status {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            s if s.starts_with("ignored") => Outcome::Ignored,
            _ => continue,
        };
        results.push(TestResult {
            binary: "doc".into(),
            name: name.to_string(),
            outcome,
            seconds: None,
            output: String::new(),
        });
    }
    if results.is_empty() && !out.status.success() {
        return Err(format!(
            "the doc tests did not run:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(results)
}

/// `(binary, test) → why` from the lines `cann_sim::backend` appends.
fn read_skips(path: &Path) -> HashMap<(String, String), String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            let (module, test, why) = (f.next()?, f.next()?, f.next()?);
            let binary = module.split("::").next()?.to_string();
            Some(((binary, test.to_string()), why.to_string()))
        })
        .collect()
}

fn counts(results: &[TestResult]) -> (usize, usize) {
    let passed = results
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .count();
    let skipped = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
        .count();
    (passed, skipped)
}

fn render(
    opts: &Options,
    platform: &str,
    smi: &str,
    results: &[TestResult],
    bench: &str,
) -> String {
    let failed: Vec<_> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .collect();
    let ignored = results
        .iter()
        .filter(|r| r.outcome == Outcome::Ignored)
        .count();
    let (passed, skipped) = counts(results);
    let mut s = String::new();
    let _ = writeln!(s, "# cann-rs on a real NPU: test report\n");
    let _ = writeln!(
        s,
        "Made by `cargo xtask test-real` at commit `{}`.",
        git_head().unwrap_or_else(|| "unknown".into())
    );
    if let Some(lib) = &opts.library {
        let _ = writeln!(
            s,
            "\n**Every library was `{}` (`--library`), not an installed CANN.**",
            lib.display()
        );
    }
    let _ = writeln!(
        s,
        "\n**{passed} passed, {} failed, {skipped} skipped (simulator-only or more NPUs needed), \
         {ignored} ignored.**\n",
        failed.len()
    );
    let _ = writeln!(s, "## Platform\n\n```text\n{}```\n", platform);
    let _ = writeln!(s, "```text\n{}```\n", smi);
    if !failed.is_empty() {
        let _ = writeln!(s, "## Failures\n");
        for r in &failed {
            let _ = writeln!(
                s,
                "### {}::{}\n\n```text\n{}\n```\n",
                r.binary,
                r.name,
                tail(&r.output, 4000)
            );
        }
    }
    let _ = writeln!(s, "## Every test\n");
    let _ = writeln!(s, "| binary | test | result | seconds |");
    let _ = writeln!(s, "|---|---|---|---:|");
    for r in results {
        let result = match &r.outcome {
            Outcome::Passed => "passed".to_string(),
            Outcome::Failed => "**FAILED**".to_string(),
            Outcome::Ignored => "ignored".to_string(),
            Outcome::Skipped(why) => format!("skipped: {why}"),
        };
        let secs = r.seconds.map_or_else(String::new, |t| format!("{t:.3}"));
        let _ = writeln!(s, "| {} | `{}` | {} | {} |", r.binary, r.name, result, secs);
    }
    let _ = writeln!(
        s,
        "\n## Benchmark: copy/compute overlap\n\n```text\n{bench}```"
    );
    s
}

/// The last `max` bytes of `text` (at a character boundary).
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn git_head() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(workspace_root())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_parsed_and_unknown_ones_refused() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            Options::parse(&a(&["--report", "r.md", "--library", "/x.so"])).unwrap(),
            Options {
                report: Some("r.md".into()),
                library: Some("/x.so".into())
            }
        );
        let err = Options::parse(&a(&["--bogus"])).unwrap_err();
        assert!(err.contains("unknown argument \"--bogus\""), "{err}");
        let err = Options::parse(&a(&["--report"])).unwrap_err();
        assert!(err.contains("--report needs a value"), "{err}");
    }

    #[test]
    fn the_library_override_sets_every_loader_variable_and_the_backend() {
        let opts = Options {
            report: None,
            library: Some("/lib.so".into()),
        };
        let env = opts.env();
        assert!(env.contains(&("CANN_BACKEND".into(), "real".into())));
        for var in [
            "CANN_ACL_LIB",
            "CANN_HCCL_LIB",
            "CANN_DCMI_LIB",
            "CANN_OPAPI_LIB",
        ] {
            assert!(env.contains(&(var.into(), "/lib.so".into())), "{var}");
        }
    }

    #[test]
    fn libtest_json_events_become_results_with_times() {
        let out = r#"{ "type": "suite", "event": "started", "test_count": 3 }
{ "type": "test", "event": "started", "name": "a" }
{ "type": "test", "event": "started", "name": "b" }
{ "type": "test", "event": "timeout", "name": "b" }
{ "type": "test", "name": "a", "event": "ok", "exec_time": 0.25 }
{ "type": "test", "name": "b", "event": "failed", "exec_time": 1.5, "stdout": "boom" }
{ "type": "test", "name": "c", "event": "ignored" }
{ "type": "suite", "event": "failed", "passed": 1, "failed": 1 }"#;
        let r = parse_events("bin", out);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].outcome.clone(), r[0].seconds),
            (Outcome::Passed, Some(0.25))
        );
        assert_eq!(
            (r[1].outcome.clone(), r[1].output.as_str()),
            (Outcome::Failed, "boom")
        );
        assert_eq!(r[2].outcome, Outcome::Ignored);
    }

    #[test]
    fn skip_lines_are_keyed_by_binary_and_test() {
        let dir = std::env::temp_dir().join(format!("xtask-skips-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("skips.txt");
        std::fs::write(
            &f,
            "faults\tallocation_failures\tinjects faults\nbad line\n",
        )
        .unwrap();
        let skips = read_skips(&f);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            skips.get(&("faults".into(), "allocation_failures".into())),
            Some(&"injects faults".to_string())
        );
        assert_eq!(skips.len(), 1);
    }

    #[test]
    fn package_names_come_from_path_and_registry_ids() {
        assert_eq!(package_name("path+file:///work/main/acl#0.1.0"), "acl");
        assert_eq!(
            package_name("path+file:///work/main/tests#tests@0.1.0"),
            "tests"
        );
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0"),
            "serde"
        );
    }
}

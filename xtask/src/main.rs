//! `cargo xtask <command>`: project automation.
//!
//! - `headers [--version X]`: fetch the CANN headers from the torch-npu wheel
//!   on PyPI into `.cann-headers/` (torch-npu 2.14.0, the bindings' release)
//!   or `.cann-headers/X/` (ignored by git).
//! - `compat [--check]`: the compatibility table of the CANN releases
//!   (`docs/COMPAT.md`, `acl-sys/src/since.rs`).
//! - `bindgen [--headers DIR] [--check]`: regenerate `acl-sys`, `hccl-sys` and
//!   `dcmi-sys` bindings (or, with `--check`, fail when the checked-in files differ).
//! - `generate [--check]`: regenerate what derives from the checked-in
//!   bindings: cann-sim's not-supported exports and installed tables, and the
//!   `acl` crate's `ErrorCode` enum.
//! - `bench-overhead [--runs N] [--multi] [--calls-only] [OP...]`: instruction
//!   counts of the safe layer against the raw calls, under callgrind, for the
//!   calling thread and the whole process; with `--multi`, in a program with a
//!   second stream, and the runtime calls the safe layer adds (numbers for
//!   BENCHMARKS.md).
//! - `bench-kernels [SECONDS_PER_CASE]`: cann-sim's operator kernels against
//!   NumPy (OpenBLAS), one thread each, in the same run (see `bench_kernels.rs`).
//! - `test-real [--report FILE] [--library FILE|sim]`: run the tests that mean
//!   something on hardware against the installed CANN and write a report
//!   (see `real.rs`).
//! - `fidelity [--check]`: the generated head of `cann-sim/FIDELITY.md`
//!   (function coverage, behaviours modelled, known differences).
//! - `coverage [--check]`: `docs/COVERAGE.md`, every C function of the
//!   bindings with the safe items that wrap it (their `#[doc(alias)]`),
//!   whether cann-sim implements it and what abi-check checks of it.
//! - `abi-check [--headers DIR | --release X]`: compile a C program against
//!   the real headers, link it to the cann-sim cdylib and run it. With the
//!   headers of another CANN release (`--release X` fetches torch-npu X's), the
//!   ABI of every function that release declares (see `abi_release.rs`).
//! - `sanitize <address|thread> [CARGO TEST ARGS...]`: every test of the
//!   workspace under AddressSanitizer or ThreadSanitizer (nightly, installed
//!   when missing; see `sanitize.rs`).
//! - `lint`: the layering rules of the crates that call C (only `result`
//!   names the -sys crates, doc aliases are the calls, the naming rule; see
//!   `lint.rs`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod abi;
mod abi_checks;
mod abi_release;
mod bench;
mod bench_kernels;
mod bindings;
mod compat;
mod coverage;
mod doc_aliases;
mod error_codes;
mod fidelity;
mod headers;
mod lint;
mod operators;
mod real;
mod sanitize;
mod sim_exports;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("headers") => headers::run(&workspace_root(), &args[1..]),
        Some("compat") => compat::run(&args[1..]),
        Some("bindgen") => bindings::run(&args[1..]),
        Some("generate") => sim_exports::run(&args[1..]),
        Some("abi-check") => abi::run(&args[1..]),
        Some("bench-overhead") => bench::run(&args[1..]),
        Some("bench-kernels") => bench_kernels::run(&args[1..]),
        Some("test-real") => real::run(&args[1..]),
        Some("fidelity") => fidelity::run(&args[1..]),
        Some("coverage") => coverage::run(&args[1..]),
        Some("sanitize") => sanitize::run(&args[1..]),
        Some("lint") => lint::run(&args[1..]),
        _ => Err(
            "usage: cargo xtask <headers [--version X] | compat [--check] | bindgen [--headers DIR] [--check] | generate [--check] | abi-check [--headers DIR | --release X] | bench-overhead [--runs N] [--multi] [--calls-only] [OP...] | bench-kernels [SECONDS_PER_CASE] | test-real [--report FILE] [--library FILE|sim] | fidelity [--check] | coverage [--check] | sanitize <address|thread> [CARGO TEST ARGS...] | lint>"
                .to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The arguments of a command that takes only `--check`: whether it was given.
pub fn check_flag(args: &[String], command: &str) -> Result<bool, String> {
    match args {
        [] => Ok(false),
        [a] if a == "--check" => Ok(true),
        _ => Err(format!("usage: cargo xtask {command} [--check]")),
    }
}

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Writes `content` to `path`, or with `check` compares and reports a difference.
/// Rust files are passed through rustfmt first, so that `cargo fmt --check`
/// and the generators agree.
pub fn write_or_check(path: &Path, content: &str, check: bool) -> Result<bool, String> {
    let formatted;
    let content = if path.extension().is_some_and(|e| e == "rs") {
        formatted = rustfmt(content)?;
        formatted.as_str()
    } else {
        content
    };
    if check {
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current != content {
            eprintln!("stale: {}", path.display());
            return Ok(false);
        }
        Ok(true)
    } else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, content).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
        Ok(true)
    }
}

/// Formats Rust source with the toolchain's rustfmt (edition 2024).
fn rustfmt(source: &str) -> Result<String, String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt (rustup component add rustfmt): {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no stdin")?;
    let input = source.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("rustfmt: {e}"))?;
    writer
        .join()
        .map_err(|_| "rustfmt writer thread panicked".to_string())?
        .map_err(|e| format!("rustfmt stdin: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt output: {e}"))
}

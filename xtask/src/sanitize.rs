//! `cargo xtask sanitize <address|thread> [CARGO TEST ARGS...]`: every test
//! of the workspace (unit, integration and doc tests of every package, the
//! examples the example tests run, the binaries and cdylibs the tests start
//! or `dlopen`, the C libraries the build scripts compile) under
//! AddressSanitizer or ThreadSanitizer.
//!
//! - Toolchain: `nightly` with `rust-src`, installed through rustup when
//!   missing. The standard library is rebuilt instrumented (`-Zbuild-std`):
//!   ThreadSanitizer needs it (an uninstrumented `std` hides its
//!   synchronisation and reports false races), AddressSanitizer then also
//!   checks `std`'s own accesses. Where rustup cannot fetch them,
//!   AddressSanitizer runs with the prebuilt `std` (see [`toolchain`]).
//! - One runtime per process. rustc links the sanitizer's runtime into
//!   executables only; the cdylib (`libcann_sim.so`, which the loader tests
//!   `dlopen`) and the C libraries (instrumented too, see
//!   `cann-sim/c_library.rs`) resolve their calls into it against the
//!   executable, which therefore exports the runtime's entry points
//!   (`--export-dynamic-symbol`).
//! - Reports go to `target/sanitize-<name>/reports/` (every process's,
//!   including the children tests start and capture), are printed at the end
//!   and fail the command: zero reports is the bar. AddressSanitizer checks
//!   leaks too (LeakSanitizer, at each process's exit).
//! - Timing assertions: `CANN_TEST_TIME_SCALE` stretches the time limits of
//!   the tests that assert one (instrumented code runs several times slower).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The toolchain the sanitizers need (`-Z` flags, `-Zbuild-std`).
const TOOLCHAIN: &str = "nightly";

/// The one target the runs are set up (and measured) for.
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// What differs between the two sanitizers.
struct Sanitizer {
    /// The `-Zsanitizer=` value, and the command's argument.
    name: &'static str,
    /// The runtime's options variable.
    options_var: &'static str,
    /// Runtime options (`log_path` and `suppressions` are added).
    options: &'static str,
    /// Prefix of the runtime's entry points that instrumented code calls.
    entry_points: &'static str,
    /// How much slower the tests run (measured here), for timing limits.
    time_scale: u32,
    /// The suppressions file, relative to `xtask/sanitize/`.
    suppressions: Option<&'static str>,
}

const SANITIZERS: [Sanitizer; 2] = [
    Sanitizer {
        name: "address",
        options_var: "ASAN_OPTIONS",
        options: "detect_leaks=1",
        entry_points: "__asan_*",
        time_scale: 4,
        suppressions: None,
    },
    Sanitizer {
        name: "thread",
        options_var: "TSAN_OPTIONS",
        options: "halt_on_error=0:second_deadlock_stack=1",
        entry_points: "__tsan_*",
        time_scale: 10,
        suppressions: Some("thread.supp"),
    },
];

pub fn run(args: &[String]) -> Result<(), String> {
    let usage = "usage: cargo xtask sanitize <address|thread> [CARGO TEST ARGS...]";
    let (name, rest) = args.split_first().ok_or(usage)?;
    let san = SANITIZERS
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("unknown sanitizer `{name}`; {usage}"))?;
    let root = crate::workspace_root();
    let toolchain = toolchain(san)?;

    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join(format!("sanitize-{}", san.name));
    let reports = target_dir.join("reports");
    if reports.exists() {
        std::fs::remove_dir_all(&reports).map_err(|e| format!("{}: {e}", reports.display()))?;
    }
    std::fs::create_dir_all(&reports).map_err(|e| format!("{}: {e}", reports.display()))?;

    let mut options = format!(
        "{}:log_path={}",
        san.options,
        reports.join(san.name).display()
    );
    // Symbol names in every process's reports (the suppressions match them),
    // also in children that tests start with a cleared PATH.
    match find_in_path("llvm-symbolizer") {
        Some(path) => options.push_str(&format!(":external_symbolizer_path={}", path.display())),
        None => eprintln!(
            "sanitize: llvm-symbolizer is not in PATH: reports will show addresses, not \
             functions, and the suppressions cannot match (apt-get install llvm)"
        ),
    }
    if let Some(file) = san.suppressions {
        let file = root.join("xtask/sanitize").join(file);
        options.push_str(&format!(":suppressions={}", file.display()));
    }
    let flags = format!(
        "-Zsanitizer={} -Clink-arg=-Wl,--export-dynamic-symbol={}",
        san.name, san.entry_points
    );
    // Everything, unless packages are named (`-p acl`).
    let whole_workspace = !rest
        .iter()
        .any(|a| a.starts_with("-p") || a.starts_with("--package"));
    let mut cargo = Command::new("rustup");
    cargo
        .args(["run", toolchain.name, "cargo", "test"])
        .args(toolchain.build_std.then_some("-Zbuild-std"))
        .args(["--target", TARGET, "--no-fail-fast"])
        .args(whole_workspace.then_some("--workspace"))
        .args(rest)
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", &flags)
        .env("RUSTDOCFLAGS", &flags)
        .env(san.options_var, &options)
        .env("CANN_TEST_TIME_SCALE", san.time_scale.to_string())
        // A one-off build: incremental state would add ~2 GB to each target dir.
        .env("CARGO_INCREMENTAL", "0")
        // -O1, as the sanitizers' own documentation recommends: unoptimised
        // instrumented code made each of the ~170 test executables about
        // 90 MB (a CI machine's disk filled while linking them) and the
        // tests several times slower. Packages the profile already
        // optimises further (the GEMM crates) keep their level.
        .env("CARGO_PROFILE_DEV_OPT_LEVEL", "1")
        // Whatever cargo xtask ran under is not what builds here.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN");
    if toolchain.bootstrap {
        // The stable toolchain: `RUSTC_BOOTSTRAP` unlocks `-Zsanitizer`.
        cargo.env("RUSTC_BOOTSTRAP", "1");
    }
    println!("sanitize {}: {cargo:?}", san.name);
    let start = Instant::now();
    let status = cargo
        .status()
        .map_err(|e| format!("cannot run rustup (https://rustup.rs): {e}"))?;
    let minutes = start.elapsed().as_secs_f64() / 60.0;

    let found = report_files(&reports)?;
    for file in &found {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        eprintln!("\n=== {} ===\n{text}", file.display());
    }
    println!(
        "sanitize {}: {} report file(s) in {}; cargo test {}; {minutes:.1} min",
        san.name,
        found.len(),
        reports.display(),
        if status.success() { "passed" } else { "failed" },
    );
    match (found.is_empty(), status.success()) {
        (true, true) => Ok(()),
        (false, _) => Err(format!("{} sanitizer report(s), above", found.len())),
        (true, false) => Err("tests failed (no sanitizer report)".to_string()),
    }
}

/// The toolchain a run uses.
struct Toolchain {
    name: &'static str,
    /// Whether the standard library is rebuilt instrumented (`rust-src`).
    build_std: bool,
    /// Whether `-Z` flags need `RUSTC_BOOTSTRAP` (a stable toolchain).
    bootstrap: bool,
}

/// `nightly` with `rust-src` (installed through rustup when missing; an
/// installed toolchain is not updated). Where rustup cannot fetch them (a
/// machine without access to static.rust-lang.org), or with
/// `CANN_SANITIZE_BUILD_STD=0`: AddressSanitizer runs without rebuilding
/// `std` (on nightly, or on the stable toolchain with `RUSTC_BOOTSTRAP`),
/// and says so; ThreadSanitizer, which reports false races without an
/// instrumented `std`, is an error saying why.
fn toolchain(san: &Sanitizer) -> Result<Toolchain, String> {
    let forced_off = std::env::var("CANN_SANITIZE_BUILD_STD").is_ok_and(|v| v == "0");
    let has = |name: &str| {
        Command::new("rustup")
            .args(["run", name, "rustc", "--version"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut nightly = has(TOOLCHAIN);
    let why = if forced_off {
        "CANN_SANITIZE_BUILD_STD=0".to_string()
    } else {
        let mut rustup = Command::new("rustup");
        if nightly {
            rustup.args(["component", "add", "rust-src", "--toolchain", TOOLCHAIN]);
        } else {
            rustup.args(["toolchain", "install", TOOLCHAIN, "--profile", "minimal"]);
            rustup.args(["--component", "rust-src"]);
        }
        match rustup.status() {
            Ok(status) if status.success() => {
                return Ok(Toolchain {
                    name: TOOLCHAIN,
                    build_std: true,
                    bootstrap: false,
                });
            }
            Ok(status) => format!("{rustup:?} failed ({status})"),
            Err(e) => format!("cannot run rustup (https://rustup.rs): {e}"),
        }
    };
    nightly = nightly || has(TOOLCHAIN);
    if san.name == "thread" {
        return Err(format!(
            "ThreadSanitizer needs the standard library rebuilt instrumented (-Zbuild-std, the \
             nightly toolchain's rust-src component), which is not available: {why}"
        ));
    }
    let name = if nightly { TOOLCHAIN } else { "stable" };
    eprintln!(
        "sanitize {}: without an instrumented standard library ({why}); the workspace and its \
         dependencies are instrumented, std is not (toolchain {name})",
        san.name
    );
    Ok(Toolchain {
        name,
        build_std: false,
        bootstrap: !nightly,
    })
}

/// The first `name` in `PATH`.
fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The report files the runtime wrote (one per reporting process).
fn report_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    Ok(files)
}

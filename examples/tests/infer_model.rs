//! The `infer_model` example's logic on the simulator: it builds the model
//! file once, describes it, matches the host at every batch gear, and
//! refuses a batch that is not a gear; it never writes a path the user gave
//! and refuses model paths that are not regular files without opening them.

use acl::{Device, Runtime};
use examples::infer_model::{Config, GEARS, run};

fn stream() -> acl::Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

#[test]
fn infers_at_every_gear_and_matches_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        path: dir.path().join("mlp.json"),
        runs: 3,
        ..Config::default()
    };
    let s = stream();
    for (i, batch) in GEARS.into_iter().enumerate() {
        let report = run(
            &s,
            &Config {
                batch,
                ..cfg.clone()
            },
        )
        .unwrap();
        assert_eq!(report.built, i == 0, "built on first run only");
        assert!(report.max_abs_diff <= 1e-4, "{report}");
        assert_eq!(report.runs, 3);
        assert!(report.min <= report.mean && report.mean <= report.max);
        assert!(report.throughput() > 0.0);
        assert!(
            report.description.contains("input[0] name: x"),
            "{}",
            report.description
        );
        assert!(
            report
                .description
                .contains("dynamic batch gears: [1, 2, 4, 8, 16, 32]"),
            "{}",
            report.description
        );
    }
    let err = run(
        &s,
        &Config {
            batch: 3,
            ..cfg.clone()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch 3 is not one of the model's gears [1, 2, 4, 8, 16, 32]"
    );
}

/// A FIFO at `dir/name`.
fn fifo(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    path
}

/// One run at `path`, building the model there if `build`.
fn at(path: &std::path::Path, build: bool) -> Config {
    Config {
        path: path.to_path_buf(),
        build,
        runs: 1,
        ..Config::default()
    }
}

/// `run` on a thread, given 10 s (it used to block on a FIFO for ever).
fn run_within(cfg: Config) -> Result<examples::infer_model::Report, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = cfg.path.clone();
    std::thread::spawn(move || {
        let _ = tx.send(run(&stream(), &cfg).map_err(|e| e.to_string()));
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("infer_model blocked on {}", path.display()))
}

/// Issue 23: the model was written into whatever non-regular file was at
/// the path (a FIFO's reader got the model, `/dev/null` was written). A
/// FIFO, a device and a directory are refused before they are opened,
/// whether the path was given (`build: false`) or is the build path.
#[test]
fn model_paths_that_are_not_regular_files_are_refused_unopened() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo(dir.path(), "model.json");
    for build in [false, true] {
        for (path, kind) in [
            (fifo.as_path(), "FIFO"),
            (std::path::Path::new("/dev/null"), "device"),
            (dir.path(), "directory"),
        ] {
            let err = run_within(at(path, build)).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "the model path {} is not a regular file (a {kind}): give the path of a model file",
                    path.display()
                )
            );
        }
    }
    // Nobody opened the FIFO: a non-blocking reader sees no writer.
    use std::os::unix::fs::OpenOptionsExt;
    let mut r = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let mut got = Vec::new();
    std::io::Read::read_to_end(&mut r, &mut got).unwrap();
    assert!(got.is_empty());
}

/// A path the user gave is an input: when nothing is there, that is an
/// error, and nothing is created (it used to build the model there).
#[test]
fn a_given_model_path_that_does_not_exist_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.json");
    let err = run_within(at(&path, false)).unwrap_err();
    assert_eq!(
        err,
        format!(
            "the model {} does not exist: --model names a model to load, which infer_model never \
             writes (without --model it builds its demo model at its default path)",
            path.display()
        )
    );
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A dangling link at the build path (someone else's, in a shared
/// temporary directory) is not written through: its target is not created.
#[test]
fn a_dangling_link_at_the_build_path_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.json");
    let link = dir.path().join("model.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = run_within(at(&link, true)).unwrap_err();
    assert!(
        err.starts_with(&format!(
            "the model path {} cannot be read: ",
            link.display()
        )),
        "{err}"
    );
    assert!(!target.exists());
    // A link to a model file is read.
    let real = dir.path().join("real.json");
    run_within(at(&real, true)).unwrap();
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let report = run_within(at(&link, false)).unwrap();
    assert!(!report.built);
}

/// The binary: `--model` of a missing file exits 1 and creates nothing.
#[test]
fn the_model_flag_names_an_input_the_binary_never_writes() {
    // target/<profile>/deps/<this test> → target/<profile>/examples/infer_model
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().and_then(|d| d.parent()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.json");
    let out = std::process::Command::new(bin.join("examples").join("infer_model"))
        .arg("--model")
        .arg(&path)
        .env("CANN_BACKEND", "sim")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "error: the model {} does not exist",
            path.display()
        )),
        "{err}"
    );
    assert!(!path.exists());
}

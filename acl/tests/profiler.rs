//! `acl::profiler` on the simulator: a profiled run leaves a `PROF_...`
//! directory with the timeline of the operators it ran; bad paths, bad
//! devices and misuse are clear errors with the runtime's codes; guards
//! stop on drop without recording failures. The session is process-wide:
//! the tests take one lock.

use acl::profiler::{AicoreMetrics, DataTypes, ProfileConfig, Profiler, Profiling};
use acl::{Device, Error, ErrorCode, Runtime, Tensor, ops};
use std::path::PathBuf;

static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn setup() -> (std::sync::MutexGuard<'static, ()>, Runtime) {
    let g = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cann_sim::install().unwrap();
    (g, Runtime::init().unwrap())
}

/// A path named `name` (not created) in a new temporary directory, which is
/// removed with everything in it when the returned guard drops.
fn temp_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("acl-profiler-")
        .tempdir()
        .expect("a temporary directory");
    let path = dir.path().join(name);
    (dir, path)
}

fn send_sync<T: Send + Sync>() {}

#[test]
fn profiler_types_are_send_and_sync() {
    send_sync::<Profiler>();
    send_sync::<ProfileConfig>();
    send_sync::<Profiling>();
    send_sync::<DataTypes>();
    send_sync::<AicoreMetrics>();
}

#[test]
fn a_profiled_run_writes_the_operators_timeline_into_a_prof_directory() {
    cann_sim::sim_only!("reads the simulator's JSON trace (real CANN writes msprof's binary data)");
    let (_g, rt) = setup();
    let npu = Device::new(&rt, 0).unwrap();
    let (_dir_tmp, dir) = temp_dir("run");
    let profiler = Profiler::init(&rt, &dir).unwrap();
    assert_eq!(profiler.path(), dir);
    let config = ProfileConfig::new(&[0], DataTypes::default()).unwrap();
    assert_eq!(config.devices(), [0]);
    let run = profiler.start(&config).unwrap();
    let s = npu.new_stream().unwrap();
    let a = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let mut c = Tensor::zeros(&s, &[2, 2]).unwrap();
    ops::matmul(&s, &a, &a, &mut c).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [7.0, 10.0, 15.0, 22.0]);
    run.stop().unwrap();
    profiler.finalize().unwrap();

    let runs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    assert!(
        runs[0]
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("PROF_000001_")
    );
    let out = runs[0].join("mindstudio_profiler_output");
    let json = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "operator")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"MatMul"), "{names:?}");
    assert!(acl::take_release_errors().is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_path_that_is_not_a_writable_directory_is_invalid_file_naming_it() {
    let (_g, rt) = setup();
    let (_file_tmp, file) = temp_dir("a-file");
    std::fs::write(&file, b"x").unwrap();
    let e = Profiler::init(&rt, &file).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidFile), "{e}");
    assert!(e.to_string().contains(file.to_str().unwrap()), "{e}");
    std::fs::remove_file(&file).unwrap();
    let e = Profiler::init(&rt, "").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    let e = Profiler::init(&rt, "a\0b").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
}

#[test]
fn one_session_per_process_and_one_run_per_device() {
    let (_g, rt) = setup();
    let (_dir_tmp, dir) = temp_dir("twice");
    let profiler = Profiler::init(&rt, &dir).unwrap();
    let e = Profiler::init(&rt, &dir).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RepeatInitialize), "{e}");
    let config = ProfileConfig::new(&[0, 1], DataTypes::TASK_TIME).unwrap();
    let run = profiler.start(&config).unwrap();
    let e = profiler.start(&config).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::ProfAlreadyRun), "{e}");
    // The guard keeps the session: finalize refuses while it runs.
    let other = profiler.clone();
    let e = other.finalize().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    drop(run);
    drop(profiler);
    assert!(acl::take_release_errors().is_empty());
    // Ended: a new session may start.
    let again = Profiler::init(&rt, &dir).unwrap();
    again.finalize().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_devices_are_an_error_naming_them() {
    let (_g, _rt) = setup();
    let e = ProfileConfig::new(&[0, 0], DataTypes::default()).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("[0, 0]"), "{e}");
    let e = ProfileConfig::new(&[99], DataTypes::default()).unwrap_err();
    assert!(e.to_string().contains("99"), "{e}");
    let tx = ProfileConfig::with_metrics(&[], DataTypes::MSPROFTX, AicoreMetrics::None).unwrap();
    assert!(tx.data_types().contains(DataTypes::MSPROFTX));
}

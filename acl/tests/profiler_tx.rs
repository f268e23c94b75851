//! msproftx marks and ranges (`acl::profiler::tx`) and step markers: what a
//! run's output holds, and each misuse's exact error. The profiling
//! session is process-wide: the tests take one lock.

use acl::profiler::tx::{Range, Stamp, StepInfo};
use acl::profiler::{DataTypes, ProfileConfig, Profiler};
use acl::{Device, ErrorCode, Runtime};

static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn setup() -> (std::sync::MutexGuard<'static, ()>, Runtime) {
    let g = LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cann_sim::install().unwrap();
    (g, Runtime::init().unwrap())
}

#[test]
fn send_and_sync_are_as_documented() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Stamp<'static>>();
    send_sync::<Range<'static>>();
    send_sync::<StepInfo>();
}

/// The text of the run's `mindstudio_profiler_output` file whose name
/// starts with `prefix` and ends with `suffix`.
fn output(dir: &std::path::Path, prefix: &str, suffix: &str) -> String {
    let run = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("PROF_")
        })
        .expect("a PROF_ directory");
    let out = run.join("mindstudio_profiler_output");
    let file = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .unwrap_or_else(|| panic!("no {prefix}* in {}", out.display()));
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn marks_scopes_ranges_and_device_marks_are_in_the_runs_output() {
    cann_sim::sim_only!("reads the simulator's summary (real CANN writes msprof's binary data)");
    let (_g, rt) = setup();
    let dir = tempfile::tempdir().unwrap();
    let npu = Device::new(&rt, 0).unwrap();
    let s = npu.new_stream().unwrap();
    let profiler = Profiler::init(&rt, dir.path()).unwrap();
    let config = ProfileConfig::new(&[0], DataTypes::TASK_TIME | DataTypes::MSPROFTX).unwrap();
    let run = profiler.start(&config).unwrap();
    let forward = run.stamp("forward").unwrap();
    let x = forward
        .scope(|| s.clone_from_host(&[1.0f32; 16]))
        .unwrap()
        .unwrap();
    forward.mark().unwrap();
    let load = run.stamp("data loading").unwrap();
    let range = load.range().unwrap();
    // A range ends on another thread.
    std::thread::scope(|t| {
        t.spawn(move || range.end().unwrap());
    });
    run.mark_ex("after forward", &s).unwrap();
    s.synchronize().unwrap();
    drop((forward, load, x));
    run.stop().unwrap();
    let tx = output(dir.path(), "msprof_tx_", ".csv");
    assert!(
        tx.starts_with("event_type,message,start_us,end_us,duration_us\n"),
        "{tx}"
    );
    for line in [
        "push_pop,\"forward\"",
        "mark,\"forward\"",
        "start_end,\"data loading\"",
        "mark_ex,\"after forward\"",
    ] {
        assert!(tx.contains(line), "{line} missing in {tx}");
    }
    let trace = output(dir.path(), "msprof_", ".json");
    assert!(
        trace.contains("MarkEx: after forward"),
        "the device mark is in the trace"
    );
    profiler.finalize().unwrap();
}

#[test]
fn a_stamp_needs_a_run_that_profiles_msproftx() {
    let (_g, rt) = setup();
    let dir = tempfile::tempdir().unwrap();
    let npu = Device::new(&rt, 0).unwrap();
    let s = npu.new_stream().unwrap();
    let profiler = Profiler::init(&rt, dir.path()).unwrap();
    let run = profiler
        .start(&ProfileConfig::new(&[0], DataTypes::TASK_TIME).unwrap())
        .unwrap();
    let e = run.stamp("x").unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::Failure), "{e}");
    assert!(e.to_string().contains("aclprofCreateStamp"), "{e}");
    let e = run.mark_ex("x", &s).unwrap_err();
    assert!(e.to_string().contains("aclprofMarkEx"), "{e}");
    let e = run.mark_ex("a\0b", &s).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Profiling::mark_ex: the message contains a NUL byte"
    );
    run.stop().unwrap();
    profiler.finalize().unwrap();
}

#[test]
fn a_message_of_128_bytes_is_refused() {
    let (_g, rt) = setup();
    let dir = tempfile::tempdir().unwrap();
    let profiler = Profiler::init(&rt, dir.path()).unwrap();
    let run = profiler
        .start(&ProfileConfig::new(&[0], DataTypes::MSPROFTX).unwrap())
        .unwrap();
    assert!(run.stamp(&"m".repeat(127)).is_ok());
    let e = run.stamp(&"m".repeat(128)).unwrap_err();
    assert!(e.to_string().contains("less than 128"), "{e}");
    run.stop().unwrap();
    profiler.finalize().unwrap();
}

#[test]
fn a_step_marks_its_start_and_its_end_once_each() {
    let (_g, rt) = setup();
    let npu = Device::new(&rt, 0).unwrap();
    let s = npu.new_stream().unwrap();
    let mut step = StepInfo::new().unwrap();
    step.start(&s).unwrap();
    let e = step.start(&s).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
    step.end(&s).unwrap();
    let e = step.end(&s).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
    s.synchronize().unwrap();
}

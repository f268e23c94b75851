//! The timeline (`cann_sim::trace`), its Chrome trace-event JSON, the
//! `CANN_SIM_TRACE` variable, and the `aclprof*` exports writing it into a
//! `PROF_...` directory with the released runtime's codes.
//!
//! Recording and profiling are process-wide: the tests take one lock.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_INVALID_PROFILING_CONFIG,
    ACL_ERROR_PROF_ALREADY_RUN, ACL_ERROR_PROF_MODULES_UNSUPPORTED, ACL_ERROR_PROF_NOT_RUN,
    ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_UNINITIALIZE, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE, ACL_PROF_ACL_API, ACL_PROF_MSPROFTX, ACL_PROF_STORAGE_LIMIT,
    ACL_PROF_TASK_TIME, aclprofConfig,
};
use cann_sim::acl::*;
use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A path named `name` (not created) in a new temporary directory, which is
/// removed with everything in it when the returned guard drops.
fn temp_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("cann-sim-trace-")
        .tempdir()
        .expect("a temporary directory");
    let path = dir.path().join(name);
    (dir, path)
}

/// Checks `text` against the trace-event format and returns its X events.
fn validate(text: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(text).expect("the trace is JSON");
    let events = v["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");
    assert!(v["displayTimeUnit"].is_string());
    let mut thread_names = BTreeSet::new();
    let mut process_names = BTreeSet::new();
    let mut spans = Vec::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has ph");
        assert!(e["name"].is_string(), "{e}");
        assert!(e["pid"].is_u64(), "{e}");
        match ph {
            "M" => {
                let pid = e["pid"].as_u64().unwrap();
                match e["name"].as_str().unwrap() {
                    "thread_name" => {
                        assert!(e["args"]["name"].is_string(), "{e}");
                        thread_names.insert((pid, e["tid"].as_u64().expect("tid")));
                    }
                    "process_name" => {
                        assert!(e["args"]["name"].is_string(), "{e}");
                        process_names.insert(pid);
                    }
                    "thread_sort_index" | "process_sort_index" => {
                        assert!(e["args"]["sort_index"].is_i64(), "{e}");
                    }
                    other => panic!("unexpected metadata {other}"),
                }
            }
            "X" => {
                assert!(e["cat"].is_string(), "{e}");
                assert!(e["tid"].is_u64(), "{e}");
                assert!(e["args"].is_object(), "{e}");
                let ts = e["ts"].as_f64().expect("ts is a number");
                let dur = e["dur"].as_f64().expect("dur is a number");
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                spans.push(e.clone());
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    // Every track is named; no two spans of one track overlap.
    let mut tracks: BTreeMap<(u64, u64), Vec<(u64, u64)>> = BTreeMap::new();
    for e in &spans {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        assert!(thread_names.contains(&key), "no thread_name for {key:?}");
        assert!(
            process_names.contains(&key.0),
            "no process_name for {}",
            key.0
        );
        let ns = |f: &str| (e[f].as_f64().unwrap() * 1000.0).round() as u64;
        tracks
            .entry(key)
            .or_default()
            .push((ns("ts"), ns("ts") + ns("dur")));
    }
    for (key, mut t) in tracks {
        t.sort_unstable();
        for w in t.windows(2) {
            assert!(w[0].1 <= w[1].0, "spans overlap on {key:?}: {w:?}");
        }
    }
    spans
}

fn names_of(spans: &[Value], cat: &str) -> Vec<String> {
    spans
        .iter()
        .filter(|e| e["cat"] == cat)
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

/// Copies, fills, events, a host function and a kernel on two streams.
fn run_some_work() {
    use_device(0);
    let (a, b) = (create_stream(), create_stream());
    let host = malloc_host(4096);
    let (d1, d2) = (malloc(4096), malloc(4096));
    ok(memcpy_async(d1, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, a));
    ok(memset_async(d2, 4096, 7, b));
    let e = create_event();
    record(e, a);
    // SAFETY: live handles.
    ok(unsafe { aclrtStreamWaitEvent(b, e) });
    ok(memcpy_async(d2, d1, 1024, ACL_MEMCPY_DEVICE_TO_DEVICE, b));
    ok(host_fn(a, || {}));
    // The sample kernel `vadd_f32` (z = x + y over n floats).
    let path = cann_sim::sample_kernels().expect("the sample kernels were built");
    let path = CString::new(path.to_str().unwrap()).unwrap();
    let mut bin = null_mut();
    // SAFETY: valid path and out-pointer.
    ok(unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), null_mut(), &mut bin) });
    let mut f = null_mut();
    let name = CString::new("vadd_f32").unwrap();
    // SAFETY: valid name and out-pointer.
    ok(unsafe { aclrtBinaryGetFunction(bin, name.as_ptr(), &mut f) });
    let words = [d1 as u64, d1 as u64, d2 as u64, 16];
    // SAFETY: 32 readable bytes; live function and stream.
    ok(unsafe { aclrtLaunchKernel(f, 2, words.as_ptr().cast(), 32, b) });
    ok(sync(a));
    ok(sync(b));
    // SAFETY: live binary.
    ok(unsafe { aclrtBinaryUnLoad(bin) });
    destroy_event(e);
    for p in [d1, d2] {
        free(p);
    }
    free_host(host);
    destroy_stream(a);
    destroy_stream(b);
}

#[test]
fn recorded_tasks_are_valid_chrome_trace_json() {
    let _g = serial();
    cann_sim::trace::clear();
    cann_sim::trace::start();
    on_new_thread(run_some_work);
    cann_sim::trace::stop();
    let (_path_tmp, path) = temp_dir("api.json");
    cann_sim::trace::write_chrome_json(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let spans = validate(&text);
    assert_eq!(
        names_of(&spans, "copy"),
        ["aclrtMemcpyAsync", "aclrtMemcpyAsync"]
    );
    assert_eq!(names_of(&spans, "fill"), ["aclrtMemsetAsync"]);
    assert_eq!(names_of(&spans, "kernel"), ["vadd_f32"]);
    assert_eq!(names_of(&spans, "event_record").len(), 1);
    assert_eq!(names_of(&spans, "event_wait").len(), 1);
    assert_eq!(names_of(&spans, "host_func").len(), 1);
    assert!(names_of(&spans, "api").contains(&"aclrtSynchronizeStream".to_string()));
    let h2d = spans.iter().find(|e| e["cat"] == "copy").unwrap();
    assert_eq!(h2d["args"]["bytes"], 4096);
    assert_eq!(h2d["args"]["direction"], "HtoD");
    assert_eq!(h2d["args"]["device"], 0);
    // Two streams of device 0: two tracks of process 1, named "stream <id>".
    let tracks: BTreeSet<u64> = spans
        .iter()
        .filter(|e| e["pid"] == 1)
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tracks.len(), 2);
    assert!(text.contains(r#""name":"process_name","pid":1,"args":{"name":"NPU 0"#));

    // Off: nothing more is recorded.
    let before = cann_sim::trace::spans().len();
    on_new_thread(run_some_work);
    assert_eq!(cann_sim::trace::spans().len(), before);
    cann_sim::trace::clear();
    assert!(cann_sim::trace::spans().is_empty());
}

/// Set in the child process of the environment test.
const CHILD: &str = "CANN_SIM_TRACE_TEST_CHILD";

#[test]
fn cann_sim_trace_writes_the_file_at_acl_finalize() {
    if std::env::var_os(CHILD).is_some() {
        // SAFETY: a null config path is allowed.
        ok(unsafe { aclInit(null()) });
        on_new_thread(run_some_work);
        ok(aclFinalize());
        return;
    }
    let (_path_tmp, path) = temp_dir("env.json");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "cann_sim_trace_writes_the_file_at_acl_finalize",
            "--exact",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(cann_sim::trace::TRACE_VAR, &path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).expect("the trace was written");
    std::fs::remove_file(&path).unwrap();
    let spans = validate(&text);
    assert_eq!(names_of(&spans, "kernel"), ["vadd_f32"]);
}

/// Runs this binary's test `name` alone in a child process (with `CHILD`
/// set, and `envs`), given 30 s: its exit code (`None` when killed at the
/// deadline) and standard error.
fn run_child(name: &str, envs: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .envs(envs.iter().map(|(k, v)| (*k, *v)))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    (code, reader.join().unwrap())
}

/// Issue 23: `CANN_SIM_TRACE` naming a FIFO hung the program after its
/// work (the trace was written into the FIFO at exit). `aclInit` now checks
/// the path first and fails with the reason; the FIFO is never opened.
#[test]
fn a_fifo_as_cann_sim_trace_fails_acl_init_and_is_never_opened() {
    const NAME: &str = "a_fifo_as_cann_sim_trace_fails_acl_init_and_is_never_opened";
    if std::env::var_os(CHILD).is_some() {
        let fifo = std::env::var(cann_sim::trace::TRACE_VAR).unwrap();
        // SAFETY: a null config path is allowed.
        let got = unsafe { aclInit(null()) };
        let msg = assert_fails(got, ACL_ERROR_INVALID_PARAM, "aclInit");
        assert_eq!(
            msg,
            format!(
                "aclInit: cann-sim configuration: CANN_SIM_TRACE={fifo:?}: {fifo} is a FIFO, not a regular file: give the path of a file to write"
            )
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.json");
    let c = CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (code, stderr) = run_child(NAME, &[(cann_sim::trace::TRACE_VAR, &fifo)]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Issue 23: a trace that cannot be written was reported twice (at
/// `aclFinalize` and at exit) and the program exited 0. It is reported
/// once, and the process exits with status 1.
#[test]
fn a_failed_cann_sim_trace_write_is_reported_once_and_exits_1() {
    const NAME: &str = "a_failed_cann_sim_trace_write_is_reported_once_and_exits_1";
    const DIR: &str = "CANN_SIM_TRACE_TEST_DIR";
    if std::env::var_os(CHILD).is_some() {
        // SAFETY: a null config path is allowed.
        ok(unsafe { aclInit(null()) });
        on_new_thread(run_some_work);
        // The directory goes away after the check of aclInit.
        std::fs::remove_dir(std::env::var_os(DIR).unwrap()).unwrap();
        ok(aclFinalize());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let path = sub.join("trace.json");
    let (code, stderr) = run_child(NAME, &[(cann_sim::trace::TRACE_VAR, &path), (DIR, &sub)]);
    assert_eq!(code, Some(1), "{stderr}");
    let report = format!(
        "cann-sim: cannot write the trace CANN_SIM_TRACE={:?}: cannot write {}: the directory {} does not exist; the process will exit with status 1\n",
        path.display().to_string(),
        path.display(),
        sub.display()
    );
    assert_eq!(
        stderr.matches("cann-sim: cannot write the trace").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(&report), "{stderr}");
}

fn prof_init(path: &Path) -> i32 {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path of the length given.
    unsafe { aclprofInit(c.as_ptr(), c.as_bytes().len()) }
}

fn config(devices: &[u32], data: u64) -> *mut aclprofConfig {
    let mut ids = devices.to_vec();
    // SAFETY: `ids` holds `devices.len()` ids; null events.
    unsafe {
        aclprofCreateConfig(
            ids.as_mut_ptr(),
            ids.len() as u32,
            acl_sys::ACL_AICORE_NONE,
            null(),
            data,
        )
    }
}

fn start(c: *const aclprofConfig) -> i32 {
    // SAFETY: the config is looked up.
    unsafe { aclprofStart(c) }
}

fn stop(c: *const aclprofConfig) -> i32 {
    // SAFETY: the config is looked up.
    unsafe { aclprofStop(c) }
}

fn destroy(c: *const aclprofConfig) {
    // SAFETY: the config is looked up.
    ok(unsafe { aclprofDestroyConfig(c) });
}

#[test]
fn aclprof_follows_the_released_runtime() {
    let _g = serial();
    on_new_thread(|| {
        let data = u64::from(ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
        let c = config(&[0], data);
        assert!(!c.is_null());
        // Before aclprofInit.
        assert_fails(start(c), ACL_ERROR_PROF_NOT_RUN, "aclprofStart");
        assert_fails(stop(c), ACL_ERROR_PROF_NOT_RUN, "aclprofStop");
        assert_fails(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");
        let v = CString::new("10MB").unwrap();
        // SAFETY: a NUL-terminated value of the length given.
        let r = unsafe { aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, v.as_ptr(), 4) };
        assert_fails(r, ACL_ERROR_UNINITIALIZE, "aclprofSetConfig");

        // Bad paths.
        // SAFETY: null is refused.
        let r = unsafe { aclprofInit(null(), 3) };
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclprofInit");
        let p = CString::new("/tmp").unwrap();
        // SAFETY: a NUL-terminated string; the length is checked against it.
        let r = unsafe { aclprofInit(p.as_ptr(), 3) };
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclprofInit");
        let (_file_tmp, file) = temp_dir("a-file");
        std::fs::write(&file, b"x").unwrap();
        let msg = assert_fails(prof_init(&file), ACL_ERROR_INVALID_FILE, "aclprofInit");
        assert_contains(&msg, file.to_str().unwrap());
        std::fs::remove_file(&file).unwrap();

        // A missing directory is created.
        let (_dir_tmp, dir_base) = temp_dir("prof");
        let dir = dir_base.join("nested");
        ok(prof_init(&dir));
        assert!(dir.is_dir());
        assert_fails(prof_init(&dir), ACL_ERROR_REPEAT_INITIALIZE, "aclprofInit");
        // SAFETY: as above.
        ok(unsafe { aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, v.as_ptr(), 4) });
        // SAFETY: as above; type 0 is out of range.
        let r = unsafe { aclprofSetConfig(0, v.as_ptr(), 4) };
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclprofSetConfig");

        // Invalid configs are NULL.
        assert!(config(&[8], data).is_null());
        assert!(config(&[0, 0], data).is_null());
        assert!(config(&[], data).is_null());
        let tx = config(&[], u64::from(ACL_PROF_MSPROFTX));
        assert!(!tx.is_null());
        destroy(tx);
        // SAFETY: null is refused.
        let r = unsafe { aclprofDestroyConfig(null()) };
        assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig");

        let odd = config(&[1], 1 << 40);
        assert_fails(
            start(odd),
            ACL_ERROR_PROF_MODULES_UNSUPPORTED,
            "aclprofStart",
        );
        destroy(odd);
        ok(start(c));
        assert_fails(start(c), ACL_ERROR_PROF_ALREADY_RUN, "aclprofStart");
        let other = config(&[0], u64::from(ACL_PROF_ACL_API));
        assert_fails(
            stop(other),
            ACL_ERROR_INVALID_PROFILING_CONFIG,
            "aclprofStop",
        );
        run_some_work();
        ok(stop(c));
        // Stop again: the device no longer runs, skipped.
        ok(stop(c));
        destroy(other);
        destroy(c);
        ok(aclprofFinalize());
        assert_fails(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");

        // One PROF_ directory with the trace and the statistics.
        let runs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(runs.len(), 1, "{runs:?}");
        let name = runs[0].file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with("PROF_000001_"), "{name}");
        let out = runs[0].join("mindstudio_profiler_output");
        let files: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let json = files.iter().find(|f| f.starts_with("msprof_")).unwrap();
        let spans = validate(&std::fs::read_to_string(out.join(json)).unwrap());
        assert_eq!(names_of(&spans, "kernel"), ["vadd_f32"]);
        let csv = files
            .iter()
            .find(|f| f.starts_with("op_statistic_"))
            .unwrap();
        let csv = std::fs::read_to_string(out.join(csv)).unwrap();
        assert!(csv.starts_with("Device_id,OP Type,"), "{csv}");
        assert!(csv.contains("0,vadd_f32,kernel,1,"), "{csv}");
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
        // Profiling alone records nothing once it stopped.
        assert!(cann_sim::trace::spans().is_empty());
    });
}

/// Queues `n` 64-byte fills on one stream and waits: the time per task.
fn fills(n: usize) -> std::time::Duration {
    use_device(0);
    let s = create_stream();
    let d = malloc(64);
    let t = std::time::Instant::now();
    for _ in 0..n {
        ok(memset_async(d, 64, 1, s));
    }
    ok(sync(s));
    let per = t.elapsed() / u32::try_from(n).unwrap();
    free(d);
    destroy_stream(s);
    per
}

/// The cost of recording, for the docs:
/// `cargo test -p cann-sim --release --test trace -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement"]
fn recording_costs_little() {
    let _g = serial();
    on_new_thread(|| {
        fills(2_000);
        let off = fills(50_000);
        cann_sim::trace::start();
        let on = fills(50_000);
        cann_sim::trace::stop();
        cann_sim::trace::clear();
        println!("per 64-byte fill task: {off:?} recording off, {on:?} recording on");
    });
}

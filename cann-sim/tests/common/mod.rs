//! Helpers shared by the simulator's integration tests.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use acl_sys::{
    ACL_CALLBACK_BLOCK, ACL_MEM_MALLOC_HUGE_FIRST, ACL_SUCCESS, aclError, aclrtEvent, aclrtStream,
};
use cann_sim::acl::*;
use cann_sim::check::{self, Kind, Mode};
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard};

/// An rt constant (typed `u32` in the bindings) as an `aclError`.
pub const fn rc(code: u32) -> aclError {
    code as aclError
}

/// This thread's whole recent-error text (taken, as `aclGetRecentErrMsg`
/// does): the runtime's format, see `cann-sim/src/recent_error.rs`.
pub fn recent_error_text() -> String {
    let p = aclGetRecentErrMsg();
    assert!(!p.is_null(), "no recent error message was recorded");
    // SAFETY: non-null, NUL-terminated, valid until the next call on this thread.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The message of the first coded item of a recent-error text: what follows
/// the first `(<code>): ` on its line (the header of the text, or of its
/// first inner item, which has one space more). The whole text when it has
/// no such line.
pub fn first_message(text: &str) -> &str {
    for line in text.lines() {
        let mut rest = line;
        while let Some(open) = rest.find('(') {
            let after = &rest[open + 1..];
            let coded = after.len() > 9
                && after.as_bytes()[..2].iter().all(u8::is_ascii_uppercase)
                && after.as_bytes()[2..6].iter().all(u8::is_ascii_digit)
                && after[6..].starts_with("): ");
            if coded {
                return after[9..].trim_start_matches(' ');
            }
            rest = after;
        }
    }
    text
}

/// This thread's recent error message (taken, as `aclGetRecentErrMsg` does):
/// the message of the first failure recorded since the last read.
pub fn recent_error() -> String {
    first_message(&recent_error_text()).to_string()
}

/// Reads and drops this thread's recent-error text, if any: after a failure
/// whose message a test does not check, so that the next read starts with
/// the next failure (the runtime joins every unread failure into one text,
/// headed by the first).
pub fn discard_recent_error() {
    let _ = aclGetRecentErrMsg();
}

/// Asserts `got == want` and that the recorded message starts with
/// `function`; returns the message.
#[track_caller]
pub fn assert_fails(got: aclError, want: aclError, function: &str) -> String {
    assert_eq!(got, want, "{function} returned {got}, expected {want}");
    let msg = recent_error();
    assert!(msg.starts_with(function), "{msg}");
    msg
}

/// `aclrtGetDevice`: the current device, or the failure's code (its
/// message read, so that a later check sees its own).
pub fn current_device() -> Result<i32, aclError> {
    let mut id = -1;
    // SAFETY: `id` is a valid out-pointer.
    match unsafe { aclrtGetDevice(&mut id) } {
        ACL_SUCCESS => Ok(id),
        rc => {
            discard_recent_error();
            Err(rc)
        }
    }
}

/// `aclrtGetCurrentContext`: the current context, or the failure's code
/// (its message read, as in [`current_device`]).
pub fn current_context() -> Result<acl_sys::aclrtContext, aclError> {
    let mut c = null_mut();
    // SAFETY: `c` is a valid out-pointer.
    match unsafe { aclrtGetCurrentContext(&mut c) } {
        ACL_SUCCESS => Ok(c),
        rc => {
            discard_recent_error();
            Err(rc)
        }
    }
}

#[track_caller]
pub fn assert_contains(msg: &str, part: &str) {
    assert!(msg.contains(part), "{msg:?} does not contain {part:?}");
}

#[track_caller]
pub fn ok(got: aclError) {
    if got != ACL_SUCCESS {
        panic!("expected success, got {got}: {}", recent_error());
    }
}

pub fn on_new_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().unwrap()
}

pub fn use_device(device: i32) {
    ok(aclrtSetDevice(device));
}

pub fn malloc(size: usize) -> *mut u8 {
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    ok(unsafe { aclrtMalloc(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) });
    p.cast()
}

pub fn malloc_host(size: usize) -> *mut u8 {
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    ok(unsafe { aclrtMallocHost(&mut p, size) });
    p.cast()
}

pub fn free(p: *mut u8) {
    // SAFETY: `p` is a live allocation of the caller's.
    ok(unsafe { aclrtFree(p.cast()) });
}

pub fn free_host(p: *mut u8) {
    // SAFETY: `p` is a live pinned allocation of the caller's.
    ok(unsafe { aclrtFreeHost(p.cast()) });
}

pub fn create_stream() -> aclrtStream {
    let mut s = null_mut();
    // SAFETY: `s` is a valid out-pointer.
    ok(unsafe { aclrtCreateStream(&mut s) });
    assert!(!s.is_null());
    s
}

pub fn destroy_stream(s: aclrtStream) {
    // SAFETY: `s` is a live stream of the caller's.
    ok(unsafe { aclrtDestroyStream(s) });
}

pub fn sync(s: aclrtStream) -> aclError {
    // SAFETY: the handle is validated by the simulator.
    unsafe { aclrtSynchronizeStream(s) }
}

/// `aclrtStreamQuery`: true when complete.
pub fn is_complete(s: aclrtStream) -> bool {
    let mut status = 99;
    // SAFETY: valid out-pointer; the handle is validated.
    ok(unsafe { aclrtStreamQuery(s, &mut status) });
    match status {
        acl_sys::ACL_STREAM_STATUS_COMPLETE => true,
        acl_sys::ACL_STREAM_STATUS_NOT_READY => false,
        other => panic!("unexpected stream status {other}"),
    }
}

pub fn create_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: `e` is a valid out-pointer.
    ok(unsafe { aclrtCreateEvent(&mut e) });
    e
}

pub fn create_event_with_flag(flag: u32) -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: `e` is a valid out-pointer.
    ok(unsafe { aclrtCreateEventWithFlag(&mut e, flag) });
    e
}

pub fn destroy_event(e: aclrtEvent) {
    // SAFETY: `e` is a live event of the caller's.
    ok(unsafe { aclrtDestroyEvent(e) });
}

pub fn record(e: aclrtEvent, s: aclrtStream) {
    // SAFETY: handles validated by the simulator.
    ok(unsafe { aclrtRecordEvent(e, s) });
}

/// `aclrtMemcpyAsync` with `destMax == count`.
pub fn memcpy_async(
    dst: *mut u8,
    src: *const u8,
    count: usize,
    kind: u32,
    s: aclrtStream,
) -> aclError {
    // SAFETY: host ends are valid for `count` bytes in every call of these
    // tests; device ends are checked by the simulator.
    unsafe { aclrtMemcpyAsync(dst.cast(), count, src.cast(), count, kind, s) }
}

pub fn memset_async(dst: *mut u8, count: usize, value: i32, s: aclrtStream) -> aclError {
    // SAFETY: the range is checked by the simulator.
    unsafe { aclrtMemsetAsync(dst.cast(), count, value, count, s) }
}

/// `n` floats read back from device memory at `p`.
pub fn f32s(p: *const u8, n: usize) -> Vec<f32> {
    to_host(p, n * 4)
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// New device memory holding `data`.
pub fn upload_f32(data: &[f32]) -> *mut u8 {
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = malloc(bytes.len());
    // SAFETY: `d` has `bytes.len()` device bytes; `bytes` is host memory.
    ok(unsafe {
        aclrtMemcpy(
            d.cast(),
            bytes.len(),
            bytes.as_ptr().cast(),
            bytes.len(),
            acl_sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
    d
}

/// A synchronous device-to-host read.
pub fn to_host(src: *const u8, count: usize) -> Vec<u8> {
    let mut out = vec![0u8; count];
    // SAFETY: `out` is valid for `count` bytes.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            count,
            src.cast(),
            count,
            acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    out
}

type Job = Box<dyn FnOnce() + Send>;

unsafe extern "C" fn run_job(p: *mut c_void) {
    // SAFETY: `p` is the `Box<Job>` leaked by `host_fn`/`callback`, handed
    // over exactly once.
    let job = unsafe { Box::from_raw(p.cast::<Job>()) };
    job();
}

fn leak(f: impl FnOnce() + Send + 'static) -> *mut c_void {
    let job: Job = Box::new(f);
    Box::into_raw(Box::new(job)).cast()
}

/// `aclrtLaunchHostFunc` with a Rust closure.
pub fn host_fn(s: aclrtStream, f: impl FnOnce() + Send + 'static) -> aclError {
    let p = leak(f);
    // SAFETY: `run_job` takes the box back exactly once.
    let rc = unsafe { aclrtLaunchHostFunc(s, Some(run_job), p) };
    if rc != ACL_SUCCESS {
        // SAFETY: not handed over: reclaim it.
        drop(unsafe { Box::from_raw(p.cast::<Job>()) });
    }
    rc
}

/// `aclrtLaunchCallback` with a Rust closure.
pub fn callback(s: aclrtStream, block: bool, f: impl FnOnce() + Send + 'static) -> aclError {
    callback_to_cancel(s, block, f).0
}

/// [`callback`] for a callback the test then cancels: also returns the
/// queued job (null when the launch failed), which the runtime never frees
/// if it never calls it; [`free_cancelled`] does.
pub fn callback_to_cancel(
    s: aclrtStream,
    block: bool,
    f: impl FnOnce() + Send + 'static,
) -> (aclError, *mut c_void) {
    let p = leak(f);
    let kind = if block {
        ACL_CALLBACK_BLOCK
    } else {
        acl_sys::ACL_CALLBACK_NO_BLOCK
    };
    // SAFETY: `run_job` takes the box back exactly once.
    let rc = unsafe { aclrtLaunchCallback(Some(run_job), p, kind, s) };
    if rc != ACL_SUCCESS {
        // SAFETY: not handed over: reclaim it.
        drop(unsafe { Box::from_raw(p.cast::<Job>()) });
        return (rc, std::ptr::null_mut());
    }
    (rc, p)
}

/// Frees a job from [`callback_to_cancel`] that the runtime cancelled.
///
/// # Safety
///
/// The runtime has said the callback will never be called (and so never
/// takes the job back itself).
pub unsafe fn free_cancelled(job: *mut c_void) {
    // SAFETY: the caller's guarantee: nobody else frees it.
    drop(unsafe { Box::from_raw(job.cast::<Job>()) });
}

/// A host function that blocks `s` until the returned sender is dropped or
/// sent to; returns once the function runs.
pub fn block_stream(s: aclrtStream) -> std::sync::mpsc::Sender<()> {
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let (ran_tx, ran_rx) = std::sync::mpsc::channel::<()>();
    ok(host_fn(s, move || {
        let _ = ran_tx.send(());
        let _ = release_rx.recv();
    }));
    ran_rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("the blocking host function runs");
    release_tx
}

/// Runs `test` of this test binary again in a child process with the
/// environment `env` (a SoC name, a mode: settings read once per process)
/// and checks that it passed there.
#[track_caller]
pub fn passes_in_a_child_with(test: &str, env: &[(&str, &str)]) {
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--test-threads=1"])
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} with {env:?} in a child process: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- the check mode ---------------------------------------------------------

/// The check mode (`CANN_SIM_CHECK`) of this process, for a test of the
/// released runtime's behaviour for a misuse: with the check off the test
/// checks that behaviour, with it on the check's report instead. When the
/// check is on, `test` (the calling test's name) first runs again in a
/// child process — this test binary, filtered to it — with
/// `CANN_SIM_CHECK=off`, and must pass there: every run proves both.
#[track_caller]
pub fn check_mode_with_off_in_a_child(test: &str) -> Mode {
    let mode = check::mode();
    if mode != Mode::Off {
        let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
            .args([test, "--exact", "--test-threads=1"])
            .env(check::ENV, "off")
            .output()
            .expect("the test binary runs again");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("test result: ok. 1 passed"),
            "{test} with {}=off in a child process: {}\n{stdout}\n{}",
            check::ENV,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    mode
}

/// Counts the check reports of one test. The tests of a binary that make
/// reports each hold one while they run, one at a time, so that each counts
/// only its own (correct tests make none).
pub struct ReportCount {
    before: u64,
    _serial: MutexGuard<'static, ()>,
}

/// Starts counting the reports of the calling test (waiting for other
/// tests counting theirs).
pub fn count_reports() -> ReportCount {
    static SERIAL: Mutex<()> = Mutex::new(());
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    ReportCount {
        before: check::reports().count,
        _serial: serial,
    }
}

impl ReportCount {
    /// Reports made since counting started.
    pub fn made(&self) -> u64 {
        check::reports().count - self.before
    }

    /// Asserts that `n` reports were made since counting started, the latest
    /// of `kind` with the message `msg` (as the failing call recorded it,
    /// starting with the call and `CANN_SIM_CHECK <kind>:`).
    #[track_caller]
    pub fn assert_made(&self, n: u64, kind: Kind, msg: &str) {
        let r = check::reports();
        assert_eq!(r.count - self.before, n, "{r:#?}");
        let last = r.recent.last().expect("a report");
        assert_eq!(last.kind, kind, "{last:#?}");
        assert_eq!(last.message, msg);
        assert_contains(msg, &format!("CANN_SIM_CHECK {}: ", kind.name()));
    }
}

/// How the check's messages name a stream.
pub fn stream_name(s: aclrtStream) -> String {
    format!("stream {:#x}", s as usize)
}

/// How the check's messages name the byte range `[p, p + len)`: the
/// start of `[p, p + len) (len bytes of <memory>, <argument>)`.
pub fn byte_range(p: *const u8, len: usize) -> String {
    format!("[{:#x}, {:#x}) ({len} bytes", p as usize, p as usize + len)
}

/// Asserts that `got` is the check's refusal (`free-while-pending`, 207002)
/// of `api(p)` (`aclrtFree`, `aclrtFreeHost`, `aclrtUnmapMem`) while `task`
/// (e.g. `aclrtMemcpyAsync task #2`), queued on `s`, still uses the memory
/// as `access` says (e.g. `reads [p, p + 128) (128 bytes of device memory on
/// device 0, src)`, see [`byte_range`]). Returns the message.
#[track_caller]
pub fn assert_free_refused(
    got: aclError,
    api: &str,
    p: *const u8,
    task: &str,
    s: aclrtStream,
    access: &str,
) -> String {
    let msg = assert_fails(got, rc(acl_sys::ACL_ERROR_RT_MEMORY_FREE), api);
    assert_contains(
        &msg,
        &format!(
            "{api}: CANN_SIM_CHECK free-while-pending: {api}({:#x}) while {task} on {} (",
            p as usize,
            stream_name(s)
        ),
    );
    assert_contains(&msg, &format!(") {access}; the task is still pending"));
    assert_contains(&msg, "The memory was not freed.");
    msg
}

/// For tests that call the simulator through the loader, as a C program
/// would (`acl_sys`'s functions resolved from the installed library):
/// installs it and runs `aclInit` once per process, then sets `device` on
/// this thread.
pub fn loader_set_device(device: i32) {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        cann_sim::install().unwrap();
        // SAFETY: a plain call, once per process.
        assert_eq!(unsafe { acl_sys::aclInit(std::ptr::null()) }.unwrap(), 0);
    });
    // SAFETY: a plain call.
    assert_eq!(unsafe { acl_sys::aclrtSetDevice(device) }.unwrap(), 0);
}

/// This thread's recent-error text read through the loader (taken).
pub fn loader_recent() -> String {
    // SAFETY: the message is a NUL-terminated string the library owns.
    unsafe { CStr::from_ptr(acl_sys::aclGetRecentErrMsg().unwrap()) }
        .to_string_lossy()
        .into_owned()
}

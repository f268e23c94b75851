//! Helpers shared by the simulator's integration tests.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use acl_sys::{
    ACL_CALLBACK_BLOCK, ACL_MEM_MALLOC_HUGE_FIRST, ACL_SUCCESS, aclError, aclrtEvent, aclrtStream,
};
use cann_sim::acl::*;
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

/// An rt constant (typed `u32` in the bindings) as an `aclError`.
pub const fn rc(code: u32) -> aclError {
    code as aclError
}

/// This thread's recent error message (taken, as `aclGetRecentErrMsg` does).
pub fn recent_error() -> String {
    let p = aclGetRecentErrMsg();
    assert!(!p.is_null(), "no recent error message was recorded");
    // SAFETY: non-null, NUL-terminated, valid until the next call on this thread.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
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
    }
    rc
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

//! Inter-process events through the C ABI: an `ACL_EVENT_IPC` event recorded
//! in one process holds a stream of another process that opened its handle
//! (`aclrtIpcGetEventHandle` / `aclrtIpcOpenEventHandle`), a creator that
//! dies ends the other side's wait with an error instead of a hang, and
//! what IPC events cannot do gets the release's codes (hicann/runtime
//! `src/runtime/core/src/event/ipc_event.cc`, `src/runtime/api/impl/api_error.cc`).

mod common;

use acl_sys::*;
use common::{loader_recent, loader_set_device};
use std::ffi::c_void;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn setup() {
    loader_set_device(0);
}

fn recent() -> String {
    loader_recent()
}

/// A host function that holds its stream until the flag at `arg` is set.
extern "C" fn gate(arg: *mut c_void) {
    // SAFETY: `arg` points to an AtomicBool the test keeps alive until the
    // stream is synchronised.
    let open = unsafe { &*arg.cast::<AtomicBool>() };
    while !open.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn ipc_event() -> aclrtEvent {
    let mut e = null_mut();
    // SAFETY: a valid out-pointer.
    let rc = unsafe { aclrtCreateEventExWithFlag(&mut e, ACL_EVENT_IPC) }.unwrap();
    assert_eq!(rc, 0, "{}", recent());
    e
}

fn handle_of(e: aclrtEvent) -> aclrtIpcEventHandle {
    let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
    // SAFETY: a valid out-pointer.
    let rc = unsafe { aclrtIpcGetEventHandle(e, &mut h) }.unwrap();
    assert_eq!(rc, 0, "{}", recent());
    h
}

fn to_hex(h: &aclrtIpcEventHandle) -> String {
    h.reserved
        .iter()
        .map(|&c| format!("{:02x}", c as u8))
        .collect()
}

fn from_hex(s: &str) -> aclrtIpcEventHandle {
    let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
    for (i, c) in h.reserved.iter_mut().enumerate() {
        *c = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap() as _;
    }
    h
}

fn child(name: &str, handle: Option<&aclrtIpcEventHandle>) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        name,
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("CANN_BACKEND");
    if let Some(h) = handle {
        c.env("IPC_EVENT_HANDLE", to_hex(h));
    }
    c
}

#[test]
#[ignore = "run by a_record_in_one_process_holds_a_stream_of_another_until_it_completes"]
fn child_waits_for_the_parents_record() {
    setup();
    let h = from_hex(&std::env::var("IPC_EVENT_HANDLE").unwrap());
    // SAFETY: valid out-pointers and handles.
    unsafe {
        let mut e = null_mut();
        assert_eq!(
            aclrtIpcOpenEventHandle(h, &mut e).unwrap(),
            0,
            "{}",
            recent()
        );
        let mut st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
        assert_eq!(aclrtQueryEventStatus(e, &mut st).unwrap(), 0);
        assert_eq!(
            st, ACL_EVENT_RECORDED_STATUS_NOT_READY,
            "the parent's record is pending"
        );
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        // Work queued after the wait runs only once the parent's record
        // completed: the word is written then.
        let mut d = null_mut();
        assert_eq!(
            aclrtMalloc(&mut d, 8, ACL_MEM_MALLOC_HUGE_FIRST).unwrap(),
            0
        );
        assert_eq!(aclrtStreamWaitEvent(s, e).unwrap(), 0, "{}", recent());
        assert_eq!(aclrtMemsetAsync(d, 8, 7, 8, s).unwrap(), 0);
        assert_eq!(aclrtSynchronizeStream(s).unwrap(), 0, "{}", recent());
        assert_eq!(aclrtQueryEventStatus(e, &mut st).unwrap(), 0);
        assert_eq!(st, ACL_EVENT_RECORDED_STATUS_COMPLETE);
        println!("child: the record completed");
        assert_eq!(aclrtFree(d).unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s).unwrap(), 0);
        assert_eq!(aclrtDestroyEvent(e).unwrap(), 0);
    }
}

#[test]
fn a_record_in_one_process_holds_a_stream_of_another_until_it_completes() {
    setup();
    let e = ipc_event();
    let h = handle_of(e);
    let open = AtomicBool::new(false);
    // SAFETY: valid handles; `open` outlives the stream's work (synchronised
    // below before it goes).
    unsafe {
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        let arg = (&open as *const AtomicBool).cast_mut().cast::<c_void>();
        assert_eq!(aclrtLaunchHostFunc(s, Some(gate), arg).unwrap(), 0);
        assert_eq!(aclrtRecordEvent(e, s).unwrap(), 0);
        let mut c = child("child_waits_for_the_parents_record", Some(&h))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The child stays blocked while the record is held back.
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            c.try_wait().unwrap().is_none(),
            "the child finished before the record"
        );
        open.store(true, Ordering::Release);
        let t0 = Instant::now();
        let out = c.wait_with_output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{text}");
        assert!(text.contains("child: the record completed"), "{text}");
        assert!(t0.elapsed() < Duration::from_secs(30));
        assert_eq!(aclrtSynchronizeStream(s).unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s).unwrap(), 0);
        assert_eq!(aclrtDestroyEvent(e).unwrap(), 0);
    }
}

#[test]
#[ignore = "run by a_wait_on_the_event_of_a_process_that_died_fails_instead_of_hanging"]
fn child_creates_an_event_and_never_completes_it() {
    setup();
    let e = ipc_event();
    let h = handle_of(e);
    let never = Box::leak(Box::new(AtomicBool::new(false)));
    // SAFETY: valid handles; the flag is leaked (lives for ever).
    unsafe {
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        let arg = (never as *const AtomicBool).cast_mut().cast::<c_void>();
        assert_eq!(aclrtLaunchHostFunc(s, Some(gate), arg).unwrap(), 0);
        assert_eq!(aclrtRecordEvent(e, s).unwrap(), 0);
    }
    println!("HANDLE {}", to_hex(&h));
    // Killed by the parent.
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_wait_on_the_event_of_a_process_that_died_fails_instead_of_hanging() {
    setup();
    let mut c = child("child_creates_an_event_and_never_completes_it", None)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
    let hex = loop {
        let line = lines.next().expect("the child printed its handle").unwrap();
        // libtest prints "test <name> ... " before the test's own output.
        if let Some(at) = line.find("HANDLE ") {
            break line[at + "HANDLE ".len()..].trim().to_string();
        }
    };
    let h = from_hex(&hex);
    // SAFETY: valid out-pointers and handles.
    unsafe {
        let mut e = null_mut();
        assert_eq!(
            aclrtIpcOpenEventHandle(h, &mut e).unwrap(),
            0,
            "{}",
            recent()
        );
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        assert_eq!(aclrtStreamWaitEvent(s, e).unwrap(), 0);
        c.kill().unwrap();
        c.wait().unwrap();
        let t0 = Instant::now();
        let rc = aclrtSynchronizeStream(s).unwrap();
        let msg = recent();
        assert_eq!(rc, ACL_ERROR_RT_DRV_INTERNAL_ERROR as i32, "{msg}");
        assert!(
            msg.contains("exited while its record 1 was pending"),
            "{msg}"
        );
        assert!(t0.elapsed() < Duration::from_secs(10));
        // The dead process's handle cannot be opened again.
        let mut again = null_mut();
        assert_eq!(
            aclrtIpcOpenEventHandle(h, &mut again).unwrap(),
            ACL_ERROR_RT_PARAM_INVALID as i32
        );
        assert!(recent().contains("has exited"), "{}", recent());
        // ...and that attempt removed the file the killed process left.
        let stale = cann_sim::telemetry::dir().join(format!("ipc-event-{}-1.ev", c.id()));
        assert!(!stale.exists(), "{}", stale.display());
        assert_eq!(aclrtDestroyEvent(e).unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s).unwrap(), 0);
    }
}

#[test]
fn ipc_event_misuse_gets_the_release_codes() {
    setup();
    let e = ipc_event();
    // SAFETY: valid out-pointers and handles; invalid arguments only.
    unsafe {
        let mut h = aclrtIpcEventHandle { reserved: [0; 64] };
        let mut plain = null_mut();
        assert_eq!(
            aclrtCreateEventExWithFlag(&mut plain, ACL_EVENT_SYNC).unwrap(),
            0
        );
        assert_eq!(aclrtIpcGetEventHandle(plain, &mut h).unwrap(), 107000);
        assert!(recent().contains("only IPC events"), "{}", recent());
        assert_eq!(aclrtIpcGetEventHandle(e, null_mut()).unwrap(), 100000);
        let mut opened = null_mut();
        assert_eq!(aclrtIpcOpenEventHandle(h, &mut opened).unwrap(), 107000);
        assert!(
            recent().contains("not one aclrtIpcGetEventHandle returned"),
            "{}",
            recent()
        );
        // Reset, the deprecated query and timing: 207000.
        assert_eq!(aclrtResetEvent(e, null_mut()).unwrap(), 207000);
        assert!(recent().contains("IPC event"), "{}", recent());
        let mut old = ACL_EVENT_STATUS_RESERVED;
        assert_eq!(aclrtQueryEvent(e, &mut old).unwrap(), 207000);
        let mut ms = 0f32;
        assert_eq!(aclrtEventElapsedTime(&mut ms, e, e).unwrap(), 207000);
        let mut ts = 0u64;
        assert_eq!(aclrtEventGetTimestamp(e, &mut ts).unwrap(), 207000);
        // Not in a capture.
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        assert_eq!(
            aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL).unwrap(),
            0
        );
        assert_eq!(aclrtRecordEvent(e, s).unwrap(), 207000);
        assert_eq!(aclrtStreamWaitEvent(s, e).unwrap(), 207000);
        let mut m = null_mut();
        assert_eq!(aclmdlRICaptureEnd(s, &mut m).unwrap(), 0);
        assert_eq!(aclmdlRIDestroy(m).unwrap(), 0);
        // A wait or synchronisation before any record returns at once.
        assert_eq!(aclrtStreamWaitEvent(s, e).unwrap(), 0);
        assert_eq!(aclrtSynchronizeStream(s).unwrap(), 0);
        assert_eq!(aclrtSynchronizeEvent(e).unwrap(), 0);
        // The handle dies with its event.
        h = handle_of(e);
        assert_eq!(aclrtIpcOpenEventHandle(h, &mut opened).unwrap(), 0);
        assert_eq!(aclrtDestroyEvent(opened).unwrap(), 0);
        assert_eq!(aclrtDestroyEvent(e).unwrap(), 0);
        assert_eq!(aclrtIpcOpenEventHandle(h, &mut opened).unwrap(), 107000);
        assert!(recent().contains("destroyed"), "{}", recent());
        assert_eq!(aclrtDestroyEvent(plain).unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s).unwrap(), 0);
    }
}

#[test]
#[ignore = "run by the_event_file_of_a_process_that_exits_without_destroying_its_event_is_removed"]
fn child_creates_an_event_and_exits() {
    setup();
    let e = ipc_event();
    println!("HANDLE {}", to_hex(&handle_of(e)));
}

#[test]
fn the_event_file_of_a_process_that_exits_without_destroying_its_event_is_removed() {
    setup();
    let c = child("child_creates_an_event_and_exits", None)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(c.status.success());
    let text = String::from_utf8_lossy(&c.stdout);
    let at = text.find("HANDLE ").expect("the child printed its handle");
    let h = from_hex(text[at + 7..].trim_start());
    // The child removed its file at exit (looked at before any open, which
    // would remove the file of a dead process itself).
    let pid = u32::from_le_bytes(std::array::from_fn(|i| h.reserved[8 + i] as u8));
    let file = cann_sim::telemetry::dir().join(format!("ipc-event-{pid}-1.ev"));
    assert!(!file.exists(), "{}", file.display());
    let mut opened = null_mut();
    // SAFETY: a valid out-pointer.
    let rc = unsafe { aclrtIpcOpenEventHandle(h, &mut opened) }.unwrap();
    assert_eq!(rc, ACL_ERROR_RT_PARAM_INVALID as i32);
}

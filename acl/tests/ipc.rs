//! Device memory shared between processes (`acl::ipc`): a real second
//! process (this test binary, started again with `IPC_TEST_CHILD` set)
//! imports what this one exported; misuse answers the release's codes.

mod common;

use acl::ipc::{IpcExport, IpcImport, PidCheck};
use acl::{DeviceBuffer, ErrorCode, PinnedHostBuffer, result};
use std::ffi::CString;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::time::Duration;

/// The environment variable that makes this binary the importing child.
const CHILD: &str = "IPC_TEST_CHILD";

/// Elements of `u32` in a shared buffer: 2 MiB, the smallest block the
/// simulator shares.
const N: usize = (2 << 20) / 4;

fn pattern(seed: u32) -> Vec<u32> {
    (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ seed)
        .collect()
}

fn code(e: &acl::Error) -> Option<ErrorCode> {
    e.code()
}

// ---- the child side ---------------------------------------------------------

#[test]
#[ignore = "the importing process of another_process_reads_and_writes_exported_memory"]
fn ipc_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let code = match child_main() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("CHILD-ERROR: {e}");
            1
        }
    };
    std::process::exit(code);
}

/// Reads the key from stdin, checks the exporter's data, writes its own,
/// closes the import and says so.
fn child_main() -> Result<(), String> {
    let mut key = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut key)
        .map_err(|e| e.to_string())?;
    let npu = common::device(0);
    let mut import = IpcImport::<u32>::open(&npu, key.trim(), N).map_err(|e| e.to_string())?;
    let seen = import.buffer().to_host_vec().map_err(|e| e.to_string())?;
    if seen != pattern(1) {
        return Err("the imported memory does not hold the exporter's data".into());
    }
    // Written through a stream, ordered like any buffer's work: the close
    // below waits for it.
    let stream = npu.new_stream().map_err(|e| e.to_string())?;
    let src = PinnedHostBuffer::from_slice(&npu, &pattern(2)).map_err(|e| e.to_string())?;
    stream
        .copy_htod(&src, &mut import.buffer_mut())
        .map_err(|e| e.to_string())?;
    import.close().map_err(|e| e.to_string())?;
    println!("CHILD-OK");
    Ok(())
}

// ---- the exporter side ------------------------------------------------------

#[test]
fn another_process_reads_and_writes_exported_memory() {
    cann_sim::sim_only!("spawns this test binary as the importing process, on the simulator");
    let npu = common::device(0);
    let buf = DeviceBuffer::from_host(&npu, &pattern(1)).unwrap();
    let export = IpcExport::new(buf, PidCheck::Whitelist).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["ipc_child", "--exact", "--ignored", "--nocapture"])
        .env(CHILD, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The child's pid is known once it runs: whitelist it, then hand it
    // the key.
    export.allow_pids(&[child.id() as i32]).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", export.key()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("CHILD-OK"),
        "child failed: {}\n{stdout}\n{stderr}",
        out.status
    );
    // The child's write landed in this process's buffer.
    assert_eq!(export.buffer().to_host_vec().unwrap(), pattern(2));
    let buf = export.close().unwrap();
    assert_eq!(buf.len(), N);
}

#[test]
fn an_unknown_key_is_refused_with_107000() {
    let npu = common::device(0);
    let e = IpcImport::<u32>::open(&npu, "csim-1-2-3", 4).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    let e = IpcImport::<u32>::open(&npu, "a\0b", 4).unwrap_err();
    assert!(matches!(e, acl::Error::InvalidArgument { .. }), "{e}");
}

#[test]
fn a_process_outside_the_whitelist_is_refused_with_207006_until_allowed() {
    cann_sim::sim_only!("imports in the exporting process, which the simulator allows");
    let npu = common::device(0);
    let buf = DeviceBuffer::from_host(&npu, &pattern(3)).unwrap();
    let export = IpcExport::new(buf, PidCheck::Whitelist).unwrap();
    let e = IpcImport::<u32>::open(&npu, export.key(), N).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtNoPermission), "{e}");
    assert!(e.to_string().contains("whitelist"), "{e}");
    export
        .allow_pids(&[acl::ipc::process_id().unwrap()])
        .unwrap();
    let import = IpcImport::<u32>::open(&npu, export.key(), N).unwrap();
    assert_eq!(import.buffer().to_host_vec().unwrap(), pattern(3));
    import.close().unwrap();
    // An empty whitelist addition is refused before any C call.
    let e = export.allow_pids(&[]).unwrap_err();
    assert!(matches!(e, acl::Error::InvalidArgument { .. }), "{e}");
    export.close().unwrap();
}

#[test]
fn a_second_close_of_a_key_is_refused_with_107000() {
    cann_sim::sim_only!("imports in the exporting process, which the simulator allows");
    let npu = common::device(0);
    npu.bind().unwrap();
    let buf = DeviceBuffer::from_host(&npu, &pattern(4)).unwrap();
    // SAFETY: the buffer's live memory, kept until the end of the test.
    let key = unsafe {
        result::ipc_mem_get_export_key(
            buf.as_raw_ptr().cast_mut(),
            buf.size_bytes(),
            result::IPC_EXPORT_NO_PID_CHECK,
        )
    }
    .unwrap();
    let key = CString::new(key).unwrap();
    let p = result::ipc_mem_import_by_key(&key, result::IPC_IMPORT_DEFAULT).unwrap();
    assert_ne!(p, buf.as_raw_ptr().cast_mut());
    // The first close unmaps the import, the second withdraws the export,
    // the third has nothing left to close.
    // SAFETY: nothing uses the imported memory.
    unsafe { result::ipc_mem_close(&key) }.unwrap();
    // SAFETY: as above.
    unsafe { result::ipc_mem_close(&key) }.unwrap();
    // SAFETY: as above.
    let e = unsafe { result::ipc_mem_close(&key) }.unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    // A withdrawn key cannot be imported any more.
    let e = result::ipc_mem_import_by_key(&key, result::IPC_IMPORT_DEFAULT).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
}

#[test]
fn memory_not_from_aclrt_malloc_cannot_be_exported() {
    let npu = common::device(0);
    npu.bind().unwrap();
    let mut host = [0u8; 4096];
    // SAFETY: a host array: the runtime must refuse it without using it.
    let e = unsafe { result::ipc_mem_get_export_key(host.as_mut_ptr().cast(), host.len(), 0) }
        .unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    let mut pinned = PinnedHostBuffer::<u8>::zeroed(&npu, 4 << 20).unwrap();
    let p = pinned.as_mut_slice().unwrap().as_mut_ptr();
    // SAFETY: pinned host memory: refused without being used.
    let e = unsafe { result::ipc_mem_get_export_key(p.cast(), 4 << 20, 0) }.unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
}

#[test]
fn the_simulator_refuses_to_share_blocks_below_2_mib() {
    cann_sim::sim_only!(
        "a device shares 4 KiB-aligned small blocks; the simulator's come from the heap"
    );
    let npu = common::device(0);
    let small = DeviceBuffer::from_host(&npu, &[1u32; 1024]).unwrap();
    let e = IpcExport::new(small, PidCheck::Off).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    assert!(e.to_string().contains("at least 2 MiB"), "{e}");
}

#[test]
fn closing_an_import_waits_for_the_work_queued_on_it() {
    cann_sim::sim_only!("imports in the exporting process, which the simulator allows");
    let npu = common::device(0);
    let export = IpcExport::new(
        DeviceBuffer::from_host(&npu, &pattern(5)).unwrap(),
        PidCheck::Off,
    )
    .unwrap();
    let mut import = IpcImport::<u32>::open(&npu, export.key(), N).unwrap();
    let stream = npu.new_stream().unwrap();
    let (open, wait) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = wait.recv();
        })
        .unwrap();
    let src = PinnedHostBuffer::from_slice(&npu, &pattern(6)).unwrap();
    stream.copy_htod(&src, &mut import.buffer_mut()).unwrap();
    let (done_tx, done) = mpsc::channel();
    let closer = std::thread::spawn(move || {
        let r = import.close();
        let _ = done_tx.send(());
        r
    });
    // The copy is held behind the gate: the close cannot finish.
    assert!(done.recv_timeout(Duration::from_millis(200)).is_err());
    open.send(()).unwrap();
    closer.join().unwrap().unwrap();
    assert_eq!(export.buffer().to_host_vec().unwrap(), pattern(6));
    export.close().unwrap();
    drop(src);
}

#[test]
fn exports_and_imports_are_send_and_sync_and_drop_without_panic() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<IpcExport<u32>>();
    send_sync::<IpcImport<f32>>();
    send_sync::<PidCheck>();
    let npu = common::device(0);
    let export = IpcExport::new(
        DeviceBuffer::from_host(&npu, &pattern(7)).unwrap(),
        PidCheck::Off,
    )
    .unwrap();
    let key = export.key().to_string();
    drop(export);
    // Dropped: the key is withdrawn.
    let e = IpcImport::<u32>::open(&npu, &key, N).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    assert!(
        acl::take_release_errors()
            .iter()
            .all(|r| r.resource != "IpcExport" && r.resource != "IpcImport")
    );
}

// ---- events between processes -------------------------------------------------

/// The environment variable that makes this binary the waiting child.
const EVENT_CHILD: &str = "IPC_EVENT_TEST_CHILD";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
#[ignore = "the waiting process of another_process_waits_for_an_event_recorded_here"]
fn ipc_event_child() {
    if std::env::var_os(EVENT_CHILD).is_none() {
        return;
    }
    let code = match event_child_main() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("CHILD-ERROR: {e}");
            1
        }
    };
    std::process::exit(code);
}

/// Reads the handle from stdin, opens it, waits on a stream and then on the
/// host; says whether the record was still pending when it opened.
fn event_child_main() -> Result<(), String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    let line = line.trim();
    let mut bytes = [0u8; 64];
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = u8::from_str_radix(line.get(2 * i..2 * i + 2).ok_or("short handle")?, 16)
            .map_err(|e| e.to_string())?;
    }
    let npu = common::device(0);
    let seen = acl::ipc::open_event(&npu, &acl::ipc::IpcEventHandle::from_bytes(bytes))
        .map_err(|e| e.to_string())?;
    if seen.is_complete().map_err(|e| e.to_string())? {
        return Err("the exporter's record is already complete".into());
    }
    let stream = npu.new_stream().map_err(|e| e.to_string())?;
    stream.wait_event(&seen).map_err(|e| e.to_string())?;
    let zeros = stream.alloc_zeros::<u32>(16).map_err(|e| e.to_string())?;
    stream.synchronize().map_err(|e| e.to_string())?;
    seen.synchronize().map_err(|e| e.to_string())?;
    if !seen.is_complete().map_err(|e| e.to_string())? {
        return Err("the record is not complete after the waits".into());
    }
    drop(zeros);
    println!("CHILD-EVENT-OK");
    Ok(())
}

#[test]
fn another_process_waits_for_an_event_recorded_here() {
    cann_sim::sim_only!("spawns this test binary as the waiting process, on the simulator");
    let npu = common::device(0);
    let done = acl::Event::new(&npu, acl::EventFlags::IPC).unwrap();
    let handle = acl::ipc::event_handle(&done).unwrap();
    // The record is held back by a host function until the child is seen
    // waiting.
    let stream = npu.new_stream().unwrap();
    let (open_tx, open_rx) = mpsc::channel::<()>();
    stream
        .launch_host_fn(move || {
            let _ = open_rx.recv_timeout(Duration::from_secs(60));
        })
        .unwrap();
    done.record(&stream).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["ipc_event_child", "--exact", "--ignored", "--nocapture"])
        .env(EVENT_CHILD, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", hex(handle.as_bytes())).unwrap();
    drop(stdin);
    std::thread::sleep(Duration::from_millis(500));
    if child.try_wait().unwrap().is_some() {
        let out = child.wait_with_output().unwrap();
        panic!(
            "the child did not wait for the record: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    open_tx.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("CHILD-EVENT-OK"),
        "child failed: {}\n{stdout}\n{stderr}",
        out.status
    );
    stream.synchronize().unwrap();
}

#[test]
fn only_ipc_events_have_a_handle_and_foreign_bytes_do_not_open() {
    let npu = common::device(0);
    let plain = acl::Event::new(&npu, acl::EventFlags::SYNC).unwrap();
    let e = acl::ipc::event_handle(&plain).unwrap_err();
    assert!(matches!(e, acl::Error::InvalidArgument { .. }), "{e}");
    assert!(e.to_string().contains("EventFlags::IPC"), "{e}");
    let e = acl::ipc::open_event(&npu, &acl::ipc::IpcEventHandle::from_bytes([7; 64])).unwrap_err();
    assert_eq!(code(&e), Some(ErrorCode::RtParamInvalid), "{e}");
    // An IPC event cannot be timed: refused before the runtime is asked.
    let ipc = acl::Event::new(&npu, acl::EventFlags::IPC).unwrap();
    let e = ipc.elapsed_since(&ipc).unwrap_err();
    assert!(matches!(e, acl::Error::InvalidArgument { .. }), "{e}");
    // A handle round-trips through its bytes, and the opened event drops
    // without panic before and after its creator.
    let h = acl::ipc::event_handle(&ipc).unwrap();
    assert_eq!(acl::ipc::IpcEventHandle::from_bytes(*h.as_bytes()), h);
    let opened = acl::ipc::open_event(&npu, &h).unwrap();
    opened.synchronize().unwrap();
    drop(ipc);
    drop(opened);
}

#[test]
fn ipc_event_handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync + Copy>() {}
    send_sync::<acl::ipc::IpcEventHandle>();
}

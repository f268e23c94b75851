//! Fidelity of cann-sim's runtime to the released CANN runtime.
//!
//! Each test states one behaviour of the open-sourced runtime
//! (`hicann/runtime`), asserts the exact code, and names in a comment the
//! source file it was read from. The behaviours are listed in
//! `cann-sim/FIDELITY.md` ("Runtime").
//!
//! `aclInit`/`aclFinalize`, the default device and `ASCEND_RT_VISIBLE_DEVICES`
//! are process-wide, so those tests run in a child process of their own:
//! this test binary again, filtered to the one test, with the environment it
//! needs ([`isolated`]).

mod common;

use acl_sys::{
    ACL_ERROR_FAILURE, ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_PARSE_FILE,
    ACL_ERROR_REPEAT_FINALIZE, ACL_ERROR_REPEAT_INITIALIZE, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_NO_DEVICE, ACL_SUCCESS, aclError,
};
use acl_sys::{
    ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
};
use cann_sim::acl::*;
use cann_sim::check::{self, Kind, Mode};
use common::*;
use std::ffi::{CString, c_void};
use std::ptr::null_mut;

const NO_DEVICE: aclError = ACL_ERROR_RT_NO_DEVICE as aclError;
const INVALID_DEVICEID: aclError = ACL_ERROR_RT_INVALID_DEVICEID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;
const PARAM_INVALID: aclError = acl_sys::ACL_ERROR_RT_PARAM_INVALID as aclError;

/// The variable that marks the child process of an isolated test.
const CHILD: &str = "CANN_SIM_FIDELITY_CHILD";

/// Runs `test` (the calling test's name) in a child process with `env` set
/// and asserts that it passed there. Returns `true` in that child (the test
/// body runs), `false` in the parent (which returns at once).
#[track_caller]
fn isolated(test: &str, env: &[(&str, &str)]) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--test-threads=1"])
        .env(CHILD, "1")
        .envs(env.iter().copied())
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test} in a child process: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// A config file with `content`, in a fresh temporary directory (removed
/// when the returned guard is dropped).
fn config_file(name: &str, content: &str) -> (tempfile::TempDir, CString) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, content).unwrap();
    let c = CString::new(path.to_str().unwrap()).unwrap();
    (dir, c)
}

fn init(config: Option<&CString>) -> aclError {
    let p = config.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: null or a NUL-terminated path.
    unsafe { aclInit(p) }
}

// ---- aclInit / aclFinalize ---------------------------------------------------

/// `aclFinalize` without `aclInit` succeeds; only a finalize right after a
/// finalize is `ACL_ERROR_REPEAT_FINALIZE` (100037). An `aclInit` in between
/// allows the next one. (hicann/runtime `src/acl/aclrt_impl/acl.cpp`:
/// `aclFinalizeImpl` checks `aclFinalizeFlag`, which only
/// `aclFinalizeInternal` sets and `aclInitImpl` clears.)
#[test]
fn finalize_without_init_succeeds_and_only_a_repeat_is_refused() {
    if !isolated(
        "finalize_without_init_succeeds_and_only_a_repeat_is_refused",
        &[],
    ) {
        return;
    }
    assert_eq!(aclFinalize(), ACL_SUCCESS);
    assert_fails(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
    assert_eq!(init(None), ACL_SUCCESS);
    assert_eq!(init(None), ACL_ERROR_REPEAT_INITIALIZE);
    discard_recent_error();
    // Finalizes whatever the reference count.
    assert_eq!(aclFinalize(), ACL_SUCCESS);
    assert_fails(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
    // aclFinalizeReference with no reference: 100037
    // (`aclFinalizeReferenceImpl`, acl.cpp); at one it finalizes.
    let mut refs = 7u64;
    // SAFETY: `refs` is a valid out-pointer.
    let rc = unsafe { aclFinalizeReference(&mut refs) };
    assert_fails(rc, ACL_ERROR_REPEAT_FINALIZE, "aclFinalizeReference");
    assert_eq!(refs, 0);
    assert_eq!(init(None), ACL_SUCCESS);
    // SAFETY: as above.
    assert_eq!(unsafe { aclFinalizeReference(&mut refs) }, ACL_SUCCESS);
    assert_eq!(refs, 0);
    assert_fails(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "aclFinalize");
}

/// The first successful `aclInit`'s config content is remembered: a later
/// `aclInit` (after `aclFinalize`) with other content is
/// `ACL_ERROR_INVALID_PARAM` (100000); the same content, even from another
/// file, is accepted. (acl.cpp `aclInitImpl`: `aclInitJsonHash`, a hash of
/// the content read by `GetStrFromConfigPath`.)
#[test]
fn init_again_with_another_config_is_refused() {
    if !isolated("init_again_with_another_config_is_refused", &[]) {
        return;
    }
    let (_a_dir, a) = config_file("a.json", "{\"err_msg_mode\": \"0\"}");
    let (_same_dir, same) = config_file("same.json", "{\"err_msg_mode\": \"0\"}");
    let (_other_dir, other) = config_file("other.json", "{}");
    assert_eq!(init(Some(&a)), ACL_SUCCESS);
    assert_eq!(aclFinalize(), ACL_SUCCESS);
    assert_contains(
        &assert_fails(init(Some(&other)), ACL_ERROR_INVALID_PARAM, "aclInit"),
        "differs from that of the first aclInit",
    );
    // No config counts as empty content: also different.
    assert_fails(init(None), ACL_ERROR_INVALID_PARAM, "aclInit");
    assert_eq!(init(Some(&same)), ACL_SUCCESS);
    assert_eq!(aclFinalize(), ACL_SUCCESS);
}

/// A config file that does not exist is `ACL_ERROR_INVALID_FILE` (100003,
/// `GetStrFromConfigPath`, `src/acl/aclrt_impl/acl_rt_impl_base.cpp`); one
/// that is not valid JSON is `ACL_ERROR_PARSE_FILE` (100006,
/// `JsonParser::ParseJson`, `src/acl/common/json_parser.cpp`), and so is
/// nesting deeper than 10 (`GetConfigStrFromFile`). An empty file is no
/// config at all.
#[test]
fn config_file_errors_have_the_parsers_codes() {
    if !isolated("config_file_errors_have_the_parsers_codes", &[]) {
        return;
    }
    let missing = CString::new("/nonexistent/cann-sim/acl.json").unwrap();
    assert_fails(init(Some(&missing)), ACL_ERROR_INVALID_FILE, "aclInit");
    let (_bad_dir, bad) = config_file("bad.json", "{\"dump\": ");
    assert_contains(
        &assert_fails(init(Some(&bad)), ACL_ERROR_PARSE_FILE, "aclInit"),
        "not valid JSON",
    );
    let (_deep_dir, deep) = config_file(
        "deep.json",
        &format!("{}{}", "[".repeat(11), "]".repeat(11)),
    );
    assert_fails(init(Some(&deep)), ACL_ERROR_PARSE_FILE, "aclInit");
    let (_empty_dir, empty) = config_file("empty.json", "");
    assert_eq!(init(Some(&empty)), ACL_SUCCESS);
    assert_eq!(aclFinalize(), ACL_SUCCESS);
}

// ---- the default device --------------------------------------------------------

/// `{"defaultDevice": {"default_device": "2"}}` in `aclInit`'s config makes
/// device 2 the default: `aclrtGetDevice` reports it without setting it, and
/// a call that needs a context sets it implicitly on a thread without one.
/// After `aclFinalize` there is no default any more.
/// (`src/acl/common/json_parser.cpp` `GetDefaultDeviceIdFromFile`: keys
/// `defaultDevice` / `default_device`, a string value; acl.cpp
/// `HandleDefaultDeviceAndStackSize` → `rtSetDefaultDeviceId`;
/// `src/runtime/core/src/runtime.cc` `Runtime::CurrentContext(isNeedSetDevice,
/// deviceId)`; `src/runtime/api/impl/api_impl.cc` `ApiImpl::GetDevice`.)
#[test]
fn a_default_device_in_the_config_is_set_implicitly() {
    if !isolated("a_default_device_in_the_config_is_set_implicitly", &[]) {
        return;
    }
    let (_cfg_dir, cfg) = config_file(
        "default.json",
        "{\"defaultDevice\": {\"default_device\": \"2\"}}",
    );
    assert_eq!(init(Some(&cfg)), ACL_SUCCESS);
    on_new_thread(|| {
        let mut id = -1;
        // SAFETY: `id` is a valid out-pointer.
        assert_eq!(unsafe { aclrtGetDevice(&mut id) }, ACL_SUCCESS);
        assert_eq!(id, 2);
        let mut p: *mut c_void = null_mut();
        // SAFETY: `p` is a valid out-pointer.
        assert_eq!(unsafe { aclrtMalloc(&mut p, 64, 0) }, ACL_SUCCESS);
        let mut ctx = null_mut();
        // SAFETY: `ctx` is a valid out-pointer.
        assert_eq!(unsafe { aclrtGetCurrentContext(&mut ctx) }, ACL_SUCCESS);
        assert!(!ctx.is_null());
        // SAFETY: `p` was allocated above.
        assert_eq!(unsafe { aclrtFree(p) }, ACL_SUCCESS);
    });
    assert_eq!(aclFinalize(), ACL_SUCCESS);
    on_new_thread(|| {
        let mut p: *mut c_void = null_mut();
        // SAFETY: `p` is a valid out-pointer.
        let rc = unsafe { aclrtMalloc(&mut p, 64, 0) };
        assert_fails(rc, CONTEXT_NULL, "aclrtMalloc");
    });
}

/// A `default_device` that is not a string of digits fails `aclInit` with
/// `ACL_ERROR_FAILURE` (500001); an id that is not a visible device with
/// 107001. (json_parser.cpp `GetDefaultDeviceIdFromFile`, regex
/// `0|[1-9]\d*` on `get<std::string>()`; acl.cpp
/// `HandleDefaultDeviceAndStackSize` turns any failure into
/// `ACL_ERROR_FAILURE`; `rtSetDefaultDeviceId` → `ChgUserDevIdToDeviceId`.)
#[test]
fn an_invalid_default_device_fails_init() {
    if !isolated("an_invalid_default_device_fails_init", &[]) {
        return;
    }
    for (name, value) in [
        ("num.json", "1"),
        ("neg.json", "\"-1\""),
        ("lead.json", "\"01\""),
    ] {
        let (_cfg_dir, cfg) = config_file(
            name,
            &format!("{{\"defaultDevice\": {{\"default_device\": {value}}}}}"),
        );
        assert_fails(init(Some(&cfg)), ACL_ERROR_FAILURE, "aclInit");
    }
    let (_far_dir, far) = config_file(
        "far.json",
        "{\"defaultDevice\": {\"default_device\": \"8\"}}",
    );
    assert_fails(init(Some(&far)), INVALID_DEVICEID, "aclInit");
}

// ---- ASCEND_RT_VISIBLE_DEVICES -------------------------------------------------

/// The list is read up to its first invalid id: `1,3,9,4` on 8 devices shows
/// devices 1 and 3, as logical 0 and 1. (hicann/runtime
/// `src/runtime/core/src/runtime.cc`, `Runtime::GetVisibleDevices`: the loop
/// breaks at an id beyond the device count.)
#[test]
fn visible_devices_are_cut_at_the_first_invalid_id() {
    if !isolated(
        "visible_devices_are_cut_at_the_first_invalid_id",
        &[("ASCEND_RT_VISIBLE_DEVICES", "1,3,9,4")],
    ) {
        return;
    }
    let mut n = 0u32;
    // SAFETY: `n` is a valid out-pointer.
    assert_eq!(unsafe { aclrtGetDeviceCount(&mut n) }, ACL_SUCCESS);
    assert_eq!(n, 2);
    assert_eq!(aclrtSetDevice(1), ACL_SUCCESS);
    assert_fails(aclrtSetDevice(2), INVALID_DEVICEID, "aclrtSetDevice");
}

/// Issue 23: `0,,1` is read as the runtime reads it (device 0) and said on
/// stderr; under `CANN_SIM_CHECK` it selects no device, with an error
/// naming the variable.
#[test]
fn a_visible_list_read_only_in_part_is_an_error_under_the_check() {
    if !isolated(
        "a_visible_list_read_only_in_part_is_an_error_under_the_check",
        &[
            ("ASCEND_RT_VISIBLE_DEVICES", "0,,1"),
            ("CANN_SIM_CHECK", "report"),
        ],
    ) {
        return;
    }
    let mut n = 5u32;
    // SAFETY: `n` is a valid out-pointer.
    let rc = unsafe { aclrtGetDeviceCount(&mut n) };
    assert_contains(
        &assert_fails(rc, NO_DEVICE, "aclrtGetDeviceCount"),
        "ASCEND_RT_VISIBLE_DEVICES=\"0,,1\" is read only in part",
    );
}

/// Ids out of order (or repeated) select no device: `aclrtGetDeviceCount`
/// fails with `ACL_ERROR_RT_NO_DEVICE` (207004) and every id is invalid
/// (107001). (runtime.cc `GetVisibleDevices`: `RT_ALL_ORDER_ERROR`,
/// `RT_ALL_DUPLICATED_ERROR`, `userDeviceCnt` left 0; `api_impl.cc`
/// `ApiImpl::GetDeviceCount` answers `RT_ERROR_DRV_NO_DEVICE`.)
#[test]
fn visible_devices_out_of_order_select_none() {
    if !isolated(
        "visible_devices_out_of_order_select_none",
        &[("ASCEND_RT_VISIBLE_DEVICES", "3,1")],
    ) {
        return;
    }
    let mut n = 5u32;
    // SAFETY: `n` is a valid out-pointer.
    let rc = unsafe { aclrtGetDeviceCount(&mut n) };
    assert_contains(
        &assert_fails(rc, NO_DEVICE, "aclrtGetDeviceCount"),
        "ascending",
    );
    assert_fails(aclrtSetDevice(0), INVALID_DEVICEID, "aclrtSetDevice");
    // aclInit itself is not affected.
    assert_eq!(init(None), ACL_SUCCESS);
}

/// A repeated id is refused the same way (`RT_ALL_DUPLICATED_ERROR`, runtime.cc).
#[test]
fn visible_devices_repeated_select_none() {
    if !isolated(
        "visible_devices_repeated_select_none",
        &[("ASCEND_RT_VISIBLE_DEVICES", "0,2,2")],
    ) {
        return;
    }
    let mut n = 0u32;
    // SAFETY: `n` is a valid out-pointer.
    let rc = unsafe { aclrtGetDeviceCount(&mut n) };
    assert_contains(&assert_fails(rc, NO_DEVICE, "aclrtGetDeviceCount"), "twice");
}

// ---- copies and fills ------------------------------------------------------------

fn copy(dst: *mut u8, dest_max: usize, src: *const u8, count: usize, kind: u32) -> aclError {
    // SAFETY: every caller passes ranges valid for the copy (the simulator
    // checks allocations; host ranges are the callers' own buffers).
    unsafe { aclrtMemcpy(dst.cast(), dest_max, src.cast(), count, kind) }
}

/// A host-to-host `aclrtMemcpy` of overlapping ranges fails with 107000 and
/// leaves `destMax` bytes of the destination zeroed: the driver copies with
/// securec's `memcpy_s`, which refuses overlap and clears the destination
/// (`EOVERLAP_AND_RESET`). (hicann/runtime `src/runtime/driver/npu_driver_mem.cc`
/// `NpuDriver::MemCopySync` → drvMemcpy; issue 12.)
#[test]
fn overlapping_host_to_host_copy_fails_and_clears_the_destination() {
    use_device(0);
    let mut buf: Vec<u8> = (1..=32).collect();
    let p = buf.as_mut_ptr();
    let rc = copy(p.wrapping_add(4), 16, p, 16, ACL_MEMCPY_HOST_TO_HOST);
    assert_contains(&assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"), "overlap");
    assert_eq!(&buf[..4], &[1, 2, 3, 4]);
    assert_eq!(&buf[4..20], &[0; 16]);
    assert_eq!(buf[20], 21);
    // Pinned memory too; adjacent ranges do not overlap.
    let h = malloc_host(64);
    // SAFETY: 64 bytes were allocated.
    unsafe { std::ptr::write_bytes(h, 9, 64) };
    assert_eq!(
        copy(h.wrapping_add(8), 8, h, 8, ACL_MEMCPY_DEFAULT),
        ACL_SUCCESS
    );
    let rc = copy(h, 32, h.wrapping_add(8), 16, ACL_MEMCPY_HOST_TO_HOST);
    assert_fails(rc, PARAM_INVALID, "aclrtMemcpy");
    assert_eq!(to_host_bytes(h, 40), [vec![0; 32], vec![9; 8]].concat());
    free_host(h);
}

fn to_host_bytes(p: *const u8, n: usize) -> Vec<u8> {
    // SAFETY: callers pass live host memory of at least `n` bytes.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

/// Between device and pinned memory the runtime infers the direction from
/// the addresses and corrects a wrong kind (`MemcpyKindAutoCorrect` and
/// `MemcpyKindReviseMap`, hicann/runtime `src/runtime/api/impl/api_error.cc`):
/// the copy succeeds. The simulator's check mode reports the wrong kind as a
/// `copy-kind` finding (the call still succeeds in `report` mode). A kind a
/// pageable end does not allow is refused with 107000.
#[test]
fn a_wrong_kind_between_device_and_pinned_memory_is_corrected() {
    let reports = count_reports();
    use_device(0);
    let d = malloc(64);
    let d2 = malloc(64);
    let h = malloc_host(64);
    // SAFETY: 64 bytes were allocated.
    unsafe { std::ptr::write_bytes(h, 0x42, 64) };
    // Pinned → device with "device to host".
    assert_eq!(copy(d, 64, h, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    // Device → device with "host to device".
    assert_eq!(copy(d2, 64, d, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    assert_eq!(to_host(d2, 64), vec![0x42; 64]);
    let made = reports.made();
    match check::mode() {
        Mode::Off => assert_eq!(made, 0),
        _ => {
            assert_eq!(made, 2);
            let last = check::reports().recent.pop().unwrap();
            assert_eq!(last.kind, Kind::CopyKind);
            assert_contains(
                &last.message,
                "aclrtMemcpy: CANN_SIM_CHECK copy-kind: kind ACL_MEMCPY_HOST_TO_DEVICE does not \
                 match the pointers",
            );
            assert_contains(&last.message, "copies as ACL_MEMCPY_DEVICE_TO_DEVICE");
        }
    }
    // ACL_MEMCPY_DEFAULT is never a finding.
    assert_eq!(copy(h, 64, d2, 64, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    assert_eq!(reports.made(), made);
    // Device → pageable host with "host to host": not among the kinds that
    // pair allows (D2H, D2D).
    let mut plain = [0u8; 64];
    let rc = copy(plain.as_mut_ptr(), 64, d, 64, ACL_MEMCPY_HOST_TO_HOST);
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"),
        "expected one of ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE",
    );
    assert_eq!(
        copy(plain.as_mut_ptr(), 64, d, 64, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_SUCCESS
    );
    assert_eq!(plain, [0x42; 64]);
    // The runtime also accepts D2D there; the simulator refuses a kind that
    // names pageable memory as device memory (it cannot tell it from freed
    // device memory): a known difference, FIDELITY.md.
    let rc = copy(plain.as_mut_ptr(), 64, d, 64, ACL_MEMCPY_DEVICE_TO_DEVICE);
    assert_fails(rc, PARAM_INVALID, "aclrtMemcpy");
    free(d);
    free(d2);
    free_host(h);
}

/// `aclrtMemset` on pageable (plain malloc'd) host memory is a host memset
/// (hicann/runtime `src/runtime/driver/npu_driver_mem.cc`
/// `NpuDriver::MemSetSync` → drvMemsetD8; the header: "the system determines
/// from the address" whether the memory is on the host or the device).
#[test]
fn memset_fills_pageable_host_memory() {
    use_device(0);
    let mut plain = vec![0u8; 64];
    // SAFETY: 64 writable bytes.
    let rc = unsafe { aclrtMemset(plain.as_mut_ptr().cast(), 64, 0x1FF, 48) };
    assert_eq!(rc, ACL_SUCCESS);
    assert_eq!(&plain[..48], &[0xFF; 48]);
    assert_eq!(&plain[48..], &[0; 16]);
    // count > maxCount is still 107000.
    // SAFETY: as above.
    let rc = unsafe { aclrtMemset(plain.as_mut_ptr().cast(), 8, 0, 16) };
    assert_fails(rc, PARAM_INVALID, "aclrtMemset");
}

/// `aclGetRecentErrMsg`: the thread's errors accumulate (an equal one once)
/// until a read joins them, the first coded one as the header and the rest as
/// the traceback (`src/dfx/error_manager/error_manager.cc`,
/// `GetErrorMessage`); on a thread with a context a read starts afresh, on
/// one without, the previous text comes back behind any new one
/// (`src/acl/aclrt_impl/acl.cpp` `aclGetRecentErrMsgImpl`,
/// `src/runtime/api/impl/api_impl.cc` `ApiImpl::GetDevErrMsg`).
#[test]
fn recent_errors_are_joined_as_the_error_manager_does() {
    on_new_thread(|| {
        let pid = std::process::id();
        // No context on this thread.
        assert!(aclGetRecentErrMsg().is_null());
        let mut id = 0;
        for _ in 0..2 {
            // SAFETY: null is refused.
            let rc = unsafe { aclrtGetDeviceCount(std::ptr::null_mut()) };
            assert_eq!(rc, ACL_ERROR_INVALID_PARAM);
        }
        // SAFETY: `id` is a valid out-pointer.
        let rc = unsafe { aclrtGetDevice(&mut id) };
        assert_eq!(rc, CONTEXT_NULL);
        let text = recent_error_text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(&format!("[PID: {pid}] ")), "{text}");
        assert!(lines[0].contains("(EH0002): aclrtGetDeviceCount"), "{text}");
        assert_eq!(lines[1], "TraceBack (most recent call last):", "{text}");
        assert!(lines[2].starts_with("        aclrtGetDevice"), "{text}");
        assert_eq!(lines.len(), 3, "{text}");
        // Without a context the text is not reset: it comes back, and a new
        // one is put in front of it.
        assert_eq!(recent_error_text(), text);
        assert_eq!(aclrtSetDevice(-1), INVALID_DEVICEID);
        let joined = recent_error_text();
        assert!(joined.ends_with(&format!("\n{text}")), "{joined}");
        assert!(
            first_message(&joined).starts_with("aclrtSetDevice"),
            "{joined}"
        );
        // With a context a read starts afresh (device 0 is only ever set, never
        // reset, by the tests of this binary).
        use_device(0);
        assert!(aclGetRecentErrMsg().is_null());
        assert_eq!(
            // SAFETY: null is refused.
            unsafe { aclrtGetDeviceCount(std::ptr::null_mut()) },
            ACL_ERROR_INVALID_PARAM
        );
        let alone = recent_error_text();
        assert_eq!(alone.lines().count(), 1, "{alone}");
        assert!(aclGetRecentErrMsg().is_null());
    });
}

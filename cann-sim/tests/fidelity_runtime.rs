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
use cann_sim::acl::*;
use common::*;
use std::ffi::{CString, c_void};
use std::ptr::null_mut;

const NO_DEVICE: aclError = ACL_ERROR_RT_NO_DEVICE as aclError;
const INVALID_DEVICEID: aclError = ACL_ERROR_RT_INVALID_DEVICEID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;

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

/// A config file with `content`, in a fresh temporary directory.
fn config_file(name: &str, content: &str) -> CString {
    let dir = std::env::temp_dir().join(format!("cann-sim-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    CString::new(path.to_str().unwrap()).unwrap()
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
    let a = config_file("a.json", "{\"err_msg_mode\": \"0\"}");
    let same = config_file("same.json", "{\"err_msg_mode\": \"0\"}");
    let other = config_file("other.json", "{}");
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
    let bad = config_file("bad.json", "{\"dump\": ");
    assert_contains(
        &assert_fails(init(Some(&bad)), ACL_ERROR_PARSE_FILE, "aclInit"),
        "not valid JSON",
    );
    let deep = config_file(
        "deep.json",
        &format!("{}{}", "[".repeat(11), "]".repeat(11)),
    );
    assert_fails(init(Some(&deep)), ACL_ERROR_PARSE_FILE, "aclInit");
    let empty = config_file("empty.json", "");
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
    let cfg = config_file(
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
        let cfg = config_file(
            name,
            &format!("{{\"defaultDevice\": {{\"default_device\": {value}}}}}"),
        );
        assert_fails(init(Some(&cfg)), ACL_ERROR_FAILURE, "aclInit");
    }
    let far = config_file(
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

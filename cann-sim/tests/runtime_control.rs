//! The runtime-control exports at the C level: package versions, system
//! parameters, resources of the thread, utilisation, the fault queries,
//! value writes and waits, and their argument checks.
//!
//! Each test runs on a thread of its own (contexts and last errors are
//! per thread) and uses device 0, which it only sets.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_DEVICEID, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, ACL_OPT_DETERMINISTIC, ACL_OPT_STRONG_CONSISTENCY,
    ACL_PKG_NAME_CANN, ACL_PKG_NAME_DRIVER, ACL_PKG_NAME_HCCL, ACL_RT_DEV_RES_CUBE_CORE,
    ACL_RT_DEV_RES_VECTOR_CORE, ACL_RT_NO_ERROR, ACL_RT_THREAD_LEVEL, ACL_SUCCESS,
    aclCANNPackageVersion, aclError, aclrtErrorInfo, aclrtMemUceInfo, aclrtUtilizationInfo,
};
use cann_sim::acl::*;
use common::{
    assert_fails, create_stream, destroy_stream, is_complete, malloc, ok, on_new_thread, sync,
    use_device,
};
use std::ffi::{CStr, c_char};
use std::ptr::null_mut;

const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;
const NOT_SET: aclError = ACL_ERROR_RT_SYSPARAMOPT_NOT_SET as aclError;

fn c_text(buf: &[c_char]) -> String {
    // SAFETY: the runtime NUL-terminates what it writes.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Sets device 0 on this thread and allocates a 64-bit word of its memory,
/// zeroed (free it with `common::free`).
fn zeroed_word() -> *mut u8 {
    use_device(0);
    let word = malloc(8);
    // SAFETY: 8 bytes of device memory.
    ok(unsafe { aclrtMemset(word.cast(), 8, 0, 8) });
    word
}

/// The 64-bit word at device address `word`, copied to the host.
fn read_word(word: *mut u8) -> u64 {
    let mut host = 0u64;
    // SAFETY: valid host and device ranges of 8 bytes.
    ok(unsafe {
        aclrtMemcpy(
            (&raw mut host).cast(),
            8,
            word.cast(),
            8,
            acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    host
}

#[test]
fn cann_packages_report_the_presented_release_and_the_driver_is_absent() {
    on_new_thread(|| {
        let mut v = aclCANNPackageVersion::default();
        // SAFETY: a valid out-pointer.
        ok(unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &mut v) });
        let whole = c_text(&v.version);
        let parts: Vec<String> = [v.majorVersion, v.minorVersion, v.releaseVersion]
            .iter()
            .map(|p| c_text(p))
            .collect();
        assert!(whole.starts_with(&parts.join(".")), "{whole} {parts:?}");
        assert_eq!(whole, cann_sim::acl::cann_release());
        let mut h = aclCANNPackageVersion::default();
        // SAFETY: a valid out-pointer.
        ok(unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_HCCL, &mut h) });
        assert_eq!(c_text(&h.version), whole);
        // SAFETY: as above.
        let rc = unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &mut h) };
        assert_fails(rc, ACL_ERROR_INVALID_FILE, "aclsysGetCANNVersion");
        // SAFETY: as above.
        let rc = unsafe { aclsysGetCANNVersion(99, &mut h) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclsysGetCANNVersion");
        // SAFETY: null is refused.
        let rc = unsafe { aclsysGetCANNVersion(ACL_PKG_NAME_CANN, null_mut()) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclsysGetCANNVersion");

        let mut out = [0 as c_char; 128];
        // The `_` spelling finds the `-` package, as the runtime's retry does.
        let mut name = *b"bisheng_compiler\0";
        // SAFETY: a NUL-terminated name and a 128-byte buffer.
        ok(unsafe { aclsysGetVersionStr(name.as_mut_ptr().cast(), out.as_mut_ptr()) });
        assert_eq!(c_text(&out), whole);
        let mut name = *b"firmware\0";
        // SAFETY: as above.
        let rc = unsafe { aclsysGetVersionStr(name.as_mut_ptr().cast(), out.as_mut_ptr()) };
        assert_fails(rc, ACL_ERROR_INVALID_FILE, "aclsysGetVersionStr");
        // SAFETY: null is refused.
        let rc = unsafe { aclsysGetVersionStr(null_mut(), out.as_mut_ptr()) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr");
    });
}

#[test]
fn a_context_parameter_is_unset_until_set_and_checked_in_range() {
    on_new_thread(|| {
        let mut v = -1i64;
        // No context yet.
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &mut v) };
        assert_fails(rc, CONTEXT_NULL, "aclrtCtxGetSysParamOpt");
        use_device(0);
        // SAFETY: as above.
        let rc = unsafe { aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &mut v) };
        assert_fails(rc, NOT_SET, "aclrtCtxGetSysParamOpt");
        ok(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 2));
        // SAFETY: as above.
        ok(unsafe { aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &mut v) });
        assert_eq!(v, 2);
        // Determinism takes [0, 4), the switches [0, 2).
        let rc = aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 4);
        assert_fails(rc, PARAM_INVALID, "aclrtCtxSetSysParamOpt");
        let rc = aclrtCtxSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 2);
        assert_fails(rc, PARAM_INVALID, "aclrtCtxSetSysParamOpt");
        // Kernel early start (3) is a process option only.
        let rc = aclrtCtxSetSysParamOpt(3, 1);
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtCtxSetSysParamOpt");
        ok(aclrtSetSysParamOpt(3, 1));
        // SAFETY: as above.
        ok(unsafe { aclrtGetSysParamOpt(3, &mut v) });
        assert_eq!(v, 1);
        // SAFETY: null is refused.
        let rc = unsafe { aclrtGetSysParamOpt(0, null_mut()) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetSysParamOpt");
    });
}

#[test]
fn the_thread_may_use_every_core_of_its_device() {
    on_new_thread(|| {
        let mut n = 0u32;
        // SAFETY: a valid out-pointer.
        let rc = unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &mut n) };
        assert_fails(rc, CONTEXT_NULL, "aclrtGetResInCurrentThread");
        use_device(0);
        let soc = cann_sim::config::get().unwrap().soc();
        // SAFETY: as above.
        ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_CUBE_CORE, &mut n) });
        assert_eq!(i64::from(n), soc.cube_cores);
        // SAFETY: as above.
        ok(unsafe { aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &mut n) });
        assert_eq!(i64::from(n), soc.vector_cores);
        // SAFETY: as above.
        let rc = unsafe { aclrtGetResInCurrentThread(2, &mut n) };
        assert_fails(rc, PARAM_INVALID, "aclrtGetResInCurrentThread");
    });
}

#[test]
fn utilization_is_a_percentage_and_memory_is_not_supported() {
    let mut info = aclrtUtilizationInfo {
        cubeUtilization: 7,
        vectorUtilization: 7,
        aicpuUtilization: 7,
        memoryUtilization: 7,
        utilizationExtend: null_mut(),
    };
    // SAFETY: a valid struct.
    ok(unsafe { aclrtGetDeviceUtilizationRate(0, &mut info) });
    assert!((0..=100).contains(&info.cubeUtilization), "{info:?}");
    assert_eq!(info.memoryUtilization, -1);
    // An invalid device: every figure "not supported", and still success
    // (`GetAllUtilizations`).
    // SAFETY: as above.
    ok(unsafe { aclrtGetDeviceUtilizationRate(99, &mut info) });
    assert_eq!(info.cubeUtilization, -1);
    info.utilizationExtend = std::ptr::NonNull::dangling().as_ptr();
    // SAFETY: the reserved field is refused before it is read.
    let rc = unsafe { aclrtGetDeviceUtilizationRate(0, &mut info) };
    assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceUtilizationRate");
}

#[test]
fn a_simulated_device_has_no_fault_to_report() {
    on_new_thread(|| {
        // SAFETY: zeroed plain data.
        let mut info: aclrtErrorInfo = unsafe { std::mem::zeroed() };
        info.errorType = 5;
        // SAFETY: a valid struct.
        ok(unsafe { aclrtGetErrorVerbose(0, &mut info) });
        assert_eq!(info.errorType, ACL_RT_NO_ERROR);
        // SAFETY: as above.
        let rc = unsafe { aclrtGetErrorVerbose(99, &mut info) };
        assert_fails(
            rc,
            ACL_ERROR_RT_INVALID_DEVICEID as aclError,
            "aclrtGetErrorVerbose",
        );
        let mut arr = [aclrtMemUceInfo::default(); 4];
        let mut n = 9usize;
        // SAFETY: valid pointers.
        let rc = unsafe { aclrtGetMemUceInfo(0, arr.as_mut_ptr(), 4, &mut n) };
        assert_fails(rc, CONTEXT_NULL, "aclrtGetMemUceInfo");
        use_device(0);
        // SAFETY: as above.
        ok(unsafe { aclrtGetMemUceInfo(0, arr.as_mut_ptr(), 4, &mut n) });
        assert_eq!(n, 0);
    });
}

#[test]
fn a_runtime_failure_is_the_last_error_and_an_acl_check_is_not() {
    on_new_thread(|| {
        assert_eq!(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
        // 107000: a runtime check.
        let rc = aclrtSynchronizeDeviceWithTimeout(0);
        assert_fails(rc, PARAM_INVALID, "aclrtSynchronizeDeviceWithTimeout");
        // 100000: the ACL layer's own check leaves it.
        // SAFETY: null is refused.
        let rc = unsafe { aclrtGetDeviceSatMode(null_mut()) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceSatMode");
        assert_eq!(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL), PARAM_INVALID);
        assert_eq!(aclrtGetLastError(ACL_RT_THREAD_LEVEL), PARAM_INVALID);
        assert_eq!(aclrtGetLastError(ACL_RT_THREAD_LEVEL), ACL_SUCCESS);
        let rc = aclrtGetLastError(1);
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtGetLastError");
    });
}

#[test]
fn a_value_wait_holds_its_stream_until_another_stream_writes_the_value() {
    on_new_thread(|| {
        let word = zeroed_word();
        let (waiter, writer) = (create_stream(), create_stream());
        // SAFETY: 8 bytes of device memory, live for the test.
        ok(unsafe { aclrtValueWait(word.cast(), 3, 0, waiter) });
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!is_complete(waiter), "the wait ended before the value");
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(word.cast(), 2, 0, writer) });
        ok(sync(writer));
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!is_complete(waiter), "2 >= 3 held");
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(word.cast(), 3, 0, writer) });
        ok(sync(waiter));
        assert_eq!(read_word(word), 3);
        // Misuse: a bad flag, host memory, a null address.
        // SAFETY: refused before use.
        let rc = unsafe { aclrtValueWrite(word.cast(), 1, 1, writer) };
        assert_fails(rc, PARAM_INVALID, "aclrtValueWrite");
        // SAFETY: as above.
        let rc = unsafe { aclrtValueWait(word.cast(), 1, 4, writer) };
        assert_fails(rc, PARAM_INVALID, "aclrtValueWait");
        let mut on_host = 0u64;
        // SAFETY: as above.
        let rc = unsafe { aclrtValueWait((&raw mut on_host).cast(), 1, 0, writer) };
        assert_fails(rc, PARAM_INVALID, "aclrtValueWait");
        // SAFETY: as above.
        let rc = unsafe { aclrtValueWrite(null_mut(), 1, 0, writer) };
        assert_fails(rc, ACL_ERROR_INVALID_PARAM, "aclrtValueWrite");
        destroy_stream(waiter);
        destroy_stream(writer);
        common::free(word);
    });
}

#[test]
fn a_stream_abort_ends_a_value_wait_that_would_never_end() {
    on_new_thread(|| {
        let word = zeroed_word();
        let s = create_stream();
        // SAFETY: as above.
        ok(unsafe { aclrtValueWait(word.cast(), 1, 1, s) });
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(word.cast(), 5, 0, s) });
        std::thread::sleep(std::time::Duration::from_millis(20));
        // SAFETY: a live stream.
        ok(unsafe { aclrtStreamAbort(s) });
        ok(sync(s));
        assert_eq!(
            read_word(word),
            0,
            "the write queued behind the wait was dropped"
        );
        // The stream takes work again.
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(word.cast(), 5, 0, s) });
        ok(sync(s));
        destroy_stream(s);
        common::free(word);
    });
}

#[test]
fn a_device_synchronisation_with_a_timeout_gives_up_on_a_blocked_stream() {
    on_new_thread(|| {
        let word = zeroed_word();
        let s = create_stream();
        // SAFETY: as above.
        ok(unsafe { aclrtValueWait(word.cast(), 1, 1, s) });
        let rc = aclrtSynchronizeDeviceWithTimeout(50);
        assert_fails(
            rc,
            ACL_ERROR_RT_STREAM_SYNC_TIMEOUT as aclError,
            "aclrtSynchronizeDeviceWithTimeout",
        );
        let rc = aclrtSynchronizeDeviceWithTimeout(-2);
        assert_fails(rc, PARAM_INVALID, "aclrtSynchronizeDeviceWithTimeout");
        // SAFETY: as above.
        ok(unsafe { aclrtValueWrite(word.cast(), 1, 0, null_mut()) });
        ok(aclrtSynchronizeDeviceWithTimeout(5000));
        destroy_stream(s);
        common::free(word);
    });
}

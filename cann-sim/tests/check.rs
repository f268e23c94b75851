//! The check mode (`CANN_SIM_CHECK=report`): every detector with a
//! deliberately wrong program through the C ABI (exact code, and a message
//! naming both calls, both streams and the ranges), and correct programs
//! that make no report.
//!
//! The mode is fixed once per process, so this test binary (its own
//! process) fixes it with `cann_sim::check::set_mode(Mode::Report)` before
//! any simulator call; the tests run one at a time (they count reports).
//! `tests/check_env.rs` covers the environment variable and `abort`.
//!
//! Tests only set device 0 and never reset it.

mod common;

use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_RUNTIME_ERROR, ACLNN_SUCCESS, aclOpExecutor, aclTensor,
};
use acl_sys::{
    ACL_ERROR_RT_MEMORY_FREE, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_NOT_COMPLETE,
    ACL_FLOAT, ACL_FORMAT_ND, ACL_HBM_MEM, ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEMCPY_DEFAULT,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
    aclrtPhysicalMemProp,
};
use cann_sim::acl::*;
use cann_sim::aclnn::*;
use cann_sim::check::{self, Kind, Mode};
use common::*;
use std::ffi::{CString, c_void};
use std::ptr::null_mut;
use std::sync::{Mutex, MutexGuard};

const MEMORY_FREE: i32 = rc(ACL_ERROR_RT_MEMORY_FREE);
const NOT_COMPLETE: i32 = rc(ACL_ERROR_RT_STREAM_NOT_COMPLETE);
const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);

/// The tests count reports: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Report mode, device 0, no report yet.
fn setup() -> MutexGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    check::set_mode(Mode::Report).expect("nothing fixed another mode before");
    use_device(0);
    check::clear_reports();
    g
}

/// Asserts that exactly `n` reports were made and that the last is of
/// `kind` with the message `msg` (as the call recorded it).
#[track_caller]
fn assert_reported(n: u64, kind: Kind, msg: &str) {
    let r = check::reports();
    assert_eq!(r.count, n, "{r:#?}");
    let last = r.recent.last().expect("a report");
    assert_eq!(last.kind, kind);
    assert_eq!(last.message, msg);
    assert_contains(msg, &format!("CANN_SIM_CHECK {}", kind.name()));
}

#[track_caller]
fn assert_no_report() {
    let r = check::reports();
    assert_eq!(r.count, 0, "{r:#?}");
}

/// How messages start a range.
fn range_start(p: *const u8) -> String {
    format!("[{:#x}, ", p as usize)
}

fn pinned(len: usize, fill: u8) -> *mut u8 {
    let p = malloc_host(len);
    // SAFETY: `len` writable pinned bytes.
    unsafe { std::ptr::write_bytes(p, fill, len) };
    p
}

fn upload(p: *mut u8, data: &[u8]) {
    // SAFETY: `data.len()` host bytes; the device end is checked.
    ok(unsafe {
        aclrtMemcpy(
            p.cast(),
            data.len(),
            data.as_ptr().cast(),
            data.len(),
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

#[test]
fn free_of_device_memory_a_pending_copy_reads_is_refused_with_memory_free() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(256);
    let h = pinned(256, 0);
    upload(d, &[7; 256]);
    let release = block_stream(s);
    ok(memcpy_async(h, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s));
    // SAFETY: a live allocation; the check refuses to free it.
    let msg = assert_fails(unsafe { aclrtFree(d.cast()) }, MEMORY_FREE, "aclrtFree");
    assert_reported(1, Kind::FreeWhilePending, &msg);
    assert_contains(&msg, "aclrtMemcpyAsync task #2");
    assert_contains(&msg, &stream_name(s));
    assert_contains(&msg, "device 0");
    assert_contains(&msg, &format!("reads {}", range_start(d)));
    assert_contains(&msg, "The memory was not freed");
    release.send(()).unwrap();
    // The memory was kept: the copy ran and read it.
    ok(sync(s));
    // SAFETY: `h` holds 256 bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(h, 256) }, [7; 256]);
    free(d);
    free_host(h);
    destroy_stream(s);
    assert_eq!(check::reports().count, 1);
}

#[test]
fn free_host_of_pinned_memory_a_pending_copy_writes_is_refused() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(64);
    let h = pinned(64, 0);
    let release = block_stream(s);
    ok(memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
    // SAFETY: a live pinned allocation; the check refuses to free it.
    let msg = assert_fails(
        unsafe { aclrtFreeHost(h.cast()) },
        MEMORY_FREE,
        "aclrtFreeHost",
    );
    assert_reported(1, Kind::FreeWhilePending, &msg);
    assert_contains(&msg, "aclrtMemcpyAsync task #2");
    assert_contains(&msg, &format!("writes {}", range_start(h)));
    assert_contains(&msg, "pinned host memory");
    release.send(()).unwrap();
    ok(sync(s));
    free_host(h);
    free(d);
    destroy_stream(s);
}

#[test]
fn unmap_of_a_mapping_a_pending_fill_writes_is_refused() {
    let _g = setup();
    let g = cann_sim::vmm::GRANULARITY;
    let s = create_stream();
    let mut va = null_mut();
    // SAFETY: plain data; all-zero is a valid value.
    let mut prop: aclrtPhysicalMemProp = unsafe { std::mem::zeroed() };
    prop.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
    let mut ph = null_mut();
    // SAFETY: valid out-pointers and properties.
    unsafe {
        ok(aclrtReserveMemAddress(&mut va, g, 0, null_mut(), 0));
        ok(aclrtMallocPhysical(&mut ph, g, &prop, 0));
        ok(aclrtMapMem(va, g, 0, ph, 0));
    }
    let release = block_stream(s);
    ok(memset_async(va.cast(), 4096, 1, s));
    // SAFETY: a live mapping; the check refuses to unmap it.
    let msg = assert_fails(unsafe { aclrtUnmapMem(va) }, MEMORY_FREE, "aclrtUnmapMem");
    assert_reported(1, Kind::FreeWhilePending, &msg);
    assert_contains(&msg, "aclrtMemsetAsync task #2");
    assert_contains(&msg, &format!("writes {}", range_start(va.cast())));
    release.send(()).unwrap();
    ok(sync(s));
    // SAFETY: the mapping, the physical memory and the reservation above.
    unsafe {
        ok(aclrtUnmapMem(va));
        ok(aclrtFreePhysical(ph));
        ok(aclrtReleaseMemAddress(va));
    }
    destroy_stream(s);
}

#[test]
fn synchronous_copy_into_memory_a_pending_copy_reads_is_a_host_race() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(128);
    let h = pinned(128, 0);
    upload(d, &[3; 128]);
    let release = block_stream(s);
    ok(memcpy_async(h, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s));
    let src = [9u8; 64];
    // SAFETY: 64 host bytes; the device end is checked.
    let rc = unsafe {
        aclrtMemcpy(
            d.add(32).cast(),
            64,
            src.as_ptr().cast(),
            64,
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    };
    let msg = assert_fails(rc, NOT_COMPLETE, "aclrtMemcpy");
    assert_reported(1, Kind::HostRace, &msg);
    assert_contains(&msg, &format!("writes {}", range_start(d.wrapping_add(32))));
    assert_contains(&msg, "aclrtMemcpyAsync task #2");
    assert_contains(&msg, &stream_name(s));
    assert_contains(&msg, &format!("reads {}", range_start(d)));
    // Reading what the pending copy only reads is no race.
    let mut out = [0u8; 16];
    // SAFETY: 16 host bytes; the device end is checked.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            16,
            d.cast(),
            16,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    assert_eq!(out, [3; 16]);
    release.send(()).unwrap();
    ok(sync(s));
    // Nothing was copied by the refused call.
    // SAFETY: `h` holds 128 bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(h, 128) }, [3; 128]);
    assert_eq!(check::reports().count, 1);
    free(d);
    free_host(h);
    destroy_stream(s);
}

#[test]
fn synchronous_fills_of_memory_a_pending_fill_writes_are_host_races() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(256);
    let release = block_stream(s);
    ok(memset_async(d, 256, 1, s));
    // SAFETY: the range is checked.
    let msg = assert_fails(
        unsafe { aclrtMemset(d.add(128).cast(), 16, 2, 16) },
        NOT_COMPLETE,
        "aclrtMemset",
    );
    assert_reported(1, Kind::HostRace, &msg);
    assert_contains(&msg, "aclrtMemsetAsync task #2");
    // SAFETY: the range is checked.
    let msg = assert_fails(
        unsafe { aclrtMemsetD32(d.cast(), 256, 5, 4) },
        NOT_COMPLETE,
        "aclrtMemsetD32",
    );
    assert_reported(2, Kind::HostRace, &msg);
    release.send(()).unwrap();
    ok(sync(s));
    assert_eq!(to_host(d, 256), vec![1; 256]);
    free(d);
    destroy_stream(s);
}

#[test]
fn pageable_memcpy_async_racing_a_pending_write_of_another_stream_is_a_host_race() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let d = malloc(64);
    let release = block_stream(s1);
    ok(memset_async(d, 64, 4, s1));
    let mut out = vec![0u8; 64];
    // Pageable memory: s2 is synchronised, then the copy happens at once,
    // while s1 may still be writing.
    let rc = memcpy_async(out.as_mut_ptr(), d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s2);
    let msg = assert_fails(rc, NOT_COMPLETE, "aclrtMemcpyAsync");
    assert_reported(1, Kind::HostRace, &msg);
    assert_contains(&msg, "aclrtMemsetAsync task #2");
    assert_contains(&msg, &stream_name(s1));
    release.send(()).unwrap();
    ok(sync(s1));
    destroy_stream(s1);
    destroy_stream(s2);
    free(d);
}

#[test]
fn copy_on_a_second_stream_racing_an_unordered_pending_write_is_refused() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let d = malloc(128);
    let h = pinned(128, 0xEE);
    let release = block_stream(s1);
    ok(memset_async(d, 128, 6, s1));
    let rc = memcpy_async(h, d.wrapping_add(64), 64, ACL_MEMCPY_DEVICE_TO_HOST, s2);
    let msg = assert_fails(rc, NOT_COMPLETE, "aclrtMemcpyAsync");
    assert_reported(1, Kind::StreamRace, &msg);
    assert_contains(&msg, "the new aclrtMemcpyAsync task #1");
    assert_contains(&msg, &stream_name(s2));
    assert_contains(&msg, &format!("reads {}", range_start(d.wrapping_add(64))));
    assert_contains(&msg, "aclrtMemsetAsync task #2");
    assert_contains(&msg, &stream_name(s1));
    assert_contains(&msg, &format!("writes {}", range_start(d)));
    assert_contains(&msg, "The task was not queued");
    // Not queued: s2 has nothing to do.
    assert!(is_complete(s2));
    // Memory the pending fill does not touch is free to use.
    let other = malloc(64);
    ok(memcpy_async(h, other, 64, ACL_MEMCPY_DEVICE_TO_HOST, s2));
    release.send(()).unwrap();
    ok(sync(s1));
    ok(sync(s2));
    assert_eq!(check::reports().count, 1);
    free(other);
    free(d);
    free_host(h);
    destroy_stream(s1);
    destroy_stream(s2);
}

#[test]
fn event_ordering_between_streams_makes_the_same_program_clean() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let d = malloc(128);
    let h = pinned(128, 0);
    let e = create_event();
    let release = block_stream(s1);
    ok(memset_async(d, 128, 6, s1));
    record(e, s1);
    // SAFETY: live handles.
    ok(unsafe { aclrtStreamWaitEvent(s2, e) });
    ok(memcpy_async(h, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s2));
    // A second hop: s1 waits for s2 before writing again.
    let e2 = create_event();
    record(e2, s2);
    // SAFETY: live handles.
    ok(unsafe { aclrtStreamWaitEvent(s1, e2) });
    ok(memset_async(d, 128, 8, s1));
    release.send(()).unwrap();
    ok(sync(s1));
    ok(sync(s2));
    // SAFETY: `h` holds 128 bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(h, 128) }, [6; 128]);
    assert_eq!(to_host(d, 128), vec![8; 128]);
    free(d);
    free_host(h);
    destroy_event(e);
    destroy_event(e2);
    destroy_stream(s1);
    destroy_stream(s2);
    assert_no_report();
}

#[test]
fn host_synchronisation_before_free_and_before_another_stream_uses_memory_is_clean() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let d = malloc(64);
    let h = pinned(64, 0);
    let release = block_stream(s1);
    ok(memset_async(d, 64, 2, s1));
    release.send(()).unwrap();
    ok(sync(s1));
    ok(memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s2));
    // An event synchronised on the host completes the tasks before it too.
    let e = create_event();
    record(e, s2);
    // SAFETY: a live event.
    ok(unsafe { aclrtSynchronizeEvent(e) });
    ok(memset_async(d, 64, 3, s1));
    ok(aclrtSynchronizeDevice());
    free(d);
    free_host(h);
    destroy_event(e);
    destroy_stream(s1);
    destroy_stream(s2);
    assert_no_report();
}

#[test]
fn a_synchronous_copy_inside_a_host_function_comes_before_the_streams_later_tasks() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(64);
    let h = pinned(64, 0);
    let release = block_stream(s);
    let (tx, rx) = std::sync::mpsc::channel();
    let dev = d as usize;
    ok(host_fn(s, move || {
        use_device(0);
        let src = [4u8; 64];
        // SAFETY: 64 host bytes; the device end is checked.
        let rc = unsafe {
            aclrtMemcpy(
                dev as *mut c_void,
                64,
                src.as_ptr().cast(),
                64,
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        tx.send(rc).unwrap();
    }));
    // Queued after the host function: it waits for it to return.
    ok(memcpy_async(h, d, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
    release.send(()).unwrap();
    assert_eq!(rx.recv().unwrap(), 0);
    ok(sync(s));
    // SAFETY: `h` holds 64 bytes.
    assert_eq!(unsafe { std::slice::from_raw_parts(h, 64) }, [4; 64]);
    free(d);
    free_host(h);
    destroy_stream(s);
    assert_no_report();
}

#[test]
fn concurrent_reads_on_two_streams_and_disjoint_writes_are_no_race() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let d = malloc(256);
    upload(d, &[5; 256]);
    let (h1, h2) = (pinned(256, 0), pinned(256, 0));
    let release = block_stream(s1);
    ok(memcpy_async(h1, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s1));
    ok(memcpy_async(h2, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s2));
    // Different bytes of one allocation written by two streams.
    let w = malloc(256);
    ok(memset_async(w, 128, 1, s1));
    ok(memset_async(w.wrapping_add(128), 128, 2, s2));
    release.send(()).unwrap();
    ok(aclrtSynchronizeDevice());
    // SAFETY: both hold 256 bytes.
    unsafe {
        assert_eq!(std::slice::from_raw_parts(h1, 256), [5; 256]);
        assert_eq!(std::slice::from_raw_parts(h2, 256), [5; 256]);
    }
    free(d);
    free(w);
    free_host(h1);
    free_host(h2);
    destroy_stream(s1);
    destroy_stream(s2);
    assert_no_report();
}

#[test]
fn use_after_free_of_device_memory_names_the_freeing_call() {
    let _g = setup();
    let s = create_stream();
    let d = malloc(96);
    free(d);
    // Quarantined: a new allocation does not get the freed address.
    let fresh = malloc(96);
    assert_ne!(fresh, d);
    let msg = assert_fails(memset_async(d, 96, 0, s), PARAM_INVALID, "aclrtMemsetAsync");
    assert_reported(1, Kind::UseAfterFree, &msg);
    assert_contains(&msg, &range_start(d));
    assert_contains(&msg, "freed by aclrtFree (free #");
    assert_contains(&msg, "aclrtMemsetAsync would use freed memory");
    // A synchronous copy from freed memory with ACL_MEMCPY_DEFAULT (which
    // would otherwise take it for pageable host memory).
    let mut out = [0u8; 8];
    // SAFETY: 8 host bytes; the other end is checked.
    let rc = unsafe { aclrtMemcpy(out.as_mut_ptr().cast(), 8, d.cast(), 8, ACL_MEMCPY_DEFAULT) };
    let msg = assert_fails(rc, PARAM_INVALID, "aclrtMemcpy");
    assert_reported(2, Kind::UseAfterFree, &msg);
    // Freeing it again.
    // SAFETY: the check refuses the second free.
    let msg = assert_fails(unsafe { aclrtFree(d.cast()) }, PARAM_INVALID, "aclrtFree");
    assert_reported(3, Kind::UseAfterFree, &msg);
    assert_contains(&msg, "again (a double free)");
    ok(sync(s));
    free(fresh);
    destroy_stream(s);
}

#[test]
fn use_after_free_in_an_operator_launch_names_the_freeing_call() {
    let _g = setup();
    let s = create_stream();
    let a = malloc(16);
    let o = malloc(16);
    let t = tensor(&[4], a);
    let to = tensor(&[4], o);
    free(a);
    let (mut ws, mut ex): (u64, *mut aclOpExecutor) = (0, null_mut());
    // SAFETY: live handles and out-pointers.
    unsafe {
        assert_eq!(
            aclnnReluGetWorkspaceSize(t, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(
            aclnnRelu(null_mut(), 0, ex, s.cast()),
            ACLNN_ERR_RUNTIME_ERROR
        );
    }
    let msg = recent_error();
    assert!(
        msg.starts_with("aclnnRelu: input 0: CANN_SIM_CHECK use-after-free"),
        "{msg}"
    );
    assert_reported(1, Kind::UseAfterFree, &msg);
    assert_contains(&msg, "freed by aclrtFree");
    // SAFETY: live handles.
    unsafe {
        assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(to), ACLNN_SUCCESS);
    }
    free(o);
    destroy_stream(s);
}

#[test]
fn quarantine_is_bounded_and_freed_memory_counts_as_free() {
    let _g = setup();
    let hbm_free = || {
        let (mut f, mut t) = (0, 0);
        // SAFETY: valid out-pointers.
        ok(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut f, &mut t) });
        f
    };
    let before = hbm_free();
    let d = malloc(1000);
    assert!(hbm_free() < before);
    free(d);
    assert_eq!(hbm_free(), before);
    // 64 MiB more of device 0 quarantined after it releases it: using its
    // address is then no longer reported as use after free.
    for _ in 0..2 {
        free(malloc(40 << 20));
    }
    let s = create_stream();
    let msg = assert_fails(memset_async(d, 8, 0, s), PARAM_INVALID, "aclrtMemsetAsync");
    assert!(!msg.contains("CANN_SIM_CHECK"), "{msg}");
    assert_no_report();
    destroy_stream(s);
}

fn tensor(dims: &[i64], data: *mut u8) -> *mut aclTensor {
    let n: i64 = dims.iter().product();
    // SAFETY: arrays valid for their lengths (null strides: contiguous).
    let t = unsafe {
        aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            ACL_FLOAT,
            std::ptr::null(),
            0,
            ACL_FORMAT_ND,
            [n].as_ptr(),
            1,
            data.cast(),
        )
    };
    assert!(!t.is_null(), "{}", recent_error());
    t
}

#[test]
fn aclnn_double_destroys_name_the_first_destroying_call() {
    let _g = setup();
    let d = malloc(16);
    let (t1, t2, t3) = (tensor(&[4], d), tensor(&[4], d), tensor(&[4], d));
    // SAFETY: handles are looked up, never dereferenced.
    unsafe {
        assert_eq!(aclDestroyTensor(t1), ACLNN_SUCCESS);
        let got = aclDestroyTensor(t1);
        assert_eq!(got, ACLNN_ERR_PARAM_INVALID);
        let msg = recent_error();
        assert!(
            msg.starts_with("aclDestroyTensor: CANN_SIM_CHECK double-destroy"),
            "{msg}"
        );
        assert_reported(1, Kind::DoubleDestroy, &msg);
        assert_contains(&msg, &format!("tensor {:#x}", t1 as usize));
        assert_contains(&msg, "already destroyed, by aclDestroyTensor");

        // A list owns its tensors: destroying one of them afterwards.
        let list = aclCreateTensorList([t2.cast_const()].as_ptr(), 1);
        assert_eq!(aclDestroyTensorList(list), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(t2), ACLNN_ERR_PARAM_INVALID);
        let msg = recent_error();
        assert_reported(2, Kind::DoubleDestroy, &msg);
        assert_contains(&msg, "already destroyed, by aclDestroyTensorList");

        // A list whose member was destroyed before it.
        let list = aclCreateTensorList([t3.cast_const()].as_ptr(), 1);
        assert_eq!(aclDestroyTensor(t3), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensorList(list), ACLNN_ERR_PARAM_INVALID);
        let msg = recent_error();
        assert!(
            msg.starts_with("aclDestroyTensorList: CANN_SIM_CHECK double-destroy"),
            "{msg}"
        );
        assert_reported(3, Kind::DoubleDestroy, &msg);
        assert_contains(&msg, "member 0 of list");
        // The list itself is gone.
        assert_eq!(aclDestroyTensorList(list), ACLNN_ERR_PARAM_INVALID);
        assert_reported(4, Kind::DoubleDestroy, &recent_error());

        // Scalars, arrays and executors too.
        let mut one = 1.0f32;
        let sc = aclCreateScalar((&raw mut one).cast(), ACL_FLOAT);
        assert_eq!(aclDestroyScalar(sc), ACLNN_SUCCESS);
        assert_eq!(aclDestroyScalar(sc), ACLNN_ERR_PARAM_INVALID);
        assert_reported(5, Kind::DoubleDestroy, &recent_error());
        let arr = aclCreateIntArray([1i64, 2].as_ptr(), 2);
        assert_eq!(aclDestroyIntArray(arr), ACLNN_SUCCESS);
        assert_eq!(aclDestroyIntArray(arr), ACLNN_ERR_PARAM_INVALID);
        assert_reported(6, Kind::DoubleDestroy, &recent_error());
    }
    free(d);
}

#[test]
fn executor_destroyed_after_its_operator_ran_is_a_double_destroy() {
    let _g = setup();
    let s = create_stream();
    let (a, o) = (malloc(16), malloc(16));
    let (t, to) = (tensor(&[4], a), tensor(&[4], o));
    let (mut ws, mut ex): (u64, *mut aclOpExecutor) = (0, null_mut());
    // SAFETY: live handles and out-pointers.
    unsafe {
        assert_eq!(
            aclnnReluGetWorkspaceSize(t, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(aclnnRelu(null_mut(), 0, ex, s.cast()), ACLNN_SUCCESS);
        assert_eq!(aclDestroyAclOpExecutor(ex), ACLNN_ERR_PARAM_INVALID);
    }
    let msg = recent_error();
    assert_reported(1, Kind::DoubleDestroy, &msg);
    assert_contains(&msg, "already destroyed, by aclnnRelu");
    ok(sync(s));
    // SAFETY: live handles.
    unsafe {
        assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(to), ACLNN_SUCCESS);
    }
    free(a);
    free(o);
    destroy_stream(s);
}

#[test]
fn aclnn_operator_racing_a_pending_copy_of_another_stream_is_refused() {
    let _g = setup();
    let (s1, s2) = (create_stream(), create_stream());
    let (a, o) = (malloc(16), malloc(16));
    let (t, to) = (tensor(&[4], a), tensor(&[4], o));
    let release = block_stream(s1);
    ok(memset_async(a, 16, 0, s1));
    let (mut ws, mut ex): (u64, *mut aclOpExecutor) = (0, null_mut());
    // SAFETY: live handles and out-pointers.
    unsafe {
        assert_eq!(
            aclnnReluGetWorkspaceSize(t, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(
            aclnnRelu(null_mut(), 0, ex, s2.cast()),
            ACLNN_ERR_RUNTIME_ERROR
        );
    }
    let msg = recent_error();
    assert!(
        msg.starts_with("aclnnRelu: CANN_SIM_CHECK stream-race"),
        "{msg}"
    );
    assert_reported(1, Kind::StreamRace, &msg);
    assert_contains(&msg, "the new aclnnRelu task #1");
    assert_contains(&msg, &stream_name(s2));
    assert_contains(&msg, &format!("reads {}", range_start(a)));
    assert_contains(&msg, "input)");
    assert_contains(&msg, "aclrtMemsetAsync task #2");
    assert_contains(&msg, &stream_name(s1));
    // And the other way round: a copy into the output of a pending operator.
    release.send(()).unwrap();
    ok(sync(s1));
    let release = block_stream(s1);
    // SAFETY: live handles and out-pointers.
    unsafe {
        assert_eq!(
            aclnnReluGetWorkspaceSize(t, to, &mut ws, &mut ex),
            ACLNN_SUCCESS
        );
        assert_eq!(aclnnRelu(null_mut(), 0, ex, s1.cast()), ACLNN_SUCCESS);
    }
    let msg = assert_fails(
        memcpy_async(o, a, 16, ACL_MEMCPY_DEVICE_TO_DEVICE, s2),
        NOT_COMPLETE,
        "aclrtMemcpyAsync",
    );
    assert_reported(2, Kind::StreamRace, &msg);
    assert_contains(&msg, "aclnnRelu task #");
    assert_contains(&msg, "output)");
    release.send(()).unwrap();
    ok(aclrtSynchronizeDevice());
    // SAFETY: live handles.
    unsafe {
        assert_eq!(aclDestroyTensor(t), ACLNN_SUCCESS);
        assert_eq!(aclDestroyTensor(to), ACLNN_SUCCESS);
    }
    free(a);
    free(o);
    destroy_stream(s1);
    destroy_stream(s2);
}

#[test]
fn kernel_arguments_are_checked_for_frees_but_not_for_races() {
    let _g = setup();
    let path = cann_sim::sample_kernels().expect("the sample kernels were built");
    let path = CString::new(path.to_str().unwrap()).unwrap();
    let (mut bin, mut f) = (null_mut(), null_mut());
    // SAFETY: valid path, name and out-pointers.
    unsafe {
        ok(aclrtBinaryLoadFromFile(path.as_ptr(), null_mut(), &mut bin));
        ok(aclrtBinaryGetFunction(bin, c"vadd_f32".as_ptr(), &mut f));
    }
    let (s1, s2) = (create_stream(), create_stream());
    let (x, y, z) = (malloc(16), malloc(16), malloc(16));
    upload(x, &[0; 16]);
    upload(y, &[0; 16]);
    let release = block_stream(s1);
    // Zero elements: the kernel touches no byte, so the unordered memset of
    // z below races only in what the check mode could claim, not in the
    // host memory the simulator writes (ThreadSanitizer reported the
    // kernel's and the memset's writes to z when the kernel added 4).
    let args: [u64; 4] = [x as u64, y as u64, z as u64, 0];
    // SAFETY: 32 bytes of arguments; the kernel's pointers are live.
    ok(unsafe {
        aclrtLaunchKernel(
            f,
            1,
            args.as_ptr().cast::<c_void>(),
            std::mem::size_of_val(&args),
            s1,
        )
    });
    // SAFETY: a live allocation; the check refuses to free it.
    let msg = assert_fails(unsafe { aclrtFree(y.cast()) }, MEMORY_FREE, "aclrtFree");
    assert_reported(1, Kind::FreeWhilePending, &msg);
    assert_contains(&msg, "aclrtLaunchKernel task #2");
    assert_contains(&msg, "uses");
    assert_contains(&msg, "kernel argument");
    // Which bytes a kernel touches is unknown: no race is claimed.
    ok(memset_async(z, 16, 0, s2));
    release.send(()).unwrap();
    ok(aclrtSynchronizeDevice());
    assert_eq!(check::reports().count, 1);
    for p in [x, y, z] {
        free(p);
    }
    // SAFETY: the binary loaded above.
    ok(unsafe { aclrtBinaryUnLoad(bin) });
    destroy_stream(s1);
    destroy_stream(s2);
}

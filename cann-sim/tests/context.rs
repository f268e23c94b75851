//! Contexts on the simulator: creation, destruction, the thread's current
//! context, the default stream, and how `aclrtSetDevice`/`aclrtResetDevice`
//! manage the primary context.
//!
//! Device references are process-wide: 6 and 7 each belong to one test
//! that resets them; the others only set 0 to 3.

mod common;

use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_INVALID_HANDLE, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_MEMCPY_DEVICE_TO_HOST, aclrtContext, aclrtStream,
};
use cann_sim::acl::*;
use common::*;
use std::ptr::null_mut;

const CONTEXT_NULL: i32 = rc(ACL_ERROR_RT_CONTEXT_NULL);
const PARAM_INVALID: i32 = rc(ACL_ERROR_RT_PARAM_INVALID);
const INVALID_HANDLE: i32 = rc(ACL_ERROR_RT_INVALID_HANDLE);

fn create_context(device: i32) -> aclrtContext {
    let mut c = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCreateContext(&mut c, device) });
    assert!(!c.is_null());
    c
}

fn default_stream() -> aclrtStream {
    let mut s = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { aclrtCtxGetCurrentDefaultStream(&mut s) });
    s
}

#[test]
fn create_context_makes_it_current_and_its_device_the_threads_device() {
    on_new_thread(|| {
        let ctx = create_context(2);
        assert_eq!(current_context(), Ok(ctx));
        assert_eq!(current_device(), Ok(2));
        // Memory goes to the context's device.
        let p = malloc(64);
        assert_eq!(to_host(p, 4).len(), 4);
        free(p);
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(ctx) });
        assert_eq!(current_context(), Err(CONTEXT_NULL));
        assert_eq!(current_device(), Err(CONTEXT_NULL));
    });
}

#[test]
fn create_context_null_out_or_bad_device_fails() {
    // SAFETY: null is allowed and rejected.
    let rc0 = unsafe { aclrtCreateContext(null_mut(), 0) };
    assert_fails(rc0, ACL_ERROR_INVALID_PARAM, "aclrtCreateContext");
    let mut c = null_mut();
    for bad in [-1, 8, i32::MAX] {
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCreateContext(&mut c, bad) };
        assert_fails(r, rc(ACL_ERROR_RT_INVALID_DEVICEID), "aclrtCreateContext");
    }
    assert!(c.is_null(), "untouched on failure");
}

#[test]
fn set_current_context_switches_the_device_and_works_from_another_thread() {
    on_new_thread(|| {
        let a = create_context(1);
        let b = create_context(3);
        assert_eq!(current_device(), Ok(3));
        // SAFETY: live context.
        ok(unsafe { aclrtSetCurrentContext(a) });
        assert_eq!((current_context(), current_device()), (Ok(a), Ok(1)));
        // A context made on one thread can be used on another.
        let addr = a as usize;
        let dev = on_new_thread(move || {
            // SAFETY: live context.
            ok(unsafe { aclrtSetCurrentContext(addr as aclrtContext) });
            current_device()
        });
        assert_eq!(dev, Ok(1));
        // SAFETY: live contexts.
        unsafe {
            ok(aclrtDestroyContext(a));
            ok(aclrtDestroyContext(b));
        }
    });
}

#[test]
fn set_current_context_null_is_invalid_param_and_destroyed_is_param_invalid() {
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtSetCurrentContext(null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext");
    on_new_thread(|| {
        let c = create_context(0);
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(c) });
        // SAFETY: the handle is validated.
        let r = unsafe { aclrtSetCurrentContext(c) };
        let msg = assert_fails(r, PARAM_INVALID, "aclrtSetCurrentContext");
        assert_contains(&msg, "destroyed");
        let mut junk = 0u64;
        // SAFETY: not a context: validated by lookup, never dereferenced.
        let r = unsafe { aclrtSetCurrentContext((&raw mut junk).cast()) };
        assert_fails(r, PARAM_INVALID, "aclrtSetCurrentContext");
    });
}

#[test]
fn get_current_context_null_or_none_fails() {
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtGetCurrentContext(null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext");
    on_new_thread(|| {
        let mut c = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtGetCurrentContext(&mut c) };
        let msg = assert_fails(r, CONTEXT_NULL, "aclrtGetCurrentContext");
        assert_contains(&msg, "aclrtSetDevice");
    });
}

#[test]
fn destroy_context_null_twice_or_primary_is_context_null() {
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtDestroyContext(null_mut()) };
    assert_fails(r, ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext");
    on_new_thread(|| {
        let c = create_context(0);
        // SAFETY: live, then destroyed (validated).
        unsafe {
            ok(aclrtDestroyContext(c));
            let msg = assert_fails(aclrtDestroyContext(c), CONTEXT_NULL, "aclrtDestroyContext");
            assert_contains(&msg, "has been destroyed");
        }
        use_device(0);
        let primary = current_context().unwrap();
        // SAFETY: validated.
        let msg = assert_fails(
            unsafe { aclrtDestroyContext(primary) },
            CONTEXT_NULL,
            "aclrtDestroyContext",
        );
        assert_contains(&msg, "primary context");
    });
}

#[test]
fn set_device_uses_one_primary_context_per_device_for_all_threads() {
    let (a, b) = (
        on_new_thread(|| {
            use_device(1);
            current_context().unwrap() as usize
        }),
        on_new_thread(|| {
            use_device(1);
            current_context().unwrap() as usize
        }),
    );
    assert_eq!(a, b);
    let other = on_new_thread(|| {
        use_device(2);
        current_context().unwrap() as usize
    });
    assert_ne!(a, other);
}

#[test]
fn default_stream_is_the_null_stream_of_the_current_context() {
    on_new_thread(|| {
        let c = create_context(2);
        let s = default_stream();
        assert!(!s.is_null());
        let mut id_null = -1;
        let mut id_handle = -2;
        // SAFETY: valid out-pointers; handles validated.
        unsafe {
            ok(aclrtStreamGetId(null_mut(), &mut id_null));
            ok(aclrtStreamGetId(s, &mut id_handle));
        }
        assert_eq!(id_null, id_handle);
        // Work on the null stream is ordered with work on the handle.
        let d = malloc(16);
        let host = malloc_host(16);
        ok(memset_async(d, 16, 5, null_mut()));
        ok(memcpy_async(host, d, 16, ACL_MEMCPY_DEVICE_TO_HOST, s));
        ok(sync(null_mut()));
        // SAFETY: 16 readable pinned bytes.
        assert_eq!(unsafe { std::slice::from_raw_parts(host, 16) }, &[5u8; 16]);
        free(d);
        free_host(host);
        // The default stream cannot be destroyed; it dies with its context.
        // SAFETY: validated.
        let r = unsafe { aclrtDestroyStream(s) };
        let msg = assert_fails(r, PARAM_INVALID, "aclrtDestroyStream");
        assert_contains(&msg, "default stream");
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(c) });
        // SAFETY: validated.
        let r = unsafe { aclrtSynchronizeStream(s) };
        assert_fails(r, INVALID_HANDLE, "aclrtSynchronizeStream");
    });
}

#[test]
fn ctx_get_current_default_stream_null_or_no_context_fails() {
    // SAFETY: null is allowed and rejected.
    let r = unsafe { aclrtCtxGetCurrentDefaultStream(null_mut()) };
    assert_fails(
        r,
        ACL_ERROR_INVALID_PARAM,
        "aclrtCtxGetCurrentDefaultStream",
    );
    on_new_thread(|| {
        let mut s = null_mut();
        // SAFETY: valid out-pointer.
        let r = unsafe { aclrtCtxGetCurrentDefaultStream(&mut s) };
        assert_fails(r, CONTEXT_NULL, "aclrtCtxGetCurrentDefaultStream");
    });
}

#[test]
fn stream_of_another_context_is_stream_context_for_queued_work() {
    on_new_thread(|| {
        let a = create_context(1);
        let s = create_stream();
        let d = malloc(64);
        let _b = create_context(1);
        let msg = assert_fails(
            memset_async(d, 64, 1, s),
            rc(ACL_ERROR_RT_STREAM_CONTEXT),
            "aclrtMemsetAsync",
        );
        assert_contains(&msg, "not to the current context");
        // SAFETY: validated.
        let r = unsafe { aclrtDestroyStream(s) };
        assert_fails(r, rc(ACL_ERROR_RT_STREAM_CONTEXT), "aclrtDestroyStream");
        // Synchronisation switches to the stream's context instead.
        ok(sync(s));
        // SAFETY: live context.
        ok(unsafe { aclrtSetCurrentContext(a) });
        destroy_stream(s);
        free(d);
    });
}

#[test]
fn destroy_context_finishes_queued_work_and_destroys_its_streams() {
    on_new_thread(|| {
        let c = create_context(3);
        let s = create_stream();
        let d = malloc(1 << 16);
        let host = malloc_host(1 << 16);
        let release = block_stream(s);
        ok(memset_async(d, 1 << 16, 9, s));
        ok(memcpy_async(host, d, 1 << 16, ACL_MEMCPY_DEVICE_TO_HOST, s));
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            release.send(()).unwrap();
        });
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(c) });
        t.join().unwrap();
        assert!(
            // SAFETY: 64 KiB of pinned memory.
            unsafe { std::slice::from_raw_parts(host, 1 << 16) }
                .iter()
                .all(|&b| b == 9)
        );
        // SAFETY: validated.
        let r = unsafe { aclrtSynchronizeStream(s) };
        assert_fails(r, INVALID_HANDLE, "aclrtSynchronizeStream");
        use_device(3);
        free(d);
        free_host(host);
    });
}

#[test]
fn last_reset_device_waits_for_the_primary_contexts_work_then_destroys_its_streams() {
    // Device 7 belongs to this test.
    on_new_thread(|| {
        use_device(7);
        let s = create_stream();
        let d = malloc(256);
        let host = malloc_host(256);
        let release = block_stream(s);
        ok(memset_async(d, 256, 3, s));
        ok(memcpy_async(host, d, 256, ACL_MEMCPY_DEVICE_TO_HOST, s));
        let before = cann_sim::stats().device(7);
        assert_eq!((before.contexts, before.streams), (1, 2));
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            release.send(()).unwrap();
        });
        ok(aclrtResetDevice(7));
        t.join().unwrap();
        assert!(
            // SAFETY: 256 pinned bytes.
            unsafe { std::slice::from_raw_parts(host, 256) }
                .iter()
                .all(|&b| b == 3)
        );
        let after = cann_sim::stats().device(7);
        assert_eq!(
            (after.contexts, after.streams, after.stream_workers),
            (0, 0, 0)
        );
        assert_eq!(current_context(), Err(CONTEXT_NULL));
        // SAFETY: validated.
        let r = unsafe { aclrtSynchronizeStream(s) };
        assert_fails(r, INVALID_HANDLE, "aclrtSynchronizeStream");
        // Memory survives a reset.
        use_device(7);
        free(d);
        free_host(host);
        ok(aclrtResetDevice(7));
    });
}

#[test]
fn explicit_contexts_survive_the_reset_of_their_device() {
    // Device 6 belongs to this test.
    on_new_thread(|| {
        let c = create_context(6);
        use_device(6);
        ok(aclrtResetDevice(6));
        // SAFETY: live context.
        ok(unsafe { aclrtSetCurrentContext(c) });
        assert_eq!(current_device(), Ok(6));
        let s = create_stream();
        ok(sync(s));
        destroy_stream(s);
        // SAFETY: live context.
        ok(unsafe { aclrtDestroyContext(c) });
    });
}

//! Virtual memory management on the simulator: reserved ranges, physical
//! memory, mappings used like device memory (growing an "expandable
//! segment" while work is queued on it), HBM accounting, and unmapping under
//! queued work (a fault of that work with the check mode off, a refused
//! unmap with it on).
//!
//! Tests only set device 0 and never reset it.

mod common;

use acl_sys::{
    ACL_ERROR_RT_SYS_DMA, ACL_HBM_MEM, ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS, aclrtDrvMemHandle,
    aclrtPhysicalMemProp, aclrtStream,
};
use cann_sim::acl::*;
use cann_sim::check::{Kind, Mode};
use cann_sim::vmm::GRANULARITY as G;
use common::*;
use std::ffi::c_void;
use std::ptr::null_mut;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn reserve(size: usize) -> *mut c_void {
    let mut va = null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { aclrtReserveMemAddress(&mut va, size, 0, null_mut(), 0) });
    va
}

fn physical(size: usize) -> aclrtDrvMemHandle {
    // SAFETY: plain data; all-zero is a valid value.
    let mut prop: aclrtPhysicalMemProp = unsafe { std::mem::zeroed() };
    prop.location.type_ = ACL_MEM_LOCATION_TYPE_DEVICE;
    let mut h = null_mut();
    // SAFETY: valid pointers.
    ok(unsafe { aclrtMallocPhysical(&mut h, size, &prop, 0) });
    h
}

fn hbm_free() -> usize {
    let (mut free, mut total) = (0, 0);
    // SAFETY: valid out-pointers.
    ok(unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut free, &mut total) });
    free
}

fn put(dst: *mut c_void, data: &[u8]) {
    // SAFETY: `data.len()` bytes of host memory; `dst` is checked by the simulator.
    ok(unsafe {
        aclrtMemcpy(
            dst,
            data.len(),
            data.as_ptr().cast(),
            data.len(),
            ACL_MEMCPY_HOST_TO_DEVICE,
        )
    });
}

fn get(src: *const c_void, len: usize) -> Vec<u8> {
    let mut out = vec![0u8; len];
    // SAFETY: as in `put`.
    ok(unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            len,
            src,
            len,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    });
    out
}

#[test]
fn an_expandable_segment_grows_behind_its_end_and_copies_cross_the_seam() {
    let _s = serial();
    use_device(0);
    let free0 = hbm_free();
    let va = reserve(8 * G);
    assert_eq!(hbm_free(), free0, "reserving addresses takes no HBM");
    let a = physical(2 * G);
    assert_eq!(
        hbm_free(),
        free0 - 2 * G,
        "physical memory is charged to HBM"
    );
    // SAFETY: addresses and handles are looked up.
    ok(unsafe { aclrtMapMem(va, 2 * G, 0, a, 0) });
    put(va, &vec![1u8; 2 * G]);
    // Grow: a second piece right behind the first, while a copy that
    // reads the first is queued.
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { aclrtCreateStream(&mut s) });
    let staging = malloc(2 * G);
    // SAFETY: device ranges checked by the simulator.
    ok(unsafe {
        aclrtMemcpyAsync(
            staging.cast(),
            2 * G,
            va,
            2 * G,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            s,
        )
    });
    let b = physical(2 * G);
    let second = va.cast::<u8>().wrapping_add(2 * G).cast::<c_void>();
    // SAFETY: looked up.
    ok(unsafe { aclrtMapMem(second, 2 * G, 0, b, 0) });
    // SAFETY: a live stream.
    ok(unsafe { aclrtSynchronizeStream(s) });
    assert_eq!(get(staging.cast(), 16), vec![1u8; 16]);
    // One copy across the seam of the two pieces.
    let seam = va.cast::<u8>().wrapping_add(2 * G - 8).cast::<c_void>();
    put(seam, &[9u8; 16]);
    assert_eq!(get(seam, 16), vec![9u8; 16]);
    assert_eq!(
        get(second, 8),
        vec![9u8; 8],
        "the second piece holds the tail"
    );
    // Unmapping the second piece ends the segment at the seam again.
    // SAFETY: looked up.
    ok(unsafe { aclrtUnmapMem(second) });
    let mut out = [0u8; 16];
    // SAFETY: host buffer of 16 bytes; the device range is checked.
    let rc = unsafe {
        aclrtMemcpy(
            out.as_mut_ptr().cast(),
            16,
            seam,
            16,
            ACL_MEMCPY_DEVICE_TO_HOST,
        )
    };
    assert_ne!(rc, ACL_SUCCESS, "a copy past the mapped end must fail");
    free(staging);
    // SAFETY: live handles, unmapped in order.
    unsafe {
        ok(aclrtDestroyStream(s));
        ok(aclrtUnmapMem(va));
        ok(aclrtFreePhysical(a));
        ok(aclrtFreePhysical(b));
        ok(aclrtReleaseMemAddress(va));
    }
    assert_eq!(hbm_free(), free0, "freeing gives the HBM back");
    assert_eq!(cann_sim::vmm::live(), (0, 0));
}

/// Unmapping virtual memory a queued copy reads: with the check off (in a
/// child process), the released runtime's fault of the copy at the next
/// synchronisation; with it on, the unmap is refused and the copy runs.
#[test]
fn unmapping_under_queued_work_is_a_fault_of_that_work() {
    let mode =
        check_mode_with_off_in_a_child("unmapping_under_queued_work_is_a_fault_of_that_work");
    let _s = serial();
    let reports = count_reports();
    use_device(0);
    let va = reserve(2 * G);
    let h = physical(2 * G);
    // SAFETY: looked up.
    ok(unsafe { aclrtMapMem(va, 2 * G, 0, h, 0) });
    put(va, &[0x3C; 4096]);
    let mut s: aclrtStream = null_mut();
    // SAFETY: a valid out-pointer.
    ok(unsafe { aclrtCreateStream(&mut s) });
    // Hold the stream until the unmap is done.
    let release = block_stream(s);
    let staging = malloc(4096);
    // SAFETY: ranges checked by the simulator.
    ok(unsafe {
        aclrtMemcpyAsync(
            staging.cast(),
            4096,
            va,
            4096,
            ACL_MEMCPY_DEVICE_TO_DEVICE,
            s,
        )
    });
    // SAFETY: looked up; the queued copy has not run (the stream waits).
    let unmapped = unsafe { aclrtUnmapMem(va) };
    if mode == Mode::Off {
        ok(unmapped);
        release.send(()).unwrap();
        // SAFETY: a live stream.
        let got = unsafe { aclrtSynchronizeStream(s) };
        assert_eq!(got, rc(ACL_ERROR_RT_SYS_DMA), "{}", recent_error());
        assert_contains(&recent_error(), "freed before the task ran");
    } else {
        let msg = assert_free_refused(
            unmapped,
            "aclrtUnmapMem",
            va.cast(),
            "aclrtMemcpyAsync task #2",
            s,
            &format!(
                "reads {} of device memory on device 0, src)",
                byte_range(va.cast(), 4096)
            ),
        );
        reports.assert_made(1, Kind::FreeWhilePending, &msg);
        release.send(()).unwrap();
        // SAFETY: a live stream.
        ok(unsafe { aclrtSynchronizeStream(s) });
        assert_eq!(get(staging.cast(), 4096), vec![0x3C; 4096], "the copy ran");
        // SAFETY: looked up; nothing uses the mapping any more.
        ok(unsafe { aclrtUnmapMem(va) });
    }
    free(staging);
    // SAFETY: live handles.
    unsafe {
        ok(aclrtDestroyStream(s));
        ok(aclrtFreePhysical(h));
        ok(aclrtReleaseMemAddress(va));
    }
    assert_eq!(cann_sim::vmm::live(), (0, 0));
    assert_eq!(reports.made(), u64::from(mode != Mode::Off));
}

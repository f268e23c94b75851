//! Memory on the simulator: allocation, the allocation table's pointer
//! checks, copies, fills and memory info, each success and error code.
//!
//! Tests run in parallel in one process and share the allocation table, so
//! none assumes absolute free-memory figures, except on device 3, which only
//! `hbm_accounting_*` uses. No test resets a device. They assume the default
//! configuration (8 devices of 64 GiB).

mod common;

use acl_sys::{
    ACL_DDR_MEM, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_INVALID_MEMORY_TYPE, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_RT_PARAM_INVALID,
    ACL_HBM_MEM, ACL_HBM_MEM_HUGE, ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEM_MALLOC_HUGE1G_ONLY,
    ACL_MEM_P2P_HUGE1G, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE, ACL_SUCCESS, aclError,
    aclrtMemAttr, aclrtMemcpyKind,
};
use cann_sim::acl::*;
use cann_sim::check::{Kind, Mode};
use common::{assert_contains, assert_fails, on_new_thread};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const CONTEXT_NULL: aclError = ACL_ERROR_RT_CONTEXT_NULL as aclError;
const MEMORY_ALLOCATION: aclError = ACL_ERROR_RT_MEMORY_ALLOCATION as aclError;
const INVALID_MEMORY_TYPE: aclError = ACL_ERROR_RT_INVALID_MEMORY_TYPE as aclError;
const INVALID_PARAM: aclError = ACL_ERROR_INVALID_PARAM;
const MIB: usize = 1 << 20;

/// Sets `device` on this thread.
fn use_device(device: i32) {
    assert_eq!(aclrtSetDevice(device), ACL_SUCCESS);
}

fn malloc(size: usize) -> *mut u8 {
    let mut p = null_mut();
    assert_eq!(
        // SAFETY: `p` is a valid out-pointer.
        unsafe { aclrtMalloc(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) },
        ACL_SUCCESS
    );
    assert!(!p.is_null());
    p.cast()
}

fn malloc_host(size: usize) -> *mut u8 {
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    assert_eq!(unsafe { aclrtMallocHost(&mut p, size) }, ACL_SUCCESS);
    p.cast()
}

fn free(p: *mut u8) {
    // SAFETY: `p` is a live allocation of the caller's.
    assert_eq!(unsafe { aclrtFree(p.cast()) }, ACL_SUCCESS);
}

fn free_host(p: *mut u8) {
    // SAFETY: `p` is a live pinned allocation of the caller's.
    assert_eq!(unsafe { aclrtFreeHost(p.cast()) }, ACL_SUCCESS);
}

/// `aclrtMemcpy` with `destMax == count`.
fn memcpy(dst: *mut u8, src: *const u8, count: usize, kind: aclrtMemcpyKind) -> aclError {
    // SAFETY: host ends are valid for `count` bytes in every call of these
    // tests; device ends are checked by the simulator.
    unsafe { aclrtMemcpy(dst.cast(), count, src.cast(), count, kind) }
}

fn to_host(src: *const u8, count: usize) -> Vec<u8> {
    let mut out = vec![0u8; count];
    assert_eq!(
        memcpy(out.as_mut_ptr(), src, count, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_SUCCESS
    );
    out
}

fn mem_info(attr: aclrtMemAttr) -> (usize, usize) {
    let (mut free, mut total) = (0, 0);
    assert_eq!(
        // SAFETY: valid out-pointers.
        unsafe { aclrtGetMemInfo(attr, &mut free, &mut total) },
        ACL_SUCCESS
    );
    (free, total)
}

// ---------------------------------------------------------------- malloc

#[test]
fn malloc_without_current_device_is_context_null() {
    on_new_thread(|| {
        let mut p = null_mut();
        type Malloc = unsafe extern "C" fn(
            *mut *mut c_void,
            usize,
            acl_sys::aclrtMemMallocPolicy,
        ) -> aclError;
        let variants: [(Malloc, &str); 3] = [
            (aclrtMalloc, "aclrtMalloc"),
            (aclrtMallocAlign32, "aclrtMallocAlign32"),
            (aclrtMallocCached, "aclrtMallocCached"),
        ];
        for (f, name) in variants {
            // SAFETY: `p` is a valid out-pointer.
            let rc = unsafe { f(&mut p, 64, ACL_MEM_MALLOC_HUGE_FIRST) };
            let msg = assert_fails(rc, CONTEXT_NULL, name);
            assert_contains(&msg, "aclrtSetDevice");
        }
    });
}

#[test]
fn malloc_null_out_pointer_or_zero_size_is_invalid_param() {
    use_device(0);
    type Malloc =
        unsafe extern "C" fn(*mut *mut c_void, usize, acl_sys::aclrtMemMallocPolicy) -> aclError;
    let variants: [(Malloc, &str); 3] = [
        (aclrtMalloc, "aclrtMalloc"),
        (aclrtMallocAlign32, "aclrtMallocAlign32"),
        (aclrtMallocCached, "aclrtMallocCached"),
    ];
    for (f, name) in variants {
        // SAFETY: null is allowed and rejected.
        let rc = unsafe { f(null_mut(), 64, ACL_MEM_MALLOC_HUGE_FIRST) };
        assert_fails(rc, INVALID_PARAM, name);
        let mut p = null_mut();
        // SAFETY: `p` is a valid out-pointer.
        let rc = unsafe { f(&mut p, 0, ACL_MEM_MALLOC_HUGE_FIRST) };
        assert_contains(&assert_fails(rc, INVALID_PARAM, name), "size");
    }
}

#[test]
fn malloc_size_that_overflows_when_rounded_is_invalid_param() {
    use_device(0);
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    let rc = unsafe { aclrtMalloc(&mut p, usize::MAX - 40, ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_contains(&assert_fails(rc, INVALID_PARAM, "aclrtMalloc"), "overflows");
}

#[test]
fn malloc_beyond_free_hbm_is_memory_allocation() {
    use_device(0);
    let (_, total) = mem_info(ACL_HBM_MEM);
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    let rc = unsafe { aclrtMalloc(&mut p, total + 1, ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_contains(
        &assert_fails(rc, MEMORY_ALLOCATION, "aclrtMalloc"),
        "out of memory",
    );
    assert!(p.is_null());
}

#[test]
fn malloc_returns_512_byte_aligned_uninitialised_memory() {
    use_device(0);
    for size in [1, 100, 4096, 12345] {
        let p = malloc(size);
        assert_eq!(p as usize % 512, 0);
        // Not zeroed: the simulator poisons new memory.
        assert!(to_host(p, size).iter().all(|&b| b == 0xA5));
        free(p);
    }
}

/// The driver aligns every device and pinned host allocation to 512 bytes
/// (the runtime asks `halMemAlloc` for `MEM_SET_ALIGN_SIZE(9)`), whatever
/// the variant and size: small blocks, odd sizes, and blocks past the
/// simulator's 2 MiB mapping threshold.
#[test]
fn every_allocation_variant_returns_512_byte_aligned_addresses() {
    use_device(0);
    type Malloc =
        unsafe extern "C" fn(*mut *mut c_void, usize, acl_sys::aclrtMemMallocPolicy) -> aclError;
    let variants: [(&str, Malloc); 3] = [
        ("aclrtMalloc", aclrtMalloc),
        ("aclrtMallocAlign32", aclrtMallocAlign32),
        ("aclrtMallocCached", aclrtMallocCached),
    ];
    for size in [1, 33, 513, 100_000, 3 * MIB + 1] {
        // Several live at once, so that none is merely the first of a page.
        let mut live = Vec::new();
        for (name, f) in variants {
            for _ in 0..3 {
                let mut p = null_mut();
                // SAFETY: `p` is a valid out-pointer.
                let rc = unsafe { f(&mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) };
                assert_eq!(rc, ACL_SUCCESS, "{name} of {size} bytes");
                assert_eq!(p as usize % 512, 0, "{name} of {size} bytes gave {p:p}");
                live.push(p.cast::<u8>());
            }
        }
        let host: Vec<*mut u8> = (0..3).map(|_| malloc_host(size)).collect();
        for &h in &host {
            assert_eq!(
                h as usize % 512,
                0,
                "aclrtMallocHost of {size} bytes gave {h:p}"
            );
        }
        live.into_iter().for_each(free);
        host.into_iter().for_each(free_host);
    }
}

#[test]
fn hbm_accounting_charges_the_rounded_size_per_policy_and_variant() {
    // Device 3 belongs to this test.
    use_device(3);
    let (free0, total) = mem_info(ACL_HBM_MEM);
    assert_eq!(total as u64, cann_sim::config::get().unwrap().hbm_bytes);
    let mut ptrs = Vec::new();
    let mut expect = free0;
    type Malloc =
        unsafe extern "C" fn(*mut *mut c_void, usize, acl_sys::aclrtMemMallocPolicy) -> aclError;
    let cases: [(Malloc, u32, usize, usize); 6] = [
        // (size + 32 + 31) / 32 * 32
        (aclrtMalloc, ACL_MEM_MALLOC_HUGE_FIRST, 100, 160),
        (aclrtMalloc, ACL_MEM_MALLOC_HUGE_FIRST, 32, 64),
        // 1G huge pages: no padding.
        (aclrtMalloc, ACL_MEM_MALLOC_HUGE1G_ONLY, 100, 128),
        // An unknown policy falls back to the default one.
        (aclrtMalloc, 0xdead, 100, 160),
        (aclrtMallocAlign32, ACL_MEM_MALLOC_HUGE_FIRST, 100, 128),
        (aclrtMallocCached, ACL_MEM_MALLOC_HUGE_FIRST, 100, 160),
    ];
    for (f, policy, size, charged) in cases {
        let mut p = null_mut();
        // SAFETY: `p` is a valid out-pointer.
        assert_eq!(unsafe { f(&mut p, size, policy) }, ACL_SUCCESS);
        expect -= charged;
        assert_eq!(mem_info(ACL_HBM_MEM).0, expect, "size {size}");
        ptrs.push(p.cast::<u8>());
    }
    for p in ptrs {
        free(p);
    }
    assert_eq!(mem_info(ACL_HBM_MEM), (free0, total));
}

// ------------------------------------------------------------------ free

#[test]
fn free_null_is_invalid_param() {
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtFree(null_mut()) };
    assert_fails(rc, INVALID_PARAM, "aclrtFree");
}

/// A second free is 107000 in either check mode: the runtime's "already
/// freed" with the check off (in a child process), the check's
/// `use-after-free` report naming the first free with it on.
#[test]
fn free_twice_is_param_invalid() {
    let mode = common::check_mode_with_off_in_a_child("free_twice_is_param_invalid");
    let reports = common::count_reports();
    use_device(0);
    let p = malloc(64);
    free(p);
    // SAFETY: the simulator checks the pointer.
    let rc = unsafe { aclrtFree(p.cast()) };
    let msg = assert_fails(rc, PARAM_INVALID, "aclrtFree");
    if mode == Mode::Off {
        assert_contains(&msg, "already freed");
    } else {
        reports.assert_made(1, Kind::UseAfterFree, &msg);
        assert_contains(
            &msg,
            &format!(
                "aclrtFree: CANN_SIM_CHECK use-after-free: aclrtFree({p:p}) frees the device \
                 allocation {p:p} of 64 bytes on device 0, freed by aclrtFree (free #"
            ),
        );
        assert_contains(&msg, "again (a double free)");
    }
}

#[test]
fn free_interior_pointer_is_param_invalid() {
    use_device(0);
    let p = malloc(64);
    // SAFETY: the simulator checks the pointer.
    let rc = unsafe { aclrtFree(p.wrapping_add(16).cast()) };
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtFree"),
        "16 bytes into",
    );
    free(p);
}

#[test]
fn free_host_pointers_is_param_invalid() {
    use_device(0);
    let pinned = malloc_host(64);
    // SAFETY: the simulator checks the pointer.
    let rc = unsafe { aclrtFree(pinned.cast()) };
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtFree"),
        "aclrtFreeHost",
    );
    free_host(pinned);
    let mut plain = vec![0u8; 64];
    // SAFETY: the simulator checks the pointer (and does not free it).
    let rc = unsafe { aclrtFree(plain.as_mut_ptr().cast()) };
    assert_fails(rc, PARAM_INVALID, "aclrtFree");
}

#[test]
fn free_needs_no_current_device() {
    use_device(0);
    let p = malloc(64) as usize;
    on_new_thread(move || free(p as *mut u8));
}

// ------------------------------------------------------------ host memory

#[test]
fn malloc_host_null_or_zero_size_is_invalid_param() {
    use_device(0);
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtMallocHost(null_mut(), 64) };
    assert_fails(rc, INVALID_PARAM, "aclrtMallocHost");
    let mut p = null_mut();
    // SAFETY: `p` is a valid out-pointer.
    let rc = unsafe { aclrtMallocHost(&mut p, 0) };
    assert_fails(rc, INVALID_PARAM, "aclrtMallocHost");
}

#[test]
fn malloc_host_without_current_device_is_context_null() {
    on_new_thread(|| {
        let mut p = null_mut();
        // SAFETY: `p` is a valid out-pointer.
        let rc = unsafe { aclrtMallocHost(&mut p, 64) };
        assert_fails(rc, CONTEXT_NULL, "aclrtMallocHost");
    });
}

#[test]
fn malloc_host_gives_aligned_host_memory_that_is_not_device_memory() {
    use_device(0);
    let h = malloc_host(100);
    assert_eq!(h as usize % 64, 0);
    // It is host memory: writable directly, a valid source of H2D copies
    // and an invalid one for D2H.
    // SAFETY: 100 bytes were allocated.
    unsafe { std::ptr::write_bytes(h, 7, 100) };
    let d = malloc(100);
    assert_eq!(memcpy(d, h, 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    assert_eq!(to_host(d, 100), vec![7; 100]);
    let mut out = [0u8; 100];
    let rc = memcpy(out.as_mut_ptr(), h, 100, ACL_MEMCPY_DEVICE_TO_HOST);
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"),
        "pinned host memory",
    );
    free(d);
    free_host(h);
}

/// Null, device memory and freed pinned memory are refused by
/// `aclrtFreeHost`; freed memory in either check mode (the runtime's
/// "already freed" with the check off, in a child process; the check's
/// `use-after-free` report with it on).
#[test]
fn free_host_of_null_device_or_freed_memory_fails() {
    let mode =
        common::check_mode_with_off_in_a_child("free_host_of_null_device_or_freed_memory_fails");
    let reports = common::count_reports();
    use_device(0);
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtFreeHost(null_mut()) };
    assert_fails(rc, INVALID_PARAM, "aclrtFreeHost");
    let d = malloc(64);
    // SAFETY: the simulator checks the pointer.
    let rc = unsafe { aclrtFreeHost(d.cast()) };
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtFreeHost"),
        "free it with aclrtFree",
    );
    free(d);
    let h = malloc_host(64);
    free_host(h);
    // SAFETY: the simulator checks the pointer.
    let rc = unsafe { aclrtFreeHost(h.cast()) };
    let msg = assert_fails(rc, PARAM_INVALID, "aclrtFreeHost");
    if mode == Mode::Off {
        assert_contains(&msg, "already freed");
    } else {
        reports.assert_made(1, Kind::UseAfterFree, &msg);
        assert_contains(
            &msg,
            &format!(
                "aclrtFreeHost: CANN_SIM_CHECK use-after-free: aclrtFreeHost({h:p}) frees the \
                 pinned host allocation {h:p} of 64 bytes, freed by aclrtFreeHost (free #"
            ),
        );
        assert_contains(&msg, "again (a double free)");
    }
}

// ---------------------------------------------------------------- memcpy

#[test]
fn memcpy_round_trip_memset_and_device_to_device() {
    use_device(0);
    let data: Vec<u8> = (0..MIB).map(|i| (i * 31 % 251) as u8).collect();
    let a = malloc(MIB);
    let b = malloc(MIB);
    assert_eq!(
        memcpy(a, data.as_ptr(), MIB, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_SUCCESS
    );
    assert!(to_host(a, MIB) == data);
    // Device to device.
    assert_eq!(memcpy(b, a, MIB, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    assert!(to_host(b, MIB) == data);
    // Memset, then read back.
    // SAFETY: the simulator checks the range.
    let rc = unsafe { aclrtMemset(a.cast(), MIB, 0x5A, MIB) };
    assert_eq!(rc, ACL_SUCCESS);
    assert!(to_host(a, MIB).iter().all(|&x| x == 0x5A));
    free(a);
    free(b);
}

#[test]
fn memcpy_count_zero_succeeds_even_with_null_pointers_and_no_device() {
    on_new_thread(|| {
        // SAFETY: nothing is copied.
        let rc = unsafe { aclrtMemcpy(null_mut(), 0, null(), 0, 99) };
        assert_eq!(rc, ACL_SUCCESS);
    });
}

#[test]
fn memcpy_null_pointer_is_invalid_param() {
    use_device(0);
    let mut buf = [0u8; 8];
    let rc = memcpy(null_mut(), buf.as_ptr(), 8, ACL_MEMCPY_HOST_TO_HOST);
    assert_contains(&assert_fails(rc, INVALID_PARAM, "aclrtMemcpy"), "dst");
    let rc = memcpy(buf.as_mut_ptr(), null(), 8, ACL_MEMCPY_HOST_TO_HOST);
    assert_contains(&assert_fails(rc, INVALID_PARAM, "aclrtMemcpy"), "src");
}

#[test]
fn memcpy_kind_outside_0_to_5_is_invalid_param() {
    use_device(0);
    let (mut a, b) = ([0u8; 8], [1u8; 8]);
    for kind in [
        ACL_MEMCPY_INNER_DEVICE_TO_DEVICE,
        ACL_MEMCPY_INTER_DEVICE_TO_DEVICE,
        8,
        u32::MAX,
    ] {
        let rc = memcpy(a.as_mut_ptr(), b.as_ptr(), 8, kind);
        assert_contains(&assert_fails(rc, INVALID_PARAM, "aclrtMemcpy"), "kind");
    }
}

#[test]
fn memcpy_dest_max_zero_or_below_count_is_param_invalid() {
    use_device(0);
    let (mut a, b) = ([0u8; 8], [1u8; 8]);
    // SAFETY: both buffers hold 8 bytes.
    let rc = unsafe { aclrtMemcpy(a.as_mut_ptr().cast(), 0, b.as_ptr().cast(), 8, 0) };
    assert_contains(&assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"), "destMax");
    // SAFETY: as above.
    let rc = unsafe { aclrtMemcpy(a.as_mut_ptr().cast(), 4, b.as_ptr().cast(), 8, 0) };
    assert_contains(&assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"), "destMax");
}

#[test]
fn memcpy_onto_itself_succeeds_before_the_context_check() {
    on_new_thread(|| {
        let mut a = [3u8; 8];
        let p = a.as_mut_ptr();
        assert_eq!(memcpy(p, p, 8, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    });
}

#[test]
fn memcpy_without_current_device_is_context_null() {
    on_new_thread(|| {
        let (mut a, b) = ([0u8; 8], [1u8; 8]);
        let rc = memcpy(a.as_mut_ptr(), b.as_ptr(), 8, ACL_MEMCPY_HOST_TO_HOST);
        assert_fails(rc, CONTEXT_NULL, "aclrtMemcpy");
    });
}

#[test]
fn memcpy_with_the_wrong_kind_is_param_invalid_and_names_the_pointer() {
    use_device(0);
    let d = malloc(64);
    let mut host = [0u8; 64];
    let h = host.as_mut_ptr();
    // H2D into host memory.
    let msg = assert_fails(
        memcpy(h, d, 64, ACL_MEMCPY_HOST_TO_DEVICE),
        PARAM_INVALID,
        "aclrtMemcpy",
    );
    // The runtime refuses kinds a pageable end does not allow
    // (`MemcpyKindAutoCorrect`, api_error.cc).
    assert_contains(&msg, "ACL_MEMCPY_HOST_TO_DEVICE is invalid");
    // H2D from device memory to device memory is corrected to D2D by the
    // runtime, not refused: see tests/fidelity_runtime.rs.
    let d2 = malloc(64);
    // D2H from host memory.
    let msg = assert_fails(
        memcpy(h, h.wrapping_add(8), 8, ACL_MEMCPY_DEVICE_TO_HOST),
        PARAM_INVALID,
        "aclrtMemcpy",
    );
    assert_contains(&msg, "src");
    // D2D with a host end; H2H with a device end; H2BUF2D into host.
    for (dst, src, kind) in [
        (d2, h, ACL_MEMCPY_DEVICE_TO_DEVICE),
        (h, d, ACL_MEMCPY_HOST_TO_HOST),
        (h, h.wrapping_add(8), ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE),
    ] {
        let rc = memcpy(dst, src, 8, kind);
        assert_fails(rc, PARAM_INVALID, "aclrtMemcpy");
    }
    free(d);
    free(d2);
}

#[test]
fn memcpy_past_the_end_of_an_allocation_is_param_invalid() {
    use_device(0);
    let d = malloc(100);
    let data = [0u8; 200];
    // 101 bytes into a 100-byte allocation (its rounding padding is not usable).
    let msg = assert_fails(
        memcpy(d, data.as_ptr(), 101, ACL_MEMCPY_HOST_TO_DEVICE),
        PARAM_INVALID,
        "aclrtMemcpy",
    );
    assert_contains(&msg, "1 bytes past the end");
    assert_contains(&msg, &format!("{d:p}"));
    // In bounds from an offset is fine; one byte more is not.
    let rc = memcpy(
        d.wrapping_add(50),
        data.as_ptr(),
        50,
        ACL_MEMCPY_HOST_TO_DEVICE,
    );
    assert_eq!(rc, ACL_SUCCESS);
    let rc = memcpy(
        d.wrapping_add(50),
        data.as_ptr(),
        51,
        ACL_MEMCPY_HOST_TO_DEVICE,
    );
    assert_fails(rc, PARAM_INVALID, "aclrtMemcpy");
    free(d);
}

/// A copy from freed device memory is 107000 in either check mode: "not
/// device memory" with the check off (in a child process), the check's
/// `use-after-free` report naming the free with it on. Nothing is copied.
#[test]
fn memcpy_from_freed_device_memory_is_param_invalid() {
    let mode =
        common::check_mode_with_off_in_a_child("memcpy_from_freed_device_memory_is_param_invalid");
    let reports = common::count_reports();
    use_device(0);
    let d = malloc(64);
    free(d);
    let mut out = [0u8; 64];
    let msg = assert_fails(
        memcpy(out.as_mut_ptr(), d, 64, ACL_MEMCPY_DEVICE_TO_HOST),
        PARAM_INVALID,
        "aclrtMemcpy",
    );
    if mode == Mode::Off {
        assert_contains(&msg, "is not device memory");
    } else {
        reports.assert_made(1, Kind::UseAfterFree, &msg);
        assert_contains(
            &msg,
            &format!(
                "aclrtMemcpy: src: CANN_SIM_CHECK use-after-free: [{d:p}, {:#x}) (64 bytes) lies \
                 in the device allocation {d:p} of 64 bytes on device 0, freed by aclrtFree (free #",
                d as usize + 64
            ),
        );
        assert_contains(
            &msg,
            "aclrtMemcpy would use freed memory. Nothing was done.",
        );
    }
    assert_eq!(out, [0; 64], "nothing was copied");
}

#[test]
fn memcpy_between_devices_is_param_invalid_without_peer_access() {
    let other = on_new_thread(|| {
        use_device(1);
        malloc(64) as usize
    }) as *mut u8;
    use_device(0);
    let d = malloc(64);
    for kind in [ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT] {
        let msg = assert_fails(memcpy(d, other, 64, kind), PARAM_INVALID, "aclrtMemcpy");
        assert_contains(&msg, "peer access not enabled");
    }
    free(d);
    free(other);
}

#[test]
fn memcpy_to_another_devices_memory_is_param_invalid() {
    let other = on_new_thread(|| {
        use_device(1);
        malloc(64) as usize
    }) as *mut u8;
    use_device(0);
    let data = [1u8; 64];
    let msg = assert_fails(
        memcpy(other, data.as_ptr(), 64, ACL_MEMCPY_HOST_TO_DEVICE),
        PARAM_INVALID,
        "aclrtMemcpy",
    );
    assert_contains(&msg, "current device of this thread is 0");
    free(other);
}

#[test]
fn memcpy_default_kind_infers_the_direction() {
    use_device(0);
    let (a, b) = (malloc(16), malloc(16));
    let src: Vec<u8> = (0..16).collect();
    let mut back = [0u8; 16];
    let mut host2 = [0u8; 16];
    assert_eq!(memcpy(a, src.as_ptr(), 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    assert_eq!(memcpy(b, a, 16, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    assert_eq!(
        memcpy(back.as_mut_ptr(), b, 16, ACL_MEMCPY_DEFAULT),
        ACL_SUCCESS
    );
    assert_eq!(
        memcpy(host2.as_mut_ptr(), back.as_ptr(), 16, ACL_MEMCPY_DEFAULT),
        ACL_SUCCESS
    );
    assert_eq!(&host2[..], &src[..]);
    free(a);
    free(b);
}

#[test]
fn memcpy_host_to_buf_to_device_copies_host_to_device() {
    use_device(0);
    let d = malloc(32);
    let src = [9u8; 32];
    assert_eq!(
        memcpy(d, src.as_ptr(), 32, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE),
        ACL_SUCCESS
    );
    assert_eq!(to_host(d, 32), vec![9; 32]);
    free(d);
}

#[test]
fn memcpy_host_to_host_copies_plain_and_pinned_memory() {
    use_device(0);
    let pinned = malloc_host(32);
    let src = [4u8; 32];
    let mut dst = [0u8; 32];
    assert_eq!(
        memcpy(pinned, src.as_ptr(), 32, ACL_MEMCPY_HOST_TO_HOST),
        ACL_SUCCESS
    );
    assert_eq!(
        memcpy(dst.as_mut_ptr(), pinned, 32, ACL_MEMCPY_HOST_TO_HOST),
        ACL_SUCCESS
    );
    assert_eq!(dst, src);
    // Past the end of the pinned allocation.
    let rc = memcpy(
        dst.as_mut_ptr(),
        pinned.wrapping_add(1),
        32,
        ACL_MEMCPY_HOST_TO_HOST,
    );
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtMemcpy"),
        "past the end",
    );
    free_host(pinned);
}

#[test]
fn memcpy_device_to_device_within_one_allocation_may_overlap() {
    use_device(0);
    let d = malloc(16);
    let src: Vec<u8> = (0..16).collect();
    assert_eq!(
        memcpy(d, src.as_ptr(), 16, ACL_MEMCPY_HOST_TO_DEVICE),
        ACL_SUCCESS
    );
    assert_eq!(
        memcpy(d.wrapping_add(4), d, 8, ACL_MEMCPY_DEVICE_TO_DEVICE),
        ACL_SUCCESS
    );
    assert_eq!(
        to_host(d, 16),
        [0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15]
    );
    free(d);
}

// ---------------------------------------------------------------- memset

#[test]
fn memset_fills_count_bytes_with_the_low_byte_of_value() {
    use_device(0);
    let d = malloc(64);
    // SAFETY: the simulator checks the range.
    let rc = unsafe { aclrtMemset(d.wrapping_add(8).cast(), 56, 0x1FF, 16) };
    assert_eq!(rc, ACL_SUCCESS);
    let back = to_host(d, 64);
    assert!(back[..8].iter().all(|&b| b == 0xA5));
    assert!(back[8..24].iter().all(|&b| b == 0xFF));
    assert!(back[24..].iter().all(|&b| b == 0xA5));
    free(d);
}

#[test]
fn memset_count_zero_succeeds_even_with_null_and_no_device() {
    on_new_thread(|| {
        // SAFETY: nothing is written.
        assert_eq!(unsafe { aclrtMemset(null_mut(), 0, 0, 0) }, ACL_SUCCESS);
    });
}

#[test]
fn memset_null_is_invalid_param() {
    use_device(0);
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtMemset(null_mut(), 8, 0, 8) };
    assert_fails(rc, INVALID_PARAM, "aclrtMemset");
}

#[test]
fn memset_without_current_device_is_context_null() {
    let d = on_new_thread(|| {
        use_device(0);
        malloc(64) as usize
    }) as *mut u8;
    let addr = d as usize;
    on_new_thread(move || {
        // SAFETY: the simulator checks the range.
        let rc = unsafe { aclrtMemset(addr as *mut c_void, 64, 0, 64) };
        assert_fails(rc, CONTEXT_NULL, "aclrtMemset");
    });
    free(d);
}

#[test]
fn memset_count_above_max_count_is_param_invalid() {
    use_device(0);
    let d = malloc(64);
    // SAFETY: the simulator checks the range.
    let rc = unsafe { aclrtMemset(d.cast(), 32, 0, 64) };
    assert_contains(&assert_fails(rc, PARAM_INVALID, "aclrtMemset"), "maxCount");
    free(d);
}

/// A fill past the end of an allocation, of freed memory or of plain host
/// memory is 107000; freed memory in either check mode ("neither device
/// memory with the check on: the check's `use-after-free` report; with it
/// off freed memory counts as pageable host memory).
#[test]
fn memset_outside_a_live_device_allocation_is_param_invalid() {
    let mode = common::check_mode_with_off_in_a_child(
        "memset_outside_a_live_device_allocation_is_param_invalid",
    );
    let reports = common::count_reports();
    use_device(0);
    let d = malloc(64);
    // Past the end.
    // SAFETY: the simulator checks the range.
    let rc = unsafe { aclrtMemset(d.wrapping_add(32).cast(), 64, 0, 33) };
    assert_contains(
        &assert_fails(rc, PARAM_INVALID, "aclrtMemset"),
        "past the end",
    );
    free(d);
    // Freed: with the check off the simulator cannot tell freed device
    // memory from pageable host memory, which aclrtMemset fills on the host
    // as the runtime does, so only the check mode can test it (a known
    // difference, FIDELITY.md).
    if mode != Mode::Off {
        // SAFETY: as above (the check refuses the quarantined range).
        let rc = unsafe { aclrtMemset(d.cast(), 64, 0, 64) };
        let msg = assert_fails(rc, PARAM_INVALID, "aclrtMemset");
        reports.assert_made(1, Kind::UseAfterFree, &msg);
        assert_contains(
            &msg,
            &format!(
                "aclrtMemset: devPtr: CANN_SIM_CHECK use-after-free: [{d:p}, {:#x}) (64 bytes) \
                 lies in the device allocation {d:p} of 64 bytes on device 0, freed by aclrtFree \
                 (free #",
                d as usize + 64
            ),
        );
        assert_contains(
            &msg,
            "aclrtMemset would use freed memory. Nothing was done.",
        );
    }
    // Plain (pageable) host memory is filled as a host memset, as on the
    // runtime: see tests/fidelity_runtime.rs.
}

#[test]
fn memset_fills_pinned_host_memory_as_the_header_allows() {
    use_device(0);
    let h = malloc_host(64);
    // SAFETY: `h` is a live pinned allocation of 64 bytes.
    let rc = unsafe { aclrtMemset(h.cast(), 64, 0x3c, 64) };
    assert_eq!(rc, 0);
    // SAFETY: as above; nothing else uses it.
    let bytes = unsafe { std::slice::from_raw_parts(h.cast::<u8>(), 64) };
    assert!(bytes.iter().all(|&b| b == 0x3c));
    // Past its end is still out of bounds.
    // SAFETY: the simulator checks the range.
    let rc = unsafe { aclrtMemset(h.cast(), 65, 0, 65) };
    assert_fails(rc, PARAM_INVALID, "aclrtMemset");
    free_host(h);
}

// ------------------------------------------------------------ memory info

#[test]
fn get_mem_info_null_is_invalid_param() {
    use_device(0);
    let mut x = 0;
    // SAFETY: null is allowed and rejected.
    let rc = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, null_mut(), &mut x) };
    assert_fails(rc, INVALID_PARAM, "aclrtGetMemInfo");
    // SAFETY: as above.
    let rc = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut x, null_mut()) };
    assert_fails(rc, INVALID_PARAM, "aclrtGetMemInfo");
}

#[test]
fn get_mem_info_unknown_attribute_is_invalid_memory_type() {
    use_device(0);
    let (mut f, mut t) = (0, 0);
    // SAFETY: valid out-pointers.
    let rc = unsafe { aclrtGetMemInfo(ACL_MEM_P2P_HUGE1G + 1, &mut f, &mut t) };
    assert_fails(rc, INVALID_MEMORY_TYPE, "aclrtGetMemInfo");
}

#[test]
fn get_mem_info_without_current_device_is_context_null() {
    on_new_thread(|| {
        let (mut f, mut t) = (0, 0);
        // SAFETY: valid out-pointers.
        let rc = unsafe { aclrtGetMemInfo(ACL_HBM_MEM, &mut f, &mut t) };
        assert_fails(rc, CONTEXT_NULL, "aclrtGetMemInfo");
    });
}

#[test]
fn get_mem_info_reports_hbm_and_no_ddr() {
    use_device(0);
    let hbm = cann_sim::config::get().unwrap().hbm_bytes as usize;
    let (free, total) = mem_info(ACL_HBM_MEM);
    assert_eq!(total, hbm);
    assert!(free <= total);
    assert_eq!(mem_info(ACL_HBM_MEM_HUGE).1, hbm);
    assert_eq!(mem_info(ACL_MEM_P2P_HUGE1G).1, hbm);
    assert_eq!(mem_info(ACL_DDR_MEM), (0, 0));
}

//! Virtual memory management through the safe API on the simulator: a
//! range grown piece by piece, contiguous across pieces, HBM accounting,
//! misuse with exact errors, and clean release.

mod common;

use acl::vmm::{Mapping, PhysicalMemory, VirtualRange, granularity};
use acl::{Error, ErrorCode};

/// The tests share device 0's HBM figures: one at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

#[track_caller]
fn invalid<T: std::fmt::Debug>(r: acl::Result<T>, function: &str) {
    match r {
        Err(Error::InvalidArgument { function: f, .. }) if f == function => {}
        other => panic!("expected {function} to reject its arguments, got {other:?}"),
    }
}

#[track_caller]
fn acl_code<T: std::fmt::Debug>(r: acl::Result<T>, code: ErrorCode, function: &str) {
    match r {
        Err(Error::Acl {
            code: c,
            function: f,
            ..
        }) if c == code && f == function => {}
        other => panic!("expected {function} to fail with {code:?}, got {other:?}"),
    }
}

#[test]
fn a_range_grows_piece_by_piece_and_reads_contiguously_across_pieces() {
    let _s = serial();
    let npu = common::device(0);
    let _ = acl::take_release_errors();
    let g = granularity(&npu).unwrap();
    assert_eq!(g, 2 << 20);
    let free0 = npu.memory_info().unwrap().free_bytes;
    let range = VirtualRange::reserve(&npu, 3 * g).unwrap();
    let (p1, p2) = (
        PhysicalMemory::new(&npu, g).unwrap(),
        PhysicalMemory::new(&npu, 2 * g).unwrap(),
    );
    assert_eq!(npu.memory_info().unwrap().free_bytes, free0 - 3 * g);
    let a = range.map(0, &p1).unwrap();
    let b = range.map(g, &p2).unwrap();
    assert_eq!(b.device_ptr() as usize, range.as_ptr() as usize + g);
    a.copy_from_host(g - 3, &[1, 2, 3]).unwrap();
    b.copy_from_host(0, &[4, 5, 6]).unwrap();
    // One copy across the seam: the pieces are one stretch of device memory.
    let mut seam = [0u8; 6];
    // SAFETY: `seam` is 6 writable host bytes; the 6 device bytes across
    // the seam are mapped (both mappings live).
    unsafe {
        acl::result::memcpy(
            seam.as_mut_ptr().cast(),
            6,
            range.as_ptr().cast::<u8>().add(g - 3).cast(),
            6,
            acl_sys::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
    .unwrap();
    assert_eq!(seam, [1, 2, 3, 4, 5, 6]);
    b.unmap().unwrap();
    drop(a);
    p1.free().unwrap();
    drop(p2);
    range.release().unwrap();
    assert_eq!(npu.memory_info().unwrap().free_bytes, free0);
    assert_eq!(acl::take_release_errors(), vec![]);
}

#[test]
fn misuse_is_refused_with_the_exact_error() {
    cann_sim::require_devices!(2);
    let _s = serial();
    let npu = common::device(0);
    let g = granularity(&npu).unwrap();
    acl_code(
        VirtualRange::reserve(&npu, g + 1),
        ErrorCode::InvalidParam,
        "aclrtReserveMemAddress",
    );
    acl_code(
        PhysicalMemory::new(&npu, 100),
        ErrorCode::InvalidParam,
        "aclrtMallocPhysical",
    );
    acl_code(
        PhysicalMemory::new(&npu, 1 << 50),
        ErrorCode::RtMemoryAllocation,
        "aclrtMallocPhysical",
    );
    let range = VirtualRange::reserve(&npu, 2 * g).unwrap();
    let p = PhysicalMemory::new(&npu, 2 * g).unwrap();
    invalid(range.map(g, &p), "VirtualRange::map");
    let m = range.map(0, &p).unwrap();
    let q = PhysicalMemory::new(&npu, g).unwrap();
    acl_code(range.map(0, &q), ErrorCode::InvalidParam, "aclrtMapMem");
    invalid(
        m.copy_from_host(2 * g - 1, &[0, 0]),
        "Mapping::copy_from_host",
    );
    invalid(m.copy_to_host(2 * g, &mut [0]), "Mapping::copy_to_host");
    // The simulator maps each byte of physical memory once.
    let range2 = VirtualRange::reserve(&npu, 2 * g).unwrap();
    acl_code(range2.map(0, &p), ErrorCode::InvalidParam, "aclrtMapMem");
    // Memory of another device cannot be mapped into this range.
    let other = common::device(1);
    let r = PhysicalMemory::new(&other, g).unwrap();
    acl_code(range.map(0, &r), ErrorCode::InvalidParam, "aclrtMapMem");
}

#[test]
fn the_virtual_memory_types_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<VirtualRange>();
    both::<PhysicalMemory>();
    both::<Mapping<'static>>();
}

/// Issue 22 (read in the code, not shown by the simulator, whose
/// synchronous copies do not interleave: this passed before the fix too):
/// `Mapping::copy_from_host(&self)` let two threads write the same bytes at
/// once through one `&Mapping`. Host copies into one physical memory are
/// now one at a time: every read-back is one writer's bytes, whole.
#[test]
fn concurrent_host_copies_into_one_physical_memory_do_not_interleave() {
    let _s = serial();
    let npu = common::device(0);
    let g = granularity(&npu).unwrap();
    let range = VirtualRange::reserve(&npu, g).unwrap();
    let p = PhysicalMemory::new(&npu, g).unwrap();
    let a = range.map(0, &p).unwrap();
    for k in 0..10u8 {
        let seen = std::thread::scope(|sc| {
            sc.spawn(|| a.copy_from_host(0, &vec![2 * k; g]).unwrap());
            sc.spawn(|| a.copy_from_host(0, &vec![2 * k + 1; g]).unwrap());
            let reader = sc.spawn(|| {
                let mut v = vec![0u8; g];
                a.copy_to_host(0, &mut v).unwrap();
                v
            });
            reader.join().unwrap()
        });
        let mut back = vec![0u8; g];
        a.copy_to_host(0, &mut back).unwrap();
        for v in [&seen, &back] {
            assert!(
                v.iter().all(|&b| b == v[0]),
                "iteration {k}: a copy interleaved with another"
            );
        }
    }
}

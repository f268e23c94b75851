//! Host memory registration through the C ABI (`aclrtHostRegister`,
//! `aclrtHostRegisterV2`, `aclrtHostGetDevicePointer`,
//! `aclrtHostUnregister`): mapped host memory is device memory without a
//! copy, pinned-only memory is page-locked host memory, and every misuse
//! gets the release's code (hicann/runtime `src/acl/aclrt_impl/memory.cpp`,
//! `src/runtime/api/impl/api_impl.cc`, `src/runtime/core/src/common/register_memory.cc`).

mod common;

use acl_sys::*;
use common::{loader_recent, loader_set_device};
use std::ffi::c_void;
use std::ptr::null_mut;

fn setup() {
    loader_set_device(0);
}

fn recent() -> String {
    loader_recent()
}

/// A page-aligned host buffer of `n` u32, zeroed (registration covers
/// whole pages on a device; the test keeps to page-aligned ranges).
fn host_words(n: usize) -> Vec<u32> {
    vec![0u32; n]
}

#[test]
fn mapped_host_memory_is_written_by_the_device_and_read_by_the_host_without_a_copy() {
    setup();
    let mut host = host_words(1024);
    let p = host.as_mut_ptr().cast::<c_void>();
    let bytes = (host.len() * 4) as u64;
    // SAFETY: `host` outlives the registration, which ends below.
    unsafe {
        assert_eq!(
            aclrtHostRegisterV2(p, bytes, ACL_HOST_REG_MAPPED).unwrap(),
            0,
            "{}",
            recent()
        );
        let mut dev = null_mut();
        assert_eq!(
            aclrtHostGetDevicePointer(p, &mut dev, 0).unwrap(),
            0,
            "{}",
            recent()
        );
        assert!(!dev.is_null());
        // The device fills the mapped memory on a stream...
        let mut s = null_mut();
        assert_eq!(aclrtCreateStream(&mut s).unwrap(), 0);
        assert_eq!(
            aclrtMemsetAsync(dev, bytes as usize, 0x5a, bytes as usize, s).unwrap(),
            0,
            "{}",
            recent()
        );
        assert_eq!(aclrtSynchronizeStream(s).unwrap(), 0);
        // ...and the host sees it in its own buffer.
        assert!(host.iter().all(|&w| w == 0x5a5a_5a5a));
        // The host writes; a device-to-device copy out of the mapped memory
        // reads what the host wrote.
        for (i, w) in host.iter_mut().enumerate() {
            *w = i as u32;
        }
        let mut d = null_mut();
        assert_eq!(
            aclrtMalloc(&mut d, bytes as usize, ACL_MEM_MALLOC_HUGE_FIRST).unwrap(),
            0
        );
        assert_eq!(
            aclrtMemcpyAsync(
                d,
                bytes as usize,
                dev,
                bytes as usize,
                ACL_MEMCPY_DEVICE_TO_DEVICE,
                s
            )
            .unwrap(),
            0,
            "{}",
            recent()
        );
        let mut back = vec![0u32; 1024];
        assert_eq!(
            aclrtMemcpyAsync(
                back.as_mut_ptr().cast(),
                bytes as usize,
                d,
                bytes as usize,
                ACL_MEMCPY_DEVICE_TO_HOST,
                s
            )
            .unwrap(),
            0
        );
        assert_eq!(aclrtSynchronizeStream(s).unwrap(), 0);
        assert_eq!(back, (0..1024).collect::<Vec<u32>>());
        assert_eq!(aclrtFree(d).unwrap(), 0);
        assert_eq!(aclrtDestroyStream(s).unwrap(), 0);
        assert_eq!(aclrtHostUnregister(p).unwrap(), 0, "{}", recent());
    }
}

#[test]
fn host_register_v1_answers_a_device_pointer_and_refuses_a_second_registration() {
    setup();
    let mut host = host_words(256);
    let p = host.as_mut_ptr().cast::<c_void>();
    // SAFETY: `host` outlives the registration.
    unsafe {
        let mut dev = null_mut();
        assert_eq!(
            aclrtHostRegister(p, 1024, ACL_HOST_REGISTER_MAPPED, &mut dev).unwrap(),
            0
        );
        let mut again = null_mut();
        assert_eq!(aclrtHostGetDevicePointer(p, &mut again, 0).unwrap(), 0);
        assert_eq!(again, dev);
        // Any overlap with a registered range is refused, naming it.
        let inner = p.cast::<u8>().add(512).cast::<c_void>();
        assert_eq!(
            aclrtHostRegisterV2(inner, 64, ACL_HOST_REG_PINNED).unwrap(),
            507910
        );
        let msg = recent();
        assert!(
            msg.contains("aclrtHostRegisterV2")
                && msg.contains("registered with aclrtHostRegister"),
            "{msg}"
        );
        assert_eq!(
            aclrtHostRegister(p, 1024, ACL_HOST_REGISTER_MAPPED, &mut again).unwrap(),
            507910
        );
        // Memory registered is not freed by aclrtFree.
        assert_ne!(aclrtFree(dev).unwrap(), 0);
        assert!(recent().contains("aclrtHostUnregister"), "{}", recent());
        assert_eq!(aclrtHostUnregister(p).unwrap(), 0);
        // Registered again once unregistered.
        assert_eq!(
            aclrtHostRegisterV2(p, 1024, ACL_HOST_REG_MAPPED | ACL_HOST_REG_PINNED).unwrap(),
            0
        );
        assert_eq!(aclrtHostUnregister(p).unwrap(), 0);
    }
}

#[test]
fn pinned_only_registration_is_page_locked_host_memory_without_a_device_pointer() {
    setup();
    let mut host = host_words(256);
    let p = host.as_mut_ptr().cast::<c_void>();
    // SAFETY: `host` outlives the registration; attributes are writable.
    unsafe {
        let mut attrs: aclrtPtrAttributes = std::mem::zeroed();
        assert_eq!(aclrtPointerGetAttributes(p, &mut attrs).unwrap(), 0);
        assert_eq!(attrs.location.type_, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
        assert_eq!(
            aclrtHostRegisterV2(p, 1024, ACL_HOST_REG_PINNED).unwrap(),
            0
        );
        assert_eq!(aclrtPointerGetAttributes(p, &mut attrs).unwrap(), 0);
        assert_eq!(attrs.location.type_, ACL_MEM_LOCATION_TYPE_HOST);
        let mut dev = null_mut();
        assert_eq!(aclrtHostGetDevicePointer(p, &mut dev, 0).unwrap(), 107000);
        assert!(recent().contains("pinned only"), "{}", recent());
        assert_eq!(aclrtHostUnregister(p).unwrap(), 0);
        // Plain host memory again.
        assert_eq!(aclrtPointerGetAttributes(p, &mut attrs).unwrap(), 0);
        assert_eq!(attrs.location.type_, ACL_MEM_LOCATION_TYPE_UNREGISTERED);
        // V2 with neither a pin nor a map flag registers nothing (as the
        // release's code does) and succeeds.
        assert_eq!(aclrtHostRegisterV2(p, 1024, 0).unwrap(), 0);
        assert_eq!(aclrtHostUnregister(p).unwrap(), 507911);
    }
}

#[test]
fn registration_misuse_gets_the_release_codes() {
    setup();
    let mut host = host_words(256);
    let p = host.as_mut_ptr().cast::<c_void>();
    // SAFETY: invalid arguments only; `host` outlives the registration.
    unsafe {
        let mut dev = null_mut();
        assert_eq!(
            aclrtHostRegisterV2(null_mut(), 64, ACL_HOST_REG_MAPPED).unwrap(),
            100000
        );
        assert!(recent().contains("ptr is null"), "{}", recent());
        assert_eq!(
            aclrtHostRegisterV2(p, 0, ACL_HOST_REG_MAPPED).unwrap(),
            100000
        );
        assert!(
            recent().contains("size must be greater than 0"),
            "{}",
            recent()
        );
        assert_eq!(
            aclrtHostRegister(p, 64, ACL_HOST_REGISTER_MAPPED, null_mut()).unwrap(),
            100000
        );
        assert!(recent().contains("devPtr is null"), "{}", recent());
        assert_eq!(aclrtHostGetDevicePointer(p, null_mut(), 0).unwrap(), 100000);
        assert_eq!(aclrtHostGetDevicePointer(p, &mut dev, 1).unwrap(), 100000);
        assert!(recent().contains("reserved parameter"), "{}", recent());
        assert_eq!(aclrtHostUnregister(null_mut()).unwrap(), 100000);
        // Not registered.
        assert_eq!(aclrtHostUnregister(p).unwrap(), 507911);
        assert!(recent().contains("not the first address"), "{}", recent());
        assert_eq!(aclrtHostGetDevicePointer(p, &mut dev, 0).unwrap(), 107000);
        // Only the first address of a registration counts.
        assert_eq!(
            aclrtHostRegisterV2(p, 1024, ACL_HOST_REG_MAPPED).unwrap(),
            0
        );
        let inner = p.cast::<u8>().add(64).cast::<c_void>();
        assert_eq!(
            aclrtHostGetDevicePointer(inner, &mut dev, 0).unwrap(),
            107000
        );
        assert_eq!(aclrtHostUnregister(inner).unwrap(), 507911);
        assert_eq!(aclrtHostUnregister(p).unwrap(), 0);
        assert_eq!(aclrtHostUnregister(p).unwrap(), 507911);
        // aclrtMallocHost memory is registered by the driver already.
        let mut pinned = null_mut();
        assert_eq!(aclrtMallocHost(&mut pinned, 4096).unwrap(), 0);
        assert_eq!(
            aclrtHostRegisterV2(pinned, 4096, ACL_HOST_REG_MAPPED).unwrap(),
            507910
        );
        assert!(recent().contains("pinned host allocation"), "{}", recent());
        assert_eq!(aclrtFreeHost(pinned).unwrap(), 0);
    }
}

#[test]
fn registration_needs_a_context_on_the_thread() {
    setup();
    let mut host = host_words(64);
    let addr = host.as_mut_ptr() as usize;
    std::thread::scope(|s| {
        s.spawn(move || {
            let p = addr as *mut c_void;
            // SAFETY: a fresh thread has no current context; nothing is registered.
            unsafe {
                assert_eq!(
                    aclrtHostRegisterV2(p, 256, ACL_HOST_REG_MAPPED).unwrap(),
                    107002
                );
                assert_eq!(aclrtHostUnregister(p).unwrap(), 107002);
            }
        });
    });
}

//! Device-side clones, typed fills, reinterpretation, the `Bool` element
//! and raw-pointer exchange with other libraries.

mod common;

use acl::allocator::AllocatorConfig;
use acl::memory::Bool;
use acl::result::raw;
use acl::{DataType, DeviceBuffer, DeviceMemory, Element, Error, ErrorCode};
use half::{bf16, f16};
use std::ffi::c_void;

fn invalid(err: &Error, want: &str) -> bool {
    matches!(err, Error::InvalidArgument { function, .. } if *function == want)
}

#[test]
fn try_clone_copies_on_the_device_and_leaves_the_source() {
    let npu = common::device(0);
    let a = DeviceBuffer::from_host(&npu, &[1u32, 2, 3, 4]).unwrap();
    let mut b = a.try_clone().unwrap();
    assert_eq!(b.to_host_vec().unwrap(), [1, 2, 3, 4]);
    b.copy_from_host(&[9, 9, 9, 9]).unwrap();
    assert_eq!(a.to_host_vec().unwrap(), [1, 2, 3, 4]);
    let s = npu.new_stream().unwrap();
    let c = s.clone_dtod(&a.slice(1..3).unwrap()).unwrap();
    assert_eq!(c.to_host_vec().unwrap(), [2, 3]);
}

fn filled<T: acl::DeviceRepr + PartialEq + std::fmt::Debug>(len: usize, value: T, zero: T) {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let mut buf = s.alloc_zeros::<T>(len + 2).unwrap();
    // Only the middle: the first and last elements keep their zero.
    s.fill(&mut buf.slice_mut(1..len + 1).unwrap(), value)
        .unwrap();
    let host = buf.to_host_vec().unwrap();
    assert_eq!(host[0], zero);
    assert_eq!(host[len + 1], zero);
    assert!(
        host[1..=len].iter().all(|v| *v == value),
        "{:?}",
        &host[..8]
    );
}

#[test]
fn fill_writes_every_element_type_and_only_the_range_given() {
    filled(1000, -3i8, 0);
    filled(1000, 0xabu8, 0);
    filled(1000, -12345i16, 0);
    filled(1000, 0x1234u16, 0);
    filled(1000, f16::from_f32(1.5), f16::ZERO);
    filled(1000, bf16::from_f32(-2.25), bf16::ZERO);
    filled(1000, -7i32, 0);
    filled(1000, 0x0102_0304u32, 0);
    filled(1000, 0.1f32, 0.0);
    filled(1000, -0x0102_0304_0506_0708i64, 0);
    filled(1000, u64::MAX - 5, 0);
    filled(1000, std::f64::consts::PI, 0.0);
    filled(1000, Bool::TRUE, Bool::FALSE);
    // Large and odd-sized: many doubling copies, a partial last one.
    filled(300_001, 0x5a5bu16, 0);
    filled(70_001, 1.0e-300f64, 0.0);
}

#[test]
fn fill_of_an_empty_range_does_nothing() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let mut buf = s.alloc_zeros::<u16>(4).unwrap();
    s.fill(&mut buf.slice_mut(2..2).unwrap(), 7).unwrap();
    assert_eq!(buf.to_host_vec().unwrap(), [0; 4]);
}

#[test]
fn reinterpret_views_the_same_bytes_as_another_type() {
    let npu = common::device(0);
    let mut buf = DeviceBuffer::from_host(&npu, &[1.0f32, -2.0]).unwrap();
    let bits = buf.reinterpret::<u32>().unwrap().to_host_vec().unwrap();
    assert_eq!(bits, [1.0f32.to_bits(), (-2.0f32).to_bits()]);
    let bytes = buf.reinterpret::<u8>().unwrap();
    assert_eq!(bytes.len(), 8);
    let s = npu.new_stream().unwrap();
    // Writing through a mutable view changes the buffer.
    let mut halves = buf.reinterpret_mut::<u16>().unwrap();
    s.fill(&mut halves, 0).unwrap();
    s.synchronize().unwrap();
    assert_eq!(buf.to_host_vec().unwrap(), [0.0, 0.0]);
}

#[test]
fn reinterpret_of_an_uneven_size_or_misaligned_address_is_refused() {
    let npu = common::device(0);
    let buf = DeviceBuffer::from_host(&npu, &[1u8, 2, 3]).unwrap();
    let err = buf.reinterpret::<u16>().unwrap_err();
    assert!(invalid(&err, "DeviceSlice::reinterpret"), "{err}");
    assert!(err.to_string().contains("not a whole number"), "{err}");
    let four = DeviceBuffer::from_host(&npu, &[0u8; 5]).unwrap();
    let err = four.slice(1..5).unwrap().reinterpret::<u32>().unwrap_err();
    assert!(err.to_string().contains("not aligned"), "{err}");
}

#[test]
fn bool_elements_read_any_nonzero_byte_as_true() {
    assert_eq!(<Bool as Element>::DATA_TYPE, DataType::Bool);
    let npu = common::device(0);
    let bytes = DeviceBuffer::from_host(&npu, &[0u8, 1, 2, 255]).unwrap();
    let as_bool = bytes.reinterpret::<Bool>().unwrap().to_host_vec().unwrap();
    let got: Vec<bool> = as_bool.into_iter().map(bool::from).collect();
    assert_eq!(got, [false, true, true, true]);
    assert_eq!(Bool::from(true), Bool::TRUE);
}

/// `bytes` from `aclrtMalloc` on `npu`, as another library would get them.
fn raw_malloc(npu: &acl::Device, bytes: usize) -> *mut c_void {
    npu.bind().unwrap();
    acl::result::malloc(bytes, raw::ACL_MEM_MALLOC_HUGE_FIRST).unwrap()
}

#[test]
fn from_raw_takes_ownership_and_frees_the_memory() {
    cann_sim::sim_only!("frees an address twice to prove the first free happened");
    let npu = common::device(0);
    let p = raw_malloc(&npu, 16);
    // SAFETY: 16 bytes from aclrtMalloc on device 0, handed over; written
    // before read.
    let mut buf = unsafe { DeviceBuffer::<u32>::from_raw(&npu, p, 4) }.unwrap();
    buf.copy_from_host(&[5, 6, 7, 8]).unwrap();
    assert_eq!(buf.to_host_vec().unwrap(), [5, 6, 7, 8]);
    buf.close().unwrap();
    // Freed by the buffer: a second free is refused.
    // SAFETY: the runtime checks the address; nothing uses it.
    let err = unsafe { acl::result::free(p) }.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::RtParamInvalid), "{err}");
}

#[test]
fn from_raw_borrowed_orders_its_work_and_never_frees() {
    let npu = common::device(0);
    let p = raw_malloc(&npu, 16);
    let s = npu.new_stream().unwrap();
    // SAFETY: live device memory of 16 bytes owned by this test, freed
    // below after the stream has finished.
    let mut buf = unsafe { DeviceBuffer::<u32>::from_raw_borrowed(&npu, p, 4) }.unwrap();
    s.fill(&mut buf, 0x0a0b_0c0d).unwrap();
    drop(buf);
    s.synchronize().unwrap();
    let mut host = [0u32; 4];
    // SAFETY: 16 bytes each side; the memory is still allocated.
    unsafe {
        acl::result::memcpy(
            host.as_mut_ptr().cast(),
            16,
            p,
            16,
            raw::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
    .unwrap();
    assert_eq!(host, [0x0a0b_0c0d; 4]);
    // SAFETY: ours, freed once.
    unsafe { acl::result::free(p) }.unwrap();
}

#[test]
fn into_raw_waits_for_queued_work_and_hands_the_memory_over() {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    let (release, held) = std::sync::mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = held.recv_timeout(std::time::Duration::from_secs(20));
    })
    .unwrap();
    // SAFETY: filled below before anything reads it.
    let mut buf = unsafe { s.alloc::<u64>(8) }.unwrap();
    s.fill(&mut buf, 42).unwrap();
    let waiter = std::thread::spawn(move || buf.into_raw().map(|p| p as usize).map_err(|(e, _)| e));
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        !waiter.is_finished(),
        "into_raw returned before the fill ran"
    );
    release.send(()).unwrap();
    let p = waiter.join().unwrap().unwrap() as *mut c_void;
    let mut host = [0u64; 8];
    // SAFETY: 64 bytes each side; the memory is ours now, its work done.
    unsafe {
        acl::result::memcpy(
            host.as_mut_ptr().cast(),
            64,
            p,
            64,
            raw::ACL_MEMCPY_DEVICE_TO_HOST,
        )
    }
    .unwrap();
    assert_eq!(host, [42; 8]);
    // SAFETY: handed over by into_raw: ours to free, once.
    unsafe { acl::result::free(p) }.unwrap();
}

#[test]
fn into_raw_of_caching_allocator_memory_returns_the_buffer_intact() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    npu.enable_caching_allocator(AllocatorConfig::default())
        .unwrap();
    let buf = DeviceBuffer::from_host(&npu, &[3u16, 4]).unwrap();
    let (err, buf) = buf.into_raw().unwrap_err();
    assert!(invalid(&err, "DeviceBuffer::into_raw"), "{err}");
    assert!(err.to_string().contains("caching allocator"), "{err}");
    assert_eq!(buf.to_host_vec().unwrap(), [3, 4]);
}

#[test]
fn a_null_pointer_for_a_non_empty_buffer_is_refused() {
    let npu = common::device(0);
    // SAFETY: refused before anything uses the pointer.
    let err = unsafe { DeviceBuffer::<u8>::from_raw(&npu, std::ptr::null_mut(), 4) }.unwrap_err();
    assert!(invalid(&err, "DeviceBuffer::from_raw"), "{err}");
    // SAFETY: empty: nothing is freed or read.
    let empty = unsafe { DeviceBuffer::<u8>::from_raw(&npu, std::ptr::null_mut(), 0) }.unwrap();
    assert!(empty.is_empty());
}

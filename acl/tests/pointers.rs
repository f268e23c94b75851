//! Questions about device pointers and devices through the thin `result`
//! layer and `Device`: pointer attributes, allocation ranges, 32-bit fills,
//! UUIDs.

mod common;

use acl::DeviceBuffer;
use acl_sys as sys;

#[test]
fn pointer_attributes_and_address_ranges_describe_the_allocation() {
    cann_sim::require_devices!(2);
    let npu = common::device(1);
    let buf = DeviceBuffer::<u32>::zeroed(&npu, 100).unwrap();
    let inner = buf.as_raw_ptr().cast::<u8>().wrapping_add(40).cast();
    let a = acl::result::pointer_get_attributes(inner).unwrap();
    assert_eq!(
        (a.location.type_, a.location.id),
        (sys::ACL_MEM_LOCATION_TYPE_DEVICE, 1)
    );
    let (base, size) = acl::result::mem_get_address_range(inner.cast_mut()).unwrap();
    assert_eq!((base.cast_const(), size), (buf.as_raw_ptr(), 400));
    let host = 5u32;
    let h = acl::result::pointer_get_attributes(std::ptr::addr_of!(host).cast()).unwrap();
    assert_eq!(h.location.type_, sys::ACL_MEM_LOCATION_TYPE_UNREGISTERED);
    let e = acl::result::mem_get_address_range(std::ptr::addr_of!(host).cast_mut().cast());
    assert_eq!(e.unwrap_err().code(), Some(acl::ErrorCode::RtParamInvalid));
}

#[test]
fn a_32_bit_fill_writes_the_pattern() {
    let npu = common::device(0);
    let buf = DeviceBuffer::<u32>::zeroed(&npu, 8).unwrap();
    // The zeroing is queued: let it finish before writing behind the
    // stream's back.
    npu.synchronize().unwrap();
    npu.bind().unwrap();
    // SAFETY: 32 bytes of device memory owned by `buf`, unused meanwhile.
    unsafe {
        acl::result::memset_d32(buf.as_raw_ptr().cast_mut(), 32, 0xABCD_1234, 8).unwrap();
    }
    assert_eq!(buf.to_host_vec().unwrap(), vec![0xABCD_1234u32; 8]);
}

#[test]
fn device_uuids_are_stable_and_distinct() {
    cann_sim::require_devices!(2);
    let (a, b) = (common::device(0), common::device(1));
    assert_eq!(a.uuid().unwrap(), a.uuid().unwrap());
    assert_ne!(a.uuid().unwrap(), b.uuid().unwrap());
}

#[test]
fn a_pitched_copy_moves_a_block_of_rows() {
    let npu = common::device(0);
    let host: Vec<u8> = (0..15).collect();
    let buf = DeviceBuffer::<u8>::zeroed(&npu, 12).unwrap();
    npu.synchronize().unwrap();
    npu.bind().unwrap();
    // SAFETY: a 3x4 block: the host span is 14 bytes of `host`, the device
    // span the 12 bytes of `buf`, unused meanwhile.
    unsafe {
        acl::result::memcpy_2d(
            buf.as_raw_ptr().cast_mut(),
            4,
            host.as_ptr().cast(),
            5,
            (4, 3),
            sys::ACL_MEMCPY_HOST_TO_DEVICE,
        )
        .unwrap();
    }
    assert_eq!(
        buf.to_host_vec().unwrap(),
        [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13]
    );
}

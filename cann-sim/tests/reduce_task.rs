//! `aclrtReduceAsync` at the C level: the values of each kind and type, the
//! argument checks in the release's order with their codes, and the
//! task's place in stream order.
//!
//! Each test runs on a thread of its own and uses device 0.

#[path = "common/aclnn.rs"]
#[allow(dead_code, reason = "shared helpers this file does not use")]
mod aclnn_common;
mod common;

use acl_sys::{
    ACL_BF16, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_ADDR_UNALIGNED,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_PARAM_INVALID, ACL_FLOAT, ACL_FLOAT16, ACL_INT8,
    ACL_INT32, ACL_INT64, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_UINT8, aclError,
};
use aclnn_common::{download, upload};
use cann_sim::acl::*;
use common::{assert_fails, create_stream, destroy_stream, ok, on_new_thread, sync, use_device};
use std::ptr::null_mut;

const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const INVALID_PARAM: aclError = ACL_ERROR_INVALID_PARAM as aclError;
const NOT_SUPPORTED: aclError = ACL_ERROR_RT_FEATURE_NOT_SUPPORT as aclError;
const UNALIGNED: aclError = ACL_ERROR_RT_ADDR_UNALIGNED as aclError;

/// Reduces `src` into `dst` with `kind` on a new stream; returns `dst`.
fn reduced<T: Copy + Default>(dst: &[T], src: &[T], kind: u32, ty: i32) -> Vec<T> {
    let (d, s) = (upload(dst), upload(src));
    let stream = create_stream();
    let bytes = std::mem::size_of_val(dst) as u64;
    // SAFETY: both are device ranges of `bytes` bytes, live until freed below.
    ok(unsafe { aclrtReduceAsync(d.cast(), s.cast(), bytes, kind, ty, stream, null_mut()) });
    ok(sync(stream));
    let out = download(d, dst.len());
    destroy_stream(stream);
    common::free(d);
    common::free(s);
    out
}

#[test]
fn sum_max_and_min_combine_the_source_into_the_destination_element_by_element() {
    on_new_thread(|| {
        use_device(0);
        let (a, b) = ([1.0f32, -2.0, 3.5, 8.0], [4.0f32, 5.0, -3.5, 0.25]);
        let sum = ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM;
        assert_eq!(reduced(&a, &b, sum, ACL_FLOAT), [5.0, 3.0, 0.0, 8.25]);
        let max = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX;
        assert_eq!(reduced(&a, &b, max, ACL_FLOAT), [4.0, 5.0, 3.5, 8.0]);
        let min = ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN;
        assert_eq!(reduced(&a, &b, min, ACL_FLOAT), [1.0, -2.0, -3.5, 0.25]);
        // Integers wrap, as the hardware's adders do.
        let got = reduced(&[i32::MAX, 7], &[1, -9], sum, ACL_INT32);
        assert_eq!(got, [i32::MIN, -2]);
        assert_eq!(reduced(&[100i8, -3], &[100, 5], sum, ACL_INT8), [-56, 2]);
        // Half types round through f32 per element.
        let h = |v: f32| half::f16::from_f32(v);
        let got = reduced(&[h(1.5), h(2048.0)], &[h(0.25), h(1.0)], sum, ACL_FLOAT16);
        assert_eq!(
            got,
            [h(1.75), h(2048.0)],
            "2049 is not an f16; it rounds to 2048"
        );
        let bf = |v: f32| half::bf16::from_f32(v);
        let got = reduced(&[bf(3.0)], &[bf(-1.0)], max, ACL_BF16);
        assert_eq!(got, [bf(3.0)]);
    });
}

#[test]
fn the_reduce_runs_in_stream_order_after_a_queued_write_of_its_source() {
    on_new_thread(|| {
        use_device(0);
        let d = upload(&[1.0f32; 4]);
        let s = upload(&[0.0f32; 4]);
        let stream = create_stream();
        // A queued fill of the source with 0x3f800000 (1.0f32) ...
        // SAFETY: 16 bytes of device memory.
        ok(unsafe { aclrtMemsetD32Async(s.cast(), 16, 0x3f80_0000, 4, stream) });
        // ... which the reduce queued after it sees.
        // SAFETY: as above.
        ok(unsafe {
            aclrtReduceAsync(
                d.cast(),
                s.cast(),
                16,
                ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
                ACL_FLOAT,
                stream,
                null_mut(),
            )
        });
        ok(sync(stream));
        assert_eq!(download::<f32>(d, 4), [2.0; 4]);
        destroy_stream(stream);
        common::free(d);
        common::free(s);
    });
}

#[test]
fn bad_arguments_fail_with_the_releases_codes_in_its_order() {
    on_new_thread(|| {
        use_device(0);
        let d = upload(&[0.0f32; 4]);
        let s = upload(&[0.0f32; 4]);
        let sum = ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM;
        let call =
            |dst: *mut u8, src: *mut u8, count: u64, kind: u32, ty: i32, reserve: *mut u8| {
                // SAFETY: every pointer is a device range of 16 bytes or null or
                // refused before use.
                unsafe {
                    aclrtReduceAsync(
                        dst.cast(),
                        src.cast(),
                        count,
                        kind,
                        ty,
                        null_mut(),
                        reserve.cast(),
                    )
                }
            };
        // The ACL layer: null pointers, the reserved pointer, unmapped types.
        assert_fails(
            call(null_mut(), s, 16, sum, ACL_FLOAT, null_mut()),
            INVALID_PARAM,
            "aclrtReduceAsync",
        );
        assert_fails(
            call(d, null_mut(), 16, sum, ACL_FLOAT, null_mut()),
            INVALID_PARAM,
            "aclrtReduceAsync",
        );
        let msg = assert_fails(
            call(d, s, 16, sum, ACL_FLOAT, d),
            INVALID_PARAM,
            "aclrtReduceAsync",
        );
        assert!(msg.contains("reserve"), "{msg}");
        let msg = assert_fails(
            call(d, s, 16, sum, ACL_INT64, null_mut()),
            INVALID_PARAM,
            "aclrtReduceAsync",
        );
        assert!(msg.contains("type 9"), "{msg}");
        // The runtime's checks: count, kind.
        assert_fails(
            call(d, s, 0, sum, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        let msg = assert_fails(
            call(d, s, 16, 9, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        assert!(msg.contains("kind 9"), "{msg}");
        assert_fails(
            call(d, s, 16, 14, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        assert_fails(
            call(d, s, (4 << 30) + 4, sum, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        // The SoC's capability: uint8 is mapped but not reduced on A2; EQUAL
        // is accepted by the SoC but its result is undocumented.
        let msg = assert_fails(
            call(d, s, 16, sum, ACL_UINT8, null_mut()),
            NOT_SUPPORTED,
            "aclrtReduceAsync",
        );
        assert!(msg.contains("uint8"), "{msg}");
        let eq = ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL;
        assert_fails(
            call(d, s, 16, eq, ACL_FLOAT, null_mut()),
            NOT_SUPPORTED,
            "aclrtReduceAsync",
        );
        // Alignment: the source is checked before the destination.
        // SAFETY: only compared, never dereferenced.
        let (d1, s1) = unsafe { (d.add(1), s.add(2)) };
        let msg = assert_fails(
            call(d1, s1, 8, sum, ACL_FLOAT, null_mut()),
            UNALIGNED,
            "aclrtReduceAsync",
        );
        assert!(msg.contains("src"), "{msg}");
        assert_fails(
            call(d1, s, 8, sum, ACL_FLOAT16, null_mut()),
            UNALIGNED,
            "aclrtReduceAsync",
        );
        // Memory the simulator can check: past the allocation, or host memory.
        assert_fails(
            call(d, s, 32, sum, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        let mut host = [0.0f32; 4];
        let h: *mut u8 = host.as_mut_ptr().cast();
        assert_fails(
            call(d, h, 16, sum, ACL_FLOAT, null_mut()),
            PARAM_INVALID,
            "aclrtReduceAsync",
        );
        assert_eq!(download::<f32>(d, 4), [0.0; 4], "no refused call wrote");
        common::free(d);
        common::free(s);
    });
}

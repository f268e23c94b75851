//! The data-transfer API (`acl/acl_tdt.h`: channels, datasets, data items;
//! `acl/acl_tdt_queue.h`: queues, buffers, routes) at the C level, with the
//! checks and codes of hicann/runtime `src/acl/acl_tdt_channel/` and
//! `src/acl/acl_tdt_queue/`.
//!
//! Each test runs on a thread of its own (recent errors and the current
//! device are per thread).

mod common;

use acl_sys::{
    ACL_DT_UNDEFINED, ACL_ERROR_FAILURE, ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL, ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_QUEUE_EMPTY,
    ACL_ERROR_RT_QUEUE_FULL, ACL_FLOAT, ACL_INT32, ACL_SUCCESS, ACL_TDT_QUEUE_DEPTH_UINT32,
    ACL_TDT_QUEUE_NAME_PTR, ACL_TDT_QUEUE_ROUTE_BIND, ACL_TDT_QUEUE_ROUTE_DST_UINT32,
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, ACL_TDT_QUEUE_ROUTE_QUERY_SRC,
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32, ACL_TDT_QUEUE_ROUTE_SRC_UINT32,
    ACL_TDT_QUEUE_ROUTE_STATUS_INT32, ACL_TENSOR_DATA_END_OF_SEQUENCE,
    ACL_TENSOR_DATA_SLICE_TENSOR, ACL_TENSOR_DATA_TENSOR, ACL_TENSOR_DATA_UNDEFINED, aclError,
    acltdtBuf, acltdtChannelHandle, acltdtDataItem, acltdtDataset, acltdtQueueRouteList,
};
use cann_sim::acl::*;
use common::{assert_fails, ok, on_new_thread, use_device};
use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

const INVALID_PARAM: aclError = ACL_ERROR_INVALID_PARAM;
const PARAM_INVALID: aclError = ACL_ERROR_RT_PARAM_INVALID as aclError;
const QUEUE_FULL: aclError = ACL_ERROR_RT_QUEUE_FULL as aclError;
const QUEUE_EMPTY: aclError = ACL_ERROR_RT_QUEUE_EMPTY as aclError;
const UNSUPPORTED: aclError = ACL_ERROR_FEATURE_UNSUPPORTED;

/// A float tensor item over `v` with shape `[1, len]`.
fn float_item(v: &mut [f32]) -> *mut acltdtDataItem {
    let dims = [1i64, v.len() as i64];
    // SAFETY: two dims; `v` outlives the item's uses in each test.
    let it = unsafe {
        acltdtCreateDataItem(
            ACL_TENSOR_DATA_TENSOR,
            dims.as_ptr(),
            2,
            ACL_FLOAT,
            v.as_mut_ptr().cast(),
            std::mem::size_of_val(v),
        )
    };
    assert!(!it.is_null());
    it
}

/// A dataset of `items`.
fn dataset_of(items: &[*mut acltdtDataItem]) -> *mut acltdtDataset {
    // SAFETY: no arguments.
    let d = unsafe { acltdtCreateDataset() };
    assert!(!d.is_null());
    for &i in items {
        // SAFETY: live handles.
        ok(unsafe { acltdtAddDataItem(d, i) });
    }
    d
}

/// The f32 values of a received item.
fn floats(item: *const acltdtDataItem) -> Vec<f32> {
    // SAFETY: a live item; its data holds `size` bytes while the dataset lives.
    unsafe {
        let p = acltdtGetDataAddrFromItem(item).cast::<f32>();
        let n = acltdtGetDataSizeFromItem(item) / 4;
        std::slice::from_raw_parts(p, n).to_vec()
    }
}

fn capacity_channel(name: &CStr, capacity: usize) -> *mut acltdtChannelHandle {
    // SAFETY: a NUL-terminated name.
    let ch = unsafe { acltdtCreateChannelWithCapacity(0, name.as_ptr(), capacity) };
    assert!(!ch.is_null(), "{}", common::recent_error());
    ch
}

/// A channel handle that may cross threads (the sim looks it up).
#[derive(Clone, Copy)]
struct Handle(usize);

impl Handle {
    fn get(self) -> *mut acltdtChannelHandle {
        self.0 as *mut acltdtChannelHandle
    }
}

#[test]
fn a_data_item_answers_its_type_shape_data_and_slice_info() {
    on_new_thread(|| {
        let mut v = [1.0f32, 2.0, 3.0];
        let it = float_item(&mut v);
        // SAFETY: a live item and valid out-pointers throughout.
        unsafe {
            assert_eq!(acltdtGetTensorTypeFromItem(it), ACL_TENSOR_DATA_TENSOR);
            assert_eq!(acltdtGetDataTypeFromItem(it), ACL_FLOAT);
            assert_eq!(
                acltdtGetDataAddrFromItem(it),
                v.as_mut_ptr().cast::<c_void>()
            );
            assert_eq!(acltdtGetDataSizeFromItem(it), 12);
            assert_eq!(acltdtGetDimNumFromItem(it), 2);
            let mut dims = [0i64; 4];
            ok(acltdtGetDimsFromItem(it, dims.as_mut_ptr(), 4));
            assert_eq!(dims, [1, 3, 0, 0]);
            let rc = acltdtGetDimsFromItem(it, dims.as_mut_ptr(), 1);
            assert_fails(rc, INVALID_PARAM, "acltdtGetDimsFromItem");
            let rc = acltdtGetDimsFromItem(it, null_mut(), 2);
            assert_fails(rc, INVALID_PARAM, "acltdtGetDimsFromItem");
            let (mut n, mut id) = (9usize, 9usize);
            ok(acltdtGetSliceInfoFromItem(it, &mut n, &mut id));
            assert_eq!((n, id), (0, 0));
            let rc = acltdtGetSliceInfoFromItem(it, null_mut(), &mut id);
            assert_fails(rc, INVALID_PARAM, "acltdtGetSliceInfoFromItem");
            ok(acltdtDestroyDataItem(it));
        }
    });
}

#[test]
fn data_item_creation_refuses_inconsistent_dims_with_null() {
    on_new_thread(|| {
        let dims = [2i64; 129];
        // SAFETY: `dims` holds 129 values; each call is refused before use
        // of the data.
        unsafe {
            let cases = [
                (ACL_TENSOR_DATA_TENSOR, null(), 2usize),
                (ACL_TENSOR_DATA_TENSOR, dims.as_ptr(), 0),
                (ACL_TENSOR_DATA_TENSOR, dims.as_ptr(), 129),
                (ACL_TENSOR_DATA_END_OF_SEQUENCE, dims.as_ptr(), 1),
            ];
            for (kind, d, n) in cases {
                let it = acltdtCreateDataItem(kind, d, n, ACL_FLOAT, null_mut(), 0);
                assert!(it.is_null(), "kind {kind}, dimNum {n}");
                assert!(common::recent_error().starts_with("acltdtCreateDataItem"));
            }
            // An end-of-sequence item has no shape, type or data.
            let eos = acltdtCreateDataItem(
                ACL_TENSOR_DATA_END_OF_SEQUENCE,
                null(),
                0,
                ACL_INT32,
                null_mut(),
                0,
            );
            assert!(!eos.is_null());
            assert_eq!(acltdtGetDataTypeFromItem(eos), ACL_DT_UNDEFINED);
            assert_eq!(acltdtGetDimNumFromItem(eos), 0);
            ok(acltdtDestroyDataItem(eos));
        }
    });
}

#[test]
fn a_dataset_lists_its_items_and_refuses_misuse_with_exact_codes() {
    on_new_thread(|| {
        let (mut a, mut b) = ([1.0f32], [2.0f32, 3.0]);
        let (ia, ib) = (float_item(&mut a), float_item(&mut b));
        let d = dataset_of(&[ia, ib]);
        // SAFETY: live handles, or null and stale ones the sim looks up.
        unsafe {
            assert_eq!(acltdtGetDatasetSize(d), 2);
            assert_eq!(acltdtGetDataItem(d, 1), ib);
            assert!(acltdtGetDataItem(d, 2).is_null());
            assert!(common::recent_error().starts_with("acltdtGetDataItem"));
            assert_eq!(CStr::from_ptr(acltdtGetDatasetName(d)).to_bytes(), b"");
            assert!(acltdtGetDatasetName(null()).is_null());
            assert_eq!(acltdtGetDatasetSize(null()), 0);
            assert_eq!(
                acltdtGetTensorTypeFromItem(null()),
                ACL_TENSOR_DATA_UNDEFINED
            );
            common::discard_recent_error();
            assert_fails(
                acltdtAddDataItem(d, null_mut()),
                INVALID_PARAM,
                "acltdtAddDataItem",
            );
            assert_fails(
                acltdtAddDataItem(null_mut(), ia),
                INVALID_PARAM,
                "acltdtAddDataItem",
            );
            ok(acltdtDestroyDataset(d));
            let rc = acltdtDestroyDataset(d);
            let msg = assert_fails(rc, INVALID_PARAM, "acltdtDestroyDataset");
            assert!(msg.contains("has been destroyed"), "{msg}");
            // The user's items outlive the dataset.
            ok(acltdtDestroyDataItem(ia));
            ok(acltdtDestroyDataItem(ib));
            assert_fails(
                acltdtDestroyDataItem(ia),
                INVALID_PARAM,
                "acltdtDestroyDataItem",
            );
            assert_fails(
                acltdtDestroyDataItem(null_mut()),
                INVALID_PARAM,
                "acltdtDestroyDataItem",
            );
        }
    });
}

#[test]
fn a_dataset_refuses_to_mix_host_and_device_items() {
    on_new_thread(|| {
        use_device(0);
        let dev = common::malloc(64);
        let mut host = [0f32; 4];
        let dims = [4i64];
        // SAFETY: one dim; the data pointers are live for the test.
        unsafe {
            let on_dev = acltdtCreateDataItem(
                ACL_TENSOR_DATA_TENSOR,
                dims.as_ptr(),
                1,
                ACL_FLOAT,
                dev.cast(),
                16,
            );
            let on_host = float_item(&mut host);
            let d = dataset_of(&[on_dev]);
            let rc = acltdtAddDataItem(d, on_host);
            assert_fails(rc, INVALID_PARAM, "acltdtAddDataItem");
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(on_dev));
            ok(acltdtDestroyDataItem(on_host));
        }
        common::free(dev);
    });
}

#[test]
fn a_capacity_channel_carries_a_dataset_and_its_end_of_sequence_to_the_receiver() {
    on_new_thread(|| {
        use_device(0);
        let ch = capacity_channel(c"roundtrip", 4);
        let mut v = [1.5f32, 2.5, 3.5, 4.5];
        let item = float_item(&mut v);
        // SAFETY: no dims, no data.
        let eos = unsafe {
            acltdtCreateDataItem(
                ACL_TENSOR_DATA_END_OF_SEQUENCE,
                null(),
                0,
                ACL_FLOAT,
                null_mut(),
                0,
            )
        };
        let sent = dataset_of(&[item, eos]);
        // SAFETY: live handles and out-pointers.
        unsafe {
            ok(acltdtSendTensor(ch, sent, 1000));
            // The data was copied when sent.
            v[0] = -1.0;
            assert_eq!(v[0], -1.0);
            let mut n = 0usize;
            ok(acltdtQueryChannelSize(ch, &mut n));
            assert_eq!(n, 1);
            let got = acltdtCreateDataset();
            ok(acltdtReceiveTensor(ch, got, 1000));
            assert_eq!(acltdtGetDatasetSize(got), 2);
            let t = acltdtGetDataItem(got, 0);
            assert_eq!(floats(t), [1.5, 2.5, 3.5, 4.5]);
            assert_eq!(acltdtGetDataTypeFromItem(t), ACL_FLOAT);
            let mut dims = [0i64; 2];
            ok(acltdtGetDimsFromItem(t, dims.as_mut_ptr(), 2));
            assert_eq!(dims, [1, 4]);
            let e = acltdtGetDataItem(got, 1);
            assert_eq!(
                acltdtGetTensorTypeFromItem(e),
                ACL_TENSOR_DATA_END_OF_SEQUENCE
            );
            // A dataset that received owns its items: nothing can be added.
            let rc = acltdtAddDataItem(got, item);
            assert_fails(rc, UNSUPPORTED, "acltdtAddDataItem");
            ok(acltdtQueryChannelSize(ch, &mut n));
            assert_eq!(n, 0);
            ok(acltdtDestroyDataset(got));
            // Its items went with it.
            assert_fails(
                acltdtDestroyDataItem(t),
                INVALID_PARAM,
                "acltdtDestroyDataItem",
            );
            ok(acltdtDestroyDataset(sent));
            ok(acltdtDestroyDataItem(item));
            ok(acltdtDestroyDataItem(eos));
            ok(acltdtStopChannel(ch));
            ok(acltdtDestroyChannel(ch));
        }
    });
}

#[test]
fn a_full_capacity_channel_refuses_at_once_with_timeout_0_and_after_a_positive_timeout() {
    on_new_thread(|| {
        use_device(0);
        let ch = capacity_channel(c"full", 2);
        let mut v = [7.0f32];
        let item = float_item(&mut v);
        let d = dataset_of(&[item]);
        // SAFETY: live handles.
        unsafe {
            ok(acltdtSendTensor(ch, d, 0));
            ok(acltdtSendTensor(ch, d, -1));
            assert_fails(acltdtSendTensor(ch, d, 0), QUEUE_FULL, "acltdtSendTensor");
            let t = Instant::now();
            assert_fails(acltdtSendTensor(ch, d, 50), QUEUE_FULL, "acltdtSendTensor");
            assert!(t.elapsed() >= Duration::from_millis(50));
            // Cleaning empties it; an empty channel refuses a receive.
            ok(acltdtCleanChannel(ch));
            let got = acltdtCreateDataset();
            assert_fails(
                acltdtReceiveTensor(ch, got, 0),
                QUEUE_EMPTY,
                "acltdtReceiveTensor",
            );
            let t = Instant::now();
            assert_fails(
                acltdtReceiveTensor(ch, got, 30),
                QUEUE_EMPTY,
                "acltdtReceiveTensor",
            );
            assert!(t.elapsed() >= Duration::from_millis(30));
            ok(acltdtDestroyDataset(got));
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(item));
            ok(acltdtDestroyChannel(ch));
        }
    });
}

#[test]
fn a_receiver_blocked_forever_gets_what_another_thread_sends() {
    on_new_thread(|| {
        use_device(0);
        let ch = Handle(capacity_channel(c"threads", 2) as usize);
        let receiver = std::thread::spawn(move || {
            // SAFETY: live handles.
            unsafe {
                let got = acltdtCreateDataset();
                let rc = acltdtReceiveTensor(ch.get(), got, -1);
                let values = floats(acltdtGetDataItem(got, 0));
                ok(acltdtDestroyDataset(got));
                (rc, values)
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        let mut v = [42.0f32, 43.0];
        let item = float_item(&mut v);
        let d = dataset_of(&[item]);
        // SAFETY: live handles.
        unsafe { ok(acltdtSendTensor(ch.get(), d, -1)) };
        let (rc, values) = receiver.join().unwrap();
        assert_eq!(rc, ACL_SUCCESS);
        assert_eq!(values, [42.0, 43.0]);
        // SAFETY: live handles.
        unsafe {
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(item));
            ok(acltdtDestroyChannel(ch.get()));
        }
    });
}

#[test]
fn receiving_into_a_dataset_holding_user_items_is_refused() {
    on_new_thread(|| {
        use_device(0);
        let ch = capacity_channel(c"user-items", 2);
        let mut v = [1.0f32];
        let item = float_item(&mut v);
        let d = dataset_of(&[item]);
        // SAFETY: live handles.
        unsafe {
            ok(acltdtSendTensor(ch, d, 0));
            assert_fails(
                acltdtReceiveTensor(ch, d, 0),
                INVALID_PARAM,
                "acltdtReceiveTensor",
            );
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(item));
            ok(acltdtDestroyChannel(ch));
        }
    });
}

#[test]
fn channel_creation_and_use_refuse_bad_arguments_with_exact_codes() {
    on_new_thread(|| {
        let long = format!("{}\0", "n".repeat(128));
        // SAFETY: NUL-terminated names or null.
        unsafe {
            assert!(acltdtCreateChannelWithCapacity(0, null(), 2).is_null());
            common::discard_recent_error();
            assert!(acltdtCreateChannelWithCapacity(0, long.as_ptr().cast(), 2).is_null());
            assert!(common::recent_error().contains("cannot be larger than 128"));
            common::discard_recent_error();
            assert!(acltdtCreateChannelWithCapacity(0, c"c".as_ptr(), 1).is_null());
            assert!(acltdtCreateChannelWithCapacity(0, c"c".as_ptr(), 8193).is_null());
            assert!(acltdtCreateChannelWithCapacity(999, c"c".as_ptr(), 2).is_null());
            common::discard_recent_error();
            assert!(acltdtCreateChannel(0, null()).is_null());
            common::discard_recent_error();
            let mut n = 0usize;
            let d = acltdtCreateDataset();
            assert_fails(
                acltdtSendTensor(null(), d, -1),
                INVALID_PARAM,
                "acltdtSendTensor",
            );
            assert_fails(
                acltdtReceiveTensor(null(), d, -1),
                INVALID_PARAM,
                "acltdtReceiveTensor",
            );
            assert_fails(
                acltdtQueryChannelSize(null(), &mut n),
                INVALID_PARAM,
                "acltdtQueryChannelSize",
            );
            assert_fails(
                acltdtStopChannel(null_mut()),
                INVALID_PARAM,
                "acltdtStopChannel",
            );
            assert_fails(
                acltdtCleanChannel(null_mut()),
                INVALID_PARAM,
                "acltdtCleanChannel",
            );
            assert_fails(
                acltdtDestroyChannel(null_mut()),
                INVALID_PARAM,
                "acltdtDestroyChannel",
            );
            let ch = capacity_channel(c"misuse", 2);
            assert_fails(
                acltdtSendTensor(ch, null(), -1),
                INVALID_PARAM,
                "acltdtSendTensor",
            );
            assert_fails(
                acltdtQueryChannelSize(ch, null_mut()),
                INVALID_PARAM,
                "acltdtQueryChannelSize",
            );
            // A slice tensor is something only a device sends.
            let slice = acltdtCreateDataItem(
                ACL_TENSOR_DATA_SLICE_TENSOR,
                null(),
                0,
                ACL_FLOAT,
                null_mut(),
                0,
            );
            ok(acltdtAddDataItem(d, slice));
            assert_fails(
                acltdtSendTensor(ch, d, 0),
                INVALID_PARAM,
                "acltdtSendTensor",
            );
            ok(acltdtDestroyChannel(ch));
            let msg = assert_fails(
                acltdtDestroyChannel(ch),
                INVALID_PARAM,
                "acltdtDestroyChannel",
            );
            assert!(msg.contains("has been destroyed"), "{msg}");
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(slice));
        }
    });
}

#[test]
fn a_data_transfer_channel_needs_timeout_minus_1_and_a_receive_name() {
    on_new_thread(|| {
        use_device(0);
        // SAFETY: NUL-terminated names, live handles.
        unsafe {
            let send = acltdtCreateChannel(0, c"feed".as_ptr());
            let recv = acltdtCreateChannel(0, c"TF_RECEIVE_feed".as_ptr());
            assert!(!send.is_null() && !recv.is_null());
            let mut v = [5.0f32, 6.0];
            let item = float_item(&mut v);
            let d = dataset_of(&[item]);
            assert_fails(
                acltdtSendTensor(send, d, 0),
                INVALID_PARAM,
                "acltdtSendTensor",
            );
            assert_fails(
                acltdtSendTensor(send, d, 1000),
                INVALID_PARAM,
                "acltdtSendTensor",
            );
            ok(acltdtSendTensor(send, d, -1));
            let got = acltdtCreateDataset();
            assert_fails(
                acltdtReceiveTensor(recv, got, 100),
                INVALID_PARAM,
                "acltdtReceiveTensor",
            );
            let msg = assert_fails(
                acltdtReceiveTensor(send, got, -1),
                INVALID_PARAM,
                "acltdtReceiveTensor",
            );
            assert!(msg.contains("not a receive channel"), "{msg}");
            ok(acltdtReceiveTensor(recv, got, -1));
            assert_eq!(floats(acltdtGetDataItem(got, 0)), [5.0, 6.0]);
            let mut n = 0usize;
            assert_fails(
                acltdtQueryChannelSize(send, &mut n),
                UNSUPPORTED,
                "acltdtQueryChannelSize",
            );
            assert_fails(acltdtCleanChannel(send), UNSUPPORTED, "acltdtCleanChannel");
            ok(acltdtDestroyDataset(got));
            ok(acltdtDestroyDataset(d));
            ok(acltdtDestroyDataItem(item));
            ok(acltdtStopChannel(recv));
            ok(acltdtDestroyChannel(recv));
            ok(acltdtDestroyChannel(send));
        }
    });
}

#[test]
fn stopping_a_data_transfer_channel_wakes_its_blocked_receiver_with_failure() {
    on_new_thread(|| {
        use_device(0);
        // SAFETY: a NUL-terminated name.
        let recv =
            Handle(unsafe { acltdtCreateChannel(0, c"TF_RECEIVE_stopped".as_ptr()) } as usize);
        assert!(!recv.get().is_null());
        let receiver = std::thread::spawn(move || {
            // SAFETY: live handles.
            unsafe {
                let got = acltdtCreateDataset();
                let rc = acltdtReceiveTensor(recv.get(), got, -1);
                let msg = common::recent_error();
                ok(acltdtDestroyDataset(got));
                (rc, msg)
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        // SAFETY: a live handle.
        unsafe { ok(acltdtStopChannel(recv.get())) };
        let (rc, msg) = receiver.join().unwrap();
        assert_eq!(rc, ACL_ERROR_FAILURE);
        assert!(msg.contains("stopped"), "{msg}");
        // SAFETY: a live handle.
        unsafe { ok(acltdtDestroyChannel(recv.get())) };
    });
}

#[test]
fn a_queue_carries_buffers_with_user_data_up_to_its_depth() {
    on_new_thread(|| {
        // SAFETY: valid pointers and sizes throughout.
        unsafe {
            let mut qid = 0u32;
            let rc = acltdtCreateQueue(null(), &mut qid);
            assert_fails(
                rc,
                ACL_ERROR_RT_CONTEXT_NULL as aclError,
                "acltdtCreateQueue",
            );
            use_device(0);
            let attr = acltdtCreateQueueAttr();
            let depth = 2u32;
            ok(acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                4,
                (&raw const depth).cast(),
            ));
            let name = c"my-queue".as_ptr();
            ok(acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_NAME_PTR,
                8,
                (&raw const name).cast(),
            ));
            let (mut got_name, mut got_depth, mut size) = (null::<i8>(), 0u32, 0usize);
            ok(acltdtGetQueueAttr(
                attr,
                ACL_TDT_QUEUE_NAME_PTR,
                8,
                &mut size,
                (&raw mut got_name).cast(),
            ));
            assert_eq!(
                (CStr::from_ptr(got_name.cast()).to_bytes(), size),
                (&b"my-queue"[..], 8)
            );
            ok(acltdtGetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                4,
                &mut size,
                (&raw mut got_depth).cast(),
            ));
            assert_eq!((got_depth, size), (2, 4));
            let rc = acltdtGetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                2,
                &mut size,
                (&raw mut got_depth).cast(),
            );
            assert_fails(rc, INVALID_PARAM, "acltdtGetQueueAttr");
            assert_fails(
                acltdtCreateQueue(attr, null_mut()),
                INVALID_PARAM,
                "acltdtCreateQueue",
            );
            ok(acltdtCreateQueue(attr, &mut qid));
            ok(acltdtDestroyQueueAttr(attr));

            let user = [9u8; 96];
            ok(acltdtEnqueueData(
                qid,
                b"hello".as_ptr().cast(),
                5,
                user.as_ptr().cast(),
                96,
                0,
                0,
            ));
            ok(acltdtEnqueueData(
                qid,
                b"world!".as_ptr().cast(),
                6,
                null(),
                0,
                -1,
                0,
            ));
            let rc = acltdtEnqueueData(qid, b"x".as_ptr().cast(), 1, null(), 0, 0, 0);
            assert_fails(rc, QUEUE_FULL, "acltdtEnqueueData");
            let rc =
                acltdtEnqueueData(qid, b"x".as_ptr().cast(), 1, user.as_ptr().cast(), 97, 0, 0);
            assert_fails(rc, PARAM_INVALID, "acltdtEnqueueData");

            let (mut buf, mut got, mut ud) = ([0u8; 16], 0usize, [0u8; 4]);
            // Too small a buffer: refused, the size told, the data kept.
            let rc = acltdtDequeueData(qid, buf.as_mut_ptr().cast(), 2, &mut got, null_mut(), 0, 0);
            assert_fails(rc, PARAM_INVALID, "acltdtDequeueData");
            assert_eq!(got, 5);
            ok(acltdtDequeueData(
                qid,
                buf.as_mut_ptr().cast(),
                16,
                &mut got,
                ud.as_mut_ptr().cast(),
                4,
                0,
            ));
            assert_eq!((&buf[..got], ud), (&b"hello"[..], [9; 4]));
            ok(acltdtDequeueData(
                qid,
                buf.as_mut_ptr().cast(),
                16,
                &mut got,
                null_mut(),
                0,
                100,
            ));
            assert_eq!(&buf[..got], b"world!");
            let t = Instant::now();
            let rc = acltdtDequeueData(
                qid,
                buf.as_mut_ptr().cast(),
                16,
                &mut got,
                null_mut(),
                0,
                30,
            );
            assert_fails(rc, QUEUE_EMPTY, "acltdtDequeueData");
            assert!(t.elapsed() >= Duration::from_millis(30));
            let rc = acltdtDequeueData(qid, null_mut(), 16, &mut got, null_mut(), 0, 0);
            assert_fails(rc, INVALID_PARAM, "acltdtDequeueData");
            let rc = acltdtEnqueueData(qid, null(), 1, null(), 0, 0, 0);
            assert_fails(rc, INVALID_PARAM, "acltdtEnqueueData");
            let rc = acltdtEnqueueData(qid, b"x".as_ptr().cast(), 0, null(), 0, 0, 0);
            assert_fails(rc, INVALID_PARAM, "acltdtEnqueueData");

            ok(acltdtDestroyQueue(qid));
            assert_fails(acltdtDestroyQueue(qid), PARAM_INVALID, "acltdtDestroyQueue");
            let rc = acltdtEnqueueData(qid, b"x".as_ptr().cast(), 1, null(), 0, 0, 0);
            assert_fails(rc, PARAM_INVALID, "acltdtEnqueueData");
        }
    });
}

#[test]
fn a_queue_attr_refuses_a_bad_depth_length_type_and_the_queue_a_depth_below_2() {
    on_new_thread(|| {
        use_device(0);
        // SAFETY: valid pointers and sizes.
        unsafe {
            let attr = acltdtCreateQueueAttr();
            let depth = 1u64;
            let rc = acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                8,
                (&raw const depth).cast(),
            );
            assert_fails(rc, INVALID_PARAM, "acltdtSetQueueAttr");
            let rc = acltdtSetQueueAttr(attr, 7, 4, (&raw const depth).cast());
            assert_fails(rc, INVALID_PARAM, "acltdtSetQueueAttr");
            let rc = acltdtSetQueueAttr(attr, ACL_TDT_QUEUE_DEPTH_UINT32, 4, null());
            assert_fails(rc, INVALID_PARAM, "acltdtSetQueueAttr");
            ok(acltdtSetQueueAttr(
                attr,
                ACL_TDT_QUEUE_DEPTH_UINT32,
                4,
                (&raw const depth).cast(),
            ));
            let mut qid = 0u32;
            assert_fails(
                acltdtCreateQueue(attr, &mut qid),
                PARAM_INVALID,
                "acltdtCreateQueue",
            );
            ok(acltdtDestroyQueueAttr(attr));
            assert_fails(
                acltdtDestroyQueueAttr(attr),
                INVALID_PARAM,
                "acltdtDestroyQueueAttr",
            );
        }
    });
}

#[test]
fn mbufs_grants_and_attaches_are_refused_on_a_host_as_in_the_release() {
    on_new_thread(|| {
        use_device(0);
        let mut buf: acltdtBuf = null_mut();
        let mut n = 0u32;
        // SAFETY: each call is refused before any use of its arguments.
        unsafe {
            assert_fails(
                acltdtAllocBuf(8, 5, &mut buf),
                INVALID_PARAM,
                "acltdtAllocBuf",
            );
            assert_fails(
                acltdtAllocBuf(8, 0, null_mut()),
                INVALID_PARAM,
                "acltdtAllocBuf",
            );
            assert_fails(
                acltdtAllocBuf(8, 0, &mut buf),
                UNSUPPORTED,
                "acltdtAllocBuf",
            );
            assert!(buf.is_null());
            assert_fails(acltdtEnqueue(1, buf, 0), UNSUPPORTED, "acltdtEnqueue");
            assert_fails(acltdtDequeue(1, &mut buf, 0), UNSUPPORTED, "acltdtDequeue");
            assert_fails(acltdtFreeBuf(buf), UNSUPPORTED, "acltdtFreeBuf");
            assert_fails(
                acltdtGetBufChainNum(buf, &mut n),
                UNSUPPORTED,
                "acltdtGetBufChainNum",
            );
            assert_fails(
                acltdtGrantQueue(1, 1, 2, 0),
                UNSUPPORTED,
                "acltdtGrantQueue",
            );
            assert_fails(
                acltdtAttachQueue(1, 0, &mut n),
                UNSUPPORTED,
                "acltdtAttachQueue",
            );
        }
    });
}

#[test]
fn routes_and_route_lists_keep_their_queues_and_refuse_bad_indexes() {
    on_new_thread(|| {
        // SAFETY: valid pointers and sizes throughout.
        unsafe {
            let r = acltdtCreateQueueRoute(3, 4);
            let list = acltdtCreateQueueRouteList();
            ok(acltdtAddQueueRoute(list, r));
            assert_eq!(acltdtGetQueueRouteNum(list), 1);
            let out = acltdtCreateQueueRoute(0, 0);
            ok(acltdtGetQueueRoute(list, 0, out));
            let (mut v, mut size) = (0u32, 0usize);
            ok(acltdtGetQueueRouteParam(
                out,
                ACL_TDT_QUEUE_ROUTE_SRC_UINT32,
                4,
                &mut size,
                (&raw mut v).cast(),
            ));
            assert_eq!((v, size), (3, 4));
            ok(acltdtGetQueueRouteParam(
                out,
                ACL_TDT_QUEUE_ROUTE_DST_UINT32,
                4,
                &mut size,
                (&raw mut v).cast(),
            ));
            assert_eq!(v, 4);
            let mut status = -1i32;
            ok(acltdtGetQueueRouteParam(
                out,
                ACL_TDT_QUEUE_ROUTE_STATUS_INT32,
                4,
                &mut size,
                (&raw mut status).cast(),
            ));
            assert_eq!(status, 0);
            let rc = acltdtGetQueueRouteParam(out, 9, 4, &mut size, (&raw mut v).cast());
            assert_fails(rc, INVALID_PARAM, "acltdtGetQueueRouteParam");
            assert_fails(
                acltdtGetQueueRoute(list, 1, out),
                INVALID_PARAM,
                "acltdtGetQueueRoute",
            );
            assert_eq!(acltdtGetQueueRouteNum(null()), 0);
            common::discard_recent_error();
            let q = acltdtCreateQueueRouteQueryInfo();
            ok(acltdtSetQueueRouteQueryInfo(q, 1, 4, (&raw const v).cast()));
            let rc = acltdtSetQueueRouteQueryInfo(q, 1, 8, (&raw const size).cast());
            assert_fails(rc, INVALID_PARAM, "acltdtSetQueueRouteQueryInfo");
            ok(acltdtDestroyQueueRouteQueryInfo(q));
            ok(acltdtDestroyQueueRoute(r));
            ok(acltdtDestroyQueueRoute(out));
            ok(acltdtDestroyQueueRouteList(list));
            assert_fails(
                acltdtDestroyQueueRouteList(list),
                INVALID_PARAM,
                "acltdtDestroyQueueRouteList",
            );
            assert_fails(
                acltdtDestroyQueueRoute(null()),
                INVALID_PARAM,
                "acltdtDestroyQueueRoute",
            );
        }
    });
}

/// A queue of `depth` on the current device.
fn queue_of_depth(depth: u32) -> u32 {
    let mut qid = 0u32;
    // SAFETY: valid pointers and sizes.
    unsafe {
        let attr = acltdtCreateQueueAttr();
        ok(acltdtSetQueueAttr(
            attr,
            ACL_TDT_QUEUE_DEPTH_UINT32,
            4,
            (&raw const depth).cast(),
        ));
        ok(acltdtCreateQueue(attr, &mut qid));
        ok(acltdtDestroyQueueAttr(attr));
    }
    qid
}

/// Dequeues one buffer of `qid` without waiting.
fn take(qid: u32) -> Result<Vec<u8>, aclError> {
    let (mut buf, mut n) = ([0u8; 16], 0usize);
    // SAFETY: valid pointers and sizes.
    let rc =
        unsafe { acltdtDequeueData(qid, buf.as_mut_ptr().cast(), 16, &mut n, null_mut(), 0, 0) };
    if rc == ACL_SUCCESS {
        Ok(buf[..n].to_vec())
    } else {
        Err(rc)
    }
}

/// Enqueues `data` on `qid` without waiting.
fn put(qid: u32, data: &[u8]) {
    // SAFETY: valid pointers and sizes.
    ok(unsafe { acltdtEnqueueData(qid, data.as_ptr().cast(), data.len(), null(), 0, 0, 0) });
}

/// A route list of `src` → `dst`.
fn route_list(src: u32, dst: u32) -> *mut acltdtQueueRouteList {
    // SAFETY: live handles.
    unsafe {
        let r = acltdtCreateQueueRoute(src, dst);
        let l = acltdtCreateQueueRouteList();
        ok(acltdtAddQueueRoute(l, r));
        ok(acltdtDestroyQueueRoute(r));
        l
    }
}

#[test]
fn a_bound_route_moves_buffers_from_its_source_to_its_destination_as_room_allows() {
    on_new_thread(|| {
        use_device(0);
        let (src, dst) = (queue_of_depth(4), queue_of_depth(2));
        put(src, b"early");
        let list = route_list(src, dst);
        // SAFETY: live handles and valid pointers throughout.
        unsafe {
            ok(acltdtBindQueueRoutes(list));
            let out = acltdtCreateQueueRoute(0, 0);
            ok(acltdtGetQueueRoute(list, 0, out));
            let (mut status, mut size) = (0i32, 0usize);
            ok(acltdtGetQueueRouteParam(
                out,
                ACL_TDT_QUEUE_ROUTE_STATUS_INT32,
                4,
                &mut size,
                (&raw mut status).cast(),
            ));
            assert_eq!(status, ACL_TDT_QUEUE_ROUTE_BIND as i32);
            // What the source held, and what it gets, reaches the destination
            // while it has room; the rest waits in the source.
            put(src, b"b");
            put(src, b"c");
            assert_eq!(take(dst), Ok(b"early".to_vec()));
            assert_eq!(take(dst), Ok(b"b".to_vec()));
            assert_eq!(take(dst), Ok(b"c".to_vec()));
            assert_eq!(take(dst), Err(QUEUE_EMPTY));
            assert_eq!(take(src), Err(QUEUE_EMPTY));

            // Queries: by source, and the mode must be set.
            let q = acltdtCreateQueueRouteQueryInfo();
            let found = acltdtCreateQueueRouteList();
            let rc = acltdtQueryQueueRoutes(q, found);
            assert_fails(rc, INVALID_PARAM, "acltdtQueryQueueRoutes");
            let mode = ACL_TDT_QUEUE_ROUTE_QUERY_SRC;
            ok(acltdtSetQueueRouteQueryInfo(
                q,
                ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM,
                4,
                (&raw const mode).cast(),
            ));
            let rc = acltdtQueryQueueRoutes(q, found);
            assert_fails(rc, INVALID_PARAM, "acltdtQueryQueueRoutes");
            ok(acltdtSetQueueRouteQueryInfo(
                q,
                ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32,
                4,
                (&raw const src).cast(),
            ));
            ok(acltdtQueryQueueRoutes(q, found));
            assert_eq!(acltdtGetQueueRouteNum(found), 1);
            ok(acltdtGetQueueRoute(found, 0, out));
            let mut v = 0u32;
            ok(acltdtGetQueueRouteParam(
                out,
                ACL_TDT_QUEUE_ROUTE_DST_UINT32,
                4,
                &mut size,
                (&raw mut v).cast(),
            ));
            assert_eq!(v, dst);

            // Bound twice, a cycle, a destroy while bound: refused.
            assert_fails(
                acltdtBindQueueRoutes(list),
                ACL_ERROR_FAILURE,
                "acltdtBindQueueRoutes",
            );
            let back = route_list(dst, src);
            assert_fails(
                acltdtBindQueueRoutes(back),
                ACL_ERROR_FAILURE,
                "acltdtBindQueueRoutes",
            );
            assert_fails(
                acltdtDestroyQueue(src),
                ACL_ERROR_FAILURE,
                "acltdtDestroyQueue",
            );

            ok(acltdtUnbindQueueRoutes(list));
            assert_fails(
                acltdtUnbindQueueRoutes(list),
                ACL_ERROR_FAILURE,
                "acltdtUnbindQueueRoutes",
            );
            put(src, b"stays");
            assert_eq!(take(dst), Err(QUEUE_EMPTY));
            assert_eq!(take(src), Ok(b"stays".to_vec()));
            assert_fails(
                acltdtBindQueueRoutes(null_mut()),
                INVALID_PARAM,
                "acltdtBindQueueRoutes",
            );

            for l in [list, back, found] {
                ok(acltdtDestroyQueueRouteList(l));
            }
            ok(acltdtDestroyQueueRoute(out));
            ok(acltdtDestroyQueueRouteQueryInfo(q));
            ok(acltdtDestroyQueue(src));
            ok(acltdtDestroyQueue(dst));
        }
    });
}

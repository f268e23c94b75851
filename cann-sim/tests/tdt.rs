//! The data-transfer API (`acl/acl_tdt.h`: channels, datasets, data items;
//! `acl/acl_tdt_queue.h`: queues, buffers, routes) at the C level: cann-sim
//! declares and exports every function, so programs using it link, and each
//! fails clearly: the status functions answer `ACL_ERROR_API_NOT_SUPPORT`,
//! the others the failure value of the released runtime (hicann/runtime
//! src/acl/acl_tdt_channel/tensor_data_transfer.cpp: `ACL_TENSOR_DATA_UNDEFINED`,
//! `ACL_DT_UNDEFINED`, 0, null), and every one records a message naming it.
//!
//! The calls go through `acl_sys`, the table `cann_sim::install()` fills, as
//! a Rust program's would. Each test runs on a thread of its own (recent
//! errors are per thread).

mod common;

use acl_sys::{
    ACL_DT_UNDEFINED, ACL_ERROR_API_NOT_SUPPORT, ACL_TENSOR_DATA_UNDEFINED, Api, acltdtBuf,
};
use common::{discard_recent_error, on_new_thread, recent_error};
use std::ptr::{null, null_mut};

/// Asserts that `function` recorded its not-supported message.
#[track_caller]
fn assert_names_itself(function: &str) {
    let msg = recent_error();
    assert!(
        msg.starts_with(&format!("{function} is not supported by cann-sim")),
        "{function}: {msg:?}"
    );
}

fn install() {
    cann_sim::install().expect("install the simulator's tables");
}

#[test]
fn both_tdt_headers_are_declared_and_every_function_is_in_the_simulators_table() {
    cann_sim::sim_only!("checks the simulator's own function table");
    let tdt: Vec<&str> = Api::SYMBOLS
        .iter()
        .copied()
        .filter(|s| s.starts_with("acltdt"))
        .collect();
    // One function of each header's areas: channels and datasets
    // (acl_tdt.h), queues, buffers and routes (acl_tdt_queue.h).
    for name in [
        "acltdtCreateChannel",
        "acltdtSendTensor",
        "acltdtCreateDataset",
        "acltdtCreateQueue",
        "acltdtAllocBuf",
        "acltdtBindQueueRoutes",
    ] {
        assert!(tdt.contains(&name), "{name} is not declared in acl_sys");
    }
    // Every function of the bindings has an export in the table but
    // `aclAppLog`, variadic, which Rust cannot define.
    let api = cann_sim::acl_api();
    assert_eq!(api.resolved_count(), Api::SYMBOLS.len() - 1);
    assert!(api.acltdtCreateChannel.is_some() && api.acltdtCreateQueue.is_some());
}

#[test]
fn tdt_status_functions_return_api_not_support_and_name_themselves() {
    cann_sim::sim_only!("the simulator does not implement the tdt API");
    on_new_thread(|| {
        install();
        let mut qid = 0u32;
        let mut buf: acltdtBuf = null_mut();
        let data = [0u8; 8];
        let mut size = 0usize;
        // SAFETY: each argument is null, a valid out-pointer or a live local;
        // the simulator validates nothing it does not implement.
        let calls: [(&str, i32); 7] = unsafe {
            [
                (
                    "acltdtCreateQueue",
                    acl_sys::acltdtCreateQueue(null(), &mut qid).unwrap(),
                ),
                (
                    "acltdtDestroyQueue",
                    acl_sys::acltdtDestroyQueue(0).unwrap(),
                ),
                (
                    "acltdtEnqueueData",
                    acl_sys::acltdtEnqueueData(0, data.as_ptr().cast(), 8, null(), 0, 0, 0)
                        .unwrap(),
                ),
                (
                    "acltdtAllocBuf",
                    acl_sys::acltdtAllocBuf(8, 0, &mut buf).unwrap(),
                ),
                (
                    "acltdtSendTensor",
                    acl_sys::acltdtSendTensor(null(), null(), -1).unwrap(),
                ),
                (
                    "acltdtQueryChannelSize",
                    acl_sys::acltdtQueryChannelSize(null(), &mut size).unwrap(),
                ),
                (
                    "acltdtBindQueueRoutes",
                    acl_sys::acltdtBindQueueRoutes(null_mut()).unwrap(),
                ),
            ]
        };
        // The calls ran in order; the runtime joins unread failures into
        // one text, so each is checked on a fresh thread state below.
        discard_recent_error();
        for (name, rc) in calls {
            assert_eq!(rc, ACL_ERROR_API_NOT_SUPPORT, "{name}");
        }
        assert_eq!(qid, 0, "acltdtCreateQueue wrote a queue id");
        assert!(buf.is_null(), "acltdtAllocBuf wrote a buffer");

        // SAFETY: null queue attributes are refused before any use.
        let rc = unsafe { acl_sys::acltdtCreateQueue(null(), &mut qid) }.unwrap();
        assert_eq!(rc, ACL_ERROR_API_NOT_SUPPORT);
        assert_names_itself("acltdtCreateQueue");
        // SAFETY: a null route list is refused before any use.
        let rc = unsafe { acl_sys::acltdtBindQueueRoutes(null_mut()) }.unwrap();
        assert_eq!(rc, ACL_ERROR_API_NOT_SUPPORT);
        assert_names_itself("acltdtBindQueueRoutes");
    });
}

#[test]
fn tdt_constructors_return_null_and_name_themselves() {
    cann_sim::sim_only!("the simulator does not implement the tdt API");
    on_new_thread(|| {
        install();
        // SAFETY: a NUL-terminated name.
        let channel = unsafe { acl_sys::acltdtCreateChannel(0, c"ch".as_ptr()) }.unwrap();
        assert!(channel.is_null());
        assert_names_itself("acltdtCreateChannel");
        // SAFETY: no arguments.
        let dataset = unsafe { acl_sys::acltdtCreateDataset() }.unwrap();
        assert!(dataset.is_null());
        assert_names_itself("acltdtCreateDataset");
        // SAFETY: no arguments.
        let attr = unsafe { acl_sys::acltdtCreateQueueAttr() }.unwrap();
        assert!(attr.is_null());
        assert_names_itself("acltdtCreateQueueAttr");
        // SAFETY: plain integers.
        let route = unsafe { acl_sys::acltdtCreateQueueRoute(1, 2) }.unwrap();
        assert!(route.is_null());
        assert_names_itself("acltdtCreateQueueRoute");
    });
}

#[test]
fn tdt_item_queries_return_the_released_failure_values_not_a_valid_answer() {
    cann_sim::sim_only!("the simulator does not implement the tdt API");
    on_new_thread(|| {
        install();
        // Zero would be ACL_TENSOR_DATA_TENSOR and ACL_FLOAT: valid answers.
        // SAFETY: a null item is refused before any use.
        let kind = unsafe { acl_sys::acltdtGetTensorTypeFromItem(null()) }.unwrap();
        assert_eq!(kind, ACL_TENSOR_DATA_UNDEFINED);
        assert_names_itself("acltdtGetTensorTypeFromItem");
        // SAFETY: as above.
        let dtype = unsafe { acl_sys::acltdtGetDataTypeFromItem(null()) }.unwrap();
        assert_eq!(dtype, ACL_DT_UNDEFINED);
        assert_names_itself("acltdtGetDataTypeFromItem");
        // SAFETY: as above.
        let size = unsafe { acl_sys::acltdtGetDataSizeFromItem(null()) }.unwrap();
        assert_eq!(size, 0);
        assert_names_itself("acltdtGetDataSizeFromItem");
        // SAFETY: a null dataset is refused before any use.
        let name = unsafe { acl_sys::acltdtGetDatasetName(null()) }.unwrap();
        assert!(name.is_null());
        assert_names_itself("acltdtGetDatasetName");
    });
}

//! The data-transfer API (`acltdt*`): channels of datasets between the host
//! and a device.

use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, c_void};

use super::non_null;

/// `acltdtCreateChannelWithCapacity`: a channel of at most `capacity`
/// datasets on device `device_id` (a null result is an error).
#[doc(alias = "acltdtCreateChannelWithCapacity")]
pub fn tdt_create_channel_with_capacity(
    device_id: u32,
    name: &CStr,
    capacity: usize,
) -> Result<*mut sys::acltdtChannelHandle> {
    // SAFETY: a NUL-terminated name.
    non_null("acltdtCreateChannelWithCapacity", unsafe {
        sys::acltdtCreateChannelWithCapacity(device_id, name.as_ptr(), capacity)
    }?)
}

/// `acltdtDestroyChannel`.
///
/// # Safety
///
/// `handle` came from [`tdt_create_channel_with_capacity`], is destroyed
/// once, and no call uses it any more.
#[doc(alias = "acltdtDestroyChannel")]
pub unsafe fn tdt_destroy_channel(handle: *mut sys::acltdtChannelHandle) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtDestroyChannel(handle)) }
}

/// `acltdtSendTensor`: sends `dataset` (copied), waiting up to `timeout_ms`
/// (−1: for ever, 0: not at all) for room.
///
/// # Safety
///
/// Both handles are live; the dataset's items point to memory valid for
/// their sizes.
#[doc(alias = "acltdtSendTensor")]
pub unsafe fn tdt_send_tensor(
    handle: *const sys::acltdtChannelHandle,
    dataset: *const sys::acltdtDataset,
    timeout_ms: i32,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtSendTensor(handle, dataset, timeout_ms)) }
}

/// `acltdtReceiveTensor`: receives the next dataset into `dataset`, waiting
/// up to `timeout_ms` (−1: for ever, 0: not at all).
///
/// # Safety
///
/// Both handles are live; `dataset` is empty.
#[doc(alias = "acltdtReceiveTensor")]
pub unsafe fn tdt_receive_tensor(
    handle: *const sys::acltdtChannelHandle,
    dataset: *mut sys::acltdtDataset,
    timeout_ms: i32,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtReceiveTensor(handle, dataset, timeout_ms)) }
}

/// `acltdtQueryChannelSize`: datasets waiting in the channel.
///
/// # Safety
///
/// `handle` is live.
#[doc(alias = "acltdtQueryChannelSize")]
pub unsafe fn tdt_query_channel_size(handle: *const sys::acltdtChannelHandle) -> Result<usize> {
    let mut n = 0;
    // SAFETY: the caller's contract; a valid out-pointer.
    unsafe { call!(acltdtQueryChannelSize(handle, &mut n)) }?;
    Ok(n)
}

/// `acltdtCreateDataset` (a null result is an error).
#[doc(alias = "acltdtCreateDataset")]
pub fn tdt_create_dataset() -> Result<*mut sys::acltdtDataset> {
    // SAFETY: no arguments.
    non_null("acltdtCreateDataset", unsafe {
        sys::acltdtCreateDataset()
    }?)
}

/// `acltdtDestroyDataset` (and, for a received dataset, its items).
///
/// # Safety
///
/// `dataset` came from [`tdt_create_dataset`] and is destroyed once.
#[doc(alias = "acltdtDestroyDataset")]
pub unsafe fn tdt_destroy_dataset(dataset: *mut sys::acltdtDataset) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtDestroyDataset(dataset)) }
}

/// `acltdtCreateDataItem`: an item of `size` bytes at `data` (not copied)
/// with shape `dims` (a null result is an error).
///
/// # Safety
///
/// `data` is valid for `size` bytes while the item is used.
#[doc(alias = "acltdtCreateDataItem")]
pub unsafe fn tdt_create_data_item(
    kind: sys::acltdtTensorType,
    dims: &[i64],
    data_type: sys::aclDataType,
    data: *mut c_void,
    size: usize,
) -> Result<*mut sys::acltdtDataItem> {
    // No dimensions are passed as a null pointer (a non-null one with a
    // count of 0 is refused, `tensor_data_transfer.cpp`).
    let dims_ptr = if dims.is_empty() {
        std::ptr::null()
    } else {
        dims.as_ptr()
    };
    // SAFETY: `dims_ptr` is null or valid for `dims.len()` values; the
    // caller's contract for `data`.
    non_null("acltdtCreateDataItem", unsafe {
        sys::acltdtCreateDataItem(kind, dims_ptr, dims.len(), data_type, data, size)
    }?)
}

/// `acltdtDestroyDataItem`.
///
/// # Safety
///
/// `item` came from [`tdt_create_data_item`], is destroyed once, and no
/// dataset that holds it is used any more.
#[doc(alias = "acltdtDestroyDataItem")]
pub unsafe fn tdt_destroy_data_item(item: *mut sys::acltdtDataItem) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtDestroyDataItem(item)) }
}

/// `acltdtAddDataItem`.
///
/// # Safety
///
/// Both handles are live.
#[doc(alias = "acltdtAddDataItem")]
pub unsafe fn tdt_add_data_item(
    dataset: *mut sys::acltdtDataset,
    item: *mut sys::acltdtDataItem,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acltdtAddDataItem(dataset, item)) }
}

/// `acltdtGetDatasetSize`: the number of items.
///
/// # Safety
///
/// `dataset` is live.
#[doc(alias = "acltdtGetDatasetSize")]
pub unsafe fn tdt_get_dataset_size(dataset: *const sys::acltdtDataset) -> Result<usize> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::acltdtGetDatasetSize(dataset) }?)
}

/// `acltdtGetDataItem`: item `index` (a null result is an error).
///
/// # Safety
///
/// `dataset` is live.
#[doc(alias = "acltdtGetDataItem")]
pub unsafe fn tdt_get_data_item(
    dataset: *const sys::acltdtDataset,
    index: usize,
) -> Result<*mut sys::acltdtDataItem> {
    // SAFETY: the caller's contract.
    non_null("acltdtGetDataItem", unsafe {
        sys::acltdtGetDataItem(dataset, index)
    }?)
}

/// What an item holds: its kind, data type, shape and bytes (address and
/// size), from the `acltdtGet*FromItem` calls.
///
/// # Safety
///
/// `item` is live.
#[doc(alias = "acltdtGetTensorTypeFromItem")]
#[doc(alias = "acltdtGetDataTypeFromItem")]
#[doc(alias = "acltdtGetDimNumFromItem")]
#[doc(alias = "acltdtGetDimsFromItem")]
#[doc(alias = "acltdtGetDataAddrFromItem")]
#[doc(alias = "acltdtGetDataSizeFromItem")]
pub unsafe fn tdt_item_parts(
    item: *const sys::acltdtDataItem,
) -> Result<(
    sys::acltdtTensorType,
    sys::aclDataType,
    Vec<i64>,
    *mut c_void,
    usize,
)> {
    // SAFETY: the caller's contract for every call; `dims` is valid for
    // `dim_num` values.
    unsafe {
        let kind = sys::acltdtGetTensorTypeFromItem(item)?;
        let data_type = sys::acltdtGetDataTypeFromItem(item)?;
        let dim_num = sys::acltdtGetDimNumFromItem(item)?;
        let mut dims = vec![0i64; dim_num];
        if dim_num > 0 {
            call!(acltdtGetDimsFromItem(item, dims.as_mut_ptr(), dim_num))?;
        }
        let addr = sys::acltdtGetDataAddrFromItem(item)?;
        let size = sys::acltdtGetDataSizeFromItem(item)?;
        Ok((kind, data_type, dims, addr, size))
    }
}

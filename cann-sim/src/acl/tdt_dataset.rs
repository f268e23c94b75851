//! Data items and datasets of the data-transfer API (`acl/acl_tdt.h`):
//! `acltdtCreateDataItem`, `acltdtDestroyDataItem`, `acltdtCreateDataset`,
//! `acltdtDestroyDataset`, `acltdtAddDataItem`, `acltdtGetDataItem`,
//! `acltdtGetDatasetSize`, `acltdtGetDatasetName` and the `acltdtGet*FromItem`
//! accessors, host objects with the checks and codes of hicann/runtime
//! `src/acl/acl_tdt_channel/tensor_data_transfer.cpp` (and `.h` for the
//! objects' fields).
//!
//! An item a user makes refers to the user's memory (host or device), as the
//! runtime's does: its bytes are read when the dataset is sent. A dataset
//! that received tensors owns the items it was given and their bytes
//! (`freeSelf`): destroying it destroys them, and no item can be added to it
//! (200006).

use super::common;
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup, Table};
use crate::tdt::TensorItem;
use acl_sys::{
    ACL_DT_UNDEFINED, ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM, ACL_SUCCESS,
    ACL_TENSOR_DATA_TENSOR, ACL_TENSOR_DATA_UNDEFINED, aclDataType, aclError, acltdtDataItem,
    acltdtDataset, acltdtTensorType,
};
use parking_lot::Mutex;
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

/// The most dimensions an item has (`MAX_DIM_CNT` of `acltdtCreateDataItem`).
pub const MAX_DIMS: usize = 128;

/// Where an item's bytes are.
pub(crate) enum Bytes {
    /// The user's memory, `len` bytes at `addr` (read when sent).
    User { addr: usize, len: usize },
    /// Bytes the item owns (a received tensor).
    Owned(Box<[u8]>),
}

/// An `acltdtDataItem`.
pub(crate) struct DataItem {
    pub kind: acltdtTensorType,
    pub dims: Vec<i64>,
    pub dtype: aclDataType,
    pub bytes: Bytes,
    pub slice: (u16, u16),
}

impl DataItem {
    /// The address `acltdtGetDataAddrFromItem` answers.
    fn addr(&self) -> *mut c_void {
        match &self.bytes {
            Bytes::User { addr, .. } => *addr as *mut c_void,
            Bytes::Owned(b) if b.is_empty() => std::ptr::null_mut(),
            Bytes::Owned(b) => b.as_ptr().cast_mut().cast(),
        }
    }

    /// The size `acltdtGetDataSizeFromItem` answers.
    fn size(&self) -> usize {
        match &self.bytes {
            Bytes::User { len, .. } => *len,
            Bytes::Owned(b) => b.len(),
        }
    }

    /// The item as a message part, its bytes copied.
    ///
    /// # Safety
    ///
    /// A user item's memory is readable for its length (the caller checked
    /// it, or it is the user's host memory as the runtime assumes).
    pub(crate) unsafe fn serialise(&self) -> TensorItem {
        let data = match &self.bytes {
            Bytes::User { addr, len } if *addr != 0 && *len != 0 => {
                // SAFETY: the caller's contract.
                unsafe { std::slice::from_raw_parts(*addr as *const u8, *len) }.to_vec()
            }
            Bytes::User { .. } => Vec::new(),
            Bytes::Owned(b) => b.to_vec(),
        };
        TensorItem {
            kind: self.kind,
            dims: self.dims.clone(),
            dtype: self.dtype,
            data,
            slice: self.slice,
        }
    }
}

/// Where a dataset's items live (`datasetMemType`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum MemType {
    Unknown,
    Host,
    Device,
}

/// An `acltdtDataset`.
pub(crate) struct Dataset {
    pub items: Vec<usize>,
    pub mem: MemType,
    /// The dataset owns its items (it received them).
    pub free_self: bool,
    pub name: CString,
}

pub(crate) static ITEMS: Table<DataItem> = Table::new(Default::default);
pub(crate) static DATASETS: Table<Mutex<Dataset>> = Table::new(Default::default);

/// Looks an item up: 100000 for null, destroyed or foreign handles.
pub(crate) fn item(function: &str, h: *const acltdtDataItem) -> Result<Arc<DataItem>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "dataItem"));
    }
    match ITEMS.lock().get(h as usize) {
        Lookup::Live(i) => Ok(i),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: dataItem: {}",
                handles::describe_bad("acltdtDataItem", h as usize, &bad)
            ),
        )),
    }
}

/// Looks a dataset up: 100000 for null, destroyed or foreign handles.
pub(crate) fn dataset(
    function: &str,
    h: *const acltdtDataset,
) -> Result<Arc<Mutex<Dataset>>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "dataset"));
    }
    match DATASETS.lock().get(h as usize) {
        Lookup::Live(d) => Ok(d),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: dataset: {}",
                handles::describe_bad("acltdtDataset", h as usize, &bad)
            ),
        )),
    }
}

/// Registers a received item; returns its handle.
pub(crate) fn insert_received(t: TensorItem) -> usize {
    ITEMS.lock().insert(Arc::new(DataItem {
        kind: t.kind,
        dims: t.dims,
        dtype: t.dtype,
        bytes: Bytes::Owned(t.data.into_boxed_slice()),
        slice: t.slice,
    }))
}

/// Destroys the items a dataset owns (already destroyed ones are skipped:
/// the runtime would delete them twice).
pub(crate) fn drop_owned(items: &[usize]) {
    let mut t = ITEMS.lock();
    for &h in items {
        t.remove_by(h, "acltdtDestroyDataset");
    }
}

/// `acltdtCreateDataItem`: an item of type `tdtType`. Null (with a recorded
/// reason) for `dims` null with `dimNum` > 0, `dims` given with `dimNum` 0,
/// more than 128 dimensions, or dims given for a type other than
/// `ACL_TENSOR_DATA_TENSOR`; such an item has no shape, data type or data.
///
/// # Safety
///
/// `dims` points to `dimNum` values when not null. `data` is the user's: it
/// is read when the item is sent.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateDataItem(
    tdt_type: acltdtTensorType,
    dims: *const i64,
    dim_num: usize,
    data_type: aclDataType,
    data: *mut c_void,
    size: usize,
) -> *mut acltdtDataItem {
    const F: &str = "acltdtCreateDataItem";
    let refuse = |why: String| {
        fail(ACL_ERROR_INVALID_PARAM, format!("{F}: {why}"));
        std::ptr::null_mut()
    };
    if dims.is_null() && dim_num != 0 {
        return refuse(format!(
            "dims is null but dimNum is {dim_num}: if dims is nullptr, dimNum should be 0"
        ));
    }
    if !dims.is_null() && dim_num == 0 {
        return refuse(
            "dims is not null but dimNum is 0: if dims is not nullptr, dimNum should be greater \
             than 0"
                .into(),
        );
    }
    if dim_num > MAX_DIMS {
        return refuse(format!(
            "dimNum {dim_num} is invalid; expected less than or equal to {MAX_DIMS}"
        ));
    }
    let item = if tdt_type != ACL_TENSOR_DATA_TENSOR {
        if !dims.is_null() {
            return refuse(format!(
                "dims must be nullptr for tensor type {tdt_type} (only ACL_TENSOR_DATA_TENSOR has \
                 a shape)"
            ));
        }
        DataItem {
            kind: tdt_type,
            dims: Vec::new(),
            dtype: ACL_DT_UNDEFINED,
            bytes: Bytes::User { addr: 0, len: 0 },
            slice: (0, 0),
        }
    } else {
        let dims = if dims.is_null() {
            Vec::new()
        } else {
            // SAFETY: the caller's contract: `dimNum` values at `dims`.
            unsafe { std::slice::from_raw_parts(dims, dim_num) }.to_vec()
        };
        DataItem {
            kind: tdt_type,
            dims,
            dtype: data_type,
            bytes: Bytes::User {
                addr: data as usize,
                len: size,
            },
            slice: (0, 0),
        }
    };
    ITEMS.lock().insert(Arc::new(item)) as *mut acltdtDataItem
}

/// `acltdtDestroyDataItem`: 100000 for null (and, in the sim, for a handle
/// that is not live: the runtime deletes it again).
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyDataItem(data_item: *mut acltdtDataItem) -> aclError {
    const F: &str = "acltdtDestroyDataItem";
    tri!(item(F, data_item));
    ITEMS.lock().remove_by(data_item as usize, F);
    ACL_SUCCESS
}

/// `acltdtCreateDataset`: a new, empty dataset.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateDataset() -> *mut acltdtDataset {
    DATASETS.lock().insert(Arc::new(Mutex::new(Dataset {
        items: Vec::new(),
        mem: MemType::Unknown,
        free_self: false,
        name: CString::default(),
    }))) as *mut acltdtDataset
}

/// `acltdtDestroyDataset`: 100000 for null or a handle that is not live.
/// The items of a dataset that received them are destroyed with it; the
/// items a user added are not.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyDataset(dataset: *mut acltdtDataset) -> aclError {
    const F: &str = "acltdtDestroyDataset";
    let d = tri!(self::dataset(F, dataset));
    DATASETS.lock().remove_by(dataset as usize, F);
    let d = d.lock();
    if d.free_self {
        drop_owned(&d.items);
    }
    ACL_SUCCESS
}

/// `acltdtAddDataItem`: appends an item. 100000 for a null argument or an
/// item whose memory is not on the side (host or device) of the items
/// already added; 200006 for a dataset that received tensors.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAddDataItem(
    dataset: *mut acltdtDataset,
    data_item: *mut acltdtDataItem,
) -> aclError {
    const F: &str = "acltdtAddDataItem";
    let d = tri!(self::dataset(F, dataset));
    let it = tri!(item(F, data_item));
    let mut d = d.lock();
    if d.free_self {
        return fail(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!("{F}: item cannot be added because internal item already exists"),
        );
    }
    // `rtsPointerGetAttributes`: device memory, else host.
    let mem = match &it.bytes {
        Bytes::User { addr: 0, .. } => MemType::Unknown,
        Bytes::User { addr, .. } => {
            if crate::mem::table::check_device_range(*addr, 1).is_ok() {
                MemType::Device
            } else {
                MemType::Host
            }
        }
        Bytes::Owned(_) => MemType::Host,
    };
    if d.mem == MemType::Unknown {
        d.mem = mem;
    }
    if d.mem != MemType::Unknown && mem != MemType::Unknown && d.mem != mem {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: the item's data is {mem:?} memory but the dataset's items are {:?} \
                 memory: the memTypes in the dataset must be all host-side or device-side address",
                d.mem
            ),
        );
    }
    d.items.push(data_item as usize);
    ACL_SUCCESS
}

/// `acltdtGetDataItem`: the item at `index`; null for a null dataset or an
/// index out of range.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDataItem(
    dataset: *const acltdtDataset,
    index: usize,
) -> *mut acltdtDataItem {
    const F: &str = "acltdtGetDataItem";
    let Ok(d) = self::dataset(F, dataset) else {
        return std::ptr::null_mut();
    };
    let d = d.lock();
    match d.items.get(index) {
        Some(&h) => h as *mut acltdtDataItem,
        None => {
            fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{F}: index {index} is greater than or equal to dataset size {}",
                    d.items.len()
                ),
            );
            std::ptr::null_mut()
        }
    }
}

/// `acltdtGetDatasetSize`: the number of items; 0 for a null dataset.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDatasetSize(dataset: *const acltdtDataset) -> usize {
    self::dataset("acltdtGetDatasetSize", dataset).map_or(0, |d| d.lock().items.len())
}

/// `acltdtGetDatasetName`: the dataset's name (empty: only a device sender
/// names datasets); null for a null dataset. Valid while the dataset lives.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDatasetName(dataset: *const acltdtDataset) -> *const c_char {
    self::dataset("acltdtGetDatasetName", dataset)
        .map_or(std::ptr::null(), |d| d.lock().name.as_ptr())
}

/// `acltdtGetTensorTypeFromItem`: `ACL_TENSOR_DATA_UNDEFINED` for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetTensorTypeFromItem(
    data_item: *const acltdtDataItem,
) -> acltdtTensorType {
    item("acltdtGetTensorTypeFromItem", data_item).map_or(ACL_TENSOR_DATA_UNDEFINED, |i| i.kind)
}

/// `acltdtGetDataTypeFromItem`: `ACL_DT_UNDEFINED` for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDataTypeFromItem(
    data_item: *const acltdtDataItem,
) -> aclDataType {
    item("acltdtGetDataTypeFromItem", data_item).map_or(ACL_DT_UNDEFINED, |i| i.dtype)
}

/// `acltdtGetDataAddrFromItem`: the data's address; null for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDataAddrFromItem(
    data_item: *const acltdtDataItem,
) -> *mut c_void {
    item("acltdtGetDataAddrFromItem", data_item).map_or(std::ptr::null_mut(), |i| i.addr())
}

/// `acltdtGetDataSizeFromItem`: the data's size in bytes; 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDataSizeFromItem(data_item: *const acltdtDataItem) -> usize {
    item("acltdtGetDataSizeFromItem", data_item).map_or(0, |i| i.size())
}

/// `acltdtGetDimNumFromItem`: the number of dimensions; 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDimNumFromItem(data_item: *const acltdtDataItem) -> usize {
    item("acltdtGetDimNumFromItem", data_item).map_or(0, |i| i.dims.len())
}

/// `acltdtGetDimsFromItem`: copies the shape into `dims`. 100000 for a
/// null item, `dims` null with `dimNum` > 0 or given with `dimNum` 0, or
/// `dimNum` below the item's number of dimensions.
///
/// # Safety
///
/// `dims` has room for `dimNum` values when not null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetDimsFromItem(
    data_item: *const acltdtDataItem,
    dims: *mut i64,
    dim_num: usize,
) -> aclError {
    const F: &str = "acltdtGetDimsFromItem";
    let it = tri!(item(F, data_item));
    if dims.is_null() && dim_num != 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: dims is null but dimNum is {dim_num}: if dims is nullptr, dimNum should be 0"
            ),
        );
    }
    if !dims.is_null() && dim_num == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: dims is not null but dimNum is 0: if dims is not nullptr, dimNum should be \
                 greater than 0"
            ),
        );
    }
    if dim_num < it.dims.len() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: dimNum {dim_num} cannot be less than the size of dataItem's dims {}",
                it.dims.len()
            ),
        );
    }
    if !it.dims.is_empty() {
        // SAFETY: `dims` is not null (dimNum ≥ len > 0) and has room for
        // `dimNum` ≥ `it.dims.len()` values (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(it.dims.as_ptr(), dims, it.dims.len()) };
    }
    ACL_SUCCESS
}

/// `acltdtGetSliceInfoFromItem`: the slice count and index (0 and 0 but
/// for sliced tensors a device sends). 100000 for a null argument.
///
/// # Safety
///
/// `sliceNum` and `sliceId` are valid out-pointers when not null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetSliceInfoFromItem(
    data_item: *const acltdtDataItem,
    slice_num: *mut usize,
    slice_id: *mut usize,
) -> aclError {
    const F: &str = "acltdtGetSliceInfoFromItem";
    let it = tri!(item(F, data_item));
    if slice_num.is_null() {
        return common::null_arg(F, "sliceNum");
    }
    if slice_id.is_null() {
        return common::null_arg(F, "sliceId");
    }
    // SAFETY: both are valid out-pointers (the caller's contract).
    unsafe {
        *slice_num = usize::from(it.slice.0);
        *slice_id = usize::from(it.slice.1);
    }
    ACL_SUCCESS
}

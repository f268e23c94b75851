//! Model datasets (`aclmdlDataset`): ordered lists of data buffers
//! (`aclCreateDataBuffer`) a model execution reads its inputs from or
//! writes its outputs to. `aclmdlCreateDataset`, `aclmdlDestroyDataset`,
//! `aclmdlAddDatasetBuffer`, `aclmdlGetDatasetNumBuffers`,
//! `aclmdlGetDatasetBuffer`.
//!
//! A dataset holds the buffer handles, not copies: the buffers are looked
//! up when a model runs (destroyed ones: 100000 then). Destroying a
//! dataset does not destroy its buffers.

use super::common;
use super::op_desc::BUFFERS;
use crate::faults;
use crate::recent_error::{fail, record};
use crate::rt::handles::{self, Lookup, Table};
use acl_sys::{ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclDataBuffer, aclError, aclmdlDataset};
use parking_lot::Mutex;
use std::sync::Arc;

/// The most buffers a dataset holds.
pub const MAX_DATASET_BUFFERS: usize = 4096;

pub(crate) static DATASETS: Table<Mutex<Vec<usize>>> = Table::new(Default::default);

/// Looks a dataset up.
///
/// # Errors
///
/// 100000 (recorded, naming `what`) for null, destroyed or foreign handles.
pub(crate) fn dataset(
    function: &str,
    what: &str,
    h: *const aclmdlDataset,
) -> Result<Arc<Mutex<Vec<usize>>>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, what));
    }
    match DATASETS.lock().get(h as usize) {
        Lookup::Live(d) => Ok(d),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: {what}: {}",
                handles::describe_bad("aclmdlDataset", h as usize, &bad)
            ),
        )),
    }
}

/// `aclmdlCreateDataset`: a new, empty dataset.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlCreateDataset() -> *mut aclmdlDataset {
    if faults::check("aclmdlCreateDataset").is_some() {
        return std::ptr::null_mut();
    }
    DATASETS.lock().insert(Arc::new(Mutex::new(Vec::new()))) as *mut aclmdlDataset
}

/// `aclmdlDestroyDataset`: 100000 for null or a handle that is not live.
/// Its buffers are not destroyed.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlDestroyDataset(dataset: *const aclmdlDataset) -> aclError {
    const F: &str = "aclmdlDestroyDataset";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dataset.is_null() {
        return common::null_arg(F, "dataset");
    }
    let mut t = DATASETS.lock();
    if t.remove(dataset as usize).is_some() {
        return ACL_SUCCESS;
    }
    let l = t.get(dataset as usize);
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!(
            "{F}: {}",
            handles::describe_bad("aclmdlDataset", dataset as usize, &l)
        ),
    )
}

/// `aclmdlAddDatasetBuffer`: appends a (live) data buffer.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlAddDatasetBuffer(
    dataset: *mut aclmdlDataset,
    data_buffer: *mut aclDataBuffer,
) -> aclError {
    const F: &str = "aclmdlAddDatasetBuffer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let d = tri!(dataset_arg(F, dataset));
    if data_buffer.is_null() {
        return common::null_arg(F, "dataBuffer");
    }
    if let bad @ (Lookup::Destroyed | Lookup::Unknown) = BUFFERS.lock().get(data_buffer as usize) {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: dataBuffer: {}",
                handles::describe_bad("aclDataBuffer", data_buffer as usize, &bad)
            ),
        );
    }
    let mut v = d.lock();
    if v.len() >= MAX_DATASET_BUFFERS {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: the dataset already holds {MAX_DATASET_BUFFERS} buffers, the most"),
        );
    }
    v.push(data_buffer as usize);
    ACL_SUCCESS
}

fn dataset_arg(
    function: &str,
    h: *const aclmdlDataset,
) -> Result<Arc<Mutex<Vec<usize>>>, aclError> {
    dataset(function, "dataset", h)
}

/// `aclmdlGetDatasetNumBuffers`: the number of buffers; 0 for a bad handle.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetDatasetNumBuffers(dataset: *const aclmdlDataset) -> usize {
    dataset_arg("aclmdlGetDatasetNumBuffers", dataset).map_or(0, |d| d.lock().len())
}

/// `aclmdlGetDatasetBuffer`: buffer `index`; null for a bad handle or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetDatasetBuffer(
    dataset: *const aclmdlDataset,
    index: usize,
) -> *mut aclDataBuffer {
    const F: &str = "aclmdlGetDatasetBuffer";
    let Ok(d) = dataset_arg(F, dataset) else {
        return std::ptr::null_mut();
    };
    let v = d.lock();
    match v.get(index) {
        Some(&b) => b as *mut aclDataBuffer,
        None => {
            record(format!(
                "{F}: index {index} is out of range: the dataset holds {} buffers",
                v.len()
            ));
            std::ptr::null_mut()
        }
    }
}

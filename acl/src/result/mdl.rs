//! `aclmdl*`: offline models (`.om`), their descriptions and datasets, and
//! the data buffers datasets hold.

use super::{c_string, forward_value, non_null};
use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, c_void};

/// `aclmdlQuerySize`: the (work, weight) memory a model file needs, in bytes.
#[doc(alias = "aclmdlQuerySize")]
pub fn mdl_query_size(path: &CStr) -> Result<(usize, usize)> {
    let (mut work, mut weight) = (0usize, 0usize);
    // SAFETY: NUL-terminated path; valid out-pointers.
    unsafe { call!(aclmdlQuerySize(path.as_ptr(), &mut work, &mut weight)) }?;
    Ok((work, weight))
}

/// `aclmdlQuerySizeFromMem`: the (work, weight) memory a model image needs,
/// in bytes.
#[doc(alias = "aclmdlQuerySizeFromMem")]
pub fn mdl_query_size_from_mem(data: &[u8]) -> Result<(usize, usize)> {
    let (mut work, mut weight) = (0usize, 0usize);
    // SAFETY: `data` is valid for its length; valid out-pointers.
    unsafe {
        call!(aclmdlQuerySizeFromMem(
            data.as_ptr().cast(),
            data.len(),
            &mut work,
            &mut weight
        ))
    }?;
    Ok((work, weight))
}

/// `aclmdlLoadFromFile`: loads a model on the current device, returns its id.
#[doc(alias = "aclmdlLoadFromFile")]
pub fn mdl_load_from_file(path: &CStr) -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: NUL-terminated path; valid out-pointer.
    unsafe { call!(aclmdlLoadFromFile(path.as_ptr(), &mut id)) }?;
    Ok(id)
}

/// `aclmdlLoadFromMem`: loads a model image on the current device (the
/// runtime copies what it keeps), returns its id.
#[doc(alias = "aclmdlLoadFromMem")]
pub fn mdl_load_from_mem(data: &[u8]) -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: `data` is valid for its length; valid out-pointer.
    unsafe { call!(aclmdlLoadFromMem(data.as_ptr().cast(), data.len(), &mut id)) }?;
    Ok(id)
}

/// `aclmdlLoadFromFileWithMem`: loads a model into memory the caller owns.
///
/// # Safety
///
/// `work` and `weight` are device memory of the current device of at least
/// `work_size` and `weight_size` bytes, kept alive and unused by anything
/// else until the model is unloaded.
#[doc(alias = "aclmdlLoadFromFileWithMem")]
pub unsafe fn mdl_load_from_file_with_mem(
    path: &CStr,
    work: *mut c_void,
    work_size: usize,
    weight: *mut c_void,
    weight_size: usize,
) -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: NUL-terminated path; valid out-pointer; the memory by the
    // caller's contract.
    unsafe {
        call!(aclmdlLoadFromFileWithMem(
            path.as_ptr(),
            &mut id,
            work,
            work_size,
            weight,
            weight_size
        ))
    }?;
    Ok(id)
}

/// `aclmdlLoadFromMemWithMem`: loads a model image into memory the caller
/// owns.
///
/// # Safety
///
/// As [`mdl_load_from_file_with_mem`].
#[doc(alias = "aclmdlLoadFromMemWithMem")]
pub unsafe fn mdl_load_from_mem_with_mem(
    data: &[u8],
    work: *mut c_void,
    work_size: usize,
    weight: *mut c_void,
    weight_size: usize,
) -> Result<u32> {
    let mut id = 0u32;
    // SAFETY: `data` is valid for its length; valid out-pointer; the memory
    // by the caller's contract.
    unsafe {
        call!(aclmdlLoadFromMemWithMem(
            data.as_ptr().cast(),
            data.len(),
            &mut id,
            work,
            work_size,
            weight,
            weight_size
        ))
    }?;
    Ok(id)
}

/// `aclmdlUnload`.
///
/// # Safety
///
/// `id` is a loaded model no queued work uses; it is unloaded once.
#[doc(alias = "aclmdlUnload")]
pub unsafe fn mdl_unload(id: u32) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlUnload(id)) }
}

/// `aclmdlExecute`: runs a model synchronously.
///
/// # Safety
///
/// `id` is loaded; the datasets are live and their buffers are device
/// memory of the sizes recorded, with no queued work on them.
#[doc(alias = "aclmdlExecute")]
pub unsafe fn mdl_execute(
    id: u32,
    input: *const sys::aclmdlDataset,
    output: *mut sys::aclmdlDataset,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlExecute(id, input, output)) }
}

/// `aclmdlExecuteAsync`: queues a model run on `stream`.
///
/// # Safety
///
/// As [`mdl_execute`], except that the buffers must stay alive and
/// unused by the host until the run has finished on `stream`, a live stream.
#[doc(alias = "aclmdlExecuteAsync")]
pub unsafe fn mdl_execute_async(
    id: u32,
    input: *const sys::aclmdlDataset,
    output: *mut sys::aclmdlDataset,
    stream: sys::aclrtStream,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlExecuteAsync(id, input, output, stream)) }
}

/// `aclmdlSetDynamicBatchSize`: selects a batch gear.
///
/// # Safety
///
/// `id` is loaded and `dataset` is its live input dataset whose buffer
/// `index` is the gear input.
#[doc(alias = "aclmdlSetDynamicBatchSize")]
pub unsafe fn mdl_set_dynamic_batch_size(
    id: u32,
    dataset: *mut sys::aclmdlDataset,
    index: usize,
    batch: u64,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlSetDynamicBatchSize(id, dataset, index, batch)) }
}

/// `aclmdlSetDynamicHWSize`: selects a height-width gear.
///
/// # Safety
///
/// As [`mdl_set_dynamic_batch_size`].
#[doc(alias = "aclmdlSetDynamicHWSize")]
pub unsafe fn mdl_set_dynamic_hw_size(
    id: u32,
    dataset: *mut sys::aclmdlDataset,
    index: usize,
    height: u64,
    width: u64,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlSetDynamicHWSize(id, dataset, index, height, width)) }
}

/// `aclmdlSetInputDynamicDims`: selects a dims gear.
///
/// # Safety
///
/// As [`mdl_set_dynamic_batch_size`].
#[doc(alias = "aclmdlSetInputDynamicDims")]
pub unsafe fn mdl_set_input_dynamic_dims(
    id: u32,
    dataset: *mut sys::aclmdlDataset,
    index: usize,
    dims: &sys::aclmdlIODims,
) -> Result<()> {
    // SAFETY: the caller's contract; `dims` is a valid pointer.
    unsafe { call!(aclmdlSetInputDynamicDims(id, dataset, index, dims)) }
}

/// `aclmdlCreateDataset`: an empty dataset (a null result is an error).
#[doc(alias = "aclmdlCreateDataset")]
pub fn mdl_create_dataset() -> Result<*mut sys::aclmdlDataset> {
    // SAFETY: no arguments.
    non_null("aclmdlCreateDataset", unsafe {
        sys::aclmdlCreateDataset()
    }?)
}

/// `aclmdlDestroyDataset` (not the buffers it holds).
///
/// # Safety
///
/// `dataset` came from [`mdl_create_dataset`] and is destroyed once, with
/// no run using it.
#[doc(alias = "aclmdlDestroyDataset")]
pub unsafe fn mdl_destroy_dataset(dataset: *mut sys::aclmdlDataset) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlDestroyDataset(dataset)) }
}

/// `aclmdlAddDatasetBuffer`: appends a data buffer (the dataset does not
/// take ownership).
///
/// # Safety
///
/// Both are live.
#[doc(alias = "aclmdlAddDatasetBuffer")]
pub unsafe fn mdl_add_dataset_buffer(
    dataset: *mut sys::aclmdlDataset,
    buffer: *mut sys::aclDataBuffer,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlAddDatasetBuffer(dataset, buffer)) }
}

/// `aclmdlCreateDesc`: an empty model description (a null result is an
/// error).
#[doc(alias = "aclmdlCreateDesc")]
pub fn mdl_create_desc() -> Result<*mut sys::aclmdlDesc> {
    // SAFETY: no arguments.
    non_null("aclmdlCreateDesc", unsafe { sys::aclmdlCreateDesc() }?)
}

/// `aclmdlDestroyDesc`.
///
/// # Safety
///
/// `desc` came from [`mdl_create_desc`] and is destroyed once.
#[doc(alias = "aclmdlDestroyDesc")]
pub unsafe fn mdl_destroy_desc(desc: *mut sys::aclmdlDesc) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlDestroyDesc(desc)) }
}

/// `aclmdlGetDesc`: fills `desc` with model `id`'s description.
///
/// # Safety
///
/// `desc` is live.
#[doc(alias = "aclmdlGetDesc")]
pub unsafe fn mdl_get_desc(desc: *mut sys::aclmdlDesc, id: u32) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlGetDesc(desc, id)) }
}

/// `aclmdlGetInputDims`.
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetInputDims")]
pub unsafe fn mdl_get_input_dims(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<sys::aclmdlIODims> {
    let mut dims = sys::aclmdlIODims::default();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlGetInputDims(desc, index, &mut dims)) }?;
    Ok(dims)
}

/// `aclmdlGetOutputDims`.
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetOutputDims")]
pub unsafe fn mdl_get_output_dims(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<sys::aclmdlIODims> {
    let mut dims = sys::aclmdlIODims::default();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlGetOutputDims(desc, index, &mut dims)) }?;
    Ok(dims)
}

/// `aclmdlGetInputNameByIndex`, copied (empty for a null name).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetInputNameByIndex")]
pub unsafe fn mdl_get_input_name_by_index(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<String> {
    // SAFETY: the caller's contract; the name is owned by the live
    // description and copied at once.
    Ok(unsafe { c_string(sys::aclmdlGetInputNameByIndex(desc, index)?) })
}

/// `aclmdlGetOutputNameByIndex`, copied (empty for a null name).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetOutputNameByIndex")]
pub unsafe fn mdl_get_output_name_by_index(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<String> {
    // SAFETY: as `mdl_get_input_name_by_index`.
    Ok(unsafe { c_string(sys::aclmdlGetOutputNameByIndex(desc, index)?) })
}

/// `aclmdlGetDynamicBatch`: the batch gears (none: `batchCount` 0).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetDynamicBatch")]
pub unsafe fn mdl_get_dynamic_batch(desc: *const sys::aclmdlDesc) -> Result<sys::aclmdlBatch> {
    let mut batch = sys::aclmdlBatch::default();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlGetDynamicBatch(desc, &mut batch)) }?;
    Ok(batch)
}

/// `aclmdlGetDynamicHW`: the height-width gears of input `index`
/// (`usize::MAX`: the model's).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetDynamicHW")]
pub unsafe fn mdl_get_dynamic_hw(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<sys::aclmdlHW> {
    let mut hw = sys::aclmdlHW::default();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlGetDynamicHW(desc, index, &mut hw)) }?;
    Ok(hw)
}

/// `aclmdlGetInputDynamicGearCount` (`index` `usize::MAX`: the model's).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetInputDynamicGearCount")]
pub unsafe fn mdl_get_input_dynamic_gear_count(
    desc: *const sys::aclmdlDesc,
    index: usize,
) -> Result<usize> {
    let mut count = 0usize;
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlGetInputDynamicGearCount(desc, index, &mut count)) }?;
    Ok(count)
}

/// `aclmdlGetInputDynamicDims`: fills `gears` (one entry per gear, see
/// [`mdl_get_input_dynamic_gear_count`]).
///
/// # Safety
///
/// `desc` is live and filled.
#[doc(alias = "aclmdlGetInputDynamicDims")]
pub unsafe fn mdl_get_input_dynamic_dims(
    desc: *const sys::aclmdlDesc,
    index: usize,
    gears: &mut [sys::aclmdlIODims],
) -> Result<()> {
    // SAFETY: the caller's contract; `gears` holds `gears.len()` entries.
    unsafe {
        call!(aclmdlGetInputDynamicDims(
            desc,
            index,
            gears.as_mut_ptr(),
            gears.len()
        ))
    }
}

forward_value! {
    /// `aclmdlGetDatasetNumBuffers`.
    #[doc(alias = "aclmdlGetDatasetNumBuffers")]
    mdl_get_dataset_num_buffers = aclmdlGetDatasetNumBuffers(dataset: *const sys::aclmdlDataset) -> usize;
    /// `aclmdlGetDatasetBuffer`: buffer `index` (null when out of range).
    #[doc(alias = "aclmdlGetDatasetBuffer")]
    mdl_get_dataset_buffer = aclmdlGetDatasetBuffer(dataset: *const sys::aclmdlDataset, index: usize) -> *mut sys::aclDataBuffer;
    /// `aclmdlGetNumInputs`.
    #[doc(alias = "aclmdlGetNumInputs")]
    mdl_get_num_inputs = aclmdlGetNumInputs(desc: *mut sys::aclmdlDesc) -> usize;
    /// `aclmdlGetNumOutputs`.
    #[doc(alias = "aclmdlGetNumOutputs")]
    mdl_get_num_outputs = aclmdlGetNumOutputs(desc: *mut sys::aclmdlDesc) -> usize;
    /// `aclmdlGetInputDataType`.
    #[doc(alias = "aclmdlGetInputDataType")]
    mdl_get_input_data_type = aclmdlGetInputDataType(desc: *const sys::aclmdlDesc, index: usize) -> sys::aclDataType;
    /// `aclmdlGetOutputDataType`.
    #[doc(alias = "aclmdlGetOutputDataType")]
    mdl_get_output_data_type = aclmdlGetOutputDataType(desc: *const sys::aclmdlDesc, index: usize) -> sys::aclDataType;
    /// `aclmdlGetInputFormat`.
    #[doc(alias = "aclmdlGetInputFormat")]
    mdl_get_input_format = aclmdlGetInputFormat(desc: *const sys::aclmdlDesc, index: usize) -> sys::aclFormat;
    /// `aclmdlGetOutputFormat`.
    #[doc(alias = "aclmdlGetOutputFormat")]
    mdl_get_output_format = aclmdlGetOutputFormat(desc: *const sys::aclmdlDesc, index: usize) -> sys::aclFormat;
    /// `aclmdlGetInputSizeByIndex`, in bytes.
    #[doc(alias = "aclmdlGetInputSizeByIndex")]
    mdl_get_input_size_by_index = aclmdlGetInputSizeByIndex(desc: *mut sys::aclmdlDesc, index: usize) -> usize;
    /// `aclmdlGetOutputSizeByIndex`, in bytes.
    #[doc(alias = "aclmdlGetOutputSizeByIndex")]
    mdl_get_output_size_by_index = aclmdlGetOutputSizeByIndex(desc: *mut sys::aclmdlDesc, index: usize) -> usize;
}

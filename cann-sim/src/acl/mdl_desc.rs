//! Model descriptions (`aclmdlDesc`): `aclmdlCreateDesc`,
//! `aclmdlDestroyDesc`, `aclmdlGetDesc`, and the queries of inputs and
//! outputs (counts, sizes, names, dims, data types, formats, index by name,
//! dynamic batch, height-width and dims gears).
//!
//! A description is empty until `aclmdlGetDesc` fills it from a loaded
//! model (it keeps the description after the model is unloaded). Queries
//! that return a value (a count, a size, a name, a data type, a format)
//! answer 0, null, `ACL_DT_UNDEFINED` or `ACL_FORMAT_UNDEFINED` for a null,
//! destroyed or empty description or an index out of range, and record a
//! message; queries that return an `aclError` answer
//! `ACL_ERROR_INVALID_PARAM` (100000) then.
//!
//! Sizes are those at the largest gear; dims of dimensions a gear sets are
//! `-1`. A model with gears has one more input, `ascend_mbatch_shape_data`
//! (`ACL_DYNAMIC_TENSOR_NAME`), of `int64` values.

use super::common;
use super::mdl_load::loaded;
use crate::faults;
use crate::model::{self, Format, Model, Tensor};
use crate::recent_error::{fail, record};
use crate::rt::handles::{self, Lookup, Table};
use acl_sys::{
    ACL_DT_UNDEFINED, ACL_ERROR_INVALID_PARAM, ACL_FORMAT_NCHW, ACL_FORMAT_ND, ACL_FORMAT_NHWC,
    ACL_FORMAT_UNDEFINED, ACL_MAX_BATCH_NUM, ACL_MAX_DIM_CNT, ACL_MAX_HW_NUM,
    ACL_MAX_TENSOR_NAME_LEN, ACL_SUCCESS, aclDataType, aclError, aclFormat, aclmdlBatch,
    aclmdlDesc, aclmdlHW, aclmdlIODims,
};
use parking_lot::Mutex;
use std::ffi::{CStr, CString, c_char};
use std::sync::Arc;

/// A filled description.
#[derive(Debug)]
pub(crate) struct Filled {
    model: Arc<Model>,
    input_names: Vec<CString>,
    output_names: Vec<CString>,
}

pub(crate) static DESCS: Table<Mutex<Option<Filled>>> = Table::new(Default::default);

fn cstrings(ts: &[Tensor]) -> Vec<CString> {
    // Names have no NUL byte (the loader refuses them).
    ts.iter()
        .map(|t| CString::new(t.name.as_str()).unwrap_or_default())
        .collect()
}

/// Looks a description up: `None` (recorded) for null, destroyed or foreign handles.
fn desc(function: &str, h: *const aclmdlDesc) -> Option<Arc<Mutex<Option<Filled>>>> {
    if h.is_null() {
        record(format!("{function}: modelDesc is null"));
        return None;
    }
    match DESCS.lock().get(h as usize) {
        Lookup::Live(d) => Some(d),
        bad => {
            record(format!(
                "{function}: {}",
                handles::describe_bad("aclmdlDesc", h as usize, &bad)
            ));
            None
        }
    }
}

/// Whether the tensor is an input or an output.
#[derive(Clone, Copy)]
enum Side {
    Input,
    Output,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Input => "input",
            Side::Output => "output",
        }
    }
}

/// Runs `f` on tensor `index` of `side`; `None` (recorded) when there is none.
fn with_tensor<R>(
    function: &str,
    h: *const aclmdlDesc,
    side: Side,
    index: usize,
    f: impl FnOnce(&Tensor, &CString) -> R,
) -> Option<R> {
    let d = desc(function, h)?;
    let g = d.lock();
    let Some(filled) = g.as_ref() else {
        record(format!(
            "{function}: the description is empty (fill it with aclmdlGetDesc)"
        ));
        return None;
    };
    let (ts, names) = match side {
        Side::Input => (&filled.model.inputs, &filled.input_names),
        Side::Output => (&filled.model.outputs, &filled.output_names),
    };
    match (ts.get(index), names.get(index)) {
        (Some(t), Some(n)) => Some(f(t, n)),
        _ => {
            record(format!(
                "{function}: {} index {index} is out of range: the model has {} {}s",
                side.name(),
                ts.len(),
                side.name()
            ));
            None
        }
    }
}

/// Runs `f` on the filled description; `None` (recorded) otherwise.
fn with_model<R>(function: &str, h: *const aclmdlDesc, f: impl FnOnce(&Model) -> R) -> Option<R> {
    let d = desc(function, h)?;
    let g = d.lock();
    match g.as_ref() {
        Some(filled) => Some(f(&filled.model)),
        None => {
            record(format!(
                "{function}: the description is empty (fill it with aclmdlGetDesc)"
            ));
            None
        }
    }
}

/// `aclmdlCreateDesc`: a new, empty description.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlCreateDesc() -> *mut aclmdlDesc {
    if faults::check("aclmdlCreateDesc").is_some() {
        return std::ptr::null_mut();
    }
    DESCS.lock().insert(Arc::new(Mutex::new(None))) as *mut aclmdlDesc
}

/// `aclmdlDestroyDesc`: 100000 for null or a handle that is not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlDestroyDesc(model_desc: *mut aclmdlDesc) -> aclError {
    const F: &str = "aclmdlDestroyDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_desc.is_null() {
        return common::null_arg(F, "modelDesc");
    }
    let mut t = DESCS.lock();
    if t.remove(model_desc as usize).is_some() {
        return ACL_SUCCESS;
    }
    let l = t.get(model_desc as usize);
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!(
            "{F}: {}",
            handles::describe_bad("aclmdlDesc", model_desc as usize, &l)
        ),
    )
}

/// `aclmdlGetDesc`: fills `modelDesc` with model `modelId`'s description.
///
/// # Safety
///
/// None: the handle and id are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetDesc(model_desc: *mut aclmdlDesc, model_id: u32) -> aclError {
    const F: &str = "aclmdlGetDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let Some(d) = desc(F, model_desc) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    let l = tri!(loaded(F, model_id));
    let model = l.model.clone();
    *d.lock() = Some(Filled {
        input_names: cstrings(&model.inputs),
        output_names: cstrings(&model.outputs),
        model,
    });
    ACL_SUCCESS
}

/// `aclmdlGetNumInputs`: the number of inputs (the gear input included); 0
/// for a bad description.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetNumInputs(model_desc: *mut aclmdlDesc) -> usize {
    with_model("aclmdlGetNumInputs", model_desc, |m| m.inputs.len()).unwrap_or(0)
}

/// `aclmdlGetNumOutputs`: the number of outputs; 0 for a bad description.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetNumOutputs(model_desc: *mut aclmdlDesc) -> usize {
    with_model("aclmdlGetNumOutputs", model_desc, |m| m.outputs.len()).unwrap_or(0)
}

/// `aclmdlGetInputSizeByIndex`: bytes of input `index` (at the largest
/// gear); 0 for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputSizeByIndex(
    model_desc: *mut aclmdlDesc,
    index: usize,
) -> usize {
    with_tensor(
        "aclmdlGetInputSizeByIndex",
        model_desc,
        Side::Input,
        index,
        |t, _| t.size,
    )
    .unwrap_or(0)
}

/// `aclmdlGetOutputSizeByIndex`: bytes of output `index` (at the largest
/// gear); 0 for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputSizeByIndex(
    model_desc: *mut aclmdlDesc,
    index: usize,
) -> usize {
    with_tensor(
        "aclmdlGetOutputSizeByIndex",
        model_desc,
        Side::Output,
        index,
        |t, _| t.size,
    )
    .unwrap_or(0)
}

/// `aclmdlGetInputNameByIndex`: the name of input `index`, valid until the
/// description is destroyed or filled again; null for a bad description or
/// index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputNameByIndex(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> *const c_char {
    with_tensor(
        "aclmdlGetInputNameByIndex",
        model_desc,
        Side::Input,
        index,
        |_, n| n.as_ptr(),
    )
    .unwrap_or(std::ptr::null())
}

/// `aclmdlGetOutputNameByIndex`: as `aclmdlGetInputNameByIndex`, for outputs.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputNameByIndex(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> *const c_char {
    with_tensor(
        "aclmdlGetOutputNameByIndex",
        model_desc,
        Side::Output,
        index,
        |_, n| n.as_ptr(),
    )
    .unwrap_or(std::ptr::null())
}

fn io_dims(t: &Tensor) -> aclmdlIODims {
    let mut d = aclmdlIODims::default();
    let name = t.name.as_bytes();
    let n = name.len().min(d.name.len() - 1);
    for (dst, &b) in d.name.iter_mut().zip(&name[..n]) {
        *dst = b as c_char;
    }
    let count = t.dims.len().min(d.dims.len());
    d.dimCount = count;
    d.dims[..count].copy_from_slice(&t.dims[..count]);
    d
}

fn get_dims(
    function: &str,
    h: *const aclmdlDesc,
    side: Side,
    index: usize,
    dims: *mut aclmdlIODims,
) -> aclError {
    if dims.is_null() {
        return common::null_arg(function, "dims");
    }
    match with_tensor(function, h, side, index, |t, _| io_dims(t)) {
        Some(d) => {
            // SAFETY: non-null out-pointer (the caller's contract).
            unsafe { dims.write(d) };
            ACL_SUCCESS
        }
        None => ACL_ERROR_INVALID_PARAM,
    }
}

/// `aclmdlGetInputDims`: name and dims of input `index` (`-1` for a
/// dimension a gear sets).
///
/// # Safety
///
/// `dims` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputDims(
    model_desc: *const aclmdlDesc,
    index: usize,
    dims: *mut aclmdlIODims,
) -> aclError {
    const F: &str = "aclmdlGetInputDims";
    if let Some(code) = faults::check(F) {
        return code;
    }
    get_dims(F, model_desc, Side::Input, index, dims)
}

/// `aclmdlGetOutputDims`: name and dims of output `index`.
///
/// # Safety
///
/// `dims` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputDims(
    model_desc: *const aclmdlDesc,
    index: usize,
    dims: *mut aclmdlIODims,
) -> aclError {
    const F: &str = "aclmdlGetOutputDims";
    if let Some(code) = faults::check(F) {
        return code;
    }
    get_dims(F, model_desc, Side::Output, index, dims)
}

/// `aclmdlGetInputDataType`: `ACL_DT_UNDEFINED` for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputDataType(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> aclDataType {
    with_tensor(
        "aclmdlGetInputDataType",
        model_desc,
        Side::Input,
        index,
        |t, _| t.dtype.to_acl(),
    )
    .unwrap_or(ACL_DT_UNDEFINED)
}

/// `aclmdlGetOutputDataType`: `ACL_DT_UNDEFINED` for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputDataType(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> aclDataType {
    with_tensor(
        "aclmdlGetOutputDataType",
        model_desc,
        Side::Output,
        index,
        |t, _| t.dtype.to_acl(),
    )
    .unwrap_or(ACL_DT_UNDEFINED)
}

/// `aclmdlGetInputFormat`: `ACL_FORMAT_UNDEFINED` for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputFormat(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> aclFormat {
    with_tensor(
        "aclmdlGetInputFormat",
        model_desc,
        Side::Input,
        index,
        |t, _| acl_format(t.format),
    )
    .unwrap_or(ACL_FORMAT_UNDEFINED)
}

/// `aclmdlGetOutputFormat`: `ACL_FORMAT_UNDEFINED` for a bad description or index.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputFormat(
    model_desc: *const aclmdlDesc,
    index: usize,
) -> aclFormat {
    with_tensor(
        "aclmdlGetOutputFormat",
        model_desc,
        Side::Output,
        index,
        |t, _| acl_format(t.format),
    )
    .unwrap_or(ACL_FORMAT_UNDEFINED)
}

/// The `aclFormat` of a model tensor's layout.
fn acl_format(f: Format) -> aclFormat {
    match f {
        Format::Nd => ACL_FORMAT_ND,
        Format::Nchw => ACL_FORMAT_NCHW,
        Format::Nhwc => ACL_FORMAT_NHWC,
    }
}

// The model format's limits are the sizes of the C API's arrays and name
// buffers.
const _: () = assert!(
    model::MAX_DIMS == ACL_MAX_DIM_CNT as usize
        && model::MAX_NAME_BYTES + 1 == ACL_MAX_TENSOR_NAME_LEN as usize
        && model::MAX_BATCH_GEARS == ACL_MAX_BATCH_NUM as usize
        && model::MAX_HW_GEARS == ACL_MAX_HW_NUM as usize
);

fn index_by_name(
    function: &str,
    h: *const aclmdlDesc,
    side: Side,
    name: *const c_char,
    index: *mut usize,
) -> aclError {
    if name.is_null() {
        return common::null_arg(function, "name");
    }
    if index.is_null() {
        return common::null_arg(function, "index");
    }
    // SAFETY: non-null and NUL-terminated (the caller's contract).
    let wanted = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    let found = with_model(function, h, |m| {
        let ts = match side {
            Side::Input => &m.inputs,
            Side::Output => &m.outputs,
        };
        ts.iter().position(|t| t.name == wanted)
    });
    match found {
        Some(Some(i)) => {
            // SAFETY: non-null out-pointer (the caller's contract).
            unsafe { *index = i };
            ACL_SUCCESS
        }
        Some(None) => fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: the model has no {} named {wanted:?}",
                side.name()
            ),
        ),
        None => ACL_ERROR_INVALID_PARAM,
    }
}

/// `aclmdlGetInputIndexByName`: the index of the input named `name`.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `index` null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputIndexByName(
    model_desc: *const aclmdlDesc,
    name: *const c_char,
    index: *mut usize,
) -> aclError {
    const F: &str = "aclmdlGetInputIndexByName";
    if let Some(code) = faults::check(F) {
        return code;
    }
    index_by_name(F, model_desc, Side::Input, name, index)
}

/// `aclmdlGetOutputIndexByName`: the index of the output named `name`.
///
/// # Safety
///
/// `name` is null or NUL-terminated; `index` null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetOutputIndexByName(
    model_desc: *const aclmdlDesc,
    name: *const c_char,
    index: *mut usize,
) -> aclError {
    const F: &str = "aclmdlGetOutputIndexByName";
    if let Some(code) = faults::check(F) {
        return code;
    }
    index_by_name(F, model_desc, Side::Output, name, index)
}

/// `aclmdlGetDynamicBatch`: the batch gears (`batchCount` 0 for a model
/// without them).
///
/// # Safety
///
/// `batch` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetDynamicBatch(
    model_desc: *const aclmdlDesc,
    batch: *mut aclmdlBatch,
) -> aclError {
    const F: &str = "aclmdlGetDynamicBatch";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if batch.is_null() {
        return common::null_arg(F, "batch");
    }
    let Some(b) = with_model(F, model_desc, |m| {
        let mut b = aclmdlBatch::default();
        let n = m.batch_gears.len().min(b.batch.len());
        b.batchCount = n;
        b.batch[..n].copy_from_slice(&m.batch_gears[..n]);
        b
    }) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    // SAFETY: non-null out-pointer (the caller's contract).
    unsafe { batch.write(b) };
    ACL_SUCCESS
}

/// `aclmdlGetDynamicHW`: the height-width gears (`hwCount` 0 for a model
/// without them). `index` (the input, or `-1`) is not used: a model has one
/// set of gears.
///
/// # Safety
///
/// `hw` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetDynamicHW(
    model_desc: *const aclmdlDesc,
    index: usize,
    hw: *mut aclmdlHW,
) -> aclError {
    const F: &str = "aclmdlGetDynamicHW";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let _ = index;
    if hw.is_null() {
        return common::null_arg(F, "hw");
    }
    let Some(v) = with_model(F, model_desc, |m| {
        let mut v = aclmdlHW::default();
        let n = m.hw_gears.len().min(v.hw.len());
        v.hwCount = n;
        v.hw[..n].copy_from_slice(&m.hw_gears[..n]);
        v
    }) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    // SAFETY: non-null out-pointer (the caller's contract).
    unsafe { hw.write(v) };
    ACL_SUCCESS
}

/// `aclmdlGetInputDynamicGearCount`: the number of gears of the model
/// (batch, height-width or dims; 0 without gears). `index` is `-1` (reserved) or
/// an input index; anything else is 100000.
///
/// # Safety
///
/// `gear_count` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputDynamicGearCount(
    model_desc: *const aclmdlDesc,
    index: usize,
    gear_count: *mut usize,
) -> aclError {
    const F: &str = "aclmdlGetInputDynamicGearCount";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if gear_count.is_null() {
        return common::null_arg(F, "gearCount");
    }
    let Some(r) = with_model(F, model_desc, |m| {
        if index != usize::MAX && index >= m.inputs.len() {
            return Err(index);
        }
        Ok(m.batch_gears.len() + m.hw_gears.len() + m.dims_gears.len())
    }) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    match r {
        Ok(n) => {
            // SAFETY: non-null out-pointer (the caller's contract).
            unsafe { *gear_count = n };
            ACL_SUCCESS
        }
        Err(i) => fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: index {i} is neither -1 nor an input index"),
        ),
    }
}

/// `aclmdlGetInputDynamicDims`: the dims gears, into `dims[0..gearCount]`:
/// each the dims of all data inputs (the gear input excluded),
/// concatenated, at the gear (`name` empty). `index` is `-1` (reserved) or
/// an input index; `gearCount` is the model's dims gear count
/// (`aclmdlGetInputDynamicGearCount`; 0 for a model without dims gears,
/// nothing written); anything else is 100000.
///
/// # Safety
///
/// `dims` is null or valid for `gear_count` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlGetInputDynamicDims(
    model_desc: *const aclmdlDesc,
    index: usize,
    dims: *mut aclmdlIODims,
    gear_count: usize,
) -> aclError {
    const F: &str = "aclmdlGetInputDynamicDims";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dims.is_null() && gear_count > 0 {
        return common::null_arg(F, "dims");
    }
    let Some(r) = with_model(F, model_desc, |m| {
        if index != usize::MAX && index >= m.inputs.len() {
            return Err(format!("index {index} is neither -1 nor an input index"));
        }
        if gear_count != m.dims_gears.len() {
            return Err(format!(
                "gearCount is {gear_count}; the model has {} dims gears",
                m.dims_gears.len()
            ));
        }
        Ok((0..m.dims_gears.len())
            .map(|g| {
                let shape = m.gear_shape(g);
                let mut d = aclmdlIODims::default();
                let n = shape.len().min(d.dims.len());
                d.dimCount = n;
                d.dims[..n].copy_from_slice(&shape[..n]);
                d
            })
            .collect::<Vec<_>>())
    }) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    match r {
        Ok(v) => {
            for (k, d) in v.into_iter().enumerate() {
                // SAFETY: valid for `gear_count` writes (the caller's
                // contract); `k < gear_count`.
                unsafe { dims.add(k).write(d) };
            }
            ACL_SUCCESS
        }
        Err(msg) => fail(ACL_ERROR_INVALID_PARAM, format!("{F}: {msg}")),
    }
}

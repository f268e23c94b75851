//! Tensor descriptions and data buffers: `aclCreateTensorDesc` and its
//! getters and setters, `aclCreateDataBuffer` and friends, `aclDataTypeSize`
//! (`acl_base.h`; hiascend docs "aclTensorDesc", "aclDataBuffer").
//!
//! A description is plain host data: data type, shape, format, name,
//! storage (private) format and shape, origin format and shape, shape and
//! value ranges, placement and constant data. A data buffer is an address
//! and a size. Neither touches device memory; addresses are validated when
//! an operator uses them (`op_exec`).
//!
//! Handles are looked up in tables, never dereferenced: a destroyed or
//! foreign handle is reported (100000 for functions that return a code, a
//! default value and a recorded message for getters), not undefined
//! behaviour. The real runtime's rules: getters on null return the
//! "undefined" value (`ACL_DT_UNDEFINED`, `ACL_FORMAT_UNDEFINED`, 0, null);
//! setters on null return `ACL_ERROR_INVALID_PARAM`; `aclCreateTensorDesc`
//! returns null for `numDims > 0` with null `dims`, a negative `numDims` or
//! more than `ACL_MAX_DIM_CNT` (128) dimensions; a shape of `[-2]`
//! (`ACL_UNKNOWN_RANK`) makes `aclGetTensorDescNumDims` answer
//! `ACL_UNKNOWN_RANK`.

use crate::faults;
use crate::recent_error::{fail, record};
use crate::rt::handles::{self, Lookup, Table};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_FORMAT_UNDEFINED, ACL_MAX_DIM_CNT, ACL_MAX_TENSOR_NAME_LEN,
    ACL_SUCCESS, aclDataBuffer, aclDataType, aclError, aclFormat, aclMemType, aclTensorDesc,
};
use parking_lot::Mutex;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::Arc;

/// One tensor description.
#[derive(Debug, Clone)]
pub struct TensorDesc {
    /// `aclDataType` value.
    pub dtype: aclDataType,
    /// Shape; `-1` an unknown dimension, `[-2]` an unknown rank.
    pub dims: Vec<i64>,
    /// `aclFormat` value.
    pub format: aclFormat,
    /// `aclSetTensorDescName`.
    pub name: CString,
    /// `aclSetTensorStorageFormat` (`ACL_FORMAT_UNDEFINED` when unset).
    pub storage_format: aclFormat,
    /// `aclSetTensorStorageShape`.
    pub storage_dims: Option<Vec<i64>>,
    /// `aclSetTensorOriginFormat`.
    pub origin_format: aclFormat,
    /// `aclSetTensorOriginShape`.
    pub origin_dims: Option<Vec<i64>>,
    /// `aclSetTensorShapeRange`: `[min, max]` per dimension.
    pub shape_range: Vec<[i64; 2]>,
    /// `aclSetTensorValueRange`.
    pub value_range: Vec<[i64; 2]>,
    /// `aclSetTensorPlaceMent`.
    pub placement: aclMemType,
    /// `aclSetTensorConst`: the constant value, copied at the call.
    pub const_data: Option<Vec<u8>>,
    /// `aclSetTensorDynamicInput`.
    pub dynamic_input: Option<String>,
}

impl TensorDesc {
    /// Number of elements, when every dimension is known.
    pub fn numel(&self) -> Option<usize> {
        self.dims.iter().try_fold(1usize, |acc, &d| {
            usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
    }
}

/// A data buffer: an address and a size.
#[derive(Debug, Clone, Copy)]
pub struct DataBuffer {
    /// The address (device memory, or host memory for host-placed inputs).
    pub addr: usize,
    /// Bytes.
    pub size: usize,
}

pub(crate) static DESCS: Table<Mutex<TensorDesc>> = Table::new(Default::default);
pub(crate) static BUFFERS: Table<Mutex<DataBuffer>> = Table::new(Default::default);

/// Looks a description handle up; `None` (and a recorded message) for null,
/// destroyed or foreign handles.
pub(crate) fn desc(
    function: &str,
    what: &str,
    h: *const aclTensorDesc,
) -> Option<Arc<Mutex<TensorDesc>>> {
    if h.is_null() {
        record(format!("{function}: {what} is null"));
        return None;
    }
    match DESCS.lock().get(h as usize) {
        Lookup::Live(d) => Some(d),
        bad => {
            record(format!(
                "{function}: {what}: {}",
                handles::describe_bad("aclTensorDesc", h as usize, &bad)
            ));
            None
        }
    }
}

/// Looks a data buffer handle up, as [`desc`].
pub(crate) fn buffer(
    function: &str,
    what: &str,
    h: *const aclDataBuffer,
) -> Option<Arc<Mutex<DataBuffer>>> {
    if h.is_null() {
        record(format!("{function}: {what} is null"));
        return None;
    }
    match BUFFERS.lock().get(h as usize) {
        Lookup::Live(b) => Some(b),
        bad => {
            record(format!(
                "{function}: {what}: {}",
                handles::describe_bad("aclDataBuffer", h as usize, &bad)
            ));
            None
        }
    }
}

/// Bytes per element of an `aclDataType` (0 for unknown and string types),
/// as `aclDataTypeSize` answers.
pub fn dtype_size(dt: aclDataType) -> usize {
    match dt {
        acl_sys::ACL_FLOAT | acl_sys::ACL_INT32 | acl_sys::ACL_UINT32 => 4,
        acl_sys::ACL_FLOAT16 | acl_sys::ACL_BF16 | acl_sys::ACL_INT16 | acl_sys::ACL_UINT16 => 2,
        acl_sys::ACL_INT8
        | acl_sys::ACL_UINT8
        | acl_sys::ACL_BOOL
        | acl_sys::ACL_FLOAT8_E5M2
        | acl_sys::ACL_FLOAT8_E4M3FN
        | acl_sys::ACL_FLOAT8_E8M0 => 1,
        acl_sys::ACL_INT64 | acl_sys::ACL_UINT64 | acl_sys::ACL_DOUBLE => 8,
        acl_sys::ACL_COMPLEX64 => 8,
        acl_sys::ACL_COMPLEX128 => 16,
        _ => 0,
    }
}

/// The name of an `aclDataType`, for messages.
pub fn dtype_name(dt: aclDataType) -> String {
    match dt {
        acl_sys::ACL_FLOAT => "float32".into(),
        acl_sys::ACL_FLOAT16 => "float16".into(),
        acl_sys::ACL_BF16 => "bfloat16".into(),
        acl_sys::ACL_INT8 => "int8".into(),
        acl_sys::ACL_INT16 => "int16".into(),
        acl_sys::ACL_INT32 => "int32".into(),
        acl_sys::ACL_INT64 => "int64".into(),
        acl_sys::ACL_UINT8 => "uint8".into(),
        acl_sys::ACL_UINT16 => "uint16".into(),
        acl_sys::ACL_UINT32 => "uint32".into(),
        acl_sys::ACL_UINT64 => "uint64".into(),
        acl_sys::ACL_DOUBLE => "float64".into(),
        acl_sys::ACL_BOOL => "bool".into(),
        acl_sys::ACL_DT_UNDEFINED => "undefined".into(),
        other => format!("aclDataType {other}"),
    }
}

/// The formats cann-sim knows (every `ACL_FORMAT_*` of the headers).
pub fn known_format(f: aclFormat) -> bool {
    matches!(
        f,
        acl_sys::ACL_FORMAT_UNDEFINED
            | acl_sys::ACL_FORMAT_NCHW
            | acl_sys::ACL_FORMAT_NHWC
            | acl_sys::ACL_FORMAT_ND
            | acl_sys::ACL_FORMAT_NC1HWC0
            | acl_sys::ACL_FORMAT_FRACTAL_Z
            | acl_sys::ACL_FORMAT_NC1HWC0_C04
            | acl_sys::ACL_FORMAT_HWCN
            | acl_sys::ACL_FORMAT_NDHWC
            | acl_sys::ACL_FORMAT_FRACTAL_NZ
            | acl_sys::ACL_FORMAT_NCDHW
            | acl_sys::ACL_FORMAT_NDC1HWC0
            | acl_sys::ACL_FRACTAL_Z_3D
            | acl_sys::ACL_FORMAT_NC
            | acl_sys::ACL_FORMAT_NCL
            | acl_sys::ACL_FORMAT_FRACTAL_NZ_C0_16
            | acl_sys::ACL_FORMAT_FRACTAL_NZ_C0_32
            | acl_sys::ACL_FORMAT_FRACTAL_NZ_C0_2
            | acl_sys::ACL_FORMAT_FRACTAL_NZ_C0_4
            | acl_sys::ACL_FORMAT_FRACTAL_NZ_C0_8
    )
}

/// Reads `num` dims from `dims`.
///
/// # Errors
///
/// A message for a negative count, more than `ACL_MAX_DIM_CNT`, null `dims`
/// with a positive count, or a dimension below -2 (or -2 beside others).
///
/// # Safety
///
/// `dims` is null or valid for `num` values.
pub(crate) unsafe fn read_dims(num: c_int, dims: *const i64) -> Result<Vec<i64>, String> {
    if num < 0 {
        return Err(format!("numDims {num} is negative"));
    }
    if num as u32 > ACL_MAX_DIM_CNT {
        return Err(format!(
            "numDims {num} is more than ACL_MAX_DIM_CNT ({ACL_MAX_DIM_CNT})"
        ));
    }
    if num == 0 {
        return Ok(Vec::new());
    }
    if dims.is_null() {
        return Err(format!("dims is null but numDims is {num}"));
    }
    // SAFETY: the caller's contract.
    let v = unsafe { std::slice::from_raw_parts(dims, num as usize) }.to_vec();
    if let Some(bad) = v.iter().find(|&&d| d < -2) {
        return Err(format!(
            "dimension {bad} is invalid (expected >= 0, -1 for unknown or [-2] for unknown rank)"
        ));
    }
    if v.contains(&-2) && v.len() != 1 {
        return Err(format!(
            "shape {v:?}: -2 (unknown rank) must be the only dimension"
        ));
    }
    Ok(v)
}

/// `aclCreateTensorDesc`: a new description, or null (with a message) for
/// invalid dims.
///
/// # Safety
///
/// `dims` is null or valid for `numDims` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateTensorDesc(
    data_type: aclDataType,
    num_dims: c_int,
    dims: *const i64,
    format: aclFormat,
) -> *mut aclTensorDesc {
    const F: &str = "aclCreateTensorDesc";
    if faults::check(F).is_some() {
        return std::ptr::null_mut();
    }
    // SAFETY: forwarded contract.
    let dims = match unsafe { read_dims(num_dims, dims) } {
        Ok(d) => d,
        Err(e) => {
            record(format!("{F}: {e}"));
            return std::ptr::null_mut();
        }
    };
    if !known_format(format) {
        record(format!("{F}: format {format} is not an aclFormat"));
        return std::ptr::null_mut();
    }
    let d = TensorDesc {
        dtype: data_type,
        dims,
        format,
        name: CString::default(),
        storage_format: ACL_FORMAT_UNDEFINED,
        storage_dims: None,
        origin_format: ACL_FORMAT_UNDEFINED,
        origin_dims: None,
        shape_range: Vec::new(),
        value_range: Vec::new(),
        placement: acl_sys::ACL_MEMTYPE_DEVICE,
        const_data: None,
        dynamic_input: None,
    };
    DESCS.lock().insert(Arc::new(Mutex::new(d))) as *mut aclTensorDesc
}

/// `aclDestroyTensorDesc`: null is ignored; a destroyed or foreign handle
/// records a message.
///
/// # Safety
///
/// None: the handle is looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyTensorDesc(desc: *const aclTensorDesc) {
    const F: &str = "aclDestroyTensorDesc";
    if desc.is_null() {
        return;
    }
    let removed = DESCS.lock().remove(desc as usize);
    if removed.is_none() {
        let l = DESCS.lock().get(desc as usize);
        record(format!(
            "{F}: {}",
            handles::describe_bad("aclTensorDesc", desc as usize, &l)
        ));
    }
}

fn with_desc<R>(
    f: &str,
    h: *const aclTensorDesc,
    default: R,
    get: impl FnOnce(&TensorDesc) -> R,
) -> R {
    match desc(f, "desc", h) {
        Some(d) => get(&d.lock()),
        None => default,
    }
}

fn set_desc(
    f: &str,
    h: *const aclTensorDesc,
    set: impl FnOnce(&mut TensorDesc) -> Result<(), String>,
) -> aclError {
    if let Some(code) = faults::check(f) {
        return code;
    }
    let Some(d) = desc(f, "desc", h) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    let r = set(&mut d.lock());
    match r {
        Ok(()) => ACL_SUCCESS,
        Err(e) => fail(ACL_ERROR_INVALID_PARAM, format!("{f}: {e}")),
    }
}

/// `aclGetTensorDescType`: `ACL_DT_UNDEFINED` for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescType(desc: *const aclTensorDesc) -> aclDataType {
    with_desc(
        "aclGetTensorDescType",
        desc,
        acl_sys::ACL_DT_UNDEFINED,
        |d| d.dtype,
    )
}

/// `aclGetTensorDescFormat`: `ACL_FORMAT_UNDEFINED` for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescFormat(desc: *const aclTensorDesc) -> aclFormat {
    with_desc("aclGetTensorDescFormat", desc, ACL_FORMAT_UNDEFINED, |d| {
        d.format
    })
}

/// `aclGetTensorDescSize`: elements × element size (0 for null, unknown
/// dimensions or unknown types).
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescSize(desc: *const aclTensorDesc) -> usize {
    with_desc("aclGetTensorDescSize", desc, 0, |d| {
        d.numel()
            .and_then(|n| n.checked_mul(dtype_size(d.dtype)))
            .unwrap_or(0)
    })
}

/// `aclGetTensorDescElementCount`: 0 for null or unknown dimensions.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescElementCount(desc: *const aclTensorDesc) -> usize {
    with_desc("aclGetTensorDescElementCount", desc, 0, |d| {
        d.numel().unwrap_or(0)
    })
}

/// `aclGetTensorDescNumDims`: `ACL_UNKNOWN_RANK` (as `size_t`) for `[-2]`, 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescNumDims(desc: *const aclTensorDesc) -> usize {
    with_desc("aclGetTensorDescNumDims", desc, 0, |d| {
        if d.dims == [-2] {
            acl_sys::ACL_UNKNOWN_RANK as usize
        } else {
            d.dims.len()
        }
    })
}

/// `aclGetTensorDescDim` (deprecated): the dimension, or -1 for null or an
/// index out of range.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescDim(desc: *const aclTensorDesc, index: usize) -> i64 {
    const F: &str = "aclGetTensorDescDim";
    with_desc(F, desc, -1, |d| match d.dims.get(index) {
        Some(&v) => v,
        None => {
            record(format!(
                "{F}: index {index} is out of range for a {}-dimensional tensor",
                d.dims.len()
            ));
            -1
        }
    })
}

/// `aclGetTensorDescDimV2`: 100000 for null arguments or an index out of range.
///
/// # Safety
///
/// `dim_size` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescDimV2(
    desc: *const aclTensorDesc,
    index: usize,
    dim_size: *mut i64,
) -> aclError {
    const F: &str = "aclGetTensorDescDimV2";
    if dim_size.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: dimSize is null"));
    }
    let Some(d) = self::desc(F, "desc", desc) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    let d = d.lock();
    match d.dims.get(index) {
        Some(&v) => {
            // SAFETY: non-null out-pointer (the caller's contract).
            unsafe { *dim_size = v };
            ACL_SUCCESS
        }
        None => fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: index {index} is out of range for a {}-dimensional tensor",
                d.dims.len()
            ),
        ),
    }
}

/// `aclGetTensorDescDimRange`: `[min, max]` of dimension `index` (the
/// range set by `aclSetTensorShapeRange`, else the dimension itself, or
/// `[0, -1]` for an unknown one).
///
/// # Safety
///
/// `dim_range` is null or valid for `dim_range_num` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescDimRange(
    desc: *const aclTensorDesc,
    index: usize,
    dim_range_num: usize,
    dim_range: *mut i64,
) -> aclError {
    const F: &str = "aclGetTensorDescDimRange";
    if dim_range.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: dimRange is null"));
    }
    if dim_range_num < 2 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: dimRangeNum {dim_range_num} is less than 2 ([min, max])"),
        );
    }
    let Some(d) = self::desc(F, "desc", desc) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    let d = d.lock();
    let Some(&dim) = d.dims.get(index) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: index {index} is out of range for a {}-dimensional tensor",
                d.dims.len()
            ),
        );
    };
    let range = match d.shape_range.get(index) {
        Some(r) => *r,
        None if dim >= 0 => [dim, dim],
        None => [0, -1],
    };
    // SAFETY: valid for at least 2 values (checked above, the caller's contract).
    unsafe {
        *dim_range = range[0];
        *dim_range.add(1) = range[1];
    }
    ACL_SUCCESS
}

/// `aclGetTensorDescName`: the name ("" when unset), null for null.
///
/// # Safety
///
/// None: the handle is looked up. The string lives until the name is
/// changed or the description destroyed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetTensorDescName(desc: *mut aclTensorDesc) -> *const c_char {
    with_desc("aclGetTensorDescName", desc, std::ptr::null(), |d| {
        d.name.as_ptr()
    })
}

/// `aclSetTensorDescName`: null `name` clears it; null `desc` records a message.
///
/// # Safety
///
/// `name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorDescName(desc: *mut aclTensorDesc, name: *const c_char) {
    const F: &str = "aclSetTensorDescName";
    let Some(d) = self::desc(F, "desc", desc) else {
        return;
    };
    let name = if name.is_null() {
        CString::default()
    } else {
        // SAFETY: NUL-terminated (the caller's contract).
        let s = unsafe { CStr::from_ptr(name) };
        if s.to_bytes().len() > ACL_MAX_TENSOR_NAME_LEN as usize {
            record(format!(
                "{F}: the name is {} bytes, longer than ACL_MAX_TENSOR_NAME_LEN ({ACL_MAX_TENSOR_NAME_LEN}); ignored",
                s.to_bytes().len()
            ));
            return;
        }
        s.to_owned()
    };
    d.lock().name = name;
}

fn check_format(f: aclFormat) -> Result<(), String> {
    if known_format(f) {
        Ok(())
    } else {
        Err(format!("format {f} is not an aclFormat"))
    }
}

/// `aclSetTensorFormat`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorFormat(
    desc: *mut aclTensorDesc,
    format: aclFormat,
) -> aclError {
    set_desc("aclSetTensorFormat", desc, |d| {
        check_format(format)?;
        d.format = format;
        Ok(())
    })
}

/// `aclSetTensorStorageFormat`: the private (device) format.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorStorageFormat(
    desc: *mut aclTensorDesc,
    format: aclFormat,
) -> aclError {
    set_desc("aclSetTensorStorageFormat", desc, |d| {
        check_format(format)?;
        d.storage_format = format;
        Ok(())
    })
}

/// `aclSetTensorOriginFormat`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorOriginFormat(
    desc: *mut aclTensorDesc,
    format: aclFormat,
) -> aclError {
    set_desc("aclSetTensorOriginFormat", desc, |d| {
        check_format(format)?;
        d.origin_format = format;
        Ok(())
    })
}

/// `aclSetTensorShape`.
///
/// # Safety
///
/// `dims` is null or valid for `numDims` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorShape(
    desc: *mut aclTensorDesc,
    num_dims: c_int,
    dims: *const i64,
) -> aclError {
    set_desc("aclSetTensorShape", desc, |d| {
        // SAFETY: forwarded contract.
        d.dims = unsafe { read_dims(num_dims, dims) }?;
        Ok(())
    })
}

/// `aclSetTensorStorageShape`.
///
/// # Safety
///
/// `dims` is null or valid for `numDims` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorStorageShape(
    desc: *mut aclTensorDesc,
    num_dims: c_int,
    dims: *const i64,
) -> aclError {
    set_desc("aclSetTensorStorageShape", desc, |d| {
        // SAFETY: forwarded contract.
        d.storage_dims = Some(unsafe { read_dims(num_dims, dims) }?);
        Ok(())
    })
}

/// `aclSetTensorOriginShape`.
///
/// # Safety
///
/// `dims` is null or valid for `numDims` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorOriginShape(
    desc: *mut aclTensorDesc,
    num_dims: c_int,
    dims: *const i64,
) -> aclError {
    set_desc("aclSetTensorOriginShape", desc, |d| {
        // SAFETY: forwarded contract.
        d.origin_dims = Some(unsafe { read_dims(num_dims, dims) }?);
        Ok(())
    })
}

unsafe fn read_ranges(count: usize, ranges: *mut [i64; 2]) -> Result<Vec<[i64; 2]>, String> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if ranges.is_null() {
        return Err(format!("the range array is null but its count is {count}"));
    }
    if count > ACL_MAX_DIM_CNT as usize {
        return Err(format!(
            "{count} ranges are more than ACL_MAX_DIM_CNT ({ACL_MAX_DIM_CNT})"
        ));
    }
    // SAFETY: valid for `count` pairs (the caller's contract).
    let v = unsafe { std::slice::from_raw_parts(ranges, count) }.to_vec();
    if let Some(r) = v
        .iter()
        .find(|r| r[0] < 0 || (r[1] >= 0 && r[1] < r[0]) || r[1] < -1)
    {
        return Err(format!(
            "range [{}, {}] is invalid (expected 0 <= min <= max, max -1 for unbounded)",
            r[0], r[1]
        ));
    }
    Ok(v)
}

/// `aclSetTensorShapeRange`: `[min, max]` per dimension (max -1: unbounded).
///
/// # Safety
///
/// `dim_range` is null or valid for `dims_count` pairs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorShapeRange(
    desc: *mut aclTensorDesc,
    dims_count: usize,
    dim_range: *mut [i64; 2],
) -> aclError {
    set_desc("aclSetTensorShapeRange", desc, |d| {
        // SAFETY: forwarded contract.
        let r = unsafe { read_ranges(dims_count, dim_range) }?;
        if d.dims != [-2] && r.len() != d.dims.len() {
            return Err(format!(
                "{} ranges for a {}-dimensional tensor",
                r.len(),
                d.dims.len()
            ));
        }
        d.shape_range = r;
        Ok(())
    })
}

/// `aclSetTensorValueRange`.
///
/// # Safety
///
/// `value_range` is null or valid for `value_count` pairs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorValueRange(
    desc: *mut aclTensorDesc,
    value_count: usize,
    value_range: *mut [i64; 2],
) -> aclError {
    set_desc("aclSetTensorValueRange", desc, |d| {
        if value_count > 0 && value_range.is_null() {
            return Err(format!(
                "valueRange is null but valueCount is {value_count}"
            ));
        }
        d.value_range = if value_count == 0 {
            Vec::new()
        } else {
            // SAFETY: valid for `value_count` pairs (the caller's contract).
            unsafe { std::slice::from_raw_parts(value_range, value_count) }.to_vec()
        };
        Ok(())
    })
}

/// `aclSetTensorConst`: the tensor is a constant with these bytes (copied).
///
/// # Safety
///
/// `data_buffer` is null or valid for `length` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorConst(
    desc: *mut aclTensorDesc,
    data_buffer: *mut c_void,
    length: usize,
) -> aclError {
    set_desc("aclSetTensorConst", desc, |d| {
        if data_buffer.is_null() {
            return Err("dataBuffer is null".into());
        }
        if length == 0 {
            return Err("length is 0".into());
        }
        if let Some(n) = d.numel() {
            let need = n * dtype_size(d.dtype);
            if need != 0 && length < need {
                return Err(format!(
                    "length {length} is less than the {need} bytes of a {} tensor of shape {:?}",
                    dtype_name(d.dtype),
                    d.dims
                ));
            }
        }
        // SAFETY: valid for `length` bytes (the caller's contract).
        let bytes = unsafe { std::slice::from_raw_parts(data_buffer.cast::<u8>(), length) };
        d.const_data = Some(bytes.to_vec());
        Ok(())
    })
}

/// `aclSetTensorPlaceMent`: where the data lies (device or host).
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorPlaceMent(
    desc: *mut aclTensorDesc,
    mem_type: aclMemType,
) -> aclError {
    set_desc("aclSetTensorPlaceMent", desc, |d| {
        if mem_type > acl_sys::ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT {
            return Err(format!("memType {mem_type} is not an aclMemType"));
        }
        d.placement = mem_type;
        Ok(())
    })
}

/// `aclSetTensorDynamicInput`: the name of the dynamic input this tensor belongs to.
///
/// # Safety
///
/// `dynamic_input_name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclSetTensorDynamicInput(
    desc: *mut aclTensorDesc,
    dynamic_input_name: *const c_char,
) -> aclError {
    set_desc("aclSetTensorDynamicInput", desc, |d| {
        if dynamic_input_name.is_null() {
            return Err("dynamicInputName is null".into());
        }
        // SAFETY: NUL-terminated (the caller's contract).
        let s = unsafe { CStr::from_ptr(dynamic_input_name) };
        d.dynamic_input = Some(s.to_string_lossy().into_owned());
        Ok(())
    })
}

/// `aclDataTypeSize`: bytes per element, as the release's
/// `aclDataTypeSizeImpl` (hicann/runtime `src/acl/aclrt_impl/data_buffer.cpp`)
/// answers: 0 for `ACL_STRING` and `ACL_DT_UNDEFINED`, 1 for the sub-byte
/// `ACL_UINT1` and `ACL_INT4` and the 8-bit types, 2, 4, 16 for the others
/// by width, and 8 for 64-bit types, `ACL_COMPLEX64` and any value it does
/// not name (its `default` shares the 64-bit branch).
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDataTypeSize(data_type: aclDataType) -> usize {
    use acl_sys::*;
    match data_type {
        ACL_STRING | ACL_DT_UNDEFINED => 0,
        ACL_UINT1 | ACL_INT4 | ACL_BOOL | ACL_INT8 | ACL_UINT8 | ACL_HIFLOAT8 | ACL_FLOAT8_E5M2
        | ACL_FLOAT8_E4M3FN | ACL_FLOAT8_E8M0 => 1,
        ACL_FLOAT16 | ACL_INT16 | ACL_UINT16 | ACL_BF16 => 2,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 | ACL_COMPLEX32 => 4,
        ACL_COMPLEX128 => 16,
        _ => 8,
    }
}

/// `aclCreateDataBuffer`: a buffer naming `size` bytes at `data` (null data
/// with size 0 is allowed: an empty tensor).
///
/// # Safety
///
/// None: the address is stored, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateDataBuffer(data: *mut c_void, size: usize) -> *mut aclDataBuffer {
    const F: &str = "aclCreateDataBuffer";
    if faults::check(F).is_some() {
        return std::ptr::null_mut();
    }
    if data.is_null() && size > 0 {
        record(format!("{F}: data is null but size is {size}"));
        return std::ptr::null_mut();
    }
    BUFFERS.lock().insert(Arc::new(Mutex::new(DataBuffer {
        addr: data as usize,
        size,
    }))) as *mut aclDataBuffer
}

/// `aclDestroyDataBuffer`: 100000 for null or a handle that is not live.
/// The memory it names is not freed.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyDataBuffer(data_buffer: *const aclDataBuffer) -> aclError {
    const F: &str = "aclDestroyDataBuffer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if data_buffer.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: dataBuffer is null"));
    }
    let mut t = BUFFERS.lock();
    if t.remove(data_buffer as usize).is_some() {
        return ACL_SUCCESS;
    }
    let l = t.get(data_buffer as usize);
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!(
            "{F}: {}",
            handles::describe_bad("aclDataBuffer", data_buffer as usize, &l)
        ),
    )
}

/// `aclUpdateDataBuffer`: points the buffer at new memory.
///
/// # Safety
///
/// None: the address is stored, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclUpdateDataBuffer(
    data_buffer: *mut aclDataBuffer,
    data: *mut c_void,
    size: usize,
) -> aclError {
    const F: &str = "aclUpdateDataBuffer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let Some(b) = buffer(F, "dataBuffer", data_buffer) else {
        return ACL_ERROR_INVALID_PARAM;
    };
    if data.is_null() && size > 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: data is null but size is {size}"),
        );
    }
    *b.lock() = DataBuffer {
        addr: data as usize,
        size,
    };
    ACL_SUCCESS
}

/// `aclGetDataBufferAddr`: the address; null for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDataBufferAddr(data_buffer: *const aclDataBuffer) -> *mut c_void {
    match buffer("aclGetDataBufferAddr", "dataBuffer", data_buffer) {
        Some(b) => b.lock().addr as *mut c_void,
        None => std::ptr::null_mut(),
    }
}

/// `aclGetDataBufferSizeV2`: the size; 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDataBufferSizeV2(data_buffer: *const aclDataBuffer) -> usize {
    match buffer("aclGetDataBufferSizeV2", "dataBuffer", data_buffer) {
        Some(b) => b.lock().size,
        None => 0,
    }
}

/// `aclGetDataBufferSize` (deprecated, 32-bit): the size, saturated; 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclGetDataBufferSize(data_buffer: *const aclDataBuffer) -> u32 {
    match buffer("aclGetDataBufferSize", "dataBuffer", data_buffer) {
        Some(b) => u32::try_from(b.lock().size).unwrap_or(u32::MAX),
        None => 0,
    }
}

//! `aclop*` and the objects around it: operator attributes, handles and
//! executions, tensor descriptions, and data buffers (shared with models).

use super::{c_string, forward, non_null};
use crate::error::Result;
use acl_sys as sys;
use std::ffi::{c_char, c_int, c_void};

/// `aclCreateDataBuffer`: a record of an address and a size (a null
/// result is an error). The memory is not touched.
#[doc(alias = "aclCreateDataBuffer")]
#[allow(
    clippy::not_unsafe_ptr_arg_deref,
    reason = "the runtime records the address, never dereferences it"
)]
pub fn create_data_buffer(data: *mut c_void, size: usize) -> Result<*mut sys::aclDataBuffer> {
    // SAFETY: the runtime only records the address and size.
    non_null("aclCreateDataBuffer", unsafe {
        sys::aclCreateDataBuffer(data, size)
    }?)
}

/// `aclDestroyDataBuffer` (not the memory it names).
///
/// # Safety
///
/// `buffer` came from [`create_data_buffer`], is destroyed once and is not
/// used afterwards.
#[doc(alias = "aclDestroyDataBuffer")]
pub unsafe fn destroy_data_buffer(buffer: *mut sys::aclDataBuffer) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclDestroyDataBuffer(buffer)) }
}

/// `aclopSetCompileFlag`: how `aclopCompileAndExecute` compiles.
#[doc(alias = "aclopSetCompileFlag")]
pub fn op_set_compile_flag(flag: sys::aclOpCompileFlag) -> Result<()> {
    // SAFETY: a plain integer argument.
    unsafe { call!(aclopSetCompileFlag(flag)) }
}

/// `aclopCreateAttr`: an empty attribute set (a null result is an error).
#[doc(alias = "aclopCreateAttr")]
pub fn op_create_attr() -> Result<*mut sys::aclopAttr> {
    // SAFETY: no arguments.
    non_null("aclopCreateAttr", unsafe { sys::aclopCreateAttr() }?)
}

/// `aclopDestroyAttr`.
///
/// # Safety
///
/// `attr` came from [`op_create_attr`], is destroyed once and not used
/// afterwards.
#[doc(alias = "aclopDestroyAttr")]
pub unsafe fn op_destroy_attr(attr: *mut sys::aclopAttr) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclopDestroyAttr(attr) }?)
}

forward! {
    /// `aclopSetAttrBool`.
    #[doc(alias = "aclopSetAttrBool")]
    op_set_attr_bool = aclopSetAttrBool(attr: *mut sys::aclopAttr, name: *const c_char, value: u8);
    /// `aclopSetAttrInt`.
    #[doc(alias = "aclopSetAttrInt")]
    op_set_attr_int = aclopSetAttrInt(attr: *mut sys::aclopAttr, name: *const c_char, value: i64);
    /// `aclopSetAttrFloat`.
    #[doc(alias = "aclopSetAttrFloat")]
    op_set_attr_float = aclopSetAttrFloat(attr: *mut sys::aclopAttr, name: *const c_char, value: f32);
    /// `aclopSetAttrString`.
    #[doc(alias = "aclopSetAttrString")]
    op_set_attr_string = aclopSetAttrString(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        value: *const c_char,
    );
    /// `aclopSetAttrDataType`.
    #[doc(alias = "aclopSetAttrDataType")]
    op_set_attr_data_type = aclopSetAttrDataType(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        value: sys::aclDataType,
    );
    /// `aclopSetAttrListBool`.
    #[doc(alias = "aclopSetAttrListBool")]
    op_set_attr_list_bool = aclopSetAttrListBool(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num: c_int,
        values: *const u8,
    );
    /// `aclopSetAttrListInt`.
    #[doc(alias = "aclopSetAttrListInt")]
    op_set_attr_list_int = aclopSetAttrListInt(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num: c_int,
        values: *const i64,
    );
    /// `aclopSetAttrListFloat`.
    #[doc(alias = "aclopSetAttrListFloat")]
    op_set_attr_list_float = aclopSetAttrListFloat(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num: c_int,
        values: *const f32,
    );
    /// `aclopSetAttrListString`.
    #[doc(alias = "aclopSetAttrListString")]
    op_set_attr_list_string = aclopSetAttrListString(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num: c_int,
        values: *mut *const c_char,
    );
    /// `aclopSetAttrListDataType`.
    #[doc(alias = "aclopSetAttrListDataType")]
    op_set_attr_list_data_type = aclopSetAttrListDataType(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num: c_int,
        values: *const sys::aclDataType,
    );
    /// `aclopSetAttrListListInt`.
    #[doc(alias = "aclopSetAttrListListInt")]
    op_set_attr_list_list_int = aclopSetAttrListListInt(
        attr: *mut sys::aclopAttr,
        name: *const c_char,
        num_lists: c_int,
        counts: *const c_int,
        values: *const *const i64,
    );
    /// `aclopExecWithHandle`: queues a compiled operator on `stream`; the
    /// memory must stay valid until it has run.
    #[doc(alias = "aclopExecWithHandle")]
    op_exec_with_handle = aclopExecWithHandle(
        handle: *mut sys::aclopHandle,
        num_inputs: c_int,
        inputs: *const *const sys::aclDataBuffer,
        num_outputs: c_int,
        outputs: *const *mut sys::aclDataBuffer,
        stream: sys::aclrtStream,
    );
    /// `aclopExecuteV2`: queues an operator on `stream` (the descriptions
    /// may be updated with the output shapes); the memory must stay valid
    /// until it has run.
    #[doc(alias = "aclopExecuteV2")]
    op_execute_v2 = aclopExecuteV2(
        op_type: *const c_char,
        num_inputs: c_int,
        input_desc: *mut *mut sys::aclTensorDesc,
        inputs: *mut *mut sys::aclDataBuffer,
        num_outputs: c_int,
        output_desc: *mut *mut sys::aclTensorDesc,
        outputs: *mut *mut sys::aclDataBuffer,
        attr: *mut sys::aclopAttr,
        stream: sys::aclrtStream,
    );
    /// `aclopCompileAndExecuteV2`: compiles (per the compile flag) and
    /// queues an operator, as [`op_execute_v2`].
    #[doc(alias = "aclopCompileAndExecuteV2")]
    op_compile_and_execute_v2 = aclopCompileAndExecuteV2(
        op_type: *const c_char,
        num_inputs: c_int,
        input_desc: *mut *mut sys::aclTensorDesc,
        inputs: *mut *mut sys::aclDataBuffer,
        num_outputs: c_int,
        output_desc: *mut *mut sys::aclTensorDesc,
        outputs: *mut *mut sys::aclDataBuffer,
        attr: *mut sys::aclopAttr,
        engine: sys::aclopEngineType,
        compile_flag: sys::aclopCompileType,
        op_path: *const c_char,
        stream: sys::aclrtStream,
    );
    /// `aclopCast`: queues a type conversion on `stream`.
    #[doc(alias = "aclopCast")]
    op_cast = aclopCast(
        src_desc: *const sys::aclTensorDesc,
        src: *const sys::aclDataBuffer,
        dst_desc: *const sys::aclTensorDesc,
        dst: *mut sys::aclDataBuffer,
        truncate: u8,
        stream: sys::aclrtStream,
    );
    /// `aclSetTensorShape`.
    #[doc(alias = "aclSetTensorShape")]
    set_tensor_shape = aclSetTensorShape(desc: *mut sys::aclTensorDesc, num_dims: c_int, dims: *const i64);
    /// `aclSetTensorStorageFormat`.
    #[doc(alias = "aclSetTensorStorageFormat")]
    set_tensor_storage_format = aclSetTensorStorageFormat(desc: *mut sys::aclTensorDesc, format: sys::aclFormat);
    /// `aclSetTensorStorageShape`.
    #[doc(alias = "aclSetTensorStorageShape")]
    set_tensor_storage_shape = aclSetTensorStorageShape(
        desc: *mut sys::aclTensorDesc,
        num_dims: c_int,
        dims: *const i64,
    );
    /// `aclSetTensorOriginFormat`.
    #[doc(alias = "aclSetTensorOriginFormat")]
    set_tensor_origin_format = aclSetTensorOriginFormat(desc: *mut sys::aclTensorDesc, format: sys::aclFormat);
    /// `aclSetTensorOriginShape`.
    #[doc(alias = "aclSetTensorOriginShape")]
    set_tensor_origin_shape = aclSetTensorOriginShape(
        desc: *mut sys::aclTensorDesc,
        num_dims: c_int,
        dims: *const i64,
    );
    /// `aclSetTensorShapeRange`.
    #[doc(alias = "aclSetTensorShapeRange")]
    set_tensor_shape_range = aclSetTensorShapeRange(
        desc: *mut sys::aclTensorDesc,
        count: usize,
        ranges: *mut [i64; 2],
    );
    /// `aclSetTensorConst`: the runtime copies `length` bytes of host data.
    #[doc(alias = "aclSetTensorConst")]
    set_tensor_const = aclSetTensorConst(desc: *mut sys::aclTensorDesc, data: *mut c_void, length: usize);
    /// `aclSetTensorPlaceMent`.
    #[doc(alias = "aclSetTensorPlaceMent")]
    set_tensor_place_ment = aclSetTensorPlaceMent(desc: *mut sys::aclTensorDesc, mem_type: sys::aclMemType);
}

/// `aclopCreateHandle`: compiles an operator for fixed descriptions.
///
/// # Safety
///
/// `op_type` is NUL-terminated; the description arrays hold `num_inputs`
/// and `num_outputs` live descriptions; `attr` is live.
#[doc(alias = "aclopCreateHandle")]
pub unsafe fn op_create_handle(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const sys::aclTensorDesc,
    num_outputs: c_int,
    output_desc: *const *const sys::aclTensorDesc,
    attr: *const sys::aclopAttr,
) -> Result<*mut sys::aclopHandle> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe {
        call!(aclopCreateHandle(
            op_type,
            num_inputs,
            input_desc,
            num_outputs,
            output_desc,
            attr,
            &mut handle
        ))
    }?;
    Ok(handle)
}

/// `aclopCreateHandleForCast`.
///
/// # Safety
///
/// Both descriptions are live.
#[doc(alias = "aclopCreateHandleForCast")]
pub unsafe fn op_create_handle_for_cast(
    src: *mut sys::aclTensorDesc,
    dst: *mut sys::aclTensorDesc,
    truncate: u8,
) -> Result<*mut sys::aclopHandle> {
    let mut handle = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclopCreateHandleForCast(src, dst, truncate, &mut handle)) }?;
    Ok(handle)
}

/// `aclopDestroyHandle`.
///
/// # Safety
///
/// `handle` came from [`op_create_handle`] or
/// [`op_create_handle_for_cast`], is destroyed once and not used afterwards.
#[doc(alias = "aclopDestroyHandle")]
pub unsafe fn op_destroy_handle(handle: *mut sys::aclopHandle) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclopDestroyHandle(handle) }?)
}

/// `aclCreateTensorDesc` (a null result is an error).
#[doc(alias = "aclCreateTensorDesc")]
pub fn create_tensor_desc(
    data_type: sys::aclDataType,
    dims: &[i64],
    format: sys::aclFormat,
) -> Result<*mut sys::aclTensorDesc> {
    let n = c_int::try_from(dims.len()).map_err(|_| {
        crate::Error::invalid("aclCreateTensorDesc", format!("{} dims", dims.len()))
    })?;
    // SAFETY: `dims` is valid for `n` values.
    non_null("aclCreateTensorDesc", unsafe {
        sys::aclCreateTensorDesc(data_type, n, dims.as_ptr(), format)
    }?)
}

/// `aclDestroyTensorDesc`.
///
/// # Safety
///
/// `desc` came from [`create_tensor_desc`], is destroyed once and not used
/// afterwards.
#[doc(alias = "aclDestroyTensorDesc")]
pub unsafe fn destroy_tensor_desc(desc: *mut sys::aclTensorDesc) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclDestroyTensorDesc(desc) }?)
}

/// `aclSetTensorDescName` (the runtime copies the name).
///
/// # Safety
///
/// `desc` is live; `name` is NUL-terminated.
#[doc(alias = "aclSetTensorDescName")]
pub unsafe fn set_tensor_desc_name(
    desc: *mut sys::aclTensorDesc,
    name: *const c_char,
) -> Result<()> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclSetTensorDescName(desc, name) }?)
}

/// `aclGetTensorDescName`, copied (empty for none).
///
/// # Safety
///
/// `desc` is live.
#[doc(alias = "aclGetTensorDescName")]
pub unsafe fn get_tensor_desc_name(desc: *mut sys::aclTensorDesc) -> Result<String> {
    // SAFETY: the caller's contract; the name is owned by the live
    // description and copied at once.
    Ok(unsafe { c_string(sys::aclGetTensorDescName(desc)?) })
}

/// `aclGetTensorDescNumDims` (`ACL_UNKNOWN_RANK` for an unknown rank).
///
/// # Safety
///
/// `desc` is live.
#[doc(alias = "aclGetTensorDescNumDims")]
pub unsafe fn get_tensor_desc_num_dims(desc: *const sys::aclTensorDesc) -> Result<usize> {
    // SAFETY: the caller's contract.
    Ok(unsafe { sys::aclGetTensorDescNumDims(desc) }?)
}

/// `aclGetTensorDescDimV2`: dimension `index`.
///
/// # Safety
///
/// `desc` is live.
#[doc(alias = "aclGetTensorDescDimV2")]
pub unsafe fn get_tensor_desc_dim_v2(desc: *const sys::aclTensorDesc, index: usize) -> Result<i64> {
    let mut dim = 0i64;
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclGetTensorDescDimV2(desc, index, &mut dim)) }?;
    Ok(dim)
}

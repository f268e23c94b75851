//! aclnn, CANN's two-phase operator API: the argument objects of
//! `libnnopbase.so` (`aclCreateTensor`, `aclCreateScalar`, ...) and the
//! operators of `libopapi.so` (`aclnnXxxGetWorkspaceSize` then `aclnnXxx`,
//! through [`aclnn_op!`](crate::result::aclnn_op)). Statuses are checked
//! like `aclError`s.

use crate::error::Result;
use acl_sys::aclnn as sys;
use std::ffi::c_void;
use std::ptr::NonNull;

/// The launch half of an aclnn operator, `aclnnXxx(workspace,
/// workspaceSize, executor, stream)`.
pub type AclnnLaunch = unsafe fn(
    *mut c_void,
    u64,
    *mut sys::aclOpExecutor,
    acl_sys::aclrtStream,
) -> std::result::Result<sys::aclnnStatus, acl_sys::LoadError>;

/// One aclnn operator's two functions, each named once:
/// `aclnn_op!(aclnnAddGetWorkspaceSize(a, b, alpha, out), aclnnAdd)` is
/// `((planning name, launch name), plan, launch)`, where `plan(ws, executor)`
/// calls `aclnnAddGetWorkspaceSize(a, b, alpha, out, ws, executor)` and
/// `launch` is `aclnnAdd` as an [`AclnnLaunch`]. Calling `plan` is `unsafe`
/// in substance: the arguments must be live aclnn objects, which the
/// caller's `SAFETY` comment at the use states.
macro_rules! aclnn_op {
    ($gws:ident($($arg:expr),* $(,)?), $run:ident) => {
        (
            (stringify!($gws), stringify!($run)),
            |ws: *mut u64, ex: *mut *mut $crate::result::raw::aclOpExecutor| {
                // SAFETY: the arguments are live aclnn objects (the user of
                // the macro holds them); the two out-pointers are valid.
                unsafe { ::acl_sys::aclnn::$gws($($arg,)* ws, ex) }
            },
            ::acl_sys::aclnn::$run as $crate::result::AclnnLaunch,
        )
    };
}
pub(crate) use aclnn_op;

/// `NonNull` of a created object, or `ACLNN_ERR_INNER_NULLPTR` from
/// `function`.
fn created<T>(function: &'static str, p: *mut T) -> Result<NonNull<T>> {
    NonNull::new(p).ok_or_else(|| crate::Error::from_code(function, sys::ACLNN_ERR_INNER_NULLPTR))
}

/// `aclCreateTensor`: a tensor view over device memory; the address is
/// only recorded.
#[doc(alias = "aclCreateTensor")]
#[allow(clippy::too_many_arguments, reason = "the C function's parameters")]
#[allow(
    clippy::not_unsafe_ptr_arg_deref,
    reason = "the library records the address, never dereferences it"
)]
pub fn create_tensor(
    dims: &[i64],
    data_type: acl_sys::aclDataType,
    strides: &[i64],
    offset: i64,
    format: acl_sys::aclFormat,
    storage_dims: &[i64],
    data: *mut c_void,
) -> Result<NonNull<sys::aclTensor>> {
    // SAFETY: the arrays are valid for their lengths during the call; the
    // data pointer is only recorded.
    let p = unsafe {
        sys::aclCreateTensor(
            dims.as_ptr(),
            dims.len() as u64,
            data_type,
            strides.as_ptr(),
            offset,
            format,
            storage_dims.as_ptr(),
            storage_dims.len() as u64,
            data,
        )
    }?;
    created("aclCreateTensor", p)
}

/// `aclCreateScalar`: copies one value of `data_type` from `value`.
///
/// # Safety
///
/// `value` points to one readable value of `data_type`.
#[doc(alias = "aclCreateScalar")]
pub unsafe fn create_scalar(
    value: *mut c_void,
    data_type: acl_sys::aclDataType,
) -> Result<NonNull<sys::aclScalar>> {
    // SAFETY: the caller's contract; the library copies the value.
    created("aclCreateScalar", unsafe {
        sys::aclCreateScalar(value, data_type)
    }?)
}

/// `aclCreateIntArray` (copies the values).
#[doc(alias = "aclCreateIntArray")]
pub fn create_int_array(values: &[i64]) -> Result<NonNull<sys::aclIntArray>> {
    // SAFETY: valid for `len` values; the library copies them.
    let p = unsafe { sys::aclCreateIntArray(values.as_ptr(), values.len() as u64) }?;
    created("aclCreateIntArray", p)
}

/// `aclCreateFloatArray` (copies the values).
#[doc(alias = "aclCreateFloatArray")]
pub fn create_float_array(values: &[f32]) -> Result<NonNull<sys::aclFloatArray>> {
    // SAFETY: valid for `len` values; the library copies them.
    let p = unsafe { sys::aclCreateFloatArray(values.as_ptr(), values.len() as u64) }?;
    created("aclCreateFloatArray", p)
}

/// `aclCreateBoolArray` (copies the values).
#[doc(alias = "aclCreateBoolArray")]
pub fn create_bool_array(values: &[bool]) -> Result<NonNull<sys::aclBoolArray>> {
    // SAFETY: valid for `len` values; the library copies them.
    let p = unsafe { sys::aclCreateBoolArray(values.as_ptr(), values.len() as u64) }?;
    created("aclCreateBoolArray", p)
}

/// `aclCreateTensorList`: the list takes ownership of the member tensors
/// (`aclDestroyTensorList` destroys them).
///
/// # Safety
///
/// Every entry is a live tensor that nothing else destroys afterwards.
#[doc(alias = "aclCreateTensorList")]
pub unsafe fn create_tensor_list(
    tensors: &[*const sys::aclTensor],
) -> Result<NonNull<sys::aclTensorList>> {
    // SAFETY: valid for `len` live handles during the call.
    let p = unsafe { sys::aclCreateTensorList(tensors.as_ptr(), tensors.len() as u64) }?;
    created("aclCreateTensorList", p)
}

super::forward! {
    /// `aclDestroyTensor`.
    #[doc(alias = "aclDestroyTensor")]
    destroy_tensor = aclDestroyTensor(tensor: *const sys::aclTensor);
    /// `aclDestroyTensorList`, with its member tensors.
    #[doc(alias = "aclDestroyTensorList")]
    destroy_tensor_list = aclDestroyTensorList(list: *const sys::aclTensorList);
    /// `aclDestroyScalar`.
    #[doc(alias = "aclDestroyScalar")]
    destroy_scalar = aclDestroyScalar(scalar: *const sys::aclScalar);
    /// `aclDestroyIntArray`.
    #[doc(alias = "aclDestroyIntArray")]
    destroy_int_array = aclDestroyIntArray(array: *const sys::aclIntArray);
    /// `aclDestroyFloatArray`.
    #[doc(alias = "aclDestroyFloatArray")]
    destroy_float_array = aclDestroyFloatArray(array: *const sys::aclFloatArray);
    /// `aclDestroyBoolArray`.
    #[doc(alias = "aclDestroyBoolArray")]
    destroy_bool_array = aclDestroyBoolArray(array: *const sys::aclBoolArray);
    /// `aclDestroyAclOpExecutor`: an executor whose operator will not run.
    #[doc(alias = "aclDestroyAclOpExecutor")]
    destroy_acl_op_executor = aclDestroyAclOpExecutor(executor: *mut sys::aclOpExecutor);
}

/// `aclnnCalculateMatmulWeightSizeV2`: the number of elements (not bytes) a
/// matmul weight of `shape` and `data_type` occupies after
/// `aclnnTransMatmulWeight`. One phase: no workspace, no executor.
///
/// # Safety
///
/// `shape` is a live int array.
#[doc(alias = "aclnnCalculateMatmulWeightSizeV2")]
pub unsafe fn nn_calculate_matmul_weight_size_v2(
    shape: *const sys::aclIntArray,
    data_type: acl_sys::aclDataType,
) -> Result<u64> {
    let mut size = 0u64;
    // SAFETY: `shape` is live (the caller's contract); `size` is a valid
    // out-pointer.
    crate::error::check("aclnnCalculateMatmulWeightSizeV2", unsafe {
        sys::aclnnCalculateMatmulWeightSizeV2(shape, data_type, &mut size)
    })?;
    Ok(size)
}

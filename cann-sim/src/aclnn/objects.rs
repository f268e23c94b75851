//! The aclnn objects: tensors, scalars, arrays, tensor lists, in handle tables.

#![allow(non_snake_case)]

use super::exec::{self, Obj};
use crate::ops::DType;
use crate::recent_error::fail;
use acl_sys::aclnn::{
    ACLNN_ERR_PARAM_INVALID, ACLNN_SUCCESS, aclBoolArray, aclFloatArray, aclIntArray,
    aclOpExecutor, aclScalar, aclTensor, aclTensorList, aclnnStatus,
};
use acl_sys::{aclDataType, aclFormat};
use std::ffi::c_void;
use std::sync::Arc;

/// At most this many dimensions (`op::MAX_DIM_NUM` is 8; allow more).
const MAX_DIMS: u64 = 32;
/// At most this many array elements.
const MAX_ARRAY: u64 = 1 << 24;

/// Reads `n` values at `p`: `None` (recorded) when `p` is null with `n > 0`
/// or `n` is beyond `max`.
///
/// # Safety
///
/// A non-null `p` must point at `n` readable values.
unsafe fn read<T: Copy>(
    function: &str,
    what: &str,
    p: *const T,
    n: u64,
    max: u64,
) -> Option<Vec<T>> {
    if n > max {
        fail(
            (),
            format!("{function}: {what}: {n} elements, more than the {max} supported"),
        );
        return None;
    }
    if n == 0 {
        return Some(Vec::new());
    }
    if p.is_null() {
        fail(
            (),
            format!("{function}: {what} is null but its size is {n}"),
        );
        return None;
    }
    // SAFETY: the caller guarantees `n` readable values at `p`.
    Some(unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec())
}

/// `aclCreateTensor`: a tensor over `tensorData` (not read here). Returns null
/// (with a message) for a null `viewDims`/`stride`/`storageDims` of non-zero
/// size, negative dimensions, more than 32 dimensions, or a negative offset.
/// A null `stride` means contiguous.
///
/// # Safety
///
/// Each non-null array must hold its stated number of `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateTensor(
    viewDims: *const i64,
    viewDimsNum: u64,
    dataType: aclDataType,
    stride: *const i64,
    offset: i64,
    format: aclFormat,
    storageDims: *const i64,
    storageDimsNum: u64,
    tensorData: *mut c_void,
) -> *mut aclTensor {
    const F: &str = "aclCreateTensor";
    // Counted like every runtime call (`calls::count`, the overhead bench).
    crate::calls::record(F);
    // SAFETY: forwarded caller contract.
    let Some(view) = (unsafe { read(F, "viewDims", viewDims, viewDimsNum, MAX_DIMS) }) else {
        return std::ptr::null_mut();
    };
    let strides = if stride.is_null() {
        exec::contiguous_strides(&view)
    } else {
        // SAFETY: forwarded caller contract (`viewDimsNum` strides).
        match unsafe { read(F, "stride", stride, viewDimsNum, MAX_DIMS) } {
            Some(s) => s,
            None => return std::ptr::null_mut(),
        }
    };
    // SAFETY: forwarded caller contract.
    let Some(storage) = (unsafe { read(F, "storageDims", storageDims, storageDimsNum, MAX_DIMS) })
    else {
        return std::ptr::null_mut();
    };
    if let Some(d) = view.iter().chain(&storage).find(|&&d| d < 0) {
        fail((), format!("{F}: dimension {d} is negative"));
        return std::ptr::null_mut();
    }
    if offset < 0 {
        fail((), format!("{F}: offset {offset} is negative"));
        return std::ptr::null_mut();
    }
    exec::insert(Obj::Tensor(exec::TensorObj {
        dtype: dataType,
        view,
        strides,
        offset,
        format,
        storage,
        addr: tensorData as usize,
    })) as *mut aclTensor
}

/// `aclDestroyTensor`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyTensor(tensor: *const aclTensor) -> aclnnStatus {
    exec::destroy(
        "aclDestroyTensor",
        "tensor",
        tensor as usize,
        exec::Kind::Tensor,
    )
}

/// `aclCreateScalar`: copies the value (of `dataType`'s size) at `value`.
/// Null for a null `value` or a data type the simulator does not know.
///
/// # Safety
///
/// A non-null `value` must point at one value of `dataType`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateScalar(
    value: *mut c_void,
    dataType: aclDataType,
) -> *mut aclScalar {
    const F: &str = "aclCreateScalar";
    // Counted like every runtime call (`calls::count`, the overhead bench).
    crate::calls::record(F);
    let Some(dtype) = DType::from_acl(dataType) else {
        fail((), format!("{F}: data type {dataType} is not supported"));
        return std::ptr::null_mut();
    };
    // SAFETY: forwarded caller contract (one value of `dtype`).
    let Some(bytes) = (unsafe { read(F, "value", value as *const u8, dtype.size() as u64, 16) })
    else {
        return std::ptr::null_mut();
    };
    exec::insert(Obj::Scalar(dtype, bytes)) as *mut aclScalar
}

/// `aclDestroyScalar`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyScalar(scalar: *const aclScalar) -> aclnnStatus {
    exec::destroy(
        "aclDestroyScalar",
        "scalar",
        scalar as usize,
        exec::Kind::Scalar,
    )
}

/// `aclCreateIntArray`.
///
/// # Safety
///
/// A non-null `value` must hold `size` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateIntArray(value: *const i64, size: u64) -> *mut aclIntArray {
    crate::calls::record("aclCreateIntArray");
    // SAFETY: forwarded caller contract.
    match unsafe { read("aclCreateIntArray", "value", value, size, MAX_ARRAY) } {
        Some(v) => exec::insert(Obj::IntArray(v)) as *mut aclIntArray,
        None => std::ptr::null_mut(),
    }
}

/// `aclDestroyIntArray`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyIntArray(array: *const aclIntArray) -> aclnnStatus {
    exec::destroy(
        "aclDestroyIntArray",
        "array",
        array as usize,
        exec::Kind::IntArray,
    )
}

/// `aclCreateFloatArray`.
///
/// # Safety
///
/// A non-null `value` must hold `size` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateFloatArray(value: *const f32, size: u64) -> *mut aclFloatArray {
    crate::calls::record("aclCreateFloatArray");
    // SAFETY: forwarded caller contract.
    match unsafe { read("aclCreateFloatArray", "value", value, size, MAX_ARRAY) } {
        Some(v) => exec::insert(Obj::FloatArray(v)) as *mut aclFloatArray,
        None => std::ptr::null_mut(),
    }
}

/// `aclDestroyFloatArray`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyFloatArray(array: *const aclFloatArray) -> aclnnStatus {
    exec::destroy(
        "aclDestroyFloatArray",
        "array",
        array as usize,
        exec::Kind::FloatArray,
    )
}

/// `aclCreateBoolArray` (each byte non-zero is true).
///
/// # Safety
///
/// A non-null `value` must hold `size` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateBoolArray(value: *const bool, size: u64) -> *mut aclBoolArray {
    crate::calls::record("aclCreateBoolArray");
    // SAFETY: forwarded caller contract; read as bytes so that any byte is valid.
    match unsafe {
        read(
            "aclCreateBoolArray",
            "value",
            value as *const u8,
            size,
            MAX_ARRAY,
        )
    } {
        Some(v) => exec::insert(Obj::BoolArray(v.into_iter().map(|b| b != 0).collect()))
            as *mut aclBoolArray,
        None => std::ptr::null_mut(),
    }
}

/// `aclDestroyBoolArray`.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyBoolArray(array: *const aclBoolArray) -> aclnnStatus {
    exec::destroy(
        "aclDestroyBoolArray",
        "array",
        array as usize,
        exec::Kind::BoolArray,
    )
}

/// `aclCreateTensorList`: every element must be a live tensor. The list
/// owns them: `aclDestroyTensorList` destroys them too, and they must not be
/// destroyed again (as in CANN). Null for a null or unknown element.
///
/// # Safety
///
/// A non-null `value` must hold `size` pointers (which are looked up).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclCreateTensorList(
    value: *const *const aclTensor,
    size: u64,
) -> *mut aclTensorList {
    const F: &str = "aclCreateTensorList";
    // Counted like every runtime call (`calls::count`, the overhead bench).
    crate::calls::record(F);
    // SAFETY: forwarded caller contract.
    let Some(ptrs) = (unsafe { read(F, "value", value, size, MAX_ARRAY) }) else {
        return std::ptr::null_mut();
    };
    let mut tensors: Vec<Arc<Obj>> = Vec::with_capacity(ptrs.len());
    for (i, p) in ptrs.iter().enumerate() {
        match exec::tensor_arg(F, &format!("tensor {i}"), *p as usize) {
            Ok(t) => tensors.push(t),
            Err(_) => return std::ptr::null_mut(),
        }
    }
    exec::insert(Obj::TensorList(tensors)) as *mut aclTensorList
}

/// `aclDestroyTensorList`: destroys the list and its member tensors (see
/// `exec::destroy` for members destroyed before).
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyTensorList(array: *const aclTensorList) -> aclnnStatus {
    exec::destroy(
        "aclDestroyTensorList",
        "list",
        array as usize,
        exec::Kind::TensorList,
    )
}

/// `aclDestroyAclOpExecutor`: releases an executor that will not run. One
/// that ran (`aclnnXxx` consumes it) is not live any more: 161002, a
/// `double-destroy` report with the check on.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclDestroyAclOpExecutor(executor: *mut aclOpExecutor) -> aclnnStatus {
    match exec::destroy(
        "aclDestroyAclOpExecutor",
        "executor",
        executor as usize,
        exec::Kind::Executor,
    ) {
        ACLNN_SUCCESS => ACLNN_SUCCESS,
        // The report's message stays.
        rc if crate::check::enabled() => rc,
        _ => fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "aclDestroyAclOpExecutor: {executor:p} is not a live executor (executors run once)"
            ),
        ),
    }
}

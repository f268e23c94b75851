// Hand-written declarations of aclnn's core, `libnnopbase.so` (header
// `aclnn/acl_meta.h`: tensors, scalars, arrays, executors, status codes),
// the input of `cargo xtask bindgen` / `cargo xtask generate`, which turn
// them into `src/aclnn/bindings.rs`. The aclnn headers ship with the CANN
// toolkit only, so this is written from the documented API and checked
// against the CANN 8.1.RC1 headers (`aclnn/acl_meta.h`,
// `aclnn/opdev/op_errno.h`), whose pointer constness it follows.
//
// The operators themselves are described in `operators.toml` (one entry per
// operator, with the page its signature comes from) and appended to these
// declarations by `cargo xtask generate`.
//
// Rules for this file: items only (no `use`), fully-qualified types
// (`crate::aclDataType`, `::core::ffi::c_void`).

// ---------------------------------------------------------------------------
// Status codes (`aclnnStatus`, documented in "aclnn return codes").
// ---------------------------------------------------------------------------

/// The return type of every aclnn function.
pub type aclnnStatus = i32;
/// Success.
pub const ACLNN_SUCCESS: aclnnStatus = 0;
/// A parameter is an illegal null pointer.
pub const ACLNN_ERR_PARAM_NULLPTR: aclnnStatus = 161001;
/// A parameter is invalid (dtypes that do not combine, shapes, a bad handle).
pub const ACLNN_ERR_PARAM_INVALID: aclnnStatus = 161002;
/// A call into the NPU runtime failed.
pub const ACLNN_ERR_RUNTIME_ERROR: aclnnStatus = 361001;
/// Internal error.
pub const ACLNN_ERR_INNER: aclnnStatus = 561000;
/// Internal error: output shape inference failed.
pub const ACLNN_ERR_INNER_INFERSHAPE_ERROR: aclnnStatus = 561001;
/// Internal error: tiling failed.
pub const ACLNN_ERR_INNER_TILING_ERROR: aclnnStatus = 561002;
/// Internal error: no NPU kernel found (the operator package is missing).
pub const ACLNN_ERR_INNER_FIND_KERNEL_ERROR: aclnnStatus = 561003;
/// Internal error: creating the `aclOpExecutor` failed.
pub const ACLNN_ERR_INNER_CREATE_EXECUTOR: aclnnStatus = 561101;
/// Internal error: the executor was not handed over (`ReleaseTo` not called).
pub const ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR: aclnnStatus = 561102;
/// Internal error: an internal null pointer.
pub const ACLNN_ERR_INNER_NULLPTR: aclnnStatus = 561103;

/// `cubeMathType` 0: keep the input dtype (fail when the Cube unit cannot).
pub const KEEP_DTYPE: i8 = 0;
/// `cubeMathType` 1: allow converting fp32 to a lower precision.
pub const ALLOW_FP32_DOWN_PRECISION: i8 = 1;
/// `cubeMathType` 2: compute fp32 as fp16.
pub const USE_FP16: i8 = 2;
/// `cubeMathType` 3: compute fp32 as HFLOAT32.
pub const USE_HF32: i8 = 3;

// ---------------------------------------------------------------------------
// Opaque objects.
// ---------------------------------------------------------------------------

/// A tensor: a view (dims, strides, offset) over device memory.
#[repr(C)]
#[derive(Debug)]
pub struct aclTensor {
    _unused: [u8; 0],
}

/// A host scalar of an `aclDataType`.
#[repr(C)]
#[derive(Debug)]
pub struct aclScalar {
    _unused: [u8; 0],
}

/// An array of `int64_t`.
#[repr(C)]
#[derive(Debug)]
pub struct aclIntArray {
    _unused: [u8; 0],
}

/// An array of `float`.
#[repr(C)]
#[derive(Debug)]
pub struct aclFloatArray {
    _unused: [u8; 0],
}

/// An array of `bool`.
#[repr(C)]
#[derive(Debug)]
pub struct aclBoolArray {
    _unused: [u8; 0],
}

/// A list of tensors.
#[repr(C)]
#[derive(Debug)]
pub struct aclTensorList {
    _unused: [u8; 0],
}

/// The plan of one operator call, made by its `GetWorkspaceSize` phase.
#[repr(C)]
#[derive(Debug)]
pub struct aclOpExecutor {
    _unused: [u8; 0],
}

unsafe extern "C" {
    pub fn aclCreateTensor(viewDims: *const i64, viewDimsNum: u64, dataType: crate::aclDataType, stride: *const i64, offset: i64, format: crate::aclFormat, storageDims: *const i64, storageDimsNum: u64, tensorData: *mut ::core::ffi::c_void) -> *mut aclTensor;
    pub fn aclDestroyTensor(tensor: *const aclTensor) -> aclnnStatus;
    pub fn aclCreateScalar(value: *mut ::core::ffi::c_void, dataType: crate::aclDataType) -> *mut aclScalar;
    pub fn aclDestroyScalar(scalar: *const aclScalar) -> aclnnStatus;
    pub fn aclCreateIntArray(value: *const i64, size: u64) -> *mut aclIntArray;
    pub fn aclDestroyIntArray(array: *const aclIntArray) -> aclnnStatus;
    pub fn aclCreateFloatArray(value: *const f32, size: u64) -> *mut aclFloatArray;
    pub fn aclDestroyFloatArray(array: *const aclFloatArray) -> aclnnStatus;
    pub fn aclCreateBoolArray(value: *const bool, size: u64) -> *mut aclBoolArray;
    pub fn aclDestroyBoolArray(array: *const aclBoolArray) -> aclnnStatus;
    pub fn aclCreateTensorList(value: *const *const aclTensor, size: u64) -> *mut aclTensorList;
    pub fn aclDestroyTensorList(array: *const aclTensorList) -> aclnnStatus;
    pub fn aclDestroyAclOpExecutor(executor: *mut aclOpExecutor) -> aclnnStatus;
    /// `libopapi.so`'s one-phase helper (not an operator of the table): the
    /// number of elements a matmul weight of `tensorShape` and `dataType`
    /// occupies after `aclnnTransMatmulWeight` (hicann/ops-math
    /// `conversion/trans_data/docs/aclnnCalculateMatmulWeightSizeV2.md`).
    pub fn aclnnCalculateMatmulWeightSizeV2(tensorShape: *const aclIntArray, dataType: crate::aclDataType, weightTensorSize: *mut u64) -> aclnnStatus;
}

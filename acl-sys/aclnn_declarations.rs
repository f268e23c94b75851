// Hand-written declarations of the aclnn API: the core of `libnnopbase.so`
// (header `aclnn/acl_meta.h`: tensors, scalars, arrays, executors) and the
// operators of `libopapi.so` (headers `aclnnop/aclnn_*.h`), the input of
// `cargo xtask bindgen`, which turns them into `src/aclnn/bindings.rs`. The
// aclnn headers ship with the CANN toolkit only, so the subset torch_npu's
// op-plugin calls for the simulator's operator set is declared here by hand
// from the documented API (names and argument orders as in the CANN aclnn
// reference and torch_npu's `EXEC_NPU_CMD` call sites), and checked against
// the CANN 8.1.RC1 headers (`aclnn/acl_meta.h`, `aclnn/opdev/op_errno.h`,
// `aclnnop/aclnn_*.h`), whose pointer constness they follow: e.g. `out` of
// `aclnnRelu` and `selfRef` of `aclnnInplaceOne` are `const aclTensor*` there.
//
// The operators of a transformer decoder (`examples/llm_forward.rs`), from
// the CANN aclnn reference (hiascend.com, `.../API/aolapi/context/<name>.md`)
// and the operator documents of hicann's open repositories:
// - aclnnEmbedding: hicann/ops-nn `index/gather_v2/docs/aclnnEmbedding.md`;
// - aclnnRmsNorm: `aolapi/context/aclnnRmsNorm.md` (CANN 8.0.RC2..8.3) and
//   the 8.1.RC1 header `aclnnop/aclnn_rms_norm.h`;
// - aclnnRotaryPositionEmbedding: `aolapi/context/aclnnRotaryPositionEmbedding.md`
//   (CANN 8.3.RC1, 8.5.0) and ops-transformer
//   `posembedding/rotary_position_embedding/docs/aclnnRotaryPositionEmbedding.md`;
// - aclnnSwiGlu: the 8.1.RC1 header `aclnnop/aclnn_swi_glu.h`;
// - aclnnArgMax: the 8.1.RC1 header `aclnnop/aclnn_argmax.h`;
// - aclnnInplaceCopy: the 8.1.RC1 header `aclnnop/aclnn_copy.h` and hicann/ops-math
//   `conversion/view_copy/docs/aclnnInplaceCopy.md`;
// - aclnnMuls: the 8.1.RC1 header `aclnnop/aclnn_mul.h`;
// - aclnnInplaceMaskedFillScalar: `aolapi/context/aclnnInplaceMaskedFillScalar.md`
//   (`aclnnop/aclnn_masked_fill_scalar.h`).
//
// The in-place forms of the elementwise operators (`selfRef` is input and
// output; `other` broadcasts to `selfRef`'s shape), from the CANN aclnn
// reference pages `aolapi/context/aclnnXxx&aclnnInplaceXxx.md` (all in the
// CANN 8.0.0 reference; InplaceAdd, InplaceMuls and InplaceRsqrt already in
// the 23.0.RC2 application development guide) and, for the parameter names and
// constness, the headers of hicann's open operator repositories:
// - aclnnInplaceAdd, aclnnInplaceSub: hicann/ops-math `math/add/op_api/aclnn_add.h`
//   (`selfRef` is `const aclTensor*` there), `math/sub/op_api/aclnn_sub.h`, and
//   the documents `math/{add,sub}/docs/aclnn{Add,Sub}&aclnnInplace{Add,Sub}.md`;
// - aclnnInplaceMul, aclnnInplaceMuls: ops-math `math/mul/op_api/aclnn_mul.h`,
//   `math/mul/docs/aclnnMul&aclnnInplaceMul.md`, `math/muls/docs/aclnnMuls&aclnnInplaceMuls.md`;
// - aclnnInplaceDiv: ops-math `math/div/op_api/aclnn_div.h`;
// - aclnnInplaceExp, aclnnInplaceLog, aclnnInplaceSqrt, aclnnInplaceRsqrt,
//   aclnnInplaceNeg, aclnnInplaceTanh: ops-math `math/<op>/op_api/aclnn_<op>.h`
//   (InplaceSqrt names its parameter `self` there);
// - aclnnInplaceRelu, aclnnInplaceSigmoid: hicann/ops-nn
//   `activation/{relu,sigmoid}/op_api/aclnn_{relu,sigmoid}.h`.
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
    pub fn aclnnAddGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnAdd(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnSubGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnSub(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMulGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMul(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnDivGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnDiv(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMaximumGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMaximum(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMinimumGetWorkspaceSize(self_: *const aclTensor, other: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMinimum(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnNegGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnNeg(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnAbsGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnAbs(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnExpGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnExp(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnLogGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnLog(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnSqrtGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnSqrt(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnRsqrtGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnRsqrt(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnReluGetWorkspaceSize(self_: *const aclTensor, out: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnRelu(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnSigmoidGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnSigmoid(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnTanhGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnTanh(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnGeluGetWorkspaceSize(self_: *const aclTensor, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnGelu(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnThresholdBackwardGetWorkspaceSize(gradOutput: *const aclTensor, self_: *const aclTensor, threshold: *const aclScalar, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnThresholdBackward(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnCastGetWorkspaceSize(self_: *const aclTensor, dtype: crate::aclDataType, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnCast(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMatmulGetWorkspaceSize(self_: *const aclTensor, mat2: *const aclTensor, out: *mut aclTensor, cubeMathType: i8, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMatmul(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnBatchMatMulGetWorkspaceSize(self_: *const aclTensor, mat2: *const aclTensor, out: *mut aclTensor, cubeMathType: i8, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnBatchMatMul(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnReduceSumGetWorkspaceSize(self_: *const aclTensor, dims: *const aclIntArray, keepDims: bool, dtype: crate::aclDataType, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnReduceSum(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMeanGetWorkspaceSize(self_: *const aclTensor, dim: *const aclIntArray, keepDim: bool, dtype: crate::aclDataType, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMean(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnAmaxGetWorkspaceSize(self_: *const aclTensor, dim: *const aclIntArray, keepDim: bool, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnAmax(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnSoftmaxGetWorkspaceSize(self_: *const aclTensor, dim: i64, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnSoftmax(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnLogSoftmaxGetWorkspaceSize(self_: *const aclTensor, dim: i64, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnLogSoftmax(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnPermuteGetWorkspaceSize(self_: *const aclTensor, dims: *const aclIntArray, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnPermute(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceFillScalarGetWorkspaceSize(selfRef: *mut aclTensor, value: *const aclScalar, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceFillScalar(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceZeroGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceZero(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceOneGetWorkspaceSize(selfRef: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceOne(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnEmbeddingGetWorkspaceSize(weight: *const aclTensor, indices: *const aclTensor, out: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnEmbedding(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnRmsNormGetWorkspaceSize(x: *const aclTensor, gamma: *const aclTensor, epsilon: f64, yOut: *const aclTensor, rstdOut: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnRmsNorm(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnRotaryPositionEmbeddingGetWorkspaceSize(x: *const aclTensor, cos: *const aclTensor, sin: *const aclTensor, mode: i64, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnRotaryPositionEmbedding(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnSwiGluGetWorkspaceSize(x: *const aclTensor, dim: i64, out: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnSwiGlu(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnArgMaxGetWorkspaceSize(self_: *const aclTensor, dim: i64, keepdim: bool, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnArgMax(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceCopyGetWorkspaceSize(selfRef: *mut aclTensor, src: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceCopy(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnMulsGetWorkspaceSize(self_: *const aclTensor, other: *const aclScalar, out: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnMuls(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceMaskedFillScalarGetWorkspaceSize(selfRef: *mut aclTensor, mask: *const aclTensor, value: *const aclScalar, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceMaskedFillScalar(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceAddGetWorkspaceSize(selfRef: *const aclTensor, other: *const aclTensor, alpha: *const aclScalar, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceAdd(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceSubGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclTensor, alpha: *const aclScalar, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceSub(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceMulGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceMul(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceDivGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceDiv(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceMulsGetWorkspaceSize(selfRef: *mut aclTensor, other: *const aclScalar, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceMuls(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceReluGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceRelu(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceSigmoidGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceSigmoid(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceExpGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceExp(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceLogGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceLog(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceRsqrtGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceRsqrt(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceSqrtGetWorkspaceSize(self_: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceSqrt(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceNegGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceNeg(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
    pub fn aclnnInplaceTanhGetWorkspaceSize(selfRef: *mut aclTensor, workspaceSize: *mut u64, executor: *mut *mut aclOpExecutor) -> aclnnStatus;
    pub fn aclnnInplaceTanh(workspace: *mut ::core::ffi::c_void, workspaceSize: u64, executor: *mut aclOpExecutor, stream: crate::aclrtStream) -> aclnnStatus;
}

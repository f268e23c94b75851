//! The C types and constants of AscendCL that the safe layer holds: handles,
//! enums, structs and limits, re-exported from `acl_sys` so that
//! [`result`](super) stays the one module that names it. No functions: C
//! functions are called through `result`'s wrappers only.

pub use acl_sys::{
    ACL_BF16, ACL_BOOL, ACL_CALLBACK_BLOCK, ACL_CALLBACK_NO_BLOCK, ACL_COMPILE_SYS,
    ACL_DEV_ATTR_AICORE_CORE_NUM, ACL_DEV_ATTR_AICPU_CORE_NUM, ACL_DEV_ATTR_CUBE_CORE_NUM,
    ACL_DEV_ATTR_IS_VIRTUAL, ACL_DEV_ATTR_L2_CACHE_SIZE, ACL_DEV_ATTR_PHY_CHIP_ID,
    ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, ACL_DEV_ATTR_VECTOR_CORE_NUM, ACL_DEV_FEATURE_SUPPORT,
    ACL_DOUBLE, ACL_DT_UNDEFINED, ACL_ENGINE_SYS, ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_FAILURE,
    ACL_ERROR_INTERNAL_ERROR, ACL_EVENT_CAPTURE_STREAM_PROGRESS, ACL_EVENT_DEVICE_USE_ONLY,
    ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE, ACL_FLOAT, ACL_FLOAT16, ACL_FORMAT_FRACTAL_NZ,
    ACL_FORMAT_FRACTAL_Z, ACL_FORMAT_NC1HWC0, ACL_FORMAT_NCHW, ACL_FORMAT_ND, ACL_FORMAT_NHWC,
    ACL_FORMAT_UNDEFINED, ACL_HBM_MEM, ACL_HBM_MEM_HUGE, ACL_INT8, ACL_INT16, ACL_INT32, ACL_INT64,
    ACL_MAX_DIM_CNT, ACL_MAX_TENSOR_NAME_LEN, ACL_MEM_ALLOCATION_TYPE_PINNED,
    ACL_MEM_HANDLE_TYPE_NONE, ACL_MEM_LOCATION_TYPE_DEVICE, ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMTYPE_HOST, ACL_OP_COMPILE_DEFAULT, ACL_OP_COMPILE_FUZZ,
    ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, ACL_STREAM_CPU_SCHEDULE, ACL_STREAM_DEVICE_USE_ONLY,
    ACL_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_SYNC, ACL_STREAM_HUGE, ACL_STREAM_PERSISTENT,
    ACL_UINT8, ACL_UINT16, ACL_UINT32, ACL_UINT64, ACL_UNKNOWN_RANK, aclDataBuffer, aclDataType,
    aclFormat, aclTensorDesc, aclmdlBatch, aclmdlDataset, aclmdlDesc, aclmdlHW, aclmdlIODims,
    aclopAttr, aclopHandle, aclrtBinHandle, aclrtContext, aclrtDevAttr, aclrtDevFeatureType,
    aclrtDrvMemHandle, aclrtEvent, aclrtFuncHandle, aclrtMemLocation, aclrtPhysicalMemProp,
    aclrtStream,
};

pub use acl_sys::LoadError;
pub use acl_sys::aclnn::{
    aclBoolArray, aclFloatArray, aclIntArray, aclOpExecutor, aclScalar, aclTensor, aclTensorList,
    aclnnStatus,
};

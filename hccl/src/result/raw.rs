//! The C types and constants of HCCL (and the AscendCL ones its functions
//! take) that the safe layer holds: handles, structs, enums, codes and
//! limits, re-exported so that [`result`](super) stays the one module that
//! names the -sys crates. No functions: C functions are called through
//! `result`'s wrappers only.

pub use acl_sys::{LoadError, aclrtDrvMemHandle, aclrtStream};
pub use hccl_sys::{
    COMM_NAME_MAX_LENGTH, HCCL_ACCELERATOR, HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET,
    HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET, HCCL_DATA_TYPE_BFP16, HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32, HCCL_DATA_TYPE_FP64, HCCL_DATA_TYPE_INT8, HCCL_DATA_TYPE_INT16,
    HCCL_DATA_TYPE_INT32, HCCL_DATA_TYPE_INT64, HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT16,
    HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64, HCCL_DETERMINISTIC, HCCL_E_AGAIN, HCCL_E_CCE,
    HCCL_E_DRV, HCCL_E_INTERNAL, HCCL_E_MEMORY, HCCL_E_NETWORK, HCCL_E_NOT_FOUND,
    HCCL_E_NOT_SUPPORT, HCCL_E_OOM, HCCL_E_OPEN_FILE_FAILURE, HCCL_E_OPRETRY_FAIL, HCCL_E_PARA,
    HCCL_E_PROFILING, HCCL_E_PTR, HCCL_E_REMOTE, HCCL_E_ROCE_CONNECT, HCCL_E_ROCE_TRANSFER,
    HCCL_E_RUNTIME, HCCL_E_SUSPENDING, HCCL_E_SYSCALL, HCCL_E_TCP_CONNECT, HCCL_E_TCP_TRANSFER,
    HCCL_E_TIMEOUT, HCCL_E_UNAVAIL, HCCL_RECV, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN, HCCL_REDUCE_PROD,
    HCCL_REDUCE_SUM, HCCL_ROOT_INFO_BYTES, HCCL_SEND, HCCL_SUCCESS, HcclComm, HcclCommConfig,
    HcclConfig, HcclDataType, HcclReduceOp, HcclResult, HcclRootInfo, HcclSendRecvItem,
};

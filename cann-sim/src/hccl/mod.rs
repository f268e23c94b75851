//! The simulator's HCCL (`libhccl.so`) exports. Until the HCCL issue, every
//! function is in `unsupported` (generated), returning `HCCL_E_NOT_SUPPORT`.

mod unsupported;
pub use unsupported::*;

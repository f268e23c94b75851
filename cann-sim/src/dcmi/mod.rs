//! The simulator's DCMI (`libdcmi.so`) exports. Until the telemetry issue,
//! every function is in `unsupported` (generated), returning
//! `DCMI_ERR_CODE_NOT_SUPPORT` (-8255).

mod unsupported;
pub use unsupported::*;

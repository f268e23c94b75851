//! The simulator's HCCL (`libhccl.so`) exports: the C functions, over the
//! collective engine in [`crate::comm`].
//!
//! Each function checks its arguments at the call, with HCCL's codes: a null
//! pointer is `HCCL_E_PTR`, an invalid value (a rank out of range, an
//! unknown handle, a buffer that is not device memory of the communicator's
//! device, a length that overflows) `HCCL_E_PARA`, a type or op the SoC does
//! not reduce `HCCL_E_NOT_SUPPORT`, a suspended communicator
//! `HCCL_E_SUSPENDING`; then it calls the engine and turns its result into
//! an `HcclResult`.
//!
//! - [`communicator`]: root info, communicator creation, destruction and
//!   queries, error strings, suspension.
//! - [`collective`]: every collective, queued on the stream's worker.
//! - [`p2p`]: send, receive, batches and groups.
//! - [`settings`]: `HcclGetCommConfigCapability`, process-wide and
//!   per-communicator settings (`HcclSetConfig`, `HcclSetCommConfig`, and
//!   their getters).
//! - [`memory`]: memory registration (`HcclCommRegister`,
//!   `HcclCommDeregister`, `HcclCommExchangeMem`) and virtual memory given
//!   to a communicator (`HcclCommSetMemoryRange`,
//!   `HcclCommActivateCommMemory` and their inverses, over
//!   [`crate::vmm`]).
//! - [`common`]: what they share (early returns, code names, messages).
//!
//! Everything else of `hccl.h` is in `unsupported` (generated), returning
//! `HCCL_E_NOT_SUPPORT`: `HcclCommWorkingDevNicSet` (switching to a backup
//! NIC: the simulator has one network path).
//!
//! # Errors and messages
//!
//! Real HCCL reports details through CANN's error manager (the `EIxxxx`
//! messages `aclGetRecentErrMsg` shows). The simulator records a message for
//! every failing HCCL call in the calling thread's recent-error slot, read
//! with `aclGetRecentErrMsg`, and failures of queued collectives in the
//! stream's fault, reported by its next synchronisation (see [`collective`]).
//!
//! The environment variables HCCL reads are listed in [`crate::comm`].

pub mod collective;
pub mod common;
pub mod communicator;
pub mod memory;
pub mod p2p;
pub mod settings;
mod unsupported;

pub use collective::*;
pub use common::{HCCL_E_IN_STATUS, code_name};
pub use communicator::*;
pub use memory::*;
pub use p2p::*;
pub use settings::*;
pub use unsupported::*;

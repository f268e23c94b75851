//! Configuration, in two kinds:
//!
//! - **A new communicator's options**: [`CommConfig`] (`HcclCommConfig`),
//!   passed when the communicator is made and fixed afterwards.
//! - **Process-wide and per-communicator settings** outside a config: process-wide
//!   ([`set_deterministic`], [`set_accelerator`]: `HcclSetConfig`) and per
//!   communicator ([`Comm::set_deterministic`](crate::Comm::set_deterministic):
//!   `HcclSetCommConfig`), and which [`CommConfig`] items
//!   the loaded library reads ([`config_capability`]:
//!   `HcclGetCommConfigCapability`).
//!
//!   Deterministic mode makes reductions reproducible run to run (a fixed
//!   reduction order, usually at some cost in speed); torch_npu turns it on
//!   with `torch.use_deterministic_algorithms`. The process-wide value is the
//!   default of communicators created afterwards; a communicator's config or
//!   [`Comm::set_deterministic`](crate::Comm::set_deterministic) override it.

mod comm;
mod process;

pub use comm::{CommConfig, Determinism};
pub use process::*;

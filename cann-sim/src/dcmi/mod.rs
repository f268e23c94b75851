//! The simulator's DCMI (`libdcmi.so`) exports.
//!
//! `device` (initialisation, versions, enumeration, id mapping) and `query`
//! (per-chip identity, health, thermal, power, clocks, utilisation, memory,
//! ECC, processes) implement what NPU telemetry reads, from the live state
//! that every simulated process publishes ([`crate::telemetry`]). Every other
//! function is in `unsupported` (generated), returning
//! `DCMI_ERR_CODE_NOT_SUPPORT` (-8255).

pub mod device;
pub use device::*;
pub mod query;
pub use query::*;

mod unsupported;
pub use unsupported::*;

//! `cann-sim`: a software Ascend NPU.
//!
//! It implements the C ABI of `libascendcl.so`, `libhccl.so` and `libdcmi.so`,
//! and aclnn's (`libopapi.so`/`libnnopbase.so`, see [`aclnn`]), on the host
//! CPU, so that everything built on the -sys crates runs and is tested on
//! machines without an NPU. It comes in two forms:
//!
//! - this **rlib**: [`install()`] puts the simulator's function tables into
//!   `acl-sys` (and its `aclnn` module), `hccl-sys` and `dcmi-sys`, so the
//!   process uses the simulator without touching the disk;
//! - a **cdylib**, `libcann_sim.so`, exporting the same C symbols, loadable in
//!   place of the real libraries (point `CANN_ACL_LIB`, `CANN_HCCL_LIB`, `CANN_DCMI_LIB`, `CANN_OPAPI_LIB` at
//!   it).
//!
//! It is held to the real runtime's semantics: error codes, argument checks
//! and state rules follow the open-sourced CANN runtime (`hicann/runtime`).
//! Anything it does not implement returns `ACL_ERROR_API_NOT_SUPPORT` (200001,
//! or `HCCL_E_NOT_SUPPORT`, `DCMI_ERR_CODE_NOT_SUPPORT`) and records a message naming the function, read
//! with `aclGetRecentErrMsg`. See [`config`] for the environment variables
//! that shape the simulated machine, [`faults`] for injecting failures, and
//! [`stats`] for what the simulator holds (to check that a test released
//! everything). [`check`] is the check mode (`CANN_SIM_CHECK`), a sanitizer
//! that reports frees of memory in use, races and use after free.
//!
//! Streams are really asynchronous: each has a host worker thread that runs
//! its queue in order, later than the calls that queued the work. Faults of
//! queued work (memory freed before a copy ran) are reported by the next
//! synchronisation, as on a device.
//!
//! ```
//! cann_sim::install().unwrap();
//! let mut n = 0u32;
//! // SAFETY: `n` is a valid out-pointer.
//! let rc = unsafe { acl_sys::aclrtGetDeviceCount(&mut n) }.unwrap();
//! assert_eq!((rc, n), (0, 8));
//! ```

pub mod acl;
pub mod aclnn;
pub mod check;
pub mod config;
pub mod dcmi;
pub mod faults;
pub mod hccl;
pub mod kernels;
pub mod model;
pub mod ops;
mod recent_error;
mod rt;
mod state;
mod stats;
mod tables;
pub mod telemetry;

pub use kernels::sample_kernels;
pub use stats::{DeviceStats, Stats, stats};
pub use tables::*;

/// The provider name the simulator installs its tables under.
pub const PROVIDER: &str = "cann-sim";

/// Installs the simulator as this process's AscendCL, aclnn, HCCL and DCMI.
///
/// Call it before any other use of the -sys crates (or the safe crates built
/// on them). Calling it again is harmless.
///
/// # Errors
///
/// `LoadError::AlreadyLoaded` when a real library was already loaded.
pub fn install() -> Result<(), acl_sys::LoadError> {
    // SAFETY: the four tables are the simulator's own: each entry is the
    // simulator's `extern "C"` implementation of the C function it is filed
    // under, with that function's declared signature (the tables are typed
    // by the -sys crates' `Api` structs) and its documented behaviour; the
    // simulator checks every pointer against its allocation table before
    // touching memory. Entries it does not implement are `None`.
    unsafe {
        acl_sys::install(acl_api(), PROVIDER)?;
        hccl_sys::install(hccl_api(), PROVIDER)?;
        dcmi_sys::install(dcmi_api(), PROVIDER)?;
        acl_sys::aclnn::install(aclnn_api(), PROVIDER)?;
    }
    Ok(())
}

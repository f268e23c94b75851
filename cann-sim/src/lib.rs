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
//!   it): the `cann-sim-cdylib` crate (`cargo build -p cann-sim-cdylib`),
//!   which links this crate whole.
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
//! `CANN_SIM_ACL_VERSION=1.2` (or `1.12`, `1.15`, any `major.minor[.patch]`)
//! makes the installed tables present an older runtime: every AscendCL and
//! HCCL function that `acl_sys::since` dates after that ACL version is absent
//! (`None`, so calls fail with `LoadError::NeedsNewer`), and `aclrtGetVersion`
//! reports that version. It is read once, when the tables are built
//! ([`install()`]); the cdylib's exports are not affected. See
//! `docs/COMPAT.md`.
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
//!
//! # Layout: exports and engine
//!
//! Every area follows one rule.
//!
//! - **Exports** — [`acl`], [`aclnn`], [`hccl`], [`dcmi`], one directory
//!   per C library (the `xtask` tools read them: every `extern "C"`
//!   function lives there, and each directory's `unsupported.rs` is
//!   generated): the C functions and what they need to speak C. They check
//!   the arguments, read and write C types (raw pointers, C strings,
//!   structs and enums, handles), keep the objects the C API creates for its
//!   caller (tensor and model descriptions, data buffers, attribute sets,
//!   datasets, aclnn tensors, kernel argument lists, stream configs), call
//!   the engine, and turn its results into the library's codes and the
//!   messages `aclGetRecentErrMsg` reads.
//! - **Engine** — every other module: the simulated NPU, in Rust types. Its
//!   signatures hold no raw pointers from the ABI and no `acl_sys`,
//!   `hccl_sys` or `dcmi_sys` types or codes. Each engine reports failures
//!   as a Rust error (`rt::ErrorKind`, [`comm::ErrorKind`],
//!   [`model::LoadErrorKind`], [`ops::OpError`], [`vmm::VmError`]) that the
//!   exports map to codes (`acl::common::rt_code`, `hccl::common::code`,
//!   [`acl::load_error_code`], ...); objects are named by addresses in its
//!   handle tables; it never calls into an exports directory.
//!
//! | module | holds |
//! |---|---|
//! | `rt` | the runtime: devices, contexts, streams and their workers, events, host callbacks, handle tables, operator tasks (`rt::op`), kernel binaries and launches (`rt::kernel`), virtual memory ([`vmm`]), graph capture (`rt::capture`) |
//! | `mem` | the allocation table (device and pinned memory, HBM budgets, the check mode's quarantine), the host memory behind each block (memory files another process can map), synchronous copies and fills and the copy-kind rules, IPC memory sharing between processes |
//! | `state` | devices' reference counts, each thread's current context (and the old paths of `mem`'s items) |
//! | [`check`] | the check mode, a sanitizer over queued work |
//! | [`trace`], [`profiler`] | the timeline of tasks and host calls (Chrome trace-event JSON, `CANN_SIM_TRACE`); the profiling sessions behind `aclprof*` |
//! | [`ops`] | the CPU operator kernels and their shape and dtype rules |
//! | [`model`] | the model format, its loader and executor, loaded models |
//! | [`comm`] | the collective engine behind HCCL: communicators, bootstrap, transport, algorithms, reductions, memory windows |
//! | [`machine`], [`telemetry`] | the machine the management driver (DCMI) sees; live device state shared between processes |
//! | both sides | [`config`] (the environment), [`faults`] (injected faults), `recent_error` (the messages), [`stats`](stats()), [`backend`], [`kernels`], `tables` (generated) |
//!
//! Not yet on the engine side: the 2D and D32 copies and fills and the
//! pageable `aclrtMemcpyAsync` still copy in `acl/memory*.rs` over the
//! engine's allocation table (with the engine's copy rules); the planning of
//! aclop, aclnn and model executions reads the C API's objects in the
//! exports; [`ops::DType`] carries CANN's data type numbers (operator
//! attributes such as Cast's `dst_type` are in them).

pub mod acl;
pub mod aclnn;
pub mod backend;
pub mod calls;
pub mod check;
pub mod comm;
pub mod config;
pub mod dcmi;
pub mod faults;
pub mod hccl;
pub mod kernels;
pub mod machine;
mod mem;
pub mod model;
pub mod ops;
pub mod profiler;
mod recent_error;
mod rt;
mod state;
mod stats;
mod tables;
mod tdt;
pub mod telemetry;
pub mod trace;

pub use kernels::sample_kernels;
/// Virtual memory (`aclrtReserveMemAddress`, `aclrtMapMem`...): the
/// granularity and the live reservations and physical allocations.
pub use rt::vmm;
pub use stats::{DeviceStats, Stats, stats};
pub use tables::*;

/// The provider name the simulator installs its tables under.
pub const PROVIDER: &str = "cann-sim";

/// The variable naming the ACL version the installed tables present.
pub const ACL_VERSION_VAR: &str = "CANN_SIM_ACL_VERSION";

/// The ACL version the installed tables present: `CANN_SIM_ACL_VERSION` when
/// set (read once), else `None` (the newest runtime, that of the bindings).
/// A value that is not `major.minor[.patch]` is reported on stderr once and
/// ignored.
pub fn presented_acl_version() -> Option<(u32, u32, u32)> {
    static VERSION: std::sync::OnceLock<Option<(u32, u32, u32)>> = std::sync::OnceLock::new();
    *VERSION.get_or_init(|| {
        let value = std::env::var(ACL_VERSION_VAR).ok()?;
        let value = value.trim();
        if value.is_empty() {
            return None;
        }
        let parsed = acl_sys::loader::parse_acl_version(value);
        if parsed.is_none() {
            eprintln!(
                "cann-sim: {ACL_VERSION_VAR}={value:?} is not an ACL version such as 1.2 or \
                 1.12.0; presenting the newest runtime"
            );
        }
        parsed
    })
}

/// A table entry: `f`, unless the presented runtime predates the function
/// (see [`presented_acl_version`]).
#[doc(hidden)]
pub fn present<F>(name: &str, f: F) -> Option<F> {
    match presented_acl_version() {
        Some(v) if acl_sys::loader::absent_in(name, v) => None,
        _ => Some(f),
    }
}

/// `aclrtGetVersion` of a simulator presenting an older runtime: the
/// simulator's own checks, then the presented version.
///
/// # Safety
///
/// Each pointer is null or valid for writing an `i32`.
unsafe extern "C" fn presented_get_version(
    major: *mut i32,
    minor: *mut i32,
    patch: *mut i32,
) -> acl_sys::aclError {
    // SAFETY: the caller's contract is the export's.
    let rc = unsafe { acl::aclrtGetVersion(major, minor, patch) };
    if rc == acl_sys::ACL_SUCCESS as acl_sys::aclError
        && let Some((a, b, c)) = presented_acl_version()
    {
        let clamp = |v: u32| i32::try_from(v).unwrap_or(i32::MAX);
        // SAFETY: the export succeeded, so all three pointers are non-null
        // and, by contract, writable.
        unsafe {
            *major = clamp(a);
            *minor = clamp(b);
            *patch = clamp(c);
        }
    }
    rc
}

/// The simulator's AscendCL table as installed: [`acl_api`], with
/// `aclrtGetVersion` reporting the presented version when one is set.
pub fn installed_acl_api() -> acl_sys::Api {
    let mut api = acl_api();
    if presented_acl_version().is_some() {
        api.aclrtGetVersion = Some(presented_get_version);
    }
    api
}

/// Installs the simulator as this process's AscendCL, aclnn, HCCL and DCMI.
///
/// Call it before any other use of the -sys crates (or the safe crates built
/// on them). Calling it again is harmless.
///
/// With `CANN_BACKEND=real` it installs nothing: it loads the installed
/// AscendCL instead, so that the same program, test or example runs on a
/// real NPU (see [`backend`]).
///
/// # Errors
///
/// `LoadError::AlreadyLoaded` when a real library was already loaded; with
/// `CANN_BACKEND=real`, the loader's error when no CANN is installed (the
/// paths it tried); an invalid `CANN_BACKEND`.
pub fn install() -> Result<(), acl_sys::LoadError> {
    match backend::selected() {
        backend::Backend::Sim => {}
        backend::Backend::Real => return acl_sys::library().map(|_| ()),
        backend::Backend::Invalid(v) => return Err(backend::invalid(&v)),
    }
    // SAFETY: the four tables are the simulator's own: each entry is the
    // simulator's `extern "C"` implementation of the C function it is filed
    // under, with that function's declared signature (the tables are typed
    // by the -sys crates' `Api` structs) and its documented behaviour; the
    // simulator checks every pointer against its allocation table before
    // touching memory. Entries it does not implement, or that the presented
    // runtime predates, are `None`; `presented_get_version` runs the
    // export's own checks before writing through the same pointers.
    unsafe {
        acl_sys::install(installed_acl_api(), PROVIDER)?;
        hccl_sys::install(hccl_api(), PROVIDER)?;
        dcmi_sys::install(dcmi_api(), PROVIDER)?;
        acl_sys::aclnn::install(aclnn_api(), PROVIDER)?;
    }
    Ok(())
}

//! Profiling: record what the devices run (`aclprof*`, msprof's API).
//!
//! [`Profiler::init`] names the directory the data goes to (created when
//! missing); a [`ProfileConfig`] says which devices and which data; each
//! [`Profiler::start`] returns a [`Profiling`] guard that stops on drop (or
//! with [`Profiling::stop`], which reports a failure). Each run writes a
//! `PROF_<index>_<time>_<pid><letters>` directory in the result directory.
//!
//! - On a real NPU the runtime writes msprof's raw data there; turn it into
//!   a timeline and summaries with `msprof --export=on --output=<dir>`
//!   (`mindstudio_profiler_output/msprof_*.json`, `op_summary_*.csv`, ...).
//! - On `cann-sim` the run directory gets the simulator's timeline at once:
//!   `mindstudio_profiler_output/msprof_<time>.json` (Chrome trace-event
//!   JSON: open it in `chrome://tracing` or <https://ui.perfetto.dev>; one
//!   track per stream, every copy, fill, operator and kernel) and
//!   `op_statistic_<time>.csv` (time per operator).
//!
//! The runtime allows one profiling session per process, and a device in
//! one run at a time.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::profiler::{DataTypes, ProfileConfig, Profiler};
//! use acl::{Device, Runtime};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let dir = std::env::temp_dir().join(format!("acl-profiler-doc-{}", std::process::id()));
//! let profiler = Profiler::init(&rt, &dir)?;
//! let config = ProfileConfig::new(&[0], DataTypes::ACL_API | DataTypes::TASK_TIME)?;
//! {
//!     let _run = profiler.start(&config)?;
//!     let stream = npu.new_stream()?;
//!     let x = stream.clone_from_host(&[1.0f32, 2.0, 3.0])?;
//!     assert_eq!(x.to_host_vec()?, [1.0, 2.0, 3.0]);
//! } // stopped: the run's data is in `dir/PROF_...`
//! profiler.finalize()?;
//! let runs = std::fs::read_dir(&dir).unwrap().count();
//! assert_eq!(runs, 1);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::result::{self, raw};
use crate::{ErrorCode, Runtime, release};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What to collect (`ACL_PROF_*` bits of `aclprofCreateConfig`), combined
/// with `|`.
///
/// ```
/// use acl::profiler::DataTypes;
/// let d = DataTypes::ACL_API | DataTypes::TASK_TIME;
/// assert!(d.contains(DataTypes::TASK_TIME));
/// assert_eq!(d.bits(), 0x3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataTypes(u64);

impl DataTypes {
    /// AscendCL API calls (`ACL_PROF_ACL_API`).
    pub const ACL_API: DataTypes = DataTypes(raw::ACL_PROF_ACL_API as u64);
    /// Task times on the device (`ACL_PROF_TASK_TIME`).
    pub const TASK_TIME: DataTypes = DataTypes(raw::ACL_PROF_TASK_TIME as u64);
    /// Lighter task times (`ACL_PROF_TASK_TIME_L0`).
    pub const TASK_TIME_L0: DataTypes = DataTypes(raw::ACL_PROF_TASK_TIME_L0 as u64);
    /// AI Core metrics, chosen by [`AicoreMetrics`] (`ACL_PROF_AICORE_METRICS`).
    pub const AICORE_METRICS: DataTypes = DataTypes(raw::ACL_PROF_AICORE_METRICS as u64);
    /// AI CPU tasks (`ACL_PROF_AICPU`).
    pub const AICPU: DataTypes = DataTypes(raw::ACL_PROF_AICPU as u64);
    /// L2 cache hit rates (`ACL_PROF_L2CACHE`).
    pub const L2CACHE: DataTypes = DataTypes(raw::ACL_PROF_L2CACHE as u64);
    /// HCCL communication (`ACL_PROF_HCCL_TRACE`).
    pub const HCCL_TRACE: DataTypes = DataTypes(raw::ACL_PROF_HCCL_TRACE as u64);
    /// Iteration traces (`ACL_PROF_TRAINING_TRACE`).
    pub const TRAINING_TRACE: DataTypes = DataTypes(raw::ACL_PROF_TRAINING_TRACE as u64);
    /// msproftx markers (`ACL_PROF_MSPROFTX`).
    pub const MSPROFTX: DataTypes = DataTypes(raw::ACL_PROF_MSPROFTX as u64);
    /// Runtime API calls (`ACL_PROF_RUNTIME_API`).
    pub const RUNTIME_API: DataTypes = DataTypes(raw::ACL_PROF_RUNTIME_API as u64);
    /// Device memory use (`ACL_PROF_TASK_MEMORY`).
    pub const TASK_MEMORY: DataTypes = DataTypes(raw::ACL_PROF_TASK_MEMORY as u64);
    /// Operator attributes (`ACL_PROF_OP_ATTR`).
    pub const OP_ATTR: DataTypes = DataTypes(raw::ACL_PROF_OP_ATTR as u64);

    /// The bits as `aclprofCreateConfig` takes them.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// Any `ACL_PROF_*` bits, those of newer runtimes included.
    pub fn from_bits(bits: u64) -> DataTypes {
        DataTypes(bits)
    }

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: DataTypes) -> bool {
        self.0 & other.0 == other.0
    }
}

impl Default for DataTypes {
    /// API calls and task times: the usual timeline.
    fn default() -> DataTypes {
        DataTypes::ACL_API | DataTypes::TASK_TIME
    }
}

impl std::ops::BitOr for DataTypes {
    type Output = DataTypes;
    fn bitor(self, rhs: DataTypes) -> DataTypes {
        DataTypes(self.0 | rhs.0)
    }
}

/// The AI Core metrics collected with [`DataTypes::AICORE_METRICS`]
/// (`aclprofAicoreMetrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AicoreMetrics {
    /// None (`ACL_AICORE_NONE`).
    #[default]
    None,
    /// Arithmetic utilisation (`ACL_AICORE_ARITHMETIC_UTILIZATION`).
    ArithmeticUtilization,
    /// Pipe utilisation (`ACL_AICORE_PIPE_UTILIZATION`).
    PipeUtilization,
    /// Memory bandwidth (`ACL_AICORE_MEMORY_BANDWIDTH`).
    MemoryBandwidth,
    /// L0B bandwidth (`ACL_AICORE_L0B_AND_WIDTH`).
    L0bBandwidth,
    /// Resource conflicts (`ACL_AICORE_RESOURCE_CONFLICT_RATIO`).
    ResourceConflictRatio,
    /// Unified buffer bandwidth (`ACL_AICORE_MEMORY_UB`).
    MemoryUb,
    /// L2 cache (`ACL_AICORE_L2_CACHE`).
    L2Cache,
    /// Pipe execution (`ACL_AICORE_PIPE_EXECUTE_UTILIZATION`).
    PipeExecuteUtilization,
    /// Memory access (`ACL_AICORE_MEMORY_ACCESS`).
    MemoryAccess,
}

impl AicoreMetrics {
    fn raw(self) -> raw::aclprofAicoreMetrics {
        match self {
            AicoreMetrics::None => raw::ACL_AICORE_NONE,
            AicoreMetrics::ArithmeticUtilization => raw::ACL_AICORE_ARITHMETIC_UTILIZATION,
            AicoreMetrics::PipeUtilization => raw::ACL_AICORE_PIPE_UTILIZATION,
            AicoreMetrics::MemoryBandwidth => raw::ACL_AICORE_MEMORY_BANDWIDTH,
            AicoreMetrics::L0bBandwidth => raw::ACL_AICORE_L0B_AND_WIDTH,
            AicoreMetrics::ResourceConflictRatio => raw::ACL_AICORE_RESOURCE_CONFLICT_RATIO,
            AicoreMetrics::MemoryUb => raw::ACL_AICORE_MEMORY_UB,
            AicoreMetrics::L2Cache => raw::ACL_AICORE_L2_CACHE,
            AicoreMetrics::PipeExecuteUtilization => raw::ACL_AICORE_PIPE_EXECUTE_UTILIZATION,
            AicoreMetrics::MemoryAccess => raw::ACL_AICORE_MEMORY_ACCESS,
        }
    }
}

/// The process's profiling session (`aclprofInit` … `aclprofFinalize`).
///
/// Cloning shares the session; it ends when the last clone, and the last
/// [`Profiling`] guard, is dropped (or with [`Profiler::finalize`]).
/// `Send + Sync`: the session is process-wide and its calls are
/// thread-safe.
#[derive(Debug, Clone)]
pub struct Profiler {
    inner: Arc<Session>,
}

#[derive(Debug)]
struct Session {
    path: PathBuf,
    /// Keeps AscendCL initialised while profiling.
    _runtime: Runtime,
    finalized: bool,
}

impl Session {
    fn finalize(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.finalized, true) {
            return Ok(());
        }
        result::prof_finalize()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Err(e) = self.finalize() {
            release::record("Profiler", e);
        }
    }
}

impl Profiler {
    /// Starts profiling, writing under `path`: a directory, created when
    /// missing. On a real NPU msprof's data lands there.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_INVALID_FILE` (100003) when `path` is not a directory that
    /// can be written (the message names it); `ACL_ERROR_REPEAT_INITIALIZE`
    /// (100002) while another `Profiler` of the process is live;
    /// [`Error::InvalidArgument`] for an empty path, one with a NUL byte or
    /// one of 4096 bytes or more.
    #[doc(alias = "aclprofInit")]
    pub fn init(runtime: &Runtime, path: impl AsRef<Path>) -> Result<Profiler> {
        const F: &str = "Profiler::init";
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = path
            .to_str()
            .ok_or_else(|| Error::invalid(F, format!("the path {shown} is not UTF-8")))?;
        if text.is_empty() || text.len() >= 4096 {
            return Err(Error::invalid(
                F,
                format!("the path {shown:?} must be 1 to 4095 bytes"),
            ));
        }
        let c = CString::new(text)
            .map_err(|_| Error::invalid(F, format!("the path {shown:?} holds a NUL byte")))?;
        result::prof_init(&c).map_err(|e| with_path(e, &shown))?;
        Ok(Profiler {
            inner: Arc::new(Session {
                path: path.to_path_buf(),
                _runtime: runtime.clone(),
                finalized: false,
            }),
        })
    }

    /// The result directory.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Starts profiling `config`'s devices; the returned guard stops it.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_PROF_ALREADY_RUN` (100042) when one of the devices is
    /// being profiled; `ACL_ERROR_PROF_MODULES_UNSUPPORTED` (200007) for
    /// data types the runtime does not know.
    #[doc(alias = "aclprofStart")]
    pub fn start(&self, config: &ProfileConfig) -> Result<Profiling> {
        // SAFETY: a live config (held by `config`).
        unsafe { result::prof_start(config.inner.raw) }?;
        Ok(Profiling {
            _profiler: self.clone(),
            config: config.clone(),
            running: true,
        })
    }

    /// Ends the session now and reports a failure (dropping the last clone
    /// does the same, recording a failure with
    /// [`take_release_errors`](crate::take_release_errors)).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while another clone or a [`Profiling`]
    /// guard is live; the runtime's error from `aclprofFinalize`.
    #[doc(alias = "aclprofFinalize")]
    pub fn finalize(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(mut s) => s.finalize(),
            Err(_) => Err(Error::invalid(
                "Profiler::finalize",
                "other clones of the profiler or running profiles are live",
            )),
        }
    }
}

/// A 100003 (`ACL_ERROR_INVALID_FILE`) that names the path, whatever the
/// runtime's message says.
fn with_path(e: Error, path: &str) -> Error {
    match e {
        Error::Acl {
            code,
            function,
            message,
        } if code == ErrorCode::InvalidFile => {
            let message = match message {
                Some(m) if m.contains(path) => m,
                Some(m) => format!("{path}: {m}"),
                None => format!("{path} is not a directory that can be written"),
            };
            Error::Acl {
                code,
                function,
                message: Some(message),
            }
        }
        other => other,
    }
}

/// What to profile on which devices (`aclprofCreateConfig`).
///
/// Cloning shares the config; it is destroyed with the last clone.
/// `Send + Sync`: an opaque handle the runtime only reads.
#[derive(Debug, Clone)]
pub struct ProfileConfig {
    inner: Arc<Config>,
}

#[derive(Debug)]
struct Config {
    raw: *mut raw::aclprofConfig,
    devices: Vec<u32>,
    data_types: DataTypes,
}

// SAFETY: the config is an opaque runtime object that is never mutated
// after creation; the runtime reads it from any thread, and it is destroyed
// once, by the last clone.
unsafe impl Send for Config {}
// SAFETY: as above: shared use only passes the handle to thread-safe calls.
unsafe impl Sync for Config {}

impl Drop for Config {
    fn drop(&mut self) {
        // SAFETY: the handle is live and destroyed once, here.
        if let Err(e) = unsafe { result::prof_destroy_config(self.raw) } {
            release::record("ProfileConfig", e);
        }
    }
}

impl ProfileConfig {
    /// `data_types` on `devices` (logical ids), without AI Core metrics.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the devices when the runtime
    /// refuses them (an id out of range or repeated; no device without
    /// [`DataTypes::MSPROFTX`]).
    #[doc(alias = "aclprofCreateConfig")]
    pub fn new(devices: &[u32], data_types: DataTypes) -> Result<ProfileConfig> {
        ProfileConfig::with_metrics(devices, data_types, AicoreMetrics::None)
    }

    /// As [`ProfileConfig::new`], collecting `metrics` too (with
    /// [`DataTypes::AICORE_METRICS`]).
    ///
    /// # Errors
    ///
    /// As [`ProfileConfig::new`].
    #[doc(alias = "aclprofCreateConfig")]
    pub fn with_metrics(
        devices: &[u32],
        data_types: DataTypes,
        metrics: AicoreMetrics,
    ) -> Result<ProfileConfig> {
        let raw =
            result::prof_create_config(devices, metrics.raw(), data_types.bits()).map_err(|e| {
                let why = e.message().map(str::to_string).unwrap_or_default();
                Error::invalid(
                    "ProfileConfig::new",
                    format!(
                        "the runtime refused to profile devices {devices:?} with data types \
                         {:#x}{}{why}",
                        data_types.bits(),
                        if why.is_empty() { "" } else { ": " }
                    ),
                )
            })?;
        Ok(ProfileConfig {
            inner: Arc::new(Config {
                raw,
                devices: devices.to_vec(),
                data_types,
            }),
        })
    }

    /// The devices.
    pub fn devices(&self) -> &[u32] {
        &self.inner.devices
    }

    /// The data types.
    pub fn data_types(&self) -> DataTypes {
        self.inner.data_types
    }
}

/// A running profile: stops when dropped (a failure is recorded, see
/// [`take_release_errors`](crate::take_release_errors)) or with
/// [`Profiling::stop`].
///
/// `Send + Sync`: it holds shared handles only.
#[derive(Debug)]
#[must_use = "profiling stops when the guard is dropped"]
pub struct Profiling {
    _profiler: Profiler,
    config: ProfileConfig,
    running: bool,
}

impl Profiling {
    /// Stops profiling and writes the run's data.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclprofStop`.
    #[doc(alias = "aclprofStop")]
    pub fn stop(mut self) -> Result<()> {
        self.stop_once()
    }

    fn stop_once(&mut self) -> Result<()> {
        if !std::mem::replace(&mut self.running, false) {
            return Ok(());
        }
        // SAFETY: the config that started the run, live.
        unsafe { result::prof_stop(self.config.inner.raw) }
    }

    /// The config it runs with.
    pub fn config(&self) -> &ProfileConfig {
        &self.config
    }
}

impl Drop for Profiling {
    fn drop(&mut self) {
        if let Err(e) = self.stop_once() {
            release::record("Profiling", e);
        }
    }
}

pub mod tx;

//! Data dumps: the inputs and outputs of the operators that run, written
//! to files or handed to a callback (`aclmdlInitDump`, `aclmdlSetDump`,
//! `aclmdlFinalizeDump`, `acldumpRegCallback`, `acldumpUnregCallback`,
//! `acldumpGetPath`), and operator information files (`aclopStartDumpArgs`,
//! `aclopStopDumpArgs`).
//!
//! A [`Dump`] guard turns the dump on and off; a [`DumpConfig`] says where
//! the files go and what they hold (the runtime's JSON config, written for
//! you). A [`DumpCallback`] receives the data instead of files. On a real
//! NPU the files are the runtime's dump files (read them with msaccucmp);
//! on `cann-sim` each operator's file is the simulator's documented format
//! (a JSON header line, then the tensors' bytes: see its `model::dump`
//! module).
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::dump::{Dump, DumpConfig, DumpMode};
//! use acl::{Device, Runtime, Tensor, ops};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let dir = std::env::temp_dir().join(format!("acl-dump-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let dump = Dump::start(&rt, &DumpConfig::operators(&dir).mode(DumpMode::All))?;
//! assert_eq!(dump.path()?.as_deref(), Some(dir.as_path()));
//! let s = npu.new_stream()?;
//! let a = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let mut c = Tensor::zeros(&s, &[2, 2])?;
//! ops::matmul(&s, &a, &a, &mut c)?;
//! assert_eq!(c.to_host_vec()?, [7.0, 10.0, 15.0, 22.0]);
//! dump.finish()?; // the matmul's file is under `dir/<time>/0/`
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::result::{self, raw};
use crate::{Runtime, release};
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Which tensors of each operator are dumped (`dump_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DumpMode {
    /// The inputs.
    Input,
    /// The outputs (the runtime's default).
    #[default]
    Output,
    /// Both.
    All,
}

/// A dump config: single-operator dumps into a directory (the runtime's
/// `"dump_op_switch": "on"` config). `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpConfig {
    path: PathBuf,
    mode: DumpMode,
}

impl DumpConfig {
    /// Dumps of every operator that runs, into `dir` (an existing
    /// directory).
    pub fn operators(dir: impl AsRef<Path>) -> DumpConfig {
        DumpConfig {
            path: dir.as_ref().to_path_buf(),
            mode: DumpMode::Output,
        }
    }

    /// Which tensors are dumped.
    pub fn mode(mut self, mode: DumpMode) -> DumpConfig {
        self.mode = mode;
        self
    }

    /// The runtime's JSON config.
    ///
    /// ```
    /// use acl::dump::{DumpConfig, DumpMode};
    /// let c = DumpConfig::operators("/tmp/out").mode(DumpMode::Input);
    /// let v: serde_json::Value = serde_json::from_str(&c.to_json()).unwrap();
    /// assert_eq!(v["dump"]["dump_mode"], "input");
    /// assert_eq!(v["dump"]["dump_op_switch"], "on");
    /// ```
    pub fn to_json(&self) -> String {
        let mode = match self.mode {
            DumpMode::Input => "input",
            DumpMode::Output => "output",
            DumpMode::All => "all",
        };
        let path = self.path.to_string_lossy();
        let escaped: String = path
            .chars()
            .flat_map(|c| match c {
                '"' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        format!(
            "{{\"dump\":{{\"dump_path\":\"{escaped}\",\"dump_mode\":\"{mode}\",\
             \"dump_list\":[{{}}],\"dump_op_switch\":\"on\",\"dump_data\":\"tensor\"}}}}"
        )
    }
}

/// The data dump, on while the guard lives (`aclmdlInitDump` …
/// `aclmdlFinalizeDump`). The runtime allows one per process at a time.
/// `Send + Sync`: the dump is process-wide and its calls are thread-safe.
#[derive(Debug)]
pub struct Dump {
    _runtime: Runtime,
    finished: bool,
}

fn c_path(function: &'static str, path: &Path) -> Result<CString> {
    CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
        Error::invalid(
            function,
            format!("the path {:?} holds a NUL byte", path.display()),
        )
    })
}

impl Dump {
    /// Turns the dump on with `config`: the operators that run from now on
    /// are dumped into its directory.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_REPEAT_INITIALIZE` (100002) while another dump is on;
    /// `ACL_ERROR_INVALID_DUMP_CONFIG` (100009) when the directory does not
    /// exist; [`Error::InvalidArgument`] when the config cannot be written
    /// to its temporary file, or the path holds a NUL byte.
    #[doc(alias = "aclmdlInitDump")]
    #[doc(alias = "aclmdlSetDump")]
    pub fn start(runtime: &Runtime, config: &DumpConfig) -> Result<Dump> {
        const F: &str = "Dump::start";
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let file = std::env::temp_dir().join(format!(
            "acl-dump-config-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&file)
            .and_then(|mut f| std::io::Write::write_all(&mut f, config.to_json().as_bytes()));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&file);
            return Err(Error::invalid(
                F,
                format!("cannot write the dump config {}: {e}", file.display()),
            ));
        }
        let started = Dump::from_config_file(runtime, &file);
        let _ = std::fs::remove_file(&file);
        started
    }

    /// Turns the dump on with the runtime's JSON config file at `path`
    /// (model dumps, exception dumps... as the runtime documents them).
    ///
    /// # Errors
    ///
    /// As [`Dump::start`]; `ACL_ERROR_INVALID_FILE` (100003) when `path` is
    /// not a readable regular file; `ACL_ERROR_API_NOT_SUPPORT` (200000) on
    /// `cann-sim` for dumps it does not make (model layers, exceptions,
    /// overflow, statistics).
    #[doc(alias = "aclmdlInitDump")]
    #[doc(alias = "aclmdlSetDump")]
    pub fn from_config_file(runtime: &Runtime, path: impl AsRef<Path>) -> Result<Dump> {
        let c = c_path("Dump::from_config_file", path.as_ref())?;
        result::mdl_init_dump()?;
        let dump = Dump {
            _runtime: runtime.clone(),
            finished: false,
        };
        // On failure the guard's drop turns the dump off again.
        result::mdl_set_dump(&c)?;
        Ok(dump)
    }

    /// The directory the dump writes to (`acldumpGetPath(DATA_DUMP)`).
    ///
    /// # Errors
    ///
    /// The runtime's, when it lacks the function.
    #[doc(alias = "acldumpGetPath")]
    pub fn path(&self) -> Result<Option<PathBuf>> {
        Ok(result::dump_get_path(raw::DATA_DUMP)?.map(|c| {
            PathBuf::from(
                <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(c.as_bytes()),
            )
        }))
    }

    /// Turns the dump off once the data of the operators run so far is
    /// written, and reports a failure (dropping the guard does the same,
    /// recording a failure with
    /// [`take_release_errors`](crate::take_release_errors)).
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclmdlFinalizeDump`.
    #[doc(alias = "aclmdlFinalizeDump")]
    pub fn finish(mut self) -> Result<()> {
        self.finished = true;
        result::mdl_finalize_dump()
    }
}

impl Drop for Dump {
    fn drop(&mut self) {
        if !self.finished
            && let Err(e) = result::mdl_finalize_dump()
        {
            release::record("Dump", e);
        }
    }
}

/// One chunk of dump data given to a [`DumpCallback`] (`acldumpChunk`).
#[derive(Debug, Clone, Copy)]
pub struct DumpChunk<'a> {
    /// The dump file the data belongs to.
    pub file_name: &'a CStr,
    /// The bytes.
    pub data: &'a [u8],
    /// Their offset in the file (−1: appended).
    pub offset: i64,
    /// Whether this is the file's last chunk.
    pub is_last: bool,
}

type ChunkFn = dyn Fn(&DumpChunk<'_>) + Send + Sync;

/// The registered callback (the C API takes no user data: one per process).
static CALLBACK: Mutex<Option<Arc<ChunkFn>>> = Mutex::new(None);
/// Panics of callbacks, caught at the C boundary.
static PANICS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn trampoline(chunk: *const raw::acldumpChunk, len: i32) -> i32 {
    let f = match CALLBACK.lock() {
        Ok(g) => g.clone(),
        Err(p) => p.into_inner().clone(),
    };
    let Some(f) = f else { return 0 };
    if chunk.is_null() {
        return 1;
    }
    // SAFETY: the runtime passes a valid chunk of `len` bytes whose data
    // (`bufLen` bytes after the header) lives for the call.
    let c = unsafe { &*chunk };
    let header = std::mem::size_of::<raw::acldumpChunk>();
    let data_len = (c.bufLen as usize).min((len.max(0) as usize).saturating_sub(header));
    // SAFETY: as above; `fileName` is NUL-terminated within its array (the
    // runtime's contract; checked below).
    let (name, data) = unsafe {
        (
            CStr::from_bytes_until_nul(std::slice::from_raw_parts(
                c.fileName.as_ptr().cast::<u8>(),
                c.fileName.len(),
            )),
            std::slice::from_raw_parts(c.dataBuf.as_ptr(), data_len),
        )
    };
    let Ok(file_name) = name else { return 1 };
    let chunk = DumpChunk {
        file_name,
        data,
        offset: c.offset,
        is_last: c.isLastChunk != 0,
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&chunk))) {
        Ok(()) => 0,
        Err(_) => {
            PANICS.fetch_add(1, Ordering::Relaxed);
            1
        }
    }
}

/// A callback receiving the dump data instead of files, registered while
/// the value lives (`acldumpRegCallback` … `acldumpUnregCallback`). A panic
/// of the callback is caught at the C boundary and counted
/// ([`DumpCallback::panics`]). `Send + Sync`: it only unregisters.
#[derive(Debug)]
pub struct DumpCallback {
    unregistered: bool,
}

impl DumpCallback {
    /// Registers `f`: from now on the dump data of the operators that run
    /// while a [`Dump`] is on comes to `f`, in chunks, on a runtime thread.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while another `DumpCallback` is
    /// registered (the runtime has one callback per process); the
    /// runtime's error from `acldumpRegCallback`.
    #[doc(alias = "acldumpRegCallback")]
    pub fn register(f: impl Fn(&DumpChunk<'_>) + Send + Sync + 'static) -> Result<DumpCallback> {
        let mut slot = CALLBACK.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_some() {
            return Err(Error::invalid(
                "DumpCallback::register",
                "a dump callback is registered already; drop it first",
            ));
        }
        *slot = Some(Arc::new(f));
        drop(slot);
        // SAFETY: `trampoline` is valid for the process's life, does not
        // unwind, and handles any valid chunk from any thread.
        if let Err(e) = unsafe { result::dump_reg_callback(trampoline, 0) } {
            *CALLBACK.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return Err(e);
        }
        Ok(DumpCallback {
            unregistered: false,
        })
    }

    /// Panics of dump callbacks caught so far in the process.
    pub fn panics() -> usize {
        PANICS.load(Ordering::Relaxed)
    }

    /// Unregisters the callback once the chunks in flight were delivered.
    ///
    /// # Errors
    ///
    /// The runtime's, when it lacks `acldumpUnregCallback`.
    #[doc(alias = "acldumpUnregCallback")]
    pub fn unregister(mut self) -> Result<()> {
        self.unregistered = true;
        let r = result::dump_unreg_callback();
        *CALLBACK.lock().unwrap_or_else(|p| p.into_inner()) = None;
        r
    }
}

impl Drop for DumpCallback {
    fn drop(&mut self) {
        if self.unregistered {
            return;
        }
        if let Err(e) = result::dump_unreg_callback() {
            release::record("DumpCallback", e);
        }
        *CALLBACK.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// Operator information files (`aclopStartDumpArgs` …
/// `aclopStopDumpArgs`): while the guard lives, each aclnn operator queued
/// writes a file with its type and its tensors' data types, formats and
/// shapes into the directory, once per distinct shape. `Send + Sync`: it
/// only stops.
#[derive(Debug)]
pub struct OpArgsDump {
    stopped: bool,
}

impl OpArgsDump {
    /// Starts writing into `dir` (made when missing).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_FAILURE` (500001) when the directory cannot be made.
    #[doc(alias = "aclopStartDumpArgs")]
    pub fn start(dir: impl AsRef<Path>) -> Result<OpArgsDump> {
        let c = c_path("OpArgsDump::start", dir.as_ref())?;
        result::op_start_dump_args(raw::ACL_OP_DUMP_OP_AICORE_ARGS, &c)?;
        Ok(OpArgsDump { stopped: false })
    }

    /// Stops, reporting a failure.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclopStopDumpArgs`.
    #[doc(alias = "aclopStopDumpArgs")]
    pub fn stop(mut self) -> Result<()> {
        self.stopped = true;
        result::op_stop_dump_args(raw::ACL_OP_DUMP_OP_AICORE_ARGS)
    }
}

impl Drop for OpArgsDump {
    fn drop(&mut self) {
        if !self.stopped
            && let Err(e) = result::op_stop_dump_args(raw::ACL_OP_DUMP_OP_AICORE_ARGS)
        {
            release::record("OpArgsDump", e);
        }
    }
}

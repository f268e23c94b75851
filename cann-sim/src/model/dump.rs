//! Data dump (`aclmdlInitDump`, `aclmdlSetDump`, `aclmdlFinalizeDump`,
//! `acldumpRegCallback`, `acldumpUnregCallback`, `acldumpGetPath`) and
//! operator information dump (`aclopStartDumpArgs`, `aclopStopDumpArgs`).
//!
//! **What the simulator dumps.** The single-operator dump of the release
//! (`docs/zh/api_ref/18_dump_configuration.md`, "单算子Dump配置":
//! `"dump_op_switch": "on"`): the inputs and outputs of each aclnn or aclop
//! operator that runs while dumping is on, per the config's `dump_mode`
//! (`input`, `output` — the default — or `all`). Each operator execution
//! is one dump file, written under
//! `<dump_path>/<YYYYMMDDhhmmss>/<device>/` (the time dumping was set) and
//! named `<op_type>.<op_type>.<n>.<stream id>.<timestamp µs>` (the release's
//! `{op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}`; an aclnn call
//! has no node name, so the type stands for it, and `n` counts the dumped
//! operators). With a callback registered (`acldumpRegCallback`), nothing
//! is written: the callback receives each file's bytes as chunks
//! (`acldumpChunk`: the file name, at most [`CHUNK`] bytes each, their
//! offset, the last one flagged).
//!
//! **The file format** (the release writes a protobuf `DumpData`; the
//! simulator writes a self-describing format of its own): one line of JSON
//! (an object; its keys in any order), then the tensors' bytes, in order,
//! at the offsets the line gives (counted from the byte after its `\n`):
//!
//! ```json
//! {"format":"cann-sim-dump","version":1,"op_type":"Add","api":"aclnnAdd","device":0,"stream":3,
//!  "inputs":[{"dtype":"float32","shape":[4],"offset":0,"size":16}, …],
//!  "outputs":[{"dtype":"float32","shape":[4],"offset":32,"size":16}]}
//! ```
//!
//! `size` is the bytes of the tensor's span in memory (a strided view dumps
//! the memory it spans); an input given as host data (a scalar) is dumped
//! from that data.
//!
//! **Statistics** (`dump_data: stats`, `dump_stats`): each operator's file
//! is a CSV of per-tensor statistics instead (see [`super::dump_stats`]).
//!
//! **Not simulated** (refused with `ACL_ERROR_API_NOT_SUPPORT` by
//! `aclmdlSetDump`): model layer dumps (`dump_list` entries naming a
//! `model_name` or `layer`: the simulator's models run as one task),
//! exception dumps (`dump_scene`), overflow dumps (`dump_debug: on`),
//! kernel debug data (`dump_kernel_data`).
//!
//! **Operator information** (`aclopStartDumpArgs`): while it is on, each
//! aclnn or aclop operator queued writes, once per distinct operator type
//! and shapes, `<path>/<op_type>_<hash>.json` with its type and its inputs'
//! and outputs' data types, formats and shapes (the release writes one file
//! per operator shape with that information).

use crate::ops::TensorSpec;
use crate::rt::{Error, ErrorKind};
use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes of data per callback chunk.
pub const CHUNK: usize = 1 << 20;

/// The longest `dump_path` (`dump_config_converter.h` `MAX_DUMP_PATH_LENGTH`).
pub const MAX_DUMP_PATH: usize = 512;

/// `dump_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Inputs only.
    Input,
    /// Outputs only (the default).
    Output,
    /// Both.
    All,
}

/// The dump callback (`acldumpRegCallback`): called with a chunk and the
/// chunk's length in bytes.
pub type Callback = unsafe extern "C" fn(*const acl_sys::acldumpChunk, i32) -> i32;

/// A parsed `aclmdlSetDump` config.
#[derive(Debug, Clone)]
pub struct Config {
    /// `dump_path`.
    pub path: PathBuf,
    /// `dump_mode`.
    pub mode: Mode,
    /// `dump_op_switch` is `on`: operators are dumped.
    pub ops: bool,
    /// `dump_data` is `stats`: the statistics items dumped (a mask of
    /// [`super::dump_stats::ITEMS`]) instead of the tensors.
    pub stats: Option<u8>,
}

/// Why a config is refused.
#[derive(Debug)]
pub enum ConfigError {
    /// Malformed or invalid (`ACL_ERROR_INVALID_DUMP_CONFIG`).
    Invalid(String),
    /// Valid, asking for a dump the simulator does not make
    /// (`ACL_ERROR_API_NOT_SUPPORT`).
    NotSupported(String),
}

/// Parses the text of a dump config file (hicann/runtime
/// `src/dfx/adump/adump/impl/dump_config_converter.cpp`: field types,
/// values, then the constraints, `dump_path` last). A config without a
/// `dump` object enables nothing (`Ok(None)`).
///
/// # Errors
///
/// [`ConfigError`].
pub fn parse_config(text: &str) -> Result<Option<Config>, ConfigError> {
    let invalid = |m: String| ConfigError::Invalid(m);
    let root: serde_json::Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("the config is not JSON: {e}")))?;
    let Some(dump) = root.get("dump") else {
        return Ok(None);
    };
    let Some(dump) = dump.as_object() else {
        return Err(invalid("\"dump\" must be an object".into()));
    };
    let string = |key: &str| -> Result<Option<&str>, ConfigError> {
        match dump.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| invalid(format!("dump.{key} must be a string"))),
        }
    };
    for key in [
        "dump_path",
        "dump_mode",
        "dump_op_switch",
        "dump_level",
        "dump_scene",
        "dump_data",
        "dump_debug",
        "dump_kernel_data",
        "dump_step",
    ] {
        string(key)?;
    }
    let one_of = |key: &str, allowed: &[&str]| -> Result<(), ConfigError> {
        match string(key)? {
            Some(v) if !allowed.contains(&v) => Err(invalid(format!(
                "dump.{key} \"{v}\" is invalid; expected one of {allowed:?}"
            ))),
            _ => Ok(()),
        }
    };
    one_of("dump_mode", &["input", "output", "all"])?;
    one_of("dump_data", &["tensor", "stats"])?;
    one_of("dump_op_switch", &["on", "off"])?;
    one_of("dump_level", &["op", "kernel", "all"])?;
    one_of("dump_debug", &["on", "off"])?;
    one_of(
        "dump_scene",
        &[
            "lite_exception",
            "aic_err_brief_dump",
            "aic_err_norm_dump",
            "aic_err_detail_dump",
            "watcher",
        ],
    )?;
    let list = match dump.get("dump_list") {
        None => Vec::new(),
        Some(v) => v
            .as_array()
            .ok_or_else(|| invalid("dump.dump_list must be an array".into()))?
            .clone(),
    };
    for (i, item) in list.iter().enumerate() {
        if !item.is_object() {
            return Err(invalid(format!("dump.dump_list[{i}] must be an object")));
        }
    }
    let unsupported = |m: &str| Err(ConfigError::NotSupported(m.to_string()));
    if let Some(scene) = string("dump_scene")? {
        return unsupported(&format!(
            "dump_scene \"{scene}\" (exception and watcher dumps) is not simulated"
        ));
    }
    if string("dump_kernel_data")?.is_some() {
        return unsupported("dump_kernel_data (Ascend C kernel debug data) is not simulated");
    }
    let path = match string("dump_path")? {
        None => return Err(invalid("dump.dump_path is missing".into())),
        Some("") => return Err(invalid("dump.dump_path is empty".into())),
        Some(p) if p.len() > MAX_DUMP_PATH => {
            return Err(invalid(format!(
                "dump.dump_path is longer than {MAX_DUMP_PATH} characters"
            )));
        }
        Some(p) => PathBuf::from(p),
    };
    match std::fs::metadata(&path) {
        Err(_) => {
            return Err(invalid(format!(
                "dump.dump_path {} does not exist",
                path.display()
            )));
        }
        Ok(m) if !m.is_dir() => {
            return Err(invalid(format!(
                "dump.dump_path {} is not a directory",
                path.display()
            )));
        }
        Ok(_) => {}
    }
    if string("dump_debug")? == Some("on") {
        return unsupported("dump_debug \"on\" (overflow dumps) is not simulated");
    }
    // `dump_config_converter.cpp` `CheckDumpStats`, `dump_setting.cpp`
    // `InitDumpStatsItem`.
    let stats = match (string("dump_data")?, dump.get("dump_stats")) {
        (Some("stats"), None) => Some(super::dump_stats::DEFAULT),
        (Some("stats"), Some(v)) => {
            let items = v
                .as_array()
                .and_then(|a| a.iter().map(|i| i.as_str()).collect::<Option<Vec<&str>>>())
                .ok_or_else(|| invalid("dump.dump_stats must be an array of strings".into()))?;
            if items.is_empty() {
                return Err(invalid("dump.dump_stats is empty".into()));
            }
            Some(super::dump_stats::mask_of(&items).map_err(|item| {
                invalid(format!(
                    "dump.dump_stats item {item:?} is not one of Max, Min, Avg, Nan, Negative Inf, \
                     Positive Inf, L2norm"
                ))
            })?)
        }
        (_, Some(_)) => {
            return Err(invalid(
                "dump.dump_stats cannot be set when dump.dump_data is \"tensor\"".into(),
            ));
        }
        (_, None) => None,
    };
    if list
        .iter()
        .any(|i| i.get("model_name").is_some() || i.get("layer").is_some())
    {
        return unsupported(
            "dump_list entries naming a model_name or layer (model layer dumps) are not \
             simulated; dump single operators with \"dump_op_switch\": \"on\"",
        );
    }
    let mode = match string("dump_mode")? {
        Some("input") => Mode::Input,
        Some("all") => Mode::All,
        _ => Mode::Output,
    };
    Ok(Some(Config {
        path,
        mode,
        ops: string("dump_op_switch")? == Some("on"),
        stats,
    }))
}

#[derive(Default)]
struct State {
    /// `aclmdlInitDump` was called (and not finalized).
    initialized: bool,
    /// The config of the last `aclmdlSetDump`, and its time stamp
    /// directory name.
    config: Option<(Config, String)>,
    /// `acldumpRegCallback`.
    callback: Option<Callback>,
    /// `aclopStartDumpArgs`: the directory, and the shapes written.
    args: Option<(PathBuf, HashSet<u64>)>,
    /// Dumped operators so far.
    count: u64,
    /// Dump records not delivered yet.
    pending: usize,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(Default::default);
static DRAINED: Condvar = Condvar::new();

/// Whether a dump or the operator information may be on (the fast path of
/// [`active`]: one relaxed load per operator launch when both are off).
static ON: AtomicBool = AtomicBool::new(false);

fn update_on(st: &State) {
    ON.store(st.initialized || st.args.is_some(), Ordering::Relaxed);
}

/// Whether operator launches must describe themselves to [`for_launch`].
pub fn active() -> bool {
    ON.load(Ordering::Relaxed)
}

/// `aclmdlInitDump`: false when dumping is initialized already
/// (`ACL_ERROR_REPEAT_INITIALIZE`).
pub fn init() -> bool {
    let mut st = STATE.lock();
    if st.initialized {
        return false;
    }
    st.initialized = true;
    update_on(&st);
    true
}

/// Whether `aclmdlInitDump` was called.
pub fn initialized() -> bool {
    STATE.lock().initialized
}

/// `aclmdlSetDump` with a parsed config (`None`: nothing enabled).
pub fn set(config: Option<Config>) {
    let stamp = timestamp_dir();
    STATE.lock().config = config.map(|c| (c, stamp));
}

/// `aclmdlFinalizeDump`: waits for the records in flight, then turns the
/// dump off.
pub fn finalize() {
    let mut st = STATE.lock();
    while st.pending > 0 {
        DRAINED.wait(&mut st);
    }
    st.initialized = false;
    st.config = None;
    update_on(&st);
}

/// `acldumpRegCallback`.
pub fn register(cb: Callback) {
    STATE.lock().callback = Some(cb);
}

/// `acldumpUnregCallback`: waits for the records in flight, then forgets
/// the callback.
pub fn unregister() {
    let mut st = STATE.lock();
    while st.pending > 0 {
        DRAINED.wait(&mut st);
    }
    st.callback = None;
}

/// `acldumpGetPath(DATA_DUMP)`: the dump path set, if any.
pub fn data_path() -> Option<PathBuf> {
    STATE.lock().config.as_ref().map(|(c, _)| c.path.clone())
}

/// `aclopStartDumpArgs`: creates `path` if needed.
///
/// # Errors
///
/// 507000 when the directory cannot be made.
pub fn start_args(path: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(path).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("cannot create the dump directory {}: {e}", path.display()),
        )
    })?;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("{} is not a directory", path.display()),
        ));
    }
    let mut st = STATE.lock();
    st.args = Some((path.to_path_buf(), HashSet::new()));
    update_on(&st);
    Ok(())
}

/// `aclopStopDumpArgs`.
pub fn stop_args() {
    let mut st = STATE.lock();
    st.args = None;
    update_on(&st);
}

/// One tensor of a dumped operator: its type and shape, and where its
/// bytes are (device memory, or host data taken at the call).
pub struct Tensor {
    /// Type and shape.
    pub spec: TensorSpec,
    /// Device memory (`addr`, bytes), or the bytes themselves.
    pub data: TensorData,
}

/// Where a dumped tensor's bytes are.
pub enum TensorData {
    /// Device memory: first byte and span.
    Device(usize, usize),
    /// Bytes taken at the call.
    Host(Vec<u8>),
    /// An empty tensor.
    Empty,
}

/// What an operator launch dumps when it runs, if dumping is on
/// ([`for_launch`]).
pub struct Dumper {
    op_type: String,
    api: &'static str,
    device: u32,
    stream: i32,
    dir: PathBuf,
    mode: Mode,
    to_callback: bool,
    stats: Option<u8>,
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
}

/// Called at each aclnn or aclop operator launch (`rt::op::launch_kernel`):
/// writes the operator information file when `aclopStartDumpArgs` is on,
/// and returns the dumper of its data when the data dump is on.
pub fn for_launch(
    api: &'static str,
    op_type: &str,
    device: u32,
    stream: i32,
    inputs: Vec<Tensor>,
    outputs: Vec<Tensor>,
) -> Option<Dumper> {
    let mut st = STATE.lock();
    if let Some((dir, seen)) = st.args.as_mut() {
        write_args(dir, seen, op_type, &inputs, &outputs);
    }
    if !st.initialized {
        return None;
    }
    let (dir, mode, to_callback, stats) = match (&st.config, st.callback) {
        // The callback takes the data; without a config, outputs.
        (Some((c, stamp)), cb) if c.ops || cb.is_some() => (
            c.path.join(stamp).join(device.to_string()),
            c.mode,
            cb.is_some(),
            c.stats,
        ),
        (None, Some(_)) => (
            PathBuf::from(timestamp_dir()).join(device.to_string()),
            Mode::Output,
            true,
            None,
        ),
        _ => return None,
    };
    Some(Dumper {
        op_type: op_type.to_string(),
        api,
        device,
        stream,
        dir,
        mode,
        to_callback,
        stats,
        inputs,
        outputs,
    })
}

fn write_args(
    dir: &Path,
    seen: &mut HashSet<u64>,
    op_type: &str,
    inputs: &[Tensor],
    outputs: &[Tensor],
) {
    use std::hash::{Hash, Hasher};
    let desc = |ts: &[Tensor]| -> Vec<serde_json::Value> {
        ts.iter()
            .map(|t| {
                serde_json::json!({
                    "dtype": super::parse::dtype_name(t.spec.dtype),
                    "format": "ND",
                    "shape": t.spec.shape,
                })
            })
            .collect()
    };
    let doc = serde_json::json!({
        "op_type": op_type,
        "inputs": desc(inputs),
        "outputs": desc(outputs),
    });
    let mut h = std::collections::hash_map::DefaultHasher::new();
    doc.to_string().hash(&mut h);
    let key = h.finish();
    if seen.insert(key) {
        // A failed write loses one information file; the operator runs.
        let _ = std::fs::write(
            dir.join(format!("{op_type}_{key:016x}.json")),
            doc.to_string(),
        );
    }
}

/// Reads `len` bytes at device address `addr`.
///
/// # Safety
///
/// The range lies in a live allocation kept alive meanwhile (the worker's
/// read lock of the allocation table).
unsafe fn read(addr: usize, len: usize) -> Vec<u8> {
    // SAFETY: as the caller guarantees.
    unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec()
}

/// The bytes of `ts`.
///
/// # Safety
///
/// As [`read`], for every device tensor.
unsafe fn capture(ts: &[Tensor]) -> Vec<Vec<u8>> {
    ts.iter()
        .map(|t| match &t.data {
            // SAFETY: as the caller guarantees.
            TensorData::Device(addr, len) => unsafe { read(*addr, *len) },
            TensorData::Host(b) => b.clone(),
            TensorData::Empty => Vec::new(),
        })
        .collect()
}

impl Dumper {
    /// The inputs' bytes before the kernel runs (an output may overwrite
    /// an input), when the mode dumps inputs.
    ///
    /// # Safety
    ///
    /// Called on the worker, with the operator's ranges validated and the
    /// allocation table's read lock held.
    pub unsafe fn before(&self) -> Vec<Vec<u8>> {
        if self.mode == Mode::Output {
            return Vec::new();
        }
        // SAFETY: as the caller guarantees.
        unsafe { capture(&self.inputs) }
    }

    /// After the kernel ran: builds the record and hands it to the writer
    /// thread (files, or the callback).
    ///
    /// # Safety
    ///
    /// As [`Dumper::before`].
    pub unsafe fn after(&self, inputs: Vec<Vec<u8>>) {
        let outputs = if self.mode == Mode::Input {
            Vec::new()
        } else {
            // SAFETY: as the caller guarantees.
            unsafe { capture(&self.outputs) }
        };
        let bytes = match self.stats {
            Some(mask) => {
                let pairs = |ts: &[Tensor], data: &[Vec<u8>]| -> Vec<(TensorSpec, Vec<u8>)> {
                    ts.iter()
                        .zip(data)
                        .map(|(t, d)| (t.spec.clone(), d.clone()))
                        .collect()
                };
                super::dump_stats::csv(
                    mask,
                    &pairs(&self.inputs, &inputs),
                    &pairs(&self.outputs, &outputs),
                )
            }
            None => self.data_file(&inputs, &outputs),
        };
        let n = {
            let mut st = STATE.lock();
            st.count += 1;
            st.pending += 1;
            st.count
        };
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let file = self.dir.join(format!(
            "{t}.{t}.{n}.{s}.{micros}{csv}",
            t = self.op_type,
            s = self.stream,
            csv = if self.stats.is_some() { ".csv" } else { "" }
        ));
        let record = Record {
            file,
            bytes,
            to_callback: self.to_callback,
        };
        if WRITER.send(record).is_err() {
            done_one();
        }
    }

    /// The data file: its JSON line, then the tensors' bytes.
    fn data_file(&self, inputs: &[Vec<u8>], outputs: &[Vec<u8>]) -> Vec<u8> {
        let mut offset = 0usize;
        let mut desc = |ts: &[Tensor], data: &[Vec<u8>]| -> Vec<serde_json::Value> {
            ts.iter()
                .zip(data)
                .map(|(t, d)| {
                    let v = serde_json::json!({
                        "dtype": super::parse::dtype_name(t.spec.dtype),
                        "shape": t.spec.shape,
                        "offset": offset,
                        "size": d.len(),
                    });
                    offset += d.len();
                    v
                })
                .collect()
        };
        let header = serde_json::json!({
            "format": "cann-sim-dump",
            "version": 1,
            "op_type": self.op_type,
            "api": self.api,
            "device": self.device,
            "stream": self.stream,
            "inputs": desc(&self.inputs, inputs),
            "outputs": desc(&self.outputs, outputs),
        });
        let mut bytes = header.to_string().into_bytes();
        bytes.push(b'\n');
        for d in inputs.iter().chain(outputs) {
            bytes.extend_from_slice(d);
        }
        bytes
    }
}

struct Record {
    file: PathBuf,
    bytes: Vec<u8>,
    to_callback: bool,
}

/// The writer thread's queue: records are written (or given to the
/// callback) off the stream's worker, without the allocation table's lock.
static WRITER: LazyLock<std::sync::mpsc::Sender<Record>> = LazyLock::new(|| {
    let (tx, rx) = std::sync::mpsc::channel::<Record>();
    let spawned = std::thread::Builder::new()
        .name("cann-sim-dump".into())
        .spawn(move || {
            for r in rx {
                deliver(&r);
                done_one();
            }
        });
    if spawned.is_err() {
        // No writer: sends fail and each record is dropped (`after`).
        let (dead, _) = std::sync::mpsc::channel();
        return dead;
    }
    tx
});

fn done_one() {
    let mut st = STATE.lock();
    st.pending = st.pending.saturating_sub(1);
    if st.pending == 0 {
        DRAINED.notify_all();
    }
}

fn deliver(r: &Record) {
    if !r.to_callback {
        // A failed write loses this record; the program is not stopped
        // (the release's dump server logs and goes on).
        if let Some(dir) = r.file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(&r.file, &r.bytes);
        return;
    }
    let Some(cb) = STATE.lock().callback else {
        return;
    };
    let name = r.file.to_string_lossy().into_owned();
    let chunks: Vec<&[u8]> = if r.bytes.is_empty() {
        vec![&[][..]]
    } else {
        r.bytes.chunks(CHUNK).collect()
    };
    let head = std::mem::size_of::<acl_sys::acldumpChunk>();
    let mut offset = 0i64;
    for (i, c) in chunks.iter().enumerate() {
        // u64 words: the chunk's alignment (8).
        let total = head + c.len();
        let mut buf = vec![0u64; total.div_ceil(8)];
        let p = buf.as_mut_ptr().cast::<acl_sys::acldumpChunk>();
        let name_bytes = name.as_bytes();
        let n = name_bytes
            .len()
            .min(acl_sys::ACL_DUMP_MAX_FILE_PATH_LENGTH as usize - 1);
        // SAFETY: `buf` holds `total` zeroed, 8-aligned bytes: an
        // `acldumpChunk` header followed by `c.len()` bytes of `dataBuf`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                name_bytes.as_ptr(),
                (*p).fileName.as_mut_ptr().cast(),
                n,
            );
            (*p).bufLen = c.len() as u32;
            (*p).isLastChunk = u32::from(i + 1 == chunks.len());
            (*p).offset = offset;
            (*p).flag = 0;
            std::ptr::copy_nonoverlapping(c.as_ptr(), (*p).dataBuf.as_mut_ptr(), c.len());
        }
        offset += c.len() as i64;
        // SAFETY: the callback the user registered, given a valid chunk of
        // `total` bytes for the duration of the call. Its return value is
        // not used (the release's dump server goes on either way).
        unsafe { cb(p, total as i32) };
    }
}

/// The current local time as `YYYYMMDDhhmmss` (the dump's time stamp
/// directory).
fn timestamp_dir() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as libc::time_t;
    let mut tm = std::mem::MaybeUninit::<libc::tm>::zeroed();
    // SAFETY: valid pointers to a time and a `tm` to fill.
    let filled = unsafe { !libc::localtime_r(&secs, tm.as_mut_ptr()).is_null() };
    if !filled {
        return secs.to_string();
    }
    // SAFETY: filled by `localtime_r`.
    let tm = unsafe { tm.assume_init() };
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

//! The timeline: every task the simulated devices run, and the host-side
//! spans of some API calls, recorded with start and end times and written as
//! Chrome trace-event JSON (open it in `chrome://tracing` or
//! <https://ui.perfetto.dev>).
//!
//! Recording is off unless something asks for it: [`start`] (until
//! [`stop`]), the `CANN_SIM_TRACE=/path/trace.json` variable (read at
//! `aclInit`, which fails when the path cannot take a file; the file is
//! written at `aclFinalize` and again at process exit, and a failed write is
//! reported once and makes the process exit with status 1), or a running
//! `aclprofStart` session. Off, it costs a stream's
//! worker one relaxed atomic load per task. On, each thread appends to its
//! own buffer (a stream's tasks all run on its worker thread, so that is a
//! buffer per stream), behind a lock only [`spans`] and [`write_chrome_json`]
//! ever contend for.
//!
//! ```
//! cann_sim::trace::start();
//! // ... run work on the simulator ...
//! let path = std::env::temp_dir().join(format!("cann-sim-doc-{}.json", std::process::id()));
//! cann_sim::trace::write_chrome_json(&path).unwrap();
//! cann_sim::trace::stop();
//! # std::fs::remove_file(&path).unwrap();
//! ```
//!
//! # Format
//!
//! A JSON object with `traceEvents` and `displayTimeUnit`. Each device is a
//! process (`pid` = device + 1, named `NPU <device>`), each stream a thread
//! of it (`tid` = a number unique to the stream object, named
//! `stream <id>`); host threads are threads of the host process (`pid` = the
//! process id). Spans are `"ph":"X"` events with `ts` and `dur` in
//! microseconds (three decimals: nanosecond resolution), `cat` the kind
//! (`copy`, `fill`, `operator`, `kernel`, `model`, `collective`,
//! `event_record`, `event_wait`, `event_reset`, `callback`, `host_func`,
//! `api`) and `args` with the API that queued the task, its number on the
//! stream, the bytes copied or filled and whether it failed. Names are
//! given by `"ph":"M"` `process_name`/`thread_name` events.

use parking_lot::Mutex;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// The variable naming the file `CANN_SIM_TRACE` writes.
pub const TRACE_VAR: &str = "CANN_SIM_TRACE";

/// Spans kept per thread; later ones are counted as dropped.
pub const MAX_SPANS_PER_THREAD: usize = 1 << 20;

/// Who wants recording: one bit each.
static SOURCES: AtomicU32 = AtomicU32::new(0);
/// [`start`].
const BY_API: u32 = 1;
/// `CANN_SIM_TRACE`.
const BY_ENV: u32 = 2;
/// A running profiling session (`aclprofStart`).
const BY_PROFILER: u32 = 4;

/// Spans not kept because a buffer was full.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// What a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A memory copy (`aclrtMemcpyAsync`...).
    Copy,
    /// A memory fill (`aclrtMemsetAsync`).
    Fill,
    /// An operator (aclop or aclnn).
    Operator,
    /// A kernel launch (`aclrtLaunchKernel`...).
    Kernel,
    /// A model execution (`aclmdlExecuteAsync`).
    Model,
    /// An HCCL collective or send/receive.
    Collective,
    /// `aclrtRecordEvent`.
    EventRecord,
    /// `aclrtStreamWaitEvent`.
    EventWait,
    /// `aclrtResetEvent`.
    EventReset,
    /// `aclrtLaunchCallback`.
    Callback,
    /// `aclrtLaunchHostFunc`.
    HostFunc,
    /// Any other task.
    Other,
    /// A host-side API call (a span on a host thread).
    Api,
    /// A msproftx mark or range (`aclprofMark`, `aclprofPush`/`aclprofPop`,
    /// `aclprofRangeStart`/`aclprofRangeStop`, `aclprofMarkEx`): a span on
    /// the host thread that made it, named by its message.
    Tx,
}

impl Kind {
    /// Its name (the `cat` of the trace event).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Copy => "copy",
            Kind::Fill => "fill",
            Kind::Operator => "operator",
            Kind::Kernel => "kernel",
            Kind::Model => "model",
            Kind::Collective => "collective",
            Kind::EventRecord => "event_record",
            Kind::EventWait => "event_wait",
            Kind::EventReset => "event_reset",
            Kind::Callback => "callback",
            Kind::HostFunc => "host_func",
            Kind::Other => "task",
            Kind::Api => "api",
            Kind::Tx => "msproftx",
        }
    }
}

/// Where a span ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Track {
    /// A stream's worker.
    Stream {
        /// Logical device.
        device: u32,
        /// The stream's id on its device.
        id: i32,
        /// Unique for the stream object in this process.
        uid: u64,
    },
    /// A host thread (API calls).
    Host {
        /// A number unique to the thread in this process.
        thread: u64,
    },
}

/// One recorded span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Where it ran.
    pub track: Track,
    /// What it is.
    pub kind: Kind,
    /// The operator type, kernel name or API (`Add`, `vadd`,
    /// `aclrtMemcpyAsync`).
    pub name: String,
    /// The API that queued the task (or that was called).
    pub api: &'static str,
    /// The task's number on its stream (0 for host spans).
    pub seq: u64,
    /// Bytes copied or filled (0 for other kinds).
    pub bytes: u64,
    /// Copies: `HtoD`, `DtoH`, `DtoD`, `HtoH`; empty otherwise.
    pub direction: &'static str,
    /// Whether it failed.
    pub failed: bool,
    /// Start, nanoseconds since the simulator's epoch.
    pub start_ns: u64,
    /// End, nanoseconds since the simulator's epoch (≥ `start_ns`).
    pub end_ns: u64,
}

/// A thread's buffer.
struct Buffer {
    spans: Mutex<Vec<Span>>,
    /// The thread's name, for host tracks.
    thread_name: String,
}

/// Every thread's buffer (those of ended threads included, until cleared).
static BUFFERS: Mutex<Vec<Arc<Buffer>>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: RefCell<Option<Arc<Buffer>>> = const { RefCell::new(None) };
    /// The name the running task gave itself (operator type, kernel name).
    static TASK_NAME: RefCell<Option<String>> = const { RefCell::new(None) };
    static THREAD_NO: u64 = {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

/// Whether anything records: the one check on the hot path.
#[inline]
pub fn enabled() -> bool {
    SOURCES.load(Ordering::Relaxed) != 0
}

/// Starts recording (until [`stop`]).
pub fn start() {
    crate::state::now_ns(); // fix the epoch
    SOURCES.fetch_or(BY_API, Ordering::Relaxed);
}

/// Stops the recording [`start`] began (`CANN_SIM_TRACE` and profiling
/// sessions go on). What was recorded stays until [`clear`].
pub fn stop() {
    SOURCES.fetch_and(!BY_API, Ordering::Relaxed);
}

/// Forgets every recorded span (and the buffers of threads that ended).
pub fn clear() {
    BUFFERS.lock().retain(|b| {
        b.spans.lock().clear();
        // Only this list holds the buffer of a thread that ended.
        Arc::strong_count(b) > 1
    });
    DROPPED.store(0, Ordering::Relaxed);
}

/// Recording for a profiling session: on while `on`.
pub(crate) fn set_profiling(on: bool) {
    if on {
        SOURCES.fetch_or(BY_PROFILER, Ordering::Relaxed);
    } else {
        SOURCES.fetch_and(!BY_PROFILER, Ordering::Relaxed);
    }
}

/// Whether [`start`] or `CANN_SIM_TRACE` records (besides profiling).
pub(crate) fn recording_outside_profiling() -> bool {
    SOURCES.load(Ordering::Relaxed) & (BY_API | BY_ENV) != 0
}

/// Every span recorded so far, ordered by start time.
pub fn spans() -> Vec<Span> {
    let buffers: Vec<Arc<Buffer>> = BUFFERS.lock().clone();
    let mut all: Vec<Span> = Vec::new();
    for b in &buffers {
        all.extend(b.spans.lock().iter().cloned());
    }
    all.sort_by_key(|s| (s.start_ns, s.end_ns));
    all
}

/// Spans not kept because a thread's buffer held [`MAX_SPANS_PER_THREAD`].
pub fn dropped() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

fn push(span: Span) {
    let pushed = MINE.try_with(|mine| {
        let mut mine = mine.borrow_mut();
        let buf = mine.get_or_insert_with(|| {
            let b = Arc::new(Buffer {
                spans: Mutex::new(Vec::new()),
                thread_name: std::thread::current()
                    .name()
                    .unwrap_or("host thread")
                    .to_string(),
            });
            BUFFERS.lock().push(b.clone());
            b
        });
        let mut spans = buf.spans.lock();
        if spans.len() < MAX_SPANS_PER_THREAD {
            spans.push(span);
        } else {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    });
    if pushed.is_err() {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Records a msproftx span (`start_ns == end_ns` for a mark) on the calling
/// host thread, named `message`, made by `api`. Nothing happens when
/// nothing records.
pub(crate) fn tx_span(api: &'static str, message: &str, start_ns: u64, end_ns: u64) {
    if !enabled() {
        return;
    }
    let thread = THREAD_NO.try_with(|n| *n).unwrap_or(0);
    push(Span {
        track: Track::Host { thread },
        kind: Kind::Tx,
        name: message.to_string(),
        api,
        seq: 0,
        bytes: 0,
        direction: "",
        failed: false,
        start_ns,
        end_ns: end_ns.max(start_ns),
    });
}

/// Names the task running on this worker (an operator's type, a kernel's
/// name); called by the task itself. Nothing happens when nothing records.
pub(crate) fn name_task(name: &str) {
    if enabled() {
        let _ = TASK_NAME.try_with(|n| *n.borrow_mut() = Some(name.to_string()));
    }
}

/// A task about to run on a stream's worker (see `rt::stream`), taken
/// before it runs (the task is consumed by running).
pub(crate) struct TaskStart {
    track: Track,
    kind: Kind,
    api: &'static str,
    seq: u64,
    bytes: u64,
    direction: &'static str,
    start_ns: u64,
}

impl TaskStart {
    /// Notes the start of task `seq` of the stream of `shared`.
    pub(crate) fn new(shared: &crate::rt::stream::Shared, seq: u64, task: &TaskInfo) -> TaskStart {
        let _ = TASK_NAME.try_with(|n| n.borrow_mut().take());
        TaskStart {
            track: Track::Stream {
                device: shared.device,
                id: shared.id,
                uid: shared.uid,
            },
            kind: task.kind,
            api: task.api,
            seq,
            bytes: task.bytes,
            direction: task.direction,
            start_ns: crate::state::now_ns(),
        }
    }

    /// Records the span, ending now.
    pub(crate) fn finish(self, failed: bool) {
        let end_ns = crate::state::now_ns().max(self.start_ns);
        let name = TASK_NAME
            .try_with(|n| n.borrow_mut().take())
            .ok()
            .flatten()
            .unwrap_or_else(|| self.api.to_string());
        push(Span {
            track: self.track,
            kind: self.kind,
            name,
            api: self.api,
            seq: self.seq,
            bytes: self.bytes,
            direction: self.direction,
            failed,
            start_ns: self.start_ns,
            end_ns,
        });
    }
}

/// What the trace needs to know of a task (see `rt::stream::TaskKind`).
pub(crate) struct TaskInfo {
    /// Its kind.
    pub kind: Kind,
    /// The API that queued it.
    pub api: &'static str,
    /// Bytes copied or filled.
    pub bytes: u64,
    /// Copy direction.
    pub direction: &'static str,
}

impl TaskInfo {
    /// What the trace records of `task`.
    pub(crate) fn of(task: &crate::rt::stream::TaskKind) -> TaskInfo {
        use crate::rt::stream::TaskKind as T;
        let plain = |kind, api| TaskInfo {
            kind,
            api,
            bytes: 0,
            direction: "",
        };
        let bytes = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        match task {
            T::Copy {
                api,
                count,
                dst_at,
                src_at,
                ..
            } => TaskInfo {
                kind: Kind::Copy,
                api,
                bytes: bytes(*count),
                direction: direction(dst_at.device.is_some(), src_at.device.is_some()),
            },
            T::Upload {
                api, data, dst_at, ..
            } => TaskInfo {
                kind: Kind::Copy,
                api,
                bytes: bytes(data.len()),
                direction: direction(dst_at.device.is_some(), false),
            },
            T::Fill { api, count, .. } => TaskInfo {
                kind: Kind::Fill,
                api,
                bytes: bytes(*count),
                direction: "",
            },
            T::Op { api, .. } => plain(op_kind(api), api),
            T::Hccl { api, .. } => plain(Kind::Collective, api),
            T::Record(_) => plain(Kind::EventRecord, task.name()),
            T::Wait(_) | T::WaitExternal(_) => plain(Kind::EventWait, task.name()),
            T::ValueWait { api, .. } => plain(Kind::EventWait, api),
            T::ResetEvent(..) => plain(Kind::EventReset, task.name()),
            T::Callback { .. } => plain(Kind::Callback, task.name()),
            T::HostFunc { .. } => plain(Kind::HostFunc, task.name()),
            #[allow(unreachable_patterns, reason = "kinds added later are traced as tasks")]
            _ => plain(Kind::Other, task.name()),
        }
    }
}

/// The direction of a copy between two ends (`true`: device memory).
pub(crate) fn direction(dst_device: bool, src_device: bool) -> &'static str {
    match (src_device, dst_device) {
        (false, true) => "HtoD",
        (true, false) => "DtoH",
        (true, true) => "DtoD",
        (false, false) => "HtoH",
    }
}

/// The kind of an operator-like task, from the API that queued it.
pub(crate) fn op_kind(api: &str) -> Kind {
    if api.starts_with("aclrtLaunchKernel") {
        Kind::Kernel
    } else if api.starts_with("aclmdl") {
        Kind::Model
    } else {
        Kind::Operator
    }
}

/// A host-side span: recorded when dropped (see [`host_span`]).
pub struct HostSpan {
    api: &'static str,
    start_ns: u64,
}

/// Starts a span of the API call `api` on the calling host thread, recorded
/// when the guard drops; `None` (nothing to do) when nothing records.
#[inline]
pub fn host_span(api: &'static str) -> Option<HostSpan> {
    enabled().then(|| HostSpan {
        api,
        start_ns: crate::state::now_ns(),
    })
}

impl Drop for HostSpan {
    fn drop(&mut self) {
        let end_ns = crate::state::now_ns().max(self.start_ns);
        let thread = THREAD_NO.try_with(|n| *n).unwrap_or(0);
        push(Span {
            track: Track::Host { thread },
            kind: Kind::Api,
            name: self.api.to_string(),
            api: self.api,
            seq: 0,
            bytes: 0,
            direction: "",
            failed: false,
            start_ns: self.start_ns,
            end_ns,
        });
    }
}

/// Microseconds with three decimals, exactly, from nanoseconds.
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A JSON string literal.
fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The trace-event JSON of `spans` (see the [module docs](self)).
pub fn chrome_json(spans: &[Span]) -> String {
    let host_pid = u64::from(std::process::id());
    let pid_of = |t: &Track| match t {
        Track::Stream { device, .. } => u64::from(*device) + 1,
        Track::Host { .. } => host_pid,
    };
    let tid_of = |t: &Track| match t {
        Track::Stream { uid, .. } => *uid,
        Track::Host { thread } => *thread,
    };
    let host_names: std::collections::HashMap<u64, String> = {
        let buffers = BUFFERS.lock().clone();
        let mut names = std::collections::HashMap::new();
        for b in buffers {
            if let Some(Track::Host { thread }) = b.spans.lock().first().map(|s| s.track) {
                names.insert(thread, b.thread_name.clone());
            }
        }
        names
    };
    let mut tracks: Vec<Track> = spans.iter().map(|s| s.track).collect();
    tracks.sort();
    tracks.dedup();
    let mut events: Vec<String> = Vec::new();
    let mut devices: Vec<u32> = Vec::new();
    let mut host = false;
    for t in &tracks {
        let (pid, tid) = (pid_of(t), tid_of(t));
        let (name, sort) = match t {
            Track::Stream { device, id, .. } => {
                devices.push(*device);
                (format!("stream {id}"), i64::from(*id))
            }
            Track::Host { thread } => {
                host = true;
                let name = host_names
                    .get(thread)
                    .cloned()
                    .unwrap_or_else(|| format!("host thread {thread}"));
                (name, i64::try_from(*thread).unwrap_or(i64::MAX))
            }
        };
        events.push(format!(
            r#"{{"ph":"M","name":"thread_name","pid":{pid},"tid":{tid},"args":{{"name":{}}}}}"#,
            json_str(&name)
        ));
        events.push(format!(
            r#"{{"ph":"M","name":"thread_sort_index","pid":{pid},"tid":{tid},"args":{{"sort_index":{sort}}}}}"#
        ));
    }
    devices.sort_unstable();
    devices.dedup();
    let soc = crate::config::get().map_or_else(|_| "NPU".to_string(), |c| c.soc_name.clone());
    for d in devices {
        let pid = u64::from(d) + 1;
        events.push(format!(
            r#"{{"ph":"M","name":"process_name","pid":{pid},"args":{{"name":{}}}}}"#,
            json_str(&format!("NPU {d} ({soc}, cann-sim)"))
        ));
        events.push(format!(
            r#"{{"ph":"M","name":"process_sort_index","pid":{pid},"args":{{"sort_index":{pid}}}}}"#
        ));
    }
    if host {
        events.push(format!(
            r#"{{"ph":"M","name":"process_name","pid":{host_pid},"args":{{"name":"host (pid {host_pid})"}}}}"#
        ));
        events.push(format!(
            r#"{{"ph":"M","name":"process_sort_index","pid":{host_pid},"args":{{"sort_index":0}}}}"#
        ));
    }
    for s in spans {
        let mut args = format!(r#""api":{}"#, json_str(s.api));
        if s.seq > 0 {
            let _ = write!(args, r#","task":{}"#, s.seq);
        }
        if let Track::Stream { device, id, .. } = s.track {
            let _ = write!(args, r#","device":{device},"stream":{id}"#);
        }
        if matches!(s.kind, Kind::Copy | Kind::Fill) {
            let _ = write!(args, r#","bytes":{}"#, s.bytes);
        }
        if !s.direction.is_empty() {
            let _ = write!(args, r#","direction":"{}""#, s.direction);
        }
        if s.failed {
            args.push_str(r#","failed":true"#);
        }
        events.push(format!(
            r#"{{"ph":"X","name":{},"cat":"{}","ts":{},"dur":{},"pid":{},"tid":{},"args":{{{args}}}}}"#,
            json_str(&s.name),
            s.kind.as_str(),
            micros(s.start_ns),
            micros(s.end_ns - s.start_ns),
            pid_of(&s.track),
            tid_of(&s.track),
        ));
    }
    let mut out = String::from("{\"traceEvents\":[\n");
    out.push_str(&events.join(",\n"));
    let _ = write!(
        out,
        "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"cann-sim {}\",\"dropped_spans\":{}}}}}\n",
        env!("CARGO_PKG_VERSION"),
        dropped()
    );
    out
}

/// Writes every span recorded so far to `path` as trace-event JSON.
///
/// The path must be a regular file or not exist yet (in an existing
/// directory); it is checked before it is opened ([`check_output_path`]),
/// and opened non-blocking, so a FIFO never blocks the write and a device
/// is never written.
///
/// # Errors
///
/// The path is not a regular file, or the file cannot be written.
pub fn write_chrome_json(path: impl AsRef<Path>) -> std::io::Result<()> {
    write_regular(path.as_ref(), chrome_json(&spans()).as_bytes())
}

/// Checks, without opening it, that `path` can take an output file: it is
/// a regular file (or a link to one), or nothing is there yet and its
/// directory exists. Programs call it before their work, so that a bad
/// trace path fails at once rather than after the work.
///
/// # Errors
///
/// A message for a person: what the path is, or that its directory does
/// not exist.
///
/// ```
/// use cann_sim::trace::check_output_path;
/// assert!(check_output_path(std::env::temp_dir().join("new-trace.json")).is_ok());
/// assert_eq!(
///     check_output_path("/dev/null").unwrap_err(),
///     "/dev/null is a device, not a regular file: give the path of a file to write"
/// );
/// ```
pub fn check_output_path(path: impl AsRef<Path>) -> Result<(), String> {
    let path = path.as_ref();
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(format!(
            "{} is a {}, not a regular file: give the path of a file to write",
            path.display(),
            crate::model::file_kind(&m.file_type())
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => Ok(()),
                _ => Err(format!(
                    "cannot write {}: the directory {} does not exist",
                    path.display(),
                    dir.display()
                )),
            }
        }
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}

/// Writes `bytes` to `path` after [`check_output_path`], opening it
/// non-blocking and checking again what was opened (a FIFO put there in
/// between is neither blocked on nor written).
fn write_regular(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    check_output_path(path).map_err(std::io::Error::other)?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    f.write_all(bytes)
}

/// Why `CANN_SIM_TRACE` cannot be written, checked at `aclInit` so that a
/// bad path fails the program at its start, not after its work.
pub(crate) fn env_error() -> Option<String> {
    let path = env_path()?;
    check_output_path(path)
        .err()
        .map(|e| format!("{TRACE_VAR}={path:?}: {e}"))
}

/// The path `CANN_SIM_TRACE` names, read once.
fn env_path() -> Option<&'static str> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var(TRACE_VAR)
            .ok()
            .filter(|p| !p.trim().is_empty())
    })
    .as_deref()
}

/// Starts recording when `CANN_SIM_TRACE` is set (at `aclInit`), and makes
/// sure the file is written at process exit.
pub(crate) fn init_from_env() {
    static ONCE: AtomicBool = AtomicBool::new(false);
    if env_path().is_none() || ONCE.swap(true, Ordering::Relaxed) {
        return;
    }
    crate::state::now_ns();
    SOURCES.fetch_or(BY_ENV, Ordering::Relaxed);
    extern "C" fn at_exit() {
        // No panic may leave this function (it is called from C).
        let _ = std::panic::catch_unwind(write_env_file_at_exit);
    }
    // SAFETY: `at_exit` is a plain `extern "C" fn()` that never unwinds.
    unsafe { libc::atexit(at_exit) };
}

/// Set once writing the `CANN_SIM_TRACE` file has failed.
static ENV_WRITE_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes the `CANN_SIM_TRACE` file (at `aclFinalize` and at exit). The
/// first failure is said on stderr, and no write is tried after it; at exit
/// the process then ends with status 1 (a program whose trace was lost does
/// not look successful).
pub(crate) fn write_env_file() {
    let Some(path) = env_path() else {
        return;
    };
    if SOURCES.load(Ordering::Relaxed) & BY_ENV == 0 || ENV_WRITE_FAILED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = write_chrome_json(path)
        && !ENV_WRITE_FAILED.swap(true, Ordering::Relaxed)
    {
        eprintln!(
            "cann-sim: cannot write the trace {TRACE_VAR}={path:?}: {e}; the process will exit with status 1"
        );
    }
}

/// At exit: the last write of the `CANN_SIM_TRACE` file, and status 1 if
/// any write of it failed.
fn write_env_file_at_exit() {
    write_env_file();
    if ENV_WRITE_FAILED.load(Ordering::Relaxed) {
        // `exit` may not be called again from an exit handler; `_exit`
        // ends the process at once with this status.
        // SAFETY: `_exit` has no preconditions; it does not return.
        unsafe { libc::_exit(1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact() {
        assert_eq!(micros(0), "0.000");
        assert_eq!(micros(1_234_567), "1234.567");
        assert_eq!(micros(5), "0.005");
    }

    #[test]
    fn directions() {
        assert_eq!(direction(true, false), "HtoD");
        assert_eq!(direction(false, true), "DtoH");
        assert_eq!(op_kind("aclrtLaunchKernelWithConfig"), Kind::Kernel);
        assert_eq!(op_kind("aclnnAdd"), Kind::Operator);
    }
}

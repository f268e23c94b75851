//! Check mode (`CANN_SIM_CHECK`): a sanitizer for programs running on the
//! simulated NPU, in the spirit of CUDA's compute-sanitizer.
//!
//! | value | effect |
//! |---|---|
//! | `off` (default, also empty or unset) | exactly the released runtime's behaviour |
//! | `report` | the offending call fails with the code below and a message (`aclGetRecentErrMsg`); the harmful action is not done; [`reports()`] counts it |
//! | `abort` | the same message goes to stderr and the process aborts (`std::process::abort`) |
//!
//! The mode is read once, at the simulator's first use of it, from the
//! environment; a test binary may fix it with [`set_mode`] before that
//! instead. An invalid value is treated as `off`, said once on stderr, and
//! makes `aclInit` fail with `ACL_ERROR_INVALID_PARAM` (100000) naming the
//! variable and the valid values.
//!
//! With the check on, the simulator knows which device and pinned-host byte
//! ranges each queued task reads and writes (copies and fills their
//! ends; operators, aclnn and models their tensors; HCCL tasks their send
//! buffers (read) and receive buffers (written); kernels every argument that
//! points into device memory, as an *opaque* use: which bytes a kernel
//! touches is unknown, so kernel arguments (and a model's work memory) are
//! checked for frees and use after free, never for races). A task is
//! *pending* from its enqueue until its stream's worker has finished it (or
//! dropped it). It reports:
//!
//! | report | when | code |
//! |---|---|---|
//! | `free-while-pending` | `aclrtFree`, `aclrtFreeHost`, `aclrtUnmapMem` of an allocation a pending task uses | `ACL_ERROR_RT_MEMORY_FREE` (207002); the memory is not freed |
//! | `host-race` | a synchronous access (`aclrtMemcpy`, `aclrtMemset`, `aclrtMemsetD32`, `aclrtMemcpy2d`, `aclmdlExecute`, the host side of a pageable or staged `aclrtMemcpyAsync`) writing bytes a pending task reads or writes, or reading bytes it writes | `ACL_ERROR_RT_STREAM_NOT_COMPLETE` (507004); nothing is done |
//! | `stream-race` | a task queued on stream T whose bytes conflict (write/write, read/write) with a pending task of stream S ≠ T that does not happen before it | 507004 (aclnn: `ACLNN_ERR_RUNTIME_ERROR`, HCCL: `HCCL_E_RUNTIME`, as for any runtime failure); the task is not queued |
//! | `use-after-free` | a call given memory that was freed (quarantined, see below), or freeing it again | `ACL_ERROR_RT_PARAM_INVALID` (107000; HCCL `HCCL_E_PARA`, aclnn 361001) |
//! | `double-destroy` | destroying an aclnn object (tensor, scalar, array, list, executor) already destroyed | `ACLNN_ERR_PARAM_INVALID` (161002) |
//! | `copy-kind` | `aclrtMemcpy`/`aclrtMemcpyAsync` given a kind other than `ACL_MEMCPY_DEFAULT` that contradicts the pointers between device and pinned memory | none: the runtime corrects the kind (hicann/runtime `src/runtime/api/impl/api_error.cc`, `MemcpyKindAutoCorrect`), so in `report` mode the call succeeds and the copy is done; only [`reports()`] records it |
//! | `free-while-captured` | `aclrtFree`, `aclrtFreeHost`, `aclrtUnmapMem` of an allocation a live captured model uses (capturing or captured, not yet destroyed by `aclmdlRIDestroy`), the work of streams that joined the capture through `aclrtStreamWaitEvent` included; the same for a model built explicitly (`aclmdlRIBuildBegin`: the work its bound streams recorded, its label switches' indices) | 207002 as `free-while-pending` (see below); the memory is not freed |
//! | `uninitialised-read` | a synchronous access or a queued task reading device memory that is "written-at-launch" (see below) | 507004, as `host-race` and `stream-race`; nothing is done / the task is not queued |
//!
//! **Graph capture** (`aclmdlRI*`, `rt/capture.rs`): each task
//! recorded into a model (from the capturing stream or a joined one) is
//! registered here with its byte ranges (`on_capture`) until the model is
//! destroyed or its capture abandoned (`on_model_gone`); a launch
//! (`aclmdlRIExecuteAsync`) queues the tasks again, pending with their ranges
//! like any task (`Launch`; messages say `aclmdlRIExecuteAsync task #n (the
//! captured aclrtMemsetAsync of model 0x…)`), so launches race, and host
//! accesses and frees race launches, as queued work does. Device bytes that a
//! captured task writes in an allocation nothing wrote outside a capture
//! before are *written-at-launch*: unreadable until a launch of the model is
//! queued (stream order and the race reports cover it from then on) or
//! something outside a capture writes them. An allocation written outside a
//! capture counts as written in full; pinned host memory never is
//! written-at-launch (plain host stores write it unseen).
//!
//! **Built models** (`aclmdlRIBuildBegin` … `aclmdlRIBuildEnd`,
//! `model/build.rs`) hold memory the same way (`on_build`): each task a
//! bound stream records, and each label switch's index, is registered from
//! its recording until `aclmdlRIDestroy`; an execution is one task whose
//! ranges are all of the model's, so executions race, and host accesses
//! and frees race executions, as queued work does; what a recorded task
//! writes in memory nothing wrote before is written-at-launch until an
//! execution is queued.
//!
//! The codes: the released runtime checks neither (`aclrtFree` does not look
//! at models; a read returns what the memory holds), so the check picks the
//! code of the nearest failure. A free the runtime cannot do is
//! `ACL_ERROR_RT_MEMORY_FREE` (207002, "memory free error",
//! `acl/error_codes/rt_error_codes.h`), the code of `free-while-pending`:
//! freeing what a captured model holds is the same mistake one launch
//! earlier, and a caller handles both alike. Reading bytes whose producer
//! (the launch) has not been queued is `ACL_ERROR_RT_STREAM_NOT_COMPLETE`
//! (507004, "stream not complete"), the code of `host-race`: the reader must
//! wait for work first.
//!
//! Every message starts with the failing call, then `CANN_SIM_CHECK <report>:`,
//! and names the other call (the pending task's API, e.g. `aclnnAdd`, or the
//! freeing call), both streams (handle address, id and device) and the byte
//! ranges.
//!
//! **Happens-before** uses vector clocks: each stream numbers its tasks;
//! `aclrtRecordEvent` captures the recording stream's clock (its own task
//! number joined with what it has waited for), `aclrtStreamWaitEvent` joins
//! that into the waiting stream's clock. A pending task P of stream S
//! happens before a new task of stream T when T's clock for S is at least
//! P's number. Host synchronisation completes tasks, and completed tasks are
//! no longer pending, so only conflicts with tasks that may really still run
//! are reported.
//!
//! **Use after free**: freed device and pinned host blocks are filled with
//! [`FREED`] and quarantined — kept allocated, so their addresses are not
//! handed out again — until 64 MiB ([`QUARANTINE_BYTES`]) of memory of the
//! same device (or of pinned host memory) or [`QUARANTINE_COUNT`] blocks have
//! been quarantined after them. Quarantined device memory counts as free in
//! `aclrtGetMemInfo` and the HBM budget (the user freed it); it costs host
//! memory only. Unmapped virtual memory is remembered (not held) until its
//! reservation is released.
//!
//! [`reports()`] counts the reports of the process and keeps the latest
//! messages, so that a test can assert that a correct program made none:
//!
//! ```
//! use cann_sim::check::{self, Mode};
//! // Before anything else uses the simulator (or set CANN_SIM_CHECK=report).
//! check::set_mode(Mode::Report).unwrap();
//! cann_sim::install().unwrap();
//! // ... the program under test ...
//! assert_eq!(check::reports().count, 0, "{:#?}", check::reports().recent);
//! ```

use crate::rt::stream::{Shared, TaskKind};
use crate::rt::{Error, ErrorKind, Stream};
use crate::state::{self, MemKind, MemTable, Region};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{LazyLock, OnceLock};

/// The environment variable that selects the mode.
pub const ENV: &str = "CANN_SIM_CHECK";

/// Byte written over freed (quarantined) memory.
pub const FREED: u8 = 0xDD;

/// Bytes of one device's (or of pinned host) memory quarantined after a
/// freed block before the block is really released.
pub const QUARANTINE_BYTES: u64 = 64 << 20;

/// Blocks of one device (or of pinned host memory) quarantined at most.
pub const QUARANTINE_COUNT: usize = 4096;

/// What the check does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No check: the released runtime's behaviour.
    Off,
    /// The offending call fails with a message; counted in [`reports()`].
    Report,
    /// The message goes to stderr and the process aborts.
    Abort,
}

const UNSET: u8 = 0;
const OFF: u8 = 1;
const REPORT: u8 = 2;
const ABORT: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(UNSET);
static FROM_ENV: OnceLock<Result<Mode, String>> = OnceLock::new();

fn encode(m: Mode) -> u8 {
    match m {
        Mode::Off => OFF,
        Mode::Report => REPORT,
        Mode::Abort => ABORT,
    }
}

fn decode(v: u8) -> Mode {
    match v {
        REPORT => Mode::Report,
        ABORT => Mode::Abort,
        _ => Mode::Off,
    }
}

/// Parses a `CANN_SIM_CHECK` value: `off`, `report` or `abort` (any case;
/// empty means `off`).
///
/// # Errors
///
/// A message naming the variable and the valid values.
pub fn parse(value: &str) -> Result<Mode, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "off" => Ok(Mode::Off),
        "report" => Ok(Mode::Report),
        "abort" => Ok(Mode::Abort),
        _ => Err(format!(
            "{ENV}={value:?} is not a check mode; expected off, report or abort"
        )),
    }
}

/// Writes to the process's stderr directly: not through `eprintln!`, which
/// a test harness captures (and loses when the process aborts).
fn to_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn env_mode() -> &'static Result<Mode, String> {
    FROM_ENV.get_or_init(|| {
        let parsed = parse(&std::env::var(ENV).unwrap_or_default());
        if let Err(msg) = &parsed {
            to_stderr(&format!(
                "cann-sim: {msg}; the check is off (and aclInit fails)\n"
            ));
        }
        parsed
    })
}

#[cold]
fn init() -> u8 {
    let v = encode(*env_mode().as_ref().unwrap_or(&Mode::Off));
    match MODE.compare_exchange(UNSET, v, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => v,
        Err(current) => current,
    }
}

/// The process's mode: fixed at the first call (from `CANN_SIM_CHECK`, or
/// by an earlier [`set_mode`]).
#[inline]
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        UNSET => decode(init()),
        v => decode(v),
    }
}

/// Whether the check is on (one relaxed atomic load once the mode is fixed).
#[inline]
pub(crate) fn enabled() -> bool {
    mode() != Mode::Off
}

/// Fixes the mode for this process instead of `CANN_SIM_CHECK` (for a test
/// binary: call it before anything else uses the simulator).
///
/// # Errors
///
/// The mode already in force, when it was fixed before to another one.
pub fn set_mode(mode: Mode) -> Result<(), Mode> {
    match MODE.compare_exchange(UNSET, encode(mode), Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => Ok(()),
        Err(v) if decode(v) == mode => Ok(()),
        Err(v) => Err(decode(v)),
    }
}

/// The message for an invalid `CANN_SIM_CHECK`, for `aclInit` (`None` when
/// the mode was fixed by [`set_mode`] before the variable was read).
pub(crate) fn env_error() -> Option<String> {
    mode();
    FROM_ENV.get().and_then(|r| r.as_ref().err().cloned())
}

// ---- reports ------------------------------------------------------------

/// What a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Memory freed or unmapped while a pending task uses it.
    FreeWhilePending,
    /// A synchronous (host) access conflicting with a pending task.
    HostRace,
    /// A task conflicting with an unordered pending task of another stream.
    StreamRace,
    /// Freed memory used (or freed again).
    UseAfterFree,
    /// An aclnn object destroyed twice.
    DoubleDestroy,
    /// A copy kind that contradicts the pointers (the runtime corrects it;
    /// the call succeeds).
    CopyKind,
    /// Memory freed or unmapped while a live captured model (captured, not
    /// destroyed) uses it: every later launch would use freed memory.
    FreeWhileCaptured,
    /// Device memory read (by the host or by queued work) whose only
    /// initialisation is a captured task that no launch has run yet.
    UninitialisedRead,
}

impl Kind {
    /// The name in messages: `free-while-pending`, `host-race`,
    /// `stream-race`, `use-after-free`, `double-destroy`, `copy-kind`,
    /// `free-while-captured`, `uninitialised-read`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::FreeWhilePending => "free-while-pending",
            Kind::HostRace => "host-race",
            Kind::StreamRace => "stream-race",
            Kind::UseAfterFree => "use-after-free",
            Kind::DoubleDestroy => "double-destroy",
            Kind::CopyKind => "copy-kind",
            Kind::FreeWhileCaptured => "free-while-captured",
            Kind::UninitialisedRead => "uninitialised-read",
        }
    }
}

/// One report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What it is about.
    pub kind: Kind,
    /// The message, as the offending call recorded it for
    /// `aclGetRecentErrMsg`.
    pub message: String,
}

/// The reports of the process so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reports {
    /// How many reports were made (since the start, or [`clear_reports`]).
    pub count: u64,
    /// The latest ones, oldest first (at most [`KEEP_REPORTS`]).
    pub recent: Vec<Report>,
}

/// Reports kept in [`Reports::recent`].
pub const KEEP_REPORTS: usize = 32;

static REPORTS: LazyLock<Mutex<(u64, VecDeque<Report>)>> =
    LazyLock::new(|| Mutex::new((0, VecDeque::new())));

/// The reports made so far: tests of the safe crates assert that
/// `reports().count == 0` after running with the check on.
pub fn reports() -> Reports {
    let r = REPORTS.lock();
    Reports {
        count: r.0,
        recent: r.1.iter().cloned().collect(),
    }
}

/// Forgets the reports made so far.
pub fn clear_reports() {
    let mut r = REPORTS.lock();
    r.0 = 0;
    r.1.clear();
}

/// Makes a report from `api`: counts it (or, in abort mode, prints it and
/// aborts). Returns `CANN_SIM_CHECK <kind>: <body>`, which the caller
/// records after `"{api}: "`.
pub(crate) fn report(kind: Kind, api: &str, body: &str) -> String {
    let tagged = format!("CANN_SIM_CHECK {}: {body}", kind.name());
    let message = format!("{api}: {tagged}");
    if mode() == Mode::Abort {
        to_stderr(&format!(
            "cann-sim: {message}\ncann-sim: aborting ({ENV}=abort)\n"
        ));
        std::process::abort();
    }
    let mut r = REPORTS.lock();
    r.0 += 1;
    if r.1.len() == KEEP_REPORTS {
        r.1.pop_front();
    }
    r.1.push_back(Report { kind, message });
    tagged
}

// ---- accesses -------------------------------------------------------------

/// How a task uses a byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// Only reads it.
    Read,
    /// Writes it (and may read it).
    Write,
    /// Uses some of the allocation, which bytes and how unknown (kernel
    /// arguments, a model's work memory): checked for frees, not for races.
    Opaque,
}

impl Use {
    fn verb(self) -> &'static str {
        match self {
            Use::Read => "reads",
            Use::Write => "writes",
            Use::Opaque => "uses",
        }
    }
}

/// A byte range a task (or a synchronous call) touches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Access {
    /// The argument, for messages (`dst`, `input`, `sendBuf`...).
    pub what: &'static str,
    /// First byte.
    pub addr: usize,
    /// Bytes.
    pub len: usize,
    /// How.
    pub how: Use,
}

impl Access {
    pub(crate) fn new(what: &'static str, addr: usize, len: usize, how: Use) -> Access {
        Access {
            what,
            addr,
            len,
            how,
        }
    }
}

/// An access with the allocations it lies in.
struct Resolved {
    acc: Access,
    /// Ids of the allocations it touches (several for adjacent virtual
    /// memory mappings).
    ids: Vec<u64>,
    /// Where, for messages.
    place: &'static str,
    device: Option<u32>,
}

impl Resolved {
    fn describe(&self) -> String {
        let a = &self.acc;
        let place = match self.device {
            Some(d) => format!("{} {d}", self.place),
            None => self.place.to_string(),
        };
        if a.how == Use::Opaque {
            return format!(
                "the allocation containing {:#x} ({place}, {}: which bytes it touches is unknown)",
                a.addr, a.what
            );
        }
        format!(
            "[{:#x}, {:#x}) ({} bytes of {place}, {})",
            a.addr,
            a.addr.saturating_add(a.len),
            a.len,
            a.what
        )
    }
}

fn resolve(table: &MemTable, accesses: &[Access]) -> Vec<Resolved> {
    accesses
        .iter()
        .filter(|a| a.len > 0)
        .filter_map(|a| {
            let touched = table.allocs_touched(a.addr, a.len);
            let (place, device) = match touched.first()?.1 {
                MemKind::Device(d) => ("device memory on device", Some(d)),
                MemKind::Host => ("pinned host memory", None),
            };
            Some(Resolved {
                acc: *a,
                ids: touched.into_iter().map(|(id, _)| id).collect(),
                place,
                device,
            })
        })
        .collect()
}

fn overlap(a: &Access, b: &Access) -> bool {
    a.addr < b.addr.saturating_add(b.len) && b.addr < a.addr.saturating_add(a.len)
}

fn conflict(a: Use, b: Use) -> bool {
    !matches!(
        (a, b),
        (Use::Opaque, _) | (_, Use::Opaque) | (Use::Read, Use::Read)
    )
}

// ---- streams and clocks -----------------------------------------------------

/// A vector clock: per stream (by unique id), the last of its tasks known
/// to happen before.
pub(crate) type Clock = BTreeMap<u64, u64>;

/// The clock an event record on `stream` (as task `seq`) captures.
pub(crate) fn capture(stream: &Shared, seq: u64) -> Option<Clock> {
    if !enabled() {
        return None;
    }
    let mut c = stream.clock.lock().clone();
    let own = c.entry(stream.uid).or_insert(0);
    *own = (*own).max(seq);
    Some(c)
}

fn join(into: &mut Clock, from: &Clock) {
    for (&k, &v) in from {
        let e = into.entry(k).or_insert(0);
        *e = (*e).max(v);
    }
}

/// A stream, as messages name it.
#[derive(Debug, Clone, Copy)]
struct StreamRef {
    uid: u64,
    handle: usize,
    id: i32,
    device: u32,
    is_default: bool,
}

impl StreamRef {
    fn of(s: &Stream) -> StreamRef {
        StreamRef {
            uid: s.shared.uid,
            handle: s as *const Stream as usize,
            id: s.id,
            device: s.device,
            is_default: s.is_default,
        }
    }
}

impl std::fmt::Display for StreamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stream {:#x} ({}stream {} on device {})",
            self.handle,
            if self.is_default { "the default " } else { "" },
            self.id,
            self.device
        )
    }
}

// ---- pending tasks ------------------------------------------------------------

struct PendingTask {
    api: &'static str,
    /// For a task of a launch (`aclmdlRIExecuteAsync`): the captured call
    /// it runs again, and the model's handle.
    captured: Option<(&'static str, usize)>,
    stream: StreamRef,
    seq: u64,
    /// Its stream's clock when it was queued: what it comes after.
    clock: Clock,
    accesses: Vec<Resolved>,
}

impl PendingTask {
    fn label(&self) -> String {
        match self.captured {
            None => format!("{} task #{} on {}", self.api, self.seq, self.stream),
            Some((call, model)) => format!(
                "{} task #{} (the captured {call} of model {model:#x}) on {}",
                self.api, self.seq, self.stream
            ),
        }
    }
}

/// A pending task: its stream's unique id and its number there.
type Key = (u64, u64);

/// The pending accesses inside one allocation, by first address: (first
/// address, task, index of the access in the task) → end address.
#[derive(Default)]
struct AllocIndex {
    by_start: BTreeMap<(usize, Key, usize), usize>,
    /// The longest access indexed since the index was last empty: an
    /// access overlapping `[a, b)` starts in `[a - longest, b)`.
    longest: usize,
}

/// The pending tasks that touch memory, indexed by allocation and address,
/// so that a check looks only at the accesses near the new one.
#[derive(Default)]
struct Pending {
    tasks: HashMap<Key, PendingTask>,
    by_alloc: HashMap<u64, AllocIndex>,
}

impl Pending {
    fn insert(&mut self, t: PendingTask) {
        let key = (t.stream.uid, t.seq);
        for (i, a) in t.accesses.iter().enumerate() {
            for id in &a.ids {
                let idx = self.by_alloc.entry(*id).or_default();
                idx.by_start
                    .insert((a.acc.addr, key, i), a.acc.addr.saturating_add(a.acc.len));
                idx.longest = idx.longest.max(a.acc.len);
            }
        }
        self.tasks.insert(key, t);
    }

    fn remove(&mut self, key: Key) {
        let Some(t) = self.tasks.remove(&key) else {
            return;
        };
        for (i, a) in t.accesses.iter().enumerate() {
            for id in &a.ids {
                if let Some(idx) = self.by_alloc.get_mut(id) {
                    idx.by_start.remove(&(a.acc.addr, key, i));
                    if idx.by_start.is_empty() {
                        self.by_alloc.remove(id);
                    }
                }
            }
        }
    }

    /// The first pending access (of a task `skip` does not exclude) that
    /// conflicts with `a`.
    fn conflict(
        &self,
        a: &Resolved,
        skip: impl Fn(&PendingTask) -> bool,
    ) -> Option<(&PendingTask, &Resolved)> {
        if a.acc.how == Use::Opaque {
            return None;
        }
        let end = a.acc.addr.saturating_add(a.acc.len);
        for id in &a.ids {
            let Some(idx) = self.by_alloc.get(id) else {
                continue;
            };
            let lo = a.acc.addr.saturating_sub(idx.longest);
            let near = idx
                .by_start
                .range((lo, (0, 0), 0)..(end, (0, 0), 0))
                .filter(|&(_, &e)| e > a.acc.addr);
            for (&(_, key, i), _) in near {
                let Some(t) = self.tasks.get(&key) else {
                    continue;
                };
                let Some(pa) = t.accesses.get(i) else {
                    continue;
                };
                if conflict(a.acc.how, pa.acc.how) && overlap(&a.acc, &pa.acc) && !skip(t) {
                    return Some((t, pa));
                }
            }
        }
        None
    }

    /// A pending task that uses allocation `id` at all.
    fn user_of(&self, id: u64) -> Option<(&PendingTask, &Resolved)> {
        let (&(_, key, i), _) = self.by_alloc.get(&id)?.by_start.iter().next()?;
        let t = self.tasks.get(&key)?;
        Some((t, t.accesses.get(i)?))
    }
}

static PENDING: LazyLock<Mutex<Pending>> = LazyLock::new(|| Mutex::new(Pending::default()));

/// The launch of a captured model (`aclmdlRIExecuteAsync`) that queues a
/// task: one of the model's captured tasks, run again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch {
    /// The model's handle, for messages.
    pub model: usize,
}

/// The API a launch's tasks are reported under.
const LAUNCH_API: &str = "aclmdlRIExecuteAsync";

/// Called by `Stream::enqueue` (with the stream's queue locked) for task
/// `seq` (`launch`: a task of a captured model's launch): joins a waited
/// event's clock, checks the task's memory against the pending tasks of
/// other streams and against memory only a capture initialises, and
/// registers it. Returns whether the task was registered (its completion
/// must then call [`on_complete`]).
///
/// # Errors
///
/// A `stream-race` or `uninitialised-read` report: 507004 and the message
/// (after the caller's function name); the task must not be queued.
pub(crate) fn on_enqueue(
    stream: &Stream,
    seq: u64,
    kind: &TaskKind,
    launch: Option<Launch>,
) -> Result<bool, Error> {
    if let TaskKind::Wait(record) = kind {
        if let Some(c) = &record.clock {
            join(&mut stream.shared.clock.lock(), c);
        }
        return Ok(false);
    }
    let accesses = kind.accesses();
    if accesses.is_empty() {
        return Ok(false);
    }
    let me = StreamRef::of(stream);
    let clock = stream.shared.clock.lock().clone();
    let mut pending = PENDING.lock();
    let resolved = resolve(&state::memory().read(), &accesses);
    if resolved.is_empty() {
        return Ok(false);
    }
    let task = PendingTask {
        api: if launch.is_some() {
            LAUNCH_API
        } else {
            kind.name()
        },
        captured: launch.map(|l| (kind.name(), l.model)),
        stream: me,
        seq,
        clock,
        accesses: resolved,
    };
    let ordered = |t: &PendingTask| {
        t.stream.uid == me.uid || task.clock.get(&t.stream.uid).is_some_and(|&c| c >= t.seq)
    };
    for a in &task.accesses {
        if let Some((t, pa)) = pending.conflict(a, ordered) {
            let body = format!(
                "the new {} {} {}, and {} {} {}; the task is still pending and nothing orders \
                 the two (record an event on stream {} after {} and make stream {} wait for it \
                 with aclrtStreamWaitEvent, or synchronise first). The task was not queued.",
                task.label(),
                a.acc.how.verb(),
                a.describe(),
                t.label(),
                pa.acc.how.verb(),
                pa.describe(),
                t.stream.id,
                t.api,
                me.id,
            );
            return Err(Error::new(
                ErrorKind::StreamNotComplete,
                report(Kind::StreamRace, task.api, &body),
            ));
        }
    }
    let who = || format!("the new {}", task.label());
    CAPTURED
        .lock()
        .eager(task.api, who, &task.accesses, "The task was not queued.")?;
    pending.insert(task);
    Ok(true)
}

// ---- captured models ------------------------------------------------------------

/// One captured task's memory.
struct CapturedStep {
    /// The captured call (`aclrtMemsetAsync`, `aclnnAdd`...).
    api: &'static str,
    /// The stream it was captured from (the capturing one or a joined one).
    stream: StreamRef,
    accesses: Vec<Resolved>,
}

/// A live captured model's memory.
struct CapturedModel {
    /// Its handle, for messages.
    handle: usize,
    /// Built explicitly (`aclmdlRIBuildBegin`), not captured: the messages
    /// say "built" and "recorded".
    built: bool,
    /// By step (index in the model).
    steps: HashMap<usize, CapturedStep>,
}

/// Bytes of device memory that only a capture initialises
/// ("written-at-launch").
#[derive(Clone)]
struct AtLaunch {
    addr: usize,
    end: usize,
    /// The model's uid.
    model: u64,
    handle: usize,
    /// The model was built explicitly, not captured.
    built: bool,
    api: &'static str,
    stream: StreamRef,
}

/// The memory of live captured models, and what only they initialise.
#[derive(Default)]
struct Captured {
    /// Live models (captured or capturing, not destroyed), by uid.
    models: HashMap<u64, CapturedModel>,
    /// Allocation id → model uid → how many captured accesses use it.
    by_alloc: HashMap<u64, HashMap<u64, usize>>,
    /// Device allocations written outside a capture: by the host, by a
    /// queued task, by a launch. (Pinned host memory is written by plain
    /// host stores the simulator does not see: never tracked.)
    written: HashSet<u64>,
    /// Allocation id → its ranges that only a capture writes, not yet run.
    at_launch: HashMap<u64, Vec<AtLaunch>>,
}

static CAPTURED: LazyLock<Mutex<Captured>> = LazyLock::new(|| Mutex::new(Captured::default()));

/// Allocation ids of a device access.
fn device_ids(a: &Resolved) -> &[u64] {
    if a.device.is_some() { &a.ids } else { &[] }
}

impl Captured {
    /// Forgets step `step` of model `model` (replaced, or the model gone).
    fn drop_step(&mut self, model: u64, step: &CapturedStep) {
        for a in &step.accesses {
            for id in &a.ids {
                if let Some(users) = self.by_alloc.get_mut(id) {
                    if let Some(n) = users.get_mut(&model) {
                        *n = n.saturating_sub(1);
                        if *n == 0 {
                            users.remove(&model);
                        }
                    }
                    if users.is_empty() {
                        self.by_alloc.remove(id);
                    }
                }
            }
        }
    }

    /// Checks the reads of an eager access (by the host, a queued task or a
    /// launch) against memory only a capture initialises, then notes its
    /// writes: the bytes are initialised from now on.
    fn eager(
        &mut self,
        api: &str,
        who: impl FnOnce() -> String,
        accesses: &[Resolved],
        tail: &str,
    ) -> Result<(), Error> {
        if !self.at_launch.is_empty() {
            for a in accesses.iter().filter(|a| a.acc.how == Use::Read) {
                let (lo, hi) = (a.acc.addr, a.acc.addr.saturating_add(a.acc.len));
                let hit = device_ids(a)
                    .iter()
                    .filter_map(|id| self.at_launch.get(id))
                    .flatten()
                    .find(|r| r.addr < hi && lo < r.end);
                if let Some(r) = hit {
                    let body = format!(
                        "{} reads {}, which only model {:#x} initialises: its {} {} \
                         (from {}) writes [{:#x}, {:#x}) and no launch of the model has been \
                         queued since, so those bytes were never written (launch the model with \
                         aclmdlRIExecuteAsync first, or initialise the memory before the \
                         {}). {tail}",
                        who(),
                        a.describe(),
                        r.handle,
                        if r.built { "recorded" } else { "captured" },
                        r.api,
                        r.stream,
                        r.addr,
                        r.end,
                        if r.built { "build" } else { "capture" },
                    );
                    return Err(Error::new(
                        ErrorKind::StreamNotComplete,
                        report(Kind::UninitialisedRead, api, &body),
                    ));
                }
            }
        }
        for a in accesses.iter().filter(|a| a.acc.how != Use::Read) {
            for &id in device_ids(a) {
                self.written.insert(id);
                let Some(ranges) = self.at_launch.get_mut(&id) else {
                    continue;
                };
                if a.acc.how == Use::Opaque {
                    // Which bytes it writes is unknown: any of them.
                    ranges.clear();
                } else {
                    let (lo, hi) = (a.acc.addr, a.acc.addr.saturating_add(a.acc.len));
                    *ranges = std::mem::take(ranges)
                        .into_iter()
                        .flat_map(|r| {
                            let before = (r.addr < lo).then(|| AtLaunch {
                                end: r.end.min(lo),
                                ..r.clone()
                            });
                            let after = (r.end > hi).then(|| AtLaunch {
                                addr: r.addr.max(hi),
                                ..r.clone()
                            });
                            before.into_iter().chain(after)
                        })
                        .collect();
                }
                if ranges.is_empty() {
                    self.at_launch.remove(&id);
                }
            }
        }
        Ok(())
    }
}

/// Task `kind` was captured as step `step` of the model with uid `model`
/// and handle `handle`, from `stream` (a capturing or joined stream; an
/// update replaces the step): while the model lives, its memory may not be
/// freed, and what it writes of device memory never written outside a
/// capture is "written-at-launch": unreadable until a launch is queued.
pub(crate) fn on_capture(model: u64, handle: usize, step: usize, stream: &Stream, kind: &TaskKind) {
    on_model_step(model, handle, false, step, stream, kind);
}

/// [`on_capture`] for a step recorded into a model built explicitly
/// (`aclmdlRIBuildBegin`: the work of a bound stream, a label switch's
/// index): the model holds its memory the same way until
/// `aclmdlRIDestroy`, and an execution initialises what it writes.
pub(crate) fn on_build(model: u64, handle: usize, step: usize, stream: &Stream, kind: &TaskKind) {
    on_model_step(model, handle, true, step, stream, kind);
}

fn on_model_step(
    model: u64,
    handle: usize,
    built: bool,
    step: usize,
    stream: &Stream,
    kind: &TaskKind,
) {
    let accesses = kind.accesses();
    let resolved = resolve(&state::memory().read(), &accesses);
    let me = StreamRef::of(stream);
    let mut c = CAPTURED.lock();
    let old = c
        .models
        .entry(model)
        .or_insert_with(|| CapturedModel {
            handle,
            built,
            steps: HashMap::new(),
        })
        .steps
        .remove(&step);
    if let Some(old) = old {
        c.drop_step(model, &old);
    }
    for a in &resolved {
        for &id in &a.ids {
            *c.by_alloc.entry(id).or_default().entry(model).or_insert(0) += 1;
        }
        if a.acc.how != Use::Write {
            continue;
        }
        for &id in device_ids(a) {
            if !c.written.contains(&id) {
                c.at_launch.entry(id).or_default().push(AtLaunch {
                    addr: a.acc.addr,
                    end: a.acc.addr.saturating_add(a.acc.len),
                    model,
                    handle,
                    built,
                    api: kind.name(),
                    stream: me,
                });
            }
        }
    }
    if let Some(m) = c.models.get_mut(&model) {
        m.steps.insert(
            step,
            CapturedStep {
                api: kind.name(),
                stream: me,
                accesses: resolved,
            },
        );
    }
}

/// An execution is being queued that runs the work of the model with uid
/// `model` inside one task (a built model's program, or a sub-model of a
/// conditional task inside the conditional task): its reads of what it
/// wrote earlier are ordered inside the task, so what only the model
/// initialises is no longer unwritten (stream order and the race reports
/// cover it from then on, as for a launch of a captured model).
pub(crate) fn on_inline_execution(model: u64) {
    let mut c = CAPTURED.lock();
    c.at_launch.retain(|_, ranges| {
        ranges.retain(|r| r.model != model);
        !ranges.is_empty()
    });
}

/// The model with uid `model` was destroyed (or its capture abandoned):
/// its memory is no longer held, and what only it initialises is no longer
/// expected to be written.
pub(crate) fn on_model_gone(model: u64) {
    let mut c = CAPTURED.lock();
    if let Some(m) = c.models.remove(&model) {
        for step in m.steps.values() {
            c.drop_step(model, step);
        }
    }
    c.at_launch.retain(|_, ranges| {
        ranges.retain(|r| r.model != model);
        !ranges.is_empty()
    });
}

/// The report for freeing allocation `id` (at `addr`) while a live model
/// uses it, if one does.
fn captured_user(c: &Captured, api: &str, addr: usize, id: u64) -> Option<Error> {
    // The oldest model, and its first captured task that uses the memory.
    let uid = *c.by_alloc.get(&id)?.keys().min()?;
    let m = c.models.get(&uid)?;
    let (n, step, a) = m
        .steps
        .iter()
        .filter_map(|(n, step)| {
            let a = step.accesses.iter().find(|a| a.ids.contains(&id))?;
            Some((n, step, a))
        })
        .min_by_key(|&(n, ..)| *n)?;
    let body = format!(
        "{api}({addr:#x}) while model {:#x}, {} and not destroyed, uses it: its {} {} \
         (step #{}, from {}) {} {}; every launch of the model would use the freed memory \
         (destroy the model with aclmdlRIDestroy first). The memory was not freed.",
        m.handle,
        if m.built { "built" } else { "captured" },
        if m.built { "recorded" } else { "captured" },
        step.api,
        n + 1,
        step.stream,
        a.acc.how.verb(),
        a.describe(),
    );
    Some(Error::new(
        ErrorKind::MemoryFree,
        report(Kind::FreeWhileCaptured, api, &body),
    ))
}

/// Task `seq` of stream `uid` is done (or dropped): no longer pending.
pub(crate) fn on_complete(uid: u64, seq: u64) {
    PENDING.lock().remove((uid, seq));
}

/// Checks a synchronous access by `api` (on the calling thread, now)
/// against every pending task and against written-at-launch memory, and
/// notes its writes. Call it before taking the allocation table's lock.
///
/// # Errors
///
/// A `host-race` or `uninitialised-read` report: 507004 and the message
/// (after `api`); the call must do nothing.
pub(crate) fn host_access(api: &str, accesses: &[Access]) -> Result<(), Error> {
    if !enabled() {
        return Ok(());
    }
    let pending = PENDING.lock();
    // Reads matter only while some memory is written-at-launch; writes
    // are noted for later captures.
    let reads_only = accesses.iter().all(|a| a.how == Use::Read);
    if pending.tasks.is_empty() && reads_only && CAPTURED.lock().at_launch.is_empty() {
        return Ok(());
    }
    let resolved = resolve(&state::memory().read(), accesses);
    if !pending.tasks.is_empty() {
        // Inside a blocking callback or host function of stream X, the
        // pending tasks of X (and those queued after waiting for X beyond
        // it) wait for this call to return: they cannot race it.
        let inside = crate::rt::report::running_blocking_task();
        let after_callback = |t: &PendingTask| {
            inside.is_some_and(|(uid, seq)| {
                t.stream.uid == uid || t.clock.get(&uid).is_some_and(|&c| c >= seq)
            })
        };
        for a in &resolved {
            if let Some((t, pa)) = pending.conflict(a, after_callback) {
                let body = format!(
                    "{api} (a synchronous access, on the host) {} {}, and {} {} {}; the task is \
                     still pending (synchronise stream {} or an event recorded after the task \
                     first). Nothing was done.",
                    a.acc.how.verb(),
                    a.describe(),
                    t.label(),
                    pa.acc.how.verb(),
                    pa.describe(),
                    t.stream.id,
                );
                return Err(Error::new(
                    ErrorKind::StreamNotComplete,
                    report(Kind::HostRace, api, &body),
                ));
            }
        }
    }
    let who = || format!("{api} (a synchronous access, on the host)");
    CAPTURED
        .lock()
        .eager(api, who, &resolved, "Nothing was done.")
}

/// Frees the allocation starting at `addr` with `free` unless a pending task
/// or a live captured model uses it (or it was freed already). `device` says which kind of memory
/// `api` frees (`None`: a virtual-memory mapping).
///
/// # Errors
///
/// A `free-while-pending` or `free-while-captured` report (207002) or a
/// `use-after-free` one (a second free, 107000), the message after `api`;
/// `free` was not called.
pub(crate) fn guard_free<R>(
    api: &str,
    addr: usize,
    device: Option<bool>,
    free: impl FnOnce() -> R,
) -> Result<R, Error> {
    let pending = PENDING.lock();
    let found = {
        let table = state::memory().read();
        match table.find(addr) {
            Some((base, a)) if base == addr => {
                let kind_ok = match device {
                    Some(d) => matches!(a.kind, MemKind::Device(_)) == d,
                    None => true,
                };
                Ok(kind_ok.then_some(a.id))
            }
            Some(_) => Ok(None),
            None if device.is_some() => Err(table.freed_at(addr)),
            None => Ok(None),
        }
    };
    match found {
        Ok(Some(id)) => {
            if let Some((t, a)) = pending.user_of(id) {
                let body = format!(
                    "{api}({addr:#x}) while {} {} {}; the task is still pending (synchronise \
                     stream {} or an event recorded after the task first). The memory was not \
                     freed.",
                    t.label(),
                    a.acc.how.verb(),
                    a.describe(),
                    t.stream.id,
                );
                return Err(Error::new(
                    ErrorKind::MemoryFree,
                    report(Kind::FreeWhilePending, api, &body),
                ));
            }
            let mut captured = CAPTURED.lock();
            if let Some(e) = captured_user(&captured, api, addr, id) {
                return Err(e);
            }
            captured.written.remove(&id);
            captured.at_launch.remove(&id);
        }
        Err(Some(freed)) => {
            let body = format!("{api}({addr:#x}) frees {freed} again (a double free)");
            return Err(Error::new(
                ErrorKind::ParamInvalid,
                report(Kind::UseAfterFree, api, &body),
            ));
        }
        Ok(None) | Err(None) => {}
    }
    let r = free();
    drop(pending);
    Ok(r)
}

/// [`MemTable::check_range`] for a range `function` is about to use as its
/// `role`: with the check on, a range that is not live but lies in freed
/// (quarantined) memory is a `use-after-free` report.
///
/// # Errors
///
/// As `check_range`, or the report (the message the caller records after
/// `"{function}: {role}: "`).
pub(crate) fn range(
    table: &MemTable,
    function: &str,
    role: &str,
    addr: usize,
    len: usize,
) -> Result<Region, String> {
    let r = table.check_range(addr, len);
    // A range starting in a live allocation is that allocation's business
    // (running past its end is a bounds error, not a use after free).
    if !enabled()
        || len == 0
        || matches!(r, Ok(Region::Device { .. } | Region::Host { .. }))
        || table.find(addr).is_some()
    {
        return r;
    }
    match table.freed_overlapping(addr, len) {
        None => r,
        Some(freed) => {
            let body = format!(
                "[{addr:#x}, {:#x}) ({len} bytes) lies in {freed}; {function} would use freed \
                 memory. Nothing was done.",
                addr.saturating_add(len)
            );
            Err(report(
                Kind::UseAfterFree,
                &format!("{function}: {role}"),
                &body,
            ))
        }
    }
}

/// A `double-destroy` report: `function` destroys `what` at `addr`, which
/// `by` destroyed before. Returns the message after `function`.
pub(crate) fn double_destroy(
    function: &str,
    what: &str,
    addr: usize,
    by: Option<&'static str>,
) -> String {
    let by = by.filter(|b| !b.is_empty()).unwrap_or("an earlier call");
    let body = format!(
        "{what} {addr:#x} was already destroyed, by {by}; destroying it again is undefined \
         behaviour on the real runtime"
    );
    report(Kind::DoubleDestroy, function, &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_the_three_modes_and_names_the_variable_otherwise() {
        assert_eq!(parse(""), Ok(Mode::Off));
        assert_eq!(parse(" Off "), Ok(Mode::Off));
        assert_eq!(parse("report"), Ok(Mode::Report));
        assert_eq!(parse("ABORT"), Ok(Mode::Abort));
        let e = parse("yes").unwrap_err();
        assert!(e.starts_with("CANN_SIM_CHECK=\"yes\""), "{e}");
        assert!(e.contains("off, report or abort"), "{e}");
    }

    #[test]
    fn reads_and_writes_conflict_unless_both_read_or_one_is_opaque() {
        assert!(conflict(Use::Write, Use::Write));
        assert!(conflict(Use::Read, Use::Write));
        assert!(conflict(Use::Write, Use::Read));
        assert!(!conflict(Use::Read, Use::Read));
        assert!(!conflict(Use::Opaque, Use::Write));
        assert!(!conflict(Use::Write, Use::Opaque));
    }

    #[test]
    fn ranges_overlap_only_when_they_share_a_byte() {
        let a = Access::new("a", 100, 10, Use::Read);
        assert!(overlap(&a, &Access::new("b", 109, 1, Use::Read)));
        assert!(!overlap(&a, &Access::new("b", 110, 5, Use::Read)));
        assert!(!overlap(&a, &Access::new("b", 90, 10, Use::Read)));
        assert!(overlap(&a, &Access::new("b", 90, 11, Use::Read)));
    }

    #[test]
    fn clocks_join_by_maximum() {
        let mut c: Clock = [(1, 5), (2, 1)].into_iter().collect();
        join(&mut c, &[(2, 4), (3, 7)].into_iter().collect());
        assert_eq!(c, [(1, 5), (2, 4), (3, 7)].into_iter().collect());
    }

    #[test]
    fn pending_tasks_are_indexed_by_allocation_and_pruned() {
        let s = StreamRef {
            uid: 9,
            handle: 0x1000,
            id: 1,
            device: 0,
            is_default: false,
        };
        let r = |addr, how| Resolved {
            acc: Access::new("dst", addr, 16, how),
            ids: vec![42],
            place: "device memory on device",
            device: Some(0),
        };
        let mut p = Pending::default();
        p.insert(PendingTask {
            api: "aclrtMemcpyAsync",
            captured: None,
            stream: s,
            seq: 3,
            clock: Clock::new(),
            accesses: vec![r(0x100, Use::Write)],
        });
        assert!(p.user_of(42).is_some());
        assert!(p.conflict(&r(0x108, Use::Read), |_| false).is_some());
        assert!(p.conflict(&r(0x110, Use::Read), |_| false).is_none());
        assert!(p.conflict(&r(0x108, Use::Read), |t| t.seq <= 3).is_none());
        p.remove((9, 3));
        assert!(p.user_of(42).is_none());
        assert!(p.by_alloc.is_empty());
    }
}

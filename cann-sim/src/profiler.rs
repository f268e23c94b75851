//! Profiling sessions (the engine behind `aclprofInit`, `aclprofStart`,
//! `aclprofStop`, `aclprofFinalize`): the rules of the released runtime
//! (CANN 8.5.0, hicann/runtime `v8.5.0`
//! `src/dfx/msprof/collector/dvvp/msprof/engine/src/prof_acl_mgr.cpp`), with
//! the simulator's own timeline ([`crate::trace`]) as the data.
//!
//! - [`init`] names the result directory, creating it when missing; once
//!   per process until [`finalize`].
//! - Each [`start`] makes a run directory in it, named as msprof names its
//!   own: `PROF_{index, 6 digits}_{local time YYYYMMDDhhmmssmmm}_{pid, 8
//!   digits}{8 letters A–R}` (`Utils::CreateProfDir`). A device is in at
//!   most one run.
//! - [`stop`] with the same settings writes the run's data into
//!   `mindstudio_profiler_output/` of its directory: `msprof_<time>.json`,
//!   the Chrome trace of the run's devices (and the host API spans when
//!   `ACL_PROF_ACL_API` or `ACL_PROF_RUNTIME_API` is on), and
//!   `op_statistic_<time>.csv`, the time per task name. On hardware these
//!   are raw binary data that `msprof --export=on` turns into such files.

use parking_lot::Mutex;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Why a profiling call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfErrorKind {
    /// Not initialised (`ACL_ERROR_PROF_NOT_RUN`, 100043).
    NotInitialized,
    /// Initialised already (`ACL_ERROR_REPEAT_INITIALIZE`, 100002).
    AlreadyInitialized,
    /// The result path cannot be used (`ACL_ERROR_INVALID_FILE`, 100003).
    BadPath,
    /// A device already profiles (`ACL_ERROR_PROF_ALREADY_RUN`, 100042).
    AlreadyRunning,
    /// Stop with other settings than Start
    /// (`ACL_ERROR_INVALID_PROFILING_CONFIG`, 100010).
    ConfigMismatch,
}

/// A failed profiling call: the kind and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfError {
    /// The kind (the exports map it to a code).
    pub kind: ProfErrorKind,
    /// The message (without the function's name).
    pub msg: String,
}

fn err(kind: ProfErrorKind, msg: impl Into<String>) -> ProfError {
    ProfError {
        kind,
        msg: msg.into(),
    }
}

/// What a run profiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Logical devices, in the order given.
    pub devices: Vec<u32>,
    /// The AI Core metrics (`aclprofAicoreMetrics`).
    pub metrics: u32,
    /// The data types (`ACL_PROF_*` bits, normalised).
    pub data_types: u64,
}

impl Settings {
    fn same_as(&self, other: &Settings) -> bool {
        let sorted = |d: &[u32]| {
            let mut d = d.to_vec();
            d.sort_unstable();
            d
        };
        sorted(&self.devices) == sorted(&other.devices)
            && self.metrics == other.metrics
            && self.data_types == other.data_types
    }
}

/// `ACL_PROF_ACL_API | ACL_PROF_RUNTIME_API`: host API spans are written.
const HOST_API_BITS: u64 = 0x1 | 0x100;

struct Run {
    settings: Settings,
    dir: PathBuf,
    start_ns: u64,
}

struct Session {
    path: PathBuf,
    runs: Vec<Run>,
    /// Options of `aclprofSetConfig`, by type.
    options: Vec<(u32, String)>,
    /// Run directories made so far (their index).
    made: u32,
}

static SESSION: Mutex<Option<Session>> = Mutex::new(None);

/// Whether a run with `ACL_PROF_MSPROFTX` is going on: msproftx marks and
/// ranges are recorded only then (msprof initialises its msproftx manager
/// when such a run starts and releases it, its stamps included, when it
/// stops: hicann/runtime `src/dfx/msprof/collector/dvvp/msprof/msproftx/src/msprof_tx_manager.cpp`).
pub fn tx_running() -> bool {
    SESSION.lock().as_ref().is_some_and(|s| {
        s.runs
            .iter()
            .any(|r| r.settings.data_types & u64::from(acl_sys::ACL_PROF_MSPROFTX) != 0)
    })
}

/// Whether a session is initialised.
pub fn initialized() -> bool {
    SESSION.lock().is_some()
}

/// The result directory: created when missing; must be a writable
/// directory (`ProfAclInit`, `IsDirAccessible`).
fn prepare_dir(path: &Path) -> Result<(), ProfError> {
    let bad = |why: String| {
        err(
            ProfErrorKind::BadPath,
            format!("the result path {} {why}", path.display()),
        )
    };
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => return Err(bad("is not a directory".into())),
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(path)
            .map_err(|e| bad(format!("does not exist and cannot be created: {e}")))?,
    }
    // Writable: as `access(W_OK | X_OK)` would say, by trying.
    let probe = path.join(format!(".cann-sim-probe-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .map_err(|e| bad(format!("is not writable: {e} (Permission denied)")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `aclprofInit`: starts a session writing under `path`.
///
/// # Errors
///
/// [`ProfErrorKind::AlreadyInitialized`]; [`ProfErrorKind::BadPath`].
pub fn init(path: &Path) -> Result<(), ProfError> {
    let mut s = SESSION.lock();
    if s.is_some() {
        return Err(err(
            ProfErrorKind::AlreadyInitialized,
            "profiling is already initialized (call aclprofFinalize first)",
        ));
    }
    prepare_dir(path)?;
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    *s = Some(Session {
        path,
        runs: Vec::new(),
        options: Vec::new(),
        made: 0,
    });
    Ok(())
}

/// `aclprofSetConfig`: keeps an option (the simulator records nothing
/// more for it).
///
/// # Errors
///
/// [`ProfErrorKind::NotInitialized`].
pub fn set_option(kind: u32, value: String) -> Result<(), ProfError> {
    let mut s = SESSION.lock();
    let Some(s) = s.as_mut() else {
        return Err(not_initialized());
    };
    s.options.retain(|(k, _)| *k != kind);
    s.options.push((kind, value));
    Ok(())
}

fn not_initialized() -> ProfError {
    err(
        ProfErrorKind::NotInitialized,
        "profiling is not initialized: call aclprofInit first",
    )
}

/// `aclprofFinalize`: stops every run (writing its data) and ends the
/// session.
///
/// # Errors
///
/// [`ProfErrorKind::NotInitialized`]; the first run whose data could not be
/// written ([`ProfErrorKind::BadPath`]), after ending the session anyway.
pub fn finalize() -> Result<(), ProfError> {
    let mut guard = SESSION.lock();
    let session = guard.take().ok_or_else(not_initialized)?;
    let written = write_runs(&session.runs);
    stop_recording();
    written
}

/// `aclprofStart`: starts a run; returns its directory.
///
/// # Errors
///
/// [`ProfErrorKind::NotInitialized`]; [`ProfErrorKind::AlreadyRunning`]
/// when a device of `settings` is in a run; [`ProfErrorKind::BadPath`]
/// when the run directory cannot be made.
pub fn start(settings: &Settings) -> Result<PathBuf, ProfError> {
    let mut guard = SESSION.lock();
    let s = guard.as_mut().ok_or_else(not_initialized)?;
    if let Some(d) = settings
        .devices
        .iter()
        .find(|d| s.runs.iter().any(|r| r.settings.devices.contains(d)))
    {
        return Err(err(
            ProfErrorKind::AlreadyRunning,
            format!("device {d} is already being profiled (call aclprofStop first)"),
        ));
    }
    let index = s.made + 1;
    let dir = s.path.join(run_dir_name(index));
    std::fs::create_dir_all(dir.join("mindstudio_profiler_output")).map_err(|e| {
        err(
            ProfErrorKind::BadPath,
            format!("cannot create {}: {e}", dir.display()),
        )
    })?;
    s.made = index;
    crate::trace::set_profiling(true);
    s.runs.push(Run {
        settings: settings.clone(),
        dir: dir.clone(),
        start_ns: crate::state::now_ns(),
    });
    Ok(dir)
}

/// `aclprofStop`: stops the runs of `settings`' devices and writes their
/// data; `None` stops every run. Devices not in a run are skipped.
///
/// # Errors
///
/// [`ProfErrorKind::NotInitialized`]; [`ProfErrorKind::ConfigMismatch`] when
/// a device runs with other settings; [`ProfErrorKind::BadPath`] when the
/// data cannot be written.
pub fn stop(settings: Option<&Settings>) -> Result<(), ProfError> {
    let mut guard = SESSION.lock();
    let s = guard.as_mut().ok_or_else(not_initialized)?;
    let mine =
        |r: &Run| settings.is_none_or(|c| c.devices.iter().any(|d| r.settings.devices.contains(d)));
    if let Some(c) = settings
        && let Some(r) = s.runs.iter().find(|r| mine(r) && !r.settings.same_as(c))
    {
        return Err(err(
            ProfErrorKind::ConfigMismatch,
            format!(
                "the config (devices {:?}, data types {:#x}) is not the one profiling \
                     started with (devices {:?}, data types {:#x})",
                c.devices, c.data_types, r.settings.devices, r.settings.data_types
            ),
        ));
    }
    let (stopped, kept): (Vec<Run>, Vec<Run>) =
        std::mem::take(&mut s.runs).into_iter().partition(mine);
    s.runs = kept;
    // Written with the session locked, before the recording may stop.
    let written = write_runs(&stopped);
    if s.runs.is_empty() {
        stop_recording();
    }
    written
}

/// Writes each run's data; the first failure.
fn write_runs(runs: &[Run]) -> Result<(), ProfError> {
    let mut first = Ok(());
    for run in runs {
        let r = write_run(run);
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// No run left: profiling no longer records; what only it recorded is
/// forgotten.
fn stop_recording() {
    crate::trace::set_profiling(false);
    if !crate::trace::recording_outside_profiling() {
        crate::trace::clear();
    }
}

/// Writes a run's trace and statistics.
fn write_run(run: &Run) -> Result<(), ProfError> {
    let end_ns = crate::state::now_ns();
    let host = run.settings.data_types & HOST_API_BITS != 0;
    let tx = run.settings.data_types & u64::from(acl_sys::ACL_PROF_MSPROFTX) != 0;
    let spans: Vec<crate::trace::Span> = crate::trace::spans()
        .into_iter()
        .filter(|s| s.start_ns >= run.start_ns && s.end_ns <= end_ns)
        .filter(|s| match s.track {
            crate::trace::Track::Stream { device, .. } => run.settings.devices.contains(&device),
            crate::trace::Track::Host { .. } if s.kind == crate::trace::Kind::Tx => tx,
            crate::trace::Track::Host { .. } => host,
        })
        .collect();
    let out = run.dir.join("mindstudio_profiler_output");
    let stamp = local_time_stamp();
    let write = |name: String, text: String| {
        std::fs::write(out.join(&name), text).map_err(|e| {
            err(
                ProfErrorKind::BadPath,
                format!("cannot write {}: {e}", out.join(&name).display()),
            )
        })
    };
    write(
        format!("msprof_{}.json", &stamp[..14]),
        crate::trace::chrome_json(&spans),
    )?;
    write(
        format!("op_statistic_{}.csv", &stamp[..14]),
        statistics(&spans),
    )?;
    if tx {
        write(
            format!("msprof_tx_{}.csv", &stamp[..14]),
            tx_summary(&spans),
        )?;
    }
    Ok(())
}

/// The msproftx marks and ranges of a run, one line each in time order
/// (msprof's `msprof_tx` summary, in the simulator's columns).
fn tx_summary(spans: &[crate::trace::Span]) -> String {
    let mut out = String::from("event_type,message,start_us,end_us,duration_us\n");
    for s in spans.iter().filter(|s| s.kind == crate::trace::Kind::Tx) {
        let event = match s.api {
            "aclprofMark" => "mark",
            "aclprofMarkEx" => "mark_ex",
            "aclprofPop" => "push_pop",
            // `aclprofRangePushEx`/`aclprofRangePop` (`acl::prof_range`).
            "aclprofRangePop" => "push_pop_ex",
            _ => "start_end",
        };
        let quoted = s.name.replace('"', "\"\"");
        let _ = writeln!(
            out,
            "{event},\"{quoted}\",{:.3},{:.3},{:.3}",
            s.start_ns as f64 / 1e3,
            s.end_ns as f64 / 1e3,
            (s.end_ns - s.start_ns) as f64 / 1e3
        );
    }
    out
}

/// Count, total, min and max nanoseconds of one group of spans.
#[derive(Clone, Copy)]
struct Times {
    n: u64,
    total: u64,
    min: u64,
    max: u64,
}

/// Time per (device, task name, kind), as msprof's `op_statistic` CSV.
fn statistics(spans: &[crate::trace::Span]) -> String {
    use std::collections::BTreeMap;
    let mut by: BTreeMap<(u32, &str, &str), Times> = BTreeMap::new();
    let mut total_all = 0u64;
    for s in spans {
        let crate::trace::Track::Stream { device, .. } = s.track else {
            continue;
        };
        let d = s.end_ns - s.start_ns;
        total_all += d;
        let e = by
            .entry((device, s.name.as_str(), s.kind.as_str()))
            .or_insert(Times {
                n: 0,
                total: 0,
                min: u64::MAX,
                max: 0,
            });
        e.n += 1;
        e.total += d;
        e.min = e.min.min(d);
        e.max = e.max.max(d);
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut csv = String::from(
        "Device_id,OP Type,Task Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n",
    );
    for ((device, name, kind), Times { n, total, min, max }) in by {
        let ratio = if total_all == 0 {
            0.0
        } else {
            total as f64 * 100.0 / total_all as f64
        };
        let _ = writeln!(
            csv,
            "{device},{name},{kind},{n},{:.3},{:.3},{:.3},{:.3},{ratio:.2}",
            us(total),
            us(min),
            us(total) / n as f64,
            us(max)
        );
    }
    csv
}

/// Local time as `YYYYMMDDhhmmssmmm`.
fn local_time_stamp() -> String {
    let Some((tm, now)) = crate::recent_error::local_now() else {
        return format!("{:017}", 0);
    };
    format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_millis()
    )
}

/// `PROF_{index:06}_{time}_{pid:08}{8 letters A–R}`.
fn run_dir_name(index: u32) -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(index);
    let mut bits = h.finish();
    let mut letters = String::new();
    for _ in 0..8 {
        letters.push(char::from(b'A' + (bits % 18) as u8));
        bits /= 18;
    }
    let pid = std::process::id() % 100_000_000;
    format!("PROF_{index:06}_{}_{pid:08}{letters}", local_time_stamp())
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_dirs_are_named_as_msprof_names_them() {
        let n = super::run_dir_name(7);
        let parts: Vec<&str> = n.split('_').collect();
        assert_eq!(parts.len(), 4, "{n}");
        assert_eq!(parts[0], "PROF");
        assert_eq!(parts[1], "000007");
        assert_eq!(parts[2].len(), 17);
        assert!(parts[2].bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(parts[3].len(), 16);
        assert!(parts[3][..8].bytes().all(|b| b.is_ascii_digit()));
        assert!(parts[3][8..].bytes().all(|b| (b'A'..=b'R').contains(&b)));
    }
}

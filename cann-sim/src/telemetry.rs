//! Live device state, published for telemetry in other processes.
//!
//! A real driver lets `npu-smi` (or any DCMI client) see every process's
//! memory and load on a device. The simulator keeps its state inside each
//! process, so this module publishes it: every process that uses the
//! simulator writes one small record file, and the simulator's DCMI
//! implementation (in whatever process calls it) adds up the records of all
//! live processes.
//!
//! # Writer side
//!
//! - [`record_busy`] (called by the stream workers after each task) and
//!   [`record_transfer`] (bytes moved to or from HBM) count device time and
//!   traffic with two relaxed atomic additions; [`activate`] only starts the
//!   publisher. Each of the three starts the publisher on first use, so a
//!   process that links the simulator but never uses a device has no
//!   publisher thread and no file.
//! - The publisher, a background thread named `cann-sim-telemetry`, wakes
//!   every [`PUBLISH_INTERVAL`] (100 ms), reads the HBM in use per device from
//!   the allocation table, works out each device's busy fraction over the last
//!   second, and writes the record atomically (a temporary file, then
//!   `rename`), so a reader never sees half a record.
//! - The record is removed when the process exits normally (an `atexit`
//!   handler); a process that is killed leaves it behind, and readers skip
//!   and delete it (see below).
//!
//! # Where the records are
//!
//! `$CANN_SIM_SHM_DIR` when set (read once per process), else
//! `/dev/shm/cann-sim-<uid>/` (or `cann-sim-<uid>/` under the temporary
//! directory where `/dev/shm` does not exist), created with mode 0700. One
//! file per process, `proc-<pid>.rec`, a few lines of text:
//!
//! ```text
//! cann-sim-telemetry 1
//! pid 4242
//! start 123456
//! name python3
//! dev 0 67108864 950000 12000
//! ```
//!
//! `start` is the process's start time (field 22 of `/proc/<pid>/stat`), so
//! that a recycled pid is not mistaken for the writer; each `dev` line is a
//! *physical* device id (the process's `ASCEND_RT_VISIBLE_DEVICES` already
//! applied), the HBM bytes the process holds there, and its busy and HBM
//! bandwidth fractions over the last second in parts per million. Only
//! devices the process uses (memory held or work done in the last second) are
//! listed.
//!
//! # Reader side
//!
//! [`snapshot`] aggregates: the calling process's own state is read live (not
//! from its file), every other `proc-*.rec` whose process is alive and has
//! the recorded start time is added, and records of dead processes are
//! deleted. Snapshots are cached for [`SNAPSHOT_TTL`] (50 ms; the writers
//! update at most every 100 ms), so reading every metric of every device
//! costs one directory scan.
//!
//! Temperature, power, clocks and voltage are *derived* from the aggregated
//! load ([`DeviceLoad::temperature_celsius`] and friends): an idle simulated
//! 910B sits at 35 °C and 90 W, a fully busy one at 65 °C and 350 W.
//!
//! # Caveats
//!
//! The `cdylib` form registers an `atexit` handler and runs a thread from its
//! own code once it publishes: do not `dlclose` it afterwards (no CANN
//! library is ever unloaded in practice).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// The most devices the simulator models (`CANN_SIM_DEVICES` is 1 to 64).
pub const MAX_DEVICES: usize = 64;

/// How often the publisher rewrites the process's record.
pub const PUBLISH_INTERVAL: Duration = Duration::from_millis(100);

/// How long a [`snapshot`] is reused before the records are read again.
pub const SNAPSHOT_TTL: Duration = Duration::from_millis(50);

/// The window over which busy and bandwidth fractions are averaged.
pub const LOAD_WINDOW: Duration = Duration::from_secs(1);

/// The HBM bandwidth that counts as 100 % for [`record_transfer`]: 10 GB/s,
/// about what a host `memcpy` (the simulator's copy engine) sustains, so a
/// copy-bound simulated workload reads as bandwidth-bound.
pub const SIM_HBM_BANDWIDTH_BYTES_PER_SEC: u64 = 10_000_000_000;

/// The first line of every record file.
const MAGIC: &str = "cann-sim-telemetry 1";

/// Records larger than this are not a record (and are not read whole).
const MAX_RECORD_BYTES: u64 = 64 * 1024;

static BUSY_NS: [AtomicU64; MAX_DEVICES] = [const { AtomicU64::new(0) }; MAX_DEVICES];
static TRANSFER_BYTES: [AtomicU64; MAX_DEVICES] = [const { AtomicU64::new(0) }; MAX_DEVICES];

/// Counts `busy` of device time on the calling process's logical `device`
/// (the id `aclrtSetDevice` takes): the stream workers call it after each
/// task. Work done in the last second makes up the device's AI Core
/// utilisation. Starts the publisher on first use. Ids of 64 and above are
/// ignored.
pub fn record_busy(device: u32, busy: Duration) {
    if let Some(slot) = BUSY_NS.get(device as usize) {
        let ns = u64::try_from(busy.as_nanos()).unwrap_or(u64::MAX);
        slot.fetch_add(ns, Ordering::Relaxed);
        activate();
    }
}

/// Counts `bytes` moved to, from or within HBM on logical `device` (copies,
/// fills): the device's HBM bandwidth utilisation is the last second's bytes
/// over [`SIM_HBM_BANDWIDTH_BYTES_PER_SEC`]. Starts the publisher on first
/// use.
pub fn record_transfer(device: u32, bytes: u64) {
    if let Some(slot) = TRANSFER_BYTES.get(device as usize) {
        slot.fetch_add(bytes, Ordering::Relaxed);
        activate();
    }
}

/// Starts the publisher if this process has not started it yet (after a
/// `fork`, the child starts its own). Cheap: one atomic load once running.
pub fn activate() {
    // SAFETY: getpid has no preconditions and cannot fail.
    let pid = unsafe { libc::getpid() } as u32;
    if PUBLISHER_PID.load(Ordering::Acquire) == pid {
        return;
    }
    start_publisher(pid);
}

/// The pid whose publisher is running (0: none).
static PUBLISHER_PID: AtomicU32 = AtomicU32::new(0);
/// Set by the exit handler: the publisher must not write again.
static SHUTTING_DOWN: AtomicBool = AtomicBool::new(false);
/// Serialises record writes against their removal at exit.
static WRITE_LOCK: Mutex<()> = Mutex::new(());
/// The busy and bandwidth fractions (ppm) the publisher last computed, per
/// logical device; read by this process's own snapshots.
static LOCAL_LOAD: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

fn start_publisher(pid: u32) {
    static START: Mutex<()> = Mutex::new(());
    let _guard = START.lock();
    if PUBLISHER_PID.load(Ordering::Acquire) == pid {
        return;
    }
    // Published before the thread starts: its first check compares this
    // value with its pid and would end the loop at once if it still saw
    // the previous one (that race left the directory empty in about half
    // of the cross-process test runs).
    let previous = PUBLISHER_PID.swap(pid, Ordering::AcqRel);
    let spawned = std::thread::Builder::new()
        .name("cann-sim-telemetry".into())
        .spawn(move || publisher_loop(pid));
    if spawned.is_err() {
        // No thread, no telemetry; the simulated workload itself still runs.
        PUBLISHER_PID.store(previous, Ordering::Release);
        return;
    }
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: `remove_own_record` is an `extern "C" fn()` that never
        // unwinds; registering it has no other precondition.
        unsafe { libc::atexit(remove_own_record) };
    });
}

extern "C" fn remove_own_record() {
    SHUTTING_DOWN.store(true, Ordering::Release);
    let _guard = WRITE_LOCK.lock();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    if PUBLISHER_PID.load(Ordering::Acquire) == pid {
        let _ = std::fs::remove_file(record_path(dir(), pid));
    }
}

/// The directory that holds the records.
pub fn dir() -> &'static Path {
    static DIR: LazyLock<PathBuf> = LazyLock::new(|| {
        if let Some(d) = std::env::var_os("CANN_SIM_SHM_DIR").filter(|d| !d.is_empty()) {
            return PathBuf::from(d);
        }
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        base.join(format!("cann-sim-{uid}"))
    });
    &DIR
}

fn record_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("proc-{pid}.rec"))
}

/// The start time of `pid` in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`), or `None` when the process does not exist.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is parenthesised and may hold spaces or
    // parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // `rest` starts at field 3 (state); field 22 is the 20th from there.
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn process_name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// One process's use of one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DeviceUse {
    physical: u32,
    hbm_bytes: u64,
    busy_ppm: u32,
    bandwidth_ppm: u32,
}

/// One parsed record.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    pid: u32,
    start: u64,
    devices: Vec<DeviceUse>,
}

fn format_record(pid: u32, start: u64, name: &str, devices: &[DeviceUse]) -> String {
    let mut s = format!("{MAGIC}\npid {pid}\nstart {start}\nname {name}\n");
    for d in devices {
        s.push_str(&format!(
            "dev {} {} {} {}\n",
            d.physical, d.hbm_bytes, d.busy_ppm, d.bandwidth_ppm
        ));
    }
    s
}

fn parse_record(text: &str) -> Option<Record> {
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let (mut pid, mut start) = (None, None);
    let mut devices = Vec::new();
    for line in lines {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("pid") => pid = it.next()?.parse().ok(),
            Some("start") => start = it.next()?.parse().ok(),
            Some("dev") => {
                let mut n = || it.next()?.parse::<u64>().ok();
                let (physical, hbm_bytes, busy, bw) = (n()?, n()?, n()?, n()?);
                devices.push(DeviceUse {
                    physical: u32::try_from(physical).ok()?,
                    hbm_bytes,
                    busy_ppm: u32::try_from(busy.min(1_000_000)).ok()?,
                    bandwidth_ppm: u32::try_from(bw.min(1_000_000)).ok()?,
                });
            }
            _ => {}
        }
    }
    Some(Record {
        pid: pid?,
        start: start?,
        devices,
    })
}

fn publisher_loop(pid: u32) {
    let start = process_start(pid).unwrap_or(0);
    let name = process_name(pid);
    let dir = dir();
    let _ = create_dir(dir);
    let path = record_path(dir, pid);
    let tmp = dir.join(format!(".proc-{pid}.tmp"));
    // (when, cumulative busy ns, cumulative bytes) per sample, oldest first.
    let mut history: std::collections::VecDeque<(Instant, Vec<u64>, Vec<u64>)> =
        std::collections::VecDeque::new();
    let mut last_written = String::new();
    loop {
        if SHUTTING_DOWN.load(Ordering::Acquire) || PUBLISHER_PID.load(Ordering::Acquire) != pid {
            return;
        }
        let now = Instant::now();
        let busy: Vec<u64> = BUSY_NS.iter().map(|a| a.load(Ordering::Relaxed)).collect();
        let bytes: Vec<u64> = TRANSFER_BYTES
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect();
        history.push_back((now, busy.clone(), bytes.clone()));
        while history.len() > 2 && now.duration_since(history[1].0) >= LOAD_WINDOW {
            history.pop_front();
        }
        let load = window_load(&history);
        *LOCAL_LOAD.lock() = load.clone();
        let devices = local_devices(&load);
        let text = format_record(pid, start, &name, &devices);
        if text != last_written || !path.exists() {
            let _guard = WRITE_LOCK.lock();
            if SHUTTING_DOWN.load(Ordering::Acquire) {
                return;
            }
            if write_atomically(dir, &tmp, &path, &text).is_ok() {
                last_written = text;
            }
        }
        std::thread::sleep(PUBLISH_INTERVAL);
    }
}

/// Busy and bandwidth fractions (ppm) per logical device over the window the
/// history spans.
fn window_load(
    history: &std::collections::VecDeque<(Instant, Vec<u64>, Vec<u64>)>,
) -> Vec<(u32, u32)> {
    let (Some(first), Some(last)) = (history.front(), history.back()) else {
        return Vec::new();
    };
    // Before a full window has passed, average over the window anyway: a
    // process that just started is not 100 % busy after 1 ms of work.
    let span = last.0.duration_since(first.0).max(LOAD_WINDOW / 10);
    let span_ns = span.as_nanos().max(1) as f64;
    (0..MAX_DEVICES)
        .map(|d| {
            let busy = last.1[d].saturating_sub(first.1[d]) as f64 / span_ns;
            let bytes = last.2[d].saturating_sub(first.2[d]) as f64;
            let bw = bytes / span.as_secs_f64() / SIM_HBM_BANDWIDTH_BYTES_PER_SEC as f64;
            (ppm(busy), ppm(bw))
        })
        .collect()
}

fn ppm(fraction: f64) -> u32 {
    (fraction.clamp(0.0, 1.0) * 1_000_000.0).round() as u32
}

/// This process's use of each physical device, from the live allocation
/// table and the publisher's last load figures.
fn local_devices(load: &[(u32, u32)]) -> Vec<DeviceUse> {
    let Ok(config) = crate::config::get() else {
        return Vec::new();
    };
    let table = crate::state::memory().read();
    let mut out = Vec::new();
    for (logical, &physical) in config.visible.iter().enumerate() {
        let hbm_bytes = table.hbm_used(logical as u32);
        let (busy_ppm, bandwidth_ppm) = load.get(logical).copied().unwrap_or((0, 0));
        if hbm_bytes > 0 || busy_ppm > 0 || bandwidth_ppm > 0 {
            out.push(DeviceUse {
                physical,
                hbm_bytes,
                busy_ppm,
                bandwidth_ppm,
            });
        }
    }
    out
}

pub(crate) fn create_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

pub(crate) fn write_atomically(
    dir: &Path,
    tmp: &Path,
    path: &Path,
    text: &str,
) -> std::io::Result<()> {
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(text.as_bytes())?;
        std::fs::rename(tmp, path)
    };
    match write() {
        // The directory may have been removed (a test's temporary dir, a
        // cleaned /dev/shm): make it again once.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            create_dir(dir)?;
            write()
        }
        other => other,
    }
}

/// The aggregated state of one physical device.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceLoad {
    /// HBM bytes held by all live processes.
    pub hbm_used_bytes: u64,
    /// AI Core busy fraction over the last second, 0 to 1 (the sum over
    /// processes, capped at 1).
    pub busy: f64,
    /// HBM bandwidth fraction over the last second, 0 to 1.
    pub bandwidth: f64,
    /// The processes using the device: pid and HBM bytes, by pid.
    pub processes: Vec<(u32, u64)>,
}

impl DeviceLoad {
    /// Derived chip temperature: 35 °C idle, +30 °C at full load, +3 °C with
    /// full HBM.
    pub fn temperature_celsius(&self, hbm_total_bytes: u64) -> i32 {
        35 + (30.0 * self.busy).round() as i32
            + (3.0 * self.hbm_fraction(hbm_total_bytes)).round() as i32
    }

    /// Derived HBM temperature: 2 °C below the chip, plus 4 °C at full bandwidth.
    pub fn hbm_temperature_celsius(&self, hbm_total_bytes: u64) -> i32 {
        self.temperature_celsius(hbm_total_bytes) - 2 + (4.0 * self.bandwidth).round() as i32
    }

    /// Derived power in 0.1 W (DCMI's unit): 90 W idle, up to 350 W at full
    /// load, plus up to 15 W for HBM traffic.
    pub fn power_deciwatts(&self) -> i32 {
        900 + (2600.0 * self.busy).round() as i32 + (150.0 * self.bandwidth).round() as i32
    }

    /// Derived current AI Core clock: 800 MHz idle, the rated
    /// [`AICORE_MAX_MHZ`] when busy.
    pub fn aicore_mhz(&self) -> u32 {
        if self.busy > 0.0 { AICORE_MAX_MHZ } else { 800 }
    }

    /// Derived core voltage in 0.01 V (DCMI's unit): 0.80 V idle, 0.90 V busy.
    pub fn voltage_centivolts(&self) -> u32 {
        80 + (10.0 * self.busy).round() as u32
    }

    fn hbm_fraction(&self, total: u64) -> f64 {
        if total == 0 {
            0.0
        } else {
            (self.hbm_used_bytes as f64 / total as f64).min(1.0)
        }
    }
}

/// The rated AI Core clock of the simulated chips, MHz.
pub const AICORE_MAX_MHZ: u32 = 1800;

/// The aggregated state of every physical device, at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Per physical device id (devices nothing uses are absent).
    pub devices: BTreeMap<u32, DeviceLoad>,
}

impl Snapshot {
    /// The state of physical device `physical` (idle when nothing uses it).
    pub fn device(&self, physical: u32) -> DeviceLoad {
        self.devices.get(&physical).cloned().unwrap_or_default()
    }
}

/// The aggregated state of all processes using the simulator, cached for
/// [`SNAPSHOT_TTL`].
pub fn snapshot() -> Arc<Snapshot> {
    static CACHE: Mutex<Option<(Instant, Arc<Snapshot>)>> = Mutex::new(None);
    let mut cache = CACHE.lock();
    if let Some((when, snap)) = cache.as_ref()
        && when.elapsed() < SNAPSHOT_TTL
    {
        return Arc::clone(snap);
    }
    let snap = Arc::new(read_snapshot(dir()));
    *cache = Some((Instant::now(), Arc::clone(&snap)));
    snap
}

fn read_snapshot(dir: &Path) -> Snapshot {
    // SAFETY: getpid has no preconditions.
    let own_pid = unsafe { libc::getpid() } as u32;
    let mut records = Vec::new();
    // This process, live.
    let load = LOCAL_LOAD.lock().clone();
    let own = local_devices(&load);
    if !own.is_empty() {
        records.push(Record {
            pid: own_pid,
            start: 0,
            devices: own,
        });
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix("proc-"))
                .and_then(|n| n.strip_suffix(".rec"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == own_pid {
                continue;
            }
            let path = entry.path();
            let Some(record) = read_record(&path) else {
                continue;
            };
            if record.pid != pid {
                continue;
            }
            match process_start(pid) {
                Some(start) if start == record.start || record.start == 0 => records.push(record),
                // Dead, or the pid was recycled: the writer is gone.
                _ => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    let mut snap = Snapshot::default();
    for r in records {
        for d in r.devices {
            let e = snap.devices.entry(d.physical).or_default();
            e.hbm_used_bytes = e.hbm_used_bytes.saturating_add(d.hbm_bytes);
            e.busy = (e.busy + f64::from(d.busy_ppm) / 1e6).min(1.0);
            e.bandwidth = (e.bandwidth + f64::from(d.bandwidth_ppm) / 1e6).min(1.0);
            if d.hbm_bytes > 0 {
                e.processes.push((r.pid, d.hbm_bytes));
            }
        }
    }
    for d in snap.devices.values_mut() {
        d.processes.sort_unstable();
    }
    snap
}

fn read_record(path: &Path) -> Option<Record> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so that a FIFO named like a record (which anyone who can
    // write the directory can make) cannot hang the reader; only a regular
    // file is read.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_RECORD_BYTES).read_to_string(&mut text).ok()?;
    parse_record(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 15): a FIFO named like a record in the telemetry
    /// directory hung every reader (npu-smi-rs, the exporter). It is
    /// skipped at once; a real record beside it is still read.
    #[test]
    fn a_fifo_in_the_telemetry_directory_is_skipped_without_blocking() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let fifo = dir.join("proc-1.rec");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let fifo_record = read_record(&fifo);
        let snap = read_snapshot(&dir);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(fifo_record, None);
        assert!(
            snap.devices
                .values()
                .all(|d| !d.processes.iter().any(|p| p.0 == 1))
        );
    }

    #[test]
    fn records_round_trip_through_their_text_form() {
        let devices = vec![
            DeviceUse {
                physical: 3,
                hbm_bytes: 1 << 30,
                busy_ppm: 500_000,
                bandwidth_ppm: 7,
            },
            DeviceUse {
                physical: 0,
                hbm_bytes: 0,
                busy_ppm: 1_000_000,
                bandwidth_ppm: 0,
            },
        ];
        let text = format_record(42, 99, "my (odd) name", &devices);
        assert_eq!(
            parse_record(&text),
            Some(Record {
                pid: 42,
                start: 99,
                devices
            })
        );
    }

    #[test]
    fn malformed_records_are_rejected_not_trusted() {
        for bad in [
            "",
            "something else\npid 1\nstart 1\n",
            "cann-sim-telemetry 1\nstart 1\n",
            "cann-sim-telemetry 1\npid 1\nstart 1\ndev 0 x 0 0\n",
            "cann-sim-telemetry 1\npid 1\nstart 1\ndev 99999999999 0 0 0\n",
        ] {
            assert_eq!(parse_record(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn own_start_time_is_readable_and_dead_pids_have_none() {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() } as u32;
        assert!(process_start(pid).is_some());
        // Above the kernel's pid_max (at most 2^22).
        assert_eq!(process_start(u32::MAX - 1), None);
    }

    #[test]
    fn records_of_dead_processes_are_ignored_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("telemetry");
        create_dir(&dir).unwrap();
        let dead = u32::MAX - 2;
        let path = record_path(&dir, dead);
        let live = DeviceUse {
            physical: 5,
            hbm_bytes: 1000,
            busy_ppm: 0,
            bandwidth_ppm: 0,
        };
        std::fs::write(&path, format_record(dead, 1, "ghost", &[live])).unwrap();
        // A live process (our parent) with a matching start time counts.
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() } as u32;
        let parent_start = process_start(parent).unwrap();
        let parent_path = record_path(&dir, parent);
        std::fs::write(
            &parent_path,
            format_record(parent, parent_start, "p", &[live]),
        )
        .unwrap();
        let snap = read_snapshot(&dir);
        assert!(!path.exists(), "the dead process's record was removed");
        assert_eq!(snap.device(5).hbm_used_bytes, 1000);
        assert_eq!(snap.device(5).processes, vec![(parent, 1000)]);
        // The same pid with another start time is a recycled pid.
        std::fs::write(
            &parent_path,
            format_record(parent, parent_start + 1, "p", &[live]),
        )
        .unwrap();
        assert_eq!(read_snapshot(&dir).device(5).hbm_used_bytes, 0);
    }

    #[test]
    fn derived_figures_grow_with_load() {
        let idle = DeviceLoad::default();
        let busy = DeviceLoad {
            busy: 1.0,
            bandwidth: 1.0,
            hbm_used_bytes: 64,
            processes: vec![],
        };
        assert_eq!(idle.temperature_celsius(64), 35);
        assert_eq!(busy.temperature_celsius(64), 68);
        assert_eq!(
            (idle.power_deciwatts(), busy.power_deciwatts()),
            (900, 3650)
        );
        assert_eq!(
            (idle.aicore_mhz(), busy.aicore_mhz()),
            (800, AICORE_MAX_MHZ)
        );
        assert_eq!(
            (idle.voltage_centivolts(), busy.voltage_centivolts()),
            (80, 90)
        );
        assert!(busy.hbm_temperature_celsius(64) > idle.hbm_temperature_celsius(64));
    }

    #[test]
    fn window_load_averages_over_the_window() {
        let t0 = Instant::now();
        let mut h = std::collections::VecDeque::new();
        h.push_back((t0, vec![0; MAX_DEVICES], vec![0; MAX_DEVICES]));
        let mut busy = vec![0; MAX_DEVICES];
        busy[2] = 250_000_000; // 0.25 s busy
        let mut bytes = vec![0; MAX_DEVICES];
        bytes[2] = SIM_HBM_BANDWIDTH_BYTES_PER_SEC / 2; // half the bandwidth for 1 s
        h.push_back((t0 + Duration::from_secs(1), busy, bytes));
        let load = window_load(&h);
        assert_eq!(load[2], (250_000, 500_000));
        assert_eq!(load[0], (0, 0));
    }
}

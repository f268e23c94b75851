//! Inter-process events (`ACL_EVENT_IPC`, `aclrtIpcGetEventHandle`,
//! `aclrtIpcOpenEventHandle`): a record in one process that streams of
//! another process wait for.
//!
//! The release (hicann/runtime `src/runtime/core/src/event/ipc_event.cc`,
//! `src/runtime/api/impl/api_impl_event.cc`, `api_error.cc`;
//! `docs/zh/api_ref/07_event_management.md`) backs an IPC event with a small
//! shared device-and-host memory (`IpcHandleVa`: a lock, a reference count
//! per slot and the slot of the latest record), allocated when the event is
//! created and exported as a shareable handle; `aclrtIpcOpenEventHandle`
//! imports it in another process as a new event. A record takes a slot and
//! marks it pending until the stream reaches it; a wait captures the latest
//! record's slot when it is called (a wait before any record, or after the
//! latest record completed, is a no-op) and blocks its stream until the slot
//! is released; `aclrtSynchronizeEvent` and `aclrtQueryEventStatus` look at
//! the latest record the same way. IPC events cannot be reset, queried with
//! the deprecated call, timed, given an id or used in a capture (207000).
//!
//! In the simulator the shared memory is a file in the directory of the
//! simulator's shared records (`$CANN_SIM_SHM_DIR`, else
//! `/dev/shm/cann-sim-<uid>/`), `ipc-event-<pid>-<n>.ev`, mapped shared by
//! every process that has the event: a header with two counters, the
//! records *issued* (taken by `aclrtRecordEvent` in any process) and the
//! highest record *completed*. A wait captures `issued` and is satisfied
//! when `completed` reaches it. Two records pending at once on two streams
//! that complete out of order release the earlier one with the later one
//! (the release's slots keep them apart): a known difference, listed in
//! FIDELITY.md. The handle (64 bytes, `ACL_IPC_EVENT_HANDLE_SIZE`) names
//! the file: a magic word, the creating process's id and start time, and
//! the event's number.
//!
//! **A dead peer.** A wait whose record is pending while the creating
//! process has exited ends with an error instead of blocking for ever (the
//! release's wait would run into the operator wait timeout); the file of an
//! event is removed when its creator destroys it or exits normally; the file
//! of a creator that crashed is removed by the first process that tries to
//! open it.

use super::error::{Error, ErrorKind};
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `ACL_IPC_EVENT_HANDLE_SIZE`.
pub const HANDLE_SIZE: usize = 64;
/// The first bytes of a handle the simulator made.
const HANDLE_MAGIC: [u8; 8] = *b"csimIPCe";
/// The first word of an event file.
const FILE_MAGIC: u64 = u64::from_le_bytes(*b"CSIMEVT1");
/// Bytes of an event file (one page).
const FILE_LEN: usize = 4096;

/// The event files this process made and has not removed, removed by an
/// `atexit` handler when the process exits normally.
static OWNED: parking_lot::Mutex<Vec<PathBuf>> = parking_lot::Mutex::new(Vec::new());

extern "C" fn remove_owned_files() {
    // `try_lock`: never block an exiting process on a lock another thread
    // may hold for ever.
    let pid = std::process::id();
    if let Some(files) = OWNED.try_lock() {
        for p in files.iter() {
            // A forked child inherits the list; only the creator removes.
            if p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("ipc-event-{pid}-")))
            {
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

fn own(path: PathBuf) {
    static AT_EXIT: std::sync::Once = std::sync::Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: `remove_owned_files` is an `extern "C" fn()` that never
        // unwinds; registering it has no other precondition.
        unsafe { libc::atexit(remove_owned_files) };
    });
    OWNED.lock().push(path);
}

fn disown(path: &std::path::Path) {
    OWNED.lock().retain(|p| p != path);
    let _ = std::fs::remove_file(path);
}

/// The shared header of an event file.
#[repr(C)]
struct Header {
    magic: AtomicU64,
    /// Records issued so far (the latest record's number).
    issued: AtomicU64,
    /// The highest record number completed.
    completed: AtomicU64,
}

/// Who an event file belongs to, and which one it is: what a handle holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandleData {
    /// The creating process.
    pub pid: u32,
    /// Its start time (clock ticks since boot), telling it from a later
    /// process with the same id.
    pub start: u64,
    /// The event's number in that process.
    pub id: u64,
}

impl HandleData {
    /// The 64 bytes of `aclrtIpcEventHandle`.
    pub fn to_bytes(self) -> [u8; HANDLE_SIZE] {
        let mut b = [0u8; HANDLE_SIZE];
        b[..8].copy_from_slice(&HANDLE_MAGIC);
        b[8..12].copy_from_slice(&self.pid.to_le_bytes());
        b[16..24].copy_from_slice(&self.start.to_le_bytes());
        b[24..32].copy_from_slice(&self.id.to_le_bytes());
        b
    }

    /// Reads a handle; `None` when the bytes are not one the simulator
    /// made.
    pub fn from_bytes(b: &[u8; HANDLE_SIZE]) -> Option<HandleData> {
        if b[..8] != HANDLE_MAGIC || b[32..].iter().any(|&x| x != 0) {
            return None;
        }
        let word = |r: std::ops::Range<usize>| -> u64 {
            let mut w = [0u8; 8];
            w[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(w)
        };
        Some(HandleData {
            pid: u32::try_from(word(8..12)).ok()?,
            start: word(16..24),
            id: word(24..32),
        })
    }

    fn path(self) -> PathBuf {
        crate::telemetry::dir().join(format!("ipc-event-{}-{}.ev", self.pid, self.id))
    }
}

/// One process's mapping of an event file.
#[derive(Debug)]
pub struct IpcEventShared {
    header: NonNull<Header>,
    /// What the handle says.
    pub data: HandleData,
    /// Made by this process (it removes the file when dropped).
    owner: bool,
}

// SAFETY: the mapping is only accessed through the atomics of `Header`, and
// unmapped once (in `Drop`), so sharing and sending it between threads is
// sound.
unsafe impl Send for IpcEventShared {}
// SAFETY: as above: every access is atomic.
unsafe impl Sync for IpcEventShared {}

fn map_file(file: &std::fs::File) -> Result<NonNull<Header>, String> {
    use std::os::fd::AsRawFd;
    // SAFETY: a fresh shared mapping of a file of FILE_LEN bytes; the result
    // is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            FILE_LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!("mmap: {}", std::io::Error::last_os_error()));
    }
    NonNull::new(p.cast::<Header>()).ok_or_else(|| "mmap returned null".to_string())
}

/// Why an event file could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenError {
    /// Not a handle from `aclrtIpcGetEventHandle`, or its event is gone.
    Invalid(String),
    /// The file could not be mapped.
    Resource(String),
}

impl IpcEventShared {
    /// Makes the file of a new IPC event of this process.
    ///
    /// # Errors
    ///
    /// A sentence when the file cannot be made or mapped.
    pub fn create() -> Result<IpcEventShared, String> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let pid = std::process::id();
        let data = HandleData {
            pid,
            start: crate::telemetry::process_start(pid).unwrap_or(0),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        };
        let dir = crate::telemetry::dir();
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = data.path();
        // A stale file of an earlier process with this pid is replaced.
        let _ = std::fs::remove_file(&path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let made = file
            .set_len(FILE_LEN as u64)
            .map_err(|e| format!("cannot size {}: {e}", path.display()))
            .and_then(|()| map_file(&file));
        let header = match made {
            Ok(h) => h,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
        };
        own(path);
        let shared = IpcEventShared {
            header,
            data,
            owner: true,
        };
        shared.header().magic.store(FILE_MAGIC, Ordering::Release);
        Ok(shared)
    }

    /// Maps the file of the event `handle` names (made by another process,
    /// or by this one).
    ///
    /// # Errors
    ///
    /// [`OpenError::Invalid`] when the bytes are not a handle, the event was
    /// destroyed or its process has exited; [`OpenError::Resource`] when the
    /// file cannot be mapped.
    pub fn open(handle: &[u8; HANDLE_SIZE]) -> Result<IpcEventShared, OpenError> {
        let data = HandleData::from_bytes(handle).ok_or_else(|| {
            OpenError::Invalid(
                "the handle is not one aclrtIpcGetEventHandle returned (unknown layout)".into(),
            )
        })?;
        if crate::telemetry::process_start(data.pid).unwrap_or(0) != data.start {
            // The creator is gone: its file is stale (as `mem::ipc` does
            // with the record of an exporter that exited).
            let _ = std::fs::remove_file(data.path());
            return Err(OpenError::Invalid(format!(
                "the process that created the event (pid {}) has exited",
                data.pid
            )));
        }
        let path = data.path();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| {
                OpenError::Invalid(format!(
                    "the event of pid {} was destroyed (its record {} cannot be opened: {e})",
                    data.pid,
                    path.display()
                ))
            })?;
        let len = file
            .metadata()
            .map_err(|e| OpenError::Resource(format!("{}: {e}", path.display())))?
            .len();
        if len != FILE_LEN as u64 {
            return Err(OpenError::Invalid(format!(
                "{} is not an event record ({len} bytes)",
                path.display()
            )));
        }
        let header = map_file(&file).map_err(OpenError::Resource)?;
        let shared = IpcEventShared {
            header,
            data,
            owner: false,
        };
        if shared.header().magic.load(Ordering::Acquire) != FILE_MAGIC {
            return Err(OpenError::Invalid(format!(
                "{} is not an event record (bad magic word)",
                path.display()
            )));
        }
        Ok(shared)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping lives until `Drop` and holds a `Header` of
        // atomics at its start (FILE_LEN > size_of::<Header>()).
        unsafe { self.header.as_ref() }
    }

    /// The handle's bytes.
    pub fn handle(&self) -> [u8; HANDLE_SIZE] {
        self.data.to_bytes()
    }

    /// Takes the number of a new record (`aclrtRecordEvent`).
    pub fn issue(&self) -> u64 {
        self.header().issued.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Record `n` reached its stream.
    pub fn complete(&self, n: u64) {
        self.header().completed.fetch_max(n, Ordering::AcqRel);
    }

    /// The record a wait called now waits for: `None` when none is pending.
    pub fn pending(&self) -> Option<u64> {
        let issued = self.header().issued.load(Ordering::Acquire);
        (!self.is_done(issued)).then_some(issued)
    }

    /// Whether record `n` is complete.
    pub fn is_done(&self, n: u64) -> bool {
        self.header().completed.load(Ordering::Acquire) >= n
    }

    /// The creator destroyed the event (`aclrtDestroyEvent`): its file goes,
    /// so that the handle can no longer be opened; mappings made before
    /// stay valid (records still queued complete into them).
    pub fn withdraw(&self) {
        if self.owner {
            disown(&self.data.path());
        }
    }

    /// Whether the creating process still runs (always, for the creator).
    fn creator_alive(&self) -> bool {
        self.owner || crate::telemetry::process_start(self.data.pid) == Some(self.data.start)
    }

    /// Blocks until record `n` is complete, `abort` is set, or `deadline`
    /// passes; polls with a growing pause (20 µs to 1 ms), and checks every
    /// 50 ms that the creating process still runs.
    ///
    /// # Errors
    ///
    /// A timeout (the caller's [`ErrorKind`] for it) or a dead creator.
    pub fn wait(
        &self,
        n: u64,
        abort: Option<&AtomicBool>,
        deadline: Option<Instant>,
        timed_out: impl Fn() -> Error,
    ) -> Result<(), Error> {
        let mut pause = Duration::from_micros(20);
        let mut next_check = Instant::now() + Duration::from_millis(50);
        loop {
            if self.is_done(n) || abort.is_some_and(|a| a.load(Ordering::Acquire)) {
                return Ok(());
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(timed_out());
            }
            if now >= next_check {
                if !self.creator_alive() {
                    return Err(Error::new(
                        ErrorKind::DrvInternal,
                        format!(
                            "the process that created the IPC event (pid {}) exited while its \
                             record {n} was pending; the wait can never be satisfied",
                            self.data.pid
                        ),
                    ));
                }
                next_check = now + Duration::from_millis(50);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

impl Drop for IpcEventShared {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map_file`, unmapped once.
        unsafe { libc::munmap(self.header.as_ptr().cast(), FILE_LEN) };
        if self.owner {
            disown(&self.data.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_foreign_bytes_are_refused() {
        let d = HandleData {
            pid: 1234,
            start: 99,
            id: 7,
        };
        assert_eq!(HandleData::from_bytes(&d.to_bytes()), Some(d));
        assert_eq!(HandleData::from_bytes(&[0u8; HANDLE_SIZE]), None);
        let mut b = d.to_bytes();
        b[40] = 1;
        assert_eq!(HandleData::from_bytes(&b), None);
    }

    #[test]
    fn a_wait_captures_the_latest_record_and_ends_when_it_completes() {
        let owner = IpcEventShared::create().unwrap();
        assert_eq!(owner.pending(), None);
        let other = IpcEventShared::open(&owner.handle()).unwrap();
        let n = owner.issue();
        assert_eq!(other.pending(), Some(n));
        let never = || Error::new(ErrorKind::DrvInternal, String::from("timed out"));
        let soon = Some(Instant::now() + Duration::from_millis(5));
        assert!(other.wait(n, None, soon, never).is_err());
        owner.complete(n);
        assert_eq!(other.pending(), None);
        other.wait(n, None, None, never).unwrap();
        let path = owner.data.path();
        drop(other);
        assert!(path.exists());
        drop(owner);
        assert!(!path.exists());
    }
}

//! IPC memory sharing between processes (`aclrtIpcMemGetExportKey`,
//! `aclrtIpcMemSetImportPid`, `aclrtIpcMemImportByKey`, `aclrtIpcMemClose`).
//!
//! The release's flow (hicann/runtime `docs/zh/api_ref/11-07_IPC_memory_sharing.md`,
//! `src/runtime/api/impl/api_impl_standard_soc.cc` `IpcSetMemoryName`,
//! `IpcOpenMemory`, `IpcCloseMemoryByName`; the driver's `halShmem*`): the
//! exporting process names a range of its `aclrtMalloc` memory with a key
//! (by default only the processes it then whitelists may import it); another
//! process imports the key and gets an address of its own for the same
//! memory; each side closes the key (importers first).
//!
//! In the simulator a device block's bytes live in a memory file
//! (`memfd`, see [`super::block`]): the export writes a record
//! (`ipc-<key>.key`, in the directory the telemetry records use:
//! `$CANN_SIM_SHM_DIR`, else `/dev/shm/cann-sim-<uid>/`, so both processes
//! must see the same one) naming the exporting process, the file's
//! descriptor and inode, the range and the whitelist; an import opens the
//! file through `/proc/<pid>/fd/<fd>` and maps the range shared, read and
//! write, so both processes see each other's writes at once, as two
//! mappings of one HBM range do.
//!
//! **Which blocks can be shared.** The release refuses memory that is not
//! aligned to the page table (`docs/zh/FAQ/进程间IPC内存共享的页表对齐要求.md`:
//! small allocations are cut from larger blocks and may not be page-aligned).
//! Only the simulator's blocks of at least `MAPPED_BLOCK` (2 MiB) have a
//! memory file; smaller ones come from the heap, 512-byte aligned, and are
//! refused with a message saying to allocate at least 2 MiB (the simulator
//! is stricter here than a device, which shares 4 KiB-aligned small blocks:
//! FIDELITY.md). Backing every block of a page or more with a memory file at
//! allocation was measured and rejected: 51 µs per allocate, poison and free
//! of 8 KiB with `memfd_create` + `mmap` against 11.5 µs from the heap on the
//! development machine (2 cores), a 4.5× cost on every small `aclrtMalloc`
//! for a rarely used feature; moving a heap block into a file on export is
//! impossible (its address must not change, and its page is shared with
//! other blocks).
//!
//! Codes: the driver's are not in the open source; the simulator answers
//! what its `drvErrMap_` maps them to (hicann/runtime
//! `src/runtime/core/src/common/errcode_manage.cc`): an unknown, closed or
//! unshareable key or range is `DRV_ERROR_INVALID_VALUE` → 107000, a process
//! not in the whitelist `DRV_ERROR_OPER_NOT_PERMITTED` → 207006
//! (`ACL_ERROR_RT_NO_PERMISSION`), no memory file left
//! `DRV_ERROR_NO_RESOURCES` → 207001-class resource failure.

use super::block::MAPPED_BLOCK;
use super::table::{MemKind, memory};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an IPC call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IpcError {
    /// A bad key, range or state (the driver's invalid value).
    Invalid(String),
    /// The importing process is not in the key's whitelist.
    NotPermitted(String),
    /// No memory file could back the export.
    NoResources(String),
}

/// The longest key, without its NUL: the release's keys fit `len = 65`.
pub const KEY_MAX: usize = 64;

/// What this process exported, by key.
#[derive(Debug)]
struct Export {
    /// The record's contents, rewritten when the whitelist grows.
    record: Record,
}

/// One mapping this process imported.
#[derive(Debug)]
struct Import {
    /// The mapping's first address (the address the importer got).
    addr: usize,
    /// Its length.
    len: usize,
}

/// The export record another process reads.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    pid: u32,
    /// The exporter's start time (`/proc/<pid>/stat` field 22): tells it
    /// from a later process with the same pid.
    start: u64,
    fd: i32,
    ino: u64,
    /// Offset of the shared range in the file.
    offset: usize,
    size: usize,
    /// Whether importers must be in `pids`.
    check_pid: bool,
    pids: Vec<i32>,
}

impl Record {
    fn to_text(&self) -> String {
        let pids: Vec<String> = self.pids.iter().map(i32::to_string).collect();
        format!(
            "cann-sim-ipc 1\npid {}\nstart {}\nfd {}\nino {}\noffset {}\nsize {}\ncheck_pid {}\npids {}\n",
            self.pid,
            self.start,
            self.fd,
            self.ino,
            self.offset,
            self.size,
            u8::from(self.check_pid),
            pids.join(" ")
        )
    }

    fn parse(text: &str) -> Option<Record> {
        let mut lines = text.lines();
        if lines.next()? != "cann-sim-ipc 1" {
            return None;
        }
        let mut field = |name: &str| -> Option<String> {
            let line = lines.next()?;
            Some(
                line.strip_prefix(name)?
                    .strip_prefix(' ')
                    .unwrap_or("")
                    .to_string(),
            )
        };
        let pid = field("pid")?.parse().ok()?;
        let start = field("start")?.parse().ok()?;
        let fd = field("fd")?.parse().ok()?;
        let ino = field("ino")?.parse().ok()?;
        let offset = field("offset")?.parse().ok()?;
        let size = field("size")?.parse().ok()?;
        let check_pid = field("check_pid")? == "1";
        let pids = field("pids")?
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<Vec<i32>, _>>()
            .ok()?;
        Some(Record {
            pid,
            start,
            fd,
            ino,
            offset,
            size,
            check_pid,
            pids,
        })
    }
}

static EXPORTS: LazyLock<Mutex<HashMap<String, Export>>> = LazyLock::new(Default::default);
static IMPORTS: LazyLock<Mutex<HashMap<String, Vec<Import>>>> = LazyLock::new(Default::default);

fn record_path(key: &str) -> PathBuf {
    crate::telemetry::dir().join(format!("ipc-{key}.key"))
}

fn write_record(key: &str, record: &Record) -> Result<(), IpcError> {
    let dir = crate::telemetry::dir();
    let path = record_path(key);
    let tmp = dir.join(format!("ipc-{key}.tmp"));
    crate::telemetry::write_atomically(dir, &tmp, &path, &record.to_text()).map_err(|e| {
        IpcError::NoResources(format!(
            "cannot write the export record {}: {e}",
            path.display()
        ))
    })
}

/// A key unique on the host: the process, its start time and a counter.
fn new_key(pid: u32, start: u64) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("csim-{pid}-{start}-{n}")
}

/// Exports `size` bytes of device memory at `addr` (`aclrtIpcMemGetExportKey`):
/// returns the key. `check_pid` false is
/// `ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION`.
///
/// # Errors
///
/// [`IpcError::Invalid`] when `addr` is not inside a live `aclrtMalloc`
/// block, the range runs past it, or the block cannot be shared (below
/// 2 MiB, or not page-aligned); [`IpcError::NoResources`] when the block
/// has no memory file (the descriptor cap) or the record cannot be written.
pub fn export(addr: usize, size: usize, check_pid: bool) -> Result<String, IpcError> {
    let table = memory().read();
    let Some((base, a)) = table.find(addr) else {
        return Err(IpcError::Invalid(format!(
            "{addr:#x} is not device memory from aclrtMalloc (no live allocation holds it)"
        )));
    };
    if !matches!(a.kind, MemKind::Device(_)) {
        return Err(IpcError::Invalid(format!(
            "{addr:#x} is pinned host memory; only device memory from aclrtMalloc can be shared"
        )));
    }
    let end = addr.checked_add(size);
    if end.is_none_or(|e| e > base + a.size) {
        return Err(IpcError::Invalid(format!(
            "the range {addr:#x} + {size} bytes runs past the end of the allocation {base:#x} of {} bytes",
            a.size
        )));
    }
    if a.reserved() < MAPPED_BLOCK {
        return Err(IpcError::Invalid(format!(
            "the allocation {base:#x} of {} bytes is not aligned to the page table: the \
             simulator shares only device blocks of at least {MAPPED_BLOCK} bytes (2 MiB; \
             smaller ones share pages with other blocks); allocate at least 2 MiB to share it",
            a.size
        )));
    }
    if !(addr - base).is_multiple_of(4096) {
        return Err(IpcError::Invalid(format!(
            "{addr:#x} is {} bytes into the allocation {base:#x}, not on a page boundary (4096)",
            addr - base
        )));
    }
    let Some((file, _, _)) = table.ipc_file(addr) else {
        return Err(IpcError::NoResources(format!(
            "the allocation {base:#x} has no memory file: the simulator backs at most a quarter \
             of the descriptor limit (RLIMIT_NOFILE) of device blocks with one; raise `ulimit -n`"
        )));
    };
    let pid = std::process::id();
    let start = crate::telemetry::process_start(pid).unwrap_or(0);
    let key = new_key(pid, start);
    let record = Record {
        pid,
        start,
        fd: file.fd,
        ino: file.ino,
        offset: addr - base,
        size,
        check_pid,
        pids: Vec::new(),
    };
    write_record(&key, &record)?;
    drop(table);
    EXPORTS.lock().insert(key.clone(), Export { record });
    Ok(key)
}

/// Adds `pids` to the whitelist of `key` (`aclrtIpcMemSetImportPid`).
///
/// # Errors
///
/// [`IpcError::Invalid`] when this process did not export `key` (or
/// closed it).
pub fn set_import_pids(key: &str, pids: &[i32]) -> Result<(), IpcError> {
    let mut exports = EXPORTS.lock();
    let Some(e) = exports.get_mut(key) else {
        return Err(IpcError::Invalid(format!(
            "key \"{key}\" was not exported by this process (or was closed)"
        )));
    };
    e.record.pids.extend_from_slice(pids);
    write_record(key, &e.record)
}

/// Imports `key` into this process (`aclrtIpcMemImportByKey`) as device
/// memory of `device`; returns the address.
///
/// # Errors
///
/// [`IpcError::Invalid`] for an unknown or closed key, or an exporter that
/// exited or freed the memory; [`IpcError::NotPermitted`] when the key
/// checks pids and this process is not in its whitelist.
pub fn import(key: &str, device: u32) -> Result<usize, IpcError> {
    let unknown = || {
        IpcError::Invalid(format!(
            "no exported memory has the key \"{key}\" (never exported, or closed by its exporter)"
        ))
    };
    if key.is_empty() || key.len() > KEY_MAX || key.contains('/') {
        return Err(unknown());
    }
    let path = record_path(key);
    let text = std::fs::read_to_string(&path).map_err(|_| unknown())?;
    let record = Record::parse(&text).ok_or_else(unknown)?;
    if crate::telemetry::process_start(record.pid) != Some(record.start) {
        // The exporter is gone: its record is stale.
        let _ = std::fs::remove_file(&path);
        return Err(IpcError::Invalid(format!(
            "the process {} that exported the key \"{key}\" has exited",
            record.pid
        )));
    }
    let me = std::process::id();
    if record.check_pid && !record.pids.iter().any(|&p| u32::try_from(p) == Ok(me)) {
        return Err(IpcError::NotPermitted(format!(
            "this process ({me}) is not in the whitelist of the key \"{key}\" (set with \
             aclrtIpcMemSetImportPid in the exporting process {}, which lists {:?})",
            record.pid, record.pids
        )));
    }
    let gone = || {
        IpcError::Invalid(format!(
            "the memory of the key \"{key}\" was freed by its exporter (process {})",
            record.pid
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/{}/fd/{}", record.pid, record.fd))
        .map_err(|_| gone())?;
    let meta = file.metadata().map_err(|_| gone())?;
    let in_file = record.offset.checked_add(record.size);
    if std::os::unix::fs::MetadataExt::ino(&meta) != record.ino
        || in_file.is_none_or(|e| e as u64 > meta.len())
    {
        return Err(gone());
    }
    let len = record.size;
    // SAFETY: a fresh shared mapping of an open file, at an address the
    // kernel picks; no existing memory is touched. `offset` is a multiple
    // of the page size (checked at export), `len` > 0 and inside the file.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            record.offset as libc::off_t,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(IpcError::NoResources(format!(
            "cannot map the memory of the key \"{key}\": {}",
            std::io::Error::last_os_error()
        )));
    }
    let addr = map as usize;
    // A forked child does not inherit it (as with this process's own
    // device memory). SAFETY: advice on the mapping just made.
    unsafe { libc::madvise(map, len, libc::MADV_DONTFORK) };
    memory().write().insert_imported(addr, len, device);
    IMPORTS
        .lock()
        .entry(key.to_string())
        .or_default()
        .push(Import { addr, len });
    Ok(addr)
}

/// Whether this process exports `key` (and has not withdrawn it).
pub fn is_exported(key: &str) -> bool {
    EXPORTS.lock().contains_key(key)
}

/// Closes `key` in this process (`aclrtIpcMemClose`): an imported key
/// unmaps its oldest import (`ApiImpl::IpcCloseMemoryByName` closes the
/// first address of its list); otherwise an exported key is withdrawn (no
/// process can import it any more; existing imports keep their mapping).
///
/// # Errors
///
/// [`IpcError::Invalid`] when this process neither imported nor exported
/// `key` (or closed it already).
pub fn close(key: &str) -> Result<(), IpcError> {
    let import = {
        let mut imports = IMPORTS.lock();
        match imports.get_mut(key) {
            Some(list) if !list.is_empty() => {
                let first = list.remove(0);
                if list.is_empty() {
                    imports.remove(key);
                }
                Some(first)
            }
            _ => None,
        }
    };
    if let Some(i) = import {
        memory().write().remove_imported(i.addr);
        // SAFETY: the mapping `import` made, unmapped once (just removed
        // from the list and the table).
        unsafe { libc::munmap(i.addr as *mut libc::c_void, i.len) };
        return Ok(());
    }
    if EXPORTS.lock().remove(key).is_some() {
        let _ = std::fs::remove_file(record_path(key));
        return Ok(());
    }
    Err(IpcError::Invalid(format!(
        "key \"{key}\" is neither imported nor exported by this process (never, or closed \
         already)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_malformed_ones_are_refused() {
        let r = Record {
            pid: 42,
            start: 7,
            fd: 9,
            ino: 1234,
            offset: 4096,
            size: 2 << 20,
            check_pid: true,
            pids: vec![5, 6],
        };
        assert_eq!(Record::parse(&r.to_text()), Some(r.clone()));
        let empty = Record { pids: vec![], ..r };
        assert_eq!(Record::parse(&empty.to_text()), Some(empty));
        assert_eq!(Record::parse("cann-sim-ipc 2\n"), None);
        assert_eq!(Record::parse("cann-sim-ipc 1\npid x\n"), None);
    }
}

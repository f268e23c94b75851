//! Same-host links: how ranks on one host move bulk data without sockets.
//!
//! Real HCCL moves data inside a server over HCCS or PCIe (device memory to
//! device memory, no host networking), and between servers over RoCE. The
//! simulator models the same split: ranks on another host exchange data over
//! the TCP mesh ([`super::transport`]), while ranks on this host read each
//! other's device memory directly, as a DMA engine would: with
//! `process_vm_readv(2)` (cross-memory attach), which copies from another
//! process's address space (or this one's) in one kernel copy and reports a
//! bad address as an error instead of faulting. Control messages (the
//! signature exchange, "my part is done") still travel over TCP.
//!
//! Two ranks are *on the same host* when they share the kernel boot id and
//! the network and PID namespaces (a rank in another network namespace is
//! another host, as in the two-host test). When the mesh is built every rank
//! tells its peers its host key, its process id and the address of
//! [`PROBE`]; a peer on the same host reads the probe back (ranks in the
//! same process need no probe: they read each other's memory directly).
//! Only peers whose probe read succeeds are linked directly; a collective uses the direct
//! algorithms only when every rank of the communicator is linked to every
//! other (each says so in its signature), so all ranks agree.
//!
//! | `HCCL_INTRA_PCIE_ENABLE` | `HCCL_INTRA_ROCE_ENABLE` | links inside the host |
//! |---|---|---|
//! | unset | unset | direct (the default) |
//! | 1 | unset or 0 | direct |
//! | 0 | 0 | direct |
//! | 0 or unset | 1 | TCP, as between hosts |
//! | 1 | 1 | refused: `HCCL_E_PARA` at communicator creation |
//! | 0 / unset | unset / 0 | refused, as HCCL's documentation lists them unsupported |
//!
//! (`hicann/hccl` `docs/zh/user_guide/hccl_env/HCCL_INTRA_ROCE_ENABLE.md`
//! gives the same table for the hardware.)

use super::error::{ErrorKind, Fail};
use std::sync::OnceLock;

/// The value a peer reads back to prove it can read this process.
pub static PROBE: u64 = 0x4B4E_494C_4D49_5343; // "CSIMLINK"

/// How ranks on one host exchange data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Direct reads of each other's device memory (HCCS/PCIe on hardware).
    Direct,
    /// The TCP mesh, as between hosts (RoCE on hardware).
    Tcp,
}

/// The mode the environment asks for.
///
/// # Errors
///
/// `HCCL_E_PARA` and a sentence for a combination HCCL does not support.
pub fn mode() -> Result<Mode, Fail> {
    mode_from(|name| std::env::var(name).ok())
}

/// [`mode`] with the variables read by `var`.
fn mode_from(var: impl Fn(&str) -> Option<String>) -> Result<Mode, Fail> {
    let flag = |name: &str| {
        var(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let pcie = flag("HCCL_INTRA_PCIE_ENABLE");
    let roce = flag("HCCL_INTRA_ROCE_ENABLE");
    for (name, v) in [
        ("HCCL_INTRA_PCIE_ENABLE", &pcie),
        ("HCCL_INTRA_ROCE_ENABLE", &roce),
    ] {
        if let Some(v) = v
            && v != "0"
            && v != "1"
        {
            return Err(Fail::new(
                ErrorKind::Para,
                format!("{name}={v} is not valid: it must be 0 or 1"),
            ));
        }
    }
    let refuse = |why: &str| {
        Err(Fail::new(
            ErrorKind::Para,
            format!(
                "HCCL_INTRA_PCIE_ENABLE={} with HCCL_INTRA_ROCE_ENABLE={} is not a supported \
                 combination ({why}); set HCCL_INTRA_ROCE_ENABLE=1 for RoCE (TCP here) inside a \
                 host, or leave both unset",
                pcie.as_deref().unwrap_or("(unset)"),
                roce.as_deref().unwrap_or("(unset)")
            ),
        ))
    };
    match (pcie.as_deref(), roce.as_deref()) {
        (Some("1"), Some("1")) => refuse("both links cannot be chosen"),
        (Some("0"), None) | (None, Some("0")) => refuse("set both, or only the one turned on"),
        (_, Some("1")) => Ok(Mode::Tcp),
        _ => Ok(Mode::Direct),
    }
}

/// This host's key: boot id and the network and PID namespaces, hashed.
pub fn host_key() -> u64 {
    static KEY: OnceLock<u64> = OnceLock::new();
    *KEY.get_or_init(|| {
        let mut text =
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        for ns in ["/proc/self/ns/net", "/proc/self/ns/pid"] {
            let link = std::fs::read_link(ns).map(|p| p.display().to_string());
            text.push('|');
            text.push_str(&link.unwrap_or_default());
        }
        super::wire::fnv(text.as_bytes()) | 1
    })
}

/// What a rank tells its peers about itself when the mesh is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Card {
    /// [`host_key`], or 0 when this rank does not offer direct links.
    pub host: u64,
    /// Its process id.
    pub pid: u32,
    /// The address of [`PROBE`] in its process.
    pub probe: u64,
}

/// The card's size on the wire.
pub const CARD: usize = 24;

impl Card {
    /// This rank's card under `mode`.
    pub fn mine(mode: Mode) -> Card {
        Card {
            host: if mode == Mode::Direct { host_key() } else { 0 },
            pid: std::process::id(),
            probe: std::ptr::addr_of!(PROBE) as u64,
        }
    }

    /// Little-endian bytes.
    pub fn bytes(&self) -> [u8; CARD] {
        let mut b = [0u8; CARD];
        b[..8].copy_from_slice(&self.host.to_le_bytes());
        b[8..16].copy_from_slice(&u64::from(self.pid).to_le_bytes());
        b[16..].copy_from_slice(&self.probe.to_le_bytes());
        b
    }

    /// Parses [`Card::bytes`].
    pub fn parse(b: &[u8; CARD]) -> Card {
        let q = |i: usize| super::wire::u64_at(b, i);
        Card {
            host: q(0),
            pid: q(8) as u32,
            probe: q(16),
        }
    }

    /// The process to read directly for a peer that showed `self`, when this
    /// rank (showing `mine`) can: same host, both offering, probe read back.
    pub fn link(&self, mine: &Card) -> Option<u32> {
        if self.host == 0 || mine.host == 0 || self.host != mine.host {
            return None;
        }
        if self.pid == mine.pid {
            // A thread of this process: read directly, no system call needed.
            return Some(self.pid);
        }
        let mut got = [0u8; 8];
        match read(self.pid, self.probe as usize, &mut got) {
            Ok(()) if u64::from_ne_bytes(got) == PROBE => Some(self.pid),
            _ => None,
        }
    }
}

/// Copies `dst.len()` bytes at `addr` in process `pid` into `dst`.
///
/// # Errors
///
/// As [`read_raw`].
pub fn read(pid: u32, addr: usize, dst: &mut [u8]) -> std::io::Result<()> {
    // SAFETY: `dst` is `dst.len()` writable bytes, borrowed for the call.
    unsafe { read_raw(pid, addr, dst.as_mut_ptr(), dst.len()) }
}

/// Copies `len` bytes at `addr` in process `pid` to `dst`.
///
/// # Errors
///
/// The OS error: `ESRCH` when the process is gone, `EFAULT` when the range
/// is not mapped there, `EPERM` when this process may not read it.
///
/// # Safety
///
/// `dst` must be valid for writes of `len` bytes for the whole call.
pub unsafe fn read_raw(pid: u32, addr: usize, dst: *mut u8, len: usize) -> std::io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let rest = len - done;
        // SAFETY: `done < len`: the offset stays inside the caller's range.
        let base = unsafe { dst.add(done) };
        let local = libc::iovec {
            iov_base: base.cast(),
            iov_len: rest,
        };
        let remote = libc::iovec {
            iov_base: (addr + done) as *mut libc::c_void,
            iov_len: rest,
        };
        // SAFETY: `local` describes `rest` bytes the caller guarantees
        // writable; the remote range is only read, by the kernel, which
        // checks it and fails with EFAULT instead of faulting.
        let n = unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EFAULT));
        }
        done += n as usize;
    }
    Ok(())
}

/// A read-only view of another process's device memory file (see
/// `MAPPED_BLOCK` (2 MiB)), mapped whole into this process.
///
/// The mapping keeps the file's pages alive after its owner frees the
/// buffer, so reads never fault; what they see then is the owner's problem
/// (it freed memory a collective was using), as on hardware.
#[derive(Debug)]
pub struct Mapping {
    ptr: *const u8,
    len: usize,
}

// SAFETY: a `Mapping` owns a read-only mapping that nothing else unmaps;
// reading it from any thread is as sound as reading it from the one that
// made it. (Writes come only from the owning process, ordered before our
// reads by the collective's sync messages.)
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only gives out shared byte views.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps descriptor `fd` of process `pid`, which must be the file with
    /// inode `ino`.
    ///
    /// # Errors
    ///
    /// The OS error when the file cannot be opened (process gone, no
    /// permission) or mapped, `InvalidData` when the descriptor now names
    /// another file.
    pub fn open(pid: u32, fd: i32, ino: u64) -> std::io::Result<Mapping> {
        let file = std::fs::File::open(format!("/proc/{pid}/fd/{fd}"))?;
        let meta = std::os::unix::fs::MetadataExt::ino(&file.metadata()?);
        let len = file.metadata()?.len() as usize;
        if meta != ino || len == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("descriptor {fd} of process {pid} is no longer the buffer's memory file"),
            ));
        }
        // SAFETY: a fresh read-only shared mapping of an open file; no
        // existing memory is touched. The descriptor may close afterwards.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                std::os::fd::AsRawFd::as_raw_fd(&file),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: ptr.cast_const().cast(),
            len,
        })
    }

    /// The `len` bytes at offset `off` of the file, if it has them.
    pub fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        let end = off.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: `[off, end)` lies inside the live mapping, which stays
        // mapped while `self` (and so the returned borrow) lives. The owner
        // does not write these bytes while a collective reads them.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(off), len) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping is this value's own, unmapped once.
        unsafe { libc::munmap(self.ptr.cast_mut().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode_with(pcie: Option<&str>, roce: Option<&str>) -> Result<Mode, ErrorKind> {
        mode_from(|name| match name {
            "HCCL_INTRA_PCIE_ENABLE" => pcie.map(str::to_string),
            "HCCL_INTRA_ROCE_ENABLE" => roce.map(str::to_string),
            _ => None,
        })
        .map_err(|f| f.kind)
    }

    #[test]
    fn the_intra_host_variables_choose_links_as_hccls_table_says() {
        assert_eq!(mode_with(None, None), Ok(Mode::Direct));
        assert_eq!(mode_with(Some("1"), None), Ok(Mode::Direct));
        assert_eq!(mode_with(Some("1"), Some("0")), Ok(Mode::Direct));
        assert_eq!(mode_with(Some("0"), Some("0")), Ok(Mode::Direct));
        assert_eq!(mode_with(Some("0"), Some("1")), Ok(Mode::Tcp));
        assert_eq!(mode_with(None, Some("1")), Ok(Mode::Tcp));
        assert_eq!(mode_with(Some("1"), Some("1")), Err(ErrorKind::Para));
        assert_eq!(mode_with(Some("0"), None), Err(ErrorKind::Para));
        assert_eq!(mode_with(None, Some("0")), Err(ErrorKind::Para));
        assert_eq!(mode_with(Some("yes"), None), Err(ErrorKind::Para));
        assert_eq!(mode_with(None, Some(" ")), Ok(Mode::Direct));
    }

    #[test]
    fn a_process_reads_its_own_probe_through_the_direct_link() {
        let me = Card::mine(Mode::Direct);
        assert_eq!(me.link(&me), Some(std::process::id()));
        assert_eq!(Card::parse(&me.bytes()), me);
    }

    #[test]
    fn tcp_mode_or_another_host_gives_no_direct_link() {
        let me = Card::mine(Mode::Direct);
        let tcp = Card::mine(Mode::Tcp);
        assert_eq!(tcp.link(&me), None);
        assert_eq!(me.link(&tcp), None);
        let elsewhere = Card {
            host: me.host ^ 2,
            ..me
        };
        assert_eq!(elsewhere.link(&me), None);
    }

    #[test]
    fn a_device_memory_file_maps_read_only_and_checks_its_inode() {
        let mut t = crate::state::MemTable::new();
        let size = crate::state::MAPPED_BLOCK;
        let p = t
            .alloc(crate::state::MemKind::Device(0), size, size, u64::MAX)
            .unwrap();
        // SAFETY: `size` writable bytes just allocated.
        unsafe { std::ptr::write_bytes(p, 7, size) };
        let (f, off) = t.shared_file(p as usize + 10).unwrap();
        assert_eq!(off, 10);
        let m = Mapping::open(std::process::id(), f.fd, f.ino).unwrap();
        assert_eq!(m.bytes(10, 3), Some(&[7u8, 7, 7][..]));
        assert_eq!(m.bytes(size - 1, 2), None);
        let e = Mapping::open(std::process::id(), f.fd, f.ino + 1).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        t.free(p as usize, true).unwrap();
        // Released for good (with the check on, `free` only quarantined it).
        drop(t);
        // Still readable after the owner released it: the mapping holds the
        // pages, with their last contents (with the check on, a large block
        // is quarantined with its pages given back, so it reads as zero).
        let last = if crate::check::enabled() { 0 } else { 7 };
        assert_eq!(m.bytes(0, 1), Some(&[last][..]));
    }

    #[test]
    fn a_mapping_is_send_and_sync() {
        fn both<T: Send + Sync>() {}
        both::<Mapping>();
    }

    #[test]
    fn reading_an_unmapped_address_is_an_error_not_a_fault() {
        let mut b = [0u8; 16];
        let e = read(std::process::id(), 8, &mut b).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EFAULT));
        let mut b = [0u8; 4];
        let v = 0x1234_5678u32;
        read(std::process::id(), std::ptr::addr_of!(v) as usize, &mut b).unwrap();
        assert_eq!(u32::from_ne_bytes(b), v);
    }
}

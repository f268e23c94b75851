//! Where an allocation's bytes live: the global allocator, a mapping of its
//! own (private, or a shared memory file another process can map), or
//! virtual memory mapped by `aclrtMapMem`.

use super::table::{ALIGN, MemKind};
use std::alloc::Layout;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Blocks of at least this size are mapped on their own instead of coming
/// from the global allocator, so that a freed one is unmapped (a late access
/// through a stale address fails instead of reading reused memory):
///
/// - device memory in a shared memory file (`memfd`), which HCCL's direct
///   links map read-only into the other rank processes of the host, so that
///   collectives read a peer's buffers without copying them through the
///   kernel ([`crate::comm::local`]); at most a quarter of the descriptor
///   limit is used so, and forked children do not inherit these mappings;
/// - pinned host memory (and device memory when no memory file can be
///   made) privately, 2 MiB aligned and advised to use transparent huge
///   pages.
pub const MAPPED_BLOCK: usize = 2 << 20;

/// Live memory files of device blocks.
static SHARED_FILES: AtomicUsize = AtomicUsize::new(0);

/// At most a quarter of the process's descriptor limit goes to memory files
/// (one per shared device block); beyond it, blocks are private (peers then
/// read them with `process_vm_readv`).
fn shared_file_cap() -> usize {
    static CAP: OnceLock<usize> = OnceLock::new();
    *CAP.get_or_init(|| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid out-pointer.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return 0;
        }
        if lim.rlim_cur == libc::RLIM_INFINITY {
            4096
        } else {
            (lim.rlim_cur / 4) as usize
        }
    })
}

/// Where an allocation's bytes live.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Block {
    /// From the global allocator.
    Heap(Layout),
    /// Physical memory mapped into a reserved range (`aclrtMapMem`): owned
    /// by the virtual-memory table (`crate::rt::vmm`), which maps and
    /// unmaps it; the table only validates accesses.
    External {
        /// Bytes mapped.
        reserved: usize,
    },
    /// Another process's device memory imported with
    /// `aclrtIpcMemImportByKey`: mapped and unmapped by the IPC engine
    /// ([`super::ipc`]); the table only validates accesses.
    Imported {
        /// Bytes mapped.
        reserved: usize,
    },
    /// The caller's own host memory registered with `aclrtHostRegister` or
    /// `aclrtHostRegisterV2` (the registration engine, [`super::register`]):
    /// the caller owns it; the table only validates accesses.
    Registered {
        /// Bytes registered.
        reserved: usize,
        /// Mapped for the device (`ACL_HOST_REG_MAPPED`, `IOMEMORY`,
        /// `READONLY`, or any `aclrtHostRegister`), not only pinned.
        mapped: bool,
    },
    /// A mapping of its own.
    Mapped {
        /// The mapping's first address and length (for `munmap`).
        map: usize,
        map_len: usize,
        /// Bytes reserved (from the block's first address).
        reserved: usize,
        /// The memory file behind a shared mapping (the block starts at its
        /// offset 0), kept open while the block lives.
        file: Option<SharedFile>,
    },
}

/// A block's memory file: what another process needs to map it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedFile {
    /// The descriptor in this process (`/proc/<pid>/fd/<fd>` opens it).
    pub fd: i32,
    /// Its inode number: tells this file from a later one with the same
    /// descriptor number.
    pub ino: u64,
    /// Its length in bytes.
    pub len: usize,
}

impl Block {
    /// A block of `reserved` bytes for memory of `kind`; returns it and its
    /// first address.
    pub(super) fn new(kind: MemKind, reserved: usize) -> Option<(Block, *mut u8)> {
        if reserved < MAPPED_BLOCK {
            let layout = Layout::from_size_align(reserved, ALIGN).ok()?;
            // SAFETY: `layout` has a non-zero size (callers pass at least 1).
            let ptr = unsafe { std::alloc::alloc(layout) };
            return (!ptr.is_null()).then_some((Block::Heap(layout), ptr));
        }
        if matches!(kind, MemKind::Device(_))
            && SHARED_FILES.load(Ordering::Relaxed) < shared_file_cap()
            && let Some(shared) = Block::shared(reserved)
        {
            SHARED_FILES.fetch_add(1, Ordering::Relaxed);
            return Some(shared);
        }
        let map_len = reserved.checked_add(2 * MAPPED_BLOCK)? & !(MAPPED_BLOCK - 1);
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return None;
        }
        let start = (map as usize).next_multiple_of(MAPPED_BLOCK);
        let huge_len = reserved.next_multiple_of(MAPPED_BLOCK);
        // SAFETY: `[start, start + huge_len)` lies inside the mapping just
        // made (`map_len` has room for the alignment and the rounding);
        // the advice changes no contents. Failing advice is harmless.
        unsafe { libc::madvise(start as *mut libc::c_void, huge_len, libc::MADV_HUGEPAGE) };
        let block = Block::Mapped {
            map: map as usize,
            map_len,
            reserved,
            file: None,
        };
        Some((block, start as *mut u8))
    }

    /// A block in a new memory file, mapped shared; `None` when the system
    /// refuses (no descriptors left, no `memfd_create`).
    fn shared(reserved: usize) -> Option<(Block, *mut u8)> {
        // SAFETY: a NUL-terminated name; the flags are valid.
        let fd = unsafe { libc::memfd_create(c"cann-sim-hbm".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `st` is plain data filled by the kernel for the live `fd`.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `fd` is ours and open; the mapping is fresh.
        let map = unsafe {
            if libc::ftruncate(fd, reserved as libc::off_t) != 0 || libc::fstat(fd, &mut st) != 0 {
                libc::MAP_FAILED
            } else {
                libc::mmap(
                    std::ptr::null_mut(),
                    reserved,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    fd,
                    0,
                )
            }
        };
        if map == libc::MAP_FAILED {
            // SAFETY: `fd` is ours and closed once.
            unsafe { libc::close(fd) };
            return None;
        }
        // A forked child does not inherit the shared mapping (it would
        // otherwise write into this process's device memory); as on
        // hardware, device memory does not survive a fork.
        // SAFETY: advice on the mapping just made; contents unchanged.
        unsafe { libc::madvise(map, reserved, libc::MADV_DONTFORK) };
        let block = Block::Mapped {
            map: map as usize,
            map_len: reserved,
            reserved,
            file: Some(SharedFile {
                fd,
                ino: st.st_ino,
                len: reserved,
            }),
        };
        Some((block, map.cast()))
    }

    /// Gives the block at `base` back.
    ///
    /// # Safety
    ///
    /// `base` must be this block's first address, from [`Block::new`], not
    /// released before and not used afterwards.
    pub(super) unsafe fn release(self, base: *mut u8) {
        match self {
            // SAFETY: per the contract, `base` came from `alloc(layout)`.
            Block::Heap(layout) => unsafe { std::alloc::dealloc(base, layout) },
            // Not this table's to release.
            Block::External { .. } | Block::Imported { .. } | Block::Registered { .. } => {}
            Block::Mapped {
                map, map_len, file, ..
            } => {
                // SAFETY: per the contract, the mapping and the file are this
                // block's own, released once.
                unsafe {
                    libc::munmap(map as *mut libc::c_void, map_len);
                    if let Some(f) = file {
                        libc::close(f.fd);
                        SHARED_FILES.fetch_sub(1, Ordering::Relaxed);
                    }
                }
            }
        }
    }
}

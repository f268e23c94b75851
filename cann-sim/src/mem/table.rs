//! The allocation table: every live allocation of the process, device or
//! pinned host, with the host memory that backs it (see [`super::block`]),
//! the HBM budgets, and the check mode's quarantine of freed blocks.
//!
//! It validates pointers ([`MemTable::check_range`], [`check_device_range`]).
//! Copies hold its read lock while they run, so memory cannot be freed under
//! a copy.

use super::block::{Block, MAPPED_BLOCK, SharedFile};
use parking_lot::RwLock;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Byte written into every new allocation smaller than [`MAPPED_BLOCK`]:
/// memory is not initialised on a real device either, and a recognisable
/// pattern shows reads of it. Larger blocks are not written at allocation:
/// they are reserved lazily (their pages cost the host nothing until
/// touched) and read as zero until written.
pub const POISON: u8 = 0xA5;

/// Alignment of every allocation's first address, device and pinned host
/// memory alike: 512 bytes. The documents promise 64, but the runtime asks
/// the driver for 2^9-byte alignment in every `halMemAlloc` of device and
/// host memory (`MEM_SET_ALIGN_SIZE(9ULL)` in hicann/runtime
/// `src/runtime/driver/npu_driver_standard_soc.cc`
/// `DevMemAllocHugePageManaged`, `src/runtime/driver/npu_driver_mem.cc`
/// `ManagedMemAllocInner`, `HostMemAlloc`; `MEM_ALIGN_BIT` in
/// `pkg_inc/driver/ascend_hal_define.h`), and real clients rely on it
/// (ggml-cann's allocator assumes 128).
pub const ALIGN: usize = 512;

/// What an allocation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    /// Device memory (`aclrtMalloc` and variants) on a logical device.
    Device(u32),
    /// Pinned host memory (`aclrtMallocHost`).
    Host,
}

/// One live allocation.
#[derive(Debug, Clone, Copy)]
pub struct Allocation {
    /// Device or host.
    pub kind: MemKind,
    /// Bytes the caller asked for: the range that may be accessed.
    pub size: usize,
    /// The backing block: the size after the runtime's rounding (what HBM
    /// accounting charges), [`ALIGN`]-aligned.
    block: Block,
    /// Unique for the process: tells a live allocation from a later one at
    /// the same address (queued work checks it to detect use after free).
    pub id: u64,
}

impl Allocation {
    /// Bytes reserved after rounding.
    pub fn reserved(&self) -> usize {
        match self.block {
            Block::Heap(layout) => layout.size(),
            Block::Mapped { reserved, .. }
            | Block::External { reserved }
            | Block::Imported { reserved }
            | Block::Registered { reserved, .. } => reserved,
        }
    }
}

/// A new allocation id, unique for the process.
fn next_alloc_id() -> u64 {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The memory the host can still commit to a block: `MemAvailable` of
/// `/proc/meminfo` less a margin (1/32 of `MemTotal`, at least 256 MiB) for
/// everything else on the machine. `None` when it cannot be read (no check).
pub(crate) fn host_available() -> Option<u64> {
    available_from_meminfo(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// What the host can back for this process's mapped blocks in all:
/// [`host_available`] plus what the process already has resident (part of
/// which is those blocks' touched pages). `None` when it cannot be read.
pub(super) fn host_capacity() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    host_available()?.checked_add(pages.checked_mul(page)?)
}

/// [`host_available`] from the text of `/proc/meminfo`.
pub(crate) fn available_from_meminfo(meminfo: &str) -> Option<u64> {
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        kib.checked_mul(1024)
    };
    let available = field("MemAvailable:")?;
    let total = field("MemTotal:")?;
    let margin = (total / 32).max(256 << 20);
    Some(available.saturating_sub(margin))
}

/// Where a validated address range lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Inside a live device allocation.
    Device {
        /// Logical device.
        device: u32,
        /// The allocation's first address.
        base: usize,
        /// The allocation's usable size.
        size: usize,
        /// The allocation's unique id.
        id: u64,
    },
    /// Inside a live pinned host allocation.
    Host {
        /// The allocation's first address.
        base: usize,
        /// The allocation's usable size.
        size: usize,
        /// The allocation's unique id.
        id: u64,
    },
    /// In no allocation: plain host memory (or memory already freed).
    Unregistered,
}

impl Region {
    /// The device, for device memory.
    pub fn device(&self) -> Option<u32> {
        match *self {
            Region::Device { device, .. } => Some(device),
            _ => None,
        }
    }

    /// The allocation's unique id, inside an allocation.
    pub fn alloc_id(&self) -> Option<u64> {
        match *self {
            Region::Device { id, .. } | Region::Host { id, .. } => Some(id),
            Region::Unregistered => None,
        }
    }
}

impl std::fmt::Display for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Region::Device {
                device, base, size, ..
            } => write!(
                f,
                "device memory on device {device} (in the aclrtMalloc allocation {base:#x} of {size} bytes)"
            ),
            Region::Host { base, size, .. } => write!(
                f,
                "pinned host memory (in the aclrtMallocHost allocation {base:#x} of {size} bytes)"
            ),
            Region::Unregistered => write!(
                f,
                "in no live AscendCL allocation (plain host memory, or freed memory)"
            ),
        }
    }
}

pub(super) fn describe_allocation(base: usize, a: &Allocation) -> String {
    describe(base, a)
}

fn describe(base: usize, a: &Allocation) -> String {
    if let Block::Registered { mapped, .. } = a.block {
        return format!(
            "the host memory {base:#x} of {} bytes registered with aclrtHostRegister ({})",
            a.size,
            if mapped {
                "mapped for the device"
            } else {
                "pinned"
            }
        );
    }
    match a.kind {
        MemKind::Device(device) => format!(
            "the device allocation {base:#x} of {} bytes on device {device}",
            a.size
        ),
        MemKind::Host => format!("the pinned host allocation {base:#x} of {} bytes", a.size),
    }
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocError {
    /// The device's HBM budget cannot hold the block.
    OutOfHbm {
        /// Logical device.
        device: u32,
        /// Bytes needed (after rounding).
        needed: usize,
        /// Bytes free on the device.
        free: u64,
    },
    /// The host could not provide the memory that backs the block.
    OutOfHostMemory {
        /// Bytes needed (after rounding).
        needed: usize,
    },
    /// The block fits the simulated HBM, but the host does not have the
    /// memory to back it: committing it would bring the kernel's
    /// out-of-memory killer (which may kill another process).
    HostCannotBack {
        /// Bytes needed (after rounding).
        needed: usize,
        /// Bytes of the process's (lazily committed) mapped blocks already.
        held: u64,
        /// What the host can back for them in all: `MemAvailable` less a
        /// margin, plus what the process has resident.
        capacity: u64,
    },
}

impl std::fmt::Display for AllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            AllocError::OutOfHbm {
                device,
                needed,
                free,
            } => write!(
                f,
                "device {device} is out of memory: {needed} bytes needed (after rounding), {free} bytes free"
            ),
            AllocError::OutOfHostMemory { needed } => write!(
                f,
                "the host cannot provide {needed} bytes to back the allocation"
            ),
            AllocError::HostCannotBack {
                needed,
                held,
                capacity,
            } => write!(
                f,
                "the host cannot back {needed} more bytes: the simulated memory of this process \
                 already holds {held} bytes, and the host can back {capacity} in all (its \
                 available memory less a margin, plus what the process has resident); the \
                 simulated HBM (CANN_SIM_HBM_MIB) is larger than the host, and the simulator \
                 refuses rather than let the kernel's out-of-memory killer act"
            ),
        }
    }
}

/// A freed allocation the check mode remembers (see [`crate::check`]): its
/// block stays allocated (filled with [`crate::check::FREED`] when smaller
/// than [`MAPPED_BLOCK`]; a larger one has its pages given back and reads
/// as zero) so that its addresses are not handed out again while it is
/// quarantined.
#[derive(Debug)]
struct Freed {
    alloc: Allocation,
    /// The freeing call.
    by: &'static str,
    /// Its number among the frees of the process.
    ordinal: u64,
    /// The freeing thread.
    thread: String,
}

impl Freed {
    /// Bytes of addresses it covers.
    fn extent(&self) -> usize {
        self.alloc.reserved().max(self.alloc.size)
    }

    fn describe(&self, base: usize) -> String {
        let what = match (self.alloc.kind, self.alloc.block) {
            (MemKind::Device(d), Block::External { .. }) => {
                format!(
                    "the virtual memory mapping {base:#x} of {} bytes on device {d}",
                    self.alloc.size
                )
            }
            (MemKind::Device(d), _) => format!(
                "the device allocation {base:#x} of {} bytes on device {d}",
                self.alloc.size
            ),
            (MemKind::Host, _) => {
                format!(
                    "the pinned host allocation {base:#x} of {} bytes",
                    self.alloc.size
                )
            }
        };
        format!(
            "{what}, freed by {} (free #{} of the process, on thread {})",
            self.by, self.ordinal, self.thread
        )
    }
}

/// The quarantine of one device (or of pinned host memory, `None`).
#[derive(Debug, Default)]
struct Pool {
    /// (first address, free ordinal, bytes held), oldest first.
    order: VecDeque<(usize, u64, u64)>,
    /// Bytes held by the blocks in `order`.
    bytes: u64,
}

/// Every live allocation of the process, keyed by first address. It owns the
/// memory: blocks are released by [`MemTable::free`] (or when the table is
/// dropped).
#[derive(Debug, Default)]
pub struct MemTable {
    allocs: BTreeMap<usize, Allocation>,
    /// Reserved HBM bytes per logical device.
    hbm_used: Vec<u64>,
    /// Freed allocations kept by the check mode, by first address.
    freed: BTreeMap<usize, Freed>,
    /// Their order and size, per device (`None`: pinned host memory).
    pools: HashMap<Option<u32>, Pool>,
    /// Frees counted by the check mode.
    frees: u64,
}

impl MemTable {
    /// An empty table.
    pub fn new() -> MemTable {
        MemTable::default()
    }

    /// HBM bytes reserved on `device`.
    pub fn hbm_used(&self, device: u32) -> u64 {
        self.hbm_used.get(device as usize).copied().unwrap_or(0)
    }

    /// Live allocations: device ones per logical device (index = device),
    /// and pinned host ones.
    pub fn counts(&self) -> (Vec<usize>, usize) {
        let mut device = Vec::new();
        let mut host = 0;
        for a in self.allocs.values() {
            match a.kind {
                MemKind::Device(d) => {
                    let i = d as usize;
                    if device.len() <= i {
                        device.resize(i + 1, 0);
                    }
                    device[i] += 1;
                }
                MemKind::Host => host += 1,
            }
        }
        (device, host)
    }

    /// Allocates `reserved` bytes (`size` of them usable), [`ALIGN`]-aligned and
    /// filled with [`POISON`]. Device memory is charged against `hbm_budget`
    /// (the device's total); host memory is not. Returns the first address.
    pub fn alloc(
        &mut self,
        kind: MemKind,
        size: usize,
        reserved: usize,
        hbm_budget: u64,
    ) -> Result<*mut u8, AllocError> {
        let reserved = reserved.max(size).max(1);
        if let MemKind::Device(device) = kind {
            let free = hbm_budget.saturating_sub(self.hbm_used(device));
            if reserved as u64 > free {
                return Err(AllocError::OutOfHbm {
                    device,
                    needed: reserved,
                    free,
                });
            }
        }
        if reserved >= MAPPED_BLOCK
            && let Some(capacity) = host_capacity()
        {
            // Mapped blocks are reserved lazily, so they cost nothing at
            // first; but all of them may be written later. The process's
            // mapped blocks in all must fit what the host can back, or a
            // program that fills its (simulated, 64 GiB) HBM would bring
            // the kernel's out-of-memory killer, which may kill another
            // process.
            let held = self.mapped_bytes();
            if held.saturating_add(reserved as u64) > capacity {
                return Err(AllocError::HostCannotBack {
                    needed: reserved,
                    held,
                    capacity,
                });
            }
        }
        let oom = AllocError::OutOfHostMemory { needed: reserved };
        let (block, ptr) = Block::new(kind, reserved).ok_or(oom)?;
        if let Block::Heap(_) = block {
            // A small block is poisoned; a mapped one is left untouched
            // (zero-filled on demand by the kernel) so that it costs the
            // host only the pages the program writes.
            // SAFETY: `ptr` is a fresh block of `reserved` writable bytes.
            unsafe { std::ptr::write_bytes(ptr, POISON, reserved) };
        }
        if let MemKind::Device(device) = kind {
            let i = device as usize;
            if self.hbm_used.len() <= i {
                self.hbm_used.resize(i + 1, 0);
            }
            self.hbm_used[i] += reserved as u64;
        }
        let id = next_alloc_id();
        self.allocs.insert(
            ptr as usize,
            Allocation {
                kind,
                size,
                block,
                id,
            },
        );
        Ok(ptr)
    }

    /// Bytes of the mapped blocks this table holds (live and quarantined):
    /// what they may cost the host once written.
    fn mapped_bytes(&self) -> u64 {
        let mapped = |a: &Allocation| match a.block {
            Block::Mapped { reserved, .. } => reserved as u64,
            Block::Heap(_)
            | Block::External { .. }
            | Block::Imported { .. }
            | Block::Registered { .. } => 0,
        };
        self.allocs
            .values()
            .map(mapped)
            .chain(self.freed.values().map(|f| mapped(&f.alloc)))
            .sum()
    }

    /// The live allocation whose block contains `addr` (its rounding padding
    /// included), with its first address.
    pub fn find(&self, addr: usize) -> Option<(usize, &Allocation)> {
        let (&base, a) = self.allocs.range(..=addr).next_back()?;
        (addr - base < a.reserved()).then_some((base, a))
    }

    /// Charges `bytes` of physical memory (`aclrtMallocPhysical`) to
    /// `device`'s HBM, within `budget`.
    ///
    /// # Errors
    ///
    /// [`AllocError::OutOfHbm`] when it does not fit.
    pub fn charge(&mut self, device: u32, bytes: u64, budget: u64) -> Result<(), AllocError> {
        let free = budget.saturating_sub(self.hbm_used(device));
        if bytes > free {
            return Err(AllocError::OutOfHbm {
                device,
                needed: bytes as usize,
                free,
            });
        }
        let i = device as usize;
        if self.hbm_used.len() <= i {
            self.hbm_used.resize(i + 1, 0);
        }
        self.hbm_used[i] += bytes;
        Ok(())
    }

    /// Gives back what [`MemTable::charge`] took.
    pub fn uncharge(&mut self, device: u32, bytes: u64) {
        if let Some(used) = self.hbm_used.get_mut(device as usize) {
            *used = used.saturating_sub(bytes);
        }
    }

    /// Registers `size` bytes mapped at `base` (`aclrtMapMem`) as device
    /// memory of `device`; returns the allocation id.
    pub fn insert_mapped(&mut self, base: usize, size: usize, device: u32) -> u64 {
        self.insert_foreign(base, size, device, Block::External { reserved: size })
    }

    /// Registers device memory whose mapping another table owns.
    fn insert_foreign(&mut self, base: usize, size: usize, device: u32, block: Block) -> u64 {
        // The addresses are live again: no longer "freed".
        self.forget_freed(base, size);
        let id = next_alloc_id();
        self.allocs.insert(
            base,
            Allocation {
                kind: MemKind::Device(device),
                size,
                block,
                id,
            },
        );
        id
    }

    /// Forgets the mapped range at `base` (`aclrtUnmapMem`); the check mode
    /// remembers it as freed until its reservation is released.
    pub fn remove_mapped(&mut self, base: usize) -> Option<Allocation> {
        match self.allocs.get(&base) {
            Some(a) if matches!(a.block, Block::External { .. }) => {
                let a = self.allocs.remove(&base)?;
                if crate::check::enabled() {
                    self.quarantine(base, a, "aclrtUnmapMem");
                }
                Some(a)
            }
            _ => None,
        }
    }

    /// Registers `size` bytes of another process's device memory, mapped at
    /// `base` by the IPC engine, as device memory of `device`; returns the
    /// allocation id.
    pub(super) fn insert_imported(&mut self, base: usize, size: usize, device: u32) -> u64 {
        self.insert_foreign(base, size, device, Block::Imported { reserved: size })
    }

    /// Forgets the imported range at `base` (the IPC engine unmaps it next).
    pub(super) fn remove_imported(&mut self, base: usize) -> Option<Allocation> {
        match self.allocs.get(&base) {
            Some(a) if matches!(a.block, Block::Imported { .. }) => self.allocs.remove(&base),
            _ => None,
        }
    }

    /// The live allocation overlapping `[addr, addr + len)` first, with its
    /// first address (`len` of 0 counts as 1).
    pub fn overlapping(&self, addr: usize, len: usize) -> Option<(usize, &Allocation)> {
        if let Some(hit) = self.find(addr) {
            return Some(hit);
        }
        let end = addr.saturating_add(len.max(1));
        let start = addr.checked_add(1)?;
        self.allocs.range(start..end).next().map(|(&b, a)| (b, a))
    }

    /// Registers the caller's host memory `[base, base + size)`
    /// (`aclrtHostRegister*`): as device memory of `device` when `mapped`,
    /// else as pinned host memory. The caller checked that it overlaps no
    /// live allocation.
    pub(super) fn insert_registered(
        &mut self,
        base: usize,
        size: usize,
        mapped: bool,
        device: u32,
    ) -> u64 {
        // The addresses are live again: no longer "freed".
        self.forget_freed(base, size);
        let id = next_alloc_id();
        let kind = if mapped {
            MemKind::Device(device)
        } else {
            MemKind::Host
        };
        let block = Block::Registered {
            reserved: size,
            mapped,
        };
        self.allocs.insert(
            base,
            Allocation {
                kind,
                size,
                block,
                id,
            },
        );
        id
    }

    /// The registration starting at `base`: whether it is mapped for the
    /// device, and the allocation.
    pub(super) fn registered_at(&self, base: usize) -> Option<(bool, Allocation)> {
        match self.allocs.get(&base) {
            Some(a) => match a.block {
                Block::Registered { mapped, .. } => Some((mapped, *a)),
                _ => None,
            },
            None => None,
        }
    }

    /// Forgets the registration at `base` (`aclrtHostUnregister`). Not
    /// quarantined by the check mode: the memory stays the caller's, and
    /// plain host memory again (pageable copies of it are valid).
    pub(super) fn remove_registered(&mut self, base: usize) -> Option<Allocation> {
        self.registered_at(base)?;
        self.allocs.remove(&base)
    }

    /// The memory file behind the live device allocation containing `addr`
    /// (any size), its first address and the allocation: what an IPC export
    /// shares. `None` for memory without a file.
    pub(super) fn ipc_file(&self, addr: usize) -> Option<(SharedFile, usize, Allocation)> {
        let (base, a) = self.find(addr)?;
        match a.block {
            Block::Mapped { file: Some(f), .. } => Some((f, base, *a)),
            _ => None,
        }
    }

    /// The memory file behind the live allocation containing `addr`, and the
    /// offset of `addr` in it (shared device blocks only).
    pub fn shared_file(&self, addr: usize) -> Option<(SharedFile, usize)> {
        let (base, a) = self.find(addr)?;
        match a.block {
            Block::Mapped { file: Some(f), .. } => Some((f, addr - base)),
            _ => None,
        }
    }

    /// Frees the allocation that starts at `addr`, which must be of the
    /// expected kind (`Device(_)` matches device memory on any device).
    ///
    /// # Errors
    ///
    /// A sentence saying why `addr` cannot be freed: not the start of an
    /// allocation (interior pointer), an allocation of the other kind, or no
    /// live allocation at all (double free, or never allocated).
    pub fn free(&mut self, addr: usize, expect_device: bool) -> Result<Allocation, String> {
        let Some((base, a)) = self.find(addr) else {
            return Err(format!(
                "{addr:#x} is not a live allocation (already freed, or never allocated by {})",
                if expect_device {
                    "aclrtMalloc"
                } else {
                    "aclrtMallocHost"
                }
            ));
        };
        if base != addr {
            return Err(format!(
                "{addr:#x} points {} bytes into {}; only the address the allocation returned can be freed",
                addr - base,
                describe(base, a)
            ));
        }
        if matches!(a.block, Block::External { .. }) {
            return Err(format!(
                "{addr:#x} is virtual memory mapped with aclrtMapMem; unmap it with aclrtUnmapMem"
            ));
        }
        if matches!(a.block, Block::Imported { .. }) {
            return Err(format!(
                "{addr:#x} is another process's memory imported with aclrtIpcMemImportByKey; \
                 close it with aclrtIpcMemClose"
            ));
        }
        if matches!(a.block, Block::Registered { .. }) {
            return Err(format!(
                "{addr:#x} is host memory registered with aclrtHostRegister; unregister it with \
                 aclrtHostUnregister (and free it as it was allocated)"
            ));
        }
        let is_device = matches!(a.kind, MemKind::Device(_));
        if is_device != expect_device {
            return Err(format!(
                "{addr:#x} is {}; free it with {}",
                describe(base, a),
                if is_device {
                    "aclrtFree"
                } else {
                    "aclrtFreeHost"
                }
            ));
        }
        let a = self
            .allocs
            .remove(&base)
            .ok_or_else(|| format!("{addr:#x} vanished from the allocation table"))?;
        if let MemKind::Device(device) = a.kind
            && let Some(used) = self.hbm_used.get_mut(device as usize)
        {
            *used = used.saturating_sub(a.reserved() as u64);
        }
        if crate::check::enabled() {
            let by = if is_device {
                "aclrtFree"
            } else {
                "aclrtFreeHost"
            };
            self.quarantine(base, a, by);
        } else {
            // SAFETY: `base` is the block's first address and is freed once:
            // it has just been removed from the table.
            unsafe { a.block.release(base as *mut u8) };
        }
        Ok(a)
    }

    /// Keeps the freed allocation `a` at `base` (check mode): its block is
    /// poisoned and held until enough was quarantined after it.
    fn quarantine(&mut self, base: usize, a: Allocation, by: &'static str) {
        self.frees += 1;
        let held = match a.block {
            Block::External { .. } | Block::Imported { .. } | Block::Registered { .. } => 0,
            Block::Heap(_) => {
                // SAFETY: the block is still allocated (it is not released
                // while quarantined) and nothing may use it any more.
                unsafe {
                    std::ptr::write_bytes(base as *mut u8, crate::check::FREED, a.reserved())
                };
                a.reserved() as u64
            }
            Block::Mapped { reserved, file, .. } => {
                // Not filled: writing a pattern into a large block would
                // commit every page of it (gigabytes, for the OOM killer).
                // Its pages are given back instead; it reads as zero.
                // SAFETY: `[base, base + reserved)` is the block's own
                // mapping, held (not released) while quarantined, and
                // nothing may use its contents any more.
                unsafe {
                    match file {
                        Some(f) => {
                            libc::fallocate(
                                f.fd,
                                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                                0,
                                reserved as libc::off_t,
                            );
                        }
                        None => {
                            libc::madvise(base as *mut libc::c_void, reserved, libc::MADV_DONTNEED);
                        }
                    }
                }
                reserved as u64
            }
        };
        let thread = std::thread::current();
        let f = Freed {
            alloc: a,
            by,
            ordinal: self.frees,
            thread: thread
                .name()
                .map_or_else(|| format!("{:?}", thread.id()), |n| format!("'{n}'")),
        };
        if let Some(old) = self.freed.insert(base, f) {
            // Only an unmapped range can be freed again at the same address
            // (remapped in between); it holds no memory.
            // SAFETY: a quarantined block, released once (just replaced).
            unsafe { old.alloc.block.release(base as *mut u8) };
        }
        let key = match a.kind {
            MemKind::Device(d) => Some(d),
            MemKind::Host => None,
        };
        let pool = self.pools.entry(key).or_default();
        pool.order.push_back((base, self.frees, held));
        pool.bytes += held;
        let mut evicted = Vec::new();
        while let Some(&(b, ordinal, bytes)) = pool.order.front() {
            let over = pool.order.len() > crate::check::QUARANTINE_COUNT
                || (pool.order.len() > 1 && pool.bytes - bytes >= crate::check::QUARANTINE_BYTES);
            if !over {
                break;
            }
            pool.order.pop_front();
            pool.bytes -= bytes;
            evicted.push((b, ordinal));
        }
        for (b, ordinal) in evicted {
            if self.freed.get(&b).is_some_and(|f| f.ordinal == ordinal)
                && let Some(f) = self.freed.remove(&b)
            {
                // SAFETY: a quarantined block, no longer in the table,
                // released once (just removed from the quarantine).
                unsafe { f.alloc.block.release(b as *mut u8) };
            }
        }
    }

    /// The freed (quarantined) allocation overlapping `[addr, addr + len)`,
    /// described with its freeing call.
    pub fn freed_overlapping(&self, addr: usize, len: usize) -> Option<String> {
        let end = addr.saturating_add(len.max(1));
        if let Some((&base, f)) = self.freed.range(..=addr).next_back()
            && addr - base < f.extent()
        {
            return Some(f.describe(base));
        }
        let (&base, f) = self.freed.range(addr..end).next()?;
        Some(f.describe(base))
    }

    /// The freed (quarantined) allocation that started at `addr`.
    pub fn freed_at(&self, addr: usize) -> Option<String> {
        self.freed.get(&addr).map(|f| f.describe(addr))
    }

    /// Forgets the freed records in `[start, start + len)` (a released
    /// virtual-memory reservation, whose addresses may be reused).
    pub fn forget_freed(&mut self, start: usize, len: usize) {
        let gone: Vec<usize> = self
            .freed
            .range(start..start.saturating_add(len))
            .map(|(&b, _)| b)
            .collect();
        for b in gone {
            if let Some(f) = self.freed.remove(&b) {
                // SAFETY: a quarantined block, released once (just removed).
                unsafe { f.alloc.block.release(b as *mut u8) };
            }
        }
    }

    /// The live allocations `[addr, addr + len)` touches: their ids and
    /// kinds, the one it starts in first.
    pub fn allocs_touched(&self, addr: usize, len: usize) -> Vec<(u64, MemKind)> {
        let end = addr.saturating_add(len.max(1));
        let mut out = Vec::new();
        if let Some((_, a)) = self.find(addr) {
            out.push((a.id, a.kind));
        }
        if let Some(start) = addr.checked_add(1) {
            out.extend(self.allocs.range(start..end).map(|(_, a)| (a.id, a.kind)));
        }
        out
    }

    /// Classifies `[addr, addr + len)`: inside one live device allocation,
    /// inside one pinned host allocation, or in none.
    ///
    /// # Errors
    ///
    /// A sentence naming the allocation when the range starts inside an
    /// allocation but runs past its usable size, or starts outside every
    /// allocation but overlaps one, or wraps around the address space.
    pub fn check_range(&self, addr: usize, len: usize) -> Result<Region, String> {
        let Some(end) = addr.checked_add(len) else {
            return Err(format!(
                "the range {addr:#x} + {len} bytes wraps around the address space"
            ));
        };
        if let Some((base, a)) = self.find(addr) {
            // Mapped virtual memory continues into the next mapping when it
            // starts where this one ends (an expandable segment's pieces).
            let size = self.mapped_run(base, a);
            if end - base > size {
                return Err(format!(
                    "the range [{addr:#x}, {end:#x}) ({len} bytes at offset {}) ends {} bytes past the end of {}",
                    addr - base,
                    end - base - size,
                    describe(base, a)
                ));
            }
            return Ok(match a.kind {
                MemKind::Device(device) => Region::Device {
                    device,
                    base,
                    size,
                    id: a.id,
                },
                MemKind::Host => Region::Host {
                    base,
                    size: a.size,
                    id: a.id,
                },
            });
        }
        if let Some((&base, a)) = self.allocs.range(addr..end).next() {
            return Err(format!(
                "the range [{addr:#x}, {end:#x}) starts outside every allocation but overlaps {}",
                describe(base, a)
            ));
        }
        Ok(Region::Unregistered)
    }

    /// The usable size from `base` of allocation `a`: its own, or for mapped
    /// virtual memory, through every mapping of the same device that starts
    /// where the previous one ends.
    fn mapped_run(&self, base: usize, a: &Allocation) -> usize {
        let Block::External { .. } = a.block else {
            return a.size;
        };
        let mut size = a.size;
        while let Some(next) = self.allocs.get(&(base + size)) {
            match next.block {
                Block::External { .. } if next.kind == a.kind => size += next.size,
                _ => break,
            }
        }
        size
    }

    /// Checks that `[addr, addr + len)` lies inside one live device
    /// allocation; returns its device and first address.
    ///
    /// # Errors
    ///
    /// A sentence saying where the range lies instead.
    pub fn check_device_range(&self, addr: usize, len: usize) -> Result<(u32, usize), String> {
        match self.check_range(addr, len)? {
            Region::Device { device, base, .. } => Ok((device, base)),
            other => Err(format!("{addr:#x} is not device memory: it is {other}")),
        }
    }
}

impl Drop for MemTable {
    fn drop(&mut self) {
        for (base, a) in std::mem::take(&mut self.allocs) {
            // SAFETY: every entry owns its block, released once here.
            unsafe { a.block.release(base as *mut u8) };
        }
        for (base, f) in std::mem::take(&mut self.freed) {
            // SAFETY: every quarantined entry owns its block, released once.
            unsafe { f.alloc.block.release(base as *mut u8) };
        }
    }
}

static MEMORY: LazyLock<RwLock<MemTable>> = LazyLock::new(|| RwLock::new(MemTable::new()));

/// The process-wide allocation table. Hold its read lock while touching the
/// memory it validated (a copy, a fill), its write lock to allocate or free.
pub fn memory() -> &'static RwLock<MemTable> {
    &MEMORY
}

/// [`MemTable::check_device_range`] on the process-wide table, for callers
/// that only validate (one that then touches the memory holds
/// [`memory`]'s read lock instead, so the block cannot be freed meanwhile).
///
/// # Errors
///
/// As [`MemTable::check_device_range`].
#[allow(
    dead_code,
    reason = "entry point for the stream and kernel code that comes next"
)]
pub fn check_device_range(addr: usize, len: usize) -> Result<(u32, usize), String> {
    memory().read().check_device_range(addr, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_availability_is_mem_available_less_a_margin() {
        let gib = 1u64 << 30;
        let m = "MemTotal:       25165824 kB\nMemFree:  1000 kB\nMemAvailable:   16777216 kB\n";
        // 16 GiB available, margin 24 GiB / 32 = 768 MiB.
        assert_eq!(available_from_meminfo(m), Some(16 * gib - 768 * (1 << 20)));
        // A small machine: the margin is at least 256 MiB.
        let m = "MemTotal: 1048576 kB\nMemAvailable: 131072 kB\n";
        assert_eq!(available_from_meminfo(m), Some(0));
        assert_eq!(available_from_meminfo("MemTotal: 1 kB\n"), None);
        assert_eq!(
            available_from_meminfo("MemAvailable: x kB\nMemTotal: 1 kB\n"),
            None
        );
    }

    const KIB: u64 = 1024;

    #[test]
    fn device_allocations_are_charged_against_the_hbm_budget() {
        let mut t = MemTable::new();
        let a = t.alloc(MemKind::Device(0), 500, 576, KIB).unwrap();
        assert_eq!(t.hbm_used(0), 576);
        assert_eq!(
            t.alloc(MemKind::Device(0), 500, 576, KIB),
            Err(AllocError::OutOfHbm {
                device: 0,
                needed: 576,
                free: 448
            })
        );
        // Another device has its own budget; host memory has none.
        t.alloc(MemKind::Device(1), 500, 576, KIB).unwrap();
        t.alloc(MemKind::Host, 4096, 4096, KIB).unwrap();
        t.free(a as usize, true).unwrap();
        assert_eq!(t.hbm_used(0), 0);
        t.alloc(MemKind::Device(0), 500, 576, KIB).unwrap();
    }

    #[test]
    fn new_blocks_are_aligned_and_poisoned() {
        let mut t = MemTable::new();
        let p = t.alloc(MemKind::Device(0), 100, 160, KIB).unwrap();
        assert_eq!(p as usize % ALIGN, 0);
        // SAFETY: the block has 160 readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p, 160) };
        assert!(bytes.iter().all(|&b| b == POISON));
    }

    /// Resident pages of `[p, p + len)` (`mincore`).
    fn resident_pages(p: *mut u8, len: usize) -> usize {
        let page = 4096;
        let mut vec = vec![0u8; len.div_ceil(page)];
        // SAFETY: `[p, p + len)` is a live mapping (page aligned: mapped
        // blocks start on 2 MiB); `vec` has one byte per page.
        let rc = unsafe { libc::mincore(p.cast(), len, vec.as_mut_ptr()) };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
        vec.iter().filter(|&&b| b & 1 != 0).count()
    }

    /// Issue 23: every allocation was filled at once, so 21 allocations of
    /// 1 GiB committed 21.5 GB of host memory. A large block costs nothing
    /// until written (device memory in a memory file and private pinned
    /// host memory alike), and reads as zero.
    #[test]
    fn large_blocks_are_reserved_lazily() {
        let mut t = MemTable::new();
        for kind in [MemKind::Device(0), MemKind::Host] {
            let len = 64 << 20;
            let p = t.alloc(kind, len, len, u64::MAX).unwrap();
            assert_eq!(resident_pages(p, len), 0, "{kind:?}");
            // SAFETY: the block has `len` writable bytes.
            unsafe { p.add(8192).write(7) };
            // One page, or one transparent huge page (pinned host blocks
            // are advised to use them) of 2 MiB.
            let touched = resident_pages(p, len);
            assert!((1..=512).contains(&touched), "{kind:?}: {touched}");
            // SAFETY: as above.
            assert_eq!(unsafe { p.add(len - 1).read() }, 0);
            t.free(p as usize, matches!(kind, MemKind::Device(_)))
                .unwrap();
        }
    }

    #[test]
    fn free_rejects_interior_wrong_kind_and_double_free() {
        let mut t = MemTable::new();
        let d = t.alloc(MemKind::Device(2), 64, 128, KIB).unwrap() as usize;
        let h = t.alloc(MemKind::Host, 64, 64, 0).unwrap() as usize;
        assert!(t.free(d + 8, true).unwrap_err().contains("8 bytes into"));
        assert!(t.free(h, true).unwrap_err().contains("aclrtFreeHost"));
        assert!(
            t.free(d, false)
                .unwrap_err()
                .ends_with("free it with aclrtFree")
        );
        t.free(d, true).unwrap();
        assert!(t.free(d, true).unwrap_err().contains("already freed"));
        t.free(h, false).unwrap();
    }

    #[test]
    fn check_range_classifies_and_bounds_checks() {
        let mut t = MemTable::new();
        let d = t.alloc(MemKind::Device(3), 100, 160, KIB).unwrap() as usize;
        let h = t.alloc(MemKind::Host, 64, 64, 0).unwrap() as usize;
        let r = t.check_range(d + 10, 90).unwrap();
        assert!(matches!(
            r,
            Region::Device {
                device: 3,
                base,
                size: 100,
                ..
            } if base == d
        ));
        assert_eq!(t.check_device_range(d, 100), Ok((3, d)));
        let rh = t.check_range(h, 64).unwrap();
        assert!(matches!(rh, Region::Host { base, size: 64, .. } if base == h));
        assert_ne!(r.alloc_id(), rh.alloc_id());
        // Past the requested size (the rounding padding is not usable).
        assert!(
            t.check_range(d + 10, 91)
                .unwrap_err()
                .contains("1 bytes past the end")
        );
        // A start in the padding is still inside the allocation's block.
        assert!(
            t.check_range(d + 120, 1)
                .unwrap_err()
                .contains("past the end")
        );
        // Outside every allocation, but running into one.
        assert!(t.check_range(d - 16, 32).unwrap_err().contains("overlaps"));
        assert!(t.check_range(usize::MAX, 2).unwrap_err().contains("wraps"));
        assert!(
            t.check_device_range(h, 8)
                .unwrap_err()
                .contains("pinned host memory")
        );
        t.free(d, true).unwrap();
        assert_eq!(t.check_range(d, 100), Ok(Region::Unregistered));
    }

    #[test]
    fn quarantined_blocks_are_poisoned_found_and_released_after_64_mib_more() {
        let mut t = MemTable::new();
        let quarantine = |t: &mut MemTable, size: usize| {
            let p = t.alloc(MemKind::Device(0), size, size, u64::MAX).unwrap() as usize;
            let a = t.allocs.remove(&p).unwrap();
            t.quarantine(p, a, "aclrtFree");
            p
        };
        let small = quarantine(&mut t, 100);
        // SAFETY: the block is held by the quarantine, 100 bytes readable.
        let bytes = unsafe { std::slice::from_raw_parts(small as *const u8, 100) };
        assert!(bytes.iter().all(|&b| b == crate::check::FREED));
        let found = t.freed_overlapping(small + 50, 10).unwrap();
        assert!(found.contains("freed by aclrtFree (free #1"), "{found}");
        assert!(t.freed_at(small).is_some());
        assert_eq!(t.check_range(small, 10), Ok(Region::Unregistered));
        // 40 MiB after it: still held; 80 MiB after it: released.
        let big = quarantine(&mut t, 40 << 20);
        // A large quarantined block is not filled (that would commit it):
        // its pages are given back.
        assert_eq!(resident_pages(big as *mut u8, 40 << 20), 0);
        assert!(t.freed_at(small).is_some());
        quarantine(&mut t, 40 << 20);
        assert!(t.freed_at(small).is_none());
        // The newest always stays, whatever its size.
        assert!(t.freed_at(big).is_some());
        // Forgetting a range (a released reservation) drops its records.
        t.forget_freed(big, 1);
        assert!(t.freed_at(big).is_none());
    }
}

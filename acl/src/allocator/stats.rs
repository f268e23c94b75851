//! Allocator statistics (torch_npu `DeviceStats`, trimmed to what applies).

use super::config::PoolKind;

/// One quantity over time (torch `Stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stat {
    /// The value now.
    pub current: u64,
    /// The highest value since creation or [`reset_peak_stats`].
    ///
    /// [`reset_peak_stats`]: super::CachingAllocator::reset_peak_stats
    pub peak: u64,
    /// Sum of all increases since creation or
    /// [`reset_accumulated_stats`](super::CachingAllocator::reset_accumulated_stats).
    pub allocated: u64,
    /// Sum of all decreases over the same span.
    pub freed: u64,
}

impl Stat {
    #[inline]
    pub(crate) fn add(&mut self, amount: u64) {
        self.current = self.current.saturating_add(amount);
        self.allocated = self.allocated.saturating_add(amount);
        if self.current > self.peak {
            self.peak = self.current;
        }
    }

    #[inline]
    pub(crate) fn sub(&mut self, amount: u64) {
        self.current = self.current.saturating_sub(amount);
        self.freed = self.freed.saturating_add(amount);
    }

    fn reset_peak(&mut self) {
        self.peak = self.current;
    }

    fn reset_accumulated(&mut self) {
        self.allocated = 0;
        self.freed = 0;
    }
}

/// Statistics of one pool, or of both together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes in blocks handed out and not yet freed (block sizes, i.e. after
    /// rounding).
    pub allocated_bytes: Stat,
    /// Bytes the callers asked for, of the blocks that are active.
    pub requested_bytes: Stat,
    /// Bytes in active blocks: handed out, or freed but waiting for events
    /// recorded on other streams.
    pub active_bytes: Stat,
    /// Bytes held from the backend (all segments).
    pub reserved_bytes: Stat,
    /// Blocks handed out and not yet freed.
    pub allocations: Stat,
    /// Active blocks (see `active_bytes`).
    pub active_blocks: Stat,
    /// Segments held from the backend.
    pub segments: Stat,
    /// Calls of `allocate` that succeeded or failed in this pool.
    pub alloc_requests: u64,
    /// Calls of `free` accepted.
    pub frees: u64,
    /// Requests served from a cached block, without the backend.
    pub cache_hits: u64,
    /// Requests that needed a new segment (including those that failed).
    pub cache_misses: u64,
    /// Successful backend `malloc`s (new segments).
    pub backend_mallocs: u64,
    /// Segments returned with backend `free`.
    pub backend_frees: u64,
}

impl PoolStats {
    fn reset_peak(&mut self) {
        for s in self.stats_mut() {
            s.reset_peak();
        }
    }

    fn reset_accumulated(&mut self) {
        for s in self.stats_mut() {
            s.reset_accumulated();
        }
        self.alloc_requests = 0;
        self.frees = 0;
        self.cache_hits = 0;
        self.cache_misses = 0;
        self.backend_mallocs = 0;
        self.backend_frees = 0;
    }

    fn stats_mut(&mut self) -> [&mut Stat; 7] {
        [
            &mut self.allocated_bytes,
            &mut self.requested_bytes,
            &mut self.active_bytes,
            &mut self.reserved_bytes,
            &mut self.allocations,
            &mut self.active_blocks,
            &mut self.segments,
        ]
    }

    /// Bytes of cached blocks that no one uses: reserved minus active.
    pub fn cached_bytes(&self) -> u64 {
        self.reserved_bytes
            .current
            .saturating_sub(self.active_bytes.current)
    }

    /// Cache hits over allocation requests, 0 to 1 (1 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let total = self.cache_hits + self.cache_misses;
        if total == 0 {
            1.0
        } else {
            // Counts stay far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            let rate = self.cache_hits as f64 / total as f64;
            rate
        }
    }
}

/// A snapshot of a [`CachingAllocator`](super::CachingAllocator)'s
/// statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocatorStats {
    /// Both pools together.
    pub aggregate: PoolStats,
    /// The small pool (blocks of at most 1 MiB).
    pub small_pool: PoolStats,
    /// The large pool.
    pub large_pool: PoolStats,
    /// Backend allocations retried after releasing the cache (torch
    /// `num_alloc_retries`).
    pub alloc_retries: u64,
    /// Requests that failed with out-of-memory after the retry (torch
    /// `num_ooms`).
    pub ooms: u64,
    /// Events recorded for cross-stream frees and not yet seen complete.
    pub pending_events: u64,
    /// Blocks retired for good because an event could not be recorded for
    /// them; their segments are never returned.
    pub retired_blocks: u64,
}

impl AllocatorStats {
    /// The statistics of one pool.
    pub fn pool(&self, kind: PoolKind) -> &PoolStats {
        match kind {
            PoolKind::Small => &self.small_pool,
            PoolKind::Large => &self.large_pool,
        }
    }

    /// Applies `f` to the aggregate and to `kind`'s statistics.
    #[inline]
    pub(crate) fn update(&mut self, kind: PoolKind, f: impl Fn(&mut PoolStats)) {
        f(&mut self.aggregate);
        match kind {
            PoolKind::Small => f(&mut self.small_pool),
            PoolKind::Large => f(&mut self.large_pool),
        }
    }

    pub(crate) fn reset_peak(&mut self) {
        self.aggregate.reset_peak();
        self.small_pool.reset_peak();
        self.large_pool.reset_peak();
    }

    pub(crate) fn reset_accumulated(&mut self) {
        self.aggregate.reset_accumulated();
        self.small_pool.reset_accumulated();
        self.large_pool.reset_accumulated();
        self.alloc_retries = 0;
        self.ooms = 0;
    }
}

/// What a block in a [`SegmentInfo`] is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Handed out.
    Allocated,
    /// Freed, waiting for events on other streams.
    PendingEvents,
    /// Cached, reusable.
    Free,
}

/// One block of a [`SegmentInfo`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockInfo {
    /// Device address.
    pub address: usize,
    /// Size in bytes.
    pub size: usize,
    /// Bytes asked for (0 for a free block).
    pub requested: usize,
    /// What it is doing.
    pub state: BlockState,
}

/// One segment held from the backend, from
/// [`CachingAllocator::snapshot`](super::CachingAllocator::snapshot)
/// (torch `SegmentInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo<S> {
    /// Device address of the segment.
    pub address: usize,
    /// Size in bytes.
    pub size: usize,
    /// The stream it serves.
    pub stream: S,
    /// Its pool.
    pub pool: PoolKind,
    /// Its blocks in address order; they tile the segment.
    pub blocks: Vec<BlockInfo>,
}

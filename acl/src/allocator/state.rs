//! The allocator's books, behind its mutex.
//!
//! Blocks live in a slab (`nodes`), addressed by `u32` index; the blocks of
//! one segment form a doubly linked list in address order (`prev`/`next`),
//! so splitting and merging are index updates.
//!
//! Free blocks are bucketed per pool by `(stream, size)` in a `BTreeMap`;
//! each bucket is an intrusive list (`free_prev`/`free_next`) of the free
//! blocks of that size. The best fit for a stream is the first non-empty
//! bucket at or after `(stream, size)`, as torch_npu's `lower_bound` on
//! `BlockComparatorSize` (stream, size, address), except that among blocks
//! of the same size the most recently freed one is taken, not the lowest
//! address. A bucket that empties stays in the map, so that a size freed
//! and taken again over and over (a training loop) costs two lookups and no
//! tree restructuring; searches drop the empty buckets they pass over, and
//! a sweep removes them all when there are more of them than slab slots.
//!
//! Cross-stream frees wait in one FIFO of events per stream (torch_npu
//! `npu_events`).

use super::config::{
    ALIGNMENT, AllocatorConfig, MIN_BLOCK_SIZE, OVERSIZE_SLACK, PoolKind, SMALL_SIZE, format_size,
};
use super::stats::{AllocatorStats, BlockInfo, BlockState, SegmentInfo};
use super::{Backend, Block, DevicePtr};
use crate::error::{Error, ErrorCode, Result};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};

/// "No block" in `prev`/`next`.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeState {
    /// An unused slab slot.
    Vacant,
    /// In its pool's free map.
    Free,
    /// Just taken from a pool or the backend, about to be handed out.
    Taken,
    /// Handed out to a caller.
    Allocated,
    /// Freed by the caller, waiting for events on other streams.
    Pending,
}

struct Node<S> {
    ptr: DevicePtr,
    size: usize,
    /// Bytes the caller asked for (while allocated or pending).
    requested: usize,
    /// Serial number of the current hand-out, checked against the handle.
    serial: u64,
    /// The stream the segment was allocated for; all its blocks share it.
    stream: S,
    prev: u32,
    next: u32,
    /// Outstanding events (while pending).
    event_count: u32,
    state: NodeState,
    pool: PoolKind,
    /// Neighbours in the free list of its bucket (while free).
    free_prev: u32,
    free_next: u32,
    /// Other streams the block was used on (`record_stream`).
    stream_uses: Vec<S>,
}

impl<S> Node<S> {
    fn is_split(&self) -> bool {
        self.prev != NIL || self.next != NIL
    }
}

/// A pool's bucket key: `(stream, size)`.
type FreeKey<S> = (S, usize);

/// The free blocks of one size on one stream: an intrusive list.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    head: u32,
    len: u32,
}

/// One pool's free blocks.
struct Pool<S> {
    buckets: BTreeMap<FreeKey<S>, Bucket>,
    /// Buckets in `buckets` with `len == 0`.
    empty: usize,
}

impl<S: Ord + Copy> Pool<S> {
    fn new() -> Self {
        Pool {
            buckets: BTreeMap::new(),
            empty: 0,
        }
    }

    /// Counts a bucket that just emptied; removes every empty bucket once
    /// there are more of them than slab slots (`nodes`, the most blocks
    /// there ever were), so that they take no more memory than the slab and
    /// a sweep, which removes at least that many, costs O(1) amortised.
    fn note_emptied(&mut self, nodes: usize) {
        self.empty += 1;
        if self.empty > 64 && self.empty > nodes {
            self.buckets.retain(|_, b| b.len > 0);
            self.empty = 0;
        }
    }
}

/// Empty buckets a search drops at most, after it has found its block.
const DROP_PER_SEARCH: usize = 8;

/// Unlinks the head of a non-empty bucket: its index, and whether the
/// bucket is now empty.
#[inline]
fn pop<S>(bucket: &mut Bucket, nodes: &mut [Node<S>]) -> (u32, bool) {
    let head = bucket.head;
    let next = nodes.get(head as usize).map_or(NIL, |n| n.free_next);
    bucket.head = next;
    bucket.len -= 1;
    if let Some(n) = nodes.get_mut(next as usize) {
        n.free_prev = NIL;
    }
    (head, bucket.len == 0)
}
type EventQueues<B> = BTreeMap<<B as Backend>::Stream, VecDeque<(<B as Backend>::Event, u32)>>;

fn corrupt(what: &str) -> Error {
    Error::invalid(
        "CachingAllocator",
        format!("internal invariant broken: {what}"),
    )
}

/// Whether `e` is the backend's out-of-memory error.
pub(crate) fn is_oom(e: &Error) -> bool {
    matches!(
        e.code(),
        Some(ErrorCode::RtMemoryAllocation | ErrorCode::RtDeviceOom)
    )
}

pub(crate) struct State<B: Backend> {
    nodes: Vec<Node<B::Stream>>,
    vacant: Vec<u32>,
    /// Free blocks of the small and the large pool.
    pools: [Pool<B::Stream>; 2],
    /// Outstanding events per stream, oldest first, with their block.
    events: EventQueues<B>,
    pending_events: usize,
    next_serial: u64,
    pub(crate) stats: AllocatorStats,
}

impl<B: Backend> State<B> {
    pub(crate) fn new() -> Self {
        State {
            nodes: Vec::new(),
            vacant: Vec::new(),
            pools: [Pool::new(), Pool::new()],
            events: BTreeMap::new(),
            pending_events: 0,
            next_serial: 1,
            stats: AllocatorStats::default(),
        }
    }

    // ---- slab ------------------------------------------------------------

    #[inline]
    fn node(&self, i: u32) -> Result<&Node<B::Stream>> {
        self.nodes
            .get(i as usize)
            .ok_or_else(|| corrupt("block index out of range"))
    }

    #[inline]
    fn node_mut(&mut self, i: u32) -> Result<&mut Node<B::Stream>> {
        self.nodes
            .get_mut(i as usize)
            .ok_or_else(|| corrupt("block index out of range"))
    }

    /// Whether one more node fits in the slab.
    fn has_room(&self) -> bool {
        !self.vacant.is_empty() || self.nodes.len() < NIL as usize
    }

    fn insert_node(&mut self, node: Node<B::Stream>) -> Result<u32> {
        if let Some(i) = self.vacant.pop() {
            *self.node_mut(i)? = node;
            Ok(i)
        } else {
            let i = u32::try_from(self.nodes.len())
                .ok()
                .filter(|&i| i != NIL)
                .ok_or_else(|| Error::invalid("CachingAllocator", "more than 2^32 - 1 blocks"))?;
            self.nodes.push(node);
            Ok(i)
        }
    }

    fn vacate(&mut self, i: u32) -> Result<()> {
        let n = self.node_mut(i)?;
        n.state = NodeState::Vacant;
        n.prev = NIL;
        n.next = NIL;
        self.vacant.push(i);
        Ok(())
    }

    /// The slab index of a live handle, or `InvalidArgument`.
    fn check_handle(
        &self,
        block: &Block<B::Stream>,
        owner: u64,
        function: &'static str,
    ) -> Result<u32> {
        let live = block.allocator == owner
            && self.nodes.get(block.index as usize).is_some_and(|n| {
                n.state == NodeState::Allocated && n.serial == block.serial && n.ptr == block.ptr
            });
        if live {
            Ok(block.index)
        } else {
            Err(Error::invalid(
                function,
                format!(
                    "block at {:p} ({} bytes) is not live in this allocator: \
                     freed already, or allocated by another allocator",
                    block.ptr.0, block.size
                ),
            ))
        }
    }

    // ---- allocate --------------------------------------------------------

    /// torch_npu `malloc`: `bytes` as asked, `size` rounded.
    pub(crate) fn allocate(
        &mut self,
        backend: &B,
        cfg: &AllocatorConfig,
        owner: u64,
        bytes: usize,
        size: usize,
        stream: B::Stream,
    ) -> Result<Block<B::Stream>> {
        if self.pending_events != 0 {
            self.process_events(backend)?;
        }
        let kind = PoolKind::for_size(size);
        self.stats.update(kind, |p| p.alloc_requests += 1);
        let idx = match self.get_free_block(cfg, stream, size, kind) {
            Some(idx) => {
                self.stats.update(kind, |p| p.cache_hits += 1);
                idx
            }
            None => {
                self.stats.update(kind, |p| p.cache_misses += 1);
                self.alloc_slow(backend, cfg, bytes, size, kind, stream)?
            }
        };
        self.hand_out(cfg, owner, idx, bytes, size, kind, stream)
    }

    /// Best fit on `stream` in `kind`'s pool, removed from it
    /// (torch_npu `get_free_block`).
    #[inline]
    fn get_free_block(
        &mut self,
        cfg: &AllocatorConfig,
        stream: B::Stream,
        size: usize,
        kind: PoolKind,
    ) -> Option<u32> {
        let limit = cfg.split_limit();
        let State { pools, nodes, .. } = self;
        let pool = &mut pools[kind.index()];
        // An exact fit is the best fit, and one lookup (a training loop
        // frees and re-allocates the same sizes).
        let found = match pool.buckets.get_mut(&(stream, size)) {
            Some(bucket) if bucket.len > 0 => Some(pop(bucket, nodes)),
            _ => None,
        };
        let found = match found {
            Some(found) => Some(found),
            None => Self::search(pool, nodes, stream, size, limit),
        };
        let (head, emptied) = found?;
        if emptied {
            pool.note_emptied(nodes.len());
        }
        let n = nodes.get_mut(head as usize)?;
        n.state = NodeState::Taken;
        n.free_next = NIL;
        Some(head)
    }

    /// The first non-empty bucket at or after `(stream, size)`, popped;
    /// drops the empty buckets passed on the way.
    fn search(
        pool: &mut Pool<B::Stream>,
        nodes: &mut [Node<B::Stream>],
        stream: B::Stream,
        size: usize,
        limit: usize,
    ) -> Option<(u32, bool)> {
        let mut passed = [(stream, 0usize); DROP_PER_SEARCH];
        let mut n_passed = 0;
        let mut found = None;
        for (key, bucket) in pool.buckets.range_mut((stream, size)..) {
            if key.0 != stream {
                break;
            }
            if bucket.len == 0 {
                if n_passed < DROP_PER_SEARCH {
                    passed[n_passed] = *key;
                    n_passed += 1;
                }
                continue;
            }
            // Do not give an oversize block to a request below the limit,
            // nor one much larger than an oversize request.
            if (size < limit && key.1 >= limit)
                || (size >= limit && key.1 >= size.saturating_add(OVERSIZE_SLACK))
            {
                break;
            }
            found = Some(pop(bucket, nodes));
            break;
        }
        for key in &passed[..n_passed] {
            pool.buckets.remove(key);
        }
        pool.empty = pool.empty.saturating_sub(n_passed);
        found
    }

    /// Adds the free block `idx` to its pool.
    fn pool_insert(&mut self, idx: u32) -> Result<()> {
        let State { pools, nodes, .. } = self;
        let n = nodes
            .get(idx as usize)
            .filter(|n| n.state != NodeState::Free)
            .ok_or_else(|| corrupt("freeing a block twice"))?;
        let pool = &mut pools[n.pool.index()];
        let bucket = match pool.buckets.entry((n.stream, n.size)) {
            Entry::Occupied(o) => {
                let b = o.into_mut();
                if b.len == 0 {
                    pool.empty = pool.empty.saturating_sub(1);
                }
                b
            }
            Entry::Vacant(v) => v.insert(Bucket { head: NIL, len: 0 }),
        };
        let old_head = bucket.head;
        bucket.head = idx;
        bucket.len += 1;
        if let Some(h) = nodes.get_mut(old_head as usize) {
            h.free_prev = idx;
        }
        let n = nodes
            .get_mut(idx as usize)
            .ok_or_else(|| corrupt("block index out of range"))?;
        n.free_prev = NIL;
        n.free_next = old_head;
        n.state = NodeState::Free;
        Ok(())
    }

    /// Takes the free block `idx` out of its pool.
    fn pool_remove(&mut self, idx: u32) -> Result<()> {
        let State { pools, nodes, .. } = self;
        let n = nodes
            .get(idx as usize)
            .filter(|n| n.state == NodeState::Free)
            .ok_or_else(|| corrupt("removing a block that is not free"))?;
        let (prev, next) = (n.free_prev, n.free_next);
        let pool = &mut pools[n.pool.index()];
        let bucket = pool
            .buckets
            .get_mut(&(n.stream, n.size))
            .filter(|b| b.len > 0)
            .ok_or_else(|| corrupt("a free block is missing from its pool"))?;
        if prev == NIL {
            if bucket.head != idx {
                return Err(corrupt("a free list is broken"));
            }
            bucket.head = next;
        } else if let Some(p) = nodes.get_mut(prev as usize) {
            p.free_next = next;
        }
        if let Some(nx) = nodes.get_mut(next as usize) {
            nx.free_prev = prev;
        }
        bucket.len -= 1;
        if bucket.len == 0 {
            pool.note_emptied(nodes.len());
        }
        let n = nodes
            .get_mut(idx as usize)
            .ok_or_else(|| corrupt("block index out of range"))?;
        n.state = NodeState::Taken;
        n.free_prev = NIL;
        n.free_next = NIL;
        Ok(())
    }

    /// Appends `(size, index)` of the blocks of a bucket whose block size is
    /// `size` and that are unsplit (whole segments).
    fn unsplit_blocks_of(&self, size: usize, bucket: &Bucket, out: &mut Vec<(usize, u32)>) {
        let mut cur = bucket.head;
        // At most `len` steps, even if the links were corrupt.
        for _ in 0..bucket.len {
            let Some(n) = self.nodes.get(cur as usize) else {
                break;
            };
            if !n.is_split() {
                out.push((size, cur));
            }
            cur = n.free_next;
        }
    }

    /// No cached block fits: a new segment, with torch_npu's fallbacks.
    fn alloc_slow(
        &mut self,
        backend: &B,
        cfg: &AllocatorConfig,
        bytes: usize,
        size: usize,
        kind: PoolKind,
        stream: B::Stream,
    ) -> Result<u32> {
        let alloc_size = cfg.allocation_size(size)?;
        match self.alloc_block(backend, alloc_size, stream, kind) {
            Err(e) if is_oom(&e) => {}
            other => return other,
        }
        // Free oversize cached blocks of this stream, just enough
        // (torch_npu `release_available_cached_blocks`).
        if cfg.max_split_size.is_some()
            && self.release_available_cached_blocks(backend, cfg, size, kind, stream)?
        {
            match self.alloc_block(backend, alloc_size, stream, kind) {
                Err(e) if is_oom(&e) => {}
                other => return other,
            }
        }
        // Wait for every outstanding event; a block released by them may fit
        // (torch_npu only frees here; looking again first avoids a retry).
        self.synchronize_and_free_events(backend)?;
        if let Some(idx) = self.get_free_block(cfg, stream, size, kind) {
            return Ok(idx);
        }
        // Return every unused segment and retry once
        // (torch_npu `release_cached_blocks` + `alloc_block(isRetry)`).
        self.release_unused_segments(backend)?;
        self.stats.alloc_retries += 1;
        match self.alloc_block(backend, alloc_size, stream, kind) {
            Err(e) if is_oom(&e) => {
                self.stats.ooms += 1;
                Err(self.oom_error(e, bytes, size, alloc_size))
            }
            other => other,
        }
    }

    /// A new segment from the backend (torch_npu `alloc_block`).
    fn alloc_block(
        &mut self,
        backend: &B,
        alloc_size: usize,
        stream: B::Stream,
        kind: PoolKind,
    ) -> Result<u32> {
        if !self.has_room() {
            return Err(Error::invalid(
                "CachingAllocator::allocate",
                "more than 2^32 - 1 blocks",
            ));
        }
        let ptr = DevicePtr(backend.malloc(alloc_size)?);
        if !ptr.addr().is_multiple_of(ALIGNMENT) {
            // Blocks are carved at multiples of MIN_BLOCK_SIZE from the
            // segment's base, so they are as aligned as the base: a base
            // below the promised alignment is the backend's fault.
            // SAFETY: `ptr` came from `backend.malloc(alloc_size)` just now;
            // no block of it was handed out and no work uses it.
            let freed = unsafe { backend.free(ptr.0, alloc_size) };
            let mut reason = format!(
                "the backend returned a segment at {:#x}, not aligned to {ALIGNMENT} bytes \
                 (aclrtMalloc's alignment, which every block inherits)",
                ptr.addr()
            );
            if let Err(e) = freed {
                reason.push_str(&format!("; freeing it failed too: {e}"));
            }
            return Err(Error::invalid("CachingAllocator::allocate", reason));
        }
        let idx = self.insert_node(Node {
            ptr,
            size: alloc_size,
            requested: 0,
            serial: 0,
            stream,
            prev: NIL,
            next: NIL,
            event_count: 0,
            state: NodeState::Taken,
            pool: kind,
            free_prev: NIL,
            free_next: NIL,
            stream_uses: Vec::new(),
        })?;
        let bytes = alloc_size as u64;
        self.stats.update(kind, |p| {
            p.segments.add(1);
            p.reserved_bytes.add(bytes);
            p.backend_mallocs += 1;
        });
        Ok(idx)
    }

    /// Splits off the unused tail when worth it and marks the block
    /// allocated (torch_npu `should_split` + `alloc_found_block`).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn hand_out(
        &mut self,
        cfg: &AllocatorConfig,
        owner: u64,
        idx: u32,
        bytes: usize,
        size: usize,
        kind: PoolKind,
        stream: B::Stream,
    ) -> Result<Block<B::Stream>> {
        let node = self.node(idx)?;
        let remaining = node
            .size
            .checked_sub(size)
            .ok_or_else(|| corrupt("a block smaller than the request was chosen"))?;
        let split = match kind {
            PoolKind::Small => remaining >= MIN_BLOCK_SIZE,
            PoolKind::Large => size < cfg.split_limit() && remaining > SMALL_SIZE,
        };
        if split {
            let rest_ptr = node
                .ptr
                .offset(size)
                .ok_or_else(|| corrupt("block address wraps around"))?;
            let old_next = node.next;
            let rest = self.insert_node(Node {
                ptr: rest_ptr,
                size: remaining,
                requested: 0,
                serial: 0,
                stream,
                prev: idx,
                next: old_next,
                event_count: 0,
                state: NodeState::Taken,
                pool: kind,
                free_prev: NIL,
                free_next: NIL,
                stream_uses: Vec::new(),
            })?;
            let n = self.node_mut(idx)?;
            n.size = size;
            n.next = rest;
            if old_next != NIL {
                self.node_mut(old_next)?.prev = rest;
            }
            self.pool_insert(rest)?;
        }
        let serial = self.next_serial;
        self.next_serial += 1;
        let n = self.node_mut(idx)?;
        n.state = NodeState::Allocated;
        n.requested = bytes;
        n.serial = serial;
        let (ptr, block_size) = (n.ptr, n.size);
        let (size64, bytes64) = (block_size as u64, bytes as u64);
        self.stats.update(kind, |p| {
            p.allocations.add(1);
            p.allocated_bytes.add(size64);
            p.active_blocks.add(1);
            p.active_bytes.add(size64);
            p.requested_bytes.add(bytes64);
        });
        Ok(Block {
            ptr,
            size: block_size,
            requested: bytes,
            stream,
            index: idx,
            serial,
            allocator: owner,
        })
    }

    /// torch_npu's out-of-memory message, on the backend's error.
    fn oom_error(&self, err: Error, bytes: usize, size: usize, alloc_size: usize) -> Error {
        let s = &self.stats.aggregate;
        let text = format!(
            "NPU out of memory. Tried to allocate {} (a segment for a request of {bytes} bytes, \
             rounded to {size}); {} already allocated; {} current active; {} free cached; \
             {} reserved in total by the caching allocator in {} segments. If reserved memory \
             is >> allocated memory try setting max_split_size to avoid fragmentation.",
            format_size(alloc_size as u64),
            format_size(s.allocated_bytes.current),
            format_size(s.active_bytes.current),
            format_size(s.cached_bytes()),
            format_size(s.reserved_bytes.current),
            s.segments.current,
        );
        match err {
            Error::Acl {
                code,
                function,
                message,
            } => Error::Acl {
                code,
                function,
                message: Some(match message {
                    Some(m) => format!("{text} Backend: {m}"),
                    None => text,
                }),
            },
            other => other,
        }
    }

    // ---- free ------------------------------------------------------------

    /// torch_npu `free`.
    pub(crate) fn free(&mut self, backend: &B, block: &Block<B::Stream>, owner: u64) -> Result<()> {
        let idx = self.check_handle(block, owner, "CachingAllocator::free")?;
        let n = self.node_mut(idx)?;
        n.state = NodeState::Pending;
        let (size, kind, cross_stream) = (n.size as u64, n.pool, !n.stream_uses.is_empty());
        self.stats.update(kind, |p| {
            p.allocations.sub(1);
            p.allocated_bytes.sub(size);
            p.frees += 1;
        });
        if cross_stream {
            self.insert_events(backend, idx)
        } else {
            self.free_block(idx)
        }
    }

    /// Puts a block whose events are done back in its pool, merged with free
    /// neighbours (torch_npu `free_block` + `try_merge_blocks`).
    fn free_block(&mut self, idx: u32) -> Result<()> {
        let n = self.node(idx)?;
        let (size, requested, kind, prev, next) =
            (n.size as u64, n.requested as u64, n.pool, n.prev, n.next);
        self.stats.update(kind, |p| {
            p.active_blocks.sub(1);
            p.active_bytes.sub(size);
            p.requested_bytes.sub(requested);
        });
        if prev != NIL && self.node(prev)?.state == NodeState::Free {
            self.absorb(idx, prev, true)?;
        }
        if next != NIL && self.node(next)?.state == NodeState::Free {
            self.absorb(idx, next, false)?;
        }
        self.node_mut(idx)?.requested = 0;
        self.pool_insert(idx)
    }

    /// Merges the free neighbour `src` (before `dst` if `src_is_prev`) into
    /// `dst`.
    fn absorb(&mut self, dst: u32, src: u32, src_is_prev: bool) -> Result<()> {
        self.pool_remove(src)?;
        let s = self.node(src)?;
        let (ptr, size, prev, next) = (s.ptr, s.size, s.prev, s.next);
        let d = self.node_mut(dst)?;
        d.size += size;
        if src_is_prev {
            d.ptr = ptr;
            d.prev = prev;
            if prev != NIL {
                self.node_mut(prev)?.next = dst;
            }
        } else {
            d.next = next;
            if next != NIL {
                self.node_mut(next)?.prev = dst;
            }
        }
        self.vacate(src)
    }

    // ---- streams and events ----------------------------------------------

    /// torch `recordStream`: uses on the allocation stream need nothing.
    pub(crate) fn record_stream(
        &mut self,
        block: &Block<B::Stream>,
        owner: u64,
        stream: B::Stream,
    ) -> Result<()> {
        let idx = self.check_handle(block, owner, "CachingAllocator::record_stream")?;
        let n = self.node_mut(idx)?;
        if stream != n.stream && !n.stream_uses.contains(&stream) {
            n.stream_uses.push(stream);
        }
        Ok(())
    }

    /// Records one event per use-stream; the block waits for all of them
    /// (torch_npu `insert_events`).
    fn insert_events(&mut self, backend: &B, idx: u32) -> Result<()> {
        let mut uses = std::mem::take(&mut self.node_mut(idx)?.stream_uses);
        let mut recorded = 0u32;
        let mut failure = None;
        for &stream in &uses {
            match backend.record_event(stream) {
                Ok(event) => {
                    self.events
                        .entry(stream)
                        .or_default()
                        .push_back((event, idx));
                    recorded += 1;
                }
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        self.pending_events += recorded as usize;
        uses.clear();
        let n = self.node_mut(idx)?;
        n.stream_uses = uses;
        n.event_count = recorded;
        match failure {
            None => Ok(()),
            Some(e) => {
                // Without that event nothing tells when the other stream is
                // done with the block: retire it for good, with one count
                // that no event will ever release.
                n.event_count += 1;
                self.stats.retired_blocks += 1;
                Err(e)
            }
        }
    }

    /// One of `idx`'s events is done.
    fn event_done(&mut self, idx: u32) -> Result<()> {
        self.pending_events = self.pending_events.saturating_sub(1);
        let n = self.node_mut(idx)?;
        n.event_count = n
            .event_count
            .checked_sub(1)
            .ok_or_else(|| corrupt("an event completed for a block without events"))?;
        if n.event_count == 0 {
            self.free_block(idx)
        } else {
            Ok(())
        }
    }

    /// Retires completed events, oldest first per stream, stopping at each
    /// stream's first incomplete one (torch_npu `process_events`).
    fn process_events(&mut self, backend: &B) -> Result<()> {
        let mut events = std::mem::take(&mut self.events);
        let result = self.drain_events(&mut events, |event| backend.event_complete(event));
        self.events = events;
        result
    }

    /// Waits for every outstanding event (torch_npu
    /// `synchronize_and_free_events`).
    fn synchronize_and_free_events(&mut self, backend: &B) -> Result<()> {
        if self.pending_events == 0 {
            return Ok(());
        }
        let mut events = std::mem::take(&mut self.events);
        let result = self.drain_events(&mut events, |event| {
            backend.synchronize_event(event).map(|()| true)
        });
        self.events = events;
        result
    }

    fn drain_events(
        &mut self,
        events: &mut EventQueues<B>,
        mut done: impl FnMut(&B::Event) -> Result<bool>,
    ) -> Result<()> {
        for queue in events.values_mut() {
            while let Some((event, idx)) = queue.front() {
                if !done(event)? {
                    break;
                }
                let idx = *idx;
                queue.pop_front();
                self.event_done(idx)?;
            }
        }
        Ok(())
    }

    // ---- releasing segments ----------------------------------------------

    /// torch_npu `release_cached_blocks`: wait for all events, then return
    /// every segment that is entirely free.
    pub(crate) fn release_cached_blocks(&mut self, backend: &B) -> Result<()> {
        self.synchronize_and_free_events(backend)?;
        self.release_unused_segments(backend)
    }

    /// Returns every free, unsplit block (a whole unused segment) to the
    /// backend, after one device synchronisation.
    fn release_unused_segments(&mut self, backend: &B) -> Result<()> {
        let mut victims = Vec::new();
        for pool in &self.pools {
            for (key, bucket) in &pool.buckets {
                self.unsplit_blocks_of(key.1, bucket, &mut victims);
            }
        }
        let victims: Vec<u32> = victims.into_iter().map(|(_, i)| i).collect();
        self.release_blocks(backend, &victims)
    }

    /// torch_npu `release_available_cached_blocks`: frees unsplit oversize
    /// blocks of `stream` (at least `max_split_size`), the smallest one
    /// that is large enough, or else the largest ones until they add up to
    /// the request. Frees nothing and returns `false` if they cannot.
    fn release_available_cached_blocks(
        &mut self,
        backend: &B,
        cfg: &AllocatorConfig,
        size: usize,
        kind: PoolKind,
        stream: B::Stream,
    ) -> Result<bool> {
        let limit = cfg.split_limit();
        let target = size.max(limit);
        let mut candidates = Vec::new();
        for (key, bucket) in self.pools[kind.index()]
            .buckets
            .range((stream, limit)..)
            .take_while(|(k, _)| k.0 == stream)
        {
            self.unsplit_blocks_of(key.1, bucket, &mut candidates);
        }
        let victims: Vec<u32> = match candidates.iter().find(|(s, _)| *s >= target) {
            Some(&(_, i)) => vec![i],
            None => {
                let mut total = 0usize;
                let mut v = Vec::new();
                for &(s, i) in candidates.iter().rev() {
                    if total >= target {
                        break;
                    }
                    total = total.saturating_add(s);
                    v.push(i);
                }
                if total < target {
                    return Ok(false);
                }
                v
            }
        };
        self.release_blocks(backend, &victims)?;
        Ok(true)
    }

    /// Synchronises the device once, then frees each of `victims` (free,
    /// unsplit blocks). Every block leaves the books even if its free
    /// fails (a second free could hit memory the runtime has reused); the
    /// first failure is returned.
    fn release_blocks(&mut self, backend: &B, victims: &[u32]) -> Result<()> {
        if victims.is_empty() {
            return Ok(());
        }
        backend.synchronize_device()?;
        let mut failure = None;
        for &idx in victims {
            if let Err(e) = self.release_block(backend, idx) {
                failure.get_or_insert(e);
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// torch_npu `release_block`.
    fn release_block(&mut self, backend: &B, idx: u32) -> Result<()> {
        let n = self.node(idx)?;
        if n.state != NodeState::Free || n.is_split() {
            return Err(corrupt("releasing a segment that is in use"));
        }
        let (ptr, size, kind) = (n.ptr, n.size, n.pool);
        self.pool_remove(idx)?;
        self.vacate(idx)?;
        let bytes = size as u64;
        self.stats.update(kind, |p| {
            p.segments.sub(1);
            p.reserved_bytes.sub(bytes);
            p.backend_frees += 1;
        });
        // SAFETY: `ptr` is the base of a segment `backend.malloc(size)`
        // returned: an unsplit block spans its whole segment, and a merged
        // block keeps the lowest address. It is free (no handle, no pending
        // event), has just left the books so it is freed once, and the
        // caller (`release_blocks`) synchronised the device first.
        unsafe { backend.free(ptr.0, size) }
    }

    pub(crate) fn pending_events(&self) -> usize {
        self.pending_events
    }

    /// Checks every structural invariant; for tests.
    #[cfg(test)]
    pub(crate) fn check_consistency(&self) -> std::result::Result<(), String> {
        let node = |i: u32| {
            self.nodes
                .get(i as usize)
                .ok_or_else(|| format!("index {i} out of range"))
        };
        for (k, pool) in self.pools.iter().enumerate() {
            let (mut empty, mut listed) = (0, 0);
            for (key, b) in &pool.buckets {
                if b.len == 0 {
                    empty += 1;
                    if b.head != NIL {
                        return Err(format!("empty bucket {key:?} has a head"));
                    }
                }
                let (mut prev, mut cur) = (NIL, b.head);
                for _ in 0..b.len {
                    let n = node(cur)?;
                    if n.state != NodeState::Free
                        || n.stream != key.0
                        || n.size != key.1
                        || n.pool.index() != k
                        || n.free_prev != prev
                    {
                        return Err(format!("block {cur} misfiled in bucket {key:?}"));
                    }
                    (prev, cur) = (cur, n.free_next);
                }
                if cur != NIL {
                    return Err(format!("bucket {key:?} longer than {}", b.len));
                }
                listed += b.len as usize;
            }
            if empty != pool.empty {
                return Err(format!(
                    "pool {k}: {empty} empty buckets, counted {}",
                    pool.empty
                ));
            }
            let free = self
                .nodes
                .iter()
                .filter(|n| n.state == NodeState::Free && n.pool.index() == k)
                .count();
            if free != listed {
                return Err(format!("pool {k}: {free} free blocks, {listed} listed"));
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let i = i as u32;
            match n.state {
                NodeState::Vacant => {
                    if !self.vacant.contains(&i) {
                        return Err(format!("vacant {i} not in the vacant list"));
                    }
                    continue;
                }
                NodeState::Taken => return Err(format!("block {i} left taken")),
                NodeState::Pending if n.event_count == 0 => {
                    return Err(format!("pending block {i} without events"));
                }
                _ => {}
            }
            if n.next != NIL {
                let nx = node(n.next)?;
                if nx.prev != i || nx.ptr.addr() != n.ptr.addr() + n.size || nx.stream != n.stream {
                    return Err(format!("blocks {i} and {} are not neighbours", n.next));
                }
                if n.state == NodeState::Free && nx.state == NodeState::Free {
                    return Err(format!("free blocks {i} and {} not merged", n.next));
                }
            }
        }
        if self.vacant.len()
            != self
                .nodes
                .iter()
                .filter(|n| n.state == NodeState::Vacant)
                .count()
        {
            return Err("vacant list does not match".into());
        }
        Ok(())
    }

    /// Buckets in both pools, and how many are empty; for tests.
    #[cfg(test)]
    pub(crate) fn bucket_counts(&self) -> (usize, usize) {
        self.pools.iter().fold((0, 0), |(all, empty), p| {
            (all + p.buckets.len(), empty + p.empty)
        })
    }

    /// Every segment with its blocks, by address.
    pub(crate) fn snapshot(&self) -> Vec<SegmentInfo<B::Stream>> {
        let mut segments = Vec::new();
        for n in &self.nodes {
            if n.state == NodeState::Vacant || n.prev != NIL {
                continue;
            }
            let mut seg = SegmentInfo {
                address: n.ptr.addr(),
                size: 0,
                stream: n.stream,
                pool: n.pool,
                blocks: Vec::new(),
            };
            let mut cur = Some(n);
            // At most one step per node, even if the links were corrupt.
            for _ in 0..self.nodes.len() {
                let Some(b) = cur else { break };
                let state = match b.state {
                    NodeState::Free => BlockState::Free,
                    NodeState::Pending => BlockState::PendingEvents,
                    _ => BlockState::Allocated,
                };
                seg.size += b.size;
                seg.blocks.push(BlockInfo {
                    address: b.ptr.addr(),
                    size: b.size,
                    requested: b.requested,
                    state,
                });
                cur = if b.next == NIL {
                    None
                } else {
                    self.nodes.get(b.next as usize)
                };
            }
            segments.push(seg);
        }
        segments.sort_by_key(|s| s.address);
        segments
    }
}

//! Tests against a mock backend.

use super::*;
use crate::error::{Error, ErrorCode};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

// ---- mock backend ------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Op {
    Malloc(usize),
    Free(usize, usize),
    SyncDevice,
    Record(usize),
    SyncEvent(usize),
}

#[derive(Default)]
struct MockState {
    next_addr: usize,
    live: BTreeMap<usize, usize>,
    live_bytes: usize,
    capacity: usize,
    events: Vec<(usize, Arc<AtomicBool>)>,
    fail_record: bool,
    fail_query: bool,
    ops: Vec<Op>,
}

/// A backend of fake addresses: tracks live segments, fails with
/// `ACL_ERROR_RT_MEMORY_ALLOCATION` past `capacity` bytes, and records
/// events whose completion the test controls.
#[derive(Clone)]
struct Mock(Arc<parking_lot::Mutex<MockState>>);

struct MockEvent {
    stream: usize,
    done: Arc<AtomicBool>,
}

impl Mock {
    fn new() -> Mock {
        Mock::with_capacity(usize::MAX)
    }

    fn with_capacity(capacity: usize) -> Mock {
        Mock(Arc::new(parking_lot::Mutex::new(MockState {
            next_addr: 0x10_0000_0000,
            capacity,
            ..MockState::default()
        })))
    }

    fn live_count(&self) -> usize {
        self.0.lock().live.len()
    }
    fn live_bytes(&self) -> usize {
        self.0.lock().live_bytes
    }
    fn live(&self) -> BTreeMap<usize, usize> {
        self.0.lock().live.clone()
    }
    fn ops(&self) -> Vec<Op> {
        self.0.lock().ops.clone()
    }
    fn clear_ops(&self) {
        self.0.lock().ops.clear();
    }
    /// Completes every event recorded so far on `stream`.
    fn complete(&self, stream: usize) {
        for (s, done) in &self.0.lock().events {
            if *s == stream {
                done.store(true, Ordering::SeqCst);
            }
        }
    }
    fn set_fail_record(&self, fail: bool) {
        self.0.lock().fail_record = fail;
    }
    fn set_fail_query(&self, fail: bool) {
        self.0.lock().fail_query = fail;
    }
}

fn acl_error(code: ErrorCode, function: &'static str, message: &str) -> Error {
    Error::Acl {
        code,
        function,
        message: Some(message.into()),
    }
}

impl Backend for Mock {
    type Stream = usize;
    type Event = MockEvent;

    fn malloc(&self, bytes: usize) -> Result<NonNull<u8>> {
        let mut s = self.0.lock();
        s.ops.push(Op::Malloc(bytes));
        if s.live_bytes.saturating_add(bytes) > s.capacity {
            return Err(acl_error(
                ErrorCode::RtMemoryAllocation,
                "aclrtMalloc",
                "mock device is full",
            ));
        }
        let addr = s.next_addr;
        // Leave a gap so that segments are never adjacent.
        s.next_addr += bytes.next_multiple_of(MIB) + MIB;
        s.live.insert(addr, bytes);
        s.live_bytes += bytes;
        Ok(NonNull::new(std::ptr::without_provenance_mut(addr)).expect("non-null"))
    }

    unsafe fn free(&self, ptr: NonNull<u8>, bytes: usize) -> Result<()> {
        let mut s = self.0.lock();
        let addr = ptr.as_ptr().addr();
        s.ops.push(Op::Free(addr, bytes));
        match s.live.remove(&addr) {
            Some(b) if b == bytes => {
                s.live_bytes -= bytes;
                Ok(())
            }
            other => panic!("mock: bad free of {addr:#x} ({bytes} bytes): {other:?}"),
        }
    }

    fn record_event(&self, stream: usize) -> Result<MockEvent> {
        let mut s = self.0.lock();
        s.ops.push(Op::Record(stream));
        if s.fail_record {
            return Err(acl_error(
                ErrorCode::RtStreamContext,
                "aclrtRecordEvent",
                "mock: no",
            ));
        }
        let done = Arc::new(AtomicBool::new(false));
        s.events.push((stream, done.clone()));
        Ok(MockEvent { stream, done })
    }

    fn event_complete(&self, event: &MockEvent) -> Result<bool> {
        if self.0.lock().fail_query {
            return Err(acl_error(
                ErrorCode::RtAicoreException,
                "aclrtQueryEventStatus",
                "mock: kernel fault",
            ));
        }
        Ok(event.done.load(Ordering::SeqCst))
    }

    fn synchronize_event(&self, event: &MockEvent) -> Result<()> {
        self.0.lock().ops.push(Op::SyncEvent(event.stream));
        event.done.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn synchronize_device(&self) -> Result<()> {
        self.0.lock().ops.push(Op::SyncDevice);
        Ok(())
    }
}

fn allocator(mock: &Mock) -> CachingAllocator<Mock> {
    CachingAllocator::with_default_config(mock.clone())
}

fn addr(b: &Block<usize>) -> usize {
    b.ptr().as_ptr().addr()
}

fn assert_consistent(a: &CachingAllocator<Mock>) {
    if let Err(e) = a.state.lock().check_consistency() {
        panic!("inconsistent allocator: {e}");
    }
}

// ---- alignment -----------------------------------------------------------------

#[test]
fn every_block_starts_at_a_multiple_of_512_bytes() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let mut live = Vec::new();
    // Small and large pools, odd sizes, blocks split from shared segments
    // and segments of their own.
    for (i, bytes) in [
        1,
        31,
        33,
        511,
        513,
        1000,
        4097,
        MIB - 1,
        3 * MIB + 7,
        12 * MIB + 1,
    ]
    .into_iter()
    .cycle()
    .take(40)
    .enumerate()
    {
        let b = a.allocate(bytes, i % 3).unwrap();
        assert_eq!(addr(&b) % ALIGNMENT, 0, "{bytes} bytes at {:#x}", addr(&b));
        live.push(b);
    }
    for b in live {
        a.free(b).unwrap();
    }
    assert_consistent(&a);
}

#[test]
fn a_backend_segment_below_512_byte_alignment_is_given_back_and_refused() {
    let mock = Mock::new();
    mock.0.lock().next_addr = 0x10_0000_0040;
    let a = allocator(&mock);
    let e = a.allocate(1000, 0).unwrap_err();
    assert_eq!(
        e,
        Error::InvalidArgument {
            function: "CachingAllocator::allocate",
            reason: "the backend returned a segment at 0x1000000040, not aligned to 512 bytes \
                     (aclrtMalloc's alignment, which every block inherits)"
                .into()
        }
    );
    assert_eq!(
        mock.ops(),
        [
            Op::Malloc(SMALL_BUFFER),
            Op::Free(0x10_0000_0040, SMALL_BUFFER)
        ]
    );
    assert_eq!(mock.live_count(), 0);
    assert_eq!(a.stats().aggregate.reserved_bytes.current, 0);
    assert_consistent(&a);
}

// ---- rounding and pools ------------------------------------------------------

#[test]
fn rounding_adds_the_pad_and_rounds_to_512() {
    let c = AllocatorConfig::default();
    assert_eq!(c.round_size(0).unwrap(), 512);
    assert_eq!(c.round_size(1).unwrap(), 512);
    assert_eq!(c.round_size(480).unwrap(), 512);
    assert_eq!(c.round_size(481).unwrap(), 1024);
    assert_eq!(c.round_size(512).unwrap(), 1024);
    assert_eq!(c.round_size(1000).unwrap(), 1536);
    assert_eq!(c.round_size(MIB).unwrap(), MIB + 512);
    let c0 = AllocatorConfig {
        padding: 0,
        ..AllocatorConfig::default()
    };
    assert_eq!(c0.round_size(0).unwrap(), 512);
    assert_eq!(c0.round_size(512).unwrap(), 512);
    assert_eq!(c0.round_size(513).unwrap(), 1024);
    assert_eq!(c0.round_size(MIB).unwrap(), MIB);
    assert!(matches!(
        c.round_size(usize::MAX - 10),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn segment_sizes_follow_torch_npu() {
    let c = AllocatorConfig::default();
    assert_eq!(c.allocation_size(512).unwrap(), 2 * MIB);
    assert_eq!(c.allocation_size(MIB).unwrap(), 2 * MIB);
    assert_eq!(c.allocation_size(MIB + 512).unwrap(), 20 * MIB);
    assert_eq!(c.allocation_size(10 * MIB - 512).unwrap(), 20 * MIB);
    assert_eq!(c.allocation_size(10 * MIB).unwrap(), 10 * MIB);
    assert_eq!(c.allocation_size(10 * MIB + 512).unwrap(), 12 * MIB);
    assert_eq!(c.allocation_size(100 * MIB + 1).unwrap(), 102 * MIB);
    assert!(c.allocation_size(usize::MAX - 10).is_err());
    assert_eq!(PoolKind::for_size(MIB), PoolKind::Small);
    assert_eq!(PoolKind::for_size(MIB + 512), PoolKind::Large);
}

#[test]
fn small_requests_share_a_2_mib_segment() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let y = a.allocate(2000, 0).unwrap();
    assert_eq!((x.size(), y.size()), (1536, 2048));
    assert_eq!((x.requested(), x.stream()), (1000, 0));
    assert_eq!(addr(&y), addr(&x) + 1536);
    assert_eq!(mock.ops(), [Op::Malloc(2 * MIB)]);
    let s = a.stats();
    assert_eq!(s.small_pool.segments.current, 1);
    assert_eq!(s.small_pool.reserved_bytes.current, 2 * MIB as u64);
    assert_eq!(s.large_pool.reserved_bytes.current, 0);
    a.free(x).unwrap();
    a.free(y).unwrap();
}

#[test]
fn mid_requests_share_a_20_mib_segment_and_big_ones_get_their_own() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(MIB, 0).unwrap(); // 1 MiB + 32 → large pool
    let y = a.allocate(5 * MIB, 0).unwrap();
    assert_eq!(x.size(), MIB + 512);
    assert_eq!(addr(&y), addr(&x) + MIB + 512);
    assert_eq!(mock.ops(), [Op::Malloc(20 * MIB)]);
    // 20 MiB + 512 → a segment of its own, 22 MiB; the 2 MiB − 512 rest is
    // more than 1 MiB: split off.
    let z = a.allocate(20 * MIB, 0).unwrap();
    assert_eq!(mock.ops().last(), Some(&Op::Malloc(22 * MIB)));
    assert_eq!(z.size(), 20 * MIB + 512);
    // 13 MiB + 512 fits the first segment's rest (14 MiB − 1 KiB); what
    // would remain (1 MiB − 1.5 KiB) is not worth a split.
    let w = a.allocate(13 * MIB, 0).unwrap();
    assert_eq!(addr(&w), addr(&y) + 5 * MIB + 512);
    assert_eq!(w.size(), 14 * MIB - 1024);
    let s = a.stats();
    assert_eq!(s.large_pool.segments.current, 2);
    assert_eq!(s.small_pool.segments.current, 0);
    for b in [x, y, z, w] {
        a.free(b).unwrap();
    }
}

// ---- reuse and streams -------------------------------------------------------

#[test]
fn a_freed_block_comes_back_on_the_same_stream() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 7).unwrap();
    let p = addr(&x);
    a.free(x).unwrap();
    let y = a.allocate(4 * KIB, 7).unwrap();
    assert_eq!(addr(&y), p);
    // Best fit: a smaller request also takes the lowest fitting block.
    a.free(y).unwrap();
    let z = a.allocate(100, 7).unwrap();
    assert_eq!(addr(&z), p);
    let s = a.stats().aggregate;
    assert_eq!((s.backend_mallocs, s.cache_hits, s.cache_misses), (1, 2, 1));
    a.free(z).unwrap();
}

#[test]
fn no_reuse_across_streams() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 1).unwrap();
    let p = addr(&x);
    a.free(x).unwrap();
    let y = a.allocate(4 * KIB, 2).unwrap();
    assert_ne!(addr(&y), p);
    assert_eq!(a.stats().aggregate.backend_mallocs, 2);
    a.free(y).unwrap();
}

#[test]
fn record_stream_defers_reuse_until_the_event_completes() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 1).unwrap();
    let p = addr(&x);
    a.record_stream(&x, 2);
    a.record_stream(&x, 2); // once per stream
    a.record_stream(&x, 1); // own stream: ignored
    mock.clear_ops();
    a.free(x).unwrap();
    assert_eq!(mock.ops(), [Op::Record(2)]);
    let s = a.stats();
    assert_eq!(s.pending_events, 1);
    assert_eq!(s.aggregate.allocated_bytes.current, 0);
    assert_eq!(s.aggregate.active_bytes.current, 4608);
    assert_eq!(s.aggregate.active_blocks.current, 1);

    // Not complete: the block is not reused.
    let y = a.allocate(4 * KIB, 1).unwrap();
    assert_ne!(addr(&y), p);
    a.free(y).unwrap();
    assert_eq!(a.stats().pending_events, 1);

    // Complete: the next allocation reclaims it.
    mock.complete(2);
    let z = a.allocate(4 * KIB, 1).unwrap();
    assert_eq!(addr(&z), p);
    let s = a.stats();
    assert_eq!(s.pending_events, 0);
    assert_eq!(s.aggregate.active_blocks.current, 1);
    assert_eq!(s.aggregate.backend_mallocs, 1);
    a.free(z).unwrap();
}

#[test]
fn events_complete_in_order_per_stream() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 1).unwrap();
    let y = a.allocate(4 * KIB, 1).unwrap();
    a.record_stream(&x, 2);
    a.record_stream(&x, 3);
    a.record_stream(&y, 3);
    a.free(x).unwrap();
    a.free(y).unwrap();
    assert_eq!(a.stats().pending_events, 3);
    mock.complete(3);
    let z = a.allocate(1, 9).unwrap(); // process_events runs
    // y is back (its only event done); x still waits for stream 2.
    let s = a.stats();
    assert_eq!(s.pending_events, 1);
    assert_eq!(s.aggregate.active_blocks.current, 2); // x pending + z
    mock.complete(2);
    a.free(z).unwrap();
    let w = a.allocate(1, 9).unwrap();
    assert_eq!(a.stats().pending_events, 0);
    a.free(w).unwrap();
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 0);
}

#[test]
fn a_failed_event_record_retires_the_block() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 1).unwrap();
    a.record_stream(&x, 2);
    mock.set_fail_record(true);
    let e = a.free(x).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtStreamContext));
    mock.set_fail_record(false);
    let s = a.stats();
    assert_eq!(s.retired_blocks, 1);
    assert_eq!(s.aggregate.allocations.current, 0);
    assert_eq!(s.aggregate.active_blocks.current, 1);
    // Its segment stays, even through empty_cache.
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 1);
}

#[test]
fn an_event_query_failure_is_reported_by_allocate() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(4 * KIB, 1).unwrap();
    a.record_stream(&x, 2);
    a.free(x).unwrap();
    mock.set_fail_query(true);
    let e = a.allocate(1, 1).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtAicoreException));
    mock.set_fail_query(false);
    mock.complete(2);
    let y = a.allocate(1, 1).unwrap();
    assert_eq!(a.stats().pending_events, 0);
    a.free(y).unwrap();
}

// ---- splitting and merging ---------------------------------------------------

fn free_blocks(a: &CachingAllocator<Mock>) -> Vec<(usize, usize)> {
    a.snapshot()
        .iter()
        .flat_map(|s| s.blocks.iter())
        .filter(|b| b.state == BlockState::Free)
        .map(|b| (b.address, b.size))
        .collect()
}

#[test]
fn blocks_split_and_merge_back_in_every_free_order() {
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for order in orders {
        let mock = Mock::new();
        let a = allocator(&mock);
        let blocks: Vec<_> = [1000, 2000, 3000]
            .into_iter()
            .map(|n| a.allocate(n, 0).unwrap())
            .collect();
        let base = addr(&blocks[0]);
        assert_eq!(addr(&blocks[1]), base + 1536);
        assert_eq!(addr(&blocks[2]), base + 1536 + 2048);
        let seg = a.snapshot();
        assert_eq!(seg.len(), 1);
        assert_eq!(seg[0].blocks.len(), 4); // 3 + the free rest
        let mut blocks: Vec<Option<Block<usize>>> = blocks.into_iter().map(Some).collect();
        for &i in &order {
            a.free(blocks[i].take().unwrap()).unwrap();
            // Never two free neighbours.
            for s in a.snapshot() {
                for w in s.blocks.windows(2) {
                    assert!(
                        !(w[0].state == BlockState::Free && w[1].state == BlockState::Free),
                        "{order:?}: {s:?}"
                    );
                }
            }
        }
        assert_eq!(free_blocks(&a), [(base, 2 * MIB)], "{order:?}");
        assert_consistent(&a);
        a.empty_cache().unwrap();
        assert_eq!(mock.live_count(), 0);
    }
}

#[test]
fn a_freed_middle_block_is_reused_by_best_fit() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let y = a.allocate(8000, 0).unwrap();
    let z = a.allocate(1000, 0).unwrap();
    let py = addr(&y);
    a.free(y).unwrap();
    // 4 KiB fits in y's 8 KiB hole (smaller than the segment's rest).
    let w = a.allocate(4000, 0).unwrap();
    assert_eq!(addr(&w), py);
    let v = a.allocate(3000, 0).unwrap(); // the rest of the hole
    assert_eq!(addr(&v), py + 4096);
    for b in [x, z, w, v] {
        a.free(b).unwrap();
    }
    assert_eq!(free_blocks(&a).len(), 1);
}

#[test]
fn max_split_size_keeps_oversize_blocks_whole() {
    let mock = Mock::new();
    let cfg = AllocatorConfig {
        max_split_size: Some(40 * MIB),
        ..AllocatorConfig::default()
    };
    let a = CachingAllocator::new(mock.clone(), cfg).unwrap();
    let big = a.allocate(60 * MIB, 0).unwrap();
    let p = addr(&big);
    a.free(big).unwrap();
    // A request below the limit never takes an oversize block.
    let mid = a.allocate(12 * MIB, 0).unwrap();
    assert_ne!(addr(&mid), p);
    // An oversize request takes it only if less than 20 MiB larger:
    // 62 MiB < 43 MiB + 512 + 20 MiB.
    let b2 = a.allocate(43 * MIB, 0).unwrap();
    assert_eq!(addr(&b2), p);
    assert_eq!(b2.size(), 62 * MIB); // not split
    a.free(b2).unwrap();
    // 62 MiB ≥ 40 MiB + 512 + 20 MiB: no.
    let b3 = a.allocate(40 * MIB, 0).unwrap();
    assert_ne!(addr(&b3), p);
    for b in [mid, b3] {
        a.free(b).unwrap();
    }
}

#[test]
fn oom_frees_oversize_blocks_first_when_max_split_size_is_set() {
    let mock = Mock::with_capacity(90 * MIB);
    let cfg = AllocatorConfig {
        max_split_size: Some(40 * MIB),
        ..AllocatorConfig::default()
    };
    let a = CachingAllocator::new(mock.clone(), cfg).unwrap();
    let keep = a.allocate(1000, 0).unwrap(); // 2 MiB segment, in use
    let big = a.allocate(60 * MIB, 0).unwrap(); // a 62 MiB segment
    let small = a.allocate(4000, 0).unwrap(); // same 2 MiB segment as `keep`
    a.free(big).unwrap();
    a.free(small).unwrap();
    mock.clear_ops();
    // 30 MiB is below the limit, so the cached 62 MiB block cannot serve
    // it, and a 32 MiB segment does not fit in 90 − 64: the oversize block
    // goes, then it fits.
    let c = a.allocate(30 * MIB, 0).unwrap();
    assert_eq!(
        mock.ops(),
        [
            Op::Malloc(32 * MIB),
            Op::SyncDevice,
            Op::Free(addr(&keep) + 2 * MIB + MIB, 62 * MIB),
            Op::Malloc(32 * MIB),
        ]
    );
    assert_eq!(a.stats().alloc_retries, 0);
    a.free(c).unwrap();
    a.free(keep).unwrap();
}

#[test]
fn emptied_buckets_are_swept() {
    let mock = Mock::new();
    let a = allocator(&mock);
    // Each round carves three blocks of new sizes from one segment and
    // frees them; the middle one's bucket empties when its neighbours
    // absorb it, and nothing ever looks at that size again.
    for round in 0..300 {
        let sizes = [3 * round + 1, 3 * round + 2, 3 * round + 3].map(|k| k * 512 - 32);
        let [x, y, z] = sizes.map(|n| a.allocate(n, 0).unwrap());
        a.free(y).unwrap();
        a.free(x).unwrap();
        a.free(z).unwrap();
        assert_consistent(&a);
    }
    let (buckets, empty) = a.state.lock().bucket_counts();
    assert!(
        buckets <= 70 && empty <= 70,
        "{buckets} buckets, {empty} empty"
    );
    assert_eq!(a.stats().aggregate.backend_mallocs, 1);
    assert_eq!(free_blocks(&a).len(), 1);
}

// ---- out of memory -----------------------------------------------------------

#[test]
fn oom_releases_the_cache_and_retries_once() {
    let mock = Mock::with_capacity(21 * MIB);
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap(); // 2 MiB
    let y = a.allocate(1000, 1).unwrap(); // 2 MiB, stream 1
    a.record_stream(&y, 2);
    a.free(x).unwrap();
    a.free(y).unwrap(); // pending on stream 2
    mock.clear_ops();
    let big = a.allocate(5 * MIB, 0).unwrap(); // needs 20 MiB: 4 + 20 > 21
    let ops = mock.ops();
    assert_eq!(ops[0], Op::Malloc(20 * MIB));
    assert_eq!(ops[1], Op::SyncEvent(2));
    assert_eq!(ops[2], Op::SyncDevice);
    assert!(matches!(ops[3], Op::Free(_, n) if n == 2 * MIB));
    assert!(matches!(ops[4], Op::Free(_, n) if n == 2 * MIB));
    assert_eq!(ops[5], Op::Malloc(20 * MIB));
    assert_eq!(ops.len(), 6);
    let s = a.stats();
    assert_eq!(s.alloc_retries, 1);
    assert_eq!(s.ooms, 0);
    assert_eq!(s.pending_events, 0);
    assert_eq!(s.aggregate.backend_frees, 2);
    assert_eq!(s.aggregate.reserved_bytes.current, 20 * MIB as u64);
    assert_eq!(mock.live_count(), 1);
    a.free(big).unwrap();
}

#[test]
fn oom_reuses_a_block_released_by_events_without_a_retry() {
    let mock = Mock::with_capacity(2 * MIB);
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let p = addr(&x);
    // Two more blocks fill the segment: 1536 + 1 MiB + (1 MiB − 1536).
    let y = a.allocate(MIB - 32, 0).unwrap();
    let y2 = a.allocate(MIB - 1536 - 32, 0).unwrap();
    assert_eq!(a.snapshot()[0].blocks.len(), 3);
    a.record_stream(&y, 5);
    a.free(y).unwrap();
    // The pool is empty → OOM → the event is waited for → y's block fits.
    let z = a.allocate(4000, 0).unwrap();
    assert_eq!(addr(&z), p + 1536);
    let s = a.stats();
    assert_eq!(
        (s.alloc_retries, s.ooms, s.aggregate.backend_frees),
        (0, 0, 0)
    );
    for b in [x, y2, z] {
        a.free(b).unwrap();
    }
}

#[test]
fn oom_with_nothing_cached_reports_the_code_and_the_figures() {
    let mock = Mock::with_capacity(10 * MIB);
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let e = a.allocate(15 * MIB, 0).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtMemoryAllocation));
    assert_eq!(e.function(), Some("aclrtMalloc"));
    let msg = e.message().unwrap();
    for part in [
        "Tried to allocate 16.00 MiB",
        "request of 15728640 bytes",
        "1.50 KiB already allocated",
        "1.50 KiB current active",
        "2.00 MiB reserved in total",
        "1 segments",
        "mock device is full",
    ] {
        assert!(msg.contains(part), "{part:?} not in {msg:?}");
    }
    assert!(msg.contains(&format_size(2 * MIB as u64 - 1536)), "{msg}");
    assert!(
        e.to_string()
            .contains("ACL_ERROR_RT_MEMORY_ALLOCATION (207001)")
    );
    let s = a.stats();
    assert_eq!((s.alloc_retries, s.ooms), (1, 1));
    assert_eq!(s.aggregate.cache_misses, 2);
    // The live segment survived.
    assert_eq!(mock.live_count(), 1);
    a.free(x).unwrap();
}

#[test]
fn other_backend_errors_are_not_retried() {
    struct Broken;
    impl Backend for Broken {
        type Stream = u8;
        type Event = ();
        fn malloc(&self, _: usize) -> Result<NonNull<u8>> {
            Err(acl_error(ErrorCode::RtContextNull, "aclrtMalloc", "no ctx"))
        }
        unsafe fn free(&self, _: NonNull<u8>, _: usize) -> Result<()> {
            unreachable!()
        }
        fn record_event(&self, _: u8) -> Result<()> {
            Ok(())
        }
        fn event_complete(&self, _: &()) -> Result<bool> {
            Ok(true)
        }
        fn synchronize_event(&self, _: &()) -> Result<()> {
            Ok(())
        }
    }
    let a = CachingAllocator::with_default_config(Broken);
    let e = a.allocate(10, 0).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::RtContextNull));
    assert_eq!(e.message(), Some("no ctx"));
    assert_eq!(a.stats().alloc_retries, 0);
}

// ---- empty_cache, drop -------------------------------------------------------

#[test]
fn empty_cache_returns_unused_segments_and_keeps_used_ones() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let s0 = a.allocate(1000, 0).unwrap();
    let s0b = a.allocate(1000, 0).unwrap(); // same segment as s0
    let l0 = a.allocate(5 * MIB, 0).unwrap();
    let s1 = a.allocate(1000, 1).unwrap();
    let big = a.allocate(30 * MIB, 1).unwrap();
    assert_eq!(mock.live_count(), 4);
    a.free(s0).unwrap(); // its segment still has s0b
    a.free(s1).unwrap();
    a.free(big).unwrap();
    mock.clear_ops();
    a.empty_cache().unwrap();
    assert_eq!(mock.ops()[0], Op::SyncDevice);
    assert_eq!(mock.live_count(), 2);
    let s = a.stats().aggregate;
    assert_eq!(s.segments.current, 2);
    assert_eq!(s.reserved_bytes.current, (2 * MIB + 20 * MIB) as u64);
    assert_eq!(s.backend_frees, 2);
    a.free(s0b).unwrap();
    a.free(l0).unwrap();
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 0);
    assert_eq!(mock.live_bytes(), 0);
    assert_eq!(a.stats().aggregate.reserved_bytes.current, 0);
    // Nothing to free: no device sync.
    mock.clear_ops();
    a.empty_cache().unwrap();
    assert_eq!(mock.ops(), []);
}

#[test]
fn empty_cache_waits_for_pending_events() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    a.record_stream(&x, 3);
    a.free(x).unwrap();
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 0);
    assert_eq!(a.stats().pending_events, 0);
}

#[test]
fn drop_returns_unused_segments() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let y = a.allocate(3 * MIB, 0).unwrap();
    a.free(x).unwrap();
    drop(a); // `y` is still allocated: its segment stays
    assert_eq!(mock.live_count(), 1);
    assert_eq!(y.size(), 3 * MIB + 512);
}

// ---- handles ------------------------------------------------------------------

#[test]
fn double_and_foreign_frees_are_rejected() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let b = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap();
    let forged = Block { ..x };
    let x2 = Block { ..x };
    a.free(x).unwrap();
    let e = a.free(forged).unwrap_err();
    assert!(matches!(
        e,
        Error::InvalidArgument {
            function: "CachingAllocator::free",
            ..
        }
    ));
    // A stale handle whose slot was handed out again is still rejected.
    let y = a.allocate(1000, 0).unwrap();
    assert_eq!(addr(&y), addr(&x2));
    a.record_stream(&x2, 4); // ignored
    assert!(a.free(x2).is_err());
    let z = b.allocate(1000, 0).unwrap();
    let z2 = Block { ..z };
    assert!(a.free(z2).is_err());
    a.free(y).unwrap();
    b.free(z).unwrap();
    let s = a.stats().aggregate;
    assert_eq!((s.frees, s.allocations.current), (2, 0));
}

#[test]
fn allocator_and_blocks_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<CachingAllocator<Mock>>();
    check::<Block<usize>>();
    check::<AllocatorStats>();
}

#[test]
fn config_is_validated() {
    let bad = [
        AllocatorConfig {
            max_split_size: Some(LARGE_BUFFER),
            ..AllocatorConfig::default()
        },
        AllocatorConfig {
            small_segment_size: SMALL_SIZE - 512,
            ..AllocatorConfig::default()
        },
        AllocatorConfig {
            small_segment_size: 3 * MIB + 1,
            ..AllocatorConfig::default()
        },
        AllocatorConfig {
            large_segment_size: 10 * MIB,
            ..AllocatorConfig::default()
        },
        AllocatorConfig {
            large_segment_size: 1024 * MIB,
            ..AllocatorConfig::default()
        },
        AllocatorConfig {
            padding: 4096,
            ..AllocatorConfig::default()
        },
    ];
    for cfg in bad {
        let e = CachingAllocator::new(Mock::new(), cfg.clone()).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    function: "AllocatorConfig",
                    ..
                }
            ),
            "{cfg:?}: {e}"
        );
    }
    let good = AllocatorConfig {
        max_split_size: Some(100 * MIB),
        small_segment_size: 4 * MIB,
        large_segment_size: 64 * MIB,
        padding: 0,
    };
    let mock = Mock::new();
    let a = CachingAllocator::new(mock.clone(), good).unwrap();
    let x = a.allocate(5 * MIB, 0).unwrap();
    let y = a.allocate(100, 0).unwrap();
    assert_eq!(mock.ops(), [Op::Malloc(64 * MIB), Op::Malloc(4 * MIB)]);
    a.free(x).unwrap();
    a.free(y).unwrap();
}

// ---- statistics ---------------------------------------------------------------

#[test]
fn stats_are_exact_after_a_scripted_sequence() {
    let mock = Mock::new();
    let a = allocator(&mock);
    let x = a.allocate(1000, 0).unwrap(); // small: 1536 of a 2 MiB segment
    let y = a.allocate(3 * MIB, 0).unwrap(); // large: 3 MiB + 512 of 20 MiB
    let z = a.allocate(500, 0).unwrap(); // small: 1024
    a.free(x).unwrap();
    let w = a.allocate(1000, 0).unwrap(); // hit: x's block (1536)
    a.free(z).unwrap();

    let s = a.stats();
    let small = s.small_pool;
    assert_eq!(small.allocated_bytes.current, 1536);
    assert_eq!(small.allocated_bytes.peak, 1536 + 1024);
    assert_eq!(small.allocated_bytes.allocated, 1536 + 1024 + 1536);
    assert_eq!(small.allocated_bytes.freed, 1536 + 1024);
    assert_eq!(small.requested_bytes.current, 1000);
    assert_eq!(small.requested_bytes.peak, 1500);
    assert_eq!(small.reserved_bytes.current, 2 * MIB as u64);
    assert_eq!(small.allocations.current, 1);
    assert_eq!(small.allocations.peak, 2);
    assert_eq!(small.segments.current, 1);
    assert_eq!(
        (
            small.alloc_requests,
            small.frees,
            small.cache_hits,
            small.cache_misses
        ),
        (3, 2, 2, 1)
    );
    assert_eq!((small.backend_mallocs, small.backend_frees), (1, 0));
    assert_eq!(small.cached_bytes(), 2 * MIB as u64 - 1536);
    let large = s.large_pool;
    assert_eq!(large.allocated_bytes.current, (3 * MIB + 512) as u64);
    assert_eq!(large.reserved_bytes.current, 20 * MIB as u64);
    assert_eq!((large.alloc_requests, large.cache_misses), (1, 1));
    let agg = s.aggregate;
    assert_eq!(agg.allocated_bytes.current, (3 * MIB + 512 + 1536) as u64);
    assert_eq!(agg.reserved_bytes.current, 22 * MIB as u64);
    assert_eq!(agg.allocations.current, 2);
    assert_eq!(agg.alloc_requests, 4);
    assert_eq!(agg.hit_rate(), 0.5);
    assert_eq!(s.pool(PoolKind::Small), &small);

    a.reset_peak_stats();
    let s = a.stats();
    assert_eq!(s.small_pool.allocated_bytes.peak, 1536);
    assert_eq!(s.aggregate.reserved_bytes.peak, 22 * MIB as u64);
    a.reset_accumulated_stats();
    let s = a.stats().aggregate;
    assert_eq!(
        (s.allocated_bytes.allocated, s.alloc_requests, s.cache_hits),
        (0, 0, 0)
    );
    assert_eq!(s.allocated_bytes.current, (3 * MIB + 512 + 1536) as u64);

    a.free(y).unwrap();
    a.free(w).unwrap();
    a.empty_cache().unwrap();
    let s = a.stats().aggregate;
    assert_eq!(s.reserved_bytes.current, 0);
    assert_eq!(s.active_bytes.current, 0);
    assert_eq!(s.requested_bytes.current, 0);
    assert_eq!((s.backend_frees, s.segments.current), (2, 0));
}

#[test]
fn concurrent_use_from_threads() {
    let mock = Mock::new();
    let a = Arc::new(allocator(&mock));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let a = a.clone();
            std::thread::spawn(move || {
                let mut live = Vec::new();
                for i in 0..2000usize {
                    live.push(a.allocate((i * 977 + t * 13) % (3 * MIB), t % 2).unwrap());
                    if i % 3 == 0 {
                        a.free(live.swap_remove(i % live.len())).unwrap();
                    }
                }
                for b in live {
                    a.free(b).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = a.stats().aggregate;
    assert_eq!(s.allocations.current, 0);
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 0);
}

// ---- training-like trace ------------------------------------------------------

/// SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Log-uniform in `[lo, hi)`.
    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
        (l + u * (h - l)).exp() as usize
    }
}

/// Tensor sizes of a training step: half small (256 B – 1 MiB), a third
/// medium (1 – 10 MiB), the rest large (10 – 64 MiB), log-uniform within
/// each class.
pub(super) fn trace_sizes(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng(seed);
    (0..n)
        .map(|_| match rng.next() % 100 {
            0..50 => rng.log_uniform(256, MIB),
            50..85 => rng.log_uniform(MIB, 10 * MIB),
            _ => rng.log_uniform(10 * MIB, 64 * MIB),
        })
        .collect()
}

#[test]
fn training_trace_hits_the_cache_and_stays_compact() {
    const TENSORS: usize = 1000;
    const ITERS: usize = 100;
    let sizes = trace_sizes(TENSORS, 42);
    let mock = Mock::new();
    let a = allocator(&mock);
    let mut live: Vec<Option<Block<usize>>> = sizes
        .iter()
        .map(|&n| Some(a.allocate(n, 0).unwrap()))
        .collect();
    a.reset_accumulated_stats();
    let mut per_iter_ns = Vec::with_capacity(ITERS);
    for _ in 0..ITERS {
        let start = std::time::Instant::now();
        for (slot, &n) in live.iter_mut().zip(&sizes) {
            if let Some(old) = slot.take() {
                a.free(old).unwrap();
            }
            *slot = Some(a.allocate(n, 0).unwrap());
        }
        per_iter_ns.push(start.elapsed().as_nanos() as f64 / TENSORS as f64);
    }
    per_iter_ns.sort_by(f64::total_cmp);
    let s = a.stats().aggregate;
    let hit_rate = s.hit_rate();
    let ratio = s.reserved_bytes.peak as f64 / s.allocated_bytes.peak as f64;
    println!(
        "training trace: {:.1} ns per alloc+free pair (median of {ITERS} iterations, \
         {} build), hit rate {:.4}, peak reserved / peak allocated {:.3} \
         ({} / {}), {} segments",
        per_iter_ns[ITERS / 2],
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        hit_rate,
        ratio,
        format_size(s.reserved_bytes.peak),
        format_size(s.allocated_bytes.peak),
        s.segments.current,
    );
    assert!(hit_rate >= 0.99, "hit rate {hit_rate}");
    assert!(ratio <= 1.3, "reserved/allocated {ratio}");
    for b in live.into_iter().flatten() {
        a.free(b).unwrap();
    }
    a.empty_cache().unwrap();
    assert_eq!(mock.live_count(), 0);
}

// ---- property test ------------------------------------------------------------

mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Step {
        Alloc(usize, usize),
        Free(usize),
        Record(usize, usize),
        Complete(usize),
        EmptyCache,
    }

    fn size() -> impl Strategy<Value = usize> {
        prop_oneof![
            4 => 0..4096usize,
            3 => 4096..MIB,
            2 => MIB..12 * MIB,
            1 => 12 * MIB..48 * MIB,
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (size(), 0..2usize).prop_map(|(n, s)| Step::Alloc(n, s)),
            4 => any::<usize>().prop_map(Step::Free),
            2 => (any::<usize>(), 0..3usize).prop_map(|(i, s)| Step::Record(i, s)),
            1 => (0..3usize).prop_map(Step::Complete),
            1 => Just(Step::EmptyCache),
        ]
    }

    fn check(a: &CachingAllocator<Mock>, mock: &Mock, live: &[Block<usize>]) {
        // Live blocks never overlap.
        let mut spans: Vec<(usize, usize)> = live.iter().map(|b| (addr(b), b.size())).collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
        }
        // Each lies within a live backend allocation.
        let segs = mock.live();
        for &(p, n) in &spans {
            let (&base, &len) = segs.range(..=p).next_back().expect("inside a segment");
            assert!(p + n <= base + len);
        }
        // The figures match.
        let s = a.stats().aggregate;
        let live_bytes: usize = live.iter().map(Block::size).sum();
        assert_eq!(s.allocated_bytes.current, live_bytes as u64);
        assert_eq!(s.allocations.current, live.len() as u64);
        assert!(s.allocated_bytes.current <= s.active_bytes.current);
        assert!(s.active_bytes.current <= s.reserved_bytes.current);
        assert_eq!(s.reserved_bytes.current, mock.live_bytes() as u64);
        assert_eq!(s.segments.current, segs.len() as u64);
        // Segments are tiled by their blocks, with no two free neighbours.
        let snap = a.snapshot();
        assert_eq!(snap.len(), segs.len());
        let mut allocated = 0;
        for seg in &snap {
            assert_eq!(segs.get(&seg.address), Some(&seg.size));
            let mut at = seg.address;
            for b in &seg.blocks {
                assert_eq!(b.address, at);
                assert_eq!(b.size % MIN_BLOCK_SIZE, 0);
                at += b.size;
                allocated += usize::from(b.state == BlockState::Allocated);
            }
            assert_eq!(at, seg.address + seg.size);
            for w in seg.blocks.windows(2) {
                assert!(!(w[0].state == BlockState::Free && w[1].state == BlockState::Free));
            }
        }
        assert_eq!(allocated, live.len());
        assert_consistent(a);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn random_sequences_keep_the_invariants(
            steps in prop::collection::vec(step(), 1..120),
            max_split in any::<bool>(),
        ) {
            let mock = Mock::with_capacity(96 * MIB);
            let cfg = AllocatorConfig {
                max_split_size: max_split.then_some(24 * MIB),
                ..AllocatorConfig::default()
            };
            let a = CachingAllocator::new(mock.clone(), cfg).unwrap();
            let mut live: Vec<Block<usize>> = Vec::new();
            for step in steps {
                match step {
                    Step::Alloc(n, s) => match a.allocate(n, s) {
                        Ok(b) => {
                            prop_assert!(b.size() >= n);
                            prop_assert_eq!(b.stream(), s);
                            live.push(b);
                        }
                        Err(e) => prop_assert_eq!(e.code(), Some(ErrorCode::RtMemoryAllocation)),
                    },
                    Step::Free(i) if !live.is_empty() => {
                        let b = live.swap_remove(i % live.len());
                        a.free(b).unwrap();
                    }
                    Step::Record(i, s) if !live.is_empty() => {
                        a.record_stream(&live[i % live.len()], s);
                    }
                    Step::Complete(s) => mock.complete(s),
                    Step::EmptyCache => a.empty_cache().unwrap(),
                    _ => {}
                }
                check(&a, &mock, &live);
            }
            for b in live.drain(..) {
                a.free(b).unwrap();
            }
            a.empty_cache().unwrap();
            check(&a, &mock, &live);
            prop_assert_eq!(mock.live_count(), 0);
            let s = a.stats();
            prop_assert_eq!(s.aggregate.reserved_bytes.current, 0);
            prop_assert_eq!(s.aggregate.active_bytes.current, 0);
            prop_assert_eq!(s.pending_events, 0);
        }
    }
}

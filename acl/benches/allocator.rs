//! The caching allocator's alloc+free pair, over a mock backend that hands
//! out fake addresses (nothing is dereferenced).
//!
//! `cargo bench -p acl --bench allocator`

#![allow(missing_docs, reason = "criterion's macros generate the entry points")]

use acl::allocator::{AllocatorConfig, Backend, Block, CachingAllocator};
use criterion::{Criterion, black_box, criterion_group, criterion_main};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

const MIB: usize = 1024 * 1024;

/// Fake device memory: a bump pointer; events are always complete.
struct Bump(AtomicUsize);

impl Backend for Bump {
    type Stream = usize;
    type Event = ();

    fn malloc(&self, bytes: usize) -> acl::Result<NonNull<u8>> {
        let addr = self.0.fetch_add(bytes + MIB, Ordering::Relaxed);
        Ok(NonNull::new(std::ptr::without_provenance_mut(addr)).expect("non-null"))
    }
    unsafe fn free(&self, _: NonNull<u8>, _: usize) -> acl::Result<()> {
        Ok(())
    }
    fn record_event(&self, _: usize) -> acl::Result<()> {
        Ok(())
    }
    fn event_complete(&self, _: &()) -> acl::Result<bool> {
        Ok(true)
    }
    fn synchronize_event(&self, _: &()) -> acl::Result<()> {
        Ok(())
    }
}

fn allocator() -> CachingAllocator<Bump> {
    CachingAllocator::new(Bump(AtomicUsize::new(1 << 40)), AllocatorConfig::default())
        .expect("valid config")
}

/// The tests' trace: half small (256 B – 1 MiB), a third medium
/// (1 – 10 MiB), the rest large (10 – 64 MiB), log-uniform (SplitMix64,
/// seed 42).
fn trace_sizes(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let log_uniform = |next: &mut dyn FnMut() -> u64, lo: usize, hi: usize| {
        let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
        let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
        (l + u * (h - l)).exp() as usize
    };
    (0..n)
        .map(|_| match next() % 100 {
            0..50 => log_uniform(&mut next, 256, MIB),
            50..85 => log_uniform(&mut next, MIB, 10 * MIB),
            _ => log_uniform(&mut next, 10 * MIB, 64 * MIB),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    // 1,000 live tensors; each step frees one and allocates it again, in
    // order, as a training iteration does.
    let sizes = trace_sizes(1000, 42);
    let a = allocator();
    let mut live: Vec<Option<Block<usize>>> = sizes
        .iter()
        .map(|&n| Some(a.allocate(n, 0).expect("allocate")))
        .collect();
    let mut i = 0;
    c.bench_function("allocator/training_trace_free_alloc_pair", |b| {
        b.iter(|| {
            if let Some(old) = live[i].take() {
                a.free(old).expect("free");
            }
            live[i] = Some(a.allocate(black_box(sizes[i]), 0).expect("allocate"));
            i = (i + 1) % sizes.len();
        })
    });
    let s = a.stats().aggregate;
    eprintln!(
        "training trace: hit rate {:.4}, peak reserved / peak allocated {:.3}",
        s.hit_rate(),
        s.reserved_bytes.peak as f64 / s.allocated_bytes.peak as f64
    );
    for b in live.into_iter().flatten() {
        a.free(b).expect("free");
    }

    let a = allocator();
    c.bench_function("allocator/same_size_alloc_free_pair", |b| {
        b.iter(|| {
            let x = a.allocate(black_box(4096), 0).expect("allocate");
            a.free(x).expect("free");
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

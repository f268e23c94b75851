//! The pinned host memory pool: reuse only after the queued copies ran.

mod common;

use acl::memory::{PinnedPool, PinnedPoolStats};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn a_dropped_buffer_is_reused_only_after_its_queued_copy_has_run() {
    let npu = common::device(0);
    let pool = PinnedPool::new(&npu);
    let s = npu.new_stream().unwrap();
    let (release, held) = mpsc::channel::<()>();
    s.launch_host_fn(move || {
        let _ = held.recv_timeout(Duration::from_secs(20));
    })
    .unwrap();
    let staging = pool.from_slice(&[7u32; 1024]).unwrap();
    let on_device = s.clone_from_pinned(&staging).unwrap();
    drop(staging);
    // The copy has not run: its block is not free, a new one is pinned
    // (and writing it cannot change what the copy reads).
    let other = pool.from_slice(&[9u32; 1024]).unwrap();
    assert_eq!(pool.stats().host_allocations, 2);
    assert_eq!(pool.stats().reuses, 0);
    release.send(()).unwrap();
    s.synchronize().unwrap();
    assert_eq!(on_device.to_host_vec().unwrap(), vec![7u32; 1024]);
    drop(other);
    let again = pool.zeroed::<u32>(1024).unwrap();
    assert_eq!(
        again.as_slice().unwrap(),
        [0u32; 1024],
        "reused blocks are zeroed"
    );
    let st = pool.stats();
    assert_eq!((st.host_allocations, st.reuses), (2, 1), "{st:?}");
}

#[test]
fn sizes_in_one_power_of_two_class_share_blocks() {
    let npu = common::device(0);
    let pool = PinnedPool::new(&npu);
    drop(pool.zeroed::<u8>(100).unwrap());
    drop(pool.zeroed::<u8>(4000).unwrap());
    drop(pool.zeroed::<u16>(2048).unwrap());
    let st = pool.stats();
    assert_eq!(
        st,
        PinnedPoolStats {
            in_use_bytes: 0,
            cached_bytes: 4096,
            host_allocations: 1,
            reuses: 2,
        }
    );
    drop(pool.zeroed::<u8>(4097).unwrap());
    assert_eq!(pool.stats().host_allocations, 2, "8 KiB is another class");
}

#[test]
fn empty_cache_frees_the_cached_blocks_and_keeps_the_live_ones() {
    let npu = common::device(0);
    let pool = PinnedPool::new(&npu);
    let live = pool.from_slice(&[1.5f32; 10]).unwrap();
    drop(pool.zeroed::<f32>(10_000).unwrap());
    assert_eq!(pool.stats().cached_bytes, 65536);
    pool.empty_cache().unwrap();
    let st = pool.stats();
    assert_eq!((st.cached_bytes, st.in_use_bytes), (0, 4096), "{st:?}");
    assert_eq!(live.as_slice().unwrap(), [1.5f32; 10]);
}

#[test]
fn buffers_outlive_their_pool_handle_and_are_freed_at_the_end() {
    let _ = acl::take_release_errors();
    let npu = common::device(0);
    let pool = PinnedPool::new(&npu);
    let buf = pool.from_slice(&[3u64; 100]).unwrap();
    drop(pool);
    assert_eq!(buf.as_slice().unwrap()[99], 3);
    let s = npu.new_stream().unwrap();
    let d = s.clone_from_pinned(&buf).unwrap();
    drop(buf);
    s.synchronize().unwrap();
    assert_eq!(d.to_host_vec().unwrap()[0], 3);
    assert!(acl::take_release_errors().is_empty());
}

#[test]
fn an_empty_buffer_takes_no_block() {
    let npu = common::device(0);
    let pool = PinnedPool::new(&npu);
    let b = pool.zeroed::<u32>(0).unwrap();
    assert!(b.is_empty());
    assert_eq!(pool.stats(), PinnedPoolStats::default());
}

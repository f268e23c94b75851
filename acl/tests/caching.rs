//! The caching allocator behind `DeviceBuffer`, on the simulator.

mod common;

use acl::Error;
use acl::allocator::AllocatorConfig;

#[test]
fn buffers_reuse_cached_blocks_on_their_stream() {
    cann_sim::require_devices!(7);
    // A device of its own: one `Device` per ordinal, so tests sharing an
    // ordinal share its allocator.
    let npu = common::device(6);
    npu.enable_caching_allocator(AllocatorConfig::default())
        .unwrap();
    let alloc = npu.caching_allocator().unwrap();
    let stream = npu.new_stream().unwrap();
    let first = stream.clone_from_host(&[1u32; 1000]).unwrap();
    let addr = first.as_raw_ptr();
    drop(first);
    let second = stream.clone_from_host(&[2u32; 1000]).unwrap();
    assert_eq!(
        second.as_raw_ptr(),
        addr,
        "same stream: the cached block again"
    );
    assert_eq!(second.to_host_vec().unwrap(), vec![2u32; 1000]);
    let stats = alloc.stats();
    assert_eq!(stats.aggregate.backend_mallocs, 1);
    assert!(stats.aggregate.cache_hits >= 1);
    // Another stream gets its own block.
    let other = npu.new_stream().unwrap();
    let third = other.clone_from_host(&[3u32; 1000]).unwrap();
    assert_ne!(third.as_raw_ptr(), addr);
    drop((second, third));
    alloc.empty_cache().unwrap();
    assert_eq!(alloc.stats().aggregate.reserved_bytes.current, 0);
}

#[test]
fn enabling_twice_is_rejected() {
    cann_sim::require_devices!(8);
    let npu = common::device(7);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    assert_eq!(
        npu.enable_caching_allocator(AllocatorConfig::default())
            .unwrap_err(),
        Error::InvalidArgument {
            function: "Device::enable_caching_allocator",
            reason: "this device already has a caching allocator".into()
        }
    );
}

#[test]
fn freed_block_is_not_reused_before_queued_work_on_it_finishes() {
    cann_sim::require_devices!(8);
    let npu = common::device(7);
    let _ = npu.enable_caching_allocator(AllocatorConfig::default());
    let stream = npu.new_stream().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let mut a = stream.alloc_zeros::<u8>(4096).unwrap();
    stream.launch_host_fn(move || rx.recv().unwrap()).unwrap();
    stream.memset(&mut a, 0xaa).unwrap();
    let addr = a.as_raw_ptr();
    drop(a); // returns the block without waiting
    let mut b = stream.alloc_zeros::<u8>(4096).unwrap(); // same block, queued after the memset
    assert_eq!(b.as_raw_ptr(), addr);
    stream.memset(&mut b, 0x11).unwrap();
    tx.send(()).unwrap();
    assert!(b.to_host_vec().unwrap().iter().all(|&x| x == 0x11));
    assert_eq!(b.len(), 4096);
}

/// Buffers from the caching allocator and from `aclrtMalloc` directly start
/// at multiples of 512 bytes (the driver's alignment, kept by every block).
#[test]
fn buffers_start_at_multiples_of_512_bytes_with_and_without_the_cache() {
    cann_sim::require_devices!(8);
    let cached = common::device(7);
    let _ = cached.enable_caching_allocator(AllocatorConfig::default());
    let stream = cached.new_stream().unwrap();
    let mut live = Vec::new();
    for len in [1usize, 7, 100, 129, 1000, 300_000] {
        let b = stream.clone_from_host(&vec![1u8; len]).unwrap();
        assert_eq!(b.as_raw_ptr() as usize % 512, 0, "cached, {len} bytes");
        live.push(b);
    }
    let direct = common::device(0);
    for len in [1usize, 7, 100, 129, 1000, 300_000] {
        let b = acl::DeviceBuffer::from_host(&direct, &vec![1u8; len]).unwrap();
        assert_eq!(b.as_raw_ptr() as usize % 512, 0, "aclrtMalloc, {len} bytes");
        live.push(b);
    }
    assert_eq!(acl::allocator::ALIGNMENT, 512);
}

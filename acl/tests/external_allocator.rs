//! `Stream::register_allocator`: the runtime's consumers (graph execution,
//! operator workspaces) find the registered allocator with
//! `aclrtAllocatorGetByStream` and call it; these tests play that consumer.

use acl::allocator::external::{AllocatorRegistration, ExternalAllocator};
use acl::result::{self, raw};
use acl::{Device, ErrorCode, Runtime};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn device() -> Device {
    cann_sim::install().expect("cann-sim installs");
    Device::new(&Runtime::init().unwrap(), 0).unwrap()
}

/// Device memory from `aclrtMalloc`, counted.
#[derive(Default)]
struct Counting {
    allocs: AtomicUsize,
    frees: AtomicUsize,
    bytes_freed: AtomicUsize,
}

impl ExternalAllocator for Counting {
    fn alloc(&self, size: usize) -> Option<*mut c_void> {
        self.allocs.fetch_add(1, Ordering::SeqCst);
        result::malloc(size, raw::ACL_MEM_MALLOC_HUGE_FIRST).ok()
    }

    fn free(&self, addr: *mut c_void, size: usize) {
        self.frees.fetch_add(1, Ordering::SeqCst);
        self.bytes_freed.fetch_add(size, Ordering::SeqCst);
        // SAFETY: memory `alloc` returned, freed once (the runtime frees each
        // block once).
        unsafe { result::free(addr) }.unwrap();
    }
}

/// Allocates `size` bytes through what is registered on `stream`, writes
/// to it, and frees it, as a runtime consumer does; the block's address.
fn consume(stream: &acl::Stream, size: usize) -> Option<usize> {
    // SAFETY: a live stream.
    let (_, obj, alloc, free, _, addr_of) =
        unsafe { result::allocator_get_by_stream(stream.as_raw()) }.ok()?;
    // SAFETY: the registered functions with their object, as the runtime
    // calls them.
    unsafe {
        let block = alloc.unwrap()(obj, size);
        if block.is_null() {
            return None;
        }
        let addr = addr_of.unwrap()(block);
        // The address is device memory of that size.
        result::memset(addr, size, 0x5a, size).unwrap();
        free.unwrap()(obj, block);
        Some(addr as usize)
    }
}

#[test]
fn the_runtime_allocates_and_frees_through_the_registered_allocator() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mine = Arc::new(Counting::default());
    let reg = s.register_allocator(mine.clone()).unwrap();
    assert!(consume(&s, 4096).is_some());
    assert_eq!(mine.allocs.load(Ordering::SeqCst), 1);
    assert_eq!(mine.frees.load(Ordering::SeqCst), 1);
    assert_eq!(mine.bytes_freed.load(Ordering::SeqCst), 4096);
    drop(reg);
    // SAFETY: a live stream.
    let e = unsafe { result::allocator_get_by_stream(s.as_raw()) }.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidParam), "{e}");
}

#[test]
fn dropping_a_replaced_registration_leaves_the_newer_one() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let (first, second) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let a: AllocatorRegistration<'_> = s.register_allocator(first.clone()).unwrap();
    let b = s.register_allocator(second.clone()).unwrap();
    drop(a);
    assert!(consume(&s, 64).is_some());
    assert_eq!(first.allocs.load(Ordering::SeqCst), 0);
    assert_eq!(second.allocs.load(Ordering::SeqCst), 1);
    drop(b);
}

#[test]
fn a_block_outlives_its_registration_and_returns_to_its_allocator() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let mine = Arc::new(Counting::default());
    let reg = s.register_allocator(mine.clone()).unwrap();
    // SAFETY: a live stream.
    let (_, obj, alloc, free, _, _) =
        unsafe { result::allocator_get_by_stream(s.as_raw()) }.unwrap();
    // SAFETY: the registered function with its object.
    let block = unsafe { alloc.unwrap()(obj, 512) };
    assert!(!block.is_null());
    drop(reg);
    // SAFETY: the runtime frees the block it holds; the free function does
    // not use the object.
    unsafe { free.unwrap()(std::ptr::null_mut(), block) };
    assert_eq!(mine.frees.load(Ordering::SeqCst), 1);
}

struct Panicking;

impl ExternalAllocator for Panicking {
    fn alloc(&self, _: usize) -> Option<*mut c_void> {
        panic!("out of ideas");
    }
    fn free(&self, _: *mut c_void, _: usize) {}
}

#[test]
fn a_panicking_allocator_is_a_failed_allocation_for_the_runtime() {
    let npu = device();
    let s = npu.new_stream().unwrap();
    let _reg = s.register_allocator(Arc::new(Panicking)).unwrap();
    assert_eq!(consume(&s, 64), None);
}

#[test]
fn the_default_stream_cannot_register_an_allocator() {
    let npu = device();
    let e = npu
        .default_stream()
        .register_allocator(Arc::new(Counting::default()))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Stream::register_allocator: the default stream cannot have an allocator registered; \
         use a created stream"
    );
}

#[test]
fn a_registration_is_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<AllocatorRegistration<'static>>();
}

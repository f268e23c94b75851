//! Handing a program's own allocator to CANN (`aclrtAllocator*`): the
//! libraries that need device memory for work on a stream (graph
//! execution, operator workspaces) take it from the allocator registered on
//! that stream instead of calling `aclrtMalloc`, so a framework keeps all
//! device memory in its own pool — what torch_npu does with its caching
//! allocator.
//!
//! Implement [`ExternalAllocator`] and register it with
//! [`Stream::register_allocator`]; the returned [`AllocatorRegistration`]
//! unregisters it when dropped. The runtime calls the allocator from its
//! own threads, so it must be `Send + Sync`; a panic inside it is caught and
//! reported to the runtime as a failed allocation (or an ignored free).
//!
//! Blocks the runtime still holds when the registration ends stay valid:
//! each keeps its allocator alive until the runtime frees it.

use crate::error::Result;
use crate::{Stream, release, result};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

/// A device-memory allocator the runtime may call (see the [module
/// docs](self)).
pub trait ExternalAllocator: Send + Sync + 'static {
    /// Allocates at least `size` bytes of device memory of the stream's
    /// device; its address, or `None` when it cannot.
    fn alloc(&self, size: usize) -> Option<*mut c_void>;

    /// Allocates `size` bytes, preferably at `hint` (the runtime's
    /// `allocAdvise`); by default [`ExternalAllocator::alloc`], ignoring the
    /// hint.
    fn alloc_at(&self, size: usize, hint: *mut c_void) -> Option<*mut c_void> {
        let _ = hint;
        self.alloc(size)
    }

    /// Gives back memory [`ExternalAllocator::alloc`] returned, with the
    /// size asked for.
    fn free(&self, addr: *mut c_void, size: usize);
}

/// What the runtime holds as a block: the address and who frees it.
struct Block {
    addr: *mut c_void,
    size: usize,
    owner: Arc<dyn ExternalAllocator>,
}

/// The allocator object handed to the runtime (`aclrtAllocator`).
struct Object {
    inner: Arc<dyn ExternalAllocator>,
}

/// `aclrtAllocatorAllocFunc`.
unsafe extern "C" fn alloc_fn(obj: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `obj` is the `Object` registered, kept alive by the
    // registration for as long as the runtime may call this.
    let obj = unsafe { &*obj.cast::<Object>() };
    block_of(obj, size, |a| a.alloc(size))
}

/// `aclrtAllocatorAllocAdviseFunc`.
unsafe extern "C" fn alloc_advise_fn(
    obj: *mut c_void,
    size: usize,
    hint: *mut c_void,
) -> *mut c_void {
    // SAFETY: as in `alloc_fn`.
    let obj = unsafe { &*obj.cast::<Object>() };
    block_of(obj, size, |a| a.alloc_at(size, hint))
}

/// A new block for what `get` allocates, or null (also on a panic).
fn block_of(
    obj: &Object,
    size: usize,
    get: impl FnOnce(&dyn ExternalAllocator) -> Option<*mut c_void>,
) -> *mut c_void {
    let inner = &obj.inner;
    match catch_unwind(AssertUnwindSafe(|| get(inner.as_ref()))) {
        Ok(Some(addr)) if !addr.is_null() => Box::into_raw(Box::new(Block {
            addr,
            size,
            owner: Arc::clone(inner),
        }))
        .cast(),
        _ => std::ptr::null_mut(),
    }
}

/// `aclrtAllocatorFreeFunc`.
unsafe extern "C" fn free_fn(_obj: *mut c_void, block: *mut c_void) {
    if block.is_null() {
        return;
    }
    // SAFETY: the runtime frees a block it got from `alloc_fn` or
    // `alloc_advise_fn` (a boxed `Block`) once.
    let block = unsafe { Box::from_raw(block.cast::<Block>()) };
    let _ = catch_unwind(AssertUnwindSafe(|| {
        block.owner.free(block.addr, block.size)
    }));
}

/// `aclrtAllocatorGetAddrFromBlockFunc`.
unsafe extern "C" fn addr_fn(block: *mut c_void) -> *mut c_void {
    if block.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: a live block of ours (the runtime asks before freeing it).
    unsafe { (*block.cast::<Block>()).addr }
}

/// An allocator registered on a stream; unregistered when dropped.
///
/// `Send + Sync`: it holds the stream's handle by borrow and the allocator
/// object, which is `Send + Sync`.
#[must_use = "the allocator is unregistered when the registration is dropped"]
pub struct AllocatorRegistration<'s> {
    stream: &'s Stream,
    desc: result::raw::aclrtAllocatorDesc,
    registered: bool,
    _object: Box<Object>,
}

// SAFETY: `desc` is a handle the runtime keeps no thread affinity for, used
// only in `drop`; the rest is `Send + Sync`.
unsafe impl Send for AllocatorRegistration<'_> {}
// SAFETY: as above; `&self` exposes nothing.
unsafe impl Sync for AllocatorRegistration<'_> {}

impl std::fmt::Debug for AllocatorRegistration<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AllocatorRegistration")
            .field("stream", self.stream)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// Registers `allocator` for the runtime's allocations for work on this
    /// stream, until the returned registration is dropped. A second
    /// registration on the stream replaces the first for the runtime.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for the
    /// default stream (the runtime keys registrations by a stream handle,
    /// and the default stream has none); the runtime's error otherwise.
    #[doc(alias = "aclrtAllocatorRegister")]
    pub fn register_allocator(
        &self,
        allocator: Arc<dyn ExternalAllocator>,
    ) -> Result<AllocatorRegistration<'_>> {
        if self.as_raw().is_null() {
            return Err(crate::Error::invalid(
                "Stream::register_allocator",
                "the default stream cannot have an allocator registered; use a created stream",
            ));
        }
        let object = Box::new(Object { inner: allocator });
        let desc = result::allocator_create_desc()?;
        let mut reg = AllocatorRegistration {
            stream: self,
            desc,
            registered: false,
            _object: object,
        };
        let obj = (&*reg._object as *const Object).cast_mut().cast::<c_void>();
        // SAFETY: `desc` is live until `reg` drops; the functions and the
        // object stay valid while registered (the object is boxed in `reg`,
        // the functions are statics).
        unsafe {
            result::allocator_set_obj_to_desc(desc, obj)?;
            result::allocator_set_alloc_func_to_desc(desc, Some(alloc_fn))?;
            result::allocator_set_free_func_to_desc(desc, Some(free_fn))?;
            result::allocator_set_alloc_advise_func_to_desc(desc, Some(alloc_advise_fn))?;
            result::allocator_set_get_addr_from_block_func_to_desc(desc, Some(addr_fn))?;
            result::allocator_register(self.as_raw(), desc)?;
        }
        reg.registered = true;
        Ok(reg)
    }
}

impl Drop for AllocatorRegistration<'_> {
    fn drop(&mut self) {
        // SAFETY: the stream is borrowed, so live; the description is ours,
        // destroyed once, here, after the registration that copied it ends.
        unsafe {
            // Only this registration is undone: a later one on the stream
            // (which replaced it in the runtime) stays.
            let ours = self.registered
                && result::allocator_get_by_stream(self.stream.as_raw())
                    .is_ok_and(|r| r.0 == self.desc);
            if ours && let Err(e) = result::allocator_unregister(self.stream.as_raw()) {
                release::record("AllocatorRegistration", e);
            }
            if let Err(e) = result::allocator_destroy_desc(self.desc) {
                release::record("AllocatorRegistration", e);
            }
        }
    }
}

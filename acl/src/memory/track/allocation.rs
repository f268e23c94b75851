//! The allocation record: one allocation's memory, what owns it
//! ([`Backing`]), the record of its queued accesses
//! ([`AccessState`]), and what its last handle does (give the memory back
//! after the marks, then leave the heap record to the device's spare slot,
//! see [`recycle`](super::recycle)).

use super::access_state::AccessState;
use super::host_wait::host_wait;
use super::mark::{Mark, MarkStream};
use super::release::{Release, cache_of};
use crate::allocator::Block;
use crate::error::Result;
use crate::memory::gate::Gate;
use crate::{Device, Stream, release};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

/// What owns the memory, and how it is given back.
pub(crate) enum Backing {
    /// Nothing (an empty buffer).
    Empty,
    /// `aclrtMalloc`.
    Direct,
    /// A block of the device's caching allocator, allocated for `stream`.
    Cached(Block<usize>),
    /// `aclrtMallocHost`.
    Pinned,
    /// A block of a [`PinnedPool`](crate::memory::PinnedPool) of this many bytes,
    /// returned to the pool instead of freed.
    PinnedPooled(Arc<crate::memory::pinned_pool::PoolInner>, usize),
    /// Memory another library owns (borrowed with
    /// [`DeviceBuffer::from_raw_borrowed`](crate::memory::DeviceBuffer::from_raw_borrowed),
    /// or handed out by [`DeviceBuffer::into_raw`](crate::memory::DeviceBuffer::into_raw)):
    /// never freed here.
    Foreign,
    /// Host memory registered with `aclrtHostRegister` (the allocation's
    /// address is its device address): unregistered, then handed back to
    /// its owner (dropped), once every recorded access has finished.
    Registered(super::registered::RegisteredHost),
}

/// One allocation and the record of its queued accesses (see the module
/// docs). Shared (`Arc`) by the buffer that owns it and by anything that
/// must keep it alive until queued work has been recorded (HCCL groups).
///
/// `Send + Sync`: the address is never dereferenced by this type; the
/// state is behind a lock.
pub struct Allocation {
    pub(super) ptr: *mut c_void,
    pub(super) bytes: usize,
    /// `None` only while the record is its device's spare
    /// ([`recycle`](super::recycle)), where no handle reaches it.
    pub(super) device: Option<Device>,
    pub(super) backing: Mutex<Option<Backing>>,
    pub(super) state: Mutex<AccessState>,
    /// Host views of pinned memory (shared) and graph launches (exclusive):
    /// a launch may not queue work on memory a `&[T]`/`&mut [T]` borrows.
    pub(crate) views: Gate,
}

// SAFETY: `ptr` is an address this type never dereferences; everything else
// is Send + Sync (the backing and state are behind locks).
unsafe impl Send for Allocation {}
// SAFETY: as above.
unsafe impl Sync for Allocation {}

// A panic never leaves the record half-updated where it matters: each
// lock guards a state that every step leaves consistent (a panic between
// steps at most keeps marks, which only makes later uses wait longer).
impl std::panic::RefUnwindSafe for Allocation {}
impl std::panic::UnwindSafe for Allocation {}

impl std::fmt::Debug for Allocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Allocation")
            .field("ptr", &self.ptr)
            .field("bytes", &self.bytes)
            .field("device", &self.device.as_ref().map(Device::ordinal))
            .finish()
    }
}

impl Allocation {
    /// Wraps memory that was just allocated (no queued access uses it).
    pub(crate) fn new(
        ptr: *mut c_void,
        bytes: usize,
        device: &Device,
        backing: Backing,
    ) -> Arc<Allocation> {
        Self::with_write(ptr, bytes, device, backing, None)
    }

    /// An allocation whose last write is `write`: the device's spare
    /// record filled in place, or a new one.
    #[inline]
    fn with_write(
        ptr: *mut c_void,
        bytes: usize,
        device: &Device,
        backing: Backing,
        write: Option<Mark>,
    ) -> Arc<Allocation> {
        if let Some(mut record) = device.inner.tracking.spare.take()
            && let Some(a) = Arc::get_mut(&mut record)
        {
            // A spare holds no memory, marks or device (see `recycle`):
            // the `None`s replaced need no drop (forgetting one frees
            // nothing; were one not `None`, it would leak, never be freed
            // twice).
            a.ptr = ptr;
            a.bytes = bytes;
            std::mem::forget(a.device.replace(device.clone()));
            std::mem::forget(a.backing.get_mut().replace(backing));
            std::mem::forget(std::mem::replace(&mut a.state.get_mut().write, write));
            return record;
        }
        Self::new_record(ptr, bytes, device, backing, write)
    }

    #[cold]
    #[inline(never)]
    fn new_record(
        ptr: *mut c_void,
        bytes: usize,
        device: &Device,
        backing: Backing,
        write: Option<Mark>,
    ) -> Arc<Allocation> {
        Arc::new(Allocation {
            ptr,
            bytes,
            device: Some(device.clone()),
            backing: Mutex::new(Some(backing)),
            state: Mutex::new(AccessState {
                write,
                ..AccessState::default()
            }),
            views: Gate::default(),
        })
    }

    /// Drops the last handle of an allocation (the memory goes back as for
    /// any drop) and keeps its heap record as the device's spare, for the
    /// next allocation. A handle that is not the last is just dropped.
    #[inline]
    pub(crate) fn recycle(mut this: Arc<Allocation>) {
        let Some(place) = Arc::get_mut(&mut this) else {
            return;
        };
        let more = place.give_back();
        // The memory is back: nothing needs the marks any more (dropping
        // one runs no code of this record; a stream's last handle goes to
        // the release thread).
        let st = place.state.get_mut();
        if st.write.is_some() {
            st.write = None;
        }
        st.awaiting.clear();
        if more || !st.links.is_empty() {
            Self::clear_marks(st);
        }
        // The spare holds no device handle: the device owns the slot.
        if let Some(device) = place.device.take() {
            device.inner.tracking.spare.put(this);
        }
    }

    /// Drops every mark but the last write, and the links to graphs (out of
    /// the fast path).
    #[cold]
    #[inline(never)]
    fn clear_marks(st: &mut AccessState) {
        st.more_writes.clear();
        st.reads.clear();
        st.links.clear();
    }

    /// Wraps a block of the device's caching allocator, taken for `stream`
    /// (the block's pool): every use follows the block's previous owner's
    /// work on it.
    ///
    /// # Safety
    ///
    /// `block` is a live handle that is never used again: the allocation
    /// takes it over.
    #[inline]
    pub(crate) unsafe fn new_cached(
        block: &Block<usize>,
        bytes: usize,
        device: &Device,
        stream: &Stream,
    ) -> Arc<Allocation> {
        let ptr = block.ptr().as_ptr().cast::<c_void>();
        let write = MarkStream::previous_owner(stream).map(Mark::Stream);
        // SAFETY: the caller gives the handle up: it stays in one place,
        // the allocation.
        let block = unsafe { std::ptr::read(block) };
        Self::with_write(ptr, bytes, device, Backing::Cached(block), write)
    }

    /// Marks the memory as initialised by the work of capture `capture`
    /// (it was allocated on a capturing stream): reads outside that graph
    /// fail until a launch of it.
    pub(crate) fn await_launch(&self, capture: u64) {
        self.state.lock().awaiting.set(capture);
    }

    /// The memory was written whole, now (a synchronous copy): it no
    /// longer waits for a graph to initialise it.
    pub(crate) fn written_now(&self) {
        self.state.lock().awaiting.clear();
    }

    /// The record of queued accesses, locked and brought up to the last
    /// launch of every graph that uses the memory (see
    /// [`launch`](super::launch)): every reader or writer of the marks
    /// locks it through here.
    #[inline(always)]
    pub(super) fn lock_state(&self) -> parking_lot::MutexGuard<'_, AccessState> {
        let mut st = self.state.lock();
        super::launch::sync(&mut st);
        st
    }

    /// [`Allocation::lock_state`] without blocking (inside a host function).
    pub(super) fn try_lock_state(&self) -> Option<parking_lot::MutexGuard<'_, AccessState>> {
        let mut st = self.state.try_lock()?;
        super::launch::sync(&mut st);
        Some(st)
    }

    /// Whether this is pinned host memory.
    pub(crate) fn is_host(&self) -> bool {
        matches!(
            *self.backing.lock(),
            Some(Backing::Pinned | Backing::PinnedPooled(..) | Backing::Registered(..))
        )
    }

    /// The first byte.
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }

    /// Its size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.bytes
    }

    /// The device whose runtime made it.
    pub fn device(&self) -> &Device {
        match &self.device {
            Some(device) => device,
            // Only a spare record has none, and no handle reaches it.
            None => unreachable!("an allocation record used while it was its device's spare"),
        }
    }

    /// Blocks the host until every recorded access has finished (for
    /// releases the runtime does not order: an HCCL window's
    /// deregistration).
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the awaited work.
    pub fn wait_idle(&self) -> Result<()> {
        host_wait(self, true)
    }

    /// The `close` of the buffers: waits for every recorded access, then
    /// gives the memory back (it is free when this returns) — unless
    /// another holder (a captured graph, an HCCL group, an [`Access`]) may
    /// still queue work on it: then only this handle goes, and the memory
    /// is released after the last holder, as for a drop.
    pub(crate) fn close(this: &Arc<Allocation>) -> Result<()> {
        if Arc::strong_count(this) > 1 {
            return Ok(());
        }
        let waited = host_wait(this, true);
        let released = this.release();
        waited.and(released)
    }

    /// Gives the memory back after its marks, without waiting.
    pub(crate) fn release(&self) -> Result<()> {
        let Some(backing) = self.backing.lock().take() else {
            return Ok(());
        };
        let marks = std::mem::take(&mut *self.lock_state());
        Release {
            ptr: self.ptr as usize,
            backing,
            marks,
            device: self.device().clone(),
        }
        .run()
    }
}

impl Allocation {
    /// Hands memory from `aclrtMalloc` over to the caller: afterwards this
    /// allocation never frees it. False (nothing changed) for memory of the
    /// caching allocator, pinned host memory or an empty buffer.
    pub(crate) fn release_ownership(&self) -> bool {
        let mut b = self.backing.lock();
        match *b {
            Some(Backing::Direct | Backing::Foreign) => {
                *b = Some(Backing::Foreign);
                true
            }
            _ => false,
        }
    }

    /// Gives the memory back after the recorded accesses (the work of the
    /// last handle's drop), leaving the marks in place on the fast path.
    /// Whether marks other than the last write may remain (not after the
    /// fast path).
    #[inline]
    pub(super) fn give_back(&mut self) -> bool {
        // The last handle: no lock needed. The marks of the graphs that
        // used it first (normally none: a graph unlinks its buffers).
        super::launch::sync(self.state.get_mut());
        let backing = self.backing.get_mut();
        let Some(device) = &self.device else {
            // A spare record: nothing to give back.
            return true;
        };
        match backing {
            None => true,
            Some(Backing::Cached(block)) if self.state.get_mut().own_stream_only(block, device) => {
                // Fast path: used on the block's own stream only, where reuse
                // is stream-ordered: straight back to the pool (the mark goes
                // with the allocation, after the free).
                if let Err(e) = cache_of(device).and_then(|alloc| alloc.free_in_place(block)) {
                    release::record("DeviceBuffer", e);
                }
                // The block was handed back just above (or refused by an
                // allocator that does not know it): the handle is spent.
                *backing = None;
                false
            }
            Some(_) => {
                self.give_back_slow();
                true
            }
        }
    }

    /// [`Allocation::give_back`] after uses on other streams, or of memory
    /// not from the caching allocator: a [`Release`] after the marks.
    #[cold]
    #[inline(never)]
    pub(super) fn give_back_slow(&mut self) {
        let Some(backing) = self.backing.get_mut().take() else {
            return;
        };
        let marks = std::mem::take(self.state.get_mut());
        let Some(device) = self.device.clone() else {
            return;
        };
        let job = Release {
            ptr: self.ptr as usize,
            backing,
            marks,
            device,
        };
        if let Err(e) = job.run() {
            release::record("DeviceBuffer", e);
        }
    }
}

impl Allocation {
    /// How many graphs' launch slots the record is linked to (for tests
    /// of the links' removal).
    #[cfg(test)]
    pub(crate) fn graph_links(&self) -> usize {
        self.state.lock().links.len()
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        let _ = self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use crate::{Device, PinnedHostBuffer, Runtime};
    use std::time::Duration;

    /// A recycled block carries no mark of its previous owners only while
    /// a synchronisation of its stream covers every recorded access: a read
    /// queued after one still holds back a host write into the block.
    #[test]
    fn a_block_reused_after_its_stream_synchronised_still_follows_work_queued_since() {
        cann_sim::install().expect("cann-sim installs");
        let npu = Device::new(&Runtime::init().expect("aclInit"), 0).expect("device");
        let _ = npu.enable_caching_allocator(Default::default());
        let stream = npu.new_stream().unwrap();
        let a = stream.clone_from_host(&[1.0f32; 256]).unwrap();
        stream.synchronize().unwrap();
        let addr = a.as_raw_ptr();
        let mut out = PinnedHostBuffer::<f32>::zeroed(&npu, 256).unwrap();
        let (release, held) = std::sync::mpsc::channel::<()>();
        stream
            .launch_host_fn(move || {
                let _ = held.recv_timeout(Duration::from_secs(30));
            })
            .unwrap();
        stream.copy_dtoh(&a, &mut out).unwrap(); // queued behind the host function
        drop(a); // back to the stream's pool while the read is queued
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(release);
        });
        // SAFETY: written below before any read.
        let mut b = unsafe { stream.alloc::<f32>(256) }.unwrap();
        assert_eq!(b.as_raw_ptr(), addr, "the same block");
        b.copy_from_host(&[2.0f32; 256]).unwrap(); // a host write: waits for the read
        releaser.join().unwrap();
        assert_eq!(out.as_slice().unwrap(), [1.0f32; 256], "the read saw 1.0");
        assert_eq!(b.to_host_vec().unwrap(), vec![2.0f32; 256]);
    }
}

//! The allocation record: one allocation's memory, what owns it
//! ([`Backing`]), the record of its queued accesses
//! ([`AccessState`]), and what its last handle does (give the memory back
//! after the marks, then leave the heap record to the device's
//! [`recycle`](super::recycle) slot).

use super::access_state::AccessState;
use super::host_wait::host_wait;
use super::recycle::Spare;
use super::release::{Release, cache_of};
use crate::allocator::Block;
use crate::error::Result;
use crate::memory::gate::Gate;
use crate::{Device, release};
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
    /// Dropped by `Drop`, or moved out by `recycle`.
    pub(super) device: std::mem::ManuallyDrop<Device>,
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
            .field("device", &self.device.ordinal())
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
        device
            .inner
            .tracking
            .record()
            .fill(ptr, bytes, device, backing, None)
    }

    /// Drops the last handle of an allocation (the memory goes back as for
    /// any drop) and keeps its heap record for the device's next
    /// allocation: a buffer allocated and dropped in a loop then costs no
    /// heap allocation. A handle that is not the last is just dropped.
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
        st.write = None;
        st.awaiting = 0;
        if more {
            Self::clear_marks(st);
        }
        let raw = Arc::into_raw(this).cast_mut();
        // SAFETY: `raw` is the value of the unique handle just given up
        // (`get_mut` proved it unique: no other handle or weak reference
        // exists to see it). It is never used as an `Allocation` again: its
        // device is moved out here, and what stays (the empty backing and
        // the state without marks, the spare's invariant; `ptr` and
        // `bytes`, which own nothing) is reused or dropped by the spare
        // slot. A panic in between leaks the record, never drops anything
        // twice.
        let device = unsafe { std::mem::ManuallyDrop::take(&mut (*raw).device) };
        // SAFETY: `MaybeUninit<Allocation>` has the size and alignment of
        // `Allocation`, which is what `Arc::from_raw` requires of a pointer
        // from `Arc::<Allocation>::into_raw`.
        let slot = Spare(unsafe { Arc::from_raw(raw.cast_const().cast()) });
        device.inner.tracking.spare.put(slot);
    }

    /// Drops every mark but the last write (out of the fast path).
    #[cold]
    #[inline(never)]
    pub(super) fn clear_marks(st: &mut AccessState) {
        st.more_writes.clear();
        st.reads.clear();
    }

    /// Marks the memory as initialised by the work of capture `capture`
    /// (it was allocated on a capturing stream): reads outside that graph
    /// fail until a launch of it.
    pub(crate) fn await_launch(&self, capture: u64) {
        self.state.lock().awaiting = capture;
    }

    /// A launch of the graph of `capture` is queued (and recorded): the
    /// memory it initialises counts as written.
    pub(crate) fn launched(&self, capture: u64) {
        let mut st = self.state.lock();
        if st.awaiting == capture {
            st.awaiting = 0;
        }
    }

    /// The memory was written whole, now (a synchronous copy): it no
    /// longer waits for a graph to initialise it.
    pub(crate) fn written_now(&self) {
        self.state.lock().awaiting = 0;
    }

    /// Whether this is pinned host memory.
    pub(crate) fn is_host(&self) -> bool {
        matches!(
            *self.backing.lock(),
            Some(Backing::Pinned | Backing::PinnedPooled(..))
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
        &self.device
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
        let marks = std::mem::take(&mut *self.state.lock());
        Release {
            ptr: self.ptr as usize,
            backing,
            marks,
            device: (*self.device).clone(),
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
        // The last handle: no lock needed.
        let backing = self.backing.get_mut();
        match backing {
            None => true,
            Some(Backing::Cached(block))
                if self.state.get_mut().own_stream_only(block, &self.device) =>
            {
                // Fast path: used on the block's own stream only, where reuse
                // is stream-ordered: straight back to the pool (the mark goes
                // with the allocation, after the free).
                if let Err(e) = cache_of(&self.device).and_then(|alloc| alloc.free_in_place(block))
                {
                    release::record("DeviceBuffer", e);
                }
                // SAFETY: the block was handed back just above (or refused
                // by an allocator that does not know it): the handle is
                // spent, and `Backing::Cached` has nothing to drop.
                unsafe { std::ptr::write(backing, None) };
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
        let job = Release {
            ptr: self.ptr as usize,
            backing,
            marks,
            device: Device::clone(&self.device),
        };
        if let Err(e) = job.run() {
            release::record("DeviceBuffer", e);
        }
    }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        let _ = self.give_back();
        // SAFETY: dropped once, here (`recycle`, the only other place that
        // takes it, never lets the value be dropped afterwards).
        unsafe { std::mem::ManuallyDrop::drop(&mut self.device) };
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

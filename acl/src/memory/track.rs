//! Per-allocation access tracking: what keeps queued work, host access and
//! frees of the same memory in order.
//!
//! Every allocation ([`Allocation`]: device memory, or pinned host memory)
//! remembers its **last write** and the **reads since**, each as a *mark*:
//! a point in one stream's queue, right after the access, as cudarc's
//! `CudaSlice` does with its read and write events. A new use on stream `S`
//! ([`prepare`]) makes `S` wait, on the device (`aclrtStreamWaitEvent`),
//! only for the marks it conflicts with — a read waits for the last write, a
//! write for the last write and every read — and only for those on *other*
//! streams: the stream itself keeps its own order. After the work is queued,
//! [`Prepared::commit`] records one mark on `S` for all the memory of that
//! call. Nothing waits for unrelated work, and the host never blocks.
//!
//! # Events only when needed
//!
//! A mark carries an event in *multi-stream mode*: once a second stream has
//! queued tracked work in the process, or host work (a host function or
//! callback, which can hold a stream on the host) has been launched. Before
//! that, a mark is just "stream `S`, generation `g`" (no runtime call at
//! all): a host wait for it synchronises `S` unless a synchronisation of
//! `S` since generation `g` already did; if another stream later needs to
//! wait for it, an event is recorded on `S` then — later than the access,
//! so the wait is longer than needed, never shorter. This keeps a
//! single-stream program at the cost of the raw calls.
//!
//! # Concurrent uses
//!
//! Waits and commits of one allocation can interleave (two threads writing
//! disjoint slices, an HCCL group, a [`Prepared`] kept across another use):
//! a commit replaces the recorded marks only if nothing was committed since
//! its wait, and otherwise adds its own beside them, so no access is ever
//! forgotten.
//!
//! # Frees
//!
//! Dropping the last handle of an allocation frees it *after* its marks:
//! memory from `aclrtMalloc` (and pinned memory) waits in the device's list
//! of pending frees until the marks' events have completed (polled at each
//! allocation, waited for at [`Device::synchronize`](crate::Device::synchronize)
//! and before an out-of-memory error is returned); a block of the caching
//! allocator goes back to its stream's pool at once, with an event on every
//! other stream that used it. A drop inside a host function only queues the
//! release: AscendCL may not be called there.
//!
//! # Host access
//!
//! Synchronous copies and host views of pinned memory wait, on the host,
//! for the marks they conflict with, holding the
//! allocation's lock so that a second thread cannot slip past the wait.

use super::gate::{self, Gate};
use crate::allocator::Block;
use crate::error::Result;
use crate::memory::DeviceAllocator;
use crate::result::raw;
use crate::{Device, Stream, release, result};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// An event of the device's pool, given back when dropped.
pub(crate) struct PooledEvent {
    raw: usize,
    device: Device,
}

impl PooledEvent {
    /// Records a pooled event on `stream` now.
    pub(crate) fn record(stream: &Stream) -> Result<PooledEvent> {
        let device = stream.device();
        device.bind()?;
        let raw = device.inner.events.acquire()?;
        let ev = PooledEvent {
            raw: raw as usize,
            device: device.clone(),
        };
        // SAFETY: the event (from the pool, live until the device is torn
        // down, which `ev.device` prevents) and the stream (held) are live.
        unsafe { result::record_event(raw, stream.as_raw())? };
        Ok(ev)
    }

    pub(crate) fn as_raw(&self) -> raw::aclrtEvent {
        self.raw as raw::aclrtEvent
    }

    fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the event is live (pooled, held by `self`).
        unsafe { result::synchronize_event(self.as_raw()) }
    }

    /// The raw event, taken out of this handle: the caller gives it back to
    /// the device's pool.
    fn into_raw(self) -> usize {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again; its device handle is
        // moved out once and dropped here.
        drop(unsafe { std::ptr::read(&me.device) });
        me.raw
    }
}

impl Drop for PooledEvent {
    fn drop(&mut self) {
        self.device
            .inner
            .events
            .release(self.raw as raw::aclrtEvent);
    }
}

/// A point in a stream's queue right after an access: an event recorded
/// there (multi-stream mode), or the stream alone, where all the work queued
/// so far covers the access (see the module docs). Cloning is cheap (one
/// reference count).
#[derive(Clone)]
pub(crate) enum Mark {
    /// The stream alone.
    Stream(MarkStream),
    /// An event recorded right after the access.
    Event(Arc<EventMark>),
}

/// An event recorded on a stream.
pub(crate) struct EventMark {
    stream: MarkStream,
    event: PooledEvent,
}

/// A stream held by a mark. A mark may hold the last handle of a stream
/// whose user dropped it; destroying a stream waits for its queued work,
/// which may include a host function waiting for the thread that happens
/// to drop the mark (a host read, a replaced mark): the last handle is
/// therefore dropped on the crate's release thread, never where the mark
/// goes.
///
/// It also carries the generation of the access on its stream: a stream
/// synchronised since that generation has finished the access, so a host
/// wait need not synchronise it again (and wait for later work).
pub(crate) struct MarkStream(std::mem::ManuallyDrop<Stream>, u64);

impl MarkStream {
    /// The stream with the generation of an access recorded now.
    fn new(stream: &Stream) -> MarkStream {
        let generation = stream
            .shared()
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        MarkStream(std::mem::ManuallyDrop::new(stream.clone()), generation)
    }

    /// The stream with a given generation.
    fn with_generation(stream: &Stream, generation: u64) -> MarkStream {
        MarkStream(std::mem::ManuallyDrop::new(stream.clone()), generation)
    }

    /// The mark of a cached block's previous owners for a block taken from
    /// `stream`'s pool: a generation no later than every access recorded on
    /// `stream` so far; none when a synchronisation of `stream` showed all
    /// of them finished.
    ///
    /// Every access of the previous owners that the new one must follow
    /// was recorded on `stream` before the block came back to its pool:
    /// each commit happens before the drop of the handle it used, and the
    /// last drop frees the block (uses on other streams hold the block in
    /// the allocator until their events complete; uses on another device
    /// are waited for before the free). So when `synced` has reached
    /// `commits`, they have all finished, and the mark (a stream handle to
    /// hold and drop) is not needed.
    #[inline]
    fn previous_owner(stream: &Stream) -> Option<MarkStream> {
        use std::sync::atomic::Ordering::Acquire;
        let shared = stream.shared();
        let commits = shared.commits.load(Acquire);
        if shared.synced.load(Acquire) >= commits {
            return None;
        }
        Some(MarkStream(
            std::mem::ManuallyDrop::new(stream.clone()),
            commits.saturating_add(1),
        ))
    }

    /// Whether a synchronisation of the stream since showed it finished.
    fn known_done(&self) -> bool {
        self.0
            .shared()
            .synced
            .load(std::sync::atomic::Ordering::Acquire)
            >= self.1
    }
}

impl Clone for MarkStream {
    fn clone(&self) -> MarkStream {
        MarkStream(std::mem::ManuallyDrop::new((*self.0).clone()), self.1)
    }
}

impl std::ops::Deref for MarkStream {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        &self.0
    }
}

impl Drop for MarkStream {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the stream is taken once, here, and never used again.
        let stream = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        if stream.is_last_handle() && !stream.is_default() {
            drop_in_background(stream);
        }
    }
}

/// Drops a stream's last handle on the release thread (see [`MarkStream`]).
#[cold]
#[inline(never)]
fn drop_in_background(stream: Stream) {
    crate::release::in_background(Box::new(move || drop(stream)));
}

impl Mark {
    fn with(stream: &Stream, event: Option<PooledEvent>) -> Mark {
        match event {
            Some(event) => Mark::Event(Arc::new(EventMark {
                stream: MarkStream::new(stream),
                event,
            })),
            None => Mark::Stream(MarkStream::new(stream)),
        }
    }

    fn stream(&self) -> &Stream {
        match self {
            Mark::Stream(s) => s,
            Mark::Event(m) => &m.stream,
        }
    }

    fn event(&self) -> Option<&PooledEvent> {
        match self {
            Mark::Stream(_) => None,
            Mark::Event(m) => Some(&m.event),
        }
    }

    /// This mark with an event, recording one on its stream now if it has
    /// none (which covers the access and possibly later work).
    fn with_event(&self) -> Result<Mark> {
        match self {
            Mark::Event(_) => Ok(self.clone()),
            Mark::Stream(s) => Ok(Mark::with(s, Some(PooledEvent::record(s)?))),
        }
    }

    /// Whether a synchronisation of its stream showed the access finished
    /// (marks without an event only; no runtime call).
    #[inline]
    fn known_done(&self) -> bool {
        matches!(self, Mark::Stream(s) if s.known_done())
    }

    /// Whether the access has finished (without waiting).
    fn is_complete(&self) -> Result<bool> {
        match self {
            Mark::Event(m) => {
                m.event.device.bind()?;
                // SAFETY: the event is live (pooled, held by `m`).
                unsafe { result::query_event_status(m.event.as_raw()) }
            }
            Mark::Stream(s) => Ok(s.known_done() || s.is_complete()?),
        }
    }

    /// Blocks the host until the access has finished.
    fn host_wait(&self) -> Result<()> {
        match self {
            Mark::Event(m) => m.event.synchronize(),
            Mark::Stream(s) if s.known_done() => Ok(()),
            Mark::Stream(s) => s.synchronize(),
        }
    }

    /// An event of this device's pool after the access: the mark's own when
    /// nobody else holds it, else a new one recorded on its stream now
    /// (later, so sound). On failure, the stream to wait for instead.
    fn into_event(self) -> std::result::Result<PooledEvent, (crate::Error, MarkStream)> {
        match self {
            Mark::Event(m) => match Arc::try_unwrap(m) {
                Ok(m) => Ok(m.event),
                Err(shared) => {
                    PooledEvent::record(&shared.stream).map_err(|e| (e, shared.stream.clone()))
                }
            },
            Mark::Stream(s) => PooledEvent::record(&s).map_err(|e| (e, s)),
        }
    }
}

/// The last write and the reads since.
///
/// Two uses can wait for conflicts concurrently and commit in either order
/// (two threads writing disjoint slices of one buffer, an HCCL group, a
/// [`Prepared`] held across another use). A commit replaces marks only if
/// nothing was committed since its wait (`epoch`); otherwise it adds its
/// mark beside the others (`more_writes` for writes), since it did not wait
/// for them and a later use must wait for both.
#[derive(Default)]
pub(crate) struct AccessState {
    write: Option<Mark>,
    /// Writes committed without having waited for `write` (usually none).
    more_writes: Vec<Mark>,
    reads: Vec<Mark>,
    /// Commits so far.
    epoch: u64,
    /// The capture whose graph initialises the memory (it was allocated on
    /// a capturing stream), until a launch of that graph: 0 for none. Until
    /// then no read outside the graph sees written memory.
    awaiting: u64,
}

impl AccessState {
    /// Whether a cached block with these marks may go straight back to its
    /// pool: every mark is on the block's own stream (where reuse is
    /// stream-ordered), and this is not a host function (which must not
    /// take the allocator's lock).
    #[inline]
    fn own_stream_only(&self, block: &Block<usize>, device: &Device) -> bool {
        self.reads.is_empty()
            && self.more_writes.is_empty()
            && self.write.as_ref().is_none_or(|m| {
                let s = m.stream();
                super::cached::stream_key(s) == block.stream() && s.device() == device
            })
            && !crate::device::in_host_fn()
    }

    fn is_empty(&self) -> bool {
        self.write.is_none() && self.more_writes.is_empty() && self.reads.is_empty()
    }

    fn into_marks(self) -> impl Iterator<Item = Mark> {
        self.write
            .into_iter()
            .chain(self.more_writes)
            .chain(self.reads)
    }

    fn iter(&self) -> impl Iterator<Item = &Mark> {
        self.write
            .iter()
            .chain(self.more_writes.iter())
            .chain(self.reads.iter())
    }

    /// The marks a use conflicts with: every write, and the reads for a write.
    fn conflicts_mut(&mut self, write: bool) -> impl Iterator<Item = &mut Mark> {
        let reads: &mut [Mark] = if write { &mut self.reads } else { &mut [] };
        self.write
            .iter_mut()
            .chain(self.more_writes.iter_mut())
            .chain(reads.iter_mut())
    }
}

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
    /// A block of a [`PinnedPool`](super::PinnedPool) of this many bytes,
    /// returned to the pool instead of freed.
    PinnedPooled(Arc<super::pinned_pool::PoolInner>, usize),
    /// Memory another library owns (borrowed with
    /// [`DeviceBuffer::from_raw_borrowed`](super::DeviceBuffer::from_raw_borrowed),
    /// or handed out by [`DeviceBuffer::into_raw`](super::DeviceBuffer::into_raw)):
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
    ptr: *mut c_void,
    bytes: usize,
    /// Dropped by `Drop`, or moved out by `recycle`.
    device: std::mem::ManuallyDrop<Device>,
    backing: Mutex<Option<Backing>>,
    state: Mutex<AccessState>,
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
    fn clear_marks(st: &mut AccessState) {
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
    fn give_back(&mut self) -> bool {
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
    fn give_back_slow(&mut self) {
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

/// The heap record of an [`Allocation`] between two uses, kept by its
/// device for the next allocation (see [`Allocation::recycle`]). Its locks
/// are whole, holding no backing and no marks (the access state keeps the
/// capacity of its lists); `ptr`, `bytes`, `device` and `views` are not initialised
/// (they own nothing). Unique: no other handle to it exists, strong or weak.
pub(crate) struct Spare(Arc<MaybeUninit<Allocation>>);

impl Spare {
    /// A new record.
    #[cold]
    #[inline(never)]
    fn new() -> Spare {
        let mut record = MaybeUninit::<Allocation>::uninit();
        let p = record.as_mut_ptr();
        // SAFETY: `p` is the local record's value; its two locks are
        // written whole, as `Spare` requires.
        unsafe {
            (&raw mut (*p).backing).write(Mutex::new(None));
            (&raw mut (*p).state).write(Mutex::new(AccessState::default()));
        }
        Spare(Arc::new(record))
    }

    /// The record as a pointer from `Arc::into_raw`, without dropping it.
    #[inline]
    fn into_raw(self) -> *mut MaybeUninit<Allocation> {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: the `Arc` is moved out of `me` once, and `me` is never
        // dropped.
        Arc::into_raw(unsafe { std::ptr::read(&me.0) }).cast_mut()
    }

    /// Completes the record: an allocation of `bytes` at `ptr` of `device`
    /// with these marks.
    #[inline]
    pub(crate) fn fill(
        self,
        ptr: *mut c_void,
        bytes: usize,
        device: &Device,
        backing: Backing,
        write: Option<Mark>,
    ) -> Arc<Allocation> {
        let p = self.into_raw().cast::<Allocation>();
        // SAFETY: the record is unique (see `Spare`), so writing through
        // `p` races with nothing. Its locks are whole, holding no backing
        // and no marks: overwriting those `None`s without dropping them
        // loses nothing. `ptr`, `bytes`, `device` and `views` are written here, so
        // the value is whole before it is an `Allocation` again; `p` came
        // from `Arc::into_raw` of an `Arc<MaybeUninit<Allocation>>`, of the
        // same layout as `Arc<Allocation>`.
        unsafe {
            std::ptr::write((*p).backing.get_mut(), Some(backing));
            (&raw mut (*p).ptr).write(ptr);
            (&raw mut (*p).bytes).write(bytes);
            (&raw mut (*p).device).write(std::mem::ManuallyDrop::new(device.clone()));
            (&raw mut (*p).views).write(Gate::default());
            std::ptr::write(&raw mut (*p).state.get_mut().write, write);
            Arc::from_raw(p)
        }
    }

    /// Completes the record with a block of the device's caching
    /// allocator, taken for `stream` (the block's pool): every use follows
    /// the block's previous owner's work on it.
    ///
    /// # Safety
    ///
    /// `block` is a live handle that is never used again: the record takes
    /// it over.
    #[inline]
    pub(crate) unsafe fn fill_cached(
        self,
        block: &Block<usize>,
        bytes: usize,
        device: &Device,
        stream: &Stream,
    ) -> Arc<Allocation> {
        let ptr = block.ptr().as_ptr().cast::<c_void>();
        let write = MarkStream::previous_owner(stream).map(Mark::Stream);
        // SAFETY: the caller gives the handle up: it stays in one place,
        // the record.
        let block = unsafe { std::ptr::read(block) };
        self.fill(ptr, bytes, device, Backing::Cached(block), write)
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        let p = Arc::as_ptr(&self.0).cast_mut().cast::<Allocation>();
        // SAFETY: the record is unique (no one else reads or writes it) and
        // its two locks are whole (the type's invariant): each is dropped
        // once, here (freeing the lists' capacity); the `Arc` then frees the
        // memory without dropping anything else (`MaybeUninit`).
        unsafe {
            std::ptr::drop_in_place(&raw mut (*p).backing);
            std::ptr::drop_in_place(&raw mut (*p).state);
        }
    }
}

/// One [`Spare`] record of a device: a lock-free slot.
#[derive(Default)]
pub(crate) struct SpareRecord(std::sync::atomic::AtomicPtr<MaybeUninit<Allocation>>);

impl SpareRecord {
    #[inline]
    fn take(&self) -> Option<Spare> {
        let p = self
            .0
            .swap(std::ptr::null_mut(), std::sync::atomic::Ordering::Acquire);
        // SAFETY: a non-null pointer came from `Arc::into_raw` of a `Spare`
        // in `put`, and the swap handed it to this call alone.
        (!p.is_null()).then(|| Spare(unsafe { Arc::from_raw(p) }))
    }

    #[inline]
    fn put(&self, spare: Spare) {
        let p = spare.into_raw();
        let stored = self.0.compare_exchange(
            std::ptr::null_mut(),
            p,
            std::sync::atomic::Ordering::Release,
            std::sync::atomic::Ordering::Relaxed,
        );
        if stored.is_err() {
            // Full (the error holds the record already there, which stays):
            // free this one.
            // SAFETY: `p` came from `Arc::into_raw` of a `Spare` just above
            // and was not stored.
            drop(Spare(unsafe { Arc::from_raw(p) }));
        }
    }
}

impl Drop for SpareRecord {
    fn drop(&mut self) {
        drop(self.take());
    }
}

/// The caching allocator a cached block came from (the device keeps it
/// until its teardown, which no allocation outlives).
#[inline]
fn cache_of(device: &Device) -> Result<&DeviceAllocator> {
    device.inner.allocator.get().map(|a| &**a).ok_or_else(|| {
        crate::Error::invalid(
            "DeviceBuffer::drop",
            "a cached block of a device without a caching allocator",
        )
    })
}

/// A release of an allocation's memory, after its marks.
pub(crate) struct Release {
    ptr: usize,
    backing: Backing,
    marks: AccessState,
    device: Device,
}

// SAFETY: `ptr` is an address, never dereferenced; the rest is Send.
unsafe impl Send for Release {}

impl Release {
    /// Frees now, or queues the free behind events on the marks' streams.
    /// Where that cannot be done here, the release thread does it (and the
    /// outcome is recorded, not returned): inside a host function, where
    /// AscendCL may not be called (the events it records on the marks'
    /// streams come later than the accesses: sound); and for marks of
    /// another device's streams (peer copies), which this device cannot
    /// wait for: the release thread waits for them on the host, so that a
    /// drop never blocks.
    pub(crate) fn run(self) -> Result<()> {
        let foreign = self
            .marks
            .iter()
            .any(|m| m.stream().device() != &self.device);
        if crate::device::in_host_fn() || (foreign && !crate::release::on_release_thread()) {
            crate::release::in_background(Box::new(move || {
                if let Err(e) = self.run() {
                    release::record("DeviceBuffer", e);
                }
            }));
            return Ok(());
        }
        let device = self.device;
        match self.backing {
            Backing::Empty | Backing::Foreign => Ok(()),
            Backing::Cached(block) => {
                let alloc = cache_of(&device)?;
                // Reuse is stream-ordered on the block's stream; every other
                // stream of the device that used it gets an event the block
                // waits for. Another device's streams (peer copies) cannot
                // be keyed by the allocator (their handles mean nothing
                // here): their work is waited for on the host.
                let mut first_error = None;
                for m in self.marks.iter().filter(|m| !m.known_done()) {
                    if m.stream().device() != &device {
                        if let Err(e) = m.host_wait() {
                            first_error.get_or_insert(e);
                        }
                        continue;
                    }
                    let key = super::cached::stream_key(m.stream());
                    if key != block.stream() {
                        alloc.record_stream(&block, key);
                    }
                }
                // The marks (and the streams they hold) outlive the free,
                // which records events on those streams.
                let freed = alloc.free(block);
                drop(self.marks);
                match first_error {
                    Some(e) => freed.and(Err(e)),
                    None => freed,
                }
            }
            backing @ (Backing::Direct | Backing::Pinned | Backing::PinnedPooled(..)) => {
                if self.marks.is_empty() {
                    return free_now(&device.context_ref(), self.ptr, &backing);
                }
                let mut events =
                    Vec::with_capacity(1 + self.marks.more_writes.len() + self.marks.reads.len());
                let mut first_error = None;
                for m in self.marks.into_marks().filter(|m| !m.known_done()) {
                    match m.into_event() {
                        Ok(ev) if ev.device == device => events.push(ev.into_raw()),
                        Ok(ev) => {
                            // Another device's stream: wait here (rare: peer copies).
                            if let Err(e) = ev.synchronize() {
                                first_error.get_or_insert(e);
                            }
                        }
                        Err((e, stream)) => {
                            // No event: wait for the stream itself.
                            if let Err(e2) = stream.synchronize() {
                                first_error.get_or_insert(e2);
                            }
                            first_error.get_or_insert(e);
                        }
                    }
                }
                let tracking = &device.inner.tracking;
                tracking.push_pending(PendingFree {
                    ptr: self.ptr,
                    backing,
                    events,
                });
                let reaped =
                    tracking.reap(&device.context_ref(), &device.inner.events, false, false);
                match first_error {
                    Some(e) => Err(e),
                    None => reaped,
                }
            }
        }
    }
}

fn free_now(ctx: &crate::device::ContextRef, ptr: usize, backing: &Backing) -> Result<()> {
    match backing {
        // SAFETY: memory from aclrtMalloc, released once (the backing was
        // taken out of its allocation), with every recorded access finished.
        Backing::Direct => ctx
            .bind()
            .and_then(|()| unsafe { result::free(ptr as *mut c_void) }),
        // SAFETY: as above, from aclrtMallocHost.
        Backing::Pinned => ctx
            .bind()
            .and_then(|()| unsafe { result::free_host(ptr as *mut c_void) }),
        // Every recorded access has finished: the block is free for reuse.
        // Host bookkeeping only: no context needed, so a failed bind cannot
        // lose the block (nor leave it counted as in use).
        Backing::PinnedPooled(pool, class) => {
            pool.give_back(ptr, *class);
            Ok(())
        }
        Backing::Empty | Backing::Cached(_) | Backing::Foreign => Ok(()),
    }
}

/// A free waiting for events (raw, taken from the device's pool).
pub(crate) struct PendingFree {
    ptr: usize,
    backing: Backing,
    events: Vec<usize>,
}

/// The key of the first stream that queued tracked work in this process
/// (0: none yet): the raw handle of a created stream (runtime handles are
/// addresses, hence even), or the device's address with the low bit set for
/// a default stream.
static FIRST_STREAM: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Whether a second stream has queued tracked work (multi-stream mode).
static MULTI_STREAM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Notes that `stream` queues tracked work; whether marks need events
/// (multi-stream mode). While it answers `false`, every mark in the process
/// is on `stream` (or on a stream that never queued tracked work).
#[inline]
fn note_stream(stream: &Stream) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    if MULTI_STREAM.load(Relaxed) {
        return true;
    }
    let raw = stream.as_raw() as usize;
    let key = if raw == 0 {
        Arc::as_ptr(&stream.device().inner) as usize | 1
    } else if raw & 1 == 0 {
        raw
    } else {
        // Not an address: no key can be trusted to be unique.
        MULTI_STREAM.store(true, Relaxed);
        return true;
    };
    if FIRST_STREAM.load(Relaxed) == key {
        return false;
    }
    match FIRST_STREAM.compare_exchange(0, key, Relaxed, Relaxed) {
        Ok(_) => false,
        Err(first) if first == key => false,
        Err(_) => {
            MULTI_STREAM.store(true, Relaxed);
            true
        }
    }
}

/// Host work can block a stream on the host: from then on marks carry
/// events, so that a host wait for an access never waits for a host
/// function queued after it (which may be waiting for that very thread).
/// Marks recorded before the first host function still stand for their
/// whole stream.
pub(crate) fn note_host_work() {
    MULTI_STREAM.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the process is in multi-stream mode.
#[inline]
pub(crate) fn is_multi_stream() -> bool {
    MULTI_STREAM.load(std::sync::atomic::Ordering::Relaxed)
}

/// A device's frees waiting for events. Holds no handle to the device, so
/// that the device can own it.
#[derive(Default)]
pub(crate) struct Tracking {
    pending: Mutex<Vec<PendingFree>>,
    /// `pending.len()`, read without the lock.
    backlog: std::sync::atomic::AtomicUsize,
    /// A heap record for the next allocation.
    spare: SpareRecord,
}

// As for `Allocation`: the pending frees are a list that each step leaves
// whole.
impl std::panic::RefUnwindSafe for Tracking {}

impl Tracking {
    /// A heap record for a new allocation: the spare one, or a new one.
    #[inline]
    pub(crate) fn record(&self) -> Spare {
        self.spare.take().unwrap_or_else(Spare::new)
    }

    fn push_pending(&self, free: PendingFree) {
        self.pending.lock().push(free);
        self.backlog
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether frees wait for events.
    #[inline]
    pub(crate) fn has_backlog(&self) -> bool {
        self.backlog.load(std::sync::atomic::Ordering::Relaxed) != 0
    }

    /// Frees what waited for events that have completed; with `wait`,
    /// waits for all of them first. Does nothing inside a host function.
    pub(crate) fn reap(
        &self,
        ctx: &crate::device::ContextRef,
        pool: &crate::event::EventPool,
        wait: bool,
        teardown: bool,
    ) -> Result<()> {
        if crate::device::in_host_fn() || !self.has_backlog() {
            return Ok(());
        }
        ctx.bind()?;
        let mut first_error = None;
        let ready: Vec<PendingFree> = {
            let mut pending = self.pending.lock();
            let mut ready = Vec::new();
            let mut i = 0;
            while i < pending.len() {
                let done = pending[i].events.iter().all(|&ev| {
                    let ev = ev as raw::aclrtEvent;
                    // SAFETY: events taken from the pool, live until given
                    // back below.
                    let status = unsafe {
                        if wait {
                            result::synchronize_event(ev).map(|()| true)
                        } else {
                            result::query_event_status(ev)
                        }
                    };
                    status.unwrap_or_else(|e| {
                        // A fault of the work says nothing about later work
                        // still using the memory (the stream goes on): keep
                        // the free pending, except at teardown (the device
                        // reset ends every task).
                        first_error.get_or_insert(e);
                        teardown
                    })
                });
                if done {
                    ready.push(pending.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            ready
        };
        self.backlog
            .fetch_sub(ready.len(), std::sync::atomic::Ordering::Relaxed);
        for f in ready {
            for ev in f.events {
                pool.release(ev as raw::aclrtEvent);
            }
            if let Err(e) = free_now(ctx, f.ptr, &f.backing) {
                first_error.get_or_insert(e);
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// One use of an allocation by a queued call: read, or written (and maybe
/// read). Holding it keeps the allocation alive.
#[derive(Clone)]
pub struct Access {
    alloc: Arc<Allocation>,
    write: bool,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("alloc", &self.alloc)
            .field("write", &self.write)
            .finish()
    }
}

impl Access {
    pub(crate) fn read(alloc: &Arc<Allocation>) -> Access {
        Access {
            alloc: alloc.clone(),
            write: false,
        }
    }

    pub(crate) fn write(alloc: &Arc<Allocation>) -> Access {
        Access {
            alloc: alloc.clone(),
            write: true,
        }
    }

    /// Whether the call writes the memory.
    pub fn is_write(&self) -> bool {
        self.write
    }

    /// The allocation.
    pub fn allocation(&self) -> &Allocation {
        &self.alloc
    }

    /// Blocks the host until the recorded accesses this use conflicts with
    /// have finished (for callers that cannot order their work on the
    /// device).
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of the awaited work.
    pub fn wait_on_host(&self) -> Result<()> {
        host_wait(&self.alloc, self.write)
    }
}

/// Records that work queued on `stream` made the accesses `uses`, without a
/// [`prepare`] before it (the caller ordered the work otherwise, e.g. with
/// [`Access::wait_on_host`]). The marks are added beside the recorded ones,
/// never replacing them, so recording more than happened only makes later
/// uses wait longer.
pub fn record(stream: &Stream, uses: &[Access]) {
    record_accesses(
        stream,
        &Seen::Unknown,
        uses.iter().map(|u| (&u.alloc, u.write)),
    );
}

/// Accesses whose conflicts `stream` now waits for, to be recorded with
/// [`Prepared::commit`] once the work is queued. Dropping it without
/// committing records nothing (the work was not queued).
#[must_use = "commit the accesses once the work is queued"]
pub struct Prepared<'s, C: AsRef<[Access]>> {
    stream: &'s Stream,
    uses: C,
    seen: Waited<'s>,
}

impl<C: AsRef<[Access]>> std::fmt::Debug for Prepared<'_, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("stream", self.stream)
            .field("uses", &self.uses.as_ref())
            .finish()
    }
}

/// Makes `stream` wait, on the device, for the recorded accesses that the
/// `uses` conflict with (see the module docs). The device of `stream` is
/// bound on return.
///
/// # Errors
///
/// The runtime's error from recording or waiting for an event; nothing is
/// recorded then, and the work must not be queued.
pub fn prepare<C: AsRef<[Access]>>(stream: &Stream, uses: C) -> Result<Prepared<'_, C>> {
    let seen = wait_for_conflicts(stream, uses.as_ref().iter().map(|u| (&u.alloc, u.write)))?;
    Ok(Prepared { stream, uses, seen })
}

/// What a wait saw of each allocation's record, for the commit.
pub(crate) enum Seen {
    /// Single-stream mode: nothing was looked at.
    Single,
    /// No wait: the commit replaces nothing.
    Unknown,
    /// Each use's epoch, in order (the first eight inline).
    Epochs { inline: [u64; 8], more: Vec<u64> },
}

impl Seen {
    fn epoch(&self, i: usize) -> Option<u64> {
        match self {
            Seen::Single | Seen::Unknown => None,
            Seen::Epochs { inline, more } => match inline.get(i) {
                Some(&e) => Some(e),
                None => more.get(i - inline.len()).copied(),
            },
        }
    }
}

/// What a wait saw, and the stream's gate, entered until the accesses are
/// committed (see [`gate`](super::gate)): the stream's capture state cannot
/// change between the wait and the commit.
pub(crate) struct Waited<'s> {
    seen: Seen,
    _gate: gate::Shared<'s>,
}

impl std::ops::Deref for Waited<'_> {
    type Target = Seen;
    fn deref(&self) -> &Seen {
        &self.seen
    }
}

/// [`prepare`] on borrowed allocations: `(allocation, writes)` pairs. The
/// stream's gate stays entered until the result is dropped: commit before.
#[inline]
pub(crate) fn wait_for_conflicts<'s, 'a>(
    stream: &'s Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
) -> Result<Waited<'s>> {
    let gate = stream.shared().capture.gate.enter();
    let seen = wait_entered(stream, uses, 0)?;
    Ok(Waited { seen, _gate: gate })
}

/// The error for a read of memory a capture initialises, before its graph
/// has run.
pub(crate) fn awaiting_launch(function: &'static str) -> crate::Error {
    crate::Error::invalid(
        function,
        "the memory is initialised by captured work that has not run yet; launch the graph \
         first (or allocate it before the capture)",
    )
}

/// [`wait_for_conflicts`] with the stream's gate entered by the caller;
/// `launching` is the capture number of the graph being launched (0 for
/// other work), which may read the memory its capture initialises.
#[inline]
pub(crate) fn wait_entered<'a>(
    stream: &Stream,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
    launching: u64,
) -> Result<Seen> {
    let device = stream.device();
    if crate::device::in_host_fn() {
        // Before any lock: a thread holding one may be waiting for this
        // very host function.
        return Err(crate::device::host_fn_error("memory::prepare"));
    }
    if stream.shared().capture.is_active() {
        // Captured work does not run now: it is ordered when the graph is
        // launched (`Graph::launch` waits for these uses then).
        device.bind()?;
        return Ok(Seen::Unknown);
    }
    if !note_stream(stream) {
        // Single-stream mode: every recorded access is on this stream,
        // which keeps its own order.
        device.bind()?;
        return Ok(Seen::Single);
    }
    let mut inline = [0u64; 8];
    let mut more = Vec::new();
    let mut bound = false;
    for (n, (alloc, write)) in uses.enumerate() {
        let mut st = alloc.state.lock();
        if st.awaiting != 0 && st.awaiting != launching && !write {
            return Err(awaiting_launch("memory::prepare"));
        }
        match inline.get_mut(n) {
            Some(slot) => *slot = st.epoch,
            None => more.push(st.epoch),
        }
        let n_writes = usize::from(st.write.is_some()) + st.more_writes.len();
        for (i, slot) in st.conflicts_mut(write).enumerate() {
            let of_write = i < n_writes;
            if slot.stream().same_queue(stream) || slot.known_done() {
                continue;
            }
            if slot.stream().device() != device {
                // CANN cannot queue a wait for another device's event
                // (hicann/runtime docs/zh/dev_guide/05_multi_device_programming.md):
                // go on only if that work has already finished.
                if slot.is_complete()? {
                    continue;
                }
                return Err(cross_device(
                    write,
                    of_write,
                    slot.stream().device(),
                    device,
                ));
            }
            if slot.event().is_none() {
                *slot = slot.with_event()?;
                bound = false;
            }
            // No de-duplication by handle: once this allocation's lock is
            // released, a mark may go and its event be re-recorded for
            // another one (waiting twice for one event is harmless).
            let ev = slot.event().map_or(0, |e| e.raw);
            if !bound {
                device.bind()?;
                bound = true;
            }
            // SAFETY: the stream is live (borrowed), the event is live
            // (pooled, held by the mark in `st`).
            unsafe { result::stream_wait_event(stream.as_raw(), ev as raw::aclrtEvent)? };
        }
    }
    if !bound {
        device.bind()?;
    }
    Ok(Seen::Epochs { inline, more })
}

/// [`Prepared::commit`] on borrowed allocations: records that work queued
/// on `stream` made these accesses; `seen` is what its wait saw.
#[inline]
pub(crate) fn record_accesses<'a>(
    stream: &Stream,
    seen: &Seen,
    uses: impl Iterator<Item = (&'a Arc<Allocation>, bool)>,
) {
    let capture = &stream.shared().capture;
    if capture.is_active() {
        // Recorded into the graph, which keeps the memory and orders it at
        // each launch; nothing runs now, so there is no mark to make.
        capture.add(uses.map(|(a, w)| (Arc::clone(a), w)));
        return;
    }
    // A mark on a stream that did not wait here (raw work recorded with
    // `record`, a capture's leftovers) is a use of that stream too: a second
    // stream ends single-stream mode before its mark exists.
    let multi = match seen {
        Seen::Single => is_multi_stream(),
        _ => note_stream(stream),
    };
    if !multi && matches!(seen, Seen::Single) {
        // Single-stream mode, and the wait saw it too: every mark is on this
        // stream; a mark of it only takes the new generation (no reference
        // counting).
        let generation = stream
            .shared()
            .commits
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            + 1;
        for (alloc, write) in uses {
            let mut st = alloc.state.lock();
            st.epoch = st.epoch.wrapping_add(1);
            let slot = if write {
                st.reads.clear();
                st.more_writes.clear();
                &mut st.write
            } else {
                if st.reads.is_empty() {
                    st.reads.push(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    )));
                    continue;
                }
                match st.reads.iter().position(|m| m.stream().same_queue(stream)) {
                    Some(i) => {
                        if let Mark::Stream(ms) = &mut st.reads[i] {
                            ms.1 = generation;
                            continue;
                        }
                        st.reads[i] = Mark::Stream(MarkStream::with_generation(stream, generation));
                    }
                    None => st.reads.push(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    ))),
                }
                continue;
            };
            match slot {
                Some(Mark::Stream(ms)) if ms.same_queue(stream) => ms.1 = generation,
                _ => {
                    *slot = Some(Mark::Stream(MarkStream::with_generation(
                        stream, generation,
                    )))
                }
            }
        }
        return;
    }
    let mut mark: Option<Mark> = None;
    let mut make = || -> Mark {
        mark.get_or_insert_with(|| {
            let ev = if multi {
                PooledEvent::record(stream).ok()
            } else {
                None
            };
            Mark::with(stream, ev)
        })
        .clone()
    };
    for (n, (alloc, write)) in uses.enumerate() {
        let mut st = alloc.state.lock();
        // Whether the wait covered every mark there is now: then they may
        // be replaced. A wait in single-stream mode looked at nothing; it
        // covered everything only if the process is still in that mode
        // (every mark on this one stream).
        let covered = match (seen, seen.epoch(n)) {
            (Seen::Unknown, _) => false,
            (_, Some(e)) => e == st.epoch,
            (_, None) => !multi,
        };
        st.epoch = st.epoch.wrapping_add(1);
        if write {
            if covered {
                st.reads.clear();
                st.more_writes.clear();
                st.write = Some(make());
            } else {
                let m = make();
                match &st.write {
                    None => st.write = Some(m),
                    Some(_) => st.more_writes.push(m),
                }
            }
        } else {
            // A read of this stream replaces an earlier read of the same
            // stream (stream order) whatever happened in between.
            match st.reads.iter_mut().find(|m| m.stream().same_queue(stream)) {
                Some(m) => *m = make(),
                None => st.reads.push(make()),
            }
        }
    }
}

/// The error for an access that would have to wait for queued work of
/// another device.
fn cross_device(write: bool, of_write: bool, from: &Device, to: &Device) -> crate::Error {
    crate::Error::invalid(
        "memory::prepare",
        format!(
            "the memory's last {} is still queued on device {}, and CANN cannot make a stream \
             of device {} wait for another device's work; synchronize device {} (or the work's \
             event) before this {}",
            if of_write { "write" } else { "read" },
            from.ordinal(),
            to.ordinal(),
            from.ordinal(),
            if write { "write" } else { "read" },
        ),
    )
}

impl<C: AsRef<[Access]>> Prepared<'_, C> {
    /// Records the accesses: the work was queued on the stream. Never
    /// fails: without an event (multi-stream mode, recording failed), the
    /// mark is the stream itself, which later users wait for in full.
    pub fn commit(self) {
        record_accesses(
            self.stream,
            &self.seen,
            self.uses.as_ref().iter().map(|u| (&u.alloc, u.write)),
        );
    }

    /// The stream the work goes to.
    pub fn stream(&self) -> &Stream {
        self.stream
    }
}

/// Blocks the host until the recorded accesses that a host access
/// conflicts with have finished: the last write for a host read, every
/// access for a host write. Holds the allocation's lock meanwhile, and
/// forgets the marks only once they are known to be done.
///
/// # Errors
///
/// The runtime's error, including faults of the awaited work; the marks
/// are kept then.
pub(crate) fn host_wait(alloc: &Allocation, write: bool) -> Result<()> {
    let mut st = if crate::device::in_host_fn() {
        // A host function may not wait (nor call AscendCL), and must not
        // block on a lock whose holder may be waiting for this very host
        // function: it gets the memory only if nothing is pending on it.
        let st = alloc.state.try_lock();
        match st {
            Some(st)
                if st.write.is_none()
                    && st.more_writes.is_empty()
                    && (!write || st.reads.is_empty()) =>
            {
                return Ok(());
            }
            _ => {
                return Err(crate::Error::invalid(
                    "host access",
                    "inside a host function, memory that queued work may still use cannot be \
                     waited for; wait for it before the host function, or read it after",
                ));
            }
        }
    } else {
        alloc.state.lock()
    };
    if st.awaiting != 0 && !write {
        return Err(awaiting_launch("host access"));
    }
    while let Some(m) = st.more_writes.last() {
        m.host_wait()?;
        st.more_writes.pop();
    }
    if let Some(m) = &st.write {
        m.host_wait()?;
        st.write = None;
    }
    if write {
        while let Some(m) = st.reads.last() {
            m.host_wait()?;
            st.reads.pop();
        }
    }
    Ok(())
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

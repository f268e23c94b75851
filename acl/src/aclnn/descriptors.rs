//! The tensor descriptors (`aclTensor`) of operator arguments, kept per
//! thread for reuse.
//!
//! `aclCreateTensor` copies its arguments (view dims, strides, offset,
//! format, storage dims, data address) into a host-side descriptor, and no
//! function of the aclnn objects API changes one afterwards: the API has no
//! setter for a user's tensor (hicann/opbase `docs/zh/nnopbase/aclnn/`: the
//! objects are created, read by the operators and destroyed). Once the call
//! that used it has returned, a descriptor therefore describes exactly what
//! a new one made from the same arguments would. torch_npu's op-plugin goes
//! further and reruns whole executors over descriptors it keeps
//! (`aclSetAclOpExecutorRepeatable`, its `PTA_ACLNN_CACHE`).
//!
//! Programs call operators over the same buffers again and again (a training
//! step, a decoder layer, the caching allocator handing back the same
//! blocks), so a [`TensorArg`](super::TensorArg) takes an idle descriptor
//! with the same arguments from its thread's cache, and gives it back when
//! dropped, instead of one `aclCreateTensor` and one `aclDestroyTensor` per
//! argument per call. At most [`CAPACITY`] descriptors are kept per thread;
//! an idle one is destroyed when its slot is needed, and the idle ones when
//! the thread ends or at [`release_cached_descriptors`].
//!
//! A lent descriptor is owned by its argument: the argument types are
//! neither `Send` nor `Sync`, so it comes back on the thread that lent it.

use crate::error::Result;
use crate::result::{self, raw};
use raw::aclTensor;
use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr::NonNull;

/// Descriptors kept per thread (idle or lent).
pub const CAPACITY: usize = 16;

/// The most dimensions (view or storage) a kept descriptor has; larger ones
/// are made and destroyed per call.
const MAX_RANK: usize = 8;

/// `aclCreateTensor`'s arguments, as a descriptor was made from them.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    addr: usize,
    dtype: raw::aclDataType,
    format: i32,
    offset: i64,
    rank: u8,
    storage_rank: u8,
    dims: [i64; MAX_RANK],
    strides: [i64; MAX_RANK],
    storage: [i64; MAX_RANK],
}

/// What [`make`] is asked for, borrowed from the caller.
#[derive(Clone, Copy)]
pub(super) struct Request<'a> {
    pub dtype: raw::aclDataType,
    pub dims: &'a [i64],
    pub strides: &'a [i64],
    pub offset: i64,
    pub format: i32,
    pub storage: &'a [i64],
    pub data: *mut c_void,
}

impl Request<'_> {
    /// Whether a descriptor made from `key` is the one asked for.
    fn is(&self, key: &Key) -> bool {
        key.addr == self.data as usize
            && key.dtype == self.dtype
            && key.format == self.format
            && key.offset == self.offset
            && key.dims[..usize::from(key.rank)] == *self.dims
            && key.strides[..usize::from(key.rank)] == *self.strides
            && key.storage[..usize::from(key.storage_rank)] == *self.storage
    }

    /// The key of this request, when it fits one.
    fn key(&self) -> Option<Key> {
        let fits = |s: &[i64]| s.len() <= MAX_RANK;
        if !(fits(self.dims) && fits(self.strides) && fits(self.storage))
            || self.dims.len() != self.strides.len()
        {
            return None;
        }
        let mut key = Key {
            addr: self.data as usize,
            dtype: self.dtype,
            format: self.format,
            offset: self.offset,
            // Both at most MAX_RANK (checked above).
            rank: self.dims.len() as u8,
            storage_rank: self.storage.len() as u8,
            dims: [0; MAX_RANK],
            strides: [0; MAX_RANK],
            storage: [0; MAX_RANK],
        };
        key.dims[..self.dims.len()].copy_from_slice(self.dims);
        key.strides[..self.strides.len()].copy_from_slice(self.strides);
        key.storage[..self.storage.len()].copy_from_slice(self.storage);
        Some(key)
    }

    /// A new descriptor from the runtime.
    fn create(&self) -> Result<NonNull<aclTensor>> {
        result::create_tensor(
            self.dims,
            self.dtype,
            self.strides,
            self.offset,
            self.format,
            self.storage,
            self.data,
        )
    }
}

/// Where a slot's descriptor is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// In the cache, free to lend.
    Idle,
    /// Owned by a live argument.
    Lent,
    /// No descriptor (given away to a tensor list).
    Empty,
}

struct Slot {
    key: Key,
    raw: NonNull<aclTensor>,
    state: State,
}

/// One thread's descriptors.
struct Cache {
    slots: Vec<Slot>,
    /// The next slot an eviction looks at.
    evict: usize,
}

impl Drop for Cache {
    fn drop(&mut self) {
        // Lent descriptors belong to their arguments, which destroy them
        // themselves when they find the cache gone.
        destroy_idle(&mut self.slots);
    }
}

fn destroy_idle(slots: &mut [Slot]) {
    for s in slots.iter_mut().filter(|s| s.state == State::Idle) {
        // SAFETY: made by `aclCreateTensor`, idle (no argument holds it),
        // destroyed once: the slot is emptied.
        let _ = unsafe { result::destroy_tensor(s.raw.as_ptr()) };
        s.state = State::Empty;
    }
}

thread_local! {
    static CACHE: RefCell<Cache> = const {
        RefCell::new(Cache { slots: Vec::new(), evict: 0 })
    };
}

/// No slot: the descriptor is destroyed with its argument.
const UNCACHED: u8 = u8::MAX;

/// A descriptor an argument owns while it lives.
#[derive(Debug)]
pub(super) struct Descriptor {
    raw: NonNull<aclTensor>,
    slot: u8,
}

impl Descriptor {
    pub(super) fn as_ptr(&self) -> *mut aclTensor {
        self.raw.as_ptr()
    }

    /// Gives the descriptor up without destroying it (a tensor list
    /// destroys it): its slot, if it has one, is emptied.
    pub(super) fn disown(self) {
        let me = std::mem::ManuallyDrop::new(self);
        if me.slot != UNCACHED {
            with_cache(|c| {
                if let Some(s) = c.slots.get_mut(usize::from(me.slot))
                    && s.state == State::Lent
                    && s.raw == me.raw
                {
                    s.state = State::Empty;
                }
            });
        }
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        let (raw, slot) = (self.raw, usize::from(self.slot));
        let kept = self.slot != UNCACHED
            && with_cache(|c| match c.slots.get_mut(slot) {
                Some(s) if s.state == State::Lent && s.raw == raw => {
                    s.state = State::Idle;
                    true
                }
                _ => false,
            })
            .unwrap_or(false);
        if !kept {
            // SAFETY: made by `aclCreateTensor`, owned by this argument
            // (not in any cache), destroyed once.
            let _ = unsafe { result::destroy_tensor(raw.as_ptr()) };
        }
    }
}

/// Runs `f` on this thread's cache; `None` when the thread is ending (its
/// cache is gone) or the cache is in use further up this thread's stack.
fn with_cache<R>(f: impl FnOnce(&mut Cache) -> R) -> Option<R> {
    CACHE
        .try_with(|c| c.try_borrow_mut().ok().map(|mut c| f(&mut c)))
        .ok()
        .flatten()
}

/// The descriptor `req` asks for: an idle one made from the same arguments,
/// or a new one (kept in a free or idle slot when there is one).
///
/// # Errors
///
/// The status of `aclCreateTensor`.
pub(super) fn make(req: Request<'_>) -> Result<Descriptor> {
    let hit = with_cache(|c| {
        let i = c
            .slots
            .iter()
            .position(|s| s.state == State::Idle && req.is(&s.key))?;
        c.slots[i].state = State::Lent;
        Some(Descriptor {
            raw: c.slots[i].raw,
            // At most CAPACITY (16) slots.
            slot: i as u8,
        })
    })
    .flatten();
    if let Some(d) = hit {
        return Ok(d);
    }
    let raw = req.create()?;
    let slot = req
        .key()
        .and_then(|key| with_cache(|c| c.keep(key, raw)).flatten())
        .unwrap_or(UNCACHED);
    Ok(Descriptor { raw, slot })
}

impl Cache {
    /// Puts the new descriptor `raw` (lent) in a slot: a free one, a new
    /// one, or an idle one whose descriptor is destroyed; `None` when every
    /// slot is lent.
    fn keep(&mut self, key: Key, raw: NonNull<aclTensor>) -> Option<u8> {
        let lent = Slot {
            key,
            raw,
            state: State::Lent,
        };
        if let Some(i) = self.slots.iter().position(|s| s.state == State::Empty) {
            self.slots[i] = lent;
            return Some(i as u8);
        }
        if self.slots.len() < CAPACITY {
            self.slots.push(lent);
            return Some((self.slots.len() - 1) as u8);
        }
        let n = self.slots.len();
        let i = (0..n)
            .map(|k| (self.evict + k) % n)
            .find(|&i| self.slots[i].state == State::Idle)?;
        self.evict = (i + 1) % n;
        let old = std::mem::replace(&mut self.slots[i], lent);
        // SAFETY: made by `aclCreateTensor`, idle (no argument holds it),
        // destroyed once: its slot now holds another descriptor.
        let _ = unsafe { result::destroy_tensor(old.raw.as_ptr()) };
        Some(i as u8)
    }
}

/// Destroys the calling thread's idle cached tensor descriptors (those of
/// arguments already dropped), for example before `aclFinalize` or to see
/// the runtime's object count settle. Descriptors of live arguments are
/// destroyed when those are dropped. Returns how many were destroyed.
#[doc(alias = "aclDestroyTensor")]
pub fn release_cached_descriptors() -> usize {
    with_cache(|c| {
        let before = c.slots.iter().filter(|s| s.state == State::Idle).count();
        destroy_idle(&mut c.slots);
        before
    })
    .unwrap_or(0)
}

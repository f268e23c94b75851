//! Runtime objects kept per thread for reuse: small host-side descriptions
//! (an aclnn tensor descriptor, an aclop data buffer) that the runtime never
//! changes once made, which the crate makes for each operator call.
//!
//! Programs call operators over the same buffers again and again (a
//! training step, a decoder layer, the caching allocator handing back the
//! same blocks), so instead of one create and one destroy per argument per
//! call, a call takes an idle object made from the same arguments from its
//! thread's [`Pool`], and gives it back when done. At most [`CAPACITY`]
//! objects of a kind are kept per thread: an idle one is destroyed when its
//! slot is needed, the idle ones when the thread ends or when asked.
//!
//! A lent object is owned by its [`Lent`], which is neither `Send` nor
//! `Sync`: it comes back on the thread that lent it. An object given away
//! for good ([`Lent::disown`]: a tensor list destroys its members) leaves
//! its slot.

use crate::error::Result;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::thread::LocalKey;

/// Objects of one kind kept per thread (idle or lent).
pub const CAPACITY: usize = 16;

/// A kind of runtime object a [`Pool`] keeps.
pub(crate) trait Kind: Sized + 'static {
    /// The runtime's object.
    type Raw;
    /// What the object was made from: equal keys, equal objects.
    type Key: Copy;
    /// The calling thread's pool of this kind.
    fn pool() -> &'static LocalKey<RefCell<Pool<Self>>>;
    /// Destroys `raw` (idle or owned, never used again).
    fn destroy(raw: NonNull<Self::Raw>);
}

/// Where a slot's object is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// In the pool, free to lend.
    Idle,
    /// Owned by a live [`Lent`].
    Lent,
    /// No object (given away).
    Empty,
}

struct Slot<K: Kind> {
    key: K::Key,
    raw: NonNull<K::Raw>,
    state: State,
}

/// One thread's objects of kind `K`.
pub(crate) struct Pool<K: Kind> {
    slots: Vec<Slot<K>>,
    /// The next slot an eviction looks at.
    evict: usize,
}

impl<K: Kind> Pool<K> {
    pub(crate) const fn new() -> Self {
        Pool {
            slots: Vec::new(),
            evict: 0,
        }
    }

    /// Destroys the idle objects; returns how many.
    fn destroy_idle(&mut self) -> usize {
        let mut n = 0;
        for s in self.slots.iter_mut().filter(|s| s.state == State::Idle) {
            K::destroy(s.raw);
            s.state = State::Empty;
            n += 1;
        }
        n
    }

    /// Puts the new object `raw` (lent) in a slot: a free one, a new one, or
    /// an idle one whose object is destroyed; `None` when every slot is lent.
    fn keep(&mut self, key: K::Key, raw: NonNull<K::Raw>) -> Option<u8> {
        let lent = Slot {
            key,
            raw,
            state: State::Lent,
        };
        // Slot numbers are below CAPACITY (16): they fit in a u8.
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
        K::destroy(old.raw);
        Some(i as u8)
    }
}

impl<K: Kind> Drop for Pool<K> {
    fn drop(&mut self) {
        // Lent objects belong to their `Lent`s, which destroy them
        // themselves when they find the pool gone.
        self.destroy_idle();
    }
}

/// Runs `f` on this thread's pool of `K`; `None` when the thread is ending
/// (its pool is gone) or the pool is in use further up this thread's stack.
fn with_pool<K: Kind, R>(f: impl FnOnce(&mut Pool<K>) -> R) -> Option<R> {
    K::pool()
        .try_with(|p| p.try_borrow_mut().ok().map(|mut p| f(&mut p)))
        .ok()
        .flatten()
}

/// No slot: the object is destroyed with its `Lent`.
const UNPOOLED: u8 = u8::MAX;

/// An object lent by the calling thread's pool (or made for this use
/// alone): given back, or destroyed, on drop.
pub(crate) struct Lent<K: Kind> {
    raw: NonNull<K::Raw>,
    slot: u8,
    /// Neither `Send` nor `Sync`: it goes back to this thread's pool.
    _thread: PhantomData<*const ()>,
}

impl<K: Kind> std::fmt::Debug for Lent<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Lent").field(&self.raw).finish()
    }
}

impl<K: Kind> Lent<K> {
    /// The object: `is` picks an idle one with the wanted key; otherwise
    /// `create` makes one, kept (when `key` gives it a key and a slot is
    /// free or idle) or destroyed with the `Lent`.
    ///
    /// # Errors
    ///
    /// `create`'s.
    pub(crate) fn take(
        is: impl Fn(&K::Key) -> bool,
        key: impl FnOnce() -> Option<K::Key>,
        create: impl FnOnce() -> Result<NonNull<K::Raw>>,
    ) -> Result<Lent<K>> {
        let hit = with_pool::<K, _>(|p| {
            let i = p
                .slots
                .iter()
                .position(|s| s.state == State::Idle && is(&s.key))?;
            p.slots[i].state = State::Lent;
            // Below CAPACITY (16).
            Some((p.slots[i].raw, i as u8))
        })
        .flatten();
        if let Some((raw, slot)) = hit {
            return Ok(Lent {
                raw,
                slot,
                _thread: PhantomData,
            });
        }
        let raw = create()?;
        let slot = key()
            .and_then(|k| with_pool::<K, _>(|p| p.keep(k, raw)).flatten())
            .unwrap_or(UNPOOLED);
        Ok(Lent {
            raw,
            slot,
            _thread: PhantomData,
        })
    }

    pub(crate) fn as_ptr(&self) -> *mut K::Raw {
        self.raw.as_ptr()
    }

    /// Gives the object up without destroying it (its new owner destroys
    /// it): its slot, if it has one, is emptied.
    pub(crate) fn disown(self) {
        let me = std::mem::ManuallyDrop::new(self);
        if me.slot != UNPOOLED {
            with_pool::<K, _>(|p| {
                if let Some(s) = p.slots.get_mut(usize::from(me.slot))
                    && s.state == State::Lent
                    && s.raw == me.raw
                {
                    s.state = State::Empty;
                }
            });
        }
    }
}

impl<K: Kind> Drop for Lent<K> {
    fn drop(&mut self) {
        let (raw, slot) = (self.raw, usize::from(self.slot));
        let kept = self.slot != UNPOOLED
            && with_pool::<K, _>(|p| match p.slots.get_mut(slot) {
                Some(s) if s.state == State::Lent && s.raw == raw => {
                    s.state = State::Idle;
                    true
                }
                _ => false,
            })
            .unwrap_or(false);
        if !kept {
            // Owned by this `Lent` alone (in no pool): destroyed once.
            K::destroy(raw);
        }
    }
}

/// Destroys the calling thread's idle objects of kind `K`; returns how many.
pub(crate) fn release_idle<K: Kind>() -> usize {
    with_pool::<K, _>(Pool::destroy_idle).unwrap_or(0)
}

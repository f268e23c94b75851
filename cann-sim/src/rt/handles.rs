//! The handle tables: which opaque pointers given to C name live objects.
//!
//! A handle is the address of the object it names (an `Arc` allocation), but
//! the simulator never dereferences a pointer the user passes back: it looks
//! the address up here. A destroyed object stays allocated in a bounded
//! graveyard for a while, so its address is not reused at once and a stale
//! handle is reported as "destroyed" rather than silently naming a new
//! object.
//!
//! **Which runtimes detect stale handles.** The simulator answers
//! `ACL_ERROR_RT_INVALID_HANDLE` (107017) for a destroyed or unknown stream
//! or event handle, as the newest runtime does. Released CANN runtimes
//! before 9.1.0 do not check: the handle is dereferenced, so a destroyed
//! stream or event is use after free (undefined behaviour, often a crash or
//! a silent success). In hicann/runtime the check came in 2026: model and
//! label handles in commit a22dab25d (2026-04-20, `api_handle_guard.cc`),
//! streams, events and notifies in 8ef28993a (2026-04-27, "Prevent UAF"),
//! the code 107017 for it (`RT_ERROR_INVALID_HANDLE`) in 076eea998
//! (2026-05-07); the first tag holding them is `v9.1.0-beta.2.pre`, the
//! first release `v9.1.0` (2026-07-30). The tags `v8.5.0`, `v9.0.0` and
//! `v9.0.1` lack it. The safe `acl` crate never relies on it: its handles
//! are `Arc`s destroyed only by their last drop, so it never passes a
//! destroyed handle, and no code path of it matches 107017.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock};

/// Destroyed objects kept allocated per table.
const GRAVEYARD: usize = 4096;

/// What a handle names.
pub enum Lookup<T> {
    /// A live object.
    Live(Arc<T>),
    /// An object that was destroyed.
    Destroyed,
    /// Nothing this simulator handed out (or destroyed long ago).
    Unknown,
}

/// One table.
pub struct Registry<T> {
    live: HashMap<usize, Arc<T>>,
    /// Destroyed handles still in the graveyard, with the call that
    /// destroyed each ("" when not said).
    dead: HashMap<usize, &'static str>,
    graveyard: VecDeque<Arc<T>>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry {
            live: HashMap::new(),
            dead: HashMap::new(),
            graveyard: VecDeque::new(),
        }
    }
}

impl<T> Registry<T> {
    /// Registers `obj`; returns its handle.
    pub fn insert(&mut self, obj: Arc<T>) -> usize {
        let addr = Arc::as_ptr(&obj) as usize;
        self.dead.remove(&addr);
        self.live.insert(addr, obj);
        addr
    }

    /// What `addr` names.
    pub fn get(&self, addr: usize) -> Lookup<T> {
        match self.live.get(&addr) {
            Some(o) => Lookup::Live(o.clone()),
            None if self.dead.contains_key(&addr) => Lookup::Destroyed,
            None => Lookup::Unknown,
        }
    }

    /// Unregisters `addr`; the object stays allocated in the graveyard.
    pub fn remove(&mut self, addr: usize) -> Option<Arc<T>> {
        self.remove_by(addr, "")
    }

    /// Unregisters `addr`, remembering that `by` destroyed it; the object
    /// stays allocated in the graveyard.
    pub fn remove_by(&mut self, addr: usize, by: &'static str) -> Option<Arc<T>> {
        let obj = self.live.remove(&addr)?;
        self.dead.insert(addr, by);
        self.graveyard.push_back(obj.clone());
        if self.graveyard.len() > GRAVEYARD
            && let Some(old) = self.graveyard.pop_front()
        {
            self.dead.remove(&(Arc::as_ptr(&old) as usize));
        }
        Some(obj)
    }

    /// The call that destroyed `addr`, while it is in the graveyard.
    pub fn destroyed_by(&self, addr: usize) -> Option<&'static str> {
        self.dead.get(&addr).copied()
    }

    /// Every live object.
    pub fn all(&self) -> Vec<Arc<T>> {
        self.live.values().cloned().collect()
    }
}

/// A process-wide table.
pub type Table<T> = LazyLock<Mutex<Registry<T>>>;

/// Describes a failed lookup of a `what` handle at `addr`, for messages.
pub fn describe_bad<T>(what: &str, addr: usize, l: &Lookup<T>) -> String {
    match l {
        Lookup::Destroyed => format!("{what} {addr:#x} has been destroyed"),
        _ => format!(
            "{addr:#x} is not a {what} handle (never created by this runtime, or destroyed long ago)"
        ),
    }
}

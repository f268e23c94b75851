//! Call counting: which runtime functions a piece of host code called, and
//! how often.
//!
//! Tests use it to prove a property of the calls a layer makes rather than
//! of its results: that a training step queued on the device never makes the
//! host wait for it ([`Calls::host_syncs`] is zero), or how many runtime
//! calls a safe wrapper adds to the raw call it makes (the overhead
//! benchmark).
//!
//! [`count`] runs a closure and returns, with its value, every ACL runtime
//! call the *calling thread* made meanwhile (those of other threads are not
//! counted, so tests running in parallel do not see each other's calls).
//! Counted are the functions that check injected faults at their start
//! ([`crate::faults`]): every implemented `aclrt*`/`acl*` runtime function
//! of the simulator. Scopes nest; a call counts in every open scope.
//!
//! When no scope is open anywhere in the process, a call pays one relaxed
//! atomic load for this.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The functions that block the calling host thread until device work has
/// finished: the explicit synchronisations and the synchronous copies and
/// fills, which the runtime orders after the work queued before them
/// (`aclrtMemcpy`, `aclrtMemset` and `aclrtMemcpy2d` wait for the device;
/// hicann/runtime, `src/runtime/api/api_c_memory.cc`).
pub const HOST_SYNCS: &[&str] = &[
    "aclrtSynchronizeDevice",
    "aclrtSynchronizeDeviceWithTimeout",
    "aclrtSynchronizeStream",
    "aclrtSynchronizeStreamWithTimeout",
    "aclrtSynchronizeEvent",
    "aclrtSynchronizeEventWithTimeout",
    "aclrtMemcpy",
    "aclrtMemset",
    "aclrtMemcpy2d",
];

/// The functions that ask the host whether device work has finished without
/// waiting for it (a loop of them is a host synchronisation too).
pub const HOST_POLLS: &[&str] = &[
    "aclrtQueryEvent",
    "aclrtQueryEventStatus",
    "aclrtStreamQuery",
];

/// Open scopes in the whole process: zero means nothing counts.
static OPEN: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The calling thread's open scopes, innermost last.
    static SCOPES: RefCell<Vec<BTreeMap<String, u64>>> = const { RefCell::new(Vec::new()) };
}

/// The runtime calls one thread made during a [`count`] scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    counts: BTreeMap<String, u64>,
}

impl Calls {
    /// How many times `api` (a C function's name, e.g.
    /// `aclrtMemcpyAsync`) was called.
    pub fn get(&self, api: &str) -> u64 {
        self.counts.get(api).copied().unwrap_or(0)
    }

    /// Every counted call.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Calls that blocked the host until device work finished
    /// ([`HOST_SYNCS`]).
    pub fn host_syncs(&self) -> u64 {
        HOST_SYNCS.iter().map(|api| self.get(api)).sum()
    }

    /// Calls that asked whether device work finished ([`HOST_POLLS`]).
    pub fn host_polls(&self) -> u64 {
        HOST_POLLS.iter().map(|api| self.get(api)).sum()
    }

    /// Each called function with its count, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.counts.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

impl fmt::Display for Calls {
    /// `aclrtMemcpyAsync ×2, aclrtRecordEvent ×1` (or `no calls`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.counts.is_empty() {
            return f.write_str("no calls");
        }
        for (i, (api, n)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{api} ×{n}")?;
        }
        Ok(())
    }
}

/// Closes the scope [`count`] opened; on unwind it also pops the scope's
/// map, so a panicking closure leaves no scope open on the thread.
struct Scope;

impl Drop for Scope {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = SCOPES.try_with(|s| s.try_borrow_mut().map(|mut s| s.pop()));
        }
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` and returns its value with the runtime calls this thread made
/// while it ran.
pub fn count<R>(f: impl FnOnce() -> R) -> (R, Calls) {
    SCOPES.with(|s| s.borrow_mut().push(BTreeMap::new()));
    OPEN.fetch_add(1, Ordering::Relaxed);
    let scope = Scope;
    let value = f();
    let counts = SCOPES.with(|s| s.borrow_mut().pop()).unwrap_or_default();
    drop(scope);
    (value, Calls { counts })
}

/// Counts a call of `api` in the calling thread's open scopes.
#[inline]
pub(crate) fn record(api: &str) {
    if OPEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    let _ = SCOPES.try_with(|s| {
        let Ok(mut scopes) = s.try_borrow_mut() else {
            return;
        };
        for scope in scopes.iter_mut() {
            match scope.get_mut(api) {
                Some(n) => *n += 1,
                None => {
                    scope.insert(api.to_string(), 1);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_counts_its_threads_calls_and_nested_scopes_count_in_both() {
        let ((), outer) = count(|| {
            record("aclrtMemcpy");
            let ((), inner) = count(|| {
                record("aclrtSynchronizeStream");
                record("aclrtMemcpyAsync");
            });
            assert_eq!(inner.total(), 2);
            assert_eq!(inner.host_syncs(), 1);
            std::thread::spawn(|| record("aclrtSynchronizeDevice"))
                .join()
                .unwrap();
        });
        assert_eq!(outer.get("aclrtMemcpy"), 1);
        assert_eq!(outer.get("aclrtMemcpyAsync"), 1);
        assert_eq!(outer.get("aclrtSynchronizeDevice"), 0);
        assert_eq!(outer.host_syncs(), 2);
        assert_eq!(
            outer.to_string(),
            "aclrtMemcpy ×1, aclrtMemcpyAsync ×1, aclrtSynchronizeStream ×1"
        );
    }

    #[test]
    fn a_panicking_closure_leaves_no_scope_open() {
        let r = std::panic::catch_unwind(|| count(|| panic!("boom")));
        assert!(r.is_err());
        SCOPES.with(|s| assert!(s.borrow().is_empty()));
        let ((), c) = count(|| record("aclrtStreamQuery"));
        assert_eq!((c.total(), c.host_polls()), (1, 1));
    }
}

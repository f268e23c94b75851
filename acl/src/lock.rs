//! Locking that survives a panic elsewhere.
//!
//! Every mutex in this crate guards a value that is whole after each
//! statement that changes it (a pool, a list, a flag), so a panic while it
//! was held cannot leave it half-changed. Such poisoning is therefore
//! ignored: the alternative, panicking, would reach users through public
//! APIs and `Drop`.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the guard even if another thread panicked holding it.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

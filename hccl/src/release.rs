//! Failures of `Drop`: a communicator that could not be destroyed is logged
//! (`log::warn!`, target `hccl`) and kept here, so that a program or a test
//! can check that teardown was clean. [`Comm::close`](crate::Comm::close)
//! reports the failure instead.

use crate::Error;
use std::sync::Mutex;

/// How many release failures are kept (the oldest are dropped first).
pub const CAPACITY: usize = 64;

/// One failed release.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseError {
    /// What was being released, e.g. `"Comm"`.
    pub resource: &'static str,
    /// Why it failed.
    pub error: Error,
}

static FAILURES: Mutex<Vec<ReleaseError>> = Mutex::new(Vec::new());

pub(crate) fn record(resource: &'static str, error: Error) {
    log::warn!(target: "hccl", "releasing {resource} failed: {error}");
    let mut v = FAILURES.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() >= CAPACITY {
        v.remove(0);
    }
    v.push(ReleaseError { resource, error });
}

/// Takes (and clears) the release failures recorded so far in this process.
pub fn take_release_errors() -> Vec<ReleaseError> {
    std::mem::take(&mut *FAILURES.lock().unwrap_or_else(|p| p.into_inner()))
}

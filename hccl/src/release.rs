//! Failures of `Drop`: a communicator that could not be destroyed is logged
//! (`log::warn!`, target `hccl`) and kept here, so that a program or a test
//! can check that teardown was clean. [`Comm::close`](crate::Comm::close)
//! reports the failure instead.

use crate::Error;
use acl::release::ReleaseLog;

/// How many release failures are kept (the oldest are dropped first): the
/// same as `acl`'s.
pub const CAPACITY: usize = acl::release::CAPACITY;

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

static FAILURES: ReleaseLog<ReleaseError> = ReleaseLog::new();

pub(crate) fn record(resource: &'static str, error: Error) {
    log::warn!(target: "hccl", "releasing {resource} failed: {error}");
    FAILURES.push(ReleaseError { resource, error });
}

/// Takes (and clears) the release failures recorded so far in this process.
pub fn take_release_errors() -> Vec<ReleaseError> {
    FAILURES.take()
}

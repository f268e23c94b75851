//! Failures of `Drop`.
//!
//! Releasing a resource (freeing device memory, resetting a device,
//! finalizing AscendCL) can fail, but `Drop` cannot return an error and must
//! never panic. Such failures are logged (`log::warn!`, target `acl`) and
//! kept here, so that a program or a test can check that teardown was clean.
//! Types with a meaningful release failure also offer an explicit
//! `close(self) -> Result<()>`.

use crate::Error;
use std::sync::Mutex;

/// How many release failures are kept (the oldest are dropped first).
pub const CAPACITY: usize = 256;

/// One failed release.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseError {
    /// What was being released, e.g. `"DeviceBuffer"`.
    pub resource: &'static str,
    /// Why it failed.
    pub error: Error,
}

static FAILURES: Mutex<Vec<ReleaseError>> = Mutex::new(Vec::new());

/// Records a failed release: logs it and keeps it for [`take_release_errors`].
pub(crate) fn record(resource: &'static str, error: Error) {
    log::warn!(target: "acl", "releasing {resource} failed: {error}");
    let mut v = crate::sync::lock(&FAILURES);
    if v.len() >= CAPACITY {
        v.remove(0);
    }
    v.push(ReleaseError { resource, error });
}

/// Takes (and clears) the release failures recorded so far in this process.
pub fn take_release_errors() -> Vec<ReleaseError> {
    std::mem::take(&mut *crate::sync::lock(&FAILURES))
}

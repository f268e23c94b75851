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

/// A process-wide log of release failures, keeping the last [`CAPACITY`]
/// (the oldest are dropped first). This crate keeps one of
/// [`ReleaseError`]s; a crate built on it (`hccl`) keeps its own with its
/// error type, so both behave alike.
///
/// `Send + Sync` for `T: Send`: the entries are behind a lock.
#[derive(Debug)]
pub struct ReleaseLog<T> {
    entries: Mutex<Vec<T>>,
}

impl<T> ReleaseLog<T> {
    /// An empty log (usable in a `static`).
    pub const fn new() -> ReleaseLog<T> {
        ReleaseLog {
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Keeps `entry`, dropping the oldest one when the log is full.
    pub fn push(&self, entry: T) {
        let mut v = crate::lock::lock(&self.entries);
        if v.len() >= CAPACITY {
            v.remove(0);
        }
        v.push(entry);
    }

    /// Takes (and clears) the entries kept so far.
    pub fn take(&self) -> Vec<T> {
        std::mem::take(&mut *crate::lock::lock(&self.entries))
    }
}

impl<T> Default for ReleaseLog<T> {
    fn default() -> Self {
        ReleaseLog::new()
    }
}

static FAILURES: ReleaseLog<ReleaseError> = ReleaseLog::new();

/// Records a failed release: logs it and keeps it for [`take_release_errors`].
pub(crate) fn record(resource: &'static str, error: Error) {
    log::warn!(target: "acl", "releasing {resource} failed: {error}");
    FAILURES.push(ReleaseError { resource, error });
}

/// Takes (and clears) the release failures recorded so far in this process.
pub fn take_release_errors() -> Vec<ReleaseError> {
    FAILURES.take()
}

/// Work to run where a `Drop` may not run it: inside a host function (no
/// AscendCL calls there) or where it could block (the last handle of a
/// stream held by a memory mark). One thread of the crate's, started on
/// first use, runs the jobs in order.
type Job = Box<dyn FnOnce() + Send>;

static QUEUE: Mutex<Option<std::sync::mpsc::Sender<Job>>> = Mutex::new(None);

thread_local! {
    static ON_RELEASE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the caller is the release thread (where a release may wait).
pub(crate) fn on_release_thread() -> bool {
    ON_RELEASE_THREAD.with(std::cell::Cell::get)
}

/// Runs `job` on the release thread.
pub(crate) fn in_background(job: Job) {
    let mut q = crate::lock::lock(&QUEUE);
    if q.is_none() {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let spawned = std::thread::Builder::new()
            .name("acl-release".into())
            .spawn(move || {
                ON_RELEASE_THREAD.with(|f| f.set(true));
                for job in rx {
                    job();
                }
            });
        match spawned {
            Ok(_) => *q = Some(tx),
            Err(e) => {
                // Leak rather than free what queued work may still use.
                record(
                    "release thread",
                    Error::invalid(
                        "drop",
                        format!("no release thread ({e}): the resource is leaked"),
                    ),
                );
                std::mem::forget(job);
                return;
            }
        }
    }
    if let Some(tx) = q.as_ref()
        && let Err(back) = tx.send(job)
    {
        std::mem::forget(back.0);
    }
}

/// Runs `f` now, or on the release thread when the caller runs a host
/// function (where AscendCL may not be called, and where waiting for the
/// host function's own stream would deadlock).
pub(crate) fn outside_host_fn(f: impl FnOnce() + Send + 'static) {
    if crate::device::in_host_fn() {
        in_background(Box::new(f));
    } else {
        f();
    }
}

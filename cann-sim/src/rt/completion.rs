//! A one-shot completion signal: an event's record, a blocking callback.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where a completion stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Not yet.
    Pending,
    /// Done, at this time on the simulator's clock (ns).
    Done(u64),
    /// It will never complete normally; why.
    Cancelled(String),
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wait {
    /// Done at this time (ns).
    Done(u64),
    /// Cancelled, with the reason.
    Cancelled(String),
    /// The waiter's abort flag was raised (its stream is being force-destroyed).
    Aborted,
    /// The deadline passed.
    TimedOut,
}

/// A one-shot signal with a timestamp.
#[derive(Debug)]
pub struct Completion {
    status: Mutex<Status>,
    cv: Condvar,
}

impl Default for Completion {
    fn default() -> Self {
        Completion {
            status: Mutex::new(Status::Pending),
            cv: Condvar::new(),
        }
    }
}

/// How often a waiter with an abort flag looks at it.
const ABORT_POLL: Duration = Duration::from_millis(5);

impl Completion {
    /// A pending completion.
    pub fn new() -> Completion {
        Completion::default()
    }

    /// Marks it done at `at_ns` (first call wins).
    pub fn complete(&self, at_ns: u64) {
        let mut s = self.status.lock();
        if *s == Status::Pending {
            *s = Status::Done(at_ns);
            self.cv.notify_all();
        }
    }

    /// Marks it cancelled (first call wins).
    pub fn cancel(&self, why: impl Into<String>) {
        let mut s = self.status.lock();
        if *s == Status::Pending {
            *s = Status::Cancelled(why.into());
            self.cv.notify_all();
        }
    }

    /// Where it stands now.
    pub fn status(&self) -> Status {
        self.status.lock().clone()
    }

    /// Waits until it is done or cancelled, `abort` is raised, or `deadline`
    /// passes.
    pub fn wait(&self, abort: Option<&AtomicBool>, deadline: Option<Instant>) -> Wait {
        let mut s = self.status.lock();
        loop {
            match &*s {
                Status::Done(t) => return Wait::Done(*t),
                Status::Cancelled(why) => return Wait::Cancelled(why.clone()),
                Status::Pending => {}
            }
            if abort.is_some_and(|a| a.load(Ordering::Acquire)) {
                return Wait::Aborted;
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Wait::TimedOut;
            }
            let mut until = deadline;
            if abort.is_some() {
                let poll = now + ABORT_POLL;
                until = Some(until.map_or(poll, |d| d.min(poll)));
            }
            match until {
                Some(t) => {
                    self.cv.wait_until(&mut s, t);
                }
                None => self.cv.wait(&mut s),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn waits_for_completion_from_another_thread() {
        let c = Arc::new(Completion::new());
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.complete(42));
        assert_eq!(c.wait(None, None), Wait::Done(42));
        t.join().unwrap();
        c.cancel("late");
        assert_eq!(c.status(), Status::Done(42));
    }

    #[test]
    fn times_out_and_aborts() {
        let c = Completion::new();
        let soon = Instant::now() + Duration::from_millis(10);
        assert_eq!(c.wait(None, Some(soon)), Wait::TimedOut);
        let abort = AtomicBool::new(true);
        assert_eq!(c.wait(Some(&abort), None), Wait::Aborted);
        c.cancel("gone");
        assert_eq!(c.wait(None, None), Wait::Cancelled("gone".into()));
    }
}

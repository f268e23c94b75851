//! Stream-ordered 64-bit values in device memory: `aclrtValueWrite` and
//! `aclrtValueWait` (hicann/runtime `src/runtime/api/api_c_memory.cc`
//! `rtsValueWrite`/`rtsValueWait`, checks in `api_impl/api_error.cc`
//! `MemWriteValue`/`MemWaitValue`).
//!
//! A write is an operator-like task that stores the value (so it can be
//! captured); a wait blocks its stream until the word meets the condition
//! (`MEM_WAIT_VALUE_TYPE_*`, `src/runtime/core/inc/stars/stars_cond_isa_define.hpp`).
//! The device polls the word; so does the simulator's worker, with a short
//! back-off, taking the allocation table's read lock only for each read.

use super::error::{Error, ErrorKind};
use super::stream::{Expect, Stream, TaskKind, TaskRange};
use crate::check::Use;
use crate::state::{self, MemTable};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When a value wait ends (`MEM_WAIT_VALUE_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// `*addr >= value` (`GEQ`, flag 0).
    GreaterOrEqual,
    /// `*addr == value` (`EQ`, flag 1).
    Equal,
    /// `*addr & value != 0` (`AND`, flag 2).
    And,
    /// `!(*addr | value) != 0` (`NOR`, flag 3).
    Nor,
}

impl Cond {
    /// The condition of a wait `flag`, `None` for 4 and above
    /// (`MEM_WAIT_VALUE_TYPE_MAX`).
    pub fn from_flag(flag: u32) -> Option<Cond> {
        Some(match flag {
            0 => Cond::GreaterOrEqual,
            1 => Cond::Equal,
            2 => Cond::And,
            3 => Cond::Nor,
            _ => return None,
        })
    }

    /// Whether `word` meets the condition against `value`.
    pub fn holds(self, word: u64, value: u64) -> bool {
        match self {
            Cond::GreaterOrEqual => word >= value,
            Cond::Equal => word == value,
            Cond::And => word & value != 0,
            Cond::Nor => !(word | value) != 0,
        }
    }
}

/// Reads the word at `addr` (in a live allocation the caller holds the
/// table's read lock on).
///
/// # Safety
///
/// `addr..addr + 8` lies in a live allocation that stays live for the call.
unsafe fn load(addr: usize) -> u64 {
    if addr.is_multiple_of(8) {
        // SAFETY: aligned and in a live allocation (the caller's contract);
        // other streams write it with atomic stores too.
        unsafe { AtomicU64::from_ptr(addr as *mut u64) }.load(Ordering::Acquire)
    } else {
        // SAFETY: in a live allocation (the caller's contract).
        unsafe { std::ptr::read_unaligned(addr as *const u64) }
    }
}

/// Writes the word at `addr`.
///
/// # Safety
///
/// As [`load`].
unsafe fn store(addr: usize, value: u64) {
    if addr.is_multiple_of(8) {
        // SAFETY: as in `load`.
        unsafe { AtomicU64::from_ptr(addr as *mut u64) }.store(value, Ordering::Release);
    } else {
        // SAFETY: as in `load`.
        unsafe { std::ptr::write_unaligned(addr as *mut u64, value) };
    }
}

/// The name value-write tasks carry.
pub const WRITE_API: &str = "aclrtValueWrite";

/// The task that writes `value` at `addr` (8 bytes of device memory,
/// validated at `at`): an operator-like task, so that it can be captured.
pub fn write_task(addr: usize, value: u64, at: Expect) -> TaskKind {
    let kernel = Arc::new(move || {
        // SAFETY: the task runs only once its range (the 8 bytes at `addr`)
        // is checked live, and the read lock keeps it so (`rt::stream`).
        unsafe { store(addr, value) };
        Ok(())
    });
    TaskKind::Op {
        api: WRITE_API,
        ranges: vec![TaskRange {
            what: "devAddr",
            addr,
            len: 8,
            at,
            // A synchronisation word other streams wait on: checked for
            // frees, not for races (`check::Use::Opaque`).
            how: Use::Opaque,
        }],
        kernel,
    }
}

/// Queues the write of `value` at `addr` (8 bytes of device memory of the
/// stream's device, validated at `at`) on `s`; on a capturing stream the
/// write is recorded as a value-write task of the model
/// ([`super::capture::Model::record_value_write`]).
///
/// # Errors
///
/// The stream's error when it is being destroyed; a capture's refusal.
pub fn enqueue_write(s: &Stream, addr: usize, value: u64, at: Expect) -> Result<(), Error> {
    let capturing = s.capture.lock().clone();
    if let Some(m) = capturing {
        return m.record_value_write(s, addr, value, at);
    }
    s.enqueue(|_| write_task(addr, value, at)).map(drop)
}

/// The failure of a queued wait that outlived `limit` (the operator wait
/// timeout).
pub fn wait_timed_out(what: &str, limit: Option<Duration>) -> Error {
    let secs = limit.map_or(0, |d| d.as_secs());
    Error::new(
        ErrorKind::TaskTimeout,
        format!(
            "{what} did not end within the operator wait timeout of {secs} s \
             (aclrtSetOpWaitTimeout)"
        ),
    )
}

/// Runs a value wait on a stream's worker: polls the word until it meets
/// `cond`, the stream is aborted, or the operator wait timeout passes.
/// `check` validates the range under the read lock before each read.
///
/// # Errors
///
/// A memory fault when the word's allocation was freed; the task timeout.
pub(crate) fn run_wait(
    abort: &AtomicBool,
    addr: usize,
    value: u64,
    cond: Cond,
    check: impl Fn(&MemTable) -> Result<(), String>,
) -> Result<(), Error> {
    let limit = super::settings::op_wait_timeout();
    let deadline = limit.map(|t| Instant::now() + t);
    let mut pause = Duration::from_micros(20);
    loop {
        {
            let table = state::memory().read();
            check(&table).map_err(|e| Error::new(ErrorKind::MemoryFault, e))?;
            // SAFETY: checked live just now; the read lock keeps it so.
            let word = unsafe { load(addr) };
            drop(table);
            if cond.holds(word, value) {
                return Ok(());
            }
        }
        if abort.load(Ordering::Acquire) {
            return Ok(());
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(wait_timed_out("the value wait", limit));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_four_wait_conditions_follow_the_stars_definitions() {
        assert_eq!(Cond::from_flag(4), None);
        let c = |f| Cond::from_flag(f).unwrap();
        assert!(c(0).holds(5, 5) && c(0).holds(6, 5) && !c(0).holds(4, 5));
        assert!(c(1).holds(5, 5) && !c(1).holds(6, 5));
        assert!(c(2).holds(0b110, 0b010) && !c(2).holds(0b100, 0b010));
        assert!(c(3).holds(0b01, 0b10) && !c(3).holds(u64::MAX, 0));
    }
}

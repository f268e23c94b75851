//! The process-wide HCCL settings (`HcclSetConfig`): whether reductions
//! must be deterministic, and the accelerator collectives run on. They are
//! the defaults of communicators created afterwards (each communicator
//! keeps its own copy, see [`super::communicator::Comm`]).

use std::sync::atomic::{AtomicI32, Ordering};

/// The process-wide deterministic setting (-1: not set, see the variable).
static DETERMINISTIC: AtomicI32 = AtomicI32::new(-1);
/// The process-wide accelerator setting.
static ACCELERATOR: AtomicI32 = AtomicI32::new(0);

/// The process-wide deterministic setting: 0 or 1.
pub fn deterministic() -> i32 {
    match DETERMINISTIC.load(Ordering::Relaxed) {
        v if v >= 0 => v,
        _ => match std::env::var("HCCL_DETERMINISTIC")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            // `true` or `strict` (hicann/hcomm
            // `src/legacy/ascend910/platform/common/externalinput.cc`,
            // `ParseDeterministic`; other values fail the environment check).
            Ok("true" | "strict") => 1,
            _ => 0,
        },
    }
}

/// Sets the process-wide deterministic setting (0 or 1).
pub fn set_deterministic(v: i32) {
    DETERMINISTIC.store(v, Ordering::Relaxed);
}

/// The process-wide accelerator setting.
pub fn accelerator() -> i32 {
    ACCELERATOR.load(Ordering::Relaxed)
}

/// Sets the process-wide accelerator setting.
pub fn set_accelerator(v: i32) {
    ACCELERATOR.store(v, Ordering::Relaxed);
}

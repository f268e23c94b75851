//! What every HCCL export shares: the early returns (`tri!`,
//! `check_injected!`), the codes and their names, and the messages a failing
//! call records (each starting with the function's name, read with
//! `aclGetRecentErrMsg`, where real CANN's error manager also reports HCCL's
//! EIxxxx errors).

use crate::comm::transport::Fail;
use crate::faults;
use crate::recent_error::fail;
use crate::state;
use hccl_sys::*;
use std::ffi::c_void;

/// `tri!(expr)`: the value of an `Ok`, or `return rc` for an `Err(rc)` —
/// the early return of a C export whose checks yield its `HcclResult`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}
pub(crate) use tri;

/// `check_injected!(F)`: returns the fault injected into `F` (see
/// [`crate::faults`]), if any — the first statement of every export.
macro_rules! check_injected {
    ($f:expr) => {
        if let Some(c) = $crate::hccl::common::injected($f) {
            return c;
        }
    };
}
pub(crate) use check_injected;

pub(super) fn injected(f: &str) -> Option<HcclResult> {
    faults::check(f).map(|c| c as HcclResult)
}

/// `HCCL_E_IN_STATUS`, of headers newer than `hccl-sys`'s (hicann/hcomm
/// `include/hccl/hccl_types.h`).
pub const HCCL_E_IN_STATUS: HcclResult = 1041;

/// The header's name of a code.
pub fn code_name(code: HcclResult) -> &'static str {
    match code {
        HCCL_SUCCESS => "HCCL_SUCCESS",
        HCCL_E_PARA => "HCCL_E_PARA",
        HCCL_E_PTR => "HCCL_E_PTR",
        HCCL_E_MEMORY => "HCCL_E_MEMORY",
        HCCL_E_INTERNAL => "HCCL_E_INTERNAL",
        HCCL_E_NOT_SUPPORT => "HCCL_E_NOT_SUPPORT",
        HCCL_E_NOT_FOUND => "HCCL_E_NOT_FOUND",
        HCCL_E_UNAVAIL => "HCCL_E_UNAVAIL",
        HCCL_E_SYSCALL => "HCCL_E_SYSCALL",
        HCCL_E_TIMEOUT => "HCCL_E_TIMEOUT",
        HCCL_E_OPEN_FILE_FAILURE => "HCCL_E_OPEN_FILE_FAILURE",
        HCCL_E_TCP_CONNECT => "HCCL_E_TCP_CONNECT",
        HCCL_E_ROCE_CONNECT => "HCCL_E_ROCE_CONNECT",
        HCCL_E_TCP_TRANSFER => "HCCL_E_TCP_TRANSFER",
        HCCL_E_ROCE_TRANSFER => "HCCL_E_ROCE_TRANSFER",
        HCCL_E_RUNTIME => "HCCL_E_RUNTIME",
        HCCL_E_DRV => "HCCL_E_DRV",
        HCCL_E_PROFILING => "HCCL_E_PROFILING",
        HCCL_E_CCE => "HCCL_E_CCE",
        HCCL_E_NETWORK => "HCCL_E_NETWORK",
        HCCL_E_AGAIN => "HCCL_E_AGAIN",
        HCCL_E_REMOTE => "HCCL_E_REMOTE",
        HCCL_E_SUSPENDING => "HCCL_E_SUSPENDING",
        HCCL_E_OPRETRY_FAIL => "HCCL_E_OPRETRY_FAIL",
        HCCL_E_OOM => "HCCL_E_OOM",
        HCCL_E_IN_STATUS => "HCCL_E_IN_STATUS",
        _ => "HCCL_E_RESERVED",
    }
}

pub(super) fn fail_with(function: &str, f: Fail) -> HcclResult {
    fail(
        f.code,
        format!("{function}: {}: {}", code_name(f.code), f.msg),
    )
}

pub(super) fn para(function: &str, msg: impl std::fmt::Display) -> HcclResult {
    fail(HCCL_E_PARA, format!("{function}: {msg}"))
}

pub(super) fn null(function: &str, what: &str) -> HcclResult {
    fail(HCCL_E_PTR, format!("{function}: {what} is null"))
}

/// The calling thread's current device: `HCCL_E_RUNTIME` without one, as
/// HCCL's `hrtGetDeviceRefresh` (`aclrtGetDevice`) reports (hicann/hcomm
/// `src/legacy/ascend910/platform/common/adapter/adapter_rts.cc`).
pub(super) fn current_device(function: &str) -> Result<u32, HcclResult> {
    state::current_device().ok_or_else(|| {
        fail(
            HCCL_E_RUNTIME,
            format!(
                "{function}: no device is set on this thread (HCCL reads it with aclrtGetDevice); \
                 call aclrtSetDevice first"
            ),
        )
    })
}

/// The process's HCCL environment (read once; see [`crate::comm::env`]).
pub(super) fn env_arg(f: &str) -> Result<(), HcclResult> {
    crate::comm::env::get()
        .map(drop)
        .map_err(|e| fail_with(f, e))
}

/// Reads `n` u64 values from a C array.
///
/// # Safety
///
/// `p` is null or valid for `n` reads of u64.
pub(super) unsafe fn u64s(
    function: &str,
    what: &str,
    p: *const c_void,
    n: usize,
) -> Result<Vec<u64>, HcclResult> {
    if p.is_null() {
        return Err(null(function, what));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u64>(), n) }.to_vec())
}

//! What every HCCL export shares: the early returns (`tri!`,
//! `check_injected!`), the codes and their names, and the messages a failing
//! call records (each starting with the function's name, read with
//! `aclGetRecentErrMsg`, where real CANN's error manager also reports HCCL's
//! EIxxxx errors).

use crate::comm::communicator::{self, Comm};
use crate::comm::reduce::{DataType, ReduceOp};
use crate::comm::{ErrorKind, Fail};
use crate::faults;
use crate::recent_error::fail;
use crate::state;
use hccl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;

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

/// The code of an engine failure of `kind`.
pub fn code(kind: ErrorKind) -> HcclResult {
    match kind {
        ErrorKind::Para => HCCL_E_PARA,
        ErrorKind::Memory => HCCL_E_MEMORY,
        ErrorKind::Internal => HCCL_E_INTERNAL,
        ErrorKind::NotSupported => HCCL_E_NOT_SUPPORT,
        ErrorKind::Unavailable => HCCL_E_UNAVAIL,
        ErrorKind::Timeout => HCCL_E_TIMEOUT,
        ErrorKind::TcpConnect => HCCL_E_TCP_CONNECT,
        ErrorKind::TcpTransfer => HCCL_E_TCP_TRANSFER,
        ErrorKind::Remote => HCCL_E_REMOTE,
        ErrorKind::Again => HCCL_E_AGAIN,
        ErrorKind::OpenFile => HCCL_E_OPEN_FILE_FAILURE,
    }
}

/// Records a failure of the engine in `function` (named by its code) and
/// returns its code.
pub(super) fn fail_with(function: &str, f: Fail) -> HcclResult {
    let rc = code(f.kind);
    fail(rc, format!("{function}: {}: {}", code_name(rc), f.msg))
}

/// Records an argument the engine refused in `function` and returns its
/// code.
pub(super) fn arg_fail(function: &str, f: Fail) -> HcclResult {
    fail(code(f.kind), format!("{function}: {}", f.msg))
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

/// The communicator of handle `h`.
///
/// # Errors
///
/// `HCCL_E_PTR` for null, `HCCL_E_PARA` for a destroyed or unknown handle,
/// each with a message starting with `function`.
pub(super) fn comm_arg(function: &str, h: HcclComm) -> Result<Arc<Comm>, HcclResult> {
    if h.is_null() {
        return Err(fail(HCCL_E_PTR, format!("{function}: comm is null")));
    }
    communicator::find(h as usize).map_err(|e| arg_fail(function, e))
}

/// The header's name of a data type, for messages.
pub(super) fn type_name(dt: HcclDataType) -> String {
    match dt {
        HCCL_DATA_TYPE_INT128 => "int128".into(),
        HCCL_DATA_TYPE_HIF8 => "hif8".into(),
        HCCL_DATA_TYPE_FP8E4M3 => "fp8e4m3".into(),
        HCCL_DATA_TYPE_FP8E5M2 => "fp8e5m2".into(),
        HCCL_DATA_TYPE_FP8E8M0 => "fp8e8m0".into(),
        other => data_type(other).map_or_else(
            |_| format!("unknown data type {other}"),
            |d| d.name().into(),
        ),
    }
}

/// The engine's type for `dt`.
///
/// # Errors
///
/// `(HCCL_E_NOT_SUPPORT, why)` for int128 and the fp8 family, which the
/// simulator does not move; `(HCCL_E_PARA, why)` for values outside the enum.
pub(super) fn data_type(dt: HcclDataType) -> Result<DataType, (HcclResult, String)> {
    Ok(match dt {
        HCCL_DATA_TYPE_INT8 => DataType::Int8,
        HCCL_DATA_TYPE_INT16 => DataType::Int16,
        HCCL_DATA_TYPE_INT32 => DataType::Int32,
        HCCL_DATA_TYPE_FP16 => DataType::Fp16,
        HCCL_DATA_TYPE_FP32 => DataType::Fp32,
        HCCL_DATA_TYPE_INT64 => DataType::Int64,
        HCCL_DATA_TYPE_UINT64 => DataType::Uint64,
        HCCL_DATA_TYPE_UINT8 => DataType::Uint8,
        HCCL_DATA_TYPE_UINT16 => DataType::Uint16,
        HCCL_DATA_TYPE_UINT32 => DataType::Uint32,
        HCCL_DATA_TYPE_FP64 => DataType::Fp64,
        HCCL_DATA_TYPE_BFP16 => DataType::Bfp16,
        HCCL_DATA_TYPE_INT128
        | HCCL_DATA_TYPE_HIF8
        | HCCL_DATA_TYPE_FP8E4M3
        | HCCL_DATA_TYPE_FP8E5M2
        | HCCL_DATA_TYPE_FP8E8M0 => {
            return Err((
                HCCL_E_NOT_SUPPORT,
                format!("data type {} is not supported by cann-sim", type_name(dt)),
            ));
        }
        _ => {
            return Err((
                HCCL_E_PARA,
                format!("dataType {dt} is not a valid HcclDataType"),
            ));
        }
    })
}

/// The engine's op for `op`.
///
/// # Errors
///
/// `(HCCL_E_PARA, why)` for values outside the enum.
pub(super) fn reduce_op(op: HcclReduceOp) -> Result<ReduceOp, (HcclResult, String)> {
    Ok(match op {
        HCCL_REDUCE_SUM => ReduceOp::Sum,
        HCCL_REDUCE_PROD => ReduceOp::Prod,
        HCCL_REDUCE_MAX => ReduceOp::Max,
        HCCL_REDUCE_MIN => ReduceOp::Min,
        _ => {
            return Err((
                HCCL_E_PARA,
                format!("op {op} is not a valid HcclReduceOp (sum 0, prod 1, max 2, min 3)"),
            ));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_outside_the_enum_are_para_and_unmoved_ones_not_supported() {
        assert_eq!(data_type(HCCL_DATA_TYPE_FP32), Ok(DataType::Fp32));
        assert_eq!(data_type(99).unwrap_err().0, HCCL_E_PARA);
        assert_eq!(
            data_type(HCCL_DATA_TYPE_INT128).unwrap_err().0,
            HCCL_E_NOT_SUPPORT
        );
        assert_eq!(reduce_op(HCCL_REDUCE_MIN), Ok(ReduceOp::Min));
        assert_eq!(reduce_op(7).unwrap_err().0, HCCL_E_PARA);
        assert_eq!(type_name(HCCL_DATA_TYPE_FP8E5M2), "fp8e5m2");
        assert_eq!(type_name(99), "unknown data type 99");
    }
}

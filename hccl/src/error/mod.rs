//! The crate's one error type.
//!
//! A failing HCCL call becomes [`Error::Hccl`]: the [`ErrorCode`] (every
//! `HcclResult` of the headers by name, unknown values kept), the C
//! function, and the library's own message. HCCL reports details through
//! CANN's error manager, which `aclGetRecentErrMsg` reads (the `EIxxxx`
//! texts of real CANN; `cann-sim` records its messages there too), so the
//! message is read right after the failure, on the same thread, and kept in
//! the form the `acl` crate keeps (the messages without the error manager's
//! stamps; see `acl::error`).
//!
//! Queued collectives fail later: the stream's synchronisation returns an
//! [`Error::Acl`] (e.g. 507048 for a timed-out peer) and
//! [`Comm::async_error`](crate::Comm::async_error) says what HCCL saw.

// The `HcclResult` codes by name, `HcclResult` and `LoadError`.
use crate::result::raw::*;
use acl::error::MessageSuffix;
use std::fmt;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

mod codes;
pub use codes::ErrorCode;

/// `HCCL_E_IN_STATUS` (1041): "the error information is in the status", added
/// by newer headers than the ones `hccl-sys` was generated from (hicann/hcomm
/// `include/hccl/hccl_types.h`).
pub const HCCL_E_IN_STATUS: u32 = ErrorCode::InStatus.raw();

impl ErrorCode {
    /// What the code means, in a few words. (Written here, not generated:
    /// a code added by new headers fails to compile until it has one.)
    pub fn description(self) -> &'static str {
        match self {
            ErrorCode::Success => "success",
            ErrorCode::Para => "an invalid parameter",
            ErrorCode::Ptr => "a null pointer",
            ErrorCode::Memory => "a memory error",
            ErrorCode::Internal => "an internal error",
            ErrorCode::NotSupport => "not supported",
            ErrorCode::NotFound => "a resource was not found",
            ErrorCode::Unavail => "a resource is unavailable",
            ErrorCode::Syscall => "a system call failed",
            ErrorCode::Timeout => "a timeout",
            ErrorCode::OpenFileFailure => "a file could not be opened",
            ErrorCode::TcpConnect => "a TCP connection failed",
            ErrorCode::RoceConnect => "a RoCE connection failed",
            ErrorCode::TcpTransfer => "a TCP transfer failed",
            ErrorCode::RoceTransfer => "a RoCE transfer failed",
            ErrorCode::Runtime => "a runtime call failed",
            ErrorCode::Drv => "a driver call failed",
            ErrorCode::Profiling => "a profiling call failed",
            ErrorCode::Cce => "a CCE call failed",
            ErrorCode::Network => "a network call failed",
            ErrorCode::Again => "try again",
            ErrorCode::Remote => "a remote rank failed",
            ErrorCode::Suspending => "the communicator is suspended",
            ErrorCode::OpretryFail => "an operation retry failed",
            ErrorCode::Oom => "out of memory",
            ErrorCode::InStatus => "the error information is in the request's status",
            ErrorCode::Unknown(_) => "a code the HCCL headers do not define",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.raw())
    }
}

/// What failed in the bootstrap (the root-info exchange of
/// [`bootstrap`](crate::bootstrap)).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BootstrapErrorKind {
    /// Rank 0 could not listen on the master address (the port is in use,
    /// the address is not local).
    Listen,
    /// A rank could not reach rank 0 within the connect timeout.
    Connect,
    /// The exchange with rank 0 did not complete within its timeout.
    Exchange,
    /// The ranks disagree (world size, duplicate rank) or the peer is not a
    /// bootstrap server.
    Mismatch,
    /// The environment does not describe a rank (missing or bad variables).
    Environment,
}

/// How [`Error::Bootstrap`] reads: an environment problem is said as it is
/// (no rank or address is known yet); others name the rank and address.
struct BootstrapMessage<'a> {
    kind: BootstrapErrorKind,
    rank: u32,
    addr: &'a str,
    reason: &'a str,
}

impl fmt::Display for BootstrapMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            BootstrapErrorKind::Environment => {
                write!(
                    f,
                    "bootstrap: the environment describes no rank: {}",
                    self.reason
                )
            }
            kind => write!(
                f,
                "bootstrap of rank {} with {} failed ({kind:?}): {}",
                self.rank, self.addr, self.reason
            ),
        }
    }
}

/// Everything that can go wrong in this crate.
///
/// `Send + Sync`: plain data (codes and strings), so errors cross threads and
/// fit `Box<dyn std::error::Error + Send + Sync>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An HCCL call returned a code other than `HCCL_SUCCESS`.
    #[error("{function} failed with {code}{}", MessageSuffix(.message))]
    Hccl {
        /// The code.
        code: ErrorCode,
        /// The C function, e.g. `"HcclAllReduce"`.
        function: &'static str,
        /// The library's message for this failure, if it gave one.
        message: Option<String>,
    },
    /// An AscendCL call failed (binding the device, stream ordering, or the
    /// synchronisation that reports a failed collective).
    #[error(transparent)]
    Acl(#[from] acl::Error),
    /// The HCCL library, or one of its functions, could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// An argument was rejected before calling into HCCL.
    #[error("{function}: {reason}")]
    InvalidArgument {
        /// The Rust API that rejected it.
        function: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// A rank table is malformed.
    #[error("rank table {source_name}: {reason}")]
    RankTable {
        /// The file (or `"<string>"`).
        source_name: String,
        /// The first problem found.
        reason: String,
    },
    /// The bootstrap failed: which rank, which address, why.
    #[error("{}", BootstrapMessage { kind: *.kind, rank: *.rank, addr, reason })]
    Bootstrap {
        /// What failed.
        kind: BootstrapErrorKind,
        /// The rank that failed.
        rank: u32,
        /// The address involved (rank 0's master address).
        addr: String,
        /// Why.
        reason: String,
    },
}

impl Error {
    /// The HCCL code, if this error came from an HCCL call.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Hccl { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The AscendCL error, if this is one (e.g. a failed synchronisation).
    pub fn acl(&self) -> Option<&acl::Error> {
        match self {
            Error::Acl(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn invalid(function: &'static str, reason: impl Into<String>) -> Error {
        Error::InvalidArgument {
            function,
            reason: reason.into(),
        }
    }

    /// The error for `function` returning `code`, with the library's
    /// message (read now, on this thread).
    pub fn from_code(function: &'static str, code: u32) -> Error {
        Error::Hccl {
            code: ErrorCode::from_raw(code),
            function,
            message: recent_message(),
        }
    }
}

/// Reads and clears this thread's recent error message, in the form the
/// `acl` crate keeps (see `acl::error`): the messages without the runtime's
/// stamps, and nothing repeated from the previous read.
fn recent_message() -> Option<String> {
    acl::error::take_recent_message()
}

/// Clears a stale recent-error message before a call, so that the one read
/// after a failure is the call's own.
pub(crate) fn clear_recent() {
    let _ = recent_message();
}

/// Turns a raw call's outcome into a `Result` (for [`result`](crate::result)'s
/// `call!`).
pub(crate) fn check(function: &'static str, rc: Result<HcclResult, LoadError>) -> Result<()> {
    match rc? {
        HCCL_SUCCESS => Ok(()),
        code => Err(Error::from_code(function, code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_code_round_trips_and_has_the_header_name() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_raw(c.raw()), c);
            assert!(c.name().starts_with("HCCL_"));
        }
        assert_eq!(ErrorCode::ALL.len(), 26);
        assert_eq!(ErrorCode::from_raw(9), ErrorCode::Timeout);
        assert_eq!(ErrorCode::from_raw(77), ErrorCode::Unknown(77));
        assert_eq!(ErrorCode::Remote.to_string(), "HCCL_E_REMOTE (21)");
    }

    /// Newer headers add HCCL_E_IN_STATUS = 1041 (hicann/hcomm
    /// include/hccl/hccl_types.h); codes of even newer ones are kept as
    /// Unknown with their number, never mapped to another code.
    #[test]
    fn newer_and_unknown_codes_are_kept_and_named() {
        let c = ErrorCode::from_raw(1041);
        assert_eq!(c, ErrorCode::InStatus);
        assert_eq!(
            (c.raw(), c.to_string()),
            (1041, "HCCL_E_IN_STATUS (1041)".to_string())
        );
        for raw in [25, 1040, 1042, u32::MAX] {
            let c = ErrorCode::from_raw(raw);
            assert_eq!((c, c.raw()), (ErrorCode::Unknown(raw), raw));
            assert_eq!(c.to_string(), format!("HCCL_E_UNKNOWN ({raw})"));
        }
        let e = Error::Hccl {
            code: ErrorCode::from_raw(1041),
            function: "HcclCommDestroy",
            message: None,
        };
        assert_eq!(
            e.to_string(),
            "HcclCommDestroy failed with HCCL_E_IN_STATUS (1041)"
        );
        let e = Error::Hccl {
            code: ErrorCode::from_raw(4242),
            function: "HcclCommDestroy",
            message: None,
        };
        assert_eq!(
            e.to_string(),
            "HcclCommDestroy failed with HCCL_E_UNKNOWN (4242)"
        );
    }

    #[test]
    fn hccl_errors_display_function_code_and_message() {
        let e = Error::Hccl {
            code: ErrorCode::TcpConnect,
            function: "HcclCommInitRootInfo",
            message: Some("cannot reach 10.0.0.1:1234".into()),
        };
        assert_eq!(
            e.to_string(),
            "HcclCommInitRootInfo failed with HCCL_E_TCP_CONNECT (11): cannot reach 10.0.0.1:1234"
        );
        assert_eq!(e.code(), Some(ErrorCode::TcpConnect));
    }
}

//! The crate's one error type.
//!
//! Every failing AscendCL call becomes an [`Error::Acl`] holding the numeric
//! code (as an [`ErrorCode`] with the header's symbolic name), the C function
//! that failed, and the runtime's own explanation from `aclGetRecentErrMsg`,
//! read right after the failure on the same thread. Problems found before any
//! C call (a length mismatch, an out-of-range device) are
//! [`Error::InvalidArgument`]; a missing library or symbol is [`Error::Load`].

mod codes;
pub use codes::ErrorCode;

use acl_sys::LoadError;
use std::fmt;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in this crate.
///
/// `Send + Sync`: plain data (codes and strings), so errors cross threads and
/// fit `Box<dyn std::error::Error + Send + Sync>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An AscendCL call returned a non-zero `aclError`.
    #[error("{function} failed with {} ({}){}", .code.name(), .code.raw(), MessageSuffix(.message))]
    Acl {
        /// The code the call returned.
        code: ErrorCode,
        /// The C function that failed, e.g. `"aclrtMalloc"`.
        function: &'static str,
        /// The runtime's recent-error message for this failure, if it gave one.
        message: Option<String>,
    },
    /// The AscendCL library, or one of its functions, could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A host function queued with `Stream::launch_host_fn` panicked; the
    /// panic was caught on the runtime's thread and is reported here.
    #[error("a host function queued on the stream panicked: {message}")]
    HostFunctionPanicked {
        /// The panic message(s).
        message: String,
    },
    /// An argument was rejected before calling into AscendCL.
    #[error("{function}: {reason}")]
    InvalidArgument {
        /// The Rust API that rejected it.
        function: &'static str,
        /// What was wrong.
        reason: String,
    },
}

struct MessageSuffix<'a>(&'a Option<String>);

impl fmt::Display for MessageSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(m) => write!(f, ": {m}"),
            None => Ok(()),
        }
    }
}

impl Error {
    /// The error for `function` returning the non-zero `code`, with the
    /// runtime's recent-error message (read now, on this thread).
    pub fn from_code(function: &'static str, code: i32) -> Error {
        Error::Acl {
            code: ErrorCode::from_raw(code),
            function,
            message: recent_message(),
        }
    }

    /// The AscendCL code, if this error came from a C call.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Acl { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The C function that failed, if this error came from a C call.
    pub fn function(&self) -> Option<&'static str> {
        match self {
            Error::Acl { function, .. } => Some(function),
            _ => None,
        }
    }

    /// The runtime's message, if it gave one.
    pub fn message(&self) -> Option<&str> {
        match self {
            Error::Acl { message, .. } => message.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn invalid(function: &'static str, reason: impl Into<String>) -> Error {
        Error::InvalidArgument {
            function,
            reason: reason.into(),
        }
    }
}

/// Reads and clears this thread's recent-error message (`aclGetRecentErrMsg`).
fn recent_message() -> Option<String> {
    // SAFETY: aclGetRecentErrMsg takes no arguments and returns null or a
    // NUL-terminated string owned by the runtime, valid until the next call
    // on this thread; it is copied before anything else runs here.
    let ptr = unsafe { acl_sys::aclGetRecentErrMsg() }.ok()?;
    if ptr.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, as above.
    let msg = unsafe { std::ffi::CStr::from_ptr(ptr) }
        .to_string_lossy()
        .trim()
        .to_string();
    (!msg.is_empty()).then_some(msg)
}

/// Turns a raw call's outcome into a `Result`: a load failure, or a non-zero code.
#[inline]
pub(crate) fn check(function: &'static str, rc: Result<i32, LoadError>) -> Result<()> {
    match rc {
        Ok(0) => Ok(()),
        other => Err(check_failed(function, other)),
    }
}

/// The error of a failed call (kept out of line: the success path is hot).
#[cold]
#[inline(never)]
fn check_failed(function: &'static str, rc: Result<i32, LoadError>) -> Error {
    match rc {
        Ok(code) => Error::from_code(function, code),
        Err(e) => Error::Load(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_code_round_trips_through_its_number() {
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_raw(code.raw()), code, "{}", code.name());
            assert!(code.name().starts_with("ACL_ERROR_"));
        }
        assert!(ErrorCode::ALL.len() > 200);
    }

    #[test]
    fn named_codes_match_the_headers() {
        assert_eq!(ErrorCode::from_raw(100002), ErrorCode::RepeatInitialize);
        assert_eq!(ErrorCode::from_raw(107002), ErrorCode::RtContextNull);
        assert_eq!(ErrorCode::RtContextNull.name(), "ACL_ERROR_RT_CONTEXT_NULL");
        assert_eq!(
            ErrorCode::from_raw(acl_sys::ACL_ERROR_API_NOT_SUPPORT),
            ErrorCode::ApiNotSupport
        );
    }

    #[test]
    fn unknown_codes_keep_their_number() {
        let c = ErrorCode::from_raw(123_456_789);
        assert_eq!(c, ErrorCode::Unknown(123_456_789));
        assert_eq!(c.raw(), 123_456_789);
        assert_eq!(c.name(), "unknown");
    }

    #[test]
    fn display_has_function_name_code_and_message() {
        let e = Error::Acl {
            code: ErrorCode::RtContextNull,
            function: "aclrtMalloc",
            message: Some("no context on this thread".into()),
        };
        assert_eq!(
            e.to_string(),
            "aclrtMalloc failed with ACL_ERROR_RT_CONTEXT_NULL (107002): no context on this thread"
        );
        assert_eq!(e.code(), Some(ErrorCode::RtContextNull));
        assert_eq!(e.function(), Some("aclrtMalloc"));
        assert_eq!(e.message(), Some("no context on this thread"));
    }

    #[test]
    fn display_without_message_ends_at_the_code() {
        let e = Error::Acl {
            code: ErrorCode::Unknown(42),
            function: "aclrtFree",
            message: None,
        };
        assert_eq!(e.to_string(), "aclrtFree failed with unknown (42)");
    }
}

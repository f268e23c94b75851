//! The crate's one error type.
//!
//! Every failing AscendCL call becomes an [`Error::Acl`] holding the numeric
//! code (as an [`ErrorCode`] with the header's symbolic name), the C function
//! that failed, and the runtime's own explanation from `aclGetRecentErrMsg`,
//! read right after the failure on the same thread. Problems found before any
//! C call (a length mismatch, an out-of-range device) are
//! [`Error::InvalidArgument`]; a missing library or symbol is [`Error::Load`].
//!
//! # The runtime's message
//!
//! `aclGetRecentErrMsg` returns the runtime error manager's text: every error
//! reported on the thread since the last read, the first coded one as a
//! header `[PID: <pid>] <time> <Title>(<code>): <message>`, the others under
//! `TraceBack (most recent call last):`; with internal codes only
//! (`EE9999`, `EZ9999`, ...) it starts `<code>: Inner Error!` and each item
//! carries the stamp. On a thread without a context the runtime also returns
//! the text of the previous read again, after the new one.
//!
//! The crate keeps the messages and strips the rest consistently, so an
//! error reads `aclrtMalloc failed with ACL_ERROR_INVALID_PARAM (100000):
//! <message>` and two equal failures compare equal: the
//! `[PID: <pid>] <time> <Title>(<code>): ` stamp in front of a message, the
//! `<code>: Inner Error!` line and an empty trailing traceback line are
//! removed, and so is the part that repeats the previous read on this thread.
//! Traceback lines are kept as the runtime wrote them (indented). The
//! AscendCL code is the error's own [`ErrorCode`]; the error manager's `EHxxxx`
//! code is not kept. [`take_recent_message`] gives the same text for a raw
//! call made through `acl_sys`.

mod codes;
pub use codes::ErrorCode;

use crate::result::raw::LoadError;
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

/// Displays a runtime message as `": message"`, or nothing without one:
/// the tail of this crate's (and `hccl`'s) error texts.
#[derive(Debug, Clone, Copy)]
pub struct MessageSuffix<'a>(pub &'a Option<String>);

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

thread_local! {
    /// The text `aclGetRecentErrMsg` returned last on this thread.
    static LAST_TEXT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Reads and clears this thread's recent-error message (`aclGetRecentErrMsg`),
/// in the form this crate puts in [`Error::Acl`] (see the [module
/// documentation](self)): the messages of the errors reported since the last
/// read, without the error manager's stamps; `None` when there are none.
///
/// For raw calls made through `acl_sys`; the crate's own calls read it
/// themselves when they fail.
///
/// ```
/// # cann_sim::install().unwrap();
/// let _rt = acl::Runtime::init()?;
/// // SAFETY: a null out-pointer is refused (and reported), nothing is written.
/// let rc = unsafe { acl_sys::aclrtGetDevice(std::ptr::null_mut()) }.unwrap();
/// assert_ne!(rc, 0);
/// let message = acl::error::take_recent_message().unwrap();
/// assert!(message.starts_with("aclrtGetDevice"), "{message}");
/// assert_eq!(acl::error::take_recent_message(), None);
/// # Ok::<(), acl::Error>(())
/// ```
#[doc(alias = "aclGetRecentErrMsg")]
pub fn take_recent_message() -> Option<String> {
    let text = crate::result::get_recent_err_msg().ok()?;
    let previous = LAST_TEXT
        .try_with(|last| last.replace(text.clone()))
        .unwrap_or_default();
    readable(new_part(&text, &previous))
}

fn recent_message() -> Option<String> {
    take_recent_message()
}

/// What `text` adds to the `previous` read: the runtime joins a new text in
/// front of the previous one with a newline, or returns the previous one
/// alone when nothing new was reported (threads without a context).
fn new_part<'a>(text: &'a str, previous: &str) -> &'a str {
    if previous.is_empty() {
        return text;
    }
    if text == previous {
        return "";
    }
    text.strip_suffix(previous)
        .and_then(|t| t.strip_suffix('\n'))
        .unwrap_or(text)
}

/// Where the message of an error-manager line starts: after the
/// `[PID: <pid>] <time> <Title>(<code>): ` stamp, when it has one.
fn message_start(line: &str) -> Option<usize> {
    let stamp = line.find("[PID: ")?;
    let mut from = stamp;
    while let Some(open) = line[from..].find('(') {
        let code = from + open + 1;
        let rest = line.as_bytes().get(code..code + 9)?;
        if rest[..2].iter().all(u8::is_ascii_uppercase)
            && rest[2..6].iter().all(u8::is_ascii_digit)
            && &rest[6..] == b"): "
        {
            return Some(code + 9);
        }
        from = code;
    }
    None
}

/// `<code>: Inner Error!`, the first line of a text of internal codes only.
fn is_inner_banner(line: &str) -> bool {
    line.strip_suffix(": Inner Error!")
        .is_some_and(|code| code.len() == 6 && code.is_ascii())
}

/// The messages of an error-manager text (see the module documentation).
fn readable(text: &str) -> Option<String> {
    const TRACEBACK: &str = "TraceBack (most recent call last):";
    let mut lines: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim_end) {
        if is_inner_banner(line) {
            continue;
        }
        lines.push(match message_start(line) {
            Some(start) => line[start..].trim_start(),
            None => line,
        });
    }
    while lines
        .last()
        .is_some_and(|l| l.is_empty() || *l == TRACEBACK)
    {
        lines.pop();
    }
    let msg = lines.join("\n").trim().to_string();
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
    fn runtime_texts_keep_their_messages_without_stamps() {
        let coded = "[PID: 7] 2026-01-02-03:04:05.006.007 Invalid_Argument(EH0001): aclrtMalloc: size is 0\n\
                     TraceBack (most recent call last):\n        inner detail\n";
        assert_eq!(
            readable(coded).as_deref(),
            Some(
                "aclrtMalloc: size is 0\nTraceBack (most recent call last):\n        inner detail"
            )
        );
        let inner = "EE9999: Inner Error!\nEE9999[PID: 7] 2026-01-02-03:04:05.006.007 (EE9999):  \
                     aclrtSynchronizeStream: it failed\nTraceBack (most recent call last):\n";
        assert_eq!(
            readable(inner).as_deref(),
            Some("aclrtSynchronizeStream: it failed")
        );
        assert_eq!(
            readable("a plain message\n").as_deref(),
            Some("a plain message")
        );
        assert_eq!(readable(""), None);
    }

    #[test]
    fn a_text_repeated_from_the_previous_read_is_not_new() {
        assert_eq!(new_part("new\nold", "old"), "new");
        assert_eq!(new_part("old", "old"), "");
        assert_eq!(new_part("other", "old"), "other");
        assert_eq!(new_part("first", ""), "first");
    }

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
            ErrorCode::from_raw(crate::result::raw::ACL_ERROR_API_NOT_SUPPORT),
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

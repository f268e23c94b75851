//! The thread-local "recent error" message behind `aclGetRecentErrMsg`.
//!
//! Every failing simulator call records why it failed, on the calling thread;
//! `aclGetRecentErrMsg` returns the message and clears it, as the runtime does.

use std::cell::RefCell;
use std::ffi::CString;

thread_local! {
    /// The message not yet read by `aclGetRecentErrMsg`.
    static PENDING: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// The message last handed out; kept alive until the next read on this thread.
    static HANDED_OUT: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// Records `msg` as this thread's recent error.
pub fn record(msg: impl Into<String>) {
    let mut bytes = msg.into().into_bytes();
    bytes.retain(|&b| b != 0);
    // Interior NULs were removed above, so this cannot fail.
    let c = CString::new(bytes).unwrap_or_default();
    PENDING.with(|p| *p.borrow_mut() = Some(c));
}

/// Records `msg` and returns `code`: the one-line form of a failing call.
pub fn fail<T>(code: T, msg: impl Into<String>) -> T {
    record(msg);
    code
}

/// Records that `function` is not implemented by the simulator.
pub fn not_supported(function: &str) {
    record(format!(
        "{function} is not supported by cann-sim (the software NPU); it returns the library's \
         not-supported code. Run on a real CANN install for this function."
    ));
}

/// Takes the pending message: a pointer valid until the next call on this
/// thread, or null when there is none.
pub fn take() -> *const std::ffi::c_char {
    let msg = PENDING.with(|p| p.borrow_mut().take());
    HANDED_OUT.with(|h| {
        let mut h = h.borrow_mut();
        *h = msg;
        h.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())
    })
}

/// The pending message, without clearing it (for tests).
#[cfg(test)]
pub fn peek() -> Option<String> {
    PENDING.with(|p| {
        p.borrow()
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned())
    })
}

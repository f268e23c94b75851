//! The thread-local error messages behind `aclGetRecentErrMsg`, kept and
//! joined as the runtime's error manager does.
//!
//! Every failing simulator call records why it failed, on the calling
//! thread, as one coded item (an error-manager code such as `EH0001` or
//! `EE9999`, its title, the message). The items of a thread accumulate until
//! `aclGetRecentErrMsg` reads them: the read formats them all into one text
//! and clears them. Facts from hicann/runtime
//! `src/dfx/error_manager/error_manager.cc` and `error_manager.h`:
//!
//! - Items are kept per thread (`work_stream_id` = pid and tid,
//!   `GenWorkStreamIdDefault`); an item equal to one already held (same code,
//!   message, cause and solution: `ErrorItem::operator==`) is not added again;
//!   a report made while more than 1000 are held is dropped
//!   (`ReportInterErrMessage`, `kMaxWorkSize`).
//! - `GetErrorMessage`: the first item with a non-inner code gives the header
//!   `[PID: <pid>] <time> <title>(<code>): <message>`, then its
//!   `        Possible Cause: `/`        Solution: ` lines (when not empty or
//!   `N/A`), then `TraceBack (most recent call last):` and every item, each
//!   indented by 8 spaces, except those with the header's code and the
//!   message of the *first* item (so a header that is not the first item is
//!   listed again).
//! - Inner codes are `..9999` and `..8888` (`IsInnerErrorCode`). With inner
//!   codes only, `AssembleInnerErrorMessage`: `<code>: Inner Error!`, the
//!   first item as `<code>[PID: <pid>] <time> <title>(<code>):  <message>`
//!   (two spaces), the traceback line (printed after the first item, even
//!   when no other follows), the others as 6 spaces, a space, the message.
//! - The time is local, `YYYY-MM-DD-hh:mm:ss.mmm.uuu`
//!   (`CurrentTimeFormatStr`).
//!
//! `aclGetRecentErrMsgImpl` (hicann/runtime `src/acl/aclrt_impl/acl.cpp`)
//! keeps the text it returned in a thread-local string (`aclRecentErrMsg`)
//! and joins a newer host text in front of it with a newline. Before that it
//! asks for the device's message (`rtGetDevMsg`), whose callback overwrites
//! the kept string: `ApiImpl::GetDevErrMsg` (`src/runtime/api/impl/api_impl.cc`)
//! needs a current context (else `RT_ERROR_CONTEXT_NULL`, no callback) and on
//! STARS devices (Atlas A2/A3, what the sim presents) calls back with an
//! empty message. So a read on a thread with a context starts afresh, and on
//! a thread without one returns the previous text again, behind any new one.
//!
//! Codes: the ACL front end's `EH0001` for `ACL_ERROR_INVALID_PARAM`-class
//! (1000xx) failures, `EH0002` for a null argument, `EH0003`/`EH0004` for
//! config files and `EH0006` for unsupported functions (`src/acl/common/log_inner.h`
//! names these six); runtime argument errors (1070xx) `EE1001`, other runtime
//! failures the inner `EE9999`, aclnn's `EZ9999` and HCCL's `EI9999`. The
//! messages are the simulator's own (the runtime's EH0001 text reads "Value
//! [..] for [..] is invalid. Reason: ..."), and inner items have no
//! `[FUNC:..][FILE:..][LINE:..]` suffix.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::CString;

/// One reported error (`ErrorManager::ErrorItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    code: &'static str,
    title: &'static str,
    solution: &'static str,
    message: String,
    time: String,
}

/// A report is dropped while more than this many items are held
/// (`kMaxWorkSize`, error_manager.cc; the runtime checks it for inner
/// reports, the sim for all, to bound its memory).
const MAX_ITEMS: usize = 1000;

thread_local! {
    /// The items not yet read by `aclGetRecentErrMsg`.
    static PENDING: RefCell<Vec<Item>> = const { RefCell::new(Vec::new()) };
    /// The text last handed out (`aclRecentErrMsg` in acl.cpp); the pointer
    /// returned stays valid until the next read on this thread.
    static RECENT: RefCell<CString> = RefCell::new(CString::default());
}

/// The error-manager code, title and solution for a failure with `code`
/// (when numeric) and `msg` (see the module documentation).
fn classify(code: Option<i64>, msg: &str) -> (&'static str, &'static str, &'static str) {
    const INVALID: &str = "Invalid_Argument";
    const CHECK: &str = "1. Check the input parameter range of the function. 2. Check the function invocation \
         relationship.";
    if msg.starts_with("Hccl") || msg.starts_with("hccl") {
        return ("EI9999", "", "");
    }
    if msg.starts_with("aclnn") {
        return ("EZ9999", "AclNN_Inner_Error", "");
    }
    match code {
        Some(100000) if msg.contains(" is null") => ("EH0002", "Invalid_Argument_Null_Pointer", ""),
        Some(100003) => ("EH0003", "File_Operation_Error_Invalid_Path", ""),
        Some(100006) => ("EH0004", "File_Operation_Error", ""),
        Some(100000..=100999) => ("EH0001", INVALID, ""),
        Some(200001) => ("EH0006", "Not_Supported", ""),
        Some(107000..=107999) => ("EE1001", INVALID, CHECK),
        _ => ("EE9999", "", ""),
    }
}

/// `code` as a number, for the integer types the exports return.
fn numeric(code: &dyn Any) -> Option<i64> {
    code.downcast_ref::<i32>()
        .map(|&c| i64::from(c))
        .or_else(|| code.downcast_ref::<u32>().map(|&c| i64::from(c)))
        .or_else(|| code.downcast_ref::<i64>().copied())
}

/// The local time (`localtime_r`) and the time since the Unix epoch;
/// `None` when the C library cannot tell the local time.
pub(crate) fn local_now() -> Option<(libc::tm, std::time::Duration)> {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = libc::time_t::try_from(t.as_secs()).unwrap_or(0);
    // SAFETY: plain data, filled by localtime_r.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&secs, &mut tm) }.is_null() {
        return None;
    }
    Some((tm, t))
}

/// The local time as the error manager prints it:
/// `YYYY-MM-DD-hh:mm:ss.mmm.uuu`.
fn now() -> String {
    let Some((tm, t)) = local_now() else {
        return String::new();
    };
    let micros = t.subsec_micros();
    format!(
        "{:04}-{:02}-{:02}-{:02}:{:02}:{:02}.{:03}.{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        micros / 1000,
        micros % 1000
    )
}

thread_local! {
    /// The runtime's last error on this thread (`aclrtGetLastError`).
    static LAST_RT_ERROR: Cell<i32> = const { Cell::new(0) };
}

/// Whether `code` is one of the runtime's own (`ACL_ERROR_RT_*`: 107xxx,
/// 207xxx, 507xxx), the failures that set the thread's last error.
fn is_runtime_code(code: i64) -> bool {
    matches!(code, 107_000..=107_999 | 207_000..=207_999 | 507_000..=507_999)
}

/// The runtime's last error on this thread, 0 when there is none; `clear`
/// resets it (`aclrtGetLastError`) or leaves it (`aclrtPeekAtLastError`).
///
/// Every failing runtime call sets it: `GetRtExtErrCodeAndSetGlobalErr` and
/// `Runtime::SetGlobalErr` store the code in the thread-local `globalError_`
/// (hicann/runtime `src/runtime/core/src/runtime.cc`,
/// `src/runtime/core/src/common/inner_thread_local.cpp`), which
/// `GetGlobalErr` returns and resets and `PeekGlobalErr` returns. The ACL
/// front end's own argument checks (1000xx) do not reach the runtime and do
/// not set it.
pub fn last_error(clear: bool) -> i32 {
    LAST_RT_ERROR
        .try_with(|c| if clear { c.replace(0) } else { c.get() })
        .unwrap_or(0)
}

fn push(code: Option<i64>, msg: String) {
    if let Some(c) = code.filter(|&c| is_runtime_code(c))
        && let Ok(c) = i32::try_from(c)
    {
        let _ = LAST_RT_ERROR.try_with(|l| l.set(c));
    }
    let mut message = msg;
    message.retain(|c| c != '\0');
    let (code, title, solution) = classify(code, &message);
    let item = Item {
        code,
        title,
        solution,
        message,
        time: now(),
    };
    // A thread-local access fails only while the thread is being torn down.
    let _ = PENDING.try_with(|p| {
        let mut p = p.borrow_mut();
        let same = |i: &Item| i.code == item.code && i.message == item.message;
        if p.len() <= MAX_ITEMS && !p.iter().any(same) {
            p.push(item);
        }
    });
}

/// Records `msg` as one of this thread's recent errors.
pub fn record(msg: impl Into<String>) {
    push(None, msg.into());
}

/// Records `msg` and returns `code`: the one-line form of a failing call.
pub fn fail<T: 'static>(code: T, msg: impl Into<String>) -> T {
    push(numeric(&code), msg.into());
    code
}

/// Records that `function` is not implemented by the simulator.
pub fn not_supported(function: &str) {
    push(
        Some(200001),
        format!(
            "{function} is not supported by cann-sim (the software NPU); it returns the \
             library's not-supported code. Run on a real CANN install for this function."
        ),
    );
}

/// An inner code: `..9999` or `..8888` (`IsInnerErrorCode`).
fn is_inner(code: &str) -> bool {
    code.get(2..6).is_some_and(|n| n == "9999" || n == "8888")
}

fn is_param_check(code: &str) -> bool {
    code.get(2..6) == Some("8888")
}

/// The items as one text (`ErrorManager::GetErrorMessage`).
fn format_items(items: &[Item]) -> String {
    use std::fmt::Write;
    let Some(first) = items.first() else {
        return String::new();
    };
    let pid = std::process::id();
    let mut out = String::new();
    let mut first_code = first.code;
    if let Some(item) = items.iter().find(|i| !is_inner(i.code)) {
        first_code = item.code;
        let _ = writeln!(
            out,
            "[PID: {pid}] {} {}({}): {}",
            item.time, item.title, item.code, item.message
        );
        if !item.solution.is_empty() {
            let _ = writeln!(out, "        Solution: {}", item.solution);
        }
    }
    let mut traceback = false;
    if is_inner(first_code) {
        // `AssembleInnerErrorMessage`.
        let param_check = is_param_check(first_code);
        let mut current = items
            .iter()
            .find(|i| !is_param_check(i.code))
            .map_or(first_code, |i| i.code)
            .to_string();
        let _ = writeln!(out, "{current}: Inner Error!");
        for item in items {
            if is_param_check(item.code) && param_check {
                let _ = writeln!(out, "        {}", item.message);
                continue;
            }
            if current == "      " {
                let _ = writeln!(out, "{current} {}", item.message);
            } else {
                let _ = writeln!(
                    out,
                    "{current}[PID: {pid}] {} {}({}):  {}",
                    item.time, item.title, item.code, item.message
                );
            }
            current = "      ".to_string();
            if !traceback {
                out.push_str("TraceBack (most recent call last):\n");
                traceback = true;
            }
        }
    } else {
        for item in items {
            if item.code == first_code && item.message == first.message {
                continue;
            }
            if !traceback {
                out.push_str("TraceBack (most recent call last):\n");
                traceback = true;
            }
            let _ = writeln!(out, "        {}", item.message);
        }
    }
    out
}

/// `aclGetRecentErrMsg`: this thread's errors as one text (see the module
/// documentation), or null when there are none. The pointer is valid until
/// the next call on this thread.
pub fn take() -> *const std::ffi::c_char {
    let items = PENDING
        .try_with(|p| std::mem::take(&mut *p.borrow_mut()))
        .unwrap_or_default();
    let host = format_items(&items);
    let has_context = crate::state::own_context().is_some();
    RECENT
        .try_with(|r| {
            let mut r = r.borrow_mut();
            let mut recent = std::mem::take(&mut *r).into_string().unwrap_or_default();
            if has_context {
                recent.clear();
            }
            let text = match (host.is_empty(), recent.is_empty()) {
                (true, true) => return std::ptr::null(),
                (true, false) => recent,
                (false, true) => host,
                (false, false) => format!("{host}\n{recent}"),
            };
            // The items had their NULs removed, so this cannot fail.
            *r = CString::new(text).unwrap_or_default();
            r.as_ptr()
        })
        .unwrap_or(std::ptr::null())
}

/// The pending messages, without clearing them (for tests).
#[cfg(test)]
pub fn peek() -> Option<String> {
    PENDING.with(|p| p.borrow().last().map(|i| i.message.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(code: &'static str, title: &'static str, message: &str) -> Item {
        Item {
            code,
            title,
            solution: "",
            message: message.into(),
            time: "T".into(),
        }
    }

    #[test]
    fn a_coded_message_heads_the_text_and_the_rest_is_the_traceback() {
        let pid = std::process::id();
        let items = [
            item("EE9999", "", "inner detail"),
            item("EH0001", "Invalid_Argument", "aclrtMalloc: size is 0"),
            item(
                "EH0002",
                "Invalid_Argument_Null_Pointer",
                "aclrtFree: devPtr is null",
            ),
        ];
        assert_eq!(
            format_items(&items),
            format!(
                "[PID: {pid}] T Invalid_Argument(EH0001): aclrtMalloc: size is 0\n\
                 TraceBack (most recent call last):\n        inner detail\n        \
                 aclrtMalloc: size is 0\n        aclrtFree: devPtr is null\n"
            )
        );
    }

    #[test]
    fn a_coded_first_item_is_not_repeated_and_its_solution_follows() {
        let pid = std::process::id();
        let mut first = item("EE1001", "Invalid_Argument", "aclrtMemcpy: bad kind");
        first.solution = "Check it.";
        let items = [first, item("EE9999", "", "inner detail")];
        assert_eq!(
            format_items(&items),
            format!(
                "[PID: {pid}] T Invalid_Argument(EE1001): aclrtMemcpy: bad kind\n        \
                 Solution: Check it.\nTraceBack (most recent call last):\n        inner detail\n"
            )
        );
        assert_eq!(
            format_items(&items[..1]),
            format!(
                "[PID: {pid}] T Invalid_Argument(EE1001): aclrtMemcpy: bad kind\n        \
                 Solution: Check it.\n"
            )
        );
    }

    #[test]
    fn a_lone_inner_item_still_prints_the_traceback_line() {
        let pid = std::process::id();
        assert_eq!(
            format_items(&[item("EZ9999", "", "aclnnAdd: failed")]),
            format!(
                "EZ9999: Inner Error!\nEZ9999[PID: {pid}] T (EZ9999):  aclnnAdd: failed\n\
                 TraceBack (most recent call last):\n"
            )
        );
    }

    fn read() -> Option<String> {
        let p = take();
        (!p.is_null()).then(|| {
            // SAFETY: null or NUL-terminated, valid until the next read here.
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    }

    #[test]
    fn items_accumulate_without_duplicates_up_to_the_limit_until_read() {
        std::thread::spawn(|| {
            fail(100000, "aclrtMalloc: size is 0");
            fail(100000, "aclrtMalloc: size is 0");
            fail(107000, "aclrtMemcpy: bad kind");
            let text = read().unwrap();
            assert_eq!(text.matches("aclrtMalloc: size is 0").count(), 1, "{text}");
            assert!(
                text.contains("(EH0001): aclrtMalloc: size is 0\n"),
                "{text}"
            );
            assert!(
                text.ends_with("\n        aclrtMemcpy: bad kind\n"),
                "{text}"
            );
            for i in 0..1100 {
                record(format!("message {i}"));
            }
            assert_eq!(PENDING.with(|p| p.borrow().len()), MAX_ITEMS + 1);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn without_a_context_a_read_returns_the_previous_text_again_behind_new_ones() {
        std::thread::spawn(|| {
            assert_eq!(read(), None);
            fail(100000, "first");
            let first = read().unwrap();
            assert!(first.ends_with("(EH0001): first\n"), "{first}");
            assert_eq!(read().as_deref(), Some(first.as_str()));
            fail(100000, "second");
            let both = read().unwrap();
            assert!(
                both.ends_with(&format!("(EH0001): second\n\n{first}")),
                "{both}"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn inner_codes_only_make_an_inner_error_text() {
        let pid = std::process::id();
        let items = [item("EE9999", "", "first"), item("EE9999", "", "second")];
        assert_eq!(
            format_items(&items),
            format!(
                "EE9999: Inner Error!\nEE9999[PID: {pid}] T (EE9999):  first\n\
                 TraceBack (most recent call last):\n       second\n"
            )
        );
    }
}

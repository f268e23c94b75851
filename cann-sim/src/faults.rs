//! Fault injection: make the Nth call of a named API fail with a chosen code.
//!
//! Two sources, both checked at the top of every implemented ACL function
//! (before it looks at its arguments or does anything):
//!
//! - the environment variable `CANN_SIM_FAULTS`, read once per process: a
//!   comma-separated list of `api:N:code` (the Nth call of `api` returns
//!   `code`) or `api:N+:code` (every call from the Nth on), for example
//!   `aclrtMalloc:3:207001,aclrtCreateStream:1+:207008`. Calls are counted
//!   from the start of the process. A malformed value injects nothing and
//!   makes `aclInit` fail with `ACL_ERROR_INVALID_PARAM` (100000) and a
//!   message naming the variable.
//! - [`inject`] and [`clear`], for tests in the same process. An injected
//!   rule counts the calls made after it was injected.
//!
//! An injected failure does nothing else: no state changes, no output is
//! written. It records a message starting with the function's name and
//! "injected fault", read with `aclGetRecentErrMsg`. Functions that return a
//! pointer instead of a code (`aclrtGetSocName`) return null instead.
//!
//! When no rule exists the check is one relaxed atomic load.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Once};

/// One rule: fail call number `nth` (counting from 1) of `api`, or every
/// call from `nth` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The C function's name, e.g. `aclrtMalloc`.
    pub api: String,
    /// The first call that fails, counting from 1.
    pub nth: u64,
    /// Whether every later call fails too.
    pub and_later: bool,
    /// The code the failing calls return.
    pub code: i32,
    /// Where the rule comes from, for the message.
    source: &'static str,
    /// Calls of `api` counted so far by this rule.
    calls: u64,
}

/// The environment variable that configures faults.
pub const ENV: &str = "CANN_SIM_FAULTS";

static ANY: AtomicBool = AtomicBool::new(false);
static RULES: LazyLock<Mutex<Vec<Rule>>> = LazyLock::new(|| Mutex::new(Vec::new()));
static ENV_ONCE: Once = Once::new();
static ENV_ERROR: LazyLock<Mutex<Option<String>>> = LazyLock::new(|| Mutex::new(None));

/// Parses a `CANN_SIM_FAULTS` value.
///
/// # Errors
///
/// A message naming the variable and the bad entry.
pub fn parse(value: &str) -> Result<Vec<Rule>, String> {
    let mut out = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let bad = |why: &str| {
            format!(
                "{ENV}={value:?}: entry {entry:?} {why}; expected api:N:code or api:N+:code, \
                 e.g. aclrtMalloc:3:207001"
            )
        };
        let parts: Vec<&str> = entry.split(':').map(str::trim).collect();
        let [api, nth, code] = parts.as_slice() else {
            return Err(bad("does not have three ':'-separated fields"));
        };
        if api.is_empty() || !api.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(bad("does not name a function"));
        }
        let (digits, and_later) = match nth.strip_suffix('+') {
            Some(d) => (d, true),
            None => (*nth, false),
        };
        let nth = match digits.parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(bad("has a call number that is not a whole number from 1")),
        };
        let code = code
            .parse::<i32>()
            .map_err(|_| bad("has a code that is not a 32-bit integer"))?;
        out.push(Rule {
            api: (*api).to_string(),
            nth,
            and_later,
            code,
            source: ENV,
            calls: 0,
        });
    }
    Ok(out)
}

fn load_env() {
    ENV_ONCE.call_once(|| {
        let Some(value) = std::env::var(ENV).ok().filter(|v| !v.trim().is_empty()) else {
            return;
        };
        match parse(&value) {
            Ok(rules) if rules.is_empty() => {}
            Ok(rules) => {
                let mut all = RULES.lock();
                all.extend(rules);
                ANY.store(true, Ordering::Release);
            }
            Err(msg) => *ENV_ERROR.lock() = Some(msg),
        }
    });
}

/// The message for a malformed `CANN_SIM_FAULTS`, if it is.
pub fn env_error() -> Option<String> {
    load_env();
    ENV_ERROR.lock().clone()
}

/// Makes call number `nth` of `api` (counted from now, from 1) return
/// `code`; `nth == 0` means every call from now on.
pub fn inject(api: &str, nth: u64, code: i32) {
    load_env();
    let mut all = RULES.lock();
    all.push(Rule {
        api: api.to_string(),
        nth: nth.max(1),
        and_later: nth == 0,
        code,
        source: "cann_sim::faults::inject",
        calls: 0,
    });
    ANY.store(true, Ordering::Release);
}

/// Makes every call of `api` from the `nth` on (counted from now, from 1)
/// return `code`.
pub fn inject_from(api: &str, nth: u64, code: i32) {
    load_env();
    let mut all = RULES.lock();
    all.push(Rule {
        api: api.to_string(),
        nth: nth.max(1),
        and_later: true,
        code,
        source: "cann_sim::faults::inject_from",
        calls: 0,
    });
    ANY.store(true, Ordering::Release);
}

/// Removes every rule, those from `CANN_SIM_FAULTS` included.
pub fn clear() {
    load_env();
    let mut all = RULES.lock();
    all.clear();
    ANY.store(false, Ordering::Release);
}

/// The injected code for this call of `api`, if a rule makes it fail; the
/// call then records the message and returns the code at once.
pub fn check(api: &str) -> Option<i32> {
    crate::calls::record(api);
    load_env();
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let mut hit = None;
    {
        let mut all = RULES.lock();
        for rule in all.iter_mut().filter(|r| r.api == api) {
            rule.calls += 1;
            let fires = rule.calls == rule.nth || (rule.and_later && rule.calls > rule.nth);
            if fires && hit.is_none() {
                hit = Some((rule.code, rule.calls, rule.source));
            }
        }
    }
    let (code, call, source) = hit?;
    crate::recent_error::record(format!(
        "{api}: injected fault: call #{call} of {api} returns {code} ({source}); nothing was done"
    ));
    Some(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_calls_and_open_ranges() {
        let r = parse(" aclrtMalloc:3:207001, aclrtCreateStream:1+:107000 ,").unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].api.as_str(), r[0].nth, r[0].and_later, r[0].code),
            ("aclrtMalloc", 3, false, 207001)
        );
        assert_eq!(
            (r[1].api.as_str(), r[1].nth, r[1].and_later, r[1].code),
            ("aclrtCreateStream", 1, true, 107000)
        );
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn malformed_entries_name_the_variable() {
        for v in [
            "aclrtMalloc",
            "aclrtMalloc:3",
            "aclrtMalloc:0:1",
            "aclrtMalloc:x:1",
            "aclrtMalloc:1:code",
            ":1:1",
            "a b:1:1",
            "aclrtMalloc:1:2:3",
        ] {
            let err = parse(v).unwrap_err();
            assert!(err.starts_with("CANN_SIM_FAULTS="), "{err}");
        }
    }
}

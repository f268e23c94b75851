//! Which CANN a process runs on: the simulator or the installed CANN.
//!
//! Every test, example and benchmark of the project starts with
//! [`install()`](crate::install). With `CANN_BACKEND` unset (or `sim`) that
//! installs the simulator. With `CANN_BACKEND=real` it installs nothing and
//! loads the installed CANN instead (the -sys crates' search order:
//! `CANN_ACL_LIB`, then `ASCEND_HOME_PATH` and the standard install paths),
//! failing at once, with the paths it tried, when there is none — a run
//! meant for an NPU never quietly runs on the simulator. Any other value is
//! an error.
//!
//! Tests that only mean something on the simulator (fault injection,
//! check-mode reports, simulator statistics and settings, sim-only
//! diagnostics) start with [`sim_only!`](crate::sim_only): on a real NPU
//! they return at once, after one line saying why (on stderr, and appended
//! to the file named by `CANN_REAL_SKIPS`, which `cargo xtask test-real`
//! collects into its report). Tests that need more devices than the machine
//! has use [`require_devices!`](crate::require_devices) the same way.

use std::io::Write;

/// The variable that selects the backend.
pub const VAR: &str = "CANN_BACKEND";

/// The backend a process runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// cann-sim (`CANN_BACKEND` unset, empty or `sim`).
    Sim,
    /// The installed CANN (`CANN_BACKEND=real`).
    Real,
    /// Any other value: refused by [`install()`](crate::install).
    Invalid(String),
}

/// The backend `CANN_BACKEND` selects.
pub fn selected() -> Backend {
    match std::env::var(VAR) {
        Err(std::env::VarError::NotPresent) => Backend::Sim,
        Err(std::env::VarError::NotUnicode(v)) => Backend::Invalid(v.to_string_lossy().into()),
        Ok(v) => match v.as_str() {
            "" | "sim" => Backend::Sim,
            "real" => Backend::Real,
            _ => Backend::Invalid(v),
        },
    }
}

/// Whether this process runs on the installed CANN.
pub fn is_real() -> bool {
    selected() == Backend::Real
}

/// The error [`install()`](crate::install) returns for an invalid
/// `CANN_BACKEND`.
pub(crate) fn invalid(value: &str) -> acl_sys::LoadError {
    acl_sys::LoadError::LibraryNotFound {
        library: "AscendCL",
        env_var: "CANN_ACL_LIB",
        attempts: vec![acl_sys::loader::Attempt {
            tried: format!("{VAR}={value}"),
            reason: "not a backend: use `sim` (the simulator, the default) or `real` \
                     (the installed CANN)"
                .into(),
        }],
    }
}

/// On a real NPU: reports that the calling test is skipped, and why, and
/// returns true. On the simulator: false. Used by [`sim_only!`](crate::sim_only)
/// and [`require_devices!`](crate::require_devices).
#[doc(hidden)]
pub fn skip(module: &str, why: &str) -> bool {
    if !is_real() {
        return false;
    }
    note_skip(module, why);
    true
}

/// Whether a test that needs `needed` devices must skip: on a real NPU with
/// fewer (or whose count cannot be read), it reports so and returns true.
#[doc(hidden)]
pub fn skip_unless_devices(module: &str, needed: u32) -> bool {
    if !is_real() {
        return false;
    }
    let mut count = 0u32;
    // SAFETY: `count` is a valid out-pointer for the call's duration.
    let have = match unsafe { acl_sys::aclrtGetDeviceCount(&mut count) } {
        Ok(0) => count,
        _ => 0,
    };
    if have >= needed {
        return false;
    }
    note_skip(
        module,
        &format!("needs {needed} NPUs, the machine has {have}"),
    );
    true
}

fn note_skip(module: &str, why: &str) {
    // libtest runs each test on a thread named after it.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    eprintln!("skipped on a real NPU: {module}::{test}: {why}");
    if let Some(path) = std::env::var_os("CANN_REAL_SKIPS")
        && let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        // One line per skip, `module<TAB>test<TAB>why` (read by `cargo xtask
        // test-real`); a failed write only loses the line in the report
        // (the stderr line above stays).
        let _ = writeln!(f, "{module}\t{test}\t{why}");
    }
}

/// Returns from the calling test on a real NPU (`CANN_BACKEND=real`), after
/// saying why: for tests that only mean something on the simulator.
///
/// `sim_only!("why")` in a test returning `()`; `sim_only!("why", value)`
/// returns `value` (e.g. `Ok(())`).
#[macro_export]
macro_rules! sim_only {
    ($why:expr) => {
        if $crate::backend::skip(module_path!(), $why) {
            return;
        }
    };
    ($why:expr, $ret:expr) => {
        if $crate::backend::skip(module_path!(), $why) {
            return $ret;
        }
    };
}

/// Returns from the calling test on a real NPU with fewer than `n` devices,
/// after saying so. Same forms as [`sim_only!`].
#[macro_export]
macro_rules! require_devices {
    ($n:expr) => {
        if $crate::backend::skip_unless_devices(module_path!(), $n) {
            return;
        }
    };
    ($n:expr, $ret:expr) => {
        if $crate::backend::skip_unless_devices(module_path!(), $n) {
            return $ret;
        }
    };
}

/// The variable that stretches the time limits tests assert:
/// `cargo xtask sanitize` sets it, since instrumented code runs several times
/// slower.
pub const TIME_SCALE_VAR: &str = "CANN_TEST_TIME_SCALE";

/// A time limit a test asserts, multiplied by `CANN_TEST_TIME_SCALE` (a whole
/// number; unset, empty or unreadable is 1). For limits on how fast the code
/// under test runs, not for timeouts the code itself implements.
pub fn time_limit(limit: std::time::Duration) -> std::time::Duration {
    limit.saturating_mul(time_scale(std::env::var(TIME_SCALE_VAR).ok().as_deref()))
}

fn time_scale(value: Option<&str>) -> u32 {
    value
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(1)
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_backend_names_the_variable_and_the_choices() {
        let msg = invalid("hw").to_string();
        assert!(msg.contains("CANN_BACKEND=hw"), "{msg}");
        assert!(msg.contains("`sim`") && msg.contains("`real`"), "{msg}");
    }

    #[test]
    fn the_time_scale_is_a_whole_factor_of_at_least_one() {
        assert_eq!(time_scale(Some("4")), 4);
        assert_eq!(time_scale(Some(" 10\n")), 10);
        for not_a_factor in [Some("0"), Some("x"), Some("-2"), Some(""), None] {
            assert_eq!(time_scale(not_a_factor), 1, "{not_a_factor:?}");
        }
    }
}

//! The simulator's process-wide state.

use parking_lot::Mutex;
use std::ffi::CString;
use std::sync::{LazyLock, OnceLock};

/// Everything the simulated runtime remembers, behind one lock.
#[derive(Debug, Default)]
pub struct State {
    /// `aclInit` references; 0 means not initialized.
    pub init_refs: u64,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| Mutex::new(State::default()));

/// The process-wide state.
pub fn global() -> &'static Mutex<State> {
    &STATE
}

/// The SoC name as a C string with a static lifetime.
pub fn soc_name() -> Result<&'static CString, &'static str> {
    static NAME: OnceLock<CString> = OnceLock::new();
    let config = crate::config::get()?;
    Ok(NAME.get_or_init(|| CString::new(config.soc_name.clone()).unwrap_or_default()))
}

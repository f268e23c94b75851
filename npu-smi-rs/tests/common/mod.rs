//! Shared by the test binaries of this directory.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Points the simulator at a private telemetry directory
/// (`CANN_SIM_SHM_DIR`, named `<prefix>XXXXXX` in the temporary directory)
/// for the rest of this test process, so that nothing else publishes into
/// this test's view of the machine, and removes the directory when the
/// process exits. The first call decides; later ones return the same path.
///
/// The simulator may publish into the directory until the process exits,
/// so a guard dropped at the end of one test would be too early, and a
/// static one is never dropped: the removal is an `atexit` handler.
pub fn private_sim_dir(prefix: &str) -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    extern "C" fn remove() {
        if let Some(dir) = DIR.get() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .expect("a temporary directory")
            .keep();
        // SAFETY: `remove` is an `extern "C" fn()` that cannot unwind (it
        // ignores every error); registering it has no other precondition.
        unsafe { libc::atexit(remove) };
        // SAFETY: set once, before any thread of this test binary reads the
        // environment through the simulator (the OnceLock orders it first).
        unsafe { std::env::set_var("CANN_SIM_SHM_DIR", &dir) };
        dir
    })
}

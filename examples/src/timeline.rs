//! `--trace PATH` of the examples: a timeline of some work.
//!
//! On `cann-sim` the simulator records every task its streams run
//! (`cann_sim::trace`) and writes Chrome trace-event JSON to `PATH`: open
//! it in `chrome://tracing` or <https://ui.perfetto.dev>. On a real NPU the
//! work runs under `acl::profiler` instead, and msprof's data lands in the
//! directory `PATH` names without its extension; `msprof --export=on
//! --output=<that directory>` turns it into a timeline.

use crate::Backend;
use acl::Runtime;
use acl::profiler::{DataTypes, ProfileConfig, Profiler};
use std::error::Error;
use std::path::{Path, PathBuf};

/// Checks, before any work, that `record` will be able to write at `path`:
/// on the simulator a regular file or a new one in an existing directory
/// (never a FIFO or a device, see `cann_sim::trace::check_output_path`); on
/// a real NPU, a directory (or nothing yet) where msprof writes.
///
/// # Errors
///
/// A message naming the path and what is wrong with it.
pub fn check_path(backend: &Backend, path: &Path) -> Result<(), String> {
    let refused = |e: String| format!("--trace: {e}");
    match backend {
        Backend::Sim => cann_sim::trace::check_output_path(path).map_err(refused),
        Backend::Real(_) => {
            let dir = path.with_extension("");
            match std::fs::metadata(&dir) {
                Ok(m) if !m.is_dir() => Err(refused(format!(
                    "msprof writes into the directory {}, which is a {}",
                    dir.display(),
                    cann_sim::model::file_kind(&m.file_type())
                ))),
                _ => Ok(()),
            }
        }
    }
}

/// Runs `work` with device `device`'s tasks recorded into `path` (see the
/// module docs); returns what `work` returned.
///
/// # Errors
///
/// `work`'s error; the trace or profile cannot be written.
pub fn record<T>(
    backend: &Backend,
    runtime: &Runtime,
    device: u32,
    path: &Path,
    work: impl FnOnce() -> Result<T, Box<dyn Error>>,
) -> Result<T, Box<dyn Error>> {
    match backend {
        Backend::Sim => {
            cann_sim::trace::clear();
            cann_sim::trace::start();
            let out = work();
            cann_sim::trace::stop();
            let out = out?;
            cann_sim::trace::write_chrome_json(path)
                .map_err(|e| format!("cannot write the trace {}: {e}", path.display()))?;
            println!(
                "timeline written to {} ({} spans): open it in chrome://tracing or https://ui.perfetto.dev",
                path.display(),
                cann_sim::trace::spans().len()
            );
            cann_sim::trace::clear();
            Ok(out)
        }
        Backend::Real(_) => {
            let dir: PathBuf = path.with_extension("");
            let profiler = Profiler::init(runtime, &dir)?;
            let config = ProfileConfig::new(&[device], DataTypes::default())?;
            let run = profiler.start(&config)?;
            let out = work()?;
            run.stop()?;
            profiler.finalize()?;
            println!(
                "msprof data written under {}: run `msprof --export=on --output={}` for its timeline",
                dir.display(),
                dir.display()
            );
            Ok(out)
        }
    }
}

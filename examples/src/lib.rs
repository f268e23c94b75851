//! Shared setup for the examples: choosing the backend.
//!
//! Library code never falls back to the simulator by itself; examples do one
//! thing more for newcomers. With `CANN_BACKEND` unset they use a real CANN
//! install when one is found and otherwise say so in one line and run on
//! `cann-sim`. `CANN_BACKEND=real` refuses to run without real CANN;
//! `CANN_BACKEND=sim` always uses the simulator.

use std::fmt;

pub mod custom_kernel;
pub mod embed;
pub mod infer_model;
pub mod llm_forward;
pub mod mlp_sgd;
pub mod ops_demo;
mod rng;
pub mod timeline;
pub mod train_cnn;
pub mod train_ddp;
pub mod train_mlp;

/// What the example runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A real `libascendcl.so`, described by where it was found.
    Real(String),
    /// The `cann-sim` software NPU.
    Sim,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Real(from) => write!(f, "real CANN ({from})"),
            Backend::Sim => write!(f, "cann-sim (software NPU)"),
        }
    }
}

/// Selects the backend as described in the crate docs.
///
/// # Errors
///
/// A message for a person: an unknown `CANN_BACKEND` value,
/// `CANN_BACKEND=real` without a loadable AscendCL, or a CANN install named
/// by `CANN_ACL_LIB`, `ASCEND_HOME_PATH` or `ASCEND_TOOLKIT_HOME` that does
/// not load, or an HCCL library named by `CANN_HCCL_LIB` without an
/// AscendCL to go with it (never replaced by the simulator).
pub fn select_backend() -> Result<Backend, String> {
    select_backend_noting(|note| println!("{note}"))
}

/// [`select_backend`], with the one-line note that no CANN install was
/// found (and the simulator runs) passed to `note` instead of printed on
/// standard output: for an example whose standard output is data.
///
/// # Errors
///
/// As [`select_backend`].
pub fn select_backend_noting(note: impl FnOnce(&str)) -> Result<Backend, String> {
    let wanted = std::env::var("CANN_BACKEND").unwrap_or_default();
    match wanted.trim() {
        "sim" => install_sim(),
        "real" => match acl_sys::library() {
            Ok(lib) => Ok(Backend::Real(lib.source().to_string())),
            Err(e) => Err(format!(
                "CANN_BACKEND=real, but no AscendCL library could be loaded. Install the CANN toolkit \
                 and run `source /usr/local/Ascend/ascend-toolkit/set_env.sh` (it sets ASCEND_HOME_PATH), \
                 or point CANN_ACL_LIB at libascendcl.so; to run on the simulator instead, set \
                 CANN_BACKEND=sim or leave it unset.\n{e}"
            )),
        },
        "" => match acl_sys::library() {
            Ok(lib) => Ok(Backend::Real(lib.source().to_string())),
            Err(e) if let Some(var) = chosen_install() => Err(format!(
                "{var} is set, but no AscendCL library could be loaded from it, so nothing runs                  (the simulator is used only when no CANN install is named). Fix or unset {var},                  or set CANN_BACKEND=sim to run on the simulator.\n{e}"
            )),
            Err(_) if let Some(v) = std::env::var_os("CANN_HCCL_LIB").filter(|v| !v.is_empty()) => {
                Err(format!(
                    "CANN_HCCL_LIB={v:?} is set, but no AscendCL library was found to go with it, so \
                     nothing runs (the simulator is used only when no CANN library is named, and \
                     would replace it). Name the CANN install too (ASCEND_HOME_PATH or CANN_ACL_LIB), \
                     unset CANN_HCCL_LIB, or set CANN_BACKEND=sim to run on the simulator."
                ))
            }
            Err(_) => {
                note(
                    "No CANN install found (set ASCEND_HOME_PATH or CANN_ACL_LIB to use one); running on cann-sim, the software NPU.",
                );
                install_sim()
            }
        },
        other => Err(format!(
            "CANN_BACKEND={other:?} is not understood: use `real`, `sim`, or leave it unset"
        )),
    }
}

/// The variable through which the user named a CANN install, if any: a
/// named install that fails to load is an error, never replaced by the
/// simulator.
fn chosen_install() -> Option<&'static str> {
    ["CANN_ACL_LIB", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .into_iter()
        .find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
}

fn install_sim() -> Result<Backend, String> {
    cann_sim::install().map_err(|e| format!("cannot use cann-sim: {e}"))?;
    Ok(Backend::Sim)
}

/// Runs an example's body and turns an error into a message and exit code 1
/// (no panic, no backtrace).
pub fn run(
    body: impl FnOnce() -> Result<(), Box<dyn std::error::Error>>,
) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

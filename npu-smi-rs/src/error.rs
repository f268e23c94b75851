//! The crate's error type.

use crate::parse::ParseError;

/// Everything that can go wrong reading NPU telemetry.
///
/// `Send + Sync + 'static` (asserted in a test), so it crosses threads and
/// fits in `Box<dyn std::error::Error + Send + Sync>`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The chip, driver or backend does not provide this metric
    /// (`DCMI_ERR_CODE_NOT_SUPPORT`, -8255, or a field `npu-smi` does not
    /// print). Not a failure of the device: skip the metric.
    #[error("{call} is not supported on this chip: {detail}")]
    NotSupported {
        /// The C function (or `npu-smi` command) that was asked.
        call: &'static str,
        /// What the backend said.
        detail: String,
    },
    /// A DCMI call returned an error code.
    #[error("{call} failed with {} ({code}){}", .name.unwrap_or("an unknown DCMI code"), .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Dcmi {
        /// The C function.
        call: &'static str,
        /// The code it returned.
        code: i32,
        /// The header's name for the code, when it has one.
        name: Option<&'static str>,
        /// The library's own explanation, when it gives one (the simulator
        /// does; the real DCMI has no error-message function).
        message: Option<String>,
    },
    /// `libdcmi.so` (or one of its functions) could not be loaded.
    #[error(transparent)]
    Load(#[from] dcmi_sys::LoadError),
    /// No backend could be found: neither DCMI nor an `npu-smi` binary.
    #[error("{0}")]
    NoBackend(String),
    /// Running `npu-smi` failed.
    #[error("`{command}` failed: {detail}")]
    Command {
        /// The command line.
        command: String,
        /// Exit status and standard error, or the spawn error.
        detail: String,
    },
    /// `npu-smi` was stopped, or not started, by the bounds of
    /// [`NpuSmiLimits`](crate::NpuSmiLimits): it ran past the time limit or
    /// printed more than the output limit (and was killed), or earlier runs
    /// killed for that have not ended yet. Unlike a non-zero exit, never
    /// read as "not supported".
    #[error("`{command}` {reason}")]
    Aborted {
        /// The command line.
        command: String,
        /// What happened.
        reason: String,
    },
    /// `npu-smi` printed something this crate cannot read.
    #[error("cannot read the output of `{command}`: {source}")]
    Parse {
        /// The command line.
        command: String,
        /// Where and why parsing failed.
        source: ParseError,
    },
    /// No device has this id.
    #[error("{0}")]
    NoSuchDevice(String),
    /// The simulator could not be installed (feature `sim`).
    #[error("cannot use the simulator: {0}")]
    Sim(String),
    /// The command's output could not be written (a full disk, a closed
    /// terminal); a reader that went away is not an error (see the CLI).
    #[error("cannot write the output: {0}")]
    Output(String),
}

impl Error {
    /// Whether this is [`Error::NotSupported`].
    pub fn is_not_supported(&self) -> bool {
        matches!(self, Error::NotSupported { .. })
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

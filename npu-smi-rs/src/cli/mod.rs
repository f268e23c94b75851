//! The `npu-smi-rs` command line (feature `cli`): `info`, `info --json`,
//! `watch`, `export --listen ADDR` and `doctor`.
//!
//! Exposed as a module so that its rendering is testable (the binary is a
//! thin `main` over [`run`]); not a stable API.

use crate::{BackendChoice, DeviceStatus, Error, Npu, NpuSmiLimits};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

pub mod doctor;
pub mod export;
pub mod info;
pub mod watch;

/// NPU telemetry for Huawei Ascend NPUs.
#[derive(Debug, Parser)]
#[command(name = "npu-smi-rs", version, about, long_about = None)]
pub struct Cli {
    /// Where to read telemetry: auto (DCMI, else npu-smi on PATH), dcmi,
    /// npu-smi, or sim (the cann-sim software NPU; never chosen by auto).
    #[arg(long, global = true, env = "CANN_BACKEND", default_value = "auto", value_parser = parse_backend)]
    pub backend: BackendChoice,

    /// The npu-smi program for `--backend npu-smi` (default: found on PATH).
    #[arg(long, global = true, value_name = "PATH")]
    pub npu_smi: Option<PathBuf>,

    /// The longest one run of npu-smi may take (milliseconds); it is killed
    /// after that and the read fails.
    #[arg(long, global = true, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
    pub npu_smi_timeout_ms: u64,

    /// The most one run of npu-smi may print (bytes); it is killed beyond
    /// that and the read fails.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = 8 << 20, value_parser = clap::value_parser!(u64).range(4096..=1 << 32))]
    pub npu_smi_max_output: u64,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

fn parse_backend(s: &str) -> Result<BackendChoice, String> {
    s.parse()
}

/// The sub-commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// A table of every NPU, like `npu-smi info`.
    Info {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// A live dashboard: utilisation, HBM, power and temperature with history.
    Watch {
        /// Refresh period in milliseconds.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(100..=60_000))]
        interval_ms: u64,
    },
    /// Serve Prometheus metrics (the Ascend npu-exporter's names) on /metrics.
    Export {
        /// Address to listen on, e.g. 127.0.0.1:9101 or 0.0.0.0:8082.
        #[arg(long, value_name = "ADDR")]
        listen: String,
        /// Stop after serving this many requests (for tests).
        #[arg(long, hide = true)]
        max_requests: Option<u64>,
        /// Connections served at once; more are answered 503 and closed.
        #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
        max_connections: u64,
        /// Time a client has to send a request head or to take a response,
        /// and the idle time after which a keep-alive connection is closed
        /// (milliseconds).
        #[arg(long, value_name = "MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
        io_timeout_ms: u64,
        /// The longest a scrape waits for a read of the NPUs (milliseconds);
        /// after it, the last good read is served, each sample stamped with
        /// the time of that read.
        #[arg(long, value_name = "MS", default_value_t = 5_000, value_parser = clap::value_parser!(u64).range(10..=3_600_000))]
        read_timeout_ms: u64,
    },
    /// Check the installation: libraries, versions, device health, and
    /// common misconfigurations, each with its fix.
    Doctor,
}

/// Connects through the chosen backend.
///
/// # Errors
///
/// As [`Npu::with_backend`].
pub fn connect(cli: &Cli) -> Result<Npu, Error> {
    let choice = match (&cli.backend, &cli.npu_smi) {
        (BackendChoice::NpuSmi(None), Some(p)) => BackendChoice::NpuSmi(Some(p.clone())),
        (b, _) => b.clone(),
    };
    let limits = NpuSmiLimits {
        timeout: std::time::Duration::from_millis(cli.npu_smi_timeout_ms),
        max_output_bytes: usize::try_from(cli.npu_smi_max_output).unwrap_or(usize::MAX),
    };
    Npu::with_backend_limits(choice, limits)
}

/// Every device's status.
///
/// # Errors
///
/// When the devices cannot be listed.
pub fn statuses(npu: &Npu) -> Result<Vec<DeviceStatus>, Error> {
    npu.statuses()
}

/// Writes a command's output to standard output. A reader that went away
/// (a closed pipe: `npu-smi-rs info --json | head -c 10`) ends the command
/// quietly, as other Unix tools do; any other failure (`> /dev/full`) is an
/// error.
pub(crate) fn emit(text: &str) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output(e.to_string())),
        _ => Ok(()),
    }
}

/// Runs the parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let result = match &cli.command {
        Command::Doctor => return doctor::run(&cli),
        Command::Info { json } => connect(&cli).and_then(|npu| info::run(&npu, *json)),
        Command::Watch { interval_ms } => {
            connect(&cli).and_then(|npu| watch::run(&npu, *interval_ms))
        }
        Command::Export {
            listen,
            max_requests,
            max_connections,
            io_timeout_ms,
            read_timeout_ms,
        } => {
            let options = export::Options {
                max_requests: *max_requests,
                max_connections: usize::try_from(*max_connections).unwrap_or(usize::MAX),
                io_timeout: std::time::Duration::from_millis(*io_timeout_ms),
                read_timeout: std::time::Duration::from_millis(*read_timeout_ms),
            };
            connect(&cli).and_then(|npu| export::run(&npu, listen, &options))
        }
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("npu-smi-rs: error: {e}");
            1
        }
    }
}

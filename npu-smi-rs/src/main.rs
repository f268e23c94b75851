//! `npu-smi-rs`: NPU telemetry on the command line. See `npu-smi-rs --help`.

use clap::Parser;

fn main() {
    let cli = npu_smi_rs::cli::Cli::parse();
    std::process::exit(npu_smi_rs::cli::run(cli));
}

//! Offline-model inference, as msame / ais_bench run it: builds a small MLP
//! classifier in cann-sim's model format on first run, loads it, prints its
//! description, runs a batch (checked against the host) and reports
//! latency and throughput over N runs.
//!
//! ```text
//! cargo run --example infer_model
//! cargo run --example infer_model -- --batch 32 --runs 1000
//! cargo run --example infer_model -- --model /path/to/model.json
//! ```
//!
//! Without `--model` the demo model is built on first run at a default path
//! in the temporary directory. `--model PATH` names a model to load: it is
//! only read, never written, and must be a regular file (a FIFO, device or
//! directory is refused before it is opened).

use acl::{Device, Runtime};
use examples::infer_model::{Config, GEARS, run};
use std::process::ExitCode;

fn parse(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--batch" => cfg.batch = value()?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--runs" => cfg.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--model" => {
                cfg.path = value()?.into();
                cfg.build = false;
            }
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: infer_model [--batch {GEARS:?}] [--runs N] [--model PATH]"
                ));
            }
        }
    }
    Ok(cfg)
}

fn main() -> ExitCode {
    examples::run(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let cfg = parse(&args)?;
        let backend = examples::select_backend()?;
        println!("backend: {backend}");
        let npu = Device::new(&Runtime::init()?, 0)?;
        let stream = npu.new_stream()?;
        let report = run(&stream, &cfg)?;
        if report.built {
            println!("[INFO] built {}", cfg.path.display());
        }
        print!("{}", report.description);
        println!("{report}");
        Ok(())
    })
}

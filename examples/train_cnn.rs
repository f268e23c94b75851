//! Trains a small CNN (convolution, batch normalisation, ReLU, max pooling,
//! linear) on synthetic 8×8 images of lines in four orientations, every
//! step on the device with its backward operators and fused AdamW, the
//! whole step captured as ONE graph and replayed for every batch
//! (`examples::train_cnn`). The example checks that the steps made no host
//! synchronisation (counted by cann-sim) and that the final accuracy is at
//! least 95% after a full run (at least the default number of epochs),
//! and exits with status 1 otherwise.
//!
//! ```text
//! cargo run --example train_cnn
//! cargo run --example train_cnn -- --epochs 6 --lr 0.005
//! ```

use acl::{Device, Runtime};
use examples::train_cnn::{Config, train};
use std::process::ExitCode;

fn parse(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--epochs" => cfg.epochs = value()?.parse().map_err(|e| format!("--epochs: {e}"))?,
            "--samples" => cfg.samples = value()?.parse().map_err(|e| format!("--samples: {e}"))?,
            "--lr" => cfg.lr = value()?.parse().map_err(|e| format!("--lr: {e}"))?,
            "--seed" => cfg.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: train_cnn [--epochs N] [--samples N] [--lr X] [--seed N]"
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
        println!(
            "CNN conv3x3({}) -> BatchNorm -> ReLU -> MaxPool2x2 -> Linear on {} images 8x8 ({} held out), batch {}, AdamW lr {}",
            cfg.channels, cfg.samples, cfg.test_samples, cfg.batch, cfg.lr
        );
        let runtime = Runtime::init()?;
        let npu = Device::new(&runtime, 0)?;
        let stream = npu.new_stream()?;
        let started = std::time::Instant::now();
        let reports = train(&stream, &cfg, |r| println!("{r}"))?;
        let last = reports.last().ok_or("no epochs were run")?;
        let syncs: u64 = reports.iter().map(|r| r.host_syncs).sum();
        let full = cfg.epochs >= Config::default().epochs;
        examples::train_mlp::accept(syncs, last.accuracy, full, started.elapsed().as_secs_f64())?;
        Ok(())
    })
}

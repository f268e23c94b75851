//! Trains a two-layer MLP on a synthetic classification set with every
//! step on the device: forward, loss, backward and SGD update are CANN
//! operators (`acl::ops`). `--precision f16` trains in f16 with f32 master
//! weights and dynamic loss scaling, as `torch.cuda.amp.GradScaler` does.
//!
//! ```text
//! cargo run --example train_mlp
//! cargo run --example train_mlp -- --precision f16 --epochs 10
//! cargo run --example train_mlp -- --trace trace.json
//! ```
//!
//! `--trace PATH` then runs one more training step with its tasks recorded
//! and writes the timeline to `PATH` (Chrome trace-event JSON on the
//! simulator: open it in `chrome://tracing` or <https://ui.perfetto.dev>;
//! msprof data on a real NPU, see `examples::timeline`). The path is
//! checked before training: a FIFO, a device or a missing directory is an
//! error at once (exit status 1), and nothing is written there.

use acl::{Device, Runtime};
use examples::train_mlp::{Config, Precision, train};
use std::path::PathBuf;
use std::process::ExitCode;

fn parse(args: &[String]) -> Result<(Config, Option<PathBuf>), String> {
    let mut cfg = Config::default();
    let mut trace = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--precision" => cfg.precision = value()?.parse::<Precision>()?,
            "--epochs" => cfg.epochs = value()?.parse().map_err(|e| format!("--epochs: {e}"))?,
            "--lr" => cfg.lr = value()?.parse().map_err(|e| format!("--lr: {e}"))?,
            "--seed" => cfg.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--trace" => trace = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: train_mlp [--precision f32|f16] [--epochs N] [--lr X] [--seed N] [--trace PATH]"
                ));
            }
        }
    }
    Ok((cfg, trace))
}

fn main() -> ExitCode {
    examples::run(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let (cfg, trace) = parse(&args)?;
        let backend = examples::select_backend()?;
        if let Some(path) = &trace {
            // Before the training, not after it.
            examples::timeline::check_path(&backend, path)?;
        }
        println!("backend: {backend}");
        println!(
            "MLP {} -> {} -> {} on {} samples, batch {}, lr {}, precision {:?}",
            cfg.features, cfg.hidden, cfg.classes, cfg.samples, cfg.batch, cfg.lr, cfg.precision
        );
        let runtime = Runtime::init()?;
        let npu = Device::new(&runtime, 0)?;
        let stream = npu.new_stream()?;
        let started = std::time::Instant::now();
        let reports = train(&stream, &cfg, |r| println!("{r}"))?;
        let last = reports.last().ok_or("no epochs were run")?;
        println!(
            "final accuracy {:.1}% in {:.1} s",
            last.accuracy * 100.0,
            started.elapsed().as_secs_f64()
        );
        if let Some(path) = trace {
            // One step: one batch, one epoch, from the initial weights.
            let step = Config {
                epochs: 1,
                samples: cfg.batch,
                ..cfg.clone()
            };
            examples::timeline::record(&backend, &runtime, 0, &path, || {
                Ok(train(&stream, &step, |_| {})?)
            })?;
        }
        Ok(())
    })
}

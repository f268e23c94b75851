//! Trains an MLP (Linear, LayerNorm, GELU, dropout, Linear) on a synthetic
//! classification set with a real backward pass and fused AdamW, the whole
//! training step captured as ONE graph and replayed for every batch
//! (`examples::train_mlp`). `--precision f16` trains in f16 with f32 master
//! weights and dynamic loss scaling on the device. The example checks that
//! the steps made no host synchronisation (counted by cann-sim) and that
//! the final accuracy of a full run (at least
//! the default number of epochs) is at least 95%, and exits with status 1
//! otherwise.
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
use examples::train_mlp::{Config, Precision, train, train_measured};
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
            "MLP {} -> {} (LayerNorm, GELU, dropout {}) -> {} on {} samples, batch {}, AdamW lr {}, precision {:?}",
            cfg.features,
            cfg.hidden,
            cfg.dropout,
            cfg.classes,
            cfg.samples,
            cfg.batch,
            cfg.lr,
            cfg.precision
        );
        let runtime = Runtime::init()?;
        let npu = Device::new(&runtime, 0)?;
        let stream = npu.new_stream()?;
        let started = std::time::Instant::now();
        let trained = train_measured(&stream, &cfg, |r| println!("{r}"))?;
        let last = trained.reports.last().ok_or("no epochs were run")?;
        let syncs: u64 = trained.reports.iter().map(|r| r.host_syncs).sum();
        println!(
            "one step (batch copies, graph launch; the dropout mask is drawn in the graph): {} runtime calls, {} host synchronisations",
            trained.first_step.total(),
            trained.first_step.host_syncs()
        );
        let full = cfg.epochs >= Config::default().epochs;
        examples::train_mlp::accept(syncs, last.accuracy, full, started.elapsed().as_secs_f64())?;
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

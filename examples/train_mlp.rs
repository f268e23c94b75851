//! Trains a two-layer MLP on a synthetic classification set with every
//! step on the device: forward, loss, backward and SGD update are CANN
//! operators (`acl::ops`). `--precision f16` trains in f16 with f32 master
//! weights and dynamic loss scaling, as `torch.cuda.amp.GradScaler` does.
//!
//! ```text
//! cargo run --example train_mlp
//! cargo run --example train_mlp -- --precision f16 --epochs 10
//! ```

use acl::{Device, Runtime};
use examples::train_mlp::{Config, Precision, train};
use std::process::ExitCode;

fn parse(args: &[String]) -> Result<Config, String> {
    let mut cfg = Config::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--precision" => cfg.precision = value()?.parse::<Precision>()?,
            "--epochs" => cfg.epochs = value()?.parse().map_err(|e| format!("--epochs: {e}"))?,
            "--lr" => cfg.lr = value()?.parse().map_err(|e| format!("--lr: {e}"))?,
            "--seed" => cfg.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: train_mlp [--precision f32|f16] [--epochs N] [--lr X] [--seed N]"
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
            "MLP {} -> {} -> {} on {} samples, batch {}, lr {}, precision {:?}",
            cfg.features, cfg.hidden, cfg.classes, cfg.samples, cfg.batch, cfg.lr, cfg.precision
        );
        let npu = Device::new(&Runtime::init()?, 0)?;
        let stream = npu.new_stream()?;
        let started = std::time::Instant::now();
        let reports = train(&stream, &cfg, |r| println!("{r}"))?;
        let last = reports.last().ok_or("no epochs were run")?;
        println!(
            "final accuracy {:.1}% in {:.1} s",
            last.accuracy * 100.0,
            started.elapsed().as_secs_f64()
        );
        Ok(())
    })
}

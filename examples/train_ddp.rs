//! Data-parallel training of the MLP on N ranks (processes), gradients
//! averaged with HCCL all-reduce; checks that every rank ends with the same
//! weights and that the loss matches single-rank training on the whole data.
//!
//! ```text
//! cargo run --example train_ddp                 # 2 ranks
//! cargo run --example train_ddp -- -n 4         # 4 ranks
//! ```
//!
//! Without `RANK` in the environment this is the launcher (like `torchrun
//! --nproc-per-node N`); with it, one rank.

use examples::mlp_sgd::Config;
use examples::train_ddp::{self, RankReport};
use std::process::ExitCode;
use std::time::Duration;

/// About 1,024 samples, a multiple of the global batch (32 per rank).
fn config(ranks: usize) -> Config {
    let global = 32 * ranks.max(1);
    Config {
        epochs: 4,
        batch: 32,
        samples: global * (1024 / global).max(1),
        ..Config::default()
    }
}

fn main() -> ExitCode {
    examples::run(|| {
        if std::env::var_os("RANK").is_some() {
            // One rank: the launcher chose the backend for us (CANN_BACKEND).
            examples::select_backend()?;
            let world: usize = std::env::var("WORLD_SIZE")?.parse()?;
            let report = train_ddp::run_rank(&config(world)).map_err(|e| e.to_string())?;
            println!("{report}");
            return Ok(());
        }
        let args: Vec<String> = std::env::args().skip(1).collect();
        let ranks = match args.as_slice() {
            [] => 2,
            [flag, n] if flag == "-n" => n
                .parse::<usize>()
                .map_err(|_| format!("-n {n}: not a number"))?,
            _ => return Err("usage: train_ddp [-n RANKS]".into()),
        };
        if ranks == 0 {
            return Err("-n must be at least 1".into());
        }
        let backend = examples::select_backend()?;
        println!("backend: {backend}; {ranks} ranks, one process each");
        let backend_env = match backend {
            examples::Backend::Sim => "sim",
            examples::Backend::Real(_) => "real",
        };
        let exits = hccl::launch::Launcher::new(std::env::current_exe()?)
            .nproc(ranks as u32)
            .env("CANN_BACKEND", backend_env)
            .time_limit(Duration::from_secs(300))
            .capture(true)
            .run()?;
        let mut reports = Vec::new();
        for exit in &exits {
            let (out, err) = exit.output.clone().unwrap_or_default();
            if !exit.success() {
                return Err(format!("{exit}\n{err}").into());
            }
            for line in out.lines().filter(|l| l.starts_with("ddp-rank ")) {
                let r: RankReport = line.parse()?;
                println!(
                    "  rank {}: loss {:.4}, accuracy {:.1}%, weights equal rank 0's: {}",
                    r.rank,
                    r.loss,
                    r.accuracy * 100.0,
                    r.same_as_rank0
                );
                reports.push(r);
            }
        }
        let rt = acl::Runtime::init()?;
        let npu = acl::Device::new(&rt, 0)?;
        let reference =
            train_ddp::single_rank_loss(&npu, &config(ranks), ranks).map_err(|e| e.to_string())?;
        let mean = train_ddp::check(&reports, ranks, reference)?;
        println!(
            "mean loss over the ranks {mean:.6}, single-rank training on the whole data {reference:.6}: \
             within {:.0e}; weights identical on every rank",
            train_ddp::LOSS_TOLERANCE
        );
        Ok(())
    })
}

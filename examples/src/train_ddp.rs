//! Data-parallel training: the [`mlp_sgd`](crate::mlp_sgd) MLP on N
//! ranks, each on its own NPU and its own shard of every global batch, with
//! the gradients summed by an HCCL all-reduce after every backward pass (the
//! learning rate divided by N, so each step applies the global batch's mean
//! gradient) — what `torch.nn.parallel.DistributedDataParallel` does.
//!
//! The launcher side starts the ranks as processes, like
//! `torchrun --nproc-per-node N`, reads what each printed, and checks the
//! run: the final weights are bit-identical on every rank (each rank
//! compares its weights with rank 0's, broadcast over HCCL), and the final
//! loss, averaged over the ranks, matches one rank training on the whole
//! data with batch N·B within [`LOSS_TOLERANCE`].

use crate::mlp_sgd::{Config, Shard, train_sharded};
use acl::{Device, Runtime, Tensor};
use std::error::Error;

/// Boxed errors of either crate.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// Relative tolerance between the data-parallel loss and the single-rank
/// loss: the two runs do the same arithmetic but sum the gradients in a
/// different order.
pub const LOSS_TOLERANCE: f32 = 1e-3;

/// What one rank reports, one `key=value` line on stdout.
#[derive(Debug, Clone, PartialEq)]
pub struct RankReport {
    /// The rank.
    pub rank: usize,
    /// Loss of the last epoch on this rank's shard.
    pub loss: f32,
    /// Accuracy of the last epoch on this rank's shard.
    pub accuracy: f32,
    /// Whether this rank's final weights equal rank 0's, bit for bit.
    pub same_as_rank0: bool,
}

impl std::fmt::Display for RankReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ddp-rank rank={} loss={} accuracy={} same_as_rank0={}",
            self.rank, self.loss, self.accuracy, self.same_as_rank0
        )
    }
}

impl std::str::FromStr for RankReport {
    type Err = String;
    fn from_str(line: &str) -> Result<RankReport, String> {
        let rest = line
            .strip_prefix("ddp-rank ")
            .ok_or_else(|| format!("not a rank report: {line:?}"))?;
        let mut r = RankReport {
            rank: usize::MAX,
            loss: f32::NAN,
            accuracy: f32::NAN,
            same_as_rank0: false,
        };
        for kv in rest.split_whitespace() {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("bad field {kv:?}"))?;
            let bad = |e: &dyn std::fmt::Display| format!("bad {k} {v:?}: {e}");
            match k {
                "rank" => r.rank = v.parse().map_err(|e| bad(&e))?,
                "loss" => r.loss = v.parse().map_err(|e| bad(&e))?,
                "accuracy" => r.accuracy = v.parse().map_err(|e| bad(&e))?,
                "same_as_rank0" => r.same_as_rank0 = v.parse().map_err(|e| bad(&e))?,
                other => return Err(format!("unknown field {other:?}")),
            }
        }
        if r.rank == usize::MAX {
            return Err(format!("no rank in {line:?}"));
        }
        Ok(r)
    }
}

/// One rank, inside a process the launcher started (`RANK`, `WORLD_SIZE`,
/// `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT` set): bootstrap the
/// communicator, train on this rank's shard, compare the weights with rank 0's.
///
/// # Errors
///
/// Any error of the bootstrap, the collectives or the training.
pub fn run_rank(cfg: &Config) -> Result<RankReport, BoxError> {
    let boot = hccl::BootstrapConfig::from_env()?;
    let rt = Runtime::init()?;
    let devices = rt.device_count()?;
    let device = Device::new(&rt, boot.local_rank % devices.max(1))?;
    let comm = hccl::init_comm(&device, &boot, &hccl::CommConfig::default())?;
    let stream = device.new_stream()?;
    let shard = Shard {
        rank: comm.rank() as usize,
        world: comm.size() as usize,
    };
    let trained = train_sharded(
        &stream,
        cfg,
        shard,
        |s, grads: [&mut Tensor<f32>; 4]| -> Result<(), BoxError> {
            for g in grads {
                comm.all_reduce_in_place(&mut g.buffer_mut(), hccl::ReduceOp::Sum, s)?;
            }
            Ok(())
        },
        |_| {},
    )?;
    let mut same = true;
    for w in &trained.weights {
        let mut theirs = stream.clone_from_host(w)?;
        comm.broadcast(&mut theirs, 0, &stream)?;
        let theirs = theirs.to_host_vec()?;
        same &= theirs
            .iter()
            .zip(w)
            .all(|(a, b)| a.to_bits() == b.to_bits());
    }
    let last = trained.reports.last().ok_or("no epoch was trained")?;
    Ok(RankReport {
        rank: shard.rank,
        loss: last.loss,
        accuracy: last.accuracy,
        same_as_rank0: same,
    })
}

/// The reference: one rank training on the whole data with batch
/// `ranks·cfg.batch`, on `device`. Returns the last epoch's loss.
///
/// # Errors
///
/// Any error of the training.
pub fn single_rank_loss(device: &Device, cfg: &Config, ranks: usize) -> Result<f32, BoxError> {
    let mut whole = cfg.clone();
    whole.batch = cfg.batch * ranks;
    let stream = device.new_stream()?;
    let reports = crate::mlp_sgd::train(&stream, &whole, |_| {})?;
    Ok(reports.last().ok_or("no epoch was trained")?.loss)
}

/// Checks the ranks' reports against the single-rank loss; `Ok` holds the
/// ranks' mean loss.
///
/// # Errors
///
/// A message saying which rank or figure is off.
pub fn check(reports: &[RankReport], ranks: usize, reference_loss: f32) -> Result<f32, String> {
    if reports.len() != ranks {
        return Err(format!("{} of {ranks} ranks reported", reports.len()));
    }
    for r in reports {
        if !r.same_as_rank0 {
            return Err(format!("rank {}'s weights differ from rank 0's", r.rank));
        }
    }
    let mean = reports.iter().map(|r| r.loss).sum::<f32>() / ranks as f32;
    let rel = (mean - reference_loss).abs() / reference_loss.abs().max(f32::MIN_POSITIVE);
    if rel.is_nan() || rel > LOSS_TOLERANCE {
        return Err(format!(
            "mean loss over the ranks {mean} differs from single-rank training's {reference_loss} \
             by {:.2e} (tolerance {LOSS_TOLERANCE:.0e})",
            rel
        ));
    }
    Ok(mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_reports_round_trip_through_their_line() {
        let r = RankReport {
            rank: 3,
            loss: 0.25,
            accuracy: 0.9,
            same_as_rank0: true,
        };
        assert_eq!(r.to_string().parse::<RankReport>().unwrap(), r);
        assert!("ddp-rank loss=1".parse::<RankReport>().is_err());
        assert!("hello".parse::<RankReport>().is_err());
    }

    #[test]
    fn check_flags_differing_weights_and_losses() {
        let ok = |rank| RankReport {
            rank,
            loss: 0.5,
            accuracy: 1.0,
            same_as_rank0: true,
        };
        assert_eq!(check(&[ok(0), ok(1)], 2, 0.5), Ok(0.5));
        assert!(
            check(&[ok(0)], 2, 0.5)
                .unwrap_err()
                .contains("1 of 2 ranks")
        );
        let mut bad = ok(1);
        bad.same_as_rank0 = false;
        assert_eq!(
            check(&[ok(0), bad], 2, 0.5).unwrap_err(),
            "rank 1's weights differ from rank 0's"
        );
        assert!(
            check(&[ok(0), ok(1)], 2, 0.6)
                .unwrap_err()
                .contains("differs")
        );
    }
}

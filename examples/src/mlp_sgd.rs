//! The plain two-layer MLP that data-parallel training ([`crate::train_ddp`])
//! shards: ReLU, softmax cross-entropy with its closed-form gradient and SGD,
//! every step's forward pass, loss, backward pass and update as CANN
//! operators on the device (`acl::ops`), the host reading the loss, the
//! logits and (in f16) the overflow check after each step. The training
//! example with a real backward pass, AdamW and a captured step is
//! [`crate::train_mlp`].
//!
//! ```text
//! x[B,D] ─MatMul W1─Add b1─Relu─► a1[B,H] ─MatMul W2─Add b2─► z[B,C]
//! loss = −mean(Σ y ⊙ LogSoftmaxV2(z))        dz = (SoftmaxV2(z) − y) / B
//! dW2 = a1ᵀ dz   db2 = Σ_B dz   da1 = dz W2ᵀ   dh1 = ReluGrad(da1, h1)
//! dW1 = xᵀ dh1   db1 = Σ_B dh1  W ← W − lr·dW
//! ```
//!
//! [`Precision::F16`] trains as `torch.autocast` + `GradScaler` do: f32
//! master weights cast to f16 for each step, the matmuls in f16 (the
//! device accumulates in f32), the loss head in f32, the loss scaled by a
//! dynamic factor before the backward pass; gradients are cast back to
//! f32 and unscaled, and when any is infinite or NaN the step is skipped
//! and the scale halved; after `growth_interval` good steps it doubles.

use crate::rng::Rng;
use crate::train_mlp::correct;
use acl::{Result, Stream, Tensor, ops};
use half::f16;

pub use crate::train_mlp::Precision;

/// Hyper-parameters and the data set's size.
#[derive(Debug, Clone)]
pub struct Config {
    /// Compute precision.
    pub precision: Precision,
    /// Passes over the training set.
    pub epochs: usize,
    /// Samples per step.
    pub batch: usize,
    /// Input features.
    pub features: usize,
    /// Hidden units.
    pub hidden: usize,
    /// Classes.
    pub classes: usize,
    /// Training samples (a multiple of `batch`).
    pub samples: usize,
    /// SGD learning rate.
    pub lr: f32,
    /// Initial loss scale (f16 only); GradScaler's default is 2^16.
    pub init_scale: f32,
    /// Good steps before the scale doubles (f16 only).
    pub growth_interval: usize,
    /// Seed of the data set and the initial weights.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            precision: Precision::F32,
            epochs: 8,
            batch: 64,
            features: 16,
            hidden: 32,
            classes: 4,
            samples: 1024,
            lr: 0.2,
            init_scale: 65536.0,
            growth_interval: 20,
            seed: 7,
        }
    }
}

/// What one epoch did.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochReport {
    /// Epoch number, from 1.
    pub epoch: usize,
    /// Mean loss of the epoch's applied steps.
    pub loss: f32,
    /// Fraction of samples classified correctly during the epoch.
    pub accuracy: f32,
    /// Steps skipped because of an overflow (f16 only).
    pub skipped: usize,
    /// The loss scale at the end of the epoch (f16 only).
    pub scale: Option<f32>,
}

impl std::fmt::Display for EpochReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "epoch {:>2}  loss {:.4}  accuracy {:>5.1}%",
            self.epoch,
            self.loss,
            self.accuracy * 100.0
        )?;
        if let Some(s) = self.scale {
            write!(f, "  loss scale {s}  skipped steps {}", self.skipped)?;
        }
        Ok(())
    }
}

/// The synthetic set: `classes` Gaussian blobs in `features` dimensions
/// whose centres are close enough that a linear model is not perfect.
/// Returns (x row-major `[samples, features]`, labels).
pub fn dataset(cfg: &Config) -> (Vec<f32>, Vec<usize>) {
    crate::train_mlp::blobs(cfg.seed, cfg.classes, cfg.features, cfg.samples)
}

/// Parameters (or their gradients) of the MLP.
struct Params<T: acl::Element> {
    w1: Tensor<T>,
    b1: Tensor<T>,
    w2: Tensor<T>,
    b2: Tensor<T>,
}

impl<T: acl::Element> Params<T> {
    fn zeros(s: &Stream, cfg: &Config) -> Result<Params<T>> {
        Ok(Params {
            w1: Tensor::zeros(s, &[cfg.features, cfg.hidden])?,
            b1: Tensor::zeros(s, &[cfg.hidden])?,
            w2: Tensor::zeros(s, &[cfg.hidden, cfg.classes])?,
            b2: Tensor::zeros(s, &[cfg.classes])?,
        })
    }

    fn each(&self) -> [&Tensor<T>; 4] {
        [&self.w1, &self.b1, &self.w2, &self.b2]
    }

    fn each_mut(&mut self) -> [&mut Tensor<T>; 4] {
        [&mut self.w1, &mut self.b1, &mut self.w2, &mut self.b2]
    }
}

/// Activations and scratch of one step, in compute precision `T`.
struct Work<T: acl::Element> {
    t_bh: Tensor<T>,
    h1: Tensor<T>,
    a1: Tensor<T>,
    t_bc: Tensor<T>,
    z: Tensor<T>,
    dz: Tensor<T>,
    da1: Tensor<T>,
    dh1: Tensor<T>,
    grads: Params<T>,
}

impl<T: acl::Element> Work<T> {
    fn new(s: &Stream, cfg: &Config) -> Result<Work<T>> {
        let (b, h, c) = (cfg.batch, cfg.hidden, cfg.classes);
        Ok(Work {
            t_bh: Tensor::zeros(s, &[b, h])?,
            h1: Tensor::zeros(s, &[b, h])?,
            a1: Tensor::zeros(s, &[b, h])?,
            t_bc: Tensor::zeros(s, &[b, c])?,
            z: Tensor::zeros(s, &[b, c])?,
            dz: Tensor::zeros(s, &[b, c])?,
            da1: Tensor::zeros(s, &[b, h])?,
            dh1: Tensor::zeros(s, &[b, h])?,
            grads: Params::zeros(s, cfg)?,
        })
    }

    fn forward(&mut self, s: &Stream, x: &Tensor<T>, p: &Params<T>) -> Result<()> {
        ops::matmul(s, x, &p.w1, &mut self.t_bh)?;
        ops::add(s, &self.t_bh, &p.b1, &mut self.h1)?;
        ops::relu(s, &self.h1, &mut self.a1)?;
        ops::matmul(s, &self.a1, &p.w2, &mut self.t_bc)?;
        ops::add(s, &self.t_bc, &p.b2, &mut self.z)
    }

    /// Gradients from `self.dz` (already set).
    fn backward(&mut self, s: &Stream, x: &Tensor<T>, p: &Params<T>) -> Result<()> {
        let g = &mut self.grads;
        ops::matmul_t(s, &self.a1, true, &self.dz, false, &mut g.w2)?;
        ops::reduce_sum(s, &self.dz, &[0], false, &mut g.b2)?;
        ops::matmul_t(s, &self.dz, false, &p.w2, true, &mut self.da1)?;
        ops::relu_grad(s, &self.da1, &self.h1, &mut self.dh1)?;
        ops::matmul_t(s, x, true, &self.dh1, false, &mut g.w1)?;
        ops::reduce_sum(s, &self.dh1, &[0], false, &mut g.b1)
    }
}

/// The f32 loss head: the loss sum (a scalar) and `dz = (softmax(z) − y) · factor`.
struct Head {
    ls: Tensor<f32>,
    t: Tensor<f32>,
    loss_sum: Tensor<f32>,
    p: Tensor<f32>,
    d: Tensor<f32>,
    factor: Tensor<f32>,
    dz: Tensor<f32>,
}

impl Head {
    fn new(s: &Stream, cfg: &Config) -> Result<Head> {
        let bc = [cfg.batch, cfg.classes];
        Ok(Head {
            ls: Tensor::zeros(s, &bc)?,
            t: Tensor::zeros(s, &bc)?,
            loss_sum: Tensor::zeros(s, &[])?,
            p: Tensor::zeros(s, &bc)?,
            d: Tensor::zeros(s, &bc)?,
            factor: Tensor::zeros(s, &[1])?,
            dz: Tensor::zeros(s, &bc)?,
        })
    }

    fn run(&mut self, s: &Stream, z: &Tensor<f32>, y: &Tensor<f32>) -> Result<()> {
        ops::log_softmax(s, z, -1, &mut self.ls)?;
        ops::mul(s, y, &self.ls, &mut self.t)?;
        ops::reduce_sum(s, &self.t, &[0, 1], false, &mut self.loss_sum)?;
        ops::softmax(s, z, -1, &mut self.p)?;
        ops::sub(s, &self.p, y, &mut self.d)?;
        ops::mul(s, &self.d, &self.factor, &mut self.dz)
    }
}

/// `w ← w − lr·g` for each parameter, in place, through `step` scratch.
fn sgd(
    s: &Stream,
    params: &mut Params<f32>,
    grads: &Params<f32>,
    lr: &Tensor<f32>,
    scratch: &mut Params<f32>,
) -> Result<()> {
    for ((w, g), st) in params
        .each_mut()
        .into_iter()
        .zip(grads.each())
        .zip(scratch.each_mut())
    {
        ops::mul(s, g, lr, st)?;
        ops::sub_(s, w, st)?;
    }
    Ok(())
}

/// Trains on `stream` and reports each epoch to `on_epoch` as it ends.
///
/// # Errors
///
/// An [`acl::Error`] from any operator or copy; `InvalidArgument` when
/// `samples` is not a multiple of `batch`.
pub fn train(
    stream: &Stream,
    cfg: &Config,
    on_epoch: impl FnMut(&EpochReport),
) -> Result<Vec<EpochReport>> {
    let no_sync = |_: &Stream, _: [&mut Tensor<f32>; 4]| -> Result<()> { Ok(()) };
    train_sharded(stream, cfg, Shard::WHOLE, no_sync, on_epoch).map(|t| t.reports)
}

/// Which part of each global batch this process trains on: rank `rank` of
/// `world` data-parallel ranks takes rows `rank·batch .. (rank+1)·batch` of
/// every global batch of `world·batch` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This rank.
    pub rank: usize,
    /// Number of ranks.
    pub world: usize,
}

impl Shard {
    /// The whole data set (one rank).
    pub const WHOLE: Shard = Shard { rank: 0, world: 1 };
}

/// What a (possibly sharded) training run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Trained {
    /// One report per epoch (loss and accuracy of this rank's shard).
    pub reports: Vec<EpochReport>,
    /// The final f32 weights: W1, b1, W2, b2.
    pub weights: [Vec<f32>; 4],
}

/// Data-parallel training (f32): this rank trains on its [`Shard`] of every
/// global batch, and after each backward pass `sync_grads` must replace the
/// four gradients (W1, b1, W2, b2: means over the local batch) by their
/// **sum** over all ranks — an all-reduce. The learning rate is divided by
/// the world size, so every rank applies the mean gradient of the global
/// batch: the same step as one rank training with batch `world·batch`.
///
/// # Errors
///
/// Whatever `sync_grads` returns, an [`acl::Error`] from any operator or
/// copy, `InvalidArgument` when `samples` is not a multiple of
/// `world·batch`, when the shard is invalid, or when a sharded run asks for
/// f16 (not supported here).
pub fn train_sharded<E: From<acl::Error>>(
    stream: &Stream,
    cfg: &Config,
    shard: Shard,
    mut sync_grads: impl FnMut(&Stream, [&mut Tensor<f32>; 4]) -> std::result::Result<(), E>,
    mut on_epoch: impl FnMut(&EpochReport),
) -> std::result::Result<Trained, E> {
    let s = stream;
    let invalid = |reason: String| acl::Error::InvalidArgument {
        function: "mlp_sgd::train",
        reason,
    };
    if shard.world == 0 || shard.rank >= shard.world {
        return Err(invalid(format!("rank {} of {} ranks", shard.rank, shard.world)).into());
    }
    if shard.world > 1 && cfg.precision != Precision::F32 {
        return Err(invalid("data-parallel training supports f32 only".to_string()).into());
    }
    let global = cfg.batch * shard.world;
    if cfg.batch == 0 || !cfg.samples.is_multiple_of(global) {
        let reason = if shard.world == 1 {
            format!(
                "samples ({}) must be a multiple of batch ({})",
                cfg.samples, cfg.batch
            )
        } else {
            format!(
                "samples ({}) must be a multiple of batch × ranks ({} × {})",
                cfg.samples, cfg.batch, shard.world
            )
        };
        return Err(invalid(reason).into());
    }
    let (x, labels) = dataset(cfg);
    let (b, d, c) = (cfg.batch, cfg.features, cfg.classes);
    let steps = cfg.samples / global;
    // Sample index of row `i` of this rank's part of global step `k`.
    let row = |k: usize, i: usize| k * global + shard.rank * b + i;
    let shard_samples = steps * b;
    let mut xs = Vec::with_capacity(steps);
    let mut ys = Vec::with_capacity(steps);
    for k in 0..steps {
        xs.push(Tensor::from_host(
            s,
            &x[row(k, 0) * d..row(k, b) * d],
            &[b, d],
        )?);
        let mut onehot = vec![0.0f32; b * c];
        for (i, &l) in labels[row(k, 0)..row(k, b)].iter().enumerate() {
            onehot[i * c + l] = 1.0;
        }
        ys.push(Tensor::from_host(s, &onehot, &[b, c])?);
    }

    // f32 master weights: He-initialised W1, Xavier W2, zero biases.
    let mut rng = Rng(cfg.seed ^ 0xA5A5);
    let mut master = Params::<f32>::zeros(s, cfg)?;
    let w1: Vec<f32> = (0..d * cfg.hidden)
        .map(|_| rng.normal() * (2.0 / d as f32).sqrt())
        .collect();
    let w2: Vec<f32> = (0..cfg.hidden * c)
        .map(|_| rng.normal() * (1.0 / cfg.hidden as f32).sqrt())
        .collect();
    master.w1.copy_from_host(&w1)?;
    master.w2.copy_from_host(&w2)?;
    let lr = Tensor::from_host(s, &[cfg.lr / shard.world as f32], &[1])?;
    let mut scratch = Params::<f32>::zeros(s, cfg)?;
    let mut head = Head::new(s, cfg)?;

    let mut reports = Vec::with_capacity(cfg.epochs);
    match cfg.precision {
        Precision::F32 => {
            head.factor.copy_from_host(&[1.0 / b as f32])?;
            let mut work = Work::<f32>::new(s, cfg)?;
            for epoch in 1..=cfg.epochs {
                let (mut loss, mut hits) = (0.0f64, 0usize);
                for k in 0..steps {
                    work.forward(s, &xs[k], &master)?;
                    head.run(s, &work.z, &ys[k])?;
                    std::mem::swap(&mut work.dz, &mut head.dz);
                    work.backward(s, &xs[k], &master)?;
                    std::mem::swap(&mut work.dz, &mut head.dz);
                    sync_grads(s, work.grads.each_mut())?;
                    sgd(s, &mut master, &work.grads, &lr, &mut scratch)?;
                    loss += -f64::from(head.loss_sum.to_host_vec()?[0]) / b as f64;
                    hits += correct(&work.z.to_host_vec()?, &labels[row(k, 0)..row(k, b)], c);
                }
                let r = EpochReport {
                    epoch,
                    loss: (loss / steps as f64) as f32,
                    accuracy: hits as f32 / shard_samples as f32,
                    skipped: 0,
                    scale: None,
                };
                on_epoch(&r);
                reports.push(r);
            }
        }
        Precision::F16 => {
            let mut xs16 = Vec::with_capacity(steps);
            for x32 in &xs {
                let mut x16 = Tensor::<f16>::zeros(s, x32.shape())?;
                ops::cast(s, x32, &mut x16)?;
                xs16.push(x16);
            }
            let mut half = Params::<f16>::zeros(s, cfg)?;
            let mut work = Work::<f16>::new(s, cfg)?;
            let mut z32 = Tensor::<f32>::zeros(s, &[b, c])?;
            let mut g32 = Params::<f32>::zeros(s, cfg)?;
            let mut unscaled = Params::<f32>::zeros(s, cfg)?;
            let mut abs = Params::<f32>::zeros(s, cfg)?;
            let mut peak: Vec<Tensor<f32>> = (0..4)
                .map(|_| Tensor::zeros(s, &[]))
                .collect::<Result<_>>()?;
            let mut inv_scale = Tensor::<f32>::zeros(s, &[1])?;
            let mut scale = cfg.init_scale;
            let mut good = 0usize;
            for epoch in 1..=cfg.epochs {
                let (mut loss, mut hits, mut applied, mut skipped) =
                    (0.0f64, 0usize, 0usize, 0usize);
                for k in 0..steps {
                    // f16 copies of the master weights.
                    for (m, h) in master.each().into_iter().zip(half.each_mut()) {
                        ops::cast(s, m, h)?;
                    }
                    work.forward(s, &xs16[k], &half)?;
                    ops::cast(s, &work.z, &mut z32)?;
                    head.factor.copy_from_host(&[scale / b as f32])?;
                    head.run(s, &z32, &ys[k])?;
                    ops::cast(s, &head.dz, &mut work.dz)?;
                    work.backward(s, &xs16[k], &half)?;
                    // Unscale in f32 and look for inf/NaN.
                    inv_scale.copy_from_host(&[1.0 / scale])?;
                    for ((((g, gf), u), a), p) in work
                        .grads
                        .each()
                        .into_iter()
                        .zip(g32.each_mut())
                        .zip(unscaled.each_mut())
                        .zip(abs.each_mut())
                        .zip(peak.iter_mut())
                    {
                        ops::cast(s, g, gf)?;
                        ops::mul(s, gf, &inv_scale, u)?;
                        ops::abs(s, u, a)?;
                        let axes: Vec<i64> = (0..a.shape().len() as i64).collect();
                        ops::reduce_max(s, a, &axes, false, p)?;
                    }
                    let mut finite = true;
                    for p in &peak {
                        finite &= p.to_host_vec()?[0].is_finite();
                    }
                    let step_loss = -f64::from(head.loss_sum.to_host_vec()?[0]) / b as f64;
                    hits += correct(&z32.to_host_vec()?, &labels[row(k, 0)..row(k, b)], c);
                    if !finite || !step_loss.is_finite() {
                        skipped += 1;
                        scale *= 0.5;
                        good = 0;
                        continue;
                    }
                    sgd(s, &mut master, &unscaled, &lr, &mut scratch)?;
                    loss += step_loss;
                    applied += 1;
                    good += 1;
                    if good == cfg.growth_interval {
                        scale *= 2.0;
                        good = 0;
                    }
                }
                let r = EpochReport {
                    epoch,
                    loss: if applied == 0 {
                        f32::NAN
                    } else {
                        (loss / applied as f64) as f32
                    },
                    accuracy: hits as f32 / shard_samples as f32,
                    skipped,
                    scale: Some(scale),
                };
                on_epoch(&r);
                reports.push(r);
            }
        }
    }
    s.synchronize()?;
    let [w1, b1, w2, b2] = master.each();
    let weights = [
        w1.to_host_vec()?,
        b1.to_host_vec()?,
        w2.to_host_vec()?,
        b2.to_host_vec()?,
    ];
    Ok(Trained { reports, weights })
}

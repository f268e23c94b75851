//! An MLP trained with a real backward pass, fused AdamW and (in f16)
//! dynamic loss scaling, its whole training step captured as ONE graph
//! that is replayed for every batch: the host never waits for the device
//! inside a step.
//!
//! ```text
//! x[B,D] ─MatMul W1─Add b1─► h ─LayerNorm(γ,β)─► n ─Gelu─► a ─Dropout(p)─► d ─MatMul W2─Add b2─► z[B,C]
//! loss = NLLLoss(LogSoftmax(z), target)       (mean over the batch)
//! backward: NLLLossBackward(scale) → LogSoftmaxBackward → dz;  dW2 = dᵀdz  db2 = Σ dz
//!   dd = dz W2ᵀ → DropoutDoMask(same mask) → GeluBackward → LayerNormBackward → dh, dγ, dβ
//!   dW1 = xᵀdh  db1 = Σ dh
//! update: found = 0; NonFiniteCheck(grads) → found; FusedAdamW(grads / scale, skip if found);
//!         AmpUpdateScale(scale, found)
//! ```
//!
//! [`Precision::F16`] trains as `torch.autocast` + `GradScaler` do: f32
//! master weights (and AdamW moments) cast to f16 inside the step, the
//! forward and backward passes in f16, the loss head in f32; the loss's
//! gradient is the loss scale, the f16 gradients are cast to f32, checked
//! for infinities and NaNs on the device, and the fused AdamW step divides
//! them by the scale and is skipped (weights, moments, step count kept)
//! when the check found one; the scale halves on an overflow and doubles
//! after `growth_interval` good steps. [`Precision::F32`] runs the same
//! graph in f32 with a constant scale of 1.
//!
//! Each step's batch is copied into the graph's input tensors before the
//! launch, queued on the stream. The dropout mask is drawn inside the graph
//! by the runtime's random-number task ([`acl::Stream::dropout_bitmask`]),
//! whose state is a counter in device memory: each launch draws a new mask
//! (an aclnn draw, whose `(seed, offset)` is fixed on the host, would repeat
//! its numbers at every replay, which is why the `Generator` refuses to
//! draw in a capture). The host reads the loss sum, the skipped-step count
//! and the scale once per epoch, after the evaluation pass that measures
//! the accuracy.
//!
//! "No host synchronisation inside the step" is measured, not assumed:
//! each step's host calls (the copies and the launch) run inside
//! [`cann_sim::calls::count`], and [`EpochReport::host_syncs`] sums their
//! [`cann_sim::calls::Calls::host_syncs`] (on a real NPU the simulator
//! counts nothing, so it is 0 there without proving anything).

use crate::rng::Rng;
use acl::graph::{CaptureMode, Graph};
use acl::ops::{self, AdamW, AdamWParam, Grads, Reduction};
use acl::random::task::RandomCounter;
use acl::random::{dropout_apply, dropout_mask_len};
use acl::{Element, Result, Stream, Tensor};
use half::f16;

/// Compute precision of the forward and backward passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// Everything in f32.
    F32,
    /// f16 compute, f32 master weights, dynamic loss scaling.
    F16,
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Precision, String> {
        match s {
            "f32" | "fp32" => Ok(Precision::F32),
            "f16" | "fp16" => Ok(Precision::F16),
            other => Err(format!("unknown precision {other:?}: use f32 or f16")),
        }
    }
}

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
    /// AdamW learning rate.
    pub lr: f32,
    /// AdamW's decoupled weight decay.
    pub weight_decay: f32,
    /// Dropout probability after the GELU.
    pub dropout: f64,
    /// Initial loss scale (f16 only); GradScaler's default is 2^16.
    pub init_scale: f32,
    /// Good steps before the scale doubles (f16 only).
    pub growth_interval: usize,
    /// Seed of the data set, the initial weights and the dropout masks.
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
            lr: 0.02,
            weight_decay: 0.01,
            dropout: 0.1,
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
    /// Mean training loss of the epoch's steps (dropout on).
    pub loss: f32,
    /// Fraction of the training set classified correctly after the epoch
    /// (dropout off).
    pub accuracy: f32,
    /// Steps skipped because of an overflow (f16 only).
    pub skipped: usize,
    /// The loss scale at the end of the epoch (f16 only).
    pub scale: Option<f32>,
    /// Host synchronisations the epoch's steps made (counted by cann-sim).
    pub host_syncs: u64,
}

impl std::fmt::Display for EpochReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "epoch {:>2}  loss {:.4}  accuracy {:>5.1}%  host syncs in steps {}",
            self.epoch,
            self.loss,
            self.accuracy * 100.0,
            self.host_syncs
        )?;
        if let Some(s) = self.scale {
            write!(f, "  loss scale {s}  skipped steps {}", self.skipped)?;
        }
        Ok(())
    }
}

/// `classes` Gaussian blobs in `features` dimensions whose centres are close
/// enough that a linear model is not perfect. Returns (x row-major
/// `[samples, features]`, labels).
pub fn blobs(seed: u64, classes: usize, features: usize, samples: usize) -> (Vec<f32>, Vec<usize>) {
    let mut rng = Rng(seed);
    let centres: Vec<Vec<f32>> = (0..classes)
        .map(|_| (0..features).map(|_| rng.normal() * 0.8).collect())
        .collect();
    let mut x = Vec::with_capacity(samples * features);
    let mut y = Vec::with_capacity(samples);
    for i in 0..samples {
        let c = (rng.next() as usize + i) % classes;
        y.push(c);
        x.extend(centres[c].iter().map(|&m| m + rng.normal() * 0.9));
    }
    (x, y)
}

/// The MLP's parameters (or their gradients, or AdamW's moments).
pub(crate) struct Params<T: Element> {
    w1: Tensor<T>,
    b1: Tensor<T>,
    gamma: Tensor<T>,
    beta: Tensor<T>,
    w2: Tensor<T>,
    b2: Tensor<T>,
}

impl<T: Element> Params<T> {
    fn zeros(s: &Stream, cfg: &Config) -> Result<Params<T>> {
        let (d, h, c) = (cfg.features, cfg.hidden, cfg.classes);
        Ok(Params {
            w1: Tensor::zeros(s, &[d, h])?,
            b1: Tensor::zeros(s, &[h])?,
            gamma: Tensor::zeros(s, &[h])?,
            beta: Tensor::zeros(s, &[h])?,
            w2: Tensor::zeros(s, &[h, c])?,
            b2: Tensor::zeros(s, &[c])?,
        })
    }

    fn each(&self) -> [&Tensor<T>; 6] {
        [
            &self.w1,
            &self.b1,
            &self.gamma,
            &self.beta,
            &self.w2,
            &self.b2,
        ]
    }

    fn each_mut(&mut self) -> [&mut Tensor<T>; 6] {
        [
            &mut self.w1,
            &mut self.b1,
            &mut self.gamma,
            &mut self.beta,
            &mut self.w2,
            &mut self.b2,
        ]
    }
}

/// The forward pass's activations and the backward pass's gradients, in
/// compute precision `T`, for one batch.
struct Work<T: Element> {
    t1: Tensor<T>,
    h: Tensor<T>,
    n: Tensor<T>,
    mean: Tensor<T>,
    rstd: Tensor<T>,
    a: Tensor<T>,
    d: Tensor<T>,
    t2: Tensor<T>,
    z: Tensor<T>,
    dz: Tensor<T>,
    dd: Tensor<T>,
    da: Tensor<T>,
    dn: Tensor<T>,
    dh: Tensor<T>,
    grads: Params<T>,
}

impl<T: Element> Work<T> {
    fn new(s: &Stream, cfg: &Config, b: usize) -> Result<Work<T>> {
        let (h, c) = (cfg.hidden, cfg.classes);
        let bh = || Tensor::zeros(s, &[b, h]);
        Ok(Work {
            t1: bh()?,
            h: bh()?,
            n: bh()?,
            mean: Tensor::zeros(s, &[b, 1])?,
            rstd: Tensor::zeros(s, &[b, 1])?,
            a: bh()?,
            d: bh()?,
            t2: Tensor::zeros(s, &[b, c])?,
            z: Tensor::zeros(s, &[b, c])?,
            dz: Tensor::zeros(s, &[b, c])?,
            dd: bh()?,
            da: bh()?,
            dn: bh()?,
            dh: bh()?,
            grads: Params::zeros(s, cfg)?,
        })
    }

    /// `z` from `x`; with a `mask`, dropout with probability `p` after the
    /// GELU (without, `d` is `a`).
    fn forward(
        &mut self,
        s: &Stream,
        x: &Tensor<T>,
        p: &Params<T>,
        mask: Option<(&Tensor<u8>, f64)>,
    ) -> Result<()> {
        ops::matmul(s, x, &p.w1, &mut self.t1)?;
        ops::add(s, &self.t1, &p.b1, &mut self.h)?;
        ops::layer_norm_train(
            s,
            &self.h,
            1,
            Some(&p.gamma.view()),
            Some(&p.beta.view()),
            LN_EPS,
            &mut self.n,
            &mut self.mean,
            &mut self.rstd,
        )?;
        ops::gelu(s, &self.n, &mut self.a)?;
        match mask {
            Some((m, prob)) => dropout_apply(s, &self.a, m, prob, &mut self.d)?,
            None => ops::copy(s, &self.a, &mut self.d)?,
        }
        ops::matmul(s, &self.d, &p.w2, &mut self.t2)?;
        ops::add(s, &self.t2, &p.b2, &mut self.z)
    }

    /// The gradients from `self.dz` (set by the loss head).
    fn backward(
        &mut self,
        s: &Stream,
        x: &Tensor<T>,
        p: &Params<T>,
        mask: &Tensor<u8>,
        prob: f64,
    ) -> Result<()> {
        let g = &mut self.grads;
        ops::matmul_t(s, &self.d, true, &self.dz, false, &mut g.w2)?;
        ops::reduce_sum(s, &self.dz, &[0], false, &mut g.b2)?;
        ops::matmul_t(s, &self.dz, false, &p.w2, true, &mut self.dd)?;
        // Dropout's backward: the same mask and scaling on the gradient.
        dropout_apply(s, &self.dd, mask, prob, &mut self.da)?;
        ops::gelu_backward(s, &self.da, &self.n, &mut self.dn)?;
        ops::layer_norm_backward(
            s,
            &self.dn,
            &self.h,
            1,
            &self.mean,
            &self.rstd,
            Some(&p.gamma.view()),
            Grads::all(self.dh.view_mut(), g.gamma.view_mut(), g.beta.view_mut()),
        )?;
        ops::matmul_t(s, x, true, &self.dh, false, &mut g.w1)?;
        ops::reduce_sum(s, &self.dh, &[0], false, &mut g.b1)
    }
}

const LN_EPS: f64 = 1e-5;

/// The f32 loss head: the batch's mean NLL of `log_softmax(z)`, added to
/// `loss_sum`, and `dz = d(scale · loss)/dz`.
pub(crate) struct Head {
    ls: Tensor<f32>,
    loss: Tensor<f32>,
    total: Tensor<f32>,
    pub(crate) loss_sum: Tensor<f32>,
    dls: Tensor<f32>,
    pub(crate) dz: Tensor<f32>,
    ones: Tensor<f32>,
}

impl Head {
    pub(crate) fn new(s: &Stream, b: usize, c: usize) -> Result<Head> {
        Ok(Head {
            ls: Tensor::zeros(s, &[b, c])?,
            loss: Tensor::zeros(s, &[])?,
            total: Tensor::zeros(s, &[])?,
            loss_sum: Tensor::zeros(s, &[])?,
            dls: Tensor::zeros(s, &[b, c])?,
            dz: Tensor::zeros(s, &[b, c])?,
            ones: Tensor::from_host(s, &vec![1.0f32; c], &[c])?,
        })
    }

    pub(crate) fn run(
        &mut self,
        s: &Stream,
        z: &Tensor<f32>,
        target: &Tensor<i64>,
        scale: &Tensor<f32>,
    ) -> Result<()> {
        let r = Reduction::Mean;
        ops::log_softmax(s, z, -1, &mut self.ls)?;
        ops::nll_loss(
            s,
            &self.ls,
            target,
            &self.ones,
            r,
            -100,
            &mut self.loss,
            &mut self.total,
        )?;
        ops::add_(s, &mut self.loss_sum, &self.loss)?;
        ops::nll_loss_backward(
            s,
            scale,
            &self.ls,
            target,
            &self.ones,
            r,
            -100,
            &self.total,
            &mut self.dls,
        )?;
        ops::log_softmax_backward(s, &self.dls, &self.ls, -1, &mut self.dz)
    }
}

/// AdamW's state (a first and second moment per parameter, the step count)
/// and the loss scaler's (scale, growth tracker, overflow flag, skipped
/// steps), all on the device.
pub(crate) struct Optimizer {
    m: Vec<Tensor<f32>>,
    v: Vec<Tensor<f32>>,
    step: Tensor<f32>,
    pub(crate) scale: Tensor<f32>,
    tracker: Tensor<i32>,
    found: Tensor<f32>,
    pub(crate) skipped: Tensor<f32>,
    one: Tensor<f32>,
    hyper: AdamW,
    growth_interval: i64,
}

impl Optimizer {
    /// For parameters of `shapes`, with a loss scale of `scale` (1 without
    /// loss scaling).
    pub(crate) fn new(
        s: &Stream,
        shapes: &[&[usize]],
        hyper: AdamW,
        scale: f32,
        growth_interval: usize,
    ) -> Result<Optimizer> {
        let zeros = || -> Result<Vec<Tensor<f32>>> {
            shapes.iter().map(|sh| Tensor::zeros(s, sh)).collect()
        };
        Ok(Optimizer {
            m: zeros()?,
            v: zeros()?,
            step: Tensor::zeros(s, &[1])?,
            scale: Tensor::from_host(s, &[scale], &[1])?,
            tracker: Tensor::zeros(s, &[1])?,
            found: Tensor::zeros(s, &[1])?,
            skipped: Tensor::zeros(s, &[1])?,
            one: Tensor::from_host(s, &[1.0f32], &[1])?,
            hyper,
            growth_interval: i64::try_from(growth_interval).unwrap_or(i64::MAX),
        })
    }

    /// One step on `params` with their `grads`. `scaled`: the gradients are
    /// scaled by `self.scale`; they are checked for infinities and NaNs, the
    /// step divides them by the scale and is skipped on an overflow, and
    /// the scale is updated. Otherwise a plain step.
    pub(crate) fn step(
        &mut self,
        s: &Stream,
        params: Vec<&mut Tensor<f32>>,
        mut grads: Vec<&mut Tensor<f32>>,
        scaled: bool,
    ) -> Result<()> {
        if scaled {
            ops::muls_(s, &mut self.found, 0.0)?;
            let views = grads.iter_mut().map(|g| g.view_mut()).collect();
            ops::non_finite_check_and_unscale(s, views, &mut self.found, &self.one)?;
            ops::add_(s, &mut self.skipped, &self.found)?;
        }
        let list = params
            .into_iter()
            .zip(&grads)
            .zip(self.m.iter_mut())
            .zip(self.v.iter_mut())
            .map(|(((w, g), m), v)| {
                AdamWParam::new(w.view_mut(), g.view(), m.view_mut(), v.view_mut())
            })
            .collect();
        if !scaled {
            return ops::adamw_step(s, list, &mut self.step, &self.hyper, None, None);
        }
        ops::adamw_step(
            s,
            list,
            &mut self.step,
            &self.hyper,
            Some(&self.scale.view()),
            Some(&self.found.view()),
        )?;
        ops::amp_update_scale(
            s,
            &mut self.scale,
            &mut self.tracker,
            &self.found,
            2.0,
            0.5,
            self.growth_interval,
        )
    }
}

/// What a training run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Trained {
    /// One report per epoch.
    pub reports: Vec<EpochReport>,
    /// Host synchronisations of the one step measured alone (copies, mask,
    /// launch of the first step), as [`cann_sim::calls::count`] saw them.
    pub first_step: cann_sim::calls::Calls,
}

/// Trains on `stream` and reports each epoch to `on_epoch` as it ends.
///
/// # Errors
///
/// An [`acl::Error`] from any operator, copy or the graph;
/// `InvalidArgument` when `samples` is not a multiple of `batch` or the
/// dropout probability is outside `[0, 1)`.
pub fn train(
    stream: &Stream,
    cfg: &Config,
    on_epoch: impl FnMut(&EpochReport),
) -> Result<Vec<EpochReport>> {
    train_measured(stream, cfg, on_epoch).map(|t| t.reports)
}

/// [`train`], returning also the calls of the first step.
///
/// # Errors
///
/// As [`train`].
pub fn train_measured(
    stream: &Stream,
    cfg: &Config,
    mut on_epoch: impl FnMut(&EpochReport),
) -> Result<Trained> {
    let s = stream;
    let invalid = |reason: String| acl::Error::InvalidArgument {
        function: "train_mlp::train",
        reason,
    };
    if cfg.batch == 0 || !cfg.samples.is_multiple_of(cfg.batch) {
        return Err(invalid(format!(
            "samples ({}) must be a multiple of batch ({})",
            cfg.samples, cfg.batch
        )));
    }
    if !(0.0..1.0).contains(&cfg.dropout) {
        return Err(invalid(format!(
            "dropout ({}) must be in [0, 1)",
            cfg.dropout
        )));
    }
    let (x, labels) = blobs(cfg.seed, cfg.classes, cfg.features, cfg.samples);
    let (b, d, h, c) = (cfg.batch, cfg.features, cfg.hidden, cfg.classes);
    let steps = cfg.samples / b;
    let xs = Tensor::from_host(s, &x, &[cfg.samples, d])?;
    let targets: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
    let ts = Tensor::from_host(s, &targets, &[cfg.samples])?;

    // f32 master weights: He-initialised W1, Xavier W2, γ = 1, zero biases.
    let mut rng = Rng(cfg.seed ^ 0xA5A5);
    let mut master = Params::<f32>::zeros(s, cfg)?;
    let w1: Vec<f32> = (0..d * h)
        .map(|_| rng.normal() * (2.0 / d as f32).sqrt())
        .collect();
    let w2: Vec<f32> = (0..h * c)
        .map(|_| rng.normal() * (1.0 / h as f32).sqrt())
        .collect();
    master.w1.copy_from_host(&w1)?;
    master.w2.copy_from_host(&w2)?;
    master.gamma.copy_from_host(&vec![1.0f32; h])?;

    let shapes: Vec<Vec<usize>> = master.each().iter().map(|t| t.shape().to_vec()).collect();
    let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    let hyper = AdamW {
        lr: f64::from(cfg.lr),
        weight_decay: f64::from(cfg.weight_decay),
        ..AdamW::default()
    };
    let scaled = cfg.precision == Precision::F16;
    let init_scale = if scaled { cfg.init_scale } else { 1.0 };
    let mut opt = Optimizer::new(s, &shapes, hyper, init_scale, cfg.growth_interval)?;
    let mut head = Head::new(s, b, c)?;
    let mut tb = Tensor::<i64>::zeros(s, &[b])?;
    let mut mask = Tensor::<u8>::zeros(s, &[dropout_mask_len(b * h)])?;
    let mut counter = RandomCounter::new(s)?;
    let mask_seed = cfg.seed ^ 0xD00D;
    let p = cfg.dropout;
    let mask_bits = (b * h) as u64;

    // The step's graph and the batch it reads. The buffers only the graph
    // uses live as long as it does (a graph holds its allocations).
    let mut xb32 = Tensor::<f32>::zeros(s, &[b, d])?;
    s.synchronize()?;
    let graph: Graph = match cfg.precision {
        Precision::F32 => {
            let mut work = Work::<f32>::new(s, cfg, b)?;
            let (graph, ()) = s.capture(CaptureMode::ThreadLocal, |s| -> Result<()> {
                s.dropout_bitmask(
                    &mut mask.buffer_mut(),
                    mask_bits,
                    p as f32,
                    mask_seed,
                    &mut counter,
                )?;
                work.forward(s, &xb32, &master, Some((&mask, p)))?;
                head.run(s, &work.z, &tb, &opt.scale)?;
                ops::copy(s, &head.dz, &mut work.dz)?;
                work.backward(s, &xb32, &master, &mask, p)?;
                opt.step(
                    s,
                    master.each_mut().into(),
                    work.grads.each_mut().into(),
                    false,
                )
            })?;
            graph
        }
        Precision::F16 => {
            let mut xb16 = Tensor::<f16>::zeros(s, &[b, d])?;
            let mut grads32 = Params::<f32>::zeros(s, cfg)?;
            let mut half = Params::<f16>::zeros(s, cfg)?;
            let mut work = Work::<f16>::new(s, cfg, b)?;
            let mut z32 = Tensor::<f32>::zeros(s, &[b, c])?;
            let (graph, ()) = s.capture(CaptureMode::ThreadLocal, |s| -> Result<()> {
                s.dropout_bitmask(
                    &mut mask.buffer_mut(),
                    mask_bits,
                    p as f32,
                    mask_seed,
                    &mut counter,
                )?;
                for (m, hp) in master.each().into_iter().zip(half.each_mut()) {
                    ops::cast(s, m, hp)?;
                }
                ops::cast(s, &xb32, &mut xb16)?;
                work.forward(s, &xb16, &half, Some((&mask, p)))?;
                ops::cast(s, &work.z, &mut z32)?;
                head.run(s, &z32, &tb, &opt.scale)?;
                ops::cast(s, &head.dz, &mut work.dz)?;
                work.backward(s, &xb16, &half, &mask, p)?;
                for (g, g32) in work.grads.each().into_iter().zip(grads32.each_mut()) {
                    ops::cast(s, g, g32)?;
                }
                opt.step(s, master.each_mut().into(), grads32.each_mut().into(), true)
            })?;
            graph
        }
    };

    let mut reports = Vec::with_capacity(cfg.epochs);
    let mut first_step = None;
    let mut skipped_before = 0usize;
    for epoch in 1..=cfg.epochs {
        ops::muls_(s, &mut head.loss_sum, 0.0)?;
        let mut host_syncs = 0;
        for k in 0..steps {
            let (r, calls) = cann_sim::calls::count(|| -> Result<()> {
                ops::copy(s, &xs.view().narrow(0, k * b, b)?, &mut xb32)?;
                ops::copy(s, &ts.view().narrow(0, k * b, b)?, &mut tb)?;
                graph.launch(s)
            });
            r?;
            host_syncs += calls.host_syncs();
            first_step.get_or_insert(calls);
        }
        let accuracy = evaluate(s, cfg, &master, &xs, &labels)?;
        let loss = head.loss_sum.to_host_vec()?[0] / steps as f32;
        let skipped_total = opt.skipped.to_host_vec()?[0] as usize;
        let r = EpochReport {
            epoch,
            loss,
            accuracy,
            skipped: skipped_total - skipped_before,
            scale: if scaled {
                Some(opt.scale.to_host_vec()?[0])
            } else {
                None
            },
            host_syncs,
        };
        skipped_before = skipped_total;
        on_epoch(&r);
        reports.push(r);
    }
    s.synchronize()?;
    Ok(Trained {
        reports,
        first_step: first_step.unwrap_or_default(),
    })
}

/// The fraction of the set classified correctly by the f32 master weights,
/// dropout off, in one batch.
fn evaluate(
    s: &Stream,
    cfg: &Config,
    p: &Params<f32>,
    xs: &Tensor<f32>,
    labels: &[usize],
) -> Result<f32> {
    let mut work = Work::<f32>::new(s, cfg, cfg.samples)?;
    work.forward(s, xs, p, None)?;
    let z = work.z.to_host_vec()?;
    Ok(correct(&z, labels, cfg.classes) as f32 / labels.len() as f32)
}

/// How many rows of `logits` have their largest value at their label.
pub fn correct(logits: &[f32], labels: &[usize], classes: usize) -> usize {
    logits
        .chunks(classes)
        .zip(labels)
        .filter(|&(row, &label)| {
            let best = row
                .iter()
                .enumerate()
                .fold(
                    (0, f32::NEG_INFINITY),
                    |b, (i, &v)| if v > b.1 { (i, v) } else { b },
                );
            best.0 == label
        })
        .count()
}

/// The acceptance of a training example's run: its steps made no host
/// synchronisation (`syncs`, counted by cann-sim), and a `full` run (at
/// least the default number of epochs; a shorter one, a trace or a smoke
/// test, is not held to it) ended at 95% accuracy or more. Prints the
/// summary line.
///
/// # Errors
///
/// The reason, for a person, when either does not hold.
pub fn accept(
    syncs: u64,
    accuracy: f32,
    full: bool,
    seconds: f64,
) -> std::result::Result<(), String> {
    println!(
        "final accuracy {:.1}% in {seconds:.1} s; host synchronisations inside all steps: {syncs}",
        accuracy * 100.0
    );
    if syncs != 0 {
        return Err(format!(
            "the training steps synchronised the host {syncs} times"
        ));
    }
    if full && accuracy < 0.95 {
        return Err(format!(
            "final accuracy {:.1}% is below 95%",
            accuracy * 100.0
        ));
    }
    Ok(())
}

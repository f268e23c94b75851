//! A small CNN trained on a synthetic image task with every step on the
//! device: convolution, batch normalisation, ReLU, max pooling and a linear
//! layer, their backward operators and fused AdamW, the whole step captured
//! as ONE graph and replayed for every batch (as [`crate::train_mlp`]).
//!
//! ```text
//! x[B,1,8,8] ─Conv 3×3 (pad 1) W─► c[B,K,8,8] ─BatchNorm(γ,β)─► n ─Relu─► r ─MaxPool 2×2─► p[B,K,4,4]
//!   ─flatten─► [B,16K] ─MatMul Wl─Add bl─► z[B,4]       loss = NLLLoss(LogSoftmax(z), target)
//! backward: dz → dWl = pᵀdz  dbl = Σ dz  dp = dz Wlᵀ → MaxPool2dWithIndicesBackward → dr
//!   → ReluGrad(n) → BatchNormBackward → dc, dγ, dβ → ConvolutionBackward → dW
//! update: FusedAdamW over W, γ, β, Wl, bl
//! ```
//!
//! The images: a short line on a noisy 8×8 plane, horizontal, vertical,
//! diagonal or anti-diagonal (the class), at a random place. The accuracy
//! is measured after each epoch on held-out images (another seed) with the
//! running batch-norm statistics (inference mode).

use crate::rng::Rng;
use crate::train_mlp::{Head, Optimizer, correct};
use acl::graph::CaptureMode;
use acl::ops::{self, AdamW, Grads, Window2d};
use acl::{Result, Stream, Tensor};

/// Side of the square images.
pub const SIDE: usize = 8;
/// Classes: line orientations.
pub const CLASSES: usize = 4;

/// Hyper-parameters and the data set's size.
#[derive(Debug, Clone)]
pub struct Config {
    /// Passes over the training set.
    pub epochs: usize,
    /// Samples per step.
    pub batch: usize,
    /// Training samples (a multiple of `batch`).
    pub samples: usize,
    /// Held-out samples the accuracy is measured on.
    pub test_samples: usize,
    /// Convolution channels.
    pub channels: usize,
    /// AdamW learning rate.
    pub lr: f32,
    /// Seed of the images and the initial weights.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            epochs: 6,
            batch: 32,
            samples: 1024,
            test_samples: 256,
            channels: 8,
            lr: 0.03,
            seed: 11,
        }
    }
}

/// What one epoch did.
#[derive(Debug, Clone, PartialEq)]
pub struct EpochReport {
    /// Epoch number, from 1.
    pub epoch: usize,
    /// Mean training loss of the epoch's steps.
    pub loss: f32,
    /// Fraction of the held-out set classified correctly after the epoch.
    pub accuracy: f32,
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
        )
    }
}

/// The images (row-major `[samples, 1, 8, 8]`) and their labels: a line of
/// 4 to 6 pixels of value 1 in the class's orientation, plus Gaussian noise
/// of σ 0.3.
pub fn images(seed: u64, samples: usize) -> (Vec<f32>, Vec<usize>) {
    let mut rng = Rng(seed);
    let mut x = Vec::with_capacity(samples * SIDE * SIDE);
    let mut y = Vec::with_capacity(samples);
    for i in 0..samples {
        let class = (rng.next() as usize + i) % CLASSES;
        let len = 4 + rng.next() as usize % 3;
        let mut img: Vec<f32> = (0..SIDE * SIDE).map(|_| rng.normal() * 0.3).collect();
        // Start so that the line fits; (row step, column step) per class.
        let (dr, dc): (isize, isize) = [(0, 1), (1, 0), (1, 1), (1, -1)][class];
        let span = len - 1;
        let pick = |rng: &mut Rng, lo: usize, hi: usize| lo + rng.next() as usize % (hi - lo + 1);
        let r0 = if dr == 0 {
            pick(&mut rng, 0, SIDE - 1)
        } else {
            pick(&mut rng, 0, SIDE - 1 - span)
        };
        let c0 = match dc {
            0 => pick(&mut rng, 0, SIDE - 1),
            1 => pick(&mut rng, 0, SIDE - 1 - span),
            _ => pick(&mut rng, span, SIDE - 1),
        };
        for k in 0..len as isize {
            let (r, c) = (r0 as isize + dr * k, c0 as isize + dc * k);
            img[r as usize * SIDE + c as usize] += 1.0;
        }
        x.extend(img);
        y.push(class);
    }
    (x, y)
}

/// The CNN's parameters (or their gradients).
struct Params {
    conv: Tensor<f32>,
    gamma: Tensor<f32>,
    beta: Tensor<f32>,
    wl: Tensor<f32>,
    bl: Tensor<f32>,
}

impl Params {
    fn zeros(s: &Stream, k: usize) -> Result<Params> {
        Ok(Params {
            conv: Tensor::zeros(s, &[k, 1, 3, 3])?,
            gamma: Tensor::zeros(s, &[k])?,
            beta: Tensor::zeros(s, &[k])?,
            wl: Tensor::zeros(s, &[flat(k), CLASSES])?,
            bl: Tensor::zeros(s, &[CLASSES])?,
        })
    }

    fn each_mut(&mut self) -> Vec<&mut Tensor<f32>> {
        vec![
            &mut self.conv,
            &mut self.gamma,
            &mut self.beta,
            &mut self.wl,
            &mut self.bl,
        ]
    }
}

/// Features after pooling, per sample.
fn flat(k: usize) -> usize {
    k * (SIDE / 2) * (SIDE / 2)
}

const BN_EPS: f64 = 1e-5;
const BN_MOMENTUM: f64 = 0.1;

fn same() -> Window2d {
    Window2d {
        padding: [1, 1],
        ..Window2d::square(3, 1)
    }
}

/// Activations and gradients of one batch.
struct Work {
    c: Tensor<f32>,
    n: Tensor<f32>,
    r: Tensor<f32>,
    p: Tensor<f32>,
    idx: Tensor<i32>,
    t: Tensor<f32>,
    z: Tensor<f32>,
    save_mean: Tensor<f32>,
    save_invstd: Tensor<f32>,
    dz: Tensor<f32>,
    dp: Tensor<f32>,
    dr: Tensor<f32>,
    dn: Tensor<f32>,
    dc: Tensor<f32>,
    grads: Params,
}

impl Work {
    fn new(s: &Stream, b: usize, k: usize) -> Result<Work> {
        let map = |side: usize| Tensor::zeros(s, &[b, k, side, side]);
        Ok(Work {
            c: map(SIDE)?,
            n: map(SIDE)?,
            r: map(SIDE)?,
            p: map(SIDE / 2)?,
            idx: Tensor::zeros(s, &[b, k, SIDE / 2, SIDE / 2])?,
            t: Tensor::zeros(s, &[b, CLASSES])?,
            z: Tensor::zeros(s, &[b, CLASSES])?,
            save_mean: Tensor::zeros(s, &[k])?,
            save_invstd: Tensor::zeros(s, &[k])?,
            dz: Tensor::zeros(s, &[b, CLASSES])?,
            dp: Tensor::zeros(s, &[b, flat(k)])?,
            dr: map(SIDE)?,
            dn: map(SIDE)?,
            dc: map(SIDE)?,
            grads: Params::zeros(s, k)?,
        })
    }

    /// The training forward pass: batch statistics, running ones updated.
    fn forward(
        &mut self,
        s: &Stream,
        x: &Tensor<f32>,
        p: &Params,
        running: (&mut Tensor<f32>, &mut Tensor<f32>),
    ) -> Result<()> {
        ops::conv2d(s, x, &p.conv, None, same(), 1, &mut self.c)?;
        ops::batch_norm_train(
            s,
            &self.c,
            Some(&p.gamma.view()),
            Some(&p.beta.view()),
            Some((running.0.view_mut(), running.1.view_mut())),
            BN_MOMENTUM,
            BN_EPS,
            &mut self.n,
            &mut self.save_mean,
            &mut self.save_invstd,
        )?;
        self.head(s, p)
    }

    /// From the normalised maps `n` to the logits `z`.
    fn head(&mut self, s: &Stream, p: &Params) -> Result<()> {
        ops::relu(s, &self.n, &mut self.r)?;
        ops::max_pool2d_with_indices(
            s,
            &self.r,
            Window2d::square(2, 2),
            &mut self.p,
            &mut self.idx,
        )?;
        let b = self.p.shape()[0];
        let features = self.p.view().reshape(&[b, self.p.len() / b])?;
        ops::matmul(s, &features, &p.wl, &mut self.t)?;
        ops::add(s, &self.t, &p.bl, &mut self.z)
    }

    /// The gradients from `self.dz`.
    fn backward(&mut self, s: &Stream, x: &Tensor<f32>, p: &Params) -> Result<()> {
        let g = &mut self.grads;
        let b = self.p.shape()[0];
        let features = self.p.view().reshape(&[b, self.p.len() / b])?;
        ops::matmul_t(s, &features, true, &self.dz, false, &mut g.wl)?;
        ops::reduce_sum(s, &self.dz, &[0], false, &mut g.bl)?;
        ops::matmul_t(s, &self.dz, false, &p.wl, true, &mut self.dp)?;
        let dp = self.dp.view().reshape(self.p.shape())?;
        ops::max_pool2d_backward(
            s,
            &dp,
            &self.r,
            &self.idx,
            Window2d::square(2, 2),
            &mut self.dr,
        )?;
        ops::relu_grad(s, &self.dr, &self.n, &mut self.dn)?;
        ops::batch_norm_backward(
            s,
            &self.dn,
            &self.c,
            Some(&p.gamma.view()),
            &self.save_mean,
            &self.save_invstd,
            BN_EPS,
            Grads::all(self.dc.view_mut(), g.gamma.view_mut(), g.beta.view_mut()),
        )?;
        let only_weight = Grads {
            input: None,
            weight: Some(g.conv.view_mut()),
            bias: None,
        };
        ops::conv2d_backward(s, &self.dc, x, &p.conv, same(), 1, only_weight)
    }
}

/// Trains on `stream` and reports each epoch to `on_epoch` as it ends.
///
/// # Errors
///
/// An [`acl::Error`] from any operator, copy or the graph;
/// `InvalidArgument` when `samples` is not a multiple of `batch`.
pub fn train(
    stream: &Stream,
    cfg: &Config,
    mut on_epoch: impl FnMut(&EpochReport),
) -> Result<Vec<EpochReport>> {
    let s = stream;
    if cfg.batch == 0
        || !cfg.samples.is_multiple_of(cfg.batch)
        || cfg.channels == 0
        || cfg.test_samples == 0
    {
        return Err(acl::Error::InvalidArgument {
            function: "train_cnn::train",
            reason: format!(
                "samples ({}) must be a multiple of batch ({}), with at least one channel and \
                 one test sample",
                cfg.samples, cfg.batch
            ),
        });
    }
    let (b, k) = (cfg.batch, cfg.channels);
    let steps = cfg.samples / b;
    let (x, labels) = images(cfg.seed, cfg.samples);
    let xs = Tensor::from_host(s, &x, &[cfg.samples, 1, SIDE, SIDE])?;
    let targets: Vec<i64> = labels.iter().map(|&l| l as i64).collect();
    let ts = Tensor::from_host(s, &targets, &[cfg.samples])?;
    let (x_test, test_labels) = images(cfg.seed ^ 0x7E57, cfg.test_samples);
    let xs_test = Tensor::from_host(s, &x_test, &[cfg.test_samples, 1, SIDE, SIDE])?;

    // He-initialised convolution and linear weights, γ = 1, zero biases.
    let mut rng = Rng(cfg.seed ^ 0x5A5A);
    let mut params = Params::zeros(s, k)?;
    let conv: Vec<f32> = (0..k * 9)
        .map(|_| rng.normal() * (2.0f32 / 9.0).sqrt())
        .collect();
    let wl: Vec<f32> = (0..flat(k) * CLASSES)
        .map(|_| rng.normal() * (1.0 / flat(k) as f32).sqrt())
        .collect();
    params.conv.copy_from_host(&conv)?;
    params.wl.copy_from_host(&wl)?;
    params.gamma.copy_from_host(&vec![1.0f32; k])?;
    let mut running_mean = Tensor::<f32>::zeros(s, &[k])?;
    let mut running_var = Tensor::from_host(s, &vec![1.0f32; k], &[k])?;

    let shapes: Vec<Vec<usize>> = params
        .each_mut()
        .iter()
        .map(|t| t.shape().to_vec())
        .collect();
    let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    let hyper = AdamW {
        lr: f64::from(cfg.lr),
        weight_decay: 0.0,
        ..AdamW::default()
    };
    let mut opt = Optimizer::new(s, &shapes, hyper, 1.0, 1)?;
    let mut head = Head::new(s, b, CLASSES)?;
    let mut xb = Tensor::<f32>::zeros(s, &[b, 1, SIDE, SIDE])?;
    let mut tb = Tensor::<i64>::zeros(s, &[b])?;
    let mut work = Work::new(s, b, k)?;
    s.synchronize()?;
    let (graph, ()) = s.capture(CaptureMode::ThreadLocal, |s| -> Result<()> {
        work.forward(s, &xb, &params, (&mut running_mean, &mut running_var))?;
        head.run(s, &work.z, &tb, &opt.scale)?;
        ops::copy(s, &head.dz, &mut work.dz)?;
        work.backward(s, &xb, &params)?;
        opt.step(s, params.each_mut(), work.grads.each_mut(), false)
    })?;

    let mut reports = Vec::with_capacity(cfg.epochs);
    let mut eval = Work::new(s, cfg.test_samples, k)?;
    for epoch in 1..=cfg.epochs {
        ops::muls_(s, &mut head.loss_sum, 0.0)?;
        let mut host_syncs = 0;
        for step in 0..steps {
            let (r, calls) = cann_sim::calls::count(|| -> Result<()> {
                ops::copy(s, &xs.view().narrow(0, step * b, b)?, &mut xb)?;
                ops::copy(s, &ts.view().narrow(0, step * b, b)?, &mut tb)?;
                graph.launch(s)
            });
            r?;
            host_syncs += calls.host_syncs();
        }
        // Inference on the held-out set with the running statistics.
        ops::conv2d(s, &xs_test, &params.conv, None, same(), 1, &mut eval.c)?;
        ops::batch_norm_eval(
            s,
            &eval.c,
            Some(&params.gamma.view()),
            Some(&params.beta.view()),
            &mut running_mean,
            &mut running_var,
            BN_EPS,
            &mut eval.n,
        )?;
        eval.head(s, &params)?;
        let z = eval.z.to_host_vec()?;
        let r = EpochReport {
            epoch,
            loss: head.loss_sum.to_host_vec()?[0] / steps as f32,
            accuracy: correct(&z, &test_labels, CLASSES) as f32 / cfg.test_samples as f32,
            host_syncs,
        };
        on_epoch(&r);
        reports.push(r);
    }
    s.synchronize()?;
    Ok(reports)
}

//! What burn-cann's examples share: reproducible inputs and layers, the
//! comparison of the two backends' runs, and the workspace's rule for
//! choosing between a real AscendCL and cann-sim.

use burn_core::module::{AutodiffModule, Param};
use burn_nn::Linear;
use burn_optim::{AdamConfig, GradientsParams, Optimizer};
use burn_tensor::backend::{AutodiffBackend, Backend};
use burn_tensor::{ElementConversion, Int, Tensor, TensorData};
use std::time::Instant;

/// `n` reproducible values in `[lo, hi)` (xorshift from `seed`), made on the
/// host so that every backend starts from the same numbers.
pub fn values(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + (hi - lo) * ((x >> 40) as f32 / (1u64 << 24) as f32)
        })
        .collect()
}

/// The largest relative difference allowed between the two loss curves.
pub const CURVE_TOLERANCE: f32 = 1e-3;

/// A linear layer from fixed values (uniform in ±1/√fan_in, as Burn's
/// default; made on the host so that both backends start alike).
pub fn linear<B: Backend>(d_in: usize, d_out: usize, seed: u64, device: &B::Device) -> Linear<B> {
    let k = 1.0 / (d_in as f32).sqrt();
    let w = TensorData::new(values(d_in * d_out, seed, -k, k), [d_in, d_out]);
    let b = TensorData::new(values(d_out, seed + 1, -k, k), [d_out]);
    Linear {
        weight: Param::from_tensor(Tensor::from_data(w, device)),
        bias: Some(Param::from_tensor(Tensor::from_data(b, device))),
    }
}

/// Trains `model` for `steps` steps of Adam at learning rate `lr` on the
/// loss `loss` gives, reading each step's loss back; returns the losses and
/// the trained model.
pub fn train_adam<B: AutodiffBackend, M: AutodiffModule<B>>(
    mut model: M,
    steps: usize,
    lr: f64,
    loss: impl Fn(&M) -> Tensor<B, 1>,
) -> (Vec<f32>, M) {
    let mut optim = AdamConfig::new().init::<B, M>();
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let l = loss(&model);
        losses.push(l.clone().into_scalar().elem::<f32>());
        let grads = GradientsParams::from_grads(l.backward(), &model);
        model = optim.step(lr, model, grads);
    }
    (losses, model)
}

/// The share of rows of `logits` whose largest entry is at their label.
pub fn accuracy<B: Backend>(logits: Tensor<B, 2>, labels: &[i64]) -> f32 {
    let pred: Tensor<B, 1, Int> = logits.argmax(1).squeeze_dim(1);
    let pred = pred
        .into_data()
        .convert::<i64>()
        .to_vec::<i64>()
        .unwrap_or_default();
    let right = pred.iter().zip(labels).filter(|(p, l)| p == l).count();
    right as f32 / labels.len().max(1) as f32
}

/// What a run measured.
pub struct Report {
    /// Loss per step on the NPU and on NdArray.
    pub losses: (Vec<f32>, Vec<f32>),
    /// The largest difference between the two curves, relative to NdArray's.
    pub worst: f32,
    /// Accuracy of the trained model, inferred on the NPU.
    pub accuracy: f32,
    /// Seconds the training took on the NPU and on NdArray.
    pub seconds: (f32, f32),
}

/// Trains on the NPU and on NdArray (each returning its loss curve), then
/// measures the NPU-trained model with `accuracy`.
pub fn compare<M>(
    npu: impl FnOnce() -> (Vec<f32>, M),
    cpu: impl FnOnce() -> Vec<f32>,
    accuracy: impl FnOnce(M) -> f32,
) -> Report {
    let t = Instant::now();
    let (npu, model) = npu();
    let npu_seconds = t.elapsed().as_secs_f32();
    let t = Instant::now();
    let cpu = cpu();
    let cpu_seconds = t.elapsed().as_secs_f32();
    let worst = npu
        .iter()
        .zip(&cpu)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-3))
        .fold(0.0f32, f32::max);
    Report {
        accuracy: accuracy(model),
        losses: (npu, cpu),
        worst,
        seconds: (npu_seconds, cpu_seconds),
    }
}

/// Prints every `every`-th loss and the figures; exits with status 1 when the
/// curves differ by [`CURVE_TOLERANCE`] or more, or the accuracy is below
/// `threshold`.
pub fn check(r: &Report, every: usize, threshold: f32) {
    let (npu, cpu) = &r.losses;
    let last = npu.len().saturating_sub(1);
    for step in (0..npu.len()).step_by(every.max(1)).chain([last]) {
        println!(
            "step {step:3}: loss {:.5} on the NPU, {:.5} on NdArray",
            npu[step], cpu[step]
        );
    }
    println!(
        "largest relative difference between the loss curves: {:.2e}",
        r.worst
    );
    println!(
        "training took {:.1} s on the NPU, {:.1} s on NdArray",
        r.seconds.0, r.seconds.1
    );
    println!("accuracy on the NPU: {:.1}%", r.accuracy * 100.0);
    if r.worst >= CURVE_TOLERANCE {
        eprintln!(
            "the NPU and NdArray loss curves differ by {} (tolerance {CURVE_TOLERANCE})",
            r.worst
        );
        std::process::exit(1);
    }
    if r.accuracy < threshold {
        eprintln!(
            "accuracy {:.1}% is below {:.0}%",
            r.accuracy * 100.0,
            threshold * 100.0
        );
        std::process::exit(1);
    }
}

/// The workspace examples' rule: a real AscendCL when one loads, else
/// cann-sim with a note; `CANN_BACKEND=real` refuses the simulator,
/// `CANN_BACKEND=sim` forces it.
pub fn select_backend() -> Result<(), String> {
    let sim = || cann_sim::install().map_err(|e| format!("cann-sim does not install: {e}"));
    match std::env::var("CANN_BACKEND").unwrap_or_default().trim() {
        "sim" => sim(),
        "real" => acl_sys::library().map(|_| ()).map_err(|e| {
            format!("CANN_BACKEND=real, but no AscendCL library could be loaded: {e}")
        }),
        "" => match acl_sys::library() {
            Ok(_) => Ok(()),
            Err(_) => {
                println!(
                    "No CANN install found (set ASCEND_HOME_PATH or CANN_ACL_LIB to use one); running on cann-sim, the software NPU."
                );
                sim()
            }
        },
        other => Err(format!(
            "CANN_BACKEND={other:?} is not understood: use `real`, `sim`, or leave it unset"
        )),
    }
}

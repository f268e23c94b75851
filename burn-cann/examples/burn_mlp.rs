//! Trains a small MLP with `burn_optim`'s Adam in a plain loop on
//! `Autodiff<Cann>`, and the same model from the same start on
//! `Autodiff<NdArray>`. It checks the accuracy on the device, that the two loss curves agree
//! within tolerance, and that inference of the trained model runs on the device.
//!
//! The task: points in [-1, 1]², labelled by the sign of x·y (XOR-like, not
//! linearly separable). Without a CANN install the example runs on cann-sim
//! (`CANN_BACKEND=real` refuses instead, `CANN_BACKEND=sim` forces it).
//!
//! ```sh
//! cargo run -p burn-cann --example burn_mlp
//! ```

use burn_autodiff::Autodiff;
use burn_cann::{Cann, CannDevice};
use burn_core as burn;
use burn_core::module::{AutodiffModule, Module, Param};
use burn_ndarray::{NdArray, NdArrayDevice};
use burn_nn::Linear;
use burn_optim::{AdamConfig, GradientsParams, Optimizer};
use burn_tensor::activation::relu;
use burn_tensor::backend::{AutodiffBackend, Backend};
use burn_tensor::{ElementConversion, Int, Tensor, TensorData};

const POINTS: usize = 256;
const HIDDEN: usize = 32;
const STEPS: usize = 150;

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    l1: Linear<B>,
    l2: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.l2.forward(relu(self.l1.forward(x)))
    }
}

/// Reproducible values in [lo, hi).
fn values(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
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

/// A linear layer from fixed values (uniform in ±1/√fan_in, as Burn's
/// default; made on the host so that both backends start alike).
fn linear<B: Backend>(d_in: usize, d_out: usize, seed: u64, device: &B::Device) -> Linear<B> {
    let k = 1.0 / (d_in as f32).sqrt();
    let w = TensorData::new(values(d_in * d_out, seed, -k, k), [d_in, d_out]);
    let b = TensorData::new(values(d_out, seed + 1, -k, k), [d_out]);
    Linear {
        weight: Param::from_tensor(Tensor::from_data(w, device)),
        bias: Some(Param::from_tensor(Tensor::from_data(b, device))),
    }
}

/// The inputs, their one-hot targets and their labels.
fn data() -> (TensorData, TensorData, Vec<i64>) {
    let x = values(POINTS * 2, 42, -1.0, 1.0);
    let labels: Vec<i64> = x.chunks(2).map(|p| i64::from(p[0] * p[1] > 0.0)).collect();
    let onehot: Vec<f32> = labels
        .iter()
        .flat_map(|&l| if l == 1 { [0.0, 1.0] } else { [1.0, 0.0] })
        .collect();
    (
        TensorData::new(x, [POINTS, 2]),
        TensorData::new(onehot, [POINTS, 2]),
        labels,
    )
}

/// Trains from the fixed start; returns the loss of every step and the model.
fn train<B: AutodiffBackend>(device: &B::Device) -> (Vec<f32>, Mlp<B>) {
    let (x, y, _) = data();
    let (x, y) = (
        Tensor::<B, 2>::from_data(x, device),
        Tensor::<B, 2>::from_data(y, device),
    );
    let mut model = Mlp {
        l1: linear(2, HIDDEN, 1, device),
        l2: linear(HIDDEN, 2, 3, device),
    };
    let mut optim = AdamConfig::new().init::<B, Mlp<B>>();
    let mut losses = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        let out = model.forward(x.clone());
        let loss = (out - y.clone()).powf_scalar(2.0).mean();
        losses.push(loss.clone().into_scalar().elem::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(0.02, model, grads);
    }
    (losses, model)
}

/// Accuracy of the trained model (inference on the plain backend).
fn accuracy<B: Backend>(model: &Mlp<B>, device: &B::Device) -> f32 {
    let (x, _, labels) = data();
    let pred: Tensor<B, 1, Int> = model
        .forward(Tensor::from_data(x, device))
        .argmax(1)
        .squeeze_dim(1);
    let pred = pred
        .into_data()
        .convert::<i64>()
        .to_vec::<i64>()
        .unwrap_or_default();
    let right = pred.iter().zip(&labels).filter(|(p, l)| p == l).count();
    right as f32 / labels.len() as f32
}

/// What a run measured.
pub struct Report {
    /// Loss per step on the NPU and on NdArray.
    pub losses: (Vec<f32>, Vec<f32>),
    /// The largest relative difference between the two curves.
    pub worst: f32,
    /// Accuracy of the trained model, inferred on the NPU.
    pub accuracy: f32,
}

/// Trains on both backends and infers on the NPU.
pub fn run() -> Report {
    let device = CannDevice::default();
    let (npu, model) = train::<Autodiff<Cann>>(&device);
    let (cpu, _) = train::<Autodiff<NdArray>>(&NdArrayDevice::Cpu);
    let worst = npu
        .iter()
        .zip(&cpu)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-3))
        .fold(0.0f32, f32::max);
    // Inference of the trained model on the device, without autodiff.
    let accuracy = accuracy(&model.valid(), &device);
    Report {
        losses: (npu, cpu),
        worst,
        accuracy,
    }
}

fn main() {
    if let Err(e) = select_backend() {
        eprintln!("{e}");
        std::process::exit(1);
    }
    let r = run();
    let (npu, cpu) = &r.losses;
    for step in (0..STEPS).step_by(25).chain([STEPS - 1]) {
        println!(
            "step {step:3}: loss {:.5} on the NPU, {:.5} on NdArray",
            npu[step], cpu[step]
        );
    }
    println!(
        "largest relative difference between the loss curves: {:.2e}",
        r.worst
    );
    println!("accuracy on the NPU: {:.1}%", r.accuracy * 100.0);
    assert!(
        r.worst < 1e-3,
        "the NPU and NdArray loss curves differ by {}",
        r.worst
    );
    assert!(r.accuracy >= 0.95, "accuracy {} is below 95%", r.accuracy);
}

/// The workspace examples' rule: a real AscendCL when one loads, else
/// cann-sim with a note; `CANN_BACKEND=real` refuses the simulator,
/// `CANN_BACKEND=sim` forces it.
fn select_backend() -> Result<(), String> {
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

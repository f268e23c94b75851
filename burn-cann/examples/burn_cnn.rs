//! Trains a small CNN (two convolutions, max and adaptive average pooling, a
//! linear classifier, cross-entropy) with `burn_optim`'s Adam in a plain loop
//! on `Autodiff<Cann>`, and the same model from the same start on
//! `Autodiff<NdArray>`. It checks that the two loss curves agree within
//! tolerance, then classifies held-out images with the trained model on the
//! device (no autodiff) and exits with status 1 when the accuracy is below
//! 90%.
//!
//! The task: 10×10 single-channel images of a noisy line, horizontal,
//! vertical or diagonal, at a random place; the class is the orientation.
//! Without a CANN install the example runs on cann-sim (`CANN_BACKEND=real`
//! refuses instead, `CANN_BACKEND=sim` forces it).
//!
//! `burn::train`'s `Learner` is not used: `burn-train` 0.21 brings in a
//! second CPU backend (`burn-flex` with `gemm`), `burn-dataset`, `rayon` and
//! a tracing stack, 72 crates more than this example needs (see the README).
//!
//! ```sh
//! cargo run -p burn-cann --example burn_cnn
//! ```

mod common;

use burn_autodiff::Autodiff;
use burn_cann::{Cann, CannDevice};
use burn_core as burn;
use burn_core::module::{AutodiffModule, Module, Param};
use burn_ndarray::{NdArray, NdArrayDevice};
use burn_nn::conv::{Conv2d, Conv2dConfig};
use burn_nn::loss::CrossEntropyLossConfig;
use burn_nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn_nn::{Linear, PaddingConfig2d};
use burn_tensor::activation::relu;
use burn_tensor::backend::{AutodiffBackend, Backend};
use burn_tensor::{Int, Tensor, TensorData};
use common::{Report, accuracy, check, compare, linear, select_backend, train_adam, values};

/// Image side.
const SIDE: usize = 10;
/// Training images (a third of each class).
const TRAIN: usize = 24;
/// Held-out images.
const TEST: usize = 60;
const CLASSES: usize = 3;
const STEPS: usize = 20;
/// The accuracy below which the example fails.
const THRESHOLD: f32 = 0.9;

/// conv 3×3 → ReLU → max pool 2×2 → conv 3×3 → ReLU → adaptive average
/// pool to 2×2 → linear.
#[derive(Module, Debug)]
pub struct Cnn<B: Backend> {
    conv1: Conv2d<B>,
    pool1: MaxPool2d,
    conv2: Conv2d<B>,
    pool2: AdaptiveAvgPool2d,
    fc: Linear<B>,
}

impl<B: Backend> Cnn<B> {
    /// Logits `[batch, CLASSES]` of images `[batch, 1, SIDE, SIDE]`.
    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.pool1.forward(relu(self.conv1.forward(x))); // [b, 6, 5, 5]
        let x = self.pool2.forward(relu(self.conv2.forward(x))); // [b, 8, 2, 2]
        self.fc.forward(x.flatten(1, 3))
    }
}

/// A 3×3 same-padded convolution with fixed weights (uniform in
/// ±1/√fan_in, Burn's default bounds).
fn conv<B: Backend>(c_in: usize, c_out: usize, seed: u64, device: &B::Device) -> Conv2d<B> {
    let k = 1.0 / ((c_in * 9) as f32).sqrt();
    let mut c = Conv2dConfig::new([c_in, c_out], [3, 3])
        .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
        .init(device);
    let w = TensorData::new(values(c_out * c_in * 9, seed, -k, k), [c_out, c_in, 3, 3]);
    let b = TensorData::new(values(c_out, seed + 1, -k, k), [c_out]);
    c.weight = Param::from_tensor(Tensor::from_data(w, device));
    c.bias = Some(Param::from_tensor(Tensor::from_data(b, device)));
    c
}

fn model<B: Backend>(device: &B::Device) -> Cnn<B> {
    Cnn {
        conv1: conv(1, 6, 1, device),
        pool1: MaxPool2dConfig::new([2, 2]).init(),
        conv2: conv(6, 8, 3, device),
        pool2: AdaptiveAvgPool2dConfig::new([2, 2]).init(),
        fc: linear(8 * 2 * 2, CLASSES, 5, device),
    }
}

/// `n` images with their labels: a line of length 6 (horizontal,
/// vertical or diagonal by label) at a random place, plus noise.
fn images(n: usize, seed: u64) -> (TensorData, Vec<i64>) {
    let noise = values(n * SIDE * SIDE, seed, -0.3, 0.3);
    let place = values(n * 2, seed + 1, 0.0, (SIDE - 6 + 1) as f32);
    let mut pixels = noise;
    let labels: Vec<i64> = (0..n).map(|i| (i % CLASSES) as i64).collect();
    for (i, &label) in labels.iter().enumerate() {
        let (r0, c0) = (place[2 * i] as usize, place[2 * i + 1] as usize);
        for t in 0..6 {
            let (r, c) = match label {
                0 => (r0 + 2, c0 + t),
                1 => (r0 + t, c0 + 2),
                _ => (r0 + t, c0 + t),
            };
            pixels[i * SIDE * SIDE + r * SIDE + c] += 1.0;
        }
    }
    (TensorData::new(pixels, [n, 1, SIDE, SIDE]), labels)
}

/// Trains `steps` steps from the fixed start (each reads its loss back);
/// returns the loss of every step and the model.
pub fn train<B: AutodiffBackend>(device: &B::Device, steps: usize) -> (Vec<f32>, Cnn<B>) {
    let (x, labels) = images(TRAIN, 42);
    let x = Tensor::<B, 4>::from_data(x, device);
    let y = Tensor::<B, 1, Int>::from_data(TensorData::new(labels, [TRAIN]), device);
    let loss_fn = CrossEntropyLossConfig::new().init(device);
    train_adam(model::<B>(device), steps, 0.03, |m: &Cnn<B>| {
        loss_fn.forward(m.forward(x.clone()), y.clone())
    })
}

/// Trains on both backends; the held-out accuracy of the NPU-trained model
/// is inferred on the device, without autodiff.
pub fn run() -> Report {
    let device = CannDevice::default();
    compare(
        || train::<Autodiff<Cann>>(&device, STEPS),
        || train::<Autodiff<NdArray>>(&NdArrayDevice::Cpu, STEPS).0,
        |model| {
            let (x, labels) = images(TEST, 7);
            accuracy(
                model.valid().forward(Tensor::from_data(x, &device)),
                &labels,
            )
        },
    )
}

fn main() {
    if let Err(e) = select_backend() {
        eprintln!("{e}");
        std::process::exit(1);
    }
    check(&run(), 4, THRESHOLD);
}

//! Trains a small MLP with `burn_optim`'s Adam in a plain loop on
//! `Autodiff<Cann>`, and the same model from the same start on
//! `Autodiff<NdArray>`. It checks that the two loss curves agree within
//! tolerance, then infers with the trained model on the device and exits with
//! status 1 when the accuracy is below 95%.
//!
//! The task: points in [-1, 1]², labelled by the sign of x·y (XOR-like, not
//! linearly separable). Without a CANN install the example runs on cann-sim
//! (`CANN_BACKEND=real` refuses instead, `CANN_BACKEND=sim` forces it).
//!
//! ```sh
//! cargo run -p burn-cann --example burn_mlp
//! ```

mod common;

use burn_autodiff::Autodiff;
use burn_cann::{Cann, CannDevice};
use burn_core as burn;
use burn_core::module::{AutodiffModule, Module};
use burn_ndarray::{NdArray, NdArrayDevice};
use burn_nn::Linear;
use burn_tensor::activation::relu;
use burn_tensor::backend::{AutodiffBackend, Backend};
use burn_tensor::{Tensor, TensorData};
use common::{Report, accuracy, check, compare, linear, select_backend, train_adam, values};

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
    let model = Mlp {
        l1: linear(2, HIDDEN, 1, device),
        l2: linear(HIDDEN, 2, 3, device),
    };
    train_adam(model, STEPS, 0.02, |m: &Mlp<B>| {
        (m.forward(x.clone()) - y.clone()).powf_scalar(2.0).mean()
    })
}

/// Trains on both backends; the accuracy of the NPU-trained model is
/// inferred on the device, without autodiff.
pub fn run() -> Report {
    let device = CannDevice::default();
    compare(
        || train::<Autodiff<Cann>>(&device),
        || train::<Autodiff<NdArray>>(&NdArrayDevice::Cpu).0,
        |model| {
            let (x, _, labels) = data();
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
    check(&run(), 25, 0.95);
}

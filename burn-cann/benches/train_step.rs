//! Wall-clock time of one training step of the `burn_cnn` example's CNN
//! (batch 24 of 10×10 images, Adam, the loss read back each step) on
//! `Autodiff<Cann>` (cann-sim) and on `Autodiff<NdArray>`, on the same
//! machine in the same run.
//!
//! ```sh
//! cargo bench -p burn-cann --bench train_step
//! ```
//!
//! Each backend trains `LOW` and `HIGH` steps from the same start; the
//! difference of the two times divided by `HIGH - LOW` is the time of one
//! step without the setup. Three rounds; the slowest figure of each backend
//! is reported (worst of three), with the ratio of the two.

#[allow(dead_code)]
#[path = "../examples/burn_cnn.rs"]
mod example;

use burn_autodiff::Autodiff;
use burn_cann::{Cann, CannDevice};
use burn_ndarray::{NdArray, NdArrayDevice};
use burn_tensor::backend::AutodiffBackend;
use std::time::Instant;

const LOW: usize = 2;
const HIGH: usize = 42;
const ROUNDS: usize = 3;

/// Seconds per step on backend `B`.
fn per_step<B: AutodiffBackend>(device: &B::Device) -> f64 {
    let time = |steps| {
        let t = Instant::now();
        let (losses, _) = example::train::<B>(device, steps);
        assert_eq!(losses.len(), steps);
        t.elapsed().as_secs_f64()
    };
    let (low, high) = (time(LOW), time(HIGH));
    (high - low).max(0.0) / (HIGH - LOW) as f64
}

fn main() {
    cann_sim::install().expect("cann-sim installs");
    let device = CannDevice::default();
    // Warm up both (device open, allocator, code paths).
    example::train::<Autodiff<Cann>>(&device, 1);
    example::train::<Autodiff<NdArray>>(&NdArrayDevice::Cpu, 1);
    let (mut cann, mut ndarray) = (0.0f64, 0.0f64);
    for round in 1..=ROUNDS {
        let c = per_step::<Autodiff<Cann>>(&device);
        let n = per_step::<Autodiff<NdArray>>(&NdArrayDevice::Cpu);
        println!(
            "round {round}: {:.2} ms/step on Cann (cann-sim), {:.2} ms/step on NdArray",
            c * 1e3,
            n * 1e3
        );
        cann = cann.max(c);
        ndarray = ndarray.max(n);
    }
    println!("\n| backend | ms per training step (worst of {ROUNDS}) |");
    println!("|---|---:|");
    println!("| `Autodiff<Cann>` on cann-sim | {:.2} |", cann * 1e3);
    println!("| `Autodiff<NdArray>` | {:.2} |", ndarray * 1e3);
    println!("\nCann / NdArray: {:.2}", cann / ndarray);
}

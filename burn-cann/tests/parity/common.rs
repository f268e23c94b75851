//! Shared setup: the simulator, the two backends, deterministic inputs and
//! the comparison at Burn's default tolerance.

#![allow(dead_code)]

pub use burn_cann::{Cann, CannDevice};
pub use burn_ndarray::{NdArray, NdArrayDevice};
pub use burn_tensor::{Bool, Int, Tensor, TensorData, Tolerance};

pub type C = Cann;
pub type N = NdArray<f32, i64>;

/// Installs cann-sim (a no-op after the first call) and returns device 0.
pub fn dev() -> CannDevice {
    cann_sim::install().expect("cann-sim installs");
    CannDevice::default()
}

/// `n` reproducible values in `[lo, hi)` (a linear congruential sequence
/// seeded by `seed`).
pub fn values(n: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (x >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * u
        })
        .collect()
}

/// A float input of `shape` with values in `[lo, hi)` on both backends.
pub fn floats<const D: usize>(
    shape: [usize; D],
    seed: u64,
    lo: f32,
    hi: f32,
) -> (Tensor<C, D>, Tensor<N, D>) {
    let data = TensorData::new(values(shape.iter().product(), seed, lo, hi), shape);
    (
        Tensor::from_data(data.clone(), &dev()),
        Tensor::from_data(data, &NdArrayDevice::Cpu),
    )
}

/// An int input of `shape` with values in `[lo, hi)` on both backends.
pub fn ints<const D: usize>(
    shape: [usize; D],
    seed: u64,
    lo: i64,
    hi: i64,
) -> (Tensor<C, D, Int>, Tensor<N, D, Int>) {
    let v: Vec<i64> = values(shape.iter().product(), seed, 0.0, 1.0)
        .into_iter()
        .map(|u| lo + ((hi - lo) as f32 * u) as i64)
        .collect();
    let data = TensorData::new(v, shape);
    (
        Tensor::from_data(data.clone(), &dev()),
        Tensor::from_data(data, &NdArrayDevice::Cpu),
    )
}

/// A bool input of `shape` on both backends.
pub fn bools<const D: usize>(
    shape: [usize; D],
    seed: u64,
) -> (Tensor<C, D, Bool>, Tensor<N, D, Bool>) {
    let v: Vec<bool> = values(shape.iter().product(), seed, 0.0, 1.0)
        .into_iter()
        .map(|u| u < 0.5)
        .collect();
    let data = TensorData::new(v, shape);
    (
        Tensor::from_data(data.clone(), &dev()),
        Tensor::from_data(data, &NdArrayDevice::Cpu),
    )
}

/// The device result equals NdArray's within Burn's default tolerance
/// (shape and dtype too).
#[track_caller]
pub fn same<const D: usize>(c: Tensor<C, D>, n: Tensor<N, D>) {
    c.into_data()
        .assert_approx_eq::<f32>(&n.into_data(), Tolerance::default());
}

/// As [`same`] with a given tolerance (f16/bf16).
#[track_caller]
pub fn close<const D: usize>(c: Tensor<C, D>, n: Tensor<N, D>, tol: Tolerance<f32>) {
    c.into_data()
        .convert::<f32>()
        .assert_approx_eq::<f32>(&n.into_data().convert::<f32>(), tol);
}

/// Exactly equal int results.
#[track_caller]
pub fn same_int<const D: usize>(c: Tensor<C, D, Int>, n: Tensor<N, D, Int>) {
    c.into_data()
        .convert::<i64>()
        .assert_eq(&n.into_data().convert::<i64>(), true);
}

/// Exactly equal bool results.
#[track_caller]
pub fn same_bool<const D: usize>(c: Tensor<C, D, Bool>, n: Tensor<N, D, Bool>) {
    c.into_data().assert_eq(&n.into_data(), true);
}

/// The panic message of `f`, which must panic.
pub fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).expect_err("the op must panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

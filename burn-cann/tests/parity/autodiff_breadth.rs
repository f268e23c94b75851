//! Breadth of Burn's autodiff suite: the gradient of `sum(f(x) · w)` (fixed
//! upstream weights `w`) through each tensor op, on `Autodiff<Cann>` against
//! `Autodiff<NdArray>`, and the 1-D and 3-D module ops Burn builds on the
//! 2-D ones or runs directly.

use crate::common::*;
use burn_autodiff::Autodiff;
use burn_tensor::activation as act;
use burn_tensor::backend::{AutodiffBackend, Backend};
use burn_tensor::module;
use burn_tensor::ops::{ConvOptions, ConvTransposeOptions};

type AC = Autodiff<C>;
type AN = Autodiff<N>;

/// The gradient for `x` (shape `shape`, values in `[lo, hi)`) of
/// `sum(f(x) · w)`.
fn grad<B: AutodiffBackend, const D: usize, const E: usize>(
    device: &B::Device,
    shape: [usize; D],
    (lo, hi): (f32, f32),
    f: fn(Tensor<B, D>) -> Tensor<B, E>,
) -> Tensor<B::InnerBackend, D> {
    let n = shape.iter().product();
    let x = Tensor::<B, D>::from_data(TensorData::new(values(n, 51, lo, hi), shape), device)
        .require_grad();
    let y = f(x.clone());
    let dims = y.dims();
    let w = Tensor::<B, E>::from_data(
        TensorData::new(values(dims.iter().product(), 52, -1.0, 1.0), dims),
        device,
    );
    let g = (y * w).sum().backward();
    x.grad(&g).expect("a gradient for x")
}

/// For each `name: |x| body` over `[3, 4]` inputs in `range`: the gradient
/// on both backends, compared (the failing case is named on stderr).
macro_rules! grads_match {
    ($range:expr; $($name:literal: |$x:ident| $body:expr;)*) => {$({
        fn f<B: Backend>($x: Tensor<B, 2>) -> Tensor<B, 2> {
            $body
        }
        let c = grad::<AC, 2, 2>(&dev(), [3, 4], $range, f::<AC>);
        let n = grad::<AN, 2, 2>(&NdArrayDevice::Cpu, [3, 4], $range, f::<AN>);
        // Printed before the comparison, so that a failure names its case.
        eprintln!("comparing the gradient of {}", $name);
        close(c, n, Tolerance::default());
    })*};
}

#[test]
fn elementwise_math_gradients_match_autodiff_ndarray() {
    grads_match! { (0.2, 2.0);
        "log": |x| x.log();
        "log1p": |x| x.log1p();
        "sqrt": |x| x.sqrt();
        "recip": |x| x.recip();
        "powf_scalar(2.5)": |x| x.powf_scalar(2.5);
        "powf(x, x)": |x| x.clone().powf(x);
        "div by itself shifted": |x| x.clone() / (x + 1.0);
    }
    grads_match! { (-2.0, 2.0);
        "abs": |x| x.abs();
        "neg": |x| -x;
        "exp": |x| x.exp();
        "sin": |x| x.sin();
        "cos": |x| x.cos();
        "tanh": |x| x.tanh();
        "erf": |x| x.erf();
        "square": |x| x.clone() * x;
        "sub and scalars": |x| (x.clone() * 3.0 - 1.0) - x / 2.0;
        "clamp": |x| x.clamp(-0.5, 0.7);
        "clamp_min": |x| x.clamp_min(0.1);
        "maximum of two": |x| x.clone().max_pair(x.clone().flip([1]));
        "minimum of two": |x| x.clone().min_pair(x.clone() * 0.5);
    }
}

#[test]
fn activation_gradients_match_autodiff_ndarray() {
    grads_match! { (-3.0, 3.0);
        "relu": |x| act::relu(x);
        "sigmoid": |x| act::sigmoid(x);
        "silu": |x| act::silu(x);
        "leaky_relu": |x| act::leaky_relu(x, 0.1);
        "log_sigmoid": |x| act::log_sigmoid(x);
        "softmax dim 1": |x| act::softmax(x, 1);
        "softmax dim 0": |x| act::softmax(x, 0);
        "log_softmax dim 0": |x| act::log_softmax(x, 0);
        "hard_sigmoid": |x| act::hard_sigmoid(x, 0.2, 0.5);
        "softplus": |x| act::softplus(x, 1.0);
        "mish": |x| act::mish(x);
    }
}

/// Burn's default `gelu_backward`, which NdArray uses, is the derivative of
/// GELU's tanh approximation although Burn's `gelu` is the exact erf form;
/// aclnnGeluBackward is the exact derivative, `Φ(x) + x·φ(x)`. So the
/// gradient is checked against that formula (on NdArray's ops), and against
/// NdArray's approximation within the approximation's error.
#[test]
fn gelu_gradient_is_the_exact_derivative_and_near_ndarrays_tanh_form() {
    fn gelu<B: Backend>(x: Tensor<B, 2>) -> Tensor<B, 2> {
        act::gelu(x)
    }
    let range = (-3.0, 3.0);
    let got = grad::<AC, 2, 2>(&dev(), [3, 4], range, gelu::<AC>);
    let approx = grad::<AN, 2, 2>(&NdArrayDevice::Cpu, [3, 4], range, gelu::<AN>);
    let cpu = NdArrayDevice::Cpu;
    let x = Tensor::<N, 2>::from_data(TensorData::new(values(12, 51, -3.0, 3.0), [3, 4]), &cpu);
    let w = Tensor::<N, 2>::from_data(TensorData::new(values(12, 52, -1.0, 1.0), [3, 4]), &cpu);
    let cdf = (x.clone() / std::f32::consts::SQRT_2).erf().add_scalar(1.0) * 0.5;
    let pdf = (x.clone().powf_scalar(2.0) * -0.5).exp() / (2.0 * std::f32::consts::PI).sqrt();
    let exact = (cdf + x * pdf) * w;
    close(got.clone(), exact, Tolerance::default());
    close(got, approx, Tolerance::absolute(1e-3));
}

#[test]
fn layout_and_indexing_gradients_match_autodiff_ndarray() {
    grads_match! { (-2.0, 2.0);
        "transpose": |x| x.transpose().reshape([3, 4]);
        "permute and reshape": |x| x.reshape([3, 2, 2]).permute([2, 0, 1]).reshape([3, 4]);
        "flip": |x| x.flip([0, 1]);
        "slice": |x| x.slice([1..3, 0..4]).repeat_dim(0, 2).slice([0..3, 0..4]);
        "slice with step": |x| x.slice(burn_tensor::s![0..3, 0..4;2]).repeat_dim(1, 2);
        "cat": |x| Tensor::cat(vec![x.clone().slice([0..1, 0..4]), x.clone() * 2.0], 0).slice([1..4, 0..4]);
        "expand": |x| x.sum_dim(0).expand([3, 4]);
        "select": |x| {
            let i = Tensor::<B, 1, Int>::from_data(TensorData::from([2i64, 0, 2]), &x.device());
            x.select(0, i)
        };
        "gather": |x| {
            let i = Tensor::<B, 2, Int>::from_data(
                TensorData::new(vec![3i64, 0, 1, 1, 2, 2, 0, 3, 0, 1, 2, 3], [3, 4]),
                &x.device(),
            );
            x.gather(1, i)
        };
        "mask_fill": |x| {
            let m = x.clone().greater_elem(0.5);
            x.mask_fill(m, 0.0)
        };
        "mask_where": |x| {
            let m = x.clone().lower_elem(0.0);
            x.clone().mask_where(m, x * -3.0)
        };
    }
}

#[test]
fn reduction_and_matmul_gradients_match_autodiff_ndarray() {
    grads_match! { (-2.0, 2.0);
        "sum_dim": |x| x.sum_dim(1).expand([3, 4]);
        "mean_dim": |x| x.mean_dim(0).expand([3, 4]);
        "mean": |x| x.mean().reshape([1, 1]).expand([3, 4]);
        "max_dim": |x| x.max_dim(1).expand([3, 4]);
        "min_dim": |x| x.min_dim(0).expand([3, 4]);
        "cumsum": |x| x.cumsum(1);
        "var": |x| x.var(1).expand([3, 4]);
        "matmul with its transpose": |x| x.clone().matmul(x.transpose()).repeat_dim(1, 2).slice([0..3, 0..4]);
        "matmul batched": |x| x.clone().reshape([1, 3, 4]).matmul(x.transpose().reshape([1, 4, 3])).reshape([3, 3]).pad((0, 1, 0, 0), burn_tensor::ops::PadMode::Constant(0.0));
    }
}

#[test]
fn one_dimensional_module_gradients_match_autodiff_ndarray() {
    fn pools<B: Backend>(x: Tensor<B, 3>) -> Tensor<B, 3> {
        let m = module::max_pool1d(x.clone(), 3, 2, 1, 1, false);
        let a = module::avg_pool1d(x.clone(), 2, 1, 0, true, false);
        let ad = module::adaptive_avg_pool1d(x, 3);
        Tensor::cat(vec![m, a, ad], 2)
    }
    close(
        grad::<AC, 3, 3>(&dev(), [2, 3, 8], (-1.0, 1.0), pools::<AC>),
        grad::<AN, 3, 3>(&NdArrayDevice::Cpu, [2, 3, 8], (-1.0, 1.0), pools::<AN>),
        Tolerance::default(),
    );
    // conv1d [2, 4, 4] and conv_transpose1d [2, 2, 17], flattened side by side.
    fn convs<B: Backend>(x: Tensor<B, 3>) -> Tensor<B, 2> {
        let d = x.device();
        let w = Tensor::<B, 3>::from_data(
            TensorData::new(values(4 * 3 * 3, 53, -1.0, 1.0), [4, 3, 3]),
            &d,
        );
        let wt = Tensor::<B, 3>::from_data(
            TensorData::new(values(3 * 2 * 2, 54, -1.0, 1.0), [3, 2, 2]),
            &d,
        );
        let c = module::conv1d(x.clone(), w, None, ConvOptions::new([2], [1], [1], 1));
        let o = ConvTransposeOptions::new([2], [0], [1], [1], 1);
        let t = module::conv_transpose1d(x, wt, None, o);
        Tensor::cat(vec![c.flatten(1, 2), t.flatten(1, 2)], 1)
    }
    close(
        grad::<AC, 3, 2>(&dev(), [2, 3, 8], (-1.0, 1.0), convs::<AC>),
        grad::<AN, 3, 2>(&NdArrayDevice::Cpu, [2, 3, 8], (-1.0, 1.0), convs::<AN>),
        Tolerance::default(),
    );
}

#[test]
fn conv3d_and_conv_transpose3d_gradients_match_autodiff_ndarray() {
    // conv3d [1, 4, 5, 2, 4] and conv_transpose3d [1, 3, 9, 3, 4].
    fn convs<B: Backend>(x: Tensor<B, 5>) -> Tensor<B, 2> {
        let d = x.device();
        let t = |n: usize, seed, shape: [usize; 5]| {
            Tensor::<B, 5>::from_data(TensorData::new(values(n, seed, -1.0, 1.0), shape), &d)
        };
        let (w, wt) = (t(64, 55, [4, 2, 2, 2, 2]), t(48, 57, [2, 3, 2, 2, 2]));
        let b = Tensor::<B, 1>::from_data(TensorData::new(values(4, 56, -1.0, 1.0), [4]), &d);
        let o = ConvOptions::new([1, 2, 1], [1, 0, 1], [1, 1, 1], 1);
        let c = module::conv3d(x.clone(), w, Some(b), o);
        let o = ConvTransposeOptions::new([2, 1, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1], 1);
        let tr = module::conv_transpose3d(x, wt, None, o);
        Tensor::cat(vec![c.flatten(1, 4), tr.flatten(1, 4)], 1)
    }
    close(
        grad::<AC, 5, 2>(&dev(), [1, 2, 4, 4, 3], (-1.0, 1.0), convs::<AC>),
        grad::<AN, 5, 2>(
            &NdArrayDevice::Cpu,
            [1, 2, 4, 4, 3],
            (-1.0, 1.0),
            convs::<AN>,
        ),
        Tolerance::default(),
    );
}

//! Burn's `tests/autodiff` modules: the gradient of `sum(f(x) · w)` (fixed
//! weights `w`) through each differentiable op, on `Autodiff<Cann>` against
//! `Autodiff<NdArray>`, for a contiguous, a permuted and a stepped `x`.

use super::{Cases, Fill, Layout, index, indices, input};
use crate::common::*;
use burn_autodiff::Autodiff;
use burn_tensor::IndexingUpdateOp;
use burn_tensor::activation as act;
use burn_tensor::backend::AutodiffBackend;

type AC = Autodiff<C>;
type AN = Autodiff<N>;

/// The gradient for `x` (`[3, 4, 5]`, laid out as `layout`) of
/// `sum(f(x) · w)`.
fn grad<B: AutodiffBackend>(
    device: &B::Device,
    fill: Fill,
    layout: Layout,
    f: fn(Tensor<B, 3>) -> Tensor<B, 3>,
) -> Tensor<B::InnerBackend, 3> {
    let x = input::<B, burn_tensor::Float>(fill, [3, 4, 5], 21, layout, device).require_grad();
    let y = f(x.clone());
    let dims = y.dims();
    let w = Tensor::<B, 3>::from_data(
        TensorData::new(values(dims.iter().product(), 22, -1.0, 1.0), dims),
        device,
    );
    let g = (y * w).sum().backward();
    x.grad(&g).expect("a gradient for x")
}

/// For each `name: |x| body` (rank 3 in and out): the gradient on both
/// backends for each layout, compared.
macro_rules! grad_cases {
    ($cases:ident, $fill:expr; $($name:literal: |$x:ident| $body:expr;)*) => {$({
        fn f<B: burn_tensor::backend::Backend>($x: Tensor<B, 3>) -> Tensor<B, 3> {
            $body
        }
        for layout in [Layout::Contiguous, Layout::Permuted, Layout::Stepped] {
            $cases.case(format_args!("d/dx {} {layout:?}", $name), || {
                let c = grad::<AC>(&dev(), $fill, layout, f::<AC>);
                let n = grad::<AN>(&NdArrayDevice::Cpu, $fill, layout, f::<AN>);
                super::agree(c, n, Tolerance::default());
            });
        }
    })*};
}

/// Elementwise modules: `abs`, `neg`, `exp`, `log`, `log1p`, `sqrt`,
/// `recip`, `erf`, `trig`, `pow`, `sign`, `round`, `floor`, `ceil`,
/// `remainder`, `sigmoid`, `relu`, `gelu`, `log_sigmoid`, and the binary
/// `add`, `sub`, `mul`, `div`, `maxmin` (pairs) with broadcasting.
#[test]
fn burn_autodiff_elementwise_modules_match_autodiff_ndarray() {
    let mut cases = Cases::new("autodiff abs/neg/exp/log/sqrt/trig/pow/.../add/sub/mul/div");
    grad_cases! { cases, Fill::Float(0.2, 2.0);
        "log": |x| x.log();
        "log1p": |x| x.log1p();
        "sqrt": |x| x.sqrt();
        "recip": |x| x.recip();
        "powf_scalar": |x| x.powf_scalar(1.5);
        "powf": |x| x.clone().powf(x.clone() * 0.5);
        "div": |x| x.clone() / (x.clone().sum_dim(1) + 1.0);
    }
    grad_cases! { cases, Fill::Float(-2.0, 2.0);
        "abs": |x| x.abs();
        "neg": |x| x.neg();
        "exp": |x| x.exp();
        "erf": |x| x.erf();
        "sin": |x| x.sin();
        "cos": |x| x.cos();
        "tan": |x| (x * 0.5).tan();
        "tanh": |x| x.tanh();
        "powi_scalar": |x| x.powi_scalar(3);
        "square": |x| x.square();
        "sign": |x| x.clone().sign() * x;
        "round": |x| x.clone().round() + x;
        "floor": |x| x.clone().floor() * x;
        "ceil": |x| x.clone().ceil() * x;
        "remainder_scalar": |x| x.remainder_scalar(0.7);
        "sigmoid": |x| act::sigmoid(x);
        "relu": |x| act::relu(x);
        "silu": |x| act::silu(x);
        "log_sigmoid": |x| act::log_sigmoid(x);
        "leaky_relu": |x| act::leaky_relu(x, 0.2);
        "softplus": |x| act::softplus(x, 1.0);
        "mish": |x| act::mish(x);
        "add broadcast": |x| x.clone() + x.sum_dim(0);
        "sub broadcast": |x| x.clone() - x.mean_dim(2);
        "mul broadcast": |x| x.clone() * x.slice_dim(1, 0..1);
        "max_pair": |x| x.clone().max_pair(x.flip([2]));
        "min_pair": |x| x.clone().min_pair(x.flip([0]));
        "clamp": |x| x.clamp(-1.0, 1.0);
        "mask_fill": |x| { let m = x.clone().greater_elem(0.5); x.mask_fill(m, 2.0) };
        "mask_where": |x| { let m = x.clone().lower_elem(0.0); x.clone().mask_where(m, x.exp()) };
    }
    cases.finish();
}

/// Reductions and scans: `aggregation` (sum, mean, prod by dim), `maxmin`
/// (by dim), `cumsum`, `cumprod`, `cummax`, `cummin`, `sort`, `softmax`.
#[test]
fn burn_autodiff_reduction_modules_match_autodiff_ndarray() {
    let mut cases =
        Cases::new("autodiff aggregation/maxmin/cumsum/cumprod/cummax/cummin/sort/softmax");
    grad_cases! { cases, Fill::Float(-2.0, 2.0);
        "sum_dim(0)": |x| x.sum_dim(0);
        "sum_dim(2)": |x| x.sum_dim(2);
        "mean_dim(1)": |x| x.mean_dim(1);
        "max_dim(1)": |x| x.max_dim(1);
        "min_dim(2)": |x| x.min_dim(2);
        "cumsum(1)": |x| x.cumsum(1);
        "cumsum(2)": |x| x.cumsum(2);
        "cumprod(2)": |x| x.cumprod(2);
        "cummax(1)": |x| x.cummax(1);
        "cummin(2)": |x| x.cummin(2);
        "sort(2)": |x| x.sort(2);
        "sort_descending(0)": |x| x.sort_descending(0);
        "softmax(2)": |x| act::softmax(x, 2);
        "log_softmax(1)": |x| act::log_softmax(x, 1);
        "var(2)": |x| x.var(2);
    }
    grad_cases! { cases, Fill::Float(0.5, 1.5);
        "prod_dim(1)": |x| x.prod_dim(1);
    }
    cases.finish();
}

/// Shape and indexing modules: `reshape`, `transpose`, `permute`, `flip`,
/// `expand`, `repeat_dim`, `cat`, `slice`, `slice_assign`, `select`,
/// `gather_scatter`, `matmul`, `cross`, `unfold`.
#[test]
fn burn_autodiff_shape_and_indexing_modules_match_autodiff_ndarray() {
    let mut cases = Cases::new(
        "autodiff reshape/transpose/permute/flip/expand/repeat_dim/cat/slice/select/gather_scatter/matmul",
    );
    grad_cases! { cases, Fill::Float(-2.0, 2.0);
        "reshape": |x| x.reshape([5, 4, 3]).exp().reshape([3, 4, 5]);
        "transpose": |x| x.transpose().sin();
        "permute": |x| x.permute([2, 0, 1]) * 2.0;
        "swap_dims": |x| x.swap_dims(0, 2).exp();
        "flip": |x| x.flip([1, 2]).tanh();
        "expand": |x| x.slice_dim(0, 0..1).expand([3, 4, 5]);
        "repeat_dim": |x| x.repeat_dim(1, 2);
        "cat": |x| Tensor::cat(vec![x.clone(), x.exp()], 2);
        "slice": |x| x.slice([1..3, 0..4, 2..5]);
        "slice_assign": |x| { let v = x.clone().slice([0..1, 0..2, 0..5]).exp(); x.slice_assign([1..2, 1..3, 0..5], v) };
        "select": |x| { let i = indices::<B>(&[2, 0, 2], &x.device()); x.select(1, i) };
        "select_assign": |x| {
            let i = indices::<B>(&[1, 3], &x.device());
            let v = x.clone().slice_dim(1, 0..2).sin();
            x.select_assign(1, i, v, IndexingUpdateOp::Add)
        };
        "gather": |x| { let i = index::<B, 3>(x.dims(), 2, 4, &x.device()); x.gather(2, i) };
        "scatter": |x| {
            let i = index::<B, 3>(x.dims(), 0, 2, &x.device());
            let v = x.clone().slice_dim(0, 0..2).exp();
            x.scatter(0, i, v, IndexingUpdateOp::Add)
        };
        "matmul": |x| x.clone().matmul(x.swap_dims(1, 2));
        "batched matmul broadcast": |x| x.clone().slice_dim(0, 0..1).matmul(x.transpose()).swap_dims(1, 2);
        "unfold": |x| x.unfold::<4, _>(2, 2, 1).sum_dim(3).squeeze_dim::<3>(3);
        "narrow": |x| x.narrow(1, 1, 2).cos();
        "movedim": |x| x.movedim(0, 2).exp();
        "cross": |x| x.clone().cross(x.sin(), 0);
    }
    cases.finish();
}

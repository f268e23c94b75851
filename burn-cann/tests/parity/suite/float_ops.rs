//! Burn's `tests/tensor/float/ops` and `float/activation` modules: every
//! float op on `Cann` against `NdArray`.

use super::{
    Cases, Fill, binary_cases, dim_cases, half_cases, index, indices, tuples, unary_cases,
};
use crate::common::*;
use burn_tensor::IndexingUpdateOp;
use burn_tensor::activation as act;

const TOL: fn() -> Tolerance<f32> = Tolerance::default;

/// `abs`, `neg`, `sign`, `exp`, `log`, `sqrt`, `recip`, `erf`, rounding,
/// `powf_scalar`, `square`, trig, `clamp`, scalar arithmetic, `remainder`
/// and `fmod` by a scalar (Burn's one-module-per-op files of the same names).
#[test]
fn burn_float_elementwise_modules_match_ndarray() {
    let mut cases = Cases::new("float elementwise (abs, neg, exp, ..., trig, clamp)");
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-3.0, 3.0), TOL();
        "abs": |x| x.abs();
        "neg": |x| x.neg();
        "sign": |x| x.sign();
        "exp": |x| x.exp();
        "erf": |x| x.erf();
        "round": |x| (x * 2.0).round();
        "floor": |x| x.floor();
        "ceil": |x| x.ceil();
        "trunc": |x| x.trunc();
        "square": |x| x.square();
        "powi_scalar(3)": |x| x.powi_scalar(3);
        "sin": |x| x.sin();
        "cos": |x| x.cos();
        "tanh": |x| x.tanh();
        "atan": |x| x.atan();
        "sinh": |x| x.sinh();
        "cosh": |x| x.cosh();
        "asinh": |x| x.asinh();
        "clamp": |x| x.clamp(-1.0, 0.5);
        "clamp_min": |x| x.clamp_min(0.2);
        "clamp_max": |x| x.clamp_max(-0.2);
        "add_scalar": |x| x.add_scalar(1.5);
        "sub_scalar": |x| x.sub_scalar(-2.0);
        "mul_scalar": |x| x.mul_scalar(-3.0);
        "div_scalar": |x| x.div_scalar(4.0);
        "remainder_scalar": |x| x.remainder_scalar(1.25);
        "fmod_scalar": |x| x.fmod_scalar(1.25);
        "deg2rad": |x| x.deg2rad();
        "is_nan of log": |x| x.log().is_nan();
        "is_finite of recip": |x| x.round().recip().is_finite();
    }
    unary_cases! { cases, burn_tensor::Float, Fill::Float(0.3, 3.0), TOL();
        "log": |x| x.log();
        "log1p": |x| x.log1p();
        "sqrt": |x| x.sqrt();
        "recip": |x| x.recip();
        "powf_scalar(2.5)": |x| x.powf_scalar(2.5);
        "powf_scalar(-0.5)": |x| x.powf_scalar(-0.5);
        "acosh": |x| (x + 1.0).acosh();
    }
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-0.9, 0.9), TOL();
        "tan": |x| x.tan();
        "asin": |x| x.asin();
        "acos": |x| x.acos();
        "atanh": |x| x.atanh();
    }
    cases.finish();
}

/// `float/activation`: each activation Burn's `activation` module defines.
#[test]
fn burn_activation_modules_match_ndarray() {
    let mut cases = Cases::new("float/activation");
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-3.0, 3.0), TOL();
        "relu": |x| act::relu(x);
        "leaky_relu": |x| act::leaky_relu(x, 0.1);
        "gelu": |x| act::gelu(x);
        "sigmoid": |x| act::sigmoid(x);
        "hard_sigmoid": |x| act::hard_sigmoid(x, 0.2, 0.5);
        "log_sigmoid": |x| act::log_sigmoid(x);
        "silu": |x| act::silu(x);
        "hard_swish": |x| act::hard_swish(x);
        "mish": |x| act::mish(x);
        "softplus": |x| act::softplus(x, 1.5);
        "tanh": |x| act::tanh(x);
        "elu": |x| act::elu(x, 1.0);
        "celu": |x| act::celu(x, 0.5);
        "selu": |x| act::selu(x);
        "softsign": |x| act::softsign(x);
        "thresholded_relu": |x| act::thresholded_relu(x, 0.5);
        "hard_shrink": |x| act::hard_shrink(x, 0.5);
        "soft_shrink": |x| act::soft_shrink(x, 0.5);
        "softmax(2)": |x| act::softmax(x, 2);
        "softmin(0)": |x| act::softmin(x, 0);
        "log_softmax(1)": |x| act::log_softmax(x, 1);
        "quiet_softmax(2)": |x| act::quiet_softmax(x, 2);
    }
    cases.finish();
}

/// `add`, `sub`, `mul`, `div`, `powf`, `remainder`, `fmod`, `maxmin`
/// (pairs), `comparison`, `mask` (`mask_where`) and `atan2` with NumPy
/// broadcasting.
#[test]
fn burn_float_binary_modules_match_ndarray_with_broadcasting() {
    let mut cases = Cases::new("float add/sub/mul/div/powf/remainder/comparison/mask");
    binary_cases! { cases, burn_tensor::Float, Fill::Float(-3.0, 3.0), Fill::Float(0.5, 2.5), TOL();
        "add": |x, y| x + y;
        "sub": |x, y| x - y;
        "mul": |x, y| x * y;
        "div": |x, y| x / y;
        "powf": |x, y| x.abs().powf(y);
        "remainder": |x, y| x.remainder(y);
        "fmod": |x, y| x.fmod(y);
        "max_pair": |x, y| x.max_pair(y - 1.5);
        "min_pair": |x, y| x.min_pair(y - 1.5);
        "atan2": |x, y| x.atan2(y - 1.5);
        "greater": |x, y| x.greater(y - 1.5);
        "greater_equal": |x, y| x.greater_equal(y.round() - 1.0);
        "lower": |x, y| x.lower(y - 1.5);
        "lower_equal": |x, y| x.lower_equal(y.round() - 1.0);
        "equal": |x, y| x.round().equal(y.round());
        "not_equal": |x, y| x.round().not_equal(y.round());
        "mask_where (expanded operands)": |x, y| {
            let d = super::bdims(x.dims(), y.dims());
            let (x, y) = (x.expand(d), y.expand(d) - 1.5);
            let m = x.clone().greater(y.clone());
            y.mask_where(m, x)
        };
        "mask_fill (expanded operand)": |x, y| {
            let d = super::bdims(x.dims(), y.dims());
            let x = x.expand(d);
            let m = x.clone().lower(y - 1.5);
            x.mask_fill(m, 9.0)
        };
    }
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-3.0, 3.0), TOL();
        "greater_elem": |x| x.greater_elem(0.5);
        "lower_equal_elem": |x| x.lower_equal_elem(-0.5);
        "equal_elem": |x| x.round().equal_elem(1.0);
        "not_equal_elem": |x| x.round().not_equal_elem(0.0);
        "is_close": |x| x.clone().is_close(x.clone() + 1e-6, None, None);
    }
    cases.finish();
}

/// `aggregation` (sum, mean, prod, `*_dim` with and without the dim),
/// `maxmin` and `arg` (values and indices), `cumulative`, `sort_argsort`,
/// `topk`, along every dim.
#[test]
fn burn_float_reduction_and_scan_modules_match_ndarray_over_each_dim() {
    let mut cases = Cases::new("float aggregation/maxmin/arg/cumulative/sort_argsort/topk");
    dim_cases! { cases, burn_tensor::Float, Fill::Float(-2.0, 2.0), TOL();
        "sum_dim": |x, d| x.sum_dim(d);
        "sum_dim squeezed": |x, d| x.sum_dim(d).squeeze_dim::<2>(d);
        "mean_dim": |x, d| x.mean_dim(d);
        "prod_dim": |x, d| x.prod_dim(d);
        "max_dim": |x, d| x.max_dim(d);
        "min_dim": |x, d| x.min_dim(d);
        "max_dim_with_indices": |x, d| x.max_dim_with_indices(d);
        "min_dim_with_indices": |x, d| x.min_dim_with_indices(d);
        "max_abs_dim": |x, d| x.max_abs_dim(d);
        "argmax": |x, d| x.argmax(d);
        "argmin": |x, d| x.argmin(d);
        "var": |x, d| x.var(d);
        "var_mean_bias": |x, d| { let (v, m) = x.var_mean_bias(d); (v, m) };
        "cumsum": |x, d| x.cumsum(d);
        "cumprod": |x, d| x.cumprod(d);
        "cummax": |x, d| x.cummax(d);
        "cummin": |x, d| x.cummin(d);
        "sort": |x, d| x.sort(d);
        "sort_descending": |x, d| x.sort_descending(d);
        "argsort": |x, d| x.argsort(d);
        "argsort_descending": |x, d| x.argsort_descending(d);
        "sort_with_indices": |x, d| x.sort_with_indices(d);
        "topk(2)": |x, d| x.topk(2, d);
        "topk_with_indices(2)": |x, d| x.topk_with_indices(2, d);
        "any_dim": |x, d| x.greater_elem(1.0).any_dim(d);
        "all_dim": |x, d| x.greater_elem(-1.5).all_dim(d);
        "softmax": |x, d| act::softmax(x, d);
    }
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-2.0, 2.0), TOL();
        "sum": |x| x.sum();
        "mean": |x| x.mean();
        "prod": |x| (x * 0.5).prod();
        "max": |x| x.max();
        "min": |x| x.min();
        "max_abs": |x| x.max_abs();
        "sum_dims": |x| x.sum_dims(&[0, 2]);
        "mean_dims": |x| x.mean_dims(&[1, 2]);
        "any": |x| x.greater_elem(1.9).any();
        "all": |x| x.greater_elem(-1.9).all();
    }
    cases.finish();
}

/// `cat`, `stack`, `chunk`, `split`, `narrow`, `flip`, `repeat_dim`,
/// `repeat`, `slice`, `slice_assign`, `select`, `gather_scatter`, `take`,
/// `movedim`, `permute`, `transpose`, `reshape`, `flatten`, `squeeze`,
/// `expand`, `unfold`, `roll`, `tri`, `padding`, `gather_scatter_nd`.
#[test]
fn burn_float_shape_and_indexing_modules_match_ndarray() {
    let mut cases = Cases::new(
        "float cat/stack/chunk/split/narrow/flip/repeat/slice/select/gather_scatter/...",
    );
    dim_cases! { cases, burn_tensor::Float, Fill::Float(-2.0, 2.0), TOL();
        "cat": |x, d| Tensor::cat(vec![x.clone(), x * 2.0], d);
        "stack": |x, d| Tensor::stack::<4>(vec![x.clone(), x.neg()], d);
        "chunk(2)": |x, d| x.chunk(2, d);
        "split(2)": |x, d| x.split(2, d);
        "split_with_sizes": |x, d| { let n = x.dims()[d]; x.split_with_sizes(vec![1, n - 1], d) };
        "narrow": |x, d| x.narrow(d, 1, 2);
        "flip": |x, d| x.flip([d as isize]);
        "repeat_dim": |x, d| x.repeat_dim(d, 2);
        "movedim": |x, d| x.movedim(d, 0);
        "swap_dims": |x, d| x.swap_dims(d, 2) + 1.0;
        "unfold": |x, d| x.unfold::<4, _>(d, 2, 1);
        "roll_dim": |x, d| x.roll_dim(1, d);
        "select": |x, d| { let i = indices::<B>(&[2, 0, 1, 0], &x.device()); x.select(d, i) };
        "select_assign": |x, d| {
            let i = indices::<B>(&[2, 0], &x.device());
            let mut dims = x.dims();
            dims[d] = 2;
            let v = Tensor::<B, 3>::ones(dims, &x.device());
            x.select_assign(d, i, v, IndexingUpdateOp::Add)
        };
        "gather": |x, d| { let i = index::<B, 3>(x.dims(), d, 2, &x.device()); x.gather(d, i) };
        "scatter": |x, d| {
            let i = index::<B, 3>(x.dims(), d, 1, &x.device());
            let mut dims = x.dims();
            dims[d] = 1;
            let v = Tensor::<B, 3>::ones(dims, &x.device()) * 3.0;
            x.scatter(d, i, v, IndexingUpdateOp::Add)
        };
        "take": |x, d| { let i = indices::<B>(&[1, 0, 2], &x.device()); x.take::<1, 3>(d, i) };
        "slice_dim": |x, d| x.slice_dim(d, 1..3);
        "slice_assign": |x, d| {
            let mut r = [0..3, 0..4, 0..5];
            r[d] = 1..3;
            let mut dims = x.dims();
            dims[d] = 2;
            let v = Tensor::<B, 3>::ones(dims, &x.device()) * -7.0;
            x.slice_assign(r, v)
        };
        "slice_fill": |x, d| { let mut r = [0..3, 0..4, 0..5]; r[d] = 0..2; x.slice_fill(r, 4.5) };
        "expand a unit dim": |x, d| { let dims = x.dims(); x.slice_dim(d, 0..1).expand(dims) };
    }
    unary_cases! { cases, burn_tensor::Float, Fill::Float(-2.0, 2.0), TOL();
        "permute": |x| x.permute([2, 0, 1]);
        "transpose": |x| x.transpose();
        "reshape": |x| { let n = x.dims().iter().product::<usize>(); x.reshape([n, 1]) };
        "flatten": |x| x.flatten::<2>(1, 2);
        "flip all": |x| x.flip([0, 1, 2]);
        "repeat": |x| x.repeat(&[2, 1, 3]);
        "expand": |x| x.unsqueeze_dim::<4>(1).expand([-1, 2, -1, -1]);
        "squeeze_dims": |x| x.unsqueeze_dims::<5>(&[0, 3]).squeeze_dims::<3>(&[0, 3]);
        "slice offsets": |x| { let [a, b, c] = x.dims(); x.slice([1..a, 0..b, 1..c]) };
        "tril": |x| x.tril(0);
        "triu": |x| x.triu(-1);
        "pad": |x| x.pad((1, 2, 0, 1), burn_tensor::ops::PadMode::Constant(0.25));
        "roll": |x| x.roll(&[1, -1], &[0, 2]);
        "contiguous copy via add 0": |x| x + 0.0;
        "gather_nd K=1": |x| { let i = tuples::<B>(1, 2, x.dims(), &x.device()); x.gather_nd::<2, 3>(i) };
        "gather_nd K=2": |x| { let i = tuples::<B>(2, 3, x.dims(), &x.device()); x.gather_nd::<2, 2>(i) };
        "gather_nd K=3": |x| { let i = tuples::<B>(3, 4, x.dims(), &x.device()); x.gather_nd::<2, 1>(i) };
        "scatter_nd add K=2": |x| {
            let (d, device) = (x.dims(), x.device());
            let v = Tensor::<B, 2>::ones([2, d[2]], &device) * 2.5;
            x.scatter_nd(tuples::<B>(2, 2, d, &device), v, IndexingUpdateOp::Add)
        };
        "scatter_nd assign K=1": |x| {
            let (d, device) = (x.dims(), x.device());
            let v = Tensor::<B, 3>::ones([2, d[1], d[2]], &device) * -4.0;
            x.scatter_nd(tuples::<B>(1, 2, d, &device), v, IndexingUpdateOp::Assign)
        };
        "scatter_nd assign K=3": |x| {
            let (d, device) = (x.dims(), x.device());
            let v = Tensor::<B, 1>::from_data(TensorData::from([7.0f32, 8.0, 9.0]), &device);
            x.scatter_nd(tuples::<B>(3, 3, d, &device), v, IndexingUpdateOp::Assign)
        };
    }
    cases.finish();
}

/// `matmul` (batched and broadcast), `dot`, `cross`, and elementwise ops on
/// empty tensors (Burn's tests of each module include empty shapes).
#[test]
fn burn_float_matmul_and_empty_tensor_cases_match_ndarray() {
    let mut cases = Cases::new("float matmul/cross/empty tensors");
    let pairs: [([usize; 3], [usize; 3]); 4] = [
        ([2, 3, 4], [2, 4, 5]),
        ([1, 3, 4], [2, 4, 2]),
        ([2, 1, 4], [1, 4, 3]),
        ([2, 3, 0], [2, 0, 2]),
    ];
    for (sa, sb) in pairs {
        for layout in super::LAYOUTS {
            cases.case(format_args!("matmul {sa:?}@{sb:?} {layout:?}"), || {
                let (a, an) =
                    super::pair::<burn_tensor::Float>(Fill::Float(-1.0, 1.0), sa, 11, layout);
                let (b, bn) =
                    super::pair::<burn_tensor::Float>(Fill::Float(-1.0, 1.0), sb, 12, layout);
                let reference = if sa[2] == 0 {
                    // NdArray's matmul divides by zero on an empty inner
                    // dim; the product of nothing is zeros.
                    let d = super::bdims([sa[0], sa[1], 0], [sb[0], 0, sb[2]]);
                    Tensor::<N, 3>::zeros(d, &NdArrayDevice::Cpu)
                } else {
                    an.matmul(bn)
                };
                super::agree(a.matmul(b), reference, TOL());
            });
        }
    }
    for layout in super::LAYOUTS {
        cases.case(format_args!("cross {layout:?}"), || {
            let (a, an) =
                super::pair::<burn_tensor::Float>(Fill::Float(-1.0, 1.0), [2, 4, 3], 13, layout);
            let (b, bn) =
                super::pair::<burn_tensor::Float>(Fill::Float(-1.0, 1.0), [2, 4, 3], 14, layout);
            super::agree(a.cross(b, 2), an.cross(bn, 2), TOL());
        });
    }
    fn empty<B: burn_tensor::backend::Backend>(x: Tensor<B, 3>) -> Vec<Tensor<B, 3>> {
        vec![
            x.clone().exp(),
            x.clone() + 1.0,
            x.clone() * x.clone(),
            x.clone().sum_dim(2),
            x.clone().transpose(),
            Tensor::cat(vec![x.clone(), x.clone()], 1),
            x.clone().flip([1]),
            x.clone().cumsum(0),
            x.clone().clamp(-1.0, 1.0),
            x.clone().mask_fill(x.clone().greater_elem(0.0), 1.0),
            act::relu(x.clone()),
            x.clone().sort(0),
            x.clone().prod_dim(1),
            x.repeat_dim(2, 2),
        ]
    }
    for shape in [[2, 0, 3], [0, 3, 2]] {
        cases.case(
            format_args!("elementwise, cat, flip, sort, scan on empty {shape:?}"),
            || {
                let (x, xn) = super::pair::<burn_tensor::Float>(
                    Fill::Float(-1.0, 1.0),
                    shape,
                    15,
                    super::Layout::Contiguous,
                );
                super::agree(empty(x), empty(xn), TOL());
            },
        );
    }
    cases.finish();
}

/// Every supported float dtype: the ops of the modules above in `f16` and
/// `bf16` on `Cann`, against NdArray's `f32` within half precision (2e-2,
/// as `tests/parity/dtypes.rs`).
#[test]
fn burn_float_modules_in_f16_and_bf16_follow_ndarray_within_half_precision() {
    let mut cases = Cases::new("float ops in f16 and bf16");
    half_cases! { cases, Tolerance::<f32>::rel_abs(2e-2, 2e-2);
        "exp": |x| x.exp();
        "log": |x| (x.abs() + 0.5).log();
        "sqrt": |x| x.abs().sqrt();
        "tanh": |x| x.tanh();
        "sin": |x| x.sin();
        "sigmoid": |x| act::sigmoid(x);
        "relu": |x| act::relu(x);
        "silu": |x| act::silu(x);
        "add broadcast": |x| x.clone() + x.sum_dim(1);
        "mul": |x| x.clone() * x.flip([2]);
        "div": |x| x.clone() / (x.abs() + 1.0);
        "powf_scalar": |x| x.abs().powf_scalar(1.5);
        "clamp": |x| x.clamp(-1.0, 1.0);
        "sum_dim": |x| x.sum_dim(2);
        "mean_dim": |x| x.mean_dim(0);
        "max_dim": |x| x.max_dim(1);
        "argmax": |x| x.argmax(2);
        "cumsum": |x| x.cumsum(1);
        "sort": |x| x.sort(2);
        "softmax": |x| act::softmax(x, 2);
        "log_softmax": |x| act::log_softmax(x, 1);
        "matmul": |x| x.clone().matmul(x.swap_dims(1, 2));
        "transpose": |x| x.transpose();
        "cat": |x| Tensor::cat(vec![x.clone(), x.neg()], 1);
        "greater_elem": |x| x.greater_elem(0.5);
        "mask_fill": |x| { let m = x.clone().lower_elem(0.0); x.mask_fill(m, 3.0) };
        "gather": |x| { let i = index::<B, 3>(x.dims(), 1, 2, &x.device()); x.gather(1, i) };
    }
    cases.finish();
}

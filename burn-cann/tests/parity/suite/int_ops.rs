//! Burn's `tests/tensor/int/ops` modules: every int op on `Cann` against
//! `NdArray` (exact).

use super::{Cases, Fill, binary_cases, dim_cases, index, indices, tuples, unary_cases};
use crate::common::*;
use burn_tensor::{ElementConversion, IndexingUpdateOp};

const EXACT: fn() -> Tolerance<f32> = Tolerance::default;

/// `abs`, `sign`, scalar arithmetic, `remainder`, `clamp`, comparison with
/// a scalar, `cast` to float, `bitwise` with a scalar, whole-tensor
/// aggregation, `permute`/`transpose`/`flip`/`repeat`/`expand`/`tri`,
/// `gather_scatter_nd`.
#[test]
fn burn_int_unary_modules_match_ndarray() {
    let mut cases = Cases::new("int abs/sign/arith scalar/remainder/clamp/cast/aggregation/...");
    unary_cases! { cases, Int, Fill::Int(-20, 20), EXACT();
        "abs": |x| x.abs();
        "neg": |x| x.neg();
        "sign": |x| x.sign();
        "add_scalar": |x| x.add_scalar(7);
        "sub_scalar": |x| x.sub_scalar(-3);
        "mul_scalar": |x| x.mul_scalar(-4);
        "div_scalar": |x| x.div_scalar(3);
        "remainder_scalar": |x| x.remainder_scalar(3);
        "powi_scalar(2)": |x| x.powi_scalar(2);
        "clamp": |x| x.clamp(-5, 8);
        "clamp_min": |x| x.clamp_min(0);
        "clamp_max": |x| x.clamp_max(2);
        "greater_elem": |x| x.greater_elem(3);
        "lower_equal_elem": |x| x.lower_equal_elem(-2);
        "equal_elem": |x| x.equal_elem(0);
        "float": |x| x.float();
        "bool": |x| x.bool();
        "bitwise_and_scalar": |x| x.bitwise_and_scalar(6i64.elem());
        "bitwise_or_scalar": |x| x.bitwise_or_scalar(5i64.elem());
        "bitwise_xor_scalar": |x| x.bitwise_xor_scalar(3i64.elem());
        "bitwise_not": |x| x.bitwise_not();
        "bitwise_left_shift_scalar": |x| x.abs().bitwise_left_shift_scalar(2i64.elem());
        "sum": |x| x.sum();
        "prod": |x| x.clamp(-2, 2).prod();
        "max": |x| x.max();
        "min": |x| x.min();
        "mean": |x| x.mean();
        "any": |x| x.clamp_min(0).any();
        "all": |x| x.all();
        "permute": |x| x.permute([1, 2, 0]);
        "transpose": |x| x.transpose();
        "flip": |x| x.flip([0, 2]);
        "repeat": |x| x.repeat(&[1, 2, 2]);
        "expand": |x| x.unsqueeze_dim::<4>(0).expand([2, -1, -1, -1]);
        "reshape": |x| x.reshape([-1]);
        "tril": |x| x.tril(1);
        "triu": |x| x.triu(0);
        "mask_fill": |x| { let m = x.clone().lower_elem(0); x.mask_fill(m, 99) };
        "cast i32 and back": |x| x.cast(burn_tensor::DType::I32) * 2;
        "gather_nd K=2": |x| { let i = tuples::<B>(2, 3, x.dims(), &x.device()); x.gather_nd::<2, 2>(i) };
        "scatter_nd add K=1": |x| {
            let (d, device) = (x.dims(), x.device());
            let v = Tensor::<B, 3, Int>::ones([2, d[1], d[2]], &device) * 3;
            x.scatter_nd(tuples::<B>(1, 2, d, &device), v, IndexingUpdateOp::Add)
        };
        "scatter_nd assign K=3": |x| {
            let (d, device) = (x.dims(), x.device());
            let v = Tensor::<B, 1, Int>::from_data(TensorData::from([70i64, 80]), &device);
            x.scatter_nd(tuples::<B>(3, 2, d, &device), v, IndexingUpdateOp::Assign)
        };
    }
    cases.finish();
}

/// `add`, `sub`, `mul`, `div`, `remainder`, `comparison`, `mask`,
/// `bitwise` between tensors, with broadcasting.
#[test]
fn burn_int_binary_modules_match_ndarray_with_broadcasting() {
    let mut cases = Cases::new("int add/sub/mul/div/remainder/comparison/mask/bitwise");
    binary_cases! { cases, Int, Fill::Int(-20, 20), Fill::Int(1, 7), EXACT();
        "add": |x, y| x + y;
        "sub": |x, y| x - y;
        "mul": |x, y| x * y;
        "div": |x, y| x / y;
        "remainder": |x, y| x.remainder(y);
        "max_pair": |x, y| x.max_pair(y * 2 - 6);
        "min_pair": |x, y| x.min_pair(y * 2 - 6);
        "greater": |x, y| x.greater(y);
        "greater_equal": |x, y| x.greater_equal(y);
        "lower": |x, y| x.lower(y);
        "lower_equal": |x, y| x.lower_equal(y);
        "equal": |x, y| x.equal(y);
        "not_equal": |x, y| x.not_equal(y);
        "bitwise_and": |x, y| x.bitwise_and(y);
        "bitwise_or": |x, y| x.bitwise_or(y);
        "bitwise_xor": |x, y| x.bitwise_xor(y);
        "mask_where (expanded operands)": |x, y| {
            let d = super::bdims(x.dims(), y.dims());
            let (x, y) = (x.expand(d), y.expand(d));
            let m = x.clone().greater(y.clone());
            y.mask_where(m, x)
        };
    }
    cases.finish();
}

/// Along every dim: `aggregation`, `arg`, `cumulative`, `sort_argsort`,
/// `topk`, `cat`, `stack`, `chunk`, `flip`, `repeat_dim`, `select`,
/// `gather_scatter`, `take`, `slice`, `slice_assign`, `movedim`, `unfold`,
/// `roll`.
#[test]
fn burn_int_dim_modules_match_ndarray_over_each_dim() {
    let mut cases =
        Cases::new("int aggregation/arg/cumulative/sort/topk/cat/stack/select/gather_scatter/...");
    dim_cases! { cases, Int, Fill::Int(-20, 20), EXACT();
        "sum_dim": |x, d| x.sum_dim(d);
        "mean_dim": |x, d| x.mean_dim(d);
        "prod_dim": |x, d| x.clamp(-2, 2).prod_dim(d);
        "max_dim": |x, d| x.max_dim(d);
        "min_dim": |x, d| x.min_dim(d);
        "max_dim_with_indices": |x, d| x.max_dim_with_indices(d);
        "argmax": |x, d| x.argmax(d);
        "argmin": |x, d| x.argmin(d);
        "cumsum": |x, d| x.cumsum(d);
        "cumprod": |x, d| x.clamp(-2, 2).cumprod(d);
        "cummax": |x, d| x.cummax(d);
        "cummin": |x, d| x.cummin(d);
        "sort": |x, d| x.sort(d);
        "sort_descending": |x, d| x.sort_descending(d);
        "argsort": |x, d| (x.clone() * 64 + x.argsort(d)).sort(d);
        "topk(2)": |x, d| x.topk(2, d);
        "cat": |x, d| Tensor::cat(vec![x.clone(), x * 3], d);
        "stack": |x, d| Tensor::stack::<4>(vec![x.clone(), -x], d);
        "chunk(2)": |x, d| x.chunk(2, d);
        "narrow": |x, d| x.narrow(d, 1, 2);
        "flip": |x, d| x.flip([d as isize]);
        "repeat_dim": |x, d| x.repeat_dim(d, 3);
        "select": |x, d| { let i = indices::<B>(&[0, 2, 2], &x.device()); x.select(d, i) };
        "gather": |x, d| { let i = index::<B, 3>(x.dims(), d, 3, &x.device()); x.gather(d, i) };
        "scatter": |x, d| {
            let i = index::<B, 3>(x.dims(), d, 2, &x.device());
            let mut dims = x.dims();
            dims[d] = 2;
            let v = Tensor::ones(dims, &x.device());
            x.scatter(d, i, v, IndexingUpdateOp::Add)
        };
        "take": |x, d| { let i = indices::<B>(&[2, 1], &x.device()); x.take::<1, 3>(d, i) };
        "slice_dim": |x, d| x.slice_dim(d, 0..2);
        "slice_assign": |x, d| {
            let mut r = [0..3, 0..4, 0..5];
            r[d] = 1..2;
            let mut dims = x.dims();
            dims[d] = 1;
            let v = Tensor::zeros(dims, &x.device());
            x.slice_assign(r, v)
        };
        "movedim": |x, d| x.movedim(d, 2);
        "unfold": |x, d| x.unfold::<4, _>(d, 2, 2);
        "roll_dim": |x, d| x.roll_dim(-1, d);
    }
    cases.finish();
}

/// `arange`, `arange_step`, `full`, `one_hot`, `cartesian_grid`,
/// `create_like` and `init` (creation ops).
#[test]
fn burn_int_creation_modules_match_ndarray() {
    let mut cases = Cases::new("int arange/arange_step/full/one_hot/cartesian_grid/create_like");
    fn make<B: burn_tensor::backend::Backend>(d: &B::Device) -> Vec<Tensor<B, 2, Int>> {
        vec![
            Tensor::<B, 1, Int>::arange(-3..9, d).reshape([3, 4]),
            Tensor::<B, 1, Int>::arange_step(0..20, 4, d).reshape([1, 5]),
            Tensor::<B, 2, Int>::full([2, 3], 7, d),
            Tensor::<B, 2, Int>::zeros([2, 3], d).ones_like(),
            Tensor::<B, 2, Int>::ones([3, 2], d).full_like(-2),
            Tensor::<B, 1, Int>::from_data(TensorData::from([2i64, 0, 3]), d).one_hot::<2>(4),
            Tensor::<B, 2, Int>::eye(3, d),
        ]
    }
    cases.case("creation ops", || {
        super::agree(make::<C>(&dev()), make::<N>(&NdArrayDevice::Cpu), EXACT());
    });
    cases.case("cartesian_grid", || {
        let c = Tensor::<C, 2, Int>::cartesian_grid::<_, 3>([2, 3], &dev());
        let n = Tensor::<N, 2, Int>::cartesian_grid::<_, 3>([2, 3], &NdArrayDevice::Cpu);
        super::agree(c, n, EXACT());
    });
    cases.finish();
}

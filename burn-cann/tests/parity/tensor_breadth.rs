//! Breadth of Burn's tensor suite: composite ops Burn's `Tensor` API builds
//! on the backend's (creation, triangles, padding, stacking, splitting,
//! one-hot, sorting with indices, statistics), on `Cann` against `NdArray`.

use crate::common::*;
use burn_tensor::backend::Backend;
use burn_tensor::ops::PadMode;

/// For each `name: |x| body` over a `[4, 5]` input (values in `range`): the
/// float results on both backends, compared (the case named on stderr).
macro_rules! same_ops {
    ($range:expr; $($name:literal: |$x:ident| $body:expr;)*) => {$({
        fn f<B: Backend>($x: Tensor<B, 2>) -> Tensor<B, 2> {
            $body
        }
        let (c, n) = floats([4, 5], 61, $range.0, $range.1);
        eprintln!("comparing {}", $name);
        same(f(c), f(n));
    })*};
}

#[test]
fn composite_float_ops_match_ndarray() {
    same_ops! { (-2.0f32, 2.0f32);
        "tril": |x| x.tril(0);
        "triu above the diagonal": |x| x.triu(1);
        "pad constant": |x| x.pad((1, 2, 0, 1), PadMode::Constant(0.5)).slice([0..4, 0..5]);
        "pad reflect": |x| x.pad((2, 1, 1, 0), PadMode::Reflect).slice([1..5, 0..5]);
        "pad edge": |x| x.pad((1, 1, 1, 1), PadMode::Edge).slice([1..5, 0..5]);
        "stack then mean": |x| Tensor::stack::<3>(vec![x.clone(), x * 2.0], 0).mean_dim(0).squeeze_dim(0);
        "chunk and cat": |x| { let mut p = x.chunk(2, 1); p.reverse(); Tensor::cat(p, 1) };
        "split and cat": |x| { let p = x.split(3, 1); Tensor::cat(vec![p[1].clone(), p[0].clone()], 1) };
        "flatten and unflatten": |x| x.reshape([2, 2, 5]).flatten::<1>(0, 2).reshape([4, 5]);
        "unsqueeze and squeeze": |x| x.unsqueeze_dim::<3>(1).squeeze_dim(1);
        "var": |x| x.var(1).expand([4, 5]);
        "var_bias": |x| x.var_bias(0).expand([4, 5]);
        "square": |x| x.square();
        "powi": |x| x.powi_scalar(3);
        "exp of neg abs": |x| x.abs().neg().exp();
        "max_abs_dim": |x| x.max_abs_dim(1).expand([4, 5]);
        "is_inf and is_nan": |x| (x.clone() / x.clone().sign().add_scalar(-1.0)).is_inf().float() + x.is_nan().float();
        "sort_with_indices values": |x| x.sort_with_indices(1).0;
        "sort_with_indices indices": |x| x.sort_descending_with_indices(0).1.float();
        "topk_with_indices": |x| { let (v, i) = x.topk_with_indices(2, 1); Tensor::cat(vec![v, i.float()], 1) };
        "cumsum of a transposed view": |x| x.transpose().cumsum(0).transpose();
        "matmul of a slice": |x| x.clone().slice([0..4, 1..5]).matmul(x);
    }
}

/// NdArray has no `argtopk` (its backend op panics): the indices of
/// `topk_with_indices` are the reference.
#[test]
fn argtopk_matches_ndarrays_topk_indices() {
    let (x, xn) = floats([4, 5], 63, -2.0, 2.0);
    same_int(
        x.clone().argtopk(3, 0),
        xn.clone().topk_with_indices(3, 0).1,
    );
    same_int(x.argtopk(2, 1), xn.topk_with_indices(2, 1).1);
}

#[test]
fn creation_ops_match_ndarray() {
    fn make<B: Backend>(d: &B::Device) -> Vec<Tensor<B, 2>> {
        vec![
            Tensor::<B, 2>::eye(4, d),
            Tensor::<B, 1, Int>::arange(2..14, d)
                .float()
                .reshape([3, 4]),
            Tensor::<B, 1, Int>::arange_step(-3..9, 3, d)
                .float()
                .reshape([2, 2]),
            Tensor::<B, 2>::full([2, 3], -1.5, d),
            Tensor::<B, 2>::ones([2, 2], d).zeros_like() + Tensor::<B, 2>::ones([2, 2], d),
            Tensor::<B, 1, Int>::from_data(TensorData::from([2i64, 0, 3, 1]), d)
                .one_hot::<2>(5)
                .float(),
            Tensor::<B, 1>::from_data(TensorData::from([0.0f32, 2.0, 1.0]), d)
                .one_hot_fill::<2>(3, 5.0, -1.0, -1),
        ]
    }
    for (c, n) in make::<C>(&dev())
        .into_iter()
        .zip(make::<N>(&NdArrayDevice::Cpu))
    {
        same(c, n);
    }
}

#[test]
fn int_composite_ops_match_ndarray() {
    let (x, xn) = ints([4, 5], 62, -20, 20);
    same_int(x.clone().tril(-1), xn.clone().tril(-1));
    same_int(x.clone().triu(0), xn.clone().triu(0));
    same_int(
        x.clone().sort_with_indices(1).1,
        xn.clone().sort_with_indices(1).1,
    );
    same_int(x.clone().topk(2, 0), xn.clone().topk(2, 0));
    same_int(
        x.clone().pad((1, 0, 0, 1), PadMode::Constant(7.0)),
        xn.clone().pad((1, 0, 0, 1), PadMode::Constant(7.0)),
    );
    same_int(x.clone().abs().cumsum(1), xn.clone().abs().cumsum(1));
    same_int(x.clone().clamp(-5, 5), xn.clone().clamp(-5, 5));
    same_int(x.clone().sign(), xn.clone().sign());
    same_int(
        x.clone().mask_fill(x.clone().lower_elem(0), 0),
        xn.clone().mask_fill(xn.clone().lower_elem(0), 0),
    );
    same_int(
        Tensor::stack::<3>(vec![x.clone(), x.clone() * 2], 2)
            .sum_dim(2)
            .squeeze_dim::<2>(2),
        Tensor::stack::<3>(vec![xn.clone(), xn.clone() * 2], 2)
            .sum_dim(2)
            .squeeze_dim::<2>(2),
    );
}

//! Float ops on `Cann` against `NdArray` on the same inputs.

use crate::common::*;

/// Applies `$f` to the same input on both backends and compares.
macro_rules! unary {
    ($name:ident, $lo:expr, $hi:expr, |$t:ident| $body:expr) => {
        unary!($name, $lo, $hi, 3, |$t| $body);
    };
    // `$cases`: 2 leaves out the empty tensor (NdArray fails on it for some
    // reductions).
    ($name:ident, $lo:expr, $hi:expr, $cases:expr, |$t:ident| $body:expr) => {
        #[test]
        fn $name() {
            for (i, shape) in [[2usize, 3, 4], [1, 5, 1], [0, 3, 2]]
                .into_iter()
                .enumerate()
                .take($cases)
            {
                let (c, n) = floats(shape, 7 + i as u64, $lo, $hi);
                let f_c = |$t: Tensor<C, 3>| $body;
                let f_n = |$t: Tensor<N, 3>| $body;
                same(f_c(c.clone()), f_n(n.clone()));
                // A non-contiguous view of the same values.
                same(
                    f_c(c.swap_dims(0, 2)).swap_dims(0, 2),
                    f_n(n.swap_dims(0, 2)).swap_dims(0, 2),
                );
            }
        }
    };
}

unary!(exp_matches_ndarray, -3.0, 3.0, |t| t.exp());
unary!(log_matches_ndarray, 0.1, 5.0, |t| t.log());
unary!(log1p_matches_ndarray, -0.5, 5.0, |t| t.log1p());
unary!(sqrt_matches_ndarray, 0.0, 9.0, |t| t.sqrt());
unary!(abs_matches_ndarray, -3.0, 3.0, |t| t.abs());
unary!(neg_matches_ndarray, -3.0, 3.0, |t| t.neg());
unary!(recip_matches_ndarray, 0.5, 3.0, |t| t.recip());
unary!(cos_matches_ndarray, -3.0, 3.0, |t| t.cos());
unary!(sin_matches_ndarray, -3.0, 3.0, |t| t.sin());
unary!(tan_matches_ndarray, -1.2, 1.2, |t| t.tan());
unary!(cosh_matches_ndarray, -2.0, 2.0, |t| t.cosh());
unary!(sinh_matches_ndarray, -2.0, 2.0, |t| t.sinh());
unary!(tanh_matches_ndarray, -3.0, 3.0, |t| t.tanh());
unary!(acos_matches_ndarray, -0.9, 0.9, |t| t.acos());
unary!(asin_matches_ndarray, -0.9, 0.9, |t| t.asin());
unary!(atan_matches_ndarray, -3.0, 3.0, |t| t.atan());
unary!(acosh_matches_ndarray, 1.1, 4.0, |t| t.acosh());
unary!(asinh_matches_ndarray, -3.0, 3.0, |t| t.asinh());
unary!(atanh_matches_ndarray, -0.9, 0.9, |t| t.atanh());
unary!(erf_matches_ndarray, -2.0, 2.0, |t| t.erf());
unary!(round_matches_ndarray, -5.0, 5.0, |t| t.round());
unary!(floor_matches_ndarray, -5.0, 5.0, |t| t.floor());
unary!(ceil_matches_ndarray, -5.0, 5.0, |t| t.ceil());
unary!(trunc_matches_ndarray, -5.0, 5.0, |t| t.trunc());
unary!(sign_matches_ndarray, -2.0, 2.0, |t| t.sign());
unary!(powf_scalar_matches_ndarray, 0.1, 3.0, |t| t
    .powf_scalar(2.5));
unary!(add_scalar_matches_ndarray, -3.0, 3.0, |t| t + 1.5);
unary!(sub_scalar_matches_ndarray, -3.0, 3.0, |t| t - 1.5);
unary!(mul_scalar_matches_ndarray, -3.0, 3.0, |t| t * -2.5);
unary!(div_scalar_matches_ndarray, -3.0, 3.0, |t| t / 4.0);
unary!(remainder_scalar_matches_ndarray, -5.0, 5.0, |t| t
    .remainder_scalar(1.5));
unary!(clamp_matches_ndarray, -3.0, 3.0, |t| t.clamp(-1.0, 2.0));
unary!(clamp_min_matches_ndarray, -3.0, 3.0, |t| t.clamp_min(-1.0));
unary!(clamp_max_matches_ndarray, -3.0, 3.0, |t| t.clamp_max(2.0));
unary!(cumsum_matches_ndarray, -3.0, 3.0, |t| t.cumsum(1));
unary!(flip_matches_ndarray, -3.0, 3.0, |t| t.flip([0, 2]));
unary!(sum_dim_matches_ndarray, -3.0, 3.0, |t| t.sum_dim(1));
unary!(mean_dim_matches_ndarray, -3.0, 3.0, 2, |t| t.mean_dim(2));
unary!(max_dim_matches_ndarray, -3.0, 3.0, |t| t.max_dim(1));
unary!(transpose_then_exp_matches_ndarray, -3.0, 3.0, |t| t
    .transpose()
    .exp());
unary!(sort_matches_ndarray, -3.0, 3.0, |t| t.sort(2));
unary!(sort_descending_matches_ndarray, -3.0, 3.0, |t| t
    .sort_descending(1));

/// A binary op on broadcast and non-contiguous operands.
macro_rules! binary {
    ($name:ident, $lo:expr, $hi:expr, |$a:ident, $b:ident| $body:expr) => {
        binary!($name, $lo, $hi, 4, |$a, $b| $body);
    };
    // `$cases`: how many of the shape pairs to run (NdArray broadcasts only
    // one side for some ops, so those stop before the two-sided pair).
    ($name:ident, $lo:expr, $hi:expr, $cases:expr, |$a:ident, $b:ident| $body:expr) => {
        #[test]
        fn $name() {
            let shapes: [([usize; 3], [usize; 3]); 4] = [
                ([2, 3, 4], [2, 3, 4]),
                ([2, 3, 4], [1, 3, 1]),
                ([0, 3, 4], [1, 3, 4]),
                ([2, 1, 4], [1, 3, 1]),
            ];
            for (i, (sa, sb)) in shapes.into_iter().enumerate().take($cases) {
                let (ac, an) = floats(sa, 11 + i as u64, $lo, $hi);
                let (bc, bn) = floats(sb, 97 + i as u64, $lo, $hi);
                let f_c = |$a: Tensor<C, 3>, $b: Tensor<C, 3>| $body;
                let f_n = |$a: Tensor<N, 3>, $b: Tensor<N, 3>| $body;
                same(f_c(ac.clone(), bc.clone()), f_n(an.clone(), bn.clone()));
            }
            // Non-contiguous operands: permuted views.
            let (ac, an) = floats([4, 3, 2], 5, $lo, $hi);
            let (bc, bn) = floats([2, 3, 4], 6, $lo, $hi);
            same(
                f_c3(ac.permute([2, 1, 0]), bc, |$a, $b| $body),
                f_n3(an.permute([2, 1, 0]), bn, |$a, $b| $body),
            );
        }
    };
}

fn f_c3(
    a: Tensor<C, 3>,
    b: Tensor<C, 3>,
    f: impl Fn(Tensor<C, 3>, Tensor<C, 3>) -> Tensor<C, 3>,
) -> Tensor<C, 3> {
    f(a, b)
}

fn f_n3(
    a: Tensor<N, 3>,
    b: Tensor<N, 3>,
    f: impl Fn(Tensor<N, 3>, Tensor<N, 3>) -> Tensor<N, 3>,
) -> Tensor<N, 3> {
    f(a, b)
}

binary!(add_broadcasts_like_ndarray, -3.0, 3.0, |a, b| a + b);
binary!(sub_broadcasts_like_ndarray, -3.0, 3.0, |a, b| a - b);
binary!(mul_broadcasts_like_ndarray, -3.0, 3.0, |a, b| a * b);
binary!(div_broadcasts_like_ndarray, 0.5, 3.0, |a, b| a / b);
binary!(powf_broadcasts_like_ndarray, 0.5, 2.0, 3, |a, b| a.powf(b));
binary!(atan2_broadcasts_like_ndarray, -3.0, 3.0, 3, |a, b| a
    .atan2(b));
binary!(remainder_broadcasts_like_ndarray, 0.5, 3.0, 1, |a, b| a
    .remainder(b));
binary!(max_pair_broadcasts_like_ndarray, -3.0, 3.0, |a, b| a
    .max_pair(b));
binary!(min_pair_broadcasts_like_ndarray, -3.0, 3.0, |a, b| a
    .min_pair(b));

#[test]
fn full_reductions_match_ndarray() {
    let (c, n) = floats([3, 4, 5], 3, -2.0, 2.0);
    same(c.clone().sum(), n.clone().sum());
    same(c.clone().mean(), n.clone().mean());
    same(c.clone().max(), n.clone().max());
    same(c.clone().min(), n.clone().min());
    same(c.clone().min_dim(2), n.clone().min_dim(2));
    same_int(c.clone().argmax(1), n.clone().argmax(1));
    same_int(c.clone().argmin(2), n.clone().argmin(2));
    same_int(c.clone().argsort(2), n.clone().argsort(2));
    same(c.clone().topk(2, 2), n.clone().topk(2, 2));
    let (cm, ci) = c.clone().max_dim_with_indices(1);
    let (nm, ni) = n.clone().max_dim_with_indices(1);
    same(cm, nm);
    same_int(ci, ni);
    // Over a non-contiguous view.
    same(
        c.clone().permute([2, 0, 1]).sum_dim(0),
        n.clone().permute([2, 0, 1]).sum_dim(0),
    );
}

#[test]
fn matmul_matches_ndarray_with_batches_broadcast_and_transposed_views() {
    let (a, an) = floats([2, 3, 4], 1, -1.0, 1.0);
    let (b, bn) = floats([2, 4, 5], 2, -1.0, 1.0);
    same(a.clone().matmul(b.clone()), an.clone().matmul(bn.clone()));
    // Broadcast batch.
    let (b1, b1n) = floats([1, 4, 5], 3, -1.0, 1.0);
    same(a.clone().matmul(b1), an.clone().matmul(b1n));
    // Transposed (strided) operand.
    let (bt, btn) = floats([2, 5, 4], 4, -1.0, 1.0);
    same(
        a.clone().matmul(bt.transpose()),
        an.clone().matmul(btn.transpose()),
    );
    // Empty inner dimension: zeros (NdArray divides by zero there).
    let (e, _) = floats([2, 3, 0], 5, -1.0, 1.0);
    let (f, _) = floats([2, 0, 5], 6, -1.0, 1.0);
    same(
        e.matmul(f),
        Tensor::<N, 3>::zeros([2, 3, 5], &NdArrayDevice::Cpu),
    );
}

#[test]
fn views_match_ndarray_reshape_slice_expand_unfold() {
    let (c, n) = floats([4, 6], 8, -3.0, 3.0);
    same(c.clone().reshape([3, 8]), n.clone().reshape([3, 8]));
    same(
        c.clone().transpose().reshape([24]).reshape([2, 12]),
        n.clone().transpose().reshape([24]).reshape([2, 12]),
    );
    same(c.clone().slice([1..3, 2..6]), n.clone().slice([1..3, 2..6]));
    same(
        c.clone().slice(burn_tensor::s![0..4;2, 1..6;2]),
        n.clone().slice(burn_tensor::s![0..4;2, 1..6;2]),
    );
    same(
        c.clone().slice(burn_tensor::s![..;-1, 0..5;-2]),
        n.clone().slice(burn_tensor::s![..;-1, 0..5;-2]),
    );
    let (r, rn) = floats([1, 6], 9, -3.0, 3.0);
    same(r.clone().expand([4, 6]), rn.clone().expand([4, 6]));
    same(
        r.clone().expand([4, 6]) + c.clone(),
        rn.clone().expand([4, 6]) + n.clone(),
    );
    let u_c: Tensor<C, 3> = c.clone().unfold(1, 3, 2);
    let u_n: Tensor<N, 3> = n.clone().unfold(1, 3, 2);
    same(u_c, u_n);
    same(c.clone().narrow(1, 2, 3), n.clone().narrow(1, 2, 3));
}

#[test]
fn cat_select_slice_assign_match_ndarray() {
    let (a, an) = floats([2, 3], 1, -3.0, 3.0);
    let (b, bn) = floats([4, 3], 2, -3.0, 3.0);
    let (e, en) = floats([0, 3], 3, -3.0, 3.0);
    same(
        Tensor::cat(vec![a.clone(), b.clone(), e], 0),
        Tensor::cat(vec![an.clone(), bn.clone(), en], 0),
    );
    same(
        Tensor::cat(vec![a.clone().transpose(), a.clone().transpose()], 1),
        Tensor::cat(vec![an.clone().transpose(), an.clone().transpose()], 1),
    );
    let idx = TensorData::new(vec![3i64, 0, 3, 1], [4]);
    let ic = Tensor::<C, 1, Int>::from_data(idx.clone(), &dev());
    let in_ = Tensor::<N, 1, Int>::from_data(idx, &NdArrayDevice::Cpu);
    same(
        b.clone().select(0, ic.clone()),
        bn.clone().select(0, in_.clone()),
    );
    same(
        b.clone().transpose().select(1, ic),
        bn.clone().transpose().select(1, in_),
    );
    let (v, vn) = floats([2, 2], 4, 10.0, 20.0);
    same(
        b.clone().slice_assign([1..3, 0..2], v.clone()),
        bn.clone().slice_assign([1..3, 0..2], vn.clone()),
    );
    // The original stays untouched (copy-on-write of shared memory).
    same(b, bn);
}

#[test]
fn masks_and_comparisons_match_ndarray() {
    let (a, an) = floats([3, 4], 1, -3.0, 3.0);
    let (b, bn) = floats([3, 4], 2, -3.0, 3.0);
    same_bool(a.clone().greater(b.clone()), an.clone().greater(bn.clone()));
    same_bool(
        a.clone().greater_equal(b.clone()),
        an.clone().greater_equal(bn.clone()),
    );
    same_bool(a.clone().lower(b.clone()), an.clone().lower(bn.clone()));
    same_bool(
        a.clone().lower_equal(b.clone()),
        an.clone().lower_equal(bn.clone()),
    );
    same_bool(a.clone().equal(a.clone()), an.clone().equal(an.clone()));
    same_bool(
        a.clone().not_equal(b.clone()),
        an.clone().not_equal(bn.clone()),
    );
    same_bool(a.clone().greater_elem(0.5), an.clone().greater_elem(0.5));
    same_bool(a.clone().lower_elem(0.5), an.clone().lower_elem(0.5));
    same_bool(
        a.clone().lower_equal_elem(0.5),
        an.clone().lower_equal_elem(0.5),
    );
    same_bool(
        a.clone().greater_equal_elem(0.5),
        an.clone().greater_equal_elem(0.5),
    );
    same_bool(a.clone().equal_elem(0.0), an.clone().equal_elem(0.0));
    let m = a.clone().greater(b.clone());
    let mn = an.clone().greater(bn.clone());
    same(
        a.clone().mask_where(m.clone(), b.clone()),
        an.clone().mask_where(mn.clone(), bn.clone()),
    );
    same(
        a.clone().mask_fill(m.clone(), -7.0),
        an.clone().mask_fill(mn.clone(), -7.0),
    );
    // Masks over a transposed view.
    same(
        a.clone().transpose().mask_fill(m.transpose(), 3.0),
        an.clone().transpose().mask_fill(mn.transpose(), 3.0),
    );
    same_bool(a.clone().is_nan(), an.clone().is_nan());
}

#[test]
fn half_precision_dtypes_match_ndarray_within_their_tolerance() {
    use burn_tensor::DType;
    let (a, an) = floats([3, 4], 1, -2.0, 2.0);
    let (b, bn) = floats([4, 2], 2, -2.0, 2.0);
    let tol = Tolerance::<f32>::rel_abs(2e-2, 2e-2);
    for dt in [DType::F16, DType::BF16] {
        let (ah, bh) = (a.clone().cast(dt), b.clone().cast(dt));
        assert_eq!(ah.dtype(), dt);
        close(
            (ah.clone() * 2.0 + ah.clone().exp()).cast(DType::F32),
            an.clone() * 2.0 + an.clone().exp(),
            tol,
        );
        close(
            ah.clone().matmul(bh).cast(DType::F32),
            an.clone().matmul(bn.clone()),
            tol,
        );
        close(ah.sum_dim(1).cast(DType::F32), an.clone().sum_dim(1), tol);
    }
}

#[test]
fn reading_a_float_tensor_round_trips_every_value() {
    let v = values(17, 4, -1e6, 1e6);
    let t = Tensor::<C, 1>::from_data(TensorData::new(v.clone(), [17]), &dev());
    assert_eq!(t.into_data().to_vec::<f32>().unwrap(), v);
    let e = Tensor::<C, 2>::from_data(TensorData::new(Vec::<f32>::new(), [0, 4]), &dev());
    assert_eq!(e.dims(), [0, 4]);
    assert!(e.into_data().to_vec::<f32>().unwrap().is_empty());
}

#[test]
fn zeros_ones_full_match_ndarray() {
    let d = dev();
    same(
        Tensor::<C, 2>::zeros([2, 3], &d),
        Tensor::<N, 2>::zeros([2, 3], &NdArrayDevice::Cpu),
    );
    same(
        Tensor::<C, 2>::ones([2, 3], &d),
        Tensor::<N, 2>::ones([2, 3], &NdArrayDevice::Cpu),
    );
    same(
        Tensor::<C, 2>::full([2, 3], 2.5, &d),
        Tensor::<N, 2>::full([2, 3], 2.5, &NdArrayDevice::Cpu),
    );
}

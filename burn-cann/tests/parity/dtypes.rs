//! Each stored dtype, empty tensors, conversions, transactions and the
//! module ops Burn composes from others.

use crate::common::*;
use burn_tensor::{DType, Transaction, module};

#[test]
fn i32_ints_compute_like_i64_ones() {
    let (a, an) = ints([3, 5], 21, -40, 40);
    let (b, bn) = ints([3, 5], 22, 1, 9);
    let (a32, b32) = (a.cast(DType::I32), b.cast(DType::I32));
    assert_eq!(a32.dtype(), DType::I32);
    same_int(
        (a32.clone() + b32.clone()) * 3,
        (an.clone() + bn.clone()) * 3,
    );
    same_int(a32.clone() / b32.clone(), an.clone() / bn.clone());
    same_int(a32.clone().sum_dim(1), an.clone().sum_dim(1));
    same_int(
        a32.clone().transpose().slice([1..4, 0..2]),
        an.clone().transpose().slice([1..4, 0..2]),
    );
    same_int(a32.clone().argmax(1), an.clone().argmax(1));
    same_bool(a32.greater(b32), an.greater(bn));
}

#[test]
fn f16_and_bf16_elementwise_ops_follow_f32_within_half_precision() {
    let tol = Tolerance::<f32>::rel_abs(2e-2, 2e-2);
    let (a, an) = floats([4, 6], 23, 0.5, 2.0);
    for dt in [DType::F16, DType::BF16] {
        let h = a.clone().cast(dt);
        close(h.clone().sqrt().cast(DType::F32), an.clone().sqrt(), tol);
        close(h.clone().log().cast(DType::F32), an.clone().log(), tol);
        close(
            (h.clone() / h.clone().sum_dim(1)).cast(DType::F32),
            an.clone() / an.clone().sum_dim(1),
            tol,
        );
        close(
            burn_tensor::activation::softmax(h.clone(), 1).cast(DType::F32),
            burn_tensor::activation::softmax(an.clone(), 1),
            tol,
        );
        close(
            h.clone().transpose().cast(DType::F32),
            an.clone().transpose(),
            tol,
        );
        same_bool(h.clone().greater_elem(1.0), an.clone().greater_elem(1.0));
    }
}

#[test]
fn empty_tensors_pass_through_every_kind_of_op() {
    let (e, en) = floats([0, 4], 1, -1.0, 1.0);
    same(e.clone().exp() + 1.0, en.clone().exp() + 1.0);
    same(
        e.clone().transpose().reshape([4, 0]),
        en.clone().transpose().reshape([4, 0]),
    );
    same(e.clone().sum_dim(0), en.clone().sum_dim(0));
    same(
        e.clone().slice([0..0, 1..3]),
        en.clone().slice([0..0, 1..3]),
    );
    same_bool(e.clone().lower_elem(0.0), en.clone().lower_elem(0.0));
    let (ie, ien) = ints([2, 0], 2, 0, 5);
    same_int(ie.clone() * 2, ien.clone() * 2);
    same(ie.float(), ien.float());
    let (be, ben) = bools([0, 3], 3);
    same_bool(be.clone().bool_not(), ben.clone().bool_not());
}

#[test]
fn conversions_between_kinds_match_ndarray() {
    let (a, an) = floats([3, 4], 24, -4.5, 4.5);
    // Float to int truncates toward zero.
    same_int(a.clone().int(), an.clone().int());
    same(a.clone().int().float(), an.clone().int().float());
    same_bool(
        a.clone().greater_elem(0.0).int().bool(),
        an.clone().greater_elem(0.0).int().bool(),
    );
    same(
        a.clone().greater_elem(0.0).float(),
        an.clone().greater_elem(0.0).float(),
    );
    // f32 -> f16 rounds to nearest, as the host's conversion does.
    let v = values(12, 24, -4.5, 4.5);
    let rounded: Vec<f32> = v.iter().map(|&x| half::f16::from_f32(x).to_f32()).collect();
    let got = Tensor::<C, 1>::from_data(TensorData::new(v, [12]), &dev())
        .cast(DType::F16)
        .cast(DType::F32);
    assert_eq!(got.into_data().to_vec::<f32>().unwrap(), rounded);
}

#[test]
fn a_transaction_reads_every_registered_tensor() {
    let (a, an) = floats([2, 3], 25, -1.0, 1.0);
    let (i, in_) = ints([4], 26, 0, 9);
    let (b, bn) = bools([5], 27);
    let got = Transaction::default()
        .register(a.clone() * 2.0)
        .register(i.clone())
        .register(b.clone())
        .execute();
    let want = Transaction::default()
        .register(an * 2.0)
        .register(in_)
        .register(bn)
        .execute();
    assert_eq!(got.len(), 3);
    got[0].assert_approx_eq::<f32>(&want[0], Tolerance::default());
    got[1]
        .clone()
        .convert::<i64>()
        .assert_eq(&want[1].clone().convert::<i64>(), true);
    got[2].assert_eq(&want[2], true);
}

#[test]
fn composed_module_ops_match_ndarray() {
    // conv1d (Burn lifts it to conv2d), embedding (select), repeat and
    // attention (Burn's composition on device ops).
    let (x, xn) = floats([2, 3, 10], 28, -1.0, 1.0);
    let (w, wn) = floats([4, 3, 3], 29, -1.0, 1.0);
    let o = burn_tensor::ops::ConvOptions::new([2], [1], [1], 1);
    same(
        module::conv1d(x.clone(), w, None, o.clone()),
        module::conv1d(xn.clone(), wn, None, o),
    );
    let (table, tn) = floats([7, 5], 30, -1.0, 1.0);
    let (idx, idxn) = ints([2, 4], 31, 0, 7);
    same(module::embedding(table, idx), module::embedding(tn, idxn));
    same(x.clone().repeat_dim(1, 3), xn.clone().repeat_dim(1, 3));
    same(x.clone().repeat(&[2, 1, 1]), xn.clone().repeat(&[2, 1, 1]));
}

//! Int and bool ops on `Cann` against `NdArray` on the same inputs.

use crate::common::*;

#[test]
fn int_arithmetic_matches_ndarray() {
    let (a, an) = ints([3, 4], 1, -50, 50);
    let (b, bn) = ints([3, 4], 2, 1, 20);
    let (r, rn) = ints([1, 4], 3, 1, 9);
    same_int(a.clone() + b.clone(), an.clone() + bn.clone());
    same_int(a.clone() - r.clone(), an.clone() - rn.clone());
    same_int(a.clone() * b.clone(), an.clone() * bn.clone());
    same_int(a.clone() + 7, an.clone() + 7);
    same_int(a.clone() - 7, an.clone() - 7);
    same_int(a.clone() * -3, an.clone() * -3);
    same_int(a.clone().neg(), an.clone().neg());
    same_int(a.clone().abs(), an.clone().abs());
    same_int(a.clone().clamp(-10, 10), an.clone().clamp(-10, 10));
    same_int(
        a.clone().transpose() + b.clone().transpose(),
        an.clone().transpose() + bn.clone().transpose(),
    );
}

#[test]
fn int_division_truncates_like_ndarray() {
    let (a, an) = ints([4, 5], 4, -100, 100);
    let (b, bn) = ints([4, 5], 5, 1, 13);
    same_int(a.clone() / b.clone(), an.clone() / bn.clone());
    same_int(a.clone() / 7, an.clone() / 7);
    // Beyond f32's exact integers.
    let big = TensorData::new(vec![123_456_789_012i64, -987_654_321_001, 16_777_217], [3]);
    let d = TensorData::new(vec![7i64, 3, 1], [3]);
    let c = Tensor::<C, 1, Int>::from_data(big.clone(), &dev())
        / Tensor::<C, 1, Int>::from_data(d.clone(), &dev());
    let n = Tensor::<N, 1, Int>::from_data(big, &NdArrayDevice::Cpu)
        / Tensor::<N, 1, Int>::from_data(d, &NdArrayDevice::Cpu);
    same_int(c, n);
}

#[test]
fn int_reductions_and_layout_match_ndarray() {
    let (a, an) = ints([3, 4, 2], 6, -50, 50);
    same_int(a.clone().sum(), an.clone().sum());
    same_int(a.clone().sum_dim(1), an.clone().sum_dim(1));
    same_int(a.clone().max_dim(2), an.clone().max_dim(2));
    same_int(a.clone().max(), an.clone().max());
    same_int(a.clone().argmax(1), an.clone().argmax(1));
    same_int(a.clone().cumsum(0), an.clone().cumsum(0));
    same_int(
        a.clone().permute([2, 0, 1]).reshape([8, 3]),
        an.clone().permute([2, 0, 1]).reshape([8, 3]),
    );
    same_int(
        a.clone().slice([0..2, 1..3]),
        an.clone().slice([0..2, 1..3]),
    );
    same_int(a.clone().flip([1]), an.clone().flip([1]));
    same_int(
        Tensor::cat(vec![a.clone(), a.clone()], 2),
        Tensor::cat(vec![an.clone(), an.clone()], 2),
    );
    same_int(a.clone().sort(1), an.clone().sort(1));
    let (z, zn) = ints([1, 4, 2], 7, 0, 5);
    same_int(
        z.clone().expand([3, 4, 2]) + a.clone(),
        zn.clone().expand([3, 4, 2]) + an.clone(),
    );
}

#[test]
fn int_comparisons_masks_and_casts_match_ndarray() {
    let (a, an) = ints([3, 4], 8, -5, 5);
    let (b, bn) = ints([3, 4], 9, -5, 5);
    same_bool(a.clone().equal(b.clone()), an.clone().equal(bn.clone()));
    same_bool(a.clone().greater(b.clone()), an.clone().greater(bn.clone()));
    same_bool(
        a.clone().lower_equal_elem(0),
        an.clone().lower_equal_elem(0),
    );
    same_bool(a.clone().not_equal_elem(2), an.clone().not_equal_elem(2));
    let m = a.clone().greater(b.clone());
    let mn = an.clone().greater(bn.clone());
    same_int(
        a.clone().mask_where(m.clone(), b.clone()),
        an.clone().mask_where(mn.clone(), bn.clone()),
    );
    same_int(a.clone().mask_fill(m, 99), an.clone().mask_fill(mn, 99));
    same(a.clone().float(), an.clone().float());
    same_int(a.clone().float().int(), an.clone().float().int());
    let i32c = a.clone().cast(burn_tensor::DType::I32);
    assert_eq!(i32c.dtype(), burn_tensor::DType::I32);
    same_int(i32c + 1, an.clone() + 1);
}

#[test]
fn int_bitwise_ops_match_ndarray() {
    let (a, an) = ints([2, 5], 10, 0, 1000);
    let (b, bn) = ints([2, 5], 11, 0, 1000);
    same_int(
        a.clone().bitwise_and(b.clone()),
        an.clone().bitwise_and(bn.clone()),
    );
    same_int(
        a.clone().bitwise_or(b.clone()),
        an.clone().bitwise_or(bn.clone()),
    );
    same_int(
        a.clone().bitwise_xor(b.clone()),
        an.clone().bitwise_xor(bn.clone()),
    );
    same_int(a.clone().bitwise_not(), an.clone().bitwise_not());
    same_int(
        a.clone().bitwise_and_scalar(0xF0),
        an.clone().bitwise_and_scalar(0xF0),
    );
    let (s, sn) = ints([2, 5], 12, 0, 5);
    same_int(
        a.clone().bitwise_left_shift(s.clone()),
        an.clone().bitwise_left_shift(sn.clone()),
    );
    same_int(
        a.clone().bitwise_right_shift(s),
        an.clone().bitwise_right_shift(sn),
    );
    same_int(
        a.clone().bitwise_left_shift_scalar(3),
        an.clone().bitwise_left_shift_scalar(3),
    );
}

#[test]
fn bool_ops_match_ndarray() {
    let (a, an) = bools([3, 4], 1);
    let (b, bn) = bools([3, 4], 2);
    same_bool(a.clone().bool_not(), an.clone().bool_not());
    same_bool(
        a.clone().bool_and(b.clone()),
        an.clone().bool_and(bn.clone()),
    );
    same_bool(a.clone().bool_or(b.clone()), an.clone().bool_or(bn.clone()));
    same_bool(
        a.clone().bool_xor(b.clone()),
        an.clone().bool_xor(bn.clone()),
    );
    same_bool(a.clone().equal(b.clone()), an.clone().equal(bn.clone()));
    same_bool(
        a.clone().transpose().reshape([12]).reshape([4, 3]),
        an.clone().transpose().reshape([12]).reshape([4, 3]),
    );
    same_bool(
        a.clone().slice([1..3, 0..2]),
        an.clone().slice([1..3, 0..2]),
    );
    same_bool(
        Tensor::cat(vec![a.clone(), b.clone()], 1),
        Tensor::cat(vec![an.clone(), bn.clone()], 1),
    );
    same_int(a.clone().int(), an.clone().int());
    same(a.clone().float(), an.clone().float());
    same_bool(a.clone().any_dim(1), an.clone().any_dim(1));
    same_bool(a.clone().all_dim(0), an.clone().all_dim(0));
    same_bool(a.clone().any(), an.clone().any());
    same_bool(a.clone().all(), an.clone().all());
    let d = dev();
    let n = NdArrayDevice::Cpu;
    same_bool(
        Tensor::<C, 2, Bool>::full([2, 3], true, &d),
        Tensor::<N, 2, Bool>::full([2, 3], true, &n),
    );
    same_bool(
        Tensor::<C, 2, Bool>::full([2, 3], false, &d),
        Tensor::<N, 2, Bool>::full([2, 3], false, &n),
    );
}

#[test]
fn an_unsupported_op_panics_naming_it() {
    let (a, _) = ints([2, 2], 1, 0, 5);
    let msg = panic_message(move || {
        let _ = a.clone().matmul(a);
    });
    assert!(msg.contains("`int_matmul` is not supported"), "{msg}");
}

//! The ops whose operators got cann-sim kernels after the backend was
//! written (Gather, ScatterAdd, IndexAdd, Prod, Cumprod, LinalgCross,
//! InplaceUniform/Normal): against `NdArray`, and the random ones by their
//! distribution.

use crate::common::*;
use burn_tensor::{Distribution, IndexingUpdateOp};

fn int_tensor<const D: usize>(
    v: Vec<i64>,
    shape: [usize; D],
) -> (Tensor<C, D, Int>, Tensor<N, D, Int>) {
    let data = TensorData::new(v, shape);
    (
        Tensor::from_data(data.clone(), &dev()),
        Tensor::from_data(data, &NdArrayDevice::Cpu),
    )
}

#[test]
fn gather_and_scatter_add_match_ndarray() {
    let (x, xn) = floats([3, 4], 11, -2.0, 2.0);
    let (i, in_) = int_tensor(vec![3, 0, 1, 1, 2, 2, 0, 3, 0], [3, 3]);
    same(
        x.clone().gather(1, i.clone()),
        xn.clone().gather(1, in_.clone()),
    );
    let (v, vn) = floats([3, 3], 12, -1.0, 1.0);
    close(
        x.scatter(1, i, v, IndexingUpdateOp::Add),
        xn.scatter(1, in_, vn, IndexingUpdateOp::Add),
        Tolerance::default(),
    );
}

#[test]
fn select_assign_adds_rows_like_ndarray() {
    let (x, xn) = floats([4, 3], 13, -2.0, 2.0);
    let (i, in_) = int_tensor(vec![2, 0, 2], [3]);
    let (v, vn) = floats([3, 3], 14, -1.0, 1.0);
    close(
        x.select_assign(0, i, v, IndexingUpdateOp::Add),
        xn.select_assign(0, in_, vn, IndexingUpdateOp::Add),
        Tolerance::default(),
    );
}

#[test]
fn prod_cumprod_and_cross_match_ndarray() {
    let (x, xn) = floats([2, 3], 15, 0.5, 1.5);
    close(x.clone().prod(), xn.clone().prod(), Tolerance::default());
    close(
        x.clone().cumprod(1),
        xn.clone().cumprod(1),
        Tolerance::default(),
    );
    let (y, yn) = floats([2, 3], 16, -1.0, 1.0);
    close(x.cross(y, 1), xn.cross(yn, 1), Tolerance::default());
}

#[test]
fn random_tensors_have_the_asked_distribution() {
    let n = 4096;
    let u = Tensor::<C, 1>::random([n], Distribution::Uniform(-1.0, 3.0), &dev());
    let v: Vec<f32> = u.into_data().to_vec().unwrap();
    assert!(
        v.iter().all(|&x| (-1.0..3.0).contains(&x)),
        "uniform out of range"
    );
    let mean = v.iter().sum::<f32>() / n as f32;
    assert!((mean - 1.0).abs() < 0.1, "uniform mean {mean}");
    let g = Tensor::<C, 1>::random([n], Distribution::Normal(2.0, 0.5), &dev());
    let w: Vec<f32> = g.into_data().to_vec().unwrap();
    let m = w.iter().sum::<f32>() / n as f32;
    let var = w.iter().map(|x| (x - m) * (x - m)).sum::<f32>() / n as f32;
    assert!(
        (m - 2.0).abs() < 0.05 && (var - 0.25).abs() < 0.03,
        "normal mean {m} var {var}"
    );
}

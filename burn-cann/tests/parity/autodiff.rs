//! `Autodiff<Cann>` gradients against `Autodiff<NdArray>`.

use crate::common::*;
use burn_autodiff::Autodiff;
use burn_tensor::activation::relu;

type AC = Autodiff<C>;
type AN = Autodiff<N>;

/// The parameters of a 4-6-3 MLP, from fixed values.
fn params<B: burn_tensor::backend::Backend>(device: &B::Device) -> [Tensor<B, 2>; 4] {
    let t = |shape: [usize; 2], seed| {
        Tensor::<B, 2>::from_data(
            TensorData::new(values(shape[0] * shape[1], seed, -1.0, 1.0), shape),
            device,
        )
        .require_grad()
    };
    [t([4, 6], 1), t([1, 6], 2), t([6, 3], 3), t([1, 3], 4)]
}

/// `mean(relu(x·w1 + b1)·w2 + b2)` and the four gradients.
fn grads<B: burn_tensor::backend::AutodiffBackend>(
    device: &B::Device,
) -> Vec<Tensor<B::InnerBackend, 2>> {
    let [w1, b1, w2, b2] = params::<B>(device);
    let x = Tensor::<B, 2>::from_data(TensorData::new(values(8 * 4, 9, -2.0, 2.0), [8, 4]), device);
    let h = relu(x.matmul(w1.clone()) + b1.clone());
    let y = h.matmul(w2.clone()) + b2.clone();
    let loss = y.mean();
    let g = loss.backward();
    [w1, b1, w2, b2]
        .iter()
        .map(|p| p.grad(&g).expect("a gradient for each parameter"))
        .collect()
}

#[test]
fn mlp_gradients_match_autodiff_ndarray() {
    let c = grads::<AC>(&dev());
    let n = grads::<AN>(&NdArrayDevice::Cpu);
    assert_eq!(c.len(), 4);
    for (gc, gn) in c.into_iter().zip(n) {
        same(gc, gn);
    }
}

#[test]
fn elementwise_chain_gradient_matches_autodiff_ndarray() {
    fn g<B: burn_tensor::backend::AutodiffBackend>(
        device: &B::Device,
    ) -> Tensor<B::InnerBackend, 2> {
        let x =
            Tensor::<B, 2>::from_data(TensorData::new(values(12, 3, -2.0, 2.0), [3, 4]), device)
                .require_grad();
        let y = x.clone().tanh() * (x.clone() * 0.5).exp() / (x.clone().powf_scalar(2.0) + 1.0);
        let loss = y.transpose().sum_dim(1).sum() - x.clone().mean_dim(1).sum();
        let grads = loss.backward();
        x.grad(&grads).unwrap()
    }
    same(g::<AC>(&dev()), g::<AN>(&NdArrayDevice::Cpu));
}

/// Burn builds the gradients of `log_softmax` and `max_dim` from
/// scatter-add (`aclnnScatterAdd`), which cann-sim now runs.
#[test]
fn log_softmax_and_max_dim_gradients_match_autodiff_ndarray() {
    fn g<B: burn_tensor::backend::AutodiffBackend>(
        device: &B::Device,
    ) -> Tensor<B::InnerBackend, 2> {
        let x =
            Tensor::<B, 2>::from_data(TensorData::new(values(12, 5, -2.0, 2.0), [3, 4]), device)
                .require_grad();
        let ls = burn_tensor::activation::log_softmax(x.clone(), 1);
        let loss = ls.slice([0..3, 1..2]).sum() + x.clone().max_dim(1).sum();
        let grads = loss.backward();
        x.grad(&grads).unwrap()
    }
    close(
        g::<AC>(&dev()),
        g::<AN>(&NdArrayDevice::Cpu),
        Tolerance::default(),
    );
}

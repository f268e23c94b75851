//! The ops whose cann-sim kernels came after the backend (int Min/ArgMin,
//! Cummin/Cummax, AdaptiveAvgPool2d, the pooling and upsampling backward
//! operators, InplaceBernoulli), and the convolution gradients Burn builds
//! from conv ops: against `NdArray` and `Autodiff<NdArray>`.

use crate::common::*;
use burn_autodiff::Autodiff;
use burn_tensor::backend::AutodiffBackend;
use burn_tensor::module;
use burn_tensor::ops::{ConvOptions, ConvTransposeOptions, InterpolateMode, InterpolateOptions};
use burn_tensor::{Distribution, backend::Backend};

type AC = Autodiff<C>;
type AN = Autodiff<N>;

#[test]
fn int_min_argmin_and_min_dim_match_ndarray_on_views() {
    let (x, xn) = ints([4, 5], 21, -50, 50);
    same_int(
        x.clone().min().reshape([1, 1]),
        xn.clone().min().reshape([1, 1]),
    );
    for dim in 0..2 {
        same_int(x.clone().min_dim(dim), xn.clone().min_dim(dim));
        same_int(x.clone().argmin(dim), xn.clone().argmin(dim));
        let (v, i) = x.clone().min_dim_with_indices(dim);
        let (vn, in_) = xn.clone().min_dim_with_indices(dim);
        same_int(v, vn);
        same_int(i, in_);
    }
    // A transposed (non-contiguous) view and a sliced one.
    same_int(
        x.clone().transpose().argmin(1),
        xn.clone().transpose().argmin(1),
    );
    same_int(
        x.clone().slice([1..4, 0..5]).min_dim(0),
        xn.clone().slice([1..4, 0..5]).min_dim(0),
    );
}

#[test]
fn float_argmin_picks_the_first_of_equal_minima_like_ndarray() {
    let data = TensorData::new(vec![3.0f32, 1.0, 1.0, 2.0, -4.0, 5.0, -4.0, 0.0], [2, 4]);
    let x = Tensor::<C, 2>::from_data(data.clone(), &dev());
    let xn = Tensor::<N, 2>::from_data(data, &NdArrayDevice::Cpu);
    same_int(x.clone().argmin(1), xn.clone().argmin(1));
    same_int(x.argmax(0), xn.argmax(0));
}

#[test]
fn cummin_and_cummax_match_ndarray_for_floats_and_ints_on_every_dim() {
    let (x, xn) = floats([3, 4, 5], 22, -3.0, 3.0);
    let (i, in_) = ints([3, 4, 5], 23, -9, 9);
    for dim in 0..3 {
        same(x.clone().cummin(dim), xn.clone().cummin(dim));
        same(x.clone().cummax(dim), xn.clone().cummax(dim));
        same_int(i.clone().cummin(dim), in_.clone().cummin(dim));
        same_int(i.clone().cummax(dim), in_.clone().cummax(dim));
    }
    // On a permuted view.
    same(
        x.clone().permute([2, 0, 1]).cummax(2),
        xn.clone().permute([2, 0, 1]).cummax(2),
    );
    // Empty along the scanned axis.
    let (e, en) = floats([2, 0], 24, -1.0, 1.0);
    same(e.cummin(1), en.cummin(1));
}

#[test]
fn adaptive_avg_pool2d_matches_ndarray_for_uneven_bins() {
    let (x, xn) = floats([2, 3, 7, 5], 25, -1.0, 1.0);
    for out in [[1, 1], [3, 2], [7, 5], [4, 3], [10, 6]] {
        same(
            module::adaptive_avg_pool2d(x.clone(), out),
            module::adaptive_avg_pool2d(xn.clone(), out),
        );
    }
    same(
        module::adaptive_avg_pool2d(x.clone().swap_dims(2, 3), [2, 3]),
        module::adaptive_avg_pool2d(xn.clone().swap_dims(2, 3), [2, 3]),
    );
}

#[test]
fn bilinear_and_bicubic_interpolation_match_ndarray_with_and_without_align_corners() {
    let (x, xn) = floats([2, 2, 4, 5], 26, -1.0, 1.0);
    for mode in [InterpolateMode::Bilinear, InterpolateMode::Bicubic] {
        for ac in [true, false] {
            let o = InterpolateOptions::new(mode.clone()).with_align_corners(ac);
            for size in [[8, 10], [3, 7], [4, 5]] {
                same(
                    module::interpolate(x.clone(), size, o.clone()),
                    module::interpolate(xn.clone(), size, o.clone()),
                );
            }
        }
    }
    // Nearest downsampling.
    let o = InterpolateOptions::new(InterpolateMode::Nearest);
    same(
        module::interpolate(x.clone(), [2, 3], o.clone()),
        module::interpolate(xn, [2, 3], o),
    );
}

/// The gradient of `sum(f(x) * weights)` for x, with fixed weights so that
/// each output element has its own upstream gradient.
fn input_grad<B: AutodiffBackend>(
    device: &B::Device,
    shape: [usize; 4],
    f: impl Fn(Tensor<B, 4>) -> Tensor<B, 4>,
) -> Tensor<B::InnerBackend, 4> {
    let n = shape.iter().product();
    let x = Tensor::<B, 4>::from_data(TensorData::new(values(n, 31, -1.0, 1.0), shape), device)
        .require_grad();
    let y = f(x.clone());
    let dims = y.dims();
    let m = dims.iter().product();
    let w = Tensor::<B, 4>::from_data(TensorData::new(values(m, 32, -1.0, 1.0), dims), device);
    let g = (y * w).sum().backward();
    x.grad(&g).expect("a gradient for x")
}

/// `input_grad` on `Autodiff<Cann>` and `Autodiff<NdArray>`, compared.
macro_rules! same_grad {
    ($shape:expr, |$x:ident| $body:expr) => {{
        fn f<B: Backend>($x: Tensor<B, 4>) -> Tensor<B, 4> {
            $body
        }
        close(
            input_grad::<AC>(&dev(), $shape, f::<AC>),
            input_grad::<AN>(&NdArrayDevice::Cpu, $shape, f::<AN>),
            Tolerance::default(),
        );
    }};
}

#[test]
fn max_pool2d_gradient_matches_autodiff_ndarray_with_padding_dilation_and_overlap() {
    same_grad!([2, 2, 7, 6], |x| module::max_pool2d(
        x,
        [2, 2],
        [2, 2],
        [0, 0],
        [1, 1],
        false
    ));
    same_grad!([1, 2, 7, 6], |x| module::max_pool2d(
        x,
        [3, 3],
        [1, 2],
        [1, 1],
        [1, 1],
        false
    ));
    same_grad!([1, 2, 8, 8], |x| module::max_pool2d(
        x,
        [2, 3],
        [2, 1],
        [1, 0],
        [2, 2],
        false
    ));
    same_grad!([1, 1, 7, 7], |x| module::max_pool2d(
        x,
        [2, 2],
        [2, 2],
        [0, 0],
        [1, 1],
        true
    ));
}

#[test]
fn avg_pool2d_gradient_matches_autodiff_ndarray_with_and_without_counted_padding() {
    same_grad!([2, 2, 6, 6], |x| module::avg_pool2d(
        x,
        [2, 2],
        [2, 2],
        [0, 0],
        true,
        false
    ));
    same_grad!([1, 2, 7, 5], |x| module::avg_pool2d(
        x,
        [3, 3],
        [1, 2],
        [1, 1],
        true,
        false
    ));
    same_grad!([1, 2, 7, 5], |x| module::avg_pool2d(
        x,
        [3, 3],
        [2, 1],
        [1, 1],
        false,
        false
    ));
}

#[test]
fn adaptive_avg_pool2d_gradient_matches_autodiff_ndarray() {
    same_grad!([2, 2, 7, 5], |x| module::adaptive_avg_pool2d(x, [3, 2]));
    same_grad!([1, 3, 4, 6], |x| module::adaptive_avg_pool2d(x, [1, 1]));
    same_grad!([1, 1, 3, 3], |x| module::adaptive_avg_pool2d(x, [5, 4]));
}

#[test]
fn nearest_interpolation_gradient_matches_autodiff_ndarray() {
    same_grad!([1, 2, 3, 4], |x| module::interpolate(
        x,
        [6, 8],
        InterpolateOptions::new(InterpolateMode::Nearest)
    ));
    same_grad!([1, 2, 6, 8], |x| module::interpolate(
        x,
        [3, 5],
        InterpolateOptions::new(InterpolateMode::Nearest)
    ));
}

/// The gradient `input_grad` computes for `interpolate(x, size, o)`, from
/// NdArray's forward interpolation (NdArray has no bilinear or bicubic
/// backward): interpolation is linear and acts on each plane alike, so the
/// gradient of plane p is `Σ_out w[p, out] · interpolate(e_j)[out]` over the
/// basis images `e_j` of one plane.
fn interpolation_adjoint(
    shape: [usize; 4],
    size: [usize; 2],
    o: InterpolateOptions,
) -> Tensor<N, 4> {
    let [n, c, h, w] = shape;
    let cpu = NdArrayDevice::Cpu;
    let basis = Tensor::<N, 2>::eye(h * w, &cpu).reshape([h * w, 1, h, w]);
    let images = module::interpolate(basis, size, o).reshape([h * w, size[0] * size[1]]);
    let m = n * c * size[0] * size[1];
    let weights = Tensor::<N, 2>::from_data(
        TensorData::new(values(m, 32, -1.0, 1.0), [n * c, size[0] * size[1]]),
        &cpu,
    );
    weights.matmul(images.transpose()).reshape(shape)
}

#[test]
fn bilinear_and_bicubic_gradients_match_the_adjoint_of_ndarrays_interpolation() {
    for (mode, shape, size, ac) in [
        (InterpolateMode::Bilinear, [2, 1, 3, 4], [7, 9], true),
        (InterpolateMode::Bilinear, [1, 2, 4, 4], [6, 3], false),
        (InterpolateMode::Bilinear, [1, 1, 5, 6], [2, 3], false),
        (InterpolateMode::Bicubic, [1, 1, 4, 5], [7, 8], true),
        (InterpolateMode::Bicubic, [1, 2, 5, 4], [8, 6], false),
    ] {
        let o = InterpolateOptions::new(mode.clone()).with_align_corners(ac);
        let oc = o.clone();
        let got = input_grad::<AC>(&dev(), shape, move |x| {
            module::interpolate(x, size, oc.clone())
        });
        close(
            got,
            interpolation_adjoint(shape, size, o),
            Tolerance::default(),
        );
    }
}

/// The gradients of x, weight and bias of `sum(conv(x, w, b) * weights)`.
fn conv_grads<B: AutodiffBackend>(
    device: &B::Device,
    transposed: bool,
    x_shape: [usize; 4],
    w_shape: [usize; 4],
    groups: usize,
) -> Vec<Tensor<B::InnerBackend, 4>> {
    let t = |shape: [usize; 4], seed| {
        Tensor::<B, 4>::from_data(
            TensorData::new(values(shape.iter().product(), seed, -1.0, 1.0), shape),
            device,
        )
        .require_grad()
    };
    let (x, w) = (t(x_shape, 41), t(w_shape, 42));
    let nb = if transposed {
        w_shape[1] * groups
    } else {
        w_shape[0]
    };
    let b = Tensor::<B, 1>::from_data(TensorData::new(values(nb, 43, -1.0, 1.0), [nb]), device)
        .require_grad();
    let y = if transposed {
        let o = ConvTransposeOptions::new([2, 1], [1, 0], [1, 0], [1, 2], groups);
        module::conv_transpose2d(x.clone(), w.clone(), Some(b.clone()), o)
    } else {
        let o = ConvOptions::new([2, 1], [1, 2], [1, 2], groups);
        module::conv2d(x.clone(), w.clone(), Some(b.clone()), o)
    };
    let dims = y.dims();
    let up = Tensor::<B, 4>::from_data(
        TensorData::new(values(dims.iter().product(), 44, -1.0, 1.0), dims),
        device,
    );
    let g = (y * up).sum().backward();
    vec![
        x.grad(&g).expect("x gradient"),
        w.grad(&g).expect("weight gradient"),
        b.grad(&g).expect("bias gradient").reshape([1, 1, 1, nb]),
    ]
}

/// `conv_grads` on both backends, for each `(x shape, weight shape, groups)`.
fn same_conv_grads(transposed: bool, cases: &[([usize; 4], [usize; 4], usize)]) {
    for &(xs, ws, groups) in cases {
        let c = conv_grads::<AC>(&dev(), transposed, xs, ws, groups);
        let n = conv_grads::<AN>(&NdArrayDevice::Cpu, transposed, xs, ws, groups);
        assert_eq!(c.len(), 3);
        for (gc, gn) in c.into_iter().zip(n) {
            close(gc, gn, Tolerance::default());
        }
    }
}

#[test]
fn conv2d_gradients_match_autodiff_ndarray_with_stride_padding_dilation_and_groups() {
    same_conv_grads(
        false,
        &[
            ([2, 4, 9, 8], [6, 4, 3, 3], 1),
            ([1, 4, 7, 9], [6, 2, 3, 2], 2),
        ],
    );
}

#[test]
fn conv_transpose2d_gradients_match_autodiff_ndarray() {
    same_conv_grads(
        true,
        &[
            ([1, 3, 5, 4], [3, 2, 3, 3], 1),
            ([2, 4, 4, 3], [4, 3, 2, 3], 2),
        ],
    );
}

#[test]
fn bernoulli_tensors_are_zeros_and_ones_with_the_asked_rate_and_repeat_under_a_seed() {
    let n = 8192;
    for p in [0.0, 0.3, 0.85, 1.0] {
        let b = Tensor::<C, 1>::random([n], Distribution::Bernoulli(p), &dev());
        let v: Vec<f32> = b.into_data().to_vec().unwrap();
        assert!(
            v.iter().all(|&x| x == 0.0 || x == 1.0),
            "bernoulli({p}) gave a value other than 0 or 1"
        );
        let rate = v.iter().sum::<f32>() / n as f32;
        // 4 standard deviations of the sample mean: sqrt(p(1-p)/n) <= 0.0055.
        assert!(
            (rate - p as f32).abs() < 0.022,
            "bernoulli({p}) rate {rate}"
        );
    }
}

#[test]
fn seeding_a_device_repeats_its_bernoulli_draws() {
    // Device 1: no other test draws there, so nothing advances its
    // generator between the seed and the draws.
    cann_sim::require_devices!(2);
    dev();
    let d = CannDevice::new(1);
    let draw = || {
        Tensor::<C, 1>::random([256], Distribution::Bernoulli(0.5), &d)
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    };
    C::seed(&d, 7);
    let a = draw();
    let b = draw();
    C::seed(&d, 7);
    assert_eq!(draw(), a, "reseeding repeats the draw");
    assert_ne!(a, b, "successive draws differ");
}

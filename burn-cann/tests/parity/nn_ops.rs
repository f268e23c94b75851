//! Activations and module ops on `Cann` against `NdArray`.

use crate::common::*;
use burn_tensor::activation as act;
use burn_tensor::module;
use burn_tensor::ops::{ConvOptions, ConvTransposeOptions};

#[test]
fn activations_match_ndarray() {
    let (x, xn) = floats([3, 5], 1, -3.0, 3.0);
    same(act::relu(x.clone()), act::relu(xn.clone()));
    same(act::gelu(x.clone()), act::gelu(xn.clone()));
    same(act::sigmoid(x.clone()), act::sigmoid(xn.clone()));
    same(act::tanh(x.clone()), act::tanh(xn.clone()));
    same(
        act::leaky_relu(x.clone(), 0.1),
        act::leaky_relu(xn.clone(), 0.1),
    );
    same(act::log_sigmoid(x.clone()), act::log_sigmoid(xn.clone()));
    same(act::softmax(x.clone(), 1), act::softmax(xn.clone(), 1));
    same(act::softmax(x.clone(), 0), act::softmax(xn.clone(), 0));
    same(
        act::log_softmax(x.clone(), 1),
        act::log_softmax(xn.clone(), 1),
    );
    same(act::silu(x.clone()), act::silu(xn.clone()));
    same(
        act::hard_sigmoid(x.clone(), 0.2, 0.5),
        act::hard_sigmoid(xn.clone(), 0.2, 0.5),
    );
    // On a transposed view.
    same(
        act::softmax(x.clone().transpose(), 1),
        act::softmax(xn.clone().transpose(), 1),
    );
}

#[test]
fn conv2d_matches_ndarray_with_stride_padding_dilation_groups_and_bias() {
    let (x, xn) = floats([2, 4, 9, 8], 1, -1.0, 1.0);
    for (opts, cin) in [
        (ConvOptions::new([1, 1], [0, 0], [1, 1], 1), 4),
        (ConvOptions::new([2, 1], [1, 2], [1, 1], 1), 4),
        (ConvOptions::new([1, 2], [1, 1], [2, 1], 2), 2),
    ] {
        let (w, wn) = floats([6, cin, 3, 3], 2, -1.0, 1.0);
        let (b, bn) = floats([6], 3, -1.0, 1.0);
        same(
            module::conv2d(x.clone(), w.clone(), Some(b), opts.clone()),
            module::conv2d(xn.clone(), wn.clone(), Some(bn), opts.clone()),
        );
        same(
            module::conv2d(x.clone(), w, None, opts.clone()),
            module::conv2d(xn.clone(), wn, None, opts),
        );
    }
}

#[test]
fn conv_transpose2d_matches_ndarray() {
    let (x, xn) = floats([1, 3, 5, 4], 4, -1.0, 1.0);
    let (w, wn) = floats([3, 2, 3, 3], 5, -1.0, 1.0);
    let opts = ConvTransposeOptions::new([2, 2], [1, 1], [1, 0], [1, 1], 1);
    same(
        module::conv_transpose2d(x, w, None, opts.clone()),
        module::conv_transpose2d(xn, wn, None, opts),
    );
}

#[test]
fn pooling_matches_ndarray() {
    let (x, xn) = floats([2, 3, 7, 6], 6, -1.0, 1.0);
    same(
        module::max_pool2d(x.clone(), [2, 2], [2, 2], [0, 0], [1, 1], false),
        module::max_pool2d(xn.clone(), [2, 2], [2, 2], [0, 0], [1, 1], false),
    );
    same(
        module::max_pool2d(x.clone(), [3, 3], [1, 2], [1, 1], [1, 1], false),
        module::max_pool2d(xn.clone(), [3, 3], [1, 2], [1, 1], [1, 1], false),
    );
    let (mc, ic) =
        module::max_pool2d_with_indices(x.clone(), [2, 2], [2, 2], [0, 0], [1, 1], false);
    let (mn, in_) =
        module::max_pool2d_with_indices(xn.clone(), [2, 2], [2, 2], [0, 0], [1, 1], false);
    same(mc, mn);
    same_int(ic, in_);
    same(
        module::avg_pool2d(x.clone(), [2, 2], [2, 2], [0, 0], true, false),
        module::avg_pool2d(xn.clone(), [2, 2], [2, 2], [0, 0], true, false),
    );
    same(
        module::avg_pool2d(x.clone(), [3, 3], [1, 1], [1, 1], false, false),
        module::avg_pool2d(xn.clone(), [3, 3], [1, 1], [1, 1], false, false),
    );
}

#[test]
fn nearest_interpolation_matches_ndarray() {
    use burn_tensor::ops::{InterpolateMode, InterpolateOptions};
    let (x, xn) = floats([1, 2, 3, 4], 7, -1.0, 1.0);
    let o = InterpolateOptions::new(InterpolateMode::Nearest);
    same(
        module::interpolate(x, [6, 8], o.clone()),
        module::interpolate(xn, [6, 8], o),
    );
}

//! The operators of a training step that the forward modules lack: the
//! gradients of GELU, log-softmax, layer and batch normalisation, 2-D
//! convolution and max pooling; layer and batch normalisation that keep
//! the statistics their backward needs; max pooling with the indices of
//! its maxima; the negative log-likelihood loss and its gradient.
//!
//! Each `op(stream, inputs.., out)` checks every shape first (an
//! [`Error::InvalidArgument`] naming the operator and the argument) and
//! writes preallocated outputs; each `op_new` allocates them. Operators
//! with several gradients (input, weight, bias) take a [`Grads`]: the
//! gradients to compute, the others are skipped (the operator's
//! `outputMask`).
//!
//! The backward of dropout is [`crate::random::dropout_apply`] of the
//! gradient with the forward's mask and probability.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, ops};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! // d/dx of mean(−log_softmax(z)[target]) for one sample.
//! let z = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0], &[1, 3])?;
//! let target = Tensor::from_host(&s, &[2i64], &[1])?;
//! let ones = Tensor::from_host(&s, &[1.0f32; 3], &[3])?;
//! let ls = ops::log_softmax_new(&s, &z, -1)?;
//! let (loss, total) = ops::nll_loss_new(&s, &ls, &target, &ones, ops::Reduction::Mean, -100)?;
//! let one = Tensor::from_host(&s, &[1.0f32], &[])?;
//! let dls = ops::nll_loss_backward_new(&s, &one, &ls, &target, &ones, ops::Reduction::Mean, -100, &total)?;
//! let dz = ops::log_softmax_backward_new(&s, &dls, &ls, -1)?;
//! let p: Vec<f32> = ops::softmax_new(&s, &z, -1)?.to_host_vec()?;
//! let dz = dz.to_host_vec()?;
//! assert!((dz[2] - (p[2] - 1.0)).abs() < 1e-6 && (dz[0] - p[0]).abs() < 1e-6);
//! assert!((loss.to_host_vec()?[0] + ls.to_host_vec()?[2]).abs() < 1e-6);
//! # Ok::<(), acl::Error>(())
//! ```

use super::nn::dims_i64;
use super::*;
use aclnn::{BoolArray, CubeMathType, IntArray};

/// The gradients an operator with an input, a weight and a bias computes:
/// those that are `Some` (each of the shape of what it is the gradient
/// of); `None` skips it.
#[derive(Debug)]
pub struct Grads<'a, T: Element> {
    /// The gradient of the input.
    pub input: Option<TensorViewMut<'a, T>>,
    /// The gradient of the weight.
    pub weight: Option<TensorViewMut<'a, T>>,
    /// The gradient of the bias.
    pub bias: Option<TensorViewMut<'a, T>>,
}

impl<'a, T: Element> Grads<'a, T> {
    /// Every gradient.
    pub fn all(
        input: TensorViewMut<'a, T>,
        weight: TensorViewMut<'a, T>,
        bias: TensorViewMut<'a, T>,
    ) -> Grads<'a, T> {
        Grads {
            input: Some(input),
            weight: Some(weight),
            bias: Some(bias),
        }
    }

    /// The weight's and the bias's gradients only (a first layer, whose
    /// input needs none).
    pub fn params(weight: TensorViewMut<'a, T>, bias: TensorViewMut<'a, T>) -> Grads<'a, T> {
        Grads {
            input: None,
            weight: Some(weight),
            bias: Some(bias),
        }
    }

    fn mask(&self) -> [bool; 3] {
        [
            self.input.is_some(),
            self.weight.is_some(),
            self.bias.is_some(),
        ]
    }

    /// Checks each gradient's shape against `want` (input, weight, bias)
    /// and that one is asked for; returns the `outputMask`.
    fn check(&self, function: &'static str, want: [&[usize]; 3]) -> Result<BoolArray> {
        let mask = self.mask();
        if mask == [false; 3] {
            return Err(Error::invalid(function, "no gradient is asked for"));
        }
        let names = ["grad input", "grad weight", "grad bias"];
        let outs = [&self.input, &self.weight, &self.bias];
        for ((name, out), want) in names.into_iter().zip(outs).zip(want) {
            if let Some(o) = out {
                expect_operand(function, name, o.shape(), want)?;
            }
        }
        BoolArray::new(&mask)
    }

    fn args(self) -> Result<[Option<aclnn::TensorArgMut<'a>>; 3]> {
        Ok([
            self.input.map(nn_mut).transpose()?,
            self.weight.map(nn_mut).transpose()?,
            self.bias.map(nn_mut).transpose()?,
        ])
    }
}

/// Checks that the operand `what` has the shape `want`.
fn expect_operand(function: &'static str, what: &str, got: &[usize], want: &[usize]) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("{what} has shape {got:?}; it must be {want:?}"),
        ))
    }
}

/// Gradients allocated by the `_new` forms: those asked for.
#[derive(Debug)]
pub struct GradTensors<T: Element> {
    /// The gradient of the input.
    pub input: Option<Tensor<T>>,
    /// The gradient of the weight.
    pub weight: Option<Tensor<T>>,
    /// The gradient of the bias.
    pub bias: Option<Tensor<T>>,
}

impl<T: Element> GradTensors<T> {
    fn zeros(stream: &Stream, mask: [bool; 3], shapes: [&[usize]; 3]) -> Result<GradTensors<T>> {
        let make = |on: bool, shape: &[usize]| -> Result<Option<Tensor<T>>> {
            on.then(|| Tensor::zeros(stream, shape)).transpose()
        };
        Ok(GradTensors {
            input: make(mask[0], shapes[0])?,
            weight: make(mask[1], shapes[1])?,
            bias: make(mask[2], shapes[2])?,
        })
    }

    /// The outputs of an operator, as views.
    pub fn views_mut(&mut self) -> Grads<'_, T> {
        Grads {
            input: self.input.as_mut().map(|t| t.view_mut()),
            weight: self.weight.as_mut().map(|t| t.view_mut()),
            bias: self.bias.as_mut().map(|t| t.view_mut()),
        }
    }
}

// ---------------------------------------------------------------------------
// Activations and the loss.
// ---------------------------------------------------------------------------

/// The gradient of the exact GELU ([`gelu`], [`gelu_v2`] without tanh):
/// `out = grad · (Φ(x) + x·φ(x))` (`aclnnGeluBackward`; `grad` and `x`
/// broadcast).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not broadcast or an `out`
/// of another shape; the aclnn status.
#[doc(alias = "aclnnGeluBackward")]
pub fn gelu_backward<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    super::elementwise::binary(
        "ops::gelu_backward",
        aclnn::gelu_backward,
        stream,
        grad,
        x,
        out,
    )
}

/// [`gelu_backward`] into a new tensor.
///
/// # Errors
///
/// As [`gelu_backward`].
pub fn gelu_backward_new<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
) -> Result<Tensor<T>> {
    super::elementwise::binary_new("ops::gelu_backward", aclnn::gelu_backward, stream, grad, x)
}

/// The gradient of [`log_softmax`] along `dim`, from its `output`: `out =
/// grad − exp(output) · Σ_dim grad` (`aclnnLogSoftmaxBackward`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for `grad` and `output` of different shapes,
/// a `dim` out of range or an `out` of another shape; the aclnn status.
#[doc(alias = "aclnnLogSoftmaxBackward")]
pub fn log_softmax_backward<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    output: &impl AsView<T>,
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::log_softmax_backward";
    let (g, y, out) = (grad.view(), output.view(), out.view_mut());
    if g.shape() != y.shape() {
        return Err(Error::invalid(
            F,
            format!(
                "grad has shape {:?}, output {:?}; they must be equal",
                g.shape(),
                y.shape()
            ),
        ));
    }
    axis(F, dim, y.shape().len())?;
    expect_shape(F, out.shape(), y.shape())?;
    aclnn::log_softmax_backward(stream, &nn(&g)?, &nn(&y)?, dim, &mut nn_mut(out)?)
}

/// [`log_softmax_backward`] into a new tensor.
///
/// # Errors
///
/// As [`log_softmax_backward`].
pub fn log_softmax_backward_new<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    output: &impl AsView<T>,
    dim: i64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, output.view().shape())?;
    log_softmax_backward(stream, grad, output, dim, &mut out)?;
    Ok(out)
}

/// How a loss combines the losses of the samples (aclnn's `reduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// One loss per sample (`0`).
    None,
    /// Their weighted mean (`1`): divided by the total weight of the
    /// targets.
    Mean,
    /// Their sum (`2`).
    Sum,
}

impl Reduction {
    fn code(self) -> i64 {
        match self {
            Reduction::None => 0,
            Reduction::Mean => 1,
            Reduction::Sum => 2,
        }
    }
}

/// The shape of a loss of `reduction` over `n` samples (`batched`: `x` is
/// `[N, C]`, not `[C]`).
fn loss_shape(reduction: Reduction, n: usize, batched: bool) -> Vec<usize> {
    if reduction == Reduction::None && batched {
        vec![n]
    } else {
        vec![]
    }
}

/// Checks the operands of the NLL loss; returns (N, batched).
fn nll_shapes(
    function: &'static str,
    x: &[usize],
    target: &[usize],
    weight: &[usize],
) -> Result<(usize, bool)> {
    let (n, c, batched) = match *x {
        [n, c] => (n, c, true),
        [c] => (1, c, false),
        _ => {
            return Err(Error::invalid(
                function,
                format!("x has shape {x:?}; it must be [N, C] or [C]"),
            ));
        }
    };
    let want_t: &[usize] = if batched { &[n] } else { &[] };
    if target != want_t {
        return Err(Error::invalid(
            function,
            format!("target has shape {target:?}; x {x:?} needs {want_t:?}"),
        ));
    }
    if weight != [c] {
        return Err(Error::invalid(
            function,
            format!("weight has shape {weight:?}; x {x:?} needs [{c}]"),
        ));
    }
    Ok((n, batched))
}

fn one_element(function: &'static str, what: &str, shape: &[usize]) -> Result<()> {
    if shape.iter().product::<usize>() == 1 && shape.len() <= 1 {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("{what} has shape {shape:?}; it must hold one element ([] or [1])"),
        ))
    }
}

/// The negative log-likelihood loss of log-probabilities `x` (`[N, C]` or
/// `[C]`) against class indices `target` (`[N]` or `[]`; `i64`, `i32` or
/// `u8`), each class weighted by `weight` `[C]` (ones for the plain loss):
/// `l_n = −weight[t_n] · x[n, t_n]`, 0 for samples whose target is
/// `ignore_index` (torch's default −100). `out` is `[N]` for
/// [`Reduction::None`] with a batch, else one element; `total_weight` (one
/// element) receives `Σ weight[t_n]`, which [`nll_loss_backward`] takes
/// (`aclnnNLLLoss`). With [`log_softmax`] before it, this is the
/// cross-entropy loss.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not fit; the aclnn status.
/// A target out of `[0, C)` fails the kernel, reported by the next
/// synchronisation.
#[doc(alias = "aclnnNLLLoss")]
#[allow(clippy::too_many_arguments)]
pub fn nll_loss<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    target: &impl AsView<I>,
    weight: &impl AsView<T>,
    reduction: Reduction,
    ignore_index: i64,
    out: &mut impl AsViewMut<T>,
    total_weight: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::nll_loss";
    let (x, t, w) = (x.view(), target.view(), weight.view());
    let (out, tw) = (out.view_mut(), total_weight.view_mut());
    let (n, batched) = nll_shapes(F, x.shape(), t.shape(), w.shape())?;
    let want = loss_shape(reduction, n, batched);
    if want.is_empty() {
        one_element(F, "out", out.shape())?;
    } else {
        expect_shape(F, out.shape(), &want)?;
    }
    one_element(F, "total_weight", tw.shape())?;
    aclnn::nll_loss(
        stream,
        &nn(&x)?,
        &nn(&t)?,
        &nn(&w)?,
        reduction.code(),
        ignore_index,
        &mut nn_mut(out)?,
        &mut nn_mut(tw)?,
    )
}

/// [`nll_loss`] into new tensors: the loss (`[N]` or `[]`) and the total
/// weight (`[]`).
///
/// # Errors
///
/// As [`nll_loss`].
pub fn nll_loss_new<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    target: &impl AsView<I>,
    weight: &impl AsView<T>,
    reduction: Reduction,
    ignore_index: i64,
) -> Result<(Tensor<T>, Tensor<T>)> {
    let (xv, tv, wv) = (x.view(), target.view(), weight.view());
    let (n, batched) = nll_shapes("ops::nll_loss", xv.shape(), tv.shape(), wv.shape())?;
    let mut out = Tensor::zeros(stream, &loss_shape(reduction, n, batched))?;
    let mut total = Tensor::zeros(stream, &[])?;
    nll_loss(
        stream,
        x,
        target,
        weight,
        reduction,
        ignore_index,
        &mut out,
        &mut total,
    )?;
    Ok((out, total))
}

/// The gradient of [`nll_loss`] with respect to `x`: `out[n, t_n] =
/// −grad · weight[t_n]` (divided by `total_weight` for
/// [`Reduction::Mean`]), 0 elsewhere (`aclnnNLLLossBackward`). `grad` has
/// the loss's shape (`[N]` for [`Reduction::None`] with a batch, else one
/// element: a loss scale goes here).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not fit; the aclnn status.
#[doc(alias = "aclnnNLLLossBackward")]
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_backward<T: Element, I: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    target: &impl AsView<I>,
    weight: &impl AsView<T>,
    reduction: Reduction,
    ignore_index: i64,
    total_weight: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::nll_loss_backward";
    let (g, x, t, w, tw) = (
        grad.view(),
        x.view(),
        target.view(),
        weight.view(),
        total_weight.view(),
    );
    let out = out.view_mut();
    let (n, batched) = nll_shapes(F, x.shape(), t.shape(), w.shape())?;
    let want = loss_shape(reduction, n, batched);
    if want.is_empty() {
        one_element(F, "grad", g.shape())?;
    } else if g.shape() != want {
        return Err(Error::invalid(
            F,
            format!("grad has shape {:?}; the loss has {want:?}", g.shape()),
        ));
    }
    one_element(F, "total_weight", tw.shape())?;
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::nll_loss_backward(
        stream,
        &nn(&g)?,
        &nn(&x)?,
        &nn(&t)?,
        &nn(&w)?,
        reduction.code(),
        ignore_index,
        &nn(&tw)?,
        &mut nn_mut(out)?,
    )
}

/// [`nll_loss_backward`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`nll_loss_backward`].
#[allow(clippy::too_many_arguments)]
pub fn nll_loss_backward_new<T: Element, I: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    target: &impl AsView<I>,
    weight: &impl AsView<T>,
    reduction: Reduction,
    ignore_index: i64,
    total_weight: &impl AsView<T>,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    nll_loss_backward(
        stream,
        grad,
        x,
        target,
        weight,
        reduction,
        ignore_index,
        total_weight,
        &mut out,
    )?;
    Ok(out)
}

// ---------------------------------------------------------------------------
// Normalisation.
// ---------------------------------------------------------------------------

/// The shape of the statistics of a layer norm over the last `normalized`
/// dimensions of `x`: `x`'s leading dimensions, then 1s.
///
/// ```
/// assert_eq!(acl::ops::layer_norm_stats_shape("ln", &[8, 4, 16], 1)?, [8, 4, 1]);
/// # Ok::<(), acl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` for `normalized` 0 or above
/// `x`'s rank.
pub fn layer_norm_stats_shape(
    function: &'static str,
    x: &[usize],
    normalized: usize,
) -> Result<Vec<usize>> {
    let r = x.len();
    if normalized == 0 || normalized > r {
        return Err(Error::invalid(
            function,
            format!("normalized = {normalized} dimensions of a {r}-dimensional x"),
        ));
    }
    let mut s = x[..r - normalized].to_vec();
    s.resize(r, 1);
    Ok(s)
}

/// [`layer_norm`] that also writes the mean and `1/σ` of each normalised
/// row (shape [`layer_norm_stats_shape`]; any float type, f32 keeps them
/// exact for an f16 `x`), which [`layer_norm_backward`] takes
/// (`aclnnLayerNorm` with `meanOut` and `rstdOut`).
///
/// # Errors
///
/// As [`layer_norm`]; a `mean` or `rstd` of another shape.
#[doc(alias = "aclnnLayerNorm")]
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_train<T: Element, S: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    normalized: usize,
    weight: Option<&TensorView<'_, T>>,
    bias: Option<&TensorView<'_, T>>,
    eps: f64,
    out: &mut impl AsViewMut<T>,
    mean: &mut impl AsViewMut<S>,
    rstd: &mut impl AsViewMut<S>,
) -> Result<()> {
    const F: &str = "ops::layer_norm_train";
    let (x, out, mean, rstd) = (x.view(), out.view_mut(), mean.view_mut(), rstd.view_mut());
    let stats = layer_norm_stats_shape(F, x.shape(), normalized)?;
    let tail = &x.shape()[x.shape().len() - normalized..];
    norm_params(F, tail, [("weight", weight), ("bias", bias)])?;
    expect_shape(F, out.shape(), x.shape())?;
    for (what, t) in [("mean", mean.shape()), ("rstd", rstd.shape())] {
        expect_operand(F, what, t, &stats)?;
    }
    let shape = IntArray::new(&dims_i64(F, tail)?)?;
    let (w, b) = (weight.map(nn).transpose()?, bias.map(nn).transpose()?);
    aclnn::layer_norm(
        stream,
        &nn(&x)?,
        &shape,
        w.as_ref(),
        b.as_ref(),
        eps,
        &mut nn_mut(out)?,
        Some(&mut nn_mut(mean)?),
        Some(&mut nn_mut(rstd)?),
    )
}

/// Checks optional per-feature parameters against the shape they scale.
fn norm_params<T: Element>(
    function: &'static str,
    want: &[usize],
    params: [(&str, Option<&TensorView<'_, T>>); 2],
) -> Result<()> {
    for (what, t) in params {
        if let Some(t) = t {
            expect_operand(function, what, t.shape(), want)?;
        }
    }
    Ok(())
}

/// The gradients of a layer norm over the last `normalized` dimensions of
/// `x`, from the `mean` and `rstd` of [`layer_norm_train`] and the forward's
/// `weight` (none: ones): `grads.input` `x`'s shape, `grads.weight` and
/// `grads.bias` the normalised dimensions (`aclnnLayerNormBackward`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a `grad` of another shape than `x`,
/// statistics or a weight that do not fit, a gradient of the wrong shape
/// or none asked for; the aclnn status.
#[doc(alias = "aclnnLayerNormBackward")]
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward<T: Element, S: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    normalized: usize,
    mean: &impl AsView<S>,
    rstd: &impl AsView<S>,
    weight: Option<&TensorView<'_, T>>,
    grads: Grads<'_, T>,
) -> Result<()> {
    const F: &str = "ops::layer_norm_backward";
    let (g, x, mean, rstd) = (grad.view(), x.view(), mean.view(), rstd.view());
    let stats = layer_norm_stats_shape(F, x.shape(), normalized)?;
    if g.shape() != x.shape() {
        return Err(Error::invalid(
            F,
            format!("grad has shape {:?}, x {:?}", g.shape(), x.shape()),
        ));
    }
    for (what, t) in [("mean", mean.shape()), ("rstd", rstd.shape())] {
        expect_operand(F, what, t, &stats)?;
    }
    let tail = &x.shape()[x.shape().len() - normalized..];
    norm_params(F, tail, [("weight", weight), ("bias", None)])?;
    let mask = grads.check(F, [x.shape(), tail, tail])?;
    let shape = IntArray::new(&dims_i64(F, tail)?)?;
    let w = weight.map(nn).transpose()?;
    let [mut gi, mut gw, mut gb] = grads.args()?;
    aclnn::layer_norm_backward(
        stream,
        &nn(&g)?,
        &nn(&x)?,
        &shape,
        &nn(&mean)?,
        &nn(&rstd)?,
        w.as_ref(),
        None,
        &mask,
        gi.as_mut(),
        gw.as_mut(),
        gb.as_mut(),
    )
}

/// The channels of a batch-norm input `[N, C, ...]`.
fn bn_channels(function: &'static str, x: &[usize]) -> Result<usize> {
    if x.len() < 2 {
        return Err(Error::invalid(
            function,
            format!("x has shape {x:?}; it must be [N, C, ...]"),
        ));
    }
    Ok(x[1])
}

/// Batch normalisation in training (`aclnnBatchNorm`, `training` true) of
/// `x` `[N, C, ...]` per channel with the batch's statistics, scaled by
/// `weight` and shifted by `bias` (`[C]` each, none: 1 and 0). Updates the
/// running statistics when given: `running = (1 − momentum)·running +
/// momentum·batch` (the variance unbiased). `save_mean` and `save_invstd`
/// (`[C]`) receive what [`batch_norm_backward`] takes back; on Atlas A2/A3
/// `save_invstd` holds the batch variance (the operator's page), so pass it
/// on unchanged rather than reading it.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an `x` of rank below 2, a parameter,
/// statistic or `out` of another shape; the aclnn status.
#[doc(alias = "aclnnBatchNorm")]
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_train<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    weight: Option<&TensorView<'_, T>>,
    bias: Option<&TensorView<'_, T>>,
    running: Option<(TensorViewMut<'_, T>, TensorViewMut<'_, T>)>,
    momentum: f64,
    eps: f64,
    out: &mut impl AsViewMut<T>,
    save_mean: &mut impl AsViewMut<T>,
    save_invstd: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::batch_norm_train";
    let (x, out, sm, si) = (
        x.view(),
        out.view_mut(),
        save_mean.view_mut(),
        save_invstd.view_mut(),
    );
    let c = bn_channels(F, x.shape())?;
    norm_params(F, &[c], [("weight", weight), ("bias", bias)])?;
    expect_shape(F, out.shape(), x.shape())?;
    for (what, t) in [("save_mean", sm.shape()), ("save_invstd", si.shape())] {
        expect_operand(F, what, t, &[c])?;
    }
    let running = match running {
        Some((m, v)) => {
            for (what, t) in [("running mean", m.shape()), ("running var", v.shape())] {
                expect_operand(F, what, t, &[c])?;
            }
            Some((nn_mut(m)?, nn_mut(v)?))
        }
        None => None,
    };
    let (mut rm, mut rv) = match running {
        Some((m, v)) => (Some(m), Some(v)),
        None => (None, None),
    };
    let (w, b) = (weight.map(nn).transpose()?, bias.map(nn).transpose()?);
    aclnn::batch_norm(
        stream,
        &nn(&x)?,
        w.as_ref(),
        b.as_ref(),
        rm.as_mut(),
        rv.as_mut(),
        true,
        momentum,
        eps,
        &mut nn_mut(out)?,
        Some(&mut nn_mut(sm)?),
        Some(&mut nn_mut(si)?),
    )
}

/// Batch normalisation in inference (`aclnnBatchNorm`, `training` false):
/// `x` `[N, C, ...]` normalised per channel by the running statistics.
/// The operator takes them as in-out tensors (the training form updates
/// them); in inference it only reads them.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an `x` of rank below 2, a parameter,
/// statistic or `out` of another shape; the aclnn status.
#[doc(alias = "aclnnBatchNorm")]
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_eval<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    weight: Option<&TensorView<'_, T>>,
    bias: Option<&TensorView<'_, T>>,
    running_mean: &mut impl AsViewMut<T>,
    running_var: &mut impl AsViewMut<T>,
    eps: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::batch_norm_eval";
    let (x, rm, rv, out) = (
        x.view(),
        running_mean.view_mut(),
        running_var.view_mut(),
        out.view_mut(),
    );
    let c = bn_channels(F, x.shape())?;
    norm_params(F, &[c], [("weight", weight), ("bias", bias)])?;
    for (what, t) in [("running mean", rm.shape()), ("running var", rv.shape())] {
        expect_operand(F, what, t, &[c])?;
    }
    expect_shape(F, out.shape(), x.shape())?;
    let (w, b) = (weight.map(nn).transpose()?, bias.map(nn).transpose()?);
    let (mut rm, mut rv) = (nn_mut(rm)?, nn_mut(rv)?);
    aclnn::batch_norm(
        stream,
        &nn(&x)?,
        w.as_ref(),
        b.as_ref(),
        Some(&mut rm),
        Some(&mut rv),
        false,
        0.0,
        eps,
        &mut nn_mut(out)?,
        None,
        None,
    )
}

/// The gradients of [`batch_norm_train`], from the `save_mean` and
/// `save_invstd` it wrote and its `weight` (none: ones): `grads.input` of
/// `x`'s shape, `grads.weight` and `grads.bias` `[C]`
/// (`aclnnBatchNormBackward`, `training` true).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a `grad` of another shape than `x`,
/// statistics or a weight that are not `[C]`, a gradient of the wrong
/// shape or none asked for; the aclnn status.
#[doc(alias = "aclnnBatchNormBackward")]
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    weight: Option<&TensorView<'_, T>>,
    save_mean: &impl AsView<T>,
    save_invstd: &impl AsView<T>,
    eps: f64,
    grads: Grads<'_, T>,
) -> Result<()> {
    const F: &str = "ops::batch_norm_backward";
    let (g, x, sm, si) = (grad.view(), x.view(), save_mean.view(), save_invstd.view());
    let c = bn_channels(F, x.shape())?;
    if g.shape() != x.shape() {
        return Err(Error::invalid(
            F,
            format!("grad has shape {:?}, x {:?}", g.shape(), x.shape()),
        ));
    }
    norm_params(F, &[c], [("weight", weight), ("save_mean", Some(&sm))])?;
    norm_params(F, &[c], [("save_invstd", Some(&si)), ("bias", None)])?;
    let mask = grads.check(F, [x.shape(), &[c], &[c]])?;
    let w = weight.map(nn).transpose()?;
    let [mut gi, mut gw, mut gb] = grads.args()?;
    aclnn::batch_norm_backward(
        stream,
        &nn(&g)?,
        &nn(&x)?,
        w.as_ref(),
        None,
        None,
        Some(&nn(&sm)?),
        Some(&nn(&si)?),
        true,
        eps,
        &mask,
        gi.as_mut(),
        gw.as_mut(),
        gb.as_mut(),
    )
}

// ---------------------------------------------------------------------------
// Convolution and pooling.
// ---------------------------------------------------------------------------

/// The gradients of [`conv2d`] (`aclnnConvolutionBackward`): `grad` is the
/// gradient of its output ([`conv2d_shape`]); `grads.input` has `x`'s
/// shape, `grads.weight` the weight's, `grads.bias` `[O]`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not fit the convolution, a
/// `grad` of another shape than its output, a gradient of the wrong shape
/// or none asked for; the aclnn status.
#[doc(alias = "aclnnConvolutionBackward")]
pub fn conv2d_backward<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    weight: &impl AsView<T>,
    window: Window2d,
    groups: usize,
    grads: Grads<'_, T>,
) -> Result<()> {
    const F: &str = "ops::conv2d_backward";
    let (g, x, w) = (grad.view(), x.view(), weight.view());
    let want = conv2d_shape(F, x.shape(), w.shape(), window, groups)?;
    if g.shape() != want.as_slice() {
        return Err(Error::invalid(
            F,
            format!(
                "grad has shape {:?}; the convolution's output has {want:?}",
                g.shape()
            ),
        ));
    }
    let o = w.shape()[0];
    let mask = grads.check(F, [x.shape(), w.shape(), &[o]])?;
    let [_, st, pd, dl] = window.arrays(F)?;
    let zero = IntArray::new(&[0, 0])?;
    let bias_sizes = IntArray::new(&dims_i64(F, &[o])?)?;
    let groups = i32::try_from(groups)
        .map_err(|_| Error::invalid(F, format!("groups = {groups} is above i32::MAX")))?;
    let [mut gi, mut gw, mut gb] = grads.args()?;
    aclnn::convolution_backward(
        stream,
        &nn(&g)?,
        &nn(&x)?,
        &nn(&w)?,
        &bias_sizes,
        &st,
        &pd,
        &dl,
        false,
        &zero,
        groups,
        &mask,
        CubeMathType::KeepDtype,
        gi.as_mut(),
        gw.as_mut(),
        gb.as_mut(),
    )
}

/// [`conv2d_backward`] into new tensors: the gradients `mask` selects
/// (input, weight, bias).
///
/// # Errors
///
/// As [`conv2d_backward`].
pub fn conv2d_backward_new<T: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    weight: &impl AsView<T>,
    window: Window2d,
    groups: usize,
    mask: [bool; 3],
) -> Result<GradTensors<T>> {
    let (xs, ws) = (x.view().shape().to_vec(), weight.view().shape().to_vec());
    // conv2d_backward's own check, before allocating.
    conv2d_shape("ops::conv2d_backward", &xs, &ws, window, groups)?;
    let o = ws[0];
    let mut out = GradTensors::zeros(stream, mask, [&xs, &ws, &[o]])?;
    conv2d_backward(stream, grad, x, weight, window, groups, out.views_mut())?;
    Ok(out)
}

/// [`max_pool2d`] that also writes, for each maximum, its flat index in
/// its `[H, W]` plane (`i32` or `i64`), which [`max_pool2d_backward`]
/// routes the gradient through (`aclnnMaxPool2dWithIndices`).
///
/// Take `i32` indices for training: the backward of the Atlas A2/A3 parts
/// takes int32 indices only (hicann/ops-nn
/// `pooling/max_pool3d_grad_with_argmax/docs/aclnnMaxPool2dWithIndicesBackward.md`),
/// while this forward writes either.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a window that does not fit, or an `out`
/// or `indices` of another shape than [`pool2d_shape`]; the aclnn status.
#[doc(alias = "aclnnMaxPool2dWithIndices")]
pub fn max_pool2d_with_indices<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
    out: &mut impl AsViewMut<T>,
    indices: &mut impl AsViewMut<I>,
) -> Result<()> {
    const F: &str = "ops::max_pool2d_with_indices";
    let (x, out, idx) = (x.view(), out.view_mut(), indices.view_mut());
    let want = pool2d_shape(F, x.shape(), window)?;
    expect_shape(F, out.shape(), &want)?;
    expect_operand(F, "indices", idx.shape(), &want)?;
    let [k, st, pd, dl] = window.arrays(F)?;
    aclnn::max_pool2d_with_indices(
        stream,
        &nn(&x)?,
        &k,
        &st,
        &pd,
        &dl,
        false,
        &mut nn_mut(out)?,
        &mut nn_mut(idx)?,
    )
}

/// [`max_pool2d_with_indices`] into new tensors: the maxima and their
/// indices.
///
/// # Errors
///
/// As [`max_pool2d_with_indices`].
pub fn max_pool2d_with_indices_new<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
) -> Result<(Tensor<T>, Tensor<I>)> {
    let shape = pool2d_shape("ops::max_pool2d_with_indices", x.view().shape(), window)?;
    let (mut out, mut idx) = (
        Tensor::zeros(stream, &shape)?,
        Tensor::zeros(stream, &shape)?,
    );
    max_pool2d_with_indices(stream, x, window, &mut out, &mut idx)?;
    Ok((out, idx))
}

/// The gradient of [`max_pool2d_with_indices`] with respect to its input
/// `x`: each element of `grad` added at the position its index names, 0
/// elsewhere (`aclnnMaxPool2dWithIndicesBackward`).
///
/// On the Atlas A2/A3 parts the operator takes float32 `grad`/`x` and
/// int32 `indices` only (its page's A2/A3 block; the Ascend 950 parts also
/// take float16/bfloat16 and int64).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a window that does not fit, a `grad` or
/// `indices` of another shape than the pooling's output, or an `out` of
/// another shape than `x`; the aclnn status (161002 for a type the SoC's
/// list does not take, such as int64 `indices` on Atlas A2/A3).
#[doc(alias = "aclnnMaxPool2dWithIndicesBackward")]
pub fn max_pool2d_backward<T: Element, I: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    indices: &impl AsView<I>,
    window: Window2d,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::max_pool2d_backward";
    let (g, x, idx, out) = (grad.view(), x.view(), indices.view(), out.view_mut());
    let want = pool2d_shape(F, x.shape(), window)?;
    for (what, t) in [("grad", g.shape()), ("indices", idx.shape())] {
        if t != want.as_slice() {
            return Err(Error::invalid(
                F,
                format!("{what} has shape {t:?}; the pooling's output has {want:?}"),
            ));
        }
    }
    expect_shape(F, out.shape(), x.shape())?;
    let [k, st, pd, dl] = window.arrays(F)?;
    aclnn::max_pool2d_with_indices_backward(
        stream,
        &nn(&g)?,
        &nn(&x)?,
        &nn(&idx)?,
        &k,
        &st,
        &pd,
        &dl,
        false,
        &mut nn_mut(out)?,
    )
}

/// [`max_pool2d_backward`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`max_pool2d_backward`].
pub fn max_pool2d_backward_new<T: Element, I: Element>(
    stream: &Stream,
    grad: &impl AsView<T>,
    x: &impl AsView<T>,
    indices: &impl AsView<I>,
    window: Window2d,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    max_pool2d_backward(stream, grad, x, indices, window, &mut out)?;
    Ok(out)
}

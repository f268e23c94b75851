//! Elementwise operators: binary (broadcasting) and unary, `relu_grad`,
//! `cast`, and their in-place forms.

use super::*;

type Binary = fn(
    &Stream,
    &aclnn::TensorArg<'_>,
    &aclnn::TensorArg<'_>,
    &mut aclnn::TensorArgMut<'_>,
) -> Result<()>;
type Unary = fn(&Stream, &aclnn::TensorArg<'_>, &mut aclnn::TensorArgMut<'_>) -> Result<()>;

/// Checks that `out` is the broadcast shape of `a` and `b`, then runs `op`.
pub(super) fn binary<T: Element>(
    function: &'static str,
    op: Binary,
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (a, b, out) = (a.view(), b.view(), out.view_mut());
    expect_broadcast(function, a.shape(), b.shape(), out.shape())?;
    op(stream, &nn(&a)?, &nn(&b)?, &mut nn_mut(out)?)
}

/// Checks that `out` has `x`'s shape, then runs `op`.
pub(super) fn unary<T: Element>(
    function: &'static str,
    op: Unary,
    stream: &Stream,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    expect_shape(function, out.shape(), x.shape())?;
    op(stream, &nn(&x)?, &mut nn_mut(out)?)
}

macro_rules! binary_ops {
    ($($(#[$m:meta])* $name:ident => $op:path, $c:literal;)*) => {$(
        $(#[$m])*
        ///
        /// `out`'s shape must be the broadcast shape of `a` and `b` (NumPy rules).
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for shapes that do not broadcast or an
        /// output of another shape; the aclnn status (`161002` for a data
        /// type the operator does not take).
        #[doc(alias = $c)]
        pub fn $name<T: Element>(
            stream: &Stream,
            a: &impl AsView<T>,
            b: &impl AsView<T>,
            out: &mut impl AsViewMut<T>,
        ) -> Result<()> {
            binary(concat!("ops::", stringify!($name)), $op, stream, a, b, out)
        }
    )*};
}

macro_rules! unary_ops {
    ($($(#[$m:meta])* $name:ident => $op:path, $c:literal;)*) => {$(
        $(#[$m])*
        ///
        /// `out` has `x`'s shape.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an output of another shape; the
        /// aclnn status (`161002` for a data type the operator does not take).
        #[doc(alias = $c)]
        pub fn $name<T: Element>(stream: &Stream, x: &impl AsView<T>, out: &mut impl AsViewMut<T>) -> Result<()> {
            unary(concat!("ops::", stringify!($name)), $op, stream, x, out)
        }
    )*};
}

binary_ops! {
    /// `out = a + b` (`aclnnAdd`, `alpha` 1).
    add => adapt::add, "aclnnAdd";
    /// `out = a - b` (`aclnnSub`, `alpha` 1).
    sub => adapt::sub, "aclnnSub";
    /// `out = a * b` (`aclnnMul`).
    mul => aclnn::mul, "aclnnMul";
    /// `out = a / b` (`aclnnDiv`).
    div => aclnn::div, "aclnnDiv";
    /// `out = max(a, b)` (`aclnnMaximum`).
    maximum => aclnn::maximum, "aclnnMaximum";
    /// `out = min(a, b)` (`aclnnMinimum`).
    minimum => aclnn::minimum, "aclnnMinimum";
}

unary_ops! {
    /// `out = -x` (`aclnnNeg`).
    neg => aclnn::neg, "aclnnNeg";
    /// `out = |x|` (`aclnnAbs`).
    abs => aclnn::abs, "aclnnAbs";
    /// `out = e^x` (`aclnnExp`).
    exp => aclnn::exp, "aclnnExp";
    /// `out = ln x` (`aclnnLog`).
    log => aclnn::log, "aclnnLog";
    /// `out = √x` (`aclnnSqrt`).
    sqrt => aclnn::sqrt, "aclnnSqrt";
    /// `out = 1/√x` (`aclnnRsqrt`).
    rsqrt => aclnn::rsqrt, "aclnnRsqrt";
    /// `out = max(x, 0)` (`aclnnRelu`).
    relu => aclnn::relu, "aclnnRelu";
    /// `out = 1/(1+e^-x)` (`aclnnSigmoid`).
    sigmoid => aclnn::sigmoid, "aclnnSigmoid";
    /// `out = tanh x` (`aclnnTanh`).
    tanh => aclnn::tanh, "aclnnTanh";
    /// GELU (`aclnnGelu`).
    gelu => aclnn::gelu, "aclnnGelu";
    /// `out = x · sigmoid(x)` (`aclnnSilu`).
    silu => aclnn::silu, "aclnnSilu";
    /// `out = sin x` (`aclnnSin`).
    sin => aclnn::sin, "aclnnSin";
    /// `out = cos x` (`aclnnCos`).
    cos => aclnn::cos, "aclnnCos";
}

/// Checks that `out` has `x`'s shape, then runs the in-place `fill` on it.
fn fill_like<T: Element>(
    function: &'static str,
    fill: fn(&Stream, &mut aclnn::TensorArgMut<'_>) -> Result<()>,
    stream: &Stream,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let out = out.view_mut();
    expect_shape(function, out.shape(), x.view().shape())?;
    fill(stream, &mut nn_mut(out)?)
}

/// `out = 0` with `x`'s shape (`aclnnInplaceZero` on `out`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an output of another shape; the aclnn status.
#[doc(alias = "aclnnInplaceZero")]
pub fn zeros_like<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    fill_like("ops::zeros_like", aclnn::zero_, stream, x, out)
}

/// `out = 1` with `x`'s shape (`aclnnInplaceOne` on `out`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an output of another shape; the aclnn status.
#[doc(alias = "aclnnInplaceOne")]
pub fn ones_like<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    fill_like("ops::ones_like", aclnn::one_, stream, x, out)
}

/// The gradient of ReLU: `out = gradients` where `features > 0`, else 0
/// (`aclnnThresholdBackward` with threshold 0).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not broadcast or an output
/// of another shape; the aclnn status.
#[doc(alias = "aclnnThresholdBackward")]
pub fn relu_grad<T: Element>(
    stream: &Stream,
    gradients: &impl AsView<T>,
    features: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    binary(
        "ops::relu_grad",
        |s, g, x, out| aclnn::threshold_backward(s, g, x, &aclnn::Scalar::new(0.0f32)?, out),
        stream,
        gradients,
        features,
        out,
    )
}

/// Converts `x` to `U` (`aclnnCast`, rounding to nearest).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the shapes differ; the aclnn status.
#[doc(alias = "aclnnCast")]
pub fn cast<T: Element, U: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    out: &mut impl AsViewMut<U>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    expect_shape("ops::cast", out.shape(), x.shape())?;
    aclnn::cast(stream, &nn(&x)?, U::DATA_TYPE, &mut nn_mut(out)?)
}

/// `out = x · value` for a host scalar `value` (`aclnnMuls`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an output of another shape; the aclnn status.
#[doc(alias = "aclnnMuls")]
pub fn muls<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    value: T,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    expect_shape("ops::muls", out.shape(), x.shape())?;
    aclnn::muls(
        stream,
        &nn(&x)?,
        &aclnn::Scalar::new(value)?,
        &mut nn_mut(out)?,
    )
}

//! Elementwise operators: binary (broadcasting) and unary, `relu_grad`,
//! `cast`, and their in-place forms.

use super::*;

pub(super) type Binary = fn(
    &Stream,
    &aclnn::TensorArg<'_>,
    &aclnn::TensorArg<'_>,
    &mut aclnn::TensorArgMut<'_>,
) -> Result<()>;
type Unary = fn(&Stream, &aclnn::TensorArg<'_>, &mut aclnn::TensorArgMut<'_>) -> Result<()>;

/// Checks that `out` is the broadcast shape of `a` and `b`, then runs `op`.
/// The output's element type `O` is `T` for arithmetic, `Bool` for
/// comparisons.
pub(super) fn binary<T: Element, O: Element>(
    function: &'static str,
    op: Binary,
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
    out: &mut impl AsViewMut<O>,
) -> Result<()> {
    let (a, b, out) = (a.view(), b.view(), out.view_mut());
    expect_broadcast(function, a.shape(), b.shape(), out.shape())?;
    op(stream, &nn(&a)?, &nn(&b)?, &mut nn_mut(out)?)
}

/// [`binary`] into a new tensor of the broadcast shape.
pub(super) fn binary_new<T: Element, O: Element>(
    function: &'static str,
    op: Binary,
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
) -> Result<Tensor<O>> {
    let shape = broadcast_shapes(function, a.view().shape(), b.view().shape())?;
    let mut out = Tensor::zeros(stream, &shape)?;
    binary(function, op, stream, a, b, &mut out)?;
    Ok(out)
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
    ($($(#[$m:meta])* $name:ident, $new:ident => $op:path, $c:literal;)*) => {$(
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

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of the broadcast shape.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        #[doc(alias = $c)]
        pub fn $new<T: Element>(
            stream: &Stream,
            a: &impl AsView<T>,
            b: &impl AsView<T>,
        ) -> Result<Tensor<T>> {
            binary_new(concat!("ops::", stringify!($name)), $op, stream, a, b)
        }
    )*};
}

macro_rules! unary_ops {
    ($($(#[$m:meta])* $name:ident, $new:ident => $op:path, $c:literal;)*) => {$(
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

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of `x`'s shape.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        #[doc(alias = $c)]
        pub fn $new<T: Element>(stream: &Stream, x: &impl AsView<T>) -> Result<Tensor<T>> {
            let mut out = Tensor::zeros(stream, x.view().shape())?;
            unary(concat!("ops::", stringify!($name)), $op, stream, x, &mut out)?;
            Ok(out)
        }
    )*};
}

binary_ops! {
    /// `out = a + b` (`aclnnAdd`, `alpha` 1).
    add, add_new => adapt::add, "aclnnAdd";
    /// `out = a - b` (`aclnnSub`, `alpha` 1).
    sub, sub_new => adapt::sub, "aclnnSub";
    /// `out = a * b` (`aclnnMul`).
    mul, mul_new => aclnn::mul, "aclnnMul";
    /// `out = a / b` (`aclnnDiv`).
    div, div_new => aclnn::div, "aclnnDiv";
    /// `out = max(a, b)` (`aclnnMaximum`).
    maximum, maximum_new => aclnn::maximum, "aclnnMaximum";
    /// `out = min(a, b)` (`aclnnMinimum`).
    minimum, minimum_new => aclnn::minimum, "aclnnMinimum";
    /// `a` to the power `b`, elementwise.
    pow, pow_new => aclnn::pow_tensor_tensor, "aclnnPowTensorTensor";
    /// The angle of the point (`b`, `a`), in radians.
    atan2, atan2_new => aclnn::atan2, "aclnnAtan2";
    /// `a − b·⌊a / b⌋` (Python's `%`: the sign of `b`).
    remainder, remainder_new => aclnn::remainder_tensor_tensor, "aclnnRemainderTensorTensor";
    /// Bitwise and (integers and bool).
    bitwise_and, bitwise_and_new => aclnn::bitwise_and_tensor, "aclnnBitwiseAndTensor";
    /// Bitwise or (integers and bool).
    bitwise_or, bitwise_or_new => aclnn::bitwise_or_tensor, "aclnnBitwiseOrTensor";
    /// Bitwise exclusive or (integers and bool).
    bitwise_xor, bitwise_xor_new => aclnn::bitwise_xor_tensor, "aclnnBitwiseXorTensor";
}

unary_ops! {
    /// `out = -x` (`aclnnNeg`).
    neg, neg_new => aclnn::neg, "aclnnNeg";
    /// `out = |x|` (`aclnnAbs`).
    abs, abs_new => aclnn::abs, "aclnnAbs";
    /// `out = e^x` (`aclnnExp`).
    exp, exp_new => aclnn::exp, "aclnnExp";
    /// `out = ln x` (`aclnnLog`).
    log, log_new => aclnn::log, "aclnnLog";
    /// `out = √x` (`aclnnSqrt`).
    sqrt, sqrt_new => aclnn::sqrt, "aclnnSqrt";
    /// `out = 1/√x` (`aclnnRsqrt`).
    rsqrt, rsqrt_new => aclnn::rsqrt, "aclnnRsqrt";
    /// `out = max(x, 0)` (`aclnnRelu`).
    relu, relu_new => aclnn::relu, "aclnnRelu";
    /// `out = 1/(1+e^-x)` (`aclnnSigmoid`).
    sigmoid, sigmoid_new => aclnn::sigmoid, "aclnnSigmoid";
    /// `out = tanh x` (`aclnnTanh`).
    tanh, tanh_new => aclnn::tanh, "aclnnTanh";
    /// GELU (`aclnnGelu`).
    gelu, gelu_new => aclnn::gelu, "aclnnGelu";
    /// `out = x · sigmoid(x)` (`aclnnSilu`).
    silu, silu_new => aclnn::silu, "aclnnSilu";
    /// `out = sin x` (`aclnnSin`).
    sin, sin_new => aclnn::sin, "aclnnSin";
    /// `out = cos x` (`aclnnCos`).
    cos, cos_new => aclnn::cos, "aclnnCos";
    reciprocal, reciprocal_new => aclnn::reciprocal, "aclnnReciprocal";
    log1p, log1p_new => aclnn::log1p, "aclnnLog1p";
    tan, tan_new => aclnn::tan, "aclnnTan";
    sinh, sinh_new => aclnn::sinh, "aclnnSinh";
    cosh, cosh_new => aclnn::cosh, "aclnnCosh";
    asin, asin_new => aclnn::asin, "aclnnAsin";
    acos, acos_new => aclnn::acos, "aclnnAcos";
    atan, atan_new => aclnn::atan, "aclnnAtan";
    asinh, asinh_new => aclnn::asinh, "aclnnAsinh";
    acosh, acosh_new => aclnn::acosh, "aclnnAcosh";
    atanh, atanh_new => aclnn::atanh, "aclnnAtanh";
    erf, erf_new => aclnn::erf, "aclnnErf";
    /// Round half to even.
    round, round_new => aclnn::round, "aclnnRound";
    floor, floor_new => aclnn::floor, "aclnnFloor";
    ceil, ceil_new => aclnn::ceil, "aclnnCeil";
    trunc, trunc_new => aclnn::trunc, "aclnnTrunc";
    /// −1, 0 or 1.
    sign, sign_new => aclnn::sign, "aclnnSign";
    /// Bitwise not (integers and bool).
    bitwise_not, bitwise_not_new => aclnn::bitwise_not, "aclnnBitwiseNot";
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

/// [`relu_grad`] into a new tensor of the broadcast shape.
///
/// # Errors
///
/// As [`relu_grad`].
#[doc(alias = "aclnnThresholdBackward")]
pub fn relu_grad_new<T: Element>(
    stream: &Stream,
    gradients: &impl AsView<T>,
    features: &impl AsView<T>,
) -> Result<Tensor<T>> {
    binary_new(
        "ops::relu_grad",
        |s, g, x, out| aclnn::threshold_backward(s, g, x, &aclnn::Scalar::new(0.0f32)?, out),
        stream,
        gradients,
        features,
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

/// [`cast`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`cast`].
#[doc(alias = "aclnnCast")]
pub fn cast_new<T: Element, U: Element>(stream: &Stream, x: &impl AsView<T>) -> Result<Tensor<U>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    cast(stream, x, &mut out)?;
    Ok(out)
}

/// [`muls`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`muls`].
#[doc(alias = "aclnnMuls")]
pub fn muls_new<T: Element>(stream: &Stream, x: &impl AsView<T>, value: T) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    muls(stream, x, value, &mut out)?;
    Ok(out)
}

//! Elementwise operators: binary (broadcasting) and unary, and `relu_grad`.

use super::*;

pub(super) fn binary<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    expect_broadcast(function, &a.shape, &b.shape, &out.shape)?;
    launch_binary(stream, op, a, b, out, None)
}

/// Queues `op` with inputs `a`, `b`, output `out` and `attr`, the tensor
/// descriptions made for the call.
pub(super) fn launch_binary<T: Element>(
    stream: &Stream,
    op: &CStr,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
    attr: Option<&OpAttr>,
) -> Result<()> {
    let (da, db, dout) = (a.desc()?, b.desc()?, out.desc()?);
    launch(
        stream,
        op,
        [a.arg(&da), b.arg(&db)],
        [out.arg_mut(&dout)],
        attr,
    )
}

/// Queues `op` with input `x`, output `out` and `attr`, the tensor
/// descriptions made for the call.
pub(super) fn launch_unary<T: Element>(
    stream: &Stream,
    op: &CStr,
    x: &Tensor<T>,
    out: &mut Tensor<T>,
    attr: Option<&OpAttr>,
) -> Result<()> {
    let (dx, dout) = (x.desc()?, out.desc()?);
    launch(stream, op, [x.arg(&dx)], [out.arg_mut(&dout)], attr)
}

pub(super) fn unary<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    expect_shape(function, &out.shape, &x.shape)?;
    launch_unary(stream, op, x, out, None)
}

macro_rules! binary_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `out`'s shape must be the broadcast shape of `a` and `b` (NumPy rules).
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for shapes that do not broadcast or an
        /// output of another shape; the runtime's error (e.g. 100026 for a
        /// data type the operator does not take).
        #[doc(alias = $op)]
        pub fn $name<T: Element>(stream: &Stream, a: &Tensor<T>, b: &Tensor<T>, out: &mut Tensor<T>) -> Result<()> {
            binary($cop, concat!("ops::", stringify!($name)), stream, a, b, out)
        }
    )*};
}

macro_rules! unary_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `out` has `x`'s shape.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an output of another shape; the
        /// runtime's error.
        #[doc(alias = $op)]
        pub fn $name<T: Element>(stream: &Stream, x: &Tensor<T>, out: &mut Tensor<T>) -> Result<()> {
            unary($cop, concat!("ops::", stringify!($name)), stream, x, out)
        }
    )*};
}

binary_ops! {
    /// `out = a + b` (`Add`).
    add => "Add", c"Add",
    /// `out = a - b` (`Sub`).
    sub => "Sub", c"Sub",
    /// `out = a * b` (`Mul`).
    mul => "Mul", c"Mul",
    /// `out = a / b` (`RealDiv`).
    div => "RealDiv", c"RealDiv",
    /// `out = max(a, b)` (`Maximum`).
    maximum => "Maximum", c"Maximum",
    /// `out = min(a, b)` (`Minimum`).
    minimum => "Minimum", c"Minimum",
}

unary_ops! {
    /// `out = -x` (`Neg`).
    neg => "Neg", c"Neg",
    /// `out = |x|` (`Abs`).
    abs => "Abs", c"Abs",
    /// `out = e^x` (`Exp`).
    exp => "Exp", c"Exp",
    /// `out = ln x` (`Log`).
    log => "Log", c"Log",
    /// `out = √x` (`Sqrt`).
    sqrt => "Sqrt", c"Sqrt",
    /// `out = 1/√x` (`Rsqrt`).
    rsqrt => "Rsqrt", c"Rsqrt",
    /// `out = max(x, 0)` (`Relu`).
    relu => "Relu", c"Relu",
    /// `out = 1/(1+e^-x)` (`Sigmoid`).
    sigmoid => "Sigmoid", c"Sigmoid",
    /// `out = tanh x` (`Tanh`).
    tanh => "Tanh", c"Tanh",
    /// GELU, tanh approximation (`Gelu`).
    gelu => "Gelu", c"Gelu",
    /// `out = 0` with `x`'s shape and type (`ZerosLike`).
    zeros_like => "ZerosLike", c"ZerosLike",
    /// `out = 1` with `x`'s shape and type (`OnesLike`).
    ones_like => "OnesLike", c"OnesLike",
}

/// The gradient of ReLU: `out = gradients` where `features > 0`, else 0 (`ReluGrad`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not broadcast or an output
/// of another shape; the runtime's error.
#[doc(alias = "ReluGrad")]
pub fn relu_grad<T: Element>(
    stream: &Stream,
    gradients: &Tensor<T>,
    features: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    binary(
        c"ReluGrad",
        "ops::relu_grad",
        stream,
        gradients,
        features,
        out,
    )
}

/// Converts `x` to `U` (`Cast` through `aclopCast`, rounding to nearest).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the shapes differ; the runtime's error.
#[doc(alias = "aclopCast")]
#[doc(alias = "Cast")]
pub fn cast<T: Element, U: Element>(
    stream: &Stream,
    x: &Tensor<T>,
    out: &mut Tensor<U>,
) -> Result<()> {
    expect_shape("ops::cast", &out.shape, &x.shape)?;
    let (dx, dout) = (x.desc()?, out.desc()?);
    crate::aclop::cast(stream, &dx, &x.buf, &dout, &mut out.buf, false)
}

//! In-place operators (`relu_`, `add_`, ...): one writable view is both an
//! input and the output, through CANN's `aclnnInplace*` operators.

use super::*;

type BinaryInplace = fn(&Stream, &mut aclnn::TensorArgMut<'_>, &aclnn::TensorArg<'_>) -> Result<()>;
type UnaryInplace = fn(&Stream, &mut aclnn::TensorArgMut<'_>) -> Result<()>;

macro_rules! binary_inplace {
    ($($(#[$m:meta])* $name:ident => $op:path, $c:literal;)*) => {$(
        $(#[$m])*
        ///
        /// `other` broadcasts to `x`'s shape (NumPy rules), which the result keeps.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] when `other` does not broadcast to
        /// `x`; the aclnn status (`161002` for a data type the operator does
        /// not take).
        #[doc(alias = $c)]
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &mut impl AsViewMut<T>,
            other: &impl AsView<T>,
        ) -> Result<()> {
            binary_inplace(concat!("ops::", stringify!($name)), $op, stream, x, other)
        }
    )*};
}

fn binary_inplace<T: Element>(
    function: &'static str,
    op: BinaryInplace,
    stream: &Stream,
    x: &mut impl AsViewMut<T>,
    other: &impl AsView<T>,
) -> Result<()> {
    let (x, other) = (x.view_mut(), other.view());
    expect_broadcast_to(function, other.shape(), x.shape())?;
    op(stream, &mut nn_mut(x)?, &nn(&other)?)
}

macro_rules! unary_inplace {
    ($($(#[$m:meta])* $name:ident => $op:path, $c:literal;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for a data type the operator does not take).
        #[doc(alias = $c)]
        pub fn $name<T: Element>(stream: &Stream, x: &mut impl AsViewMut<T>) -> Result<()> {
            let op: UnaryInplace = $op;
            op(stream, &mut nn_mut(x.view_mut())?)
        }
    )*};
}

binary_inplace! {
    /// `x += other` (`aclnnInplaceAdd`, `alpha` 1).
    add_ => adapt::add_, "aclnnInplaceAdd";
    /// `x -= other` (`aclnnInplaceSub`, `alpha` 1).
    sub_ => adapt::sub_, "aclnnInplaceSub";
    /// `x *= other` (`aclnnInplaceMul`).
    mul_ => aclnn::mul_, "aclnnInplaceMul";
    /// `x /= other` (`aclnnInplaceDiv`).
    div_ => aclnn::div_, "aclnnInplaceDiv";
}

unary_inplace! {
    /// `x = max(x, 0)` (`aclnnInplaceRelu`).
    relu_ => aclnn::relu_, "aclnnInplaceRelu";
    /// `x = 1/(1+e^-x)` (`aclnnInplaceSigmoid`).
    sigmoid_ => aclnn::sigmoid_, "aclnnInplaceSigmoid";
    /// `x = e^x` (`aclnnInplaceExp`).
    exp_ => aclnn::exp_, "aclnnInplaceExp";
    /// `x = ln x` (`aclnnInplaceLog`).
    log_ => aclnn::log_, "aclnnInplaceLog";
    /// `x = √x` (`aclnnInplaceSqrt`).
    sqrt_ => aclnn::sqrt_, "aclnnInplaceSqrt";
    /// `x = 1/√x` (`aclnnInplaceRsqrt`).
    rsqrt_ => aclnn::rsqrt_, "aclnnInplaceRsqrt";
    /// `x = -x` (`aclnnInplaceNeg`).
    neg_ => aclnn::neg_, "aclnnInplaceNeg";
    /// `x = tanh x` (`aclnnInplaceTanh`).
    tanh_ => aclnn::tanh_, "aclnnInplaceTanh";
}

/// `x *= value` for a host scalar `value` (`aclnnInplaceMuls`).
///
/// # Errors
///
/// The aclnn status.
#[doc(alias = "aclnnInplaceMuls")]
pub fn muls_<T: Element>(stream: &Stream, x: &mut impl AsViewMut<T>, value: T) -> Result<()> {
    aclnn::muls_(
        stream,
        &mut nn_mut(x.view_mut())?,
        &aclnn::Scalar::new(value)?,
    )
}

//! The in-place elementwise operators (`aclnnInplaceXxx`): each writes its
//! result over `self_`, a [`TensorMut`] view (strided views included), and
//! reads `other`, which broadcasts to `self_`'s shape (`self_`'s shape is
//! the result's).

use super::{Scalar, Tensor, TensorMut, two_phase};
use crate::Stream;
use crate::error::Result;

/// Runs one in-place operator through [`two_phase`]: `self_` (the first
/// argument) is written, the `reads` only read.
macro_rules! run_inplace {
    ($stream:expr, $self_:expr, [$($read:expr),*], $gws:ident($($arg:expr),* $(,)?), $run:ident) => {{
        let homes = [$self_.as_tensor().access(), $($read.access()),*];
        let ps = $self_.as_raw();
        let (names, plan, launch) = crate::result::aclnn_op!($gws(ps, $($arg),*), $run);
        two_phase($stream, names, &homes, plan, launch)
    }};
}

macro_rules! unary_inplace {
    ($($(#[$m:meta])* $name:ident => $gws:ident, $run:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for a dtype the operator does not
        /// take), or a stream/memory error.
        pub fn $name(stream: &Stream, self_: &mut TensorMut<'_>) -> Result<()> {
            run_inplace!(stream, self_, [], $gws(), $run)
        }
    )*};
}

macro_rules! binary_inplace {
    ($($(#[$m:meta])* $name:ident => $gws:ident, $run:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for an `other` that does not broadcast
        /// to `self_`'s shape or dtypes whose result `self_` cannot hold), or
        /// a stream/memory error.
        pub fn $name(stream: &Stream, self_: &mut TensorMut<'_>, other: &Tensor<'_>) -> Result<()> {
            let po = other.as_raw();
            run_inplace!(stream, self_, [other], $gws(po), $run)
        }
    )*};
}

binary_inplace! {
    /// `self_ *= other` (`other` broadcasting to `self_`).
    #[doc(alias = "aclnnInplaceMul")]
    mul_ => aclnnInplaceMulGetWorkspaceSize, aclnnInplaceMul;
    /// `self_ /= other` (`other` broadcasting to `self_`).
    #[doc(alias = "aclnnInplaceDiv")]
    div_ => aclnnInplaceDivGetWorkspaceSize, aclnnInplaceDiv;
}

unary_inplace! {
    /// `self_ = max(self_, 0)`.
    #[doc(alias = "aclnnInplaceRelu")]
    relu_ => aclnnInplaceReluGetWorkspaceSize, aclnnInplaceRelu;
    /// `self_ = 1/(1+e^-self_)`.
    #[doc(alias = "aclnnInplaceSigmoid")]
    sigmoid_ => aclnnInplaceSigmoidGetWorkspaceSize, aclnnInplaceSigmoid;
    /// `self_ = e^self_`.
    #[doc(alias = "aclnnInplaceExp")]
    exp_ => aclnnInplaceExpGetWorkspaceSize, aclnnInplaceExp;
    /// `self_ = ln self_`.
    #[doc(alias = "aclnnInplaceLog")]
    log_ => aclnnInplaceLogGetWorkspaceSize, aclnnInplaceLog;
    /// `self_ = √self_`.
    #[doc(alias = "aclnnInplaceSqrt")]
    sqrt_ => aclnnInplaceSqrtGetWorkspaceSize, aclnnInplaceSqrt;
    /// `self_ = 1/√self_`.
    #[doc(alias = "aclnnInplaceRsqrt")]
    rsqrt_ => aclnnInplaceRsqrtGetWorkspaceSize, aclnnInplaceRsqrt;
    /// `self_ = -self_`.
    #[doc(alias = "aclnnInplaceNeg")]
    neg_ => aclnnInplaceNegGetWorkspaceSize, aclnnInplaceNeg;
    /// `self_ = tanh self_`.
    #[doc(alias = "aclnnInplaceTanh")]
    tanh_ => aclnnInplaceTanhGetWorkspaceSize, aclnnInplaceTanh;
}

/// `add_`/`add_scaled_` and `sub_`/`sub_scaled_`: `self_ ±= alpha · other`,
/// the unscaled one with `alpha` = 1.
macro_rules! scaled_inplace {
    ($(
        $(#[$m:meta])* $name:ident, $(#[$ms:meta])* $scaled:ident
            => $gws:ident, $run:ident, $op:literal;
    )*) => {$(
        #[doc = concat!("`self_ ", $op, " other` (`other` broadcasting to `self_`; `alpha` = 1).")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($scaled), "`].")]
        $(#[$m])*
        pub fn $name(stream: &Stream, self_: &mut TensorMut<'_>, other: &Tensor<'_>) -> Result<()> {
            $scaled(stream, self_, other, &Scalar::new(1.0f32)?)
        }

        #[doc = concat!("`self_ ", $op, " alpha · other` (`other` broadcasting to `self_`).")]
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for an `other` that does not broadcast
        /// to `self_`'s shape, dtypes whose result `self_` cannot hold, or a
        /// non-integral `alpha` with integer operands), or a stream/memory
        /// error.
        $(#[$ms])*
        pub fn $scaled(
            stream: &Stream,
            self_: &mut TensorMut<'_>,
            other: &Tensor<'_>,
            alpha: &Scalar,
        ) -> Result<()> {
            let (po, pa) = (other.as_raw(), alpha.as_raw());
            run_inplace!(stream, self_, [other], $gws(po, pa), $run)
        }
    )*};
}

scaled_inplace! {
    #[doc(alias = "aclnnInplaceAdd")]
    add_,
    #[doc(alias = "aclnnInplaceAdd")]
    add_scaled_ => aclnnInplaceAddGetWorkspaceSize, aclnnInplaceAdd, "+=";
    #[doc(alias = "aclnnInplaceSub")]
    sub_,
    #[doc(alias = "aclnnInplaceSub")]
    sub_scaled_ => aclnnInplaceSubGetWorkspaceSize, aclnnInplaceSub, "-=";
}

/// `self_ *= value` for a host scalar `value` (converted to `self_`'s type).
///
/// # Errors
///
/// The aclnn status (`161002` for a dtype the operator does not take), or a
/// stream/memory error.
#[doc(alias = "aclnnInplaceMuls")]
pub fn muls_(stream: &Stream, self_: &mut TensorMut<'_>, value: &Scalar) -> Result<()> {
    let pv = value.as_raw();
    run_inplace!(
        stream,
        self_,
        [],
        aclnnInplaceMulsGetWorkspaceSize(pv),
        aclnnInplaceMuls
    )
}

//! The typed operators over run-time-typed tensors ([`DynView`],
//! [`DynViewMut`], [`DynTensor`]): the entry a framework backend with a
//! dtype field calls, so that it needs no dispatch of its own.
//!
//! Each function has the name, arguments and checks of its typed twin in
//! [`crate::ops`] (the same errors, naming the same function), plus one
//! check first: the operands and the output share one dtype
//! ([`Error::InvalidArgument`] naming each operand's dtype otherwise; cast
//! with [`cast_new`] first). Each has an `out` form and an allocating
//! `_new` form, and in-place forms where [`crate::ops`] has them. Scalars are
//! `f64`, handed to the operator as an integer scalar for an integer or bool
//! tensor when the value is whole (so that the result keeps the tensor's
//! type, as aclnn's type promotion of an integer tensor by a float scalar
//! would not), as a float scalar otherwise.
//!
//! For the aclnn operators this module does not cover, make the argument
//! objects directly: [`DynView::arg`], [`DynViewMut::arg_mut`].
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{DataType, Device, DynTensor, Runtime, Tensor, ops::dynamic};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let x = DynTensor::from(Tensor::from_host(&s, &[1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0], &[2, 3])?);
//! let y = dynamic::relu_new(&s, &x.view())?;
//! let sums = dynamic::reduce_sum_new(&s, &y.view(), &[1], false)?;
//! assert_eq!(Tensor::<f32>::try_from(sums)?.to_host_vec()?, [4.0, 5.0]);
//! let i = DynTensor::zeros(&s, DataType::Int32, &[2, 3])?;
//! let err = dynamic::add_new(&s, &x.view(), &i.view()).unwrap_err();
//! assert!(err.to_string().contains("a is float32, b is int32"), "{err}");
//! # Ok::<(), acl::Error>(())
//! ```

use super::*;
use crate::DataType;
use crate::dispatch_dtype;
use crate::tensor::{DynTensor, DynView, DynViewMut, dtype_mismatch};

/// Checks that every named operand has the first one's dtype.
fn same_dtype(function: &'static str, operands: &[(&str, DataType)]) -> Result<()> {
    match operands.first() {
        Some(&(_, d)) if operands.iter().any(|&(_, o)| o != d) => {
            Err(dtype_mismatch(function, operands))
        }
        _ => Ok(()),
    }
}

/// `v` as a typed view of `like`'s element type (checked equal before).
fn typed_like<'a, T: Element>(
    _like: &TensorView<'_, T>,
    v: DynView<'a>,
) -> Result<TensorView<'a, T>>
where
    TensorView<'a, T>: TryFrom<DynView<'a>, Error = Error>,
{
    TensorView::try_from(v)
}

/// `v` as a typed writable view of `like`'s element type (checked equal before).
fn typed_mut_like<'a, T: Element>(
    _like: &TensorView<'_, T>,
    v: DynViewMut<'a>,
) -> Result<TensorViewMut<'a, T>>
where
    TensorViewMut<'a, T>: TryFrom<DynViewMut<'a>, Error = Error>,
{
    TensorViewMut::try_from(v)
}

macro_rules! binary {
    ($($(#[$m:meta])* $name:ident, $new:ident;)*) => {$(
        $(#[$m])*
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over run-time-typed tensors.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("[`Error::InvalidArgument`] when the dtypes differ; as [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(
            stream: &Stream,
            a: &DynView<'_>,
            b: &DynView<'_>,
            out: &mut DynViewMut<'_>,
        ) -> Result<()> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("a", a.dtype()), ("b", b.dtype()), ("out", out.dtype())])?;
            dispatch_dtype!(DynView, a, a => {
                let b = typed_like(a, *b)?;
                let mut out = typed_mut_like(a, out.reborrow())?;
                super::$name(stream, a, &b, &mut out)
            })
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of the broadcast shape.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        pub fn $new(stream: &Stream, a: &DynView<'_>, b: &DynView<'_>) -> Result<DynTensor> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("a", a.dtype()), ("b", b.dtype())])?;
            dispatch_dtype!(DynView, a, a => {
                let b = typed_like(a, *b)?;
                super::$new(stream, a, &b).map(DynTensor::from)
            })
        }
    )*};
}

binary! {
    add, add_new;
    sub, sub_new;
    mul, mul_new;
    div, div_new;
    maximum, maximum_new;
    minimum, minimum_new;
    relu_grad, relu_grad_new;
    pow, pow_new;
    atan2, atan2_new;
    remainder, remainder_new;
    bitwise_and, bitwise_and_new;
    bitwise_or, bitwise_or_new;
    bitwise_xor, bitwise_xor_new;
}

macro_rules! unary {
    ($($name:ident, $new:ident;)*) => {$(
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over run-time-typed tensors.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("[`Error::InvalidArgument`] when the dtypes differ; as [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(stream: &Stream, x: &DynView<'_>, out: &mut DynViewMut<'_>) -> Result<()> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("x", x.dtype()), ("out", out.dtype())])?;
            dispatch_dtype!(DynView, x, x => {
                let mut out = typed_mut_like(x, out.reborrow())?;
                super::$name(stream, x, &mut out)
            })
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of `x`'s shape and dtype.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $new(stream: &Stream, x: &DynView<'_>) -> Result<DynTensor> {
            dispatch_dtype!(DynView, x, x => super::$new(stream, x).map(DynTensor::from))
        }
    )*};
}

unary! {
    neg, neg_new;
    abs, abs_new;
    exp, exp_new;
    log, log_new;
    sqrt, sqrt_new;
    rsqrt, rsqrt_new;
    relu, relu_new;
    sigmoid, sigmoid_new;
    tanh, tanh_new;
    gelu, gelu_new;
    silu, silu_new;
    sin, sin_new;
    cos, cos_new;
    reciprocal, reciprocal_new;
    log1p, log1p_new;
    tan, tan_new;
    sinh, sinh_new;
    cosh, cosh_new;
    asin, asin_new;
    acos, acos_new;
    atan, atan_new;
    asinh, asinh_new;
    acosh, acosh_new;
    atanh, atanh_new;
    erf, erf_new;
    round, round_new;
    floor, floor_new;
    ceil, ceil_new;
    trunc, trunc_new;
    sign, sign_new;
    bitwise_not, bitwise_not_new;
}

macro_rules! binary_inplace {
    ($($name:ident;)*) => {$(
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over run-time-typed tensors.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("[`Error::InvalidArgument`] when the dtypes differ; as [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(stream: &Stream, x: &mut DynViewMut<'_>, other: &DynView<'_>) -> Result<()> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("x", x.dtype()), ("other", other.dtype())])?;
            dispatch_dtype!(DynView, other, other => {
                let mut x = typed_mut_like(other, x.reborrow())?;
                super::$name(stream, &mut x, other)
            })
        }
    )*};
}

binary_inplace! {
    add_;
    sub_;
    mul_;
    div_;
}

macro_rules! unary_inplace {
    ($($name:ident;)*) => {$(
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over a run-time-typed tensor.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(stream: &Stream, x: &mut DynViewMut<'_>) -> Result<()> {
            dispatch_dtype!(DynViewMut, x, x => super::$name(stream, x))
        }
    )*};
}

unary_inplace! {
    relu_;
    sigmoid_;
    exp_;
    log_;
    sqrt_;
    rsqrt_;
    neg_;
    tanh_;
}

macro_rules! reduce {
    ($($name:ident, $new:ident;)*) => {$(
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over run-time-typed tensors.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("[`Error::InvalidArgument`] when the dtypes differ; as [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(
            stream: &Stream,
            x: &DynView<'_>,
            axes: &[i64],
            keep_dims: bool,
            out: &mut DynViewMut<'_>,
        ) -> Result<()> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("x", x.dtype()), ("out", out.dtype())])?;
            dispatch_dtype!(DynView, x, x => {
                let mut out = typed_mut_like(x, out.reborrow())?;
                super::$name(stream, x, axes, keep_dims, &mut out)
            })
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of the reduced shape.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $new(
            stream: &Stream,
            x: &DynView<'_>,
            axes: &[i64],
            keep_dims: bool,
        ) -> Result<DynTensor> {
            dispatch_dtype!(DynView, x, x => super::$new(stream, x, axes, keep_dims).map(DynTensor::from))
        }
    )*};
}

reduce! {
    reduce_sum, reduce_sum_new;
    reduce_mean, reduce_mean_new;
    reduce_max, reduce_max_new;
}

macro_rules! softmax {
    ($($name:ident, $new:ident;)*) => {$(
        #[doc = concat!("[`ops::", stringify!($name), "`](fn@super::", stringify!($name), ") over run-time-typed tensors.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("[`Error::InvalidArgument`] when the dtypes differ; as [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $name(stream: &Stream, x: &DynView<'_>, dim: i64, out: &mut DynViewMut<'_>) -> Result<()> {
            const F: &str = concat!("ops::", stringify!($name));
            same_dtype(F, &[("x", x.dtype()), ("out", out.dtype())])?;
            dispatch_dtype!(DynView, x, x => {
                let mut out = typed_mut_like(x, out.reborrow())?;
                super::$name(stream, x, dim, &mut out)
            })
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of `x`'s shape and dtype.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`ops::", stringify!($name), "`](fn@super::", stringify!($name), ").")]
        pub fn $new(stream: &Stream, x: &DynView<'_>, dim: i64) -> Result<DynTensor> {
            dispatch_dtype!(DynView, x, x => super::$new(stream, x, dim).map(DynTensor::from))
        }
    )*};
}

softmax! {
    softmax, softmax_new;
    log_softmax, log_softmax_new;
}

/// [`ops::matmul_t`](super::matmul_t) over run-time-typed tensors
/// ([`ops::matmul`](super::matmul) is `transpose_a = transpose_b = false`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the dtypes differ; as [`ops::matmul_t`](super::matmul_t).
pub fn matmul_t(
    stream: &Stream,
    a: &DynView<'_>,
    transpose_a: bool,
    b: &DynView<'_>,
    transpose_b: bool,
    out: &mut DynViewMut<'_>,
) -> Result<()> {
    same_dtype(
        "ops::matmul",
        &[("a", a.dtype()), ("b", b.dtype()), ("out", out.dtype())],
    )?;
    dispatch_dtype!(DynView, a, a => {
        let b = typed_like(a, *b)?;
        let mut out = typed_mut_like(a, out.reborrow())?;
        super::matmul_t(stream, a, transpose_a, &b, transpose_b, &mut out)
    })
}

/// [`matmul_t`] into a new `[m, n]` tensor.
///
/// # Errors
///
/// As [`matmul_t`].
pub fn matmul_t_new(
    stream: &Stream,
    a: &DynView<'_>,
    transpose_a: bool,
    b: &DynView<'_>,
    transpose_b: bool,
) -> Result<DynTensor> {
    same_dtype("ops::matmul", &[("a", a.dtype()), ("b", b.dtype())])?;
    dispatch_dtype!(DynView, a, a => {
        let b = typed_like(a, *b)?;
        super::matmul_t_new(stream, a, transpose_a, &b, transpose_b).map(DynTensor::from)
    })
}

/// [`ops::batch_matmul_adj`](super::batch_matmul_adj) over run-time-typed
/// tensors ([`ops::batch_matmul`](super::batch_matmul) is `adj_a = adj_b =
/// false`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the dtypes differ; as
/// [`ops::batch_matmul_adj`](super::batch_matmul_adj).
pub fn batch_matmul_adj(
    stream: &Stream,
    a: &DynView<'_>,
    adj_a: bool,
    b: &DynView<'_>,
    adj_b: bool,
    out: &mut DynViewMut<'_>,
) -> Result<()> {
    same_dtype(
        "ops::batch_matmul",
        &[("a", a.dtype()), ("b", b.dtype()), ("out", out.dtype())],
    )?;
    dispatch_dtype!(DynView, a, a => {
        let b = typed_like(a, *b)?;
        let mut out = typed_mut_like(a, out.reborrow())?;
        super::batch_matmul_adj(stream, a, adj_a, &b, adj_b, &mut out)
    })
}

/// [`batch_matmul_adj`] into a new tensor of the broadcast batch shape.
///
/// # Errors
///
/// As [`batch_matmul_adj`].
pub fn batch_matmul_adj_new(
    stream: &Stream,
    a: &DynView<'_>,
    adj_a: bool,
    b: &DynView<'_>,
    adj_b: bool,
) -> Result<DynTensor> {
    same_dtype("ops::batch_matmul", &[("a", a.dtype()), ("b", b.dtype())])?;
    dispatch_dtype!(DynView, a, a => {
        let b = typed_like(a, *b)?;
        super::batch_matmul_adj_new(stream, a, adj_a, &b, adj_b).map(DynTensor::from)
    })
}

/// Converts `x` into `out`'s dtype ([`ops::cast`](super::cast); the dtypes
/// may differ, that is the point).
///
/// # Errors
///
/// As [`ops::cast`](super::cast).
pub fn cast(stream: &Stream, x: &DynView<'_>, out: &mut DynViewMut<'_>) -> Result<()> {
    dispatch_dtype!(DynView, x, x => {
        dispatch_dtype!(DynViewMut, out, out => super::cast(stream, x, out))
    })
}

/// `x` converted to `dtype`, in a new tensor ([`ops::cast`](super::cast)).
///
/// # Errors
///
/// As [`ops::cast`](super::cast).
pub fn cast_new(stream: &Stream, x: &DynView<'_>, dtype: DataType) -> Result<DynTensor> {
    let mut out = DynTensor::zeros(stream, dtype, x.shape())?;
    cast(stream, x, &mut out.view_mut())?;
    Ok(out)
}

/// [`ops::transpose`](super::transpose) over run-time-typed tensors.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the dtypes differ; as [`ops::transpose`](super::transpose).
pub fn transpose(
    stream: &Stream,
    x: &DynView<'_>,
    perm: &[usize],
    out: &mut DynViewMut<'_>,
) -> Result<()> {
    same_dtype("ops::transpose", &[("x", x.dtype()), ("out", out.dtype())])?;
    dispatch_dtype!(DynView, x, x => {
        let mut out = typed_mut_like(x, out.reborrow())?;
        super::transpose(stream, x, perm, &mut out)
    })
}

/// [`transpose`] into a new tensor.
///
/// # Errors
///
/// As [`ops::transpose`](super::transpose).
pub fn transpose_new(stream: &Stream, x: &DynView<'_>, perm: &[usize]) -> Result<DynTensor> {
    dispatch_dtype!(DynView, x, x => super::transpose_new(stream, x, perm).map(DynTensor::from))
}

/// [`ops::copy`](super::copy) over run-time-typed tensors (`src`
/// broadcasts to `dst`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the dtypes differ; as [`ops::copy`](super::copy).
pub fn copy(stream: &Stream, src: &DynView<'_>, dst: &mut DynViewMut<'_>) -> Result<()> {
    same_dtype("ops::copy", &[("src", src.dtype()), ("dst", dst.dtype())])?;
    dispatch_dtype!(DynView, src, src => {
        let mut dst = typed_mut_like(src, dst.reborrow())?;
        super::copy(stream, src, &mut dst)
    })
}

/// `value` as the operator's scalar for a tensor of `dtype` (see the module
/// docs): whole values are `int64` scalars for integer and bool tensors.
fn scalar_for(dtype: DataType, value: f64) -> Result<aclnn::Scalar> {
    let integral = !matches!(
        dtype,
        DataType::Float | DataType::Float16 | DataType::BFloat16 | DataType::Double
    );
    // `as` saturates; a whole value within i64 round-trips exactly.
    if integral && value.fract() == 0.0 && (value as i64) as f64 == value {
        aclnn::Scalar::new(value as i64)
    } else {
        aclnn::Scalar::new(value)
    }
}

/// Sets every element of `out` to `value`, converted to `out`'s dtype by
/// the operator (`aclnnInplaceFillScalar`).
///
/// # Errors
///
/// The aclnn status.
#[doc(alias = "aclnnInplaceFillScalar")]
pub fn fill(stream: &Stream, value: f64, out: &mut DynViewMut<'_>) -> Result<()> {
    let scalar = scalar_for(out.dtype(), value)?;
    aclnn::fill_(stream, &mut out.reborrow().arg_mut()?, &scalar)
}

/// `out = x · value` (`aclnnMuls`); `out` has `x`'s shape and dtype.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the dtypes or shapes differ; the aclnn status.
#[doc(alias = "aclnnMuls")]
pub fn muls(stream: &Stream, x: &DynView<'_>, value: f64, out: &mut DynViewMut<'_>) -> Result<()> {
    const F: &str = "ops::muls";
    same_dtype(F, &[("x", x.dtype()), ("out", out.dtype())])?;
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::muls(
        stream,
        &x.arg()?,
        &scalar_for(x.dtype(), value)?,
        &mut out.reborrow().arg_mut()?,
    )
}

/// [`muls`] into a new tensor of `x`'s shape and dtype.
///
/// # Errors
///
/// As [`muls`].
#[doc(alias = "aclnnMuls")]
pub fn muls_new(stream: &Stream, x: &DynView<'_>, value: f64) -> Result<DynTensor> {
    let mut out = DynTensor::zeros(stream, x.dtype(), x.shape())?;
    muls(stream, x, value, &mut out.view_mut())?;
    Ok(out)
}

//! Comparisons, predicates and selection, and indexing by tensors:
//!
//! - `eq`, `ne`, `gt`, `ge`, `lt`, `le` (broadcasting) and `is_inf`,
//!   `is_finite` give a [`Bool`] tensor; `logical_and`, `logical_or`,
//!   `logical_not` combine them;
//! - `where_` picks from two tensors by a `Bool` condition, `clamp` bounds
//!   the values;
//! - `gather` reads along an axis at `i64` indices, `scatter_add` and
//!   `index_add` accumulate along one, `flip` reverses axes.
//!
//! Each has an `out` form and an allocating `_new` form; shapes are checked
//! before the operator is called, with an error naming the function.

use super::*;
use crate::memory::Bool;

macro_rules! compare_ops {
    ($($doc:literal $name:ident, $new:ident => $op:path, $c:literal;)*) => {$(
        #[doc = concat!("`a ", $doc, " b` elementwise, broadcasting, into a `Bool` tensor.")]
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] when the shapes do not broadcast or
        /// `out` is not their broadcast shape; the aclnn status.
        #[doc(alias = $c)]
        pub fn $name<T: Element>(
            stream: &Stream,
            a: &impl AsView<T>,
            b: &impl AsView<T>,
            out: &mut impl AsViewMut<Bool>,
        ) -> Result<()> {
            super::elementwise::binary(concat!("ops::", stringify!($name)), $op, stream, a, b, out)
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        #[doc(alias = $c)]
        pub fn $new<T: Element>(
            stream: &Stream,
            a: &impl AsView<T>,
            b: &impl AsView<T>,
        ) -> Result<Tensor<Bool>> {
            super::elementwise::binary_new(concat!("ops::", stringify!($name)), $op, stream, a, b)
        }
    )*};
}

compare_ops! {
    "==" eq, eq_new => aclnn::eq_tensor, "aclnnEqTensor";
    "!=" ne, ne_new => aclnn::ne_tensor, "aclnnNeTensor";
    ">" gt, gt_new => aclnn::gt_tensor, "aclnnGtTensor";
    ">=" ge, ge_new => aclnn::ge_tensor, "aclnnGeTensor";
    "<" lt, lt_new => aclnn::lt_tensor, "aclnnLtTensor";
    "<=" le, le_new => aclnn::le_tensor, "aclnnLeTensor";
    "and" logical_and, logical_and_new => aclnn::logical_and, "aclnnLogicalAnd";
    "or" logical_or, logical_or_new => aclnn::logical_or, "aclnnLogicalOr";
}

macro_rules! predicate_ops {
    ($($doc:literal $name:ident, $new:ident => $op:path, $c:literal;)*) => {$(
        #[doc = $doc]
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] when `out` does not have `x`'s shape;
        /// the aclnn status.
        #[doc(alias = $c)]
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &impl AsView<T>,
            out: &mut impl AsViewMut<Bool>,
        ) -> Result<()> {
            let (x, out) = (x.view(), out.view_mut());
            expect_shape(concat!("ops::", stringify!($name)), out.shape(), x.shape())?;
            $op(stream, &nn(&x)?, &mut nn_mut(out)?)
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor.")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        #[doc(alias = $c)]
        pub fn $new<T: Element>(stream: &Stream, x: &impl AsView<T>) -> Result<Tensor<Bool>> {
            let mut out = Tensor::zeros(stream, x.view().shape())?;
            $name(stream, x, &mut out)?;
            Ok(out)
        }
    )*};
}

predicate_ops! {
    "Whether each element is ±∞." is_inf, is_inf_new => aclnn::is_inf, "aclnnIsInf";
    "Whether each element is finite (not ±∞ nor NaN)." is_finite, is_finite_new => aclnn::is_finite, "aclnnIsFinite";
    "Logical not of each element (nonzero is true)." logical_not, logical_not_new => aclnn::logical_not, "aclnnLogicalNot";
}

/// `cond ? a : b` elementwise, the three broadcasting together.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the shapes do not broadcast or `out` is
/// not their broadcast shape; the aclnn status.
#[doc(alias = "aclnnSWhere")]
pub fn where_<T: Element>(
    stream: &Stream,
    cond: &impl AsView<Bool>,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::where_";
    let (c, a, b, out) = (cond.view(), a.view(), b.view(), out.view_mut());
    let ab = broadcast_shapes(F, a.shape(), b.shape())?;
    let all = broadcast_shapes(F, c.shape(), &ab)?;
    expect_shape(F, out.shape(), &all)?;
    aclnn::s_where(stream, &nn(&c)?, &nn(&a)?, &nn(&b)?, &mut nn_mut(out)?)
}

/// [`where_`] into a new tensor of the broadcast shape.
///
/// # Errors
///
/// As [`where_`].
#[doc(alias = "aclnnSWhere")]
pub fn where_new<T: Element>(
    stream: &Stream,
    cond: &impl AsView<Bool>,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
) -> Result<Tensor<T>> {
    const F: &str = "ops::where_";
    let ab = broadcast_shapes(F, a.view().shape(), b.view().shape())?;
    let all = broadcast_shapes(F, cond.view().shape(), &ab)?;
    let mut out = Tensor::zeros(stream, &all)?;
    where_(stream, cond, a, b, &mut out)?;
    Ok(out)
}

/// Each element bounded to `[min, max]` (the bounds in `x`'s type).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `out` does not have `x`'s shape; the
/// aclnn status.
#[doc(alias = "aclnnClamp")]
pub fn clamp<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    min: T,
    max: T,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    expect_shape("ops::clamp", out.shape(), x.shape())?;
    let (lo, hi) = (aclnn::Scalar::new(min)?, aclnn::Scalar::new(max)?);
    aclnn::clamp(stream, &nn(&x)?, &lo, &hi, &mut nn_mut(out)?)
}

/// [`clamp`] into a new tensor.
///
/// # Errors
///
/// As [`clamp`].
#[doc(alias = "aclnnClamp")]
pub fn clamp_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    min: T,
    max: T,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    clamp(stream, x, min, max, &mut out)?;
    Ok(out)
}

/// Checks an index tensor against `x` for `function`: the same rank, and
/// every axis but `dim` no larger than `x`'s (torch's `gather`/`scatter`
/// rule).
fn index_fits(function: &'static str, x: &[usize], dim: usize, index: &[usize]) -> Result<()> {
    if index.len() != x.len() {
        return Err(Error::invalid(
            function,
            format!(
                "index has {} dimensions and the tensor {}; they must be equal",
                index.len(),
                x.len()
            ),
        ));
    }
    if let Some(d) = (0..x.len()).find(|&d| d != dim && index[d] > x[d]) {
        return Err(Error::invalid(
            function,
            format!(
                "index is {index:?}, larger than the tensor {x:?} along axis {d} (only axis {dim} may differ)"
            ),
        ));
    }
    Ok(())
}

/// `out[i][j] = x[i][index[i][j]]` along `dim` (torch's `gather`): `out`
/// has `index`'s shape.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range, an index of another
/// rank or larger than `x` off `dim`, or an `out` of another shape than
/// `index`; the aclnn status (an index out of range fails the operator).
#[doc(alias = "aclnnGather")]
pub fn gather<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<i64>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::gather";
    let (x, index, out) = (x.view(), index.view(), out.view_mut());
    let d = axis(F, dim, x.shape().len())?;
    index_fits(F, x.shape(), d, index.shape())?;
    expect_shape(F, out.shape(), index.shape())?;
    aclnn::gather(stream, &nn(&x)?, dim, &nn(&index)?, &mut nn_mut(out)?)
}

/// [`gather`] into a new tensor of `index`'s shape.
///
/// # Errors
///
/// As [`gather`].
#[doc(alias = "aclnnGather")]
pub fn gather_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<i64>,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, index.view().shape())?;
    gather(stream, x, dim, index, &mut out)?;
    Ok(out)
}

/// `out = x`, then `out[i][index[i][j]] += src[i][j]` along `dim` (torch's
/// `scatter_add`; duplicates accumulate). `out` has `x`'s shape, `src`
/// `index`'s.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range, an index of another
/// rank or larger than `x` off `dim`, a `src` of another shape than
/// `index`, or an `out` of another shape than `x`; the aclnn status.
#[doc(alias = "aclnnScatterAdd")]
pub fn scatter_add<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<i64>,
    src: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::scatter_add";
    let (x, index, src, out) = (x.view(), index.view(), src.view(), out.view_mut());
    let d = axis(F, dim, x.shape().len())?;
    index_fits(F, x.shape(), d, index.shape())?;
    if src.shape() != index.shape() {
        return Err(Error::invalid(
            F,
            format!(
                "src is {:?} and index {:?}; they must be equal",
                src.shape(),
                index.shape()
            ),
        ));
    }
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::scatter_add(
        stream,
        &nn(&x)?,
        dim,
        &nn(&index)?,
        &nn(&src)?,
        &mut nn_mut(out)?,
    )
}

/// [`scatter_add`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`scatter_add`].
#[doc(alias = "aclnnScatterAdd")]
pub fn scatter_add_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<i64>,
    src: &impl AsView<T>,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    scatter_add(stream, x, dim, index, src, &mut out)?;
    Ok(out)
}

/// `out = x`, then `out.select(dim, index[k]) += alpha · source.select(dim,
/// k)` for each `k` (torch's `index_add`): `index` is 1-D, `source` has
/// `x`'s shape with `index.len()` along `dim`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range, an index that is not
/// 1-D, a `source` of the wrong shape, or an `out` of another shape than
/// `x`; the aclnn status.
#[doc(alias = "aclnnIndexAdd")]
pub fn index_add<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<i64>,
    source: &impl AsView<T>,
    alpha: T,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::index_add";
    let (x, index, source, out) = (x.view(), index.view(), source.view(), out.view_mut());
    let d = axis(F, dim, x.shape().len())?;
    if index.shape().len() != 1 {
        return Err(Error::invalid(
            F,
            format!("index is {:?}; it must be 1-dimensional", index.shape()),
        ));
    }
    let mut want = x.shape().to_vec();
    want[d] = index.shape()[0];
    if source.shape() != want.as_slice() {
        return Err(Error::invalid(
            F,
            format!("source is {:?}; it must be {want:?}", source.shape()),
        ));
    }
    expect_shape(F, out.shape(), x.shape())?;
    let alpha = aclnn::Scalar::new(alpha)?;
    aclnn::index_add(
        stream,
        &nn(&x)?,
        dim,
        &nn(&index)?,
        &nn(&source)?,
        &alpha,
        &mut nn_mut(out)?,
    )
}

/// `x` reversed along each axis of `dims`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an axis out of range or repeated, or an
/// `out` of another shape; the aclnn status.
#[doc(alias = "aclnnFlip")]
pub fn flip<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dims: &[i64],
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::flip";
    let (x, out) = (x.view(), out.view_mut());
    let mut seen = Vec::with_capacity(dims.len());
    for &d in dims {
        let a = axis(F, d, x.shape().len())?;
        if seen.contains(&a) {
            return Err(Error::invalid(F, format!("axis {d} is given twice")));
        }
        seen.push(a);
    }
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::flip(
        stream,
        &nn(&x)?,
        &aclnn::IntArray::new(dims)?,
        &mut nn_mut(out)?,
    )
}

/// [`flip`] into a new tensor.
///
/// # Errors
///
/// As [`flip`].
#[doc(alias = "aclnnFlip")]
pub fn flip_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dims: &[i64],
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    flip(stream, x, dims, &mut out)?;
    Ok(out)
}

//! Reductions over axes and the softmax family.

use super::*;

/// The output shape of a reduction ([`reduce_sum`], [`reduce_mean`], [`reduce_max`]) of a
/// tensor of `shape` over `axes`: each reduced axis is dropped, or kept as 1
/// when `keep_dims`. Axes count from the end when negative; no axes at all
/// reduce every axis (aclnn's rule for an empty `dim`). Errors name
/// `function`, so a backend passes its own operator's name.
///
/// ```
/// use acl::ops::reduce_shape;
/// assert_eq!(reduce_shape("sum", &[2, 3, 4], &[1], false)?, [2, 4]);
/// assert_eq!(reduce_shape("sum", &[2, 3, 4], &[-1, 0], true)?, [1, 3, 1]);
/// assert_eq!(reduce_shape("sum", &[2, 3], &[], false)?, [0usize; 0]);
/// # Ok::<(), acl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when an axis is out of
/// range (`-rank..rank`; a 0-dimensional tensor has no axes).
pub fn reduce_shape(
    function: &'static str,
    shape: &[usize],
    axes: &[i64],
    keep_dims: bool,
) -> Result<Vec<usize>> {
    let mut marked = vec![false; shape.len()];
    for &a in axes {
        let i = axis(function, a, shape.len())?;
        // `axis` returns an index below the rank; `get_mut` keeps a broken
        // invariant an error rather than a panic.
        let Some(m) = marked.get_mut(i) else {
            return Err(Error::invalid(
                function,
                format!("axis {a} is out of range for shape {shape:?}"),
            ));
        };
        *m = true;
    }
    if axes.is_empty() {
        // No axes: every axis (aclnn's rule for an empty `dim`).
        marked.iter_mut().for_each(|m| *m = true);
    }
    Ok(shape
        .iter()
        .zip(&marked)
        .filter_map(|(&d, &m)| match (m, keep_dims) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(d),
        })
        .collect())
}

type Reduce =
    fn(&Stream, &aclnn::TensorArg<'_>, &[i64], bool, &mut aclnn::TensorArgMut<'_>) -> Result<()>;

pub(super) fn reduce<T: Element>(
    function: &'static str,
    op: Reduce,
    stream: &Stream,
    x: &impl AsView<T>,
    axes: &[i64],
    keep_dims: bool,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    let want = reduce_shape(function, x.shape(), axes, keep_dims)?;
    expect_shape(function, out.shape(), &want)?;
    op(stream, &nn(&x)?, axes, keep_dims, &mut nn_mut(out)?)
}

macro_rules! reduce_ops {
    ($($(#[$m:meta])* $name:ident, $new:ident => $op:ident, $c:literal;)*) => {$(
        $(#[$m])*
        ///
        /// `axes` may be negative (from the end); with `keep_dims` the
        /// reduced dimensions stay as 1. Empty `axes` reduces every axis
        /// (aclnn's rule).
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an axis out of range or an output
        /// of another shape; the aclnn status.
        #[doc(alias = $c)]
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &impl AsView<T>,
            axes: &[i64],
            keep_dims: bool,
            out: &mut impl AsViewMut<T>,
        ) -> Result<()> {
            reduce(concat!("ops::", stringify!($name)), adapt::$op, stream, x, axes, keep_dims, out)
        }

        #[doc = concat!("[`", stringify!($name), "`](fn@", stringify!($name), ") into a new tensor of the reduced shape ([`reduce_shape`]).")]
        ///
        /// # Errors
        ///
        #[doc = concat!("As [`", stringify!($name), "`](fn@", stringify!($name), ").")]
        #[doc(alias = $c)]
        pub fn $new<T: Element>(
            stream: &Stream,
            x: &impl AsView<T>,
            axes: &[i64],
            keep_dims: bool,
        ) -> Result<Tensor<T>> {
            const F: &str = concat!("ops::", stringify!($name));
            let shape = reduce_shape(F, x.view().shape(), axes, keep_dims)?;
            let mut out = Tensor::zeros(stream, &shape)?;
            reduce(F, adapt::$op, stream, x, axes, keep_dims, &mut out)?;
            Ok(out)
        }
    )*};
}

reduce_ops! {
    /// Sum over `axes` (`aclnnReduceSum`).
    reduce_sum, reduce_sum_new => reduce_sum, "aclnnReduceSum";
    /// Mean over `axes` (`aclnnMean`).
    reduce_mean, reduce_mean_new => mean, "aclnnMean";
    /// Maximum over `axes` (`aclnnAmax`).
    reduce_max, reduce_max_new => amax, "aclnnAmax";
}

type Softmax = fn(&Stream, &aclnn::TensorArg<'_>, i64, &mut aclnn::TensorArgMut<'_>) -> Result<()>;

pub(super) fn softmax_like<T: Element>(
    function: &'static str,
    op: Softmax,
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    axis(function, dim, x.shape().len())?;
    expect_shape(function, out.shape(), x.shape())?;
    op(stream, &nn(&x)?, dim, &mut nn_mut(out)?)
}

/// Softmax along `dim` (`aclnnSoftmax`; usually `-1`, negative counts
/// from the end).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dimension out of range or an output of
/// another shape; the aclnn status.
#[doc(alias = "aclnnSoftmax")]
pub fn softmax<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    softmax_like("ops::softmax", aclnn::softmax, stream, x, dim, out)
}

/// Log-softmax along `dim` (`aclnnLogSoftmax`).
///
/// # Errors
///
/// As [`softmax`].
#[doc(alias = "aclnnLogSoftmax")]
pub fn log_softmax<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    softmax_like("ops::log_softmax", aclnn::log_softmax, stream, x, dim, out)
}

/// [`softmax`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`softmax`].
#[doc(alias = "aclnnSoftmax")]
pub fn softmax_new<T: Element>(stream: &Stream, x: &impl AsView<T>, dim: i64) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    softmax(stream, x, dim, &mut out)?;
    Ok(out)
}

/// [`log_softmax`] into a new tensor of `x`'s shape.
///
/// # Errors
///
/// As [`log_softmax`].
#[doc(alias = "aclnnLogSoftmax")]
pub fn log_softmax_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    log_softmax(stream, x, dim, &mut out)?;
    Ok(out)
}

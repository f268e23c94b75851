//! Data movement: `transpose`, `copy`, `fill`.

use super::*;

/// Permutes the dimensions into a new layout: `out.shape[i] =
/// x.shape[perm[i]]` (`aclnnPermute`). A view with the dimensions permuted
/// ([`TensorView::permute`]) costs nothing; this moves the data.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `perm` is not a permutation of
/// `0..rank` or `out` has another shape; the aclnn status.
#[doc(alias = "aclnnPermute")]
pub fn transpose<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    perm: &[usize],
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::transpose";
    let (x, out) = (x.view(), out.view_mut());
    expect_shape(F, out.shape(), &permuted_shape(x.shape(), perm)?)?;
    // Each entry is below the rank, at most 8 (checked above): converted.
    let perm64 = perm
        .iter()
        .map(|&p| {
            i64::try_from(p)
                .map_err(|_| Error::invalid(F, format!("perm entry {p} is above i64::MAX")))
        })
        .collect::<Result<Vec<i64>>>()?;
    aclnn::permute(
        stream,
        &nn(&x)?,
        &aclnn::IntArray::new(&perm64)?,
        &mut nn_mut(out)?,
    )
}

/// `shape` permuted by `perm` (`[shape[perm[0]], ...]`).
fn permuted_shape(shape: &[usize], perm: &[usize]) -> Result<Vec<usize>> {
    let rank = shape.len();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || perm
            .iter()
            .any(|&p| p >= rank || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::invalid(
            "ops::transpose",
            format!("perm {perm:?} is not a permutation of 0..{rank}"),
        ));
    }
    Ok(perm.iter().map(|&p| shape[p]).collect())
}

/// [`transpose`] into a new tensor (`out.shape[i] = x.shape[perm[i]]`).
///
/// # Errors
///
/// As [`transpose`].
#[doc(alias = "aclnnPermute")]
pub fn transpose_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    perm: &[usize],
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, &permuted_shape(x.view().shape(), perm)?)?;
    transpose(stream, x, perm, &mut out)?;
    Ok(out)
}

/// Copies `src` into `dst`, broadcasting `src` to `dst`'s shape
/// (`aclnnInplaceCopy`): how a view is made contiguous, or new keys are
/// written into a slice of a KV cache.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `src`'s shape does not broadcast to
/// `dst`'s; the aclnn status.
#[doc(alias = "aclnnInplaceCopy")]
pub fn copy<T: Element>(
    stream: &Stream,
    src: &impl AsView<T>,
    dst: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (src, dst) = (src.view(), dst.view_mut());
    expect_broadcast_to("ops::copy", src.shape(), dst.shape())?;
    aclnn::copy_(stream, &mut nn_mut(dst)?, &nn(&src)?)
}

/// Sets every element of `out` to `value` (`aclnnInplaceFillScalar`).
///
/// # Errors
///
/// The aclnn status.
#[doc(alias = "aclnnInplaceFillScalar")]
pub fn fill<T: Element>(stream: &Stream, value: T, out: &mut impl AsViewMut<T>) -> Result<()> {
    aclnn::fill_(
        stream,
        &mut nn_mut(out.view_mut())?,
        &aclnn::Scalar::new(value)?,
    )
}

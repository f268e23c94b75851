//! Matrix products: `matmul`, `matmul_t`, batched forms. Transposes are
//! views (strides swapped), not copies: aclnn reads the operand in place.

use super::*;
use crate::aclnn::CubeMathType;

/// `out = a @ b` for matrices `[m, k] @ [k, n]` (`aclnnMatmul`).
///
/// # Errors
///
/// As [`matmul_t`].
#[doc(alias = "aclnnMatmul")]
pub fn matmul<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    matmul_t(stream, a, false, b, false, out)
}

/// The output shape of `op(a) @ op(b)` for operands of shapes `a` and `b`
/// ([`matmul_t`] for matrices, [`batch_matmul_adj`] with batch dimensions;
/// `op` swaps the last two dimensions when asked): `[..batch, m, n]`, the
/// leading dimensions broadcast (NumPy). Errors name `function`, so a
/// backend passes its own operator's name.
///
/// ```
/// use acl::ops::matmul_shape;
/// assert_eq!(matmul_shape("mm", &[2, 3], false, &[3, 4], false)?, [2, 4]);
/// assert_eq!(matmul_shape("mm", &[3, 2], true, &[4, 3], true)?, [2, 4]);
/// assert_eq!(matmul_shape("bmm", &[5, 1, 2, 3], false, &[7, 3, 4], false)?, [5, 7, 2, 4]);
/// # Ok::<(), acl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when an operand has fewer
/// than 2 dimensions, the inner dimensions differ, or the batch dimensions
/// do not broadcast.
pub fn matmul_shape(
    function: &'static str,
    a: &[usize],
    transpose_a: bool,
    b: &[usize],
    transpose_b: bool,
) -> Result<Vec<usize>> {
    let (ra, rb) = (a.len(), b.len());
    if ra < 2 || rb < 2 {
        return Err(Error::invalid(
            function,
            format!("matrix products take operands of at least 2 dimensions, got {a:?} and {b:?}"),
        ));
    }
    let (m, n) = matmul_dims(
        function,
        &a[ra - 2..],
        transpose_a,
        &b[rb - 2..],
        transpose_b,
    )?;
    let mut out = broadcast_shapes(function, &a[..ra - 2], &b[..rb - 2])?;
    out.extend([m, n]);
    Ok(out)
}

pub(super) fn matmul_dims(
    function: &'static str,
    a: &[usize],
    ta: bool,
    b: &[usize],
    tb: bool,
) -> Result<(usize, usize)> {
    let (m, ka) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
    let (kb, n) = if tb { (b[1], b[0]) } else { (b[0], b[1]) };
    if ka != kb {
        let t = |yes: bool| if yes { "ᵀ" } else { "" };
        return Err(Error::invalid(
            function,
            format!(
                "inner dimensions differ: {a:?}{} @ {b:?}{} ({ka} vs {kb})",
                t(ta),
                t(tb)
            ),
        ));
    }
    Ok((m, n))
}

/// The view with its last two dimensions swapped when `yes`.
fn maybe_t<T: Element>(v: TensorView<'_, T>, yes: bool) -> Result<TensorView<'_, T>> {
    let r = v.shape().len();
    if yes && r >= 2 {
        v.transpose(r - 2, r - 1)
    } else {
        Ok(v)
    }
}

/// `out = op(a) @ op(b)`, `op` transposing when asked (a transposed view:
/// `aclnnMatmul` reads it through its strides); `f16`/`bf16` compute in
/// their own type (`cubeMathType` `KEEP_DTYPE`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `a` or `b` is not 2-D, the inner
/// dimensions differ, or `out` is not `[m, n]`; the aclnn status.
#[doc(alias = "aclnnMatmul")]
pub fn matmul_t<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    transpose_a: bool,
    b: &impl AsView<T>,
    transpose_b: bool,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::matmul";
    let (a, b, out) = (a.view(), b.view(), out.view_mut());
    let mn = matrix_product_shape(a.shape(), transpose_a, b.shape(), transpose_b)?;
    expect_shape(F, out.shape(), &mn)?;
    let (a, b) = (maybe_t(a, transpose_a)?, maybe_t(b, transpose_b)?);
    run(stream, a, b, out)
}

/// `[m, n]` for 2-D operands of [`matmul_t`].
fn matrix_product_shape(
    a: &[usize],
    transpose_a: bool,
    b: &[usize],
    transpose_b: bool,
) -> Result<[usize; 2]> {
    const F: &str = "ops::matmul";
    if a.len() != 2 || b.len() != 2 {
        return Err(Error::invalid(
            F,
            format!("matmul takes 2-D operands, got {a:?} and {b:?} (use batch_matmul)"),
        ));
    }
    let (m, n) = matmul_dims(F, a, transpose_a, b, transpose_b)?;
    Ok([m, n])
}

/// Batched `out = a @ b` over leading (broadcast) batch dimensions
/// (`aclnnMatmul`).
///
/// # Errors
///
/// As [`batch_matmul_adj`].
#[doc(alias = "aclnnMatmul")]
pub fn batch_matmul<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    batch_matmul_adj(stream, a, false, b, false, out)
}

/// Batched `out = op(a) @ op(b)` (`aclnnMatmul`; `op` swaps the last two
/// dimensions of a view when asked): the last two dimensions are the
/// matrices, the leading ones broadcast.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when an operand has fewer than 2 dimensions,
/// the inner dimensions differ, the batch dimensions do not broadcast, or
/// `out` has another shape; the aclnn status.
#[doc(alias = "aclnnMatmul")]
pub fn batch_matmul_adj<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    adj_a: bool,
    b: &impl AsView<T>,
    adj_b: bool,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::batch_matmul";
    let (a, b, out) = (a.view(), b.view(), out.view_mut());
    let want = matmul_shape(F, a.shape(), adj_a, b.shape(), adj_b)?;
    expect_shape(F, out.shape(), &want)?;
    let (a, b) = (maybe_t(a, adj_a)?, maybe_t(b, adj_b)?);
    run(stream, a, b, out)
}

/// `aclnnMatmul` in the operands' own type (checked by the callers).
fn run<T: Element>(
    stream: &Stream,
    a: TensorView<'_, T>,
    b: TensorView<'_, T>,
    out: TensorViewMut<'_, T>,
) -> Result<()> {
    aclnn::matmul(
        stream,
        &nn(&a)?,
        &nn(&b)?,
        &mut nn_mut(out)?,
        CubeMathType::KeepDtype,
    )
}

/// [`matmul`] into a new `[m, n]` tensor.
///
/// # Errors
///
/// As [`matmul_t`].
#[doc(alias = "aclnnMatmul")]
pub fn matmul_new<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
) -> Result<Tensor<T>> {
    matmul_t_new(stream, a, false, b, false)
}

/// [`matmul_t`] into a new `[m, n]` tensor.
///
/// # Errors
///
/// As [`matmul_t`].
#[doc(alias = "aclnnMatmul")]
pub fn matmul_t_new<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    transpose_a: bool,
    b: &impl AsView<T>,
    transpose_b: bool,
) -> Result<Tensor<T>> {
    let shape = matrix_product_shape(a.view().shape(), transpose_a, b.view().shape(), transpose_b)?;
    let mut out = Tensor::zeros(stream, &shape)?;
    matmul_t(stream, a, transpose_a, b, transpose_b, &mut out)?;
    Ok(out)
}

/// [`batch_matmul`] into a new tensor of the broadcast batch shape.
///
/// # Errors
///
/// As [`batch_matmul_adj`].
#[doc(alias = "aclnnMatmul")]
pub fn batch_matmul_new<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    b: &impl AsView<T>,
) -> Result<Tensor<T>> {
    batch_matmul_adj_new(stream, a, false, b, false)
}

/// [`batch_matmul_adj`] into a new tensor of the broadcast batch shape.
///
/// # Errors
///
/// As [`batch_matmul_adj`].
#[doc(alias = "aclnnMatmul")]
pub fn batch_matmul_adj_new<T: Element>(
    stream: &Stream,
    a: &impl AsView<T>,
    adj_a: bool,
    b: &impl AsView<T>,
    adj_b: bool,
) -> Result<Tensor<T>> {
    let shape = matmul_shape(
        "ops::batch_matmul",
        a.view().shape(),
        adj_a,
        b.view().shape(),
        adj_b,
    )?;
    let mut out = Tensor::zeros(stream, &shape)?;
    batch_matmul_adj(stream, a, adj_a, b, adj_b, &mut out)?;
    Ok(out)
}

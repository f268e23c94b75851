//! Matrix products: `matmul`, `matmul_t`, batched forms.

use super::*;

/// `out = a @ b` for matrices `[m, k] @ [k, n]` (`MatMul`).
///
/// # Errors
///
/// As [`matmul_t`].
#[doc(alias = "MatMul")]
pub fn matmul<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    matmul_t(stream, a, false, b, false, out)
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
        return Err(Error::invalid(
            function,
            format!(
                "inner dimensions differ: {a:?}{} @ {b:?}{} ({ka} vs {kb})",
                if ta { "ᵀ" } else { "" },
                if tb { "ᵀ" } else { "" }
            ),
        ));
    }
    Ok((m, n))
}

/// `out = op(a) @ op(b)`, `op` transposing when asked (`MatMul` with
/// `transpose_x1`, `transpose_x2`); `f16`/`bf16` accumulate in `f32`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `a` or `b` is not 2-D, the inner
/// dimensions differ, or `out` is not `[m, n]`; the runtime's error.
#[doc(alias = "MatMul")]
pub fn matmul_t<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    transpose_a: bool,
    b: &Tensor<T>,
    transpose_b: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::matmul";
    if a.shape.len() != 2 || b.shape.len() != 2 {
        return Err(Error::invalid(
            F,
            format!(
                "MatMul takes 2-D operands, got {:?} and {:?} (use batch_matmul)",
                a.shape, b.shape
            ),
        ));
    }
    let (m, n) = matmul_dims(F, &a.shape, transpose_a, &b.shape, transpose_b)?;
    expect_shape(F, &out.shape, &[m, n])?;
    let mut attr = OpAttr::new()?;
    attr.set_bool_c(c"transpose_x1", transpose_a)?
        .set_bool_c(c"transpose_x2", transpose_b)?;
    launch_binary(stream, c"MatMul", a, b, out, Some(&attr))
}

/// Batched `out = a @ b` over leading (broadcast) batch dimensions (`BatchMatMul`).
///
/// # Errors
///
/// As [`batch_matmul_adj`].
#[doc(alias = "BatchMatMul")]
pub fn batch_matmul<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    batch_matmul_adj(stream, a, false, b, false, out)
}

/// Batched `out = op(a) @ op(b)` (`BatchMatMul` with `adj_x1`, `adj_x2`):
/// the last two dimensions are the matrices, the leading ones broadcast.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when an operand has fewer than 2 dimensions,
/// the inner dimensions differ, the batch dimensions do not broadcast, or
/// `out` has another shape; the runtime's error.
#[doc(alias = "BatchMatMul")]
pub fn batch_matmul_adj<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    adj_a: bool,
    b: &Tensor<T>,
    adj_b: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::batch_matmul";
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra < 2 || rb < 2 {
        return Err(Error::invalid(
            F,
            format!(
                "BatchMatMul takes operands of at least 2 dimensions, got {:?} and {:?}",
                a.shape, b.shape
            ),
        ));
    }
    let (m, n) = matmul_dims(F, &a.shape[ra - 2..], adj_a, &b.shape[rb - 2..], adj_b)?;
    let mut want = broadcast_shapes(F, &a.shape[..ra - 2], &b.shape[..rb - 2])?;
    want.extend([m, n]);
    expect_shape(F, &out.shape, &want)?;
    let mut attr = OpAttr::new()?;
    attr.set_bool_c(c"adj_x1", adj_a)?
        .set_bool_c(c"adj_x2", adj_b)?;
    launch_binary(stream, c"BatchMatMul", a, b, out, Some(&attr))
}

//! Data movement: `transpose` and `fill`.

use super::*;

/// Permutes the dimensions: `out.shape[i] = x.shape[perm[i]]` (`Transpose`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `perm` is not a permutation of
/// `0..rank` or `out` has another shape; the runtime's error.
#[doc(alias = "Transpose")]
pub fn transpose<T: Element>(
    stream: &Stream,
    x: &Tensor<T>,
    perm: &[usize],
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::transpose";
    let rank = x.shape.len();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || perm
            .iter()
            .any(|&p| p >= rank || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::invalid(
            F,
            format!("perm {perm:?} is not a permutation of 0..{rank}"),
        ));
    }
    let want: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    expect_shape(F, &out.shape, &want)?;
    // Each entry is below the rank (checked above), so it fits: converted.
    let perm64 = perm
        .iter()
        .map(|&p| {
            i64::try_from(p)
                .map_err(|_| Error::invalid(F, format!("perm entry {p} is above i64::MAX")))
        })
        .collect::<Result<Vec<i64>>>()?;
    let rank64 = len_i64(F, "the permutation", rank)?;
    let (dx, mut dout) = (x.desc()?, out.desc()?);
    Operator::from_c_str(c"Transpose")
        .input(&dx, &x.buf)
        .host_input::<i64>(&[rank64], &perm64)
        .output(&mut dout, &mut out.buf)
        .execute(stream)
}

/// Sets every element of `out` to `value` (`Fill`).
///
/// # Errors
///
/// The runtime's error.
#[doc(alias = "Fill")]
pub fn fill<T: Element>(stream: &Stream, value: T, out: &mut Tensor<T>) -> Result<()> {
    let dims = out.dims()?;
    let mut dout = out.desc()?;
    let value = [value];
    Operator::from_c_str(c"Fill")
        .host_input::<i64>(&[len_i64("ops::fill", "the shape", dims.len())?], &dims)
        .host_input::<T>(&[], &value)
        .output(&mut dout, &mut out.buf)
        .execute(stream)
}

//! Shape rules: NumPy broadcasting, output shapes, axes.

use super::*;

/// Dimension `i` of `shape` right-aligned to `n` dimensions (NumPy
/// broadcasting): the missing leading dimensions are 1.
pub(super) fn dim_aligned(shape: &[usize], i: usize, n: usize) -> usize {
    if i + shape.len() >= n {
        shape[i + shape.len() - n]
    } else {
        1
    }
}

/// NumPy broadcasting of two shapes.
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when they do not broadcast.
pub fn broadcast_shapes(function: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let (da, db) = (dim_aligned(a, i, n), dim_aligned(b, i, n));
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::invalid(
                    function,
                    format!(
                        "shapes {a:?} and {b:?} do not broadcast (dimension {i}: {da} vs {db})"
                    ),
                ));
            }
        };
    }
    Ok(out)
}

/// Checks that `out` is the broadcast shape of `a` and `b`, without allocating.
pub(super) fn expect_broadcast(
    function: &'static str,
    a: &[usize],
    b: &[usize],
    out: &[usize],
) -> Result<()> {
    let n = a.len().max(b.len());
    let fits = out.len() == n
        && (0..n).all(|i| {
            let (da, db) = (dim_aligned(a, i, n), dim_aligned(b, i, n));
            (da == db || da == 1 || db == 1) && out[i] == if da == 1 { db } else { da }
        });
    if fits {
        return Ok(());
    }
    let want = broadcast_shapes(function, a, b)?;
    expect_shape(function, out, &want)
}

/// Checks that `src` broadcasts to `dst`'s shape, which the result keeps
/// (copies and in-place operators write `dst`).
pub(super) fn expect_broadcast_to(
    function: &'static str,
    src: &[usize],
    dst: &[usize],
) -> Result<()> {
    expect_broadcast(function, dst, src, dst)
}

pub(super) fn expect_shape(function: &'static str, out: &[usize], want: &[usize]) -> Result<()> {
    if out == want {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("the output has shape {out:?}, the result has shape {want:?}"),
        ))
    }
}

/// Axis `a` of a `rank`-dimensional tensor, counted from the end when
/// negative: `-rank..rank` (none for a 0-dimensional tensor, as in CANN).
pub(super) fn axis(function: &'static str, a: i64, rank: usize) -> Result<usize> {
    let from_start = match i64::try_from(rank) {
        Ok(r) if a < 0 => a.checked_add(r),
        Ok(_) => Some(a),
        Err(_) => None,
    };
    match from_start.and_then(|i| usize::try_from(i).ok()) {
        Some(i) if i < rank => Ok(i),
        _ if rank == 0 => Err(Error::invalid(
            function,
            format!("axis {a} is out of range for a 0-dimensional tensor, which has no axes"),
        )),
        _ => Err(Error::invalid(
            function,
            format!("axis {a} is out of range for a {rank}-dimensional tensor"),
        )),
    }
}

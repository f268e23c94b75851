//! NumPy broadcasting: the output shape of two shapes, and a binary map over
//! broadcast operands that keeps the innermost loop contiguous.

use super::{Op, OpError, fmt_shape};

/// The broadcast shape of `a` (input `a_name`) and `b`: shapes are aligned at
/// their last dimension; each pair of dimensions must be equal or one of them 1.
pub(crate) fn broadcast_shapes(
    op: Op,
    a_name: &str,
    a: &[i64],
    b_name: &str,
    b: &[i64],
) -> Result<Vec<i64>, OpError> {
    let rank = a.len().max(b.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        // Dimension i of the output, counted from the front.
        let da = (i + a.len()).checked_sub(rank).map_or(1, |j| a[j]);
        let db = (i + b.len()).checked_sub(rank).map_or(1, |j| b[j]);
        let d = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(OpError::Input(format!(
                "{}: {a_name} is {} and {b_name} is {}: dimension {i} of the broadcast \
                 shape (sizes {da} and {db}) cannot be broadcast",
                op.name(),
                fmt_shape(a),
                fmt_shape(b)
            )));
        };
        out.push(d);
    }
    Ok(out)
}

/// Element strides of an input of shape `shape` read as `out` (its broadcast
/// shape): 0 along broadcast dimensions. One stride per output dimension.
pub(crate) fn broadcast_strides(shape: &[i64], out: &[i64]) -> Vec<usize> {
    let pad = out.len().saturating_sub(shape.len());
    let mut strides = vec![0usize; out.len()];
    let mut s = 1usize;
    for (i, &d) in shape.iter().enumerate().rev() {
        let d = d.max(0) as usize;
        if d != 1 {
            strides[i + pad] = s;
        }
        s = s.saturating_mul(d);
    }
    strides
}

/// Row-major strides of `shape`.
pub(crate) fn contiguous_strides(shape: &[i64]) -> Vec<usize> {
    let mut strides = vec![0usize; shape.len()];
    let mut s = 1usize;
    for (i, &d) in shape.iter().enumerate().rev() {
        strides[i] = s;
        s = s.saturating_mul(d.max(1) as usize);
    }
    strides
}

/// Calls `f(outer_offsets)` once per row of the innermost output dimension,
/// with the offset of that row's first element in each of `strides` (one
/// stride vector per operand, all of `shape.len()` entries). `shape` must
/// have no zero dimension and rank >= 1.
pub(crate) fn for_each_row<const N: usize>(
    shape: &[i64],
    strides: [&[usize]; N],
    mut f: impl FnMut([usize; N]),
) {
    let rank = shape.len();
    if rank == 0 {
        f([0; N]);
        return;
    }
    let outer = rank - 1;
    let mut idx = vec![0usize; outer];
    let mut offs = [0usize; N];
    loop {
        f(offs);
        // Odometer over the outer dimensions.
        let mut d = outer;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            for (o, s) in offs.iter_mut().zip(&strides) {
                *o += s[d];
            }
            if idx[d] < shape[d].max(0) as usize {
                break;
            }
            for (o, s) in offs.iter_mut().zip(&strides) {
                *o -= s[d] * idx[d];
            }
            idx[d] = 0;
        }
    }
}

/// `out[i] = f(a[ia], b[ib])` over the broadcast shape `out_shape`, where
/// `a` has shape `a_shape` and `b` has shape `b_shape` (both broadcastable
/// to `out_shape`, lengths validated).
pub(crate) fn binary_map<A: Copy, B: Copy, O>(
    a: &[A],
    a_shape: &[i64],
    b: &[B],
    b_shape: &[i64],
    out_shape: &[i64],
    out: &mut [O],
    f: impl Fn(A, B) -> O,
) {
    let n = out.len();
    if n == 0 {
        return;
    }
    if a.len() == n && b.len() == n {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = f(x, y);
        }
        return;
    }
    if let ([x], true) = (a, b.len() == n) {
        for (o, &y) in out.iter_mut().zip(b) {
            *o = f(*x, y);
        }
        return;
    }
    if let (true, [y]) = (a.len() == n, b) {
        for (o, &x) in out.iter_mut().zip(a) {
            *o = f(x, *y);
        }
        return;
    }
    let sa = broadcast_strides(a_shape, out_shape);
    let sb = broadcast_strides(b_shape, out_shape);
    let so = contiguous_strides(out_shape);
    let rank = out_shape.len();
    let inner = out_shape[rank - 1].max(0) as usize;
    let (ia, ib) = (sa[rank - 1], sb[rank - 1]);
    for_each_row(out_shape, [&so, &sa, &sb], |[oo, oa, ob]| {
        let orow = &mut out[oo..oo + inner];
        match (ia, ib) {
            (1, 1) => {
                for ((o, &x), &y) in orow
                    .iter_mut()
                    .zip(&a[oa..oa + inner])
                    .zip(&b[ob..ob + inner])
                {
                    *o = f(x, y);
                }
            }
            (1, _) => {
                let y = b[ob];
                for (o, &x) in orow.iter_mut().zip(&a[oa..oa + inner]) {
                    *o = f(x, y);
                }
            }
            (_, 1) => {
                let x = a[oa];
                for (o, &y) in orow.iter_mut().zip(&b[ob..ob + inner]) {
                    *o = f(x, y);
                }
            }
            _ => {
                let (x, y) = (a[oa], b[ob]);
                for o in orow.iter_mut() {
                    *o = f(x, y);
                }
            }
        }
    });
}

//! Index inputs (`axes`, `perm`, `dims`) and axis normalisation.

use super::{Arg, DType, Op, OpError, check_dtype, dtype, fmt_shape};

/// The values of an index input (`axes`, `perm`, `dims`): int32 or int64,
/// of rank at most `max_rank`. `Ok(None)` when the data is not known.
pub(crate) fn index_values(
    op: Op,
    name: &str,
    arg: &Arg<'_>,
    max_rank: usize,
) -> Result<Option<Vec<i64>>, OpError> {
    check_dtype(op, name, arg.spec.dtype, &[DType::I32, DType::I64])?;
    if arg.spec.shape.len() > max_rank {
        return Err(OpError::Input(format!(
            "{}: input {name} has shape {}: it must be {}",
            op.name(),
            fmt_shape(&arg.spec.shape),
            if max_rank == 0 {
                "a scalar"
            } else {
                "1-D (or a scalar)"
            }
        )));
    }
    Ok(arg.data.map(|d| dtype::load_i64(arg.spec.dtype, d)))
}

/// `axis` in `[-rank, rank-1]`, as an index.
pub(crate) fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis.checked_add(r)? } else { axis };
    if (0..r).contains(&a) {
        usize::try_from(a).ok()
    } else {
        None
    }
}

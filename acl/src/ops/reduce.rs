//! Reductions over axes and the softmax family.

use super::*;

/// The shape of a reduction of `shape` over `axes`.
pub(super) fn reduced_shape(
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
        return Ok(shape.to_vec());
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

pub(super) fn reduce<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    axes: &[i64],
    keep_dims: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    let want = reduced_shape(function, &x.shape, axes, keep_dims)?;
    expect_shape(function, &out.shape, &want)?;
    let mut attr = OpAttr::new()?;
    attr.set_bool("keep_dims", keep_dims)?;
    let n_axes = len_i64(function, "axes", axes.len())?;
    let (dx, mut dout) = (x.desc()?, out.desc()?);
    Operator::from_c_str(op)
        .input(&dx, &x.buf)
        .host_input::<i64>(&[n_axes], axes)
        .output(&mut dout, &mut out.buf)
        .attr(&attr)
        .execute(stream)
}

macro_rules! reduce_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `axes` may be negative (from the end); with `keep_dims` the
        /// reduced dimensions stay as 1. Empty `axes` leaves `x` as it is.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an axis out of range or an output
        /// of another shape; the runtime's error.
        #[doc(alias = $op)]
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &Tensor<T>,
            axes: &[i64],
            keep_dims: bool,
            out: &mut Tensor<T>,
        ) -> Result<()> {
            reduce($cop, concat!("ops::", stringify!($name)), stream, x, axes, keep_dims, out)
        }
    )*};
}

reduce_ops! {
    /// Sum over `axes` (`ReduceSum`).
    reduce_sum => "ReduceSum", c"ReduceSum",
    /// Mean over `axes` (`ReduceMean`).
    reduce_mean => "ReduceMean", c"ReduceMean",
    /// Maximum over `axes` (`ReduceMax`).
    reduce_max => "ReduceMax", c"ReduceMax",
}

pub(super) fn softmax_like<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    axes: &[i64],
    out: &mut Tensor<T>,
) -> Result<()> {
    for &a in axes {
        axis(function, a, x.shape.len())?;
    }
    expect_shape(function, &out.shape, &x.shape)?;
    let mut attr = OpAttr::new()?;
    attr.set_list_int("axes", axes)?;
    launch_unary(stream, op, x, out, Some(&attr))
}

/// Public softmax-like wrappers over [`softmax_like`]: each takes its doc
/// comment (with `# Errors` and `#[doc(alias)]`) from the invocation.
macro_rules! softmax_ops {
    ($($(#[$m:meta])* $name:ident => $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &Tensor<T>,
            axes: &[i64],
            out: &mut Tensor<T>,
        ) -> Result<()> {
            softmax_like($cop, concat!("ops::", stringify!($name)), stream, x, axes, out)
        }
    )*};
}

softmax_ops! {
    /// Softmax over `axes` (`SoftmaxV2`; usually `&[-1]`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an axis out of range or an output of
    /// another shape; the runtime's error.
    #[doc(alias = "SoftmaxV2")]
    softmax => c"SoftmaxV2",
    /// Log-softmax over `axes` (`LogSoftmaxV2`).
    ///
    /// # Errors
    ///
    /// As [`softmax`].
    #[doc(alias = "LogSoftmaxV2")]
    log_softmax => c"LogSoftmaxV2",
}

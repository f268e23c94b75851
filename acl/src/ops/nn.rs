//! The operators of neural networks: normalisation, activations, rotary
//! embedding, indexing, concatenation, triangles, ranges, scans, sorting,
//! convolution, pooling and attention. Each `op(stream, inputs.., out)`
//! writes a preallocated `out` (shapes checked first); each `op_new(stream,
//! inputs..)` allocates the output of the right shape on `stream` and
//! returns it.

use super::*;
use crate::memory::Bool;
use aclnn::{CubeMathType, IntArray, RotaryMode, Scalar, TensorList};

pub(super) fn dims_i64(function: &'static str, v: &[usize]) -> Result<Vec<i64>> {
    v.iter()
        .map(|&d| {
            i64::try_from(d).map_err(|_| Error::invalid(function, format!("{d} is above i64::MAX")))
        })
        .collect()
}

/// Layer normalisation over the last `normalized` dimensions of `x`, with an
/// optional `weight` and `bias` of those dimensions (`aclnnLayerNorm`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for `normalized` above `x`'s rank, a weight
/// or bias of another shape, or an `out` of another shape than `x`; the
/// aclnn status.
#[doc(alias = "aclnnLayerNorm")]
pub fn layer_norm<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    normalized: usize,
    weight: Option<&TensorView<'_, T>>,
    bias: Option<&TensorView<'_, T>>,
    eps: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::layer_norm";
    let (x, out) = (x.view(), out.view_mut());
    let r = x.shape().len();
    if normalized == 0 || normalized > r {
        return Err(Error::invalid(
            F,
            format!("normalized = {normalized} dimensions of a {r}-dimensional x"),
        ));
    }
    let tail = &x.shape()[r - normalized..];
    for (what, t) in [("weight", weight), ("bias", bias)] {
        if let Some(t) = t
            && t.shape() != tail
        {
            return Err(Error::invalid(
                F,
                format!(
                    "{what} has shape {:?}, not x's trailing {tail:?}",
                    t.shape()
                ),
            ));
        }
    }
    expect_shape(F, out.shape(), x.shape())?;
    let shape = IntArray::new(&dims_i64(F, tail)?)?;
    let (w, b) = (weight.map(nn).transpose()?, bias.map(nn).transpose()?);
    aclnn::layer_norm(
        stream,
        &nn(&x)?,
        &shape,
        w.as_ref(),
        b.as_ref(),
        eps,
        &mut nn_mut(out)?,
        None,
        None,
    )
}

/// [`layer_norm`] into a new tensor.
///
/// # Errors
///
/// As [`layer_norm`].
pub fn layer_norm_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    normalized: usize,
    weight: Option<&TensorView<'_, T>>,
    bias: Option<&TensorView<'_, T>>,
    eps: f64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    layer_norm(stream, x, normalized, weight, bias, eps, &mut out)?;
    Ok(out)
}

/// RMS normalisation over `gamma`'s (trailing) dimensions (`aclnnRmsNorm`):
/// `out = x / rms(x) · gamma`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a gamma that is not `x`'s trailing
/// dimensions or an `out` of another shape; the aclnn status.
#[doc(alias = "aclnnRmsNorm")]
pub fn rms_norm<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    gamma: &impl AsView<T>,
    eps: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::rms_norm";
    let (x, g, out) = (x.view(), gamma.view(), out.view_mut());
    let (r, k) = (x.shape().len(), g.shape().len());
    if k == 0 || k > r || x.shape()[r - k..] != *g.shape() {
        return Err(Error::invalid(
            F,
            format!(
                "gamma {:?} is not the trailing dimensions of x {:?}",
                g.shape(),
                x.shape()
            ),
        ));
    }
    expect_shape(F, out.shape(), x.shape())?;
    let mut rstd_shape = x.shape()[..r - k].to_vec();
    rstd_shape.extend(std::iter::repeat_n(1, k));
    // The reciprocal RMS the operator also writes, freed stream-ordered.
    let mut rstd = Tensor::<f32>::zeros(stream, &rstd_shape)?;
    aclnn::rms_norm(
        stream,
        &nn(&x)?,
        &nn(&g)?,
        eps,
        &mut nn_mut(out)?,
        &mut nn_mut(rstd.view_mut())?,
    )
}

/// [`rms_norm`] into a new tensor.
///
/// # Errors
///
/// As [`rms_norm`].
pub fn rms_norm_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    gamma: &impl AsView<T>,
    eps: f64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, x.view().shape())?;
    rms_norm(stream, x, gamma, eps, &mut out)?;
    Ok(out)
}

/// Rotary position embedding of a 4-D `x` (`aclnnRotaryPositionEmbedding`):
/// `out = x · cos + rotate(x) · sin` along the last dimension, `cos` and
/// `sin` broadcasting to `x`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an `out` of another shape than `x`; the
/// aclnn status (561002 for cos/sin that do not fit x).
#[doc(alias = "aclnnRotaryPositionEmbedding")]
pub fn rope<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    cos: &impl AsView<T>,
    sin: &impl AsView<T>,
    mode: RotaryMode,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, c, s, out) = (x.view(), cos.view(), sin.view(), out.view_mut());
    expect_shape("ops::rope", out.shape(), x.shape())?;
    aclnn::rotary_position_embedding(
        stream,
        &nn(&x)?,
        &nn(&c)?,
        &nn(&s)?,
        mode,
        &mut nn_mut(out)?,
    )
}

/// GELU, exact (`tanh` false: `x·Φ(x)` with erf) or tanh-approximated
/// (`aclnnGeluV2`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an `out` of another shape; the aclnn status.
#[doc(alias = "aclnnGeluV2")]
pub fn gelu_v2<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    tanh: bool,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    expect_shape("ops::gelu_v2", out.shape(), x.shape())?;
    aclnn::gelu_v2(stream, &nn(&x)?, i64::from(tanh), &mut nn_mut(out)?)
}

/// The slices of `x` along `dim` that the 1-D `index` (i32 or i64) names
/// (`aclnnIndexSelect`): `out.shape[dim] = index.len()`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range, an index that is not
/// 1-D or an `out` of another shape; the aclnn status. An index out of
/// range fails the kernel, reported by the next synchronisation.
#[doc(alias = "aclnnIndexSelect")]
pub fn index_select<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<I>,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::index_select";
    let (x, i, out) = (x.view(), index.view(), out.view_mut());
    let want = index_select_shape(F, x.shape(), dim, i.shape())?;
    expect_shape(F, out.shape(), &want)?;
    aclnn::index_select(stream, &nn(&x)?, dim, &nn(&i)?, &mut nn_mut(out)?)
}

fn index_select_shape(
    function: &'static str,
    x: &[usize],
    dim: i64,
    index: &[usize],
) -> Result<Vec<usize>> {
    let d = axis(function, dim, x.len())?;
    if index.len() > 1 {
        return Err(Error::invalid(
            function,
            format!("index has shape {index:?}; it must be 1-D"),
        ));
    }
    let mut want = x.to_vec();
    want[d] = index.iter().product();
    Ok(want)
}

/// [`index_select`] into a new tensor.
///
/// # Errors
///
/// As [`index_select`].
pub fn index_select_new<T: Element, I: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    index: &impl AsView<I>,
) -> Result<Tensor<T>> {
    let shape = index_select_shape(
        "ops::index_select",
        x.view().shape(),
        dim,
        index.view().shape(),
    )?;
    let mut out = Tensor::zeros(stream, &shape)?;
    index_select(stream, x, dim, index, &mut out)?;
    Ok(out)
}

/// Concatenation of `xs` along `dim` (`aclnnCat`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for no input, parts whose other dimensions
/// differ, or an `out` of another shape; the aclnn status.
#[doc(alias = "aclnnCat")]
pub fn cat<T: Element>(
    stream: &Stream,
    xs: &[TensorView<'_, T>],
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::cat";
    let out = out.view_mut();
    let want = cat_shape(F, xs, dim)?;
    expect_shape(F, out.shape(), &want)?;
    let list = TensorList::new(xs.iter().map(nn).collect::<Result<Vec<_>>>()?)?;
    aclnn::cat(stream, &list, dim, &mut nn_mut(out)?)
}

fn cat_shape<T: Element>(
    function: &'static str,
    xs: &[TensorView<'_, T>],
    dim: i64,
) -> Result<Vec<usize>> {
    let first = xs
        .first()
        .ok_or_else(|| Error::invalid(function, "no tensor to concatenate"))?;
    let d = axis(function, dim, first.shape().len())?;
    let mut want = first.shape().to_vec();
    want[d] = 0;
    for (k, x) in xs.iter().enumerate() {
        let fits = x.shape().len() == want.len()
            && x.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(j, (a, b))| j == d || a == b);
        if !fits {
            return Err(Error::invalid(
                function,
                format!(
                    "tensor {k} has shape {:?}, which does not fit {:?} along dim {dim}",
                    x.shape(),
                    first.shape()
                ),
            ));
        }
        want[d] += x.shape()[d];
    }
    Ok(want)
}

/// [`cat`] into a new tensor.
///
/// # Errors
///
/// As [`cat`].
pub fn cat_new<T: Element>(
    stream: &Stream,
    xs: &[TensorView<'_, T>],
    dim: i64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, &cat_shape("ops::cat", xs, dim)?)?;
    cat(stream, xs, dim, &mut out)?;
    Ok(out)
}

/// `x` with the elements above (`tril`) or below (`triu`) the `diagonal`-th
/// diagonal of the last two dimensions zeroed (`aclnnTril`, `aclnnTriu`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for fewer than 2 dimensions or an `out` of
/// another shape; the aclnn status.
#[doc(alias = "aclnnTril")]
pub fn tril<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    diagonal: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    triangle("ops::tril", stream, x, diagonal, out, true)
}

/// See [`tril`].
///
/// # Errors
///
/// As [`tril`].
#[doc(alias = "aclnnTriu")]
pub fn triu<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    diagonal: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    triangle("ops::triu", stream, x, diagonal, out, false)
}

fn triangle<T: Element>(
    function: &'static str,
    stream: &Stream,
    x: &impl AsView<T>,
    diagonal: i64,
    out: &mut impl AsViewMut<T>,
    lower: bool,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    if x.shape().len() < 2 {
        return Err(Error::invalid(
            function,
            format!("x has shape {:?}; it needs 2 dimensions or more", x.shape()),
        ));
    }
    expect_shape(function, out.shape(), x.shape())?;
    let (tx, mut to) = (nn(&x)?, nn_mut(out)?);
    if lower {
        aclnn::tril(stream, &tx, diagonal, &mut to)
    } else {
        aclnn::triu(stream, &tx, diagonal, &mut to)
    }
}

/// `[start, start + step, ...]` below `end` (above, for a negative step)
/// into a new 1-D tensor (`aclnnArange`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a zero or non-finite step or one that
/// does not lead from `start` to `end`; the aclnn status.
#[doc(alias = "aclnnArange")]
pub fn arange_new<T: Element>(
    stream: &Stream,
    start: f64,
    end: f64,
    step: f64,
) -> Result<Tensor<T>> {
    const F: &str = "ops::arange";
    if step == 0.0
        || !(start.is_finite() && end.is_finite() && step.is_finite())
        || (end - start) * step < 0.0
    {
        return Err(Error::invalid(
            F,
            format!("step {step} does not lead from {start} to {end}"),
        ));
    }
    let n = ((end - start) / step).ceil().max(0.0) as usize;
    let mut out = Tensor::zeros(stream, &[n])?;
    let (a, b, c) = (Scalar::new(start)?, Scalar::new(end)?, Scalar::new(step)?);
    aclnn::arange(stream, &a, &b, &c, &mut nn_mut(out.view_mut())?)?;
    Ok(out)
}

/// The cumulative sum along `dim` (`aclnnCumsum`, accumulated in `T`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range or an `out` of another
/// shape; the aclnn status.
#[doc(alias = "aclnnCumsum")]
pub fn cumsum<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::cumsum";
    let (x, out) = (x.view(), out.view_mut());
    axis(F, dim, x.shape().len())?;
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::cumsum(stream, &nn(&x)?, dim, T::DATA_TYPE, &mut nn_mut(out)?)
}

/// The indices (i64) that sort `x` along `dim` (`aclnnArgsort`; ties keep
/// their order).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range or an `out` of another
/// shape; the aclnn status.
#[doc(alias = "aclnnArgsort")]
pub fn argsort<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    dim: i64,
    descending: bool,
    out: &mut impl AsViewMut<i64>,
) -> Result<()> {
    const F: &str = "ops::argsort";
    let (x, out) = (x.view(), out.view_mut());
    axis(F, dim, x.shape().len())?;
    expect_shape(F, out.shape(), x.shape())?;
    aclnn::argsort(stream, &nn(&x)?, dim, descending, &mut nn_mut(out)?)
}

/// The `k` largest (or smallest) values along `dim`, sorted, and their
/// indices (`aclnnTopk`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a dim out of range, `k` above its size,
/// or outputs of another shape; the aclnn status.
#[doc(alias = "aclnnTopk")]
pub fn topk<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    k: usize,
    dim: i64,
    largest: bool,
    values: &mut impl AsViewMut<T>,
    indices: &mut impl AsViewMut<i64>,
) -> Result<()> {
    const F: &str = "ops::topk";
    let (x, v, i) = (x.view(), values.view_mut(), indices.view_mut());
    let want = topk_shape(F, x.shape(), k, dim)?;
    expect_shape(F, v.shape(), &want)?;
    expect_shape(F, i.shape(), &want)?;
    let k = i64::try_from(k).map_err(|_| Error::invalid(F, "k above i64::MAX"))?;
    aclnn::topk(
        stream,
        &nn(&x)?,
        k,
        dim,
        largest,
        true,
        &mut nn_mut(v)?,
        &mut nn_mut(i)?,
    )
}

fn topk_shape(function: &'static str, x: &[usize], k: usize, dim: i64) -> Result<Vec<usize>> {
    let d = axis(function, dim, x.len())?;
    if k > x[d] {
        return Err(Error::invalid(
            function,
            format!("k = {k} is above the size {} of dim {dim}", x[d]),
        ));
    }
    let mut want = x.to_vec();
    want[d] = k;
    Ok(want)
}

/// [`topk`] into new tensors: `(values, indices)`.
///
/// # Errors
///
/// As [`topk`].
pub fn topk_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    k: usize,
    dim: i64,
    largest: bool,
) -> Result<(Tensor<T>, Tensor<i64>)> {
    let shape = topk_shape("ops::topk", x.view().shape(), k, dim)?;
    let (mut v, mut i) = (
        Tensor::zeros(stream, &shape)?,
        Tensor::zeros(stream, &shape)?,
    );
    topk(stream, x, k, dim, largest, &mut v, &mut i)?;
    Ok((v, i))
}

/// The geometry of a 2-D convolution or pooling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window2d {
    /// Kernel size (height, width).
    pub kernel: [usize; 2],
    /// Stride (height, width).
    pub stride: [usize; 2],
    /// Zero padding on each side (height, width).
    pub padding: [usize; 2],
    /// Dilation (height, width).
    pub dilation: [usize; 2],
}

impl Window2d {
    /// A `k`×`k` window of stride `s`, no padding, no dilation.
    pub fn square(k: usize, s: usize) -> Window2d {
        Window2d {
            kernel: [k, k],
            stride: [s, s],
            padding: [0, 0],
            dilation: [1, 1],
        }
    }

    /// The output size along dimension `d` of an input of `len`.
    fn out_len(&self, function: &'static str, len: usize, d: usize) -> Result<usize> {
        let (k, stride, dilation) = (self.kernel[d], self.stride[d], self.dilation[d]);
        // Checked: the sizes come from the caller (the shape helpers are
        // public), so an overflow is an error, not a panic.
        let span = k
            .checked_sub(1)
            .and_then(|k1| dilation.checked_mul(k1))
            .and_then(|s| s.checked_add(1));
        let padded = self.padding[d]
            .checked_mul(2)
            .and_then(|p| p.checked_add(len));
        match (span, padded) {
            (Some(span), Some(padded)) if stride != 0 && dilation != 0 && padded >= span => {
                Ok((padded - span) / stride + 1)
            }
            _ => Err(Error::invalid(
                function,
                format!("a window of {self:?} does not fit an input of {len} along dimension {d}"),
            )),
        }
    }

    pub(super) fn arrays(&self, function: &'static str) -> Result<[IntArray; 4]> {
        let a = |v: [usize; 2]| -> Result<IntArray> { IntArray::new(&dims_i64(function, &v)?) };
        Ok([
            a(self.kernel)?,
            a(self.stride)?,
            a(self.padding)?,
            a(self.dilation)?,
        ])
    }
}

/// 2-D convolution of `x` `[N, C, H, W]` with `weight` `[O, C / groups, kh,
/// kw]` and an optional `bias` `[O]` (`aclnnConvolution`); `window.kernel`
/// is taken from the weight.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not fit or an `out` of
/// another shape; the aclnn status.
#[doc(alias = "aclnnConvolution")]
pub fn conv2d<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    weight: &impl AsView<T>,
    bias: Option<&TensorView<'_, T>>,
    window: Window2d,
    groups: usize,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::conv2d";
    let (x, w, out) = (x.view(), weight.view(), out.view_mut());
    let want = conv2d_shape(F, x.shape(), w.shape(), window, groups)?;
    expect_shape(F, out.shape(), &want)?;
    let [_, st, pd, dl] = window.arrays(F)?;
    let zero = IntArray::new(&[0, 0])?;
    let b = bias.map(nn).transpose()?;
    let g = i64::try_from(groups).map_err(|_| Error::invalid(F, "groups above i64::MAX"))?;
    aclnn::convolution(
        stream,
        &nn(&x)?,
        &nn(&w)?,
        b.as_ref(),
        &st,
        &pd,
        &dl,
        false,
        &zero,
        g,
        &mut nn_mut(out)?,
        CubeMathType::KeepDtype,
    )
}

/// The output shape of [`conv2d`]: `x` `[N, C, H, W]` convolved with a
/// weight `[O, C / groups, kh, kw]` gives `[N, O, H', W']`, where each
/// spatial size is `(len + 2·padding − dilation·(k − 1) − 1) / stride + 1`.
/// The kernel size is the weight's (`window.kernel` is not read). Errors
/// name `function`, so a backend passes its own operator's name.
///
/// ```
/// use acl::ops::{Window2d, conv2d_shape};
/// let same = Window2d { padding: [1, 1], ..Window2d::square(3, 1) };
/// assert_eq!(conv2d_shape("conv", &[8, 3, 32, 32], &[16, 3, 3, 3], same, 1)?, [8, 16, 32, 32]);
/// let strided = Window2d::square(3, 2);
/// assert_eq!(conv2d_shape("conv", &[1, 4, 9, 9], &[4, 2, 3, 3], strided, 2)?, [1, 4, 4, 4]);
/// # Ok::<(), acl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when `x` or the weight is
/// not 4-D, `groups` is 0, `C` is not the weight's second dimension times
/// `groups`, `O` is not a multiple of `groups`, or the window (a zero
/// stride or dilation, a zero-sized kernel, or one larger than the padded
/// input) does not fit.
pub fn conv2d_shape(
    function: &'static str,
    x: &[usize],
    w: &[usize],
    window: Window2d,
    groups: usize,
) -> Result<Vec<usize>> {
    if x.len() != 4
        || w.len() != 4
        || groups == 0
        || w[1].checked_mul(groups) != Some(x[1])
        || !w[0].is_multiple_of(groups)
    {
        return Err(Error::invalid(
            function,
            format!("x {x:?} and weight {w:?} do not fit a 2-D convolution with {groups} groups"),
        ));
    }
    let win = Window2d {
        kernel: [w[2], w[3]],
        ..window
    };
    Ok(vec![
        x[0],
        w[0],
        win.out_len(function, x[2], 0)?,
        win.out_len(function, x[3], 1)?,
    ])
}

/// [`conv2d`] into a new tensor.
///
/// # Errors
///
/// As [`conv2d`].
pub fn conv2d_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    weight: &impl AsView<T>,
    bias: Option<&TensorView<'_, T>>,
    window: Window2d,
    groups: usize,
) -> Result<Tensor<T>> {
    let shape = conv2d_shape(
        "ops::conv2d",
        x.view().shape(),
        weight.view().shape(),
        window,
        groups,
    )?;
    let mut out = Tensor::zeros(stream, &shape)?;
    conv2d(stream, x, weight, bias, window, groups, &mut out)?;
    Ok(out)
}

/// 2-D max pooling of `[N, C, H, W]` (`aclnnMaxPool`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for a window that does not fit or an `out`
/// of another shape; the aclnn status.
#[doc(alias = "aclnnMaxPool")]
pub fn max_pool2d<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::max_pool2d";
    let (x, out) = (x.view(), out.view_mut());
    let want = pool2d_shape(F, x.shape(), window)?;
    expect_shape(F, out.shape(), &want)?;
    let [k, st, _, dl] = window.arrays(F)?;
    let p = dims_i64(
        F,
        &[
            window.padding[0],
            window.padding[1],
            window.padding[0],
            window.padding[1],
        ],
    )?;
    aclnn::max_pool(
        stream,
        &nn(&x)?,
        &k,
        &st,
        0,
        &IntArray::new(&p)?,
        &dl,
        0,
        &mut nn_mut(out)?,
    )
}

/// 2-D average pooling of `[N, C, H, W]` (`aclnnAvgPool2d`; padding counts
/// in the divisor, as PyTorch's default; no dilation).
///
/// # Errors
///
/// As [`max_pool2d`]; a dilation other than 1.
#[doc(alias = "aclnnAvgPool2d")]
pub fn avg_pool2d<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::avg_pool2d";
    if window.dilation != [1, 1] {
        return Err(Error::invalid(F, "average pooling has no dilation"));
    }
    let (x, out) = (x.view(), out.view_mut());
    let want = pool2d_shape(F, x.shape(), window)?;
    expect_shape(F, out.shape(), &want)?;
    let [k, st, pd, _] = window.arrays(F)?;
    aclnn::avg_pool2d(
        stream,
        &nn(&x)?,
        &k,
        &st,
        &pd,
        false,
        true,
        0,
        CubeMathType::KeepDtype,
        &mut nn_mut(out)?,
    )
}

/// The output shape of 2-D pooling ([`max_pool2d`], [`avg_pool2d`]) of `x`
/// `[N, C, H, W]` with `window`: `[N, C, H', W']`, each spatial size
/// `(len + 2·padding − dilation·(k − 1) − 1) / stride + 1` (rounded down).
/// Errors name `function`, so a backend passes its own operator's name.
///
/// ```
/// use acl::ops::{Window2d, pool2d_shape};
/// assert_eq!(pool2d_shape("pool", &[2, 3, 8, 8], Window2d::square(2, 2))?, [2, 3, 4, 4]);
/// let padded = Window2d { padding: [1, 1], ..Window2d::square(3, 2) };
/// assert_eq!(pool2d_shape("pool", &[1, 1, 7, 5], padded)?, [1, 1, 4, 3]);
/// # Ok::<(), acl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when `x` is not 4-D or the
/// window (a zero stride, dilation or kernel size, or a kernel larger than
/// the padded input) does not fit. (That average pooling takes no dilation
/// is [`avg_pool2d`]'s own check.)
pub fn pool2d_shape(function: &'static str, x: &[usize], window: Window2d) -> Result<Vec<usize>> {
    if x.len() != 4 {
        return Err(Error::invalid(
            function,
            format!("x has shape {x:?}; it must be [N, C, H, W]"),
        ));
    }
    Ok(vec![
        x[0],
        x[1],
        window.out_len(function, x[2], 0)?,
        window.out_len(function, x[3], 1)?,
    ])
}

/// [`max_pool2d`] into a new tensor.
///
/// # Errors
///
/// As [`max_pool2d`].
pub fn max_pool2d_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(
        stream,
        &pool2d_shape("ops::max_pool2d", x.view().shape(), window)?,
    )?;
    max_pool2d(stream, x, window, &mut out)?;
    Ok(out)
}

/// [`avg_pool2d`] into a new tensor.
///
/// # Errors
///
/// As [`avg_pool2d`].
pub fn avg_pool2d_new<T: Element>(
    stream: &Stream,
    x: &impl AsView<T>,
    window: Window2d,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(
        stream,
        &pool2d_shape("ops::avg_pool2d", x.view().shape(), window)?,
    )?;
    avg_pool2d(stream, x, window, &mut out)?;
    Ok(out)
}

/// Scaled dot-product attention over `[B, N, S, D]` queries and `[B, Nkv,
/// T, D]` keys and values (`Nkv` dividing `N`: grouped-query attention),
/// `softmax(scale · Q Kᵀ) V` with keys hidden where the optional bool
/// `mask` (broadcasting to `[B, N, S, T]`) is true.
///
/// `f16` and `bf16` run CANN's fused operator
/// (`aclnnFusedInferAttentionScoreV2`, layout BNSD), which takes no other
/// query type (its page: FLOAT16, BFLOAT16, INT8). Other float types run
/// the same computation as separate operators (batched matmul, `Muls`,
/// `InplaceMaskedFillScalar` with −∞, `Softmax`, batched matmul), as
/// torch_npu's math fallback does; a query row whose keys are all masked
/// is then NaN.
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not fit or an `out` of
/// another shape than `q`; the aclnn status.
#[doc(alias = "aclnnFusedInferAttentionScoreV2")]
pub fn attention<T: Element>(
    stream: &Stream,
    q: &impl AsView<T>,
    k: &impl AsView<T>,
    v: &impl AsView<T>,
    mask: Option<&TensorView<'_, Bool>>,
    scale: f64,
    out: &mut impl AsViewMut<T>,
) -> Result<()> {
    const F: &str = "ops::attention";
    let (q, k, v, out) = (q.view(), k.view(), v.view(), out.view_mut());
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    if qs.len() != 4
        || ks.len() != 4
        || ks != vs
        || ks[0] != qs[0]
        || ks[3] != qs[3]
        || ks[1] == 0
        || qs[1] % ks[1] != 0
    {
        return Err(Error::invalid(
            F,
            format!(
                "q {qs:?}, k {ks:?} and v {vs:?} are not [B, N, S, D] and [B, Nkv, T, D] with Nkv dividing N"
            ),
        ));
    }
    expect_shape(F, out.shape(), qs)?;
    if !matches!(
        T::DATA_TYPE,
        crate::DataType::Float16 | crate::DataType::BFloat16 | crate::DataType::Int8
    ) {
        return attention_unfused(stream, q, k, v, mask, scale, out);
    }
    let heads = dims_i64(F, &[qs[1], ks[1]])?;
    fused_attention(
        stream,
        (q, k, v),
        mask,
        (heads[0], heads[1]),
        scale,
        None,
        out,
    )
}

/// Page attention's arguments of the fused operator: the valid keys per
/// sequence, the block table and the block size.
pub(super) type PagedArgs<'x, 'a> = (&'x IntArray, &'x aclnn::TensorArg<'a>, i64);

/// `aclnnFusedInferAttentionScoreV2` as [`attention`] and
/// [`paged_attention`](super::paged_attention) call it (shapes checked by
/// them): BNSD queries, one key and one value tensor (or cache), `heads`
/// query and key/value heads, the mask in its 4-D form, and page
/// attention's arguments when given.
pub(super) fn fused_attention<T: Element>(
    stream: &Stream,
    (q, k, v): (TensorView<'_, T>, TensorView<'_, T>, TensorView<'_, T>),
    mask: Option<&TensorView<'_, Bool>>,
    (heads, kv_heads): (i64, i64),
    scale: f64,
    paged: Option<PagedArgs<'_, '_>>,
    out: TensorViewMut<'_, T>,
) -> Result<()> {
    let (kl, vl) = (
        TensorList::new(vec![nn(&k)?])?,
        TensorList::new(vec![nn(&v)?])?,
    );
    // The operator reads a 3-D mask as `[B, S, T]` and a 2-D one as `[S, T]`
    // (or `[B, T]` for one query row), not as NumPy broadcasting would:
    // give it the 4-D form, leading dimensions of 1 added.
    let m = match mask {
        Some(m) => {
            let mut m4 = *m;
            while m4.shape().len() < 4 {
                m4 = m4.unsqueeze(0)?;
            }
            Some(nn(&m4)?)
        }
        None => None,
    };
    aclnn::fused_infer_attention_score_v2(
        stream,
        &nn(&q)?,
        &kl,
        &vl,
        None,
        m.as_ref(),
        None,
        paged.map(|p| p.0),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        paged.map(|p| p.1),
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        None,
        heads,
        scale,
        i64::from(i32::MAX),
        i64::from(i32::MAX),
        c"BNSD",
        kv_heads,
        0,
        0,
        paged.map_or(0, |p| p.2),
        0,
        false,
        0,
        0,
        &mut nn_mut(out)?,
        None,
    )
}

/// [`attention`] as separate operators, for the types the fused operator
/// does not take (shapes checked by the caller). Grouped heads: the `G =
/// N / Nkv` query heads of one key head are one `[G·S, D]` matrix.
fn attention_unfused<T: Element>(
    stream: &Stream,
    q: TensorView<'_, T>,
    k: TensorView<'_, T>,
    v: TensorView<'_, T>,
    mask: Option<&TensorView<'_, Bool>>,
    scale: f64,
    mut out: TensorViewMut<'_, T>,
) -> Result<()> {
    let (qs, ks) = (q.shape(), k.shape());
    let (b, n, s, d, nkv, t) = (qs[0], qs[1], qs[2], qs[3], ks[1], ks[2]);
    let grouped = [b, nkv, n / nkv * s, d];
    let owned;
    let q = if q.is_contiguous() {
        q
    } else {
        owned = q.to_tensor(stream)?;
        owned.view()
    };
    let mut scores = batch_matmul_adj_new(stream, &q.reshape(&grouped)?, false, &k, true)?;
    aclnn::muls_(
        stream,
        &mut nn_mut(scores.view_mut())?,
        &Scalar::new(scale)?,
    )?;
    if let Some(m) = mask {
        expect_broadcast_to("ops::attention", m.shape(), &[b, n, s, t])?;
        let mut full = Tensor::<Bool>::zeros(stream, &[b, n, s, t])?;
        copy(stream, m, &mut full)?;
        let full = full.reshape(&[b, nkv, n / nkv * s, t])?;
        aclnn::masked_fill_(
            stream,
            &mut nn_mut(scores.view_mut())?,
            &nn(&full.view())?,
            &Scalar::new(f64::NEG_INFINITY)?,
        )?;
    }
    let p = softmax_new(stream, &scores, -1)?;
    let o = batch_matmul_new(stream, &p, &v)?.reshape(qs)?;
    copy(stream, &o, &mut out)
}

/// [`attention`] into a new tensor.
///
/// # Errors
///
/// As [`attention`].
pub fn attention_new<T: Element>(
    stream: &Stream,
    q: &impl AsView<T>,
    k: &impl AsView<T>,
    v: &impl AsView<T>,
    mask: Option<&TensorView<'_, Bool>>,
    scale: f64,
) -> Result<Tensor<T>> {
    let mut out = Tensor::zeros(stream, q.view().shape())?;
    attention(stream, q, k, v, mask, scale, &mut out)?;
    Ok(out)
}

//! The typed aclnn operators: each runs `aclnnXxxGetWorkspaceSize` and
//! `aclnnXxx` on a stream (see the module docs of [`crate::aclnn`]).

use super::{IntArray, Scalar, Tensor, TensorMut, two_phase};
use crate::Stream;
use crate::error::Result;
use crate::memory::DataType;

/// How the Cube unit may compute float matmuls (`cubeMathType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(i8)]
pub enum CubeMathType {
    /// `KEEP_DTYPE` (0): compute in the input type.
    #[default]
    KeepDtype = 0,
    /// `ALLOW_FP32_DOWN_PRECISION` (1).
    AllowFp32DownPrecision = 1,
    /// `USE_FP16` (2).
    UseFp16 = 2,
    /// `USE_HF32` (3).
    UseHf32 = 3,
}

/// Runs one aclnn operator through [`two_phase`]: `$gws(args.., ws, ex)`
/// sizes its workspace and `$run` launches it on `$stream` (both called
/// through [`aclnn_op!`](crate::result::aclnn_op)); the two names reported
/// in errors are those identifiers as written. The arguments are live
/// aclnn objects held by the caller.
macro_rules! run_op {
    ($stream:expr, $homes:expr, $gws:ident($($arg:expr),* $(,)?), $run:ident) => {{
        let (names, plan, launch) = crate::result::aclnn_op!($gws($($arg),*), $run);
        two_phase($stream, names, $homes, plan, launch)
    }};
}

macro_rules! binary {
    ($($(#[$m:meta])* $name:ident => $gws:ident, $run:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for dtypes or shapes that do not
        /// combine, or an `out` of the wrong shape), or a stream/memory error.
        pub fn $name(stream: &Stream, a: &Tensor<'_>, b: &Tensor<'_>, out: &mut TensorMut<'_>) -> Result<()> {
            let homes = [a.access(), b.access(), out.as_tensor().access()];
            let (pa, pb, po) = (a.as_raw(), b.as_raw(), out.as_raw());
            run_op!(stream, &homes, $gws(pa, pb, po), $run)
        }
    )*};
}

macro_rules! unary {
    ($($(#[$m:meta])* $name:ident => $gws:ident, $run:ident;)*) => {$(
        $(#[$m])*
        ///
        /// # Errors
        ///
        /// The aclnn status (`161002` for a dtype the operator does not take
        /// or an `out` of the wrong shape), or a stream/memory error.
        pub fn $name(stream: &Stream, x: &Tensor<'_>, out: &mut TensorMut<'_>) -> Result<()> {
            let homes = [x.access(), out.as_tensor().access()];
            let (px, po) = (x.as_raw(), out.as_raw());
            run_op!(stream, &homes, $gws(px, po), $run)
        }
    )*};
}

binary! {
    /// `out = a * b` (broadcasting).
    #[doc(alias = "aclnnMul")]
    mul => aclnnMulGetWorkspaceSize, aclnnMul;
    /// `out = a / b` (broadcasting).
    #[doc(alias = "aclnnDiv")]
    div => aclnnDivGetWorkspaceSize, aclnnDiv;
    /// `out = max(a, b)` (broadcasting).
    #[doc(alias = "aclnnMaximum")]
    maximum => aclnnMaximumGetWorkspaceSize, aclnnMaximum;
    /// `out = min(a, b)` (broadcasting).
    #[doc(alias = "aclnnMinimum")]
    minimum => aclnnMinimumGetWorkspaceSize, aclnnMinimum;
}

unary! {
    /// `out = -x`.
    #[doc(alias = "aclnnNeg")]
    neg => aclnnNegGetWorkspaceSize, aclnnNeg;
    /// `out = |x|`.
    #[doc(alias = "aclnnAbs")]
    abs => aclnnAbsGetWorkspaceSize, aclnnAbs;
    /// `out = e^x`.
    #[doc(alias = "aclnnExp")]
    exp => aclnnExpGetWorkspaceSize, aclnnExp;
    /// `out = ln x`.
    #[doc(alias = "aclnnLog")]
    log => aclnnLogGetWorkspaceSize, aclnnLog;
    /// `out = √x`.
    #[doc(alias = "aclnnSqrt")]
    sqrt => aclnnSqrtGetWorkspaceSize, aclnnSqrt;
    /// `out = 1/√x`.
    #[doc(alias = "aclnnRsqrt")]
    rsqrt => aclnnRsqrtGetWorkspaceSize, aclnnRsqrt;
    /// `out = max(x, 0)`.
    #[doc(alias = "aclnnRelu")]
    relu => aclnnReluGetWorkspaceSize, aclnnRelu;
    /// `out = 1/(1+e^-x)`.
    #[doc(alias = "aclnnSigmoid")]
    sigmoid => aclnnSigmoidGetWorkspaceSize, aclnnSigmoid;
    /// `out = tanh x`.
    #[doc(alias = "aclnnTanh")]
    tanh => aclnnTanhGetWorkspaceSize, aclnnTanh;
    /// `out = gelu(x)`.
    #[doc(alias = "aclnnGelu")]
    gelu => aclnnGeluGetWorkspaceSize, aclnnGelu;
}

/// `out = a + b` (broadcasting; `alpha` = 1).
///
/// # Errors
///
/// As [`add_scaled`].
#[doc(alias = "aclnnAdd")]
pub fn add(stream: &Stream, a: &Tensor<'_>, b: &Tensor<'_>, out: &mut TensorMut<'_>) -> Result<()> {
    add_scaled(stream, a, b, &Scalar::new(1.0f32)?, out)
}

/// `out = a + alpha * b` (broadcasting).
///
/// # Errors
///
/// The aclnn status (`161002` for dtypes or shapes that do not combine, or a
/// non-integral `alpha` with an integer `out`), or a stream/memory error.
#[doc(alias = "aclnnAdd")]
pub fn add_scaled(
    stream: &Stream,
    a: &Tensor<'_>,
    b: &Tensor<'_>,
    alpha: &Scalar,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [a.access(), b.access(), out.as_tensor().access()];
    let (pa, pb, pal, po) = (a.as_raw(), b.as_raw(), alpha.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnAddGetWorkspaceSize(pa, pb, pal, po),
        aclnnAdd
    )
}

/// `out = a - b` (broadcasting; `alpha` = 1).
///
/// # Errors
///
/// As [`sub_scaled`].
#[doc(alias = "aclnnSub")]
pub fn sub(stream: &Stream, a: &Tensor<'_>, b: &Tensor<'_>, out: &mut TensorMut<'_>) -> Result<()> {
    sub_scaled(stream, a, b, &Scalar::new(1.0f32)?, out)
}

/// `out = a - alpha * b` (broadcasting).
///
/// # Errors
///
/// As [`add_scaled`].
#[doc(alias = "aclnnSub")]
pub fn sub_scaled(
    stream: &Stream,
    a: &Tensor<'_>,
    b: &Tensor<'_>,
    alpha: &Scalar,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [a.access(), b.access(), out.as_tensor().access()];
    let (pa, pb, pal, po) = (a.as_raw(), b.as_raw(), alpha.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnSubGetWorkspaceSize(pa, pb, pal, po),
        aclnnSub
    )
}

/// `out = grad where x > threshold, else 0` (the relu gradient for a
/// threshold of 0).
///
/// # Errors
///
/// The aclnn status (cann-sim: `561003` for a threshold other than 0), or a
/// stream/memory error.
#[doc(alias = "aclnnThresholdBackward")]
pub fn threshold_backward(
    stream: &Stream,
    grad: &Tensor<'_>,
    x: &Tensor<'_>,
    threshold: &Scalar,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [grad.access(), x.access(), out.as_tensor().access()];
    let (pg, px, pt, po) = (grad.as_raw(), x.as_raw(), threshold.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnThresholdBackwardGetWorkspaceSize(pg, px, pt, po),
        aclnnThresholdBackward
    )
}

/// `out = x` converted to `dtype` (which must be `out`'s).
///
/// # Errors
///
/// The aclnn status (`161002` when `out` is not of `dtype`), or a
/// stream/memory error.
#[doc(alias = "aclnnCast")]
pub fn cast(
    stream: &Stream,
    x: &Tensor<'_>,
    dtype: DataType,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, po) = (x.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnCastGetWorkspaceSize(px, dtype.to_raw(), po),
        aclnnCast
    )
}

/// `out = a @ b` (2-D, or batched with broadcasting batch dimensions).
///
/// # Errors
///
/// The aclnn status (`161002` for shapes that do not multiply), or a
/// stream/memory error.
#[doc(alias = "aclnnMatmul")]
pub fn matmul(
    stream: &Stream,
    a: &Tensor<'_>,
    b: &Tensor<'_>,
    out: &mut TensorMut<'_>,
    cube: CubeMathType,
) -> Result<()> {
    let homes = [a.access(), b.access(), out.as_tensor().access()];
    let (pa, pb, po) = (a.as_raw(), b.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnMatmulGetWorkspaceSize(pa, pb, po, cube as i8),
        aclnnMatmul
    )
}

/// `out[i] = a[i] @ b[i]` over 3-D tensors.
///
/// # Errors
///
/// The aclnn status (`161002` for operands that are not 3-D or do not
/// multiply), or a stream/memory error.
#[doc(alias = "aclnnBatchMatMul")]
pub fn batch_matmul(
    stream: &Stream,
    a: &Tensor<'_>,
    b: &Tensor<'_>,
    out: &mut TensorMut<'_>,
    cube: CubeMathType,
) -> Result<()> {
    let homes = [a.access(), b.access(), out.as_tensor().access()];
    let (pa, pb, po) = (a.as_raw(), b.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnBatchMatMulGetWorkspaceSize(pa, pb, po, cube as i8),
        aclnnBatchMatMul
    )
}

/// `out = sum of x over dims` (all dimensions when `dims` is empty), in
/// `x`'s type.
///
/// # Errors
///
/// The aclnn status (`161002` for a dimension out of range or an `out` of
/// the wrong shape), or a stream/memory error.
#[doc(alias = "aclnnReduceSum")]
pub fn reduce_sum(
    stream: &Stream,
    x: &Tensor<'_>,
    dims: &[i64],
    keep_dim: bool,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let dim = IntArray::new(dims)?;
    let dtype = x.data_type().to_raw();
    let homes = [x.access(), out.as_tensor().access()];
    let (px, pd, po) = (x.as_raw(), dim.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnReduceSumGetWorkspaceSize(px, pd, keep_dim, dtype, po),
        aclnnReduceSum
    )
}

/// `out = mean of x over dims` (all dimensions when `dims` is empty).
///
/// # Errors
///
/// As [`reduce_sum`].
#[doc(alias = "aclnnMean")]
pub fn mean(
    stream: &Stream,
    x: &Tensor<'_>,
    dims: &[i64],
    keep_dim: bool,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let dim = IntArray::new(dims)?;
    let dtype = x.data_type().to_raw();
    let homes = [x.access(), out.as_tensor().access()];
    let (px, pd, po) = (x.as_raw(), dim.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnMeanGetWorkspaceSize(px, pd, keep_dim, dtype, po),
        aclnnMean
    )
}

/// `out = max of x over dims` (all dimensions when `dims` is empty).
///
/// # Errors
///
/// As [`reduce_sum`].
#[doc(alias = "aclnnAmax")]
pub fn amax(
    stream: &Stream,
    x: &Tensor<'_>,
    dims: &[i64],
    keep_dim: bool,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let dim = IntArray::new(dims)?;
    let homes = [x.access(), out.as_tensor().access()];
    let (px, pd, po) = (x.as_raw(), dim.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnAmaxGetWorkspaceSize(px, pd, keep_dim, po),
        aclnnAmax
    )
}

/// `out = softmax(x)` along `dim`.
///
/// # Errors
///
/// The aclnn status (`161002` for `dim` out of range), or a stream/memory error.
#[doc(alias = "aclnnSoftmax")]
pub fn softmax(stream: &Stream, x: &Tensor<'_>, dim: i64, out: &mut TensorMut<'_>) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, po) = (x.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnSoftmaxGetWorkspaceSize(px, dim, po),
        aclnnSoftmax
    )
}

/// `out = log(softmax(x))` along `dim`.
///
/// # Errors
///
/// As [`softmax`].
#[doc(alias = "aclnnLogSoftmax")]
pub fn log_softmax(
    stream: &Stream,
    x: &Tensor<'_>,
    dim: i64,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, po) = (x.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnLogSoftmaxGetWorkspaceSize(px, dim, po),
        aclnnLogSoftmax
    )
}

/// `out = x` with its dimensions permuted (`out.shape[i] = x.shape[dims[i]]`).
///
/// # Errors
///
/// The aclnn status (`161002` for `dims` that are not a permutation), or a
/// stream/memory error.
#[doc(alias = "aclnnPermute")]
pub fn permute(
    stream: &Stream,
    x: &Tensor<'_>,
    dims: &[i64],
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let d = IntArray::new(dims)?;
    let homes = [x.access(), out.as_tensor().access()];
    let (px, pd, po) = (x.as_raw(), d.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnPermuteGetWorkspaceSize(px, pd, po),
        aclnnPermute
    )
}

/// Fills `t` with `value` (converted to `t`'s type).
///
/// # Errors
///
/// The aclnn status, or a stream/memory error.
#[doc(alias = "aclnnInplaceFillScalar")]
pub fn fill_(stream: &Stream, t: &mut TensorMut<'_>, value: &Scalar) -> Result<()> {
    let homes = [t.as_tensor().access()];
    let (pt, pv) = (t.as_raw(), value.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnInplaceFillScalarGetWorkspaceSize(pt, pv),
        aclnnInplaceFillScalar
    )
}

/// Sets `t` to zeros.
///
/// # Errors
///
/// The aclnn status, or a stream/memory error.
#[doc(alias = "aclnnInplaceZero")]
pub fn zero_(stream: &Stream, t: &mut TensorMut<'_>) -> Result<()> {
    let homes = [t.as_tensor().access()];
    let pt = t.as_raw();
    run_op!(
        stream,
        &homes,
        aclnnInplaceZeroGetWorkspaceSize(pt),
        aclnnInplaceZero
    )
}

/// Sets `t` to ones.
///
/// # Errors
///
/// The aclnn status, or a stream/memory error.
#[doc(alias = "aclnnInplaceOne")]
pub fn one_(stream: &Stream, t: &mut TensorMut<'_>) -> Result<()> {
    let homes = [t.as_tensor().access()];
    let pt = t.as_raw();
    run_op!(
        stream,
        &homes,
        aclnnInplaceOneGetWorkspaceSize(pt),
        aclnnInplaceOne
    )
}

/// How [`rotary_position_embedding`] rotates the last dimension (`mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(i64)]
pub enum RotaryMode {
    /// 0: halves, `rotate(x) = [-x₂, x₁]` (GPT-NeoX, Llama).
    #[default]
    Half = 0,
    /// 1: interleaved pairs, `rotate(x)[2i] = -x[2i+1]`, `[2i+1] = x[2i]` (GPT-J).
    Interleave = 1,
    /// 2: quarters, `[-x₂, x₁, -x₄, x₃]`.
    Quarter = 2,
    /// 3: odd then even elements, then halves.
    InterleaveHalf = 3,
}

/// `out[i..] = weight[indices[i..]]`: the rows of the 2-D `weight` that the
/// int32/int64 `indices` name (`out.shape = indices.shape ++ [weight.shape[1]]`).
///
/// # Errors
///
/// The aclnn status (`161002` for a `weight` that is not 2-D or an `out` of
/// the wrong shape or type), or a stream/memory error. An index out of range
/// fails the kernel, reported by the next synchronisation.
#[doc(alias = "aclnnEmbedding")]
pub fn embedding(
    stream: &Stream,
    weight: &Tensor<'_>,
    indices: &Tensor<'_>,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [weight.access(), indices.access(), out.as_tensor().access()];
    let (pw, pi, po) = (weight.as_raw(), indices.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnEmbeddingGetWorkspaceSize(pw, pi, po),
        aclnnEmbedding
    )
}

/// RMS normalisation over the trailing dimensions `gamma` covers:
/// `rstd = 1/√(mean(x²) + epsilon)`, `y = x · rstd · gamma`. `rstd` is
/// float32 with `x`'s leading dimensions and 1 for each of `gamma`'s.
///
/// # Errors
///
/// The aclnn status (`161002` for a `gamma` that is not `x`'s trailing shape,
/// mixed dtypes, or outputs of the wrong shape or type), or a stream/memory
/// error.
#[doc(alias = "aclnnRmsNorm")]
pub fn rms_norm(
    stream: &Stream,
    x: &Tensor<'_>,
    gamma: &Tensor<'_>,
    epsilon: f64,
    y: &mut TensorMut<'_>,
    rstd: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [
        x.access(),
        gamma.access(),
        y.as_tensor().access(),
        rstd.as_tensor().access(),
    ];
    let (px, pg, py, pr) = (x.as_raw(), gamma.as_raw(), y.as_raw(), rstd.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnRmsNormGetWorkspaceSize(px, pg, epsilon, py, pr),
        aclnnRmsNorm
    )
}

/// Rotary position embedding of one 4-D tensor (layout BSND, BNSD or SBND):
/// `out = x · cos + rotate(x) · sin` along the last dimension, `cos` and
/// `sin` broadcasting to `x`.
///
/// # Errors
///
/// The aclnn status (`161002` for shapes that do not fit or mixed dtypes;
/// cann-sim: `561003` for [`RotaryMode::Quarter`] and
/// [`RotaryMode::InterleaveHalf`]), or a stream/memory error.
#[doc(alias = "aclnnRotaryPositionEmbedding")]
pub fn rotary_position_embedding(
    stream: &Stream,
    x: &Tensor<'_>,
    cos: &Tensor<'_>,
    sin: &Tensor<'_>,
    mode: RotaryMode,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [
        x.access(),
        cos.access(),
        sin.access(),
        out.as_tensor().access(),
    ];
    let (px, pc, ps, po) = (x.as_raw(), cos.as_raw(), sin.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnRotaryPositionEmbeddingGetWorkspaceSize(px, pc, ps, mode as i64, po),
        aclnnRotaryPositionEmbedding
    )
}

/// SwiGLU: `x` split in halves `a`, `b` along `dim`, `out = silu(a) · b`.
///
/// # Errors
///
/// The aclnn status (`161002` for a `dim` out of range, an odd size along
/// it, or an `out` of the wrong shape), or a stream/memory error.
#[doc(alias = "aclnnSwiGlu")]
pub fn swi_glu(stream: &Stream, x: &Tensor<'_>, dim: i64, out: &mut TensorMut<'_>) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, po) = (x.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnSwiGluGetWorkspaceSize(px, dim, po),
        aclnnSwiGlu
    )
}

/// `out = argmax of x along dim` (int32 or int64 `out`; the first of equal
/// maxima). With `keep_dim`, `out` keeps that dimension with size 1.
///
/// # Errors
///
/// The aclnn status (`161002` for a `dim` out of range or an `out` of the
/// wrong shape or type), or a stream/memory error.
#[doc(alias = "aclnnArgMax")]
pub fn arg_max(
    stream: &Stream,
    x: &Tensor<'_>,
    dim: i64,
    keep_dim: bool,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, po) = (x.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnArgMaxGetWorkspaceSize(px, dim, keep_dim, po),
        aclnnArgMax
    )
}

/// Copies `src` into the view `dst`, converting to `dst`'s type and
/// broadcasting `src` to its shape — e.g. writing new keys into a slice of a
/// KV cache.
///
/// # Errors
///
/// The aclnn status (`161002` for a `src` that does not broadcast to `dst`),
/// or a stream/memory error.
#[doc(alias = "aclnnInplaceCopy")]
pub fn copy_(stream: &Stream, dst: &mut TensorMut<'_>, src: &Tensor<'_>) -> Result<()> {
    let homes = [dst.as_tensor().access(), src.access()];
    let (pd, ps) = (dst.as_raw(), src.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnInplaceCopyGetWorkspaceSize(pd, ps),
        aclnnInplaceCopy
    )
}

/// `out = x · value` for a host scalar `value` (converted to `x`'s type).
///
/// # Errors
///
/// The aclnn status (`161002` for an `out` of another shape or type than
/// `x`), or a stream/memory error.
#[doc(alias = "aclnnMuls")]
pub fn muls(
    stream: &Stream,
    x: &Tensor<'_>,
    value: &Scalar,
    out: &mut TensorMut<'_>,
) -> Result<()> {
    let homes = [x.access(), out.as_tensor().access()];
    let (px, pv, po) = (x.as_raw(), value.as_raw(), out.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnMulsGetWorkspaceSize(px, pv, po),
        aclnnMuls
    )
}

/// Sets the elements of `t` where the bool `mask` (broadcasting to `t`) is
/// true to `value` (converted to `t`'s type) — e.g. a causal mask of
/// attention scores with `-inf`.
///
/// # Errors
///
/// The aclnn status (`161002` for a mask that is not bool or does not
/// broadcast to `t`), or a stream/memory error.
#[doc(alias = "aclnnInplaceMaskedFillScalar")]
pub fn masked_fill_(
    stream: &Stream,
    t: &mut TensorMut<'_>,
    mask: &Tensor<'_>,
    value: &Scalar,
) -> Result<()> {
    let homes = [t.as_tensor().access(), mask.access()];
    let (pt, pm, pv) = (t.as_raw(), mask.as_raw(), value.as_raw());
    run_op!(
        stream,
        &homes,
        aclnnInplaceMaskedFillScalarGetWorkspaceSize(pt, pm, pv),
        aclnnInplaceMaskedFillScalar
    )
}

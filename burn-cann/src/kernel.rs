//! Dtype-erased operator helpers over [`CannTensor`]s: each runs one aclnn
//! operator (or a view change) on the tensor's device stream. Nothing here
//! knows Burn's traits, so a later Burn release changes only `backend.rs`
//! and `ops/`.

use crate::tensor::{CannTensor, Kind, Out, contiguous_strides};
use acl::Stream;
use acl::aclnn::{self, IntArray, Scalar, TensorArg, TensorArgMut, TensorList};
use acl::memory::Bool;
use half::{bf16, f16};

pub(crate) type R<T> = acl::Result<T>;

/// Unwraps an operator's result; a failure is a panic naming Burn's op and
/// carrying CANN's error (Burn's ops have no error channel).
pub(crate) fn ok<T>(op: &str, r: R<T>) -> T {
    r.unwrap_or_else(|e| panic!("burn-cann {op}: {e}"))
}

/// Burn's "not supported" path: a panic naming the op and why.
pub(crate) fn unsupported(op: &str, why: &str) -> ! {
    panic!("burn-cann: `{op}` is not supported: {why}")
}

/// An invalid-argument error of `op`, as `acl` reports its own.
pub(crate) fn invalid(op: &'static str, why: impl Into<String>) -> acl::Error {
    acl::Error::InvalidArgument {
        function: op,
        reason: why.into(),
    }
}

/// An aclnn scalar of `kind` holding `v`.
pub(crate) fn scalar(kind: Kind, v: f64) -> R<Scalar> {
    match kind {
        Kind::F32 => Scalar::new(v as f32),
        Kind::F16 => Scalar::new(f16::from_f64(v)),
        Kind::BF16 => Scalar::new(bf16::from_f64(v)),
        Kind::I64 => Scalar::new(v as i64),
        Kind::I32 => Scalar::new(v as i32),
        Kind::Bool => Scalar::new(Bool::from(v != 0.0)),
    }
}

/// An aclnn scalar of `kind` holding the integer `v` (exact for i64).
pub(crate) fn scalar_i(kind: Kind, v: i64) -> R<Scalar> {
    match kind {
        Kind::I64 => Scalar::new(v),
        Kind::I32 => Scalar::new(v as i32),
        _ => scalar(kind, v as f64),
    }
}

/// Runs `f` with the input's argument and a new output of `kind` and `shape`.
pub(crate) fn map1(
    x: &CannTensor,
    kind: Kind,
    shape: &[usize],
    f: impl FnOnce(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> R<()>,
) -> R<CannTensor> {
    let s = x.stream();
    let mut out = Out::new(&s, kind, shape)?;
    if shape.iter().product::<usize>() > 0 {
        let a = x.arg()?;
        f(&s, &a, &mut out.arg()?)?;
    }
    Ok(out.done(x.device))
}

/// An elementwise operator of one input, keeping shape; the output is of
/// the input's kind unless `kind` says otherwise.
pub(crate) fn unary(
    x: &CannTensor,
    kind: Option<Kind>,
    f: impl FnOnce(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> R<()>,
) -> R<CannTensor> {
    map1(x, kind.unwrap_or(x.kind()), &x.shape.clone(), f)
}

/// An elementwise operator of two inputs with NumPy broadcasting.
pub(crate) fn binary(
    op: &'static str,
    a: &CannTensor,
    b: &CannTensor,
    kind: Option<Kind>,
    f: impl FnOnce(&Stream, &TensorArg<'_>, &TensorArg<'_>, &mut TensorArgMut<'_>) -> R<()>,
) -> R<CannTensor> {
    same_device(op, a, b)?;
    let shape = acl::ops::broadcast_shapes(op, &a.shape, &b.shape)?;
    let s = a.stream();
    let mut out = Out::new(&s, kind.unwrap_or(a.kind()), &shape)?;
    if shape.iter().product::<usize>() > 0 {
        let (x, y) = (a.arg()?, b.arg()?);
        f(&s, &x, &y, &mut out.arg()?)?;
    }
    Ok(out.done(a.device))
}

fn same_device(op: &'static str, a: &CannTensor, b: &CannTensor) -> R<()> {
    if a.device != b.device {
        return Err(invalid(
            op,
            format!(
                "operands on different devices (NPU {} and NPU {})",
                a.device.index, b.device.index
            ),
        ));
    }
    Ok(())
}

/// A contiguous copy of `x` (`aclnnInplaceCopy` from the strided view).
pub(crate) fn contiguous(x: &CannTensor) -> R<CannTensor> {
    unary(x, None, |s, a, o| aclnn::copy_(s, o, a))
}

/// `x` contiguous: itself when it is, else a copy.
pub(crate) fn contiguous_or_self(x: CannTensor) -> R<CannTensor> {
    if x.is_contiguous() {
        Ok(x)
    } else {
        contiguous(&x)
    }
}

/// `x` converted to `kind` (`aclnnCast`); itself when it already is.
pub(crate) fn cast(x: CannTensor, kind: Kind) -> R<CannTensor> {
    if x.kind() == kind {
        return Ok(x);
    }
    unary(&x, Some(kind), |s, a, o| aclnn::cast(s, a, kind.acl(), o))
}

/// A tensor of `shape` filled with `v` (`aclnnInplaceFillScalar`).
pub(crate) fn full(
    device: &crate::CannDevice,
    shape: &[usize],
    kind: Kind,
    v: &burn_backend::Scalar,
) -> R<CannTensor> {
    let s = crate::device::ctx(device).stream.clone();
    let mut out = Out::new(&s, kind, shape)?;
    if shape.iter().product::<usize>() > 0 {
        let value = burn_scalar(kind, v)?;
        aclnn::fill_(&s, &mut out.arg()?, &value)?;
    }
    Ok(out.done(*device))
}

/// An aclnn scalar of `kind` from Burn's scalar.
pub(crate) fn burn_scalar(kind: Kind, v: &burn_backend::Scalar) -> R<Scalar> {
    match *v {
        burn_backend::Scalar::Float(f) => scalar(kind, f),
        burn_backend::Scalar::Int(i) => scalar_i(kind, i),
        burn_backend::Scalar::UInt(u) => scalar_i(kind, i64::try_from(u).unwrap_or(i64::MAX)),
        burn_backend::Scalar::Bool(b) => scalar(kind, f64::from(u8::from(b))),
    }
}

/// Burn's scalar as `f64`.
pub(crate) fn scalar_f64(v: &burn_backend::Scalar) -> f64 {
    match *v {
        burn_backend::Scalar::Float(f) => f,
        burn_backend::Scalar::Int(i) => i as f64,
        burn_backend::Scalar::UInt(u) => u as f64,
        burn_backend::Scalar::Bool(b) => f64::from(u8::from(b)),
    }
}

// ---- views -------------------------------------------------------------

/// `x` with `shape`: a view when `x` is contiguous, else a copy first.
pub(crate) fn reshape(x: CannTensor, shape: &[usize]) -> R<CannTensor> {
    if shape.iter().product::<usize>() != x.numel() {
        return Err(invalid(
            "reshape",
            format!("cannot reshape {:?} into {shape:?}", x.shape),
        ));
    }
    let mut t = contiguous_or_self(x)?;
    t.strides = contiguous_strides(shape);
    t.shape = shape.to_vec();
    Ok(t)
}

/// Dimensions reordered by `axes` (a view).
pub(crate) fn permute(mut x: CannTensor, axes: &[usize]) -> R<CannTensor> {
    let n = x.shape.len();
    let mut seen = vec![false; n];
    if axes.len() != n
        || axes
            .iter()
            .any(|&a| a >= n || std::mem::replace(&mut seen[a], true))
    {
        return Err(invalid(
            "permute",
            format!(
                "{axes:?} is not a permutation of the {n} axes of {:?}",
                x.shape
            ),
        ));
    }
    x.shape = axes.iter().map(|&a| x.shape[a]).collect();
    x.strides = axes.iter().map(|&a| x.strides[a]).collect();
    Ok(x)
}

/// Two dimensions swapped (a view).
pub(crate) fn swap_dims(x: CannTensor, a: usize, b: usize) -> R<CannTensor> {
    let mut axes: Vec<usize> = (0..x.shape.len()).collect();
    if a >= axes.len() || b >= axes.len() {
        return Err(invalid(
            "swap_dims",
            format!("axes {a} and {b} for a tensor of shape {:?}", x.shape),
        ));
    }
    axes.swap(a, b);
    permute(x, &axes)
}

/// `x` broadcast to `shape` (a view with zero strides; new axes in front).
pub(crate) fn expand(mut x: CannTensor, shape: &[usize]) -> R<CannTensor> {
    let bad = || {
        invalid(
            "expand",
            format!("cannot expand {:?} to {shape:?}", x.shape),
        )
    };
    if shape.len() < x.shape.len() {
        return Err(bad());
    }
    let lead = shape.len() - x.shape.len();
    let mut strides = vec![0; shape.len()];
    for (i, &d) in shape.iter().enumerate() {
        if i < lead {
            continue;
        }
        let (old, st) = (x.shape[i - lead], x.strides[i - lead]);
        strides[i] = if old == d {
            st
        } else if old == 1 {
            0
        } else {
            return Err(bad());
        };
    }
    x.shape = shape.to_vec();
    x.strides = strides;
    Ok(x)
}

/// A view of `x` restricted by `ranges` (`(start, end, step)` per leading
/// axis, step > 0).
pub(crate) fn narrow(mut x: CannTensor, ranges: &[(usize, usize, usize)]) -> R<CannTensor> {
    for (axis, &(start, end, step)) in ranges.iter().enumerate() {
        if axis >= x.shape.len() || end > x.shape[axis] || start > end || step == 0 {
            return Err(invalid(
                "slice",
                format!(
                    "range {start}..{end} step {step} on axis {axis} of {:?}",
                    x.shape
                ),
            ));
        }
        let len = (end - start).div_ceil(step);
        if len > 0 {
            x.offset += start * x.strides[axis];
        }
        x.shape[axis] = len;
        x.strides[axis] *= step;
    }
    Ok(x)
}

/// Windows of `size` every `step` along `dim`, as a new last axis (a view).
pub(crate) fn unfold(mut x: CannTensor, dim: usize, size: usize, step: usize) -> R<CannTensor> {
    if dim >= x.shape.len() || step == 0 || size == 0 {
        return Err(invalid(
            "unfold",
            format!("dim {dim}, size {size}, step {step} for {:?}", x.shape),
        ));
    }
    let d = x.shape[dim];
    let windows = if d >= size { (d - size) / step + 1 } else { 0 };
    let st = x.strides[dim];
    x.shape[dim] = windows;
    x.strides[dim] = st * step;
    x.shape.push(size);
    x.strides.push(st);
    Ok(x)
}

/// A tensor whose memory this handle alone owns, contiguous (copied when
/// shared or strided), for operators that write in place.
pub(crate) fn owned(x: CannTensor) -> R<CannTensor> {
    if x.is_contiguous() && x.offset == 0 && std::sync::Arc::strong_count(&x.buf) == 1 {
        Ok(x)
    } else {
        contiguous(&x)
    }
}

/// Runs an in-place operator on `x`'s memory, whole (`x` owned first).
pub(crate) fn in_place(
    x: CannTensor,
    f: impl FnOnce(&Stream, &mut TensorArgMut<'_>) -> R<()>,
) -> R<CannTensor> {
    let mut t = owned(x)?;
    let view = (t.shape.clone(), t.strides.clone(), t.offset);
    write_view(&mut t, &view, f)?;
    Ok(t)
}

/// Runs an in-place operator on the view `(shape, strides, offset)` of
/// `t`'s memory; `t` must own its memory ([`owned`]).
pub(crate) fn write_view(
    t: &mut CannTensor,
    (shape, strides, offset): &(Vec<usize>, Vec<usize>, usize),
    f: impl FnOnce(&Stream, &mut TensorArgMut<'_>) -> R<()>,
) -> R<()> {
    if shape.contains(&0) {
        return Ok(());
    }
    let s = t.stream();
    let buf = std::sync::Arc::get_mut(&mut t.buf)
        .ok_or_else(|| invalid("in-place", "memory shared with another tensor"))?;
    let mut arg = acl::DynViewMut::strided(buf, shape, strides, *offset)?.arg_mut()?;
    f(&s, &mut arg)
}

// ---- reductions --------------------------------------------------------

fn all_axes(x: &CannTensor) -> Vec<i64> {
    (0..x.shape.len() as i64).collect()
}

/// A reduction over `axes` with kept dimensions (Burn's `*_dim`), or over
/// everything into shape `[1]` (`axis` `None`).
pub(crate) fn reduce(
    x: &CannTensor,
    axis: Option<usize>,
    kind: Kind,
    f: impl FnOnce(&Stream, &TensorArg<'_>, &IntArray, &mut TensorArgMut<'_>) -> R<()>,
) -> R<CannTensor> {
    let (axes, shape) = match axis {
        Some(d) => {
            if d >= x.shape.len() {
                return Err(invalid(
                    "reduce",
                    format!("axis {d} of a tensor of shape {:?}", x.shape),
                ));
            }
            let mut shape = x.shape.clone();
            shape[d] = 1;
            (vec![d as i64], shape)
        }
        None => (all_axes(x), vec![1; x.shape.len().max(1)]),
    };
    let axes = IntArray::new(&axes)?;
    let t = map1(x, kind, &shape, |s, a, o| f(s, a, &axes, o))?;
    if axis.is_none() {
        reshape(t, &[1])
    } else {
        Ok(t)
    }
}

/// The tensors joined along `dim` (`aclnnCat`).
pub(crate) fn cat(tensors: &[CannTensor], dim: usize) -> R<CannTensor> {
    let first = tensors
        .first()
        .ok_or_else(|| invalid("cat", "no tensors"))?;
    let mut shape = first.shape.clone();
    if dim >= shape.len() {
        return Err(invalid("cat", format!("dim {dim} for shape {shape:?}")));
    }
    shape[dim] = tensors.iter().map(|t| t.shape[dim]).sum();
    let parts: Vec<&CannTensor> = tensors.iter().filter(|t| t.numel() > 0).collect();
    let s = first.stream();
    let mut out = Out::new(&s, first.kind(), &shape)?;
    if !parts.is_empty() && shape.iter().product::<usize>() > 0 {
        let args = parts.iter().map(|t| t.arg()).collect::<R<Vec<_>>>()?;
        let list = TensorList::new(args)?;
        aclnn::cat(&s, &list, dim as i64, &mut out.arg()?)?;
    }
    Ok(out.done(first.device))
}

/// `dim` of length `dim_len` checked.
pub(crate) fn check_dim(op: &'static str, x: &CannTensor, dim: usize) -> R<()> {
    if dim >= x.shape.len() {
        return Err(invalid(
            op,
            format!("dim {dim} for a tensor of shape {:?}", x.shape),
        ));
    }
    Ok(())
}

/// `x`'s elements along `dim` at `indices` (`aclnnIndexSelect`).
pub(crate) fn index_select(x: &CannTensor, dim: usize, indices: &CannTensor) -> R<CannTensor> {
    check_dim("select", x, dim)?;
    let mut shape = x.shape.clone();
    shape[dim] = indices.numel();
    let idx = reshape(indices.clone(), &[indices.numel()])?;
    map1(x, x.kind(), &shape, |s, a, o| {
        aclnn::index_select(s, a, dim as i64, &idx.arg()?, o)
    })
}

/// `x` with `value` written over the view `ranges` (copy-on-write).
pub(crate) fn slice_assign(
    x: CannTensor,
    ranges: &[(usize, usize, usize)],
    value: &CannTensor,
) -> R<CannTensor> {
    let mut t = owned(x)?;
    let view = {
        let v = narrow(t.clone(), ranges)?;
        (v.shape, v.strides, v.offset)
    };
    let value = expand(cast(value.clone(), t.kind())?, &view.0)?;
    let src = value.arg()?;
    write_view(&mut t, &view, |s, o| aclnn::copy_(s, o, &src))?;
    Ok(t)
}

/// Matrix product with batch broadcasting (`aclnnMatmul`).
pub(crate) fn matmul(a: &CannTensor, b: &CannTensor) -> R<CannTensor> {
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra < 2 || rb < 2 {
        return Err(invalid(
            "matmul",
            format!("operands of rank >= 2, got {:?} and {:?}", a.shape, b.shape),
        ));
    }
    let (m, k) = (a.shape[ra - 2], a.shape[ra - 1]);
    let (k2, n) = (b.shape[rb - 2], b.shape[rb - 1]);
    if k != k2 {
        return Err(invalid(
            "matmul",
            format!("inner dimensions differ: {:?} @ {:?}", a.shape, b.shape),
        ));
    }
    let mut shape = acl::ops::broadcast_shapes("matmul", &a.shape[..ra - 2], &b.shape[..rb - 2])?;
    shape.extend([m, n]);
    let s = a.stream();
    let mut out = Out::new(&s, a.kind(), &shape)?;
    if shape.iter().product::<usize>() > 0 {
        if k == 0 {
            aclnn::zero_(&s, &mut out.arg()?)?;
        } else {
            let (x, y) = (a.arg()?, b.arg()?);
            aclnn::matmul(&s, &x, &y, &mut out.arg()?, aclnn::CubeMathType::KeepDtype)?;
        }
    }
    Ok(out.done(a.device))
}

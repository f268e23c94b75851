//! Burn's op traits on [`crate::kernel`]'s helpers. Float, int and bool
//! tensors share one primitive, so most ops are written once here and
//! named three times in the trait impls.

pub(crate) mod activation;
pub(crate) mod bool;
pub(crate) mod float;
pub(crate) mod int;
pub(crate) mod module;
pub(crate) mod nd;
pub(crate) mod qtensor;

use crate::CannDevice;
use crate::kernel::{self, R, ok};
use crate::tensor::{CannTensor, Kind};
use acl::Stream;
use acl::aclnn::{self, Scalar, TensorArg, TensorArgMut};
use burn_backend::{ExecutionError, Shape, Slice, TensorData};

impl burn_backend::ops::TransactionOps<crate::Cann> for crate::Cann {}

/// The tensor's elements on the host, as Burn's future (ready at once: the
/// copy waits for the work that writes the tensor).
pub(crate) fn into_data(
    t: CannTensor,
) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
    let r = t.to_data().map_err(|e| ExecutionError::WithContext {
        reason: format!("burn-cann into_data: {e}"),
    });
    std::future::ready(r)
}

pub(crate) fn from_data(op: &str, data: TensorData, kind: Kind, device: &CannDevice) -> CannTensor {
    ok(op, CannTensor::from_data(data, kind, device))
}

/// The tensor on `device` (a device-to-device copy through the host when
/// it is another NPU: CANN has no peer copy on every part).
pub(crate) fn to_device(op: &str, t: CannTensor, device: &CannDevice) -> CannTensor {
    if t.device == *device {
        return t;
    }
    let kind = t.kind();
    let data = ok(op, t.to_data());
    from_data(op, data, kind, device)
}

pub(crate) fn reshape(op: &str, t: CannTensor, shape: Shape) -> CannTensor {
    ok(op, kernel::reshape(t, &shape))
}

/// Burn's slices as `(start, end, step)` ranges, and the axes a negative
/// step reverses.
fn ranges(t: &CannTensor, slices: &[Slice]) -> (Vec<(usize, usize, usize)>, Vec<usize>) {
    let mut flips = Vec::new();
    let r = slices
        .iter()
        .enumerate()
        .map(|(axis, s)| {
            let size = t.shape.get(axis).copied().unwrap_or(0);
            let range = s.to_range(size);
            let (start, end) = (range.start, range.end.max(range.start));
            let step = s.step.unsigned_abs().max(1);
            if s.step < 0 && end > start {
                flips.push(axis);
                // Backward from `end - 1`: the same elements as forward from
                // this start.
                (start + (end - start - 1) % step, end, step)
            } else {
                (start, end, step)
            }
        })
        .collect();
    (r, flips)
}

pub(crate) fn slice(op: &str, t: CannTensor, slices: &[Slice]) -> CannTensor {
    let (r, flips) = ranges(&t, slices);
    let v = ok(op, kernel::narrow(t, &r));
    if flips.is_empty() {
        v
    } else {
        flip(op, v, &flips)
    }
}

pub(crate) fn slice_assign(
    op: &str,
    t: CannTensor,
    slices: &[Slice],
    value: CannTensor,
) -> CannTensor {
    let (r, flips) = ranges(&t, slices);
    let value = if flips.is_empty() {
        value
    } else {
        flip(op, value, &flips)
    };
    ok(op, kernel::slice_assign(t, &r, &value))
}

pub(crate) fn flip(op: &str, t: CannTensor, axes: &[usize]) -> CannTensor {
    if axes.is_empty() {
        return t;
    }
    ok(
        op,
        (|| {
            let dims = aclnn::IntArray::new(&axes.iter().map(|&a| a as i64).collect::<Vec<_>>())?;
            kernel::unary(&t, None, |s, a, o| aclnn::flip(s, a, &dims, o))
        })(),
    )
}

pub(crate) fn permute(op: &str, t: CannTensor, axes: &[usize]) -> CannTensor {
    ok(op, kernel::permute(t, axes))
}

pub(crate) fn swap_dims(op: &str, t: CannTensor, a: usize, b: usize) -> CannTensor {
    ok(op, kernel::swap_dims(t, a, b))
}

pub(crate) fn expand(op: &str, t: CannTensor, shape: Shape) -> CannTensor {
    ok(op, kernel::expand(t, &shape))
}

pub(crate) fn unfold(op: &str, t: CannTensor, dim: usize, size: usize, step: usize) -> CannTensor {
    ok(op, kernel::unfold(t, dim, size, step))
}

pub(crate) fn cat(op: &str, ts: Vec<CannTensor>, dim: usize) -> CannTensor {
    ok(op, kernel::cat(&ts, dim))
}

pub(crate) fn cast(op: &str, t: CannTensor, kind: Kind) -> CannTensor {
    ok(op, kernel::cast(t, kind))
}

pub(crate) fn empty(op: &str, shape: Shape, device: &CannDevice, kind: Kind) -> CannTensor {
    // Zeros: Burn leaves the values unspecified, and a defined value costs
    // one fill.
    full(op, shape, device, kind, &burn_backend::Scalar::Int(0))
}

pub(crate) fn full(
    op: &str,
    shape: Shape,
    device: &CannDevice,
    kind: Kind,
    v: &burn_backend::Scalar,
) -> CannTensor {
    ok(op, kernel::full(device, &shape, kind, v))
}

/// `where(mask, value, t)`, broadcast (`aclnnSWhere`).
pub(crate) fn mask_where(
    op: &str,
    t: CannTensor,
    mask: CannTensor,
    value: CannTensor,
) -> CannTensor {
    ok(
        op,
        (|| {
            let value = kernel::cast(value, t.kind())?;
            let shape = acl::ops::broadcast_shapes("mask_where", &t.shape, &mask.shape)?;
            let shape = acl::ops::broadcast_shapes("mask_where", &shape, &value.shape)?;
            let m = mask.arg()?;
            let v = value.arg()?;
            kernel::map1(&t, t.kind(), &shape, |s, a, o| {
                aclnn::s_where(s, &m, &v, a, o)
            })
        })(),
    )
}

/// `t` with `value` where `mask` holds (`aclnnInplaceMaskedFillScalar` on a copy).
pub(crate) fn mask_fill(
    op: &str,
    t: CannTensor,
    mask: CannTensor,
    value: burn_backend::Scalar,
) -> CannTensor {
    ok(
        op,
        (|| {
            let kind = t.kind();
            let t = if mask.shape == t.shape {
                t
            } else {
                let shape = acl::ops::broadcast_shapes("mask_fill", &t.shape, &mask.shape)?;
                kernel::expand(t, &shape)?
            };
            let v = kernel::burn_scalar(kind, &value)?;
            let m = mask.arg()?;
            kernel::in_place(t, |s, o| aclnn::masked_fill_(s, o, &m, &v))
        })(),
    )
}

pub(crate) fn gather(op: &str, dim: usize, t: CannTensor, indices: CannTensor) -> CannTensor {
    ok(
        op,
        (|| {
            kernel::check_dim("gather", &t, dim)?;
            let i = indices.arg()?;
            kernel::map1(&t, t.kind(), &indices.shape, |s, a, o| {
                aclnn::gather(s, a, dim as i64, &i, o)
            })
        })(),
    )
}

pub(crate) fn scatter_add(
    op: &str,
    dim: usize,
    t: CannTensor,
    indices: CannTensor,
    value: CannTensor,
) -> CannTensor {
    ok(
        op,
        (|| {
            kernel::check_dim("scatter_add", &t, dim)?;
            let (i, v) = (indices.arg()?, value.arg()?);
            kernel::unary(&t, None, |s, a, o| {
                aclnn::scatter_add(s, a, dim as i64, &i, &v, o)
            })
        })(),
    )
}

pub(crate) fn select(op: &str, t: CannTensor, dim: usize, indices: CannTensor) -> CannTensor {
    ok(op, kernel::index_select(&t, dim, &indices))
}

pub(crate) fn select_add(
    op: &str,
    t: CannTensor,
    dim: usize,
    indices: CannTensor,
    value: CannTensor,
) -> CannTensor {
    ok(
        op,
        (|| {
            kernel::check_dim("select_add", &t, dim)?;
            let alpha = kernel::scalar(t.kind(), 1.0)?;
            let (i, v) = (indices.arg()?, value.arg()?);
            kernel::unary(&t, None, |s, a, o| {
                aclnn::index_add(s, a, dim as i64, &i, &v, &alpha, o)
            })
        })(),
    )
}

/// The comparisons, by operator.
#[derive(Clone, Copy)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

type TT = fn(&Stream, &TensorArg<'_>, &TensorArg<'_>, &mut TensorArgMut<'_>) -> R<()>;
type TS = fn(&Stream, &TensorArg<'_>, &Scalar, &mut TensorArgMut<'_>) -> R<()>;

impl Cmp {
    fn tensor(self) -> TT {
        match self {
            Cmp::Eq => aclnn::eq_tensor,
            Cmp::Ne => aclnn::ne_tensor,
            Cmp::Gt => aclnn::gt_tensor,
            Cmp::Ge => aclnn::ge_tensor,
            Cmp::Lt => aclnn::lt_tensor,
            Cmp::Le => aclnn::le_tensor,
        }
    }
    fn scalar(self) -> TS {
        match self {
            Cmp::Eq => aclnn::eq_scalar,
            Cmp::Ne => aclnn::ne_scalar,
            Cmp::Gt => aclnn::gt_scalar,
            Cmp::Ge => aclnn::ge_scalar,
            Cmp::Lt => aclnn::lt_scalar,
            Cmp::Le => aclnn::le_scalar,
        }
    }
}

pub(crate) fn compare(op: &'static str, c: Cmp, a: CannTensor, b: CannTensor) -> CannTensor {
    let f = c.tensor();
    ok(op, kernel::binary(op, &a, &b, Some(Kind::Bool), f))
}

pub(crate) fn compare_elem(op: &str, c: Cmp, a: CannTensor, v: burn_backend::Scalar) -> CannTensor {
    let f = c.scalar();
    ok(
        op,
        (|| {
            let v = kernel::burn_scalar(a.kind(), &v)?;
            kernel::unary(&a, Some(Kind::Bool), |s, x, o| f(s, x, &v, o))
        })(),
    )
}

/// An elementwise operator of one input, same kind out.
pub(crate) fn un(
    op: &str,
    t: CannTensor,
    f: fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> R<()>,
) -> CannTensor {
    ok(op, kernel::unary(&t, None, f))
}

/// An elementwise operator of two broadcast inputs, same kind out.
pub(crate) fn bin(op: &'static str, a: CannTensor, b: CannTensor, f: TT) -> CannTensor {
    ok(op, kernel::binary(op, &a, &b, None, f))
}

/// An elementwise operator with a scalar, same kind out.
pub(crate) fn bin_scalar(op: &str, a: CannTensor, v: burn_backend::Scalar, f: TS) -> CannTensor {
    ok(
        op,
        (|| {
            let v = kernel::burn_scalar(a.kind(), &v)?;
            kernel::unary(&a, None, |s, x, o| f(s, x, &v, o))
        })(),
    )
}

pub(crate) fn add(
    s: &Stream,
    a: &TensorArg<'_>,
    b: &TensorArg<'_>,
    o: &mut TensorArgMut<'_>,
) -> R<()> {
    aclnn::add(
        s,
        a,
        b,
        &kernel::scalar(Kind::of(a_dtype(a)).unwrap_or(Kind::F32), 1.0)?,
        o,
    )
}

pub(crate) fn sub(
    s: &Stream,
    a: &TensorArg<'_>,
    b: &TensorArg<'_>,
    o: &mut TensorArgMut<'_>,
) -> R<()> {
    aclnn::sub(
        s,
        a,
        b,
        &kernel::scalar(Kind::of(a_dtype(a)).unwrap_or(Kind::F32), 1.0)?,
        o,
    )
}

pub(crate) fn adds(s: &Stream, a: &TensorArg<'_>, v: &Scalar, o: &mut TensorArgMut<'_>) -> R<()> {
    aclnn::adds(
        s,
        a,
        v,
        &kernel::scalar(Kind::of(a_dtype(a)).unwrap_or(Kind::F32), 1.0)?,
        o,
    )
}

pub(crate) fn subs(s: &Stream, a: &TensorArg<'_>, v: &Scalar, o: &mut TensorArgMut<'_>) -> R<()> {
    aclnn::subs(
        s,
        a,
        v,
        &kernel::scalar(Kind::of(a_dtype(a)).unwrap_or(Kind::F32), 1.0)?,
        o,
    )
}

/// Burn's dtype of an argument.
fn a_dtype(a: &TensorArg<'_>) -> burn_backend::DType {
    use acl::DataType as D;
    use burn_backend::DType;
    match a.data_type() {
        D::Float16 => DType::F16,
        D::BFloat16 => DType::BF16,
        D::Int64 => DType::I64,
        D::Int32 => DType::I32,
        D::Bool => DType::Bool(burn_backend::BoolStore::Native),
        _ => DType::F32,
    }
}

/// A reduction into kept dims (`Some(dim)`) or shape `[1]`.
pub(crate) fn sum(op: &str, t: CannTensor, dim: Option<usize>) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        kernel::reduce(&t, dim, kind, |s, a, axes, o| {
            aclnn::reduce_sum(s, a, axes, true, kind.acl(), o)
        }),
    )
}

pub(crate) fn mean(op: &str, t: CannTensor, dim: Option<usize>) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        kernel::reduce(&t, dim, kind, |s, a, axes, o| {
            aclnn::mean(s, a, axes, true, kind.acl(), o)
        }),
    )
}

pub(crate) fn max(op: &str, t: CannTensor, dim: Option<usize>) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        kernel::reduce(&t, dim, kind, |s, a, axes, o| {
            aclnn::amax(s, a, axes, true, o)
        }),
    )
}

pub(crate) fn min(op: &str, t: CannTensor, dim: Option<usize>) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        kernel::reduce(&t, dim, kind, |s, a, axes, o| {
            aclnn::amin(s, a, axes, true, o)
        }),
    )
}

/// The index of the largest (or smallest) element along `dim`, kept dim,
/// as `out` (`aclnnArgMax` / `aclnnArgMin`, which write i64).
pub(crate) fn arg(op: &str, t: CannTensor, dim: usize, smallest: bool, out: Kind) -> CannTensor {
    ok(
        op,
        (|| {
            kernel::check_dim("argmax", &t, dim)?;
            let mut shape = t.shape.clone();
            shape[dim] = 1;
            let idx = kernel::map1(&t, Kind::I64, &shape, |s, a, o| {
                if smallest {
                    aclnn::arg_min(s, a, dim as i64, true, o)
                } else {
                    aclnn::arg_max(s, a, dim as i64, true, o)
                }
            })?;
            kernel::cast(idx, out)
        })(),
    )
}

pub(crate) fn cumsum(op: &str, t: CannTensor, dim: usize) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        (|| {
            kernel::check_dim("cumsum", &t, dim)?;
            kernel::unary(&t, None, |s, a, o| {
                aclnn::cumsum(s, a, dim as i64, kind.acl(), o)
            })
        })(),
    )
}

pub(crate) fn cumprod(op: &str, t: CannTensor, dim: usize) -> CannTensor {
    ok(op, running_product(&t, dim))
}

/// The running product along `dim` (`aclnnCumprod`).
fn running_product(t: &CannTensor, dim: usize) -> R<CannTensor> {
    let kind = t.kind();
    kernel::check_dim("cumprod", t, dim)?;
    let d = Scalar::new(dim as i64)?;
    kernel::unary(t, None, |s, a, o| aclnn::cumprod(s, a, &d, kind.acl(), o))
}

/// Running minimum or maximum along `dim` (`aclnnCummin` / `aclnnCummax`).
pub(crate) fn cum_extreme(op: &str, t: CannTensor, dim: usize, max: bool) -> CannTensor {
    ok(
        op,
        (|| {
            kernel::check_dim("cummin", &t, dim)?;
            let s = t.stream();
            let mut idx = crate::tensor::Out::new(&s, Kind::I64, &t.shape)?;
            kernel::unary(&t, None, |s, a, o| {
                let mut i = idx.arg()?;
                if max {
                    aclnn::cummax(s, a, dim as i64, o, &mut i)
                } else {
                    aclnn::cummin(s, a, dim as i64, o, &mut i)
                }
            })
        })(),
    )
}

/// Product along `dim`, kept as size 1: the last element of the running
/// product along `dim` (`aclnnCumprod`, then a view of its last slice; the
/// operator table has no `ProdDim`). An empty `dim` gives ones, as the
/// product of nothing.
pub(crate) fn prod_dim(op: &str, t: CannTensor, dim: usize) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        (|| {
            kernel::check_dim("prod_dim", &t, dim)?;
            let n = t.shape[dim];
            if n == 0 {
                let mut shape = t.shape.clone();
                shape[dim] = 1;
                return kernel::full(&t.device, &shape, kind, &burn_backend::Scalar::Int(1));
            }
            let c = running_product(&t, dim)?;
            let mut ranges: Vec<(usize, usize, usize)> =
                c.shape.iter().map(|&l| (0, l, 1)).collect();
            ranges[dim] = (n - 1, n, 1);
            kernel::narrow(c, &ranges)
        })(),
    )
}

/// Product of every element, shape `[1]` (`aclnnProd`).
pub(crate) fn prod(op: &str, t: CannTensor) -> CannTensor {
    let kind = t.kind();
    ok(
        op,
        (|| {
            let p = kernel::map1(&t, kind, &[], |s, a, o| aclnn::prod(s, a, kind.acl(), o))?;
            kernel::reshape(p, &[1])
        })(),
    )
}

/// Sorted values and their indices along `dim` (`aclnnSort`).
pub(crate) fn sort(
    op: &str,
    t: CannTensor,
    dim: usize,
    descending: bool,
    idx_kind: Kind,
) -> (CannTensor, CannTensor) {
    ok(
        op,
        (|| {
            kernel::check_dim("sort", &t, dim)?;
            let s = t.stream();
            let mut idx = crate::tensor::Out::new(&s, Kind::I64, &t.shape)?;
            let values = kernel::unary(&t, None, |s, a, o| {
                aclnn::sort(s, a, true, dim as i64, descending, o, &mut idx.arg()?)
            })?;
            Ok((values, kernel::cast(idx.done(t.device), idx_kind)?))
        })(),
    )
}

/// The indices of the `k` largest along `dim` (`aclnnTopk`), and their values.
pub(crate) fn topk(
    op: &str,
    t: CannTensor,
    dim: usize,
    k: usize,
    idx_kind: Kind,
) -> (CannTensor, CannTensor) {
    ok(
        op,
        (|| {
            kernel::check_dim("topk", &t, dim)?;
            let mut shape = t.shape.clone();
            shape[dim] = k.min(shape[dim]);
            let s = t.stream();
            let mut idx = crate::tensor::Out::new(&s, Kind::I64, &shape)?;
            let values = kernel::map1(&t, t.kind(), &shape, |s, a, o| {
                aclnn::topk(s, a, k as i64, dim as i64, true, true, o, &mut idx.arg()?)
            })?;
            Ok((values, kernel::cast(idx.done(t.device), idx_kind)?))
        })(),
    )
}

/// Random values of `distribution` from the device generator
/// (`aclnnInplaceUniform`, `aclnnInplaceNormal`, `aclnnInplaceBernoulli`
/// with the device's `(seed, offset)`, the offset advanced by the count).
pub(crate) fn random(
    op: &str,
    shape: Shape,
    distribution: burn_backend::Distribution,
    device: &CannDevice,
    kind: Kind,
) -> CannTensor {
    use burn_backend::Distribution as D;
    ok(
        op,
        (|| {
            let t = kernel::full(device, &shape, kind, &burn_backend::Scalar::Int(0))?;
            let n = t.numel() as u64;
            let (seed, offset) = {
                let c = crate::device::ctx(device);
                let mut g = c.rng.lock();
                let at = *g;
                g.1 = g.1.wrapping_add(n.next_multiple_of(4));
                at
            };
            kernel::in_place(t, |s, o| match distribution {
                D::Default => aclnn::uniform_(s, o, 0.0, 1.0, seed, offset),
                D::Uniform(lo, hi) => aclnn::uniform_(s, o, lo, hi, seed, offset),
                D::Normal(m, sd) => {
                    aclnn::normal_(s, o, m as f32, sd as f32, seed as i64, offset as i64)
                }
                D::Bernoulli(p) => {
                    aclnn::bernoulli_(s, o, &Scalar::new(p as f32)?, seed as i64, offset as i64)
                }
            })
        })(),
    )
}

/// `clamp(t, min, max)` with either bound optional (`aclnnClamp*`).
pub(crate) fn clamp(
    op: &str,
    t: CannTensor,
    lo: Option<burn_backend::Scalar>,
    hi: Option<burn_backend::Scalar>,
) -> CannTensor {
    ok(
        op,
        (|| {
            let k = t.kind();
            let lo = lo.map(|v| kernel::burn_scalar(k, &v)).transpose()?;
            let hi = hi.map(|v| kernel::burn_scalar(k, &v)).transpose()?;
            kernel::unary(&t, None, |s, a, o| match (&lo, &hi) {
                (Some(l), Some(h)) => aclnn::clamp(s, a, l, h, o),
                (Some(l), None) => aclnn::clamp_min(s, a, l, o),
                (None, Some(h)) => aclnn::clamp_max(s, a, h, o),
                (None, None) => aclnn::copy_(s, o, a),
            })
        })(),
    )
}

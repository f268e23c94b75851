//! The kernels of the tensor-core operators of the training set (issue 24,
//! item 1): gathering and scattering by index, masked selection, the
//! minimum and product reductions, the cumulative scans with indices, and
//! the cross product. Each function checks one call against the operator's
//! documentation page (cited per operator in `acl-sys/operators.toml`:
//! hicann/ops-nn `index/...`, hicann/ops-math `math/...`) and returns the
//! output specs with the kernel ([`Kernel`]); a violation is an
//! [`OpError`], which the aclnn exports report as 161002.
//!
//! The pages list a few dtypes cann-sim's tensors do not carry (unsigned
//! 16/32/64-bit, complex): such a tensor is refused when it is bound, also
//! with 161002. An index out of range is found when the kernel runs (its
//! values are on the device), and reported by the next synchronisation.

use super::broadcast::contiguous_strides;
use super::native::{Native, read, read_i64, write, write_i64};
use super::nn::{
    Kernel, axis, broadcast, broadcast_offsets, check_cast, for_each_index, is_float, numel,
    offset, spec, split,
};
use super::{DType, OpError, TensorSpec, fmt_shape};

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

/// Every dtype of the simulator (the pages' "all types" lists), bool last.
pub(crate) const ALL: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::F64,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::Bool,
];

/// Every numeric dtype (all but bool).
pub(crate) const NUMERIC: &[DType] = ALL.split_at(ALL.len() - 1).0;

/// The index dtypes.
pub(crate) const INDEX: &[DType] = &[DType::I32, DType::I64];

/// `d` must be one of `list`, the page's dtypes for `what`.
pub(crate) fn allow(name: &str, what: &str, d: DType, list: &[DType]) -> Res<()> {
    if list.contains(&d) {
        return Ok(());
    }
    let names: Vec<&str> = list.iter().map(|t| t.name()).collect();
    err(format!(
        "{name}: {what} is {}; the operator takes {}",
        d.name(),
        names.join(", ")
    ))
}

/// `what` (of dtype `d`) must have the dtype of `other`.
pub(crate) fn same_dtype(name: &str, what: &str, d: DType, other: &str, o: DType) -> Res<()> {
    if d == o {
        Ok(())
    } else {
        err(format!(
            "{name}: {what} is {} but {other} is {}; they must be the same",
            d.name(),
            o.name()
        ))
    }
}

/// The shape as the kernels index it: a 0-d tensor as `[1]`.
fn dims(shape: &[i64]) -> Vec<i64> {
    if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    }
}

fn out_of_range(name: &str, k: i64, lo: i64, hi: i64, d: usize) -> OpError {
    OpError::Input(format!(
        "{name}: index {k} is out of range [{lo}, {hi}) of dimension {d}"
    ))
}

// ---------------------------------------------------------------------------
// Gather, scatter, index add, masked select.
// ---------------------------------------------------------------------------

/// aclnnGather (torch.gather, GatherElements): `out[i][j] = self[index[i][j]][j]`
/// for `dim` 0. `index` has self's rank and is no larger than self outside
/// `dim`; its values are in `[-self.shape[dim], self.shape[dim])`; `out` has
/// index's shape and self's dtype.
pub fn gather(x: &TensorSpec, dim: i64, index: &TensorSpec, out: DType) -> Res<Kernel> {
    let name = "GatherElements";
    allow(name, "self", x.dtype, ALL)?;
    allow(name, "index", index.dtype, INDEX)?;
    same_dtype(name, "out", out, "self", x.dtype)?;
    if x.shape.len() != index.shape.len() {
        return err(format!(
            "{name}: index {} and self {} must have the same number of dimensions",
            fmt_shape(&index.shape),
            fmt_shape(&x.shape)
        ));
    }
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (xs, is) = (dims(&x.shape), dims(&index.shape));
    if let Some(k) = (0..xs.len()).find(|&k| k != d && is[k] > xs[k]) {
        return err(format!(
            "{name}: index {} is larger than self {} in dimension {k} (only dim {dim} may be)",
            fmt_shape(&index.shape),
            fmt_shape(&x.shape)
        ));
    }
    if numel(&is) > 0 && xs[d] == 0 {
        return err(format!(
            "{name}: self {} is empty along dim {dim} but index is not",
            fmt_shape(&x.shape)
        ));
    }
    let size = xs[d];
    Ok(Kernel {
        outputs: vec![spec(out, index.shape.clone())],
        native: Native::new(name, move |i, o| {
            let (xv, ix) = (read(&i[0]), read_i64(&i[1]));
            let st = contiguous_strides(&xs);
            let mut v = Vec::with_capacity(ix.len());
            let mut bad = None;
            for_each_index(&is, |idx| {
                let k = ix[v.len()];
                let w = if k < 0 { k + size } else { k };
                if !(0..size).contains(&w) {
                    bad.get_or_insert(k);
                    v.push(0.0);
                    return;
                }
                let mut src = idx.to_vec();
                src[d] = w as usize;
                v.push(xv[offset(&src, &st)]);
            });
            if let Some(k) = bad {
                return Err(out_of_range(name, k, -size, size, d));
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// How aclnnScatter combines `src` with what is at the target position
/// (`reduce`: 0 replace, 1 add, 2 multiply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// 0: `self[...] = src[...]`.
    Replace,
    /// 1: `self[...] += src[...]`.
    Add,
    /// 2: `self[...] *= src[...]`.
    Mul,
}

impl ScatterReduce {
    /// From aclnnScatter's `reduce` argument.
    pub fn from_arg(reduce: i64) -> Option<ScatterReduce> {
        match reduce {
            0 => Some(ScatterReduce::Replace),
            1 => Some(ScatterReduce::Add),
            2 => Some(ScatterReduce::Mul),
            _ => None,
        }
    }
}

/// aclnnScatter / aclnnScatterAdd (ScatterElements): `out = self`, then for
/// every position `p` of `index`, `out[p with dim = index[p]] (op)= src[p]`.
/// self, index and src have one rank; `index.size(d) <= src.size(d)` for
/// every d and `<= self.size(d)` for `d != dim`; index values in
/// `[0, self.shape[dim])`; src and out of self's dtype.
pub fn scatter(
    name: &'static str,
    x: &TensorSpec,
    dim: i64,
    index: &TensorSpec,
    src: &TensorSpec,
    reduce: ScatterReduce,
    out: DType,
) -> Res<Kernel> {
    allow(name, "self", x.dtype, ALL)?;
    allow(name, "index", index.dtype, INDEX)?;
    allow(name, "src", src.dtype, ALL)?;
    same_dtype(name, "src", src.dtype, "self", x.dtype)?;
    same_dtype(name, "out", out, "self", x.dtype)?;
    let r = x.shape.len();
    if index.shape.len() != r || src.shape.len() != r {
        return err(format!(
            "{name}: self {}, index {} and src {} must have the same number of dimensions",
            fmt_shape(&x.shape),
            fmt_shape(&index.shape),
            fmt_shape(&src.shape)
        ));
    }
    let d = axis(name, "dim", dim, r)?;
    let (xs, is, ss) = (dims(&x.shape), dims(&index.shape), dims(&src.shape));
    if (0..xs.len()).any(|k| is[k] > ss[k] || (k != d && is[k] > xs[k])) {
        return err(format!(
            "{name}: index {} does not fit src {} and self {}: index.size(d) <= src.size(d) for \
             every d, and <= self.size(d) for d != dim {dim}",
            fmt_shape(&index.shape),
            fmt_shape(&src.shape),
            fmt_shape(&x.shape)
        ));
    }
    let size = xs[d];
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let mut v = read(&i[0]);
            let (ix, sv) = (read_i64(&i[1]), read(&i[2]));
            let (xst, sst) = (contiguous_strides(&xs), contiguous_strides(&ss));
            let (mut p, mut bad) = (0, None);
            for_each_index(&is, |idx| {
                let k = ix[p];
                p += 1;
                if !(0..size).contains(&k) {
                    bad.get_or_insert(k);
                    return;
                }
                let val = sv[offset(idx, &sst)];
                let mut dst = idx.to_vec();
                dst[d] = k as usize;
                let t = &mut v[offset(&dst, &xst)];
                match reduce {
                    ScatterReduce::Replace => *t = val,
                    ScatterReduce::Add => *t += val,
                    ScatterReduce::Mul => *t *= val,
                }
            });
            if let Some(k) = bad {
                return Err(out_of_range(name, k, 0, size, d));
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// aclnnIndexAdd: `out = self`, then `out[..., index[k], ...] += alpha ·
/// source[..., k, ...]` along `dim`. index is 0-D or 1-D with
/// `source.shape[dim]` elements in `[0, self.shape[dim])`; source is self's
/// shape outside `dim`; source and out of self's dtype, which must hold
/// alpha (a float alpha does not go into an integer self).
pub fn index_add(
    x: &TensorSpec,
    dim: i64,
    index: &TensorSpec,
    source: &TensorSpec,
    alpha: (DType, f64),
    out: DType,
) -> Res<Kernel> {
    let name = "InplaceIndexAdd";
    allow(name, "self", x.dtype, ALL)?;
    allow(name, "index", index.dtype, INDEX)?;
    same_dtype(name, "source", source.dtype, "self", x.dtype)?;
    same_dtype(name, "out", out, "self", x.dtype)?;
    let with_alpha = if is_float(alpha.0) && !is_float(x.dtype) {
        DType::F32
    } else {
        x.dtype
    };
    check_cast(name, "out", with_alpha, out)?;
    if index.shape.len() > 1 {
        return err(format!(
            "{name}: index {} must be 0-D or 1-D",
            fmt_shape(&index.shape)
        ));
    }
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (xs, ss) = (dims(&x.shape), dims(&source.shape));
    if source.shape.len() != x.shape.len() || (0..xs.len()).any(|k| k != d && ss[k] != xs[k]) {
        return err(format!(
            "{name}: source {} must be self {} outside dim {dim}",
            fmt_shape(&source.shape),
            fmt_shape(&x.shape)
        ));
    }
    let n = index.numel();
    if ss[d] as usize != n {
        return err(format!(
            "{name}: index has {n} elements but source {} has {} along dim {dim}",
            fmt_shape(&source.shape),
            ss[d]
        ));
    }
    let (outer, len, inner) = split(&xs, d);
    let a = alpha.1;
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let mut v = read(&i[0]);
            let (ix, sv) = (read_i64(&i[1]), read(&i[2]));
            for (p, &k) in ix.iter().enumerate() {
                if !(0..len as i64).contains(&k) {
                    return Err(out_of_range(name, k, 0, len as i64, d));
                }
                for b in 0..outer {
                    for c in 0..inner {
                        v[(b * len + k as usize) * inner + c] += a * sv[(b * n + p) * inner + c];
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// aclnnMaskedSelect: the elements of `self` where `mask` (broadcast with
/// it) is set, in row-major order. `out` is 1-D with as many elements as
/// the broadcast shape, as the page requires: the release sizes it so and
/// refreshes its view shape to the selected count after the run (its
/// kernel has an output-shape tensor, `OP_OUTSHAPE`, hicann/ops-math
/// `conversion/masked_select_v3/op_api/masked_select.cpp`). cann-sim does
/// not change a tensor's view shape after a run: the selected elements come
/// first and the rest of `out` is zero; the count is the number of set mask
/// elements (broadcast), which the caller computes.
pub fn masked_select(x: &TensorSpec, mask: &TensorSpec, out: &TensorSpec) -> Res<Kernel> {
    let name = "MaskedSelectV3";
    allow(name, "self", x.dtype, ALL)?;
    allow(name, "mask", mask.dtype, &[DType::U8, DType::Bool])?;
    allow(name, "out", out.dtype, ALL)?;
    let shape = broadcast(name, "self", &x.shape, "mask", &mask.shape)?;
    let n = numel(&shape);
    if out.shape.len() != 1 || out.shape[0] as usize != n {
        return err(format!(
            "{name}: out {} must be 1-D with the {n} elements of self and mask broadcast ({})",
            fmt_shape(&out.shape),
            fmt_shape(&shape)
        ));
    }
    let (xs, ms) = (x.shape.clone(), mask.shape.clone());
    Ok(Kernel {
        outputs: vec![out.clone()],
        native: Native::new(name, move |i, o| {
            let (xv, mv) = (read(&i[0]), read(&i[1]));
            let (ox, om) = (
                broadcast_offsets(&xs, &shape),
                broadcast_offsets(&ms, &shape),
            );
            let mut v: Vec<f64> = ox
                .iter()
                .zip(&om)
                .filter(|&(_, &m)| mv[m] != 0.0)
                .map(|(&k, _)| xv[k])
                .collect();
            v.resize(n, 0.0);
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Reductions: amin, argmin, max/min with indices, product.
// ---------------------------------------------------------------------------

/// The first extreme of `vals` and its position; a NaN is the extreme (the
/// first NaN wins), as torch's max/min/argmin propagate it.
fn pick(vals: impl Iterator<Item = f64>, max: bool) -> (f64, usize) {
    let mut best = (f64::NAN, usize::MAX);
    for (k, v) in vals.enumerate() {
        let better = if best.1 == usize::MAX {
            true
        } else if best.0.is_nan() {
            false
        } else if v.is_nan() {
            true
        } else if max {
            v > best.0
        } else {
            v < best.0
        };
        if better {
            best = (v, k);
        }
    }
    best
}

/// A reduction along one `dim`: the output shape (`keepdim`) and the
/// (outer, len, inner) split. The reduced dimension must not be empty
/// unless `allow_empty` (the release then writes nothing).
fn along(
    name: &str,
    x: &TensorSpec,
    dim: i64,
    keep: bool,
    allow_empty: bool,
) -> Res<(Vec<i64>, (usize, usize, usize))> {
    let d = axis(name, "dim", dim, x.shape.len())?;
    let mut shape = x.shape.clone();
    if !shape.is_empty() {
        if shape[d] == 0 && !allow_empty {
            return err(format!(
                "{name}: dimension {d} of self {} to reduce is empty",
                fmt_shape(&x.shape)
            ));
        }
        if keep {
            shape[d] = 1;
        } else {
            shape.remove(d);
        }
    }
    Ok((shape, split(&x.shape, d)))
}

/// aclnnAmin (ReduceMin): the minimum over `dims` (every dimension when
/// empty), NaN propagating; dims unique and in range, none of size 0; out
/// of self's dtype.
pub fn amin(x: &TensorSpec, dims_: &[i64], keep: bool, out: DType) -> Res<Kernel> {
    let name = "ReduceMin";
    allow(name, "self", x.dtype, ALL)?;
    same_dtype(name, "out", out, "self", x.dtype)?;
    let r = x.shape.len();
    let mut seen = Vec::new();
    for &dd in dims_ {
        let a = axis(name, "dim", dd, r)?;
        if seen.contains(&a) {
            return err(format!("{name}: dim {dims_:?} names dimension {a} twice"));
        }
        seen.push(a);
    }
    let reduced: Vec<usize> = if dims_.is_empty() {
        (0..r).collect()
    } else {
        seen
    };
    if let Some(&a) = reduced.iter().find(|&&a| r > 0 && x.shape[a] == 0) {
        return err(format!(
            "{name}: dimension {a} of self {} to reduce is empty",
            fmt_shape(&x.shape)
        ));
    }
    let (shape, groups) = super::nn::reduce_layout(name, &x.shape, dims_, keep)?;
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let v: Vec<f64> = groups
                .iter()
                .map(|g| pick(g.iter().map(|&k| xv[k]), false).0)
                .collect();
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// aclnnArgMin: the index of the first minimum along `dim` (int32 or int64
/// out); the reduced dimension must not be empty.
pub fn arg_min(x: &TensorSpec, dim: i64, keep: bool, out: DType) -> Res<Kernel> {
    let name = "ArgMin";
    allow(name, "self", x.dtype, NUMERIC)?;
    allow(name, "out", out, INDEX)?;
    let (shape, (outer, len, inner)) = along(name, x, dim, keep, false)?;
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let mut idx = Vec::with_capacity(outer * inner);
            for a in 0..outer {
                for c in 0..inner {
                    let at = (0..len).map(|b| xv[(a * len + b) * inner + c]);
                    idx.push(pick(at, false).1 as i64);
                }
            }
            write_i64(&mut o[0], &idx);
            Ok(())
        }),
    })
}

/// aclnnMaxDim / aclnnMinDim (ArgMaxWithValue / ArgMinWithValue): the
/// extreme along `dim` and its first index. self float32, float16,
/// bfloat16, int64 or bool (the A2 list: int32 is not taken there); out of
/// self's dtype; indices int32 or int64 (the release casts its int32
/// indices to the tensor's type: hicann/ops-math
/// `math/arg_min_with_value/op_api/aclnn_min_dim.cpp`). An empty self
/// writes nothing, as the release returns at once.
pub fn max_min_dim(
    x: &TensorSpec,
    dim: i64,
    keep: bool,
    max: bool,
    out: DType,
    indices: DType,
) -> Res<Kernel> {
    let name = if max {
        "ArgMaxWithValue"
    } else {
        "ArgMinWithValue"
    };
    let list = [DType::F32, DType::F16, DType::BF16, DType::I64, DType::Bool];
    allow(name, "self", x.dtype, &list)?;
    same_dtype(name, "out", out, "self", x.dtype)?;
    allow(name, "indices", indices, INDEX)?;
    let (shape, (outer, len, inner)) = along(name, x, dim, keep, true)?;
    let empty = x.numel() == 0;
    Ok(Kernel {
        outputs: vec![spec(out, shape.clone()), spec(indices, shape)],
        native: Native::new(name, move |i, o| {
            if empty {
                return Ok(());
            }
            let xv = read(&i[0]);
            let (mut vals, mut idx) = (Vec::new(), Vec::new());
            for a in 0..outer {
                for c in 0..inner {
                    let at = (0..len).map(|b| xv[(a * len + b) * inner + c]);
                    let (v, k) = pick(at, max);
                    vals.push(v);
                    idx.push(k as i64);
                }
            }
            write(&mut o[0], &vals);
            write_i64(&mut o[1], &idx);
            Ok(())
        }),
    })
}

/// `vals` as `dtype` computes them: integers truncated (bool: 0/1).
fn as_type(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::Bool => f64::from(u8::from(v != 0.0)),
        d if is_float(d) => v,
        _ => v.trunc(),
    }
}

/// The product of `vals` in `dtype`: floats in f64, integers wrapping in
/// i64, bool as "all set".
fn product(dtype: DType, vals: impl Iterator<Item = f64>) -> f64 {
    if is_float(dtype) {
        vals.product()
    } else if dtype == DType::Bool {
        f64::from(u8::from(vals.into_iter().all(|v| v != 0.0)))
    } else {
        vals.fold(1i64, |acc, v| acc.wrapping_mul(v as i64)) as f64
    }
}

/// aclnnProd: the product of every element, computed as `dtype` (self cast
/// to it first), which must be out's dtype; out holds one element (any
/// shape of size 1: the release's `CheckShapeAndScalarSame`, hicann/ops-math
/// `math/reduce_prod/op_api/aclnn_prod.cpp`). An empty self gives 1.
pub fn prod(x: &TensorSpec, dtype: DType, out: &TensorSpec) -> Res<Kernel> {
    let name = "ReduceProd";
    allow(name, "self", x.dtype, ALL)?;
    same_dtype(name, "out", out.dtype, "dtype", dtype)?;
    if out.numel() != 1 {
        return err(format!(
            "{name}: out {} must hold one element",
            fmt_shape(&out.shape)
        ));
    }
    Ok(Kernel {
        outputs: vec![out.clone()],
        native: Native::new(name, move |i, o| {
            let xv = read(&i[0]);
            let p = product(dtype, xv.iter().map(|&v| as_type(dtype, v)));
            write(&mut o[0], &[p]);
            Ok(())
        }),
    })
}

/// aclnnCumprod: the cumulative product along `dim`, computed as `dtype`
/// (`None`: ACL_DT_UNDEFINED, out's type), which must be out's dtype;
/// input and out numeric (no bool).
pub fn cumprod(x: &TensorSpec, dim: i64, dtype: Option<DType>, out: DType) -> Res<Kernel> {
    let name = "Cumprod";
    allow(name, "input", x.dtype, NUMERIC)?;
    allow(name, "out", out, NUMERIC)?;
    let t = dtype.unwrap_or(out);
    same_dtype(name, "out", out, "dtype", t)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (outer, len, inner) = split(&x.shape, d);
    Ok(Kernel {
        outputs: vec![spec(out, x.shape.clone())],
        native: Native::new(name, move |i, o| {
            let mut v: Vec<f64> = read(&i[0]).into_iter().map(|e| as_type(t, e)).collect();
            for a in 0..outer {
                for c in 0..inner {
                    for b in 1..len {
                        let (k, prev) = ((a * len + b) * inner + c, (a * len + b - 1) * inner + c);
                        v[k] = product(t, [v[prev], v[k]].into_iter());
                    }
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

/// aclnnCummax / aclnnCummin: the running extreme along `dim` and the index
/// it was last seen at. A tie takes the later index and a NaN, once seen,
/// stays (torch's `cummax`/`cummin`, which the pages' formulas name);
/// valuesOut must hold self's dtype, indicesOut int32 or int64, both of
/// self's shape.
pub fn cum_extreme(
    x: &TensorSpec,
    dim: i64,
    max: bool,
    values: DType,
    indices: DType,
) -> Res<Kernel> {
    let name = if max { "Cummax" } else { "Cummin" };
    allow(name, "self", x.dtype, ALL)?;
    allow(name, "valuesOut", values, ALL)?;
    check_cast(name, "valuesOut", x.dtype, values)?;
    allow(name, "indicesOut", indices, INDEX)?;
    let d = axis(name, "dim", dim, x.shape.len())?;
    let (outer, len, inner) = split(&x.shape, d);
    Ok(Kernel {
        outputs: vec![
            spec(values, x.shape.clone()),
            spec(indices, x.shape.clone()),
        ],
        native: Native::new(name, move |i, o| {
            let mut v = read(&i[0]);
            let mut idx = vec![0i64; v.len()];
            for a in 0..outer {
                for c in 0..inner {
                    let (mut best, mut at) = (f64::NAN, 0i64);
                    for b in 0..len {
                        let k = (a * len + b) * inner + c;
                        let e = v[k];
                        let take = b == 0
                            || e.is_nan()
                            || (!best.is_nan() && if max { e >= best } else { e <= best });
                        if take {
                            (best, at) = (e, b as i64);
                        }
                        (v[k], idx[k]) = (best, at);
                    }
                }
            }
            write(&mut o[0], &v);
            write_i64(&mut o[1], &idx);
            Ok(())
        }),
    })
}

// ---------------------------------------------------------------------------
// Cross product.
// ---------------------------------------------------------------------------

/// aclnnLinalgCross: the cross product of 3-vectors along `dim` of self and
/// other broadcast (whose size there must be 3); self, other and out of one
/// numeric dtype.
pub fn cross(a: &TensorSpec, b: &TensorSpec, dim: i64, out: DType) -> Res<Kernel> {
    let name = "Cross";
    allow(name, "self", a.dtype, NUMERIC)?;
    same_dtype(name, "other", b.dtype, "self", a.dtype)?;
    same_dtype(name, "out", out, "self", a.dtype)?;
    let shape = broadcast(name, "self", &a.shape, "other", &b.shape)?;
    let d = axis(name, "dim", dim, shape.len())?;
    if shape.get(d) != Some(&3) {
        return err(format!(
            "{name}: self and other broadcast to {}, whose dim {dim} is not of size 3",
            fmt_shape(&shape)
        ));
    }
    let (sa, sb) = (a.shape.clone(), b.shape.clone());
    let (outer, _, inner) = split(&shape, d);
    let oshape = shape.clone();
    Ok(Kernel {
        outputs: vec![spec(out, shape)],
        native: Native::new(name, move |i, o| {
            let (x, y) = (read(&i[0]), read(&i[1]));
            let (oa, ob) = (
                broadcast_offsets(&sa, &oshape),
                broadcast_offsets(&sb, &oshape),
            );
            let mut v = vec![0.0; oa.len()];
            for p in 0..outer {
                for c in 0..inner {
                    let k = |j: usize| (p * 3 + j) * inner + c;
                    let u = |j: usize| x[oa[k(j)]];
                    let w = |j: usize| y[ob[k(j)]];
                    v[k(0)] = u(1) * w(2) - u(2) * w(1);
                    v[k(1)] = u(2) * w(0) - u(0) * w(2);
                    v[k(2)] = u(0) * w(1) - u(1) * w(0);
                }
            }
            write(&mut o[0], &v);
            Ok(())
        }),
    })
}

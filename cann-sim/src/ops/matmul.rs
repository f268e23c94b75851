//! MatMul (2-D, optional bias) and BatchMatMul (batch dimensions broadcast).
//!
//! The kernel is a cache-blocked GEMM in the Goto style: B is packed per
//! block of `KC` rows into panels of `NR` columns, A into panels of `MR` rows,
//! and a `MR x NR` register-tile micro-kernel accumulates over the block.
//! f16/bf16 are widened to f32 when packed and rounded once at the end (the
//! Cube unit accumulates in f32 too); int32 accumulates with wrapping.

use std::num::Wrapping;
use std::ops::{Add, Mul};

use super::broadcast::{broadcast_shapes, broadcast_strides, contiguous_strides};
use super::dtype::{load_f32, load_i64, store_f32, store_i64};
use super::{
    Arg, Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_bool, check_dtype, fmt_shape,
    numel,
};

const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32];

/// Rows of the register tile.
const MR: usize = 4;
/// Columns of the register tile.
const NR: usize = 16;
/// Depth of a packed block.
const KC: usize = 256;

fn transpose_attrs(
    op: Op,
    attrs: &Attrs,
) -> Result<(bool, bool, &'static str, &'static str), OpError> {
    let (n1, n2) = if op == Op::MatMul {
        ("transpose_x1", "transpose_x2")
    } else {
        ("adj_x1", "adj_x2")
    };
    Ok((
        attr_bool(op, attrs, n1, false)?,
        attr_bool(op, attrs, n2, false)?,
        n1,
        n2,
    ))
}

pub(crate) fn infer(op: Op, args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
    let (x1, x2) = (args[0].spec, args[1].spec);
    check_dtype(op, "x1", x1.dtype, DTYPES)?;
    check_dtype(op, "x2", x2.dtype, DTYPES)?;
    if x1.dtype != x2.dtype {
        return Err(OpError::Input(format!(
            "{}: x1 is {} and x2 is {}: the dtypes must be equal",
            op.name(),
            x1.dtype.name(),
            x2.dtype.name()
        )));
    }
    let (t1, t2, n1, n2) = transpose_attrs(op, attrs)?;
    for (name, spec) in [("x1", x1), ("x2", x2)] {
        let rank = spec.shape.len();
        let ok = if op == Op::MatMul {
            rank == 2
        } else {
            rank >= 2
        };
        if !ok {
            return Err(OpError::Input(format!(
                "{}: {name} has shape {}: it must be {}",
                op.name(),
                fmt_shape(&spec.shape),
                if op == Op::MatMul {
                    "2-D"
                } else {
                    "at least 2-D"
                }
            )));
        }
    }
    let (r1, r2) = (x1.shape.len(), x2.shape.len());
    let (m, k1) = mat_dims(&x1.shape[r1 - 2..], t1);
    let (k2, n) = mat_dims(&x2.shape[r2 - 2..], t2);
    if k1 != k2 {
        let note = |t: bool, name: &str| {
            if t {
                format!(" ({name}=true)")
            } else {
                String::new()
            }
        };
        return Err(OpError::Input(format!(
            "{}: x1 is {}{} and x2 is {}{}: inner dimensions {k1} and {k2} differ",
            op.name(),
            fmt_shape(&x1.shape),
            note(t1, n1),
            fmt_shape(&x2.shape),
            note(t2, n2)
        )));
    }
    let mut shape = if op == Op::BatchMatMul {
        broadcast_shapes(
            op,
            "the batch dimensions of x1",
            &x1.shape[..r1 - 2],
            "those of x2",
            &x2.shape[..r2 - 2],
        )?
    } else {
        Vec::new()
    };
    if let Some(bias) = args.get(2) {
        let b = bias.spec;
        if b.dtype != x1.dtype {
            return Err(OpError::Input(format!(
                "{}: bias is {} but x1 is {}: the dtypes must be equal",
                op.name(),
                b.dtype.name(),
                x1.dtype.name()
            )));
        }
        if b.shape != [n] {
            return Err(OpError::Input(format!(
                "{}: bias has shape {}: it must be [{n}] (the columns of the output)",
                op.name(),
                fmt_shape(&b.shape)
            )));
        }
    }
    shape.extend([m, n]);
    Ok(TensorSpec {
        dtype: x1.dtype,
        shape,
    })
}

/// (rows, cols) of a matrix stored as `dims` (2 entries), after an optional transpose.
fn mat_dims(dims: &[i64], transpose: bool) -> (i64, i64) {
    if transpose {
        (dims[1], dims[0])
    } else {
        (dims[0], dims[1])
    }
}

/// Shapes of one GEMM: `C[m,n] = op(A)[m,k] * op(B)[k,n]`.
#[derive(Clone, Copy)]
pub(crate) struct Gemm {
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// A is stored `[k, m]`.
    pub(crate) trans_a: bool,
    /// B is stored `[n, k]`.
    pub(crate) trans_b: bool,
}

pub(crate) fn run(
    op: Op,
    inputs: &[Input<'_>],
    attrs: &Attrs,
    out: &mut Output<'_>,
) -> Result<(), OpError> {
    let (x1, x2) = (&inputs[0], &inputs[1]);
    let (t1, t2, _, _) = transpose_attrs(op, attrs)?;
    let (s1, s2) = (&x1.spec.shape, &x2.spec.shape);
    let (r1, r2) = (s1.len(), s2.len());
    let (m, k) = mat_dims(&s1[r1 - 2..], t1);
    let (_, n) = mat_dims(&s2[r2 - 2..], t2);
    let g = Gemm {
        m: m as usize,
        n: n as usize,
        k: k as usize,
        trans_a: t1,
        trans_b: t2,
    };
    let out_shape = out.spec.shape.clone();
    let batch_shape = &out_shape[..out_shape.len() - 2];
    let batches = numel(batch_shape);
    // Element offsets of each batch's matrix in x1, x2.
    let (mut off1, mut off2) = (Vec::with_capacity(batches), Vec::with_capacity(batches));
    if batches > 0 {
        let mat1 = numel(&s1[r1 - 2..]);
        let mat2 = numel(&s2[r2 - 2..]);
        let b1 = broadcast_strides(&s1[..r1 - 2], batch_shape);
        let b2 = broadcast_strides(&s2[..r2 - 2], batch_shape);
        let bo = contiguous_strides(batch_shape);
        for i in 0..batches {
            let (mut o1, mut o2) = (0usize, 0usize);
            for d in 0..batch_shape.len() {
                let idx = (i / bo[d]) % (batch_shape[d] as usize);
                o1 += idx * b1[d] * mat1;
                o2 += idx * b2[d] * mat2;
            }
            off1.push(o1);
            off2.push(o2);
        }
    }
    let (mk, kn, mn) = (g.m * g.k, g.k * g.n, g.m * g.n);
    let dtype = out.spec.dtype;
    if dtype == DType::I32 {
        let wrap = |v: Vec<i64>| -> Vec<Wrapping<i32>> {
            v.into_iter().map(|e| Wrapping(e as i32)).collect()
        };
        let a = wrap(load_i64(x1.spec.dtype, x1.data));
        let b = wrap(load_i64(x2.spec.dtype, x2.data));
        let bias = inputs.get(2).map(|t| wrap(load_i64(t.spec.dtype, t.data)));
        let mut c = vec![Wrapping(0i32); batches * mn];
        for ((cb, &o1), &o2) in c.chunks_exact_mut(mn.max(1)).zip(&off1).zip(&off2) {
            gemm(g, &a[o1..o1 + mk], &b[o2..o2 + kn], bias.as_deref(), cb);
        }
        let c: Vec<i64> = c.into_iter().map(|w| i64::from(w.0)).collect();
        store_i64(dtype, &c, out.data);
    } else {
        let a = load_f32(x1.spec.dtype, x1.data);
        let b = load_f32(x2.spec.dtype, x2.data);
        let bias = inputs.get(2).map(|t| load_f32(t.spec.dtype, t.data));
        let mut c = vec![0f32; batches * mn];
        for ((cb, &o1), &o2) in c.chunks_exact_mut(mn.max(1)).zip(&off1).zip(&off2) {
            gemm(g, &a[o1..o1 + mk], &b[o2..o2 + kn], bias.as_deref(), cb);
        }
        store_f32(dtype, &c, out.data);
    }
    Ok(())
}

/// `c[m,n] = op(a) * op(b) (+ bias[n])`, row-major, `c` of exactly `m*n`.
pub(crate) fn gemm<T>(g: Gemm, a: &[T], b: &[T], bias: Option<&[T]>, c: &mut [T])
where
    T: Copy + Default + Add<Output = T> + Mul<Output = T>,
{
    let Gemm { m, n, k, .. } = g;
    match bias {
        Some(bias) => {
            for row in c.chunks_exact_mut(n.max(1)) {
                row.copy_from_slice(&bias[..row.len()]);
            }
        }
        None => c.iter_mut().for_each(|e| *e = T::default()),
    }
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let n_panels = n.div_ceil(NR);
    let mut bpack = vec![T::default(); KC.min(k) * n_panels * NR];
    let mut apack = vec![T::default(); KC.min(k) * MR];
    let mut k0 = 0;
    while k0 < k {
        let kc = KC.min(k - k0);
        // Pack B[k0..k0+kc, :] into panels of NR columns: panel p holds
        // B[k0+q, p*NR + j] at q*NR + j (zero beyond n).
        for (p, panel) in bpack.chunks_exact_mut(kc * NR).take(n_panels).enumerate() {
            let j0 = p * NR;
            let w = NR.min(n - j0);
            for (q, dst) in panel.chunks_exact_mut(NR).enumerate() {
                let kk = k0 + q;
                if g.trans_b {
                    for (j, d) in dst[..w].iter_mut().enumerate() {
                        *d = b[(j0 + j) * k + kk];
                    }
                } else {
                    dst[..w].copy_from_slice(&b[kk * n + j0..kk * n + j0 + w]);
                }
                dst[w..].iter_mut().for_each(|d| *d = T::default());
            }
        }
        let mut i0 = 0;
        while i0 < m {
            let h = MR.min(m - i0);
            // Pack A[i0..i0+h, k0..k0+kc]: apack[q*MR + r] = A[i0+r, k0+q].
            let ap = &mut apack[..kc * MR];
            for (q, dst) in ap.chunks_exact_mut(MR).enumerate() {
                let kk = k0 + q;
                for (r, d) in dst.iter_mut().enumerate() {
                    *d = if r < h {
                        if g.trans_a {
                            a[kk * m + i0 + r]
                        } else {
                            a[(i0 + r) * k + kk]
                        }
                    } else {
                        T::default()
                    };
                }
            }
            for (p, bp) in bpack.chunks_exact(kc * NR).take(n_panels).enumerate() {
                let acc = micro_kernel(ap, bp);
                let j0 = p * NR;
                let w = NR.min(n - j0);
                for (r, acc_row) in acc.iter().enumerate().take(h) {
                    let crow = &mut c[(i0 + r) * n + j0..(i0 + r) * n + j0 + w];
                    for (cv, &av) in crow.iter_mut().zip(acc_row) {
                        *cv = *cv + av;
                    }
                }
            }
            i0 += MR;
        }
        k0 += kc;
    }
}

/// The `MR x NR` register tile: sum over q of `ap[q*MR + r] * bp[q*NR + j]`.
#[inline(always)]
fn micro_kernel<T>(ap: &[T], bp: &[T]) -> [[T; NR]; MR]
where
    T: Copy + Default + Add<Output = T> + Mul<Output = T>,
{
    let mut acc = [[T::default(); NR]; MR];
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)) {
        for r in 0..MR {
            let ar = a[r];
            for j in 0..NR {
                acc[r][j] = acc[r][j] + ar * b[j];
            }
        }
    }
    acc
}

//! MatMul (2-D, optional bias) and BatchMatMul (batch dimensions broadcast).
//!
//! Floating-point products run on the `gemm` crate's f32 kernel (packed,
//! cache-blocked, SIMD micro-kernels chosen for the CPU at run time), one
//! thread: the simulator runs one worker per stream. Transposes are strides
//! of the operands, never copies. f16/bf16 are widened to f32 when loaded
//! and rounded once at the end (the Cube unit accumulates in f32 too); int32
//! accumulates with wrapping, in a plain loop (no published GEMM crate has
//! a wrapping integer kernel).

use std::borrow::Cow;
use std::num::Wrapping;

use super::broadcast::{broadcast_shapes, broadcast_strides, contiguous_strides};
use super::dtype::{load_f32, load_i64, store_f32, store_i64};
use super::{
    Arg, Attrs, DType, Input, Op, OpError, Output, TensorSpec, attr_bool, check_dtype, fmt_shape,
    numel,
};

const DTYPES: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32];

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
        let a = f32_operand(x1);
        let b = f32_operand(x2);
        let bias = inputs.get(2).map(f32_operand);
        let product = |c: &mut [f32]| {
            for ((cb, &o1), &o2) in c.chunks_exact_mut(mn.max(1)).zip(&off1).zip(&off2) {
                gemm(g, &a[o1..o1 + mk], &b[o2..o2 + kn], bias.as_deref(), cb);
            }
        };
        match f32_slice_mut(dtype, out.data) {
            Some(c) => product(c),
            None => {
                let mut c = vec![0f32; batches * mn];
                product(&mut c);
                store_f32(dtype, &c, out.data);
            }
        }
    }
    Ok(())
}

/// An input's elements as f32: an f32 tensor's own bytes when they are
/// aligned for f32 (device allocations are), else a widened copy.
fn f32_operand<'a>(t: &Input<'a>) -> Cow<'a, [f32]> {
    if t.spec.dtype == DType::F32 && cfg!(target_endian = "little") {
        // SAFETY: every bit pattern is a valid f32, and `align_to` puts in
        // the middle part only whole, aligned f32s of the buffer.
        let (head, mid, tail) = unsafe { t.data.align_to::<f32>() };
        if head.is_empty() && tail.is_empty() {
            return Cow::Borrowed(mid);
        }
    }
    Cow::Owned(load_f32(t.spec.dtype, t.data))
}

/// An f32 output's bytes as f32 elements, when they are aligned for f32.
fn f32_slice_mut(dtype: DType, data: &mut [u8]) -> Option<&mut [f32]> {
    if dtype != DType::F32 || cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: every bit pattern is a valid f32 and a valid u8, and
    // `align_to_mut` puts in the middle part only whole, aligned f32s.
    let (head, mid, tail) = unsafe { data.align_to_mut::<f32>() };
    (head.is_empty() && tail.is_empty()).then_some(mid)
}

/// An element type [`gemm`] multiplies: f32 (on the `gemm` crate) and
/// wrapping int32.
pub(crate) trait GemmElem: Copy + Default {
    /// `c[m,n] = op(a) * op(b)`, or `+=` with `accumulate`; row-major, `c`
    /// of exactly `m*n`, with `m`, `n` and `k` non-zero.
    fn product(g: Gemm, a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool);
}

impl GemmElem for f32 {
    fn product(g: Gemm, a: &[f32], b: &[f32], c: &mut [f32], accumulate: bool) {
        let Gemm { m, n, k, .. } = g;
        // Bounds the raw accesses below: the slices hold the whole operands.
        let (a, b, c) = (&a[..m * k], &b[..k * n], &mut c[..m * n]);
        // Element strides (row, column) of op(A) [m,k] and op(B) [k,n].
        let (a_rs, a_cs) = if g.trans_a { (1, m) } else { (k, 1) };
        let (b_rs, b_cs) = if g.trans_b { (1, k) } else { (n, 1) };
        let s = |v: usize| v as isize;
        // SAFETY: `a`, `b` and `c` hold at least m*k, k*n and m*n elements
        // (sliced above), and every index the strides reach, row * rs +
        // col * cs, is below that length for rows and columns in range: the
        // strides are those of a contiguous row-major matrix or of its
        // transpose. `c` is the only mutable one and does not alias the
        // others (a `&mut` slice). T = f32 is one of the crate's types.
        unsafe {
            gemm::gemm(
                m,
                n,
                k,
                c.as_mut_ptr(),
                1,
                s(n),
                accumulate,
                a.as_ptr(),
                s(a_cs),
                s(a_rs),
                b.as_ptr(),
                s(b_cs),
                s(b_rs),
                1.0,
                1.0,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    }
}

impl GemmElem for Wrapping<i32> {
    fn product(g: Gemm, a: &[Self], b: &[Self], c: &mut [Self], accumulate: bool) {
        let Gemm { m, n, k, .. } = g;
        if !accumulate {
            c.iter_mut().for_each(|e| *e = Wrapping(0));
        }
        // op(B) row-major, so that the inner loop runs along a row of each.
        let transposed: Vec<Self>;
        let b = if g.trans_b {
            transposed = (0..k * n).map(|e| b[(e % n) * k + e / n]).collect();
            &transposed[..]
        } else {
            &b[..k * n]
        };
        for (i, crow) in c.chunks_exact_mut(n).enumerate().take(m) {
            for (kk, brow) in b.chunks_exact(n).enumerate() {
                let av = if g.trans_a {
                    a[kk * m + i]
                } else {
                    a[i * k + kk]
                };
                for (cv, &bv) in crow.iter_mut().zip(brow) {
                    *cv += av * bv;
                }
            }
        }
    }
}

/// `c[m,n] = op(a) * op(b) (+ bias[n])`, row-major, `c` of exactly `m*n`.
pub(crate) fn gemm<T: GemmElem>(g: Gemm, a: &[T], b: &[T], bias: Option<&[T]>, c: &mut [T]) {
    let Gemm { m, n, k, .. } = g;
    if let Some(bias) = bias {
        for row in c.chunks_exact_mut(n.max(1)) {
            row.copy_from_slice(&bias[..row.len()]);
        }
    }
    if m == 0 || n == 0 || k == 0 {
        if bias.is_none() {
            c.iter_mut().for_each(|e| *e = T::default());
        }
        return;
    }
    T::product(g, a, b, c, bias.is_some());
}

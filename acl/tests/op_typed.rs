//! The typed operators of `acl::ops` (aclop path) against host references:
//! every operator × data type × broadcasting case, with tolerances of the
//! data type (f16/bf16 results are the f32 result rounded once); shape
//! errors caught before C, and the runtime's codes for what only it knows.

mod common;

use acl::{Device, Error, ErrorCode, Stream, Tensor, ops};
use half::{bf16, f16};

/// A test element: conversion to and from f64 and a tolerance.
trait Num: acl::Element + std::fmt::Debug + PartialEq {
    const FLOAT: bool;
    fn to(self) -> f64;
    fn from(v: f64) -> Self;
    /// Relative tolerance of one rounding (and f32 accumulation).
    fn tol() -> f64;
}

impl Num for f32 {
    const FLOAT: bool = true;
    fn to(self) -> f64 {
        f64::from(self)
    }
    fn from(v: f64) -> Self {
        v as f32
    }
    fn tol() -> f64 {
        1e-5
    }
}
impl Num for f16 {
    const FLOAT: bool = true;
    fn to(self) -> f64 {
        f64::from(self.to_f32())
    }
    fn from(v: f64) -> Self {
        f16::from_f64(v)
    }
    fn tol() -> f64 {
        2e-3
    }
}
impl Num for bf16 {
    const FLOAT: bool = true;
    fn to(self) -> f64 {
        f64::from(self.to_f32())
    }
    fn from(v: f64) -> Self {
        bf16::from_f64(v)
    }
    fn tol() -> f64 {
        1.6e-2
    }
}
impl Num for i32 {
    const FLOAT: bool = false;
    fn to(self) -> f64 {
        f64::from(self)
    }
    fn from(v: f64) -> Self {
        v as i32
    }
    fn tol() -> f64 {
        0.0
    }
}
impl Num for i64 {
    const FLOAT: bool = false;
    fn to(self) -> f64 {
        self as f64
    }
    fn from(v: f64) -> Self {
        v as i64
    }
    fn tol() -> f64 {
        0.0
    }
}

fn stream() -> (Device, Stream) {
    let npu = common::device(0);
    let s = npu.new_stream().unwrap();
    (npu, s)
}

/// Deterministic values in [-4, 4) (integers for integer types), never 0
/// when `nonzero`, positive when `positive`.
fn values<T: Num>(n: usize, seed: u64, positive: bool) -> Vec<T> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = ((x >> 33) as f64) / f64::from(1u32 << 31);
            let mut v = u * 8.0 - 4.0;
            if !T::FLOAT {
                v = v.round();
            }
            if positive {
                v = v.abs() + if T::FLOAT { 0.25 } else { 1.0 };
            } else if v == 0.0 {
                v = 1.0;
            }
            T::from(v)
        })
        .collect()
}

fn assert_close<T: Num>(what: &str, got: &[T], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w_rounded = T::from(*w).to();
        let g = g.to();
        let ok = if w.is_nan() {
            g.is_nan()
        } else {
            (g - w_rounded).abs() <= T::tol() * w.abs().max(1.0) + 1e-6
        };
        assert!(
            ok,
            "{what}: element {i}: got {g}, want {w} ({w_rounded} as {:?})",
            std::any::type_name::<T>()
        );
    }
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Index of `out_idx` (in `out` shape) in a broadcast operand of `shape`.
fn bcast_index(out: &[usize], shape: &[usize], mut flat: usize) -> usize {
    let mut idx = vec![0; out.len()];
    for d in (0..out.len()).rev() {
        idx[d] = flat % out[d];
        flat /= out[d];
    }
    let off = out.len() - shape.len();
    let mut r = 0;
    for (d, &n) in shape.iter().enumerate() {
        r = r * n + if n == 1 { 0 } else { idx[d + off] };
    }
    r
}

const BCAST: [(&[usize], &[usize], &[usize]); 4] = [
    (&[2, 3], &[2, 3], &[2, 3]),
    (&[2, 3], &[3], &[2, 3]),
    (&[4, 1, 3], &[2, 1], &[4, 2, 3]),
    (&[], &[5], &[5]),
];

type BinOp<T> = fn(&Stream, &Tensor<T>, &Tensor<T>, &mut Tensor<T>) -> acl::Result<()>;

fn check_binary<T: Num>(name: &str, op: BinOp<T>, f: fn(f64, f64) -> f64, positive_b: bool) {
    let (_npu, s) = stream();
    for (k, (sa, sb, so)) in BCAST.iter().enumerate() {
        let av: Vec<T> = values(numel(sa), k as u64, false);
        let bv: Vec<T> = values(numel(sb), 100 + k as u64, positive_b);
        let a = Tensor::from_host(&s, &av, sa).unwrap();
        let b = Tensor::from_host(&s, &bv, sb).unwrap();
        let mut o = Tensor::<T>::zeros(&s, so).unwrap();
        op(&s, &a, &b, &mut o).unwrap_or_else(|e| panic!("{name} {sa:?} {sb:?}: {e}"));
        let want: Vec<f64> = (0..numel(so))
            .map(|i| {
                f(
                    av[bcast_index(so, sa, i)].to(),
                    bv[bcast_index(so, sb, i)].to(),
                )
            })
            .collect();
        assert_close(
            &format!("{name} {sa:?}x{sb:?}"),
            &o.to_host_vec().unwrap(),
            &want,
        );
    }
}

macro_rules! for_types {
    ($f:ident, [$($t:ty),*]) => {{ $( $f::<$t>(); )* }};
}

fn binaries<T: Num>() {
    check_binary::<T>("add", ops::add, |a, b| a + b, false);
    check_binary::<T>("sub", ops::sub, |a, b| a - b, false);
    check_binary::<T>("mul", ops::mul, |a, b| a * b, false);
    check_binary::<T>("maximum", ops::maximum, f64::max, false);
    check_binary::<T>("minimum", ops::minimum, f64::min, false);
}

#[test]
fn binary_operators_broadcast_and_match_the_host_in_every_dtype() {
    for_types!(binaries, [f32, f16, bf16, i32, i64]);
}

#[test]
fn real_div_and_relu_grad_match_the_host_in_float_dtypes() {
    fn run<T: Num>() {
        check_binary::<T>("div", ops::div, |a, b| a / b, true);
        check_binary::<T>(
            "relu_grad",
            ops::relu_grad,
            |g, x| if x > 0.0 { g } else { 0.0 },
            false,
        );
    }
    for_types!(run, [f32, f16, bf16]);
}

type UnOp<T> = fn(&Stream, &Tensor<T>, &mut Tensor<T>) -> acl::Result<()>;

fn check_unary<T: Num>(name: &str, op: UnOp<T>, f: fn(f64) -> f64, positive: bool) {
    let (_npu, s) = stream();
    let shape = [3, 4];
    let xv: Vec<T> = values(12, 7, positive);
    let x = Tensor::from_host(&s, &xv, &shape).unwrap();
    let mut o = Tensor::<T>::zeros(&s, &shape).unwrap();
    op(&s, &x, &mut o).unwrap_or_else(|e| panic!("{name}: {e}"));
    let want: Vec<f64> = xv.iter().map(|v| f(v.to())).collect();
    assert_close(name, &o.to_host_vec().unwrap(), &want);
}

fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

#[test]
fn unary_operators_match_the_host_in_every_dtype_they_take() {
    fn numeric<T: Num>() {
        check_unary::<T>("neg", ops::neg, |x| -x, false);
        check_unary::<T>("abs", ops::abs, f64::abs, false);
        check_unary::<T>("relu", ops::relu, |x| x.max(0.0), false);
        check_unary::<T>("zeros_like", ops::zeros_like, |_| 0.0, false);
        check_unary::<T>("ones_like", ops::ones_like, |_| 1.0, false);
    }
    fn floats<T: Num>() {
        check_unary::<T>("exp", ops::exp, f64::exp, false);
        check_unary::<T>("log", ops::log, f64::ln, true);
        check_unary::<T>("sqrt", ops::sqrt, f64::sqrt, true);
        check_unary::<T>("rsqrt", ops::rsqrt, |x| 1.0 / x.sqrt(), true);
        check_unary::<T>("sigmoid", ops::sigmoid, |x| 1.0 / (1.0 + (-x).exp()), false);
        check_unary::<T>("tanh", ops::tanh, f64::tanh, false);
        check_unary::<T>("gelu", ops::gelu, gelu, false);
    }
    for_types!(numeric, [f32, f16, bf16, i32]);
    for_types!(floats, [f32, f16, bf16]);
}

fn host_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize, ta: bool, tb: bool) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k)
                .map(|p| {
                    let x = if ta { a[p * m + i] } else { a[i * k + p] };
                    let y = if tb { b[j * k + p] } else { b[p * n + j] };
                    x * y
                })
                .sum();
        }
    }
    out
}

#[test]
fn matmul_with_and_without_transposes_matches_the_host() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        let (m, k, n) = (3, 5, 4);
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let av: Vec<T> = values(m * k, 1, false);
            let bv: Vec<T> = values(k * n, 2, false);
            let sa = if ta { [k, m] } else { [m, k] };
            let sb = if tb { [n, k] } else { [k, n] };
            let a = Tensor::from_host(&s, &av, &sa).unwrap();
            let b = Tensor::from_host(&s, &bv, &sb).unwrap();
            let mut c = Tensor::<T>::zeros(&s, &[m, n]).unwrap();
            ops::matmul_t(&s, &a, ta, &b, tb, &mut c).unwrap();
            let af: Vec<f64> = av.iter().map(|v| v.to()).collect();
            let bf: Vec<f64> = bv.iter().map(|v| v.to()).collect();
            let want = host_matmul(&af, &bf, m, k, n, ta, tb);
            assert_close(
                &format!("matmul {ta} {tb}"),
                &c.to_host_vec().unwrap(),
                &want,
            );
        }
    }
    for_types!(run, [f32, f16, bf16, i32]);
}

#[test]
fn batch_matmul_broadcasts_batches_and_honours_adjoints() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        // a: [2, 1, 2, 3], b: [3, 3, 2] -> [2, 3, 2, 2]
        let av: Vec<T> = values(12, 3, false);
        let bv: Vec<T> = values(18, 4, false);
        let a = Tensor::from_host(&s, &av, &[2, 1, 2, 3]).unwrap();
        let b = Tensor::from_host(&s, &bv, &[3, 3, 2]).unwrap();
        let mut c = Tensor::<T>::zeros(&s, &[2, 3, 2, 2]).unwrap();
        ops::batch_matmul(&s, &a, &b, &mut c).unwrap();
        let af: Vec<f64> = av.iter().map(|v| v.to()).collect();
        let bf: Vec<f64> = bv.iter().map(|v| v.to()).collect();
        let mut want = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                want.extend(host_matmul(
                    &af[i * 6..i * 6 + 6],
                    &bf[j * 6..j * 6 + 6],
                    2,
                    3,
                    2,
                    false,
                    false,
                ));
            }
        }
        assert_close("batch_matmul", &c.to_host_vec().unwrap(), &want);
        // adj_x1: a stored [2, 3, 2] as [batch, k, m].
        let a2 = Tensor::from_host(&s, &av, &[2, 3, 2]).unwrap();
        let b2 = Tensor::from_host(&s, &bv[..12], &[2, 3, 2]).unwrap();
        let mut c2 = Tensor::<T>::zeros(&s, &[2, 2, 2]).unwrap();
        ops::batch_matmul_adj(&s, &a2, true, &b2, false, &mut c2).unwrap();
        let mut want2 = Vec::new();
        for i in 0..2 {
            want2.extend(host_matmul(
                &af[i * 6..i * 6 + 6],
                &bf[i * 6..i * 6 + 6],
                2,
                3,
                2,
                true,
                false,
            ));
        }
        assert_close("batch_matmul adj", &c2.to_host_vec().unwrap(), &want2);
    }
    for_types!(run, [f32, f16, bf16]);
}

fn host_reduce(x: &[f64], shape: &[usize], axes: &[usize], f: fn(&[f64]) -> f64) -> Vec<f64> {
    // Output over the kept dims, in order.
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); numel(&out_shape)];
    for (flat, &v) in x.iter().enumerate() {
        let mut idx = vec![0; shape.len()];
        let mut r = flat;
        for d in (0..shape.len()).rev() {
            idx[d] = r % shape[d];
            r /= shape[d];
        }
        let o = kept.iter().fold(0, |acc, &d| acc * shape[d] + idx[d]);
        groups[o].push(v);
    }
    groups.iter().map(|g| f(g)).collect()
}

#[test]
fn reductions_over_axes_with_and_without_keep_dims_match_the_host() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        let shape = [2, 3, 4];
        let xv: Vec<T> = values(24, 9, false);
        let xf: Vec<f64> = xv.iter().map(|v| v.to()).collect();
        let x = Tensor::from_host(&s, &xv, &shape).unwrap();
        type Red<T> = fn(&Stream, &Tensor<T>, &[i64], bool, &mut Tensor<T>) -> acl::Result<()>;
        type Host = fn(&[f64]) -> f64;
        let cases: [(&str, Red<T>, Host); 3] = [
            ("reduce_sum", ops::reduce_sum, |g| g.iter().sum()),
            ("reduce_mean", ops::reduce_mean, |g| {
                g.iter().sum::<f64>() / g.len() as f64
            }),
            ("reduce_max", ops::reduce_max, |g| {
                g.iter().copied().fold(f64::MIN, f64::max)
            }),
        ];
        for (name, op, f) in cases {
            if !T::FLOAT && name == "reduce_mean" {
                continue;
            }
            for (axes, norm, keep, out) in [
                (&[1i64][..], &[1usize][..], false, &[2usize, 4][..]),
                (&[-1, 0], &[0, 2], true, &[1, 3, 1]),
                (&[0, 1, 2], &[0, 1, 2], false, &[]),
            ] {
                let mut o = Tensor::<T>::zeros(&s, out).unwrap();
                op(&s, &x, axes, keep, &mut o).unwrap_or_else(|e| panic!("{name} {axes:?}: {e}"));
                let want = host_reduce(&xf, &shape, norm, f);
                assert_close(
                    &format!("{name} {axes:?}"),
                    &o.to_host_vec().unwrap(),
                    &want,
                );
            }
        }
    }
    for_types!(run, [f32, f16, bf16, i32, i64]);
}

#[test]
fn softmax_and_log_softmax_match_the_host() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        let xv: Vec<T> = values(12, 11, false);
        let x = Tensor::from_host(&s, &xv, &[3, 4]).unwrap();
        for (axis, log) in [(-1i64, false), (0, false), (-1, true)] {
            let mut o = Tensor::<T>::zeros(&s, &[3, 4]).unwrap();
            if log {
                ops::log_softmax(&s, &x, axis, &mut o).unwrap();
            } else {
                ops::softmax(&s, &x, axis, &mut o).unwrap();
            }
            let mut want = vec![0.0; 12];
            let lines: Vec<Vec<usize>> = if axis == 0 {
                (0..4)
                    .map(|j| (0..3).map(|i| i * 4 + j).collect())
                    .collect()
            } else {
                (0..3)
                    .map(|i| (0..4).map(|j| i * 4 + j).collect())
                    .collect()
            };
            for line in lines {
                let m = line.iter().map(|&i| xv[i].to()).fold(f64::MIN, f64::max);
                let z: f64 = line.iter().map(|&i| (xv[i].to() - m).exp()).sum();
                for &i in &line {
                    let v = xv[i].to() - m;
                    want[i] = if log { v - z.ln() } else { v.exp() / z };
                }
            }
            assert_close(
                &format!("softmax {axis} log={log}"),
                &o.to_host_vec().unwrap(),
                &want,
            );
        }
    }
    for_types!(run, [f32, f16, bf16]);
}

#[test]
fn transpose_permutes_dimensions_in_every_dtype() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        let xv: Vec<T> = values(24, 5, false);
        let x = Tensor::from_host(&s, &xv, &[2, 3, 4]).unwrap();
        let mut o = Tensor::<T>::zeros(&s, &[4, 2, 3]).unwrap();
        ops::transpose(&s, &x, &[2, 0, 1], &mut o).unwrap();
        let mut want = vec![0.0; 24];
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    want[k * 6 + i * 3 + j] = xv[i * 12 + j * 4 + k].to();
                }
            }
        }
        assert_close("transpose", &o.to_host_vec().unwrap(), &want);
    }
    for_types!(run, [f32, f16, bf16, i32, i64]);
}

#[test]
fn fill_sets_every_element_in_every_dtype() {
    fn run<T: Num>() {
        let (_npu, s) = stream();
        let mut o = Tensor::<T>::zeros(&s, &[2, 3]).unwrap();
        ops::fill(&s, T::from(3.0), &mut o).unwrap();
        assert_close("fill", &o.to_host_vec().unwrap(), &[3.0; 6]);
    }
    for_types!(run, [f32, f16, bf16, i32, i64]);
}

#[test]
fn cast_between_float_and_integer_types_matches_the_host() {
    let (_npu, s) = stream();
    let xv = [1.5f32, -2.25, 3.0, 1000.75];
    let x = Tensor::from_host(&s, &xv, &[4]).unwrap();
    let mut h = Tensor::<f16>::zeros(&s, &[4]).unwrap();
    ops::cast(&s, &x, &mut h).unwrap();
    assert_eq!(h.to_host_vec().unwrap(), xv.map(f16::from_f32));
    let mut b = Tensor::<bf16>::zeros(&s, &[4]).unwrap();
    ops::cast(&s, &x, &mut b).unwrap();
    assert_eq!(b.to_host_vec().unwrap(), xv.map(bf16::from_f32));
    let mut back = Tensor::<f32>::zeros(&s, &[4]).unwrap();
    ops::cast(&s, &h, &mut back).unwrap();
    assert_eq!(
        back.to_host_vec().unwrap(),
        xv.map(|v| f16::from_f32(v).to_f32())
    );
    let mut i = Tensor::<i32>::zeros(&s, &[4]).unwrap();
    ops::cast(&s, &x, &mut i).unwrap();
    assert_eq!(i.to_host_vec().unwrap(), [1, -2, 3, 1000]);
}

fn invalid(e: &Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason.clone()),
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

#[test]
fn shape_errors_are_caught_before_c_with_the_function_named() {
    let (_npu, s) = stream();
    let a = Tensor::from_host(&s, &[1.0f32; 6], &[2, 3]).unwrap();
    let b = Tensor::from_host(&s, &[1.0f32; 2], &[2]).unwrap();
    let mut o = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    assert_eq!(
        invalid(&ops::add(&s, &a, &b, &mut o).unwrap_err()),
        (
            "ops::add",
            "shapes [2, 3] and [2] do not broadcast (dimension 1: 3 vs 2)".into()
        )
    );
    let mut wrong = Tensor::<f32>::zeros(&s, &[3, 2]).unwrap();
    assert_eq!(
        invalid(&ops::relu(&s, &a, &mut wrong).unwrap_err()),
        (
            "ops::relu",
            "the output has shape [3, 2], the result has shape [2, 3]".into()
        )
    );
    assert_eq!(
        invalid(&ops::matmul(&s, &a, &a, &mut o).unwrap_err()),
        (
            "ops::matmul",
            "inner dimensions differ: [2, 3] @ [2, 3] (3 vs 2)".into()
        )
    );
    assert_eq!(
        invalid(&ops::matmul(&s, &b, &a, &mut o).unwrap_err()).0,
        "ops::matmul"
    );
    assert_eq!(
        invalid(&ops::reduce_sum(&s, &a, &[2], false, &mut o).unwrap_err()),
        (
            "ops::reduce_sum",
            "axis 2 is out of range for a 2-dimensional tensor".into()
        )
    );
    assert_eq!(
        invalid(&ops::transpose(&s, &a, &[0, 0], &mut o).unwrap_err()),
        (
            "ops::transpose",
            "perm [0, 0] is not a permutation of 0..2".into()
        )
    );
    assert_eq!(
        invalid(&ops::softmax(&s, &a, 5, &mut o).unwrap_err()).0,
        "ops::softmax"
    );
    assert_eq!(
        invalid(&Tensor::from_host(&s, &[1.0f32; 5], &[2, 3]).unwrap_err()),
        (
            "Tensor::from_host",
            "5 values for shape [2, 3] (6 elements)".into()
        )
    );
}

#[test]
fn reducing_a_rank_0_tensor_over_an_axis_is_an_error_not_a_panic() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &[2.5f32], &[]).unwrap();
    let mut o = Tensor::<f32>::zeros(&s, &[]).unwrap();
    for a in [0, -1] {
        assert_eq!(
            invalid(&ops::reduce_sum(&s, &x, &[a], false, &mut o).unwrap_err()),
            (
                "ops::reduce_sum",
                format!("axis {a} is out of range for a 0-dimensional tensor, which has no axes")
            )
        );
    }
    assert_eq!(
        invalid(&ops::reduce_max(&s, &x, &[0], true, &mut o).unwrap_err()).0,
        "ops::reduce_max"
    );
    assert_eq!(
        invalid(&ops::softmax(&s, &x, 0, &mut o).unwrap_err()),
        (
            "ops::softmax",
            "axis 0 is out of range for a 0-dimensional tensor, which has no axes".into()
        )
    );
    // No axes: the scalar as it is.
    ops::reduce_sum(&s, &x, &[], false, &mut o).unwrap();
    assert_eq!(o.to_host_vec().unwrap(), [2.5]);
}

#[test]
fn extreme_axes_are_errors_not_overflows() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &[1.0f32; 6], &[2, 3]).unwrap();
    let mut o = Tensor::<f32>::zeros(&s, &[2, 3]).unwrap();
    for a in [i64::MIN, i64::MAX, -3, 2] {
        assert_eq!(
            invalid(&ops::reduce_sum(&s, &x, &[a], false, &mut o).unwrap_err()),
            (
                "ops::reduce_sum",
                format!("axis {a} is out of range for a 2-dimensional tensor")
            )
        );
        assert_eq!(
            invalid(&ops::softmax(&s, &x, a, &mut o).unwrap_err()).0,
            "ops::softmax"
        );
    }
    // -2 is the first axis.
    let mut r = Tensor::<f32>::zeros(&s, &[3]).unwrap();
    ops::reduce_sum(&s, &x, &[-2], false, &mut r).unwrap();
    assert_eq!(r.to_host_vec().unwrap(), [2.0; 3]);
}

#[test]
fn a_data_type_the_operator_does_not_take_is_aclnn_param_invalid() {
    let (_npu, s) = stream();
    let x = Tensor::from_host(&s, &[1i32, 2], &[2]).unwrap();
    let mut o = Tensor::<i32>::zeros(&s, &[2]).unwrap();
    let e = ops::exp(&s, &x, &mut o).unwrap_err();
    // ACLNN_ERR_PARAM_INVALID, from the planning phase.
    assert_eq!(e.code(), Some(ErrorCode::Unknown(161002)), "{e}");
    assert_eq!(e.function(), Some("aclnnExpGetWorkspaceSize"));
    assert!(e.message().unwrap().contains("dtype int32"), "{e}");
}

#[test]
fn shapes_with_a_dimension_above_i64_max_are_rejected_not_made_unknown() {
    let (_npu, s) = stream();
    // The element count is 0, but `usize::MAX as i64` would be -1: an
    // "unknown" dimension in the operator's description.
    let reason = |shape: &str| {
        format!(
            "shape {shape}: dimension {} is above i64::MAX, the largest AscendCL takes",
            usize::MAX
        )
    };
    let big = format!("[0, {}]", usize::MAX);
    assert_eq!(
        invalid(&Tensor::<f32>::zeros(&s, &[0, usize::MAX]).unwrap_err()),
        ("Tensor::zeros", reason(&big))
    );
    assert_eq!(
        invalid(&Tensor::<f32>::from_host(&s, &[], &[usize::MAX, 0]).unwrap_err()),
        ("Tensor::from_host", reason(&format!("[{}, 0]", usize::MAX)))
    );
    let empty = Tensor::<f32>::zeros(&s, &[0]).unwrap();
    assert_eq!(
        invalid(&empty.reshape(&[0, usize::MAX]).unwrap_err()),
        ("Tensor::from_buffer", reason(&big))
    );
    // i64::MAX itself is a valid dimension of an empty tensor.
    let edge = Tensor::<f32>::zeros(&s, &[0, i64::MAX as usize]).unwrap();
    assert_eq!(edge.shape(), [0, i64::MAX as usize]);
}

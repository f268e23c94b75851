//! The aclnn operators of `acl::aclnn` on cann-sim against host references:
//! each operator × f32/f16/bf16/i32 where the operator takes it, with a
//! broadcasting case; every error path with its exact status; and every
//! aclnn handle released at the end.

#![allow(
    clippy::too_many_arguments,
    clippy::type_complexity,
    reason = "table-driven test cases"
)]

mod common;

use acl::aclnn::{self, CubeMathType, IntArray, Layout, Scalar, TensorArg, TensorArgMut};
use acl::{DataType, Device, Error, Stream};
use half::{bf16, f16};
use std::sync::Mutex;

/// The tests count live aclnn handles: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (common::Serial, Device, Stream) {
    let g = common::Serial::lock(&SERIAL);
    let d = common::device(0);
    let s = d.new_stream().expect("stream");
    (g, d, s)
}

trait Num: acl::Element + std::fmt::Debug + PartialEq {
    fn to(self) -> f64;
    fn from(v: f64) -> Self;
    fn tol() -> f64;
}
impl Num for f32 {
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

fn close<T: Num>(what: &str, got: &[T], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let g = g.to();
        let tol = T::tol() * w.abs().max(1.0);
        assert!((g - w).abs() <= tol, "{what}[{i}]: got {g}, want {w}");
    }
}

/// The aclnn status and function of an error.
fn status(e: Error) -> (i32, &'static str) {
    match e {
        Error::Acl { code, function, .. } => (code.raw(), function),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

fn host<T: Num>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from(x)).collect()
}

type Bin = fn(&Stream, &TensorArg<'_>, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>;

fn binary_case<T: Num>(
    s: &Stream,
    name: &str,
    f: Bin,
    r: fn(f64, f64) -> f64,
    a: &[f64],
    ash: &[usize],
    b: &[f64],
    bsh: &[usize],
    osh: &[usize],
) {
    let (ha, hb): (Vec<T>, Vec<T>) = (host(a), host(b));
    let da = s.clone_from_host(&ha).unwrap();
    let db = s.clone_from_host(&hb).unwrap();
    let n: usize = osh.iter().product();
    let mut dc = s.alloc_zeros::<T>(n).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&da, ash).unwrap(),
            TensorArg::new(&db, bsh).unwrap(),
        );
        let mut tc = TensorArgMut::new(&mut dc, osh).unwrap();
        f(s, &ta, &tb, &mut tc).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    // Reference over the rounded inputs, broadcasting `b` ([k]) along rows.
    let want: Vec<f64> = (0..n)
        .map(|i| r(ha[i % ha.len()].to(), hb[i % hb.len()].to()))
        .map(|v| T::from(v).to())
        .collect();
    close(name, &dc.to_host_vec().unwrap(), &want);
}

fn binaries<T: Num>(s: &Stream, int: bool) {
    let a = [1.0, -2.0, 3.5, 4.0, -5.0, 6.25];
    let b = [2.0, 0.5, -4.0];
    let ops: [(&str, Bin, fn(f64, f64) -> f64); 6] = [
        (
            "add",
            |s, a, b, o| aclnn::add(s, a, b, &one(), o),
            |x, y| x + y,
        ),
        (
            "sub",
            |s, a, b, o| aclnn::sub(s, a, b, &one(), o),
            |x, y| x - y,
        ),
        ("mul", aclnn::mul, |x, y| x * y),
        ("div", aclnn::div, |x, y| x / y),
        ("maximum", aclnn::maximum, f64::max),
        ("minimum", aclnn::minimum, f64::min),
    ];
    for (name, f, r) in ops {
        if int && name == "div" {
            continue;
        }
        // Same shape, then broadcasting [2, 3] with [3].
        let b6 = [2.0, 0.5, -4.0, 1.0, 3.0, -1.0];
        binary_case::<T>(s, name, f, r, &a, &[2, 3], &b6, &[2, 3], &[2, 3]);
        binary_case::<T>(s, name, f, r, &a, &[2, 3], &b, &[3], &[2, 3]);
    }
}

#[test]
fn binary_operators_match_the_host_for_every_dtype_and_broadcast() {
    let (_g, _d, s) = setup();
    binaries::<f32>(&s, false);
    binaries::<f16>(&s, false);
    binaries::<bf16>(&s, false);
    binaries::<i32>(&s, true);
}

type Un = fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>;

fn unaries<T: Num>(s: &Stream, int: bool) {
    let x: [f64; 6] = [0.5, -1.5, 2.0, 0.25, -0.75, 3.0];
    let gelu = |v: f64| 0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh());
    let ops: [(&str, Un, fn(f64) -> f64, bool); 10] = [
        ("neg", aclnn::neg, |v| -v, true),
        ("abs", aclnn::abs, f64::abs, true),
        ("relu", aclnn::relu, |v| v.max(0.0), true),
        ("exp", aclnn::exp, f64::exp, false),
        ("log", aclnn::log, |v| v.abs().ln(), false),
        ("sqrt", aclnn::sqrt, |v| v.abs().sqrt(), false),
        ("rsqrt", aclnn::rsqrt, |v| 1.0 / v.abs().sqrt(), false),
        (
            "sigmoid",
            aclnn::sigmoid,
            |v| 1.0 / (1.0 + (-v).exp()),
            false,
        ),
        ("tanh", aclnn::tanh, f64::tanh, false),
        ("gelu", aclnn::gelu, |_| f64::NAN, false),
    ];
    for (name, f, r, ints) in ops {
        if int && !ints {
            continue;
        }
        // log/sqrt/rsqrt take |x|.
        let xin: Vec<f64> = if ["log", "sqrt", "rsqrt"].contains(&name) {
            x.iter().map(|v: &f64| v.abs()).collect()
        } else {
            x.to_vec()
        };
        let hx: Vec<T> = host(&xin);
        let dx = s.clone_from_host(&hx).unwrap();
        let mut dy = s.alloc_zeros::<T>(6).unwrap();
        {
            let tx = TensorArg::new(&dx, &[2, 3]).unwrap();
            let mut ty = TensorArgMut::new(&mut dy, &[2, 3]).unwrap();
            f(s, &tx, &mut ty).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let want: Vec<f64> = hx
            .iter()
            .map(|v| {
                if name == "gelu" {
                    gelu(v.to())
                } else {
                    r(v.to())
                }
            })
            .collect();
        // Transcendentals: one rounding of the result plus the kernel's own error.
        let got = dy.to_host_vec().unwrap();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let tol = (T::tol() * 2.0 + 1e-4) * w.abs().max(1.0);
            assert!(
                (g.to() - w).abs() <= tol,
                "{name}[{i}]: got {:?}, want {w}",
                g
            );
        }
    }
}

#[test]
fn unary_operators_match_the_host() {
    let (_g, _d, s) = setup();
    unaries::<f32>(&s, false);
    unaries::<f16>(&s, false);
    unaries::<bf16>(&s, false);
    unaries::<i32>(&s, true);
}

fn matmuls<T: Num>(s: &Stream) {
    // [2, 3] @ [3, 2]
    let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [1.0, 0.0, -1.0, 2.0, 2.0, 1.0];
    let want2 = [5.0, 7.0, 11.0, 16.0];
    let (ha, hb): (Vec<T>, Vec<T>) = (host(&a), host(&b));
    let (da, db) = (
        s.clone_from_host(&ha).unwrap(),
        s.clone_from_host(&hb).unwrap(),
    );
    let mut dc = s.alloc_zeros::<T>(4).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&da, &[2, 3]).unwrap(),
            TensorArg::new(&db, &[3, 2]).unwrap(),
        );
        let mut tc = TensorArgMut::new(&mut dc, &[2, 2]).unwrap();
        aclnn::matmul(s, &ta, &tb, &mut tc, CubeMathType::KeepDtype).unwrap();
    }
    close("matmul", &dc.to_host_vec().unwrap(), &want2);
    // Batched: [2, 1, 3] @ [2, 3, 1] through batch_matmul and matmul.
    let mut dd = s.alloc_zeros::<T>(2).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&da, &[2, 1, 3]).unwrap(),
            TensorArg::new(&db, &[2, 3, 1]).unwrap(),
        );
        let mut td = TensorArgMut::new(&mut dd, &[2, 1, 1]).unwrap();
        aclnn::batch_matmul(s, &ta, &tb, &mut td, CubeMathType::AllowFp32DownPrecision).unwrap();
    }
    close("batch_matmul", &dd.to_host_vec().unwrap(), &[-2.0, 24.0]);
}

#[test]
fn matmul_and_batch_matmul_match_the_host() {
    let (_g, _d, s) = setup();
    matmuls::<f32>(&s);
    matmuls::<f16>(&s);
    matmuls::<bf16>(&s);
    matmuls::<i32>(&s);
}

fn reductions<T: Num>(s: &Stream, int: bool) {
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let hx: Vec<T> = host(&x);
    let dx = s.clone_from_host(&hx).unwrap();
    let run = |f: &dyn Fn(&TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
               shape: &[usize]| {
        let n: usize = shape.iter().product();
        let mut dy = s.alloc_zeros::<T>(n).unwrap();
        {
            let tx = TensorArg::new(&dx, &[2, 3]).unwrap();
            let mut ty = TensorArgMut::new(&mut dy, shape).unwrap();
            f(&tx, &mut ty).unwrap();
        }
        dy.to_host_vec().unwrap()
    };
    close(
        "sum dim 1",
        &run(
            &|x, y| aclnn::reduce_sum(s, x, &IntArray::new(&[1]).unwrap(), false, x.data_type(), y),
            &[2],
        ),
        &[6.0, 15.0],
    );
    close(
        "sum dim 0 keep",
        &run(
            &|x, y| aclnn::reduce_sum(s, x, &IntArray::new(&[0]).unwrap(), true, x.data_type(), y),
            &[1, 3],
        ),
        &[5.0, 7.0, 9.0],
    );
    close(
        "sum all",
        &run(
            &|x, y| aclnn::reduce_sum(s, x, &IntArray::new(&[]).unwrap(), false, x.data_type(), y),
            &[],
        ),
        &[21.0],
    );
    close(
        "amax -1",
        &run(
            &|x, y| aclnn::amax(s, x, &IntArray::new(&[-1]).unwrap(), false, y),
            &[2],
        ),
        &[3.0, 6.0],
    );
    if !int {
        close(
            "mean 0",
            &run(
                &|x, y| aclnn::mean(s, x, &IntArray::new(&[0]).unwrap(), false, x.data_type(), y),
                &[3],
            ),
            &[2.5, 3.5, 4.5],
        );
    }
}

#[test]
fn reductions_match_the_host() {
    let (_g, _d, s) = setup();
    reductions::<f32>(&s, false);
    reductions::<f16>(&s, false);
    reductions::<bf16>(&s, false);
    reductions::<i32>(&s, true);
}

fn softmaxes<T: Num>(s: &Stream) {
    let x = [1.0, 2.0, 3.0, 0.0, 0.0, 1.0];
    let hx: Vec<T> = host(&x);
    let dx = s.clone_from_host(&hx).unwrap();
    let mut dy = s.alloc_zeros::<T>(6).unwrap();
    let mut dz = s.alloc_zeros::<T>(6).unwrap();
    {
        let tx = TensorArg::new(&dx, &[2, 3]).unwrap();
        let mut ty = TensorArgMut::new(&mut dy, &[2, 3]).unwrap();
        aclnn::softmax(s, &tx, -1, &mut ty).unwrap();
        let mut tz = TensorArgMut::new(&mut dz, &[2, 3]).unwrap();
        aclnn::log_softmax(s, &tx, 1, &mut tz).unwrap();
    }
    let mut want = Vec::new();
    for row in x.chunks(3) {
        let m: f64 = row.iter().map(|v| v.exp()).sum();
        want.extend(row.iter().map(|v| v.exp() / m));
    }
    close("softmax", &dy.to_host_vec().unwrap(), &want);
    let logw: Vec<f64> = want.iter().map(|v| v.ln()).collect();
    close("log_softmax", &dz.to_host_vec().unwrap(), &logw);
}

#[test]
fn softmax_and_log_softmax_match_the_host() {
    let (_g, _d, s) = setup();
    softmaxes::<f32>(&s);
    softmaxes::<f16>(&s);
    softmaxes::<bf16>(&s);
}

#[test]
fn cast_permute_fill_and_threshold_backward() {
    let (_g, _d, s) = setup();
    let dx = s
        .clone_from_host(&[1.5f32, -2.25, 3.0, 4.75, 5.0, -6.5])
        .unwrap();
    let mut dh = s.alloc_zeros::<f16>(6).unwrap();
    let mut di = s.alloc_zeros::<i32>(6).unwrap();
    let mut dp = s.alloc_zeros::<f32>(6).unwrap();
    {
        let tx = TensorArg::new(&dx, &[2, 3]).unwrap();
        let mut th = TensorArgMut::new(&mut dh, &[2, 3]).unwrap();
        aclnn::cast(&s, &tx, DataType::Float16, &mut th).unwrap();
        let mut ti = TensorArgMut::new(&mut di, &[2, 3]).unwrap();
        aclnn::cast(&s, &tx, DataType::Int32, &mut ti).unwrap();
        let mut tp = TensorArgMut::new(&mut dp, &[3, 2]).unwrap();
        aclnn::permute(&s, &tx, &IntArray::new(&[1, 0]).unwrap(), &mut tp).unwrap();
    }
    close(
        "cast f16",
        &dh.to_host_vec().unwrap(),
        &[1.5, -2.25, 3.0, 4.75, 5.0, -6.5],
    );
    assert_eq!(di.to_host_vec().unwrap(), [1, -2, 3, 4, 5, -6]);
    assert_eq!(
        dp.to_host_vec().unwrap(),
        [1.5, 4.75, -2.25, 5.0, 3.0, -6.5]
    );

    let mut dt = s.alloc_zeros::<bf16>(4).unwrap();
    {
        let mut t = TensorArgMut::new(&mut dt, &[2, 2]).unwrap();
        aclnn::one_(&s, &mut t).unwrap();
    }
    close("one_", &dt.to_host_vec().unwrap(), &[1.0; 4]);
    {
        let mut t = TensorArgMut::new(&mut dt, &[2, 2]).unwrap();
        aclnn::fill_(&s, &mut t, &Scalar::new(2.5f64).unwrap()).unwrap();
    }
    close("fill_", &dt.to_host_vec().unwrap(), &[2.5; 4]);
    {
        let mut t = TensorArgMut::new(&mut dt, &[4]).unwrap();
        aclnn::zero_(&s, &mut t).unwrap();
    }
    close("zero_", &dt.to_host_vec().unwrap(), &[0.0; 4]);

    let g = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    let mut dg = s.alloc_zeros::<f32>(6).unwrap();
    {
        let (tg, tx) = (
            TensorArg::new(&g, &[3]).unwrap(),
            TensorArg::new(&dx, &[2, 3]).unwrap(),
        );
        let mut t = TensorArgMut::new(&mut dg, &[2, 3]).unwrap();
        aclnn::threshold_backward(&s, &tg, &tx, &Scalar::new(0i32).unwrap(), &mut t)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        dg.to_host_vec().unwrap(),
        [10.0, 0.0, 30.0, 10.0, 20.0, 0.0]
    );
}

fn layout(dims: &[i64], strides: &[i64], offset: i64, storage: i64) -> Layout {
    Layout {
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        offset,
        format: 2,
        storage_dims: vec![storage],
    }
}

#[test]
fn add_and_sub_scale_other_by_alpha() {
    let (_g, _d, s) = setup();
    let a = s.clone_from_host(&[1.0f32, 2.0, 3.0]).unwrap();
    let b = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    let (ta, tb) = (
        TensorArg::new(&a, &[3]).unwrap(),
        TensorArg::new(&b, &[3]).unwrap(),
    );
    let mut o = s.alloc_zeros::<f32>(3).unwrap();
    {
        let mut to = TensorArgMut::new(&mut o, &[3]).unwrap();
        aclnn::add(&s, &ta, &tb, &Scalar::new(0.5f32).unwrap(), &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [6.0, 12.0, 18.0]);
    {
        let mut to = TensorArgMut::new(&mut o, &[3]).unwrap();
        aclnn::sub(&s, &ta, &tb, &Scalar::new(2.0f32).unwrap(), &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [-19.0, -38.0, -57.0]);
    // Integers with an integral alpha (given as an int scalar), broadcast.
    let x = s.clone_from_host(&[1i32, 2, 3, 4, 5, 6]).unwrap();
    let y = s.clone_from_host(&[100i32, 200, 300]).unwrap();
    let (tx, ty) = (
        TensorArg::new(&x, &[2, 3]).unwrap(),
        TensorArg::new(&y, &[3]).unwrap(),
    );
    let mut oi = s.alloc_zeros::<i32>(6).unwrap();
    {
        let mut to = TensorArgMut::new(&mut oi, &[2, 3]).unwrap();
        aclnn::sub(&s, &tx, &ty, &Scalar::new(3i32).unwrap(), &mut to).unwrap();
    }
    assert_eq!(
        oi.to_host_vec().unwrap(),
        [-299, -598, -897, -296, -595, -894]
    );
}

#[test]
fn strided_views_read_and_write_like_their_contiguous_copies() {
    let (_g, _d, s) = setup();
    // [[1, 2, 3], [4, 5, 6]] and its transpose as a view: strides [1, 3].
    let a = s
        .clone_from_host(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .unwrap();
    let t = TensorArg::with_layout(&a, &layout(&[3, 2], &[1, 3], 0, 6)).unwrap();
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    {
        let mut to = TensorArgMut::new(&mut o, &[3, 2]).unwrap();
        aclnn::neg(&s, &t, &mut to).unwrap();
    }
    assert_eq!(
        o.to_host_vec().unwrap(),
        [-1.0, -4.0, -2.0, -5.0, -3.0, -6.0]
    );
    // Writing through a transposed view of the output: o = a^T stored as
    // [3, 2] row-major means the [2, 3] input lands transposed.
    let mut w = s.alloc_zeros::<f32>(6).unwrap();
    {
        let ta = TensorArg::new(&a, &[2, 3]).unwrap();
        let mut tw = TensorArgMut::with_layout(&mut w, &layout(&[2, 3], &[1, 2], 0, 6)).unwrap();
        aclnn::relu(&s, &ta, &mut tw).unwrap();
    }
    assert_eq!(w.to_host_vec().unwrap(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // A broadcast view (stride 0) read as two rows, plus every other element
    // of a longer buffer (stride 2, offset 1).
    let row = s.clone_from_host(&[10.0f32, 20.0, 30.0]).unwrap();
    let b = TensorArg::with_layout(&row, &layout(&[2, 3], &[0, 1], 0, 3)).unwrap();
    let long = s
        .clone_from_host(&[
            0.0f32, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0, 4.0, 0.0, 5.0, 0.0, 6.0,
        ])
        .unwrap();
    let odd = TensorArg::with_layout(&long, &layout(&[2, 3], &[6, 2], 1, 12)).unwrap();
    let mut sum = s.alloc_zeros::<f32>(6).unwrap();
    {
        let mut ts = TensorArgMut::new(&mut sum, &[2, 3]).unwrap();
        aclnn::add(&s, &b, &odd, &one(), &mut ts).unwrap();
    }
    assert_eq!(
        sum.to_host_vec().unwrap(),
        [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
    );
    // In place through a strided view: zero every other element.
    let mut z = s.clone_from_host(&[1.0f32; 6]).unwrap();
    {
        let mut tz = TensorArgMut::with_layout(&mut z, &layout(&[3], &[2], 0, 6)).unwrap();
        aclnn::zero_(&s, &mut tz).unwrap();
    }
    assert_eq!(z.to_host_vec().unwrap(), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]);
}

#[test]
fn contiguous_layout_with_sizes_beyond_i64_is_an_error_not_an_overflow() {
    let reason = |shape: &[usize]| match Layout::contiguous(shape).unwrap_err() {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("expected InvalidArgument, got {other}"),
    };
    assert_eq!(
        reason(&[usize::MAX]),
        (
            "Layout::contiguous",
            format!("shape [{}]: a dimension does not fit in i64", usize::MAX)
        )
    );
    assert_eq!(
        reason(&[1, 1 << 32, 1 << 32]),
        (
            "Layout::contiguous",
            "shape [1, 4294967296, 4294967296]: a stride does not fit in i64".to_string()
        )
    );
    assert_eq!(
        reason(&[1 << 32, 1 << 32]),
        (
            "Layout::contiguous",
            "shape [4294967296, 4294967296]: the element count does not fit in i64".to_string()
        )
    );
    // A layout that fits views its buffer as `TensorArg::new` does.
    let (_g, _d, s) = setup();
    let x = s
        .clone_from_host(&[1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0])
        .unwrap();
    let mut y = s.alloc_zeros::<f32>(6).unwrap();
    let l = Layout::contiguous(&[2, 3]).unwrap();
    assert_eq!(
        (&l.strides[..], &l.storage_dims[..]),
        (&[3, 1][..], &[6][..])
    );
    let tx = TensorArg::with_layout(&x, &l).unwrap();
    let mut ty = TensorArgMut::with_layout(&mut y, &l).unwrap();
    aclnn::relu(&s, &tx, &mut ty).unwrap();
    drop((tx, ty));
    assert_eq!(y.to_host_vec().unwrap(), [1.0, 0.0, 3.0, 0.0, 5.0, 0.0]);
}

#[test]
fn errors_carry_the_exact_status() {
    let (_g, _d, s) = setup();
    let a = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let i = s.clone_from_host(&[1i32; 6]).unwrap();
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    let ta = TensorArg::new(&a, &[2, 3]).unwrap();
    let ti = TensorArg::new(&i, &[2, 3]).unwrap();
    let ta3 = TensorArg::new(&a, &[6]).unwrap();
    {
        // Shapes that do not broadcast: 161002 from the planning phase.
        let mut to = TensorArgMut::new(&mut o, &[2, 3]).unwrap();
        let e = aclnn::mul(&s, &ta, &ta3, &mut to).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnMulGetWorkspaceSize"));
        // Sub requires equal dtypes.
        let e = aclnn::sub(&s, &ta, &ti, &one(), &mut to).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnSubGetWorkspaceSize"));
        // A non-integral alpha for an integer out.
        let ti23 = TensorArg::new(&i, &[2, 3]).unwrap();
        let mut oi = s.alloc_zeros::<i32>(6).unwrap();
        let mut toi = TensorArgMut::new(&mut oi, &[2, 3]).unwrap();
        let e = aclnn::add(&s, &ti23, &ti23, &Scalar::new(0.5f32).unwrap(), &mut toi).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnAddGetWorkspaceSize"));
        // Softmax dim out of range; matmul shapes that do not multiply.
        let e = aclnn::softmax(&s, &ta, 2, &mut to).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnSoftmaxGetWorkspaceSize"));
        let e = aclnn::relu(&s, &ti, &mut to).unwrap_err();
        assert_eq!(
            status(e),
            (161002, "aclnnReluGetWorkspaceSize"),
            "out must be int32"
        );
        let e = aclnn::batch_matmul(&s, &ta, &ta, &mut to, CubeMathType::KeepDtype).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnBatchMatMulGetWorkspaceSize"));
    }
    {
        let mut to = TensorArgMut::new(&mut o, &[3, 2]).unwrap();
        // out of the wrong shape.
        let e = aclnn::add(&s, &ta, &ta, &one(), &mut to).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnAddGetWorkspaceSize"));
        let e = aclnn::matmul(&s, &ta, &ta, &mut to, CubeMathType::KeepDtype).unwrap_err();
        assert_eq!(status(e), (161002, "aclnnMatmulGetWorkspaceSize"));
    }
    // An output view whose elements overlap (stride 0): its result would
    // be undefined.
    // (The safe layer refuses such an output before any C call; the
    // simulator's own 161002 for it is tested through the C API.)
    {
        let e = TensorArgMut::with_layout(
            &mut o,
            &Layout {
                dims: vec![2, 3],
                strides: vec![0, 1],
                offset: 0,
                format: 2,
                storage_dims: vec![6],
            },
        )
        .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { function: "aclCreateTensor", reason } if reason.contains("reaches some elements twice")),
            "{e:?}"
        );
    }
    // An offset view of the second row works.
    let row = TensorArg::with_layout(
        &a,
        &Layout {
            dims: vec![3],
            strides: vec![1],
            offset: 3,
            format: 2,
            storage_dims: vec![6],
        },
    )
    .unwrap();
    let mut o3 = s.alloc_zeros::<f32>(3).unwrap();
    {
        let mut to = TensorArgMut::new(&mut o3, &[3]).unwrap();
        aclnn::neg(&s, &row, &mut to).unwrap();
    }
    assert_eq!(o3.to_host_vec().unwrap(), [-1.0; 3]);
    // Views beyond the buffer, and shapes that do not cover it, are refused
    // before any C call.
    let e = TensorArg::with_layout(
        &a,
        &Layout {
            dims: vec![4],
            strides: vec![1],
            offset: 3,
            format: 2,
            storage_dims: vec![6],
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                function: "aclCreateTensor",
                ..
            }
        ),
        "{e:?}"
    );
    let e = TensorArg::new(&a, &[4]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                function: "aclCreateTensor",
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn buffers_of_other_streams_are_ordered_and_handles_are_released() {
    cann_sim::sim_only!("counts the simulator's live aclnn handles");
    let (_g, d, s) = setup();
    // Counted without descriptors an earlier test on this thread left cached.
    aclnn::release_cached_descriptors();
    let before = cann_sim::aclnn::live_handles();
    let other = d.new_stream().unwrap();
    let a = other.clone_from_host(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut c = s.alloc_zeros::<f32>(3).unwrap();
    {
        let ta = TensorArg::new(&a, &[3]).unwrap();
        let members = vec![
            TensorArg::new(&a, &[3]).unwrap(),
            TensorArg::new(&a, &[3]).unwrap(),
        ];
        let list = aclnn::TensorList::new(members).unwrap();
        assert_eq!(list.len(), 2);
        let _ints = aclnn::IntArray::new(&[1, 2]).unwrap();
        let _floats = aclnn::FloatArray::new(&[1.0]).unwrap();
        let _bools = aclnn::BoolArray::new(&[true, false]).unwrap();
        let mut tc = TensorArgMut::new(&mut c, &[3]).unwrap();
        aclnn::add(&s, &ta, &ta, &one(), &mut tc).unwrap();
        assert!(cann_sim::aclnn::live_handles() >= before + 8);
        // Destroys the list and its two members (as CANN does), once.
        drop(list);
    }
    assert_eq!(c.to_host_vec().unwrap(), [2.0, 4.0, 6.0]);
    // The arguments' descriptors wait in the thread's cache for reuse.
    assert!(aclnn::release_cached_descriptors() >= 1);
    assert_eq!(cann_sim::aclnn::live_handles(), before);
}

#[test]
fn contiguous_tensor_whose_strides_overflow_is_an_error_not_a_panic() {
    let (_g, _d, s) = setup();
    let mut empty = s.alloc_zeros::<f32>(0).unwrap();
    let reason = |e: Error| match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("expected InvalidArgument, got {other}"),
    };
    // 0 elements, but the first stride is 2^80.
    let shape = [0, 1 << 40, 1 << 40];
    let want = (
        "aclCreateTensor",
        "shape [0, 1099511627776, 1099511627776]: a stride does not fit in i64".to_string(),
    );
    assert_eq!(reason(TensorArg::new(&empty, &shape).unwrap_err()), want);
    assert_eq!(
        reason(TensorArgMut::new(&mut empty, &shape).unwrap_err()),
        want
    );
    // A dimension above i64::MAX would become negative.
    assert_eq!(
        reason(TensorArg::new(&empty, &[0, usize::MAX]).unwrap_err()),
        (
            "aclCreateTensor",
            format!("shape [0, {}]: a dimension does not fit in i64", usize::MAX)
        )
    );
    // The same rules as Layout::contiguous.
    assert_eq!(
        reason(Layout::contiguous(&shape).unwrap_err()).1,
        want.1,
        "Layout::contiguous agrees"
    );
}

#[test]
fn layout_whose_last_element_index_overflows_is_an_error_not_a_panic() {
    let (_g, _d, s) = setup();
    let a = s.clone_from_host(&[1.0f32]).unwrap();
    let l = Layout {
        dims: vec![i64::MAX; 3],
        strides: vec![i64::MAX; 3],
        offset: 0,
        format: 2,
        storage_dims: vec![1],
    };
    let e = TensorArg::with_layout(&a, &l).unwrap_err();
    assert_eq!(
        (e.to_string()),
        format!(
            "aclCreateTensor: the view {:?} (strides {:?}, offset 0) reaches past every \
             addressable element, beyond its storage [1]",
            l.dims, l.strides
        )
    );
}

// ------------------------------------------- the operators of a transformer

fn embeddings<T: Num>(s: &Stream) {
    let w: Vec<f64> = (0..12).map(|v| f64::from(v) * 0.5 - 2.0).collect();
    let dw = s.clone_from_host(&host::<T>(&w)).unwrap();
    let i64s = s.clone_from_host(&[3i64, 0, -1, 1]).unwrap();
    let i32s = s.clone_from_host(&[2i32, 2, 0]).unwrap();
    let mut o = s.alloc_zeros::<T>(12).unwrap();
    let mut o3 = s.alloc_zeros::<T>(9).unwrap();
    {
        let tw = TensorArg::new(&dw, &[4, 3]).unwrap();
        aclnn::embedding(
            s,
            &tw,
            &TensorArg::new(&i64s, &[2, 2]).unwrap(),
            &mut TensorArgMut::new(&mut o, &[2, 2, 3]).unwrap(),
        )
        .unwrap();
        aclnn::embedding(
            s,
            &tw,
            &TensorArg::new(&i32s, &[3]).unwrap(),
            &mut TensorArgMut::new(&mut o3, &[3, 3]).unwrap(),
        )
        .unwrap();
    }
    let rows = |idx: &[usize]| -> Vec<f64> {
        idx.iter()
            .flat_map(|&r| w[r * 3..r * 3 + 3].iter().map(|&v| T::from(v).to()))
            .collect()
    };
    close(
        "embedding i64",
        &o.to_host_vec().unwrap(),
        &rows(&[3, 0, 3, 1]),
    );
    close(
        "embedding i32",
        &o3.to_host_vec().unwrap(),
        &rows(&[2, 2, 0]),
    );
}

#[test]
fn embedding_gathers_rows_for_every_float_dtype_and_index_type() {
    let (_g, _d, s) = setup();
    embeddings::<f32>(&s);
    embeddings::<f16>(&s);
    embeddings::<bf16>(&s);
    let w = s.clone_from_host(&[1.0f32; 12]).unwrap();
    let idx = s.clone_from_host(&[0i64, 1]).unwrap();
    let fidx = s.clone_from_host(&[0.0f32, 1.0]).unwrap();
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    let ti = TensorArg::new(&idx, &[2]).unwrap();
    let mut to = TensorArgMut::new(&mut o, &[2, 3]).unwrap();
    // weight not 2-D; float indices; out of the wrong shape.
    let e = aclnn::embedding(&s, &TensorArg::new(&w, &[12]).unwrap(), &ti, &mut to).unwrap_err();
    assert_eq!(status(e), (161002, "aclnnEmbeddingGetWorkspaceSize"));
    let tw = TensorArg::new(&w, &[4, 3]).unwrap();
    let tf = TensorArg::new(&fidx, &[2]).unwrap();
    let e = aclnn::embedding(&s, &tw, &tf, &mut to).unwrap_err();
    assert_eq!(status(e), (161002, "aclnnEmbeddingGetWorkspaceSize"));
    drop(to);
    let mut to = TensorArgMut::new(&mut o, &[3, 2]).unwrap();
    let e = aclnn::embedding(&s, &tw, &ti, &mut to).unwrap_err();
    assert_eq!(status(e), (161002, "aclnnEmbeddingGetWorkspaceSize"));
}

fn rms_norms<T: Num>(s: &Stream, gamma_dims: &[usize]) {
    // x [2, 2, 4]; gamma covers the last `gamma_dims`.
    let x: Vec<f64> = (0..16).map(|v| f64::from(v) * 0.25 - 1.5).collect();
    let glen: usize = gamma_dims.iter().product();
    let g: Vec<f64> = (0..glen)
        .map(|v| 0.5 + f64::from(v as u32) * 0.125)
        .collect();
    let (hx, hg): (Vec<T>, Vec<T>) = (host(&x), host(&g));
    let dx = s.clone_from_host(&hx).unwrap();
    let dg = s.clone_from_host(&hg).unwrap();
    let rows = 16 / glen;
    let mut dy = s.alloc_zeros::<T>(16).unwrap();
    let mut dr = s.alloc_zeros::<f32>(rows).unwrap();
    let mut rstd_dims = vec![2, 2, 4];
    let lead = 3 - gamma_dims.len();
    rstd_dims[lead..].iter_mut().for_each(|d| *d = 1);
    aclnn::rms_norm(
        s,
        &TensorArg::new(&dx, &[2, 2, 4]).unwrap(),
        &TensorArg::new(&dg, gamma_dims).unwrap(),
        1e-6,
        &mut TensorArgMut::new(&mut dy, &[2, 2, 4]).unwrap(),
        &mut TensorArgMut::new(&mut dr, &rstd_dims).unwrap(),
    )
    .unwrap();
    let (mut want_y, mut want_r) = (Vec::new(), Vec::new());
    for row in hx.chunks(glen) {
        let ms = row.iter().map(|v| v.to() * v.to()).sum::<f64>() / glen as f64;
        let r = 1.0 / (ms + 1e-6).sqrt();
        want_r.push(r);
        want_y.extend(row.iter().zip(&hg).map(|(v, w)| v.to() * r * w.to()));
    }
    close("rms_norm y", &dy.to_host_vec().unwrap(), &want_y);
    close("rms_norm rstd", &dr.to_host_vec().unwrap(), &want_r);
}

#[test]
fn rms_norm_matches_the_host_over_one_or_more_trailing_dimensions() {
    let (_g, _d, s) = setup();
    for dims in [&[4usize][..], &[2, 4]] {
        rms_norms::<f32>(&s, dims);
        rms_norms::<f16>(&s, dims);
        rms_norms::<bf16>(&s, dims);
    }
    let x = s.clone_from_host(&[1.0f32; 8]).unwrap();
    let g = s.clone_from_host(&[1.0f32; 4]).unwrap();
    let gh = s.clone_from_host(&[f16::ONE; 4]).unwrap();
    let mut y = s.alloc_zeros::<f32>(8).unwrap();
    let mut r = s.alloc_zeros::<f32>(2).unwrap();
    let mut rh = s.alloc_zeros::<f16>(2).unwrap();
    let tx = TensorArg::new(&x, &[2, 4]).unwrap();
    let mut ty = TensorArgMut::new(&mut y, &[2, 4]).unwrap();
    let mut refused = |gamma: &TensorArg<'_>, rstd: &mut TensorArgMut<'_>, code: i32| {
        let e = aclnn::rms_norm(&s, &tx, gamma, 1e-6, &mut ty, rstd).unwrap_err();
        assert_eq!(status(e), (code, "aclnnRmsNormGetWorkspaceSize"));
    };
    let tg = TensorArg::new(&g, &[4]).unwrap();
    // gamma not x's trailing shape: the release's tiling refuses it, 561002.
    let mut tr = TensorArgMut::new(&mut r, &[2, 1]).unwrap();
    refused(&TensorArg::new(&g, &[2, 2]).unwrap(), &mut tr, 561002);
    drop(tr);
    // rstd must be float32 with a value per row.
    refused(
        &tg,
        &mut TensorArgMut::new(&mut rh, &[2, 1]).unwrap(),
        161002,
    );
    let mut r1 = s.alloc_zeros::<f32>(1).unwrap();
    refused(&tg, &mut TensorArgMut::new(&mut r1, &[1]).unwrap(), 161002);
    // As the release: gamma of another float type (f16 with f32 x), and an
    // rstd of x's leading shape without the trailing 1.
    let tgh = TensorArg::new(&gh, &[4]).unwrap();
    let mut tr = TensorArgMut::new(&mut r, &[2]).unwrap();
    aclnn::rms_norm(&s, &tx, &tgh, 1e-6, &mut ty, &mut tr).unwrap();
    drop((tr, ty));
    assert_eq!(
        y.to_host_vec().unwrap(),
        [1.0f32; 8].map(|v| v / (1.0f32 + 1e-6).sqrt())
    );
    let rs = r.to_host_vec().unwrap();
    assert!(rs.iter().all(|v| (v - 1.0).abs() < 1e-5), "{rs:?}");
}

fn ropes<T: Num>(s: &Stream, mode: aclnn::RotaryMode) {
    // x [1, 2, 2, 4] (B, S, N, D); cos/sin [1, 2, 1, 4] broadcast over heads.
    let x: Vec<f64> = (0..16).map(|v| f64::from(v) * 0.25 - 2.0).collect();
    let c: Vec<f64> = (0..8).map(|v| (f64::from(v) * 0.3).cos()).collect();
    let sn: Vec<f64> = (0..8).map(|v| (f64::from(v) * 0.3).sin()).collect();
    let (hx, hc, hs): (Vec<T>, Vec<T>, Vec<T>) = (host(&x), host(&c), host(&sn));
    let (dx, dc, ds) = (
        s.clone_from_host(&hx).unwrap(),
        s.clone_from_host(&hc).unwrap(),
        s.clone_from_host(&hs).unwrap(),
    );
    let mut dy = s.alloc_zeros::<T>(16).unwrap();
    aclnn::rotary_position_embedding(
        s,
        &TensorArg::new(&dx, &[1, 2, 2, 4]).unwrap(),
        &TensorArg::new(&dc, &[1, 2, 1, 4]).unwrap(),
        &TensorArg::new(&ds, &[1, 2, 1, 4]).unwrap(),
        mode,
        &mut TensorArgMut::new(&mut dy, &[1, 2, 2, 4]).unwrap(),
    )
    .unwrap();
    let mut want = Vec::new();
    for (r, row) in hx.chunks(4).enumerate() {
        let v: Vec<f64> = row.iter().map(|a| a.to()).collect();
        let rot = match mode {
            aclnn::RotaryMode::Half => [-v[2], -v[3], v[0], v[1]],
            _ => [-v[1], v[0], -v[3], v[2]],
        };
        let pos = r / 2;
        for i in 0..4 {
            want.push(v[i] * hc[pos * 4 + i].to() + rot[i] * hs[pos * 4 + i].to());
        }
    }
    close(
        "rotary_position_embedding",
        &dy.to_host_vec().unwrap(),
        &want,
    );
}

#[test]
fn rotary_position_embedding_matches_the_host_in_half_and_interleave_modes() {
    let (_g, _d, s) = setup();
    for mode in [aclnn::RotaryMode::Half, aclnn::RotaryMode::Interleave] {
        ropes::<f32>(&s, mode);
        ropes::<f16>(&s, mode);
        ropes::<bf16>(&s, mode);
    }
    let x = s.clone_from_host(&[1.0f32; 16]).unwrap();
    let mut y = s.alloc_zeros::<f32>(16).unwrap();
    let t4 = TensorArg::new(&x, &[1, 2, 2, 4]).unwrap();
    let mut ty = TensorArgMut::new(&mut y, &[1, 2, 2, 4]).unwrap();
    let rope = |x: &TensorArg<'_>, cs: &TensorArg<'_>, mode, ty: &mut TensorArgMut<'_>| {
        status(aclnn::rotary_position_embedding(&s, x, cs, cs, mode, ty).unwrap_err())
    };
    let f = "aclnnRotaryPositionEmbeddingGetWorkspaceSize";
    // cann-sim has no kernel for the quarter and interleave-half modes.
    assert_eq!(
        rope(&t4, &t4, aclnn::RotaryMode::Quarter, &mut ty),
        (561003, f)
    );
    assert_eq!(
        rope(&t4, &t4, aclnn::RotaryMode::InterleaveHalf, &mut ty),
        (561003, f)
    );
    // x not 4-D; cos that does not broadcast to x.
    let t3 = TensorArg::new(&x, &[2, 2, 4]).unwrap();
    assert_eq!(
        rope(&t3, &t3, aclnn::RotaryMode::Half, &mut ty),
        (161002, f)
    );
    // A cos of another size is the release's tiling error, 561002.
    let wide = TensorArg::new(&x, &[1, 4, 1, 4]).unwrap();
    assert_eq!(
        rope(&t4, &wide, aclnn::RotaryMode::Half, &mut ty),
        (561002, f)
    );
}

fn swi_glus<T: Num>(s: &Stream) {
    let x: Vec<f64> = (0..12).map(|v| f64::from(v) * 0.5 - 3.0).collect();
    let hx: Vec<T> = host(&x);
    let dx = s.clone_from_host(&hx).unwrap();
    let (mut last, mut first) = (
        s.alloc_zeros::<T>(6).unwrap(),
        s.alloc_zeros::<T>(6).unwrap(),
    );
    aclnn::swi_glu(
        s,
        &TensorArg::new(&dx, &[3, 4]).unwrap(),
        -1,
        &mut TensorArgMut::new(&mut last, &[3, 2]).unwrap(),
    )
    .unwrap();
    aclnn::swi_glu(
        s,
        &TensorArg::new(&dx, &[2, 6]).unwrap(),
        0,
        &mut TensorArgMut::new(&mut first, &[1, 6]).unwrap(),
    )
    .unwrap();
    let silu = |a: f64| a / (1.0 + (-a).exp());
    let v: Vec<f64> = hx.iter().map(|a| a.to()).collect();
    let want_last: Vec<f64> = (0..3)
        .flat_map(|r| (0..2).map(move |i| (r, i)))
        .map(|(r, i)| silu(v[r * 4 + i]) * v[r * 4 + 2 + i])
        .collect();
    let want_first: Vec<f64> = (0..6).map(|i| silu(v[i]) * v[6 + i]).collect();
    close("swi_glu dim -1", &last.to_host_vec().unwrap(), &want_last);
    close("swi_glu dim 0", &first.to_host_vec().unwrap(), &want_first);
}

#[test]
fn swi_glu_matches_the_host_along_any_dimension() {
    let (_g, _d, s) = setup();
    swi_glus::<f32>(&s);
    swi_glus::<f16>(&s);
    swi_glus::<bf16>(&s);
    let x = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let mut y = s.alloc_zeros::<f32>(3).unwrap();
    let mut ty = TensorArgMut::new(&mut y, &[3, 1]).unwrap();
    let f = "aclnnSwiGluGetWorkspaceSize";
    // An odd size along dim; dim out of range; out of the wrong shape.
    let t = TensorArg::new(&x, &[2, 3]).unwrap();
    assert_eq!(
        status(aclnn::swi_glu(&s, &t, -1, &mut ty).unwrap_err()),
        (161002, f)
    );
    let t = TensorArg::new(&x, &[3, 2]).unwrap();
    assert_eq!(
        status(aclnn::swi_glu(&s, &t, 2, &mut ty).unwrap_err()),
        (161002, f)
    );
    assert_eq!(
        status(aclnn::swi_glu(&s, &t, 0, &mut ty).unwrap_err()),
        (161002, f)
    );
    aclnn::swi_glu(&s, &t, 1, &mut ty).unwrap();
}

fn arg_maxes<T: Num>(s: &Stream) {
    // Ties pick the first index.
    let x = [1.0, 5.0, 5.0, -2.0, 0.5, 3.0];
    let dx = s.clone_from_host(&host::<T>(&x)).unwrap();
    let mut rows = s.alloc_zeros::<i64>(2).unwrap();
    let mut kept = s.alloc_zeros::<i64>(2).unwrap();
    let mut cols = s.alloc_zeros::<i32>(3).unwrap();
    let tx = TensorArg::new(&dx, &[2, 3]).unwrap();
    aclnn::arg_max(
        s,
        &tx,
        1,
        false,
        &mut TensorArgMut::new(&mut rows, &[2]).unwrap(),
    )
    .unwrap();
    aclnn::arg_max(
        s,
        &tx,
        -1,
        true,
        &mut TensorArgMut::new(&mut kept, &[2, 1]).unwrap(),
    )
    .unwrap();
    aclnn::arg_max(
        s,
        &tx,
        0,
        false,
        &mut TensorArgMut::new(&mut cols, &[3]).unwrap(),
    )
    .unwrap();
    assert_eq!(rows.to_host_vec().unwrap(), [1, 2]);
    assert_eq!(kept.to_host_vec().unwrap(), [1, 2]);
    assert_eq!(cols.to_host_vec().unwrap(), [0, 0, 0]);
}

#[test]
fn arg_max_returns_the_first_largest_index_with_or_without_keepdim() {
    let (_g, _d, s) = setup();
    arg_maxes::<f32>(&s);
    arg_maxes::<f16>(&s);
    arg_maxes::<bf16>(&s);
    arg_maxes::<i32>(&s);
    let x = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let tx = TensorArg::new(&x, &[2, 3]).unwrap();
    let mut of = s.alloc_zeros::<f32>(2).unwrap();
    let mut oi = s.alloc_zeros::<i64>(3).unwrap();
    let f = "aclnnArgMaxGetWorkspaceSize";
    // out must be int32/int64; dim in range; keepdim's shape.
    let e = aclnn::arg_max(
        &s,
        &tx,
        1,
        false,
        &mut TensorArgMut::new(&mut of, &[2]).unwrap(),
    );
    assert_eq!(status(e.unwrap_err()), (161002, f));
    let mut to = TensorArgMut::new(&mut oi, &[3]).unwrap();
    assert_eq!(
        status(aclnn::arg_max(&s, &tx, 2, false, &mut to).unwrap_err()),
        (161002, f)
    );
    assert_eq!(
        status(aclnn::arg_max(&s, &tx, 1, false, &mut to).unwrap_err()),
        (161002, f)
    );
    assert_eq!(
        status(aclnn::arg_max(&s, &tx, 0, true, &mut to).unwrap_err()),
        (161002, f)
    );
}

#[test]
fn inplace_copy_converts_broadcasts_and_writes_strided_views() {
    let (_g, _d, s) = setup();
    // f32 -> f16 and bf16, same shape.
    let src = s.clone_from_host(&[1.5f32, -2.25, 3.0, 1e-3]).unwrap();
    let ts = TensorArg::new(&src, &[2, 2]).unwrap();
    let mut h = s.alloc_zeros::<f16>(4).unwrap();
    let mut b = s.alloc_zeros::<bf16>(4).unwrap();
    aclnn::copy_(&s, &mut TensorArgMut::new(&mut h, &[2, 2]).unwrap(), &ts).unwrap();
    aclnn::copy_(&s, &mut TensorArgMut::new(&mut b, &[2, 2]).unwrap(), &ts).unwrap();
    close::<f16>(
        "copy f16",
        &h.to_host_vec().unwrap(),
        &[1.5, -2.25, 3.0, 1e-3],
    );
    close::<bf16>(
        "copy bf16",
        &b.to_host_vec().unwrap(),
        &[1.5, -2.25, 3.0, 1e-3],
    );
    // A row broadcast to [3, 2], and a [1, 2] source.
    let row = s.clone_from_host(&[7i32, 8]).unwrap();
    let mut m = s.alloc_zeros::<i32>(6).unwrap();
    aclnn::copy_(
        &s,
        &mut TensorArgMut::new(&mut m, &[3, 2]).unwrap(),
        &TensorArg::new(&row, &[2]).unwrap(),
    )
    .unwrap();
    assert_eq!(m.to_host_vec().unwrap(), [7, 8, 7, 8, 7, 8]);
    // Into a strided slice, as a KV cache is written: cache [2 heads, 3
    // positions, 2] ← new [1 position, 2 heads, 2] at position 1.
    let new = s.clone_from_host(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let mut cache = s.alloc_zeros::<f32>(12).unwrap();
    aclnn::copy_(
        &s,
        &mut TensorArgMut::with_layout(&mut cache, &layout(&[1, 2, 2], &[2, 6, 1], 2, 12)).unwrap(),
        &TensorArg::new(&new, &[1, 2, 2]).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cache.to_host_vec().unwrap(),
        [0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0]
    );
    // A source that does not broadcast.
    let e = aclnn::copy_(
        &s,
        &mut TensorArgMut::new(&mut m, &[3, 2]).unwrap(),
        &TensorArg::new(&row, &[2, 1]).unwrap(),
    )
    .unwrap_err();
    assert_eq!(status(e), (161002, "aclnnInplaceCopyGetWorkspaceSize"));
}

fn muls_and_masked_fills<T: Num>(s: &Stream) {
    let x = [1.0, -2.0, 3.0, 4.0, 0.5, -6.0];
    let dx = s.clone_from_host(&host::<T>(&x)).unwrap();
    let mut dy = s.alloc_zeros::<T>(6).unwrap();
    aclnn::muls(
        s,
        &TensorArg::new(&dx, &[2, 3]).unwrap(),
        &Scalar::new(0.5f32).unwrap(),
        &mut TensorArgMut::new(&mut dy, &[2, 3]).unwrap(),
    )
    .unwrap();
    let half: Vec<f64> = x.iter().map(|v| v * 0.5).collect();
    close("muls", &dy.to_host_vec().unwrap(), &half);
    // A causal mask [3] broadcast over the two rows of a [2, 3] view.
    let mask = s
        .clone_from_host(&[
            acl::memory::Bool::FALSE,
            acl::memory::Bool::TRUE,
            acl::memory::Bool::TRUE,
        ])
        .unwrap();
    aclnn::masked_fill_(
        s,
        &mut TensorArgMut::new(&mut dy, &[2, 3]).unwrap(),
        &TensorArg::new(&mask, &[3]).unwrap(),
        &Scalar::new(-7.0f64).unwrap(),
    )
    .unwrap();
    close(
        "masked_fill_",
        &dy.to_host_vec().unwrap(),
        &[half[0], -7.0, -7.0, half[3], -7.0, -7.0],
    );
}

#[test]
fn muls_scales_by_a_host_scalar_and_masked_fill_writes_where_the_mask_is_true() {
    let (_g, _d, s) = setup();
    muls_and_masked_fills::<f32>(&s);
    muls_and_masked_fills::<f16>(&s);
    muls_and_masked_fills::<bf16>(&s);
    let x = s.clone_from_host(&[1.0f32; 6]).unwrap();
    let m = s.clone_from_host(&[1.0f32; 2]).unwrap();
    let mut y = s.alloc_zeros::<f32>(6).unwrap();
    let v = Scalar::new(0.0f32).unwrap();
    let mut ty = TensorArgMut::new(&mut y, &[3, 2]).unwrap();
    // out of another shape; a mask that is not bool; one that does not broadcast.
    let e = aclnn::muls(&s, &TensorArg::new(&x, &[2, 3]).unwrap(), &v, &mut ty).unwrap_err();
    assert_eq!(status(e), (161002, "aclnnMulsGetWorkspaceSize"));
    let f = "aclnnInplaceMaskedFillScalarGetWorkspaceSize";
    let e = aclnn::masked_fill_(&s, &mut ty, &TensorArg::new(&m, &[2]).unwrap(), &v).unwrap_err();
    assert_eq!(status(e), (161002, f));
    let b = s.clone_from_host(&[acl::memory::Bool::TRUE; 3]).unwrap();
    let e = aclnn::masked_fill_(&s, &mut ty, &TensorArg::new(&b, &[3]).unwrap(), &v).unwrap_err();
    assert_eq!(status(e), (161002, f));
}

/// `alpha` = 1 for add and sub.
fn one() -> Scalar {
    Scalar::new(1.0f32).unwrap()
}

#[test]
fn tensor_arg_new_refuses_a_shape_that_does_not_hold_the_buffer_exactly() {
    // The contiguous fast path (a shape whose product is the buffer's
    // length) must leave every other shape to the checked path and its
    // errors; an exact fit of 24 elements in 3 dimensions is accepted.
    let (_g, _d, s) = setup();
    let mut buf = s.alloc_zeros::<f32>(24).unwrap();
    let err = |shape: &[usize]| TensorArg::new(&buf, shape).unwrap_err().to_string();
    assert_eq!(
        err(&[5, 5]),
        "aclCreateTensor: shape [5, 5] does not hold the buffer's 24 elements"
    );
    assert_eq!(
        err(&[0, 24]),
        "aclCreateTensor: shape [0, 24] does not hold the buffer's 24 elements"
    );
    assert_eq!(
        err(&[usize::MAX, 2]),
        "aclCreateTensor: shape [18446744073709551615, 2]: a dimension does not fit in i64"
    );
    assert_eq!(
        err(&[2, 1 << 32, 1 << 32]),
        "aclCreateTensor: shape [2, 4294967296, 4294967296]: a stride does not fit in i64"
    );
    assert_eq!(
        err(&[1 << 31, 1 << 31, 1 << 31]),
        "aclCreateTensor: shape [2147483648, 2147483648, 2147483648]: the element count does not fit in i64"
    );
    assert_eq!(err(&[1; 9]), "aclCreateTensor: 9 dimensions; at most 8");
    assert!(TensorArg::new(&buf, &[2, 3, 4]).is_ok());
    assert!(TensorArgMut::new(&mut buf, &[24]).is_ok());
    let empty = s.alloc_zeros::<f32>(0).unwrap();
    assert!(TensorArg::new(&empty, &[0, 3]).is_ok());
}

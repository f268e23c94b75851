//! The operators the operator table added (LLM-inference set and the
//! element-wise core of the training set) through their generated
//! `acl::aclnn` wrappers on cann-sim: values against host references
//! (NumPy/PyTorch semantics), broadcasting and strided views, optional
//! arguments, and misuse with its exact status.

mod common;

use acl::aclnn::{self, CubeMathType, IntArray, Scalar, TensorArg, TensorArgMut, TensorList};
use acl::{DataType, DeviceBuffer, Error, Stream, Tensor};
use half::f16;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn status(e: Error) -> (i32, &'static str, String) {
    match e {
        Error::Acl {
            code,
            function,
            message,
            ..
        } => (code.raw(), function, message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

fn buf(s: &Stream, v: &[f32]) -> DeviceBuffer<f32> {
    s.clone_from_host(v).expect("upload")
}

fn close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (f64::from(*g) - w).abs() <= tol * (1.0 + w.abs()) || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}[{i}]: got {g}, want {w}");
    }
}

/// Runs a one-input float operator over `x` (shape `[6]`) and compares with `r`.
fn unary_case(
    s: &Stream,
    what: &str,
    x: &[f32],
    op: impl Fn(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
    r: impl Fn(f64) -> f64,
) {
    let a = buf(s, x);
    let mut o = s.alloc_zeros::<f32>(x.len()).unwrap();
    {
        let ta = TensorArg::new(&a, &[x.len()]).unwrap();
        let mut to = TensorArgMut::new(&mut o, &[x.len()]).unwrap();
        op(s, &ta, &mut to).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    let want: Vec<f64> = x.iter().map(|&v| r(f64::from(v))).collect();
    close(&o.to_host_vec().unwrap(), &want, 1e-5, what);
}

#[test]
fn elementwise_functions_match_their_host_definitions() {
    let s = stream();
    let x = [-2.5f32, -1.0, -0.25, 0.0, 0.5, 3.0];
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    unary_case(&s, "sin", &x, aclnn::sin, f64::sin);
    unary_case(&s, "cos", &x, aclnn::cos, f64::cos);
    unary_case(&s, "silu", &x, aclnn::silu, move |v| v * sig(v));
    unary_case(&s, "sign", &x, aclnn::sign, |v| {
        v.signum() * f64::from(u8::from(v != 0.0))
    });
    unary_case(&s, "hardsigmoid", &x, aclnn::hardsigmoid, |v| {
        (v / 6.0 + 0.5).clamp(0.0, 1.0)
    });
    unary_case(&s, "hardswish", &x, aclnn::hardswish, |v| {
        v * (v / 6.0 + 0.5).clamp(0.0, 1.0)
    });
    unary_case(&s, "floor", &x, aclnn::floor, f64::floor);
    unary_case(
        &s,
        "round (half to even)",
        &x,
        aclnn::round,
        f64::round_ties_even,
    );
    unary_case(&s, "atan", &x, aclnn::atan, f64::atan);
    unary_case(&s, "log_sigmoid", &x, aclnn::log_sigmoid, move |v| {
        sig(v).ln()
    });
    // GELU exact (erf) and tanh forms; erf(1) = 0.8427007929497149.
    let gelu = |v: f64, t: bool| {
        if t {
            0.5 * v
                * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v.powi(3))).tanh())
        } else {
            0.5 * v * (1.0 + libm_erf(v / std::f64::consts::SQRT_2))
        }
    };
    unary_case(
        &s,
        "gelu_v2 erf",
        &x,
        |s, a, o| aclnn::gelu_v2(s, a, 0, o),
        move |v| gelu(v, false),
    );
    unary_case(
        &s,
        "gelu_v2 tanh",
        &x,
        |s, a, o| aclnn::gelu_v2(s, a, 1, o),
        move |v| gelu(v, true),
    );
    let alpha = Scalar::new(0.1f32).unwrap();
    unary_case(
        &s,
        "leaky_relu",
        &x,
        |s, a, o| aclnn::leaky_relu(s, a, &alpha, o),
        |v| if v > 0.0 { v } else { 0.1 * v },
    );
    let (lo, hi) = (Scalar::new(-1.0f32).unwrap(), Scalar::new(0.5f32).unwrap());
    unary_case(
        &s,
        "clamp",
        &x,
        |s, a, o| aclnn::clamp(s, a, &lo, &hi, o),
        |v| v.clamp(-1.0, 0.5),
    );
    unary_case(
        &s,
        "clamp_min",
        &x,
        |s, a, o| aclnn::clamp_min(s, a, &lo, o),
        |v| v.max(-1.0),
    );
    let two = Scalar::new(2.0f32).unwrap();
    unary_case(
        &s,
        "adds",
        &x,
        |s, a, o| aclnn::adds(s, a, &hi, &two, o),
        |v| v + 1.0,
    );
    unary_case(
        &s,
        "pow_tensor_scalar",
        &x,
        |s, a, o| aclnn::pow_tensor_scalar(s, a, &two, o),
        |v| v * v,
    );
}

/// `erf` through the C library, as the reference.
fn libm_erf(x: f64) -> f64 {
    unsafe extern "C" {
        safe fn erf(x: f64) -> f64;
    }
    erf(x)
}

#[test]
fn gelu_v2_refuses_an_approximation_it_does_not_know() {
    let s = stream();
    let a = buf(&s, &[1.0]);
    let mut o = s.alloc_zeros::<f32>(1).unwrap();
    let ta = TensorArg::new(&a, &[1]).unwrap();
    let mut to = TensorArgMut::new(&mut o, &[1]).unwrap();
    let (code, f, msg) = status(aclnn::gelu_v2(&s, &ta, 2, &mut to).unwrap_err());
    assert_eq!((code, f), (161002, "aclnnGeluV2GetWorkspaceSize"));
    assert!(
        msg.contains("approximate 2 is not 0 (none) or 1 (tanh)"),
        "{msg}"
    );
}

#[test]
fn comparisons_broadcast_and_write_bool() {
    let s = stream();
    let a = buf(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = buf(&s, &[2.0, 5.0, 6.0]);
    let mut o = s.alloc_zeros::<acl::memory::Bool>(6).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&a, &[2, 3]).unwrap(),
            TensorArg::new(&b, &[3]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut o, &[2, 3]).unwrap();
        aclnn::eq_tensor(&s, &ta, &tb, &mut to).unwrap();
    }
    let got: Vec<bool> = o.to_host_vec().unwrap().iter().map(|b| b.get()).collect();
    assert_eq!(got, [false, false, false, false, true, true]);
    {
        let ta = TensorArg::new(&a, &[6]).unwrap();
        let mut to = TensorArgMut::new(&mut o, &[6]).unwrap();
        aclnn::gt_scalar(&s, &ta, &Scalar::new(3i32).unwrap(), &mut to).unwrap();
    }
    let got: Vec<bool> = o.to_host_vec().unwrap().iter().map(|b| b.get()).collect();
    assert_eq!(got, [false, false, false, true, true, true]);
}

#[test]
fn an_int_tensor_times_a_float_scalar_promotes_to_float() {
    // The release promotes (aclnnMuls on int32 by 1.5: 3 × 1.5 = 4.5); so
    // do Adds and Divs here.
    let s = stream();
    let a = s.clone_from_host(&[3i32, -2]).unwrap();
    let mut o = s.alloc_zeros::<f32>(2).unwrap();
    {
        let ta = TensorArg::new(&a, &[2]).unwrap();
        let mut to = TensorArgMut::new(&mut o, &[2]).unwrap();
        aclnn::divs(&s, &ta, &Scalar::new(2.0f32).unwrap(), &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [1.5, -1.0]);
    // An int output cannot hold the float result.
    let mut oi = s.alloc_zeros::<i32>(2).unwrap();
    let ta = TensorArg::new(&a, &[2]).unwrap();
    let mut to = TensorArgMut::new(&mut oi, &[2]).unwrap();
    let (code, _, msg) =
        status(aclnn::divs(&s, &ta, &Scalar::new(2.0f32).unwrap(), &mut to).unwrap_err());
    assert_eq!(code, 161002);
    assert!(
        msg.contains("the result is float32 but out is int32"),
        "{msg}"
    );
}

#[test]
fn layer_norm_normalises_the_trailing_dimensions_with_weight_bias_and_statistics() {
    let s = stream();
    let x = [1.0f32, 2.0, 3.0, 4.0, -1.0, 0.0, 1.0, 6.0];
    let w = [1.0f32, 2.0, 0.5, 1.0];
    let b = [0.0f32, 1.0, 0.0, -1.0];
    let (dx, dw, db) = (buf(&s, &x), buf(&s, &w), buf(&s, &b));
    let mut out = s.alloc_zeros::<f32>(8).unwrap();
    let mut mean = s.alloc_zeros::<f32>(2).unwrap();
    let mut rstd = s.alloc_zeros::<f32>(2).unwrap();
    {
        let tx = TensorArg::new(&dx, &[2, 4]).unwrap();
        let (tw, tb) = (
            TensorArg::new(&dw, &[4]).unwrap(),
            TensorArg::new(&db, &[4]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut out, &[2, 4]).unwrap();
        let mut tm = TensorArgMut::new(&mut mean, &[2, 1]).unwrap();
        let mut tr = TensorArgMut::new(&mut rstd, &[2, 1]).unwrap();
        let shape = IntArray::new(&[4]).unwrap();
        aclnn::layer_norm(
            &s,
            &tx,
            &shape,
            Some(&tw),
            Some(&tb),
            1e-5,
            &mut to,
            Some(&mut tm),
            Some(&mut tr),
        )
        .unwrap();
    }
    let mut want = Vec::new();
    let (mut wm, mut wr) = (Vec::new(), Vec::new());
    for row in x.chunks(4) {
        let m = row.iter().map(|&v| f64::from(v)).sum::<f64>() / 4.0;
        let var = row.iter().map(|&v| (f64::from(v) - m).powi(2)).sum::<f64>() / 4.0;
        let r = 1.0 / (var + 1e-5).sqrt();
        for j in 0..4 {
            want.push((f64::from(row[j]) - m) * r * f64::from(w[j]) + f64::from(b[j]));
        }
        wm.push(m);
        wr.push(r);
    }
    close(&out.to_host_vec().unwrap(), &want, 1e-5, "layer_norm");
    close(&mean.to_host_vec().unwrap(), &wm, 1e-6, "mean");
    close(&rstd.to_host_vec().unwrap(), &wr, 1e-5, "rstd");
    // Without the optional arguments: plain normalisation.
    {
        let tx = TensorArg::new(&dx, &[2, 4]).unwrap();
        let mut to = TensorArgMut::new(&mut out, &[2, 4]).unwrap();
        aclnn::layer_norm(
            &s,
            &tx,
            &IntArray::new(&[4]).unwrap(),
            None,
            None,
            1e-5,
            &mut to,
            None,
            None,
        )
        .unwrap();
    }
    let plain: Vec<f64> = want
        .iter()
        .enumerate()
        .map(|(i, v)| (v - f64::from(b[i % 4])) / f64::from(w[i % 4]))
        .collect();
    close(
        &out.to_host_vec().unwrap(),
        &plain,
        1e-4,
        "layer_norm plain",
    );
    // A normalized shape that is not the trailing dims is 161002.
    let tx = TensorArg::new(&dx, &[2, 4]).unwrap();
    let mut to = TensorArgMut::new(&mut out, &[2, 4]).unwrap();
    let (code, f, msg) = status(
        aclnn::layer_norm(
            &s,
            &tx,
            &IntArray::new(&[2]).unwrap(),
            None,
            None,
            1e-5,
            &mut to,
            None,
            None,
        )
        .unwrap_err(),
    );
    assert_eq!((code, f), (161002, "aclnnLayerNormGetWorkspaceSize"));
    assert!(
        msg.contains("normalizedShape [2] must be the trailing dimensions of input [2,4]"),
        "{msg}"
    );
}

#[test]
fn cat_slice_triangles_and_padding_move_elements_as_torch_does() {
    let s = stream();
    let a = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let b = buf(&s, &[5.0, 6.0]);
    // cat([2,2], [1,2]) along 0.
    let mut c = s.alloc_zeros::<f32>(6).unwrap();
    {
        let list = TensorList::new(vec![
            TensorArg::new(&a, &[2, 2]).unwrap(),
            TensorArg::new(&b, &[1, 2]).unwrap(),
        ])
        .unwrap();
        let mut tc = TensorArgMut::new(&mut c, &[3, 2]).unwrap();
        aclnn::cat(&s, &list, 0, &mut tc).unwrap();
    }
    assert_eq!(c.to_host_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    // slice rows 1.. step 1 of [3,2], columns kept.
    let mut sl = s.alloc_zeros::<f32>(4).unwrap();
    {
        let tc = TensorArg::new(&c, &[3, 2]).unwrap();
        let mut ts = TensorArgMut::new(&mut sl, &[2, 2]).unwrap();
        aclnn::slice(&s, &tc, 0, 1, 3, 1, &mut ts).unwrap();
    }
    assert_eq!(sl.to_host_vec().unwrap(), [3.0, 4.0, 5.0, 6.0]);
    // tril / triu of a 3x3.
    let m = buf(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let mut t = s.alloc_zeros::<f32>(9).unwrap();
    {
        let tm = TensorArg::new(&m, &[3, 3]).unwrap();
        let mut tt = TensorArgMut::new(&mut t, &[3, 3]).unwrap();
        aclnn::tril(&s, &tm, 0, &mut tt).unwrap();
    }
    assert_eq!(
        t.to_host_vec().unwrap(),
        [1.0, 0.0, 0.0, 4.0, 5.0, 0.0, 7.0, 8.0, 9.0]
    );
    {
        let mut tt = TensorArgMut::new(&mut t, &[3, 3]).unwrap();
        aclnn::triu_(&s, &mut tt, 1).unwrap();
    }
    assert_eq!(
        t.to_host_vec().unwrap(),
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // constant pad of [2,2] by (1, 0) on the last dim, value 9.
    let mut p = s.alloc_zeros::<f32>(6).unwrap();
    {
        let ta = TensorArg::new(&a, &[2, 2]).unwrap();
        let mut tp = TensorArgMut::new(&mut p, &[2, 3]).unwrap();
        aclnn::constant_pad_nd(
            &s,
            &ta,
            &IntArray::new(&[1, 0]).unwrap(),
            &Scalar::new(9.0f32).unwrap(),
            &mut tp,
        )
        .unwrap();
    }
    assert_eq!(p.to_host_vec().unwrap(), [9.0, 1.0, 2.0, 9.0, 3.0, 4.0]);
    // reflection pad 1-D by (2, 1) of [1,2,3,4] → [3,2,1,2,3,4,3].
    let mut r = s.alloc_zeros::<f32>(7).unwrap();
    {
        let ta = TensorArg::new(&a, &[1, 4]).unwrap();
        let mut tr = TensorArgMut::new(&mut r, &[1, 7]).unwrap();
        aclnn::reflection_pad1d(&s, &ta, &IntArray::new(&[2, 1]).unwrap(), &mut tr).unwrap();
    }
    assert_eq!(
        r.to_host_vec().unwrap(),
        [3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0]
    );
    // repeat [2] by [2, 2] → [[1,2,1,2],[1,2,1,2]]; roll by 1; flip.
    let mut rp = s.alloc_zeros::<f32>(8).unwrap();
    {
        let tb = TensorArg::new(&a, &[2, 2]).unwrap();
        let mut to = TensorArgMut::new(&mut rp, &[2, 4]).unwrap();
        aclnn::repeat(&s, &tb, &IntArray::new(&[1, 2]).unwrap(), &mut to).unwrap();
    }
    assert_eq!(
        rp.to_host_vec().unwrap(),
        [1.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 4.0]
    );
    let mut ro = s.alloc_zeros::<f32>(4).unwrap();
    {
        let ta = TensorArg::new(&a, &[4]).unwrap();
        let mut to = TensorArgMut::new(&mut ro, &[4]).unwrap();
        aclnn::roll(
            &s,
            &ta,
            &IntArray::new(&[1]).unwrap(),
            &IntArray::new(&[0]).unwrap(),
            &mut to,
        )
        .unwrap();
    }
    assert_eq!(ro.to_host_vec().unwrap(), [4.0, 1.0, 2.0, 3.0]);
    // A cat whose parts do not fit: 161002 naming the tensor.
    let list = TensorList::new(vec![
        TensorArg::new(&a, &[2, 2]).unwrap(),
        TensorArg::new(&b, &[2]).unwrap(),
    ])
    .unwrap();
    let mut tc = TensorArgMut::new(&mut c, &[3, 2]).unwrap();
    let (code, _, msg) = status(aclnn::cat(&s, &list, 0, &mut tc).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("tensor 1 has shape [2]"), "{msg}");
}

#[test]
fn index_select_gather_and_in_place_index_writes() {
    let s = stream();
    let x = buf(&s, &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0]);
    let idx = s.clone_from_host(&[2i64, 0]).unwrap();
    let mut o = s.alloc_zeros::<f32>(6).unwrap();
    {
        let (tx, ti) = (
            TensorArg::new(&x, &[3, 3]).unwrap(),
            TensorArg::new(&idx, &[2]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut o, &[2, 3]).unwrap();
        aclnn::index_select(&s, &tx, 0, &ti, &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [20.0, 21.0, 22.0, 0.0, 1.0, 2.0]);
    {
        let (tx, ti) = (
            TensorArg::new(&x, &[3, 3]).unwrap(),
            TensorArg::new(&idx, &[2]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut o, &[3, 2]).unwrap();
        aclnn::gather_v2(&s, &tx, 1, &ti, &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [2.0, 0.0, 12.0, 10.0, 22.0, 20.0]);
    // index_fill_ on columns 0 and 2 with -1.
    let mut y = buf(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    {
        let mut ty = TensorArgMut::new(&mut y, &[2, 3]).unwrap();
        aclnn::index_fill_tensor_(
            &s,
            &mut ty,
            1,
            &IntArray::new(&[0, 2]).unwrap(),
            &Scalar::new(-1.0f32).unwrap(),
        )
        .unwrap();
    }
    assert_eq!(y.to_host_vec().unwrap(), [-1.0, 2.0, -1.0, -1.0, 5.0, -1.0]);
    // An index out of range fails the kernel: reported at synchronisation.
    let bad = s.clone_from_host(&[7i64]).unwrap();
    let mut o1 = s.alloc_zeros::<f32>(3).unwrap();
    {
        let (tx, ti) = (
            TensorArg::new(&x, &[3, 3]).unwrap(),
            TensorArg::new(&bad, &[1]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut o1, &[1, 3]).unwrap();
        aclnn::index_select(&s, &tx, 0, &ti, &mut to).unwrap();
    }
    assert!(s.synchronize().is_err());
}

#[test]
fn arange_cumsum_sort_and_topk() {
    let s = stream();
    let mut a = s.alloc_zeros::<f32>(4).unwrap();
    {
        let mut ta = TensorArgMut::new(&mut a, &[4]).unwrap();
        let (st, en, sp) = (
            Scalar::new(1.0f32).unwrap(),
            Scalar::new(2.9f32).unwrap(),
            Scalar::new(0.5f32).unwrap(),
        );
        aclnn::arange(&s, &st, &en, &sp, &mut ta).unwrap();
    }
    assert_eq!(a.to_host_vec().unwrap(), [1.0, 1.5, 2.0, 2.5]);
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    {
        let ta = TensorArg::new(&a, &[4]).unwrap();
        let mut tc = TensorArgMut::new(&mut c, &[4]).unwrap();
        aclnn::cumsum(&s, &ta, 0, DataType::Float, &mut tc).unwrap();
    }
    assert_eq!(c.to_host_vec().unwrap(), [1.0, 2.5, 4.5, 7.0]);
    let x = buf(&s, &[3.0, 1.0, 2.0, 2.0]);
    let mut v = s.alloc_zeros::<f32>(2).unwrap();
    let mut i = s.alloc_zeros::<i64>(2).unwrap();
    {
        let tx = TensorArg::new(&x, &[4]).unwrap();
        let (mut tv, mut ti) = (
            TensorArgMut::new(&mut v, &[2]).unwrap(),
            TensorArgMut::new(&mut i, &[2]).unwrap(),
        );
        aclnn::topk(&s, &tx, 2, 0, true, true, &mut tv, &mut ti).unwrap();
    }
    assert_eq!(
        (v.to_host_vec().unwrap(), i.to_host_vec().unwrap()),
        (vec![3.0, 2.0], vec![0, 2])
    );
    let mut order = s.alloc_zeros::<i64>(4).unwrap();
    {
        let tx = TensorArg::new(&x, &[4]).unwrap();
        let mut to = TensorArgMut::new(&mut order, &[4]).unwrap();
        aclnn::argsort(&s, &tx, 0, false, &mut to).unwrap();
    }
    assert_eq!(order.to_host_vec().unwrap(), [1, 2, 3, 0]);
    // arange into an out of the wrong length.
    let mut ta = TensorArgMut::new(&mut c, &[4]).unwrap();
    let (st, en, sp) = (
        Scalar::new(0i64).unwrap(),
        Scalar::new(3i64).unwrap(),
        Scalar::new(1i64).unwrap(),
    );
    let (code, _, msg) = status(aclnn::arange(&s, &st, &en, &sp, &mut ta).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("must be 1-D of size 3"), "{msg}");
}

#[test]
fn mm_and_mv_multiply_and_check_their_shapes() {
    let s = stream();
    let a = buf(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = buf(&s, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&a, &[2, 3]).unwrap(),
            TensorArg::new(&b, &[3, 2]).unwrap(),
        );
        let mut tc = TensorArgMut::new(&mut c, &[2, 2]).unwrap();
        aclnn::mm(&s, &ta, &tb, &mut tc, CubeMathType::KeepDtype).unwrap();
    }
    assert_eq!(c.to_host_vec().unwrap(), [4.0, 5.0, 10.0, 11.0]);
    let v = buf(&s, &[1.0, 1.0, 1.0]);
    let mut y = s.alloc_zeros::<f32>(2).unwrap();
    {
        let (ta, tv) = (
            TensorArg::new(&a, &[2, 3]).unwrap(),
            TensorArg::new(&v, &[3]).unwrap(),
        );
        let mut ty = TensorArgMut::new(&mut y, &[2]).unwrap();
        aclnn::mv(&s, &ta, &tv, &mut ty, CubeMathType::KeepDtype).unwrap();
    }
    assert_eq!(y.to_host_vec().unwrap(), [6.0, 15.0]);
    let (ta, tb) = (
        TensorArg::new(&a, &[2, 3]).unwrap(),
        TensorArg::new(&b, &[2, 3]).unwrap(),
    );
    let mut tc = TensorArgMut::new(&mut c, &[2, 2]).unwrap();
    let (code, _, msg) =
        status(aclnn::mm(&s, &ta, &tb, &mut tc, CubeMathType::KeepDtype).unwrap_err());
    assert_eq!(code, 161002);
    assert!(
        msg.contains("self [2,3] and mat2 [2,3] do not multiply"),
        "{msg}"
    );
}

#[test]
fn new_operators_take_strided_views_and_f16() {
    let s = stream();
    // sin over a transposed view.
    let x = Tensor::from_host(&s, &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]).unwrap();
    let mut y = Tensor::<f32>::zeros(&s, &[3, 2]).unwrap();
    {
        let tx = TensorArg::from_view(&x.view().transpose(0, 1).unwrap()).unwrap();
        let mut ty = TensorArgMut::from_view(y.view_mut()).unwrap();
        aclnn::sin(&s, &tx, &mut ty).unwrap();
    }
    let want: Vec<f64> = [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
        .iter()
        .map(|v: &f64| v.sin())
        .collect();
    close(
        &y.to_host_vec().unwrap(),
        &want,
        1e-6,
        "sin over a transposed view",
    );
    // silu in f16, rounded once.
    let h = s
        .clone_from_host(&[f16::from_f32(1.0), f16::from_f32(-2.0)])
        .unwrap();
    let mut ho = s.alloc_zeros::<f16>(2).unwrap();
    {
        let th = TensorArg::new(&h, &[2]).unwrap();
        let mut to = TensorArgMut::new(&mut ho, &[2]).unwrap();
        aclnn::silu(&s, &th, &mut to).unwrap();
    }
    let got: Vec<f32> = ho
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    close(
        &got,
        &[0.7310585786300049, -0.2384058440442351],
        1e-3,
        "silu f16",
    );
}

#[test]
fn an_option_cann_sim_has_no_kernel_for_says_so_with_561003() {
    // Every operator of the table has a kernel; options beyond them (here
    // FusedInferAttentionScoreV2's TND layout) are the library's "no
    // kernel" status, naming the option.
    let s = stream();
    let h = s.clone_from_host(&[f16::from_f32(0.5); 16]).unwrap();
    let mut o = s.alloc_zeros::<f16>(16).unwrap();
    let tq = TensorArg::new(&h, &[4, 1, 4]).unwrap();
    let kl = TensorList::new(vec![TensorArg::new(&h, &[4, 1, 4]).unwrap()]).unwrap();
    let vl = TensorList::new(vec![TensorArg::new(&h, &[4, 1, 4]).unwrap()]).unwrap();
    let mut to = TensorArgMut::new(&mut o, &[4, 1, 4]).unwrap();
    let e = aclnn::fused_infer_attention_score_v2(
        &s, &tq, &kl, &vl, None, None, None, None, None, None, None, None, None, None, None, None,
        None, None, None, None, None, None, None, None, None, 1, 0.5, 2147483647, 0, c"TND", 1, 0,
        0, 0, 0, false, 0, 0, &mut to, None,
    )
    .unwrap_err();
    let (code, f, msg) = status(e);
    assert_eq!(
        (code, f),
        (561003, "aclnnFusedInferAttentionScoreV2GetWorkspaceSize")
    );
    assert!(
        msg.contains("inputLayout \"TND\" is not supported by cann-sim"),
        "{msg}"
    );
}

#[test]
fn first_set_operators_behave_as_the_release_does() {
    let s = stream();
    // ThresholdBackward with a threshold other than 0.
    let g = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let x = buf(&s, &[0.1, 0.6, 0.5, 2.0]);
    let mut o = s.alloc_zeros::<f32>(4).unwrap();
    {
        let (tg, tx) = (
            TensorArg::new(&g, &[4]).unwrap(),
            TensorArg::new(&x, &[4]).unwrap(),
        );
        let mut to = TensorArgMut::new(&mut o, &[4]).unwrap();
        aclnn::threshold_backward(&s, &tg, &tx, &Scalar::new(0.5f32).unwrap(), &mut to).unwrap();
    }
    assert_eq!(o.to_host_vec().unwrap(), [0.0, 2.0, 0.0, 4.0]);
    // Muls of an int32 tensor by 1.5 promotes to float: 3 × 1.5 = 4.5.
    let i = s.clone_from_host(&[3i32, -4]).unwrap();
    let mut f = s.alloc_zeros::<f32>(2).unwrap();
    {
        let ti = TensorArg::new(&i, &[2]).unwrap();
        let mut tf = TensorArgMut::new(&mut f, &[2]).unwrap();
        aclnn::muls(&s, &ti, &Scalar::new(1.5f32).unwrap(), &mut tf).unwrap();
    }
    assert_eq!(f.to_host_vec().unwrap(), [4.5, -6.0]);
    // Log on double, computed in double.
    let d = s.clone_from_host(&[std::f64::consts::E, 10.0]).unwrap();
    let mut dl = s.alloc_zeros::<f64>(2).unwrap();
    {
        let td = TensorArg::new(&d, &[2]).unwrap();
        let mut tl = TensorArgMut::new(&mut dl, &[2]).unwrap();
        aclnn::log(&s, &td, &mut tl).unwrap();
    }
    assert_eq!(dl.to_host_vec().unwrap(), [1.0, 10f64.ln()]);
    // Matmul of f32 by f16 (ggml passes such pairs).
    let a = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let b = s
        .clone_from_host(&[f16::ONE, f16::ZERO, f16::from_f32(0.5), f16::ONE])
        .unwrap();
    let mut c = s.alloc_zeros::<f32>(4).unwrap();
    {
        let (ta, tb) = (
            TensorArg::new(&a, &[2, 2]).unwrap(),
            TensorArg::new(&b, &[2, 2]).unwrap(),
        );
        let mut tc = TensorArgMut::new(&mut c, &[2, 2]).unwrap();
        aclnn::matmul(&s, &ta, &tb, &mut tc, CubeMathType::KeepDtype).unwrap();
    }
    assert_eq!(c.to_host_vec().unwrap(), [2.0, 2.0, 5.0, 4.0]);
    // InplaceZero on an NCL tensor (a plain format, read as ND).
    let mut z = buf(&s, &[1.0; 6]);
    {
        let mut l = aclnn::Layout::contiguous(&[1, 2, 3]).unwrap();
        l.format = 47; // ACL_FORMAT_NCL
        let mut tz = TensorArgMut::with_layout(&mut z, &l).unwrap();
        aclnn::zero_(&s, &mut tz).unwrap();
    }
    assert_eq!(z.to_host_vec().unwrap(), [0.0; 6]);
    // ArgMax over int8 and double.
    let q = s.clone_from_host(&[3i8, -1, 7, 2]).unwrap();
    let mut am = s.alloc_zeros::<i64>(1).unwrap();
    {
        let tq = TensorArg::new(&q, &[4]).unwrap();
        let mut ta = TensorArgMut::new(&mut am, &[]).unwrap();
        aclnn::arg_max(&s, &tq, 0, false, &mut ta).unwrap();
    }
    assert_eq!(am.to_host_vec().unwrap(), [2]);
    {
        let td = TensorArg::new(&d, &[2]).unwrap();
        let mut ta = TensorArgMut::new(&mut am, &[]).unwrap();
        aclnn::arg_max(&s, &td, 0, false, &mut ta).unwrap();
    }
    assert_eq!(am.to_host_vec().unwrap(), [1]);
}

/// 2-D convolution on the host, by its definition (direct, or transposed
/// as the scatter of each input element), for `[1, C, H, W]` inputs.
#[allow(clippy::too_many_arguments)]
fn conv2d_host(
    x: &[f64],
    (c, h, w): (usize, usize, usize),
    wt: &[f64],
    (o, k): (usize, usize),
    s: i64,
    p: i64,
    d: i64,
    g: usize,
    transposed: bool,
) -> (Vec<f64>, usize, usize) {
    let (hi, wi, ki) = (h as i64, w as i64, k as i64);
    let (oh, ow) = if transposed {
        (
            (hi - 1) * s - 2 * p + d * (ki - 1) + 1,
            (wi - 1) * s - 2 * p + d * (ki - 1) + 1,
        )
    } else {
        (
            (hi + 2 * p - d * (ki - 1) - 1) / s + 1,
            (wi + 2 * p - d * (ki - 1) - 1) / s + 1,
        )
    };
    let (oh, ow) = (oh as usize, ow as usize);
    let mut y = vec![0.0; o * oh * ow];
    let (cig, cog) = (c / g, o / g);
    for oc in 0..o {
        let grp = oc / cog;
        for ic in grp * cig..(grp + 1) * cig {
            for u in 0..k {
                for v in 0..k {
                    let wv = if transposed {
                        wt[((ic * cog + oc % cog) * k + u) * k + v]
                    } else {
                        wt[((oc * cig + ic % cig) * k + u) * k + v]
                    };
                    if transposed {
                        for a in 0..h {
                            for b in 0..w {
                                let (yy, xx) = (
                                    a as i64 * s - p + u as i64 * d,
                                    b as i64 * s - p + v as i64 * d,
                                );
                                if (0..oh as i64).contains(&yy) && (0..ow as i64).contains(&xx) {
                                    y[(oc * oh + yy as usize) * ow + xx as usize] +=
                                        x[(ic * h + a) * w + b] * wv;
                                }
                            }
                        }
                    } else {
                        for a in 0..oh {
                            for b in 0..ow {
                                let (yy, xx) = (
                                    a as i64 * s - p + u as i64 * d,
                                    b as i64 * s - p + v as i64 * d,
                                );
                                if (0..hi).contains(&yy) && (0..wi).contains(&xx) {
                                    y[(oc * oh + a) * ow + b] +=
                                        x[(ic * h + yy as usize) * w + xx as usize] * wv;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    (y, oh, ow)
}

#[test]
fn convolution_matches_the_definition_with_stride_padding_dilation_groups_and_transposed() {
    let s = stream();
    let (c, h, w, o, k) = (4usize, 5usize, 6usize, 8usize, 3usize);
    let x: Vec<f64> = (0..c * h * w)
        .map(|i| ((i * 37 % 17) as f64 - 8.0) / 8.0)
        .collect();
    let dx = buf(&s, &x.iter().map(|&v| v as f32).collect::<Vec<_>>());
    for (stride, pad, dil, groups, transposed) in [
        (1, 0, 1, 1, false),
        (2, 1, 1, 2, false),
        (1, 2, 2, 4, false),
        (2, 1, 1, 2, true),
    ] {
        let wlen = if transposed {
            c * (o / groups) * k * k
        } else {
            o * (c / groups) * k * k
        };
        let wt: Vec<f64> = (0..wlen)
            .map(|i| ((i * 13 % 7) as f64 - 3.0) / 4.0)
            .collect();
        let (want, oh, ow) = conv2d_host(
            &x,
            (c, h, w),
            &wt,
            (o, k),
            stride,
            pad,
            dil,
            groups,
            transposed,
        );
        let bias: Vec<f32> = (0..o).map(|i| i as f32 * 0.5).collect();
        let want: Vec<f64> = want
            .iter()
            .enumerate()
            .map(|(i, v)| v + f64::from(bias[i / (oh * ow)]))
            .collect();
        let dw = buf(&s, &wt.iter().map(|&v| v as f32).collect::<Vec<_>>());
        let db = buf(&s, &bias);
        let mut y = s.alloc_zeros::<f32>(o * oh * ow).unwrap();
        {
            let tx = TensorArg::new(&dx, &[1, c, h, w]).unwrap();
            let wshape = if transposed {
                [c, o / groups, k, k]
            } else {
                [o, c / groups, k, k]
            };
            let tw = TensorArg::new(&dw, &wshape).unwrap();
            let tb = TensorArg::new(&db, &[o]).unwrap();
            let mut ty = TensorArgMut::new(&mut y, &[1, o, oh, ow]).unwrap();
            let arr = |v: i64| IntArray::new(&[v, v]).unwrap();
            aclnn::convolution(
                &s,
                &tx,
                &tw,
                Some(&tb),
                &arr(stride),
                &arr(pad),
                &arr(dil),
                transposed,
                &arr(0),
                groups as i64,
                &mut ty,
                CubeMathType::KeepDtype,
            )
            .unwrap();
        }
        let what = format!("conv s{stride} p{pad} d{dil} g{groups} t{transposed}");
        close(&y.to_host_vec().unwrap(), &want, 1e-5, &what);
    }
    // Groups that do not divide the channels: 161002.
    let dw = buf(&s, &[0.0; 6 * 4 * 9]);
    let mut y = s.alloc_zeros::<f32>(6 * 3 * 4).unwrap();
    let tx = TensorArg::new(&dx, &[1, c, h, w]).unwrap();
    let tw = TensorArg::new(&dw, &[6, 4, 3, 3]).unwrap();
    let mut ty = TensorArgMut::new(&mut y, &[1, 6, 3, 4]).unwrap();
    let one = IntArray::new(&[1]).unwrap();
    let zero = IntArray::new(&[0]).unwrap();
    let e = aclnn::convolution(
        &s,
        &tx,
        &tw,
        None,
        &one,
        &zero,
        &one,
        false,
        &zero,
        3,
        &mut ty,
        CubeMathType::KeepDtype,
    )
    .unwrap_err();
    let (code, _, msg) = status(e);
    assert_eq!(code, 161002);
    assert!(
        msg.contains("groups 3 does not divide the input channels 4"),
        "{msg}"
    );
}

#[test]
fn pooling_im2col_and_upsampling_follow_torch() {
    let s = stream();
    // A 1x1x4x4 plane 0..16.
    let x: Vec<f32> = (0..16).map(|v| v as f32).collect();
    let dx = buf(&s, &x);
    let mut y = s.alloc_zeros::<f32>(4).unwrap();
    let arr = |v: &[i64]| IntArray::new(v).unwrap();
    {
        let tx = TensorArg::new(&dx, &[1, 1, 4, 4]).unwrap();
        let mut ty = TensorArgMut::new(&mut y, &[1, 1, 2, 2]).unwrap();
        aclnn::max_pool(
            &s,
            &tx,
            &arr(&[2, 2]),
            &arr(&[2, 2]),
            0,
            &arr(&[0, 0, 0, 0]),
            &arr(&[1, 1]),
            0,
            &mut ty,
        )
        .unwrap();
    }
    assert_eq!(y.to_host_vec().unwrap(), [5.0, 7.0, 13.0, 15.0]);
    {
        let tx = TensorArg::new(&dx, &[1, 1, 4, 4]).unwrap();
        let mut ty = TensorArgMut::new(&mut y, &[1, 1, 2, 2]).unwrap();
        aclnn::avg_pool2d(
            &s,
            &tx,
            &arr(&[2, 2]),
            &arr(&[2, 2]),
            &arr(&[0]),
            false,
            true,
            0,
            CubeMathType::KeepDtype,
            &mut ty,
        )
        .unwrap();
    }
    assert_eq!(y.to_host_vec().unwrap(), [2.5, 4.5, 10.5, 12.5]);
    // With padding 1 and count_include_pad false: the corner window [0] alone → 0.
    let mut y9 = s.alloc_zeros::<f32>(9).unwrap();
    {
        let tx = TensorArg::new(&dx, &[1, 1, 4, 4]).unwrap();
        let mut ty = TensorArgMut::new(&mut y9, &[1, 1, 3, 3]).unwrap();
        aclnn::avg_pool2d(
            &s,
            &tx,
            &arr(&[2, 2]),
            &arr(&[2, 2]),
            &arr(&[1]),
            false,
            false,
            0,
            CubeMathType::KeepDtype,
            &mut ty,
        )
        .unwrap();
    }
    assert_eq!(
        y9.to_host_vec().unwrap(),
        [0.0, 1.5, 3.0, 6.0, 7.5, 9.0, 12.0, 13.5, 15.0]
    );
    // Max pooling with indices.
    let mut iv = s.alloc_zeros::<i64>(4).unwrap();
    {
        let tx = TensorArg::new(&dx, &[1, 1, 4, 4]).unwrap();
        let (mut ty, mut ti) = (
            TensorArgMut::new(&mut y, &[1, 1, 2, 2]).unwrap(),
            TensorArgMut::new(&mut iv, &[1, 1, 2, 2]).unwrap(),
        );
        aclnn::max_pool2d_with_indices(
            &s,
            &tx,
            &arr(&[2, 2]),
            &arr(&[2, 2]),
            &arr(&[0]),
            &arr(&[1]),
            false,
            &mut ty,
            &mut ti,
        )
        .unwrap();
    }
    assert_eq!(iv.to_host_vec().unwrap(), [5, 7, 13, 15]);
    // im2col with a 2x2 kernel, stride 2: 4 columns of 4.
    let mut col = s.alloc_zeros::<f32>(16).unwrap();
    {
        let tx = TensorArg::new(&dx, &[1, 1, 4, 4]).unwrap();
        let mut tc = TensorArgMut::new(&mut col, &[1, 4, 4]).unwrap();
        aclnn::im2col(
            &s,
            &tx,
            &arr(&[2, 2]),
            &arr(&[1, 1]),
            &arr(&[0, 0]),
            &arr(&[2, 2]),
            &mut tc,
        )
        .unwrap();
    }
    assert_eq!(
        col.to_host_vec().unwrap(),
        [
            0.0, 2.0, 8.0, 10.0, 1.0, 3.0, 9.0, 11.0, 4.0, 6.0, 12.0, 14.0, 5.0, 7.0, 13.0, 15.0
        ]
    );
    // Nearest upsampling of a 2x2 to 4x4.
    let small = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let mut up = s.alloc_zeros::<f32>(16).unwrap();
    {
        let tx = TensorArg::new(&small, &[1, 1, 2, 2]).unwrap();
        let mut tu = TensorArgMut::new(&mut up, &[1, 1, 4, 4]).unwrap();
        aclnn::upsample_nearest2d(&s, &tx, &arr(&[4, 4]), &mut tu).unwrap();
    }
    assert_eq!(
        up.to_host_vec().unwrap(),
        [
            1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 3.0, 3.0, 4.0, 4.0
        ]
    );
}

/// Dense attention on the host: `[B, N, S, D]` queries, `[B, Nkv, T, D]`
/// keys and values, `mask[s][t]` true hides a key.
fn attention_host(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    (b, n, nkv, s, t, d): (usize, usize, usize, usize, usize, usize),
    mask: &[bool],
    scale: f64,
) -> Vec<f64> {
    let mut out = vec![0.0; b * n * s * d];
    for bi in 0..b {
        for ni in 0..n {
            let kn = ni / (n / nkv);
            for si in 0..s {
                let sc: Vec<f64> = (0..t)
                    .map(|ti| {
                        if mask[si * t + ti] {
                            f64::NEG_INFINITY
                        } else {
                            scale
                                * (0..d)
                                    .map(|x| {
                                        q[((bi * n + ni) * s + si) * d + x]
                                            * k[((bi * nkv + kn) * t + ti) * d + x]
                                    })
                                    .sum::<f64>()
                        }
                    })
                    .collect();
                let m = sc.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = sc.iter().map(|x| (x - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for x in 0..d {
                    out[((bi * n + ni) * s + si) * d + x] = (0..t)
                        .map(|ti| e[ti] * v[((bi * nkv + kn) * t + ti) * d + x])
                        .sum::<f64>()
                        / z;
                }
            }
        }
    }
    out
}

#[test]
fn fused_attention_with_grouped_heads_and_a_causal_mask_matches_the_host() {
    let s = stream();
    let (b, n, nkv, sq, t, d) = (1usize, 4usize, 2usize, 3usize, 3usize, 4usize);
    let data = |len: usize, m: usize| -> Vec<f64> {
        (0..len)
            .map(|i| ((i * m % 23) as f64 - 11.0) / 10.0)
            .collect()
    };
    let (q, k, v) = (
        data(b * n * sq * d, 7),
        data(b * nkv * t * d, 5),
        data(b * nkv * t * d, 3),
    );
    let mask: Vec<bool> = (0..sq * t).map(|i| i % t > i / t).collect();
    let scale = 1.0 / (d as f64).sqrt();
    let want = attention_host(&q, &k, &v, (b, n, nkv, sq, t, d), &mask, scale);
    // The fused operator takes FLOAT16/BFLOAT16/INT8 queries (its page).
    let f = |x: &[f64]| x.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>();
    let up = |x: &[f64]| s.clone_from_host(&f(x)).unwrap();
    let (dq, dk, dv) = (up(&q), up(&k), up(&v));
    let dm = s
        .clone_from_host(&mask.iter().map(|&m| u8::from(m)).collect::<Vec<_>>())
        .unwrap();
    let mut o = s.alloc_zeros::<f16>(b * n * sq * d).unwrap();
    {
        let tq = TensorArg::new(&dq, &[b, n, sq, d]).unwrap();
        let kl = TensorList::new(vec![TensorArg::new(&dk, &[b, nkv, t, d]).unwrap()]).unwrap();
        let vl = TensorList::new(vec![TensorArg::new(&dv, &[b, nkv, t, d]).unwrap()]).unwrap();
        let tm = TensorArg::new(&dm, &[sq, t]).unwrap();
        let mut to = TensorArgMut::new(&mut o, &[b, n, sq, d]).unwrap();
        aclnn::fused_infer_attention_score_v2(
            &s,
            &tq,
            &kl,
            &vl,
            None,
            Some(&tm),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            n as i64,
            scale,
            2147483647,
            0,
            c"BNSD",
            nkv as i64,
            0,
            0,
            0,
            0,
            false,
            0,
            0,
            &mut to,
            None,
        )
        .unwrap();
    }
    let got: Vec<f32> = o
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|h| h.to_f32())
        .collect();
    close(&got, &want, 1e-2, "attention");
    // An unsupported option says so (561003); numHeads not a multiple of the KV heads is 161002.
    let tq = TensorArg::new(&dq, &[b, n, sq, d]).unwrap();
    let kl = TensorList::new(vec![TensorArg::new(&dk, &[b, nkv, t, d]).unwrap()]).unwrap();
    let vl = TensorList::new(vec![TensorArg::new(&dv, &[b, nkv, t, d]).unwrap()]).unwrap();
    let mut to = TensorArgMut::new(&mut o, &[b, n, sq, d]).unwrap();
    let e = aclnn::fused_infer_attention_score_v2(
        &s, &tq, &kl, &vl, None, None, None, None, None, None, None, None, None, None, None, None,
        None, None, None, None, None, None, None, None, None, n as i64, scale, 2147483647, 0,
        c"BNSD", 3, 0, 0, 0, 0, false, 0, 0, &mut to, None,
    )
    .unwrap_err();
    let (code, _, msg) = status(e);
    assert_eq!(code, 161002);
    assert!(
        msg.contains("numHeads 4 is not a positive multiple of numKeyValueHeads 3"),
        "{msg}"
    );
    // A FLOAT query is not in the page's list: 161002, as the release.
    let q32 = buf(&s, &vec![0.0; b * n * sq * d]);
    let tq = TensorArg::new(&q32, &[b, n, sq, d]).unwrap();
    let e = aclnn::fused_infer_attention_score_v2(
        &s, &tq, &kl, &vl, None, None, None, None, None, None, None, None, None, None, None, None,
        None, None, None, None, None, None, None, None, None, n as i64, scale, 2147483647, 0,
        c"BNSD", nkv as i64, 0, 0, 0, 0, false, 0, 0, &mut to, None,
    )
    .unwrap_err();
    let (code, _, msg) = status(e);
    assert_eq!(code, 161002);
    assert!(
        msg.contains("query is float32; the operator takes float16, bfloat16, int8"),
        "{msg}"
    );
}

#[test]
fn geglu_cross_entropy_quantised_matmul_and_triangular_solve() {
    let s = stream();
    // GeGLU: halves [1, 2] and [3, 4] along the last dim; gelu(left) · right.
    let x = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let (mut o, mut g) = (
        s.alloc_zeros::<f32>(2).unwrap(),
        s.alloc_zeros::<f32>(2).unwrap(),
    );
    {
        let tx = TensorArg::new(&x, &[1, 4]).unwrap();
        let (mut to, mut tg) = (
            TensorArgMut::new(&mut o, &[1, 2]).unwrap(),
            TensorArgMut::new(&mut g, &[1, 2]).unwrap(),
        );
        aclnn::ge_glu_v3(&s, &tx, -1, 0, true, &mut to, &mut tg).unwrap();
    }
    let gel = |v: f64| 0.5 * v * (1.0 + libm_erf(v / std::f64::consts::SQRT_2));
    close(
        &o.to_host_vec().unwrap(),
        &[gel(1.0) * 3.0, gel(2.0) * 4.0],
        1e-5,
        "geglu",
    );
    // Softmax cross-entropy of one row against a one-hot label.
    let feat = buf(&s, &[1.0, 2.0, 3.0]);
    let lab = buf(&s, &[0.0, 0.0, 1.0]);
    let (mut loss, mut bp) = (
        s.alloc_zeros::<f32>(1).unwrap(),
        s.alloc_zeros::<f32>(3).unwrap(),
    );
    {
        let (tf, tl) = (
            TensorArg::new(&feat, &[1, 3]).unwrap(),
            TensorArg::new(&lab, &[1, 3]).unwrap(),
        );
        let (mut tloss, mut tb) = (
            TensorArgMut::new(&mut loss, &[1]).unwrap(),
            TensorArgMut::new(&mut bp, &[1, 3]).unwrap(),
        );
        aclnn::softmax_cross_entropy_with_logits(&s, &tf, &tl, &mut tloss, &mut tb).unwrap();
    }
    let z = 1f64.exp() + 2f64.exp() + 3f64.exp();
    close(&loss.to_host_vec().unwrap(), &[z.ln() - 3.0], 1e-6, "loss");
    close(
        &bp.to_host_vec().unwrap(),
        &[1f64.exp() / z, 2f64.exp() / z, 3f64.exp() / z - 1.0],
        1e-6,
        "backprop",
    );
    // Weight-quantised matmul: x [1, 2] f16, w int8 [2, 2], per-channel scale and offset.
    let xh = s
        .clone_from_host(&[f16::from_f32(1.0), f16::from_f32(2.0)])
        .unwrap();
    let w = s.clone_from_host(&[1i8, -2, 3, 4]).unwrap();
    let sc = s
        .clone_from_host(&[f16::from_f32(0.5), f16::from_f32(2.0)])
        .unwrap();
    let off = s
        .clone_from_host(&[f16::from_f32(1.0), f16::from_f32(0.0)])
        .unwrap();
    let mut y = s.alloc_zeros::<f16>(2).unwrap();
    {
        let (tx, tw) = (
            TensorArg::new(&xh, &[1, 2]).unwrap(),
            TensorArg::new(&w, &[2, 2]).unwrap(),
        );
        let (ts, to) = (
            TensorArg::new(&sc, &[2]).unwrap(),
            TensorArg::new(&off, &[2]).unwrap(),
        );
        let mut ty = TensorArgMut::new(&mut y, &[1, 2]).unwrap();
        aclnn::weight_quant_batch_matmul_v2(
            &s,
            &tx,
            &tw,
            &ts,
            Some(&to),
            None,
            None,
            None,
            0,
            &mut ty,
        )
        .unwrap();
    }
    // column 0: (1+1)·0.5·1 + (3+1)·0.5·2 = 5; column 1: (-2)·2·1 + 4·2·2 = 12.
    let got: Vec<f32> = y
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    assert_eq!(got, [5.0, 12.0]);
    // Triangular solve: lower A = [[2, 0], [1, 1]], B = [[2], [3]] → X = [[1], [2]].
    let a = buf(&s, &[2.0, 0.0, 1.0, 1.0]);
    let bb = buf(&s, &[2.0, 3.0]);
    let (mut xo, mut mo) = (
        s.alloc_zeros::<f32>(2).unwrap(),
        s.alloc_zeros::<f32>(4).unwrap(),
    );
    {
        let (tb, ta) = (
            TensorArg::new(&bb, &[2, 1]).unwrap(),
            TensorArg::new(&a, &[2, 2]).unwrap(),
        );
        let (mut tx, mut tm) = (
            TensorArgMut::new(&mut xo, &[2, 1]).unwrap(),
            TensorArgMut::new(&mut mo, &[2, 2]).unwrap(),
        );
        aclnn::triangular_solve(&s, &tb, &ta, false, false, false, &mut tx, &mut tm).unwrap();
    }
    assert_eq!(xo.to_host_vec().unwrap(), [1.0, 2.0]);
    assert_eq!(mo.to_host_vec().unwrap(), [2.0, 0.0, 1.0, 1.0]);
}

#[test]
fn clamp_max_in_place_caps_the_tensor() {
    let s = stream();
    let mut x = buf(&s, &[-1.0, 0.5, 2.0]);
    {
        let mut tx = TensorArgMut::new(&mut x, &[3]).unwrap();
        aclnn::clamp_max_(&s, &mut tx, &Scalar::new(1.0f32).unwrap()).unwrap();
    }
    assert_eq!(x.to_host_vec().unwrap(), [-1.0, 0.5, 1.0]);
}

/// Runs `op` on a `[shape]` f32 input, returns the f32 output of `oshape`.
fn run1(
    s: &Stream,
    x: &[f32],
    shape: &[usize],
    oshape: &[usize],
    op: impl FnOnce(&Stream, &TensorArg<'_>, &mut TensorArgMut<'_>) -> acl::Result<()>,
) -> Vec<f32> {
    let a = buf(s, x);
    let mut o = s.alloc_zeros::<f32>(oshape.iter().product()).unwrap();
    {
        let ta = TensorArg::new(&a, shape).unwrap();
        let mut to = TensorArgMut::new(&mut o, oshape).unwrap();
        op(s, &ta, &mut to).unwrap();
    }
    o.to_host_vec().unwrap()
}

#[test]
fn the_rest_of_the_llm_set_matches_torch_on_small_cases() {
    let s = stream();
    let x = [-2.0f32, -0.5, 0.0, 1.0, 2.0, 3.0];
    // Elu(alpha 1, scale 1, input_scale 1), Softplus(beta 1, threshold 20).
    let one = Scalar::new(1.0f32).unwrap();
    let got = run1(&s, &x, &[6], &[6], |s, a, o| {
        aclnn::elu(s, a, &one, &one, &one, o)
    });
    let want: Vec<f64> = x
        .iter()
        .map(|&v| {
            if v > 0.0 {
                f64::from(v)
            } else {
                f64::from(v).exp() - 1.0
            }
        })
        .collect();
    close(&got, &want, 1e-6, "elu");
    let twenty = Scalar::new(20.0f32).unwrap();
    let got = run1(&s, &x, &[6], &[6], |s, a, o| {
        aclnn::softplus(s, a, &one, &twenty, o)
    });
    let want: Vec<f64> = x.iter().map(|&v| f64::from(v).exp().ln_1p()).collect();
    close(&got, &want, 1e-6, "softplus");
    // Norm p=2 over dim 1 of [2, 3].
    let two = Scalar::new(2.0f32).unwrap();
    let got = run1(&s, &x, &[2, 3], &[2], |s, a, o| {
        aclnn::norm(s, a, &two, &IntArray::new(&[1]).unwrap(), false, o)
    });
    close(
        &got,
        &[(4.0f64 + 0.25).sqrt(), (1.0f64 + 4.0 + 9.0).sqrt()],
        1e-6,
        "norm",
    );
    // RepeatInterleave 2 along dim 0 of [3].
    let got = run1(&s, &[1.0, 2.0, 3.0], &[3], &[6], |s, a, o| {
        aclnn::repeat_interleave_int_with_dim(s, a, 2, 0, 6, o)
    });
    assert_eq!(got, [1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
    // Flip along dim 1 of [2, 3].
    let got = run1(&s, &x, &[2, 3], &[2, 3], |s, a, o| {
        aclnn::flip(s, a, &IntArray::new(&[1]).unwrap(), o)
    });
    assert_eq!(got, [0.0, -0.5, -2.0, 3.0, 2.0, 1.0]);
    // 2 ** x (PowScalarTensor).
    let got = run1(&s, &[0.0, 1.0, 3.0], &[3], &[3], |s, a, o| {
        aclnn::pow_scalar_tensor(s, &two, a, o)
    });
    assert_eq!(got, [1.0, 2.0, 8.0]);
    // Threshold in place: x > 0.5 ? x : -1; adds in place: += 2 · 1.
    let mut t = buf(&s, &x);
    {
        let mut tt = TensorArgMut::new(&mut t, &[6]).unwrap();
        aclnn::threshold_(
            &s,
            &mut tt,
            &Scalar::new(0.5f32).unwrap(),
            &Scalar::new(-1.0f32).unwrap(),
        )
        .unwrap();
        aclnn::adds_(&s, &mut tt, &one, &two).unwrap();
    }
    assert_eq!(t.to_host_vec().unwrap(), [1.0, 1.0, 1.0, 3.0, 4.0, 5.0]);
    // Stack two [3] into [2, 3] along 0; SWhere.
    let (a, b) = (buf(&s, &[1.0, 2.0, 3.0]), buf(&s, &[4.0, 5.0, 6.0]));
    let mut st = s.alloc_zeros::<f32>(6).unwrap();
    {
        let list = TensorList::new(vec![
            TensorArg::new(&a, &[3]).unwrap(),
            TensorArg::new(&b, &[3]).unwrap(),
        ])
        .unwrap();
        let mut ts = TensorArgMut::new(&mut st, &[2, 3]).unwrap();
        aclnn::stack(&s, &list, 0, &mut ts).unwrap();
    }
    assert_eq!(st.to_host_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let cond = s.clone_from_host(&[1u8, 0, 1]).unwrap();
    let mut w = s.alloc_zeros::<f32>(3).unwrap();
    {
        let (tc, ta, tb) = (
            TensorArg::new(&cond, &[3]).unwrap(),
            TensorArg::new(&a, &[3]).unwrap(),
            TensorArg::new(&b, &[3]).unwrap(),
        );
        let mut tw = TensorArgMut::new(&mut w, &[3]).unwrap();
        aclnn::s_where(&s, &tc, &ta, &tb, &mut tw).unwrap();
    }
    assert_eq!(w.to_host_vec().unwrap(), [1.0, 5.0, 3.0]);
    // InplaceIndexCopy: rows 2 and 0 of a [3, 2] from a [2, 2] source.
    let mut dst = buf(&s, &[0.0; 6]);
    let src = buf(&s, &[1.0, 2.0, 3.0, 4.0]);
    let idx = s.clone_from_host(&[2i64, 0]).unwrap();
    {
        let mut td = TensorArgMut::new(&mut dst, &[3, 2]).unwrap();
        let (ti, tsrc) = (
            TensorArg::new(&idx, &[2]).unwrap(),
            TensorArg::new(&src, &[2, 2]).unwrap(),
        );
        aclnn::index_copy_(&s, &mut td, 0, &ti, &tsrc).unwrap();
    }
    assert_eq!(dst.to_host_vec().unwrap(), [3.0, 4.0, 0.0, 0.0, 1.0, 2.0]);
    // Integer remainder and bitwise and.
    let i = s.clone_from_host(&[7i32, -7, 12]).unwrap();
    let j = s.clone_from_host(&[3i32, 3, 10]).unwrap();
    let mut r = s.alloc_zeros::<i32>(3).unwrap();
    {
        let (ti, tj) = (
            TensorArg::new(&i, &[3]).unwrap(),
            TensorArg::new(&j, &[3]).unwrap(),
        );
        let mut tr = TensorArgMut::new(&mut r, &[3]).unwrap();
        aclnn::remainder_tensor_tensor(&s, &ti, &tj, &mut tr).unwrap();
    }
    assert_eq!(r.to_host_vec().unwrap(), [1, 2, 2]);
    {
        let (ti, tj) = (
            TensorArg::new(&i, &[3]).unwrap(),
            TensorArg::new(&j, &[3]).unwrap(),
        );
        let mut tr = TensorArgMut::new(&mut r, &[3]).unwrap();
        aclnn::bitwise_and_tensor(&s, &ti, &tj, &mut tr).unwrap();
    }
    assert_eq!(r.to_host_vec().unwrap(), [3, 1, 8]);
}

#[test]
fn add_rms_norm_and_group_norm_match_their_definitions() {
    let s = stream();
    let (x1, x2) = (
        buf(&s, &[1.0, 2.0, 3.0, 4.0]),
        buf(&s, &[1.0, 0.0, -1.0, 0.0]),
    );
    let g = buf(&s, &[1.0, 2.0]);
    let (mut y, mut r, mut xo) = (
        s.alloc_zeros::<f32>(4).unwrap(),
        s.alloc_zeros::<f32>(2).unwrap(),
        s.alloc_zeros::<f32>(4).unwrap(),
    );
    {
        let (t1, t2, tg) = (
            TensorArg::new(&x1, &[2, 2]).unwrap(),
            TensorArg::new(&x2, &[2, 2]).unwrap(),
            TensorArg::new(&g, &[2]).unwrap(),
        );
        let (mut ty, mut tr, mut tx) = (
            TensorArgMut::new(&mut y, &[2, 2]).unwrap(),
            TensorArgMut::new(&mut r, &[2, 1]).unwrap(),
            TensorArgMut::new(&mut xo, &[2, 2]).unwrap(),
        );
        aclnn::add_rms_norm(&s, &t1, &t2, &tg, 0.0, &mut ty, &mut tr, &mut tx).unwrap();
    }
    assert_eq!(xo.to_host_vec().unwrap(), [2.0, 2.0, 2.0, 4.0]);
    let r1 = 1.0 / (10.0f64).sqrt();
    close(&r.to_host_vec().unwrap(), &[0.5, r1], 1e-6, "rstd");
    close(
        &y.to_host_vec().unwrap(),
        &[1.0, 2.0, 2.0 * r1, 8.0 * r1],
        1e-6,
        "add_rms_norm",
    );
    // GroupNorm of [1, 4, 2] in 2 groups, gamma 1, beta 0.
    let x = buf(&s, &[1.0, 3.0, 1.0, 3.0, 0.0, 0.0, 4.0, 4.0]);
    let (ga, be) = (buf(&s, &[1.0; 4]), buf(&s, &[0.0; 4]));
    let (mut o, mut m, mut rs) = (
        s.alloc_zeros::<f32>(8).unwrap(),
        s.alloc_zeros::<f32>(2).unwrap(),
        s.alloc_zeros::<f32>(2).unwrap(),
    );
    {
        let (tx, tg, tb) = (
            TensorArg::new(&x, &[1, 4, 2]).unwrap(),
            TensorArg::new(&ga, &[4]).unwrap(),
            TensorArg::new(&be, &[4]).unwrap(),
        );
        let (mut to, mut tm, mut tr) = (
            TensorArgMut::new(&mut o, &[1, 4, 2]).unwrap(),
            TensorArgMut::new(&mut m, &[1, 2]).unwrap(),
            TensorArgMut::new(&mut rs, &[1, 2]).unwrap(),
        );
        aclnn::group_norm(
            &s,
            &tx,
            Some(&tg),
            Some(&tb),
            1,
            4,
            2,
            2,
            0.0,
            &mut to,
            &mut tm,
            &mut tr,
        )
        .unwrap();
    }
    assert_eq!(m.to_host_vec().unwrap(), [2.0, 2.0]);
    close(
        &o.to_host_vec().unwrap(),
        &[-1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0],
        1e-6,
        "group_norm",
    );
}

#[test]
fn int16_tensors_copy_and_reduce_as_the_release_takes_them() {
    let s = stream();
    // InplaceCopy from int16 into float32 and int16 to int16 (broadcast).
    let src = s.clone_from_host(&[-3i16, 7]).unwrap();
    let mut f = s.alloc_zeros::<f32>(4).unwrap();
    let mut i = s.alloc_zeros::<i16>(4).unwrap();
    {
        let ts = TensorArg::new(&src, &[2]).unwrap();
        let mut tf = TensorArgMut::new(&mut f, &[2, 2]).unwrap();
        aclnn::copy_(&s, &mut tf, &ts).unwrap();
        let mut ti = TensorArgMut::new(&mut i, &[2, 2]).unwrap();
        aclnn::copy_(&s, &mut ti, &ts).unwrap();
    }
    assert_eq!(f.to_host_vec().unwrap(), [-3.0, 7.0, -3.0, 7.0]);
    assert_eq!(i.to_host_vec().unwrap(), [-3, 7, -3, 7]);
    // ArgMax over int16.
    let mut am = s.alloc_zeros::<i64>(2).unwrap();
    {
        let ti = TensorArg::new(&i, &[2, 2]).unwrap();
        let mut ta = TensorArgMut::new(&mut am, &[2]).unwrap();
        aclnn::arg_max(&s, &ti, 1, false, &mut ta).unwrap();
    }
    assert_eq!(am.to_host_vec().unwrap(), [1, 1]);
}

#[test]
fn an_output_layout_that_reaches_an_element_twice_is_refused() {
    let s = stream();
    let mut o = s.alloc_zeros::<f32>(4).unwrap();
    // A [2, 2] view with strides [1, 1]: elements (0,1) and (1,0) coincide.
    let layout = aclnn::Layout {
        dims: vec![2, 2],
        strides: vec![1, 1],
        offset: 0,
        format: 2,
        storage_dims: vec![4],
    };
    match TensorArgMut::with_layout(&mut o, &layout) {
        Err(Error::InvalidArgument { function, reason }) => {
            assert_eq!(function, "aclCreateTensor");
            assert!(reason.contains("reaches some elements twice"), "{reason}");
        }
        other => panic!("an overlapping output layout was accepted: {other:?}"),
    }
    // The same layout as an input is fine (a broadcast-like read).
    assert!(TensorArg::with_layout(&o, &layout).is_ok());
}

//! The typed network operators of `acl::ops` (allocating `_new` and `out`
//! forms) on cann-sim: values against host computations, views as inputs,
//! and shapes refused before any C call with the exact message.

mod common;

use acl::memory::Bool;
use acl::ops::{self, Window2d};
use acl::{Error, Stream, Tensor};

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn t(s: &Stream, v: &[f32], shape: &[usize]) -> Tensor<f32> {
    Tensor::from_host(s, v, shape).expect("upload")
}

fn close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("not an InvalidArgument: {other:?}"),
    }
}

#[test]
fn layer_norm_and_rms_norm_normalise_rows() {
    let s = stream();
    let x = t(&s, &[1.0, 2.0, 3.0, 4.0, 2.0, 2.0, 2.0, 6.0], &[2, 4]);
    let w = t(&s, &[1.0, 1.0, 2.0, 2.0], &[4]);
    let y = ops::layer_norm_new(&s, &x, 1, Some(&w.view()), None, 0.0).unwrap();
    let got = y.to_host_vec().unwrap();
    // Row 1: mean 2.5, var 1.25.
    let r = 1.0 / 1.25f32.sqrt();
    close(
        &got[..4],
        &[-1.5 * r, -0.5 * r, 1.0 * r, 3.0 * r],
        1e-5,
        "layer_norm row 0",
    );
    let g = t(&s, &[1.0, 1.0, 1.0, 1.0], &[4]);
    let y = ops::rms_norm_new(&s, &x, &g, 0.0).unwrap();
    let rms = (30.0f32 / 4.0).sqrt();
    close(
        &y.to_host_vec().unwrap()[..4],
        &[1.0 / rms, 2.0 / rms, 3.0 / rms, 4.0 / rms],
        1e-5,
        "rms_norm",
    );
    let (f, why) = invalid(ops::layer_norm_new(&s, &x, 3, None, None, 1e-5).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        (
            "ops::layer_norm",
            "normalized = 3 dimensions of a 2-dimensional x"
        )
    );
    let bad = t(&s, &[1.0, 1.0], &[2]);
    let (f, why) = invalid(ops::rms_norm_new(&s, &x, &bad, 1e-5).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        (
            "ops::rms_norm",
            "gamma [2] is not the trailing dimensions of x [2, 4]"
        )
    );
}

#[test]
fn index_select_cat_tril_arange_cumsum_and_topk() {
    let s = stream();
    let x = t(&s, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let idx = Tensor::from_host(&s, &[2i32, 2, 0], &[3]).unwrap();
    let y = ops::index_select_new(&s, &x, 0, &idx).unwrap();
    assert_eq!(
        (y.shape().to_vec(), y.to_host_vec().unwrap()),
        (vec![3, 2], vec![5.0, 6.0, 5.0, 6.0, 1.0, 2.0])
    );
    // cat of x and its first row (a view), along 0.
    let c = ops::cat_new(&s, &[x.view(), x.view().narrow(0, 0, 1).unwrap()], 0).unwrap();
    assert_eq!(
        c.to_host_vec().unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0]
    );
    let flat = t(&s, &[0.0; 3], &[3]);
    let (f, why) = invalid(ops::cat_new(&s, &[x.view(), flat.view()], 0).unwrap_err());
    assert_eq!(f, "ops::cat");
    assert!(why.contains("tensor 1 has shape [3]"), "{why}");
    let sq = t(&s, &[1.0; 9], &[3, 3]);
    let mut lower = Tensor::zeros(&s, &[3, 3]).unwrap();
    ops::tril(&s, &sq, -1, &mut lower).unwrap();
    assert_eq!(
        lower.to_host_vec().unwrap(),
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]
    );
    let a: Tensor<f32> = ops::arange_new(&s, 0.0, 5.0, 2.0).unwrap();
    assert_eq!(a.to_host_vec().unwrap(), [0.0, 2.0, 4.0]);
    let mut cs = Tensor::zeros(&s, &[3]).unwrap();
    ops::cumsum(&s, &a, 0, &mut cs).unwrap();
    assert_eq!(cs.to_host_vec().unwrap(), [0.0, 2.0, 6.0]);
    let (v, i) = ops::topk_new(&s, &x, 1, 1, false).unwrap();
    assert_eq!(
        (v.to_host_vec().unwrap(), i.to_host_vec().unwrap()),
        (vec![1.0, 3.0, 5.0], vec![0, 0, 0])
    );
    let (f, why) = invalid(ops::topk_new(&s, &x, 3, 1, true).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        ("ops::topk", "k = 3 is above the size 2 of dim 1")
    );
}

#[test]
fn conv2d_and_pooling_on_a_plane() {
    let s = stream();
    let x = t(
        &s,
        &(1..=16).map(|v| v as f32).collect::<Vec<_>>(),
        &[1, 1, 4, 4],
    );
    let w = t(&s, &[1.0, 0.0, 0.0, 1.0], &[1, 1, 2, 2]);
    let b = t(&s, &[0.5], &[1]);
    // Each output is x[i][j] + x[i+1][j+1] + 0.5, stride 2.
    let y = ops::conv2d_new(&s, &x, &w, Some(&b.view()), Window2d::square(2, 2), 1).unwrap();
    assert_eq!(
        (y.shape().to_vec(), y.to_host_vec().unwrap()),
        (vec![1, 1, 2, 2], vec![7.5, 11.5, 23.5, 27.5])
    );
    let m = ops::max_pool2d_new(&s, &x, Window2d::square(2, 2)).unwrap();
    assert_eq!(m.to_host_vec().unwrap(), [6.0, 8.0, 14.0, 16.0]);
    let a = ops::avg_pool2d_new(&s, &x, Window2d::square(2, 2)).unwrap();
    assert_eq!(a.to_host_vec().unwrap(), [3.5, 5.5, 11.5, 13.5]);
    let (f, why) =
        invalid(ops::conv2d_new(&s, &x, &w, None, Window2d::square(2, 1), 2).unwrap_err());
    assert_eq!(f, "ops::conv2d");
    assert!(
        why.contains("do not fit a 2-D convolution with 2 groups"),
        "{why}"
    );
}

#[test]
fn attention_with_a_causal_mask_matches_the_host() {
    let s = stream();
    // B 1, N 2 heads sharing one KV head, S = T = 2, D = 2.
    let q = t(
        &s,
        &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, -0.5],
        &[1, 2, 2, 2],
    );
    let k = t(&s, &[1.0, 0.0, 0.0, 1.0], &[1, 1, 2, 2]);
    let v = t(&s, &[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let mask = Tensor::from_host(
        &s,
        &[Bool::FALSE, Bool::TRUE, Bool::FALSE, Bool::FALSE],
        &[2, 2],
    )
    .unwrap();
    let y = ops::attention_new(&s, &q, &k, &v, Some(&mask.view()), 1.0).unwrap();
    let got = y.to_host_vec().unwrap();
    // Row 0 of each head sees key 0 only: v[0].
    close(&got[0..2], &[1.0, 2.0], 1e-6, "head 0 row 0");
    close(&got[4..6], &[1.0, 2.0], 1e-6, "head 1 row 0");
    // Head 0 row 1: q = [0, 1], scores [0, 1].
    let (e0, e1) = (1.0f32, 1.0f32.exp());
    let p1 = e1 / (e0 + e1);
    close(
        &got[2..4],
        &[1.0 + 2.0 * p1, 2.0 + 2.0 * p1],
        1e-5,
        "head 0 row 1",
    );
    let bad = t(&s, &[0.0; 6], &[1, 3, 1, 2]);
    let (f, _) = invalid(ops::attention_new(&s, &q, &bad, &bad, None, 1.0).unwrap_err());
    assert_eq!(f, "ops::attention");
    let bad_mask = Tensor::from_host(&s, &[Bool::FALSE; 3], &[3]).unwrap();
    let (f, _) =
        invalid(ops::attention_new(&s, &q, &k, &v, Some(&bad_mask.view()), 1.0).unwrap_err());
    assert_eq!(f, "ops::attention");
    // f16 runs the fused operator (f32 above runs the separate ones): the
    // same values, and a transposed (non-contiguous) query.
    let h = |x: &Tensor<f32>| ops::cast_new::<f32, half::f16>(&s, x).unwrap();
    let (qh, kh, vh) = (h(&q), h(&k), h(&v));
    let yh = ops::attention_new(&s, &qh, &kh, &vh, Some(&mask.view()), 1.0).unwrap();
    let got_h: Vec<f32> = yh
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|x| x.to_f32())
        .collect();
    close(&got_h, &got, 2e-3, "f16 fused against f32 unfused");
    let qt = q.view().transpose(2, 3).unwrap();
    let yt = ops::attention_new(&s, &qt, &k, &v, None, 0.5).unwrap();
    let ytc = ops::attention_new(&s, &qt.to_tensor(&s).unwrap(), &k, &v, None, 0.5).unwrap();
    close(
        &yt.to_host_vec().unwrap(),
        &ytc.to_host_vec().unwrap(),
        0.0,
        "strided query",
    );
}

#[test]
fn silu_and_exact_gelu_over_a_view() {
    let s = stream();
    let x = t(&s, &[-1.0, 0.0, 1.0, 2.0], &[2, 2]);
    let mut y = Tensor::zeros(&s, &[2, 2]).unwrap();
    ops::silu(&s, &x.view().transpose(0, 1).unwrap(), &mut y).unwrap();
    let silu = |v: f32| v / (1.0 + (-v).exp());
    close(
        &y.to_host_vec().unwrap(),
        &[silu(-1.0), silu(1.0), silu(0.0), silu(2.0)],
        1e-6,
        "silu",
    );
    ops::gelu_v2(&s, &x, false, &mut y).unwrap();
    close(
        &y.to_host_vec().unwrap(),
        &[-0.15865526, 0.0, 0.8413447, 1.9544997],
        1e-5,
        "gelu erf",
    );
}

//! The typed training operators of `acl::ops` (`ops::backward`): each
//! gradient against central finite differences of its typed forward (f32,
//! fixed-seed inputs; the loss is `Σ r ⊙ forward(..)` for a random `r`),
//! max pooling and the NLL loss against host references, and the exact
//! error of each misuse, raised before any C call.

mod common;

use acl::ops::{self, Grads, Reduction, Window2d};
use acl::{Error, Stream, Tensor};

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

/// A fixed-seed generator (SplitMix64), uniform in [-1, 1).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }
}

fn t(s: &Stream, v: &[f32], shape: &[usize]) -> Tensor<f32> {
    Tensor::from_host(s, v, shape).expect("upload")
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("not an InvalidArgument: {other:?}"),
    }
}

/// `Σ r ⊙ y`, in f64.
fn dot(r: &[f32], y: &[f32]) -> f64 {
    assert_eq!(r.len(), y.len());
    r.iter()
        .zip(y)
        .map(|(a, b)| f64::from(*a) * f64::from(*b))
        .sum()
}

/// Central differences of `loss` at `x`, element by element.
fn numeric(x: &[f32], mut loss: impl FnMut(&[f32]) -> f64) -> Vec<f64> {
    let h = 1e-2f32;
    (0..x.len())
        .map(|i| {
            let mut p = x.to_vec();
            p[i] += h;
            let up = loss(&p);
            p[i] -= 2.0 * h;
            let down = loss(&p);
            (up - down) / (2.0 * f64::from(h))
        })
        .collect()
}

fn assert_close(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= 2e-3 * scale,
            "{what}[{i}]: analytic {g} vs numeric {w}"
        );
    }
}

#[test]
fn gelu_backward_matches_finite_differences_of_gelu() {
    let s = stream();
    let x = Rng(1).vec(24).iter().map(|v| v * 3.0).collect::<Vec<_>>();
    let r = Rng(2).vec(24);
    let shape = [4, 6];
    let loss = |xv: &[f32]| {
        let y = ops::gelu_new(&s, &t(&s, xv, &shape)).unwrap();
        dot(&r, &y.to_host_vec().unwrap())
    };
    let g = ops::gelu_backward_new(&s, &t(&s, &r, &shape), &t(&s, &x, &shape)).unwrap();
    assert_close("dx", &g.to_host_vec().unwrap(), &numeric(&x, loss));
    // The out form, into a view of a larger tensor.
    let mut big = Tensor::<f32>::zeros(&s, &[8, 6]).unwrap();
    ops::gelu_backward(
        &s,
        &t(&s, &r, &shape),
        &t(&s, &x, &shape),
        &mut big.view_mut().narrow(0, 4, 4).unwrap(),
    )
    .unwrap();
    let v = big.to_host_vec().unwrap();
    assert_eq!(&v[24..], g.to_host_vec().unwrap().as_slice());
    assert!(v[..24].iter().all(|&z| z == 0.0));
}

#[test]
fn layer_norm_backward_matches_finite_differences_for_input_weight_and_bias() {
    let s = stream();
    let shape = [3, 5];
    let mut rng = Rng(3);
    let (x, w, b, r) = (rng.vec(15), rng.vec(5), rng.vec(5), rng.vec(15));
    let eps = 1e-5;
    let forward = |xv: &[f32], wv: &[f32], bv: &[f32]| -> f64 {
        let (wt, bt) = (t(&s, wv, &[5]), t(&s, bv, &[5]));
        let mut y = Tensor::<f32>::zeros(&s, &shape).unwrap();
        let mut mean = Tensor::<f32>::zeros(&s, &[3, 1]).unwrap();
        let mut rstd = Tensor::<f32>::zeros(&s, &[3, 1]).unwrap();
        ops::layer_norm_train(
            &s,
            &t(&s, xv, &shape),
            1,
            Some(&wt.view()),
            Some(&bt.view()),
            eps,
            &mut y,
            &mut mean,
            &mut rstd,
        )
        .unwrap();
        dot(&r, &y.to_host_vec().unwrap())
    };
    let xt = t(&s, &x, &shape);
    let wt = t(&s, &w, &[5]);
    let bt = t(&s, &b, &[5]);
    let mut y = Tensor::<f32>::zeros(&s, &shape).unwrap();
    let mut mean = Tensor::<f32>::zeros(&s, &[3, 1]).unwrap();
    let mut rstd = Tensor::<f32>::zeros(&s, &[3, 1]).unwrap();
    ops::layer_norm_train(
        &s,
        &xt,
        1,
        Some(&wt.view()),
        Some(&bt.view()),
        eps,
        &mut y,
        &mut mean,
        &mut rstd,
    )
    .unwrap();
    // The same output as the plain layer norm.
    let plain = ops::layer_norm_new(&s, &xt, 1, Some(&wt.view()), Some(&bt.view()), eps).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), plain.to_host_vec().unwrap());
    let (mut dx, mut dw, mut db) = (
        Tensor::<f32>::zeros(&s, &shape).unwrap(),
        Tensor::<f32>::zeros(&s, &[5]).unwrap(),
        Tensor::<f32>::zeros(&s, &[5]).unwrap(),
    );
    ops::layer_norm_backward(
        &s,
        &t(&s, &r, &shape),
        &xt,
        1,
        &mean,
        &rstd,
        Some(&wt.view()),
        Grads::all(dx.view_mut(), dw.view_mut(), db.view_mut()),
    )
    .unwrap();
    assert_close(
        "dx",
        &dx.to_host_vec().unwrap(),
        &numeric(&x, |p| forward(p, &w, &b)),
    );
    assert_close(
        "dweight",
        &dw.to_host_vec().unwrap(),
        &numeric(&w, |p| forward(&x, p, &b)),
    );
    assert_close(
        "dbias",
        &db.to_host_vec().unwrap(),
        &numeric(&b, |p| forward(&x, &w, p)),
    );
}

#[test]
fn batch_norm_backward_matches_finite_differences_and_updates_the_running_statistics() {
    let s = stream();
    let shape = [4, 3, 2, 2];
    let n = 48;
    let mut rng = Rng(4);
    let (x, w, b, r) = (rng.vec(n), rng.vec(3), rng.vec(3), rng.vec(n));
    let eps = 1e-5;
    let run = |xv: &[f32], wv: &[f32], bv: &[f32]| {
        let (wt, bt) = (t(&s, wv, &[3]), t(&s, bv, &[3]));
        let mut y = Tensor::<f32>::zeros(&s, &shape).unwrap();
        let (mut sm, mut si) = (
            Tensor::<f32>::zeros(&s, &[3]).unwrap(),
            Tensor::<f32>::zeros(&s, &[3]).unwrap(),
        );
        let (mut rm, mut rv) = (
            Tensor::<f32>::zeros(&s, &[3]).unwrap(),
            t(&s, &[1.0; 3], &[3]),
        );
        ops::batch_norm_train(
            &s,
            &t(&s, xv, &shape),
            Some(&wt.view()),
            Some(&bt.view()),
            Some((rm.view_mut(), rv.view_mut())),
            0.1,
            eps,
            &mut y,
            &mut sm,
            &mut si,
        )
        .unwrap();
        (y, sm, si, rm, rv)
    };
    let loss =
        |xv: &[f32], wv: &[f32], bv: &[f32]| dot(&r, &run(xv, wv, bv).0.to_host_vec().unwrap());
    let (_, sm, si, rm, rv) = run(&x, &w, &b);
    // Running statistics: 0.9·old + 0.1·batch (the variance unbiased).
    let count = 16.0f64;
    for ch in 0..3 {
        let vals: Vec<f64> = (0..4)
            .flat_map(|k| (0..4).map(move |j| (k, j)))
            .map(|(k, j)| f64::from(x[k * 12 + ch * 4 + j]))
            .collect();
        let m = vals.iter().sum::<f64>() / count;
        let var = vals.iter().map(|v| (v - m).powi(2)).sum::<f64>() / count;
        let (rmv, rvv) = (rm.to_host_vec().unwrap()[ch], rv.to_host_vec().unwrap()[ch]);
        assert!((f64::from(rmv) - 0.1 * m).abs() < 1e-6, "running mean {ch}");
        let want_rv = 0.9 + 0.1 * var * count / (count - 1.0);
        assert!((f64::from(rvv) - want_rv).abs() < 1e-6, "running var {ch}");
    }
    let wt = t(&s, &w, &[3]);
    let (mut dx, mut dw, mut db) = (
        Tensor::<f32>::zeros(&s, &shape).unwrap(),
        Tensor::<f32>::zeros(&s, &[3]).unwrap(),
        Tensor::<f32>::zeros(&s, &[3]).unwrap(),
    );
    ops::batch_norm_backward(
        &s,
        &t(&s, &r, &shape),
        &t(&s, &x, &shape),
        Some(&wt.view()),
        &sm,
        &si,
        eps,
        Grads::all(dx.view_mut(), dw.view_mut(), db.view_mut()),
    )
    .unwrap();
    assert_close(
        "dx",
        &dx.to_host_vec().unwrap(),
        &numeric(&x, |p| loss(p, &w, &b)),
    );
    assert_close(
        "dweight",
        &dw.to_host_vec().unwrap(),
        &numeric(&w, |p| loss(&x, p, &b)),
    );
    assert_close(
        "dbias",
        &db.to_host_vec().unwrap(),
        &numeric(&b, |p| loss(&x, &w, p)),
    );
}

#[test]
fn batch_norm_eval_normalises_by_the_running_statistics() {
    let s = stream();
    let x = Rng(5).vec(2 * 2 * 3);
    let (mut rm, mut rv) = (t(&s, &[0.5, -1.0], &[2]), t(&s, &[4.0, 0.25], &[2]));
    let (w, b) = (t(&s, &[2.0, 3.0], &[2]), t(&s, &[0.1, 0.2], &[2]));
    let mut y = Tensor::<f32>::zeros(&s, &[2, 2, 3]).unwrap();
    ops::batch_norm_eval(
        &s,
        &t(&s, &x, &[2, 2, 3]),
        Some(&w.view()),
        Some(&b.view()),
        &mut rm,
        &mut rv,
        0.0,
        &mut y,
    )
    .unwrap();
    let y = y.to_host_vec().unwrap();
    let (m, v, ww, bb) = ([0.5, -1.0], [4.0f32, 0.25], [2.0, 3.0], [0.1, 0.2]);
    for (k, (xv, yv)) in x.iter().zip(&y).enumerate() {
        let ch = (k / 3) % 2;
        let want = (xv - m[ch]) / v[ch].sqrt() * ww[ch] + bb[ch];
        assert!((yv - want).abs() < 1e-5, "{k}: {yv} vs {want}");
    }
    assert_eq!(rm.to_host_vec().unwrap(), [0.5, -1.0], "read only");
}

#[test]
fn conv2d_backward_matches_finite_differences_for_input_weight_and_bias() {
    let s = stream();
    let (xs, ws) = ([2, 2, 5, 4], [3, 2, 3, 3]);
    let window = Window2d {
        padding: [1, 0],
        ..Window2d::square(3, 2)
    };
    let ys = ops::conv2d_shape("test", &xs, &ws, window, 1).unwrap();
    let mut rng = Rng(6);
    let (x, w, b) = (rng.vec(80), rng.vec(54), rng.vec(3));
    let r = rng.vec(ys.iter().product());
    let loss = |xv: &[f32], wv: &[f32], bv: &[f32]| {
        let bt = t(&s, bv, &[3]);
        let y = ops::conv2d_new(
            &s,
            &t(&s, xv, &xs),
            &t(&s, wv, &ws),
            Some(&bt.view()),
            window,
            1,
        )
        .unwrap();
        dot(&r, &y.to_host_vec().unwrap())
    };
    let g = ops::conv2d_backward_new(
        &s,
        &t(&s, &r, &ys),
        &t(&s, &x, &xs),
        &t(&s, &w, &ws),
        window,
        1,
        [true, true, true],
    )
    .unwrap();
    let host = |t: &Option<Tensor<f32>>| t.as_ref().unwrap().to_host_vec().unwrap();
    assert_close("dx", &host(&g.input), &numeric(&x, |p| loss(p, &w, &b)));
    assert_close(
        "dweight",
        &host(&g.weight),
        &numeric(&w, |p| loss(&x, p, &b)),
    );
    assert_close("dbias", &host(&g.bias), &numeric(&b, |p| loss(&x, &w, p)));
    // Weight and bias only: the input's gradient is not computed.
    let only = ops::conv2d_backward_new(
        &s,
        &t(&s, &r, &ys),
        &t(&s, &x, &xs),
        &t(&s, &w, &ws),
        window,
        1,
        [false, true, true],
    )
    .unwrap();
    assert!(only.input.is_none());
    assert_eq!(host(&only.weight), host(&g.weight));
}

#[test]
fn max_pool_with_indices_finds_the_maxima_and_its_backward_routes_the_gradient_to_them() {
    let s = stream();
    // One plane 4×4, 2×2 windows of stride 2.
    let x: Vec<f32> = vec![
        1.0, 5.0, 2.0, 0.0, //
        3.0, 4.0, 9.0, 1.0, //
        0.0, 0.0, 7.0, 8.0, //
        6.0, 2.0, 3.0, 1.0,
    ];
    let xt = t(&s, &x, &[1, 1, 4, 4]);
    let w = Window2d::square(2, 2);
    // i32 indices: the backward of the Atlas A2/A3 parts takes int32 only.
    let (y, idx) = ops::max_pool2d_with_indices_new::<f32, i32>(&s, &xt, w).unwrap();
    assert_eq!(y.to_host_vec().unwrap(), [5.0, 9.0, 6.0, 8.0]);
    assert_eq!(idx.to_host_vec().unwrap(), [1, 6, 12, 11]);
    let g = t(&s, &[1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 2]);
    let dx = ops::max_pool2d_backward_new(&s, &g, &xt, &idx, w).unwrap();
    let mut want = vec![0.0f32; 16];
    for (i, gv) in [1usize, 6, 12, 11].into_iter().zip([1.0, 2.0, 3.0, 4.0]) {
        want[i] = gv;
    }
    assert_eq!(dx.to_host_vec().unwrap(), want);
    // The forward writes i64 indices too (its page lists INT32 and INT64).
    let (_, idx64) = ops::max_pool2d_with_indices_new::<f32, i64>(&s, &xt, w).unwrap();
    assert_eq!(idx64.to_host_vec().unwrap(), [1, 6, 12, 11]);
}

#[test]
fn nll_loss_after_log_softmax_is_cross_entropy_and_its_gradient_is_softmax_minus_one_hot() {
    let s = stream();
    let z = Rng(7).vec(12);
    let target = [2i64, 0, 3];
    let zt = t(&s, &z, &[3, 4]);
    let tt = Tensor::from_host(&s, &target, &[3]).unwrap();
    let ones = t(&s, &[1.0; 4], &[4]);
    let ls = ops::log_softmax_new(&s, &zt, -1).unwrap();
    let (loss, total) = ops::nll_loss_new(&s, &ls, &tt, &ones, Reduction::Mean, -100).unwrap();
    let p: Vec<f64> = z
        .chunks(4)
        .flat_map(|row| {
            let m = row.iter().fold(f32::MIN, |a, &b| a.max(b));
            let e: Vec<f64> = row.iter().map(|v| f64::from(v - m).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.into_iter().map(move |v| v / sum)
        })
        .collect();
    let want_loss = -target
        .iter()
        .enumerate()
        .map(|(n, &c)| p[n * 4 + c as usize].ln())
        .sum::<f64>()
        / 3.0;
    assert!((f64::from(loss.to_host_vec().unwrap()[0]) - want_loss).abs() < 1e-5);
    assert_eq!(total.to_host_vec().unwrap(), [3.0]);
    // A loss scale as the incoming gradient.
    let scale = t(&s, &[8.0], &[1]);
    let dls =
        ops::nll_loss_backward_new(&s, &scale, &ls, &tt, &ones, Reduction::Mean, -100, &total)
            .unwrap();
    let dz = ops::log_softmax_backward_new(&s, &dls, &ls, 1).unwrap();
    let mut want = p.clone();
    for (n, &c) in target.iter().enumerate() {
        want[n * 4 + c as usize] -= 1.0;
    }
    let want: Vec<f64> = want.iter().map(|v| v * 8.0 / 3.0).collect();
    assert_close("dz", &dz.to_host_vec().unwrap(), &want);
    // Per-sample losses; an ignored sample counts nothing.
    let tt2 = Tensor::from_host(&s, &[2i64, -100, 3], &[3]).unwrap();
    let (per, total) = ops::nll_loss_new(&s, &ls, &tt2, &ones, Reduction::None, -100).unwrap();
    let per = per.to_host_vec().unwrap();
    assert_eq!(per[1], 0.0);
    assert!((f64::from(per[2]) + p[11].ln()).abs() < 1e-5);
    assert_eq!(total.to_host_vec().unwrap(), [0.0]);
}

#[test]
fn training_operators_name_themselves_and_the_argument_for_misfit_shapes() {
    let s = stream();
    let z = |shape: &[usize]| Tensor::<f32>::zeros(&s, shape).unwrap();
    let x = z(&[2, 3]);
    let e = |r: acl::Result<()>| invalid(r.unwrap_err());

    let mut out = z(&[2, 4]);
    assert_eq!(
        e(ops::log_softmax_backward(&s, &x, &x, 2, &mut z(&[2, 3]))),
        (
            "ops::log_softmax_backward",
            "axis 2 is out of range for a 2-dimensional tensor".into()
        )
    );
    assert_eq!(
        e(ops::log_softmax_backward(&s, &x, &x, 1, &mut out)),
        (
            "ops::log_softmax_backward",
            "the output has shape [2, 4], the result has shape [2, 3]".into()
        )
    );
    let target = Tensor::from_host(&s, &[0i64, 1, 2], &[3]).unwrap();
    assert_eq!(
        invalid(ops::nll_loss_new(&s, &x, &target, &z(&[3]), Reduction::Mean, -100).unwrap_err()),
        (
            "ops::nll_loss",
            "target has shape [3]; x [2, 3] needs [2]".into()
        )
    );
    let target = Tensor::from_host(&s, &[0i64, 1], &[2]).unwrap();
    assert_eq!(
        invalid(ops::nll_loss_new(&s, &x, &target, &z(&[4]), Reduction::Sum, -100).unwrap_err()),
        (
            "ops::nll_loss",
            "weight has shape [4]; x [2, 3] needs [3]".into()
        )
    );
    assert_eq!(
        e(ops::nll_loss_backward(
            &s,
            &z(&[2]),
            &x,
            &target,
            &z(&[3]),
            Reduction::Mean,
            -100,
            &z(&[]),
            &mut z(&[2, 3]),
        )),
        (
            "ops::nll_loss_backward",
            "grad has shape [2]; it must hold one element ([] or [1])".into()
        )
    );
    let (mut mean, mut rstd) = (z(&[2]), z(&[2, 1]));
    assert_eq!(
        e(ops::layer_norm_train(
            &s,
            &x,
            1,
            None,
            None,
            1e-5,
            &mut z(&[2, 3]),
            &mut mean,
            &mut rstd
        )),
        (
            "ops::layer_norm_train",
            "mean has shape [2]; it must be [2, 1]".into()
        )
    );
    let (mean, rstd) = (z(&[2, 1]), z(&[2, 1]));
    assert_eq!(
        e(ops::layer_norm_backward(
            &s,
            &x,
            &x,
            1,
            &mean,
            &rstd,
            None,
            Grads {
                input: None,
                weight: None,
                bias: None
            }
        )),
        (
            "ops::layer_norm_backward",
            "no gradient is asked for".into()
        )
    );
    let mut dw = z(&[2]);
    assert_eq!(
        e(ops::layer_norm_backward(
            &s,
            &x,
            &x,
            1,
            &mean,
            &rstd,
            None,
            Grads {
                input: None,
                weight: Some(dw.view_mut()),
                bias: None
            }
        )),
        (
            "ops::layer_norm_backward",
            "grad weight has shape [2]; it must be [3]".into()
        )
    );
    let img = z(&[2, 3, 4, 4]);
    assert_eq!(
        e(ops::batch_norm_train(
            &s,
            &img,
            None,
            None,
            None,
            0.1,
            1e-5,
            &mut z(&[2, 3, 4, 4]),
            &mut z(&[4]),
            &mut z(&[3])
        )),
        (
            "ops::batch_norm_train",
            "save_mean has shape [4]; it must be [3]".into()
        )
    );
    assert_eq!(
        e(ops::batch_norm_backward(
            &s,
            &z(&[2, 3, 4, 5]),
            &img,
            None,
            &z(&[3]),
            &z(&[3]),
            1e-5,
            Grads {
                input: None,
                weight: None,
                bias: Some(z(&[3]).view_mut())
            }
        )),
        (
            "ops::batch_norm_backward",
            "grad has shape [2, 3, 4, 5], x [2, 3, 4, 4]".into()
        )
    );
    let w = z(&[5, 3, 3, 3]);
    let win = Window2d::square(3, 1);
    assert_eq!(
        invalid(
            ops::conv2d_backward_new(&s, &z(&[2, 5, 3, 3]), &img, &w, win, 1, [true; 3])
                .unwrap_err()
        ),
        (
            "ops::conv2d_backward",
            "grad has shape [2, 5, 3, 3]; the convolution's output has [2, 5, 2, 2]".into()
        )
    );
    let mut gb = z(&[3]);
    assert_eq!(
        e(ops::conv2d_backward(
            &s,
            &z(&[2, 5, 2, 2]),
            &img,
            &w,
            win,
            1,
            Grads {
                input: None,
                weight: None,
                bias: Some(gb.view_mut())
            }
        )),
        (
            "ops::conv2d_backward",
            "grad bias has shape [3]; it must be [5]".into()
        )
    );
    let pool = Window2d::square(2, 2);
    let mut idx = Tensor::<i32>::zeros(&s, &[2, 3, 2, 1]).unwrap();
    assert_eq!(
        e(ops::max_pool2d_with_indices(
            &s,
            &img,
            pool,
            &mut z(&[2, 3, 2, 2]),
            &mut idx
        )),
        (
            "ops::max_pool2d_with_indices",
            "indices has shape [2, 3, 2, 1]; it must be [2, 3, 2, 2]".into()
        )
    );
    assert_eq!(
        e(ops::max_pool2d_backward(
            &s,
            &z(&[2, 3, 2, 2]),
            &img,
            &idx,
            pool,
            &mut z(&[2, 3, 4, 4])
        )),
        (
            "ops::max_pool2d_backward",
            "indices has shape [2, 3, 2, 1]; the pooling's output has [2, 3, 2, 2]".into()
        )
    );
}

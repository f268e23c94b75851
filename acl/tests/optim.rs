//! Fused AdamW (`aclnnApplyAdamW`, `aclnnApplyAdamWV2`, `aclnnFusedAdamw`)
//! against a host reference, the non-finite check, the loss-scale update,
//! and a loss-scaled step captured as one graph that skips on overflow
//! without the host.

mod common;

use acl::aclnn::{self, TensorArg, TensorArgMut};
use acl::graph::CaptureMode;
use acl::ops::{self, AdamW, AdamWParam};
use acl::{Error, Stream, Tensor};

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn t(s: &Stream, v: &[f32]) -> Tensor<f32> {
    Tensor::from_host(s, v, &[v.len()]).expect("upload")
}

fn close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= tol * (1.0 + w.abs()),
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

fn status(e: Error) -> (i32, &'static str, String) {
    match e {
        Error::Acl {
            code,
            function,
            message,
        } => (code.raw(), function, message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

/// torch's AdamW on the host (decoupled weight decay, bias correction at
/// step `t`, AMSGrad on the running maximum, `maximize`).
#[derive(Clone, Debug)]
struct Host {
    w: Vec<f64>,
    m: Vec<f64>,
    v: Vec<f64>,
    vmax: Vec<f64>,
}

impl Host {
    fn new(w: &[f32]) -> Host {
        let n = w.len();
        Host {
            w: w.iter().map(|&x| f64::from(x)).collect(),
            m: vec![0.0; n],
            v: vec![0.0; n],
            vmax: vec![0.0; n],
        }
    }

    fn step(&mut self, g: &[f32], t: f64, h: &AdamW) {
        for i in 0..self.w.len() {
            let g = if h.maximize { -g[i] } else { g[i] } as f64;
            self.w[i] *= 1.0 - h.lr * h.weight_decay;
            self.m[i] = h.beta1 * self.m[i] + (1.0 - h.beta1) * g;
            self.v[i] = h.beta2 * self.v[i] + (1.0 - h.beta2) * g * g;
            self.vmax[i] = self.vmax[i].max(self.v[i]);
            let second = if h.amsgrad { self.vmax[i] } else { self.v[i] };
            let (bc1, bc2) = (1.0 - h.beta1.powf(t), 1.0 - h.beta2.powf(t));
            self.w[i] -= h.lr / bc1 * self.m[i] / ((second / bc2).sqrt() + h.eps);
        }
    }
}

const W: [f32; 5] = [0.5, -1.0, 2.0, 0.0, -0.25];
const GRADS: [[f32; 5]; 3] = [
    [0.1, -0.2, 0.3, 0.0, 1.0],
    [-0.5, 0.4, 0.2, 0.1, -1.0],
    [0.3, 0.3, -0.3, 0.2, 0.5],
];

fn hypers() -> Vec<AdamW> {
    let base = AdamW {
        lr: 0.05,
        beta1: 0.8,
        beta2: 0.9,
        eps: 1e-6,
        weight_decay: 0.1,
        amsgrad: false,
        maximize: false,
    };
    vec![
        base,
        AdamW {
            amsgrad: true,
            ..base
        },
        AdamW {
            maximize: true,
            ..base
        },
        AdamW {
            amsgrad: true,
            maximize: true,
            weight_decay: 0.0,
            ..base
        },
    ]
}

#[test]
fn adamw_step_matches_a_host_reference_with_and_without_amsgrad_and_maximize() {
    let s = stream();
    for h in hypers() {
        let mut w = t(&s, &W);
        let (mut m, mut v, mut vmax) = (t(&s, &[0.0; 5]), t(&s, &[0.0; 5]), t(&s, &[0.0; 5]));
        let mut step = t(&s, &[0.0]);
        let mut host = Host::new(&W);
        for (k, g) in GRADS.iter().enumerate() {
            let grad = t(&s, g);
            let p = AdamWParam {
                max_exp_avg_sq: Some(vmax.view_mut()),
                ..AdamWParam::new(w.view_mut(), grad.view(), m.view_mut(), v.view_mut())
            };
            ops::adamw_step(&s, vec![p], &mut step, &h, None, None).unwrap();
            host.step(g, (k + 1) as f64, &h);
        }
        let what = format!("{h:?}");
        close(&w.to_host_vec().unwrap(), &host.w, 1e-5, &what);
        close(&m.to_host_vec().unwrap(), &host.m, 1e-5, &what);
        close(&v.to_host_vec().unwrap(), &host.v, 1e-5, &what);
        if h.amsgrad {
            close(&vmax.to_host_vec().unwrap(), &host.vmax, 1e-5, &what);
        }
        assert_eq!(step.to_host_vec().unwrap(), [3.0]);
    }
}

#[test]
fn adamw_step_takes_several_parameters_and_a_grad_scale_in_half_precision() {
    use half::f16;
    let s = stream();
    let h = AdamW {
        lr: 0.01,
        ..AdamW::default()
    };
    let h16 = |v: &[f32]| {
        Tensor::from_host(
            &s,
            &v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>(),
            &[v.len()],
        )
        .unwrap()
    };
    let (mut a, mut b) = (h16(&W), h16(&[1.0, 2.0]));
    let (ga, gb) = (h16(&GRADS[0].map(|g| g * 8.0)), h16(&[-8.0, 4.0]));
    let z = |n| Tensor::<f16>::zeros(&s, &[n]).unwrap();
    let (mut ma, mut va, mut mb, mut vb) = (z(5), z(5), z(2), z(2));
    let mut step = t(&s, &[0.0]);
    let scale = t(&s, &[8.0]);
    let params = vec![
        AdamWParam::new(a.view_mut(), ga.view(), ma.view_mut(), va.view_mut()),
        AdamWParam::new(b.view_mut(), gb.view(), mb.view_mut(), vb.view_mut()),
    ];
    ops::adamw_step(&s, params, &mut step, &h, Some(&scale.view()), None).unwrap();
    let (mut ha, mut hb) = (Host::new(&W), Host::new(&[1.0, 2.0]));
    ha.step(&GRADS[0], 1.0, &h);
    hb.step(&[-1.0, 0.5], 1.0, &h);
    let back = |x: &Tensor<f16>| {
        x.to_host_vec()
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect::<Vec<_>>()
    };
    close(&back(&a), &ha.w, 2e-3, "a");
    close(&back(&b), &hb.w, 2e-3, "b");
}

#[test]
fn apply_adam_w_with_tensor_hyper_parameters_matches_the_host_reference() {
    let s = stream();
    for h in hypers() {
        let mut host = Host::new(&W);
        let mut w = s.clone_from_host(&W).unwrap();
        let (mut m, mut v) = (
            s.alloc_zeros::<f32>(5).unwrap(),
            s.alloc_zeros::<f32>(5).unwrap(),
        );
        // ApplyAdamW's amsgrad reads the maximum, the caller keeps it.
        let vmax = s.clone_from_host(&[0.01f32; 5]).unwrap();
        host.vmax = vec![0.01; 5];
        let one = |x: f64| s.clone_from_host(&[x as f32]).unwrap();
        let (lr, wd, b1, b2, eps) = (
            one(h.lr),
            one(h.weight_decay),
            one(h.beta1),
            one(h.beta2),
            one(h.eps),
        );
        for (k, g) in GRADS.iter().enumerate() {
            // The powers are β^(t−1).
            let (p1, p2) = (one(h.beta1.powi(k as i32)), one(h.beta2.powi(k as i32)));
            let grad = s.clone_from_host(g).unwrap();
            let arg = |b| TensorArg::new(b, &[1]).unwrap();
            aclnn::apply_adam_w(
                &s,
                &mut TensorArgMut::new(&mut w, &[5]).unwrap(),
                &mut TensorArgMut::new(&mut m, &[5]).unwrap(),
                &mut TensorArgMut::new(&mut v, &[5]).unwrap(),
                &arg(&p1),
                &arg(&p2),
                &arg(&lr),
                &arg(&wd),
                &arg(&b1),
                &arg(&b2),
                &arg(&eps),
                &TensorArg::new(&grad, &[5]).unwrap(),
                h.amsgrad
                    .then(|| TensorArg::new(&vmax, &[5]).unwrap())
                    .as_ref(),
                h.amsgrad,
                h.maximize,
            )
            .unwrap();
            host.step(g, (k + 1) as f64, &h);
            // The operator does not keep the maximum: the reference's
            // running maximum stays the caller's constant.
            host.vmax = vec![0.01; 5];
        }
        let what = format!("{h:?}");
        close(&w.to_host_vec().unwrap(), &host.w, 1e-5, &what);
        close(&m.to_host_vec().unwrap(), &host.m, 1e-5, &what);
        close(&v.to_host_vec().unwrap(), &host.v, 1e-5, &what);
    }
}

#[test]
fn apply_adam_w_v2_matches_the_host_reference_and_keeps_the_amsgrad_maximum() {
    let s = stream();
    for h in hypers() {
        let mut host = Host::new(&W);
        let mut w = s.clone_from_host(&W).unwrap();
        let (mut m, mut v, mut vmax) = (
            s.alloc_zeros::<f32>(5).unwrap(),
            s.alloc_zeros::<f32>(5).unwrap(),
            s.alloc_zeros::<f32>(5).unwrap(),
        );
        for (k, g) in GRADS.iter().enumerate() {
            // The kernel's t is step + 1.
            let step = s.clone_from_host(&[k as i64]).unwrap();
            let grad = s.clone_from_host(g).unwrap();
            let mut mx = TensorArgMut::new(&mut vmax, &[5]).unwrap();
            aclnn::apply_adam_w_v2(
                &s,
                &mut TensorArgMut::new(&mut w, &[5]).unwrap(),
                &mut TensorArgMut::new(&mut m, &[5]).unwrap(),
                &mut TensorArgMut::new(&mut v, &[5]).unwrap(),
                h.amsgrad.then_some(&mut mx),
                &TensorArg::new(&grad, &[5]).unwrap(),
                &TensorArg::new(&step, &[1]).unwrap(),
                h.lr as f32,
                h.beta1 as f32,
                h.beta2 as f32,
                h.weight_decay as f32,
                h.eps as f32,
                h.amsgrad,
                h.maximize,
            )
            .unwrap();
            host.step(g, (k + 1) as f64, &h);
        }
        let what = format!("{h:?}");
        close(&w.to_host_vec().unwrap(), &host.w, 1e-5, &what);
        close(&v.to_host_vec().unwrap(), &host.v, 1e-5, &what);
        if h.amsgrad {
            close(&vmax.to_host_vec().unwrap(), &host.vmax, 1e-5, &what);
        }
    }
}

#[test]
fn the_non_finite_check_flags_an_overflow_and_unscales_every_gradient() {
    let s = stream();
    let (mut a, mut b) = (t(&s, &[2.0, 4.0]), t(&s, &[6.0, 8.0, 10.0]));
    let mut found = t(&s, &[0.0]);
    let inv = t(&s, &[0.5]);
    ops::non_finite_check_and_unscale(&s, vec![a.view_mut(), b.view_mut()], &mut found, &inv)
        .unwrap();
    assert_eq!(found.to_host_vec().unwrap(), [0.0], "all finite: unchanged");
    assert_eq!(a.to_host_vec().unwrap(), [1.0, 2.0]);
    assert_eq!(b.to_host_vec().unwrap(), [3.0, 4.0, 5.0]);
    let mut c = t(&s, &[1.0, f32::INFINITY]);
    let mut d = t(&s, &[f32::NAN]);
    for grads in [vec![c.view_mut()], vec![d.view_mut()]] {
        let mut found = t(&s, &[0.0]);
        ops::non_finite_check_and_unscale(&s, grads, &mut found, &inv).unwrap();
        assert_eq!(found.to_host_vec().unwrap(), [1.0]);
    }
    assert_eq!(c.to_host_vec().unwrap(), [0.5, f32::INFINITY]);
    // A flag already set stays set.
    let mut set = t(&s, &[1.0]);
    ops::non_finite_check_and_unscale(&s, vec![a.view_mut()], &mut set, &inv).unwrap();
    assert_eq!(set.to_host_vec().unwrap(), [1.0]);
    // Misuse.
    let (f, why) =
        invalid(ops::non_finite_check_and_unscale::<f32>(&s, vec![], &mut set, &inv).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        ("ops::non_finite_check_and_unscale", "no gradients")
    );
    let two = t(&s, &[1.0, 1.0]);
    let (_, why) = invalid(
        ops::non_finite_check_and_unscale(&s, vec![a.view_mut()], &mut set, &two).unwrap_err(),
    );
    assert_eq!(why, "inv_scale has shape [2]; it must hold one element");
}

#[test]
fn amp_update_scale_grows_after_the_interval_and_backs_off_on_overflow() {
    let s = stream();
    let mut scale = t(&s, &[1024.0]);
    let mut tracker = Tensor::from_host(&s, &[0i32], &[1]).unwrap();
    let (clean, inf) = (t(&s, &[0.0]), t(&s, &[1.0]));
    let mut run = |found: &Tensor<f32>| {
        ops::amp_update_scale(&s, &mut scale, &mut tracker, found, 2.0, 0.5, 3).unwrap();
        (
            scale.to_host_vec().unwrap()[0],
            tracker.to_host_vec().unwrap()[0],
        )
    };
    assert_eq!(run(&clean), (1024.0, 1));
    assert_eq!(run(&clean), (1024.0, 2));
    assert_eq!(run(&clean), (2048.0, 0), "the third clean step grows");
    assert_eq!(run(&clean), (2048.0, 1));
    assert_eq!(run(&inf), (1024.0, 0), "an overflow halves and restarts");
    // A growth that would overflow the scale's type keeps the scale.
    use half::f16;
    let mut s16 = Tensor::from_host(&s, &[f16::from_f32(60000.0)], &[1]).unwrap();
    let mut tr = Tensor::from_host(&s, &[1i32], &[1]).unwrap();
    let zero16 = Tensor::from_host(&s, &[f16::ZERO], &[1]).unwrap();
    ops::amp_update_scale(&s, &mut s16, &mut tr, &zero16, 2.0, 0.5, 2).unwrap();
    assert_eq!(s16.to_host_vec().unwrap(), [f16::from_f32(60000.0)]);
    assert_eq!(tr.to_host_vec().unwrap(), [0]);
    // Misuse: the tiling's growthInterval rule, a found_inf of another type.
    let (code, f, msg) = status(
        ops::amp_update_scale(&s, &mut scale, &mut tracker, &clean, 2.0, 0.5, 0).unwrap_err(),
    );
    assert_eq!((code, f), (561002, "aclnnAmpUpdateScaleGetWorkspaceSize"));
    assert!(
        msg.contains("growthInterval 0 is not in [1, 2147483647]"),
        "{msg}"
    );
    // The typed layer ties found_inf's type to the scale's; the C level
    // refuses a mismatch itself.
    let cur = s.clone_from_host(&[f16::ONE]).unwrap();
    let flag = s.clone_from_host(&[0.0f32]).unwrap();
    let trk = s.clone_from_host(&[0i32]).unwrap();
    let (mut o1, mut o2) = (
        s.alloc_zeros::<f16>(1).unwrap(),
        s.alloc_zeros::<i32>(1).unwrap(),
    );
    let (code, _, msg) = status(
        aclnn::amp_update_scale(
            &s,
            &TensorArg::new(&cur, &[1]).unwrap(),
            &TensorArg::new(&trk, &[1]).unwrap(),
            &TensorArg::new(&flag, &[1]).unwrap(),
            2.0,
            0.5,
            2,
            &mut TensorArgMut::new(&mut o1, &[1]).unwrap(),
            &mut TensorArgMut::new(&mut o2, &[1]).unwrap(),
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("foundInf is float32, not float16 as currentScale"),
        "{msg}"
    );
    let mut wide = t(&s, &[1.0, 1.0]);
    let (f, why) = invalid(
        ops::amp_update_scale(&s, &mut wide, &mut tracker, &clean, 2.0, 0.5, 2).unwrap_err(),
    );
    assert_eq!(
        (f, why.as_str()),
        (
            "ops::amp_update_scale",
            "scale has shape [2]; it must be [1]"
        )
    );
}

#[test]
fn adamw_step_misuse_has_exact_errors() {
    let s = stream();
    let (mut w, g) = (t(&s, &[1.0, 2.0]), t(&s, &[1.0]));
    let (mut m, mut v) = (t(&s, &[0.0, 0.0]), t(&s, &[0.0, 0.0]));
    let mut step = t(&s, &[0.0]);
    let h = AdamW::default();
    let p = AdamWParam::new(w.view_mut(), g.view(), m.view_mut(), v.view_mut());
    let (f, why) = invalid(ops::adamw_step(&s, vec![p], &mut step, &h, None, None).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        (
            "ops::adamw_step",
            "parameter 0: grad has shape [1], the weights [2]"
        )
    );
    let g2 = t(&s, &[1.0, 1.0]);
    let p = AdamWParam::new(w.view_mut(), g2.view(), m.view_mut(), v.view_mut());
    let ams = AdamW { amsgrad: true, ..h };
    let (_, why) = invalid(ops::adamw_step(&s, vec![p], &mut step, &ams, None, None).unwrap_err());
    assert_eq!(
        why,
        "parameter 0 has no max_exp_avg_sq, which amsgrad needs"
    );
    let p = AdamWParam::new(w.view_mut(), g2.view(), m.view_mut(), v.view_mut());
    let negative = AdamW { lr: -1.0, ..h };
    let (code, f, msg) =
        status(ops::adamw_step(&s, vec![p], &mut step, &negative, None, None).unwrap_err());
    assert_eq!((code, f), (161002, "aclnnFusedAdamwGetWorkspaceSize"));
    assert!(msg.contains("lr = -1 is negative"), "{msg}");
    let (f, why) =
        invalid(ops::adamw_step::<f32>(&s, vec![], &mut step, &h, None, None).unwrap_err());
    assert_eq!((f, why.as_str()), ("ops::adamw_step", "no parameters"));
}

/// The acceptance test of issue 24 item 4: one captured graph holds a whole
/// loss-scaled AdamW step (reset the flag, check the gradients, the fused
/// step with the scale and the flag, the scale update). Launched on clean
/// gradients it steps; launched on gradients with an infinity it leaves the
/// weights, moments and step count alone and halves the scale. The capture
/// is in global mode, in which any synchronous call (a host read of the
/// flag, a synchronisation) fails: the step has none.
#[test]
fn a_loss_scaled_step_with_an_overflow_skips_the_update_and_halves_the_scale_in_one_graph() {
    // A device of its own: a GLOBAL capture refuses the synchronous calls
    // of every thread of the context, the other tests' uploads included.
    let s = common::device(7).new_stream().expect("stream");
    let scale0 = 1024.0f32;
    let mut w = t(&s, &W);
    let mut grad = t(&s, &GRADS[0].map(|g| g * scale0));
    let (mut m, mut v) = (t(&s, &[0.0; 5]), t(&s, &[0.0; 5]));
    let mut step = t(&s, &[0.0]);
    let mut scale = t(&s, &[scale0]);
    let mut tracker = Tensor::from_host(&s, &[0i32], &[1]).unwrap();
    let mut found = t(&s, &[0.0]);
    let one = t(&s, &[1.0]);
    let h = AdamW {
        lr: 0.05,
        ..AdamW::default()
    };
    s.synchronize().unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| {
            ops::muls_(s, &mut found, 0.0)?;
            ops::non_finite_check_and_unscale(s, vec![grad.view_mut()], &mut found, &one)?;
            let p = AdamWParam::new(w.view_mut(), grad.view(), m.view_mut(), v.view_mut());
            ops::adamw_step(
                s,
                vec![p],
                &mut step,
                &h,
                Some(&scale.view()),
                Some(&found.view()),
            )?;
            ops::amp_update_scale(s, &mut scale, &mut tracker, &found, 2.0, 0.5, 2000)
        })
        .unwrap();

    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    let mut host = Host::new(&W);
    host.step(&GRADS[0], 1.0, &h);
    close(&w.to_host_vec().unwrap(), &host.w, 1e-5, "clean step");
    assert_eq!(step.to_host_vec().unwrap(), [1.0]);
    assert_eq!(scale.to_host_vec().unwrap(), [scale0]);
    assert_eq!(tracker.to_host_vec().unwrap(), [1]);

    // An overflow: the same graph skips the update and halves the scale.
    let (w1, m1, v1) = (
        w.to_host_vec().unwrap(),
        m.to_host_vec().unwrap(),
        v.to_host_vec().unwrap(),
    );
    let mut bad = GRADS[1].map(|g| g * scale0);
    bad[2] = f32::INFINITY;
    grad.copy_from_host(&bad).unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(found.to_host_vec().unwrap(), [1.0]);
    assert_eq!(w.to_host_vec().unwrap(), w1, "weights unchanged");
    assert_eq!(m.to_host_vec().unwrap(), m1, "first moment unchanged");
    assert_eq!(v.to_host_vec().unwrap(), v1, "second moment unchanged");
    assert_eq!(
        step.to_host_vec().unwrap(),
        [1.0],
        "the skipped step is not counted"
    );
    assert_eq!(scale.to_host_vec().unwrap(), [scale0 / 2.0]);
    assert_eq!(tracker.to_host_vec().unwrap(), [0]);

    // Clean again, at the halved scale: the flag was reset inside the
    // graph, and the step is step 2 of the reference.
    grad.copy_from_host(&GRADS[2].map(|g| g * scale0 / 2.0))
        .unwrap();
    graph.launch(&s).unwrap();
    s.synchronize().unwrap();
    host.step(&GRADS[2], 2.0, &h);
    close(
        &w.to_host_vec().unwrap(),
        &host.w,
        1e-5,
        "step after the skip",
    );
    assert_eq!(step.to_host_vec().unwrap(), [2.0]);
    assert_eq!(found.to_host_vec().unwrap(), [0.0]);
}

#[test]
fn the_non_finite_check_refuses_mixed_gradient_types_in_its_tiling() {
    use acl::aclnn::TensorList;
    use half::f16;
    let s = stream();
    let mut a = s.clone_from_host(&[1.0f32]).unwrap();
    let mut b = s.clone_from_host(&[f16::ONE]).unwrap();
    let mut found = s.alloc_zeros::<f32>(1).unwrap();
    let inv = s.clone_from_host(&[1.0f32]).unwrap();
    let list = TensorList::new_mut(vec![
        TensorArgMut::new(&mut a, &[1]).unwrap(),
        TensorArgMut::new(&mut b, &[1]).unwrap(),
    ])
    .unwrap();
    let (code, f, msg) = status(
        aclnn::foreach_non_finite_check_and_unscale(
            &s,
            &list,
            &mut TensorArgMut::new(&mut found, &[1]).unwrap(),
            &TensorArg::new(&inv, &[1]).unwrap(),
        )
        .unwrap_err(),
    );
    assert_eq!(
        (code, f),
        (
            561002,
            "aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize"
        )
    );
    assert!(
        msg.contains("differ in type (float32 and float16)"),
        "{msg}"
    );
}

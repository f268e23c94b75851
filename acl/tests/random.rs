//! `acl::random::Generator` on cann-sim: the (seed, offset) contract
//! (reproducible at a fixed seed, successive and concurrent draws
//! disjoint), the distributions (mean, variance, Kolmogorov–Smirnov at fixed
//! seeds), permutations, multinomial frequencies, dropout, and the exact
//! error of each misuse.

mod common;

use acl::aclnn::{self, Scalar, TensorArgMut};
use acl::graph::CaptureMode;
use acl::random::{self, Generator, dropout_mask_len};
use acl::{Error, Stream, Tensor};
use std::sync::Arc;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn invalid(e: Error) -> (&'static str, String) {
    match e {
        Error::InvalidArgument { function, reason } => (function, reason),
        other => panic!("not an InvalidArgument: {other:?}"),
    }
}

/// The aclnn status, the function and the message of an operator's error.
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

fn uniform(g: &Generator, s: &Stream, n: usize, from: f64, to: f64) -> Vec<f32> {
    let mut x = Tensor::<f32>::zeros(s, &[n]).unwrap();
    g.uniform_(s, &mut x, from, to).unwrap();
    x.to_host_vec().unwrap()
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    (
        m,
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
    )
}

/// The Kolmogorov–Smirnov statistic of `sample` against the CDF `cdf`.
fn ks(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v = sample.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// The 1 % critical value of the one-sample KS statistic for `n` draws.
fn ks_critical(n: usize) -> f64 {
    1.63 / (n as f64).sqrt()
}

fn libm_erf(x: f64) -> f64 {
    unsafe extern "C" {
        safe fn erf(x: f64) -> f64;
    }
    erf(x)
}

#[test]
fn a_fixed_seed_reproduces_and_successive_draws_differ() {
    let (a, b) = (stream(), stream());
    let g = Generator::new(1234);
    let first = uniform(&g, &a, 256, 0.0, 1.0);
    assert_eq!(
        g.offset(),
        12,
        "one draw advances the offset by 10 rounded to 4"
    );
    let second = uniform(&g, &a, 256, 0.0, 1.0);
    assert_ne!(first, second, "a second draw continues the sequence");
    // Another generator at the same seed, on another stream: the same
    // numbers in the same order.
    let h = Generator::new(1234);
    assert_eq!(uniform(&h, &b, 256, 0.0, 1.0), first);
    assert_eq!(uniform(&h, &b, 256, 0.0, 1.0), second);
    // Restarting the seed restarts the sequence; another seed differs.
    g.set_seed(1234);
    assert_eq!(uniform(&g, &a, 256, 0.0, 1.0), first);
    assert_ne!(uniform(&Generator::new(1235), &a, 256, 0.0, 1.0), first);
    // A longer draw at the same offset extends the shorter one: element i
    // depends on (seed, offset, i) only.
    let long = uniform(&Generator::new(1234), &a, 1000, 0.0, 1.0);
    assert_eq!(long[..256], first[..]);
}

#[test]
fn uniform_numbers_have_the_mean_variance_and_distribution_of_u_from_to() {
    let s = stream();
    let n = 20_000;
    let v: Vec<f64> = uniform(&Generator::new(7), &s, n, 2.0, 5.0)
        .into_iter()
        .map(f64::from)
        .collect();
    assert!(
        v.iter().all(|x| (2.0..5.0).contains(x)),
        "every draw in [2, 5)"
    );
    let (m, var) = mean_var(&v);
    assert!((m - 3.5).abs() < 0.03, "mean {m}");
    assert!((var - 0.75).abs() < 0.03, "variance {var}");
    let d = ks(&v, |x| ((x - 2.0) / 3.0).clamp(0.0, 1.0));
    assert!(d < ks_critical(n), "KS statistic {d}");
}

#[test]
fn uniform_integers_cover_the_half_open_range_evenly() {
    let s = stream();
    let mut x = Tensor::<i32>::zeros(&s, &[6000]).unwrap();
    Generator::new(3).uniform_(&s, &mut x, -2.0, 4.0).unwrap();
    let v = x.to_host_vec().unwrap();
    let mut counts = [0usize; 6];
    for &k in &v {
        assert!((-2..4).contains(&k), "{k} outside [-2, 4)");
        counts[(k + 2) as usize] += 1;
    }
    for c in counts {
        assert!((850..1150).contains(&c), "counts {counts:?}");
    }
    // Bounds that are not integers: the integers of [0.5, 3), 1 and 2.
    Generator::new(3).uniform_(&s, &mut x, 0.5, 3.0).unwrap();
    let v = x.to_host_vec().unwrap();
    assert!(v.iter().all(|k| (1..3).contains(k)), "{:?}", &v[..8]);
    assert!(v.contains(&1) && v.contains(&2));
}

#[test]
fn normal_numbers_have_the_mean_variance_and_distribution_asked_for() {
    let s = stream();
    let n = 20_000;
    let mut x = Tensor::<f32>::zeros(&s, &[n]).unwrap();
    Generator::new(99).normal_(&s, &mut x, 1.0, 2.0).unwrap();
    let v: Vec<f64> = x
        .to_host_vec()
        .unwrap()
        .into_iter()
        .map(f64::from)
        .collect();
    let (m, var) = mean_var(&v);
    assert!((m - 1.0).abs() < 0.05, "mean {m}");
    assert!((var - 4.0).abs() < 0.15, "variance {var}");
    let d = ks(&v, |x| {
        0.5 * (1.0 + libm_erf((x - 1.0) / (2.0 * 2f64.sqrt())))
    });
    assert!(d < ks_critical(n), "KS statistic {d}");
}

#[test]
fn bernoulli_draws_ones_at_the_rate_asked_for() {
    let s = stream();
    let n = 20_000;
    let mut x = Tensor::<f32>::zeros(&s, &[n]).unwrap();
    Generator::new(5).bernoulli_(&s, &mut x, 0.3).unwrap();
    let v = x.to_host_vec().unwrap();
    assert!(v.iter().all(|&b| b == 0.0 || b == 1.0));
    let rate = v.iter().sum::<f32>() as f64 / n as f64;
    // Four standard deviations of the rate.
    assert!(
        (rate - 0.3).abs() < 4.0 * (0.3f64 * 0.7 / n as f64).sqrt(),
        "rate {rate}"
    );
    // p = 0 and p = 1 are exact.
    Generator::new(5).bernoulli_(&s, &mut x, 1.0).unwrap();
    assert!(x.to_host_vec().unwrap().iter().all(|&b| b == 1.0));
}

#[test]
fn randperm_is_a_permutation_and_each_draw_a_new_one() {
    let s = stream();
    let g = Generator::new(11);
    let a = g
        .randperm_new::<i64>(&s, 1000)
        .unwrap()
        .to_host_vec()
        .unwrap();
    let b = g
        .randperm_new::<i64>(&s, 1000)
        .unwrap()
        .to_host_vec()
        .unwrap();
    for p in [&a, &b] {
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<i64>>());
    }
    assert_ne!(a, b);
    assert_ne!(a, (0..1000).collect::<Vec<i64>>(), "not the identity");
    // Positions are uniform: element 0 lands in each half about as often.
    let firsts: Vec<i64> = (0..400)
        .map(|_| {
            g.randperm_new::<i32>(&s, 10)
                .unwrap()
                .to_host_vec()
                .unwrap()[0] as i64
        })
        .collect();
    let low = firsts.iter().filter(|&&k| k < 5).count();
    assert!((160..240).contains(&low), "{low} of 400 below 5");
}

#[test]
fn multinomial_frequencies_follow_the_weights() {
    let s = stream();
    let g = Generator::new(21);
    // Unnormalised weights; the second row never draws a zero weight.
    let probs =
        Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0, 0.0, 1.0, 0.0, 3.0], &[2, 4]).unwrap();
    let n = 20_000;
    let draws = g.multinomial_new(&s, &probs, n, true).unwrap();
    assert_eq!(draws.shape(), [2, n]);
    let v = draws.to_host_vec().unwrap();
    let freq = |row: &[i64], k: i64| row.iter().filter(|&&x| x == k).count() as f64 / n as f64;
    for (k, p) in [0.1, 0.2, 0.3, 0.4].into_iter().enumerate() {
        let f = freq(&v[..n], k as i64);
        assert!((f - p).abs() < 0.015, "row 0 category {k}: {f} vs {p}");
    }
    assert_eq!(freq(&v[n..], 0) + freq(&v[n..], 2), 0.0);
    assert!((freq(&v[n..], 3) - 0.75).abs() < 0.015);
    // Without replacement: distinct categories, all of them when k = C.
    let w = g
        .multinomial_new(&s, &probs.view().select(0, 0).unwrap(), 4, false)
        .unwrap();
    let mut got = w.to_host_vec().unwrap();
    got.sort_unstable();
    assert_eq!(got, [0, 1, 2, 3]);
    // The heaviest category comes first more often than the lightest.
    let firsts: Vec<i64> = (0..300)
        .map(|_| {
            g.multinomial_new(&s, &probs.view().select(0, 0).unwrap(), 2, false)
                .unwrap()
                .to_host_vec()
                .unwrap()[0]
        })
        .collect();
    let count = |k| firsts.iter().filter(|&&x| x == k).count();
    assert!(
        count(3) > 2 * count(0),
        "first draws {:?}",
        [0, 1, 2, 3].map(count)
    );
}

#[test]
fn dropout_zeroes_at_rate_p_scales_the_rest_and_its_mask_is_reusable() {
    let s = stream();
    let n = 4096;
    let x = Tensor::from_host(&s, &vec![2.0f32; n], &[64, 64]).unwrap();
    let p = 0.25;
    let g = Generator::new(8);
    let (out, mask) = g.dropout_new(&s, &x, p, true).unwrap();
    assert_eq!(mask.shape(), [dropout_mask_len(n)]);
    let (o, m) = (out.to_host_vec().unwrap(), mask.to_host_vec().unwrap());
    let kept = 2.0 / (1.0 - p as f32);
    for (i, &v) in o.iter().enumerate() {
        let bit = m[i / 8] >> (i % 8) & 1;
        assert!(
            (bit == 1 && (v - kept).abs() < 1e-6) || (bit == 0 && v == 0.0),
            "element {i}: {v} with mask bit {bit}"
        );
    }
    let rate = o.iter().filter(|&&v| v == 0.0).count() as f64 / n as f64;
    assert!(
        (rate - p).abs() < 4.0 * (p * (1.0 - p) / n as f64).sqrt(),
        "rate {rate}"
    );
    // The same (seed, offset) through DropoutGenMask gives the same mask,
    // and DropoutDoMask applies it to the same output.
    let mut mask2 = Tensor::<u8>::zeros(&s, &[dropout_mask_len(n)]).unwrap();
    Generator::new(8)
        .dropout_mask(&s, &[64, 64], p, &mut mask2)
        .unwrap();
    assert_eq!(mask2.to_host_vec().unwrap(), m);
    let mut again = Tensor::<f32>::zeros(&s, &[64, 64]).unwrap();
    random::dropout_apply(&s, &x, &mask2, p, &mut again).unwrap();
    assert_eq!(again.to_host_vec().unwrap(), o);
    // Not training: the input itself.
    let (eval, _) = g.dropout_new(&s, &x, p, false).unwrap();
    assert_eq!(eval.to_host_vec().unwrap(), vec![2.0; n]);
}

#[test]
fn a_draw_into_a_strided_view_writes_only_the_view() {
    let s = stream();
    let mut m = Tensor::from_host(&s, &[-1.0f32; 12], &[3, 4]).unwrap();
    let col = m.view_mut().select(1, 2).unwrap();
    let mut col = col;
    Generator::new(1).uniform_(&s, &mut col, 0.0, 1.0).unwrap();
    let v = m.to_host_vec().unwrap();
    for (i, x) in v.iter().enumerate() {
        if i % 4 == 2 {
            assert!((0.0..1.0).contains(x), "{i}: {x}");
        } else {
            assert_eq!(*x, -1.0, "{i}");
        }
    }
}

#[test]
fn threads_sharing_a_generator_never_draw_the_same_numbers() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Generator>();
    let g = Arc::new(Generator::new(77));
    let draws: Vec<Vec<f32>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let g = Arc::clone(&g);
                sc.spawn(move || {
                    let s = stream();
                    (0..10)
                        .map(|_| uniform(&g, &s, 64, 0.0, 1.0))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(g.offset(), 20 * 12, "every draw took its own offset");
    for i in 0..draws.len() {
        for j in i + 1..draws.len() {
            assert_ne!(draws[i], draws[j], "draws {i} and {j}");
        }
    }
}

#[test]
fn drawing_on_a_capturing_stream_is_refused_and_takes_no_offset() {
    // A device of its own: a GLOBAL capture refuses the synchronous calls
    // of every thread of the context, the other tests' uploads included.
    let s = common::device(6).new_stream().expect("stream");
    let g = Generator::new(1);
    let mut x = Tensor::<f32>::zeros(&s, &[4]).unwrap();
    s.synchronize().unwrap();
    let r = s.capture(CaptureMode::Global, |s| g.uniform_(s, &mut x, 0.0, 1.0));
    let (f, why) = invalid(r.unwrap_err());
    assert_eq!(f, "Generator::uniform_");
    assert!(why.starts_with("the stream is capturing a graph"), "{why}");
    assert_eq!(g.offset(), 0);
}

#[test]
fn each_misuse_has_its_exact_error() {
    let s = stream();
    let g = Generator::new(0);
    let mut x = Tensor::<f32>::zeros(&s, &[8]).unwrap();
    let (code, f, msg) = status(g.uniform_(&s, &mut x, 2.0, 1.0).unwrap_err());
    assert_eq!((code, f), (161002, "aclnnInplaceUniformGetWorkspaceSize"));
    assert!(msg.contains("from = 2 is greater than to = 1"), "{msg}");
    let (code, _, msg) = status(g.normal_(&s, &mut x, 0.0, -1.0).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("std = -1 is negative"), "{msg}");
    let mut ints = Tensor::<i32>::zeros(&s, &[8]).unwrap();
    let (code, f, _) = status(g.normal_(&s, &mut ints, 0.0, 1.0).unwrap_err());
    assert_eq!((code, f), (161002, "aclnnInplaceNormalGetWorkspaceSize"));
    let (code, _, msg) = status(g.bernoulli_(&s, &mut x, 1.5).unwrap_err());
    assert_eq!(code, 161002);
    assert!(msg.contains("prob = 1.5 is not in [0, 1]"), "{msg}");
    // The page's offset rule of InplaceBernoulli, at the C level.
    let mut buf = s.alloc_zeros::<f32>(8).unwrap();
    let (code, _, msg) = status(
        aclnn::bernoulli_(
            &s,
            &mut TensorArgMut::new(&mut buf, &[8]).unwrap(),
            &Scalar::new(0.5).unwrap(),
            1,
            2,
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(msg.contains("offset 2 is not a multiple of 4"), "{msg}");

    let mut perm = Tensor::<i64>::zeros(&s, &[9]).unwrap();
    let (f, why) = invalid(g.randperm(&s, 10, &mut perm).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        ("Generator::randperm", "out has shape [9], not [10]")
    );

    let probs = Tensor::from_host(&s, &[1.0f32, 1.0, 1.0], &[3]).unwrap();
    let (f, why) = invalid(g.multinomial_new(&s, &probs, 4, false).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        (
            "Generator::multinomial",
            "4 samples without replacement from 3 categories"
        )
    );
    let cube = Tensor::from_host(&s, &[1.0f32; 8], &[2, 2, 2]).unwrap();
    let (_, why) = invalid(g.multinomial_new(&s, &cube, 1, true).unwrap_err());
    assert_eq!(why, "probs has shape [2, 2, 2]; it must be [C] or [N, C]");
    let (_, why) = invalid(g.multinomial_new(&s, &probs, 0, true).unwrap_err());
    assert_eq!(why, "num_samples is 0");
    // Negative weights: the kernel's fault, reported by the synchronisation
    // (on a stream of its own).
    let faulty = stream();
    let bad = Tensor::from_host(&faulty, &[1.0f32, -1.0], &[2]).unwrap();
    let _draw = g.multinomial_new(&faulty, &bad, 1, true).unwrap();
    let e = faulty.synchronize().unwrap_err();
    assert!(
        e.to_string()
            .contains("weights must be finite and not negative"),
        "{e}"
    );

    let mut small = Tensor::<u8>::zeros(&s, &[8]).unwrap();
    let mut out = Tensor::<f32>::zeros(&s, &[8]).unwrap();
    let (f, why) = invalid(
        g.dropout(&s, &x, 0.5, true, &mut out, &mut small)
            .unwrap_err(),
    );
    assert_eq!(
        (f, why.as_str()),
        (
            "Generator::dropout",
            "mask has shape [8]; a dropout of 8 elements needs [16] bytes"
        )
    );
    let (code, f, msg) = status(g.dropout_new(&s, &x, 2.0, true).unwrap_err());
    assert_eq!((code, f), (161002, "aclnnDropoutGetWorkspaceSize"));
    assert!(msg.contains("p = 2 is not in [0, 1]"), "{msg}");
    let mask = Tensor::<u8>::zeros(&s, &[16]).unwrap();
    let big = Tensor::<f32>::zeros(&s, &[200]).unwrap();
    let mut big_out = Tensor::<f32>::zeros(&s, &[200]).unwrap();
    let (f, why) = invalid(random::dropout_apply(&s, &big, &mask, 0.5, &mut big_out).unwrap_err());
    assert_eq!(
        (f, why.as_str()),
        (
            "random::dropout_apply",
            "mask holds 16 bytes; 200 elements need 32"
        )
    );
}

/// Dropout in a captured step: the mask is drawn before each launch
/// (queued on the stream, no host synchronisation) and applied inside the
/// graph, so every replay drops other elements.
#[test]
fn a_captured_step_applies_a_mask_drawn_before_each_launch() {
    // A device of its own (see above).
    let s = common::device(5).new_stream().expect("stream");
    let n = 256;
    let x = Tensor::from_host(&s, &vec![1.0f32; n], &[n]).unwrap();
    let mut mask = Tensor::<u8>::zeros(&s, &[dropout_mask_len(n)]).unwrap();
    let mut out = Tensor::<f32>::zeros(&s, &[n]).unwrap();
    s.synchronize().unwrap();
    let (graph, ()) = s
        .capture(CaptureMode::Global, |s| {
            random::dropout_apply(s, &x, &mask, 0.5, &mut out)
        })
        .unwrap();
    let g = Generator::new(4);
    let mut outs = Vec::new();
    for _ in 0..2 {
        g.dropout_mask(&s, &[n], 0.5, &mut mask).unwrap();
        graph.launch(&s).unwrap();
        outs.push(out.to_host_vec().unwrap());
    }
    for o in &outs {
        assert!(o.iter().all(|&v| v == 0.0 || v == 2.0));
        let kept = o.iter().filter(|&&v| v == 2.0).count();
        assert!((96..160).contains(&kept), "{kept} of {n} kept");
    }
    assert_ne!(outs[0], outs[1], "each launch used its own mask");
}

//! aclnnFusedInferAttentionScoreV2's options beyond dense attention,
//! through the generated `acl::aclnn` wrapper on cann-sim, against a host
//! reference: the position bias (`pseShift`, added to the scaled scores),
//! valid lengths per batch, sparse modes 0 (with the preTokens/nextTokens
//! band), 2 and 3 (causal, with the compressed 2048 × 2048 mask), 4 (the
//! preTokens/nextTokens band from the bottom right), and the
//! refusals with their exact status (hicann/ops-transformer
//! `attention/fused_infer_attention_score/docs/aclnnFusedInferAttentionScoreV2.md`).

mod common;

use acl::aclnn::{self, IntArray, TensorArg, TensorArgMut, TensorList};
use acl::memory::Bool;
use acl::{DeviceBuffer, Error, Stream};
use half::{bf16, f16};

const B: usize = 2;
const N: usize = 2;
const NKV: usize = 1;
const SQ: usize = 3;
const SKV: usize = 4;
const D: usize = 2;

fn stream() -> Stream {
    common::device(0).new_stream().expect("stream")
}

fn values(len: usize, m: usize) -> Vec<f64> {
    (0..len)
        .map(|i| ((i * m % 17) as f64 - 8.0) / 8.0)
        .collect()
}

fn halves(x: &[f64]) -> Vec<f16> {
    x.iter().map(|&v| f16::from_f64(v)).collect()
}

/// The inputs, rounded to f16 as the device holds them.
struct Inputs {
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    pse: Vec<f64>,
}

fn inputs() -> Inputs {
    let r = |x: Vec<f64>| x.iter().map(|&v| f16::from_f64(v).to_f64()).collect();
    Inputs {
        q: r(values(B * N * SQ * D, 7)),
        k: r(values(B * NKV * SKV * D, 5)),
        v: r(values(B * NKV * SKV * D, 3)),
        pse: r(values(B * N * SQ * SKV, 11)),
    }
}

/// softmax(scale · q kᵀ + bias) v over the keys `visible(b, s, t)` keeps;
/// rows with no visible key are zeros.
fn host(
    x: &Inputs,
    scale: f64,
    with_pse: bool,
    visible: impl Fn(usize, usize, usize) -> bool,
) -> Vec<f64> {
    let mut y = vec![0.0; B * N * SQ * D];
    for b in 0..B {
        for n in 0..N {
            let kn = n / (N / NKV);
            for s in 0..SQ {
                let scores: Vec<Option<f64>> = (0..SKV)
                    .map(|t| {
                        visible(b, s, t).then(|| {
                            let dot: f64 = (0..D)
                                .map(|d| {
                                    x.q[((b * N + n) * SQ + s) * D + d]
                                        * x.k[((b * NKV + kn) * SKV + t) * D + d]
                                })
                                .sum();
                            let bias = if with_pse {
                                x.pse[((b * N + n) * SQ + s) * SKV + t]
                            } else {
                                0.0
                            };
                            scale * dot + bias
                        })
                    })
                    .collect();
                let best = scores
                    .iter()
                    .flatten()
                    .cloned()
                    .fold(f64::NEG_INFINITY, f64::max);
                if best == f64::NEG_INFINITY {
                    continue;
                }
                let w: Vec<f64> = scores
                    .iter()
                    .map(|o| o.map_or(0.0, |v| (v - best).exp()))
                    .collect();
                let sum: f64 = w.iter().sum();
                for d in 0..D {
                    y[((b * N + n) * SQ + s) * D + d] = (0..SKV)
                        .map(|t| w[t] * x.v[((b * NKV + kn) * SKV + t) * D + d])
                        .sum::<f64>()
                        / sum;
                }
            }
        }
    }
    y
}

/// One call's options.
#[derive(Default)]
struct Opts<'a> {
    pse: Option<&'a DeviceBuffer<f16>>,
    pse_bf16: Option<&'a DeviceBuffer<bf16>>,
    mask: Option<(&'a DeviceBuffer<Bool>, &'a [usize])>,
    q_lens: Option<&'a [i64]>,
    kv_lens: Option<&'a [i64]>,
    sparse: i64,
    band: Option<(i64, i64)>,
    /// Block caches of key and value with their shape, the block table and
    /// the block size (page attention) instead of `x`'s dense ones.
    paged: Option<Paged<'a>>,
}

struct Paged<'a> {
    k: &'a DeviceBuffer<f16>,
    v: &'a DeviceBuffer<f16>,
    shape: &'a [usize],
    table: &'a DeviceBuffer<i32>,
    block_size: i64,
}

/// Runs the operator on `x` (BNSD, f16) with `o`; the output as f64.
fn run(s: &Stream, x: &Inputs, scale: f64, o: Opts<'_>) -> Result<Vec<f64>, Error> {
    let up = |v: &[f64]| s.clone_from_host(&halves(v)).unwrap();
    let (dq, dk, dv) = (up(&x.q), up(&x.k), up(&x.v));
    let mut out = s.alloc_zeros::<f16>(B * N * SQ * D).unwrap();
    {
        let tq = TensorArg::new(&dq, &[B, N, SQ, D])?;
        let (kl, vl) = match &o.paged {
            Some(p) => (
                TensorList::new(vec![TensorArg::new(p.k, p.shape)?])?,
                TensorList::new(vec![TensorArg::new(p.v, p.shape)?])?,
            ),
            None => (
                TensorList::new(vec![TensorArg::new(&dk, &[B, NKV, SKV, D])?])?,
                TensorList::new(vec![TensorArg::new(&dv, &[B, NKV, SKV, D])?])?,
            ),
        };
        let table = o
            .paged
            .as_ref()
            .map(|p| TensorArg::new(p.table, &[B, 2]))
            .transpose()?;
        let pse = match (o.pse, o.pse_bf16) {
            (Some(p), _) => Some(TensorArg::new(p, &[B, N, SQ, SKV])?),
            (_, Some(p)) => Some(TensorArg::new(p, &[B, N, SQ, SKV])?),
            _ => None,
        };
        let mask = o
            .mask
            .map(|(m, shape)| TensorArg::new(m, shape))
            .transpose()?;
        let q_lens = o.q_lens.map(IntArray::new).transpose()?;
        let kv_lens = o.kv_lens.map(IntArray::new).transpose()?;
        let (pre, next) = o.band.unwrap_or((2147483647, 2147483647));
        let mut to = TensorArgMut::new(&mut out, &[B, N, SQ, D])?;
        aclnn::fused_infer_attention_score_v2(
            s,
            &tq,
            &kl,
            &vl,
            pse.as_ref(),
            mask.as_ref(),
            q_lens.as_ref(),
            kv_lens.as_ref(),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            table.as_ref(),
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            N as i64,
            scale,
            pre,
            next,
            c"BNSD",
            NKV as i64,
            o.sparse,
            0,
            o.paged.as_ref().map_or(0, |p| p.block_size),
            0,
            false,
            0,
            0,
            &mut to,
            None,
        )?;
    }
    Ok(out.to_host_vec()?.iter().map(|v| v.to_f64()).collect())
}

/// The shape of the compressed mask of sparse modes 2 to 4.
const COMPRESSED: &[usize] = &[2048, 2048];

/// The compressed mask of sparse modes 2 to 4: 1 above the diagonal (its
/// lower triangle is the caller's promise; the simulator takes the
/// diagonal from the mode and does not read it).
fn compressed_mask(s: &Stream) -> DeviceBuffer<Bool> {
    let tri: Vec<Bool> = (0..2048 * 2048)
        .map(|i| Bool::from(i % 2048 > i / 2048))
        .collect();
    s.clone_from_host(&tri).unwrap()
}

fn close(got: &[f64], want: &[f64], what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 4e-3 * (1.0 + w.abs()),
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

fn status(e: Error) -> (i32, String) {
    match e {
        Error::Acl { code, message, .. } => (code.raw(), message.unwrap_or_default()),
        other => panic!("not an aclnn status: {other:?}"),
    }
}

#[test]
fn the_position_bias_is_added_to_the_scaled_scores() {
    let (s, x) = (stream(), inputs());
    let pse = s.clone_from_host(&halves(&x.pse)).unwrap();
    let got = run(
        &s,
        &x,
        0.5,
        Opts {
            pse: Some(&pse),
            ..Opts::default()
        },
    )
    .unwrap();
    close(&got, &host(&x, 0.5, true, |_, _, _| true), "pse");
    // Without it the result differs: the bias took part.
    let plain = run(&s, &x, 0.5, Opts::default()).unwrap();
    assert!(got.iter().zip(&plain).any(|(a, b)| (a - b).abs() > 1e-2));
}

#[test]
fn valid_lengths_hide_keys_and_zero_the_rows_past_them() {
    let (s, x) = (stream(), inputs());
    // Batch 0 sees 2 keys, batch 1 all 4; every batch has 2 valid rows.
    let got = run(
        &s,
        &x,
        0.5,
        Opts {
            q_lens: Some(&[2]),
            kv_lens: Some(&[2, 4]),
            ..Opts::default()
        },
    )
    .unwrap();
    let want = host(&x, 0.5, false, |b, q, t| q < 2 && t < [2, 4][b]);
    close(&got, &want, "lengths");
    assert!(
        want[((N * SQ) + 2) * D..((N * SQ) + 3) * D]
            .iter()
            .all(|&v| v == 0.0)
    );
}

#[test]
fn causal_sparse_modes_follow_the_top_left_and_bottom_right_diagonals() {
    let (s, x) = (stream(), inputs());
    let (m, shape) = (compressed_mask(&s), COMPRESSED);
    let top_left = run(
        &s,
        &x,
        0.5,
        Opts {
            mask: Some((&m, shape)),
            sparse: 2,
            ..Opts::default()
        },
    )
    .unwrap();
    close(
        &top_left,
        &host(&x, 0.5, false, |_, q, t| t <= q),
        "sparseMode 2",
    );
    let bottom_right = run(
        &s,
        &x,
        0.5,
        Opts {
            mask: Some((&m, shape)),
            sparse: 3,
            ..Opts::default()
        },
    )
    .unwrap();
    close(
        &bottom_right,
        &host(&x, 0.5, false, |_, q, t| t <= q + SKV - SQ),
        "sparseMode 3",
    );
}

#[test]
fn sparse_mode_4_keeps_the_token_band_anchored_at_the_bottom_right_per_batch() {
    // hicann/ops-transformer attention/prompt_flash_attention/op_host/
    // prompt_flash_attention_tiling.cpp (GetPreNextTokensLeftUp, and per
    // batch with the actual lengths): the band of mode 4 is the top-left
    // band of preTokens − (Skv − Sq) and nextTokens + (Skv − Sq), so query
    // row q sees the keys t with q + Skv − Sq − preTokens ≤ t ≤
    // q + Skv − Sq + nextTokens.
    let (s, x) = (stream(), inputs());
    let (m, shape) = (compressed_mask(&s), COMPRESSED);
    let band = |q: usize, t: usize, sq: usize, skv: usize, pre: i64, next: i64| {
        let shift = (q + skv) as i64 - sq as i64;
        (shift - pre..=shift + next).contains(&(t as i64))
    };
    for (pre, next) in [(1, 0), (0, 1), (2, -1), (-1, 2)] {
        let got = run(
            &s,
            &x,
            0.5,
            Opts {
                mask: Some((&m, shape)),
                sparse: 4,
                band: Some((pre, next)),
                ..Opts::default()
            },
        )
        .unwrap();
        let want = host(&x, 0.5, false, |_, q, t| band(q, t, SQ, SKV, pre, next));
        close(&got, &want, &format!("sparseMode 4, band ({pre}, {next})"));
    }
    // With actual lengths the anchor moves per batch: batch 0 has 2 keys,
    // batch 1 has 4 (every batch 3 query rows).
    let got = run(
        &s,
        &x,
        0.5,
        Opts {
            mask: Some((&m, shape)),
            sparse: 4,
            band: Some((1, 0)),
            kv_lens: Some(&[2, 4]),
            ..Opts::default()
        },
    )
    .unwrap();
    let kv = [2, 4];
    let want = host(&x, 0.5, false, |b, q, t| {
        t < kv[b] && band(q, t, SQ, kv[b], 1, 0)
    });
    close(&got, &want, "sparseMode 4 with actualSeqLengthsKv");
    // Batch 0, row 0 sees no key (its band starts before key 0 and ends
    // at −1): zeros, as the release's rows without a key.
    assert!(want[..D].iter().all(|&v| v == 0.0));
    // Both token counts negative: refused.
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                mask: Some((&m, shape)),
                sparse: 4,
                band: Some((-1, -1)),
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("preTokens -1 and nextTokens -1 must not both be negative"),
        "{msg}"
    );
}

#[test]
fn mode_0_applies_the_token_band_only_with_a_mask() {
    let (s, x) = (stream(), inputs());
    let none = s.clone_from_host(&[Bool::FALSE; SQ * SKV]).unwrap();
    let shape: &[usize] = &[SQ, SKV];
    let got = run(
        &s,
        &x,
        0.5,
        Opts {
            mask: Some((&none, shape)),
            band: Some((0, 1)),
            ..Opts::default()
        },
    )
    .unwrap();
    close(
        &got,
        &host(&x, 0.5, false, |_, q, t| t >= q && t <= q + 1),
        "band",
    );
    // Without a mask the band is ignored ("内部赋值为INT_MAX").
    let free = run(
        &s,
        &x,
        0.5,
        Opts {
            band: Some((0, 0)),
            ..Opts::default()
        },
    )
    .unwrap();
    close(&free, &host(&x, 0.5, false, |_, _, _| true), "no mask");
}

#[test]
fn options_the_operator_refuses_fail_with_their_status() {
    let (s, x) = (stream(), inputs());
    let small = s.clone_from_host(&[Bool::FALSE; SQ * SKV]).unwrap();
    let shape: &[usize] = &[SQ, SKV];
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                sparse: 1,
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(msg.contains("sparseMode 1 needs an attenMask"), "{msg}");
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                mask: Some((&small, shape)),
                sparse: 2,
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("takes the compressed attenMask of [2048, 2048]"),
        "{msg}"
    );
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                sparse: 9,
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("sparseMode 9 is not supported (0 to 4)"),
        "{msg}"
    );
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                mask: Some((&small, shape)),
                sparse: 4,
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("sparseMode 4 takes the compressed attenMask"),
        "{msg}"
    );
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                kv_lens: Some(&[5]),
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("actualSeqLengthsKv value 5 is not in [0, 4]"),
        "{msg}"
    );
    let pse = s.clone_from_host(&[bf16::ZERO; B * N * SQ * SKV]).unwrap();
    let (code, msg) = status(
        run(
            &s,
            &x,
            0.5,
            Opts {
                pse_bf16: Some(&pse),
                ..Opts::default()
            },
        )
        .unwrap_err(),
    );
    assert_eq!(code, 161002);
    assert!(
        msg.contains("pseShift is bfloat16 for a float16 query"),
        "{msg}"
    );
}

#[test]
fn a_mask_padded_past_the_sequence_lengths_is_read_at_its_own_strides() {
    let (s, x) = (stream(), inputs());
    // [B, 1, 16, 8]: rows and columns padded ("可以向上取到对齐的S");
    // hide key t = s + 1 of each row in batch 1 only.
    let (ps, pk) = (16usize, 8usize);
    let m: Vec<Bool> = (0..B * ps * pk)
        .map(|i| {
            let (b, r, c) = (i / (ps * pk), i / pk % ps, i % pk);
            Bool::from(b == 1 && c == r + 1)
        })
        .collect();
    let m = s.clone_from_host(&m).unwrap();
    let shape: &[usize] = &[B, 1, ps, pk];
    let got = run(
        &s,
        &x,
        0.5,
        Opts {
            mask: Some((&m, shape)),
            ..Opts::default()
        },
    )
    .unwrap();
    close(
        &got,
        &host(&x, 0.5, false, |b, q, t| !(b == 1 && t == q + 1)),
        "padded mask",
    );
}

/// Block caches holding `x`'s keys and values: batch 0 in block 2, batch 1
/// in block 0, of 4 blocks of 128 rows; `heads_inner` picks
/// `[blocks, 128, NKV·D]` (BnBsH) over `[blocks, NKV, 128, D]` (BnNBsD).
fn caches(x: &[f64], heads_inner: bool) -> Vec<f16> {
    let (blocks, size) = (4usize, 128usize);
    let mut c = vec![f16::from_f64(99.0); blocks * size * NKV * D];
    for (b, blk) in [(0usize, 2usize), (1, 0)] {
        for n in 0..NKV {
            for t in 0..SKV {
                for d in 0..D {
                    let at = if heads_inner {
                        ((blk * size + t) * NKV + n) * D + d
                    } else {
                        ((blk * NKV + n) * size + t) * D + d
                    };
                    c[at] = f16::from_f64(x[((b * NKV + n) * SKV + t) * D + d]);
                }
            }
        }
    }
    c
}

/// Page attention on `x` with the block table `table` (`[B, 2]`).
fn run_paged(
    s: &Stream,
    x: &Inputs,
    heads_inner: bool,
    (table, block_size): (&[i32], i64),
    kv_lens: Option<&[i64]>,
) -> Result<Vec<f64>, Error> {
    let (k, v) = (
        s.clone_from_host(&caches(&x.k, heads_inner)).unwrap(),
        s.clone_from_host(&caches(&x.v, heads_inner)).unwrap(),
    );
    let table = s.clone_from_host(table).unwrap();
    let shape: &[usize] = if heads_inner {
        &[4, 128, NKV * D]
    } else {
        &[4, NKV, 128, D]
    };
    let paged = Paged {
        k: &k,
        v: &v,
        shape,
        table: &table,
        block_size,
    };
    run(
        s,
        x,
        0.5,
        Opts {
            kv_lens,
            paged: Some(paged),
            ..Opts::default()
        },
    )
}

#[test]
fn page_attention_reads_keys_and_values_through_the_block_table() {
    let (s, x) = (stream(), inputs());
    // Batch 0's second block is unused (-1, as frameworks pad tables).
    let table: &[i32] = &[2, -1, 0, 3];
    for heads_inner in [true, false] {
        let got = run_paged(&s, &x, heads_inner, (table, 128), Some(&[3, 4])).unwrap();
        let want = host(&x, 0.5, false, |b, _, t| t < [3, 4][b]);
        close(&got, &want, if heads_inner { "BnBsH" } else { "BnNBsD" });
    }
}

#[test]
fn page_attention_misuse_fails_with_its_status() {
    let (s, x) = (stream(), inputs());
    let table: &[i32] = &[2, -1, 0, 3];
    let (code, msg) = status(run_paged(&s, &x, true, (table, 128), None).unwrap_err());
    assert_eq!(code, 161002);
    assert!(
        msg.contains("page attention needs actualSeqLengthsKv"),
        "{msg}"
    );
    let (code, msg) = status(run_paged(&s, &x, true, (table, 100), Some(&[4])).unwrap_err());
    assert_eq!(code, 161002);
    assert!(
        msg.contains("blockSize 100 must be 128, 256, 384 or 512"),
        "{msg}"
    );
    // A block id beyond the caches, in a position the lengths use: the
    // release does not check ids; the simulator fails the launch instead
    // of reading outside the cache.
    let bad: &[i32] = &[7, -1, 0, 3];
    let e = run_paged(&s, &x, true, (bad, 128), Some(&[4])).unwrap_err();
    let (code, msg) = status(e);
    assert_eq!(code, 507015, "ACL_ERROR_RT_AICORE_EXCEPTION");
    assert!(
        msg.contains("the blockTable entry of batch 0, key 0 is not a block of the caches"),
        "{msg}"
    );
}

#[test]
fn typed_paged_attention_matches_the_host_and_checks_its_shapes() {
    use acl::Tensor;
    use acl::ops::{PagedKv, paged_attention_new};
    let (s, x) = (stream(), inputs());
    let q = Tensor::from_host(&s, &halves(&x.q), &[B, N, SQ, D]).unwrap();
    let k = Tensor::from_host(&s, &caches(&x.k, true), &[4, 128, NKV * D]).unwrap();
    let v = Tensor::from_host(&s, &caches(&x.v, true), &[4, 128, NKV * D]).unwrap();
    let table = Tensor::from_host(&s, &[2i32, -1, 0, 3], &[B, 2]).unwrap();
    let kv = PagedKv {
        key: k.view(),
        value: v.view(),
        block_table: table.view(),
        lengths: &[3, 4],
        kv_heads: NKV,
    };
    // SAFETY: the lengths reach blocks 2 and 0 of the 4 in the caches.
    let got: Vec<f64> = unsafe { paged_attention_new(&s, &q, &kv, None, 0.5) }
        .unwrap()
        .to_host_vec()
        .unwrap()
        .iter()
        .map(|v| v.to_f64())
        .collect();
    close(
        &got,
        &host(&x, 0.5, false, |b, _, t| t < [3, 4][b]),
        "ops::paged_attention",
    );
    let invalid = |e: Error| match e {
        Error::InvalidArgument { function, reason } => {
            assert_eq!(function, "ops::paged_attention");
            reason
        }
        other => panic!("not InvalidArgument: {other:?}"),
    };
    let long = PagedKv {
        lengths: &[3, 257],
        ..kv
    };
    // SAFETY: refused before the operator runs (lengths beyond the table).
    let msg = invalid(unsafe { paged_attention_new(&s, &q, &long, None, 0.5) }.unwrap_err());
    assert_eq!(
        msg,
        "lengths [3, 257]: one per sequence (2), each at most the 256 keys a table row holds"
    );
    let small = Tensor::<f16>::zeros(&s, &[4, 64, NKV * D]).unwrap();
    let odd = PagedKv {
        key: small.view(),
        value: small.view(),
        ..kv
    };
    // SAFETY: refused before the operator runs (block size 64).
    let msg = invalid(unsafe { paged_attention_new(&s, &q, &odd, None, 0.5) }.unwrap_err());
    assert_eq!(msg, "block size 64; it must be 128, 256, 384 or 512");
}

//! The random-number kernels (`aclnnInplaceUniform`, `aclnnInplaceNormal`,
//! `aclnnInplaceBernoulli`, `aclnnRandperm`, `aclnnMultinomial`,
//! `aclnnDropout`, `aclnnDropoutGenMask`, `aclnnDropoutDoMask`) on a
//! counter-based generator: Philox4x32-10 (Salmon et al., "Parallel random
//! numbers: as easy as 1, 2, 3", SC 2011), written here from the paper's
//! round function and constants.
//!
//! # The (seed, offset) contract
//!
//! The release's operators take a `seed` and an `offset` and nothing else:
//! torch_npu's generator hands them out and advances the offset after each
//! call (`NPUGeneratorImpl::philox_engine_inputs`, by a multiple of 4;
//! op-plugin `op_plugin/utils/RandomUtil.h`). The simulator keeps that
//! contract exactly:
//!
//! - Element (or draw) `i` of a call reads its own *subsequence* `i` of the
//!   stream of `seed`: 32-bit words `offset, offset + 1, …, offset + 3` of
//!   it, where word `p` of subsequence `i` is word `p mod 4` of the Philox
//!   block at counter `(p / 4, i)` under key `seed`. Every call uses at most
//!   these 4 words per subsequence, so two calls whose offsets differ by 4 or
//!   more (as the generator's increments do) never share a word.
//! - The output depends on `(seed, offset)`, the shape and the operator's
//!   arguments only: not on threads, streams, or how the work is split.
//!
//! # What differs from the hardware
//!
//! The bits: the device maps counters to threads by its own tiling (and
//! uses its own transforms to floats), so a seeded simulator run does not
//! reproduce a device run number for number. What is guaranteed is the
//! distribution, tested at fixed seeds: uniform in `[from, to)` (53-bit
//! uniforms; a float that rounds up to `to` in a narrow type is `from`),
//! normal by the Box–Muller transform, Bernoulli, a uniform permutation
//! (sort by 64-bit keys, ties by index), multinomial by the inverse CDF
//! (with replacement) or exponential races (without), and dropout keeping an
//! element when its uniform is at least `p`.

use super::native::{Native, read, write, write_i64};
use super::{DType, Input, OpError, Output, TensorSpec, fmt_shape};
use crate::ops::nn::Kernel;

type Res<T> = Result<T, OpError>;

fn err<T>(msg: String) -> Res<T> {
    Err(OpError::Input(msg))
}

// ---------------------------------------------------------------------------
// Philox4x32-10.
// ---------------------------------------------------------------------------

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// One Philox4x32 block: 10 rounds over `ctr` under `key`.
pub fn philox4x32_10(key: [u32; 2], ctr: [u32; 4]) -> [u32; 4] {
    let (mut k, mut c) = (key, ctr);
    for _ in 0..10 {
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
        k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
    }
    c
}

/// The random stream of one call: `seed` and the call's `offset`.
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    key: [u32; 2],
    offset: u64,
}

impl Stream {
    /// The stream of `seed` at `offset` (in 32-bit words of each
    /// subsequence).
    pub fn new(seed: u64, offset: u64) -> Stream {
        Stream {
            key: [seed as u32, (seed >> 32) as u32],
            offset,
        }
    }

    fn block(&self, counter: u64, sub: u64) -> [u32; 4] {
        philox4x32_10(
            self.key,
            [
                counter as u32,
                (counter >> 32) as u32,
                sub as u32,
                (sub >> 32) as u32,
            ],
        )
    }

    /// Words `offset .. offset + 4` of subsequence `sub`.
    pub fn words(&self, sub: u64) -> [u32; 4] {
        let (q, r) = (self.offset / 4, (self.offset % 4) as usize);
        let a = self.block(q, sub);
        if r == 0 {
            return a;
        }
        let b = self.block(q.wrapping_add(1), sub);
        let mut w = [0u32; 4];
        for (j, x) in w.iter_mut().enumerate() {
            let p = r + j;
            *x = if p < 4 { a[p] } else { b[p - 4] };
        }
        w
    }

    /// Two uniforms in `[0, 1)` (53 bits each) of subsequence `sub`.
    pub fn uniforms(&self, sub: u64) -> [f64; 2] {
        let w = self.words(sub);
        [unit(w[0], w[1]), unit(w[2], w[3])]
    }

    /// A 64-bit key of subsequence `sub`.
    fn key64(&self, sub: u64) -> u64 {
        let w = self.words(sub);
        (u64::from(w[0]) << 32) | u64::from(w[1])
    }
}

/// A uniform in `[0, 1)` from two words (53 bits).
fn unit(a: u32, b: u32) -> f64 {
    let bits = ((u64::from(a) << 32) | u64::from(b)) >> 11;
    bits as f64 * (1.0 / (1u64 << 53) as f64)
}

// ---------------------------------------------------------------------------
// Checks shared by the kernels.
// ---------------------------------------------------------------------------

fn dtype_in(name: &str, what: &str, d: DType, ok: &[DType]) -> Res<()> {
    if ok.contains(&d) {
        return Ok(());
    }
    let list: Vec<&str> = ok.iter().map(|d| d.name()).collect();
    err(format!(
        "{name}: {what} is {}, which the operator does not take (it takes {})",
        d.name(),
        list.join(", ")
    ))
}

fn rank_at_most(name: &str, what: &str, s: &TensorSpec, max: usize) -> Res<()> {
    if s.shape.len() > max {
        return err(format!(
            "{name}: {what} has {} dimensions {}; at most {max} are supported",
            s.shape.len(),
            fmt_shape(&s.shape)
        ));
    }
    Ok(())
}

fn prob_in_range(name: &str, what: &str, p: f64) -> Res<()> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        err(format!("{name}: {what} = {p} is not in [0, 1]"))
    }
}

use DType::*;

/// The element types of `aclnnInplaceUniform` (hicann/ops-math
/// `random/dsa_random_uniform/docs/aclnnInplaceUniform.md`).
const UNIFORM_TYPES: &[DType] = &[F32, I32, I64, BF16, F16, I16, I8, U8, F64];
/// `aclnnInplaceNormal` on Atlas A2/A3 (`dsa_random_normal/docs/
/// aclnnInplaceNormal.md`: the integer and bool types are 950 only).
const NORMAL_TYPES: &[DType] = &[F32, BF16, F16, F64];
/// `aclnnInplaceBernoulli` (`stateless_bernoulli/docs/...`).
const BERNOULLI_TYPES: &[DType] = &[F16, F32, F64, U8, I8, I16, I32, I64, Bool, BF16];
/// `aclnnRandperm`'s `out` (`stateless_randperm/docs/aclnnRandperm.md`).
const RANDPERM_TYPES: &[DType] = &[I64, I32, I16, U8, I8, F32, F16, F64, BF16];
/// The float types of dropout (`dsa_gen_bit_mask/docs/aclnnDropout.md`,
/// `drop_out_do_mask/docs/aclnnDropoutDoMask.md`).
const DROPOUT_TYPES: &[DType] = &[BF16, F16, F32];
/// `aclnnMultinomial`'s `self` (`stateless_sample_multinomial/docs/
/// aclnnMultinomial.md`).
const MULTINOMIAL_TYPES: &[DType] = &[BF16, F16, F32, F64];

/// Writes `vals` (floats in `[from, to)`) into `out`; a value that rounds up
/// to `to` in `out`'s type becomes `from`, keeping the interval half-open.
fn write_below(out: &mut Output<'_>, mut vals: Vec<f64>, from: f64, to: f64) {
    write(out, &vals);
    if from < to && matches!(out.spec.dtype, F16 | BF16 | F32) {
        let stored = super::dtype::load_f64(out.spec.dtype, out.data);
        let mut fixed = false;
        for (v, s) in vals.iter_mut().zip(&stored) {
            if *s >= to {
                *v = from;
                fixed = true;
            }
        }
        if fixed {
            write(out, &vals);
        }
    }
}

// ---------------------------------------------------------------------------
// Kernels.
// ---------------------------------------------------------------------------

/// `aclnnInplaceUniform`: `x` filled with uniform numbers in `[from, to)`
/// (integer types: the integers of `[from, to)`, each equally likely). `from > to` is refused (161002).
pub fn uniform(
    name: &'static str,
    x: &TensorSpec,
    from: f64,
    to: f64,
    seed: u64,
    offset: u64,
) -> Res<Kernel> {
    dtype_in(name, "selfRef", x.dtype, UNIFORM_TYPES)?;
    rank_at_most(name, "selfRef", x, 8)?;
    if from.is_nan() || to.is_nan() || from > to {
        return err(format!("{name}: from = {from} is greater than to = {to}"));
    }
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |_: &[Input<'_>], outs: &mut [Output<'_>]| {
        let out = &mut outs[0];
        let n = out.spec.numel();
        if out.spec.dtype.is_int() {
            // The integers of [from, to): ⌈from⌉ .. ⌈to⌉.
            let lo = from.ceil();
            let span = (to.ceil() - lo).max(0.0);
            let vals: Vec<i64> = (0..n as u64)
                .map(|i| (lo + (rng.uniforms(i)[0] * span).floor()) as i64)
                .collect();
            write_i64(out, &vals);
        } else {
            let vals = (0..n as u64)
                .map(|i| from + rng.uniforms(i)[0] * (to - from))
                .collect();
            write_below(out, vals, from, to);
        }
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![x.clone()],
        native,
    })
}

/// `aclnnInplaceNormal`: `x` filled with `mean + std·z`, `z` standard normal
/// (Box–Muller). A negative `std` is refused (161002).
pub fn normal(
    name: &'static str,
    x: &TensorSpec,
    mean: f64,
    std: f64,
    seed: u64,
    offset: u64,
) -> Res<Kernel> {
    dtype_in(name, "selfRef", x.dtype, NORMAL_TYPES)?;
    rank_at_most(name, "selfRef", x, 8)?;
    if std.is_nan() || std < 0.0 {
        return err(format!("{name}: std = {std} is negative"));
    }
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |_: &[Input<'_>], outs: &mut [Output<'_>]| {
        let out = &mut outs[0];
        let vals: Vec<f64> = (0..out.spec.numel() as u64)
            .map(|i| {
                let [u1, u2] = rng.uniforms(i);
                // 1 − u1 is in (0, 1]: the logarithm is finite.
                let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                mean + std * z
            })
            .collect();
        write(out, &vals);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![x.clone()],
        native,
    })
}

/// `aclnnInplaceBernoulli`: 1 with probability `p`, else 0. `p` outside
/// `[0, 1]` and an `offset` that is not a multiple of 4 (the page: "offset %
/// 4 == 0 … 不满足约束会调用失败") are refused (161002).
pub fn bernoulli(
    name: &'static str,
    x: &TensorSpec,
    p: f64,
    seed: u64,
    offset: u64,
) -> Res<Kernel> {
    dtype_in(name, "selfRef", x.dtype, BERNOULLI_TYPES)?;
    rank_at_most(name, "selfRef", x, 8)?;
    prob_in_range(name, "prob", p)?;
    if !offset.is_multiple_of(4) {
        return err(format!("{name}: offset {offset} is not a multiple of 4"));
    }
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |_: &[Input<'_>], outs: &mut [Output<'_>]| {
        let out = &mut outs[0];
        let vals: Vec<f64> = (0..out.spec.numel() as u64)
            .map(|i| f64::from(u8::from(rng.uniforms(i)[0] < p)))
            .collect();
        write(out, &vals);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![x.clone()],
        native,
    })
}

/// `aclnnRandperm`: a uniform permutation of `0..n` into `out` (`[n]`).
pub fn randperm(
    name: &'static str,
    n: i64,
    out: &TensorSpec,
    seed: u64,
    offset: u64,
) -> Res<Kernel> {
    if n < 0 {
        return err(format!("{name}: n = {n} is negative"));
    }
    dtype_in(name, "out", out.dtype, RANDPERM_TYPES)?;
    if out.shape != [n] {
        return err(format!(
            "{name}: out has shape {}, not [{n}]",
            fmt_shape(&out.shape)
        ));
    }
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |_: &[Input<'_>], outs: &mut [Output<'_>]| {
        let out = &mut outs[0];
        let mut keyed: Vec<(u64, i64)> = (0..n).map(|i| (rng.key64(i as u64), i)).collect();
        keyed.sort_unstable();
        let perm: Vec<i64> = keyed.into_iter().map(|(_, i)| i).collect();
        write_i64(out, &perm);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![out.clone()],
        native,
    })
}

/// The largest number of categories `aclnnMultinomial` takes (the page:
/// "self最后一个维度的大小不能超过2^24").
const MULTINOMIAL_MAX_CATEGORIES: i64 = 1 << 24;

/// `aclnnMultinomial`: `numsamples` category indices per row of `probs`
/// (`(N, C)` or `(C)`), into `out` (int64, `(N, numsamples)` or
/// `(numsamples)`). Weights need not sum to 1; a row with a negative or
/// non-finite weight, or without enough positive weights, is a kernel fault
/// reported by the next synchronisation (the device's runtime check).
pub fn multinomial(
    name: &'static str,
    probs: &TensorSpec,
    numsamples: i64,
    replacement: bool,
    out: &TensorSpec,
    seed: u64,
    offset: u64,
) -> Res<Kernel> {
    dtype_in(name, "self", probs.dtype, MULTINOMIAL_TYPES)?;
    if out.dtype != I64 {
        return err(format!("{name}: out is {}, not int64", out.dtype.name()));
    }
    let r = probs.shape.len();
    if !(1..=2).contains(&r) {
        return err(format!(
            "{name}: self has shape {}; it must be (C) or (N, C)",
            fmt_shape(&probs.shape)
        ));
    }
    if out.shape.len() != r {
        return err(format!(
            "{name}: out has shape {} and self {}: their ranks differ",
            fmt_shape(&out.shape),
            fmt_shape(&probs.shape)
        ));
    }
    if numsamples <= 0 {
        return err(format!("{name}: numsamples = {numsamples} is not positive"));
    }
    let c = probs.shape[r - 1];
    if !replacement && numsamples > c {
        return err(format!(
            "{name}: numsamples = {numsamples} exceeds the {c} categories without replacement"
        ));
    }
    if c > MULTINOMIAL_MAX_CATEGORIES {
        return err(format!(
            "{name}: self has {c} categories; at most 2^24 are supported"
        ));
    }
    let rows = if r == 2 { probs.shape[0] } else { 1 };
    let want: Vec<i64> = if r == 2 {
        vec![rows, numsamples]
    } else {
        vec![numsamples]
    };
    if out.shape != want {
        return err(format!(
            "{name}: out has shape {}, not {}",
            fmt_shape(&out.shape),
            fmt_shape(&want)
        ));
    }
    let rng = Stream::new(seed, offset);
    let (rows, c, k) = (rows as usize, c as usize, numsamples as usize);
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let w = read(&ins[0]);
        let mut picks = Vec::with_capacity(rows * k);
        for row in 0..rows {
            let ws = &w[row * c..(row + 1) * c];
            if let Some(bad) = ws.iter().find(|v| !v.is_finite() || **v < 0.0) {
                return Err(OpError::Input(format!(
                    "{name}: row {row} has the weight {bad}; weights must be finite and not negative"
                )));
            }
            let positive = ws.iter().filter(|v| **v > 0.0).count();
            if positive == 0 || (!replacement && positive < k) {
                return Err(OpError::Input(format!(
                    "{name}: row {row} has {positive} positive weights, too few to draw {k} samples{}",
                    if replacement {
                        ""
                    } else {
                        " without replacement"
                    }
                )));
            }
            if replacement {
                let mut cdf = Vec::with_capacity(c);
                let mut acc = 0.0;
                for v in ws {
                    acc += v;
                    cdf.push(acc);
                }
                for s in 0..k {
                    let u = rng.uniforms((row * k + s) as u64)[0] * acc;
                    // The first category whose cumulative weight exceeds u
                    // (never one of weight 0).
                    let mut j = cdf.partition_point(|&x| x <= u).min(c - 1);
                    while ws[j] == 0.0 && j > 0 {
                        j -= 1;
                    }
                    picks.push(j as i64);
                }
            } else {
                // Exponential races: category j finishes at E_j / w_j; the
                // first k to finish are a draw without replacement.
                let mut times: Vec<(f64, usize)> = ws
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v > 0.0)
                    .map(|(j, v)| {
                        let u = rng.uniforms((row * c + j) as u64)[0];
                        (-(1.0 - u).ln() / v, j)
                    })
                    .collect();
                times.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                picks.extend(times.iter().take(k).map(|&(_, j)| j as i64));
            }
        }
        write_i64(&mut outs[0], &picks);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![out.clone()],
        native,
    })
}

/// The bytes of a dropout bit mask for `numel` elements: one bit each,
/// rounded up to 128 bits (`align(numel, 128) / 8`, the pages of
/// `aclnnDropout`, `aclnnDropoutGenMask`, `aclnnDropoutDoMask`).
pub fn mask_bytes(numel: usize) -> usize {
    numel.div_ceil(128) * 128 / 8
}

/// The mask bits of `n` elements: bit `i` (byte `i / 8`, bit `i % 8`) is 1
/// when element `i` is kept (its uniform is at least `p`).
fn gen_mask(rng: Stream, n: usize, p: f64, mask: &mut [u8]) {
    mask.fill(0);
    for i in 0..n {
        if rng.uniforms(i as u64)[0] >= p {
            mask[i / 8] |= 1 << (i % 8);
        }
    }
}

fn bit(mask: &[u8], i: usize) -> bool {
    mask.get(i / 8).is_some_and(|b| b & (1 << (i % 8)) != 0)
}

/// Applies `mask` to `x`: kept elements scaled by `1 / (1 − p)`, the others
/// 0; `p = 1` zeroes everything.
fn apply_mask(x: &[f64], mask: &[u8], p: f64) -> Vec<f64> {
    let scale = if p < 1.0 { 1.0 / (1.0 - p) } else { 0.0 };
    x.iter()
        .enumerate()
        .map(|(i, v)| if bit(mask, i) { v * scale } else { 0.0 })
        .collect()
}

fn mask_shape_ok(name: &str, what: &str, mask: &TensorSpec, numel: usize, one_d: bool) -> Res<()> {
    let want = mask_bytes(numel);
    if mask.dtype != U8 {
        return err(format!(
            "{name}: {what} is {}, not uint8",
            mask.dtype.name()
        ));
    }
    if (one_d && mask.shape.len() != 1) || mask.numel() != want {
        return err(format!(
            "{name}: {what} has shape {}; it must hold align({numel}, 128) / 8 = {want} bytes{}",
            fmt_shape(&mask.shape),
            if one_d { " in one dimension" } else { "" }
        ));
    }
    Ok(())
}

/// `aclnnDropout`: `out` and the bit mask `maskOut` of `input`. With `p` 0
/// or 1 or `train` false the mask is not written (the page) and `out` is
/// `input` (`p = 1`: zeros).
pub fn dropout(
    name: &'static str,
    input: &TensorSpec,
    p: f64,
    train: bool,
    (seed, offset): (u64, u64),
    out: &TensorSpec,
    mask: &TensorSpec,
) -> Res<Kernel> {
    dtype_in(name, "input", input.dtype, DROPOUT_TYPES)?;
    dtype_in(name, "out", out.dtype, DROPOUT_TYPES)?;
    prob_in_range(name, "p", p)?;
    if input.shape.is_empty() || input.numel() == 0 {
        return err(format!(
            "{name}: input has shape {}; an empty or 0-dimensional input is not supported",
            fmt_shape(&input.shape)
        ));
    }
    rank_at_most(name, "input", input, 8)?;
    if out.shape != input.shape {
        return err(format!(
            "{name}: out has shape {}, not input's {}",
            fmt_shape(&out.shape),
            fmt_shape(&input.shape)
        ));
    }
    mask_shape_ok(name, "maskOut", mask, input.numel(), true)?;
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let x = read(&ins[0]);
        let (o, m) = outs.split_at_mut(1);
        let vals = if !train || p == 0.0 {
            x
        } else if p == 1.0 {
            vec![0.0; x.len()]
        } else {
            gen_mask(rng, x.len(), p, m[0].data);
            apply_mask(&x, m[0].data, p)
        };
        write(&mut o[0], &vals);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![out.clone(), mask.clone()],
        native,
    })
}

/// `aclnnDropoutGenMask`: the bit mask of `shape`'s elements (bit 1: kept,
/// with probability `1 − prob`). The same `(seed, offset)` gives the mask
/// `aclnnDropout` uses.
pub fn dropout_gen_mask(
    name: &'static str,
    shape: &[i64],
    prob: f64,
    seed: u64,
    offset: u64,
    out: &TensorSpec,
) -> Res<Kernel> {
    if out.dtype != U8 {
        return err(format!("{name}: out is {}, not uint8", out.dtype.name()));
    }
    prob_in_range(name, "prob", prob)?;
    if shape.is_empty() || shape.len() > 8 || shape.iter().any(|&d| d < 0) {
        return err(format!(
            "{name}: shape {} must have 1 to 8 non-negative dimensions",
            fmt_shape(shape)
        ));
    }
    let numel = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
        .ok_or_else(|| {
            OpError::Input(format!("{name}: shape {} is too large", fmt_shape(shape)))
        })?;
    mask_shape_ok(name, "out", out, numel, true)?;
    let rng = Stream::new(seed, offset);
    let native = Native::new(name, move |_: &[Input<'_>], outs: &mut [Output<'_>]| {
        gen_mask(rng, numel, prob, outs[0].data);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![out.clone()],
        native,
    })
}

/// `aclnnDropoutDoMask`: `out = mask ? self / (1 − prob) : 0` (`prob = 1`:
/// zeros).
pub fn dropout_do_mask(
    name: &'static str,
    x: &TensorSpec,
    mask: &TensorSpec,
    prob: f64,
    out: &TensorSpec,
) -> Res<Kernel> {
    dtype_in(name, "self", x.dtype, DROPOUT_TYPES)?;
    dtype_in(name, "out", out.dtype, DROPOUT_TYPES)?;
    prob_in_range(name, "prob", prob)?;
    rank_at_most(name, "self", x, 8)?;
    if out.shape != x.shape {
        return err(format!(
            "{name}: out has shape {}, not self's {}",
            fmt_shape(&out.shape),
            fmt_shape(&x.shape)
        ));
    }
    mask_shape_ok(name, "mask", mask, x.numel(), false)?;
    let native = Native::new(name, move |ins: &[Input<'_>], outs: &mut [Output<'_>]| {
        let x = read(&ins[0]);
        let vals = apply_mask(&x, ins[1].data, prob);
        write(&mut outs[0], &vals);
        Ok(())
    });
    Ok(Kernel {
        outputs: vec![out.clone()],
        native,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_matches_the_papers_known_answers() {
        // Random123's kat_vectors for philox4x32_10.
        assert_eq!(
            philox4x32_10([0, 0], [0, 0, 0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX, u32::MAX], [u32::MAX; 4]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32_10(
                [0xa409_3822, 0x299f_31d0],
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn unaligned_offsets_read_the_same_words_shifted() {
        let a = Stream::new(7, 0);
        let b = Stream::new(7, 2);
        let (wa, wb) = (a.words(3), b.words(3));
        assert_eq!(wa[2..], wb[..2]);
        assert_eq!(Stream::new(7, 4).words(3)[..2], wb[2..]);
    }

    #[test]
    fn mask_bytes_round_up_to_128_bits() {
        assert_eq!(mask_bytes(1), 16);
        assert_eq!(mask_bytes(128), 16);
        assert_eq!(mask_bytes(129), 32);
        assert_eq!(mask_bytes(1111), 144);
    }
}

//! A tiny Llama-style decoder run with aclnn operators only, checked against
//! a plain-Rust reference on the host (the `llm_forward` example).
//!
//! Per layer: RMSNorm → q/k/v projections → rotary position embedding of q
//! and k → k and v written into a KV cache on the device → causal
//! multi-head attention (`q·kᵀ`, scale, causal mask, softmax, `·v`) → output
//! projection and residual → RMSNorm → SwiGLU MLP → residual. Then the
//! final RMSNorm, the logits of the last position and a greedy argmax, which
//! stays on the device as the next step's input token.
//!
//! | step | aclnn |
//! |---|---|
//! | token embedding | `aclnnEmbedding` |
//! | norms | `aclnnRmsNorm` |
//! | projections, logits | `aclnnMatmul` |
//! | rotary position embedding | `aclnnRotaryPositionEmbedding` (mode 0, halves) |
//! | KV-cache write | `aclnnInplaceCopy` into a strided view of the cache |
//! | attention scores, weighted values | `aclnnBatchMatMul` over strided views |
//! | scale, causal mask | `aclnnMuls`, `aclnnInplaceMaskedFillScalar` (`-inf` above the diagonal) |
//! | attention weights | `aclnnSoftmax` |
//! | MLP gate | `aclnnSwiGlu` |
//! | residuals | `aclnnAdd` |
//! | greedy decoding | `aclnnArgMax` |
//!
//! The weights are seeded random numbers; the reference uses exactly the
//! values the device holds (rounded to the run's type) and follows the
//! device's tokens, so each step's logits can be compared.

use crate::rng::Rng;
use acl::aclnn::{self, CubeMathType, RotaryMode, Scalar, TensorArg, TensorArgMut};
use acl::memory::Bool;
use acl::{DeviceBuffer, Element, Stream};
use acl::{TensorView as View, TensorViewMut as ViewMut};
use half::{bf16, f16};
use std::fmt;
use std::time::{Duration, Instant};

/// The element types the model runs in.
pub trait Float: Element + Copy + Default + fmt::Debug {
    /// The name, as `--dtype` takes it.
    const NAME: &'static str;
    /// Rounds `v` to this type.
    fn from_f32(v: f32) -> Self;
    /// Widens to f32 (exact).
    fn to_f32(self) -> f32;
}

impl Float for f32 {
    const NAME: &'static str = "f32";
    fn from_f32(v: f32) -> Self {
        v
    }
    fn to_f32(self) -> f32 {
        self
    }
}

impl Float for f16 {
    const NAME: &'static str = "f16";
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

impl Float for bf16 {
    const NAME: &'static str = "bf16";
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// The model's sizes and the run's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Vocabulary size.
    pub vocab: usize,
    /// Model width.
    pub dim: usize,
    /// Attention heads (`dim / heads` per head, even).
    pub heads: usize,
    /// Hidden width of the MLP.
    pub ffn: usize,
    /// Decoder layers.
    pub layers: usize,
    /// Prompt length (random tokens).
    pub prompt: usize,
    /// Tokens to generate.
    pub generate: usize,
    /// Seed of the weights and the prompt.
    pub seed: u64,
    /// RMSNorm epsilon.
    pub eps: f64,
    /// Rotary base.
    pub rope_theta: f32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            vocab: 256,
            dim: 64,
            heads: 4,
            ffn: 128,
            layers: 2,
            prompt: 8,
            generate: 32,
            seed: 14,
            eps: 1e-5,
            rope_theta: 10_000.0,
        }
    }
}

impl Config {
    fn head_dim(&self) -> usize {
        self.dim / self.heads
    }

    fn max_seq(&self) -> usize {
        self.prompt + self.generate
    }

    /// The largest logit error accepted for element type `name`.
    pub fn tolerance(name: &str) -> f32 {
        match name {
            "f32" => 1e-4,
            "f16" => 1e-2,
            _ => 8e-2,
        }
    }
}

/// One decoding step: the token chosen and how far the logits were from
/// the reference.
#[derive(Debug, Clone)]
pub struct Step {
    /// Position of the token the logits predict from.
    pub pos: usize,
    /// The token the device chose (argmax on the device).
    pub token: i64,
    /// The reference's argmax.
    pub reference_token: usize,
    /// Largest |device − reference| over the logits.
    pub max_abs_err: f32,
    /// Largest |reference logit|, for scale.
    pub max_abs_logit: f32,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// The element type.
    pub dtype: &'static str,
    /// The prompt.
    pub prompt: Vec<i64>,
    /// Every generated token's step.
    pub steps: Vec<Step>,
    /// Time spent on the device's steps (forward and argmax, synchronised).
    pub device_time: Duration,
}

impl Report {
    /// Largest logit error over all steps.
    pub fn max_abs_err(&self) -> f32 {
        self.steps.iter().map(|s| s.max_abs_err).fold(0.0, f32::max)
    }

    /// Generated tokens per second of device time.
    pub fn tokens_per_second(&self) -> f64 {
        self.steps.len() as f64 / self.device_time.as_secs_f64().max(1e-9)
    }

    /// Steps where the reference would have chosen the same token.
    pub fn agreements(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.token as usize == s.reference_token)
            .count()
    }
}

/// Seeded values `bias + scale · u`, `u` uniform in (-1, 1).
fn fill(rng: &mut Rng, n: usize, scale: f32, bias: f32) -> Vec<f32> {
    (0..n)
        .map(|_| bias + scale * (2.0 * rng.uniform() - 1.0))
        .collect()
}

/// Host weights of one layer (already rounded to the run's type).
struct HostLayer {
    attn_norm: Vec<f32>,
    wq: Vec<f32>,
    wk: Vec<f32>,
    wv: Vec<f32>,
    wo: Vec<f32>,
    ffn_norm: Vec<f32>,
    /// `[dim, 2·ffn]`: gate columns, then up columns.
    w_gate_up: Vec<f32>,
    w_down: Vec<f32>,
}

struct HostModel {
    embed: Vec<f32>,
    layers: Vec<HostLayer>,
    final_norm: Vec<f32>,
    w_out: Vec<f32>,
    /// `[max_seq, head_dim]` rotary tables.
    cos: Vec<f32>,
    sin: Vec<f32>,
}

fn round<T: Float>(v: Vec<f32>) -> Vec<f32> {
    v.into_iter().map(|x| T::from_f32(x).to_f32()).collect()
}

impl HostModel {
    fn new<T: Float>(c: &Config, rng: &mut Rng) -> HostModel {
        let (d, f) = (c.dim, c.ffn);
        let sd = 1.0 / (d as f32).sqrt();
        let sf = 1.0 / (f as f32).sqrt();
        let mut w = |n: usize, scale: f32, bias: f32| round::<T>(fill(rng, n, scale, bias));
        let embed = w(c.vocab * d, 1.0, 0.0);
        let layers = (0..c.layers)
            .map(|_| HostLayer {
                attn_norm: w(d, 0.1, 1.0),
                wq: w(d * d, sd, 0.0),
                wk: w(d * d, sd, 0.0),
                wv: w(d * d, sd, 0.0),
                wo: w(d * d, sd, 0.0),
                ffn_norm: w(d, 0.1, 1.0),
                w_gate_up: w(d * 2 * f, sd, 0.0),
                w_down: w(f * d, sf, 0.0),
            })
            .collect();
        let final_norm = w(d, 0.1, 1.0);
        let w_out = w(d * c.vocab, sd, 0.0);
        let hd = c.head_dim();
        let half = hd / 2;
        let (mut cos, mut sin) = (Vec::new(), Vec::new());
        for p in 0..c.max_seq() {
            for i in 0..hd {
                let freq = c.rope_theta.powf(-2.0 * (i % half) as f32 / hd as f32);
                let a = p as f32 * freq;
                cos.push(a.cos());
                sin.push(a.sin());
            }
        }
        HostModel {
            embed,
            layers,
            final_norm,
            w_out,
            cos: round::<T>(cos),
            sin: round::<T>(sin),
        }
    }
}

// ------------------------------------------------------------ reference

fn rms_norm_ref(x: &[f32], g: &[f32], eps: f32) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for row in x.chunks_exact(g.len()) {
        let ms = row.iter().map(|v| v * v).sum::<f32>() / g.len() as f32;
        let r = 1.0 / (ms + eps).sqrt();
        out.extend(row.iter().zip(g).map(|(v, w)| v * r * w));
    }
    out
}

/// `a [m, k] · b [k, n]`.
fn matmul_ref(a: &[f32], b: &[f32], k: usize, n: usize) -> Vec<f32> {
    let m = a.len() / k;
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for p in 0..k {
            let av = a[i * k + p];
            for j in 0..n {
                c[i * n + j] += av * b[p * n + j];
            }
        }
    }
    c
}

/// The plain-Rust model: the same math, one position at a time, with its
/// own KV cache.
struct Reference<'m> {
    c: &'m Config,
    m: &'m HostModel,
    /// Per layer: keys and values `[pos][dim]`.
    k: Vec<Vec<f32>>,
    v: Vec<Vec<f32>>,
}

impl<'m> Reference<'m> {
    fn new(c: &'m Config, m: &'m HostModel) -> Reference<'m> {
        Reference {
            c,
            m,
            k: vec![Vec::new(); c.layers],
            v: vec![Vec::new(); c.layers],
        }
    }

    fn rope(&self, x: &mut [f32], pos: usize) {
        let hd = self.c.head_dim();
        let h = hd / 2;
        let (cos, sin) = (&self.m.cos[pos * hd..][..hd], &self.m.sin[pos * hd..][..hd]);
        for head in x.chunks_exact_mut(hd) {
            let orig = head.to_vec();
            for i in 0..hd {
                let rot = if i < h { -orig[i + h] } else { orig[i - h] };
                head[i] = orig[i] * cos[i] + rot * sin[i];
            }
        }
    }

    /// Feeds `token` at `pos`; the logits of the next token.
    fn step(&mut self, token: usize, pos: usize) -> Vec<f32> {
        let (c, m) = (self.c, self.m);
        let (d, hd, eps) = (c.dim, c.head_dim(), c.eps as f32);
        let mut x = m.embed[token * d..][..d].to_vec();
        for (l, w) in m.layers.iter().enumerate() {
            let h = rms_norm_ref(&x, &w.attn_norm, eps);
            let mut q = matmul_ref(&h, &w.wq, d, d);
            let mut k = matmul_ref(&h, &w.wk, d, d);
            let v = matmul_ref(&h, &w.wv, d, d);
            self.rope(&mut q, pos);
            self.rope(&mut k, pos);
            self.k[l].extend_from_slice(&k);
            self.v[l].extend_from_slice(&v);
            let len = pos + 1;
            let scale = 1.0 / (hd as f32).sqrt();
            let mut attn = vec![0f32; d];
            for head in 0..c.heads {
                let qh = &q[head * hd..][..hd];
                let mut s: Vec<f32> = (0..len)
                    .map(|t| {
                        let kh = &self.k[l][t * d + head * hd..][..hd];
                        qh.iter().zip(kh).map(|(a, b)| a * b).sum::<f32>() * scale
                    })
                    .collect();
                let mx = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut sum = 0.0;
                for e in &mut s {
                    *e = (*e - mx).exp();
                    sum += *e;
                }
                for (t, p) in s.iter().enumerate() {
                    let vh = &self.v[l][t * d + head * hd..][..hd];
                    for (o, vv) in attn[head * hd..][..hd].iter_mut().zip(vh) {
                        *o += p / sum * vv;
                    }
                }
            }
            let o = matmul_ref(&attn, &w.wo, d, d);
            x.iter_mut().zip(&o).for_each(|(a, b)| *a += b);
            let h = rms_norm_ref(&x, &w.ffn_norm, eps);
            let gu = matmul_ref(&h, &w.w_gate_up, d, 2 * c.ffn);
            let act: Vec<f32> = (0..c.ffn)
                .map(|i| {
                    let (g, u) = (gu[i], gu[c.ffn + i]);
                    g / (1.0 + (-g).exp()) * u
                })
                .collect();
            let mo = matmul_ref(&act, &w.w_down, c.ffn, d);
            x.iter_mut().zip(&mo).for_each(|(a, b)| *a += b);
        }
        let h = rms_norm_ref(&x, &m.final_norm, eps);
        matmul_ref(&h, &m.w_out, d, c.vocab)
    }
}

// --------------------------------------------------------------- device

struct DeviceLayer<T: Float> {
    attn_norm: DeviceBuffer<T>,
    wq: DeviceBuffer<T>,
    wk: DeviceBuffer<T>,
    wv: DeviceBuffer<T>,
    wo: DeviceBuffer<T>,
    ffn_norm: DeviceBuffer<T>,
    w_gate_up: DeviceBuffer<T>,
    w_down: DeviceBuffer<T>,
    /// `[heads, max_seq, head_dim]`.
    k_cache: DeviceBuffer<T>,
    v_cache: DeviceBuffer<T>,
}

/// The model on the device.
struct DeviceModel<T: Float> {
    embed: DeviceBuffer<T>,
    layers: Vec<DeviceLayer<T>>,
    final_norm: DeviceBuffer<T>,
    w_out: DeviceBuffer<T>,
    cos: DeviceBuffer<T>,
    sin: DeviceBuffer<T>,
}

fn upload<T: Float>(s: &Stream, v: &[f32]) -> acl::Result<DeviceBuffer<T>> {
    let host: Vec<T> = v.iter().map(|&x| T::from_f32(x)).collect();
    s.clone_from_host(&host)
}

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// `x [rows, k] · w [k, n]` into a new buffer.
fn linear<T: Float>(
    s: &Stream,
    x: &TensorArg<'_>,
    rows: usize,
    w: &DeviceBuffer<T>,
    k: usize,
    n: usize,
) -> Res<DeviceBuffer<T>> {
    let mut out = s.alloc_zeros::<T>(rows * n)?;
    aclnn::matmul(
        s,
        x,
        &TensorArg::new(w, &[k, n])?,
        &mut TensorArgMut::new(&mut out, &[rows, n])?,
        CubeMathType::KeepDtype,
    )?;
    Ok(out)
}

/// `a + b`, both `[rows, n]`, into `out`.
fn residual<T: Float>(
    s: &Stream,
    a: &DeviceBuffer<T>,
    b: &DeviceBuffer<T>,
    shape: &[usize],
    out: &mut DeviceBuffer<T>,
) -> Res<()> {
    aclnn::add(
        s,
        &TensorArg::new(a, shape)?,
        &TensorArg::new(b, shape)?,
        &Scalar::new(1.0f32)?,
        &mut TensorArgMut::new(out, shape)?,
    )?;
    Ok(())
}

impl<T: Float> DeviceModel<T> {
    fn new(s: &Stream, c: &Config, m: &HostModel) -> acl::Result<DeviceModel<T>> {
        let cache = c.heads * c.max_seq() * c.head_dim();
        let layers = m
            .layers
            .iter()
            .map(|w| {
                Ok(DeviceLayer {
                    attn_norm: upload(s, &w.attn_norm)?,
                    wq: upload(s, &w.wq)?,
                    wk: upload(s, &w.wk)?,
                    wv: upload(s, &w.wv)?,
                    wo: upload(s, &w.wo)?,
                    ffn_norm: upload(s, &w.ffn_norm)?,
                    w_gate_up: upload(s, &w.w_gate_up)?,
                    w_down: upload(s, &w.w_down)?,
                    k_cache: s.alloc_zeros(cache)?,
                    v_cache: s.alloc_zeros(cache)?,
                })
            })
            .collect::<acl::Result<Vec<_>>>()?;
        Ok(DeviceModel {
            embed: upload(s, &m.embed)?,
            layers,
            final_norm: upload(s, &m.final_norm)?,
            w_out: upload(s, &m.w_out)?,
            cos: upload(s, &m.cos)?,
            sin: upload(s, &m.sin)?,
        })
    }

    /// Runs `tokens` (`n` of them, on the device) at positions
    /// `pos..pos + n`: fills the KV caches and returns the logits of the
    /// last position, `[1, vocab]`.
    fn forward(
        &mut self,
        s: &Stream,
        c: &Config,
        tokens: &DeviceBuffer<i64>,
        pos: usize,
    ) -> Res<DeviceBuffer<T>> {
        let n = tokens.len();
        let (d, hd, heads, f) = (c.dim, c.head_dim(), c.heads, c.ffn);
        let (max, len) = (c.max_seq(), pos + n);
        let mm = CubeMathType::KeepDtype;
        let mut x = s.alloc_zeros::<T>(n * d)?;
        aclnn::embedding(
            s,
            &TensorArg::new(&self.embed, &[c.vocab, d])?,
            &TensorArg::new(tokens, &[n])?,
            &mut TensorArgMut::new(&mut x, &[n, d])?,
        )?;
        let mut rstd = s.alloc_zeros::<f32>(n)?;
        // The causal mask `[n, len]`: position pos+i sees 0..=pos+i; a
        // single new token sees everything.
        let mask = (n > 1)
            .then(|| {
                let m: Vec<Bool> = (0..n * len)
                    .map(|e| Bool(u8::from(e % len > pos + e / len)))
                    .collect();
                s.clone_from_host(&m)
            })
            .transpose()?;
        let scale = Scalar::new(1.0 / (hd as f32).sqrt())?;
        let minus_inf = Scalar::new(f32::NEG_INFINITY)?;
        // Rows pos..pos+n of the [max, hd] tables, as [1, n, 1, hd] (views:
        // no copy).
        let rope_table = |t| -> acl::Result<View<'_, T>> {
            View::new(t, &[max, hd])?
                .narrow(0, pos, n)?
                .unsqueeze(0)?
                .unsqueeze(2)
        };
        for w in &mut self.layers {
            // Attention.
            let mut h = s.alloc_zeros::<T>(n * d)?;
            aclnn::rms_norm(
                s,
                &TensorArg::new(&x, &[n, d])?,
                &TensorArg::new(&w.attn_norm, &[d])?,
                c.eps,
                &mut TensorArgMut::new(&mut h, &[n, d])?,
                &mut TensorArgMut::new(&mut rstd, &[n, 1])?,
            )?;
            let th = TensorArg::new(&h, &[n, d])?;
            let (q, k, v) = (
                linear(s, &th, n, &w.wq, d, d)?,
                linear(s, &th, n, &w.wk, d, d)?,
                linear(s, &th, n, &w.wv, d, d)?,
            );
            drop(th);
            let rope = |t: &DeviceBuffer<T>| -> Res<DeviceBuffer<T>> {
                let mut out = s.alloc_zeros::<T>(n * d)?;
                aclnn::rotary_position_embedding(
                    s,
                    &TensorArg::new(t, &[1, n, heads, hd])?,
                    &TensorArg::from_view(&rope_table(&self.cos)?)?,
                    &TensorArg::from_view(&rope_table(&self.sin)?)?,
                    RotaryMode::Half,
                    &mut TensorArgMut::new(&mut out, &[1, n, heads, hd])?,
                )?;
                Ok(out)
            };
            let (q, k) = (rope(&q)?, rope(&k)?);
            // The new keys and values, [n, heads, hd], into the caches
            // [heads, max, hd] at positions pos..pos+n.
            let slot = |cache| -> acl::Result<ViewMut<'_, T>> {
                ViewMut::new(cache, &[heads, max, hd])?
                    .narrow(1, pos, n)?
                    .permute(&[1, 0, 2])
            };
            aclnn::copy_(
                s,
                &mut TensorArgMut::from_view(slot(&mut w.k_cache)?)?,
                &TensorArg::new(&k, &[n, heads, hd])?,
            )?;
            aclnn::copy_(
                s,
                &mut TensorArgMut::from_view(slot(&mut w.v_cache)?)?,
                &TensorArg::new(&v, &[n, heads, hd])?,
            )?;
            // The first `len` positions of a cache, [heads, len, hd].
            let cached = |cache| -> acl::Result<View<'_, T>> {
                View::new(cache, &[heads, max, hd])?.narrow(1, 0, len)
            };
            // scores [heads, n, len] = q [heads, n, hd] · kᵀ [heads, hd, len].
            let mut scores = s.alloc_zeros::<T>(heads * n * len)?;
            aclnn::batch_matmul(
                s,
                &TensorArg::from_view(&View::new(&q, &[n, heads, hd])?.permute(&[1, 0, 2])?)?,
                &TensorArg::from_view(&cached(&w.k_cache)?.transpose(1, 2)?)?,
                &mut TensorArgMut::new(&mut scores, &[heads, n, len])?,
                mm,
            )?;
            let mut scaled = s.alloc_zeros::<T>(heads * n * len)?;
            aclnn::muls(
                s,
                &TensorArg::new(&scores, &[heads, n, len])?,
                &scale,
                &mut TensorArgMut::new(&mut scaled, &[heads, n, len])?,
            )?;
            if let Some(mask) = &mask {
                aclnn::masked_fill_(
                    s,
                    &mut TensorArgMut::new(&mut scaled, &[heads, n, len])?,
                    &TensorArg::new(mask, &[n, len])?,
                    &minus_inf,
                )?;
            }
            aclnn::softmax(
                s,
                &TensorArg::new(&scaled, &[heads, n, len])?,
                -1,
                &mut TensorArgMut::new(&mut scores, &[heads, n, len])?,
            )?;
            // attn [n, heads, hd], written as [heads, n, hd].
            let mut attn = s.alloc_zeros::<T>(n * d)?;
            aclnn::batch_matmul(
                s,
                &TensorArg::new(&scores, &[heads, n, len])?,
                &TensorArg::from_view(&cached(&w.v_cache)?)?,
                &mut TensorArgMut::from_view(
                    ViewMut::new(&mut attn, &[n, heads, hd])?.permute(&[1, 0, 2])?,
                )?,
                mm,
            )?;
            let o = linear(s, &TensorArg::new(&attn, &[n, d])?, n, &w.wo, d, d)?;
            let mut x2 = s.alloc_zeros::<T>(n * d)?;
            residual(s, &x, &o, &[n, d], &mut x2)?;
            // MLP.
            aclnn::rms_norm(
                s,
                &TensorArg::new(&x2, &[n, d])?,
                &TensorArg::new(&w.ffn_norm, &[d])?,
                c.eps,
                &mut TensorArgMut::new(&mut h, &[n, d])?,
                &mut TensorArgMut::new(&mut rstd, &[n, 1])?,
            )?;
            let gu = linear(s, &TensorArg::new(&h, &[n, d])?, n, &w.w_gate_up, d, 2 * f)?;
            let mut act = s.alloc_zeros::<T>(n * f)?;
            aclnn::swi_glu(
                s,
                &TensorArg::new(&gu, &[n, 2 * f])?,
                -1,
                &mut TensorArgMut::new(&mut act, &[n, f])?,
            )?;
            let down = linear(s, &TensorArg::new(&act, &[n, f])?, n, &w.w_down, f, d)?;
            residual(s, &x2, &down, &[n, d], &mut x)?;
        }
        // The last position only: final norm and logits.
        let mut h = s.alloc_zeros::<T>(d)?;
        aclnn::rms_norm(
            s,
            &TensorArg::from_view(&View::new(&x, &[n, d])?.narrow(0, n - 1, 1)?)?,
            &TensorArg::new(&self.final_norm, &[d])?,
            c.eps,
            &mut TensorArgMut::new(&mut h, &[1, d])?,
            &mut TensorArgMut::from_view(ViewMut::new(&mut rstd, &[n, 1])?.narrow(0, 0, 1)?)?,
        )?;
        linear(s, &TensorArg::new(&h, &[1, d])?, 1, &self.w_out, d, c.vocab)
    }
}

/// Runs the model in type `T`: the prompt, then `generate` greedy steps,
/// each step's logits compared with the reference. `on_step` sees each step
/// as it completes.
///
/// # Errors
///
/// Any device error; a configuration that does not fit (odd head width,
/// `dim` not a multiple of `heads`).
pub fn run<T: Float>(s: &Stream, c: &Config, mut on_step: impl FnMut(&Step)) -> Res<Report> {
    if c.heads == 0
        || !c.dim.is_multiple_of(c.heads)
        || !c.head_dim().is_multiple_of(2)
        || c.prompt == 0
    {
        return Err(format!(
            "dim {} must split into {} heads of even width, and the prompt must not be empty",
            c.dim, c.heads
        )
        .into());
    }
    let mut rng = Rng(c.seed);
    let host = HostModel::new::<T>(c, &mut rng);
    let prompt: Vec<i64> = (0..c.prompt)
        .map(|_| (rng.next() % c.vocab as u64) as i64)
        .collect();
    let mut dev = DeviceModel::<T>::new(s, c, &host)?;
    let mut reference = Reference::new(c, &host);
    let mut tokens = s.clone_from_host(&prompt)?;
    s.synchronize()?;
    let mut steps = Vec::with_capacity(c.generate);
    let mut device_time = Duration::ZERO;
    let mut pos = 0;
    for _ in 0..c.generate {
        let started = Instant::now();
        let n = tokens.len();
        let logits = dev.forward(s, c, &tokens, pos)?;
        let mut next = s.alloc_zeros::<i64>(1)?;
        aclnn::arg_max(
            s,
            &TensorArg::new(&logits, &[1, c.vocab])?,
            -1,
            false,
            &mut TensorArgMut::new(&mut next, &[1])?,
        )?;
        let got: Vec<f32> = logits.to_host_vec()?.into_iter().map(T::to_f32).collect();
        let token = next.to_host_vec()?[0];
        device_time += started.elapsed();
        // The reference follows the tokens the device has seen.
        let fed: Vec<i64> = if pos == 0 {
            prompt.clone()
        } else {
            vec![steps.last().map_or(0, |s: &Step| s.token)]
        };
        let mut want = Vec::new();
        for (i, &t) in fed.iter().enumerate() {
            want = reference.step(t as usize, pos + i);
        }
        let max_abs_err = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        let max_abs_logit = want.iter().map(|v| v.abs()).fold(0.0, f32::max);
        let reference_token = want
            .iter()
            .enumerate()
            .fold(
                (0, f32::NEG_INFINITY),
                |b, (i, &v)| if v > b.1 { (i, v) } else { b },
            )
            .0;
        let step = Step {
            pos: pos + n - 1,
            token,
            reference_token,
            max_abs_err,
            max_abs_logit,
        };
        on_step(&step);
        steps.push(step);
        pos += n;
        tokens = next;
    }
    Ok(Report {
        dtype: T::NAME,
        prompt,
        steps,
        device_time,
    })
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pos {:3}: token {:3} (reference {:3}), max |Δlogit| {:.2e} (|logit| ≤ {:.2})",
            self.pos, self.token, self.reference_token, self.max_abs_err, self.max_abs_logit
        )
    }
}

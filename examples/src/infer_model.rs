//! The `infer_model` example's logic: offline-model inference as msame or
//! ais_bench do it — load a model, print its description, run a batch,
//! check the result against the host, and report latency and throughput.
//!
//! The model is a small MLP classifier (`x · w1 + b1 → ReLU → · w2 + b2 →
//! softmax`) with dynamic batch gears, written in cann-sim's model format
//! with `cann_sim::model::write` the first time it is needed.

use acl::Stream;
use acl::model::{Gear, Gears, Model, ModelDesc};
use cann_sim::model::{self as sim, Constant, IoDesc, Node};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The model file.
    pub path: PathBuf,
    /// Whether to build the model at `path` when nothing is there (the
    /// example's own default path). A path the user gave (`--model`) is an
    /// input: only read, never written.
    pub build: bool,
    /// Input features.
    pub features: usize,
    /// Hidden units.
    pub hidden: usize,
    /// Classes.
    pub classes: usize,
    /// The batch gear to run at (one of [`GEARS`]).
    pub batch: u64,
    /// Timed executions.
    pub runs: usize,
}

/// The model's batch gears.
pub const GEARS: [u64; 6] = [1, 2, 4, 8, 16, 32];

impl Default for Config {
    fn default() -> Self {
        Config {
            path: std::env::temp_dir()
                .join("cann-rs-infer-model")
                .join("mlp-16x32x4.json"),
            build: true,
            features: 16,
            hidden: 32,
            classes: 4,
            batch: 8,
            runs: 100,
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The description, as printed.
    pub description: String,
    /// Whether the model file was built by this run.
    pub built: bool,
    /// Largest difference between the device's and the host's probabilities.
    pub max_abs_diff: f32,
    /// Timed executions.
    pub runs: usize,
    /// Batch size.
    pub batch: u64,
    /// Mean, fastest and slowest execution (queue to completion).
    pub mean: Duration,
    /// Fastest.
    pub min: Duration,
    /// Slowest.
    pub max: Duration,
}

impl Report {
    /// Samples per second over the timed runs.
    pub fn throughput(&self) -> f64 {
        let secs = self.mean.as_secs_f64();
        if secs == 0.0 {
            return 0.0;
        }
        self.batch as f64 / secs
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[INFO] {} runs at batch {}: latency mean {:.3} ms, min {:.3} ms, max {:.3} ms; \
             throughput {:.1} samples/s; max |device - host| = {:.2e}",
            self.runs,
            self.batch,
            self.mean.as_secs_f64() * 1e3,
            self.min.as_secs_f64() * 1e3,
            self.max.as_secs_f64() * 1e3,
            self.throughput(),
            self.max_abs_diff
        )
    }
}

/// Deterministic weights in [-0.5, 0.5).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

/// The MLP's weights: (w1, b1, w2, b2).
fn weights(cfg: &Config) -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>) {
    (
        values(cfg.features * cfg.hidden, 1),
        values(cfg.hidden, 2),
        values(cfg.hidden * cfg.classes, 3),
        values(cfg.classes, 4),
    )
}

fn constant(name: &str, shape: &[i64], data: &[f32]) -> Constant {
    Constant {
        name: name.into(),
        dtype: "float32".into(),
        shape: shape.to_vec(),
        data: data.iter().map(|&v| f64::from(v)).collect(),
    }
}

fn node(name: &str, op: &str, inputs: &[&str], output: &str) -> Node {
    Node {
        name: name.into(),
        op: op.into(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        outputs: vec![output.into()],
        attrs: BTreeMap::new(),
    }
}

/// The model, in cann-sim's format.
pub fn model_desc(cfg: &Config) -> sim::ModelDesc {
    let (w1, b1, w2, b2) = weights(cfg);
    let (f, h, c) = (cfg.features as i64, cfg.hidden as i64, cfg.classes as i64);
    let mut m = sim::ModelDesc::new("mlp");
    let io = |name: &str, shape: &[i64]| IoDesc {
        name: name.into(),
        dtype: "float32".into(),
        format: "ND".into(),
        shape: shape.to_vec(),
    };
    m.inputs.push(io("x", &[-1, f]));
    m.outputs.push(io("probs", &[-1, c]));
    m.constants.push(constant("w1", &[f, h], &w1));
    m.constants.push(constant("b1", &[h], &b1));
    m.constants.push(constant("w2", &[h, c], &w2));
    m.constants.push(constant("b2", &[c], &b2));
    m.nodes.push(node("fc1", "MatMul", &["x", "w1"], "xw1"));
    m.nodes.push(node("bias1", "Add", &["xw1", "b1"], "z1"));
    m.nodes.push(node("act", "Relu", &["z1"], "a1"));
    m.nodes.push(node("fc2", "MatMul", &["a1", "w2"], "xw2"));
    m.nodes.push(node("bias2", "Add", &["xw2", "b2"], "logits"));
    // SoftmaxV2's `axes` defaults to [-1].
    m.nodes
        .push(node("softmax", "SoftmaxV2", &["logits"], "probs"));
    m.dynamic_batch = GEARS.to_vec();
    m
}

/// Makes sure a model file is at `cfg.path`; whether it wrote one.
///
/// An existing regular file (or a link to one) is used as it is. Anything
/// else that exists there (a FIFO, a device, a directory, a dangling link)
/// is refused before it is opened: a FIFO would block the run and a device
/// would be written. Nothing is there: with `cfg.build` the model is
/// written to a new temporary file beside it and renamed into place (so no
/// link or file that appears meanwhile is written through); without it
/// (a path the user gave) that is an error.
///
/// # Errors
///
/// The path is not a regular file, is missing and may not be built, or the
/// directory or the file cannot be written.
pub fn ensure_model(cfg: &Config) -> Result<bool, Box<dyn std::error::Error>> {
    let path = &cfg.path;
    match std::fs::symlink_metadata(path) {
        Ok(_) => {
            // Follows a link: a link to a model file is fine to read.
            let m = std::fs::metadata(path)
                .map_err(|e| format!("the model path {} cannot be read: {e}", path.display()))?;
            if !m.is_file() {
                return Err(format!(
                    "the model path {} is not a regular file (a {}): give the path of a model file",
                    path.display(),
                    sim::file_kind(&m.file_type())
                )
                .into());
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && cfg.build => {
            build_model(cfg)?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "the model {} does not exist: --model names a model to load, which infer_model never \
             writes (without --model it builds its demo model at its default path)",
            path.display()
        )
        .into()),
        Err(e) => Err(format!("the model path {} cannot be read: {e}", path.display()).into()),
    }
}

/// Writes the model to a fresh file beside `cfg.path` and renames it there.
fn build_model(cfg: &Config) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let path = &cfg.path;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create the directory {}: {e}", dir.display()))?;
    let bytes = model_desc(cfg).to_bytes();
    sim::parse(&bytes)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write the model {}: {e}", path.display()).into());
    }
    Ok(())
}

/// The host's probabilities for `x` (`batch` rows).
pub fn host_probs(cfg: &Config, x: &[f32]) -> Vec<f32> {
    let (w1, b1, w2, b2) = weights(cfg);
    let (f, h, c) = (cfg.features, cfg.hidden, cfg.classes);
    x.chunks(f)
        .flat_map(|row| {
            let a: Vec<f32> = (0..h)
                .map(|j| {
                    let z: f32 = (0..f).map(|k| row[k] * w1[k * h + j]).sum::<f32>() + b1[j];
                    z.max(0.0)
                })
                .collect();
            let logits: Vec<f32> = (0..c)
                .map(|j| (0..h).map(|k| a[k] * w2[k * c + j]).sum::<f32>() + b2[j])
                .collect();
            let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = logits.iter().map(|l| (l - m).exp()).collect();
            let s: f32 = e.iter().sum();
            e.into_iter().map(move |v| v / s)
        })
        .collect()
}

/// The description, as msame prints it.
pub fn describe(path: &Path, d: &ModelDesc) -> String {
    let mut s = format!("[INFO] model {}\n", path.display());
    let line = |s: &mut String, role: &str, i: usize, t: &acl::model::TensorInfo| {
        s.push_str(&format!(
            "[INFO] {role}[{i}] name: {}, dtype: {}, format: {}, dims: {:?}, size: {} bytes\n",
            t.name,
            t.data_type.map_or("unknown".into(), |d| format!("{d:?}")),
            t.format.map_or("unknown".into(), |f| format!("{f:?}")),
            t.dims,
            t.size
        ));
    };
    s.push_str(&format!("[INFO] inputs: {}\n", d.inputs().len()));
    for (i, t) in d.inputs().iter().enumerate() {
        line(&mut s, "input", i, t);
    }
    s.push_str(&format!("[INFO] outputs: {}\n", d.outputs().len()));
    for (i, t) in d.outputs().iter().enumerate() {
        line(&mut s, "output", i, t);
    }
    match d.gears() {
        Gears::None => s.push_str("[INFO] static shape\n"),
        Gears::Batch(v) => s.push_str(&format!("[INFO] dynamic batch gears: {v:?}\n")),
        Gears::HeightWidth(v) => s.push_str(&format!("[INFO] dynamic height-width gears: {v:?}\n")),
    }
    s
}

/// Loads the model (building it first if needed), describes it, runs a
/// batch, checks it against the host and times `cfg.runs` executions.
///
/// # Errors
///
/// A wrong configuration, a runtime error, or a result that differs from
/// the host's by more than 1e-4.
pub fn run(stream: &Stream, cfg: &Config) -> Result<Report, Box<dyn std::error::Error>> {
    if !GEARS.contains(&cfg.batch) {
        return Err(format!(
            "batch {} is not one of the model's gears {GEARS:?}",
            cfg.batch
        )
        .into());
    }
    if cfg.runs == 0 {
        return Err("--runs must be positive".into());
    }
    let built = ensure_model(cfg)?;
    let model = Model::load_file(stream.device(), &cfg.path)?;
    let description = describe(&cfg.path, model.desc());
    let batch = cfg.batch as usize;
    let x: Vec<f32> = values(batch * cfg.features, 99);
    let dx = stream.clone_from_host(&x)?;
    let mut dy = stream.alloc_zeros::<f32>(batch * cfg.classes)?;
    let gear = Gear::Batch(cfg.batch);
    model.execute(stream, gear, &[&dx], &mut [&mut dy])?;
    let got = dy.to_host_vec()?;
    let want = host_probs(cfg, &x);
    let max_abs_diff = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    if max_abs_diff > 1e-4 {
        return Err(
            format!("the device's probabilities differ from the host's by {max_abs_diff}").into(),
        );
    }
    // Warm-up done above; time each execution from queueing to completion.
    let mut times = Vec::with_capacity(cfg.runs);
    for _ in 0..cfg.runs {
        let t = Instant::now();
        model.execute(stream, gear, &[&dx], &mut [&mut dy])?;
        stream.synchronize()?;
        times.push(t.elapsed());
    }
    let total: Duration = times.iter().sum();
    model.close()?;
    Ok(Report {
        description,
        built,
        max_abs_diff,
        runs: cfg.runs,
        batch: cfg.batch,
        mean: total / cfg.runs as u32,
        min: times.iter().copied().min().unwrap_or_default(),
        max: times.iter().copied().max().unwrap_or_default(),
    })
}

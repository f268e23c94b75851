//! Quickstart: which backend, the runtime version, the NPUs, and a 1 MiB
//! round trip host → device → host.
//!
//! ```text
//! cargo run --example quickstart                      # real CANN if found, else cann-sim
//! CANN_BACKEND=real cargo run --example quickstart    # real CANN or a clear error
//! CANN_BACKEND=sim  cargo run --example quickstart    # always the simulator
//! ```

use acl::{Device, DeviceBuffer, Runtime};
use std::process::ExitCode;

fn main() -> ExitCode {
    examples::run(|| {
        let backend = examples::select_backend()?;
        println!("backend:      {backend}");

        let rt = Runtime::init()?;
        println!("AscendCL:     {}", rt.version()?);
        println!("devices:      {}", rt.device_count()?);
        println!("SoC:          {}", rt.soc_name()?);

        let npu = Device::new(&rt, 0)?;
        let mem = npu.memory_info()?;
        println!(
            "device 0 HBM: {:.1} GiB free of {:.1} GiB",
            mem.free_bytes as f64 / (1u64 << 30) as f64,
            mem.total_bytes as f64 / (1u64 << 30) as f64
        );

        // 1 MiB of a recognisable pattern, there and back.
        let host: Vec<u8> = (0..1 << 20)
            .map(|i: u32| (i.wrapping_mul(31) >> 3) as u8)
            .collect();
        let on_npu = DeviceBuffer::from_host(&npu, &host)?;
        let back = on_npu.to_host_vec()?;
        if back != host {
            let at = back
                .iter()
                .zip(&host)
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!("round trip corrupted the data at byte {at}").into());
        }
        println!("round trip:   1 MiB host -> device 0 -> host, verified");
        Ok(())
    })
}

//! End to end across processes: a simulated workload in a child process
//! (allocating HBM and copying, with its busy time recorded as the stream
//! workers record it) is seen by `npu-smi-rs --backend sim` in this process,
//! HBM use and utilisation rising while it runs and falling when it exits.
//!
//! The child is this test binary run again with `CHILD_WORKLOAD=1`, which
//! makes the ignored `child_workload` test do the work. Both processes use
//! a private `CANN_SIM_SHM_DIR`, so other simulated processes on the
//! machine cannot disturb the counts.

use cann_sim::acl;
use npu_smi_rs::{BackendChoice, Npu, Utilization};
use std::time::{Duration, Instant};

const CHILD_MIB: u64 = 128;
const DEVICE: i32 = 2;
/// `ACL_MEM_MALLOC_HUGE_FIRST` and `ACL_MEMCPY_HOST_TO_DEVICE` of `acl_rt.h`.
const ACL_MEM_MALLOC_HUGE_FIRST: u32 = 0;
const ACL_MEMCPY_HOST_TO_DEVICE: u32 = 1;

#[test]
#[ignore = "the child side of workload_in_another_process_is_seen_rising_and_falling"]
fn child_workload() {
    cann_sim::sim_only!("drives the simulator's telemetry");
    if std::env::var_os("CHILD_WORKLOAD").is_none() {
        return;
    }
    cann_sim::install().unwrap();
    // The workload calls the simulator's AscendCL directly (telemetry has no
    // AscendCL bindings).
    // SAFETY: a null configuration path is allowed.
    assert_eq!(unsafe { acl::aclInit(std::ptr::null()) }, 0);
    assert_eq!(acl::aclrtSetDevice(DEVICE), 0);
    let size = (CHILD_MIB << 20) as usize;
    let mut dev = std::ptr::null_mut();
    // SAFETY: `dev` is a valid out-pointer.
    let rc = unsafe { acl::aclrtMalloc(&mut dev, size, ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_eq!(rc, 0);
    let host = vec![7u8; 4 << 20];
    let seconds: u64 = std::env::var("CHILD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end {
        let t = Instant::now();
        // SAFETY: `dev` holds `size >= host.len()` bytes; `host` is readable.
        let rc = unsafe {
            acl::aclrtMemcpy(
                dev,
                size,
                host.as_ptr().cast(),
                host.len(),
                ACL_MEMCPY_HOST_TO_DEVICE,
            )
        };
        assert_eq!(rc, 0);
        // What the stream workers report after each task.
        cann_sim::telemetry::record_busy(DEVICE as u32, t.elapsed());
        cann_sim::telemetry::record_transfer(DEVICE as u32, host.len() as u64);
    }
    // SAFETY: allocated above, freed once.
    assert_eq!(unsafe { acl::aclrtFree(dev) }, 0);
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool, show: impl Fn() -> String) {
    let end = Instant::now() + timeout;
    while !f() {
        assert!(
            Instant::now() < end,
            "timed out waiting for {what}; last seen: {}",
            show()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn workload_in_another_process_is_seen_rising_and_falling() {
    cann_sim::sim_only!("configures the simulator through CANN_SIM_* variables");
    let tmp = tempfile::Builder::new()
        .prefix("npu-smi-rs-e2e-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    // SAFETY: the only test of this binary that runs by default sets it
    // before anything reads the environment.
    unsafe { std::env::set_var("CANN_SIM_SHM_DIR", dir) };
    let npu = Npu::with_backend(BackendChoice::Sim).unwrap();
    let d = npu.device_by_logical_id(DEVICE as u32).unwrap();
    assert_eq!(d.hbm_info().unwrap().used_mib, 0);
    assert_eq!(d.utilization_percent(Utilization::AiCore).unwrap(), 0);
    let idle_power = d.power_watts().unwrap();
    let idle_temp = d.temperature_celsius().unwrap();

    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_workload",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CHILD_WORKLOAD", "1")
        .env("CHILD_SECONDS", "3")
        .env("CANN_SIM_SHM_DIR", dir)
        .spawn()
        .unwrap();
    let pid = child.id();
    let show = || {
        let files: Vec<String> = std::fs::read_dir(dir)
            .map(|r| {
                r.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "{:?}, AI Core {:?}%, processes {:?}, files {files:?}",
            d.hbm_info(),
            d.utilization_percent(Utilization::AiCore),
            d.processes()
        )
    };

    wait_for(
        "the child's HBM and load",
        Duration::from_secs(20),
        || {
            d.hbm_info().unwrap().used_mib >= CHILD_MIB
                && d.utilization_percent(Utilization::AiCore).unwrap() >= 50
        },
        show,
    );
    let procs = d.processes().unwrap();
    assert_eq!(procs.len(), 1, "{procs:?}");
    assert_eq!(procs[0].pid, pid);
    assert!(procs[0].memory_bytes >= CHILD_MIB << 20);
    assert!(d.power_watts().unwrap() > idle_power);
    assert!(d.temperature_celsius().unwrap() > idle_temp);
    assert!(d.utilization_percent(Utilization::HbmBandwidth).unwrap() > 0);
    // Other devices are untouched.
    assert_eq!(
        npu.device_by_logical_id(0)
            .unwrap()
            .hbm_info()
            .unwrap()
            .used_mib,
        0
    );

    assert!(child.wait().unwrap().success());
    wait_for(
        "the child's state to be gone",
        Duration::from_secs(5),
        || d.hbm_info().unwrap().used_mib == 0 && d.processes().unwrap().is_empty(),
        show,
    );
    assert_eq!(d.utilization_percent(Utilization::AiCore).unwrap(), 0);
    assert_eq!(d.power_watts().unwrap(), idle_power);
    assert!(
        !dir.join(format!("proc-{pid}.rec")).exists(),
        "a cleanly exiting process removes its record"
    );
}

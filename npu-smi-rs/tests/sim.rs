//! Every metric on the simulator backend, in process: identity, ids,
//! defaults of an idle chip, live HBM use and processes after an
//! allocation, "not supported" as its own error, and exact misuse errors.
//!
//! One test binary, one process: the tests share the simulator, so the one
//! that allocates uses device 3 only and the others do not assert on it.

mod common;

use cann_sim::acl;
use npu_smi_rs::*;

/// `ACL_MEM_MALLOC_HUGE_FIRST` of `acl_rt.h`.
const ACL_MEM_MALLOC_HUGE_FIRST: u32 = 0;

fn npu() -> Npu {
    // Nothing else may publish into this test's view of the machine.
    common::private_sim_dir("npu-smi-rs-sim-test-");
    Npu::with_backend(BackendChoice::Sim).unwrap()
}

#[test]
fn sim_backend_lists_eight_910b3_chips_with_ids() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let npu = npu();
    assert_eq!(npu.backend_kind(), BackendKind::Sim);
    assert_eq!(
        npu.driver_version().unwrap(),
        format!("cann-sim {}", env!("CARGO_PKG_VERSION"))
    );
    let devs = npu.devices().unwrap();
    assert_eq!(devs.len(), 8);
    for (i, d) in devs.iter().enumerate() {
        let i = i as u32;
        assert_eq!(
            (d.card_id(), d.chip_id(), d.logical_id(), d.physical_id()),
            (i, 0, Some(i), Some(i))
        );
    }
    let cards = npu.cards().unwrap();
    assert_eq!(cards.len(), 8);
    assert_eq!(cards[5].id(), 5);
    assert_eq!(cards[5].devices().len(), 1);
    assert_eq!(npu.device_by_logical_id(6).unwrap().card_id(), 6);
}

#[test]
fn every_metric_of_an_idle_chip() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let d = npu().device_by_logical_id(1).unwrap();
    assert_eq!(
        d.chip_info().unwrap(),
        ChipInfo {
            chip_type: "Ascend".into(),
            name: "910B3".into(),
            version: Some("V1".into()),
            aicore_count: Some(20)
        }
    );
    assert_eq!(d.pcie_bus_id().unwrap().to_string(), "0000:C2:00.0");
    assert_eq!(d.health().unwrap(), Health::Ok);
    assert_eq!(d.error_codes().unwrap(), Vec::<u32>::new());
    assert_eq!(d.temperature_celsius().unwrap(), 35);
    assert_eq!(d.power_watts().unwrap(), 90.0, "900 tenths of a watt");
    assert_eq!(d.voltage_volts().unwrap(), 0.8, "80 hundredths of a volt");
    for u in Utilization::ALL {
        assert_eq!(d.utilization_percent(u).unwrap(), 0, "{u:?}");
    }
    assert_eq!(d.aicore_utilization_percent().unwrap(), 0);
    let hbm = d.hbm_info().unwrap();
    assert_eq!((hbm.total_mib, hbm.used_mib), (65536, 0));
    assert_eq!(
        (
            hbm.temperature_celsius,
            hbm.frequency_mhz,
            hbm.bandwidth_utilization_percent
        ),
        (Some(33), Some(1600), Some(0))
    );
    assert_eq!(d.frequency_mhz(Clock::AiCoreCurrent).unwrap(), 800);
    assert_eq!(d.frequency_mhz(Clock::AiCoreMax).unwrap(), 1800);
    assert_eq!(d.frequency_mhz(Clock::Hbm).unwrap(), 1600);
    let ecc = d.ecc(EccMemory::Hbm).unwrap();
    assert!(ecc.enabled);
    assert_eq!(ecc.double_bit_errors, 0);
    assert_eq!(d.processes().unwrap(), vec![]);
    let s = d.status();
    assert_eq!(s.errors, Vec::<String>::new());
    assert_eq!(s.ddr, None, "not supported, so absent without an error");
}

#[test]
fn metrics_a_910b_lacks_are_not_supported_errors() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let d = npu().device_by_logical_id(2).unwrap();
    let e = d.ddr_info().unwrap_err();
    assert!(e.is_not_supported());
    assert_eq!(
        e,
        Error::NotSupported {
            call: "dcmi_get_device_memory_info_v3",
            detail: "dcmi_get_device_memory_info_v3: DDR memory information is not supported on Ascend910B3".into()
        }
    );
    assert_eq!(
        d.ecc(EccMemory::Ddr).unwrap_err().to_string(),
        "dcmi_get_device_ecc_info is not supported on this chip: dcmi_get_device_ecc_info: ECC of memory type 0 is not supported on Ascend910B3"
    );
}

#[test]
fn a_missing_logical_id_names_the_ones_that_exist() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    assert_eq!(
        npu().device_by_logical_id(8).unwrap_err().to_string(),
        "no NPU has logical id 8 (the logical ids are: 0, 1, 2, 3, 4, 5, 6, 7)"
    );
}

#[test]
fn allocating_on_the_sim_shows_in_hbm_use_and_processes() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let npu = npu();
    let d = npu.device_by_logical_id(3).unwrap();
    // The workload calls the simulator's AscendCL directly (the process-wide
    // AscendCL is the sim here; telemetry has no AscendCL bindings).
    // SAFETY: a null configuration path is allowed.
    assert_eq!(unsafe { acl::aclInit(std::ptr::null()) }, 0);
    assert_eq!(acl::aclrtSetDevice(3), 0);
    let mut p = std::ptr::null_mut();
    // SAFETY: `p` is a valid out-pointer.
    let rc = unsafe { acl::aclrtMalloc(&mut p, 96 << 20, ACL_MEM_MALLOC_HUGE_FIRST) };
    assert_eq!(rc, 0);
    // The snapshot is cached for 50 ms.
    std::thread::sleep(std::time::Duration::from_millis(60));
    let hbm = d.hbm_info().unwrap();
    assert!(hbm.used_mib >= 96, "{hbm:?}");
    let procs = d.processes().unwrap();
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].pid, std::process::id());
    assert!(procs[0].memory_bytes >= 96 << 20);
    assert!(procs[0].name.is_some());
    // SAFETY: `p` came from aclrtMalloc and is freed once.
    assert_eq!(unsafe { acl::aclrtFree(p) }, 0);
    std::thread::sleep(std::time::Duration::from_millis(60));
    assert_eq!(d.hbm_info().unwrap().used_mib, 0);
    assert_eq!(d.processes().unwrap(), vec![]);
}

#[test]
fn handles_are_usable_from_other_threads() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let d = npu().device_by_logical_id(4).unwrap();
    let t = std::thread::spawn(move || d.temperature_celsius().unwrap());
    assert_eq!(t.join().unwrap(), 35);
}

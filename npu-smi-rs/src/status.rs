//! [`DeviceStatus`]: every metric of a device, read at once.

use crate::Device;
use crate::error::Error;
use crate::types::*;

#[cfg(feature = "serde")]
use serde::Serialize;

/// Every metric of one device at one moment. A metric that could not be read
/// is `None`; why is in [`errors`](DeviceStatus::errors) (metrics that are
/// merely not supported are `None` without an entry).
///
/// Plain data: `Send + Sync`, `Clone`; `Serialize` with the `serde` feature.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct DeviceStatus {
    /// Card id (`npu-smi`'s NPU).
    pub card_id: u32,
    /// Chip index on the card.
    pub chip_id: u32,
    /// Logical id.
    pub logical_id: Option<u32>,
    /// Physical id.
    pub physical_id: Option<u32>,
    /// Chip identity.
    pub chip: Option<ChipInfo>,
    /// PCIe address.
    pub pcie_bus_id: Option<PcieBusId>,
    /// Alarm level.
    pub health: Option<Health>,
    /// Active error codes.
    pub error_codes: Option<Vec<u32>>,
    /// Chip temperature, °C.
    pub temperature_celsius: Option<i32>,
    /// Power draw, W.
    pub power_watts: Option<f64>,
    /// Core voltage, V.
    pub voltage_volts: Option<f64>,
    /// AI Core utilisation, percent.
    pub aicore_utilization_percent: Option<u32>,
    /// AI CPU utilisation, percent.
    pub aicpu_utilization_percent: Option<u32>,
    /// Vector Core utilisation, percent.
    pub vector_utilization_percent: Option<u32>,
    /// HBM bandwidth utilisation, percent.
    pub hbm_bandwidth_utilization_percent: Option<u32>,
    /// HBM.
    pub hbm: Option<HbmInfo>,
    /// Device DDR.
    pub ddr: Option<DdrInfo>,
    /// Current AI Core clock, MHz.
    pub aicore_frequency_mhz: Option<u32>,
    /// Rated AI Core clock, MHz.
    pub aicore_max_frequency_mhz: Option<u32>,
    /// HBM clock, MHz.
    pub hbm_frequency_mhz: Option<u32>,
    /// HBM ECC counters.
    pub hbm_ecc: Option<EccCounts>,
    /// DDR ECC counters.
    pub ddr_ecc: Option<EccCounts>,
    /// Processes using the device.
    pub processes: Option<Vec<ProcessInfo>>,
    /// Metrics that failed (not those merely unsupported), with why.
    pub errors: Vec<String>,
}

pub(crate) fn read(d: &Device) -> DeviceStatus {
    let mut errors = Vec::new();
    fn ok<T>(errors: &mut Vec<String>, name: &str, r: Result<T, Error>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) if e.is_not_supported() => None,
            Err(e) => {
                errors.push(format!("{name}: {e}"));
                None
            }
        }
    }
    let e = &mut errors;
    let chip = ok(e, "chip_info", d.chip_info());
    let pcie_bus_id = ok(e, "pcie_bus_id", d.pcie_bus_id());
    let health = ok(e, "health", d.health());
    let error_codes = ok(e, "error_codes", d.error_codes());
    let temperature_celsius = ok(e, "temperature", d.temperature_celsius());
    let power_watts = ok(e, "power", d.power_watts());
    let voltage_volts = ok(e, "voltage", d.voltage_volts());
    let aicore = ok(e, "aicore", d.utilization_percent(Utilization::AiCore));
    let aicpu = ok(e, "aicpu", d.utilization_percent(Utilization::AiCpu));
    let vector = ok(e, "vector", d.utilization_percent(Utilization::Vector));
    let hbm_bw = ok(
        e,
        "hbm_bandwidth",
        d.utilization_percent(Utilization::HbmBandwidth),
    );
    let hbm = ok(e, "hbm", d.hbm_info());
    let ddr = ok(e, "ddr", d.ddr_info());
    let aicore_frequency_mhz = ok(e, "aicore_frequency", d.frequency_mhz(Clock::AiCoreCurrent));
    let aicore_max_frequency_mhz = ok(e, "aicore_max_frequency", d.frequency_mhz(Clock::AiCoreMax));
    let hbm_frequency_mhz = ok(e, "hbm_frequency", d.frequency_mhz(Clock::Hbm));
    let hbm_ecc = ok(e, "hbm_ecc", d.ecc(EccMemory::Hbm));
    let ddr_ecc = ok(e, "ddr_ecc", d.ecc(EccMemory::Ddr));
    let processes = ok(e, "processes", d.processes());
    DeviceStatus {
        card_id: d.card_id(),
        chip_id: d.chip_id(),
        logical_id: d.logical_id(),
        physical_id: d.physical_id(),
        chip,
        pcie_bus_id,
        health,
        error_codes,
        temperature_celsius,
        power_watts,
        voltage_volts,
        aicore_utilization_percent: aicore,
        aicpu_utilization_percent: aicpu,
        vector_utilization_percent: vector,
        hbm_bandwidth_utilization_percent: hbm_bw,
        hbm,
        ddr,
        aicore_frequency_mhz,
        aicore_max_frequency_mhz,
        hbm_frequency_mhz,
        hbm_ecc,
        ddr_ecc,
        processes,
        errors,
    }
}

//! The values the metrics return. Units are in field names.
//!
//! Every type here is plain data: `Send + Sync`, `Clone`, comparable, and
//! (with the `serde` feature) serialisable.

use std::fmt;

#[cfg(feature = "serde")]
use serde::Serialize;

/// Which backend a [`Npu`](crate::Npu) reads through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize), serde(rename_all = "kebab-case"))]
pub enum BackendKind {
    /// `libdcmi.so`, the driver's management library.
    Dcmi,
    /// The `npu-smi` command's text output (where `libdcmi.so` cannot be
    /// loaded, e.g. some containers).
    NpuSmi,
    /// The `cann-sim` software NPU, through the same DCMI code path.
    Sim,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Dcmi => "dcmi",
            BackendKind::NpuSmi => "npu-smi",
            BackendKind::Sim => "sim",
        })
    }
}

/// `struct dcmi_chip_info`: what the chip is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ChipInfo {
    /// Chip family, e.g. `Ascend`.
    pub chip_type: String,
    /// Chip name, e.g. `910B3`.
    pub name: String,
    /// Chip revision, e.g. `V1` (`None` where the backend does not say).
    pub version: Option<String>,
    /// Number of AI Cores (`None` where the backend does not say).
    pub aicore_count: Option<u32>,
}

/// A PCIe address, printed as `npu-smi` does: `0000:C1:00.0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PcieBusId {
    /// PCI domain (segment).
    pub domain: u32,
    /// Bus.
    pub bus: u8,
    /// Device.
    pub device: u8,
    /// Function.
    pub function: u8,
}

impl fmt::Display for PcieBusId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04X}:{:02X}:{:02X}.{}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl std::str::FromStr for PcieBusId {
    type Err = String;

    /// Parses `0000:C1:00.0` (hex domain, bus and device; decimal function).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a PCIe bus id like 0000:C1:00.0");
        let (domain, rest) = s.split_once(':').ok_or_else(bad)?;
        let (bus, rest) = rest.split_once(':').ok_or_else(bad)?;
        let (device, function) = rest.split_once('.').ok_or_else(bad)?;
        Ok(PcieBusId {
            domain: u32::from_str_radix(domain, 16).map_err(|_| bad())?,
            bus: u8::from_str_radix(bus, 16).map_err(|_| bad())?,
            device: u8::from_str_radix(device, 16).map_err(|_| bad())?,
            function: function.parse().map_err(|_| bad())?,
        })
    }
}

#[cfg(feature = "serde")]
impl Serialize for PcieBusId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `dcmi_get_device_health`: the chip's alarm level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(Serialize), serde(rename_all = "kebab-case"))]
pub enum Health {
    /// 0: healthy.
    Ok,
    /// 1: a general (minor) alarm.
    Warning,
    /// 2: a major alarm.
    Error,
    /// 3: a critical alarm.
    Critical,
    /// Any other value (`0xFFFFFFFF`: the device is absent).
    Unknown(u32),
}

impl Health {
    /// The DCMI value: 0, 1, 2, 3, or the unknown value itself.
    pub fn code(self) -> u32 {
        match self {
            Health::Ok => 0,
            Health::Warning => 1,
            Health::Error => 2,
            Health::Critical => 3,
            Health::Unknown(v) => v,
        }
    }

    /// From the DCMI value.
    pub fn from_code(code: u32) -> Health {
        match code {
            0 => Health::Ok,
            1 => Health::Warning,
            2 => Health::Error,
            3 => Health::Critical,
            v => Health::Unknown(v),
        }
    }

    /// From `npu-smi`'s word: `OK`, `Warning`, `Alarm` (major), `Critical`.
    pub fn from_npu_smi(word: &str) -> Health {
        match word.trim().to_ascii_lowercase().as_str() {
            "ok" => Health::Ok,
            "warning" | "general warning" => Health::Warning,
            "alarm" | "error" | "major alarm" => Health::Error,
            "critical" | "critical alarm" => Health::Critical,
            _ => Health::Unknown(u32::MAX),
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Health::Ok => f.write_str("OK"),
            Health::Warning => f.write_str("Warning"),
            Health::Error => f.write_str("Alarm"),
            Health::Critical => f.write_str("Critical"),
            Health::Unknown(v) => write!(f, "Unknown({v:#x})"),
        }
    }
}

/// What [`Device::utilization_percent`](crate::Device::utilization_percent)
/// measures (`dcmi_get_device_utilization_rate`'s `input_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize), serde(rename_all = "kebab-case"))]
pub enum Utilization {
    /// AI Core busy rate (2).
    AiCore,
    /// AI CPU busy rate (3).
    AiCpu,
    /// Vector Core busy rate (12).
    Vector,
    /// HBM bandwidth use (10).
    HbmBandwidth,
}

impl Utilization {
    /// All kinds, in display order.
    pub const ALL: [Utilization; 4] = [
        Utilization::AiCore,
        Utilization::AiCpu,
        Utilization::Vector,
        Utilization::HbmBandwidth,
    ];
}

/// A clock [`Device::frequency_mhz`](crate::Device::frequency_mhz) reads
/// (`dcmi_get_device_frequency`'s `input_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize), serde(rename_all = "kebab-case"))]
pub enum Clock {
    /// Current AI Core clock (7).
    AiCoreCurrent,
    /// Rated AI Core clock (9).
    AiCoreMax,
    /// HBM clock (6).
    Hbm,
}

/// `dcmi_get_device_hbm_info`: high-bandwidth memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct HbmInfo {
    /// Total HBM, MiB.
    pub total_mib: u64,
    /// HBM in use, MiB.
    pub used_mib: u64,
    /// HBM temperature, °C (`None` where the backend does not say).
    pub temperature_celsius: Option<i32>,
    /// HBM clock, MHz (`None` where the backend does not say).
    pub frequency_mhz: Option<u32>,
    /// HBM bandwidth use, percent (`None` where the backend does not say).
    pub bandwidth_utilization_percent: Option<u32>,
}

/// `dcmi_get_device_memory_info_v3`: the device's DDR memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct DdrInfo {
    /// Total DDR, MiB.
    pub total_mib: u64,
    /// DDR in use, MiB: the total less what is available (as
    /// [`HbmInfo::used_mib`] for HBM).
    pub used_mib: u64,
    /// Available DDR, MiB.
    pub available_mib: u64,
    /// DDR clock, MHz (`None` where the backend does not say).
    pub frequency_mhz: Option<u32>,
    /// Usage, percent.
    pub utilization_percent: u32,
}

/// Which memory's ECC counters to read (`enum dcmi_device_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(Serialize), serde(rename_all = "kebab-case"))]
pub enum EccMemory {
    /// DDR (0).
    Ddr,
    /// HBM (2).
    Hbm,
}

/// `dcmi_get_device_ecc_info`: error-correction counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct EccCounts {
    /// ECC is enabled.
    pub enabled: bool,
    /// Single-bit (corrected) errors since the last clear.
    pub single_bit_errors: u32,
    /// Double-bit (uncorrected) errors since the last clear.
    pub double_bit_errors: u32,
    /// Single-bit errors over the device's life.
    pub total_single_bit_errors: u32,
    /// Double-bit errors over the device's life.
    pub total_double_bit_errors: u32,
    /// Pages isolated for single-bit errors.
    pub single_bit_isolated_pages: u32,
    /// Pages isolated for double-bit errors.
    pub double_bit_isolated_pages: u32,
}

/// One process using a device (`struct dcmi_proc_mem_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(Serialize))]
pub struct ProcessInfo {
    /// Host process id.
    pub pid: u32,
    /// Device memory it holds, bytes.
    pub memory_bytes: u64,
    /// Its name (from `/proc/<pid>/comm`, or `npu-smi`'s table), when known.
    pub name: Option<String>,
}

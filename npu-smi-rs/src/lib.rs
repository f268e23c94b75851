//! NPU telemetry for Huawei Ascend NPUs (health, temperature, power,
//! utilisation, HBM, clocks, ECC, processes), as a library and a CLI: what
//! NVML and `nvidia-smi` are to NVIDIA GPUs.
//!
//! # Backends
//!
//! - **DCMI** (`libdcmi.so`, through `dcmi-sys`), the primary source.
//! - **`npu-smi`**: its text output, parsed ([`parse`]), where `libdcmi.so`
//!   cannot be loaded (some containers ship the binary but not the library).
//! - **The simulator** (`cann-sim`, feature `sim`): installs its DCMI table
//!   and then takes the very DCMI code path a real device does; it shows the
//!   live state of every process using the simulator on the machine.
//!
//! [`Npu::init`] picks DCMI, else `npu-smi` on `PATH`, else fails with an
//! error that lists what it searched and names `CANN_BACKEND=sim` (or
//! [`BackendChoice::Sim`], `--backend sim` in the CLI). It **never** falls
//! back to the simulator silently. [`Npu::from_env`] honours `CANN_BACKEND`.
//!
//! # Handles
//!
//! [`Npu`], [`Card`] and [`Device`] are cheap `Arc`-based handles with no
//! lifetimes: clone them, store them, send them to other threads (all are
//! `Send + Sync`). Every metric returns [`Result`]; a metric the chip (or the
//! backend) lacks is [`Error::NotSupported`], distinct from a failure. Units
//! are in the method names (`power_watts`, `temperature_celsius`) or in the
//! field names of the returned types; every method names its C function in a
//! `#[doc(alias)]`.
//!
//! ```
//! # #[cfg(feature = "sim")] {
//! use npu_smi_rs::{BackendChoice, Npu};
//!
//! let npu = Npu::with_backend(BackendChoice::Sim).unwrap();
//! for dev in npu.devices().unwrap() {
//!     let hbm = dev.hbm_info().unwrap();
//!     println!(
//!         "NPU {} chip {}: {} °C, {:.1} W, HBM {}/{} MiB",
//!         dev.card_id(),
//!         dev.chip_id(),
//!         dev.temperature_celsius().unwrap(),
//!         dev.power_watts().unwrap(),
//!         hbm.used_mib,
//!         hbm.total_mib
//!     );
//! }
//! # }
//! ```
//!
//! # Features
//!
//! - `sim`: the simulator backend (pulls in `cann-sim`). Off by default, so
//!   that a production build never contains the simulator.
//! - `serde`: `Serialize` on every value type.
//! - `cli`: the `npu-smi-rs` binary (implies `sim` and `serde`; adds clap,
//!   ratatui, hyper + hyper-util + tokio, prometheus-client).

pub(crate) mod backend;
mod error;
pub mod parse;
mod status;
mod types;

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

pub use error::{Error, Result};
pub use status::DeviceStatus;
pub use types::*;

use backend::{Backend, ChipAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which backend [`Npu::with_backend`] uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendChoice {
    /// DCMI if it loads and initialises, else `npu-smi` on `PATH`; never the
    /// simulator.
    Auto,
    /// DCMI only.
    Dcmi,
    /// The `npu-smi` program at this path (`None`: found on `PATH`).
    NpuSmi(Option<PathBuf>),
    /// The `cann-sim` simulator (needs the `sim` feature).
    Sim,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;

    /// `auto` (or `real`), `dcmi`, `npu-smi`, `sim`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" | "real" => Ok(BackendChoice::Auto),
            "dcmi" => Ok(BackendChoice::Dcmi),
            "npu-smi" | "npusmi" => Ok(BackendChoice::NpuSmi(None)),
            "sim" => Ok(BackendChoice::Sim),
            other => Err(format!(
                "{other:?} is not a backend: use auto, dcmi, npu-smi or sim"
            )),
        }
    }
}

/// The bounds on each run of `npu-smi` (the [`BackendChoice::NpuSmi`]
/// backend, and [`BackendChoice::Auto`] when it falls back to `npu-smi`).
///
/// A run that takes longer than `timeout`, or prints more than
/// `max_output_bytes` on its standard output, is killed (with everything it
/// started) and fails with [`Error::Aborted`]. While runs killed this way
/// have not ended (a driver wedged in the kernel), new runs are refused at
/// once rather than piling up.
///
/// ```
/// use std::time::Duration;
///
/// let limits = npu_smi_rs::NpuSmiLimits {
///     timeout: Duration::from_secs(3),
///     ..Default::default()
/// };
/// assert_eq!(limits.max_output_bytes, 8 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NpuSmiLimits {
    /// The longest one run may take.
    pub timeout: Duration,
    /// The most one run may print on its standard output, in bytes.
    pub max_output_bytes: usize,
}

impl Default for NpuSmiLimits {
    /// 10 s per run (a healthy `npu-smi info` takes well under a second;
    /// Prometheus' default scrape timeout is 10 s), 8 MiB of output (the
    /// table of 256 NPUs with their processes is a few hundred KiB).
    fn default() -> Self {
        NpuSmiLimits {
            timeout: Duration::from_secs(10),
            max_output_bytes: 8 << 20,
        }
    }
}

/// A connection to the machine's NPUs through one backend.
///
/// Cheap to clone (an `Arc`); `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Npu {
    backend: Arc<dyn Backend>,
}

/// The message for "no backend": what was searched, and the way to the
/// simulator.
fn no_backend(dcmi: &Error, path_dirs: &[PathBuf]) -> Error {
    let dirs = if path_dirs.is_empty() {
        "PATH is empty".to_string()
    } else {
        path_dirs
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(":")
    };
    let dcmi = dcmi.to_string().replace('\n', "\n    ");
    Error::NoBackend(format!(
        "no Ascend NPU driver found.\n\
         Searched:\n  \
         - DCMI (libdcmi.so): {dcmi}\n  \
         - npu-smi: not on PATH ({dirs})\n\
         Install the Ascend driver (or source /usr/local/Ascend/ascend-toolkit/set_env.sh), \
         set CANN_DCMI_LIB to libdcmi.so, or put npu-smi on PATH.\n\
         To use the simulator instead, pass --backend sim or set CANN_BACKEND=sim."
    ))
}

impl Npu {
    /// Connects through the first backend that works: DCMI, then `npu-smi`
    /// on `PATH`. Never the simulator.
    ///
    /// # Errors
    ///
    /// [`Error::NoBackend`] listing every place searched (and naming
    /// `CANN_BACKEND=sim`), or the `npu-smi` failure when it is found but
    /// fails.
    #[doc(alias = "dcmi_init")]
    pub fn init() -> Result<Npu> {
        Npu::with_backend(BackendChoice::Auto)
    }

    /// Connects through the backend `CANN_BACKEND` names (`auto`, `real`,
    /// `dcmi`, `npu-smi`, `sim`; unset means `auto`).
    ///
    /// # Errors
    ///
    /// As [`Npu::with_backend`], or [`Error::NoBackend`] for a value that
    /// names no backend.
    pub fn from_env() -> Result<Npu> {
        let choice = match std::env::var("CANN_BACKEND") {
            Ok(v) => v
                .parse()
                .map_err(|e| Error::NoBackend(format!("CANN_BACKEND: {e}")))?,
            Err(_) => BackendChoice::Auto,
        };
        Npu::with_backend(choice)
    }

    /// Connects through `choice`.
    ///
    /// # Errors
    ///
    /// - [`Error::Load`] or [`Error::Dcmi`] when DCMI cannot be loaded or
    ///   initialised ([`BackendChoice::Dcmi`]);
    /// - [`Error::Command`] / [`Error::Parse`] when `npu-smi` fails;
    /// - [`Error::Sim`] for [`BackendChoice::Sim`] without the `sim`
    ///   feature, or when a real DCMI was already loaded in this process;
    /// - [`Error::NoBackend`] for [`BackendChoice::Auto`] when nothing works.
    pub fn with_backend(choice: BackendChoice) -> Result<Npu> {
        Npu::with_backend_limits(choice, NpuSmiLimits::default())
    }

    /// Connects through `choice`, running `npu-smi` (when that is the
    /// backend) within `limits`.
    ///
    /// # Errors
    ///
    /// As [`Npu::with_backend`], and [`Error::Aborted`] when the first
    /// `npu-smi info` exceeds `limits`.
    pub fn with_backend_limits(choice: BackendChoice, limits: NpuSmiLimits) -> Result<Npu> {
        let npu_smi = |path| -> Result<Arc<dyn Backend>> {
            Ok(Arc::new(backend::smi::NpuSmi::new(path, limits)?))
        };
        let backend: Arc<dyn Backend> = match choice {
            BackendChoice::Dcmi => Arc::new(backend::dcmi::Dcmi::init(BackendKind::Dcmi)?),
            BackendChoice::NpuSmi(Some(path)) => npu_smi(path)?,
            BackendChoice::NpuSmi(None) => {
                let (found, dirs) = backend::smi::find_on_path();
                let path = found.ok_or_else(|| {
                    Error::NoBackend(format!(
                        "npu-smi is not on PATH ({})",
                        std::env::join_paths(&dirs)
                            .map(|p| p.to_string_lossy().into_owned())
                            .unwrap_or_default()
                    ))
                })?;
                npu_smi(path)?
            }
            BackendChoice::Sim => sim_backend()?,
            BackendChoice::Auto => match backend::dcmi::Dcmi::init(BackendKind::Dcmi) {
                Ok(d) => Arc::new(d),
                Err(dcmi_err) => match backend::smi::find_on_path() {
                    (Some(path), _) => npu_smi(path)?,
                    (None, dirs) => return Err(no_backend(&dcmi_err, &dirs)),
                },
            },
        };
        Ok(Npu { backend })
    }

    /// The backend in use.
    pub fn backend_kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// The driver version (`npu-smi`'s `Version:`).
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_driver_version")]
    pub fn driver_version(&self) -> Result<String> {
        self.backend.driver_version()
    }

    /// Every NPU chip, card by card.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_card_list")]
    #[doc(alias = "dcmi_get_device_num_in_card")]
    #[doc(alias = "dcmi_get_device_logic_id")]
    pub fn devices(&self) -> Result<Vec<Device>> {
        Ok(self
            .backend
            .chips()?
            .into_iter()
            .map(|addr| Device {
                npu: self.clone(),
                addr,
            })
            .collect())
    }

    /// Every metric of every device ([`Device::status`] of each), read
    /// together: the `npu-smi` backend runs its queries for all chips at
    /// once (a few at a time, each kind once per chip) instead of one
    /// metric after another.
    ///
    /// # Errors
    ///
    /// When the devices cannot be listed; a metric that fails is in its
    /// device's [`DeviceStatus::errors`].
    pub fn statuses(&self) -> Result<Vec<DeviceStatus>> {
        let devices = self.devices()?;
        let addrs: Vec<ChipAddr> = devices.iter().map(|d| d.addr).collect();
        self.backend.prefetch(&addrs);
        Ok(devices.iter().map(Device::status).collect())
    }

    /// Every card, with its chips.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_card_list")]
    pub fn cards(&self) -> Result<Vec<Card>> {
        let mut cards: Vec<Card> = Vec::new();
        for d in self.devices()? {
            match cards.iter_mut().find(|c| c.id == d.addr.card) {
                Some(c) => c.devices.push(d),
                None => cards.push(Card {
                    id: d.addr.card,
                    devices: vec![d],
                }),
            }
        }
        Ok(cards)
    }

    /// The chip with logical id `id` (what `aclrtSetDevice` takes on a host
    /// without `ASCEND_RT_VISIBLE_DEVICES`).
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchDevice`] naming the ids that exist.
    #[doc(alias = "dcmi_get_card_id_device_id_from_logicid")]
    pub fn device_by_logical_id(&self, id: u32) -> Result<Device> {
        let all = self.devices()?;
        let ids: Vec<String> = all
            .iter()
            .filter_map(|d| d.addr.logical.map(|l| l.to_string()))
            .collect();
        all.into_iter()
            .find(|d| d.addr.logical == Some(id))
            .ok_or_else(|| {
                Error::NoSuchDevice(format!(
                    "no NPU has logical id {id} (the logical ids are: {})",
                    if ids.is_empty() {
                        "none".to_string()
                    } else {
                        ids.join(", ")
                    }
                ))
            })
    }
}

#[cfg(feature = "sim")]
fn sim_backend() -> Result<Arc<dyn Backend>> {
    cann_sim::install().map_err(|e| Error::Sim(e.to_string()))?;
    Ok(Arc::new(backend::dcmi::Dcmi::init(BackendKind::Sim)?))
}

#[cfg(not(feature = "sim"))]
fn sim_backend() -> Result<Arc<dyn Backend>> {
    Err(Error::Sim(
        "npu-smi-rs was built without the `sim` feature".to_string(),
    ))
}

/// One card (an "NPU" in `npu-smi`'s table) and its chips.
///
/// `Send + Sync`; cheap to clone.
#[derive(Debug, Clone)]
pub struct Card {
    id: u32,
    devices: Vec<Device>,
}

impl Card {
    /// The card id (`npu-smi`'s `NPU` column, DCMI's `card_id`).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The card's NPU chips.
    #[doc(alias = "dcmi_get_device_num_in_card")]
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }
}

/// One NPU chip.
///
/// Holds its [`Npu`] (an `Arc`), so it can be stored and sent anywhere:
/// `Send + Sync`, cheap to clone.
#[derive(Debug, Clone)]
pub struct Device {
    npu: Npu,
    addr: ChipAddr,
}

impl Device {
    /// The card id (DCMI `card_id`, `npu-smi`'s `NPU`).
    pub fn card_id(&self) -> u32 {
        self.addr.card
    }

    /// The chip index on its card (DCMI `device_id`, `npu-smi`'s `Chip`).
    pub fn chip_id(&self) -> u32 {
        self.addr.chip
    }

    /// The logical id, when the backend reports it.
    #[doc(alias = "dcmi_get_device_logic_id")]
    pub fn logical_id(&self) -> Option<u32> {
        self.addr.logical
    }

    /// The physical id, when the backend reports it.
    #[doc(alias = "dcmi_get_device_phyid_from_logicid")]
    pub fn physical_id(&self) -> Option<u32> {
        self.addr.physical
    }

    /// The [`Npu`] this device belongs to.
    pub fn npu(&self) -> &Npu {
        &self.npu
    }

    fn b(&self) -> &dyn Backend {
        &*self.npu.backend
    }

    /// Chip type, name, revision and AI Core count.
    ///
    /// # Errors
    ///
    /// The backend's error ([`Error::NotSupported`] where it lacks it).
    #[doc(alias = "dcmi_get_device_chip_info")]
    pub fn chip_info(&self) -> Result<ChipInfo> {
        self.b().chip_info(self.addr)
    }

    /// The PCIe address (`0000:C1:00.0`).
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_pcie_info_v2")]
    pub fn pcie_bus_id(&self) -> Result<PcieBusId> {
        self.b().pcie_bus_id(self.addr)
    }

    /// The alarm level.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_health")]
    pub fn health(&self) -> Result<Health> {
        self.b().health(self.addr)
    }

    /// The active error codes (empty when healthy).
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_errorcode_v2")]
    pub fn error_codes(&self) -> Result<Vec<u32>> {
        self.b().error_codes(self.addr)
    }

    /// Chip temperature, °C.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_temperature")]
    pub fn temperature_celsius(&self) -> Result<i32> {
        self.b().temperature_celsius(self.addr)
    }

    /// Power draw, W (DCMI reports tenths of a watt; converted here).
    ///
    /// # Errors
    ///
    /// The backend's error; [`Error::NotSupported`] for the second chip of
    /// an Atlas A3 card under `npu-smi` (it prints `-`).
    #[doc(alias = "dcmi_get_device_power_info")]
    pub fn power_watts(&self) -> Result<f64> {
        self.b().power_watts(self.addr)
    }

    /// Core voltage, V (DCMI reports hundredths of a volt; converted here).
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_voltage")]
    pub fn voltage_volts(&self) -> Result<f64> {
        self.b().voltage_volts(self.addr)
    }

    /// A utilisation rate, percent.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_utilization_rate")]
    pub fn utilization_percent(&self, what: Utilization) -> Result<u32> {
        self.b().utilization_percent(self.addr, what)
    }

    /// AI Core utilisation, percent.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_utilization_rate")]
    pub fn aicore_utilization_percent(&self) -> Result<u32> {
        self.utilization_percent(Utilization::AiCore)
    }

    /// HBM size, use, temperature, clock and bandwidth use.
    ///
    /// # Errors
    ///
    /// The backend's error; [`Error::NotSupported`] on parts without HBM
    /// (310P).
    #[doc(alias = "dcmi_get_device_hbm_info")]
    pub fn hbm_info(&self) -> Result<HbmInfo> {
        self.b().hbm_info(self.addr)
    }

    /// The device's DDR memory.
    ///
    /// # Errors
    ///
    /// The backend's error; [`Error::NotSupported`] on parts without device
    /// DDR (910B, A3).
    #[doc(alias = "dcmi_get_device_memory_info_v3")]
    pub fn ddr_info(&self) -> Result<DdrInfo> {
        self.b().ddr_info(self.addr)
    }

    /// A clock, MHz.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_frequency")]
    pub fn frequency_mhz(&self, clock: Clock) -> Result<u32> {
        self.b().frequency_mhz(self.addr, clock)
    }

    /// ECC counters of HBM or DDR.
    ///
    /// # Errors
    ///
    /// The backend's error; [`Error::NotSupported`] for memory the part lacks.
    #[doc(alias = "dcmi_get_device_ecc_info")]
    pub fn ecc(&self, memory: EccMemory) -> Result<EccCounts> {
        self.b().ecc(self.addr, memory)
    }

    /// The processes using the device, with the memory each holds.
    ///
    /// # Errors
    ///
    /// The backend's error.
    #[doc(alias = "dcmi_get_device_resource_info")]
    pub fn processes(&self) -> Result<Vec<ProcessInfo>> {
        self.b().processes(self.addr)
    }

    /// Every metric at once (what the CLI shows); a metric that fails is
    /// `None`, and its error is listed in [`DeviceStatus::errors`] unless it
    /// is merely not supported.
    pub fn status(&self) -> DeviceStatus {
        status::read(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync + 'static>() {}

    #[test]
    fn public_types_are_send_and_sync() {
        send_sync::<Npu>();
        send_sync::<Card>();
        send_sync::<Device>();
        send_sync::<Error>();
        send_sync::<DeviceStatus>();
        send_sync::<BackendChoice>();
        send_sync::<NpuSmiLimits>();
        send_sync::<parse::InfoTable>();
        send_sync::<parse::ParseError>();
        send_sync::<ChipInfo>();
        send_sync::<HbmInfo>();
        send_sync::<ProcessInfo>();
    }

    #[test]
    fn backend_names_parse_and_unknown_ones_are_refused() {
        assert_eq!("sim".parse(), Ok(BackendChoice::Sim));
        assert_eq!("REAL".parse(), Ok(BackendChoice::Auto));
        assert_eq!("npu-smi".parse(), Ok(BackendChoice::NpuSmi(None)));
        assert_eq!(
            "gpu".parse::<BackendChoice>(),
            Err("\"gpu\" is not a backend: use auto, dcmi, npu-smi or sim".to_string())
        );
    }
}

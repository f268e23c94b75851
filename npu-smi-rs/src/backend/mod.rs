//! The backends behind [`Npu`](crate::Npu): one trait, three implementations
//! (DCMI, the `npu-smi` text, and the simulator, which is DCMI over
//! `cann-sim`'s table).

use crate::error::Result;
use crate::types::*;

pub(crate) mod command;
pub(crate) mod dcmi;
pub(crate) mod smi;

/// Where a chip is: DCMI's (card, device) pair, and its ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ChipAddr {
    pub card: u32,
    pub chip: u32,
    pub logical: Option<u32>,
    pub physical: Option<u32>,
}

/// One metric source. Implementations are `Send + Sync`: a [`Npu`](crate::Npu)
/// is shared across threads.
pub(crate) trait Backend: Send + Sync + std::fmt::Debug {
    fn kind(&self) -> BackendKind;
    fn chips(&self) -> Result<Vec<ChipAddr>>;
    fn driver_version(&self) -> Result<String>;
    fn chip_info(&self, c: ChipAddr) -> Result<ChipInfo>;
    fn pcie_bus_id(&self, c: ChipAddr) -> Result<PcieBusId>;
    fn health(&self, c: ChipAddr) -> Result<Health>;
    fn error_codes(&self, c: ChipAddr) -> Result<Vec<u32>>;
    fn temperature_celsius(&self, c: ChipAddr) -> Result<i32>;
    fn power_watts(&self, c: ChipAddr) -> Result<f64>;
    fn voltage_volts(&self, c: ChipAddr) -> Result<f64>;
    fn utilization_percent(&self, c: ChipAddr, what: Utilization) -> Result<u32>;
    fn hbm_info(&self, c: ChipAddr) -> Result<HbmInfo>;
    fn ddr_info(&self, c: ChipAddr) -> Result<DdrInfo>;
    fn frequency_mhz(&self, c: ChipAddr, clock: Clock) -> Result<u32>;
    fn ecc(&self, c: ChipAddr, memory: EccMemory) -> Result<EccCounts>;
    fn processes(&self, c: ChipAddr) -> Result<Vec<ProcessInfo>>;
    /// Called before every metric of `chips` is read (a whole
    /// [`Npu::statuses`](crate::Npu::statuses)): a backend whose reads are
    /// costly fetches them here, together. The reads that follow use what
    /// it fetched.
    fn prefetch(&self, _chips: &[ChipAddr]) {}
}

/// The name of `pid` from `/proc/<pid>/comm`, when readable.
pub(crate) fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

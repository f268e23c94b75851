//! The simulated machine as its management driver (DCMI) sees it: every
//! *physical* device, whatever the calling process's
//! `ASCEND_RT_VISIBLE_DEVICES` (that variable renumbers devices for
//! AscendCL, not for the management interface). Physical device `p` is chip
//! `p % chips_per_card` of card `p / chips_per_card`; Atlas A3 parts
//! (`Ascend910_93xx`) have two chips per card, every other part one.

use std::sync::atomic::{AtomicBool, Ordering};

static INITIALIZED: AtomicBool = AtomicBool::new(false);

/// What the simulator knows about the configured SoC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    /// Chips on one card (2 on Atlas A3, 1 elsewhere).
    pub chips_per_card: u32,
    /// The chip name DCMI reports (`910B3`).
    pub chip_name: String,
    /// AI Cores per chip.
    pub aicore_count: u32,
    /// HBM (Atlas A2/A3 training parts) or DDR (310P) device memory.
    pub has_hbm: bool,
    /// `dcmi_get_device_multi_utilization_rate` is supported (A2 and later).
    pub multi_utilization: bool,
    /// The PCI device id.
    pub pci_device_id: u32,
}

impl Model {
    /// The facts of SoC `soc` (a `CANN_SIM_SOC_NAME`).
    pub fn of(soc: &str) -> Model {
        let chip_name = soc.strip_prefix("Ascend").unwrap_or(soc).to_string();
        let a3 = chip_name.starts_with("910_93");
        let p310 = chip_name.starts_with("310");
        let aicore_count = match chip_name.as_str() {
            "910B1" | "910B2" | "910B2C" => 24,
            _ if a3 => 24,
            _ if p310 => 8,
            _ => 20,
        };
        Model {
            chips_per_card: if a3 { 2 } else { 1 },
            chip_name,
            aicore_count,
            has_hbm: !p310,
            multi_utilization: !p310,
            pci_device_id: if p310 { 0xd500 } else { 0xd802 },
        }
    }
}

/// The simulated machine as DCMI sees it.
pub struct Machine {
    /// The configuration, as the driver reads it.
    pub config: &'static crate::config::Config,
    /// The SoC.
    pub model: Model,
}

impl Machine {
    /// Cards.
    pub fn cards(&self) -> u32 {
        self.config
            .physical_devices
            .div_ceil(self.model.chips_per_card)
    }

    /// NPU chips on `card`.
    pub fn chips_in(&self, card: u32) -> u32 {
        let first = card * self.model.chips_per_card;
        self.config
            .physical_devices
            .saturating_sub(first)
            .min(self.model.chips_per_card)
    }

    /// The physical id of `chip` of `card`.
    pub fn physical(&self, card: u32, chip: u32) -> u32 {
        card * self.model.chips_per_card + chip
    }

    /// The card and chip of physical device `physical`.
    pub fn card_chip(&self, physical: u32) -> (u32, u32) {
        (
            physical / self.model.chips_per_card,
            physical % self.model.chips_per_card,
        )
    }

    /// HBM per chip, in bytes.
    pub fn hbm_total_bytes(&self) -> u64 {
        self.config.hbm_bytes
    }
}

/// The simulated machine as the driver sees it: the `CANN_SIM_*`
/// configuration without `ASCEND_RT_VISIBLE_DEVICES`, which renumbers
/// devices for AscendCL only (so a wrong list does not hide the machine from
/// the management interface, as on hardware).
fn config() -> Result<&'static crate::config::Config, &'static str> {
    static CONFIG: std::sync::LazyLock<Result<crate::config::Config, String>> =
        std::sync::LazyLock::new(|| {
            crate::config::Config::from_vars(|name| {
                (name != "ASCEND_RT_VISIBLE_DEVICES")
                    .then(|| std::env::var(name).ok().filter(|v| !v.is_empty()))
                    .flatten()
            })
        });
    CONFIG.as_ref().map_err(String::as_str)
}

/// Initialises the driver (`dcmi_init`); repeated calls succeed.
///
/// # Errors
///
/// Why the configuration is malformed.
pub fn init() -> Result<(), &'static str> {
    config()?;
    INITIALIZED.store(true, Ordering::Release);
    Ok(())
}

/// Whether [`init`] has succeeded.
pub fn initialized() -> bool {
    INITIALIZED.load(Ordering::Acquire)
}

/// The machine.
///
/// # Errors
///
/// Why the configuration is malformed.
pub fn get() -> Result<Machine, &'static str> {
    let config = config()?;
    let model = Model::of(&config.soc_name);
    Ok(Machine { config, model })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_follow_the_soc_name() {
        let b3 = Model::of("Ascend910B3");
        assert_eq!(
            (b3.chips_per_card, b3.chip_name.as_str(), b3.aicore_count),
            (1, "910B3", 20)
        );
        let a3 = Model::of("Ascend910_9391");
        assert_eq!(
            (a3.chips_per_card, a3.aicore_count, a3.has_hbm),
            (2, 24, true)
        );
        let p = Model::of("Ascend310P3");
        assert_eq!(
            (p.chips_per_card, p.has_hbm, p.multi_utilization),
            (1, false, false)
        );
    }
}

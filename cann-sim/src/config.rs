//! The simulated machine, configured from the environment once per process.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `CANN_SIM_DEVICES` | number of NPUs | `8` |
//! | `CANN_SIM_HBM_MIB` | HBM per NPU, in MiB | `65536` (64 GiB) |
//! | `CANN_SIM_SOC_NAME` | SoC name (`aclrtGetSocName`) | `Ascend910B3` |
//!
//! `ASCEND_RT_VISIBLE_DEVICES` (a comma-separated list of physical ids)
//! selects and renumbers the visible devices, as on hardware.

use std::sync::LazyLock;

/// Default device count.
pub const DEFAULT_DEVICES: u32 = 8;
/// Default HBM per device, in MiB.
pub const DEFAULT_HBM_MIB: u64 = 64 * 1024;
/// Default SoC name: an Atlas A2 (910B-class) training part.
pub const DEFAULT_SOC_NAME: &str = "Ascend910B3";

/// The simulated machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Physical devices.
    pub physical_devices: u32,
    /// Visible devices, as physical ids, in logical order.
    pub visible: Vec<u32>,
    /// HBM bytes per device.
    pub hbm_bytes: u64,
    /// SoC name.
    pub soc_name: String,
}

impl Config {
    /// Reads the configuration through `var`.
    ///
    /// # Errors
    ///
    /// A message naming the variable and the bad value.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let physical_devices = match var("CANN_SIM_DEVICES") {
            None => DEFAULT_DEVICES,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=64).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "CANN_SIM_DEVICES={v:?} must be a whole number from 1 to 64"
                    ));
                }
            },
        };
        let hbm_mib = match var("CANN_SIM_HBM_MIB") {
            None => DEFAULT_HBM_MIB,
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if (1..=1 << 24).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "CANN_SIM_HBM_MIB={v:?} must be a whole number of MiB from 1 to 16777216"
                    ));
                }
            },
        };
        let soc_name = match var("CANN_SIM_SOC_NAME") {
            None => DEFAULT_SOC_NAME.to_string(),
            Some(v) if !v.trim().is_empty() && !v.contains('\0') => v.trim().to_string(),
            Some(v) => return Err(format!("CANN_SIM_SOC_NAME={v:?} must be a non-empty name")),
        };
        let visible = match var("ASCEND_RT_VISIBLE_DEVICES") {
            None => (0..physical_devices).collect(),
            Some(v) => parse_visible(&v, physical_devices)?,
        };
        Ok(Config {
            physical_devices,
            visible,
            hbm_bytes: hbm_mib * 1024 * 1024,
            soc_name,
        })
    }

    /// The number of visible devices (`aclrtGetDeviceCount`).
    pub fn device_count(&self) -> u32 {
        self.visible.len() as u32
    }
}

fn parse_visible(v: &str, physical: u32) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let id: u32 = part
            .parse()
            .map_err(|_| format!("ASCEND_RT_VISIBLE_DEVICES={v:?}: {part:?} is not a device id"))?;
        if id >= physical {
            return Err(format!(
                "ASCEND_RT_VISIBLE_DEVICES={v:?}: device {id} does not exist (the simulator has {physical})"
            ));
        }
        if out.contains(&id) {
            return Err(format!(
                "ASCEND_RT_VISIBLE_DEVICES={v:?}: device {id} is listed twice"
            ));
        }
        out.push(id);
    }
    Ok(out)
}

static CONFIG: LazyLock<Result<Config, String>> =
    LazyLock::new(|| Config::from_vars(|name| std::env::var(name).ok().filter(|v| !v.is_empty())));

/// The process's configuration, read from the environment on first use.
///
/// # Errors
///
/// The message for a malformed variable.
pub fn get() -> Result<&'static Config, &'static str> {
    CONFIG.as_ref().map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_are_eight_910b_devices_with_64_gib() {
        let c = Config::from_vars(vars(&[])).unwrap();
        assert_eq!(c.device_count(), 8);
        assert_eq!(c.hbm_bytes, 64 << 30);
        assert_eq!(c.soc_name, "Ascend910B3");
    }

    #[test]
    fn environment_overrides_count_hbm_and_soc() {
        let c = Config::from_vars(vars(&[
            ("CANN_SIM_DEVICES", "2"),
            ("CANN_SIM_HBM_MIB", "1024"),
            ("CANN_SIM_SOC_NAME", "Ascend910_9391"),
        ]))
        .unwrap();
        assert_eq!(
            (c.device_count(), c.hbm_bytes, c.soc_name.as_str()),
            (2, 1 << 30, "Ascend910_9391")
        );
    }

    #[test]
    fn visible_devices_select_and_renumber() {
        let c = Config::from_vars(vars(&[("ASCEND_RT_VISIBLE_DEVICES", "6, 2")])).unwrap();
        assert_eq!(c.visible, vec![6, 2]);
        assert_eq!(c.device_count(), 2);
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (k, v) in [
            ("CANN_SIM_DEVICES", "eight"),
            ("CANN_SIM_DEVICES", "0"),
            ("CANN_SIM_HBM_MIB", "-1"),
            ("ASCEND_RT_VISIBLE_DEVICES", "9"),
            ("ASCEND_RT_VISIBLE_DEVICES", "1,1"),
        ] {
            let err = Config::from_vars(vars(&[(k, v)])).unwrap_err();
            assert!(err.starts_with(k), "{err}");
        }
    }
}

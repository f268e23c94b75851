//! The simulated machine, configured from the environment once per process.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `CANN_SIM_DEVICES` | number of NPUs | `8` |
//! | `CANN_SIM_HBM_MIB` | HBM per NPU, in MiB | `65536` (64 GiB) |
//! | `CANN_SIM_SOC_NAME` | SoC name (`aclrtGetSocName`) | `Ascend910B3` |
//! | `CANN_SIM_MAX_STREAMS` | streams per device, default streams included | `1984` |
//! | `CANN_SIM_MAX_EVENTS` | events per device | `65536` |
//! | `CANN_SIM_FAULTS` | injected faults, see [`crate::faults`] | none |
//! | `CANN_SIM_CHECK` | check mode `off`, `report` or `abort`, see [`crate::check`] | `off` |
//!
//! `ASCEND_RT_VISIBLE_DEVICES` (a comma-separated list of physical ids)
//! selects and renumbers the visible devices, parsed as the runtime parses
//! it (hicann/runtime `src/runtime/core/src/runtime.cc`,
//! `Runtime::GetVisibleDevices` and `SplitString`): the list is read up to
//! the first character that is neither a digit nor a single comma, and cut
//! at the first id that is not a physical device; the ids kept must be
//! ascending and unique. A list out of order, with a repeated id or with no
//! valid id at all (an empty value included) is not a configuration error:
//! `aclrtGetDeviceCount` then fails with 207004 and every device id is
//! invalid (107001), as on hardware ([`Config::visible_error`]).

use std::sync::LazyLock;

/// Default device count.
pub const DEFAULT_DEVICES: u32 = 8;
/// Default HBM per device, in MiB.
pub const DEFAULT_HBM_MIB: u64 = 64 * 1024;
/// Default SoC name: an Atlas A2 (910B-class) training part.
pub const DEFAULT_SOC_NAME: &str = "Ascend910B3";
/// Default streams per device, the default streams of contexts included:
/// 1984 on Atlas A2/A3 parts (hicann/runtime
/// `docs/zh/api_ref/06_stream_management.md`, aclrtCreateStream; older
/// hiascend pages said 2048).
pub const DEFAULT_MAX_STREAMS: u32 = 1984;
/// Default events per device: 65536 on Atlas A2/A3 parts (hicann/runtime
/// `docs/zh/api_ref/07_event_management.md`, aclrtCreateEvent).
pub const DEFAULT_MAX_EVENTS: u32 = 65536;

/// The simulated machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Physical devices.
    pub physical_devices: u32,
    /// Visible devices, as physical ids, in logical order (empty when
    /// [`Config::visible_error`] is set).
    pub visible: Vec<u32>,
    /// Why `ASCEND_RT_VISIBLE_DEVICES` selects no device (out of order,
    /// repeated, no valid id), if it does not.
    pub visible_error: Option<String>,
    /// Set when the runtime's reading of `ASCEND_RT_VISIBLE_DEVICES` stops
    /// at a malformed entry (`0,,1`, `0,1x`, `6, 7`): what is read and that
    /// the rest is ignored. The simulator reads it as the runtime does,
    /// and says so once on stderr; under `CANN_SIM_CHECK` it is an error
    /// ([`Config::visible_error`]), as a typo there silently drops devices.
    pub visible_warning: Option<String>,
    /// HBM bytes per device.
    pub hbm_bytes: u64,
    /// SoC name.
    pub soc_name: String,
    /// Streams per device (`CANN_SIM_MAX_STREAMS`), default streams included.
    pub max_streams: u32,
    /// Events per device (`CANN_SIM_MAX_EVENTS`).
    pub max_events: u32,
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
        let max_streams = match var("CANN_SIM_MAX_STREAMS") {
            None => DEFAULT_MAX_STREAMS,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=65536).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "CANN_SIM_MAX_STREAMS={v:?} must be a whole number from 1 to 65536"
                    ));
                }
            },
        };
        let max_events = match var("CANN_SIM_MAX_EVENTS") {
            None => DEFAULT_MAX_EVENTS,
            Some(v) => match v.trim().parse::<u32>() {
                Ok(n) if (1..=1 << 20).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "CANN_SIM_MAX_EVENTS={v:?} must be a whole number from 1 to 1048576"
                    ));
                }
            },
        };
        let (visible, visible_error, visible_warning) = match var("ASCEND_RT_VISIBLE_DEVICES") {
            None => ((0..physical_devices).collect(), None, None),
            Some(v) => match parse_visible(&v, physical_devices) {
                Ok(ids) => {
                    let warning = partly_read(&v, &ids);
                    (ids, None, warning)
                }
                Err(why) => (Vec::new(), Some(why), None),
            },
        };
        Ok(Config {
            physical_devices,
            visible,
            visible_error,
            visible_warning,
            hbm_bytes: hbm_mib * 1024 * 1024,
            soc_name,
            max_streams,
            max_events,
        })
    }

    /// The number of visible devices (`aclrtGetDeviceCount`).
    pub fn device_count(&self) -> u32 {
        self.visible.len() as u32
    }

    /// The hardware figures of the configured SoC.
    pub fn soc(&self) -> SocSpec {
        soc_spec(&self.soc_name)
    }
}

/// Hardware figures of a SoC, from its platform file in hicann/runtime
/// (`src/platform/platform_config/cann/<SoC>.ini`, section `[SoCInfo]` and
/// `NpuArch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocSpec {
    /// `ai_core_cnt`.
    pub ai_cores: i64,
    /// `cube_core_cnt`.
    pub cube_cores: i64,
    /// `vector_core_cnt`.
    pub vector_cores: i64,
    /// `ai_cpu_cnt`.
    pub ai_cpus: i64,
    /// `l2_size`, bytes.
    pub l2_bytes: i64,
    /// `NpuArch`.
    pub npu_arch: i64,
}

/// Ascend910B3 (the default SoC): 20 AI cores (20 cube + 40 vector),
/// 6 AI CPUs, 192 MiB L2.
pub const SOC_910B3: SocSpec = SocSpec {
    ai_cores: 20,
    cube_cores: 20,
    vector_cores: 40,
    ai_cpus: 6,
    l2_bytes: 201_326_592,
    npu_arch: 2201,
};

/// The figures of `soc`: the platform files' values for the 910B and 910_93
/// parts; any other name gets [`SOC_910B3`]'s.
pub fn soc_spec(soc: &str) -> SocSpec {
    let big = SocSpec {
        ai_cores: 24,
        cube_cores: 24,
        vector_cores: 48,
        ..SOC_910B3
    };
    match soc {
        "Ascend910B1" | "Ascend910B2" | "Ascend910B2C" | "Ascend910_9381" | "Ascend910_9382"
        | "Ascend910_9391" | "Ascend910_9392" => big,
        "Ascend910B4" => SocSpec {
            l2_bytes: 100_663_296,
            ..SOC_910B3
        },
        "Ascend910B4-1" | "Ascend910_9362" | "Ascend910_9363" => SocSpec {
            l2_bytes: 176_160_768,
            ..SOC_910B3
        },
        _ => SOC_910B3,
    }
}

/// `ASCEND_RT_VISIBLE_DEVICES` as the runtime reads it
/// (`Runtime::GetVisibleDevices`, `SplitString`, hicann/runtime
/// `src/runtime/core/src/runtime.cc`): tokens of digits separated by single
/// commas, read up to the first other character (or a second comma in a
/// row); the ids up to the first one that is not a physical device (at most
/// `physical` of them); an id below or equal to an earlier one is an error
/// (`RT_ALL_ORDER_ERROR`, `RT_ALL_DUPLICATED_ERROR`), and so is a list with
/// no valid id (`RT_ALL_DATA_ERROR`).
fn parse_visible(v: &str, physical: u32) -> Result<Vec<u32>, String> {
    let mut tokens = Vec::new();
    if v.starts_with(|c: char| c.is_ascii_digit()) {
        let mut commas = 0;
        for part in v.split_inclusive(|c: char| !c.is_ascii_digit()) {
            let digits = part.trim_end_matches(|c: char| !c.is_ascii_digit());
            if !digits.is_empty() {
                tokens.push(digits);
                commas = 0;
            }
            match part.chars().last() {
                Some(',') if commas == 0 => commas += 1,
                Some(c) if c.is_ascii_digit() => {}
                _ => break,
            }
        }
    }
    let mut out: Vec<u32> = Vec::new();
    for t in tokens {
        let Some(id) = t.parse::<u32>().ok().filter(|&id| id < physical) else {
            break;
        };
        if out.last().is_some_and(|&prev| id < prev) {
            return Err(format!(
                "ASCEND_RT_VISIBLE_DEVICES={v:?} must list device ids in ascending order"
            ));
        }
        if out.contains(&id) {
            return Err(format!(
                "ASCEND_RT_VISIBLE_DEVICES={v:?} lists device {id} twice; ids must be unique"
            ));
        }
        out.push(id);
        if out.len() >= physical as usize {
            break;
        }
    }
    if out.is_empty() {
        return Err(format!(
            "ASCEND_RT_VISIBLE_DEVICES={v:?} names no valid device id; expected ascending ids in \
             [0, {physical}) separated by commas"
        ));
    }
    Ok(out)
}

/// Why the runtime's reading of `v` (which gave `ids`) stops before its
/// end for want of syntax (an empty entry, a character that is not a digit
/// or a comma): `None` when `v` is a plain list of ids separated by single
/// commas (a trailing comma allowed). Ids that name no device of this
/// machine are not reported (a list shared by machines of different sizes
/// is cut there by design).
fn partly_read(v: &str, ids: &[u32]) -> Option<String> {
    let plain = v
        .strip_suffix(',')
        .unwrap_or(v)
        .split(',')
        .all(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    if plain {
        return None;
    }
    Some(format!(
        "ASCEND_RT_VISIBLE_DEVICES={v:?} is read only in part, as the runtime reads it (up to \
         its first empty entry or character that is not a digit or comma): devices {ids:?}, the \
         rest ignored; list device ids separated by single commas"
    ))
}

static CONFIG: LazyLock<Result<Config, String>> = LazyLock::new(|| {
    let mut config = Config::from_vars(|name| {
        // An empty ASCEND_RT_VISIBLE_DEVICES is set (and selects nothing)
        // on the runtime; the simulator's own variables treat empty as unset.
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty() || name == "ASCEND_RT_VISIBLE_DEVICES")
    });
    if let Ok(c) = config.as_mut()
        && let Some(warning) = &c.visible_warning
    {
        if crate::check::enabled() {
            c.visible_error = Some(format!("{warning} (an error under CANN_SIM_CHECK)"));
            c.visible.clear();
        } else {
            eprintln!("cann-sim: warning: {warning}");
        }
    }
    config
});

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
        assert_eq!((c.max_streams, c.max_events), (1984, 65536));
    }

    #[test]
    fn environment_overrides_count_hbm_and_soc() {
        let c = Config::from_vars(vars(&[
            ("CANN_SIM_DEVICES", "2"),
            ("CANN_SIM_HBM_MIB", "1024"),
            ("CANN_SIM_SOC_NAME", "Ascend910_9391"),
            ("CANN_SIM_MAX_STREAMS", "4"),
            ("CANN_SIM_MAX_EVENTS", "8"),
        ]))
        .unwrap();
        assert_eq!((c.max_streams, c.max_events), (4, 8));
        assert_eq!(
            (c.device_count(), c.hbm_bytes, c.soc_name.as_str()),
            (2, 1 << 30, "Ascend910_9391")
        );
    }

    #[test]
    fn visible_devices_select_and_renumber() {
        let c = Config::from_vars(vars(&[("ASCEND_RT_VISIBLE_DEVICES", "2,6")])).unwrap();
        assert_eq!(c.visible, vec![2, 6]);
        assert_eq!(c.device_count(), 2);
    }

    /// hicann/runtime `src/runtime/core/src/runtime.cc`
    /// (`Runtime::GetVisibleDevices`, `SplitString`).
    #[test]
    fn visible_devices_are_cut_at_the_first_invalid_id_and_must_ascend() {
        let visible = |v: &str| parse_visible(v, 8);
        assert_eq!(visible("1,3,9,4"), Ok(vec![1, 3]));
        assert_eq!(visible("0,2,x,5"), Ok(vec![0, 2]));
        assert_eq!(visible("6, 7"), Ok(vec![6]));
        assert_eq!(visible("1,,2"), Ok(vec![1]));
        assert_eq!(visible("007"), Ok(vec![7]));
        assert_eq!(visible("0,1,2,3,4,5,6,7,0"), Ok((0..8).collect()));
        assert!(visible("3,1").unwrap_err().contains("ascending"));
        assert!(visible("1,1").unwrap_err().contains("twice"));
        for none in ["", "x", " 1", "9", ",1", "99999999999"] {
            assert!(visible(none).unwrap_err().contains("no valid"), "{none:?}");
        }
    }

    /// Issue 23: `0,,1` gave one device without a word.
    #[test]
    fn a_list_read_only_in_part_is_said() {
        let warn = |v: &str| partly_read(v, &parse_visible(v, 8).unwrap());
        for plain in ["0,1", "0,1,", "007", "7", "1,3,9,4", "0,1,2,3,4,5,6,7,0"] {
            assert_eq!(warn(plain), None, "{plain:?}");
        }
        assert_eq!(
            warn("0,,1").unwrap(),
            "ASCEND_RT_VISIBLE_DEVICES=\"0,,1\" is read only in part, as the runtime reads it (up \
             to its first empty entry or character that is not a digit or comma): devices [0], the \
             rest ignored; list device ids separated by single commas"
        );
        for part in ["0,2,x,5", "6, 7", "1;2"] {
            assert!(warn(part).is_some(), "{part:?}");
        }
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (k, v) in [
            ("CANN_SIM_DEVICES", "eight"),
            ("CANN_SIM_DEVICES", "0"),
            ("CANN_SIM_HBM_MIB", "-1"),
            ("CANN_SIM_MAX_STREAMS", "0"),
            ("CANN_SIM_MAX_EVENTS", "many"),
        ] {
            let err = Config::from_vars(vars(&[(k, v)])).unwrap_err();
            assert!(err.starts_with(k), "{err}");
        }
    }
}

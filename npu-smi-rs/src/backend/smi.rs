//! The `npu-smi` backend: runs the command and parses its text.
//!
//! `npu-smi info` (the table) gives identity, health, power, temperature,
//! AI Core use, HBM/DDR use, bus ids and processes; it is cached for
//! [`TABLE_TTL`] so that reading every metric of a chip runs it once.
//! Utilisation, clocks, voltage and ECC come from `npu-smi info -t <type>
//! -i <card> -c <chip>`, looked up through alias tables (field names differ
//! between driver versions). A field the output lacks is
//! [`Error::NotSupported`].

use super::command::Runner;
use super::{Backend, ChipAddr};
use crate::NpuSmiLimits;
use crate::error::{Error, Result};
use crate::parse::{self, InfoTable, KeyValues};
use crate::types::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one `npu-smi` run is reused (the table, the id map, and each
/// `-t` query of a chip).
pub(crate) const TABLE_TTL: Duration = Duration::from_millis(500);

/// The `-t` query types [`Npu::statuses`](crate::Npu::statuses) needs for
/// each chip: error codes, voltage, utilisations, AI Core clocks, HBM clock,
/// ECC counters.
const STATUS_QUERIES: [&str; 6] = ["health", "volt", "usages", "common", "memory", "ecc"];

/// The most `npu-smi` runs [`Backend::prefetch`] keeps going at once.
const PREFETCH_PARALLEL: usize = 8;

/// A `-t` query's key: type, card, chip.
type QueryKey = (&'static str, u32, u32);

/// The result of a `-t` query as [`NpuSmi::kv`] returns it.
type Query = std::result::Result<Arc<KeyValues>, Error>;

#[derive(Debug)]
pub(crate) struct NpuSmi {
    runner: Runner,
    table: Mutex<Option<(Instant, Arc<InfoTable>)>>,
    mapping: Mutex<Option<(Instant, Arc<Vec<parse::MappingRow>>)>>,
    queries: Mutex<HashMap<QueryKey, (Instant, Query)>>,
}

/// Finds `npu-smi` on `PATH`; the directories searched are returned either way.
pub(crate) fn find_on_path() -> (Option<PathBuf>, Vec<PathBuf>) {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let found = dirs
        .iter()
        .map(|d| d.join("npu-smi"))
        .find(|p| is_executable(p));
    (found, dirs)
}

fn is_executable(p: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A cached value when it is younger than [`TABLE_TTL`].
fn fresh<T: Clone>(cached: Option<&(Instant, T)>) -> Option<T> {
    cached
        .filter(|(when, _)| when.elapsed() < TABLE_TTL)
        .map(|(_, v)| v.clone())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl NpuSmi {
    pub(crate) fn new(program: PathBuf, limits: NpuSmiLimits) -> Result<NpuSmi> {
        let s = NpuSmi {
            runner: Runner::new(program, limits),
            table: Mutex::new(None),
            mapping: Mutex::new(None),
            queries: Mutex::new(HashMap::new()),
        };
        s.table()?;
        Ok(s)
    }

    fn table(&self) -> Result<Arc<InfoTable>> {
        // Held while `npu-smi info` runs: concurrent readers share one run.
        let mut cache = lock(&self.table);
        if let Some(t) = fresh(cache.as_ref()) {
            return Ok(t);
        }
        let text = self.runner.run(&["info"])?;
        let t = Arc::new(parse::parse_info(&text).map_err(|source| Error::Parse {
            command: self.runner.command_line(&["info"]),
            source,
        })?);
        *cache = Some((Instant::now(), Arc::clone(&t)));
        Ok(t)
    }

    /// `npu-smi info -m`, the logical ids; empty where it fails (older
    /// drivers lack it).
    fn mapping(&self) -> Arc<Vec<parse::MappingRow>> {
        let mut cache = lock(&self.mapping);
        if let Some(m) = fresh(cache.as_ref()) {
            return m;
        }
        let m = Arc::new(
            self.runner
                .run(&["info", "-m"])
                .ok()
                .and_then(|text| parse::parse_mapping(&text).ok())
                .unwrap_or_default(),
        );
        *cache = Some((Instant::now(), Arc::clone(&m)));
        m
    }

    fn row(&self, c: ChipAddr) -> Result<parse::ChipRow> {
        self.table()?
            .chips
            .iter()
            .find(|r| r.npu_id == c.card && r.chip_id == c.chip)
            .cloned()
            .ok_or_else(|| {
                Error::NoSuchDevice(format!(
                    "npu-smi info no longer lists NPU {} chip {}",
                    c.card, c.chip
                ))
            })
    }

    /// `npu-smi info -t <kind> -i <card> -c <chip>`, from the cache when a
    /// run of the last [`TABLE_TTL`] (or a [`Backend::prefetch`]) has it. A
    /// query type the platform or driver rejects (non-zero exit) is
    /// [`Error::NotSupported`] for `call`, with `npu-smi`'s message.
    fn kv(&self, kind: &'static str, c: ChipAddr, call: &'static str) -> Result<Arc<KeyValues>> {
        let key = (kind, c.card, c.chip);
        let cached = fresh(lock(&self.queries).get(&key));
        let result = match cached {
            Some(r) => r,
            None => {
                let r = self.query(kind, c);
                lock(&self.queries).insert(key, (Instant::now(), r.clone()));
                r
            }
        };
        result.map_err(|e| match e {
            Error::Command { command, detail } => Error::NotSupported {
                call,
                detail: format!("`{command}` failed: {detail}"),
            },
            e => e,
        })
    }

    /// Runs one `-t` query (no cache).
    fn query(&self, kind: &str, c: ChipAddr) -> Query {
        let (card, chip) = (c.card.to_string(), c.chip.to_string());
        let args = ["info", "-t", kind, "-i", &card, "-c", &chip];
        let text = self.runner.run(&args)?;
        let kv = parse::parse_key_values(&text).map_err(|source| Error::Parse {
            command: self.runner.command_line(&args),
            source,
        })?;
        Ok(Arc::new(kv))
    }

    fn field<T: std::str::FromStr>(
        &self,
        kind: &'static str,
        c: ChipAddr,
        call: &'static str,
        keys: &[&str],
    ) -> Result<T> {
        let kv = self.kv(kind, c, call)?;
        let v = kv.get(keys).ok_or_else(|| Error::NotSupported {
            call,
            detail: format!("`npu-smi info -t {kind}` prints none of {keys:?}"),
        })?;
        v.parse().map_err(|_| Error::Parse {
            command: format!("npu-smi info -t {kind}"),
            source: parse::ParseError {
                line: 0,
                message: format!("{}: {v:?} is not a number", keys[0]),
            },
        })
    }
}

fn missing(call: &'static str, what: &str) -> Error {
    Error::NotSupported {
        call,
        detail: format!("npu-smi info shows no {what} for this chip"),
    }
}

impl Backend for NpuSmi {
    fn kind(&self) -> BackendKind {
        BackendKind::NpuSmi
    }

    fn chips(&self) -> Result<Vec<ChipAddr>> {
        let t = self.table()?;
        // The logical ids come from `npu-smi info -m` where it works.
        let mapping = self.mapping();
        Ok(t.chips
            .iter()
            .map(|r| ChipAddr {
                card: r.npu_id,
                chip: r.chip_id,
                logical: mapping
                    .iter()
                    .find(|m| m.npu_id == r.npu_id && m.chip_id == r.chip_id)
                    .and_then(|m| m.logic_id),
                physical: r.phy_id,
            })
            .collect())
    }

    fn driver_version(&self) -> Result<String> {
        self.table()?
            .version
            .clone()
            .ok_or_else(|| missing("npu-smi info", "version"))
    }

    fn chip_info(&self, c: ChipAddr) -> Result<ChipInfo> {
        let r = self.row(c)?;
        let name = r
            .name
            .strip_prefix("Ascend")
            .unwrap_or(&r.name)
            .trim()
            .to_string();
        Ok(ChipInfo {
            chip_type: "Ascend".to_string(),
            name,
            version: None,
            aicore_count: None,
        })
    }

    fn pcie_bus_id(&self, c: ChipAddr) -> Result<PcieBusId> {
        let r = self.row(c)?;
        let bus = r
            .bus_id
            .ok_or_else(|| missing("dcmi_get_device_pcie_info_v2", "Bus-Id"))?;
        bus.parse().map_err(|message| Error::Parse {
            command: "npu-smi info".to_string(),
            source: parse::ParseError { line: 0, message },
        })
    }

    fn health(&self, c: ChipAddr) -> Result<Health> {
        Ok(Health::from_npu_smi(&self.row(c)?.health))
    }

    fn error_codes(&self, c: ChipAddr) -> Result<Vec<u32>> {
        let kv = self.kv("health", c, "dcmi_get_device_errorcode_v2")?;
        let Some(v) = kv.get(&["Error Code"]) else {
            return Ok(Vec::new());
        };
        Ok(v.split(|ch: char| ch == ',' || ch.is_whitespace())
            .filter(|s| !s.is_empty() && !matches!(*s, "NA" | "-"))
            .filter_map(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok())
            .collect())
    }

    fn temperature_celsius(&self, c: ChipAddr) -> Result<i32> {
        self.row(c)?
            .temperature_celsius
            .ok_or_else(|| missing("dcmi_get_device_temperature", "Temp(C)"))
    }

    fn power_watts(&self, c: ChipAddr) -> Result<f64> {
        self.row(c)?
            .power_watts
            .ok_or_else(|| missing("dcmi_get_device_power_info", "Power(W)"))
    }

    fn voltage_volts(&self, c: ChipAddr) -> Result<f64> {
        self.field(
            "volt",
            c,
            "dcmi_get_device_voltage",
            &["Voltage(V)", "NPU Voltage(V)", "Chip Voltage(V)"],
        )
    }

    fn utilization_percent(&self, c: ChipAddr, what: Utilization) -> Result<u32> {
        const CALL: &str = "dcmi_get_device_utilization_rate";
        match what {
            Utilization::AiCore => {
                if let Some(v) = self.row(c)?.aicore_percent {
                    return Ok(v);
                }
                self.field(
                    "usages",
                    c,
                    CALL,
                    &[
                        "Aicore Usage Rate(%)",
                        "AI Core Usage Rate(%)",
                        "AICore Usage Rate(%)",
                    ],
                )
            }
            Utilization::AiCpu => self.field(
                "usages",
                c,
                CALL,
                &["Aicpu Usage Rate(%)", "AI CPU Usage Rate(%)"],
            ),
            Utilization::Vector => self.field(
                "usages",
                c,
                CALL,
                &["Aivector Usage Rate(%)", "Vector Core Usage Rate(%)"],
            ),
            Utilization::HbmBandwidth => self.field(
                "usages",
                c,
                CALL,
                &[
                    "HBM Bandwidth Usage Rate(%)",
                    "Memory Bandwidth Usage Rate(%)",
                ],
            ),
        }
    }

    fn hbm_info(&self, c: ChipAddr) -> Result<HbmInfo> {
        let (used_mib, total_mib) = self
            .row(c)?
            .hbm_mib
            .ok_or_else(|| missing("dcmi_get_device_hbm_info", "HBM-Usage(MB)"))?;
        Ok(HbmInfo {
            total_mib,
            used_mib,
            temperature_celsius: None,
            frequency_mhz: None,
            bandwidth_utilization_percent: None,
        })
    }

    fn ddr_info(&self, c: ChipAddr) -> Result<DdrInfo> {
        match self.row(c)?.memory_mib {
            Some((used, total)) if total > 0 => {
                let used = used.min(total);
                Ok(DdrInfo {
                    total_mib: total,
                    used_mib: used,
                    available_mib: total - used,
                    frequency_mhz: None,
                    utilization_percent: percent(used, total),
                })
            }
            _ => Err(missing(
                "dcmi_get_device_memory_info_v3",
                "DDR memory (Memory-Usage(MB) is absent or 0 / 0)",
            )),
        }
    }

    fn frequency_mhz(&self, c: ChipAddr, clock: Clock) -> Result<u32> {
        const CALL: &str = "dcmi_get_device_frequency";
        match clock {
            Clock::AiCoreCurrent => self.field(
                "common",
                c,
                CALL,
                &["Aicore curFreq(MHZ)", "Aicore Current Freq(MHZ)"],
            ),
            Clock::AiCoreMax => self.field(
                "common",
                c,
                CALL,
                &["Aicore Freq(MHZ)", "Aicore Rated Freq(MHZ)"],
            ),
            Clock::Hbm => self.field("memory", c, CALL, &["HBM Frequency(MHz)", "HBM Freq(MHZ)"]),
        }
    }

    fn ecc(&self, c: ChipAddr, memory: EccMemory) -> Result<EccCounts> {
        const CALL: &str = "dcmi_get_device_ecc_info";
        let kv = self.kv("ecc", c, CALL)?;
        let p = match memory {
            EccMemory::Ddr => "DDR",
            EccMemory::Hbm => "HBM",
        };
        let n = |suffix: &str| -> Option<u32> { kv.get(&[&format!("{p} {suffix}")])?.parse().ok() };
        let single = n("Single Bit Error Count").ok_or_else(|| Error::NotSupported {
            call: CALL,
            detail: format!("`npu-smi info -t ecc` prints no {p} counters"),
        })?;
        Ok(EccCounts {
            enabled: kv
                .get(&[&format!("{p} ECC Enable")])
                .is_some_and(|v| v.eq_ignore_ascii_case("enable") || v == "1"),
            single_bit_errors: single,
            double_bit_errors: n("Double Bit Error Count").unwrap_or(0),
            total_single_bit_errors: n("Single Bit Aggregate Total Err Cnt").unwrap_or(single),
            total_double_bit_errors: n("Double Bit Aggregate Total Err Cnt").unwrap_or(0),
            single_bit_isolated_pages: n("Single Bit Isolated Pages Count").unwrap_or(0),
            double_bit_isolated_pages: n("Double Bit Isolated Pages Count").unwrap_or(0),
        })
    }

    fn processes(&self, c: ChipAddr) -> Result<Vec<ProcessInfo>> {
        self.table()?
            .processes
            .iter()
            .filter(|p| p.npu_id == c.card && p.chip_id == c.chip)
            .map(|p| {
                Ok(ProcessInfo {
                    pid: p.pid,
                    memory_bytes: p.memory_mib.checked_mul(1 << 20).ok_or_else(|| {
                        Error::Parse {
                            command: self.runner.command_line(&["info"]),
                            source: parse::ParseError {
                                line: 0,
                                message: format!(
                                    "process {} uses {} MB, more than 2^64 bytes",
                                    p.pid, p.memory_mib
                                ),
                            },
                        }
                    })?,
                    name: Some(p.name.clone()),
                })
            })
            .collect()
    }

    /// Runs every `-t` query of [`STATUS_QUERIES`] for every chip, up to
    /// [`PREFETCH_PARALLEL`] at once, and caches the results as of the end
    /// (the table and id map too), so that reading all metrics of `chips`
    /// next runs nothing more.
    fn prefetch(&self, chips: &[ChipAddr]) {
        let jobs: Vec<(&'static str, ChipAddr)> = chips
            .iter()
            .flat_map(|&c| STATUS_QUERIES.iter().map(move |&kind| (kind, c)))
            .collect();
        let next = AtomicUsize::new(0);
        let done = Mutex::new(Vec::with_capacity(jobs.len()));
        std::thread::scope(|scope| {
            let worker = || {
                while let Some(&(kind, c)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = self.query(kind, c);
                    lock(&done).push(((kind, c.card, c.chip), r));
                }
            };
            for _ in 1..PREFETCH_PARALLEL.min(jobs.len()) {
                // Where no thread can be started, the others (and this
                // one) do the work.
                let _ = std::thread::Builder::new()
                    .name("npu-smi-prefetch".to_string())
                    .spawn_scoped(scope, worker);
            }
            worker();
        });
        let now = Instant::now();
        let mut queries = lock(&self.queries);
        for (key, r) in done.into_inner().unwrap_or_else(|p| p.into_inner()) {
            queries.insert(key, (now, r));
        }
        drop(queries);
        if let Some((when, _)) = lock(&self.table).as_mut() {
            *when = now;
        }
        if let Some((when, _)) = lock(&self.mapping).as_mut() {
            *when = now;
        }
    }
}

/// `used` as a percentage of `total` (`used <= total`, `total > 0`).
fn percent(used: u64, total: u64) -> u32 {
    u32::try_from(u128::from(used) * 100 / u128::from(total)).unwrap_or(u32::MAX)
}

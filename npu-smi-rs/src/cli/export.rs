//! `npu-smi-rs export --listen ADDR`: Prometheus metrics on `/metrics`, with
//! the metric and label names of Huawei's npu-exporter
//! (`Ascend/mind-cluster` `component/npu-exporter`), so that its dashboards
//! and alerts work unchanged.
//!
//! Every chip series carries the labels `id` (the logical id, else the
//! physical id, else the position), `model_name` (`Ascend910B3`), `vdie_id`
//! (empty: not read) and `pcie_bus_info` (`0000:C1:00.0`). Served as
//! OpenMetrics text by `prometheus-client`; each scrape reads the devices
//! afresh.
//!
//! The server is hyper (HTTP/1.1) on a two-thread tokio runtime, built
//! to face an unfriendly network: see [`Options`] for its limits.

use crate::{DeviceStatus, Error, Health, Npu};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

mod http;

/// The label set of every chip metric.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChipLabels {
    /// The chip's id.
    pub id: String,
    /// `Ascend` + chip name.
    pub model_name: String,
    /// The virtual die id (empty).
    pub vdie_id: String,
    /// The PCIe address.
    pub pcie_bus_info: String,
}

type GaugeF = Gauge<f64, AtomicU64>;

/// The content type of [`encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Encodes `devices` as OpenMetrics text.
pub fn encode(devices: &[DeviceStatus]) -> String {
    let mut registry = Registry::default();
    let machine = Gauge::<i64>::default();
    machine.set(devices.len() as i64);
    registry.register(
        "machine_npu_nums",
        "Number of NPU chips on the machine",
        machine,
    );
    let healthy = Gauge::<i64>::default();
    healthy.set(
        devices
            .iter()
            .filter(|d| d.health == Some(Health::Ok))
            .count() as i64,
    );
    registry.register(
        "machine_healthy_npu_nums",
        "Number of healthy NPU chips",
        healthy,
    );

    let mut family = |name: &str, help: &str, value: &dyn Fn(&DeviceStatus) -> Option<f64>| {
        let f = Family::<ChipLabels, GaugeF>::default();
        let mut any = false;
        for (i, d) in devices.iter().enumerate() {
            if let Some(v) = value(d) {
                any = true;
                f.get_or_create(&labels(i, d)).set(v);
            }
        }
        if any {
            registry.register(name, help, f);
        }
    };
    family(
        "npu_chip_info_temperature",
        "NPU chip temperature, degrees Celsius",
        &|d| d.temperature_celsius.map(f64::from),
    );
    family("npu_chip_info_power", "NPU chip power, watts", &|d| {
        d.power_watts
    });
    family("npu_chip_info_voltage", "NPU chip voltage, volts", &|d| {
        d.voltage_volts
    });
    family(
        "npu_chip_info_utilization",
        "AI Core utilization, percent",
        &|d| d.aicore_utilization_percent.map(f64::from),
    );
    family(
        "npu_chip_info_vector_utilization",
        "Vector Core utilization, percent",
        &|d| d.vector_utilization_percent.map(f64::from),
    );
    family(
        "npu_chip_info_health_status",
        "1 when the chip is healthy, 0 otherwise",
        &|d| d.health.map(|h| if h == Health::Ok { 1.0 } else { 0.0 }),
    );
    family(
        "npu_chip_info_aicore_current_freq",
        "Current AI Core clock, MHz",
        &|d| d.aicore_frequency_mhz.map(f64::from),
    );
    family("npu_chip_info_hbm_total_memory", "Total HBM, MB", &|d| {
        d.hbm.map(|h| h.total_mib as f64)
    });
    family("npu_chip_info_hbm_used_memory", "HBM in use, MB", &|d| {
        d.hbm.map(|h| h.used_mib as f64)
    });
    family(
        "npu_chip_info_hbm_utilization",
        "HBM in use, percent of total",
        &|d| {
            d.hbm
                .filter(|h| h.total_mib > 0)
                .map(|h| (h.used_mib as f64 * 100.0 / h.total_mib as f64).round())
        },
    );
    family(
        "npu_chip_info_hbm_bandwidth_utilization",
        "HBM bandwidth utilization, percent",
        &|d| d.hbm_bandwidth_utilization_percent.map(f64::from),
    );
    family(
        "npu_chip_info_hbm_temperature",
        "HBM temperature, degrees Celsius",
        &|d| d.hbm.and_then(|h| h.temperature_celsius).map(f64::from),
    );
    family("npu_chip_info_total_memory", "Total device DDR, MB", &|d| {
        d.ddr.map(|m| m.total_mib as f64)
    });
    family("npu_chip_info_used_memory", "Device DDR in use, MB", &|d| {
        d.ddr.map(|m| m.used_mib as f64)
    });
    family(
        "npu_chip_info_process_info_num",
        "Processes using the chip",
        &|d| d.processes.as_ref().map(|p| p.len() as f64),
    );
    family(
        "npu_chip_info_error_code",
        "The chip's first error code, 0 when none",
        &|d| {
            d.error_codes
                .as_ref()
                .map(|c| c.first().copied().map_or(0.0, f64::from))
        },
    );
    let mut out = String::new();
    if prometheus_client::encoding::text::encode(&mut out, &registry).is_err() {
        out = "# EOF\n".to_string();
    }
    out
}

fn labels(index: usize, d: &DeviceStatus) -> ChipLabels {
    ChipLabels {
        id: d
            .logical_id
            .or(d.physical_id)
            .map_or_else(|| index.to_string(), |i| i.to_string()),
        model_name: d
            .chip
            .as_ref()
            .map(|c| format!("{}{}", c.chip_type, c.name))
            .unwrap_or_default(),
        vdie_id: String::new(),
        pcie_bus_info: d.pcie_bus_id.map(|p| p.to_string()).unwrap_or_default(),
    }
}

pub use http::{Options, accept_retry, bind, serve};

/// Serves until killed (or `options.max_requests` have been answered).
///
/// # Errors
///
/// When `listen` cannot be bound, or when serving fails for good (an
/// `accept` error that retrying cannot cure).
pub fn run(npu: &Npu, listen: &str, options: &Options) -> Result<(), Error> {
    let listener = bind(listen)?;
    let shown = listener
        .local_addr()
        .map_or_else(|_| listen.to_string(), |a| a.to_string());
    eprintln!(
        "npu-smi-rs: serving Prometheus metrics on http://{shown}/metrics ({} backend)",
        npu.backend_kind()
    );
    serve(npu, listener, options)
}

//! The `watch` dashboard, rendered into ratatui's `TestBackend` from the
//! simulator's devices, then from changing samples: the gauges, labels and
//! sparklines show what the devices report.

mod common;

use npu_smi_rs::cli::watch::{Dashboard, HISTORY};
use npu_smi_rs::{BackendChoice, DeviceStatus, Npu};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn sim_statuses() -> Vec<DeviceStatus> {
    common::private_sim_dir("npu-smi-rs-watch-test-");
    let npu = Npu::with_backend(BackendChoice::Sim).unwrap();
    npu.devices()
        .unwrap()
        .iter()
        .take(2)
        .map(|d| d.status())
        .collect()
}

fn screen(dash: &Dashboard, width: u16, height: u16) -> Vec<String> {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    term.draw(|f| dash.draw(f)).unwrap();
    let buf = term.backend().buffer().clone();
    (0..height)
        .map(|y| {
            (0..width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

#[test]
fn dashboard_shows_each_device_with_gauges_and_history() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut dash = Dashboard {
        title: "npu-smi-rs watch · sim".into(),
        ..Dashboard::default()
    };
    let idle = sim_statuses();
    dash.update(idle.clone());
    let lines = screen(&dash, 100, 12);
    let text = lines.join("\n");
    assert!(
        lines[0].starts_with("npu-smi-rs watch · sim   (q to quit)"),
        "{text}"
    );
    assert!(
        lines[1].contains("NPU 0 chip 0 · 910B3 · 0000:C1:00.0 · OK"),
        "{text}"
    );
    assert!(
        lines[6].contains("NPU 1 chip 0 · 910B3 · 0000:C2:00.0 · OK"),
        "{text}"
    );
    assert!(text.contains("AI Core 0%"), "{text}");
    assert!(text.contains("HBM 0/65536 MiB"), "{text}");
    assert!(text.contains("Power 90.0 W   Temp 35 C"), "{text}");

    // A busy sample: the gauge fills, the label and the sparkline follow.
    let mut busy = idle.clone();
    busy[0].aicore_utilization_percent = Some(100);
    busy[0].power_watts = Some(350.0);
    if let Some(h) = busy[0].hbm.as_mut() {
        h.used_mib = 32768;
    }
    dash.update(busy);
    let lines = screen(&dash, 100, 12);
    let text = lines.join("\n");
    assert!(text.contains("AI Core 100%"), "{text}");
    assert!(text.contains("HBM 32768/65536 MiB"), "{text}");
    assert!(text.contains("Power 350.0 W"), "{text}");
    // The util sparkline of device 0 ends in a full bar after an empty one.
    let util_row = &lines[2];
    let spark: String = util_row
        .chars()
        .skip(
            util_row
                .find("util")
                .map(|i| util_row[..i].chars().count())
                .unwrap()
                + 6,
        )
        .take(2)
        .collect();
    assert_eq!(spark, " █", "{text}");
    // History is bounded.
    for _ in 0..HISTORY + 10 {
        dash.update(idle.clone());
    }
    assert_eq!(dash.history[0].aicore.len(), HISTORY);
}

#[test]
fn dashboard_without_devices_says_so() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let dash = Dashboard::default();
    let lines = screen(&dash, 40, 3);
    assert_eq!(lines[1].trim_end(), "no NPU found");
}

/// A bogus HBM use (more than 2^57 MiB, as a broken `npu-smi` table can
/// show) fills the gauge; it overflowed the percentage (a panic in debug
/// builds).
#[test]
fn a_huge_hbm_use_fills_the_gauge_without_overflow() {
    cann_sim::sim_only!("asserts the simulated machine's telemetry (cann-sim's DCMI)");
    let mut dash = Dashboard::default();
    let mut bogus = sim_statuses();
    if let Some(h) = bogus[0].hbm.as_mut() {
        h.used_mib = u64::MAX;
    }
    dash.update(bogus);
    assert_eq!(dash.history[0].hbm.back(), Some(&100));
}

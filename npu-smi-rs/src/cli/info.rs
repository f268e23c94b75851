//! `npu-smi-rs info`: the table (in `npu-smi info`'s layout, so that tools
//! which read that table read this one) and `--json`.

use crate::{DeviceStatus, Error, Npu};
use std::fmt::Write;

const W1: usize = 27;
const W2: usize = 15;
const W3: usize = 52;

fn border(c: char) -> String {
    format!(
        "+{}+{}+{}+\n",
        c.to_string().repeat(W1),
        c.to_string().repeat(W2),
        c.to_string().repeat(W3)
    )
}

fn row(a: &str, b: &str, c: &str) -> String {
    format!(
        "| {a:<w1$}| {b:<w2$}| {c:<w3$}|\n",
        w1 = W1 - 1,
        w2 = W2 - 1,
        w3 = W3 - 1
    )
}

fn wide(text: &str) -> String {
    let w = W1 + W2 + W3 + 1;
    format!("| {text:<w$}|\n", w = w)
}

fn pair(p: Option<(u64, u64)>) -> String {
    match p {
        Some((used, total)) => format!("{used:<4} / {total}"),
        None => "NA".to_string(),
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "NA".to_string(), |v| v.to_string())
}

/// Renders the table.
pub fn render(title: &str, version: &str, devices: &[DeviceStatus]) -> String {
    let mut s = String::new();
    let full = "-".repeat(W1 + W2 + W3 + 2);
    let _ = writeln!(s, "+{full}+");
    s.push_str(&wide(&format!("{:<33}Version: {version}", title)));
    s.push_str(&border('-'));
    s.push_str(&row(
        "NPU   Name",
        "Health",
        "Power(W)    Temp(C)           Hugepages-Usage(page)",
    ));
    s.push_str(&row(
        "Chip  Phy-ID",
        "Bus-Id",
        "AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)",
    ));
    s.push_str(&border('='));
    for d in devices {
        let name = d
            .chip
            .as_ref()
            .map_or_else(|| "NA".to_string(), |c| c.name.clone());
        let power = d
            .power_watts
            .map_or_else(|| "NA".to_string(), |p| format!("{p:.1}"));
        s.push_str(&row(
            &format!("{:<6}{name}", d.card_id),
            &opt(d.health),
            &format!(
                "{power:<12}{:<18}{}",
                opt(d.temperature_celsius),
                pair(Some((0, 0)))
            ),
        ));
        let ddr = d.ddr.map(|m| (m.used_mib, m.total_mib));
        s.push_str(&row(
            &format!("{:<6}{}", d.chip_id, opt(d.physical_id)),
            &opt(d.pcie_bus_id),
            &format!(
                "{:<12}{:<18}{}",
                opt(d.aicore_utilization_percent),
                pair(ddr.or(Some((0, 0)))),
                pair(d.hbm.map(|h| (h.used_mib, h.total_mib)))
            ),
        ));
        s.push_str(&border('='));
    }
    s.push_str(&border('-'));
    s.push_str(&format!(
        "| {:<w1$}| {:<w2$}| {:<24}| {:<w4$}|\n",
        "NPU     Chip",
        "Process id",
        "Process name",
        "Process memory(MB)",
        w1 = W1 - 1,
        w2 = W2 - 1,
        w4 = W3 - 27
    ));
    s.push_str(&border('='));
    // One block per card (NPU): the processes of all its chips, or one line
    // saying it has none, as `npu-smi info` prints them (a card with two
    // chips lists both chips' processes under one border).
    let mut cards: Vec<u32> = Vec::new();
    for d in devices {
        if !cards.contains(&d.card_id) {
            cards.push(d.card_id);
        }
    }
    for card in cards {
        let chips: Vec<&DeviceStatus> = devices.iter().filter(|d| d.card_id == card).collect();
        let mut any = false;
        for d in &chips {
            for p in d.processes.as_deref().unwrap_or(&[]) {
                any = true;
                s.push_str(&format!(
                    "| {:<w1$}| {:<w2$}| {:<24}| {:<w4$}|\n",
                    format!("{:<8}{}", d.card_id, d.chip_id),
                    p.pid,
                    p.name.as_deref().unwrap_or("NA"),
                    p.memory_bytes.div_ceil(1024 * 1024),
                    w1 = W1 - 1,
                    w2 = W2 - 1,
                    w4 = W3 - 27
                ));
            }
        }
        if !any {
            s.push_str(&wide(&format!("No running processes found in NPU {card}")));
        }
        s.push_str(&border('='));
    }
    for d in devices {
        for e in &d.errors {
            let _ = writeln!(s, "warning: NPU {} chip {}: {e}", d.card_id, d.chip_id);
        }
    }
    s
}

/// The JSON document `info --json` prints.
pub fn json(npu: &Npu, devices: &[DeviceStatus]) -> serde_json::Value {
    serde_json::json!({
        "backend": npu.backend_kind(),
        "driver_version": npu.driver_version().ok(),
        "devices": devices,
    })
}

/// `info` / `info --json`.
///
/// # Errors
///
/// When the devices cannot be listed.
pub fn run(npu: &Npu, as_json: bool) -> Result<(), Error> {
    let devices = super::statuses(npu)?;
    if as_json {
        let doc = json(npu, &devices);
        let text = serde_json::to_string_pretty(&doc)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        super::emit(&(text + "\n"))?;
    } else {
        let version = npu.driver_version().unwrap_or_else(|_| "NA".to_string());
        let title = format!(
            "npu-smi-rs {} ({})",
            env!("CARGO_PKG_VERSION"),
            npu.backend_kind()
        );
        super::emit(&render(&title, &version, &devices))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ProcessInfo;

    fn chip(card: u32, chip: u32, pids: &[u32]) -> DeviceStatus {
        DeviceStatus {
            card_id: card,
            chip_id: chip,
            logical_id: None,
            physical_id: None,
            chip: None,
            pcie_bus_id: None,
            health: None,
            error_codes: None,
            temperature_celsius: None,
            power_watts: None,
            voltage_volts: None,
            aicore_utilization_percent: None,
            aicpu_utilization_percent: None,
            vector_utilization_percent: None,
            hbm_bandwidth_utilization_percent: None,
            hbm: None,
            ddr: None,
            aicore_frequency_mhz: None,
            aicore_max_frequency_mhz: None,
            hbm_frequency_mhz: None,
            hbm_ecc: None,
            ddr_ecc: None,
            processes: Some(
                pids.iter()
                    .map(|&pid| ProcessInfo {
                        pid,
                        memory_bytes: 3 << 20,
                        name: Some("python3".into()),
                    })
                    .collect(),
            ),
            errors: Vec::new(),
        }
    }

    /// `npu-smi info` lists the processes of every chip of a card under one
    /// border and says "No running processes found in NPU n" only for a card
    /// none of whose chips has one (the A3 fixture, tests/fixtures/info_a3.txt:
    /// card 0 lists chip 0's process and nothing for chip 1).
    #[test]
    fn processes_are_listed_per_card_and_no_process_line_only_for_idle_cards() {
        let devices = [
            chip(0, 0, &[632268]),
            chip(0, 1, &[]),
            chip(1, 0, &[]),
            chip(1, 1, &[]),
            chip(7, 0, &[692318]),
            chip(7, 1, &[692318]),
        ];
        let table = render("npu-smi-rs", "1", &devices);
        let procs = &table[table.find("| NPU     Chip").unwrap()..];
        let want = "\
| NPU     Chip              | Process id    | Process name            | Process memory(MB)       |
+===========================+===============+====================================================+
| 0       0                 | 632268        | python3                 | 3                        |
+===========================+===============+====================================================+
| No running processes found in NPU 1                                                            |
+===========================+===============+====================================================+
| 7       0                 | 692318        | python3                 | 3                        |
| 7       1                 | 692318        | python3                 | 3                        |
+===========================+===============+====================================================+
";
        assert_eq!(procs, want);
    }
}

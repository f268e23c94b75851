//! `npu-smi-rs watch`: a live terminal dashboard (ratatui): per device, AI
//! Core utilisation and HBM gauges, power and temperature, and sparklines of
//! their recent history, refreshed every interval. `q`, Esc or Ctrl-C quits.

use crate::{DeviceStatus, Error, Health, Npu};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Sparkline};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Samples kept per series.
pub const HISTORY: usize = 120;

/// One device's history.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// AI Core utilisation, percent.
    pub aicore: VecDeque<u64>,
    /// HBM in use, percent.
    pub hbm: VecDeque<u64>,
    /// Power, W.
    pub power: VecDeque<u64>,
    /// Temperature, °C.
    pub temperature: VecDeque<u64>,
}

fn push(q: &mut VecDeque<u64>, v: u64) {
    if q.len() == HISTORY {
        q.pop_front();
    }
    q.push_back(v);
}

/// What the dashboard shows: the latest status and the history of each device.
#[derive(Debug, Clone, Default)]
pub struct Dashboard {
    /// Title (backend, driver version).
    pub title: String,
    /// Latest status per device.
    pub devices: Vec<DeviceStatus>,
    /// History per device, in the same order.
    pub history: Vec<Series>,
}

fn hbm_percent(d: &DeviceStatus) -> u64 {
    d.hbm
        .filter(|h| h.total_mib > 0)
        // Wider than u64: a bogus `used` must not overflow.
        .map_or(0, |h| {
            (u128::from(h.used_mib) * 100 / u128::from(h.total_mib)).min(100) as u64
        })
}

impl Dashboard {
    /// Adds a sample of every device.
    pub fn update(&mut self, devices: Vec<DeviceStatus>) {
        self.history.resize_with(devices.len(), Series::default);
        for (d, s) in devices.iter().zip(&mut self.history) {
            push(
                &mut s.aicore,
                u64::from(d.aicore_utilization_percent.unwrap_or(0)),
            );
            push(&mut s.hbm, hbm_percent(d));
            push(
                &mut s.power,
                d.power_watts.unwrap_or(0.0).max(0.0).round() as u64,
            );
            push(
                &mut s.temperature,
                d.temperature_celsius.unwrap_or(0).max(0) as u64,
            );
        }
        self.devices = devices;
    }

    /// Draws the dashboard into `frame`.
    pub fn draw(&self, frame: &mut Frame) {
        let area = frame.area();
        let [header, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
        frame.render_widget(
            Paragraph::new(Line::from(format!("{}   (q to quit)", self.title))),
            header,
        );
        if self.devices.is_empty() {
            frame.render_widget(Paragraph::new("no NPU found"), body);
            return;
        }
        let rows = Layout::vertical(vec![Constraint::Length(5); self.devices.len()]).split(body);
        for ((d, s), area) in self.devices.iter().zip(&self.history).zip(rows.iter()) {
            draw_device(frame, *area, d, s);
        }
    }
}

fn draw_device(frame: &mut Frame, area: Rect, d: &DeviceStatus, s: &Series) {
    let name = d.chip.as_ref().map_or("?", |c| c.name.as_str());
    let health = d.health.map_or_else(|| "NA".to_string(), |h| h.to_string());
    let health_style = match d.health {
        Some(Health::Ok) => Style::default().fg(Color::Green),
        _ => Style::default().fg(Color::Red),
    };
    let title = format!(
        " NPU {} chip {} · {} · {} · {} ",
        d.card_id,
        d.chip_id,
        name,
        d.pcie_bus_id.map(|p| p.to_string()).unwrap_or_default(),
        health
    );
    let block = Block::default()
        .borders(Borders::ALL)
        .title(title)
        .border_style(health_style);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(inner);
    let [l1, l2, l3] = Layout::vertical([Constraint::Length(1); 3]).areas(left);
    let aicore = d.aicore_utilization_percent.unwrap_or(0).min(100);
    frame.render_widget(
        Gauge::default()
            .gauge_style(Style::default().fg(Color::Cyan))
            .percent(aicore as u16)
            .label(format!("AI Core {aicore}%")),
        l1,
    );
    let hbm_label = d.hbm.map_or_else(
        || "HBM NA".to_string(),
        |h| format!("HBM {}/{} MiB", h.used_mib, h.total_mib),
    );
    frame.render_widget(
        Gauge::default()
            .gauge_style(Style::default().fg(Color::Magenta))
            .percent(hbm_percent(d) as u16)
            .label(hbm_label),
        l2,
    );
    frame.render_widget(
        Paragraph::new(format!(
            "Power {} W   Temp {} C",
            d.power_watts
                .map_or_else(|| "NA".to_string(), |p| format!("{p:.1}")),
            d.temperature_celsius
                .map_or_else(|| "NA".to_string(), |t| t.to_string())
        )),
        l3,
    );
    let [r1, r2, r3] = Layout::vertical([Constraint::Length(1); 3]).areas(right);
    let tail = |q: &VecDeque<u64>, width: u16| -> Vec<u64> {
        let skip = q.len().saturating_sub(usize::from(width.saturating_sub(6)));
        q.iter().skip(skip).copied().collect()
    };
    for (label, q, max, color, row) in [
        ("util ", &s.aicore, 100, Color::Cyan, r1),
        ("power", &s.power, 400, Color::Yellow, r2),
        ("temp ", &s.temperature, 100, Color::Red, r3),
    ] {
        let [l, r] = Layout::horizontal([Constraint::Length(6), Constraint::Min(0)]).areas(row);
        frame.render_widget(Paragraph::new(label), l);
        frame.render_widget(
            Sparkline::default()
                .data(tail(q, row.width))
                .max(max)
                .style(Style::default().fg(color)),
            r,
        );
    }
}

/// Reads a sample of every device into `dash`.
fn sample(npu: &Npu, dash: &mut Dashboard) -> Result<(), Error> {
    dash.update(super::statuses(npu)?);
    Ok(())
}

/// Runs the dashboard until the user quits.
///
/// # Errors
///
/// When the devices cannot be read or the terminal cannot be set up.
pub fn run(npu: &Npu, interval_ms: u64) -> Result<(), Error> {
    use ratatui::crossterm::event::{self, Event, KeyCode, KeyModifiers};
    let mut dash = Dashboard {
        title: format!(
            "npu-smi-rs watch · {} backend · driver {}",
            npu.backend_kind(),
            npu.driver_version().unwrap_or_else(|_| "NA".to_string())
        ),
        ..Dashboard::default()
    };
    sample(npu, &mut dash)?;
    let term_err = |e: std::io::Error| Error::Command {
        command: "watch".to_string(),
        detail: format!("terminal: {e}"),
    };
    let mut terminal = ratatui::try_init().map_err(term_err)?;
    let interval = Duration::from_millis(interval_ms);
    let result = (|| -> Result<(), Error> {
        let mut next = Instant::now();
        loop {
            if Instant::now() >= next {
                sample(npu, &mut dash)?;
                terminal.draw(|f| dash.draw(f)).map_err(term_err)?;
                next = Instant::now() + interval;
            }
            let wait = next
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100));
            if event::poll(wait).map_err(term_err)?
                && let Event::Key(k) = event::read().map_err(term_err)?
            {
                let ctrl_c =
                    k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                if matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || ctrl_c {
                    return Ok(());
                }
            }
        }
    })();
    let restored = ratatui::try_restore().map_err(term_err);
    result.and(restored)
}

//! Parsers for `npu-smi`'s text output: the fallback backend where
//! `libdcmi.so` cannot be loaded, and usable on its own (e.g. on saved
//! output).
//!
//! - [`parse_info`]: the `npu-smi info` table, in every layout seen in the
//!   wild: Atlas A2 / 910B (two lines per chip), Atlas A3 (two chips per NPU,
//!   a `Chip Phy-ID` column, `-` for the second chip's power, and a
//!   `Process id in container` column), multi-chip cards whose chip rows
//!   follow one NPU row, 310P (`Chip Device`, no HBM column, `NA` power) and
//!   the single-line layout; used/total pairs with or without spaces
//!   (`3338 / 65536`, `64549/ 65536`), and the process table.
//! - [`parse_key_values`]: `npu-smi info -t <type> -i <card> -c <chip>`
//!   output, `Key : value` lines.
//! - [`parse_mapping`]: `npu-smi info -m`, the card/chip/logical-id map.
//!
//! The columns are found from the header rows, not from fixed positions, so
//! reordered or added columns are read (unknown ones are skipped). Malformed
//! input is an [`Err`] naming the line, never a panic (property-tested with
//! arbitrary strings and mutated fixtures).

use std::fmt;

/// Why some `npu-smi` output could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number (0 when the problem is the output as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ParseError {}

fn err<T>(line: usize, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        line,
        message: message.into(),
    })
}

/// One chip of the `npu-smi info` table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChipRow {
    /// The NPU (card) id, column `NPU`.
    pub npu_id: u32,
    /// The chip index on the card, column `Chip`.
    pub chip_id: u32,
    /// The physical chip id (`Phy-ID`, Atlas A3 layout).
    pub phy_id: Option<u32>,
    /// The device id (`Device`, 310P layout).
    pub device_id: Option<u32>,
    /// Column `Name`, e.g. `910B3`.
    pub name: String,
    /// Column `Health`, e.g. `OK`.
    pub health: String,
    /// Column `Power(W)` (`None` for `NA` or `-`).
    pub power_watts: Option<f64>,
    /// Column `Temp(C)`.
    pub temperature_celsius: Option<i32>,
    /// Column `Hugepages-Usage(page)`: used and total pages.
    pub hugepages: Option<(u64, u64)>,
    /// Column `Bus-Id`, e.g. `0000:C1:00.0`.
    pub bus_id: Option<String>,
    /// Column `AICore(%)`.
    pub aicore_percent: Option<u32>,
    /// Column `Memory-Usage(MB)`: used and total (DDR).
    pub memory_mib: Option<(u64, u64)>,
    /// Column `HBM-Usage(MB)`: used and total.
    pub hbm_mib: Option<(u64, u64)>,
}

/// One row of the process table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    /// The NPU (card) id.
    pub npu_id: u32,
    /// The chip index on the card.
    pub chip_id: u32,
    /// Host process id.
    pub pid: u32,
    /// Process name.
    pub name: String,
    /// Device memory it uses, MB.
    pub memory_mib: u64,
    /// Its pid inside its container (`None` for `NA` or where the column is absent).
    pub pid_in_container: Option<u32>,
}

/// Everything `npu-smi info` prints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InfoTable {
    /// The version in the title row (`Version: 23.0.7`): the driver's.
    pub version: Option<String>,
    /// Every chip, in output order.
    pub chips: Vec<ChipRow>,
    /// Every process row.
    pub processes: Vec<ProcessRow>,
}

/// A table row: its cells, trimmed.
fn cells(row: &str) -> Vec<&str> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

/// The whitespace-separated values of a cell, with `a / b` pairs joined
/// into one `a/b` token.
fn tokens(cell: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut join_next = false;
    for t in cell.split_whitespace() {
        if t == "/" {
            match out.last_mut() {
                Some(last) if !last.ends_with('/') => {
                    last.push('/');
                    join_next = true;
                }
                _ => out.push(t.to_string()),
            }
            continue;
        }
        if join_next {
            join_next = false;
            if let Some(last) = out.last_mut() {
                last.push_str(t);
                continue;
            }
        }
        if t.ends_with('/') {
            join_next = true;
        }
        if t.starts_with('/')
            && let Some(last) = out.last_mut()
            && !last.contains('/')
        {
            last.push_str(t);
            continue;
        }
        out.push(t.to_string());
    }
    out
}

fn is_na(v: &str) -> bool {
    matches!(v, "NA" | "N/A" | "-" | "--")
}

fn num<T: std::str::FromStr>(line: usize, field: &str, v: &str) -> Result<T, ParseError> {
    v.parse()
        .or_else(|_| err(line, format!("{field}: {v:?} is not a number")))
}

fn opt_num<T: std::str::FromStr>(
    line: usize,
    field: &str,
    v: &str,
) -> Result<Option<T>, ParseError> {
    if is_na(v) {
        Ok(None)
    } else {
        num(line, field, v).map(Some)
    }
}

fn pair(line: usize, field: &str, v: &str) -> Result<Option<(u64, u64)>, ParseError> {
    if is_na(v) {
        return Ok(None);
    }
    match v.split_once('/') {
        Some((a, b)) => Ok(Some((num(line, field, a)?, num(line, field, b)?))),
        None => err(line, format!("{field}: {v:?} is not a used/total pair")),
    }
}

/// Header cells as lists of column names.
type Header = Vec<Vec<String>>;

fn header(cells: &[&str]) -> Header {
    cells
        .iter()
        .map(|c| c.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// Pairs each column name of `header` with its value in `row`.
fn fields(line: usize, header: &Header, row: &[&str]) -> Result<Vec<(String, String)>, ParseError> {
    if row.len() != header.len() {
        return err(
            line,
            format!(
                "the row has {} cells where the header has {}",
                row.len(),
                header.len()
            ),
        );
    }
    let mut out = Vec::new();
    for (names, cell) in header.iter().zip(row) {
        let mut values = tokens(cell);
        if values.len() > names.len() {
            // Only a name may contain spaces: fold the extra words into it.
            match names.iter().position(|n| n == "Name") {
                Some(i) => {
                    let extra = values.len() - names.len();
                    let joined = values[i..=i + extra].join(" ");
                    values.splice(i..=i + extra, [joined]);
                }
                None => {
                    return err(
                        line,
                        format!(
                            "the cell {cell:?} has {} values for the columns {names:?}",
                            values.len()
                        ),
                    );
                }
            }
        }
        for (n, v) in names.iter().zip(values) {
            out.push((n.clone(), v));
        }
    }
    Ok(out)
}

/// Applies one column of a chip's rows.
fn apply(line: usize, chip: &mut ChipRow, name: &str, v: &str) -> Result<(), ParseError> {
    match name {
        "NPU" => chip.npu_id = num(line, name, v)?,
        "Chip" => chip.chip_id = num(line, name, v)?,
        "Phy-ID" => chip.phy_id = opt_num(line, name, v)?,
        "Device" => chip.device_id = opt_num(line, name, v)?,
        "Name" => chip.name = v.to_string(),
        "Health" => chip.health = v.to_string(),
        "Power(W)" => chip.power_watts = opt_num(line, name, v)?,
        "Temp(C)" => chip.temperature_celsius = opt_num(line, name, v)?,
        "Hugepages-Usage(page)" => chip.hugepages = pair(line, name, v)?,
        "Bus-Id" => chip.bus_id = (!is_na(v)).then(|| v.to_string()),
        "AICore(%)" | "Aicore(%)" => chip.aicore_percent = opt_num(line, name, v)?,
        "Memory-Usage(MB)" => chip.memory_mib = pair(line, name, v)?,
        "HBM-Usage(MB)" => chip.hbm_mib = pair(line, name, v)?,
        _ => {}
    }
    Ok(())
}

/// One row of the process table: the first cell holds the NPU and chip ids,
/// every other cell one value under its header cell's whole text.
fn process_row(line: usize, header: &Header, row: &[&str]) -> Result<ProcessRow, ParseError> {
    if row.len() != header.len() {
        return err(
            line,
            format!(
                "the process row has {} cells where the header has {}",
                row.len(),
                header.len()
            ),
        );
    }
    let ids: Vec<&str> = row[0].split_whitespace().collect();
    let [npu, chip] = ids[..] else {
        return err(line, format!("{:?} is not an NPU id and a chip id", row[0]));
    };
    let get = |name: &str| {
        header
            .iter()
            .position(|h| h.join(" ").eq_ignore_ascii_case(name))
            .map(|i| row[i])
    };
    let need = |name: &str| {
        get(name).ok_or_else(|| ParseError {
            line,
            message: format!("the process table has no {name:?} column"),
        })
    };
    Ok(ProcessRow {
        npu_id: num(line, "NPU", npu)?,
        chip_id: num(line, "Chip", chip)?,
        pid: num(line, "Process id", need("Process id")?)?,
        name: need("Process name")?.to_string(),
        memory_mib: num(line, "Process memory(MB)", need("Process memory(MB)")?)?,
        pid_in_container: match get("Process id in container") {
            Some(v) => opt_num(line, "Process id in container", v)?,
            None => None,
        },
    })
}

/// Parses `npu-smi info`.
///
/// # Errors
///
/// [`ParseError`] when no table header is found, a row does not match its
/// header, a number is malformed, or a chip row has no NPU row before it.
///
/// ```
/// let text = "\
/// | npu-smi 23.0.7                   Version: 23.0.7                     |
/// | NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
/// | Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
/// +===========================+===============+====================================================+
/// | 0     910B3               | OK            | 93.2        37                0    / 0             |
/// | 0                         | 0000:C1:00.0  | 0           0    / 0          64549/ 65536         |
/// ";
/// let t = npu_smi_rs::parse::parse_info(text).unwrap();
/// assert_eq!(t.version.as_deref(), Some("23.0.7"));
/// assert_eq!(t.chips[0].hbm_mib, Some((64549, 65536)));
/// assert_eq!(t.chips[0].power_watts, Some(93.2));
/// ```
pub fn parse_info(text: &str) -> Result<InfoTable, ParseError> {
    let mut table = InfoTable::default();
    let mut npu_header: Option<Header> = None;
    let mut chip_header: Option<Header> = None;
    let mut proc_header: Option<Header> = None;
    // The NPU row whose chip rows are being read, and whether one was read.
    let mut npu_row: Option<(usize, ChipRow, bool)> = None;
    let flush = |npu_row: &mut Option<(usize, ChipRow, bool)>,
                 chip_header: &Option<Header>,
                 chips: &mut Vec<ChipRow>|
     -> Result<(), ParseError> {
        if let Some((line, row, had_chip)) = npu_row.take()
            && !had_chip
        {
            if chip_header.is_some() {
                return err(line, format!("NPU {} has no chip row", row.npu_id));
            }
            chips.push(row);
        }
        Ok(())
    };
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let t = raw.trim();
        if !t.starts_with('|') {
            // Borders (`+---`), blank lines, and the driver's log noise
            // before the table.
            continue;
        }
        let row = cells(t);
        let first = row.first().copied().unwrap_or("");
        if row.len() == 1 {
            if first.starts_with("npu-smi") {
                if let Some((_, v)) = first.split_once("Version:") {
                    table.version = v.split_whitespace().next().map(str::to_string);
                } else {
                    table.version = first.split_whitespace().nth(1).map(str::to_string);
                }
                continue;
            }
            if first.starts_with("No running processes") || first.is_empty() {
                continue;
            }
        }
        if row.iter().any(|c| c.starts_with("Process id")) {
            flush(&mut npu_row, &chip_header, &mut table.chips)?;
            proc_header = Some(header(&row));
            continue;
        }
        let words: Vec<&str> = first.split_whitespace().collect();
        if words.first() == Some(&"NPU") && row.iter().any(|c| c.contains("Health")) {
            npu_header = Some(header(&row));
            chip_header = None;
            proc_header = None;
            continue;
        }
        if words.first() == Some(&"Chip") && npu_header.is_some() && proc_header.is_none() {
            chip_header = Some(header(&row));
            continue;
        }
        if let Some(h) = &proc_header {
            table.processes.push(process_row(line, h, &row)?);
            continue;
        }
        let Some(nh) = &npu_header else {
            return err(line, "a table row before the `NPU Name | Health` header");
        };
        // An NPU row names the chip (a word that is not a number in its
        // first cell); a chip row has only ids there.
        let is_npu_row = words.iter().any(|w| w.parse::<u64>().is_err());
        if is_npu_row || chip_header.is_none() {
            flush(&mut npu_row, &chip_header, &mut table.chips)?;
            let mut chip = ChipRow::default();
            for (n, v) in fields(line, nh, &row)? {
                apply(line, &mut chip, &n, &v)?;
            }
            if chip_header.is_none() {
                // Single-line layout: each row is a chip; chips of one NPU
                // are numbered in order.
                chip.chip_id = table
                    .chips
                    .iter()
                    .filter(|c| c.npu_id == chip.npu_id)
                    .count() as u32;
            }
            npu_row = Some((line, chip, false));
        } else {
            let (Some(ch), Some((_, base, had_chip))) = (&chip_header, npu_row.as_mut()) else {
                return err(line, "a chip row without an NPU row before it");
            };
            let mut chip = base.clone();
            for (n, v) in fields(line, ch, &row)? {
                apply(line, &mut chip, &n, &v)?;
            }
            *had_chip = true;
            table.chips.push(chip);
        }
    }
    flush(&mut npu_row, &chip_header, &mut table.chips)?;
    if npu_header.is_none() {
        return err(
            0,
            "no `npu-smi info` table (no `NPU  Name | Health` header row)",
        );
    }
    Ok(table)
}

/// `Key : value` lines, in order (keys may repeat, one section per chip).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyValues {
    /// Every pair, in output order.
    pub entries: Vec<(String, String)>,
}

impl KeyValues {
    /// The first value under any of `keys` (alias lists absorb naming
    /// differences between driver versions), compared case-insensitively.
    pub fn get(&self, keys: &[&str]) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| keys.iter().any(|want| k.eq_ignore_ascii_case(want)))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses `npu-smi info -t <type> ...` output: `Key : value` lines (the
/// key padded with spaces, a tab before it). Lines without a colon (titles,
/// `No process in device.`) are skipped.
///
/// # Errors
///
/// [`ParseError`] when a line has an empty key, or no line is a pair.
///
/// ```
/// let kv = npu_smi_rs::parse::parse_key_values(
///     "\tNPU ID                         : 0\n\tAicore Usage Rate(%)           : 57\n",
/// ).unwrap();
/// assert_eq!(kv.get(&["Aicore Usage Rate(%)"]), Some("57"));
/// ```
pub fn parse_key_values(text: &str) -> Result<KeyValues, ParseError> {
    let mut kv = KeyValues::default();
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() {
            return err(i + 1, format!("{t:?} has no key before the colon"));
        }
        kv.entries.push((k.to_string(), v.to_string()));
    }
    if kv.entries.is_empty() {
        return err(0, "no `Key : value` lines");
    }
    Ok(kv)
}

/// One line of `npu-smi info -m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappingRow {
    /// The NPU (card) id.
    pub npu_id: u32,
    /// The chip index on the card.
    pub chip_id: u32,
    /// The logical id (`None` for an MCU, shown as `-`).
    pub logic_id: Option<u32>,
    /// The chip name (`Ascend 910B`, or `Mcu`).
    pub name: String,
}

/// Parses `npu-smi info -m`: a header line `NPU ID  Chip ID  Chip Logic ID
/// Chip Name`, then one line per chip.
///
/// # Errors
///
/// [`ParseError`] when the header is missing or a line's ids are malformed.
pub fn parse_mapping(text: &str) -> Result<Vec<MappingRow>, ParseError> {
    let mut out = Vec::new();
    let mut seen_header = false;
    for (i, raw) in text.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("NPU ID") {
            seen_header = true;
            continue;
        }
        if !seen_header {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words.len() < 4 {
            return err(i + 1, format!("{t:?} has fewer than 4 columns"));
        }
        out.push(MappingRow {
            npu_id: num(i + 1, "NPU ID", words[0])?,
            chip_id: num(i + 1, "Chip ID", words[1])?,
            logic_id: opt_num(i + 1, "Chip Logic ID", words[2])?,
            name: words[3..].join(" "),
        });
    }
    if !seen_header {
        return err(0, "no `NPU ID  Chip ID  Chip Logic ID  Chip Name` header");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_joined_whatever_the_spacing() {
        for (cell, want) in [
            ("3338 / 65536", vec!["3338/65536"]),
            ("64549/ 65536", vec!["64549/65536"]),
            ("0    / 0", vec!["0/0"]),
            ("1 /65536", vec!["1/65536"]),
            ("0 0 / 0 3 / 4", vec!["0", "0/0", "3/4"]),
        ] {
            assert_eq!(tokens(cell), want, "{cell:?}");
        }
    }
}

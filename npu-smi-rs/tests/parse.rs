//! The `npu-smi` parsers on real output layouts (fixtures under
//! `tests/fixtures/`, taken from public bug reports and test suites, trimmed)
//! and under fuzzing: arbitrary strings and mutated fixtures must give `Ok`
//! or `Err`, never a panic.
//!
//! The quick fuzz runs 2,000 cases per property in the normal suite; the
//! long one (`cargo test -p npu-smi-rs --test parse -- --ignored`) runs
//! 100,000 per property.

use npu_smi_rs::parse::*;
use proptest::prelude::*;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const INFO_FIXTURES: [&str; 6] = [
    "info_910b.txt",
    "info_910b_tight_pairs.txt",
    "info_a3.txt",
    "info_multichip.txt",
    "info_310p.txt",
    "info_310p_single_line.txt",
];

#[test]
fn a2_910b_two_lines_per_chip() {
    let t = parse_info(&fixture("info_910b.txt")).unwrap();
    assert_eq!(t.version.as_deref(), Some("23.0.7"));
    assert_eq!(t.chips.len(), 2);
    let c = &t.chips[0];
    assert_eq!((c.npu_id, c.chip_id, c.phy_id), (0, 0, None));
    assert_eq!((c.name.as_str(), c.health.as_str()), ("910B3", "OK"));
    assert_eq!(
        (c.power_watts, c.temperature_celsius),
        (Some(102.8), Some(55))
    );
    assert_eq!(c.bus_id.as_deref(), Some("0000:C1:00.0"));
    assert_eq!(c.aicore_percent, Some(0));
    assert_eq!(
        (c.hugepages, c.memory_mib, c.hbm_mib),
        (Some((0, 0)), Some((0, 0)), Some((3338, 65536)))
    );
    assert_eq!(t.chips[1].npu_id, 1);
    assert_eq!(t.chips[1].hbm_mib, Some((3337, 65536)));
    assert!(t.processes.is_empty());
}

#[test]
fn used_total_pairs_without_a_space_and_the_process_table() {
    let t = parse_info(&fixture("info_910b_tight_pairs.txt")).unwrap();
    assert_eq!(t.chips[0].hbm_mib, Some((64549, 65536)));
    assert_eq!(t.chips[1].hbm_mib, Some((64536, 65536)));
    assert_eq!(
        t.processes,
        vec![
            ProcessRow {
                npu_id: 0,
                chip_id: 0,
                pid: 2034517,
                name: "python3.10".into(),
                memory_mib: 61206,
                pid_in_container: None
            },
            ProcessRow {
                npu_id: 1,
                chip_id: 0,
                pid: 2034518,
                name: "python3.10".into(),
                memory_mib: 61193,
                pid_in_container: None
            },
        ]
    );
}

#[test]
fn a3_two_chips_per_npu_with_phy_ids_and_dash_power() {
    let t = parse_info(&fixture("info_a3.txt")).unwrap();
    assert_eq!(t.version.as_deref(), Some("25.2.1"));
    let ids: Vec<_> = t
        .chips
        .iter()
        .map(|c| (c.npu_id, c.chip_id, c.phy_id))
        .collect();
    assert_eq!(
        ids,
        vec![
            (0, 0, Some(0)),
            (0, 1, Some(1)),
            (7, 0, Some(14)),
            (7, 1, Some(15))
        ]
    );
    assert_eq!(t.chips[0].power_watts, Some(166.5));
    assert_eq!(t.chips[1].power_watts, None, "the second chip shows `-`");
    assert_eq!(t.chips[2].aicore_percent, Some(35));
    assert_eq!(t.chips[2].hbm_mib, Some((15503, 65536)));
    assert_eq!(t.chips[3].name, "Ascend910");
    assert_eq!(t.processes.len(), 3);
    assert_eq!(t.processes[0].pid_in_container, None, "NA");
    assert_eq!((t.processes[2].npu_id, t.processes[2].chip_id), (7, 1));
    assert_eq!(t.processes[2].pid_in_container, Some(41));
}

#[test]
fn multichip_rows_follow_one_npu_row() {
    let t = parse_info(&fixture("info_multichip.txt")).unwrap();
    let ids: Vec<_> = t
        .chips
        .iter()
        .map(|c| (c.npu_id, c.chip_id, c.phy_id))
        .collect();
    assert_eq!(ids, vec![(0, 0, Some(4)), (0, 1, Some(5))]);
    assert_eq!(t.chips[1].memory_mib, Some((200, 1000)));
    assert_eq!(
        t.chips[1].power_watts,
        Some(100.0),
        "inherited from the NPU row"
    );
    assert_eq!(t.processes[0].pid, 99);
}

#[test]
fn p310_layout_with_device_column_and_no_hbm() {
    let t = parse_info(&fixture("info_310p.txt")).unwrap();
    assert_eq!(t.version.as_deref(), Some("24.1.rc2"));
    assert_eq!(t.chips.len(), 2);
    let c = &t.chips[1];
    assert_eq!((c.npu_id, c.chip_id, c.device_id), (1, 1, Some(1)));
    assert_eq!(c.power_watts, None, "NA");
    assert_eq!(c.memory_mib, Some((1520, 43693)));
    assert_eq!(c.hbm_mib, None);
}

#[test]
fn p310_single_line_layout() {
    let t = parse_info(&fixture("info_310p_single_line.txt")).unwrap();
    assert_eq!(t.chips.len(), 2);
    assert_eq!(t.chips[0].hbm_mib, Some((1024, 21527)));
    assert_eq!(t.chips[0].aicore_percent, Some(3));
    assert_eq!(t.chips[0].power_watts, Some(12.5));
    assert_eq!((t.chips[1].npu_id, t.chips[1].chip_id), (1, 0));
    assert_eq!(t.chips[1].health, "Warning");
}

#[test]
fn key_value_outputs() {
    let u = parse_key_values(&fixture("usages_910b.txt")).unwrap();
    assert_eq!(u.get(&["Aicore Usage Rate(%)"]), Some("57"));
    assert_eq!(
        u.get(&["aivector usage rate(%)"]),
        Some("31"),
        "case-insensitive"
    );
    assert_eq!(
        u.get(&[
            "Memory Bandwidth Usage Rate(%)",
            "HBM Bandwidth Usage Rate(%)"
        ]),
        Some("23")
    );
    assert_eq!(u.get(&["No Such Key"]), None);
    let h = parse_key_values(&fixture("health_910b.txt")).unwrap();
    assert_eq!(h.get(&["Health Status"]), Some("OK"));
    let p = parse_key_values(&fixture("power_910b.txt")).unwrap();
    assert_eq!(p.get(&["NPU Real-time Power(W)"]), Some("161.2"));
}

#[test]
fn mapping_output_with_mcu_rows() {
    let m = parse_mapping(&fixture("mapping_910b.txt")).unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(
        m[0],
        MappingRow {
            npu_id: 0,
            chip_id: 0,
            logic_id: Some(0),
            name: "Ascend 910B3".into()
        }
    );
    assert_eq!(m[1].logic_id, None);
    assert_eq!(m[1].name, "Mcu");
}

#[test]
fn malformed_inputs_are_errors_naming_the_line() {
    assert_eq!(
        parse_info("").unwrap_err().message,
        "no `npu-smi info` table (no `NPU  Name | Health` header row)"
    );
    let bad_number = fixture("info_910b.txt").replace("102.8", "10x.8");
    let e = parse_info(&bad_number).unwrap_err();
    assert_eq!(e.to_string(), "line 7: Power(W): \"10x.8\" is not a number");
    let truncated: String = fixture("info_910b.txt")
        .lines()
        .take(7)
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        parse_info(&truncated).unwrap_err().to_string(),
        "line 7: NPU 0 has no chip row"
    );
    let extra_cell = fixture("info_910b.txt").replace("| 0000:C1:00.0  |", "| 0000:C1:00.0  | 9 |");
    assert_eq!(
        parse_info(&extra_cell).unwrap_err().to_string(),
        "line 8: the row has 4 cells where the header has 3"
    );
    assert_eq!(
        parse_key_values("just words\n").unwrap_err().message,
        "no `Key : value` lines"
    );
    assert_eq!(
        parse_key_values(" : 5").unwrap_err().to_string(),
        "line 1: \": 5\" has no key before the colon"
    );
    assert!(parse_mapping("0 0 0 x").is_err());
}

/// A fixture with some characters replaced, inserted or deleted.
fn mutated() -> impl Strategy<Value = String> {
    let ops = prop::collection::vec(
        (any::<prop::sample::Index>(), 0u8..3, prop::char::any()),
        1..12,
    );
    (prop::sample::select(INFO_FIXTURES.to_vec()), ops).prop_map(|(name, ops)| {
        let mut chars: Vec<char> = fixture(name).chars().collect();
        for (at, op, c) in ops {
            if chars.is_empty() {
                chars.push(c);
                continue;
            }
            let i = at.index(chars.len());
            match op {
                0 => chars[i] = c,
                1 => chars.insert(i, c),
                _ => {
                    chars.remove(i);
                }
            }
        }
        chars.into_iter().collect()
    })
}

/// A fixture with lines dropped, duplicated or swapped.
fn reshuffled() -> impl Strategy<Value = String> {
    let ops = prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
            0u8..3,
        ),
        1..6,
    );
    (prop::sample::select(INFO_FIXTURES.to_vec()), ops).prop_map(|(name, ops)| {
        let text = fixture(name);
        let mut lines: Vec<&str> = text.lines().collect();
        for (a, b, op) in ops {
            if lines.is_empty() {
                break;
            }
            let (i, j) = (a.index(lines.len()), b.index(lines.len()));
            match op {
                0 => {
                    lines.remove(i);
                }
                1 => lines.insert(j, lines[i]),
                _ => lines.swap(i, j),
            }
        }
        lines.join("\n")
    })
}

fn table_like() -> impl Strategy<Value = String> {
    prop::collection::vec("[|+= 0-9a-zA-Z/().:%-]{0,40}", 0..20).prop_map(|l| l.join("\n"))
}

fn fuzz_all(text: &str) {
    let _ = parse_info(text);
    let _ = parse_key_values(text);
    let _ = parse_mapping(text);
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(2_000))]
    #[test]
    fn quick_fuzz_arbitrary_strings_never_panic(s in any::<String>()) { fuzz_all(&s); }
    #[test]
    fn quick_fuzz_table_like_strings_never_panic(s in table_like()) { fuzz_all(&s); }
    #[test]
    fn quick_fuzz_mutated_fixtures_never_panic(s in mutated()) { fuzz_all(&s); }
    #[test]
    fn quick_fuzz_reshuffled_fixtures_never_panic(s in reshuffled()) { fuzz_all(&s); }
}

proptest! {
    #![proptest_config(config(100_000))]
    #[test]
    #[ignore = "long fuzz (100k cases per property); run with --ignored"]
    fn long_fuzz_arbitrary_strings_never_panic(s in any::<String>()) { fuzz_all(&s); }
    #[test]
    #[ignore = "long fuzz (100k cases per property); run with --ignored"]
    fn long_fuzz_table_like_strings_never_panic(s in table_like()) { fuzz_all(&s); }
    #[test]
    #[ignore = "long fuzz (100k cases per property); run with --ignored"]
    fn long_fuzz_mutated_fixtures_never_panic(s in mutated()) { fuzz_all(&s); }
    #[test]
    #[ignore = "long fuzz (100k cases per property); run with --ignored"]
    fn long_fuzz_reshuffled_fixtures_never_panic(s in reshuffled()) { fuzz_all(&s); }
}

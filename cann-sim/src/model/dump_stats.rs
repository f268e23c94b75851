//! Statistics dumps (`"dump_data": "stats"`, `"dump_stats": [...]`): for
//! each dumped operator, a CSV file of per-tensor statistics instead of the
//! tensors' bytes.
//!
//! The release (hicann/runtime `src/dfx/adump/adump/adx_dump_record.cpp`
//! `SetOptimizationMode`, `GenerateFileData`, `StatisticsData`,
//! `GetStatsString`; `impl/dump_setting.cpp` `InitDumpStatsItem`;
//! `impl/dump_config_converter.cpp` `CheckDumpStats`): the items are `Max`,
//! `Min`, `Avg`, `Nan`, `Negative Inf`, `Positive Inf`, `L2norm` (all but
//! `L2norm` when `dump_stats` is absent); `dump_stats` needs `dump_data`
//! `stats` and at least one item. The file is the data file's name with
//! `.csv`; its header is `Input/Output,Index,Data Size,Data Type,Format,Shape`
//! then `Count` and the items chosen, in the order above (with exactly the
//! default six, `Count` comes after `Avg Value`); one row per tensor:
//! `Input`/`Output`, its index, its bytes, `DT_*`, `ND`, the shape as
//! `AxB` (`-` for a scalar), the element count, then the items. Max and
//! min print as floats for floating types, as 64-bit integers for int64
//! and as 32-bit integers otherwise; the average and L2 norm as floats;
//! the counts as integers. Floats print as C++'s default stream format
//! (`%g`, 6 significant digits). The device computes the statistics on the
//! release; the simulator computes them on the host in `f64`, then prints
//! them as the release's 32-bit float.

use crate::ops::{DType, TensorSpec};

/// `DUMP_STATS_MAX` … `DUMP_STATS_L2NORM` (`common_utils.h`), by position.
pub const ITEMS: [(&str, &str); 7] = [
    ("Max", ",Max Value"),
    ("Min", ",Min Value"),
    ("Avg", ",Avg Value"),
    ("Nan", ",Nan Count"),
    ("Negative Inf", ",Negative Inf Count"),
    ("Positive Inf", ",Positive Inf Count"),
    ("L2norm", ",l2norm"),
];

/// The items when `dump_stats` is absent: all but `L2norm`.
pub const DEFAULT: u8 = 0b0011_1111;

/// The position the compatible layout puts `Count` before
/// (`COUNT_HEADER_COMPATIBLE`).
const COUNT_AT: usize = 3;

/// The item mask of a `dump_stats` list.
///
/// # Errors
///
/// The item that is not one of [`ITEMS`] (surrounding spaces are
/// trimmed, as `InitDumpStatsItem` does).
pub fn mask_of(items: &[&str]) -> Result<u8, String> {
    let mut mask = 0u8;
    for item in items {
        let i = ITEMS
            .iter()
            .position(|(name, _)| *name == item.trim())
            .ok_or_else(|| item.to_string())?;
        mask |= 1 << i;
    }
    Ok(mask)
}

/// The CSV header of `mask`.
fn header(mask: u8) -> String {
    let compatible = mask == DEFAULT;
    let mut h = String::from("Input/Output,Index,Data Size,Data Type,Format,Shape");
    if !compatible {
        h.push_str(",Count");
    }
    for (i, (_, title)) in ITEMS.iter().enumerate() {
        if mask & (1 << i) != 0 {
            if compatible && i == COUNT_AT {
                h.push_str(",Count");
            }
            h.push_str(title);
        }
    }
    h
}

/// The release's type names (`DT_STRING_MAP`).
fn dt_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "DT_FLOAT",
        DType::F16 => "DT_FLOAT16",
        DType::BF16 => "DT_BF16",
        DType::F64 => "DT_DOUBLE",
        DType::I8 => "DT_INT8",
        DType::I16 => "DT_INT16",
        DType::I32 => "DT_INT32",
        DType::I64 => "DT_INT64",
        DType::U8 => "DT_UINT8",
        DType::Bool => "DT_BOOL",
    }
}

/// A float as C++'s default `ostream <<` prints it (`%g`).
fn g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let exp = v.abs().log10().floor() as i32;
    // `%g` rounds to 6 significant digits first; the exponent may move.
    let sci = format!("{v:.5e}");
    let (mantissa, e) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = e.parse().unwrap_or(exp);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..6).contains(&e) {
        let decimals = (5 - e).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    } else {
        format!(
            "{}e{}{:02}",
            trim(mantissa),
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    }
}

/// One row of statistics of a tensor whose bytes are `data`: `NA` for
/// every item when `data` is not exactly the tensor's elements (a strided
/// view: the simulator dumps the span it covers).
fn row(io: &str, index: usize, spec: &TensorSpec, data: &[u8], mask: u8) -> String {
    let count = spec.numel();
    let shape = if spec.shape.is_empty() {
        "-".to_string()
    } else {
        spec.shape
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join("x")
    };
    let mut r = format!(
        "{io},{index},{},{},ND,{shape}",
        data.len(),
        dt_name(spec.dtype)
    );
    let compatible = mask == DEFAULT;
    if !compatible {
        r.push_str(&format!(",{count}"));
    }
    let values = (data.len() == spec.bytes()).then(|| crate::ops::load_f64(spec.dtype, data));
    let floating = matches!(
        spec.dtype,
        DType::F32 | DType::F16 | DType::BF16 | DType::F64
    );
    let as_type = |v: f64| -> String {
        if floating {
            g(f64::from(v as f32))
        } else if spec.dtype == DType::I64 {
            (v as i64).to_string()
        } else {
            (v as i64 as i32).to_string()
        }
    };
    for (i, _) in ITEMS.iter().enumerate() {
        if mask & (1 << i) == 0 {
            continue;
        }
        if compatible && i == COUNT_AT {
            r.push_str(&format!(",{count}"));
        }
        let Some(vs) = &values else {
            r.push_str(",NA");
            continue;
        };
        let finite = || vs.iter().copied().filter(|v| !v.is_nan());
        let cell = match i {
            0 => as_type(finite().fold(f64::NEG_INFINITY, f64::max)),
            1 => as_type(finite().fold(f64::INFINITY, f64::min)),
            2 => g(f64::from(
                (vs.iter().sum::<f64>() / vs.len().max(1) as f64) as f32,
            )),
            3 => vs.iter().filter(|v| v.is_nan()).count().to_string(),
            4 => vs
                .iter()
                .filter(|&&v| v == f64::NEG_INFINITY)
                .count()
                .to_string(),
            5 => vs
                .iter()
                .filter(|&&v| v == f64::INFINITY)
                .count()
                .to_string(),
            _ => g(f64::from(
                vs.iter().map(|v| v * v).sum::<f64>().sqrt() as f32
            )),
        };
        r.push(',');
        r.push_str(&cell);
    }
    r
}

/// The statistics file of one operator: the header, then a row per input
/// and per output dumped.
pub fn csv(
    mask: u8,
    inputs: &[(TensorSpec, Vec<u8>)],
    outputs: &[(TensorSpec, Vec<u8>)],
) -> Vec<u8> {
    let mut out = header(mask);
    out.push('\n');
    for (io, ts) in [("Input", inputs), ("Output", outputs)] {
        for (i, (spec, data)) in ts.iter().enumerate() {
            out.push_str(&row(io, i, spec, data, mask));
            out.push('\n');
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_cpp_streams_do() {
        for (v, want) in [
            (1.0, "1"),
            (2.5, "2.5"),
            (0.1f32 as f64, "0.1"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-3.25, "-3.25"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(g(v), want, "{v}");
        }
    }

    #[test]
    fn the_default_items_put_count_after_the_average() {
        assert_eq!(
            header(DEFAULT),
            "Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,\
             Count,Nan Count,Negative Inf Count,Positive Inf Count"
        );
        assert_eq!(
            header(mask_of(&["L2norm", " Max "]).unwrap()),
            "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,l2norm"
        );
        assert_eq!(mask_of(&["Median"]), Err("Median".to_string()));
    }

    #[test]
    fn a_row_counts_nans_and_infinities_and_skips_nans_in_max_and_min() {
        let spec = TensorSpec {
            dtype: DType::F32,
            shape: vec![2, 3],
        };
        let data: Vec<u8> = [
            1.0f32,
            -2.0,
            f32::NAN,
            f32::INFINITY,
            0.5,
            f32::NEG_INFINITY,
        ]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
        assert_eq!(
            row("Output", 0, &spec, &data, DEFAULT),
            "Output,0,24,DT_FLOAT,ND,2x3,inf,-inf,nan,6,1,1,1"
        );
        let ints = TensorSpec {
            dtype: DType::I32,
            shape: vec![],
        };
        assert_eq!(
            row(
                "Input",
                1,
                &ints,
                &7i32.to_le_bytes(),
                mask_of(&["Max", "Avg", "L2norm"]).unwrap()
            ),
            "Input,1,4,DT_INT32,ND,-,1,7,7,7"
        );
    }
}

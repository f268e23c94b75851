//! Per-chip DCMI queries: identity, health, thermal, power, clocks,
//! utilisation, memory, ECC and processes.
//!
//! Live figures come from [`crate::telemetry::snapshot`]: the HBM in use and
//! the processes holding it are those of every live process using the
//! simulator (this one included); AI Core utilisation is the busy fraction of
//! the last second; temperature, power, voltage and the current AI Core clock
//! are derived from that load. Units are DCMI's: °C, 0.1 W, 0.01 V, MHz,
//! percent, MB for memory sizes, bytes per process.
//!
//! What the simulated part lacks is `DCMI_ERR_CODE_NOT_SUPPORT` (-8255), as
//! on hardware: HBM queries on a 310P (it has DDR), DDR queries on 910B and
//! A3 parts (they have HBM only), DDR clocks and bandwidth there, and
//! `dcmi_get_device_multi_utilization_rate` on a 310P.

use super::device::{chip, code, put};
use crate::machine::Machine;
use crate::recent_error::fail;
use crate::telemetry::{self, DeviceLoad};
use core::ffi::{c_int, c_uint};
use dcmi_sys::*;

const MIB: u64 = 1024 * 1024;

fn not_supported(function: &str, what: &str, m: &Machine) -> c_int {
    fail(
        DCMI_ERR_CODE_NOT_SUPPORT,
        format!(
            "{function}: {what} is not supported on Ascend{}",
            m.model.chip_name
        ),
    )
}

fn load(physical: u32) -> DeviceLoad {
    telemetry::snapshot().device(physical)
}

fn percent(fraction: f64) -> c_uint {
    (fraction.clamp(0.0, 1.0) * 100.0).round() as c_uint
}

/// Copies `text` into a fixed, NUL-terminated byte array.
fn fill(dst: &mut [u8], text: &str) {
    let n = text.len().min(dst.len().saturating_sub(1));
    dst[..n].copy_from_slice(&text.as_bytes()[..n]);
}

/// `dcmi_get_device_chip_info`: `Ascend`, the chip name (`910B3`), `V1` and
/// the AI Core count.
///
/// # Safety
///
/// `chip_info` is null or valid for writing a `dcmi_chip_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_chip_info(
    card_id: c_int,
    device_id: c_int,
    chip_info: *mut dcmi_chip_info,
) -> c_int {
    const F: &str = "dcmi_get_device_chip_info";
    code(chip(F, card_id, device_id).and_then(|(m, _)| {
        let mut info = dcmi_chip_info::default();
        fill(&mut info.chip_type, "Ascend");
        fill(&mut info.chip_name, &m.model.chip_name);
        fill(&mut info.chip_ver, "V1");
        info.aicore_cnt = m.model.aicore_count;
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "chip_info", chip_info, info) }
    }))
}

/// `dcmi_get_device_chip_info_v2`: [`dcmi_get_device_chip_info`] plus the NPU
/// name (the SoC name, `Ascend910B3`).
///
/// # Safety
///
/// `chip_info` is null or valid for writing a `dcmi_chip_info_v2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_chip_info_v2(
    card_id: c_int,
    device_id: c_int,
    chip_info: *mut dcmi_chip_info_v2,
) -> c_int {
    const F: &str = "dcmi_get_device_chip_info_v2";
    code(chip(F, card_id, device_id).and_then(|(m, _)| {
        let mut info = dcmi_chip_info_v2::default();
        fill(&mut info.chip_type, "Ascend");
        fill(&mut info.chip_name, &m.model.chip_name);
        fill(&mut info.chip_ver, "V1");
        fill(&mut info.npu_name, &m.config.soc_name);
        info.aicore_cnt = m.model.aicore_count;
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "chip_info", chip_info, info) }
    }))
}

/// `dcmi_get_device_pcie_info_v2`: Huawei's vendor id (`0x19e5`), domain 0,
/// bus `0xC1 + physical id` (as on an Atlas 800T A2), device and function 0.
///
/// # Safety
///
/// `pcie_info` is null or valid for writing a `dcmi_pcie_info_all`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_pcie_info_v2(
    card_id: c_int,
    device_id: c_int,
    pcie_info: *mut dcmi_pcie_info_all,
) -> c_int {
    const F: &str = "dcmi_get_device_pcie_info_v2";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        let info = dcmi_pcie_info_all {
            venderid: 0x19e5,
            subvenderid: 0x0200,
            deviceid: m.model.pci_device_id,
            subdeviceid: 0x0100,
            domain: 0,
            bdf_busid: (0xC1 + p) & 0xFF,
            bdf_deviceid: 0,
            bdf_funcid: 0,
            reserve: [0; 32],
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "pcie_info", pcie_info, info) }
    }))
}

/// `dcmi_get_device_health`: 0 (healthy); the simulator injects no alarms.
///
/// # Safety
///
/// `health` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_health(
    card_id: c_int,
    device_id: c_int,
    health: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_health";
    code(chip(F, card_id, device_id).and_then(|_| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "health", health, 0) }
    }))
}

/// `dcmi_get_device_errorcode_v2`: no error codes (`error_count` 0).
///
/// # Safety
///
/// `error_count` is null or valid for writing an int; `error_code_list` is
/// null or valid for writing `list_len` unsigned ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_errorcode_v2(
    card_id: c_int,
    device_id: c_int,
    error_count: *mut c_int,
    error_code_list: *mut c_uint,
    list_len: c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_errorcode_v2";
    code(chip(F, card_id, device_id).and_then(|_| {
        if error_code_list.is_null() || list_len == 0 {
            return Err(fail(
                DCMI_ERR_CODE_INVALID_PARAMETER,
                format!("{F}: error_code_list is null or list_len is 0"),
            ));
        }
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "error_count", error_count, 0) }
    }))
}

/// `dcmi_get_device_temperature`: °C, derived from load (35 °C idle).
///
/// # Safety
///
/// `temperature` is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_temperature(
    card_id: c_int,
    device_id: c_int,
    temperature: *mut c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_temperature";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        let t = load(p).temperature_celsius(m.hbm_total_bytes());
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "temperature", temperature, t) }
    }))
}

/// `dcmi_get_device_power_info`: **0.1 W**, derived from load (900 = 90 W
/// idle).
///
/// # Safety
///
/// `power` is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_power_info(
    card_id: c_int,
    device_id: c_int,
    power: *mut c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_power_info";
    code(chip(F, card_id, device_id).and_then(|(_, p)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "power", power, load(p).power_deciwatts()) }
    }))
}

/// `dcmi_get_device_voltage`: 0.01 V, derived from load (80 = 0.80 V idle).
///
/// # Safety
///
/// `voltage` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_voltage(
    card_id: c_int,
    device_id: c_int,
    voltage: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_voltage";
    code(chip(F, card_id, device_id).and_then(|(_, p)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "voltage", voltage, load(p).voltage_centivolts()) }
    }))
}

/// The HBM clock of the simulated parts, MHz.
const HBM_MHZ: c_uint = 1600;
/// The control CPU clock, MHz.
const CTRLCPU_MHZ: c_uint = 1900;
/// The DDR clock of a 310P, MHz.
const DDR_MHZ: c_uint = 3200;

/// `dcmi_get_device_frequency`: MHz. AI Core current (800 idle, 1800 busy)
/// and max (1800), Vector Core current, HBM (1600), control CPU (1900); DDR
/// only on a 310P (3200) and HBM only elsewhere. Another `input_type` is
/// `DCMI_ERR_CODE_INVALID_PARAMETER`.
///
/// # Safety
///
/// `frequency` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_frequency(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_freq_type,
    frequency: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_frequency";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        let mhz = match input_type {
            DCMI_FREQ_AICORE_CURRENT_ | DCMI_FREQ_VECTORCORE_CURRENT => load(p).aicore_mhz(),
            DCMI_FREQ_AICORE_MAX => telemetry::AICORE_MAX_MHZ,
            DCMI_FREQ_CTRLCPU => CTRLCPU_MHZ,
            DCMI_FREQ_HBM if m.model.has_hbm => HBM_MHZ,
            DCMI_FREQ_DDR if !m.model.has_hbm => DDR_MHZ,
            DCMI_FREQ_HBM | DCMI_FREQ_DDR => {
                return Err(not_supported(F, &format!("clock type {input_type}"), &m));
            }
            other => {
                return Err(fail(
                    DCMI_ERR_CODE_INVALID_PARAMETER,
                    format!("{F}: {other} is not a frequency type"),
                ));
            }
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "frequency", frequency, mhz) }
    }))
}

/// `dcmi_get_device_aicore_info`: rated and current AI Core clock, MHz.
///
/// # Safety
///
/// `aicore_info` is null or valid for writing a `dcmi_aicore_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_aicore_info(
    card_id: c_int,
    device_id: c_int,
    aicore_info: *mut dcmi_aicore_info,
) -> c_int {
    const F: &str = "dcmi_get_device_aicore_info";
    code(chip(F, card_id, device_id).and_then(|(_, p)| {
        let info = dcmi_aicore_info {
            freq: telemetry::AICORE_MAX_MHZ,
            cur_freq: load(p).aicore_mhz(),
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "aicore_info", aicore_info, info) }
    }))
}

/// `dcmi_get_device_utilization_rate`: percent. AI Core, Vector Core, NPU
/// and AI Cube: the busy fraction of the last second; AI CPU: a tenth of
/// it; control CPU: 2; HBM: HBM in use over total; HBM bandwidth: the last
/// second's traffic. DDR and DDR bandwidth only on a 310P (DDR in use), HBM
/// types only elsewhere. Another `input_type` is
/// `DCMI_ERR_CODE_INVALID_PARAMETER`.
///
/// # Safety
///
/// `utilization_rate` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_utilization_rate(
    card_id: c_int,
    device_id: c_int,
    input_type: c_int,
    utilization_rate: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_utilization_rate";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        let l = load(p);
        let memory = percent(l.hbm_used_bytes as f64 / m.hbm_total_bytes().max(1) as f64);
        let hbm = m.model.has_hbm;
        let rate = match input_type {
            DCMI_UTILIZATION_RATE_AICORE
            | DCMI_UTILIZATION_RATE_VECTORCORE
            | DCMI_UTILIZATION_RATE_NPU
            | DCMI_UTILIZATION_RATE_AICUBE => percent(l.busy),
            DCMI_UTILIZATION_RATE_AICPU => percent(l.busy / 10.0),
            DCMI_UTILIZATION_RATE_CTRLCPU => 2,
            DCMI_UTILIZATION_RATE_HBM if hbm => memory,
            DCMI_UTILIZATION_RATE_HBM_BANDWIDTH if hbm => percent(l.bandwidth),
            DCMI_UTILIZATION_RATE_DDR if !hbm => memory,
            DCMI_UTILIZATION_RATE_DDR_BANDWIDTH if !hbm => percent(l.bandwidth),
            DCMI_UTILIZATION_RATE_HBM
            | DCMI_UTILIZATION_RATE_HBM_BANDWIDTH
            | DCMI_UTILIZATION_RATE_DDR
            | DCMI_UTILIZATION_RATE_DDR_BANDWIDTH => {
                return Err(not_supported(
                    F,
                    &format!("utilisation type {input_type}"),
                    &m,
                ));
            }
            other => {
                return Err(fail(
                    DCMI_ERR_CODE_INVALID_PARAMETER,
                    format!("{F}: {other} is not a utilisation type"),
                ));
            }
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "utilization_rate", utilization_rate, rate) }
    }))
}

/// `dcmi_get_device_multi_utilization_rate`: cube, vector, AI Core and NPU
/// busy rates in one call (percent); not supported on a 310P.
///
/// # Safety
///
/// `util_info` is null or valid for writing a `dcmi_multi_utilization_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_multi_utilization_rate(
    card_id: c_int,
    device_id: c_int,
    util_info: *mut dcmi_multi_utilization_info,
) -> c_int {
    const F: &str = "dcmi_get_device_multi_utilization_rate";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        if !m.model.multi_utilization {
            return Err(not_supported(F, "the multi-utilisation query", &m));
        }
        let busy = percent(load(p).busy);
        let info = dcmi_multi_utilization_info {
            aic_util: busy,
            aiv_util: busy,
            aicore_util: busy,
            npu_util: busy,
            reserved: [0; DCMI_UTIL_RESERVED_LEN],
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "util_info", util_info, info) }
    }))
}

/// `dcmi_get_device_hbm_info`: total and used HBM (MB), clock (MHz),
/// temperature (°C) and bandwidth use (percent); not supported on a 310P.
///
/// # Safety
///
/// `hbm_info` is null or valid for writing a `dcmi_hbm_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_hbm_info(
    card_id: c_int,
    device_id: c_int,
    hbm_info: *mut dcmi_hbm_info,
) -> c_int {
    const F: &str = "dcmi_get_device_hbm_info";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        if !m.model.has_hbm {
            return Err(not_supported(F, "HBM", &m));
        }
        let l = load(p);
        let total = m.hbm_total_bytes();
        let info = dcmi_hbm_info {
            memory_size: total / MIB,
            freq: HBM_MHZ,
            memory_usage: l.hbm_used_bytes.div_ceil(MIB),
            temp: l.hbm_temperature_celsius(total),
            bandwith_util_rate: percent(l.bandwidth),
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "hbm_info", hbm_info, info) }
    }))
}

/// `dcmi_get_device_memory_info_v3`: the device's DDR (MB) on a 310P, whose
/// device memory is DDR; not supported on HBM parts.
///
/// # Safety
///
/// `memory_info` is null or valid for writing a `dcmi_get_memory_info_stru`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_memory_info_v3(
    card_id: c_int,
    device_id: c_int,
    memory_info: *mut dcmi_get_memory_info_stru,
) -> c_int {
    const F: &str = "dcmi_get_device_memory_info_v3";
    code(chip(F, card_id, device_id).and_then(|(m, p)| {
        if m.model.has_hbm {
            return Err(not_supported(F, "DDR memory information", &m));
        }
        let l = load(p);
        let total = m.hbm_total_bytes() / MIB;
        let used = l.hbm_used_bytes.div_ceil(MIB).min(total);
        let info = dcmi_get_memory_info_stru {
            memory_size: total,
            memory_available: total - used,
            freq: DDR_MHZ,
            hugepagesize: 2048,
            hugepages_total: 0,
            hugepages_free: 0,
            utiliza: percent(used as f64 / total.max(1) as f64),
            reserve: [0; 60],
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "memory_info", memory_info, info) }
    }))
}

/// `dcmi_get_device_ecc_info`: ECC enabled, no errors, for the part's device
/// memory (HBM, or DDR on a 310P); the other memory type is not supported,
/// and an unknown type is `DCMI_ERR_CODE_INVALID_PARAMETER`.
///
/// # Safety
///
/// `device_ecc_info` is null or valid for writing a `dcmi_ecc_info`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_ecc_info(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_device_type,
    device_ecc_info: *mut dcmi_ecc_info,
) -> c_int {
    const F: &str = "dcmi_get_device_ecc_info";
    code(chip(F, card_id, device_id).and_then(|(m, _)| {
        match (input_type, m.model.has_hbm) {
            (DCMI_DEVICE_TYPE_HBM, true) | (DCMI_DEVICE_TYPE_DDR, false) => {}
            (
                DCMI_DEVICE_TYPE_HBM
                | DCMI_DEVICE_TYPE_DDR
                | DCMI_DEVICE_TYPE_SRAM
                | DCMI_DEVICE_TYPE_NPU,
                _,
            ) => {
                return Err(not_supported(
                    F,
                    &format!("ECC of memory type {input_type}"),
                    &m,
                ));
            }
            (other, _) => {
                return Err(fail(
                    DCMI_ERR_CODE_INVALID_PARAMETER,
                    format!("{F}: {other} is not a memory type"),
                ));
            }
        }
        let info = dcmi_ecc_info {
            enable_flag: 1,
            ..Default::default()
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "device_ecc_info", device_ecc_info, info) }
    }))
}

/// `dcmi_get_device_resource_info`: the processes holding device memory on
/// the chip (pid and bytes), at most [`MAX_PROC_NUM_IN_DEVICE`]; `proc_num`
/// receives how many were written.
///
/// # Safety
///
/// `proc_info` is null or valid for writing `MAX_PROC_NUM_IN_DEVICE`
/// entries; `proc_num` is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_resource_info(
    card_id: c_int,
    device_id: c_int,
    proc_info: *mut dcmi_proc_mem_info,
    proc_num: *mut c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_resource_info";
    code(chip(F, card_id, device_id).and_then(|(_, p)| {
        if proc_info.is_null() {
            return Err(fail(
                DCMI_ERR_CODE_INVALID_PARAMETER,
                format!("{F}: proc_info is a null pointer"),
            ));
        }
        let procs = load(p).processes;
        let n = procs.len().min(MAX_PROC_NUM_IN_DEVICE);
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "proc_num", proc_num, n as c_int) }?;
        for (i, &(pid, bytes)) in procs.iter().take(n).enumerate() {
            let entry = dcmi_proc_mem_info {
                proc_id: pid as c_int,
                proc_mem_usage: bytes as core::ffi::c_ulong,
            };
            // SAFETY: `proc_info` holds MAX_PROC_NUM_IN_DEVICE entries
            // (caller's guarantee) and `i < n <= MAX_PROC_NUM_IN_DEVICE`.
            unsafe { proc_info.add(i).write(entry) };
        }
        Ok(())
    }))
}

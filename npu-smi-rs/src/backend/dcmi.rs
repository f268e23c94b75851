//! The DCMI backend (also the simulator's: same calls, `cann-sim`'s table).

use super::{Backend, ChipAddr, process_name};
use crate::error::{Error, Result};
use crate::types::*;
use core::ffi::{c_char, c_int, c_uint};
use dcmi_sys as sys;

#[derive(Debug)]
pub(crate) struct Dcmi {
    kind: BackendKind,
}

/// The simulator's explanation of the last failure on this thread (the real
/// library has none to give: DCMI has no error-message function).
///
/// Every failing DCMI call of the sim records a message in the sim's
/// per-thread error record, the one AscendCL's `aclGetRecentErrMsg` reads;
/// it is read here through the sim's own export of that function (the
/// [`BackendKind::Sim`] backend exists only with the `sim` feature, which
/// links the sim in), so that telemetry needs no AscendCL bindings.
///
/// The sim answers in the runtime error manager's format: the newest text
/// first, each error stamped `...[PID: <pid>] <time> <title>(<code>): `, and
/// on a thread without an AscendCL context (as here) the previous read's text
/// again after it. The first stamped message is this failure's; it is
/// returned without the stamp, as the `acl` crate keeps messages.
#[cfg(feature = "sim")]
fn recent_message(kind: BackendKind) -> Option<String> {
    if kind != BackendKind::Sim {
        return None;
    }
    let p = cann_sim::acl::aclGetRecentErrMsg();
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated and valid until the next call on
    // this thread (the function's contract); copied out at once.
    let s = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
    let msg = first_stamped_message(&s).unwrap_or(&s).trim();
    (!msg.is_empty()).then(|| msg.to_string())
}

/// Without the simulator, no backend has messages to give.
#[cfg(not(feature = "sim"))]
fn recent_message(_kind: BackendKind) -> Option<String> {
    None
}

/// The message after the first `[PID: ...] ... (<code>): ` stamp of `text`.
#[cfg(any(feature = "sim", test))]
fn first_stamped_message(text: &str) -> Option<&str> {
    let line = text.lines().find(|l| l.contains("[PID: "))?;
    let at = line.find("[PID: ")?;
    let end = line[at..].find("): ")? + at + 3;
    Some(&line[end..])
}

impl Dcmi {
    /// Initialises DCMI through the process-wide library (whatever is
    /// installed or found).
    pub(crate) fn init(kind: BackendKind) -> Result<Dcmi> {
        let d = Dcmi { kind };
        // SAFETY: dcmi_init takes no arguments.
        let rc = unsafe { sys::dcmi_init() }?;
        d.check("dcmi_init", rc)?;
        Ok(d)
    }

    fn check(&self, call: &'static str, rc: c_int) -> Result<()> {
        match rc {
            sys::DCMI_OK => Ok(()),
            sys::DCMI_ERR_CODE_NOT_SUPPORT => Err(Error::NotSupported {
                call,
                detail: recent_message(self.kind)
                    .unwrap_or_else(|| "DCMI_ERR_CODE_NOT_SUPPORT (-8255)".to_string()),
            }),
            code => Err(Error::Dcmi {
                call,
                code,
                name: sys::error_name(code),
                message: recent_message(self.kind),
            }),
        }
    }

    fn ids(c: ChipAddr) -> (c_int, c_int) {
        (c.card as c_int, c.chip as c_int)
    }
}

fn c_str(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).trim().to_string()
}

impl Backend for Dcmi {
    fn kind(&self) -> BackendKind {
        self.kind
    }

    fn chips(&self) -> Result<Vec<ChipAddr>> {
        let mut cards = [0 as c_int; sys::MAX_CARD_NUM];
        let mut n = 0;
        // SAFETY: `n` is writable; `cards` holds MAX_CARD_NUM ints.
        let rc = unsafe {
            sys::dcmi_get_card_list(&mut n, cards.as_mut_ptr(), sys::MAX_CARD_NUM as c_int)
        }?;
        self.check("dcmi_get_card_list", rc)?;
        let mut out = Vec::new();
        for &card in &cards[..n.clamp(0, sys::MAX_CARD_NUM as c_int) as usize] {
            let mut chips = 0;
            // SAFETY: `chips` is writable.
            let rc = unsafe { sys::dcmi_get_device_num_in_card(card, &mut chips) }?;
            self.check("dcmi_get_device_num_in_card", rc)?;
            for chip in 0..chips.max(0) {
                let mut logic = -1;
                // SAFETY: `logic` is writable.
                let rc = unsafe { sys::dcmi_get_device_logic_id(&mut logic, card, chip) }?;
                let logical = (rc == sys::DCMI_OK)
                    .then_some(logic)
                    .and_then(|l| u32::try_from(l).ok());
                let physical = logical.and_then(|l| {
                    let mut phy: c_uint = 0;
                    // SAFETY: `phy` is writable.
                    let rc =
                        unsafe { sys::dcmi_get_device_phyid_from_logicid(l, &mut phy) }.ok()?;
                    (rc == sys::DCMI_OK).then_some(phy)
                });
                out.push(ChipAddr {
                    card: card as u32,
                    chip: chip as u32,
                    logical,
                    physical,
                });
            }
        }
        Ok(out)
    }

    fn driver_version(&self) -> Result<String> {
        let mut buf = [0 as c_char; sys::MAX_VER_LEN + 1];
        // SAFETY: `buf` holds `buf.len()` writable bytes.
        let rc = unsafe { sys::dcmi_get_driver_version(buf.as_mut_ptr(), buf.len() as c_uint) }?;
        self.check("dcmi_get_driver_version", rc)?;
        Ok(c_str(&buf.map(|c| c as u8)))
    }

    fn chip_info(&self, c: ChipAddr) -> Result<ChipInfo> {
        let (card, dev) = Self::ids(c);
        let mut info = sys::dcmi_chip_info::default();
        // SAFETY: `info` is a writable dcmi_chip_info.
        let rc = unsafe { sys::dcmi_get_device_chip_info(card, dev, &mut info) }?;
        self.check("dcmi_get_device_chip_info", rc)?;
        Ok(ChipInfo {
            chip_type: c_str(&info.chip_type),
            name: c_str(&info.chip_name),
            version: Some(c_str(&info.chip_ver)),
            aicore_count: Some(info.aicore_cnt),
        })
    }

    fn pcie_bus_id(&self, c: ChipAddr) -> Result<PcieBusId> {
        let (card, dev) = Self::ids(c);
        let mut info = sys::dcmi_pcie_info_all::default();
        // SAFETY: `info` is a writable dcmi_pcie_info_all.
        let rc = unsafe { sys::dcmi_get_device_pcie_info_v2(card, dev, &mut info) }?;
        self.check("dcmi_get_device_pcie_info_v2", rc)?;
        Ok(PcieBusId {
            domain: info.domain as u32,
            bus: info.bdf_busid as u8,
            device: info.bdf_deviceid as u8,
            function: info.bdf_funcid as u8,
        })
    }

    fn health(&self, c: ChipAddr) -> Result<Health> {
        let (card, dev) = Self::ids(c);
        let mut h: c_uint = 0;
        // SAFETY: `h` is writable.
        let rc = unsafe { sys::dcmi_get_device_health(card, dev, &mut h) }?;
        self.check("dcmi_get_device_health", rc)?;
        Ok(Health::from_code(h))
    }

    fn error_codes(&self, c: ChipAddr) -> Result<Vec<u32>> {
        const CAP: usize = 128;
        let (card, dev) = Self::ids(c);
        let mut list = [0 as c_uint; CAP];
        let mut count = 0;
        // SAFETY: `count` is writable; `list` holds CAP entries, the length
        // passed (sized from the buffer itself).
        let rc = unsafe {
            sys::dcmi_get_device_errorcode_v2(
                card,
                dev,
                &mut count,
                list.as_mut_ptr(),
                list.len() as c_uint,
            )
        }?;
        self.check("dcmi_get_device_errorcode_v2", rc)?;
        Ok(list[..count.clamp(0, CAP as c_int) as usize].to_vec())
    }

    fn temperature_celsius(&self, c: ChipAddr) -> Result<i32> {
        let (card, dev) = Self::ids(c);
        let mut t = 0;
        // SAFETY: `t` is writable.
        let rc = unsafe { sys::dcmi_get_device_temperature(card, dev, &mut t) }?;
        self.check("dcmi_get_device_temperature", rc)?;
        Ok(t)
    }

    fn power_watts(&self, c: ChipAddr) -> Result<f64> {
        let (card, dev) = Self::ids(c);
        let mut p = 0;
        // SAFETY: `p` is writable.
        let rc = unsafe { sys::dcmi_get_device_power_info(card, dev, &mut p) }?;
        self.check("dcmi_get_device_power_info", rc)?;
        // DCMI reports tenths of a watt.
        Ok(f64::from(p) / 10.0)
    }

    fn voltage_volts(&self, c: ChipAddr) -> Result<f64> {
        let (card, dev) = Self::ids(c);
        let mut v: c_uint = 0;
        // SAFETY: `v` is writable.
        let rc = unsafe { sys::dcmi_get_device_voltage(card, dev, &mut v) }?;
        self.check("dcmi_get_device_voltage", rc)?;
        // DCMI reports hundredths of a volt.
        Ok(f64::from(v) / 100.0)
    }

    fn utilization_percent(&self, c: ChipAddr, what: Utilization) -> Result<u32> {
        let (card, dev) = Self::ids(c);
        let input = match what {
            Utilization::AiCore => sys::DCMI_UTILIZATION_RATE_AICORE,
            Utilization::AiCpu => sys::DCMI_UTILIZATION_RATE_AICPU,
            Utilization::Vector => sys::DCMI_UTILIZATION_RATE_VECTORCORE,
            Utilization::HbmBandwidth => sys::DCMI_UTILIZATION_RATE_HBM_BANDWIDTH,
        };
        let mut r: c_uint = 0;
        // SAFETY: `r` is writable.
        let rc = unsafe { sys::dcmi_get_device_utilization_rate(card, dev, input, &mut r) }?;
        self.check("dcmi_get_device_utilization_rate", rc)?;
        Ok(r)
    }

    fn hbm_info(&self, c: ChipAddr) -> Result<HbmInfo> {
        let (card, dev) = Self::ids(c);
        let mut h = sys::dcmi_hbm_info::default();
        // SAFETY: `h` is a writable dcmi_hbm_info.
        let rc = unsafe { sys::dcmi_get_device_hbm_info(card, dev, &mut h) }?;
        self.check("dcmi_get_device_hbm_info", rc)?;
        Ok(HbmInfo {
            total_mib: h.memory_size,
            used_mib: h.memory_usage,
            temperature_celsius: Some(h.temp),
            frequency_mhz: Some(h.freq),
            bandwidth_utilization_percent: Some(h.bandwith_util_rate),
        })
    }

    fn ddr_info(&self, c: ChipAddr) -> Result<DdrInfo> {
        let (card, dev) = Self::ids(c);
        let mut m = sys::dcmi_get_memory_info_stru::default();
        // SAFETY: `m` is a writable dcmi_get_memory_info_stru.
        let rc = unsafe { sys::dcmi_get_device_memory_info_v3(card, dev, &mut m) }?;
        self.check("dcmi_get_device_memory_info_v3", rc)?;
        Ok(DdrInfo {
            total_mib: m.memory_size,
            used_mib: m.memory_size.saturating_sub(m.memory_available),
            available_mib: m.memory_available,
            frequency_mhz: Some(m.freq),
            utilization_percent: m.utiliza,
        })
    }

    fn frequency_mhz(&self, c: ChipAddr, clock: Clock) -> Result<u32> {
        let (card, dev) = Self::ids(c);
        let input = match clock {
            Clock::AiCoreCurrent => sys::DCMI_FREQ_AICORE_CURRENT_,
            Clock::AiCoreMax => sys::DCMI_FREQ_AICORE_MAX,
            Clock::Hbm => sys::DCMI_FREQ_HBM,
        };
        let mut f: c_uint = 0;
        // SAFETY: `f` is writable.
        let rc = unsafe { sys::dcmi_get_device_frequency(card, dev, input, &mut f) }?;
        self.check("dcmi_get_device_frequency", rc)?;
        Ok(f)
    }

    fn ecc(&self, c: ChipAddr, memory: EccMemory) -> Result<EccCounts> {
        let (card, dev) = Self::ids(c);
        let input = match memory {
            EccMemory::Ddr => sys::DCMI_DEVICE_TYPE_DDR,
            EccMemory::Hbm => sys::DCMI_DEVICE_TYPE_HBM,
        };
        let mut e = sys::dcmi_ecc_info::default();
        // SAFETY: `e` is a writable dcmi_ecc_info.
        let rc = unsafe { sys::dcmi_get_device_ecc_info(card, dev, input, &mut e) }?;
        self.check("dcmi_get_device_ecc_info", rc)?;
        Ok(EccCounts {
            enabled: e.enable_flag != 0,
            single_bit_errors: e.single_bit_error_cnt,
            double_bit_errors: e.double_bit_error_cnt,
            total_single_bit_errors: e.total_single_bit_error_cnt,
            total_double_bit_errors: e.total_double_bit_error_cnt,
            single_bit_isolated_pages: e.single_bit_isolated_pages_cnt,
            double_bit_isolated_pages: e.double_bit_isolated_pages_cnt,
        })
    }

    fn processes(&self, c: ChipAddr) -> Result<Vec<ProcessInfo>> {
        let (card, dev) = Self::ids(c);
        let mut procs = [sys::dcmi_proc_mem_info::default(); sys::MAX_PROC_NUM_IN_DEVICE];
        let mut n = 0;
        // SAFETY: `procs` holds MAX_PROC_NUM_IN_DEVICE entries, the capacity
        // the call assumes; `n` is writable.
        let rc =
            unsafe { sys::dcmi_get_device_resource_info(card, dev, procs.as_mut_ptr(), &mut n) }?;
        self.check("dcmi_get_device_resource_info", rc)?;
        Ok(
            procs[..n.clamp(0, sys::MAX_PROC_NUM_IN_DEVICE as c_int) as usize]
                .iter()
                .map(|p| ProcessInfo {
                    pid: p.proc_id as u32,
                    // `c_ulong` is 32 bits on some targets.
                    #[allow(clippy::unnecessary_cast)]
                    memory_bytes: p.proc_mem_usage as u64,
                    name: process_name(p.proc_id as u32),
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::first_stamped_message;

    #[test]
    fn the_first_stamped_message_is_the_newest_failure() {
        let text = "EE9999: Inner Error!\nEE9999[PID: 7] 2026-01-02-03:04:05.006.007 (EE9999):  \
                    dcmi_get_device_info: card 9 does not exist\nTraceBack (most recent call last):\n\n\
                    EE9999: Inner Error!\nEE9999[PID: 7] 2026-01-02-03:04:05.006.007 (EE9999):  older\n";
        assert_eq!(
            first_stamped_message(text).map(str::trim),
            Some("dcmi_get_device_info: card 9 does not exist")
        );
        assert_eq!(first_stamped_message("plain"), None);
    }
}

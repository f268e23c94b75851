//! DCMI initialisation, versions, enumeration and id mapping.
//!
//! The simulated machine ([`crate::machine`]) is seen as the driver sees it:
//! every *physical* device, whatever the calling process's
//! `ASCEND_RT_VISIBLE_DEVICES` (that variable renumbers devices for
//! AscendCL, not for the management interface). Physical device `p` is chip
//! `p % chips_per_card` of card `p / chips_per_card`; Atlas A3 parts
//! (`Ascend910_93xx`) have two chips per card, every other part one. Logical
//! ids equal physical ids, as on a bare-metal host. Each card also has an MCU
//! at device id `chips_per_card` (`dcmi_get_device_id_in_card`), as on Atlas
//! A2 boards.
//!
//! Every function except [`dcmi_init`] and [`dcmi_get_dcmi_version`] fails
//! with `DCMI_ERR_CODE_NOT_REDAY` (-8012) before `dcmi_init`, and every null
//! out-pointer is `DCMI_ERR_CODE_INVALID_PARAMETER` (-8001); the reason is
//! recorded for `aclGetRecentErrMsg`.

use crate::machine::{self, Machine};
use crate::recent_error::fail;
use core::ffi::{c_char, c_int, c_uint};
use dcmi_sys::{
    DCMI_ERR_CODE_DEVICE_NOT_EXIST, DCMI_ERR_CODE_INNER_ERR, DCMI_ERR_CODE_INVALID_DEVICE_ID,
    DCMI_ERR_CODE_INVALID_PARAMETER, DCMI_ERR_CODE_NOT_REDAY, DCMI_OK, MCU_TYPE, NPU_TYPE,
    dcmi_unit_type,
};

/// The version string `dcmi_get_dcmi_version` and `dcmi_get_driver_version`
/// report.
pub const VERSION: &str = concat!("cann-sim ", env!("CARGO_PKG_VERSION"));

/// The machine, once `dcmi_init` has succeeded; otherwise the code to return
/// (recorded with a message naming `function`).
pub(crate) fn machine(function: &str) -> Result<Machine, c_int> {
    if !machine::initialized() {
        return Err(fail(
            DCMI_ERR_CODE_NOT_REDAY,
            format!("{function}: DCMI is not initialised; call dcmi_init first"),
        ));
    }
    machine::get().map_err(|msg| {
        fail(
            DCMI_ERR_CODE_INNER_ERR,
            format!("{function}: cann-sim configuration: {msg}"),
        )
    })
}

/// The physical id of (card, device), or the DCMI error for an id out of
/// range.
pub(crate) fn chip(
    function: &str,
    card_id: c_int,
    device_id: c_int,
) -> Result<(Machine, u32), c_int> {
    let m = machine(function)?;
    let card = u32::try_from(card_id)
        .ok()
        .filter(|&c| c < m.cards())
        .ok_or_else(|| {
            fail(
                DCMI_ERR_CODE_INVALID_DEVICE_ID,
                format!(
                    "{function}: card {card_id} does not exist (the simulator has cards 0 to {})",
                    m.cards() - 1
                ),
            )
        })?;
    let chips = m.chips_in(card);
    let chip = u32::try_from(device_id)
        .ok()
        .filter(|&d| d < chips)
        .ok_or_else(|| {
            fail(
                DCMI_ERR_CODE_INVALID_DEVICE_ID,
                format!(
                    "{function}: card {card_id} has no NPU chip {device_id} (its chips are 0 to {})",
                    chips - 1
                ),
            )
        })?;
    let p = m.physical(card, chip);
    Ok((m, p))
}

/// Writes `value` through `out`, or fails with INVALID_PARAMETER when null.
///
/// # Safety
///
/// `out` is null or valid for writing a `T`.
pub(crate) unsafe fn put<T>(
    function: &str,
    what: &str,
    out: *mut T,
    value: T,
) -> Result<(), c_int> {
    if out.is_null() {
        return Err(fail(
            DCMI_ERR_CODE_INVALID_PARAMETER,
            format!("{function}: {what} is a null pointer"),
        ));
    }
    // SAFETY: non-null, and the caller guarantees it is valid for writes.
    unsafe { out.write(value) };
    Ok(())
}

/// Turns a `Result` of the helpers above into the C return code.
pub(crate) fn code(r: Result<(), c_int>) -> c_int {
    r.err().unwrap_or(DCMI_OK)
}

/// Copies `text` into a C string buffer of `len` bytes.
///
/// # Safety
///
/// `buf` is null or valid for writing `len` bytes.
unsafe fn put_str(function: &str, buf: *mut c_char, len: usize, text: &str) -> Result<(), c_int> {
    if buf.is_null() {
        return Err(fail(
            DCMI_ERR_CODE_INVALID_PARAMETER,
            format!("{function}: the buffer is a null pointer"),
        ));
    }
    let bytes = text.as_bytes();
    if len <= bytes.len() {
        return Err(fail(
            DCMI_ERR_CODE_INVALID_PARAMETER,
            format!(
                "{function}: the buffer holds {len} bytes; the version needs {}",
                bytes.len() + 1
            ),
        ));
    }
    // SAFETY: `buf` has room for `len > bytes.len()` bytes (caller's
    // guarantee), so the text and its NUL fit; the regions cannot overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buf, bytes.len());
        buf.add(bytes.len()).write(0);
    }
    Ok(())
}

/// `dcmi_init`: initialises the library. Repeated calls succeed. Fails with
/// `DCMI_ERR_CODE_INNER_ERR` when the simulator's configuration
/// (`CANN_SIM_*`) is malformed.
#[unsafe(no_mangle)]
pub extern "C" fn dcmi_init() -> c_int {
    match machine::init() {
        Ok(()) => DCMI_OK,
        Err(msg) => fail(
            DCMI_ERR_CODE_INNER_ERR,
            format!("dcmi_init: cann-sim configuration: {msg}"),
        ),
    }
}

/// `dcmi_get_dcmi_version`: the library version (`cann-sim <version>`);
/// needs no `dcmi_init`.
///
/// # Safety
///
/// `dcmi_ver` is null or valid for writing `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_dcmi_version(dcmi_ver: *mut c_char, len: c_uint) -> c_int {
    // SAFETY: forwarded from the caller.
    code(unsafe { put_str("dcmi_get_dcmi_version", dcmi_ver, len as usize, VERSION) })
}

/// `dcmi_get_driver_version`: the driver version (`cann-sim <version>`).
///
/// # Safety
///
/// `driver_ver` is null or valid for writing `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_driver_version(driver_ver: *mut c_char, len: c_uint) -> c_int {
    const F: &str = "dcmi_get_driver_version";
    code(machine(F).and_then(|_| {
        // SAFETY: forwarded from the caller.
        unsafe { put_str(F, driver_ver, len as usize, VERSION) }
    }))
}

/// The body of `dcmi_get_card_list` and `dcmi_get_card_num_list`.
///
/// # Safety
///
/// As [`dcmi_get_card_list`].
unsafe fn card_list(
    function: &str,
    card_num: *mut c_int,
    card_list: *mut c_int,
    list_len: c_int,
) -> c_int {
    let run = || -> Result<(), c_int> {
        let m = machine(function)?;
        let n = m.cards();
        if card_list.is_null() {
            return Err(fail(
                DCMI_ERR_CODE_INVALID_PARAMETER,
                format!("{function}: card_list is a null pointer"),
            ));
        }
        if list_len < 0 || (list_len as u32) < n {
            return Err(fail(
                DCMI_ERR_CODE_INVALID_PARAMETER,
                format!("{function}: list_len {list_len} cannot hold the {n} cards"),
            ));
        }
        // SAFETY: the caller guarantees `card_num` is null or writable.
        unsafe { put(function, "card_num", card_num, n as c_int) }?;
        for i in 0..n {
            // SAFETY: `card_list` holds `list_len >= n` ints (caller's guarantee).
            unsafe { card_list.add(i as usize).write(i as c_int) };
        }
        Ok(())
    };
    code(run())
}

/// `dcmi_get_card_list`: the card ids, `0..cards`.
///
/// `DCMI_ERR_CODE_INVALID_PARAMETER` for a null pointer or a `list_len`
/// smaller than the number of cards.
///
/// # Safety
///
/// `card_num` is null or writable; `card_list` is null or valid for writing
/// `list_len` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_card_list(
    card_num: *mut c_int,
    card_list: *mut c_int,
    list_len: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { self::card_list("dcmi_get_card_list", card_num, card_list, list_len) }
}

/// `dcmi_get_card_num_list`: the same as [`dcmi_get_card_list`] (the name
/// torch_npu uses).
///
/// # Safety
///
/// As [`dcmi_get_card_list`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_card_num_list(
    card_num: *mut c_int,
    card_list: *mut c_int,
    list_len: c_int,
) -> c_int {
    // SAFETY: forwarded from the caller.
    unsafe { self::card_list("dcmi_get_card_num_list", card_num, card_list, list_len) }
}

fn check_card(function: &str, card_id: c_int) -> Result<(Machine, u32), c_int> {
    let m = machine(function)?;
    match u32::try_from(card_id).ok().filter(|&c| c < m.cards()) {
        Some(c) => Ok((m, c)),
        None => Err(fail(
            DCMI_ERR_CODE_INVALID_DEVICE_ID,
            format!(
                "{function}: card {card_id} does not exist (the simulator has cards 0 to {})",
                m.cards() - 1
            ),
        )),
    }
}

/// `dcmi_get_device_num_in_card`: the NPU chips on `card_id`.
///
/// # Safety
///
/// `device_num` is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_num_in_card(
    card_id: c_int,
    device_num: *mut c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_num_in_card";
    code(check_card(F, card_id).and_then(|(m, card)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "device_num", device_num, m.chips_in(card) as c_int) }
    }))
}

/// `dcmi_get_device_id_in_card`: the number of NPU chips (`device_id_max`),
/// the MCU's device id (right after the chips) and the CPU's (`-1`: none).
///
/// # Safety
///
/// Each pointer is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_id_in_card(
    card_id: c_int,
    device_id_max: *mut c_int,
    mcu_id: *mut c_int,
    cpu_id: *mut c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_id_in_card";
    code(check_card(F, card_id).and_then(|(m, card)| {
        let n = m.chips_in(card) as c_int;
        // SAFETY: forwarded from the caller.
        unsafe {
            put(F, "device_id_max", device_id_max, n)?;
            put(F, "mcu_id", mcu_id, n)?;
            put(F, "cpu_id", cpu_id, -1)
        }
    }))
}

/// `dcmi_get_device_type`: `NPU_TYPE` for a chip, `MCU_TYPE` for the MCU id.
///
/// # Safety
///
/// `device_type` is null or valid for writing a `dcmi_unit_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_type(
    card_id: c_int,
    device_id: c_int,
    device_type: *mut dcmi_unit_type,
) -> c_int {
    const F: &str = "dcmi_get_device_type";
    code(check_card(F, card_id).and_then(|(m, card)| {
        let n = m.chips_in(card) as c_int;
        let t = match device_id {
            d if (0..n).contains(&d) => NPU_TYPE,
            d if d == n => MCU_TYPE,
            _ => {
                return Err(fail(
                    DCMI_ERR_CODE_INVALID_DEVICE_ID,
                    format!("{F}: card {card_id} has no device {device_id}"),
                ));
            }
        };
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "device_type", device_type, t) }
    }))
}

/// `dcmi_get_device_logic_id`: the logical id of (card, device), equal to
/// its physical id.
///
/// # Safety
///
/// `device_logic_id` is null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_logic_id(
    device_logic_id: *mut c_int,
    card_id: c_int,
    device_id: c_int,
) -> c_int {
    const F: &str = "dcmi_get_device_logic_id";
    code(chip(F, card_id, device_id).and_then(|(_, p)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "device_logic_id", device_logic_id, p as c_int) }
    }))
}

fn check_id(function: &str, what: &str, id: c_uint) -> Result<(Machine, u32), c_int> {
    let m = machine(function)?;
    if id >= m.config.physical_devices {
        return Err(fail(
            DCMI_ERR_CODE_DEVICE_NOT_EXIST,
            format!(
                "{function}: there is no device with {what} id {id} (the simulator has {})",
                m.config.physical_devices
            ),
        ));
    }
    Ok((m, id))
}

/// `dcmi_get_device_phyid_from_logicid`: the identity mapping.
///
/// # Safety
///
/// `phyid` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_phyid_from_logicid(
    logicid: c_uint,
    phyid: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_phyid_from_logicid";
    code(check_id(F, "logical", logicid).and_then(|(_, id)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "phyid", phyid, id) }
    }))
}

/// `dcmi_get_device_logicid_from_phyid`: the identity mapping.
///
/// # Safety
///
/// `logicid` is null or valid for writing an unsigned int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_device_logicid_from_phyid(
    phyid: c_uint,
    logicid: *mut c_uint,
) -> c_int {
    const F: &str = "dcmi_get_device_logicid_from_phyid";
    code(check_id(F, "physical", phyid).and_then(|(_, id)| {
        // SAFETY: forwarded from the caller.
        unsafe { put(F, "logicid", logicid, id) }
    }))
}

/// `dcmi_get_card_id_device_id_from_logicid`: the (card, device) of a
/// logical id.
///
/// # Safety
///
/// `card_id` and `device_id` are null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_card_id_device_id_from_logicid(
    card_id: *mut c_int,
    device_id: *mut c_int,
    device_logic_id: c_uint,
) -> c_int {
    const F: &str = "dcmi_get_card_id_device_id_from_logicid";
    code(check_id(F, "logical", device_logic_id).and_then(|(m, id)| {
        let (card, chip) = m.card_chip(id);
        // SAFETY: forwarded from the caller.
        unsafe {
            put(F, "card_id", card_id, card as c_int)?;
            put(F, "device_id", device_id, chip as c_int)
        }
    }))
}

/// `dcmi_get_card_id_device_id_from_phyid`: the (card, device) of a
/// physical id.
///
/// # Safety
///
/// `card_id` and `device_id` are null or valid for writing an int.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dcmi_get_card_id_device_id_from_phyid(
    card_id: *mut c_int,
    device_id: *mut c_int,
    device_phy_id: c_uint,
) -> c_int {
    const F: &str = "dcmi_get_card_id_device_id_from_phyid";
    code(check_id(F, "physical", device_phy_id).and_then(|(m, id)| {
        let (card, chip) = m.card_chip(id);
        // SAFETY: forwarded from the caller.
        unsafe {
            put(F, "card_id", card_id, card as c_int)?;
            put(F, "device_id", device_id, chip as c_int)
        }
    }))
}

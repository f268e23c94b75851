//! Raw FFI to DCMI (`libdcmi.so`), the device management interface of the
//! Ascend NPU driver: enumeration, identity, health, temperature, power,
//! clocks, utilisation, memory, ECC and processes — what `nvidia-smi` reads
//! through NVML on NVIDIA hardware, and what `npu-smi` reads on Ascend.
//!
//! DCMI's header ships only with the driver and is on no package registry, so
//! this crate declares the documented functions, structures and constants that
//! telemetry needs **by hand** (`declarations.rs`), and `cargo xtask bindgen`
//! turns them into `src/bindings.rs` with the same generator as `acl-sys` and
//! `hccl-sys`. Struct layouts are checked at compile time.
//!
//! Nothing is linked at build time. [`Api`] holds one
//! `Option<unsafe extern "C" fn(..)>` per C function, filled at run time by the
//! loader shared with `acl-sys` (the [`cann_loader`] crate). Each C function also has
//! a free function of the same name that calls through the process-wide
//! library and returns `Result<c_int, LoadError>`: a [`LoadError`] when no
//! library can be found or the loaded one lacks that function (only that call
//! fails), otherwise the C return code ([`DCMI_OK`] or a `DCMI_ERR_CODE_*`
//! value; [`error_name`] names it).
//!
//! # Where `libdcmi.so` comes from
//!
//! In order; the first that yields a library wins:
//!
//! 1. a table installed in code ([`install`]; this is how `cann_sim::install()`
//!    plugs the simulator in);
//! 2. the file named by `$CANN_DCMI_LIB` (when set, nothing else is tried);
//! 3. `lib64/` and `driver/lib64/` under `$ASCEND_HOME_PATH`,
//!    `$ASCEND_TOOLKIT_HOME` and `/usr/local/Ascend/ascend-toolkit/latest`;
//! 4. the driver directories `/usr/local/Ascend/driver/lib64/driver`,
//!    `/usr/local/Ascend/driver/lib64` and `/usr/local/dcmi`;
//! 5. `libdcmi.so` through the system loader (`LD_LIBRARY_PATH`, `ldconfig`).
//!
//! When nothing is found, the [`LoadError::LibraryNotFound`] message lists
//! every path tried and names `CANN_DCMI_LIB`.
//!
//! # Calling DCMI
//!
//! Call [`dcmi_init`] once per process before anything else. Devices are
//! addressed as (card, device): `card_id` comes from [`dcmi_get_card_list`],
//! `device_id` is the chip index within the card, `0..device_num` from
//! [`dcmi_get_device_num_in_card`]; [`dcmi_get_device_logic_id`] maps it to
//! the logical id that AscendCL's `aclrtSetDevice` uses. Most queries need
//! root (or a privileged container) on real hardware and return
//! [`DCMI_ERR_CODE_NOT_SUPPORT`] where a chip lacks the feature.
//!
//! # Units
//!
//! | Query | Unit |
//! |---|---|
//! | [`dcmi_get_device_temperature`], [`dcmi_hbm_info::temp`] | °C |
//! | [`dcmi_get_device_power_info`] | **0.1 W** (`1034` is 103.4 W) |
//! | [`dcmi_get_device_voltage`] | 0.01 V |
//! | [`dcmi_get_device_frequency`], [`dcmi_aicore_info`], [`dcmi_aicpu_info`] | MHz |
//! | [`dcmi_get_device_utilization_rate`], [`dcmi_multi_utilization_info`] | percent |
//! | [`dcmi_hbm_info::memory_size`], [`dcmi_hbm_info::memory_usage`] | MB |
//! | [`dcmi_get_memory_info_stru`] sizes (DDR) | MB; `hugepagesize` in KB |
//! | [`dcmi_proc_mem_info::proc_mem_usage`] | bytes |
//!
//! [`dcmi_get_device_health`] returns 0 (healthy), 1 (general warning),
//! 2 (major alarm), 3 (critical alarm), or `0xFFFFFFFF` (device absent).
//!
//! # Version
//!
//! [`Library::version`](cann_loader::Library::version) (shown in
//! missing-symbol errors) comes from `dcmi_get_dcmi_version`, which only
//! formats the library's compiled-in version string and needs no
//! `dcmi_init`; when that fails, from the install's version file
//! (`/usr/local/Ascend/driver/version.info` for the driver) next to the
//! library that was loaded.
//!
//! # Example
//!
//! ```no_run
//! use dcmi_sys::{DCMI_OK, MAX_CARD_NUM, error_name};
//!
//! fn check(what: &str, rc: i32) -> Result<(), String> {
//!     if rc == DCMI_OK {
//!         Ok(())
//!     } else {
//!         Err(format!("{what} failed: {} ({rc})", error_name(rc).unwrap_or("unknown")))
//!     }
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // SAFETY: dcmi_init takes no arguments.
//!     check("dcmi_init", unsafe { dcmi_sys::dcmi_init() }?)?;
//!     let mut cards = [0i32; MAX_CARD_NUM];
//!     let mut card_num = 0;
//!     // SAFETY: both pointers are valid; `cards` holds MAX_CARD_NUM entries.
//!     let rc = unsafe {
//!         dcmi_sys::dcmi_get_card_list(&mut card_num, cards.as_mut_ptr(), MAX_CARD_NUM as i32)
//!     }?;
//!     check("dcmi_get_card_list", rc)?;
//!     for &card in &cards[..card_num.clamp(0, MAX_CARD_NUM as i32) as usize] {
//!         let mut power = 0;
//!         // SAFETY: `power` is a valid out-pointer.
//!         let rc = unsafe { dcmi_sys::dcmi_get_device_power_info(card, 0, &mut power) }?;
//!         check("dcmi_get_device_power_info", rc)?;
//!         println!("card {card}: {:.1} W", f64::from(power) / 10.0);
//!     }
//!     Ok(())
//! }
//! ```

#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case)]

pub use cann_loader::LoadError;
use cann_loader::{LibrarySpec, Source, define_library, toolkit_version_near};

// The generated module: its loader plumbing (untyped `transmute` of resolved
// symbol addresses, a summed `resolved_count`) is shared generator output.
// Generated by cann-codegen from the CANN headers: its items carry the
// headers' own documentation where they have any, and its `unsafe` blocks
// are the generator's two shapes, whose soundness is stated once here: a
// wrapper calls the resolved pointer under its own `unsafe fn` contract (the
// C function's), and the table transmutes an exported symbol's address to
// the function type the header declares for that name.
#[allow(
    clippy::missing_transmute_annotations,
    clippy::identity_op,
    missing_docs,
    clippy::undocumented_unsafe_blocks
)]
mod bindings;
pub use bindings::*;

/// Where DCMI is searched for (see the crate documentation for the order;
/// [`cann_loader::libraries::DCMI`]).
pub const SPEC: LibrarySpec = cann_loader::libraries::DCMI;

/// The driver directories that may hold `libdcmi.so`, searched after the CANN
/// install roots.
pub const DRIVER_DIRS: [&str; 3] = cann_loader::libraries::DCMI_DRIVER_DIRS;

/// A library path inside the default driver install, used to find the
/// driver's `version.info` when the library came through the system loader.
const DEFAULT_DRIVER_LIB: &str = "/usr/local/Ascend/driver/lib64/driver/libdcmi.so";

/// The version string of the library itself, via `dcmi_get_dcmi_version`.
fn dcmi_version(api: &Api) -> Option<String> {
    let f = api.dcmi_get_dcmi_version?;
    let mut buf = [0 as core::ffi::c_char; MAX_VER_LEN + 1];
    let len = core::ffi::c_uint::try_from(buf.len()).ok()?;
    // SAFETY: `buf` is a writable buffer of `len` bytes that outlives the
    // call; the function writes at most `len` bytes including the NUL. It
    // formats a compiled-in string and needs no prior `dcmi_init`.
    let rc = unsafe { f(buf.as_mut_ptr(), len) };
    if rc != DCMI_OK {
        return None;
    }
    let bytes = buf.map(|c| c as u8);
    let text = core::ffi::CStr::from_bytes_until_nul(&bytes).ok()?;
    let text = text.to_string_lossy();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn version_probe(api: &Api, source: &Source) -> Option<String> {
    if let Some(v) = dcmi_version(api) {
        return Some(format!("DCMI {v}"));
    }
    let near = match source {
        // A table built in code has no install around it.
        Source::Installed(_) => return None,
        Source::Soname(_) => toolkit_version_near(std::path::Path::new(DEFAULT_DRIVER_LIB)),
        other => other.path().and_then(toolkit_version_near),
    };
    near.map(|v| format!("install {v}"))
}

define_library!(SPEC, version_probe, "DCMI");

/// Every DCMI return code and its name in the header.
const CODES: [(core::ffi::c_int, &str); 23] = [
    (DCMI_OK, "DCMI_OK"),
    (
        DCMI_ERR_CODE_INVALID_PARAMETER,
        "DCMI_ERR_CODE_INVALID_PARAMETER",
    ),
    (
        DCMI_ERR_CODE_OPER_NOT_PERMITTED,
        "DCMI_ERR_CODE_OPER_NOT_PERMITTED",
    ),
    (
        DCMI_ERR_CODE_MEM_OPERATE_FAIL,
        "DCMI_ERR_CODE_MEM_OPERATE_FAIL",
    ),
    (
        DCMI_ERR_CODE_SECURE_FUN_FAIL,
        "DCMI_ERR_CODE_SECURE_FUN_FAIL",
    ),
    (DCMI_ERR_CODE_INNER_ERR, "DCMI_ERR_CODE_INNER_ERR"),
    (DCMI_ERR_CODE_TIME_OUT, "DCMI_ERR_CODE_TIME_OUT"),
    (
        DCMI_ERR_CODE_INVALID_DEVICE_ID,
        "DCMI_ERR_CODE_INVALID_DEVICE_ID",
    ),
    (
        DCMI_ERR_CODE_DEVICE_NOT_EXIST,
        "DCMI_ERR_CODE_DEVICE_NOT_EXIST",
    ),
    (DCMI_ERR_CODE_IOCTL_FAIL, "DCMI_ERR_CODE_IOCTL_FAIL"),
    (DCMI_ERR_CODE_SEND_MSG_FAIL, "DCMI_ERR_CODE_SEND_MSG_FAIL"),
    (DCMI_ERR_CODE_RECV_MSG_FAIL, "DCMI_ERR_CODE_RECV_MSG_FAIL"),
    (DCMI_ERR_CODE_NOT_REDAY, "DCMI_ERR_CODE_NOT_REDAY"),
    (
        DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER,
        "DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER",
    ),
    (
        DCMI_ERR_CODE_FILE_OPERATE_FAIL,
        "DCMI_ERR_CODE_FILE_OPERATE_FAIL",
    ),
    (DCMI_ERR_CODE_RESET_FAIL, "DCMI_ERR_CODE_RESET_FAIL"),
    (DCMI_ERR_CODE_ABORT_OPERATE, "DCMI_ERR_CODE_ABORT_OPERATE"),
    (DCMI_ERR_CODE_IS_UPGRADING, "DCMI_ERR_CODE_IS_UPGRADING"),
    (
        DCMI_ERR_CODE_RESOURCE_OCCUPIED,
        "DCMI_ERR_CODE_RESOURCE_OCCUPIED",
    ),
    (
        DCMI_ERR_CODE_PARTITION_NOT_RIGHT,
        "DCMI_ERR_CODE_PARTITION_NOT_RIGHT",
    ),
    (
        DCMI_ERR_CODE_CONFIG_INFO_NOT_EXIST,
        "DCMI_ERR_CODE_CONFIG_INFO_NOT_EXIST",
    ),
    (DCMI_ERR_CODE_NOT_SUPPORT, "DCMI_ERR_CODE_NOT_SUPPORT"),
    (DCMI_ERROR_CODE_BASE, "DCMI_ERROR_CODE_BASE"),
];

/// The header name of a DCMI return code (`-8255` → `"DCMI_ERR_CODE_NOT_SUPPORT"`),
/// or `None` for a code the header does not define.
///
/// ```
/// assert_eq!(dcmi_sys::error_name(0), Some("DCMI_OK"));
/// assert_eq!(dcmi_sys::error_name(-8001), Some("DCMI_ERR_CODE_INVALID_PARAMETER"));
/// assert_eq!(dcmi_sys::error_name(-8018), None);
/// ```
pub fn error_name(code: i32) -> Option<&'static str> {
    CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
}

// Compiles the README's example with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};
    use std::ffi::OsString;

    #[test]
    fn struct_sizes_match_the_documented_c_layout() {
        assert_eq!(size_of::<dcmi_chip_info>(), 100);
        assert_eq!(size_of::<dcmi_chip_info_v2>(), 132);
        assert_eq!(size_of::<dcmi_pcie_info_all>(), 64);
        assert_eq!(size_of::<dcmi_board_info>(), 16);
        assert_eq!(size_of::<dcmi_elabel_info>(), 5 * 256);
        assert_eq!(size_of::<dcmi_die_id>(), 20);
        assert_eq!(size_of::<dcmi_aicore_info>(), 8);
        assert_eq!(size_of::<dcmi_aicpu_info>(), 76);
        assert_eq!(size_of::<dcmi_ecc_info>(), 28);
        assert_eq!(size_of::<dcmi_hbm_info>(), 32);
        assert_eq!(size_of::<dcmi_multi_utilization_info>(), 48);
        assert_eq!(size_of::<dcmi_sensor_info>(), 64);
        assert_eq!(align_of::<dcmi_sensor_info>(), 4);
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn structs_with_c_long_fields_match_the_lp64_layout() {
        assert_eq!(size_of::<dcmi_get_memory_info_stru>(), 112);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, memory_available), 8);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, freq), 16);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, hugepagesize), 24);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, hugepages_total), 32);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, hugepages_free), 40);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, utiliza), 48);
        assert_eq!(offset_of!(dcmi_get_memory_info_stru, reserve), 52);
        assert_eq!(size_of::<dcmi_proc_mem_info>(), 16);
        assert_eq!(offset_of!(dcmi_proc_mem_info, proc_mem_usage), 8);
    }

    #[test]
    fn field_offsets_match_the_documented_c_layout() {
        assert_eq!(offset_of!(dcmi_chip_info, chip_name), 32);
        assert_eq!(offset_of!(dcmi_chip_info, chip_ver), 64);
        assert_eq!(offset_of!(dcmi_chip_info, aicore_cnt), 96);
        assert_eq!(offset_of!(dcmi_chip_info_v2, npu_name), 100);
        assert_eq!(offset_of!(dcmi_pcie_info_all, domain), 16);
        assert_eq!(offset_of!(dcmi_pcie_info_all, bdf_busid), 20);
        assert_eq!(offset_of!(dcmi_pcie_info_all, bdf_funcid), 28);
        assert_eq!(offset_of!(dcmi_pcie_info_all, reserve), 32);
        assert_eq!(offset_of!(dcmi_board_info, slot_id), 12);
        assert_eq!(offset_of!(dcmi_elabel_info, model), 256);
        assert_eq!(offset_of!(dcmi_elabel_info, serial_number), 1024);
        assert_eq!(offset_of!(dcmi_aicpu_info, util_rate), 12);
        assert_eq!(offset_of!(dcmi_ecc_info, double_bit_isolated_pages_cnt), 24);
        assert_eq!(offset_of!(dcmi_hbm_info, freq), 8);
        assert_eq!(offset_of!(dcmi_hbm_info, memory_usage), 16);
        assert_eq!(offset_of!(dcmi_hbm_info, temp), 24);
        assert_eq!(offset_of!(dcmi_hbm_info, bandwith_util_rate), 28);
        assert_eq!(offset_of!(dcmi_multi_utilization_info, npu_util), 12);
        assert_eq!(offset_of!(dcmi_multi_utilization_info, reserved), 16);
    }

    #[test]
    fn defaults_are_all_zero() {
        let e = dcmi_elabel_info::default();
        assert!(e.serial_number.iter().all(|&c| c == 0));
        let m = dcmi_get_memory_info_stru::default();
        assert_eq!((m.memory_size, m.utiliza), (0, 0));
        assert!(m.reserve.iter().all(|&b| b == 0));
        let s = dcmi_sensor_info::default();
        // SAFETY: Default initialises every byte through the largest member.
        let words = unsafe { s.data };
        assert_eq!(words, [0; DCMI_SENSOR_DATA_MAX_LEN]);
        assert_eq!(format!("{s:?}"), "dcmi_sensor_info { .. }");
    }

    #[test]
    fn enum_values_match_the_header() {
        assert_eq!(
            (NPU_TYPE, MCU_TYPE, CPU_TYPE, INVALID_TYPE),
            (0, 1, 2, 0xFF)
        );
        assert_eq!((NDIE, VDIE), (0, 1));
        assert_eq!(
            (
                DCMI_DEVICE_TYPE_DDR,
                DCMI_DEVICE_TYPE_SRAM,
                DCMI_DEVICE_TYPE_HBM,
                DCMI_DEVICE_TYPE_NPU
            ),
            (0, 1, 2, 3)
        );
        assert_eq!(
            [
                DCMI_FREQ_DDR,
                DCMI_FREQ_CTRLCPU,
                DCMI_FREQ_HBM,
                DCMI_FREQ_AICORE_CURRENT_,
                DCMI_FREQ_AICORE_MAX,
                DCMI_FREQ_VECTORCORE_CURRENT
            ],
            [1, 2, 6, 7, 9, 12]
        );
        assert_eq!(
            [
                DCMI_UTILIZATION_RATE_DDR,
                DCMI_UTILIZATION_RATE_AICORE,
                DCMI_UTILIZATION_RATE_AICPU,
                DCMI_UTILIZATION_RATE_CTRLCPU,
                DCMI_UTILIZATION_RATE_DDR_BANDWIDTH,
                DCMI_UTILIZATION_RATE_HBM,
                DCMI_UTILIZATION_RATE_HBM_BANDWIDTH,
                DCMI_UTILIZATION_RATE_VECTORCORE,
            ],
            [1, 2, 3, 4, 5, 6, 10, 12]
        );
        assert_eq!((DCMI_SOC_TEMP_ID, DCMI_HBM_TEMP_ID), (11, 14));
        assert_eq!((DCMI_RDFX_DETECT_INIT, DCMI_RDFX_DETECT_MAX), (6, 0xFF));
    }

    #[test]
    fn error_name_names_every_header_code() {
        macro_rules! named {
            ($($code:ident = $value:literal),* $(,)?) => {$(
                assert_eq!($code, $value, "value of {}", stringify!($code));
                assert_eq!(error_name($code), Some(stringify!($code)));
            )*};
        }
        named!(
            DCMI_OK = 0,
            DCMI_ERR_CODE_INVALID_PARAMETER = -8001,
            DCMI_ERR_CODE_OPER_NOT_PERMITTED = -8002,
            DCMI_ERR_CODE_MEM_OPERATE_FAIL = -8003,
            DCMI_ERR_CODE_SECURE_FUN_FAIL = -8004,
            DCMI_ERR_CODE_INNER_ERR = -8005,
            DCMI_ERR_CODE_TIME_OUT = -8006,
            DCMI_ERR_CODE_INVALID_DEVICE_ID = -8007,
            DCMI_ERR_CODE_DEVICE_NOT_EXIST = -8008,
            DCMI_ERR_CODE_IOCTL_FAIL = -8009,
            DCMI_ERR_CODE_SEND_MSG_FAIL = -8010,
            DCMI_ERR_CODE_RECV_MSG_FAIL = -8011,
            DCMI_ERR_CODE_NOT_REDAY = -8012,
            DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER = -8013,
            DCMI_ERR_CODE_FILE_OPERATE_FAIL = -8014,
            DCMI_ERR_CODE_RESET_FAIL = -8015,
            DCMI_ERR_CODE_ABORT_OPERATE = -8016,
            DCMI_ERR_CODE_IS_UPGRADING = -8017,
            DCMI_ERR_CODE_RESOURCE_OCCUPIED = -8020,
            DCMI_ERR_CODE_PARTITION_NOT_RIGHT = -8022,
            DCMI_ERR_CODE_CONFIG_INFO_NOT_EXIST = -8023,
            DCMI_ERR_CODE_NOT_SUPPORT = -8255,
            DCMI_ERROR_CODE_BASE = -8000,
        );
        let mut codes: Vec<i32> = CODES.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), CODES.len(), "duplicate code in the table");
    }

    #[test]
    fn error_name_is_none_for_codes_the_header_does_not_define() {
        for code in [
            1,
            -1,
            -7999,
            -8018,
            -8019,
            -8021,
            -8024,
            -8254,
            -8256,
            i32::MIN,
        ] {
            assert_eq!(error_name(code), None, "{code}");
        }
    }

    #[test]
    fn search_order_is_roots_then_driver_dirs_then_soname() {
        let env = |name: &str| (name == "ASCEND_HOME_PATH").then(|| OsString::from("/opt/cann"));
        let got: Vec<String> = SPEC
            .candidates(&env)
            .into_iter()
            .map(|c| match c {
                cann_loader::Candidate::File(p) => p.display().to_string(),
                cann_loader::Candidate::Soname(s) => format!("soname {s}"),
                cann_loader::Candidate::EnvVar(p) => format!("env {}", p.display()),
            })
            .collect();
        assert_eq!(
            got,
            [
                "/opt/cann/lib64/libdcmi.so",
                "/opt/cann/driver/lib64/libdcmi.so",
                "/usr/local/Ascend/ascend-toolkit/latest/lib64/libdcmi.so",
                "/usr/local/Ascend/ascend-toolkit/latest/driver/lib64/libdcmi.so",
                "/usr/local/Ascend/driver/lib64/driver/libdcmi.so",
                "/usr/local/Ascend/driver/lib64/libdcmi.so",
                "/usr/local/dcmi/libdcmi.so",
                "soname libdcmi.so",
            ]
        );
    }

    #[test]
    fn cann_dcmi_lib_is_the_only_candidate_when_set() {
        let env = |name: &str| (name == "CANN_DCMI_LIB").then(|| OsString::from("/x/libdcmi.so"));
        assert_eq!(
            SPEC.candidates(&env),
            [cann_loader::Candidate::EnvVar("/x/libdcmi.so".into())]
        );
    }

    #[test]
    fn missing_library_error_names_cann_dcmi_lib_and_the_driver_dirs() {
        let env = |_: &str| None::<OsString>;
        let err = match SPEC.open(&env) {
            Ok((_, source)) => {
                eprintln!("a real libdcmi.so is installed ({source}); nothing to check");
                return;
            }
            Err(e) => e,
        };
        let msg = err.to_string();
        assert!(
            msg.starts_with("DCMI library not found. Set CANN_DCMI_LIB"),
            "{msg}"
        );
        for dir in DRIVER_DIRS {
            assert!(
                msg.contains(&format!("{dir}/libdcmi.so")),
                "{dir} missing from: {msg}"
            );
        }
        assert!(msg.contains("libdcmi.so (system loader)"), "{msg}");
        match err {
            LoadError::LibraryNotFound {
                library,
                env_var,
                attempts,
            } => {
                assert_eq!((library, env_var), ("DCMI", "CANN_DCMI_LIB"));
                assert_eq!(attempts.len(), SPEC.candidates(&env).len());
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    unsafe extern "C" fn fake_version(buf: *mut core::ffi::c_char, len: core::ffi::c_uint) -> i32 {
        let v = b"25.2.0\0";
        if (len as usize) < v.len() {
            return DCMI_ERR_CODE_INVALID_PARAMETER;
        }
        // SAFETY: the caller passes a writable buffer of `len` bytes, and
        // `len` was checked to hold `v`.
        unsafe { core::ptr::copy_nonoverlapping(v.as_ptr().cast(), buf, v.len()) };
        DCMI_OK
    }

    unsafe extern "C" fn failing_version(_: *mut core::ffi::c_char, _: core::ffi::c_uint) -> i32 {
        DCMI_ERR_CODE_NOT_SUPPORT
    }

    #[test]
    fn version_probe_reports_dcmi_get_dcmi_version() {
        let mut api = Api::empty();
        api.dcmi_get_dcmi_version = Some(fake_version);
        assert_eq!(
            version_probe(&api, &Source::Installed("test")).as_deref(),
            Some("DCMI 25.2.0")
        );
    }

    #[test]
    fn version_probe_falls_back_to_the_version_file_next_to_the_library() {
        let root = tempfile::Builder::new()
            .prefix("dcmi-sys-ver-")
            .tempdir()
            .unwrap();
        let lib_dir = root.path().join("lib64").join("driver");
        std::fs::create_dir_all(&lib_dir).unwrap();
        std::fs::write(root.path().join("version.info"), "Version=24.1.rc3\n").unwrap();
        let mut api = Api::empty();
        api.dcmi_get_dcmi_version = Some(failing_version);
        let source = Source::SearchPath(lib_dir.join("libdcmi.so"));
        let got = version_probe(&api, &source);
        assert_eq!(got.as_deref(), Some("install 24.1.rc3"));
        assert_eq!(version_probe(&api, &Source::Installed("test")), None);
    }

    /// The only test that touches the process-wide library: it installs an
    /// empty table, so every call must fail with the symbol it needed.
    #[test]
    fn call_through_an_installed_table_without_the_symbol_is_missing_symbol() {
        // SAFETY: an empty table has no function pointer that could break a
        // contract.
        unsafe { install(Api::empty(), "test") }.unwrap();
        // SAFETY: the table has no functions; nothing is called.
        match unsafe { dcmi_init() } {
            Err(LoadError::MissingSymbol {
                symbol,
                library,
                origin,
                version,
            }) => {
                assert_eq!(symbol, "dcmi_init");
                assert_eq!(library, "DCMI");
                assert_eq!(origin, "table installed in code by test");
                assert_eq!(version, "unknown");
            }
            other => panic!("expected MissingSymbol for dcmi_init, got {other:?}"),
        }
        let mut temp = 0;
        // SAFETY: as above; `temp` is a valid out-pointer anyway.
        match unsafe { dcmi_get_device_temperature(0, 0, &mut temp) } {
            Err(LoadError::MissingSymbol { symbol, .. }) => {
                assert_eq!(symbol, "dcmi_get_device_temperature")
            }
            other => panic!("expected MissingSymbol, got {other:?}"),
        }
        assert_eq!(library().unwrap().api.resolved_count(), 0);
    }
}

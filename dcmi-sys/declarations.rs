// Hand-written declarations of the DCMI C API (`libdcmi.so`, header
// `dcmi_interface_api.h`), the input of `cargo xtask bindgen`, which turns
// them into `src/bindings.rs`. DCMI's header ships with the Ascend driver
// only, never on a package registry, so the subset that NPU telemetry needs is
// declared here by hand from the documented API.
//
// Rules for this file: items only (no `use`), fully-qualified C types
// (`::core::ffi::c_int`), every struct `#[repr(C)]` + `Debug, Clone, Copy` +
// `Default`, and a compile-time size check for every struct. Layouts are those
// of the documented C declarations on an LP64 target (x86_64, aarch64).

// ---------------------------------------------------------------------------
// Return codes. Every DCMI function returns `int`: `DCMI_OK` or a negative
// code below `DCMI_ERROR_CODE_BASE`.
// ---------------------------------------------------------------------------

/// Success.
pub const DCMI_OK: ::core::ffi::c_int = 0;
/// The base the error codes count down from (`-8000`); not itself returned.
pub const DCMI_ERROR_CODE_BASE: ::core::ffi::c_int = -8000;
/// A parameter is invalid (null pointer, too small a buffer, bad enum value).
pub const DCMI_ERR_CODE_INVALID_PARAMETER: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 1;
/// The caller lacks the permission (typically: not root, or an unprivileged container).
pub const DCMI_ERR_CODE_OPER_NOT_PERMITTED: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 2;
/// A memory operation failed.
pub const DCMI_ERR_CODE_MEM_OPERATE_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 3;
/// A bounds-checked C library function (`memcpy_s`, `sprintf_s`, ...) failed.
pub const DCMI_ERR_CODE_SECURE_FUN_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 4;
/// Internal error of the library or driver.
pub const DCMI_ERR_CODE_INNER_ERR: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 5;
/// The operation timed out.
pub const DCMI_ERR_CODE_TIME_OUT: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 6;
/// The card or device id is out of range.
pub const DCMI_ERR_CODE_INVALID_DEVICE_ID: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 7;
/// The addressed device does not exist.
pub const DCMI_ERR_CODE_DEVICE_NOT_EXIST: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 8;
/// An ioctl to the driver failed.
pub const DCMI_ERR_CODE_IOCTL_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 9;
/// Sending a message to the device failed.
pub const DCMI_ERR_CODE_SEND_MSG_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 10;
/// Receiving a message from the device failed.
pub const DCMI_ERR_CODE_RECV_MSG_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 11;
/// Not ready (e.g. `dcmi_init` was not called, or the device is still booting).
/// The spelling `REDAY` is the header's.
pub const DCMI_ERR_CODE_NOT_REDAY: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 12;
/// The operation is not supported inside a container.
pub const DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 13;
/// A file operation failed.
pub const DCMI_ERR_CODE_FILE_OPERATE_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 14;
/// A device reset failed.
pub const DCMI_ERR_CODE_RESET_FAIL: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 15;
/// The operation was aborted.
pub const DCMI_ERR_CODE_ABORT_OPERATE: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 16;
/// A firmware upgrade is in progress.
pub const DCMI_ERR_CODE_IS_UPGRADING: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 17;
/// The resource is occupied.
pub const DCMI_ERR_CODE_RESOURCE_OCCUPIED: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 20;
/// The partition is not right.
pub const DCMI_ERR_CODE_PARTITION_NOT_RIGHT: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 22;
/// The requested configuration does not exist.
pub const DCMI_ERR_CODE_CONFIG_INFO_NOT_EXIST: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 23;
/// The function or query is not supported on this device, driver or deployment.
pub const DCMI_ERR_CODE_NOT_SUPPORT: ::core::ffi::c_int = DCMI_ERROR_CODE_BASE - 255;

// ---------------------------------------------------------------------------
// Sizes.
// ---------------------------------------------------------------------------

/// Largest version string DCMI writes, without the terminating NUL.
pub const MAX_VER_LEN: usize = 255;
/// Most cards one host supports; a sufficient `list_len` for `dcmi_get_card_list`.
pub const MAX_CARD_NUM: usize = 64;
/// Length of the name fields of [`dcmi_chip_info`] and [`dcmi_chip_info_v2`].
pub const MAX_CHIP_NAME_LEN: usize = 32;
/// Length of each field of [`dcmi_elabel_info`] (the header's spelling).
pub const MAX_LENTH: usize = 256;
/// Number of words in [`dcmi_die_id`].
pub const DIE_ID_COUNT: usize = 5;
/// Length of [`dcmi_aicpu_info::util_rate`].
pub const MAX_CORE_NUM: usize = 16;
/// Length of [`dcmi_sensor_info::data`].
pub const DCMI_SENSOR_DATA_MAX_LEN: usize = 16;
/// Length of [`dcmi_sensor_info::temp`].
pub const DCMI_SENSOR_TEMP_LEN: usize = 2;
/// Length of [`dcmi_sensor_info::ntc_tmp`].
pub const DCMI_SENSOR_NTC_TEMP_LEN: usize = 4;
/// Length of [`dcmi_multi_utilization_info::reserved`].
pub const DCMI_UTIL_RESERVED_LEN: usize = 8;
/// The process-array capacity the DCMI documentation uses for
/// `dcmi_get_device_resource_info`; the call writes up to this many entries
/// and has no capacity parameter, so the array must hold at least this many.
pub const MAX_PROC_NUM_IN_DEVICE: usize = 32;
/// The smallest buffer `dcmi_get_dcmi_version` accepts.
pub const DCMI_VERSION_MIN_LEN: usize = 16;
/// The smallest buffer `dcmi_get_device_errorcode_string` accepts.
pub const DCMI_MIN_ERR_INFO_LEN: usize = 48;

// ---------------------------------------------------------------------------
// Enumerations (C enums are `int`-sized; values as in the header).
// ---------------------------------------------------------------------------

/// `enum dcmi_unit_type`: what a (card, device) pair addresses.
pub type dcmi_unit_type = ::core::ffi::c_uint;
/// An NPU chip.
pub const NPU_TYPE: dcmi_unit_type = 0;
/// The card's management MCU.
pub const MCU_TYPE: dcmi_unit_type = 1;
/// A CPU on the card.
pub const CPU_TYPE: dcmi_unit_type = 2;
/// Not a valid unit.
pub const INVALID_TYPE: dcmi_unit_type = 0xFF;

/// `enum dcmi_die_type`: which die id `dcmi_get_device_die_v2` returns.
pub type dcmi_die_type = ::core::ffi::c_uint;
/// The NPU die.
pub const NDIE: dcmi_die_type = 0;
/// The video (media) die.
pub const VDIE: dcmi_die_type = 1;
/// Newer headers only.
pub const DDIE: dcmi_die_type = 2;
/// Newer headers only: end marker.
pub const INVALID_DIE: dcmi_die_type = 3;

/// `enum dcmi_rdfx_detect_result`: the result of `dcmi_get_device_network_health`.
pub type dcmi_rdfx_detect_result = ::core::ffi::c_uint;
/// The network is healthy.
pub const DCMI_RDFX_DETECT_OK: dcmi_rdfx_detect_result = 0;
/// Socket creation failed.
pub const DCMI_RDFX_DETECT_SOCK_FAIL: dcmi_rdfx_detect_result = 1;
/// No reply within the timeout.
pub const DCMI_RDFX_DETECT_RECV_TIMEOUT: dcmi_rdfx_detect_result = 2;
/// The detection address is unreachable.
pub const DCMI_RDFX_DETECT_UNREACH: dcmi_rdfx_detect_result = 3;
/// Time exceeded.
pub const DCMI_RDFX_DETECT_TIME_EXCEEDED: dcmi_rdfx_detect_result = 4;
/// A fault was detected.
pub const DCMI_RDFX_DETECT_FAULT: dcmi_rdfx_detect_result = 5;
/// Detection is initialising.
pub const DCMI_RDFX_DETECT_INIT: dcmi_rdfx_detect_result = 6;
/// The detection thread failed.
pub const DCMI_RDFX_DETECT_THREAD_ERR: dcmi_rdfx_detect_result = 7;
/// The detection IP is being set.
pub const DCMI_RDFX_DETECT_IP_SET: dcmi_rdfx_detect_result = 8;
/// End marker / unknown state.
pub const DCMI_RDFX_DETECT_MAX: dcmi_rdfx_detect_result = 0xFF;

/// `enum dcmi_device_type`: the memory whose ECC counters `dcmi_get_device_ecc_info` reads.
pub type dcmi_device_type = ::core::ffi::c_uint;
/// DDR memory.
pub const DCMI_DEVICE_TYPE_DDR: dcmi_device_type = 0;
/// On-chip SRAM.
pub const DCMI_DEVICE_TYPE_SRAM: dcmi_device_type = 1;
/// HBM (on-chip memory).
pub const DCMI_DEVICE_TYPE_HBM: dcmi_device_type = 2;
/// The NPU.
pub const DCMI_DEVICE_TYPE_NPU: dcmi_device_type = 3;
/// Newer headers only: recorded single-bit HBM error addresses.
pub const DCMI_HBM_RECORDED_SINGLE_ADDR: dcmi_device_type = 4;
/// Newer headers only: recorded multi-bit HBM error addresses.
pub const DCMI_HBM_RECORDED_MULTI_ADDR: dcmi_device_type = 5;
/// No device.
pub const DCMI_DEVICE_TYPE_NONE: dcmi_device_type = 0xFF;

/// `enum dcmi_freq_type`: the clock `dcmi_get_device_frequency` reads (MHz).
pub type dcmi_freq_type = ::core::ffi::c_uint;
/// DDR clock.
pub const DCMI_FREQ_DDR: dcmi_freq_type = 1;
/// Control-CPU clock.
pub const DCMI_FREQ_CTRLCPU: dcmi_freq_type = 2;
/// HBM clock.
pub const DCMI_FREQ_HBM: dcmi_freq_type = 6;
/// Current AI Core clock (the trailing underscore is the header's).
pub const DCMI_FREQ_AICORE_CURRENT_: dcmi_freq_type = 7;
/// Maximum (rated) AI Core clock.
pub const DCMI_FREQ_AICORE_MAX: dcmi_freq_type = 9;
/// Current Vector Core clock.
pub const DCMI_FREQ_VECTORCORE_CURRENT: dcmi_freq_type = 12;

/// The `input_type` of `dcmi_get_device_utilization_rate` (the header defines
/// these as macros for an `int` parameter; results are percentages).
pub type dcmi_utilization_type = ::core::ffi::c_int;
/// DDR memory usage.
pub const DCMI_UTILIZATION_RATE_DDR: dcmi_utilization_type = 1;
/// AI Core busy rate.
pub const DCMI_UTILIZATION_RATE_AICORE: dcmi_utilization_type = 2;
/// AI CPU busy rate.
pub const DCMI_UTILIZATION_RATE_AICPU: dcmi_utilization_type = 3;
/// Control CPU busy rate.
pub const DCMI_UTILIZATION_RATE_CTRLCPU: dcmi_utilization_type = 4;
/// DDR bandwidth usage.
pub const DCMI_UTILIZATION_RATE_DDR_BANDWIDTH: dcmi_utilization_type = 5;
/// HBM memory usage.
pub const DCMI_UTILIZATION_RATE_HBM: dcmi_utilization_type = 6;
/// HBM bandwidth usage.
pub const DCMI_UTILIZATION_RATE_HBM_BANDWIDTH: dcmi_utilization_type = 10;
/// Vector Core busy rate.
pub const DCMI_UTILIZATION_RATE_VECTORCORE: dcmi_utilization_type = 12;
/// Whole-NPU busy rate (newer drivers).
pub const DCMI_UTILIZATION_RATE_NPU: dcmi_utilization_type = 13;
/// Cube (AI Cube) busy rate (newer drivers).
pub const DCMI_UTILIZATION_RATE_AICUBE: dcmi_utilization_type = 14;

/// `enum dcmi_manager_sensor_id`: the sensor `dcmi_get_device_sensor_info` reads.
pub type dcmi_manager_sensor_id = ::core::ffi::c_uint;
/// Cluster temperature.
pub const DCMI_CLUSTER_TEMP_ID: dcmi_manager_sensor_id = 0;
/// Peripheral temperature.
pub const DCMI_PERI_TEMP_ID: dcmi_manager_sensor_id = 1;
/// AI Core 0 temperature.
pub const DCMI_AICORE0_TEMP_ID: dcmi_manager_sensor_id = 2;
/// AI Core 1 temperature.
pub const DCMI_AICORE1_TEMP_ID: dcmi_manager_sensor_id = 3;
/// AI Core limit.
pub const DCMI_AICORE_LIMIT_ID: dcmi_manager_sensor_id = 4;
/// AI Core total period.
pub const DCMI_AICORE_TOTAL_PER_ID: dcmi_manager_sensor_id = 5;
/// AI Core eliminated period.
pub const DCMI_AICORE_ELIM_PER_ID: dcmi_manager_sensor_id = 6;
/// AI Core base frequency.
pub const DCMI_AICORE_BASE_FREQ_ID: dcmi_manager_sensor_id = 7;
/// NPU DDR frequency.
pub const DCMI_NPU_DDR_FREQ_ID: dcmi_manager_sensor_id = 8;
/// Thermal thresholds (in [`dcmi_sensor_info::temp`]).
pub const DCMI_THERMAL_THRESHOLD_ID: dcmi_manager_sensor_id = 9;
/// NTC temperatures (in [`dcmi_sensor_info::ntc_tmp`]).
pub const DCMI_NTC_TEMP_ID: dcmi_manager_sensor_id = 10;
/// SoC temperature.
pub const DCMI_SOC_TEMP_ID: dcmi_manager_sensor_id = 11;
/// Optical module (FP) temperature.
pub const DCMI_FP_TEMP_ID: dcmi_manager_sensor_id = 12;
/// N-die temperature.
pub const DCMI_N_DIE_TEMP_ID: dcmi_manager_sensor_id = 13;
/// HBM temperature.
pub const DCMI_HBM_TEMP_ID: dcmi_manager_sensor_id = 14;
/// Not a sensor.
pub const DCMI_SENSOR_INVALID_ID: dcmi_manager_sensor_id = 255;

// ---------------------------------------------------------------------------
// Structures.
// ---------------------------------------------------------------------------

/// `struct dcmi_chip_info` (100 bytes): what `dcmi_get_device_chip_info` returns.
/// The strings are NUL-terminated within their arrays.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_chip_info {
    /// Chip family, e.g. `Ascend`.
    pub chip_type: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Chip name, e.g. `910B3`.
    pub chip_name: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Chip revision, e.g. `V1`.
    pub chip_ver: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Number of AI Cores.
    pub aicore_cnt: ::core::ffi::c_uint,
}
const _: () = assert!(::core::mem::size_of::<dcmi_chip_info>() == 100);

/// `struct dcmi_chip_info_v2` (132 bytes): [`dcmi_chip_info`] plus the NPU
/// name, from `dcmi_get_device_chip_info_v2`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_chip_info_v2 {
    /// Chip family, e.g. `Ascend`.
    pub chip_type: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Chip name, e.g. `910B3`.
    pub chip_name: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Chip revision.
    pub chip_ver: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
    /// Number of AI Cores.
    pub aicore_cnt: ::core::ffi::c_uint,
    /// Marketing NPU name.
    pub npu_name: [::core::ffi::c_uchar; MAX_CHIP_NAME_LEN],
}
const _: () = assert!(::core::mem::size_of::<dcmi_chip_info_v2>() == 132);

/// `struct dcmi_pcie_info_all` (64 bytes, as documented): PCIe identity and
/// address, from `dcmi_get_device_pcie_info_v2`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_pcie_info_all {
    /// PCI vendor id (Huawei: `0x19e5`). The spelling is the header's.
    pub venderid: ::core::ffi::c_uint,
    /// PCI subsystem vendor id.
    pub subvenderid: ::core::ffi::c_uint,
    /// PCI device id.
    pub deviceid: ::core::ffi::c_uint,
    /// PCI subsystem device id.
    pub subdeviceid: ::core::ffi::c_uint,
    /// PCI domain (segment).
    pub domain: ::core::ffi::c_int,
    /// Bus number.
    pub bdf_busid: ::core::ffi::c_uint,
    /// Device number.
    pub bdf_deviceid: ::core::ffi::c_uint,
    /// Function number.
    pub bdf_funcid: ::core::ffi::c_uint,
    /// Reserved.
    pub reserve: [::core::ffi::c_uchar; 32],
}
const _: () = assert!(::core::mem::size_of::<dcmi_pcie_info_all>() == 64);

/// `struct dcmi_board_info` (16 bytes), from `dcmi_get_device_board_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_board_info {
    /// Board id.
    pub board_id: ::core::ffi::c_uint,
    /// PCB id.
    pub pcb_id: ::core::ffi::c_uint,
    /// BOM id.
    pub bom_id: ::core::ffi::c_uint,
    /// PCIe slot of the chip.
    pub slot_id: ::core::ffi::c_uint,
}
const _: () = assert!(::core::mem::size_of::<dcmi_board_info>() == 16);

/// `struct dcmi_elabel_info` (1280 bytes): the electronic label, from
/// `dcmi_get_card_elabel_v2` and `dcmi_get_device_elabel_info`. Each field is
/// a NUL-terminated string.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct dcmi_elabel_info {
    /// Product name.
    pub product_name: [::core::ffi::c_char; MAX_LENTH],
    /// Model.
    pub model: [::core::ffi::c_char; MAX_LENTH],
    /// Manufacturer.
    pub manufacturer: [::core::ffi::c_char; MAX_LENTH],
    /// Date of manufacture.
    pub manufacturer_date: [::core::ffi::c_char; MAX_LENTH],
    /// Serial number.
    pub serial_number: [::core::ffi::c_char; MAX_LENTH],
}
impl Default for dcmi_elabel_info {
    fn default() -> Self {
        dcmi_elabel_info {
            product_name: [0; MAX_LENTH],
            model: [0; MAX_LENTH],
            manufacturer: [0; MAX_LENTH],
            manufacturer_date: [0; MAX_LENTH],
            serial_number: [0; MAX_LENTH],
        }
    }
}
const _: () = assert!(::core::mem::size_of::<dcmi_elabel_info>() == 1280);

/// `struct dcmi_die_id` (20 bytes): the die id words, from `dcmi_get_device_die_v2`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_die_id {
    /// The die id, as five 32-bit words.
    pub soc_die: [::core::ffi::c_uint; DIE_ID_COUNT],
}
const _: () = assert!(::core::mem::size_of::<dcmi_die_id>() == 20);

/// `struct dcmi_aicore_info` (8 bytes), from `dcmi_get_device_aicore_info`. MHz.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_aicore_info {
    /// Rated AI Core frequency, MHz.
    pub freq: ::core::ffi::c_uint,
    /// Current AI Core frequency, MHz.
    pub cur_freq: ::core::ffi::c_uint,
}
const _: () = assert!(::core::mem::size_of::<dcmi_aicore_info>() == 8);

/// `struct dcmi_aicpu_info` (76 bytes), from `dcmi_get_device_aicpu_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_aicpu_info {
    /// Maximum AI CPU frequency, MHz.
    pub max_freq: ::core::ffi::c_uint,
    /// Current AI CPU frequency, MHz.
    pub cur_freq: ::core::ffi::c_uint,
    /// Number of AI CPUs (valid entries of `util_rate`).
    pub aicpu_num: ::core::ffi::c_uint,
    /// Busy rate of each AI CPU, percent.
    pub util_rate: [::core::ffi::c_uint; MAX_CORE_NUM],
}
const _: () = assert!(::core::mem::size_of::<dcmi_aicpu_info>() == 76);

/// `struct dcmi_ecc_info` (28 bytes), from `dcmi_get_device_ecc_info`.
///
/// This is the documented seven-field layout, which the DCMI implementation
/// fills. Some third-party copies of the header append two more counters
/// (`*_next_isolated_pages_cnt`, 36 bytes); the library does not write them.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_ecc_info {
    /// Whether ECC is enabled (non-zero) for this memory.
    pub enable_flag: ::core::ffi::c_int,
    /// Single-bit (corrected) errors since the last clear.
    pub single_bit_error_cnt: ::core::ffi::c_uint,
    /// Double-bit (uncorrected) errors since the last clear.
    pub double_bit_error_cnt: ::core::ffi::c_uint,
    /// Single-bit errors over the device's lifetime.
    pub total_single_bit_error_cnt: ::core::ffi::c_uint,
    /// Double-bit errors over the device's lifetime.
    pub total_double_bit_error_cnt: ::core::ffi::c_uint,
    /// Pages isolated because of single-bit errors.
    pub single_bit_isolated_pages_cnt: ::core::ffi::c_uint,
    /// Pages isolated because of double-bit errors.
    pub double_bit_isolated_pages_cnt: ::core::ffi::c_uint,
}
const _: () = assert!(::core::mem::size_of::<dcmi_ecc_info>() == 28);

/// `struct dcmi_hbm_info` (32 bytes), from `dcmi_get_device_hbm_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_hbm_info {
    /// Total HBM, MB.
    pub memory_size: ::core::ffi::c_ulonglong,
    /// HBM clock, MHz.
    pub freq: ::core::ffi::c_uint,
    /// HBM in use, MB (same unit as `memory_size`).
    pub memory_usage: ::core::ffi::c_ulonglong,
    /// HBM temperature, °C.
    pub temp: ::core::ffi::c_int,
    /// HBM bandwidth usage, percent. The spelling is the header's.
    pub bandwith_util_rate: ::core::ffi::c_uint,
}
const _: () = assert!(::core::mem::size_of::<dcmi_hbm_info>() == 32);

/// `struct dcmi_get_memory_info_stru`, from `dcmi_get_device_memory_info_v3`:
/// the device's DDR (not HBM) memory.
///
/// The header's comment calls it 96 bytes, which holds where `long` is 32
/// bits; with the 64-bit `unsigned long` of LP64 targets the C layout is 112
/// bytes, and that is what is declared (and checked) here.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct dcmi_get_memory_info_stru {
    /// Total memory, MB.
    pub memory_size: ::core::ffi::c_ulonglong,
    /// Available memory (free plus free huge pages), MB.
    pub memory_available: ::core::ffi::c_ulonglong,
    /// Memory clock, MHz.
    pub freq: ::core::ffi::c_uint,
    /// Huge page size, KB.
    pub hugepagesize: ::core::ffi::c_ulong,
    /// Huge pages in total.
    pub hugepages_total: ::core::ffi::c_ulong,
    /// Huge pages free.
    pub hugepages_free: ::core::ffi::c_ulong,
    /// Memory usage, percent.
    pub utiliza: ::core::ffi::c_uint,
    /// Reserved.
    pub reserve: [::core::ffi::c_uchar; 60],
}
impl Default for dcmi_get_memory_info_stru {
    fn default() -> Self {
        dcmi_get_memory_info_stru {
            memory_size: 0,
            memory_available: 0,
            freq: 0,
            hugepagesize: 0,
            hugepages_total: 0,
            hugepages_free: 0,
            utiliza: 0,
            reserve: [0; 60],
        }
    }
}
#[cfg(target_pointer_width = "64")]
const _: () = assert!(::core::mem::size_of::<dcmi_get_memory_info_stru>() == 112);

/// `struct dcmi_multi_utilization_info` (48 bytes), from
/// `dcmi_get_device_multi_utilization_rate`. Percentages. Supported on
/// Atlas A2/A3 and later only; elsewhere use `dcmi_get_device_utilization_rate`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_multi_utilization_info {
    /// Cube (AI Cube) busy rate.
    pub aic_util: ::core::ffi::c_uint,
    /// Vector busy rate.
    pub aiv_util: ::core::ffi::c_uint,
    /// AI Core busy rate.
    pub aicore_util: ::core::ffi::c_uint,
    /// Whole-NPU busy rate.
    pub npu_util: ::core::ffi::c_uint,
    /// Reserved.
    pub reserved: [::core::ffi::c_uint; DCMI_UTIL_RESERVED_LEN],
}
const _: () = assert!(::core::mem::size_of::<dcmi_multi_utilization_info>() == 48);

/// `struct dcmi_proc_mem_info` (16 bytes on LP64): one process using a
/// device, from `dcmi_get_device_resource_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct dcmi_proc_mem_info {
    /// Host process id.
    pub proc_id: ::core::ffi::c_int,
    /// Device memory the process uses, bytes.
    pub proc_mem_usage: ::core::ffi::c_ulong,
}
#[cfg(target_pointer_width = "64")]
const _: () = assert!(::core::mem::size_of::<dcmi_proc_mem_info>() == 16);

/// `union dcmi_sensor_info` (64 bytes), from `dcmi_get_device_sensor_info`.
/// Which member is valid depends on the sensor: a single value for most,
/// `temp` for [`DCMI_THERMAL_THRESHOLD_ID`], `ntc_tmp` for [`DCMI_NTC_TEMP_ID`].
/// Reading a member is `unsafe`; start from `Default` (all zero) so that every
/// member is initialised.
#[repr(C)]
#[derive(Clone, Copy)]
pub union dcmi_sensor_info {
    /// A byte-sized value.
    pub uchar: ::core::ffi::c_uchar,
    /// A 16-bit value.
    pub ushort: ::core::ffi::c_ushort,
    /// An unsigned 32-bit value.
    pub uint: ::core::ffi::c_uint,
    /// A signed 32-bit value (most temperatures, °C).
    pub iint: ::core::ffi::c_int,
    /// Two temperatures, °C.
    pub temp: [::core::ffi::c_schar; DCMI_SENSOR_TEMP_LEN],
    /// NTC temperatures, °C.
    pub ntc_tmp: [::core::ffi::c_int; DCMI_SENSOR_NTC_TEMP_LEN],
    /// Raw words.
    pub data: [::core::ffi::c_uint; DCMI_SENSOR_DATA_MAX_LEN],
}
impl Default for dcmi_sensor_info {
    fn default() -> Self {
        dcmi_sensor_info {
            data: [0; DCMI_SENSOR_DATA_MAX_LEN],
        }
    }
}
impl ::core::fmt::Debug for dcmi_sensor_info {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        // The active member is not known here, and a member may be partly
        // uninitialised, so no member is read.
        f.debug_struct("dcmi_sensor_info").finish_non_exhaustive()
    }
}
const _: () = assert!(::core::mem::size_of::<dcmi_sensor_info>() == 64);

// ---------------------------------------------------------------------------
// Functions. Card/device addressing: `card_id` comes from `dcmi_get_card_list`,
// `device_id` is the chip index within the card (0..device_num).
// ---------------------------------------------------------------------------

unsafe extern "C" {
    // Initialisation and versions.
    pub fn dcmi_init() -> ::core::ffi::c_int;
    pub fn dcmi_get_dcmi_version(
        dcmi_ver: *mut ::core::ffi::c_char,
        len: ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_driver_version(
        driver_ver: *mut ::core::ffi::c_char,
        len: ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;

    // Enumeration and id mapping.
    pub fn dcmi_get_card_list(
        card_num: *mut ::core::ffi::c_int,
        card_list: *mut ::core::ffi::c_int,
        list_len: ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_card_num_list(
        card_num: *mut ::core::ffi::c_int,
        card_list: *mut ::core::ffi::c_int,
        list_len: ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_num_in_card(
        card_id: ::core::ffi::c_int,
        device_num: *mut ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_id_in_card(
        card_id: ::core::ffi::c_int,
        device_id_max: *mut ::core::ffi::c_int,
        mcu_id: *mut ::core::ffi::c_int,
        cpu_id: *mut ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_type(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        device_type: *mut dcmi_unit_type,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_logic_id(
        device_logic_id: *mut ::core::ffi::c_int,
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_phyid_from_logicid(
        logicid: ::core::ffi::c_uint,
        phyid: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_logicid_from_phyid(
        phyid: ::core::ffi::c_uint,
        logicid: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_card_id_device_id_from_logicid(
        card_id: *mut ::core::ffi::c_int,
        device_id: *mut ::core::ffi::c_int,
        device_logic_id: ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_card_id_device_id_from_phyid(
        card_id: *mut ::core::ffi::c_int,
        device_id: *mut ::core::ffi::c_int,
        device_phy_id: ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;

    // Identity.
    pub fn dcmi_get_device_chip_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        chip_info: *mut dcmi_chip_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_chip_info_v2(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        chip_info: *mut dcmi_chip_info_v2,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_pcie_info_v2(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        pcie_info: *mut dcmi_pcie_info_all,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_board_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        board_info: *mut dcmi_board_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_card_elabel_v2(
        card_id: ::core::ffi::c_int,
        elabel_info: *mut dcmi_elabel_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_elabel_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        elabel_info: *mut dcmi_elabel_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_product_type(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        product_type_str: *mut ::core::ffi::c_char,
        buf_size: ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_die_v2(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        input_type: dcmi_die_type,
        die_id: *mut dcmi_die_id,
    ) -> ::core::ffi::c_int;

    // Health and errors.
    pub fn dcmi_get_device_health(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        health: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_errorcode_v2(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        error_count: *mut ::core::ffi::c_int,
        error_code_list: *mut ::core::ffi::c_uint,
        list_len: ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_errorcode_string(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        error_code: ::core::ffi::c_uint,
        error_info: *mut ::core::ffi::c_uchar,
        buf_size: ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_network_health(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        result: *mut dcmi_rdfx_detect_result,
    ) -> ::core::ffi::c_int;

    // Thermal, power, voltage, clocks.
    pub fn dcmi_get_device_temperature(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        temperature: *mut ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_power_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        power: *mut ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_voltage(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        voltage: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_frequency(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        input_type: dcmi_freq_type,
        frequency: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_aicore_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        aicore_info: *mut dcmi_aicore_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_aicpu_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        aicpu_info: *mut dcmi_aicpu_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_sensor_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        sensor_id: dcmi_manager_sensor_id,
        sensor_info: *mut dcmi_sensor_info,
    ) -> ::core::ffi::c_int;

    // Utilisation.
    pub fn dcmi_get_device_utilization_rate(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        input_type: ::core::ffi::c_int,
        utilization_rate: *mut ::core::ffi::c_uint,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_multi_utilization_rate(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        util_info: *mut dcmi_multi_utilization_info,
    ) -> ::core::ffi::c_int;

    // Memory.
    pub fn dcmi_get_device_hbm_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        hbm_info: *mut dcmi_hbm_info,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_memory_info_v3(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        memory_info: *mut dcmi_get_memory_info_stru,
    ) -> ::core::ffi::c_int;
    pub fn dcmi_get_device_ecc_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        input_type: dcmi_device_type,
        device_ecc_info: *mut dcmi_ecc_info,
    ) -> ::core::ffi::c_int;

    // Processes.
    pub fn dcmi_get_device_resource_info(
        card_id: ::core::ffi::c_int,
        device_id: ::core::ffi::c_int,
        proc_info: *mut dcmi_proc_mem_info,
        proc_num: *mut ::core::ffi::c_int,
    ) -> ::core::ffi::c_int;
}

//! The Rust equivalent of the header's inline `HcclCommConfigInit`.

use crate::{
    HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET, HCCL_COMM_CONFIG_MAGIC_WORD, HCCL_COMM_CONFIG_VERSION,
    HCCL_COMM_DEFAULT_OP_EXPANSION_MODE, HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET,
    HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET, HCCL_COMM_QOS_CONFIG_NOT_SET,
    HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET, HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET,
    HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE, HcclCommConfig,
};

/// Initialises `config` exactly as the header's inline `HcclCommConfigInit`
/// does (that function is not exported by `libhccl.so`, so it cannot be
/// loaded): the 24-byte info header (size, magic word, version, reserved),
/// then every option set to its "not set" or default value, and the first
/// byte of every string option cleared. Bytes the C function leaves alone are
/// left alone here too, so starting from the same bytes gives identical
/// output (`cargo xtask abi-check` compares the two).
#[doc(alias = "HcclCommConfigInit")]
pub fn comm_config_init(config: &mut HcclCommConfig) {
    let size = core::mem::size_of::<HcclCommConfig>() as u64;
    // The info header: size_t size; uint32_t magicWord; uint32_t version; uint64_t reserved.
    config.reserved[0..8].copy_from_slice(&as_chars(&size.to_ne_bytes()));
    config.reserved[8..12].copy_from_slice(&as_chars(&HCCL_COMM_CONFIG_MAGIC_WORD.to_ne_bytes()));
    config.reserved[12..16].copy_from_slice(&as_chars(&HCCL_COMM_CONFIG_VERSION.to_ne_bytes()));
    config.reserved[16..24].copy_from_slice(&as_chars(&0u64.to_ne_bytes()));

    config.hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config.hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config.hcclCommName[0] = 0;
    config.hcclUdi[0] = 0;
    config.hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config.hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config.hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config.hcclWorldRankID = 0;
    config.hcclJobID = 0;
    config.aclGraphZeroCopyEnable = 0;
    config.hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config.hcclAlgo[0] = 0;
    config.hcclRetryEnable[0] = 0;
    config.hcclRetryParams[0] = 0;
    config.hcclBufferName[0] = 0;
    config.hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config.hcclSymWinMaxMemSizePerRank = HCCL_DEFAULT_SYMMETRIC_MEMORY_STRIDE;
}

/// The ACL versions whose `HcclCommConfigInit` writes explicit defaults:
/// the headers of CANN 8.1.RC1 to 8.3.RC1 (ACL 1.12) set `hcclBufferSize`
/// to 200 (MiB) and `hcclDeterministic` to 0, not the "not set" value
/// `0xFFFFFFFF`, which those releases never name: their `libhccl` would
/// take it as a 4 GiB buffer or refuse the config (found by `cargo xtask
/// abi-check --release 2.5.1`; docs/COMPAT.md, "Findings"). "Not set"
/// first appears in CANN 8.5.0 (ACL 1.15). CANN 8.0 (ACL 1.2) ships no HCCL
/// headers in the wheels checked; it predates "not set" too, so it gets the
/// explicit defaults as well.
const EXPLICIT_DEFAULTS: core::ops::RangeTo<(u32, u32, u32)> = ..(1, 15, 0);

/// `hcclBufferSize` in those releases' `HcclCommConfigInit`
/// (`HCCL_COMM_DEFAULT_BUFFSIZE`).
pub const LEGACY_DEFAULT_BUFFSIZE_MIB: u32 = 200;

/// `hcclDeterministic` in those releases' `HcclCommConfigInit`
/// (`HCCL_COMM_DEFAULT_DETERMINISTIC`).
pub const LEGACY_DEFAULT_DETERMINISTIC: u32 = 0;

/// [`comm_config_init`] for the HCCL of a given CANN release (its ACL
/// version, `None` when unknown: the bindings' own release): what that
/// release's own `HcclCommConfigInit` writes, within the bindings' layout.
#[doc(alias = "HcclCommConfigInit")]
pub fn comm_config_init_for(config: &mut HcclCommConfig, acl_version: Option<(u32, u32, u32)>) {
    comm_config_init(config);
    if acl_version.is_some_and(|v| EXPLICIT_DEFAULTS.contains(&v)) {
        config.hcclBufferSize = LEGACY_DEFAULT_BUFFSIZE_MIB;
        config.hcclDeterministic = LEGACY_DEFAULT_DETERMINISTIC;
    }
}

fn as_chars<const N: usize>(bytes: &[u8; N]) -> [core::ffi::c_char; N] {
    bytes.map(|b| b as core::ffi::c_char)
}

/// A zero-filled config after [`comm_config_init`]: the usual starting point.
pub fn comm_config_default() -> HcclCommConfig {
    // SAFETY: HcclCommConfig is a plain C struct of integers and char arrays,
    // for which all-zero bytes are a valid value.
    let mut config: HcclCommConfig = unsafe { core::mem::zeroed() };
    comm_config_init(&mut config);
    config
}

#[cfg(test)]
mod tests {
    #[test]
    fn releases_8_1_to_8_3_get_their_own_defaults() {
        let at = |v| {
            let mut c = super::comm_config_default();
            super::comm_config_init_for(&mut c, v);
            (c.hcclBufferSize, c.hcclDeterministic)
        };
        assert_eq!(at(None), (u32::MAX, u32::MAX));
        assert_eq!(at(Some((1, 2, 0))), (200, 0));
        assert_eq!(at(Some((1, 12, 0))), (200, 0));
        assert_eq!(at(Some((1, 14, 3))), (200, 0));
        assert_eq!(at(Some((1, 15, 0))), (u32::MAX, u32::MAX));
        assert_eq!(at(Some((1, 17, 0))), (u32::MAX, u32::MAX));
    }

    use super::*;

    fn bytes(c: &HcclCommConfig) -> &[u8] {
        // SAFETY: reading the bytes of a plain C struct that lives as long as the slice.
        unsafe {
            core::slice::from_raw_parts(
                (c as *const HcclCommConfig).cast::<u8>(),
                core::mem::size_of::<HcclCommConfig>(),
            )
        }
    }

    #[test]
    fn info_header_holds_size_magic_and_version() {
        let c = comm_config_default();
        let b = bytes(&c);
        assert_eq!(u64::from_ne_bytes(b[0..8].try_into().unwrap()), 2240);
        assert_eq!(
            u32::from_ne_bytes(b[8..12].try_into().unwrap()),
            0xf0f0_f0f0
        );
        assert_eq!(u32::from_ne_bytes(b[12..16].try_into().unwrap()), 10);
        assert_eq!(&b[16..24], &[0u8; 8]);
    }

    #[test]
    fn options_are_set_to_not_set_values() {
        let c = comm_config_default();
        assert_eq!(c.hcclBufferSize, u32::MAX);
        assert_eq!(c.hcclDeterministic, u32::MAX);
        assert_eq!(c.hcclExecTimeOut, -1);
        assert_eq!(c.hcclQos, u32::MAX);
        assert_eq!(c.hcclSymWinMaxMemSizePerRank, 16);
        assert_eq!(c.hcclCommName[0], 0);
    }

    #[test]
    fn bytes_the_c_function_does_not_touch_are_kept() {
        // SAFETY: as above; 0xAB bytes are a valid HcclCommConfig.
        let mut c: HcclCommConfig = unsafe { core::mem::zeroed() };
        c.hcclCommName = [0x41; 128];
        comm_config_init(&mut c);
        assert_eq!(c.hcclCommName[0], 0);
        assert_eq!(c.hcclCommName[1], 0x41);
    }
}

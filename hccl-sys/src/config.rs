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

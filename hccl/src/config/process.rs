//! Process-wide settings and what the loaded library can configure.

use crate::comm::Comm;
use crate::error::Result;
use crate::result::{self, raw};

/// The engine that expands and schedules collectives (`HCCL_ACCELERATOR`).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Accelerator {
    /// The library's choice (0).
    Default,
    /// The collective communication unit (1).
    Ccu,
    /// AI Vector cores (2).
    Aiv,
    /// AI CPU task scheduling (3).
    AicpuTs,
    /// Host CPU task scheduling (4).
    HostcpuTs,
    /// AI CPU (5).
    Aicpu,
    /// A value this crate does not name.
    Other(i32),
}

impl Accelerator {
    /// The C value.
    pub fn raw(self) -> i32 {
        match self {
            Accelerator::Default => 0,
            Accelerator::Ccu => 1,
            Accelerator::Aiv => 2,
            Accelerator::AicpuTs => 3,
            Accelerator::HostcpuTs => 4,
            Accelerator::Aicpu => 5,
            Accelerator::Other(v) => v,
        }
    }

    /// From the C value.
    pub fn from_raw(v: i32) -> Accelerator {
        match v {
            0 => Accelerator::Default,
            1 => Accelerator::Ccu,
            2 => Accelerator::Aiv,
            3 => Accelerator::AicpuTs,
            4 => Accelerator::HostcpuTs,
            5 => Accelerator::Aicpu,
            v => Accelerator::Other(v),
        }
    }
}

/// An item of `HcclCommConfig` (`HcclCommConfigCapability`).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ConfigItem {
    /// `hcclBufferSize`.
    BufferSize = 0,
    /// `hcclDeterministic`.
    Deterministic = 1,
    /// `hcclCommName`.
    CommName = 2,
    /// `hcclOpExpansionMode`.
    OpExpansionMode = 3,
    /// Initialisation from environment variables.
    SupportInitByEnv = 4,
    /// `hcclWorldRankID`.
    WorldRankId = 5,
    /// `hcclJobID`.
    JobId = 6,
    /// `aclGraphZeroCopyEnable`.
    AclGraphZeroCopy = 7,
    /// `hcclExecTimeOut`.
    ExecTimeout = 8,
    /// `hcclAlgo`.
    Algo = 9,
    /// `hcclRetryEnable`, `hcclRetryParams`.
    Retry = 10,
    /// `hcclBufferName`.
    BufferName = 11,
}

/// Which config items the library reads: every item below
/// [`ConfigCapability::raw`].
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigCapability(u32);

impl ConfigCapability {
    /// The number `HcclGetCommConfigCapability` returned.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// Whether the library reads `item`.
    pub fn supports(self, item: ConfigItem) -> bool {
        self.0 > item as u32
    }
}

/// The config items the loaded library reads.
///
/// ```
/// # cann_sim::install().unwrap();
/// use hccl::config::{ConfigItem, config_capability};
/// assert!(config_capability()?.supports(ConfigItem::CommName));
/// # Ok::<(), hccl::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Load`](crate::Error::Load) when no library can be loaded or it lacks the function.
#[doc(alias = "HcclGetCommConfigCapability")]
pub fn config_capability() -> Result<ConfigCapability> {
    result::get_comm_config_capability().map(ConfigCapability)
}

/// Turns deterministic reductions on or off for this process.
///
/// # Errors
///
/// The library's error.
#[doc(alias = "HcclSetConfig")]
pub fn set_deterministic(on: bool) -> Result<()> {
    result::set_config(raw::HCCL_DETERMINISTIC, i32::from(on))
}

/// Whether deterministic reductions are on for this process.
///
/// # Errors
///
/// The library's error.
#[doc(alias = "HcclGetConfig")]
pub fn deterministic() -> Result<bool> {
    result::get_config(raw::HCCL_DETERMINISTIC).map(|v| v != 0)
}

/// Chooses the engine that runs collectives, for this process.
///
/// # Errors
///
/// [`ErrorCode::NotSupport`](crate::ErrorCode::NotSupport) for an engine
/// the SoC (or the simulator, which has only the default) lacks.
#[doc(alias = "HcclSetConfig")]
pub fn set_accelerator(a: Accelerator) -> Result<()> {
    result::set_config(raw::HCCL_ACCELERATOR, a.raw())
}

/// The engine that runs collectives, for this process.
///
/// # Errors
///
/// The library's error.
#[doc(alias = "HcclGetConfig")]
pub fn accelerator() -> Result<Accelerator> {
    result::get_config(raw::HCCL_ACCELERATOR).map(Accelerator::from_raw)
}

impl Comm {
    fn set_config(&self, config: raw::HcclConfig, v: i32) -> Result<()> {
        // SAFETY: a live communicator.
        unsafe { result::set_comm_config(self.as_raw(), config, v) }
    }

    fn get_config(&self, config: raw::HcclConfig) -> Result<i32> {
        // SAFETY: a live communicator.
        unsafe { result::get_comm_config(self.as_raw(), config) }
    }

    /// Turns deterministic reductions on or off for this communicator.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "HcclSetCommConfig")]
    pub fn set_deterministic(&self, on: bool) -> Result<()> {
        self.set_config(raw::HCCL_DETERMINISTIC, i32::from(on))
    }

    /// Whether this communicator reduces deterministically.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "HcclGetCommConfig")]
    pub fn deterministic(&self) -> Result<bool> {
        self.get_config(raw::HCCL_DETERMINISTIC).map(|v| v != 0)
    }

    /// Chooses the engine that runs this communicator's collectives.
    ///
    /// # Errors
    ///
    /// As [`set_accelerator`].
    #[doc(alias = "HcclSetCommConfig")]
    pub fn set_accelerator(&self, a: Accelerator) -> Result<()> {
        self.set_config(raw::HCCL_ACCELERATOR, a.raw())
    }

    /// The engine that runs this communicator's collectives.
    ///
    /// # Errors
    ///
    /// The library's error.
    #[doc(alias = "HcclGetCommConfig")]
    pub fn accelerator(&self) -> Result<Accelerator> {
        self.get_config(raw::HCCL_ACCELERATOR)
            .map(Accelerator::from_raw)
    }
}

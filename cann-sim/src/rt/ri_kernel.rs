//! The kernel tasks of captured models: what a captured kernel launch
//! (`aclrtLaunchKernel`, `aclrtLaunchKernelWithConfig`) keeps, so that
//! `aclmdlRITaskGetParams` reports it, `aclmdlRITaskSetParams` replaces it
//! and `aclmdlRIKernelTaskGetAttribute` reads its launch attributes.
//!
//! The rules follow hicann/runtime `src/runtime/core/src/kernel/kernel_utils.cc`:
//!
//! - `GetKernelTaskParams`: the function handle, the arguments (the task's
//!   own copy of the buffer, `isHostArgs` 0), their size and the block
//!   count; `cfg` null.
//! - `UpdateKernelParams`: only a kernel task takes kernel parameters
//!   (107000); `taskGrp` must be null (107000); a null function handle,
//!   null arguments or a size of 0 are 107000; the new launch then replaces
//!   the task from the model's next execution (after `aclmdlRIUpdate`).
//! - `GetKernelAttribute`: a task that is not a kernel is 107000; the
//!   schedule mode, dynamic UB size and data-dump flag are the launch's
//!   (0 when not given); a timeout of 0 at launch ("never") reads 0; the
//!   engine type, block offset and block-task prefetch, and ids the release
//!   does not know, are 107000.
//!
//! Operator tasks (aclnn, aclop) keep no function handle in the simulator:
//! their parameters and attributes are 207000.

use super::error::{Error, ErrorKind};
use super::kernel::Function;
use std::sync::Arc;

/// The launch attributes of a kernel launch (`aclrtLaunchKernelCfg`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attrs {
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE`, when given.
    pub sched_mode: Option<u8>,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE` (0 when not given).
    pub dyn_ubuf: u32,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP`.
    pub data_dump: bool,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT`/`TIMEOUT_US`, in microseconds,
    /// when given (`Some(u64::MAX)`: 0 was given, "never").
    pub timeout_us: Option<u64>,
}

/// A captured kernel launch.
pub struct Captured {
    /// The kernel.
    pub func: Arc<Function>,
    /// Its block count.
    pub blocks: u32,
    /// Its argument buffer (the task's own copy).
    pub args: Vec<u8>,
    /// Its launch attributes.
    pub attrs: Attrs,
}

impl Captured {
    /// The function handle (`aclrtFuncHandle`) it launches.
    pub fn handle(&self) -> usize {
        Arc::as_ptr(&self.func) as usize
    }
}

/// A launch attribute `aclmdlRIKernelTaskGetAttribute` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attr {
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE`.
    SchedMode,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE`.
    DynUbufSize,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP`.
    DataDump,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT` (seconds).
    Timeout,
    /// `ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US`.
    TimeoutUs,
    /// An id the call refuses (engine type, block offset, block-task
    /// prefetch, unknown), with its value for the message.
    Refused(u32),
}

/// An attribute's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrValue {
    /// The schedule mode.
    SchedMode(u8),
    /// The dynamic UB size.
    DynUbufSize(u32),
    /// Whether the kernel's data is dumped.
    DataDump(bool),
    /// The timeout in seconds.
    Timeout(u16),
    /// The timeout in microseconds.
    TimeoutUs(u64),
}

/// `aclmdlRIKernelTaskGetAttribute` of a captured launch
/// (`kernel_utils.cc` `GetKernelAttribute`, `ConvertTimeoutByAttrId`).
///
/// # Errors
///
/// 107000 for the ids the release refuses; 207000 for a timeout the launch
/// did not set: the release then reads the default operator timeout from
/// the device's kernel credit, which the simulator does not model.
pub fn attribute(k: &Captured, attr: Attr) -> Result<AttrValue, Error> {
    let a = k.attrs;
    let timeout = || match a.timeout_us {
        Some(u64::MAX) => Ok(0),
        Some(us) => Ok(us),
        None => Err(Error::new(
            ErrorKind::FeatureNotSupport,
            "the launch set no timeout, and the default operator timeout (from the device's \
             kernel credit) is not simulated",
        )),
    };
    Ok(match attr {
        // `RT_SCHEM_MODE_END`: not set, the kernel's own mode (0 here).
        Attr::SchedMode => AttrValue::SchedMode(a.sched_mode.unwrap_or(0)),
        Attr::DynUbufSize => AttrValue::DynUbufSize(a.dyn_ubuf),
        Attr::DataDump => AttrValue::DataDump(a.data_dump),
        Attr::Timeout => {
            AttrValue::Timeout(u16::try_from(timeout()? / 1_000_000).unwrap_or(u16::MAX))
        }
        Attr::TimeoutUs => AttrValue::TimeoutUs(timeout()?),
        Attr::Refused(id) => {
            return Err(Error::new(
                ErrorKind::ParamInvalid,
                format!(
                    "attrId {id} cannot be read from a kernel task; expected 1 (SCHEM_MODE), \
                     2 (DYN_UBUF_SIZE), 6 (DATA_DUMP), 7 (TIMEOUT) or 8 (TIMEOUT_US)"
                ),
            ));
        }
    })
}

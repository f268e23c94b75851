//! The runtime's built-in reduce task: [`Stream::reduce`] combines one
//! device buffer into another element by element (`dst[i] = dst[i] op
//! src[i]`), in stream order, without an operator or a kernel.
//!
//! The device does it with its copy engine (SDMA), so it is the cheapest
//! way to accumulate one buffer into another on the same device — gradient
//! accumulation across micro-batches, or the local step of a hand-written
//! reduction. Which element types a SoC reduces is the runtime's to say:
//! Atlas A2/A3 reduce `i8`, `i16`, `i32`, `f16`, `f32` and `bf16`; other
//! types fail with the runtime's error (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`,
//! 207000, for a type the SoC does not reduce; `ACL_ERROR_INVALID_PARAM`,
//! 100000, for one the runtime never reduces, such as `i64`).
//!
//! Like every stream method, the call is ordered with the other queued
//! uses of both buffers: it waits for earlier writes of `src` and for every
//! earlier use of `dst`, and later uses wait for it.

use crate::error::Result;
use crate::memory::track::{record_accesses, wait_for_conflicts};
use crate::memory::{DeviceMemory, DeviceMemoryMut, Element};
use crate::result::{self, raw};
use crate::{Error, Stream};

/// How [`Stream::reduce`] combines the two buffers (`aclrtReduceKind`).
#[doc(alias = "aclrtReduceKind")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceKind {
    /// `dst[i] + src[i]` (`ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM`).
    Sum,
    /// The larger of the two (`ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX`).
    Max,
    /// The smaller of the two (`ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN`).
    Min,
}

impl ReduceKind {
    /// The `aclrtReduceKind` value.
    pub const fn to_raw(self) -> raw::aclrtReduceKind {
        match self {
            ReduceKind::Sum => raw::ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM,
            ReduceKind::Max => raw::ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
            ReduceKind::Min => raw::ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN,
        }
    }
}

impl Stream {
    /// Queues `dst[i] = dst[i] op src[i]` for every element: the runtime's
    /// reduce task. Both buffers are device memory of this stream's device.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the lengths differ; the runtime's
    /// error from `aclrtReduceAsync` for a type the SoC does not reduce
    /// (207000 or 100000, see the [module docs](crate::reduce)), memory of
    /// another device, or a stream of another context.
    #[doc(alias = "aclrtReduceAsync")]
    pub fn reduce<T: Element>(
        &self,
        src: &(impl DeviceMemory<T> + ?Sized),
        dst: &mut (impl DeviceMemoryMut<T> + ?Sized),
        op: ReduceKind,
    ) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::invalid(
                "Stream::reduce",
                format!(
                    "the source has {} elements, the destination {}",
                    src.len(),
                    dst.len()
                ),
            ));
        }
        if src.is_empty() {
            return Ok(());
        }
        let bytes = src.size_bytes() as u64;
        let dst_ptr = dst.device_ptr_mut();
        let uses = [(src.allocation(), false), (dst.allocation(), true)];
        let seen = wait_for_conflicts(self, uses.into_iter())?;
        // SAFETY: both are live device memory of `bytes` bytes, kept and
        // ordered with their other uses by the accesses recorded below (a
        // free waits for them); `&mut dst` excludes overlap with `src`.
        unsafe {
            result::reduce_async(
                dst_ptr,
                src.device_ptr(),
                bytes,
                op.to_raw(),
                T::DATA_TYPE.to_raw(),
                self.as_raw(),
                std::ptr::null_mut(),
            )?;
        }
        record_accesses(self, &seen, uses.into_iter());
        Ok(())
    }
}

//! Marks and ranges in a profile (msproftx, the CANN counterpart of NVTX),
//! and step markers.
//!
//! While a run with [`DataTypes::MSPROFTX`](super::DataTypes::MSPROFTX)
//! goes on, a [`Stamp`] made from its [`Profiling`] guard puts named
//! events on the host timeline: an instant ([`Stamp::mark`]), a range that
//! may end on another thread ([`Stamp::range`]), or a range around a
//! closure on this thread ([`Stamp::scope`]). [`Profiling::mark_ex`] also
//! puts the mark at its place in a stream's order, to relate host and device
//! timelines. The run's output holds them (`msprof_tx` summary and trace).
//!
//! A stamp borrows the run: it cannot outlive it, as the runtime releases
//! its stamps when profiling stops.
//!
//! [`StepInfo`] marks the start and the end of a training step on a stream
//! (`aclprofGetStepTimestamp`), which msprof uses to split a profile into
//! iterations; it works with or without a run going on.
//!
//! ```
//! # cann_sim::install().unwrap();
//! # let dir = tempfile::tempdir().unwrap();
//! use acl::profiler::{DataTypes, ProfileConfig, Profiler};
//! use acl::{Device, Runtime};
//!
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let stream = npu.new_stream()?;
//! let profiler = Profiler::init(&rt, dir.path())?;
//! let run = profiler.start(&ProfileConfig::new(&[0], DataTypes::TASK_TIME | DataTypes::MSPROFTX)?)?;
//! let forward = run.stamp("forward")?;
//! let y = forward.scope(|| stream.clone_from_host(&[1.0f32; 64]))??;
//! forward.mark()?;
//! run.mark_ex("after forward", &stream)?;
//! drop(forward);
//! run.stop()?;
//! # drop(y);
//! # Ok::<(), acl::Error>(())
//! ```

use super::Profiling;
use crate::error::Result;
use crate::{Stream, release, result};
use std::ffi::{CString, c_void};
use std::marker::PhantomData;
use std::ptr::NonNull;

/// A named msproftx event source of a profiling run (`aclprofCreateStamp`).
///
/// `Send`, not `Sync`: the runtime writes the event's times into the stamp
/// without a lock, so two threads must not mark with one stamp at once.
///
/// ```compile_fail
/// fn sync<T: Sync>() {}
/// sync::<acl::profiler::tx::Stamp<'static>>();
/// ```
#[derive(Debug)]
pub struct Stamp<'run> {
    raw: NonNull<c_void>,
    _run: PhantomData<(&'run Profiling, std::cell::Cell<()>)>,
}

// SAFETY: the stamp is a heap object of the profiler, not tied to the
// thread that made it; `!Sync` (from the `Cell` marker) keeps concurrent
// uses out.
unsafe impl Send for Stamp<'_> {}

impl Profiling {
    /// A stamp whose events carry `message` (under 128 bytes).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_FAILURE` when the run does not profile msproftx (the
    /// runtime makes no stamp); the runtime's error for a message of 128
    /// bytes or more.
    #[doc(alias = "aclprofCreateStamp")]
    #[doc(alias = "aclprofSetStampTraceMessage")]
    pub fn stamp(&self, message: &str) -> Result<Stamp<'_>> {
        let raw = result::prof_create_stamp()?;
        let stamp = Stamp {
            // `prof_create_stamp` refuses null.
            raw: NonNull::new(raw).ok_or_else(|| {
                crate::Error::from_code("aclprofCreateStamp", result::raw::ACL_ERROR_FAILURE)
            })?,
            _run: PhantomData,
        };
        // SAFETY: the stamp just made, live until dropped.
        unsafe { result::prof_set_stamp_trace_message(stamp.raw.as_ptr(), message)? };
        Ok(stamp)
    }

    /// A mark named `message` on the host timeline and at this point of
    /// `stream`'s order on the device's.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a
    /// message with a NUL byte; the runtime's error (-1) for an empty one or
    /// one of 128 bytes or more, or when the run does not profile msproftx.
    #[doc(alias = "aclprofMarkEx")]
    pub fn mark_ex(&self, message: &str, stream: &Stream) -> Result<()> {
        let text = CString::new(message).map_err(|_| {
            crate::Error::invalid("Profiling::mark_ex", "the message contains a NUL byte")
        })?;
        // SAFETY: a live stream, borrowed for the call.
        unsafe { result::prof_mark_ex(&text, stream.as_raw()) }
    }
}

impl Stamp<'_> {
    /// An instant event.
    ///
    /// # Errors
    ///
    /// The runtime's error.
    #[doc(alias = "aclprofMark")]
    pub fn mark(&self) -> Result<()> {
        // SAFETY: a live stamp.
        unsafe { result::prof_mark(self.raw.as_ptr()) }
    }

    /// A range from now until the returned guard ends (dropped or
    /// [`Range::end`], on any thread).
    ///
    /// # Errors
    ///
    /// The runtime's error.
    #[doc(alias = "aclprofRangeStart")]
    pub fn range(&self) -> Result<Range<'_>> {
        // SAFETY: a live stamp.
        let id = unsafe { result::prof_range_start(self.raw.as_ptr())? };
        Ok(Range {
            id,
            open: true,
            _stamp: PhantomData,
        })
    }

    /// Runs `f` inside a range on this thread (`aclprofPush` before,
    /// `aclprofPop` after, also when `f` panics).
    ///
    /// # Errors
    ///
    /// The runtime's error from the push (then `f` does not run) or the pop.
    #[doc(alias = "aclprofPush")]
    #[doc(alias = "aclprofPop")]
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        // SAFETY: a live stamp.
        unsafe { result::prof_push(self.raw.as_ptr())? };
        struct Pop(bool);
        impl Drop for Pop {
            fn drop(&mut self) {
                if !self.0 {
                    // Unwinding out of `f`: close the range all the same.
                    if let Err(e) = result::prof_pop() {
                        release::record("Stamp::scope", e);
                    }
                }
            }
        }
        let mut pop = Pop(false);
        let value = f();
        pop.0 = true;
        result::prof_pop()?;
        Ok(value)
    }
}

impl Drop for Stamp<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `aclprofCreateStamp`, destroyed once, here.
        if let Err(e) = unsafe { result::prof_destroy_stamp(self.raw.as_ptr()) } {
            release::record("Stamp", e);
        }
    }
}

/// An open range of a [`Stamp`] (`aclprofRangeStart`); it ends when
/// dropped or by [`Range::end`].
///
/// `Send + Sync`: it holds the range's id only, and the runtime ends a
/// range from any thread.
#[derive(Debug)]
#[must_use = "the range ends when the guard is dropped"]
pub struct Range<'stamp> {
    id: u32,
    open: bool,
    _stamp: PhantomData<&'stamp ()>,
}

impl Range<'_> {
    /// Ends the range now.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclprofRangeStop`.
    #[doc(alias = "aclprofRangeStop")]
    pub fn end(mut self) -> Result<()> {
        self.open = false;
        result::prof_range_stop(self.id)
    }
}

impl Drop for Range<'_> {
    fn drop(&mut self) {
        if self.open
            && let Err(e) = result::prof_range_stop(self.id)
        {
            release::record("Range", e);
        }
    }
}

/// The start and end markers of one training step on a stream
/// (`aclprofCreateStepInfo`): each can be taken once.
///
/// `Send + Sync`: the runtime's object is used through `&mut self` only.
#[derive(Debug)]
pub struct StepInfo {
    raw: NonNull<result::raw::aclprofStepInfo>,
}

// SAFETY: a heap object of the profiler, not tied to a thread; every use
// takes `&mut self`, so shared references allow nothing.
unsafe impl Send for StepInfo {}
// SAFETY: as above.
unsafe impl Sync for StepInfo {}

impl StepInfo {
    /// A new step (numbered by the runtime in creation order).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_FAILURE` when the runtime makes none.
    #[doc(alias = "aclprofCreateStepInfo")]
    pub fn new() -> Result<StepInfo> {
        let raw = result::prof_create_step_info()?;
        Ok(StepInfo {
            raw: NonNull::new(raw).ok_or_else(|| {
                crate::Error::from_code("aclprofCreateStepInfo", result::raw::ACL_ERROR_FAILURE)
            })?,
        })
    }

    /// Marks the step's start at this point of `stream`'s order.
    ///
    /// # Errors
    ///
    /// The runtime's `ACL_ERROR_INVALID_PARAM` when the start was marked
    /// already; its error for the stream.
    #[doc(alias = "aclprofGetStepTimestamp")]
    pub fn start(&mut self, stream: &Stream) -> Result<()> {
        // SAFETY: a live step info and a live stream.
        unsafe {
            result::prof_get_step_timestamp(
                self.raw.as_ptr(),
                result::raw::ACL_STEP_START,
                stream.as_raw(),
            )
        }
    }

    /// Marks the step's end at this point of `stream`'s order.
    ///
    /// # Errors
    ///
    /// As [`StepInfo::start`], for the end.
    #[doc(alias = "aclprofGetStepTimestamp")]
    pub fn end(&mut self, stream: &Stream) -> Result<()> {
        // SAFETY: as in `start`.
        unsafe {
            result::prof_get_step_timestamp(
                self.raw.as_ptr(),
                result::raw::ACL_STEP_END,
                stream.as_raw(),
            )
        }
    }
}

impl Drop for StepInfo {
    fn drop(&mut self) {
        // SAFETY: made by `aclprofCreateStepInfo`, destroyed once, here.
        if let Err(e) = unsafe { result::prof_destroy_step_info(self.raw.as_ptr()) } {
            release::record("StepInfo", e);
        }
    }
}

//! `aclmdlRI*`: capturing the work queued on a stream into a model (a
//! "graph", as CUDA calls it) and launching it.

use super::forward;
use crate::error::Result;
use acl_sys as sys;

/// `aclmdlRICaptureBegin`: from now on, work queued on `stream` is recorded
/// into a model instead of run.
///
/// # Safety
///
/// `stream` is live.
#[doc(alias = "aclmdlRICaptureBegin")]
pub unsafe fn mdl_ri_capture_begin(
    stream: sys::aclrtStream,
    mode: sys::aclmdlRICaptureMode,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(aclmdlRICaptureBegin(stream, mode)) }
}

/// `aclmdlRICaptureEnd`: ends the capture of `stream` and returns the
/// model holding its work.
///
/// # Safety
///
/// `stream` is live.
#[doc(alias = "aclmdlRICaptureEnd")]
pub unsafe fn mdl_ri_capture_end(stream: sys::aclrtStream) -> Result<sys::aclmdlRI> {
    let mut model: sys::aclmdlRI = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlRICaptureEnd(stream, &mut model)) }?;
    Ok(model)
}

/// `aclmdlRICaptureGetInfo`: whether `stream` is capturing, and into which
/// model.
///
/// # Safety
///
/// `stream` is live.
#[doc(alias = "aclmdlRICaptureGetInfo")]
pub unsafe fn mdl_ri_capture_get_info(
    stream: sys::aclrtStream,
) -> Result<(sys::aclmdlRICaptureStatus, sys::aclmdlRI)> {
    let mut status: sys::aclmdlRICaptureStatus = 0;
    let mut model: sys::aclmdlRI = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointers.
    unsafe { call!(aclmdlRICaptureGetInfo(stream, &mut status, &mut model)) }?;
    Ok((status, model))
}

/// `aclmdlRICaptureThreadExchangeMode`: sets the calling thread's capture
/// mode and returns the previous one.
#[doc(alias = "aclmdlRICaptureThreadExchangeMode")]
pub fn mdl_ri_capture_thread_exchange_mode(
    mode: sys::aclmdlRICaptureMode,
) -> Result<sys::aclmdlRICaptureMode> {
    let mut m = mode;
    // SAFETY: a valid in/out pointer.
    unsafe { call!(aclmdlRICaptureThreadExchangeMode(&mut m)) }?;
    Ok(m)
}

forward! {
    /// `aclmdlRIExecuteAsync`: queues a run of a captured model on
    /// `stream`; the memory its tasks use must stay valid until it has run.
    #[doc(alias = "aclmdlRIExecuteAsync")]
    mdl_ri_execute_async = aclmdlRIExecuteAsync(model: sys::aclmdlRI, stream: sys::aclrtStream);
    /// `aclmdlRIDestroy`: a model with no run queued or running.
    #[doc(alias = "aclmdlRIDestroy")]
    mdl_ri_destroy = aclmdlRIDestroy(model: sys::aclmdlRI);
}

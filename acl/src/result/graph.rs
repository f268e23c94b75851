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

/// `aclmdlRICaptureTaskGrpEnd`: closes the task group open on the
/// capturing `stream` and returns its handle.
///
/// # Safety
///
/// `stream` is live.
#[doc(alias = "aclmdlRICaptureTaskGrpEnd")]
pub unsafe fn mdl_ri_capture_task_grp_end(stream: sys::aclrtStream) -> Result<sys::aclrtTaskGrp> {
    let mut group: sys::aclrtTaskGrp = std::ptr::null_mut();
    // SAFETY: the caller's contract; valid out-pointer.
    unsafe { call!(aclmdlRICaptureTaskGrpEnd(stream, &mut group)) }?;
    Ok(group)
}

forward! {
    /// `aclmdlRICaptureTaskGrpBegin`: the kernels the capturing `stream`
    /// records from now on form a task group, which an update can change.
    #[doc(alias = "aclmdlRICaptureTaskGrpBegin")]
    mdl_ri_capture_task_grp_begin = aclmdlRICaptureTaskGrpBegin(stream: sys::aclrtStream);
    /// `aclmdlRICaptureTaskUpdateBegin`: the kernels issued on `stream`
    /// (not capturing) from now on replace the tasks of `group`, in order;
    /// `group` belongs to a live model.
    #[doc(alias = "aclmdlRICaptureTaskUpdateBegin")]
    mdl_ri_capture_task_update_begin = aclmdlRICaptureTaskUpdateBegin(
        stream: sys::aclrtStream,
        group: sys::aclrtTaskGrp,
    );
    /// `aclmdlRICaptureTaskUpdateEnd`: ends the update on `stream`.
    #[doc(alias = "aclmdlRICaptureTaskUpdateEnd")]
    mdl_ri_capture_task_update_end = aclmdlRICaptureTaskUpdateEnd(stream: sys::aclrtStream);
    /// `aclmdlRIUpdate`: applies the task changes of
    /// `aclmdlRITaskSetParams` / `aclmdlRITaskDisable` to a captured model
    /// (task-group updates do not need it).
    #[doc(alias = "aclmdlRIUpdate")]
    mdl_ri_update = aclmdlRIUpdate(model: sys::aclmdlRI);
    /// `aclmdlRIExecuteAsync`: queues a run of a captured model on
    /// `stream`; the memory its tasks use must stay valid until it has run.
    #[doc(alias = "aclmdlRIExecuteAsync")]
    mdl_ri_execute_async = aclmdlRIExecuteAsync(model: sys::aclmdlRI, stream: sys::aclrtStream);
    /// `aclmdlRIDestroy`: a model with no run queued or running.
    #[doc(alias = "aclmdlRIDestroy")]
    mdl_ri_destroy = aclmdlRIDestroy(model: sys::aclmdlRI);
    /// `aclmdlRIAbort`: stops the runs of a live model that are queued or
    /// running (an experimental feature of CANN); each stream it ran on
    /// reports `ACL_ERROR_RT_MODEL_ABORT_NORMAL` (507023) at its next
    /// synchronisation.
    #[doc(alias = "aclmdlRIAbort")]
    mdl_ri_abort = aclmdlRIAbort(model: sys::aclmdlRI);
}

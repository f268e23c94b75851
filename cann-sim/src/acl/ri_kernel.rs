//! The kernel tasks of captured models: `aclmdlRIKernelTaskGetAttribute`
//! and the kernel parameters `aclmdlRITaskSetParams` takes — argument
//! checks and codes; the engine is [`crate::rt::ri_kernel`].
//!
//! The ACL layer checks `task` and `attrValue` for null (100000,
//! hicann/runtime `src/acl/aclrt_impl/kernel.cpp`
//! `aclmdlRIKernelTaskGetAttributeImpl`), then the runtime's
//! `kernel_utils.cc` `GetKernelAttribute` and `UpdateKernelParams` apply
//! the rules cited in the engine.

use super::common::{self, rt_fail};
use super::kernel_launch::launch_attrs;
use super::ri_task::task_arg;
use crate::faults;
use crate::rt::handles::Lookup;
use crate::rt::kernel::{FUNCTIONS, MAX_ARG_WORDS};
use crate::rt::ri_kernel::{self, Attr, AttrValue};
use crate::rt::ri_task::{self, KernelChange};
use crate::rt::{Error, ErrorKind};
use acl_sys::{
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP, ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE,
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, ACL_SUCCESS, aclError, aclmdlRITask, aclmdlRITaskParams,
    aclrtLaunchKernelAttrId, aclrtLaunchKernelAttrValue,
};
use std::sync::atomic::Ordering;

/// The launch `params` (type KERNEL) asks `aclmdlRITaskSetParams` for, or
/// why it is refused (`kernel_utils.cc` `UpdateKernelParams`, in its
/// order): `taskGrp` set, a null function handle, null arguments or a size
/// of 0 → 107000; a function handle that is not live → 107017. The
/// simulator also refuses (107000) more than its kernels' argument words,
/// device arguments (`isHostArgs` 0) outside device memory, and a call
/// without a current context. The arguments are copied at the call.
///
/// # Safety
///
/// `params.kernelTaskParams.args` is valid for `argsSize` bytes when
/// `isHostArgs` is not 0; `cfg` is null or valid.
pub(super) unsafe fn kernel_change(p: &aclmdlRITaskParams) -> Result<KernelChange, Error> {
    let invalid = |msg: String| Error::new(ErrorKind::ParamInvalid, msg);
    if !p.taskGrp.is_null() {
        return Err(invalid("params->taskGrp must be null".into()));
    }
    // SAFETY: a plain-data union: every field is valid for any bytes.
    let k = unsafe { p.__bindgen_anon_1.kernelTaskParams };
    if k.funcHandle.is_null() {
        return Err(invalid(
            "params->kernelTaskParams.funcHandle is null".into(),
        ));
    }
    let func = match FUNCTIONS.lock().get(k.funcHandle as usize) {
        Lookup::Live(f) if f.binary.loaded.load(Ordering::Acquire) => f,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidHandle,
                format!(
                    "params->kernelTaskParams.funcHandle {:#x} is not a live kernel function \
                     (aclrtBinaryGetFunction of a loaded binary)",
                    k.funcHandle as usize
                ),
            ));
        }
    };
    if k.args.is_null() {
        return Err(invalid("params->kernelTaskParams.args is null".into()));
    }
    if k.argsSize == 0 {
        return Err(invalid(
            "params->kernelTaskParams.argsSize must be greater than 0".into(),
        ));
    }
    if k.argsSize > MAX_ARG_WORDS * 8 {
        return Err(invalid(format!(
            "params->kernelTaskParams.argsSize {} is more than cann-sim kernels take \
             ({MAX_ARG_WORDS} 8-byte words)",
            k.argsSize
        )));
    }
    let Some(device) = crate::state::current_context().map(|c| c.device) else {
        return Err(invalid("no context is set on this thread".into()));
    };
    if k.isHostArgs == 0 {
        let at = crate::rt::op::device_range(
            "",
            "params->kernelTaskParams.args",
            k.args as usize,
            k.argsSize,
            device,
        )?;
        if at.is_none() {
            return Err(invalid(
                "params->kernelTaskParams.args lies in no allocation (isHostArgs 0: device \
                 memory)"
                    .into(),
            ));
        }
    }
    if !k.cfg.is_null() {
        // SAFETY: `cfg` is valid (caller).
        let c = unsafe { &*k.cfg };
        if c.numAttrs > 0 && c.attrs.is_null() {
            return Err(invalid(format!(
                "params->kernelTaskParams.cfg->numAttrs is {} but its attrs are null",
                c.numAttrs
            )));
        }
    }
    // SAFETY: checked above: `cfg` null, or valid with its attributes.
    let attrs = unsafe { launch_attrs("aclmdlRITaskSetParams", k.cfg) }.unwrap_or_default();
    // SAFETY: non-null and valid for `argsSize` bytes (caller; device
    // arguments checked to lie in an allocation).
    let args = unsafe { std::slice::from_raw_parts(k.args.cast::<u8>(), k.argsSize) }.to_vec();
    Ok(KernelChange {
        func,
        blocks: k.numBlocks,
        args,
        attrs,
        device,
    })
}

/// `aclmdlRIKernelTaskGetAttribute`: a launch attribute of a captured
/// kernel launch.
///
/// Null task or value → 100000; a bad task handle → 107017; a task that
/// is not a kernel, an id other than SCHEM_MODE, DYN_UBUF_SIZE, DATA_DUMP,
/// TIMEOUT, TIMEOUT_US → 107000; an operator's kernel, or a timeout the
/// launch did not set → 207000 (not simulated; see
/// `rt::ri_kernel::attribute`).
///
/// # Safety
///
/// `attr_value` is null or valid for writing an
/// `aclrtLaunchKernelAttrValue`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIKernelTaskGetAttribute(
    task: aclmdlRITask,
    attr_id: aclrtLaunchKernelAttrId,
    attr_value: *mut aclrtLaunchKernelAttrValue,
) -> aclError {
    const F: &str = "aclmdlRIKernelTaskGetAttribute";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if task.is_null() {
        return common::null_arg(F, "task");
    }
    if attr_value.is_null() {
        return common::null_arg(F, "attrValue");
    }
    let t = tri!(task_arg(F, task));
    let k = match ri_task::kernel_of(&t) {
        Ok(k) => k,
        Err(e) => return rt_fail(F, e),
    };
    let attr = match attr_id {
        ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE => Attr::SchedMode,
        ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE => Attr::DynUbufSize,
        ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP => Attr::DataDump,
        ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT => Attr::Timeout,
        ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US => Attr::TimeoutUs,
        other => Attr::Refused(other),
    };
    let value = match ri_kernel::attribute(&k, attr) {
        Ok(v) => v,
        Err(e) => return rt_fail(F, e),
    };
    let mut out = aclrtLaunchKernelAttrValue { rsv: [0; 4] };
    match value {
        AttrValue::SchedMode(m) => out.schemMode = m,
        AttrValue::DynUbufSize(n) => out.dynUBufSize = n,
        AttrValue::DataDump(d) => out.isDataDump = u8::from(d),
        AttrValue::Timeout(s) => out.timeout = s,
        AttrValue::TimeoutUs(us) => {
            out.timeoutUs = acl_sys::aclrtTimeoutUs {
                timeoutLow: us as u32,
                timeoutHigh: (us >> 32) as u32,
            };
        }
    }
    // SAFETY: checked non-null; the caller passes a writable value.
    unsafe { attr_value.write(out) };
    ACL_SUCCESS
}

//! Kernel launch: `aclrtLaunchKernelWithConfig` (an argument list) and
//! `aclrtLaunchKernel` (a raw argument buffer).
//!
//! Checks at the call, with the runtime's codes (hicann/runtime
//! `src/acl/aclrt_impl/kernel.cpp`): a null function or argument list, zero
//! blocks, or a non-null `reserve` → `ACL_ERROR_INVALID_PARAM` (100000); a
//! destroyed stream or function → 107017; no current context → 107002; a
//! stream of another context → 107003; a function loaded on another device,
//! an argument list made for another function, more than
//! [`MAX_ARG_WORDS`](crate::rt::kernel::MAX_ARG_WORDS) argument words, or a placeholder without data →
//! `ACL_ERROR_RT_PARAM_INVALID` (107000).
//!
//! The argument buffer is copied at the call (the runtime copies it to the
//! device then), so the list may be reused at once. The kernel then runs on
//! the stream's worker, once per block (see `kernel_binary` for the calling
//! convention), as an operator task: every argument word that points into
//! device memory is checked again when the task runs, and memory freed in
//! between is a fault of the task, `ACL_ERROR_RT_AICORE_EXCEPTION` (507015),
//! reported by the next synchronisation. Launch attributes (`cfg`) are
//! accepted and have no effect; a captured launch keeps the ones
//! `aclmdlRIKernelTaskGetAttribute` reads (`crate::rt::ri_kernel`).

use super::common::{self, PARAM_INVALID, rt_fail};
use super::kernel_args::args_arg;
use super::kernel_binary::function_arg;
use super::stream::takes_host_work;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::Stream;
use crate::rt::kernel::{self, Launch, MAX_ARG_WORDS, words_of};
use crate::rt::ri_kernel::Attrs;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP,
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE, ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT, ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US, ACL_SUCCESS, aclError,
    aclrtArgsHandle, aclrtFuncHandle, aclrtLaunchKernelCfg, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

/// The checks every launch shares: stream, context, host-work capability.
fn launch_stream(function: &str, stream: aclrtStream) -> Result<(Arc<Stream>, u32), aclError> {
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    let s = common::or_default(s, &ctx);
    common::in_context(function, &s, &ctx)?;
    takes_host_work(function, &s)?;
    Ok((s, ctx.device))
}

/// The launch attributes of `cfg` that a captured launch reports
/// (`aclmdlRIKernelTaskGetAttribute`); the others are accepted and have no
/// effect. A null `cfg` has none.
///
/// # Errors
///
/// 100000 for `numAttrs` above 0 with null `attrs`.
///
/// # Safety
///
/// `cfg` is null or valid, with `attrs` valid for `numAttrs` entries.
pub(crate) unsafe fn launch_attrs(
    function: &str,
    cfg: *const aclrtLaunchKernelCfg,
) -> Result<Attrs, aclError> {
    let mut a = Attrs::default();
    if cfg.is_null() {
        return Ok(a);
    }
    // SAFETY: non-null and valid (caller).
    let c = unsafe { &*cfg };
    if c.numAttrs == 0 {
        return Ok(a);
    }
    if c.attrs.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: cfg->numAttrs is {} but cfg->attrs is null",
                c.numAttrs
            ),
        ));
    }
    // SAFETY: `attrs` is valid for `numAttrs` entries (caller).
    let attrs = unsafe { std::slice::from_raw_parts(c.attrs, c.numAttrs) };
    // A timeout of 0 is "never" (`kernel_utils.cc` `ConvertTimeoutByAttrId`).
    let never_if_0 = |us: u64| if us == 0 { u64::MAX } else { us };
    for attr in attrs {
        let v = attr.value;
        // SAFETY: a plain-data union: the field the id names is read, and
        // every field is valid for any bytes.
        unsafe {
            match attr.id {
                ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE => a.sched_mode = Some(v.schemMode),
                ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE => a.dyn_ubuf = v.dynUBufSize,
                ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP => a.data_dump = v.isDataDump != 0,
                ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT => {
                    a.timeout_us = Some(never_if_0(u64::from(v.timeout) * 1_000_000));
                }
                ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US => {
                    let t = v.timeoutUs;
                    a.timeout_us = Some(never_if_0(
                        (u64::from(t.timeoutHigh) << 32) | u64::from(t.timeoutLow),
                    ));
                }
                _ => {}
            }
        }
    }
    Ok(a)
}

/// `aclrtLaunchKernelWithConfig`: queues `funcHandle` on `stream` with
/// `numBlocks` blocks and the argument list `argsHandle`.
///
/// # Safety
///
/// `cfg` is null or valid. The kernel's code runs on the stream's worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchKernelWithConfig(
    func_handle: aclrtFuncHandle,
    num_blocks: u32,
    stream: aclrtStream,
    cfg: *mut aclrtLaunchKernelCfg,
    args_handle: aclrtArgsHandle,
    reserve: *mut c_void,
) -> aclError {
    const F: &str = "aclrtLaunchKernelWithConfig";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if func_handle.is_null() {
        return common::null_arg(F, "funcHandle");
    }
    if num_blocks == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: numBlocks must be positive, but it is 0"),
        );
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    if !reserve.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: reserve is a reserved parameter and must be null"),
        );
    }
    // SAFETY: forwarded from the caller.
    let attrs = tri!(unsafe { launch_attrs(F, cfg) });
    let func = tri!(function_arg(F, func_handle));
    let args = tri!(args_arg(F, args_handle));
    let (s, device) = tri!(launch_stream(F, stream));
    let launch = {
        let st = args.state.lock();
        if !Arc::ptr_eq(&st.func, &func) {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: argsHandle was made for kernel {}, not for the launched kernel {}",
                    st.func.name, func.name
                ),
            );
        }
        let param_end = st.params.last().map_or(0, |p| p.offset + p.size);
        let data = args.snapshot(st.used);
        let mut words = words_of(&data[..param_end.min(data.len())]);
        words.truncate(param_end.div_ceil(8));
        let mut placeholders = Vec::new();
        for (i, p) in st.params.iter().enumerate() {
            if !p.placeholder {
                continue;
            }
            let Some(offset) = p.data_offset else {
                return fail(
                    PARAM_INVALID,
                    format!(
                        "{F}: placeholder parameter {i} has no data: take its buffer with \
                         aclrtKernelArgsGetPlaceHolderBuffer before launching"
                    ),
                );
            };
            placeholders.push((p.offset / 8, offset));
        }
        Launch {
            words,
            placeholders,
            data,
            attrs,
        }
    };
    match kernel::launch(F, &s, device, func, num_blocks, launch) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// `aclrtLaunchKernel`: queues `funcHandle` on `stream` with `numBlocks`
/// blocks and `argsSize` bytes of arguments at `argsData` (host memory,
/// copied at the call).
///
/// # Safety
///
/// `args_data` is null or valid for `args_size` bytes. The kernel's code
/// runs on the stream's worker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtLaunchKernel(
    func_handle: aclrtFuncHandle,
    num_blocks: u32,
    args_data: *const c_void,
    args_size: usize,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclrtLaunchKernel";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if func_handle.is_null() {
        return common::null_arg(F, "funcHandle");
    }
    if args_data.is_null() {
        return common::null_arg(F, "argsData");
    }
    if num_blocks == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: numBlocks must be positive, but it is 0"),
        );
    }
    let func = tri!(function_arg(F, func_handle));
    let (s, device) = tri!(launch_stream(F, stream));
    if args_size > MAX_ARG_WORDS * 8 {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: kernel {}: argsSize {args_size} is more than {MAX_ARG_WORDS} 8-byte words",
                func.name
            ),
        );
    }
    // SAFETY: valid for `args_size` bytes (caller).
    let data = unsafe { std::slice::from_raw_parts(args_data.cast::<u8>(), args_size) }.to_vec();
    let launch = Launch {
        words: words_of(&data),
        placeholders: Vec::new(),
        data,
        attrs: Attrs::default(),
    };
    match kernel::launch(F, &s, device, func, num_blocks, launch) {
        Ok(()) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

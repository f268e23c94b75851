//! Kernel launch: `aclrtLaunchKernelWithConfig` (an argument list) and
//! `aclrtLaunchKernel` (a raw argument buffer).
//!
//! Checks at the call, with the runtime's codes (hicann/runtime
//! `src/acl/aclrt_impl/kernel.cpp`): a null function or argument list, zero
//! blocks, or a non-null `reserve` → `ACL_ERROR_INVALID_PARAM` (100000); a
//! destroyed stream or function → 107017; no current context → 107002; a
//! stream of another context → 107003; a function loaded on another device,
//! an argument list made for another function, more than
//! [`MAX_ARG_WORDS`] argument words, or a placeholder without data →
//! `ACL_ERROR_RT_PARAM_INVALID` (107000).
//!
//! The argument buffer is copied at the call (the runtime copies it to the
//! device then), so the list may be reused at once. The kernel then runs on
//! the stream's worker, once per block (see `kernel_binary` for the calling
//! convention), as an operator task: every argument word that points into
//! device memory is checked again when the task runs, and memory freed in
//! between is a fault of the task, `ACL_ERROR_RT_AICORE_EXCEPTION` (507015),
//! reported by the next synchronisation. Launch attributes (`cfg`) are
//! accepted and have no effect.

use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use super::kernel_args::args_arg;
use super::kernel_binary::{Function, function_arg};
use super::stream::takes_host_work;
use crate::check::Use;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::Stream;
use crate::rt::stream::{Expect, TaskKind, TaskRange};
use crate::state::{self, Region};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclError, aclrtArgsHandle, aclrtFuncHandle,
    aclrtLaunchKernelCfg, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

/// The most 8-byte argument words a simulator kernel takes.
pub const MAX_ARG_WORDS: usize = 24;

macro_rules! call_kernel {
    ($entry:expr, $w:expr, $b:expr, $n:expr; $($i:tt)*) => {{
        // SAFETY (of the caller): `entry` is the address of an exported C
        // function with this signature (the documented convention).
        let f = unsafe {
            std::mem::transmute::<usize, unsafe extern "C" fn($(call_kernel!(@ty $i),)* u32, u32)>($entry)
        };
        // SAFETY: as above; the arguments are plain integers.
        unsafe { f($($w[$i],)* $b, $n) }
    }};
    (@ty $i:tt) => { u64 };
}

/// Calls the kernel at `entry` with `words` and the block coordinates.
///
/// # Safety
///
/// `entry` is a C function taking `words.len()` 64-bit integers then two
/// `u32`, loaded and kept loaded; what it does with its arguments is its own
/// business (as a kernel on a device).
unsafe fn call(entry: usize, w: &[u64], block: u32, blocks: u32) -> Result<(), String> {
    match w.len() {
        0 => call_kernel!(entry, w, block, blocks;),
        1 => call_kernel!(entry, w, block, blocks; 0),
        2 => call_kernel!(entry, w, block, blocks; 0 1),
        3 => call_kernel!(entry, w, block, blocks; 0 1 2),
        4 => call_kernel!(entry, w, block, blocks; 0 1 2 3),
        5 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4),
        6 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5),
        7 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6),
        8 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7),
        9 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8),
        10 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9),
        11 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10),
        12 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11),
        13 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12),
        14 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13),
        15 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14),
        16 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15),
        17 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16),
        18 => call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17),
        19 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
        }
        20 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19)
        }
        21 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)
        }
        22 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21)
        }
        23 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22)
        }
        24 => {
            call_kernel!(entry, w, block, blocks; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23)
        }
        n => return Err(format!("{n} argument words (at most {MAX_ARG_WORDS})")),
    }
    Ok(())
}

/// What a launch needs once its arguments are known: the argument words
/// (placeholders not yet resolved) and where placeholders point into `data`.
struct Launch {
    /// The argument words.
    words: Vec<u64>,
    /// (word index, offset in `data`) of each placeholder.
    placeholders: Vec<(usize, usize)>,
    /// The argument buffer's bytes (placeholder data included).
    data: Vec<u8>,
}

fn words_of(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// Validates and queues a launch of `func` on `s` (already checked to be
/// in the current context).
fn enqueue(
    function: &'static str,
    s: &Arc<Stream>,
    device: u32,
    func: Arc<Function>,
    blocks: u32,
    launch: Launch,
) -> aclError {
    if func.binary.device != device {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: kernel {} was loaded on device {}, but the stream is on device \
                 {device}; load the binary with a context of that device current",
                func.name, func.binary.device
            ),
        );
    }
    if launch.words.len() > MAX_ARG_WORDS {
        return fail(
            PARAM_INVALID,
            format!(
                "{function}: kernel {}: the arguments are {} 8-byte words; cann-sim kernels take \
                 at most {MAX_ARG_WORDS}",
                func.name,
                launch.words.len()
            ),
        );
    }
    // Words that point into device memory: checked again when the kernel runs.
    let mut ranges = Vec::new();
    {
        let table = state::memory().read();
        for (i, &w) in launch.words.iter().enumerate() {
            if launch.placeholders.iter().any(|&(p, _)| p == i) {
                continue;
            }
            let Ok(region) = table.check_range(w as usize, 1) else {
                continue;
            };
            match region {
                Region::Device { device: d, .. } if d != device => {
                    return fail(
                        PARAM_INVALID,
                        format!(
                            "{function}: kernel {}: argument word {i} ({w:#x}) is memory of \
                             device {d}, but the kernel runs on device {device}",
                            func.name
                        ),
                    );
                }
                Region::Device { .. } => {
                    if let Some(at) = Expect::of(region) {
                        // Which bytes the kernel touches, and how, is
                        // unknown: an opaque use for the check mode.
                        ranges.push(TaskRange {
                            what: "kernel argument",
                            addr: w as usize,
                            len: 1,
                            at,
                            how: Use::Opaque,
                        });
                    }
                }
                _ => {}
            }
        }
    }
    let name = func.name.clone();
    let kernel = Box::new(move || {
        let Launch {
            mut words,
            placeholders,
            data,
        } = launch;
        // Placeholders point at their data in this task's own copy of the
        // argument buffer (the device copy, on hardware).
        for &(i, offset) in &placeholders {
            words[i] = data.as_ptr() as u64 + offset as u64;
        }
        for block in 0..blocks {
            // SAFETY: `func.entry` is the kernel's exported symbol; `func`
            // holds its binary (so the library) loaded. The convention is
            // the documented one.
            unsafe { call(func.entry, &words, block, blocks) }.map_err(|e| {
                crate::rt::Error::new(
                    crate::rt::ErrorKind::KernelFault,
                    format!("kernel {name}: {e}"),
                )
            })?;
        }
        drop(data);
        Ok(())
    });
    match s.enqueue(|_| TaskKind::Op {
        api: function,
        ranges,
        kernel,
    }) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(function, e),
    }
}

/// The checks every launch shares: stream, context, host-work capability.
fn launch_stream(function: &str, stream: aclrtStream) -> Result<(Arc<Stream>, u32), aclError> {
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    let s = common::or_default(s, &ctx);
    common::in_context(function, &s, &ctx)?;
    takes_host_work(function, &s)?;
    Ok((s, ctx.device))
}

/// # Safety
///
/// `cfg` is null or valid, with `attrs` valid for `numAttrs` entries.
unsafe fn check_cfg(function: &str, cfg: *const aclrtLaunchKernelCfg) -> Result<(), aclError> {
    if cfg.is_null() {
        return Ok(());
    }
    // SAFETY: non-null and valid (caller).
    let c = unsafe { &*cfg };
    if c.numAttrs > 0 && c.attrs.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: cfg->numAttrs is {} but cfg->attrs is null",
                c.numAttrs
            ),
        ));
    }
    Ok(())
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
    tri!(unsafe { check_cfg(F, cfg) });
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
        }
    };
    enqueue(F, &s, device, func, num_blocks, launch)
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
    };
    enqueue(F, &s, device, func, num_blocks, launch)
}

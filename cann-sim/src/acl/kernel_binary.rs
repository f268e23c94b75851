//! Kernel binaries: `aclrtBinaryLoadFromFile`, `aclrtBinaryLoadFromData`,
//! `aclrtBinaryUnLoad`, `aclrtBinaryGetFunction`.
//!
//! # The simulator's kernel binaries
//!
//! On a device, a kernel binary is an AscendC object (an ELF for the AI
//! Core). The simulator's kernel binary is a **host shared library** (`.so`)
//! whose exported C functions are the kernels, in the spirit of AscendC's
//! CPU debugging mode (`ICPU_RUN_KF`). A kernel named `vadd` is the exported
//! symbol `vadd`, called once per block, in block order, on the stream's
//! worker thread:
//!
//! ```c
//! void vadd(uint8_t *x, uint8_t *y, uint8_t *z, uint64_t n,   /* the kernel's arguments */
//!           uint32_t block_idx, uint32_t block_num);          /* appended by the simulator */
//! ```
//!
//! The kernel's arguments are the argument buffer built with
//! `aclrtKernelArgs*` (or given to `aclrtLaunchKernel`), read as 8-byte words:
//! each word is passed as one integer argument (a `uint64_t`, a pointer, or
//! a smaller integer type that reads its low bits). Every argument the
//! runtime appends is 8-byte aligned, so a pointer or an integer argument is
//! one word; a placeholder argument is the address of its data; a 16-byte
//! argument is two words. Floating-point scalars arrive as their bits in an
//! integer (declare them `uint32_t` and copy the bits), as do structs. At
//! most [`MAX_ARG_WORDS`](crate::rt::kernel::MAX_ARG_WORDS) words.
//!
//! Loading, symbols and calls are the runtime's ([`crate::rt::kernel`]).
//!
//! # Codes
//!
//! From hicann/runtime (`src/acl/aclrt_impl/kernel.cpp`,
//! `src/runtime/api/impl/api_error.cc`, `api_impl.cc`): null arguments are
//! `ACL_ERROR_INVALID_PARAM` (100000) at the ACL layer; a zero `length` for
//! `aclrtBinaryLoadFromData`, a file that cannot be read, data that is not a
//! loadable binary, a bad load option, and a kernel name the binary does not
//! have (`BinaryGetFunctionByName` returns `RT_ERROR_INVALID_VALUE`) are
//! `ACL_ERROR_RT_PARAM_INVALID` (107000); a destroyed or unknown binary
//! handle is `ACL_ERROR_RT_INVALID_HANDLE` (107017). Loading needs a current
//! context: the binary is loaded onto that context's device (107002
//! without one), and its kernels may only be launched there.

use super::common::{self, PARAM_INVALID, code, rt_fail};
use crate::faults;
use crate::recent_error::fail;
use crate::rt;
use crate::rt::handles::{self, Lookup};
use crate::rt::kernel::{self, BINARIES, Binary, FUNCTIONS, Function};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_INVALID_HANDLE, ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE,
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD, ACL_RT_BINARY_LOAD_OPT_MAGIC, ACL_RT_BINARY_MAGIC_ELF_AICORE,
    ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE, ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE, ACL_SUCCESS, aclError,
    aclrtBinHandle, aclrtBinaryLoadOptions, aclrtFuncHandle,
};
use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Looks a function handle up.
///
/// # Errors
///
/// 100000 for null, 107017 for a handle that is not a live function or whose
/// binary was unloaded.
pub(crate) fn function_arg(function: &str, h: aclrtFuncHandle) -> Result<Arc<Function>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "funcHandle"));
    }
    match FUNCTIONS.lock().get(h as usize) {
        Lookup::Live(f) if f.binary.loaded.load(Ordering::Acquire) => Ok(f),
        Lookup::Live(f) => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: funcHandle {:#x} (kernel {}) belongs to a binary that was unloaded \
                 with aclrtBinaryUnLoad",
                h as usize, f.name
            ),
        )),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("function", h as usize, &bad)
            ),
        )),
    }
}

fn binary_arg(function: &str, h: aclrtBinHandle) -> Result<Arc<Binary>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "binHandle"));
    }
    match BINARIES.lock().get(h as usize) {
        Lookup::Live(b) => Ok(b),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("binary", h as usize, &bad)
            ),
        )),
    }
}

/// Checks the load options (`BinaryLoader::ParseLoadOptions`).
///
/// # Safety
///
/// `options` is null or points to a valid `aclrtBinaryLoadOptions` whose
/// `options` pointer is valid for `numOpt` entries.
unsafe fn check_options(
    function: &str,
    options: *const aclrtBinaryLoadOptions,
    from_file: bool,
) -> Result<(), aclError> {
    if options.is_null() {
        return Ok(());
    }
    // SAFETY: non-null and valid, by the caller's contract.
    let o = unsafe { &*options };
    if o.numOpt == 0 {
        return Ok(());
    }
    if o.options.is_null() {
        return Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: options->numOpt is {} but options->options is null",
                o.numOpt
            ),
        ));
    }
    // SAFETY: valid for `numOpt` entries, by the caller's contract.
    let list = unsafe { std::slice::from_raw_parts(o.options, o.numOpt) };
    for (i, opt) in list.iter().enumerate() {
        match opt.type_ {
            ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD => {}
            ACL_RT_BINARY_LOAD_OPT_MAGIC => {
                // SAFETY: every field of the union is a plain integer.
                let magic = unsafe { opt.value.magic };
                if ![
                    ACL_RT_BINARY_MAGIC_ELF_AICORE,
                    ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE,
                    ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE,
                ]
                .contains(&magic)
                {
                    return Err(fail(
                        PARAM_INVALID,
                        format!(
                            "{function}: option {i}: magic {magic:#x} is invalid; expected \
                             ACL_RT_BINARY_MAGIC_ELF_AICORE, _VECTOR_CORE or _CUBE_CORE"
                        ),
                    ));
                }
            }
            ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE => {
                // SAFETY: as above.
                let mode = unsafe { opt.value.cpuKernelMode };
                let ok = if from_file {
                    mode == 0 || mode == 1
                } else {
                    mode == 2
                };
                if !ok {
                    return Err(fail(
                        PARAM_INVALID,
                        format!(
                            "{function}: option {i}: cpuKernelMode {mode} is invalid; expected {}",
                            if from_file { "0 or 1" } else { "2" }
                        ),
                    ));
                }
            }
            other => {
                return Err(fail(
                    PARAM_INVALID,
                    format!(
                        "{function}: option {i}: type {other} is not an aclrtBinaryLoadOptionType"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Stores the handle of a loaded binary in `*out`, or reports why it could
/// not be loaded.
///
/// # Safety
///
/// `out` is a non-null out-pointer.
unsafe fn loaded_out(
    function: &str,
    loaded: Result<usize, rt::Error>,
    out: *mut aclrtBinHandle,
) -> aclError {
    match loaded {
        Ok(h) => {
            // SAFETY: the caller's contract.
            unsafe { *out = h as aclrtBinHandle };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(function, e),
    }
}

/// `aclrtBinaryLoadFromFile`: loads a kernel binary (for the simulator, a
/// host shared library) onto the current context's device.
///
/// # Safety
///
/// `bin_path` is null or a NUL-terminated string; `options` null or valid;
/// `bin_handle` null or a valid out-pointer. The library's initialisers run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtBinaryLoadFromFile(
    bin_path: *const c_char,
    options: *mut aclrtBinaryLoadOptions,
    bin_handle: *mut aclrtBinHandle,
) -> aclError {
    const F: &str = "aclrtBinaryLoadFromFile";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if bin_path.is_null() {
        return common::null_arg(F, "binPath");
    }
    if bin_handle.is_null() {
        return common::null_arg(F, "binHandle");
    }
    // SAFETY: forwarded from the caller.
    tri!(unsafe { check_options(F, options, true) });
    let ctx = tri!(common::current(F));
    // SAFETY: non-null and NUL-terminated, by the caller's contract.
    let path = unsafe { CStr::from_ptr(bin_path) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: checked non-null.
    unsafe { loaded_out(F, kernel::load_file(&path, ctx.device), bin_handle) }
}

/// `aclrtBinaryLoadFromData`: loads a kernel binary from memory (for the
/// simulator, the bytes of a host shared library).
///
/// # Safety
///
/// `data` is null or valid for `length` bytes; `options` null or valid;
/// `bin_handle` null or a valid out-pointer. The library's initialisers run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtBinaryLoadFromData(
    data: *const c_void,
    length: usize,
    options: *const aclrtBinaryLoadOptions,
    bin_handle: *mut aclrtBinHandle,
) -> aclError {
    const F: &str = "aclrtBinaryLoadFromData";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if data.is_null() {
        return common::null_arg(F, "data");
    }
    if bin_handle.is_null() {
        return common::null_arg(F, "binHandle");
    }
    if length == 0 {
        return fail(PARAM_INVALID, format!("{F}: length is 0"));
    }
    // SAFETY: forwarded from the caller.
    tri!(unsafe { check_options(F, options, false) });
    let ctx = tri!(common::current(F));
    // SAFETY: valid for `length` bytes, by the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) };
    // SAFETY: checked non-null.
    unsafe { loaded_out(F, kernel::load_data(bytes, ctx.device), bin_handle) }
}

/// `aclrtBinaryUnLoad`: unloads a binary; its function handles become
/// invalid. Launches already queued still run.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtBinaryUnLoad(bin_handle: aclrtBinHandle) -> aclError {
    const F: &str = "aclrtBinaryUnLoad";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let b = tri!(binary_arg(F, bin_handle));
    kernel::unload(&b, bin_handle as usize);
    ACL_SUCCESS
}

/// `aclrtBinaryGetFunction`: the kernel `kernelName` of a loaded binary.
///
/// # Safety
///
/// `kernel_name` is null or NUL-terminated; `func_handle` null or a valid
/// out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtBinaryGetFunction(
    bin_handle: aclrtBinHandle,
    kernel_name: *const c_char,
    func_handle: *mut aclrtFuncHandle,
) -> aclError {
    const F: &str = "aclrtBinaryGetFunction";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if bin_handle.is_null() {
        return common::null_arg(F, "binHandle");
    }
    if kernel_name.is_null() {
        return common::null_arg(F, "kernelName");
    }
    if func_handle.is_null() {
        return common::null_arg(F, "funcHandle");
    }
    let b = tri!(binary_arg(F, bin_handle));
    // SAFETY: non-null and NUL-terminated, by the caller's contract.
    let name = unsafe { CStr::from_ptr(kernel_name) };
    if name.is_empty() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{F}: kernelName is empty"));
    }
    match kernel::function(b, name) {
        Ok(h) => {
            // SAFETY: non-null out-pointer (checked above).
            unsafe { *func_handle = h as aclrtFuncHandle };
            ACL_SUCCESS
        }
        Err(e) => rt_fail(F, e),
    }
}

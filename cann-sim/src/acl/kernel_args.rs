//! Kernel argument lists: `aclrtKernelArgsInit`, `aclrtKernelArgsAppend`,
//! `aclrtKernelArgsAppendPlaceHolder`, `aclrtKernelArgsGetPlaceHolderBuffer`,
//! `aclrtKernelArgsParaUpdate`, `aclrtKernelArgsFinalize`.
//!
//! As in the runtime (`ApiImpl::KernelArgs*`, hicann/runtime
//! `src/runtime/api/impl/api_impl.cc`): an argument list is a 64 KiB host
//! buffer of at most 128 parameters, each placed at the next 8-byte
//! boundary. A placeholder is an 8-byte slot whose value, at launch, is the
//! device address of its data; the data area
//! (`aclrtKernelArgsGetPlaceHolderBuffer`) follows the parameters, and once
//! it is taken no parameter may be appended (`ACL_ERROR_RT_FEATURE_NOT_SUPPORT`,
//! 207000), nor anything after `aclrtKernelArgsFinalize`. A full list is
//! `ACL_ERROR_RT_PARAM_INVALID` (107000); null arguments and zero sizes are
//! `ACL_ERROR_INVALID_PARAM` (100000).
//!
//! The runtime keeps **one argument handle per thread** and
//! `aclrtKernelArgsInit` reinitialises it, so a handle from an earlier
//! `aclrtKernelArgsInit` on the same thread silently names the new list.
//! The simulator makes that misuse visible: the earlier handle is destroyed
//! and using it is `ACL_ERROR_RT_INVALID_HANDLE` (107017), with a message.
//!
//! A parameter handle is `argsHandle + 1 + index`: an opaque value checked
//! against the argument list it is used with, never dereferenced.

use super::common::code;
use super::common::{self, PARAM_INVALID};
use super::kernel_binary::function_arg;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup, Table};
use crate::rt::kernel::Function;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_ERROR_RT_INVALID_HANDLE,
    ACL_SUCCESS, aclError, aclrtArgsHandle, aclrtFuncHandle, aclrtParamHandle,
};
use parking_lot::Mutex;
use std::alloc::Layout;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Arc;

/// Bytes of an argument list's buffer (`MAX_ARGS_BUFF_SIZE`).
pub const ARGS_BUFFER_BYTES: usize = 64 * 1024;
/// Parameters of an argument list (`MAX_PARAM_CNT`).
pub const MAX_PARAMS: usize = 128;
/// Alignment of each parameter (`NON_CPU_KERNEL_ARGS_ALIGN_SIZE`).
const ALIGN: usize = 8;

/// One parameter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    /// Whether it is a placeholder.
    pub placeholder: bool,
    /// Offset in the buffer.
    pub offset: usize,
    /// Bytes (8 for a placeholder).
    pub size: usize,
    /// For a placeholder whose buffer was taken: the data's offset.
    pub data_offset: Option<usize>,
}

/// The state of an argument list.
pub(crate) struct Args {
    /// The function it was made for.
    pub func: Arc<Function>,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// Bytes used (parameters and placeholder data).
    pub used: usize,
    /// A placeholder buffer was taken: no more parameters.
    pub data_taken: bool,
    /// `aclrtKernelArgsFinalize` was called.
    pub finalized: bool,
}

/// An argument list: its state and its host buffer.
pub(crate) struct ArgsHandle {
    /// The state.
    pub state: Mutex<Args>,
    /// The buffer: [`ARGS_BUFFER_BYTES`] bytes, 8-byte aligned, written by
    /// the runtime and (through placeholder buffers) by the user.
    buffer: *mut u8,
}

// SAFETY: `buffer` is a private allocation; the simulator touches it only
// with the state's lock held (user writes through placeholder buffers are
// the caller's business, as on the runtime).
unsafe impl Send for ArgsHandle {}
// SAFETY: as above.
unsafe impl Sync for ArgsHandle {}

fn layout() -> Layout {
    // A constant, valid layout: power-of-two alignment, small size.
    Layout::from_size_align(ARGS_BUFFER_BYTES, ALIGN).unwrap_or(Layout::new::<u64>())
}

impl Drop for ArgsHandle {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with `layout()`, freed once here.
        unsafe { std::alloc::dealloc(self.buffer, layout()) };
    }
}

impl ArgsHandle {
    fn new(func: Arc<Function>) -> Option<ArgsHandle> {
        // SAFETY: `layout()` has a non-zero size.
        let buffer = unsafe { std::alloc::alloc_zeroed(layout()) };
        (!buffer.is_null()).then(|| ArgsHandle {
            state: Mutex::new(Args {
                func,
                params: Vec::new(),
                used: 0,
                data_taken: false,
                finalized: false,
            }),
            buffer,
        })
    }

    /// A copy of the first `len` bytes of the buffer (`len <= ARGS_BUFFER_BYTES`).
    pub fn snapshot(&self, len: usize) -> Vec<u8> {
        let len = len.min(ARGS_BUFFER_BYTES);
        // SAFETY: the buffer has ARGS_BUFFER_BYTES initialised bytes.
        unsafe { std::slice::from_raw_parts(self.buffer, len) }.to_vec()
    }
}

/// Live argument lists.
pub(crate) static ARGS: Table<ArgsHandle> = Table::new(Default::default);

thread_local! {
    /// The argument list this thread's last `aclrtKernelArgsInit` made.
    static THREAD_ARGS: Cell<usize> = const { Cell::new(0) };
}

/// Looks an argument list handle up.
///
/// # Errors
///
/// 100000 for null, 107017 for a handle that is not live.
pub(crate) fn args_arg(function: &str, h: aclrtArgsHandle) -> Result<Arc<ArgsHandle>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "argsHandle"));
    }
    match ARGS.lock().get(h as usize) {
        Lookup::Live(a) => Ok(a),
        Lookup::Destroyed => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: argsHandle {:#x} was replaced by a later aclrtKernelArgsInit on the \
                 same thread (the runtime keeps one argument list per thread and reinitialises \
                 it); launch a list before building the next one",
                h as usize
            ),
        )),
        bad => Err(fail(
            code(ACL_ERROR_RT_INVALID_HANDLE),
            format!(
                "{function}: {}",
                handles::describe_bad("argument list", h as usize, &bad)
            ),
        )),
    }
}

fn param_index(
    function: &str,
    args_h: aclrtArgsHandle,
    st: &Args,
    p: aclrtParamHandle,
) -> Result<usize, aclError> {
    let i = (p as usize).wrapping_sub(args_h as usize).wrapping_sub(1);
    if i < st.params.len() {
        return Ok(i);
    }
    Err(fail(
        code(ACL_ERROR_RT_INVALID_HANDLE),
        format!(
            "{function}: paramHandle {:#x} is not a parameter of argsHandle {:#x}",
            p as usize, args_h as usize
        ),
    ))
}

fn positive(function: &str, name: &str, v: usize) -> Result<(), aclError> {
    if v == 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: {name} must be positive, but it is 0"),
        ));
    }
    Ok(())
}

fn aligned(n: usize) -> usize {
    n.div_ceil(ALIGN) * ALIGN
}

/// Checks that `st` takes one more parameter of `size` bytes; its offset.
fn place(function: &str, st: &Args, size: usize) -> Result<usize, aclError> {
    if st.finalized {
        return Err(fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!("{function}: the argument list is finalized; nothing may be appended"),
        ));
    }
    if st.data_taken {
        return Err(fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{function}: a placeholder buffer was already taken; appending parameters after \
                 it is not supported"
            ),
        ));
    }
    if st.params.len() >= MAX_PARAMS {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: the argument list is full ({MAX_PARAMS} parameters)"),
        ));
    }
    let offset = aligned(st.used);
    match offset.checked_add(size) {
        Some(end) if end <= ARGS_BUFFER_BYTES => Ok(offset),
        _ => Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: a {size}-byte parameter at offset {offset} overflows the \
                 {ARGS_BUFFER_BYTES}-byte argument buffer"
            ),
        )),
    }
}

/// `aclrtKernelArgsInit`: a new argument list for `funcHandle` (replacing
/// this thread's previous one, see the module docs).
///
/// # Safety
///
/// `args_handle` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsInit(
    func_handle: aclrtFuncHandle,
    args_handle: *mut aclrtArgsHandle,
) -> aclError {
    const F: &str = "aclrtKernelArgsInit";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if func_handle.is_null() {
        return common::null_arg(F, "funcHandle");
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    let func = tri!(function_arg(F, func_handle));
    let Some(a) = ArgsHandle::new(func) else {
        return fail(
            code(acl_sys::ACL_ERROR_RT_MEMORY_ALLOCATION),
            format!("{F}: cannot allocate the {ARGS_BUFFER_BYTES}-byte argument buffer"),
        );
    };
    let h = {
        let mut t = ARGS.lock();
        let previous = THREAD_ARGS.with(Cell::get);
        if previous != 0 {
            t.remove(previous);
        }
        t.insert(Arc::new(a))
    };
    THREAD_ARGS.with(|c| c.set(h));
    // SAFETY: non-null out-pointer.
    unsafe { *args_handle = h as aclrtArgsHandle };
    ACL_SUCCESS
}

/// `aclrtKernelArgsAppend`: appends a copy of `paramSize` bytes at `param`.
///
/// # Safety
///
/// `param` is null or valid for `param_size` bytes; `param_handle` null or
/// a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsAppend(
    args_handle: aclrtArgsHandle,
    param: *mut c_void,
    param_size: usize,
    param_handle: *mut aclrtParamHandle,
) -> aclError {
    const F: &str = "aclrtKernelArgsAppend";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    if param.is_null() {
        return common::null_arg(F, "param");
    }
    tri!(positive(F, "paramSize", param_size));
    if param_handle.is_null() {
        return common::null_arg(F, "paramHandle");
    }
    let a = tri!(args_arg(F, args_handle));
    let mut st = a.state.lock();
    let offset = tri!(place(F, &st, param_size));
    // SAFETY: `param` is valid for `param_size` bytes (caller); the
    // destination range lies in the buffer (checked by `place`).
    unsafe {
        std::ptr::copy_nonoverlapping(param.cast::<u8>(), a.buffer.add(offset), param_size);
    }
    st.params.push(Param {
        placeholder: false,
        offset,
        size: param_size,
        data_offset: None,
    });
    st.used = offset + param_size;
    let index = st.params.len() - 1;
    // SAFETY: non-null out-pointer.
    unsafe { *param_handle = (args_handle as usize + 1 + index) as aclrtParamHandle };
    ACL_SUCCESS
}

/// `aclrtKernelArgsAppendPlaceHolder`: appends a placeholder (an 8-byte
/// slot that receives the device address of its data at launch).
///
/// # Safety
///
/// `param_handle` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsAppendPlaceHolder(
    args_handle: aclrtArgsHandle,
    param_handle: *mut aclrtParamHandle,
) -> aclError {
    const F: &str = "aclrtKernelArgsAppendPlaceHolder";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    if param_handle.is_null() {
        return common::null_arg(F, "paramHandle");
    }
    let a = tri!(args_arg(F, args_handle));
    let mut st = a.state.lock();
    let offset = tri!(place(F, &st, 8));
    st.params.push(Param {
        placeholder: true,
        offset,
        size: 8,
        data_offset: None,
    });
    st.used = offset + 8;
    let index = st.params.len() - 1;
    // SAFETY: non-null out-pointer.
    unsafe { *param_handle = (args_handle as usize + 1 + index) as aclrtParamHandle };
    ACL_SUCCESS
}

/// `aclrtKernelArgsGetPlaceHolderBuffer`: host memory of `dataSize` bytes
/// for a placeholder's data, valid until the list is replaced; its content
/// at launch is what the kernel sees.
///
/// # Safety
///
/// `buffer_addr` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsGetPlaceHolderBuffer(
    args_handle: aclrtArgsHandle,
    param_handle: aclrtParamHandle,
    data_size: usize,
    buffer_addr: *mut *mut c_void,
) -> aclError {
    const F: &str = "aclrtKernelArgsGetPlaceHolderBuffer";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    if param_handle.is_null() {
        return common::null_arg(F, "paramHandle");
    }
    tri!(positive(F, "dataSize", data_size));
    if buffer_addr.is_null() {
        return common::null_arg(F, "bufferAddr");
    }
    let a = tri!(args_arg(F, args_handle));
    let mut st = a.state.lock();
    let i = tri!(param_index(F, args_handle, &st, param_handle));
    if !st.params[i].placeholder {
        return fail(
            PARAM_INVALID,
            format!("{F}: parameter {i} is not a placeholder; only placeholders have a buffer"),
        );
    }
    if st.finalized {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!("{F}: the argument list is finalized"),
        );
    }
    let offset = aligned(st.used);
    if offset
        .checked_add(data_size)
        .is_none_or(|end| end > ARGS_BUFFER_BYTES)
    {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: {data_size} bytes at offset {offset} overflow the {ARGS_BUFFER_BYTES}-byte \
                 argument buffer"
            ),
        );
    }
    st.params[i].data_offset = Some(offset);
    st.data_taken = true;
    st.used = offset + data_size;
    // SAFETY: `offset + data_size <= ARGS_BUFFER_BYTES` (checked above).
    unsafe { *buffer_addr = a.buffer.add(offset).cast() };
    ACL_SUCCESS
}

/// `aclrtKernelArgsParaUpdate`: overwrites an appended (non-placeholder)
/// parameter with `paramSize` bytes, which must equal its size.
///
/// # Safety
///
/// `param` is null or valid for `param_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsParaUpdate(
    args_handle: aclrtArgsHandle,
    param_handle: aclrtParamHandle,
    param: *mut c_void,
    param_size: usize,
) -> aclError {
    const F: &str = "aclrtKernelArgsParaUpdate";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    if param_handle.is_null() {
        return common::null_arg(F, "paramHandle");
    }
    if param.is_null() {
        return common::null_arg(F, "param");
    }
    tri!(positive(F, "paramSize", param_size));
    let a = tri!(args_arg(F, args_handle));
    let st = a.state.lock();
    let i = tri!(param_index(F, args_handle, &st, param_handle));
    let p = st.params[i];
    if p.placeholder {
        return fail(
            PARAM_INVALID,
            format!("{F}: parameter {i} is a placeholder; write its data through its buffer"),
        );
    }
    if p.size != param_size {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: parameter {i} is {} bytes, but paramSize is {param_size}; they must be equal",
                p.size
            ),
        );
    }
    // SAFETY: `param` is valid for `param_size` bytes (caller); the
    // parameter's range lies in the buffer.
    unsafe {
        std::ptr::copy_nonoverlapping(param.cast::<u8>(), a.buffer.add(p.offset), param_size);
    }
    ACL_SUCCESS
}

/// `aclrtKernelArgsFinalize`: marks the list complete.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtKernelArgsFinalize(args_handle: aclrtArgsHandle) -> aclError {
    const F: &str = "aclrtKernelArgsFinalize";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if args_handle.is_null() {
        return common::null_arg(F, "argsHandle");
    }
    let a = tri!(args_arg(F, args_handle));
    tri!(common::current(F));
    a.state.lock().finalized = true;
    ACL_SUCCESS
}

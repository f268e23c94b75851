//! Offline models (`acl_mdl.h`): loading and unloading —
//! `aclmdlLoadFromFile`, `aclmdlLoadFromMem`, their `WithMem` forms (work
//! and weight memory managed by the caller), `aclmdlQuerySize`,
//! `aclmdlQuerySizeFromMem` and `aclmdlUnload`.
//!
//! Models are in the simulator's format ([`crate::model`]); loading checks
//! them fully and fails with the loader's codes (100003, 100006, 100012–
//! 100016). A loaded model belongs to the device of the current context
//! (none: `ACL_ERROR_RT_CONTEXT_NULL`, 107002) and is named by a `u32`
//! model id, from 1 up; an id that names no loaded model is
//! `ACL_ERROR_INVALID_MODEL_ID` (100011). Null pointers are
//! `ACL_ERROR_INVALID_PARAM` (100000).
//!
//! # Work and weight memory
//!
//! `aclmdlQuerySize` gives the bytes of work memory (intermediate tensors)
//! and weight memory (constants) a model needs. The `WithMem` loads take
//! them from the caller: each pointer must be device memory of the current
//! device (107000 otherwise) at least as large as the query says (100000
//! otherwise); a null pointer with size 0 leaves that memory to the
//! simulator; the two may not overlap (100000). The weights are copied into
//! the weight memory at load. The caller keeps the memory allocated until
//! the model is unloaded (and its queued executions have run: memory freed
//! before is a fault of the execution, 507015 at the next synchronisation).

use super::common::{self, PARAM_INVALID};
use crate::faults;
use crate::model::loaded::{self, Loaded, MemError};
use crate::model::{self, LoadError, LoadErrorKind, Model};
use crate::recent_error::fail;
use crate::rt::stream::Expect;
use acl_sys::{
    ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_DESERIALIZE_MODEL, ACL_ERROR_INVALID_FILE,
    ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_INVALID_PARAM, ACL_ERROR_MODEL_MISSING_ATTR,
    ACL_ERROR_MODEL_SIZE_INVALID, ACL_ERROR_PARSE_FILE, ACL_ERROR_PARSE_MODEL,
    ACL_ERROR_READ_MODEL_FAILURE, ACL_ERROR_RT_MEMORY_ALLOCATION, ACL_ERROR_WRITE_FILE,
    ACL_SUCCESS, aclError,
};
use std::ffi::{CStr, c_char, c_void};
use std::path::Path;
use std::sync::Arc;

/// The loaded model `id`.
///
/// # Errors
///
/// `ACL_ERROR_INVALID_MODEL_ID` (100011, recorded) when no model has that id.
pub(crate) fn loaded(function: &str, id: u32) -> Result<Arc<Loaded>, aclError> {
    loaded::get(id).ok_or_else(|| {
        fail(
            ACL_ERROR_INVALID_MODEL_ID,
            format!("{function}: model id {id} names no loaded model (never loaded, or unloaded)"),
        )
    })
}

/// The code of a model that cannot be loaded.
pub fn load_error_code(e: &LoadError) -> aclError {
    match e.kind {
        LoadErrorKind::OpenFile => ACL_ERROR_INVALID_FILE,
        LoadErrorKind::ReadFile => ACL_ERROR_READ_MODEL_FAILURE,
        LoadErrorKind::WriteFile => ACL_ERROR_WRITE_FILE,
        LoadErrorKind::Size => ACL_ERROR_MODEL_SIZE_INVALID,
        LoadErrorKind::NotJson => ACL_ERROR_DESERIALIZE_MODEL,
        LoadErrorKind::NotAModel => ACL_ERROR_PARSE_FILE,
        LoadErrorKind::MissingField => ACL_ERROR_MODEL_MISSING_ATTR,
        LoadErrorKind::Invalid => ACL_ERROR_PARSE_MODEL,
        LoadErrorKind::NotSupported => ACL_ERROR_API_NOT_SUPPORT,
    }
}

fn load_error(function: &str, e: LoadError) -> aclError {
    fail(load_error_code(&e), format!("{function}: {}", e.message))
}

/// # Safety
///
/// `path` is null or NUL-terminated.
unsafe fn path_arg(function: &str, path: *const c_char) -> Result<&Path, aclError> {
    if path.is_null() {
        return Err(common::null_arg(function, "modelPath"));
    }
    // SAFETY: non-null and NUL-terminated (caller).
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    use std::os::unix::ffi::OsStrExt;
    Ok(Path::new(std::ffi::OsStr::from_bytes(bytes)))
}

/// # Safety
///
/// `path` is null or NUL-terminated.
unsafe fn parse_file(function: &str, path: *const c_char) -> Result<Model, aclError> {
    // SAFETY: forwarded.
    let path = unsafe { path_arg(function, path) }?;
    model::load_file(path).map_err(|e| load_error(function, e))
}

/// # Safety
///
/// `data` is null or valid for `size` bytes.
unsafe fn parse_mem(function: &str, data: *const c_void, size: usize) -> Result<Model, aclError> {
    if data.is_null() {
        return Err(common::null_arg(function, "model"));
    }
    if size == 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: modelSize is 0"),
        ));
    }
    if size > model::MAX_MODEL_BYTES {
        return Err(fail(
            acl_sys::ACL_ERROR_MODEL_SIZE_INVALID,
            format!(
                "{function}: the model is {size} bytes; cann-sim loads models of at most {}",
                model::MAX_MODEL_BYTES
            ),
        ));
    }
    // SAFETY: valid for `size` bytes (caller); only read during the call.
    let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
    model::parse(bytes).map_err(|e| load_error(function, e))
}

/// Validates one caller-provided memory for `need` bytes.
fn user_mem(
    function: &str,
    what: &str,
    ptr: *mut c_void,
    size: usize,
    need: usize,
    device: u32,
) -> Result<Option<(usize, usize, Option<Expect>)>, aclError> {
    if ptr.is_null() {
        if size == 0 {
            return Ok(None);
        }
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: {what}Ptr is null but {what}Size is {size}"),
        ));
    }
    if size < need {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: {what}Size is {size} bytes, but the model needs {need} (aclmdlQuerySize)"
            ),
        ));
    }
    let at = common::device_range(function, &format!("{what}Ptr"), ptr as usize, size, device)?;
    Ok(Some((ptr as usize, size, at)))
}

/// Registers `model` on the current device, with the caller's memory if given.
fn register(
    function: &str,
    model: Model,
    model_id: *mut u32,
    work: Option<(*mut c_void, usize)>,
    weights: Option<(*mut c_void, usize)>,
) -> Result<aclError, aclError> {
    let ctx = common::current(function)?;
    let device = ctx.device;
    let (work_ptr, work_size) = work.unwrap_or((std::ptr::null_mut(), 0));
    let (weight_ptr, weight_size) = weights.unwrap_or((std::ptr::null_mut(), 0));
    let user_work = user_mem(
        function,
        "work",
        work_ptr,
        work_size,
        model.work_size,
        device,
    )?;
    let user_weights = user_mem(
        function,
        "weight",
        weight_ptr,
        weight_size,
        model.weight_size,
        device,
    )?;
    if let (Some((a, alen, _)), Some((b, blen, _))) = (user_work, user_weights)
        && a < b.saturating_add(blen)
        && b < a.saturating_add(alen)
    {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: the work memory ({a:#x} + {alen} bytes) and the weight memory \
                 ({b:#x} + {blen} bytes) overlap"
            ),
        ));
    }
    let l = Loaded::new(model, device, user_work, user_weights).map_err(|e| match e {
        MemError::OutOfMemory(why) => fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION as aclError,
            format!("{function}: {why}"),
        ),
        MemError::Config(msg) => fail(ACL_ERROR_INVALID_PARAM, format!("{function}: {msg}")),
        MemError::Weights(e) => fail(PARAM_INVALID, format!("{function}: weightPtr: {e}")),
    })?;
    let id = loaded::insert(l);
    // SAFETY: non-null out-pointer (checked by the callers).
    unsafe { *model_id = id };
    Ok(ACL_SUCCESS)
}

/// `aclmdlLoadFromFile`: loads the model file at `modelPath` onto the
/// current device; its id goes to `*modelId`.
///
/// # Safety
///
/// `model_path` is null or NUL-terminated; `model_id` null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlLoadFromFile(
    model_path: *const c_char,
    model_id: *mut u32,
) -> aclError {
    const F: &str = "aclmdlLoadFromFile";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_id.is_null() {
        return common::null_arg(F, "modelId");
    }
    // SAFETY: forwarded contract.
    let model = tri!(unsafe { parse_file(F, model_path) });
    tri!(register(F, model, model_id, None, None))
}

/// `aclmdlLoadFromMem`: loads a model from `modelSize` bytes at `model`.
///
/// # Safety
///
/// `model` is null or valid for `model_size` bytes; `model_id` null or a
/// valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlLoadFromMem(
    model: *const c_void,
    model_size: usize,
    model_id: *mut u32,
) -> aclError {
    const F: &str = "aclmdlLoadFromMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_id.is_null() {
        return common::null_arg(F, "modelId");
    }
    // SAFETY: forwarded contract.
    let m = tri!(unsafe { parse_mem(F, model, model_size) });
    tri!(register(F, m, model_id, None, None))
}

/// `aclmdlLoadFromFileWithMem`: as `aclmdlLoadFromFile`, with the caller's
/// work and weight memory (see the module documentation).
///
/// # Safety
///
/// `model_path` is null or NUL-terminated; `model_id` null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlLoadFromFileWithMem(
    model_path: *const c_char,
    model_id: *mut u32,
    work_ptr: *mut c_void,
    work_size: usize,
    weight_ptr: *mut c_void,
    weight_size: usize,
) -> aclError {
    const F: &str = "aclmdlLoadFromFileWithMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_id.is_null() {
        return common::null_arg(F, "modelId");
    }
    // SAFETY: forwarded contract.
    let model = tri!(unsafe { parse_file(F, model_path) });
    tri!(register(
        F,
        model,
        model_id,
        Some((work_ptr, work_size)),
        Some((weight_ptr, weight_size))
    ))
}

/// `aclmdlLoadFromMemWithMem`: as `aclmdlLoadFromMem`, with the caller's
/// work and weight memory (see the module documentation).
///
/// # Safety
///
/// `model` is null or valid for `model_size` bytes; `model_id` null or a
/// valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlLoadFromMemWithMem(
    model: *const c_void,
    model_size: usize,
    model_id: *mut u32,
    work_ptr: *mut c_void,
    work_size: usize,
    weight_ptr: *mut c_void,
    weight_size: usize,
) -> aclError {
    const F: &str = "aclmdlLoadFromMemWithMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_id.is_null() {
        return common::null_arg(F, "modelId");
    }
    // SAFETY: forwarded contract.
    let m = tri!(unsafe { parse_mem(F, model, model_size) });
    tri!(register(
        F,
        m,
        model_id,
        Some((work_ptr, work_size)),
        Some((weight_ptr, weight_size))
    ))
}

fn write_sizes(
    function: &str,
    m: &Model,
    work_size: *mut usize,
    weight_size: *mut usize,
) -> aclError {
    if work_size.is_null() {
        return common::null_arg(function, "workSize");
    }
    if weight_size.is_null() {
        return common::null_arg(function, "weightSize");
    }
    // SAFETY: non-null out-pointers (the callers' contract).
    unsafe {
        *work_size = m.work_size;
        *weight_size = m.weight_size;
    }
    ACL_SUCCESS
}

/// `aclmdlQuerySize`: the work and weight memory the model file needs.
///
/// # Safety
///
/// `file_name` is null or NUL-terminated; the size pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlQuerySize(
    file_name: *const c_char,
    work_size: *mut usize,
    weight_size: *mut usize,
) -> aclError {
    const F: &str = "aclmdlQuerySize";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if work_size.is_null() {
        return common::null_arg(F, "workSize");
    }
    if weight_size.is_null() {
        return common::null_arg(F, "weightSize");
    }
    // SAFETY: forwarded contract.
    let m = tri!(unsafe { parse_file(F, file_name) });
    write_sizes(F, &m, work_size, weight_size)
}

/// `aclmdlQuerySizeFromMem`: the work and weight memory the model needs.
///
/// # Safety
///
/// `model` is null or valid for `model_size` bytes; the size pointers null
/// or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlQuerySizeFromMem(
    model: *const c_void,
    model_size: usize,
    work_size: *mut usize,
    weight_size: *mut usize,
) -> aclError {
    const F: &str = "aclmdlQuerySizeFromMem";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if work_size.is_null() {
        return common::null_arg(F, "workSize");
    }
    if weight_size.is_null() {
        return common::null_arg(F, "weightSize");
    }
    // SAFETY: forwarded contract.
    let m = tri!(unsafe { parse_mem(F, model, model_size) });
    write_sizes(F, &m, work_size, weight_size)
}

/// `aclmdlUnload`: unloads model `modelId`. Executions already queued
/// still run (they hold the model).
///
/// # Safety
///
/// None: the id is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlUnload(model_id: u32) -> aclError {
    const F: &str = "aclmdlUnload";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if loaded::remove(model_id) {
        return ACL_SUCCESS;
    }
    fail(
        ACL_ERROR_INVALID_MODEL_ID,
        format!("{F}: model id {model_id} names no loaded model (never loaded, or unloaded)"),
    )
}

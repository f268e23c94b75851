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
use super::op_launch;
use crate::faults;
use crate::model::{self, LoadError, Model};
use crate::recent_error::fail;
use crate::rt::stream::Expect;
use crate::state;
use acl_sys::{
    ACL_ERROR_INVALID_MODEL_ID, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_SUCCESS, aclError,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::path::Path;
use std::sync::{Arc, LazyLock};

/// Memory of a loaded model: the simulator's own, or the caller's.
#[derive(Debug)]
pub(crate) enum ModelMem {
    /// Host memory the simulator owns.
    Owned(Vec<u8>),
    /// The caller's device memory: first byte, bytes, and where it must still be.
    User {
        addr: usize,
        size: usize,
        at: Option<Expect>,
    },
}

/// A loaded model.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The model.
    pub model: Arc<Model>,
    /// Its device.
    pub device: u32,
    /// Work memory; the lock serialises executions of the model (they
    /// share it).
    pub work: Mutex<ModelMem>,
    /// The caller's work memory, if it is (first byte, bytes, where it
    /// must still be): known without taking the lock.
    pub user_work: Option<(usize, usize, Option<Expect>)>,
    /// Weight memory (holding the weights).
    pub weights: ModelMem,
    /// Bytes of the device's HBM charged for the memory the runtime owns
    /// (work and weights not given by the caller); given back on unload.
    charged: u64,
}

impl Drop for Loaded {
    fn drop(&mut self) {
        if self.charged > 0 {
            state::memory().write().uncharge(self.device, self.charged);
        }
    }
}

/// `n` zero bytes, or `None` when the host cannot allocate them (instead of
/// aborting the process).
fn zeroed(n: usize) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, 0);
    Some(v)
}

/// Charges the memory a model loaded without the caller's memory needs (the
/// runtime allocates it on the device) to `device`'s HBM, after checking
/// that the host can back it: every size comes from the model file.
fn charge_runtime_memory(function: &str, device: u32, bytes: u64) -> Result<(), aclError> {
    let oom = |why: String| {
        fail(
            ACL_ERROR_RT_MEMORY_ALLOCATION as aclError,
            format!("{function}: the model's work and weight memory ({bytes} bytes): {why}"),
        )
    };
    if let Some(available) = state::host_available()
        && bytes > available
    {
        return Err(oom(format!(
            "the host has {available} bytes available to back it"
        )));
    }
    let budget = crate::config::get()
        .map(|c| c.hbm_bytes)
        .map_err(|msg| fail(ACL_ERROR_INVALID_PARAM, format!("{function}: {msg}")))?;
    state::memory()
        .write()
        .charge(device, bytes, budget)
        .map_err(|e| oom(e.to_string()))
}

#[derive(Default)]
struct Models {
    next: u32,
    live: HashMap<u32, Arc<Loaded>>,
}

static MODELS: LazyLock<Mutex<Models>> = LazyLock::new(Default::default);

/// The loaded model `id`.
///
/// # Errors
///
/// `ACL_ERROR_INVALID_MODEL_ID` (100011, recorded) when no model has that id.
pub(crate) fn loaded(function: &str, id: u32) -> Result<Arc<Loaded>, aclError> {
    MODELS.lock().live.get(&id).cloned().ok_or_else(|| {
        fail(
            ACL_ERROR_INVALID_MODEL_ID,
            format!("{function}: model id {id} names no loaded model (never loaded, or unloaded)"),
        )
    })
}

fn load_error(function: &str, e: LoadError) -> aclError {
    fail(e.code, format!("{function}: {}", e.message))
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
    let at = op_launch::device_range(function, &format!("{what}Ptr"), ptr as usize, size, device)?;
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
    let owned = [
        (user_work.is_none(), model.work_size),
        (user_weights.is_none(), model.weights.len()),
    ]
    .iter()
    .filter(|(runtime_owned, _)| *runtime_owned)
    .fold(0u64, |sum, &(_, n)| sum.saturating_add(n as u64));
    let weights = match user_weights {
        Some((addr, size, at)) => {
            if !model.weights.is_empty() {
                let table = state::memory().read();
                table
                    .check_range(addr, model.weights.len())
                    .map_err(|e| fail(PARAM_INVALID, format!("{function}: weightPtr: {e}")))?;
                // SAFETY: a live device range of at least `weights.len()`
                // bytes (checked under the read lock, held while writing);
                // the weights are a separate host vector.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        model.weights.as_ptr(),
                        addr as *mut u8,
                        model.weights.len(),
                    );
                }
                drop(table);
            }
            ModelMem::User { addr, size, at }
        }
        None => ModelMem::Owned(model.weights.clone()),
    };
    // Charged once nothing above can fail; given back if the work memory
    // cannot be allocated, else when the model is unloaded.
    if owned > 0 {
        charge_runtime_memory(function, device, owned)?;
    }
    let uncharge = || state::memory().write().uncharge(device, owned);
    let work = match user_work {
        Some((addr, size, at)) => ModelMem::User { addr, size, at },
        None => match zeroed(model.work_size) {
            Some(v) => ModelMem::Owned(v),
            None => {
                uncharge();
                return Err(fail(
                    ACL_ERROR_RT_MEMORY_ALLOCATION as aclError,
                    format!(
                        "{function}: the host cannot allocate the model's {} bytes of work memory",
                        model.work_size
                    ),
                ));
            }
        },
    };
    let loaded = Arc::new(Loaded {
        model: Arc::new(model),
        device,
        work: Mutex::new(work),
        user_work,
        weights,
        charged: owned,
    });
    let mut models = MODELS.lock();
    let mut id = models.next.wrapping_add(1).max(1);
    while models.live.contains_key(&id) {
        id = id.wrapping_add(1).max(1);
    }
    models.next = id;
    models.live.insert(id, loaded);
    drop(models);
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
    if MODELS.lock().live.remove(&model_id).is_some() {
        return ACL_SUCCESS;
    }
    fail(
        ACL_ERROR_INVALID_MODEL_ID,
        format!("{F}: model id {model_id} names no loaded model (never loaded, or unloaded)"),
    )
}

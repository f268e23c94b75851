//! A model run instance's id and name: `aclmdlRIGetId`, `aclmdlRISetName`,
//! `aclmdlRIGetName`, for captured and built models.
//!
//! hicann/runtime `src/acl/aclrt_impl/model_ri.cpp` null-checks every
//! pointer (100000); `src/runtime/api/api_c_model.cc` validates the handle
//! (107017); `api_error.cc` `ApiErrorDecorator::ModelGetName` refuses a
//! `maxLen` of 0 (107000); `api_impl.cc` `ApiImpl::ModelNameSet` and
//! `ModelGetName` need a current context (107002) owning the model (107004);
//! `model.cc` `Model::GetModelName` copies the name and its NUL with
//! `memcpy_s`, which fails for a shorter buffer (`RT_ERROR_SEC_HANDLE`,
//! 507899). `ApiImpl::ModelGetId` needs no context.

use super::common::{self, PARAM_INVALID, code};
use super::model_ri::{Ri, ri_arg};
use crate::faults;
use crate::recent_error::fail;
use acl_sys::{
    ACL_ERROR_RT_INTERNAL_ERROR, ACL_ERROR_RT_MODEL_CONTEXT, ACL_SUCCESS, aclError, aclmdlRI,
};
use parking_lot::Mutex;
use std::ffi::{CStr, c_char};

/// The model's context, id and name.
fn parts(m: &Ri) -> (u64, u32, &Mutex<String>) {
    match m {
        Ri::Captured(c) => (c.ctx_id, c.uid_for_json(), &c.name),
        Ri::Built(b) => (b.ctx_id, b.id, &b.name),
    }
}

/// The model of a name call: a fault injected, a null model or name
/// (100000, the ACL layer), then the handle (107017).
fn named(function: &str, model_ri: aclmdlRI, name_is_null: bool) -> Result<Ri, aclError> {
    if let Some(code) = faults::check(function) {
        return Err(code);
    }
    if model_ri.is_null() {
        return Err(common::null_arg(function, "modelRI"));
    }
    if name_is_null {
        return Err(common::null_arg(function, "name"));
    }
    ri_arg(function, model_ri)
}

/// The context rule of `ApiImpl::ModelNameSet`/`ModelGetName` (and
/// `ModelGetStreams`, `ModelAbort`): a current context (107002) owning the
/// model (107004).
pub(crate) fn in_current_context(function: &str, ctx_id: u64) -> Result<(), aclError> {
    let ctx = common::current(function)?;
    if ctx.id != ctx_id {
        return Err(fail(
            code(ACL_ERROR_RT_MODEL_CONTEXT),
            format!(
                "{function}: the model belongs to context {ctx_id}, not to the current {}",
                ctx.label()
            ),
        ));
    }
    Ok(())
}

/// `aclmdlRIGetId`: the model's id.
///
/// Null model or id → 100000; a bad handle → 107017.
///
/// # Safety
///
/// `model_ri_id` is null or valid for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetId(model_ri: aclmdlRI, model_ri_id: *mut u32) -> aclError {
    const F: &str = "aclmdlRIGetId";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if model_ri.is_null() {
        return common::null_arg(F, "modelRI");
    }
    if model_ri_id.is_null() {
        return common::null_arg(F, "modelRIId");
    }
    let m = tri!(ri_arg(F, model_ri));
    // SAFETY: checked non-null; the caller passes a writable id.
    unsafe { *model_ri_id = parts(&m).1 };
    ACL_SUCCESS
}

/// `aclmdlRISetName`: names the model.
///
/// Null model or name → 100000; a bad handle → 107017; no context →
/// 107002; a model of another context → 107004.
///
/// # Safety
///
/// `name` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRISetName(model_ri: aclmdlRI, name: *const c_char) -> aclError {
    const F: &str = "aclmdlRISetName";
    let m = tri!(named(F, model_ri, name.is_null()));
    let (ctx_id, _, slot) = parts(&m);
    tri!(in_current_context(F, ctx_id));
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let text = unsafe { CStr::from_ptr(name) };
    *slot.lock() = text.to_string_lossy().into_owned();
    ACL_SUCCESS
}

/// `aclmdlRIGetName`: copies the model's name and its NUL into `name`
/// (`maxLen` bytes).
///
/// Null model or name → 100000; a bad handle → 107017; `maxLen` 0 →
/// 107000; no context → 107002; a model of another context → 107004; a
/// buffer shorter than the name and its NUL → 507899.
///
/// # Safety
///
/// `name` is null or valid for writing `maxLen` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlRIGetName(
    model_ri: aclmdlRI,
    max_len: u32,
    name: *mut c_char,
) -> aclError {
    const F: &str = "aclmdlRIGetName";
    let m = tri!(named(F, model_ri, name.is_null()));
    if max_len == 0 {
        return fail(PARAM_INVALID, format!("{F}: maxLen is 0"));
    }
    let (ctx_id, _, slot) = parts(&m);
    tri!(in_current_context(F, ctx_id));
    let text = slot.lock().clone();
    let bytes = text.as_bytes();
    if bytes.len() + 1 > max_len as usize {
        return fail(
            code(ACL_ERROR_RT_INTERNAL_ERROR),
            format!(
                "{F}: the name takes {} bytes with its NUL, more than maxLen {max_len}",
                bytes.len() + 1
            ),
        );
    }
    // SAFETY: `name` holds `maxLen` bytes (the caller's contract), at least
    // the name and its NUL (checked above).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), name.cast::<u8>(), bytes.len());
        *name.add(bytes.len()) = 0;
    }
    ACL_SUCCESS
}

//! Operator attributes: `aclopCreateAttr`, `aclopDestroyAttr` and the
//! eleven `aclopSetAttr*` setters (`acl_op.h`).
//!
//! An attribute set maps names to typed values ([`AttrValue`]); setting a
//! name again replaces its value. Null `attr` or `attrName`, a negative
//! count, or a null array with a positive count is
//! `ACL_ERROR_INVALID_PARAM` (100000). Which names and types an operator
//! accepts is checked when it runs (`ACL_ERROR_OP_ATTR_NOT_MATCH`, 100023).

use crate::faults;
use crate::ops::{AttrValue, Attrs};
use crate::recent_error::{fail, record};
use crate::rt::handles::{self, Lookup, Registry, Table};
use acl_sys::{ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclDataType, aclError, aclopAttr};
use parking_lot::Mutex;
use std::ffi::{CStr, c_char, c_int};
use std::sync::Arc;

pub(crate) static ATTRS: Table<Mutex<Attrs>> = Table::new(|| Mutex::new(Registry::default()));

/// The attributes behind a handle: empty for null.
///
/// # Errors
///
/// 100000 (recorded with `function`'s name) for a destroyed or foreign handle.
pub(crate) fn attrs_of(function: &str, h: *const aclopAttr) -> Result<Attrs, aclError> {
    if h.is_null() {
        return Ok(Attrs::new());
    }
    match ATTRS.lock().get(h as usize) {
        Lookup::Live(a) => Ok(a.lock().clone()),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: attr: {}",
                handles::describe_bad("aclopAttr", h as usize, &bad)
            ),
        )),
    }
}

/// `aclopCreateAttr`: an empty attribute set.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCreateAttr() -> *mut aclopAttr {
    if faults::check("aclopCreateAttr").is_some() {
        return std::ptr::null_mut();
    }
    ATTRS.lock().insert(Arc::new(Mutex::new(Attrs::new()))) as *mut aclopAttr
}

/// `aclopDestroyAttr`: null is ignored; a destroyed or foreign handle
/// records a message.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopDestroyAttr(attr: *const aclopAttr) {
    if attr.is_null() {
        return;
    }
    let mut t = ATTRS.lock();
    if t.remove(attr as usize).is_none() {
        let l = t.get(attr as usize);
        record(format!(
            "aclopDestroyAttr: {}",
            handles::describe_bad("aclopAttr", attr as usize, &l)
        ));
    }
}

/// Validates `attr` and `name`, then stores what `value` builds.
///
/// # Safety
///
/// `name` is null or NUL-terminated.
unsafe fn set(
    function: &str,
    attr: *mut aclopAttr,
    name: *const c_char,
    value: impl FnOnce() -> Result<AttrValue, String>,
) -> aclError {
    if let Some(code) = faults::check(function) {
        return code;
    }
    if attr.is_null() {
        return fail(ACL_ERROR_INVALID_PARAM, format!("{function}: attr is null"));
    }
    if name.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: attrName is null"),
        );
    }
    // SAFETY: NUL-terminated (the caller's contract).
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    if name.is_empty() {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: attrName is empty"),
        );
    }
    let a = match ATTRS.lock().get(attr as usize) {
        Lookup::Live(a) => a,
        bad => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{function}: attr: {}",
                    handles::describe_bad("aclopAttr", attr as usize, &bad)
                ),
            );
        }
    };
    match value() {
        Ok(v) => {
            a.lock().insert(name, v);
            ACL_SUCCESS
        }
        Err(e) => fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: attribute \"{name}\": {e}"),
        ),
    }
}

/// Reads a C array of `num` values.
///
/// # Safety
///
/// `values` is null or valid for `num` values.
unsafe fn list<T: Copy>(num: c_int, values: *const T) -> Result<Vec<T>, String> {
    if num < 0 {
        return Err(format!("numValues {num} is negative"));
    }
    if num == 0 {
        return Ok(Vec::new());
    }
    if values.is_null() {
        return Err(format!("values is null but numValues is {num}"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(values, num as usize) }.to_vec())
}

/// `aclopSetAttrBool` (any non-zero value is true).
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrBool(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    attr_value: u8,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrBool", attr, attr_name, || {
            Ok(AttrValue::Bool(attr_value != 0))
        })
    }
}

/// `aclopSetAttrInt`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrInt(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    attr_value: i64,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrInt", attr, attr_name, || {
            Ok(AttrValue::Int(attr_value))
        })
    }
}

/// `aclopSetAttrFloat`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrFloat(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    attr_value: f32,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrFloat", attr, attr_name, || {
            Ok(AttrValue::Float(attr_value))
        })
    }
}

/// `aclopSetAttrString`.
///
/// # Safety
///
/// `attr_name` and `attr_value` are null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrString(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    attr_value: *const c_char,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrString", attr, attr_name, || {
            if attr_value.is_null() {
                return Err("attrValue is null".into());
            }
            // SAFETY: NUL-terminated (the caller's contract).
            Ok(AttrValue::String(
                CStr::from_ptr(attr_value).to_string_lossy().into_owned(),
            ))
        })
    }
}

/// `aclopSetAttrDataType`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrDataType(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    attr_value: aclDataType,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrDataType", attr, attr_name, || {
            Ok(AttrValue::DataType(attr_value))
        })
    }
}

/// `aclopSetAttrListBool`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `values` null or valid for `num_values`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListBool(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_values: c_int,
    values: *const u8,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListBool", attr, attr_name, || {
            Ok(AttrValue::ListBool(
                list(num_values, values)?
                    .into_iter()
                    .map(|v| v != 0)
                    .collect(),
            ))
        })
    }
}

/// `aclopSetAttrListInt`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `values` null or valid for `num_values`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListInt(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_values: c_int,
    values: *const i64,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListInt", attr, attr_name, || {
            Ok(AttrValue::ListInt(list(num_values, values)?))
        })
    }
}

/// `aclopSetAttrListFloat`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `values` null or valid for `num_values`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListFloat(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_values: c_int,
    values: *const f32,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListFloat", attr, attr_name, || {
            Ok(AttrValue::ListFloat(list(num_values, values)?))
        })
    }
}

/// `aclopSetAttrListDataType`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `values` null or valid for `num_values`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListDataType(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_values: c_int,
    values: *const aclDataType,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListDataType", attr, attr_name, || {
            Ok(AttrValue::ListDataType(list(num_values, values)?))
        })
    }
}

/// `aclopSetAttrListString`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `values` null or valid for
/// `num_values` pointers, each null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListString(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_values: c_int,
    values: *mut *const c_char,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListString", attr, attr_name, || {
            let ptrs = list(num_values, values.cast_const())?;
            ptrs.iter()
                .enumerate()
                .map(|(i, &p)| {
                    if p.is_null() {
                        Err(format!("values[{i}] is null"))
                    } else {
                        // SAFETY: NUL-terminated (the caller's contract).
                        Ok(CStr::from_ptr(p).to_string_lossy().into_owned())
                    }
                })
                .collect::<Result<Vec<_>, _>>()
                .map(AttrValue::ListString)
        })
    }
}

/// `aclopSetAttrListListInt`: `numLists` lists, list `i` holding
/// `numValues[i]` values at `values[i]`.
///
/// # Safety
///
/// `attr_name` is null or NUL-terminated; `num_values` and `values` null or
/// valid for `num_lists` entries, each `values[i]` null or valid for
/// `num_values[i]` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetAttrListListInt(
    attr: *mut aclopAttr,
    attr_name: *const c_char,
    num_lists: c_int,
    num_values: *const c_int,
    values: *const *const i64,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        set("aclopSetAttrListListInt", attr, attr_name, || {
            let counts = list(num_lists, num_values).map_err(|e| format!("numValues: {e}"))?;
            let ptrs = list(num_lists, values)?;
            counts
                .iter()
                .zip(&ptrs)
                .enumerate()
                .map(|(i, (&n, &p))| list(n, p).map_err(|e| format!("list {i}: {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map(AttrValue::ListListInt)
        })
    }
}

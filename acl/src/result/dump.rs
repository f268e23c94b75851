//! `aclmdl*Dump`, `acldump*`, `aclop*DumpArgs`: data dumps of the operators
//! that run (`acl/acl_mdl.h`, `acl/acl_dump.h`, `acl/acl_op.h`).

use crate::error::Result;
use acl_sys as sys;
use std::ffi::{CStr, CString};

/// `aclmdlInitDump`: turns the data dump on (after `aclInit`).
#[doc(alias = "aclmdlInitDump")]
pub fn mdl_init_dump() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclmdlInitDump()) }
}

/// `aclmdlSetDump`: the dump config file at `path` (JSON: `dump_path`,
/// `dump_mode`, `dump_list`, ...).
#[doc(alias = "aclmdlSetDump")]
pub fn mdl_set_dump(path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string, read during the call.
    unsafe { call!(aclmdlSetDump(path.as_ptr())) }
}

/// `aclmdlFinalizeDump`: turns the data dump off.
#[doc(alias = "aclmdlFinalizeDump")]
pub fn mdl_finalize_dump() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(aclmdlFinalizeDump()) }
}

/// `acldumpRegCallback`: the dump data goes to `callback` in chunks instead
/// of files (`flag` 0).
///
/// # Safety
///
/// `callback` may be called from another thread with valid chunks until
/// [`dump_unreg_callback`] returns, and must not unwind.
#[doc(alias = "acldumpRegCallback")]
pub unsafe fn dump_reg_callback(
    callback: unsafe extern "C" fn(*const sys::acldumpChunk, i32) -> i32,
    flag: i32,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { call!(acldumpRegCallback(Some(callback), flag)) }
}

/// `acldumpUnregCallback`.
#[doc(alias = "acldumpUnregCallback")]
pub fn dump_unreg_callback() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { sys::acldumpUnregCallback() }?;
    Ok(())
}

/// `acldumpGetPath`: the dump path of `kind` (`DATA_DUMP`, ...), `None`
/// when none is set.
#[doc(alias = "acldumpGetPath")]
pub fn dump_get_path(kind: sys::acldumpType) -> Result<Option<CString>> {
    // SAFETY: a plain integer argument.
    let p = unsafe { sys::acldumpGetPath(kind) }?;
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: a NUL-terminated string the runtime keeps; copied at once.
    Ok(Some(unsafe { CStr::from_ptr(p) }.to_owned()))
}

/// `aclopStartDumpArgs`: operator information files into `path`.
#[doc(alias = "aclopStartDumpArgs")]
pub fn op_start_dump_args(kind: u32, path: &CStr) -> Result<()> {
    // SAFETY: a NUL-terminated string, read during the call.
    unsafe { call!(aclopStartDumpArgs(kind, path.as_ptr())) }
}

/// `aclopStopDumpArgs`.
#[doc(alias = "aclopStopDumpArgs")]
pub fn op_stop_dump_args(kind: u32) -> Result<()> {
    // SAFETY: a plain integer argument.
    unsafe { call!(aclopStopDumpArgs(kind)) }
}

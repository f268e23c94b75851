//! External allocators (`aclrtAllocator*`): a program registers its own
//! device-memory allocator on a stream, and the CANN libraries that need
//! memory for work on that stream (graph execution, operator workspaces)
//! ask `aclrtAllocatorGetByStream` for it instead of calling `aclrtMalloc`.
//!
//! In the release this is a registry of the ACL layer and nothing more
//! (hicann/runtime `src/acl/aclrt_impl/allocator.cpp`), and so it is here:
//!
//! - `aclrtAllocatorCreateDesc` makes an empty description;
//!   `aclrtAllocatorSet*ToDesc` fill it (a null description or function is
//!   100000); `aclrtAllocatorDestroyDesc` of null is 100000.
//! - `aclrtAllocatorRegister(stream, desc)`: a null stream or description,
//!   or a description without its object, alloc, free or
//!   get-address-from-block function, is 100000 (the advise function is
//!   optional). The registry keeps a copy of the description under the
//!   stream's handle (a second registration replaces the first), so
//!   changing or destroying the description afterwards does not change
//!   what is registered.
//! - `aclrtAllocatorGetByStream`: a null `allocatorDesc` out-pointer or
//!   stream, or a stream without a registration, is 100000; the other
//!   out-pointers may be null.
//! - `aclrtAllocatorUnregister` of a null stream is 100000; of a stream
//!   without a registration it succeeds.
//!
//! The release dereferences any description it is given; the simulator
//! refuses one it did not make (or that was destroyed) with 100000, and
//! keys registrations by the stream handle without validating it, as the
//! release does.

#![allow(non_snake_case)]

use super::common;
use crate::faults;
use crate::recent_error::fail;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_SUCCESS, aclError, aclrtAllocator, aclrtAllocatorAllocAdviseFunc,
    aclrtAllocatorAllocFunc, aclrtAllocatorDesc, aclrtAllocatorFreeFunc,
    aclrtAllocatorGetAddrFromBlockFunc, aclrtStream,
};
use parking_lot::Mutex;
use std::collections::HashMap;

/// A description: what `aclrtAllocatorSet*ToDesc` filled in.
#[derive(Debug, Clone, Copy, Default)]
struct Desc {
    obj: usize,
    alloc: aclrtAllocatorAllocFunc,
    free: aclrtAllocatorFreeFunc,
    advise: aclrtAllocatorAllocAdviseFunc,
    addr_of: aclrtAllocatorGetAddrFromBlockFunc,
}

/// Live descriptions by handle (the address of their box, looked up,
/// never dereferenced) and registrations by stream handle: the
/// description's handle and a copy of it.
#[derive(Default)]
struct Registry {
    descs: HashMap<usize, Box<Desc>>,
    streams: HashMap<usize, (usize, Desc)>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn invalid(function: &str, what: &str) -> aclError {
    fail(
        ACL_ERROR_INVALID_PARAM as aclError,
        format!("{function}: {what}"),
    )
}

/// Runs `f` on the live description `desc` of `function`'s call.
fn with_desc(function: &str, desc: aclrtAllocatorDesc, f: impl FnOnce(&mut Desc)) -> aclError {
    if desc.is_null() {
        return common::null_arg(function, "allocatorDesc");
    }
    let mut guard = REGISTRY.lock();
    match guard
        .as_mut()
        .and_then(|r| r.descs.get_mut(&(desc as usize)))
    {
        Some(d) => {
            f(d);
            ACL_SUCCESS
        }
        None => invalid(
            function,
            "allocatorDesc was not made by aclrtAllocatorCreateDesc or was destroyed",
        ),
    }
}

/// `aclrtAllocatorCreateDesc`: a new, empty description.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorCreateDesc() -> aclrtAllocatorDesc {
    const F: &str = "aclrtAllocatorCreateDesc";
    if faults::check(F).is_some() {
        return std::ptr::null_mut();
    }
    let desc = Box::<Desc>::default();
    let handle = (&*desc as *const Desc).cast_mut().cast();
    REGISTRY
        .lock()
        .get_or_insert_with(Registry::default)
        .descs
        .insert(handle as usize, desc);
    handle
}

/// `aclrtAllocatorDestroyDesc`: releases a description (what was
/// registered with it stays registered).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorDestroyDesc(desc: aclrtAllocatorDesc) -> aclError {
    const F: &str = "aclrtAllocatorDestroyDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if desc.is_null() {
        return common::null_arg(F, "allocatorDesc");
    }
    let removed = REGISTRY
        .lock()
        .as_mut()
        .and_then(|r| r.descs.remove(&(desc as usize)));
    match removed {
        Some(_) => ACL_SUCCESS,
        None => invalid(
            F,
            "allocatorDesc was not made by aclrtAllocatorCreateDesc or was destroyed",
        ),
    }
}

/// `aclrtAllocatorSetObjToDesc`: the allocator object the functions get.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetObjToDesc(
    desc: aclrtAllocatorDesc,
    allocator: aclrtAllocator,
) -> aclError {
    const F: &str = "aclrtAllocatorSetObjToDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !desc.is_null() && allocator.is_null() {
        return common::null_arg(F, "allocator");
    }
    with_desc(F, desc, |d| d.obj = allocator as usize)
}

/// `aclrtAllocatorSetAllocFuncToDesc`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocFunc,
) -> aclError {
    const F: &str = "aclrtAllocatorSetAllocFuncToDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !desc.is_null() && func.is_none() {
        return common::null_arg(F, "func");
    }
    with_desc(F, desc, |d| d.alloc = func)
}

/// `aclrtAllocatorSetFreeFuncToDesc`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetFreeFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorFreeFunc,
) -> aclError {
    const F: &str = "aclrtAllocatorSetFreeFuncToDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !desc.is_null() && func.is_none() {
        return common::null_arg(F, "func");
    }
    with_desc(F, desc, |d| d.free = func)
}

/// `aclrtAllocatorSetAllocAdviseFuncToDesc`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetAllocAdviseFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorAllocAdviseFunc,
) -> aclError {
    const F: &str = "aclrtAllocatorSetAllocAdviseFuncToDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !desc.is_null() && func.is_none() {
        return common::null_arg(F, "func");
    }
    with_desc(F, desc, |d| d.advise = func)
}

/// `aclrtAllocatorSetGetAddrFromBlockFuncToDesc`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorSetGetAddrFromBlockFuncToDesc(
    desc: aclrtAllocatorDesc,
    func: aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    const F: &str = "aclrtAllocatorSetGetAddrFromBlockFuncToDesc";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if !desc.is_null() && func.is_none() {
        return common::null_arg(F, "func");
    }
    with_desc(F, desc, |d| d.addr_of = func)
}

/// `aclrtAllocatorRegister`: registers a copy of `desc` for `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorRegister(
    stream: aclrtStream,
    desc: aclrtAllocatorDesc,
) -> aclError {
    const F: &str = "aclrtAllocatorRegister";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if desc.is_null() {
        return common::null_arg(F, "allocatorDesc");
    }
    let mut guard = REGISTRY.lock();
    let reg = guard.get_or_insert_with(Registry::default);
    let Some(d) = reg.descs.get(&(desc as usize)).map(|d| **d) else {
        drop(guard);
        return invalid(
            F,
            "allocatorDesc was not made by aclrtAllocatorCreateDesc or was destroyed",
        );
    };
    let missing = if d.obj == 0 {
        Some("allocatorDesc->obj")
    } else if d.alloc.is_none() {
        Some("allocatorDesc->allocFunc")
    } else if d.free.is_none() {
        Some("allocatorDesc->freeFunc")
    } else if d.addr_of.is_none() {
        Some("allocatorDesc->getAddrFromBlockFunc")
    } else {
        None
    };
    match missing {
        Some(what) => {
            drop(guard);
            common::null_arg(F, what)
        }
        None => {
            reg.streams.insert(stream as usize, (desc as usize, d));
            ACL_SUCCESS
        }
    }
}

/// `aclrtAllocatorGetByStream`: what is registered for `stream`.
///
/// # Safety
///
/// Each out-pointer is null or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtAllocatorGetByStream(
    stream: aclrtStream,
    allocator_desc: *mut aclrtAllocatorDesc,
    allocator: *mut aclrtAllocator,
    alloc_func: *mut aclrtAllocatorAllocFunc,
    free_func: *mut aclrtAllocatorFreeFunc,
    alloc_advise_func: *mut aclrtAllocatorAllocAdviseFunc,
    get_addr_from_block_func: *mut aclrtAllocatorGetAddrFromBlockFunc,
) -> aclError {
    const F: &str = "aclrtAllocatorGetByStream";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if allocator_desc.is_null() {
        return common::null_arg(F, "allocatorDesc");
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    let found = REGISTRY
        .lock()
        .as_ref()
        .and_then(|r| r.streams.get(&(stream as usize)).copied());
    let Some((handle, d)) = found else {
        return invalid(F, "the stream is not registered with any allocator");
    };
    // SAFETY: every out-pointer is null (skipped) or writable (the C
    // contract); `allocator_desc` was checked non-null above.
    unsafe {
        allocator_desc.write(handle as aclrtAllocatorDesc);
        if !allocator.is_null() {
            allocator.write(d.obj as aclrtAllocator);
        }
        if !alloc_func.is_null() {
            alloc_func.write(d.alloc);
        }
        if !free_func.is_null() {
            free_func.write(d.free);
        }
        if !alloc_advise_func.is_null() {
            alloc_advise_func.write(d.advise);
        }
        if !get_addr_from_block_func.is_null() {
            get_addr_from_block_func.write(d.addr_of);
        }
    }
    ACL_SUCCESS
}

/// `aclrtAllocatorUnregister`: forgets `stream`'s registration (none is
/// fine).
#[unsafe(no_mangle)]
pub extern "C" fn aclrtAllocatorUnregister(stream: aclrtStream) -> aclError {
    const F: &str = "aclrtAllocatorUnregister";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if stream.is_null() {
        return common::null_arg(F, "stream");
    }
    if let Some(r) = REGISTRY.lock().as_mut() {
        r.streams.remove(&(stream as usize));
    }
    ACL_SUCCESS
}

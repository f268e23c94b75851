//! `aclrtReduceAsync`: the runtime's built-in reduce task, `dst[i] = dst[i]
//! op src[i]` over `count` bytes of device memory, queued on a stream.
//!
//! Semantics and codes, in the release's order (hicann/runtime
//! `src/acl/aclrt_impl/memory.cpp` `aclrtReduceAsyncImpl`,
//! `src/runtime/api/api_c_standard_soc.cc` `rtsLaunchReduceAsyncTask`,
//! `src/runtime/api/impl/api_error.cc` `ApiErrorDecorator::ReduceAsync`,
//! `src/runtime/core/src/launch/memory_stars.cc` `CheckReduceCapability`
//! and `SubmitReduceTask`, `src/runtime/core/src/context/context.cc`
//! `CheckMemAlign`; dtypes per SoC from `docs/zh/api_ref/12_execution_control.md`):
//!
//! - a null `dst` or `src`, a non-null `reserve`, or a `type` the ACL layer
//!   does not map (anything but float, float16, int16, int4, int8, int32,
//!   bf16, uint8, uint16, uint32) is 100000;
//! - `count` (bytes) of 0, a `kind` outside `ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM`
//!   (10) … `EQUAL` (13), or a sum of more than 4 GiB is 107000;
//! - no context is 107002, a stream of another context 107003;
//! - a type the SoC's SDMA does not reduce is 207000: Atlas A2/A3 (the
//!   simulator's `Ascend910B*`/`Ascend910_93*`) reduce int8, int16, int32,
//!   fp16, fp32 and bf16; Ascend 950 adds uint32;
//! - `src`, then `dst`, not aligned to 2 bytes (fp16, int16, uint16, bf16)
//!   or 4 bytes (fp32, int32, uint32) is 107008;
//! - the simulator then requires both ranges to lie in live device
//!   allocations of the stream's device (107000), as for every task it
//!   queues.
//!
//! The task computes like the device's vector units: integers wrap, floats
//! are IEEE, fp16/bf16 go through f32 per element (the HCCL reduction
//! kernels, [`crate::comm::reduce`]). Only whole elements are reduced: bytes
//! of a trailing partial element are left as they are. The SoC accepts
//! `ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL` (13), whose result the release does
//! not document: the simulator refuses it with 207000 and says so, rather
//! than invent one.

use super::common::{self, PARAM_INVALID, code, device_range};
use super::memory_async::enqueue;
use super::stream::takes_host_work;
use crate::check::Use;
use crate::comm::reduce::{DataType, ReduceOp, reduce};
use crate::faults;
use crate::recent_error::fail;
use crate::rt::stream::{TaskKind, TaskRange};
use acl_sys::{
    ACL_BF16, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_ADDR_UNALIGNED,
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_FLOAT, ACL_FLOAT16, ACL_INT4, ACL_INT8, ACL_INT16,
    ACL_INT32, ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX,
    ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_UINT8, ACL_UINT16,
    ACL_UINT32, aclDataType, aclError, aclrtReduceKind, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

/// The largest sum the runtime queues: `MAX_MEMCPY_SIZE_OF_D2D`
/// (hicann/runtime `src/runtime/core/inc/spec/base_info.hpp`).
const MAX_SUM_BYTES: u64 = 4 << 30;

/// The ACL types the ACL layer maps to a runtime type (`kMapDataType`),
/// with their element size.
fn mapped(ty: aclDataType) -> Option<(&'static str, usize)> {
    Some(match ty {
        ACL_FLOAT => ("float", 4),
        ACL_FLOAT16 => ("float16", 2),
        ACL_INT16 => ("int16", 2),
        ACL_INT4 => ("int4", 1),
        ACL_INT8 => ("int8", 1),
        ACL_INT32 => ("int32", 4),
        ACL_BF16 => ("bfloat16", 2),
        ACL_UINT8 => ("uint8", 1),
        ACL_UINT16 => ("uint16", 2),
        ACL_UINT32 => ("uint32", 4),
        _ => return None,
    })
}

/// The reduction type the simulated SoC's SDMA engine handles for `ty`.
fn reducible(ty: aclDataType) -> Option<DataType> {
    let is_950 = crate::config::get().is_ok_and(|c| c.soc_name.starts_with("Ascend950"));
    Some(match ty {
        ACL_FLOAT => DataType::Fp32,
        ACL_FLOAT16 => DataType::Fp16,
        ACL_INT16 => DataType::Int16,
        ACL_INT8 => DataType::Int8,
        ACL_INT32 => DataType::Int32,
        ACL_BF16 => DataType::Bfp16,
        ACL_UINT32 if is_950 => DataType::Uint32,
        _ => return None,
    })
}

/// The address alignment `CheckMemAlign` requires for `ty`.
fn alignment(ty: aclDataType) -> usize {
    match ty {
        ACL_FLOAT16 | ACL_INT16 | ACL_UINT16 | ACL_BF16 => 2,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 => 4,
        _ => 1,
    }
}

/// `aclrtReduceAsync`: queues `dst[i] = dst[i] kind src[i]` over `count`
/// bytes of `type` elements on `stream` (see the module docs).
///
/// # Safety
///
/// None beyond the C contract: the pointers are validated against the
/// simulator's allocation table before anything is queued.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtReduceAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: u64,
    kind: aclrtReduceKind,
    type_: aclDataType,
    stream: aclrtStream,
    reserve: *mut c_void,
) -> aclError {
    const F: &str = "aclrtReduceAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dst.is_null() {
        return common::null_arg(F, "dst");
    }
    if src.is_null() {
        return common::null_arg(F, "src");
    }
    if !reserve.is_null() {
        return fail(
            ACL_ERROR_INVALID_PARAM as aclError,
            format!("{F}: reserve is a reserved parameter and must be nullptr"),
        );
    }
    let Some((type_name, size)) = mapped(type_) else {
        return fail(
            ACL_ERROR_INVALID_PARAM as aclError,
            format!(
                "{F}: type {type_} is not supported (the data type is currently not supported)"
            ),
        );
    };
    let s = tri!(common::stream_arg(F, stream));
    if count == 0 {
        return fail(
            PARAM_INVALID,
            format!("{F}: count is 0; it must be positive"),
        );
    }
    let op = match kind {
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM => ReduceOp::Sum,
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX => ReduceOp::Max,
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN => ReduceOp::Min,
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL => ReduceOp::Sum, // refused below
        _ => {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: kind {kind} is invalid; expected [{ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM}, \
                     {})",
                    ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL + 1
                ),
            );
        }
    };
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM && count > MAX_SUM_BYTES {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} is out of range; a sum takes (0, {MAX_SUM_BYTES}] bytes"),
        );
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    if kind == ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: kind ACL_RT_MEMCPY_SDMA_AUTOMATIC_EQUAL (13) is not supported by cann-sim \
                 (the release does not document its result)"
            ),
        );
    }
    let Some(dt) = reducible(type_) else {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!(
                "{F}: type {type_name} is not supported: the current SoC does not support the \
                 reduction operation of this data type"
            ),
        );
    };
    let align = alignment(type_);
    for (what, addr) in [("src", src as usize), ("dst", dst as usize)] {
        if !addr.is_multiple_of(align) {
            return fail(
                code(ACL_ERROR_RT_ADDR_UNALIGNED),
                format!("{F}: {what} {addr:#x} is not aligned to {align} bytes for {type_name}"),
            );
        }
    }
    tri!(takes_host_work(F, &s));
    let Ok(bytes) = usize::try_from(count) else {
        return fail(
            PARAM_INVALID,
            format!("{F}: count {count} does not fit the address space"),
        );
    };
    let whole = bytes - bytes % size;
    let mut ranges = Vec::with_capacity(2);
    for (what, addr, how) in [
        ("src", src as usize, Use::Read),
        ("dst", dst as usize, Use::Write),
    ] {
        let at = tri!(device_range(F, what, addr, bytes, ctx.device));
        let Some(at) = at else {
            return fail(PARAM_INVALID, format!("{F}: {what} is not device memory"));
        };
        ranges.push(TaskRange {
            what,
            addr,
            len: bytes,
            at,
            how,
        });
    }
    let (dst_addr, src_addr) = (dst as usize, src as usize);
    let kernel = Arc::new(move || {
        if whole == 0 {
            return Ok(());
        }
        let overlaps = src_addr < dst_addr + whole && dst_addr < src_addr + whole;
        // The task runs only once both ranges (`bytes` ≥ `whole` bytes at
        // each address) are checked live, and the allocation table's read
        // lock keeps them so (`rt::stream`). When the ranges overlap, the
        // source is copied out before the destination is borrowed, so no
        // `&[u8]` aliases the `&mut [u8]`.
        let copied = overlaps.then(|| {
            // SAFETY: a live range (above); no `&mut` to it exists yet.
            unsafe { std::slice::from_raw_parts(src_addr as *const u8, whole) }.to_vec()
        });
        // SAFETY: a live range (above), borrowed by nothing else.
        let acc = unsafe { std::slice::from_raw_parts_mut(dst_addr as *mut u8, whole) };
        match &copied {
            Some(x) => reduce(dt, op, acc, x),
            // SAFETY: a live range (above) that does not overlap `acc`.
            None => reduce(dt, op, acc, unsafe {
                std::slice::from_raw_parts(src_addr as *const u8, whole)
            }),
        }
        Ok(())
    });
    enqueue(
        F,
        &s,
        TaskKind::Op {
            api: F,
            ranges,
            kernel,
        },
    )
}

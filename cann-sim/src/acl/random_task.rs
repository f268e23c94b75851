//! `aclrtRandomNumAsync`: the runtime's built-in random-number task (the
//! DSA engine's generator), queued on a stream without an operator.
//!
//! # Checks, in the release's order
//!
//! hicann/runtime `src/acl/aclrt_impl/kernel.cpp` `aclrtRandomNumAsyncImpl`,
//! `src/runtime/api/api_c_kernel.cc` `rtsLaunchRandomNumTask`,
//! `src/runtime/api/impl/api_error.cc` `ApiErrorDecorator::LaunchRandomNumTask`,
//! `api_impl.cc` `ApiImpl::LaunchRandomNumTask`, and
//! `src/runtime/core/src/task/task_info/random_num_task.cc`
//! `CheckRandomNumTaskInfo`:
//!
//! - a null `taskInfo`, or a `dataType` other than int32, int64, uint32,
//!   uint64, bf16, float16 and float, is 100000 (the ACL layer);
//! - a SoC without the generator (`RT_FEATURE_TASK_RAND_GENERATOR`: the
//!   API reference lists Atlas A2 and A3 only) is 207000;
//! - a non-null `reserve` is 107000; no context 107002, a stream of another
//!   context 107003;
//! - a `funcType` outside 0–3, a `dataType` the function does not generate
//!   (dropout bitmask and both normals: bf16, fp16, fp32; uniform: those and
//!   the four integer types), a null counter or result address, or a
//!   parameter whose `isAddr` is not 0/1 or whose `size` is not in
//!   `[1, n]` (`n`: 8 for the seed, the count and any address; else the
//!   element size) is 107000.
//!
//! The simulator then requires the result range, the 16-byte counter and
//! every parameter given by address to lie in live device memory of the
//! stream's device (107000), as for every task it queues. A parameter given
//! by address is read when the task runs (so a captured task reads its
//! current value at each launch); `randomParaAddr`, when not null, receives
//! the 16 parameter bytes at once, as the runtime's synchronous copy does.
//!
//! # What the task computes
//!
//! The generator is the simulator's Philox4x32-10 ([`crate::ops::random`],
//! the (seed, offset) contract of the aclnn random operators): the low 64
//! bits of the 16-byte counter (little-endian) are the offset; element `i`
//! reads subsequence `i` at that offset; when the task ends, the offset has
//! grown by 4, so the next task with the same counter draws new numbers and
//! a replayed graph draws new numbers at each launch. The counter's high 64
//! bits are left as they are. The hardware keeps its state in the same 16
//! bytes but lays it out its own way, and its bits differ from the
//! simulator's; what holds is the distribution:
//!
//! - uniform: floats in `[min, max)`, integers the integers of `[min, max)`
//!   (an empty range fails the task);
//! - normal: `mean + stddev·z` (Box–Muller); truncated normal: the same,
//!   `z` restricted to `[-2, 2]` (as TensorFlow's `truncated_normal`);
//! - dropout bitmask: `num` bits, least significant first, bit `i` set when
//!   element `i` is kept, which happens with probability `1 − ratio` (the
//!   ratio is the fraction dropped); `⌈num / 8⌉` bytes are written.

use super::common::{self, PARAM_INVALID, code, device_range};
use super::memory_async::enqueue;
use super::stream::takes_host_work;
use crate::check::Use;
use crate::faults;
use crate::ops::random::Stream as Philox;
use crate::recent_error::fail;
use crate::rt::error::{Error, ErrorKind};
use crate::rt::stream::{TaskKind, TaskRange};
use acl_sys::{
    ACL_BF16, ACL_ERROR_INVALID_PARAM, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, ACL_FLOAT, ACL_FLOAT16,
    ACL_INT32, ACL_INT64, ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS, ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
    ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS, ACL_UINT32, ACL_UINT64, aclDataType, aclError,
    aclrtRandomNumTaskInfo, aclrtRandomParaInfo, aclrtStream,
};
use std::ffi::c_void;
use std::sync::Arc;

const F: &str = "aclrtRandomNumAsync";

/// The generated element types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    I32,
    I64,
    U32,
    U64,
    Bf16,
    F16,
    F32,
}

impl Elem {
    fn of(ty: aclDataType) -> Option<Elem> {
        Some(match ty {
            ACL_INT32 => Elem::I32,
            ACL_INT64 => Elem::I64,
            ACL_UINT32 => Elem::U32,
            ACL_UINT64 => Elem::U64,
            ACL_BF16 => Elem::Bf16,
            ACL_FLOAT16 => Elem::F16,
            ACL_FLOAT => Elem::F32,
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Elem::Bf16 | Elem::F16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 => 8,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Elem::Bf16 | Elem::F16 | Elem::F32)
    }

    fn name(self) -> &'static str {
        match self {
            Elem::I32 => "int32",
            Elem::I64 => "int64",
            Elem::U32 => "uint32",
            Elem::U64 => "uint64",
            Elem::Bf16 => "bf16",
            Elem::F16 => "fp16",
            Elem::F32 => "fp32",
        }
    }

    /// The value of the first `size()` bytes of `b` (little-endian), as a
    /// number: floats as `f64`, integers exactly in `i128`.
    fn decode(self, b: [u8; 8]) -> Num {
        match self {
            Elem::I32 => Num::Int(i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::U32 => Num::Int(i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::I64 => Num::Int(i128::from(i64::from_le_bytes(b))),
            Elem::U64 => Num::Int(i128::from(u64::from_le_bytes(b))),
            Elem::F32 => Num::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            Elem::F16 => Num::Float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            Elem::Bf16 => Num::Float(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
        }
    }

    /// Writes float `v` rounded to this (float) type at `out`.
    fn put_float(self, v: f64, out: &mut [u8]) {
        match self {
            Elem::F32 => out.copy_from_slice(&(v as f32).to_le_bytes()),
            Elem::F16 => out.copy_from_slice(&half::f16::from_f64(v).to_le_bytes()),
            Elem::Bf16 => out.copy_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
            _ => unreachable!("put_float of an integer type"),
        }
    }

    /// Writes integer `v` (in range) at `out`.
    fn put_int(self, v: i128, out: &mut [u8]) {
        match self {
            Elem::I32 => out.copy_from_slice(&(v as i32).to_le_bytes()),
            Elem::U32 => out.copy_from_slice(&(v as u32).to_le_bytes()),
            Elem::I64 => out.copy_from_slice(&(v as i64).to_le_bytes()),
            Elem::U64 => out.copy_from_slice(&(v as u64).to_le_bytes()),
            _ => unreachable!("put_int of a float type"),
        }
    }
}

/// A parameter's value.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::Float(v) => v,
        }
    }
}

/// Where a parameter comes from: its bytes, or device memory read when the
/// task runs.
#[derive(Debug, Clone, Copy)]
enum Param {
    Value([u8; 8]),
    At(usize),
}

impl Param {
    /// `CheckRandomParam`: `isAddr` 0 or 1, `size` in `[1, max]` (`max` 8 for
    /// an address).
    fn check(p: &aclrtRandomParaInfo, what: &str, value_max: usize) -> Result<Param, aclError> {
        if p.isAddr > 1 {
            return Err(fail(
                PARAM_INVALID,
                format!(
                    "{F}: {what}.isAddr is {}; expected 0 (value) or 1 (address)",
                    p.isAddr
                ),
            ));
        }
        let max = if p.isAddr == 1 { 8 } else { value_max };
        if p.size == 0 || usize::from(p.size) > max {
            return Err(fail(
                PARAM_INVALID,
                format!("{F}: {what}.size is {}; expected [1, {max}]", p.size),
            ));
        }
        let mut bytes = [0u8; 8];
        bytes[..usize::from(p.size)].copy_from_slice(&p.valueOrAddr[..usize::from(p.size)]);
        Ok(if p.isAddr == 1 {
            Param::At(u64::from_le_bytes(bytes) as usize)
        } else {
            Param::Value(bytes)
        })
    }

    /// Its 8 bytes; an address is read now (the task's range check holds the
    /// memory live).
    ///
    /// # Safety
    ///
    /// For [`Param::At`], `len` bytes at the address lie in a live
    /// allocation for the call.
    unsafe fn bytes(self, len: usize) -> [u8; 8] {
        match self {
            Param::Value(b) => b,
            Param::At(addr) => {
                let mut b = [0u8; 8];
                // SAFETY: the caller's contract.
                unsafe { std::ptr::copy_nonoverlapping(addr as *const u8, b.as_mut_ptr(), len) };
                b
            }
        }
    }
}

/// What the task generates.
#[derive(Debug, Clone, Copy)]
enum Func {
    Dropout {
        ratio: Param,
    },
    Uniform {
        min: Param,
        max: Param,
    },
    Normal {
        mean: Param,
        stddev: Param,
        truncated: bool,
    },
}

/// `aclrtRandomNumAsync`: queues the generation of random numbers (see the
/// module docs).
///
/// # Safety
///
/// `taskInfo` is null or points to a readable `aclrtRandomNumTaskInfo`;
/// every address in it is validated against the allocation table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclrtRandomNumAsync(
    task_info: *const aclrtRandomNumTaskInfo,
    stream: aclrtStream,
    reserve: *mut c_void,
) -> aclError {
    if let Some(code) = faults::check(F) {
        return code;
    }
    if task_info.is_null() {
        return common::null_arg(F, "taskInfo");
    }
    // SAFETY: non-null, readable by the C contract; a plain-data copy.
    let info = unsafe { *task_info };
    let Some(elem) = Elem::of(info.dataType) else {
        return fail(
            ACL_ERROR_INVALID_PARAM as aclError,
            format!(
                "{F}: taskInfo->dataType {} is not supported (the data type is currently not \
                 supported)",
                info.dataType
            ),
        );
    };
    let soc = crate::config::get()
        .map(|c| c.soc_name.clone())
        .unwrap_or_default();
    if !(soc.starts_with("Ascend910B") || soc.starts_with("Ascend910_93")) {
        return fail(
            code(ACL_ERROR_RT_FEATURE_NOT_SUPPORT),
            format!("{F}: the random-number task is not supported on {soc} (Atlas A2/A3 only)"),
        );
    }
    let s = tri!(common::stream_arg(F, stream));
    if !reserve.is_null() {
        return fail(PARAM_INVALID, format!("{F}: reserve must be nullptr"));
    }
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    let func_type = info.randomNumFuncParaInfo.funcType;
    let allowed = match func_type {
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => true,
        ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK
        | ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS
        | ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS => elem.is_float(),
        _ => {
            return fail(
                PARAM_INVALID,
                format!("{F}: funcType {func_type} is invalid; expected [0, 4)"),
            );
        }
    };
    if !allowed {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: dataType {} is not generated by funcType {func_type}; expected bf16, fp16, fp32",
                elem.name()
            ),
        );
    }
    if info.randomCounterAddr.is_null() {
        return fail(PARAM_INVALID, format!("{F}: randomCounterAddr is nullptr"));
    }
    if info.randomResultAddr.is_null() {
        return fail(PARAM_INVALID, format!("{F}: randomResultAddr is nullptr"));
    }
    let seed = tri!(Param::check(&info.randomSeed, "randomSeed", 8));
    let num = tri!(Param::check(&info.randomNum, "randomNum", 8));
    // SAFETY: every member of the union is two 16-byte parameter records of
    // plain bytes (the dropout one uses the first), so reading it as the
    // uniform member reads initialised bytes of the same layout.
    let params = unsafe { info.randomNumFuncParaInfo.paramInfo.uniformDisInfo };
    let (first, second) = (params.min, params.max);
    let func = match func_type {
        ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK => Func::Dropout {
            ratio: tri!(Param::check(&first, "dropoutRation", elem.size())),
        },
        ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => Func::Uniform {
            min: tri!(Param::check(&first, "min", elem.size())),
            max: tri!(Param::check(&second, "max", elem.size())),
        },
        _ => Func::Normal {
            mean: tri!(Param::check(&first, "mean", elem.size())),
            stddev: tri!(Param::check(&second, "stddev", elem.size())),
            truncated: func_type == ACL_RT_RANDOM_NUM_FUNC_TYPE_TRUNCATED_NORMAL_DIS,
        },
    };
    tri!(takes_host_work(F, &s));
    enqueue_task(&s, ctx.device, elem, func, seed, num, &info)
}

/// Validates the memory the task touches and queues it.
fn enqueue_task(
    s: &Arc<crate::rt::stream::Stream>,
    device: u32,
    elem: Elem,
    func: Func,
    seed: Param,
    num: Param,
    info: &aclrtRandomNumTaskInfo,
) -> aclError {
    let mut ranges = Vec::new();
    let mut add = |what: &'static str, addr: usize, len: usize, how: Use| -> Result<(), aclError> {
        let at = device_range(F, what, addr, len, device)?;
        let Some(at) = at else {
            return Err(fail(
                PARAM_INVALID,
                format!("{F}: {what} is not device memory"),
            ));
        };
        ranges.push(TaskRange {
            what,
            addr,
            len,
            at,
            how,
        });
        Ok(())
    };
    let counter = info.randomCounterAddr as usize;
    tri!(add("randomCounterAddr", counter, 16, Use::Write));
    let value_params: Vec<(&'static str, Param)> = match func {
        Func::Dropout { ratio } => vec![("dropoutRation", ratio)],
        Func::Uniform { min, max } => vec![("min", min), ("max", max)],
        Func::Normal { mean, stddev, .. } => vec![("mean", mean), ("stddev", stddev)],
    };
    for (what, p) in &value_params {
        if let Param::At(addr) = p {
            tri!(add(what, *addr, elem.size(), Use::Read));
        }
    }
    for (what, p) in [("randomSeed", seed), ("randomNum", num)] {
        if let Param::At(addr) = p {
            tri!(add(what, addr, 8, Use::Read));
        }
    }
    let result = info.randomResultAddr as usize;
    let result_bytes = move |n: u64| -> Option<usize> {
        let n = usize::try_from(n).ok()?;
        match func {
            Func::Dropout { .. } => Some(n.div_ceil(8)),
            _ => n.checked_mul(elem.size()),
        }
    };
    // A count given by address is known when the task runs: the whole rest
    // of the result's allocation is then declared, and the task checks the
    // count against it.
    let result_len = match num {
        Param::Value(b) => match result_bytes(u64::from_le_bytes(b)) {
            Some(len) => len,
            None => {
                return fail(
                    PARAM_INVALID,
                    format!(
                        "{F}: randomNum {} does not fit the address space",
                        u64::from_le_bytes(b)
                    ),
                );
            }
        },
        Param::At(_) => {
            let table = crate::state::memory().read();
            match table.find(result) {
                Some((base, a)) => (base + a.size).saturating_sub(result),
                None => 0,
            }
        }
    };
    if result_len > 0 {
        tri!(add("randomResultAddr", result, result_len, Use::Write));
    }
    if !info.randomParaAddr.is_null() {
        let scratch = info.randomParaAddr as usize;
        tri!(add("randomParaAddr", scratch, 16, Use::Opaque));
        // The runtime copies the 16 parameter bytes there synchronously
        // (`SetRandomSqeCommonInfo`, `MemCopySync`).
        let mut bytes = [0u8; 16];
        for (i, (_, p)) in value_params.iter().enumerate() {
            if let Param::Value(b) = p {
                bytes[i * 8..i * 8 + 8].copy_from_slice(b);
            } else if let Param::At(addr) = p {
                bytes[i * 8..i * 8 + 8].copy_from_slice(&(*addr as u64).to_le_bytes());
            }
        }
        let table = crate::state::memory().read();
        if table
            .find(scratch)
            .is_some_and(|(base, a)| base + a.size >= scratch + 16)
        {
            // SAFETY: 16 bytes of a live allocation (checked above under the
            // same read lock that keeps it live).
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), scratch as *mut u8, 16) };
        }
    }
    let kernel = Arc::new(move || {
        // SAFETY: the task runs only once every declared range is checked
        // live, and the allocation table's read lock keeps them so
        // (`rt::stream`): the counter (16 bytes), each parameter given by
        // address (its size), and `result_len` bytes of the result.
        unsafe {
            run(
                elem,
                func,
                seed,
                num,
                counter,
                result,
                result_len,
                result_bytes,
            )
        }
    });
    enqueue(
        F,
        s,
        TaskKind::Op {
            api: F,
            ranges,
            kernel,
        },
    )
}

/// Generates the numbers when the stream reaches the task.
///
/// # Safety
///
/// The counter's 16 bytes, each parameter's bytes at its address, and
/// `result_len` bytes at `result` lie in live allocations for the call.
#[allow(clippy::too_many_arguments, reason = "the task's captured state")]
unsafe fn run(
    elem: Elem,
    func: Func,
    seed: Param,
    num: Param,
    counter: usize,
    result: usize,
    result_len: usize,
    result_bytes: impl Fn(u64) -> Option<usize>,
) -> Result<(), Error> {
    let fault = |msg: String| Error::new(ErrorKind::KernelFault, format!("{F}: {msg}"));
    // SAFETY: a seed given by address has its 8 bytes live (the caller's
    // contract).
    let seed = u64::from_le_bytes(unsafe { seed.bytes(8) });
    // SAFETY: as for the seed.
    let n = u64::from_le_bytes(unsafe { num.bytes(8) });
    let needed = result_bytes(n).ok_or_else(|| fault(format!("randomNum {n} is too large")))?;
    if needed > result_len {
        return Err(fault(format!(
            "randomNum {n} needs {needed} bytes at randomResultAddr; its allocation has {result_len}"
        )));
    }
    // SAFETY: a parameter given by address has its element's bytes live (the
    // caller's contract).
    let value = |p: Param| elem.decode(unsafe { p.bytes(elem.size()) });
    let mut state = [0u8; 8];
    // SAFETY: the counter's first 8 bytes (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(counter as *const u8, state.as_mut_ptr(), 8) };
    let offset = u64::from_le_bytes(state);
    let rng = Philox::new(seed, offset);
    // SAFETY: `needed` ≤ `result_len` bytes of a live allocation, borrowed by
    // nothing else while the task runs.
    let out = unsafe { std::slice::from_raw_parts_mut(result as *mut u8, needed) };
    let size = elem.size();
    match func {
        Func::Dropout { ratio } => {
            let p = value(ratio).as_f64();
            out.fill(0);
            for i in 0..n {
                if rng.uniforms(i)[0] >= p {
                    out[(i / 8) as usize] |= 1 << (i % 8);
                }
            }
        }
        Func::Uniform { min, max } => match (value(min), value(max)) {
            (Num::Int(lo), Num::Int(hi)) => {
                if hi <= lo {
                    return Err(fault(format!("the uniform range [{lo}, {hi}) is empty")));
                }
                let span = (hi - lo) as u128;
                for (i, slot) in out.chunks_exact_mut(size).enumerate() {
                    let w = rng.words(i as u64);
                    let r = (u128::from(w[0]) << 96)
                        | (u128::from(w[1]) << 64)
                        | (u128::from(w[2]) << 32)
                        | u128::from(w[3]);
                    elem.put_int(lo + (r % span) as i128, slot);
                }
            }
            (lo, hi) => {
                let (lo, hi) = (lo.as_f64(), hi.as_f64());
                if lo.partial_cmp(&hi) != Some(std::cmp::Ordering::Less) {
                    return Err(fault(format!("the uniform range [{lo}, {hi}) is empty")));
                }
                for (i, slot) in out.chunks_exact_mut(size).enumerate() {
                    let v = lo + rng.uniforms(i as u64)[0] * (hi - lo);
                    elem.put_float(v, slot);
                    // A value that rounds up to `hi` in a narrow type is `lo`.
                    let mut b = [0u8; 8];
                    b[..size].copy_from_slice(slot);
                    if elem.decode(b).as_f64() >= hi {
                        elem.put_float(lo, slot);
                    }
                }
            }
        },
        Func::Normal {
            mean,
            stddev,
            truncated,
        } => {
            let (mean, std) = (value(mean).as_f64(), value(stddev).as_f64());
            for (i, slot) in out.chunks_exact_mut(size).enumerate() {
                let [u1, u2] = rng.uniforms(i as u64);
                let z = if truncated {
                    truncated_normal(u1)
                } else {
                    // 1 − u1 is in (0, 1]: the logarithm is finite.
                    (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
                };
                elem.put_float(mean + std * z, slot);
            }
        }
    }
    let next = offset.wrapping_add(4).to_le_bytes();
    // SAFETY: the counter's first 8 bytes (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(next.as_ptr(), counter as *mut u8, 8) };
    Ok(())
}

/// The standard normal restricted to `[-2, 2]` at probability `u ∈ [0, 1)`:
/// the inverse of its distribution function, by bisection on `erf`.
fn truncated_normal(u: f64) -> f64 {
    let cdf = |x: f64| 0.5 * (1.0 + crate::ops::nn::erf(x / std::f64::consts::SQRT_2));
    let (a, b) = (cdf(-2.0), cdf(2.0));
    let target = a + u * (b - a);
    let (mut lo, mut hi) = (-2.0f64, 2.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::truncated_normal;

    #[test]
    fn the_truncated_normal_stays_within_two_and_is_symmetric() {
        assert!((truncated_normal(0.5)).abs() < 1e-12);
        assert!(truncated_normal(0.0) >= -2.0 && truncated_normal(0.0) < -1.99);
        assert!(truncated_normal(0.999_999) <= 2.0);
        assert!((truncated_normal(0.25) + truncated_normal(0.75)).abs() < 1e-9);
    }
}

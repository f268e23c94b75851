//! The HCCL C functions the simulator implements: root info, communicator
//! creation and queries, and every collective.
//!
//! Argument checks happen at the call, with HCCL's codes: a null pointer is
//! `HCCL_E_PTR`, an invalid value (a rank out of range, an unknown handle,
//! a buffer that is not device memory of the communicator's device, a
//! length that overflows) `HCCL_E_PARA`, a type or op the SoC does not
//! reduce `HCCL_E_NOT_SUPPORT`, a suspended communicator
//! `HCCL_E_SUSPENDING`. Each failure records a message starting with the
//! function's name, read with `aclGetRecentErrMsg` (where real CANN's error
//! manager also reports HCCL's EIxxxx errors).
//!
//! A collective with a count of 0 succeeds at once and does nothing (as in
//! HCCL). Otherwise it is queued on the stream and runs later on the
//! stream's worker; its failures are faults of the queued task, reported by
//! the next synchronisation of the stream (`ACL_ERROR_RT_FFTS_PLUS_TIMEOUT`,
//! 507048, for a peer that never came — the code real HCCL timeouts
//! surface as; `ACL_ERROR_RT_SUSPECT_REMOTE_ERROR`, 507057, for mismatched
//! calls and peers that failed or are gone; `ACL_ERROR_RT_SYS_DMA`, 507013,
//! for buffers freed too early); `HcclGetCommAsyncError` reports only
//! `HCCL_E_REMOTE` (a peer failed or is gone) and `HCCL_E_PARA` (ranks
//! called different collectives), as HCCL does.

#![allow(non_snake_case)]

use super::algo::{self, Coll, P2p};
use super::bootstrap;
use super::comm::{self, Comm, InUse, Options};
use super::mem::Mem;
use super::reduce;
use super::transport::Fail;
use super::wire::Root;
use crate::faults;
use crate::recent_error::fail;
use crate::rt::handles::Lookup;
use crate::rt::stream::{Stream, TaskKind};
use crate::state;
use acl_sys::{
    ACL_ERROR_RT_FFTS_PLUS_TIMEOUT, ACL_ERROR_RT_SUSPECT_REMOTE_ERROR, aclError, aclrtStream,
};
use hccl_sys::*;
use std::cell::RefCell;
use std::ffi::{c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `tri!(expr)`: the value of an `Ok`, or `return rc` for an `Err(rc)` —
/// the early return of a C export whose checks yield its `HcclResult`.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}
pub(super) use tri;

/// `check_injected!(F)`: returns the fault injected into `F` (see
/// [`crate::faults`]), if any — the first statement of every export.
macro_rules! check_injected {
    ($f:expr) => {
        if let Some(c) = $crate::hccl::exports::injected($f) {
            return c;
        }
    };
}
pub(super) use check_injected;

pub(super) fn injected(f: &str) -> Option<HcclResult> {
    faults::check(f).map(|c| c as HcclResult)
}

/// `HCCL_E_IN_STATUS`, of headers newer than `hccl-sys`'s (hicann/hcomm
/// `include/hccl/hccl_types.h`).
pub const HCCL_E_IN_STATUS: HcclResult = 1041;

/// The header's name of a code.
pub fn code_name(code: HcclResult) -> &'static str {
    match code {
        HCCL_SUCCESS => "HCCL_SUCCESS",
        HCCL_E_PARA => "HCCL_E_PARA",
        HCCL_E_PTR => "HCCL_E_PTR",
        HCCL_E_MEMORY => "HCCL_E_MEMORY",
        HCCL_E_INTERNAL => "HCCL_E_INTERNAL",
        HCCL_E_NOT_SUPPORT => "HCCL_E_NOT_SUPPORT",
        HCCL_E_NOT_FOUND => "HCCL_E_NOT_FOUND",
        HCCL_E_UNAVAIL => "HCCL_E_UNAVAIL",
        HCCL_E_SYSCALL => "HCCL_E_SYSCALL",
        HCCL_E_TIMEOUT => "HCCL_E_TIMEOUT",
        HCCL_E_OPEN_FILE_FAILURE => "HCCL_E_OPEN_FILE_FAILURE",
        HCCL_E_TCP_CONNECT => "HCCL_E_TCP_CONNECT",
        HCCL_E_ROCE_CONNECT => "HCCL_E_ROCE_CONNECT",
        HCCL_E_TCP_TRANSFER => "HCCL_E_TCP_TRANSFER",
        HCCL_E_ROCE_TRANSFER => "HCCL_E_ROCE_TRANSFER",
        HCCL_E_RUNTIME => "HCCL_E_RUNTIME",
        HCCL_E_DRV => "HCCL_E_DRV",
        HCCL_E_PROFILING => "HCCL_E_PROFILING",
        HCCL_E_CCE => "HCCL_E_CCE",
        HCCL_E_NETWORK => "HCCL_E_NETWORK",
        HCCL_E_AGAIN => "HCCL_E_AGAIN",
        HCCL_E_REMOTE => "HCCL_E_REMOTE",
        HCCL_E_SUSPENDING => "HCCL_E_SUSPENDING",
        HCCL_E_OPRETRY_FAIL => "HCCL_E_OPRETRY_FAIL",
        HCCL_E_OOM => "HCCL_E_OOM",
        HCCL_E_IN_STATUS => "HCCL_E_IN_STATUS",
        _ => "HCCL_E_RESERVED",
    }
}

/// The stream fault code of a failed HCCL task.
fn acl_code(f: &Fail) -> aclError {
    if f.memory {
        crate::rt::stream::MEMORY_FAULT as aclError
    } else if f.code == HCCL_E_TIMEOUT {
        ACL_ERROR_RT_FFTS_PLUS_TIMEOUT as aclError
    } else {
        ACL_ERROR_RT_SUSPECT_REMOTE_ERROR as aclError
    }
}

pub(super) fn fail_with(function: &str, f: Fail) -> HcclResult {
    fail(
        f.code,
        format!("{function}: {}: {}", code_name(f.code), f.msg),
    )
}

pub(super) fn para(function: &str, msg: impl std::fmt::Display) -> HcclResult {
    fail(HCCL_E_PARA, format!("{function}: {msg}"))
}

pub(super) fn null(function: &str, what: &str) -> HcclResult {
    fail(HCCL_E_PTR, format!("{function}: {what} is null"))
}

/// The calling thread's current device: `HCCL_E_RUNTIME` without one, as
/// HCCL's `hrtGetDeviceRefresh` (`aclrtGetDevice`) reports (hicann/hcomm
/// `src/legacy/ascend910/platform/common/adapter/adapter_rts.cc`).
pub(super) fn current_device(function: &str) -> Result<u32, HcclResult> {
    state::current_device().ok_or_else(|| {
        fail(
            HCCL_E_RUNTIME,
            format!(
                "{function}: no device is set on this thread (HCCL reads it with aclrtGetDevice); \
                 call aclrtSetDevice first"
            ),
        )
    })
}

fn stream_arg(function: &str, h: aclrtStream, comm: &Comm) -> Result<Arc<Stream>, HcclResult> {
    if h.is_null() {
        return Err(fail(
            HCCL_E_PTR,
            format!(
                "{function}: stream is null; HCCL needs a stream created with aclrtCreateStream \
                 (not the default stream)"
            ),
        ));
    }
    let s = match crate::rt::stream::lookup(h as usize) {
        Lookup::Live(s) => s,
        bad => {
            return Err(para(
                function,
                crate::rt::handles::describe_bad("stream", h as usize, &bad),
            ));
        }
    };
    if s.device != comm.device {
        return Err(para(
            function,
            format!(
                "{} is not on device {}, where rank {} of the communicator runs",
                s.label(),
                comm.device,
                comm.rank
            ),
        ));
    }
    if s.is_non_host() {
        return Err(fail(
            HCCL_E_NOT_SUPPORT,
            format!(
                "{function}: {} is a persistent, CPU-schedule or device-only stream; cann-sim runs \
                 collectives on ordinary streams only",
                s.label()
            ),
        ));
    }
    Ok(s)
}

fn not_suspended(function: &str, comm: &Comm) -> Result<(), HcclResult> {
    if comm.suspended.load(Ordering::Acquire) {
        return Err(fail(
            HCCL_E_SUSPENDING,
            format!(
                "{function}: the communicator is suspended (HcclCommSuspend); resume it with \
                 HcclCommResume first"
            ),
        ));
    }
    Ok(())
}

fn bytes_of(function: &str, count: u64, size: usize) -> Result<usize, HcclResult> {
    usize::try_from(count)
        .ok()
        .and_then(|c| c.checked_mul(size))
        .ok_or_else(|| {
            para(
                function,
                format!("count {count} overflows the address space"),
            )
        })
}

fn mem(
    function: &str,
    role: &'static str,
    ptr: *const c_void,
    bytes: usize,
    comm: &Comm,
    align: usize,
) -> Result<Mem, HcclResult> {
    Mem::arg(function, role, ptr, bytes, comm.device, align)
        .map_err(|(code, msg)| fail(code, format!("{function}: {msg}")))
}

/// The communicator options of `config` (null: the defaults).
///
/// # Safety
///
/// `config` is null or a readable `HcclCommConfig`.
/// The process's HCCL environment (read once; see [`super::env`]).
fn env_arg(f: &str) -> Result<(), HcclResult> {
    super::env::get().map(drop).map_err(|e| fail_with(f, e))
}

unsafe fn options_arg(f: &str, config: *const HcclCommConfig) -> Result<Options, HcclResult> {
    // SAFETY: the caller's contract.
    unsafe { Options::read(config) }.map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))
}

/// Stores the handle of a newly made communicator in `*out`, or reports
/// why it could not be made.
///
/// # Safety
///
/// `out` is non-null and writable.
unsafe fn register_out(f: &str, made: Result<Comm, Fail>, out: *mut HcclComm) -> HcclResult {
    match made {
        Ok(c) => {
            // SAFETY: the caller's contract.
            unsafe { *out = comm::register(c) };
            HCCL_SUCCESS
        }
        Err(e) => fail_with(f, e),
    }
}

/// Queues `work` on `s`; a failure is recorded in the communicator (and
/// told to its other ranks) and becomes a fault of the task. `mem` is what
/// it reads and writes, for the check mode (empty when the check is off).
fn enqueue(
    function: &'static str,
    s: &Stream,
    comm: Arc<Comm>,
    seq: u64,
    mem: Vec<crate::check::Access>,
    work: impl FnOnce(&Comm, &AtomicBool) -> Result<(), Fail> + Send + 'static,
) -> HcclResult {
    let run = Box::new(move |stop: &AtomicBool| match work(&comm, stop) {
        Ok(()) => Ok(()),
        Err(f) => {
            comm.fail(seq, &f);
            Err((
                acl_code(&f),
                format!("{} ({}): {}", code_name(f.code), f.code, f.msg),
            ))
        }
    });
    match s.enqueue(|_| TaskKind::Hccl {
        api: function,
        run,
        mem,
    }) {
        Ok(_) => HCCL_SUCCESS,
        Err((_, msg)) => fail(HCCL_E_RUNTIME, format!("{function}: {msg}")),
    }
}

fn enqueue_coll(function: &'static str, s: &Stream, comm: Arc<Comm>, coll: Coll) -> HcclResult {
    let seq = comm.next_seq();
    let mem = if crate::check::enabled() {
        coll.accesses(comm.rank)
    } else {
        Vec::new()
    };
    enqueue(function, s, comm, seq, mem, move |c, stop| {
        algo::run(c, seq, &coll, stop)
    })
}

/// What point-to-point `items` read and write, for the check mode.
fn p2p_mem(items: &[P2p]) -> Vec<crate::check::Access> {
    if crate::check::enabled() {
        items.iter().map(P2p::access).collect()
    } else {
        Vec::new()
    }
}

/// Reads `n` u64 values from a C array.
///
/// # Safety
///
/// `p` is null or valid for `n` reads of u64.
unsafe fn u64s(
    function: &str,
    what: &str,
    p: *const c_void,
    n: usize,
) -> Result<Vec<u64>, HcclResult> {
    if p.is_null() {
        return Err(null(function, what));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<u64>(), n) }.to_vec())
}

/// The body of a query export: the injected fault, a null `out`, the
/// communicator, then `*out = get(comm)`.
///
/// # Safety
///
/// `out` is null or writable.
unsafe fn query<T>(
    f: &str,
    comm: HcclComm,
    out: *mut T,
    what: &str,
    get: impl FnOnce(&Comm) -> T,
) -> HcclResult {
    check_injected!(f);
    if out.is_null() {
        return null(f, what);
    }
    let c = tri!(comm::lookup(f, comm));
    // SAFETY: checked non-null; the caller's contract.
    unsafe { *out = get(&c) };
    HCCL_SUCCESS
}

/// Sets or clears a communicator's suspension (`HcclCommSuspend`,
/// `HcclCommResume`).
fn set_suspended(f: &str, comm: HcclComm, suspended: bool) -> HcclResult {
    check_injected!(f);
    let c = tri!(comm::lookup(f, comm));
    c.suspended.store(suspended, Ordering::Release);
    HCCL_SUCCESS
}

// ---- root info and communicators ---------------------------------------

/// `HcclGetRootInfo`: starts this process's root server (see
/// `bootstrap`) and describes it in `rootInfo`.
///
/// # Safety
///
/// `rootInfo` is null or valid for writing an `HcclRootInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfo(rootInfo: *mut HcclRootInfo) -> HcclResult {
    // SAFETY: forwarded.
    unsafe { get_root_info("HcclGetRootInfo", rootInfo) }
}

/// The body of `HcclGetRootInfo` and `HcclGetRootInfoScalable`, in HCCL's
/// order (hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
/// `HcclGetRootInfo`): the current device (`hrtGetDeviceRefresh`:
/// `HCCL_E_RUNTIME` without one), the pointer, the environment
/// (`InitExternalInput`: `HCCL_E_PARA` for a bad variable), then the root
/// server on the device's port.
unsafe fn get_root_info(F: &str, rootInfo: *mut HcclRootInfo) -> HcclResult {
    check_injected!(F);
    let device = tri!(current_device(F));
    if rootInfo.is_null() {
        return null(F, "rootInfo");
    }
    tri!(env_arg(F));
    match bootstrap::start_root_server(device) {
        Ok(root) => {
            // SAFETY: checked non-null; the caller's contract.
            root.encode(unsafe { &mut *rootInfo });
            HCCL_SUCCESS
        }
        Err(f) => fail_with(F, f),
    }
}

/// `HcclCommInitRootInfo`: joins the communicator of `rootInfo`; blocks
/// until every rank has.
///
/// # Safety
///
/// `rootInfo` is null or a readable `HcclRootInfo`; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfo(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_root_info(
            "HcclCommInitRootInfo",
            nRanks,
            rootInfo,
            rank,
            std::ptr::null(),
            comm,
        )
    }
}

/// `HcclCommInitRootInfoConfig`: as `HcclCommInitRootInfo`, with options.
///
/// # Safety
///
/// As `HcclCommInitRootInfo`; `config` null or a readable `HcclCommConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoConfig(
    nRanks: u32,
    rootInfo: *const HcclRootInfo,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_root_info(
            "HcclCommInitRootInfoConfig",
            nRanks,
            rootInfo,
            rank,
            config,
            comm,
        )
    }
}

unsafe fn init_root_info(
    f: &str,
    n: u32,
    root: *const HcclRootInfo,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded; one root info.
    unsafe { init_root_infos(f, n, root, 1, rank, config, comm) }
}

/// The common body of the root-info initialisations: `roots` points to
/// `nroots` root infos.
unsafe fn init_root_infos(
    f: &str,
    n: u32,
    roots: *const HcclRootInfo,
    nroots: u32,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    check_injected!(f);
    if roots.is_null() {
        return null(
            f,
            if nroots == 1 {
                "rootInfo"
            } else {
                "rootInfoList"
            },
        );
    }
    if comm.is_null() {
        return null(f, "comm");
    }
    if n == 0 {
        return para(f, "nRanks is 0");
    }
    if rank >= n {
        return para(f, format!("rank {rank} is out of range for nRanks {n}"));
    }
    if nroots == 0 || nroots > n {
        return para(f, format!("nRoot {nroots} is not in 1..={n} (nRanks)"));
    }
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(f, config) });
    let device = tri!(current_device(f));
    tri!(env_arg(f));
    let mut decoded = Vec::with_capacity(nroots as usize);
    for k in 0..nroots as usize {
        // SAFETY: checked non-null; the caller's contract: `nroots` root infos.
        match Root::decode(unsafe { &*roots.add(k) }) {
            Ok(r) if decoded.iter().any(|d: &Root| d.uid == r.uid) => {
                return para(f, format!("root info {k} repeats an earlier one"));
            }
            Ok(r) => decoded.push(r),
            Err(e) if nroots == 1 => return para(f, format!("rootInfo: {e}")),
            Err(e) => return para(f, format!("rootInfoList[{k}]: {e}")),
        }
    }
    let made = bootstrap::init_roots(n, &decoded, rank, device, options);
    // SAFETY: checked non-null.
    unsafe { register_out(f, made, comm) }
}

/// `HcclGetRootInfoScalable`: a root info for [`HcclCommInitRootInfoScalable`]
/// (each call starts another root server, as `HcclGetRootInfo` does).
///
/// # Safety
///
/// `rootInfo` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRootInfoScalable(rootInfo: *mut HcclRootInfo) -> HcclResult {
    // SAFETY: forwarded.
    unsafe { get_root_info("HcclGetRootInfoScalable", rootInfo) }
}

/// `HcclCommInitRootInfoScalable`: joins the communicator of `nRoot` root
/// infos (identical on every rank); `nExtRoot` is reserved and must be 0.
///
/// # Safety
///
/// `rootInfoList` null or `nRoot` readable root infos; `config` null or a
/// readable `HcclCommConfig`; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitRootInfoScalable(
    nRanks: u32,
    nRoot: u32,
    rootInfoList: *const HcclRootInfo,
    rank: u32,
    nExtRoot: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCommInitRootInfoScalable";
    if nExtRoot != 0 {
        return para(
            F,
            format!("nExtRoot is {nExtRoot}; it is reserved and must be 0"),
        );
    }
    // SAFETY: forwarded.
    unsafe { init_root_infos(F, nRanks, rootInfoList, nRoot, rank, config, comm) }
}

/// `HcclCommInitClusterInfo`: joins the communicator of a rank table file.
///
/// # Safety
///
/// `clusterInfo` is null or a NUL-terminated path; `comm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfo(
    clusterInfo: *const c_char,
    rank: u32,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_cluster(
            "HcclCommInitClusterInfo",
            clusterInfo,
            rank,
            std::ptr::null(),
            comm,
        )
    }
}

/// `HcclCommInitClusterInfoConfig`: as `HcclCommInitClusterInfo`, with options.
///
/// # Safety
///
/// As `HcclCommInitClusterInfo`; `config` null or a readable `HcclCommConfig`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitClusterInfoConfig(
    clusterInfo: *const c_char,
    rank: u32,
    config: *mut HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    // SAFETY: forwarded.
    unsafe {
        init_cluster(
            "HcclCommInitClusterInfoConfig",
            clusterInfo,
            rank,
            config,
            comm,
        )
    }
}

unsafe fn init_cluster(
    f: &str,
    path: *const c_char,
    rank: u32,
    config: *const HcclCommConfig,
    comm: *mut HcclComm,
) -> HcclResult {
    check_injected!(f);
    // HCCL's order (hicann/hcomm
    // `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
    // `HcclCommInitClusterInfo(Config)`): the device, the pointers, the
    // environment, the config, then the file.
    let device = tri!(current_device(f));
    if path.is_null() {
        return null(f, "clusterInfo");
    }
    if comm.is_null() {
        return null(f, "comm");
    }
    tri!(env_arg(f));
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(f, config) });
    // SAFETY: the caller's contract: a NUL-terminated path.
    let path = unsafe { std::ffi::CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            return fail(
                HCCL_E_OPEN_FILE_FAILURE,
                format!("{f}: cannot read the rank table {path}: {e}"),
            );
        }
    };
    let (ranks, fp) = match super::ranktable::read(&text) {
        Ok(t) => t,
        Err(e) => return para(f, format!("rank table {path}: {e}")),
    };
    if rank as usize >= ranks.len() {
        return para(
            f,
            format!(
                "rank {rank} is not in the rank table {path} ({} ranks)",
                ranks.len()
            ),
        );
    }
    let made = bootstrap::init_table(&ranks, fp, rank, device, options);
    // SAFETY: checked non-null.
    unsafe { register_out(f, made, comm) }
}

/// `HcclCommInitAll`: one communicator per device of this process,
/// `devices[0]` being rank 0.
///
/// # Safety
///
/// `devices` null or valid for `ndev` reads; `comms` null or for `ndev` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommInitAll(
    ndev: u32,
    devices: *mut i32,
    comms: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCommInitAll";
    check_injected!(F);
    if devices.is_null() {
        return null(F, "devices");
    }
    if comms.is_null() {
        return null(F, "comms");
    }
    if ndev == 0 {
        return para(F, "ndev is 0");
    }
    // SAFETY: the caller's contract.
    let devs = unsafe { std::slice::from_raw_parts(devices, ndev as usize) }.to_vec();
    let count = crate::config::get().map_or(0, |c| c.device_count());
    for (i, &d) in devs.iter().enumerate() {
        if d < 0 || d as u32 >= count {
            return para(
                F,
                format!("devices[{i}] = {d} is not a device (0..{count})"),
            );
        }
        if devs[..i].contains(&d) {
            return para(F, format!("device {d} appears twice in devices"));
        }
    }
    tri!(env_arg(F));
    let root = match bootstrap::start_root_server(devs[0] as u32) {
        Ok(r) => r,
        Err(e) => return fail_with(F, e),
    };
    let results: Vec<Result<Comm, Fail>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devs
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                scope.spawn(move || {
                    bootstrap::init_root(ndev, root, i as u32, d as u32, Options::default())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Fail::new(HCCL_E_INTERNAL, "a rank's init thread panicked"))
                })
            })
            .collect()
    });
    let mut made = Vec::new();
    for r in results {
        match r {
            Ok(c) => made.push(c),
            Err(e) => return fail_with(F, e),
        }
    }
    for (i, c) in made.into_iter().enumerate() {
        // SAFETY: `comms` is valid for `ndev` writes (the caller's contract).
        unsafe { *comms.add(i) = comm::register(c) };
    }
    HCCL_SUCCESS
}

/// `HcclCreateSubCommConfig`: a communicator of some ranks of `*comm`.
///
/// # Safety
///
/// `comm` null or a readable handle pointer; `rankIds` null or valid for
/// `rankNum` reads; `config` null or readable; `subComm` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCreateSubCommConfig(
    comm: *mut HcclComm,
    rankNum: u32,
    rankIds: *mut u32,
    subCommId: u64,
    subCommRankId: u32,
    config: *mut HcclCommConfig,
    subComm: *mut HcclComm,
) -> HcclResult {
    const F: &str = "HcclCreateSubCommConfig";
    check_injected!(F);
    if comm.is_null() {
        return null(F, "comm");
    }
    if rankIds.is_null() {
        return null(F, "rankIds");
    }
    if subComm.is_null() {
        return null(F, "subComm");
    }
    // SAFETY: checked non-null; the caller's contract.
    let parent = tri!(comm::lookup(F, unsafe { *comm }));
    if rankNum == 0 || rankNum > parent.nranks {
        return para(
            F,
            format!(
                "rankNum {rankNum} must be 1..={} (the parent's size)",
                parent.nranks
            ),
        );
    }
    if subCommRankId >= rankNum {
        return para(
            F,
            format!("subCommRankId {subCommRankId} is not below rankNum {rankNum}"),
        );
    }
    // SAFETY: the caller's contract.
    let ids = unsafe { std::slice::from_raw_parts(rankIds, rankNum as usize) }.to_vec();
    for (i, &r) in ids.iter().enumerate() {
        if r >= parent.nranks {
            return para(F, format!("rankIds[{i}] = {r} is not a rank of the parent"));
        }
        if ids[..i].contains(&r) {
            return para(F, format!("rank {r} appears twice in rankIds"));
        }
    }
    if ids[subCommRankId as usize] != parent.rank {
        return para(
            F,
            format!(
                "rankIds[subCommRankId = {subCommRankId}] is {}, but this is rank {} of the parent",
                ids[subCommRankId as usize], parent.rank
            ),
        );
    }
    // SAFETY: the caller's contract.
    let options = tri!(unsafe { options_arg(F, config) });
    parent.next_sub();
    let made = bootstrap::sub_comm(&parent, &ids, subCommId, subCommRankId, options);
    // SAFETY: checked non-null.
    unsafe { register_out(F, made, subComm) }
}

/// `HcclCommDestroy`, in HCCL's order (hicann/hcomm
/// `src/legacy/ascend910/framework/op_base/src/op_base.cc`): the current
/// device (`HcclDeviceRefresh`: `HCCL_E_RUNTIME` without one); a null
/// communicator is success ("An empty comm given, skip destroy"); one
/// another thread is calling into is `HCCL_E_AGAIN`; an unknown one
/// `HCCL_E_PARA` ("comm is not exist"). Queued collectives still run: the
/// connections close after the last.
///
/// # Safety
///
/// Any value may be passed; handles are looked up, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommDestroy(comm: HcclComm) -> HcclResult {
    const F: &str = "HcclCommDestroy";
    check_injected!(F);
    tri!(current_device(F));
    if comm.is_null() {
        return HCCL_SUCCESS;
    }
    tri!(comm::destroy(F, comm));
    HCCL_SUCCESS
}

/// `HcclGetRankId`.
///
/// # Safety
///
/// `rank` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankId(comm: HcclComm, rank: *mut u32) -> HcclResult {
    // SAFETY: the caller's contract.
    unsafe { query("HcclGetRankId", comm, rank, "rank", |c| c.rank) }
}

/// `HcclGetRankSize`.
///
/// # Safety
///
/// `rankSize` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetRankSize(comm: HcclComm, rankSize: *mut u32) -> HcclResult {
    // SAFETY: the caller's contract.
    unsafe { query("HcclGetRankSize", comm, rankSize, "rankSize", |c| c.nranks) }
}

/// `HcclGetCommName`: the name, NUL-terminated, into a buffer of
/// `COMM_NAME_MAX_LENGTH` (128) bytes.
///
/// # Safety
///
/// `commName` null or writable for 128 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommName(comm: HcclComm, commName: *mut c_char) -> HcclResult {
    const F: &str = "HcclGetCommName";
    check_injected!(F);
    if commName.is_null() {
        return null(F, "commName");
    }
    let c = tri!(comm::lookup(F, comm));
    let bytes = c.name.as_bytes();
    let n = bytes.len().min(COMM_NAME_MAX_LENGTH as usize - 1);
    // SAFETY: the caller's contract: 128 writable bytes; n + 1 <= 128.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), commName, n);
        *commName.add(n) = 0;
    }
    HCCL_SUCCESS
}

/// `HcclGetCommAsyncError`: `HCCL_SUCCESS` in `asyncError`, or
/// `HCCL_E_REMOTE` for a peer that failed or is gone, `HCCL_E_PARA` for a
/// collective the ranks called differently (see [`Comm::async_error`]);
/// timeouts are reported by the stream's synchronisation only.
///
/// # Safety
///
/// `asyncError` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclGetCommAsyncError(
    comm: HcclComm,
    asyncError: *mut HcclResult,
) -> HcclResult {
    const F: &str = "HcclGetCommAsyncError";
    // SAFETY: the caller's contract.
    unsafe {
        query(F, comm, asyncError, "asyncError", |c| {
            let e = c.async_error();
            if let Some(f) = &e {
                crate::recent_error::record(format!(
                    "{F}: the communicator failed: {}: {}",
                    code_name(f.code),
                    f.msg
                ));
            }
            e.map_or(HCCL_SUCCESS, |f| f.code)
        })
    }
}

/// `HcclGetErrorString`: the code's description (a static string).
#[unsafe(no_mangle)]
pub extern "C" fn HcclGetErrorString(code: HcclResult) -> *const c_char {
    let s: &'static std::ffi::CStr = match code {
        HCCL_SUCCESS => c"success",
        HCCL_E_PARA => c"parameter error",
        HCCL_E_PTR => c"empty pointer",
        HCCL_E_MEMORY => c"memory error",
        HCCL_E_INTERNAL => c"internal error",
        HCCL_E_NOT_SUPPORT => c"not support feature",
        HCCL_E_NOT_FOUND => c"not found specific resource",
        HCCL_E_UNAVAIL => c"resource unavailable",
        HCCL_E_SYSCALL => c"call system interface error",
        HCCL_E_TIMEOUT => c"timeout",
        HCCL_E_OPEN_FILE_FAILURE => c"open file fail",
        HCCL_E_TCP_CONNECT => c"tcp connect fail",
        HCCL_E_ROCE_CONNECT => c"roce connect fail",
        HCCL_E_TCP_TRANSFER => c"tcp transfer fail",
        HCCL_E_ROCE_TRANSFER => c"roce transfer fail",
        HCCL_E_RUNTIME => c"call runtime api fail",
        HCCL_E_DRV => c"call driver api fail",
        HCCL_E_PROFILING => c"call profiling api fail",
        HCCL_E_CCE => c"call cce api fail",
        HCCL_E_NETWORK => c"call network api fail",
        HCCL_E_AGAIN => c"try again",
        HCCL_E_REMOTE => c"error cqe",
        HCCL_E_SUSPENDING => c"error communicator suspending",
        HCCL_E_OPRETRY_FAIL => c"retry constraint",
        HCCL_E_OOM => c"out of memory",
        HCCL_E_IN_STATUS => c"The error information is in the status.",
        _ => c"unknown error",
    };
    s.as_ptr()
}

/// `HcclCommSuspend`: collectives are refused (`HCCL_E_SUSPENDING`) until
/// `HcclCommResume`.
///
/// # Safety
///
/// Any value may be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommSuspend(comm: HcclComm) -> HcclResult {
    set_suspended("HcclCommSuspend", comm, true)
}

/// `HcclCommResume`.
///
/// # Safety
///
/// Any value may be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclCommResume(comm: HcclComm) -> HcclResult {
    set_suspended("HcclCommResume", comm, false)
}

// ---- collectives ---------------------------------------------------------

/// The checks every collective starts with: the communicator, the stream,
/// not suspended. The communicator is in use (`HcclCommDestroy` from
/// another thread gets `HCCL_E_AGAIN`) until the returned [`InUse`] drops,
/// at the end of the call, as HCCL's `StateGuard<hcclComm, HcclCommState>`
/// marks it `INUSE` for the host-side part of every collective, send and
/// receive (hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
/// `op_base_host.cc`); queued work that has not run yet does not count.
fn common(
    f: &str,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<(Arc<Comm>, Arc<Stream>, InUse), HcclResult> {
    let c = comm::lookup(f, comm)?;
    let busy = c.enter();
    let s = stream_arg(f, stream, &c)?;
    not_suspended(f, &c)?;
    Ok((c, s, busy))
}

fn type_arg(f: &str, dt: HcclDataType) -> Result<usize, HcclResult> {
    reduce::check_type(dt).map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))
}

fn reduce_arg(f: &str, dt: HcclDataType, op: HcclReduceOp) -> Result<usize, HcclResult> {
    reduce::check_reduce(dt, op).map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))
}

/// The prologue of a collective: the injected fault; a `count` of 0
/// (`Some(0)`) succeeds at once, as `Err(HCCL_SUCCESS)`; the data type (and
/// with `op`, the reduction); then the checks of [`common`]. Yields the
/// element size, the communicator and the stream.
fn begin(
    f: &str,
    count: Option<u64>,
    dt: HcclDataType,
    op: Option<HcclReduceOp>,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<(usize, Arc<Comm>, Arc<Stream>, InUse), HcclResult> {
    if let Some(c) = injected(f) {
        return Err(c);
    }
    if count == Some(0) {
        return Err(HCCL_SUCCESS);
    }
    let size = match op {
        Some(op) => reduce_arg(f, dt, op)?,
        None => type_arg(f, dt)?,
    };
    let (c, s, busy) = common(f, comm, stream)?;
    Ok((size, c, s, busy))
}

/// A buffer argument of `count` elements of `size` bytes: the length
/// ([`bytes_of`]), then the memory ([`mem`]).
fn buf_arg(
    f: &str,
    role: &'static str,
    ptr: *const c_void,
    count: u64,
    size: usize,
    c: &Comm,
) -> Result<Mem, HcclResult> {
    mem(f, role, ptr, bytes_of(f, count, size)?, c, size)
}

/// Reads the per-rank counts and displacements of a V collective, checks
/// this rank's count against `own` (named `own_name`), and returns them with
/// their extent ([`v_extent`]).
///
/// # Safety
///
/// `counts` and `displs` are null or valid for ranks u64 reads.
unsafe fn v_args(
    f: &str,
    c: &Comm,
    (counts_name, counts): (&str, *const c_void),
    (displs_name, displs): (&str, *const c_void),
    (own_name, own): (&str, u64),
) -> Result<(Vec<u64>, Vec<u64>, u64), HcclResult> {
    let n = c.nranks as usize;
    // SAFETY: the caller's contract.
    let counts = unsafe { u64s(f, counts_name, counts, n) }?;
    // SAFETY: as above.
    let displs = unsafe { u64s(f, displs_name, displs, n) }?;
    let mine = counts[c.rank as usize];
    if mine != own {
        return Err(para(
            f,
            format!(
                "{own_name} {own} differs from {counts_name}[{}] = {mine}",
                c.rank
            ),
        ));
    }
    let extent = v_extent(f, &format!("{counts_name}/{displs_name}"), &counts, &displs)?;
    Ok((counts, displs, extent))
}

fn root_arg(f: &str, root: u32, c: &Comm) -> Result<(), HcclResult> {
    if root >= c.nranks {
        return Err(para(
            f,
            format!(
                "root {root} is not a rank of the communicator (0..{})",
                c.nranks
            ),
        ));
    }
    Ok(())
}

/// `HcclAllReduce`.
///
/// # Safety
///
/// Pointers are validated against the allocation table, not dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAllReduce";
    let (size, c, s, _busy) = tri!(begin(F, Some(count), dataType, Some(op), comm, stream));
    let send = tri!(buf_arg(F, "sendBuf", sendBuf, count, size, &c));
    let recv = tri!(buf_arg(F, "recvBuf", recvBuf, count, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::AllReduce {
            send,
            recv,
            count,
            dt: dataType,
            op,
        },
    )
}

/// `HcclBroadcast`.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBroadcast(
    buf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclBroadcast";
    let (size, c, s, _busy) = tri!(begin(F, Some(count), dataType, None, comm, stream));
    tri!(root_arg(F, root, &c));
    let buf = tri!(buf_arg(F, "buf", buf, count, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::Broadcast {
            buf,
            count,
            dt: dataType,
            root,
        },
    )
}

/// `HcclReduce`: `recvBuf` is only used (and checked) on the root.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduce(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclReduce";
    let (size, c, s, _busy) = tri!(begin(F, Some(count), dataType, Some(op), comm, stream));
    tri!(root_arg(F, root, &c));
    let send = tri!(buf_arg(F, "sendBuf", sendBuf, count, size, &c));
    let recv_count = if c.rank == root { count } else { 0 };
    let recv = tri!(buf_arg(F, "recvBuf", recvBuf, recv_count, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::Reduce {
            send,
            recv,
            count,
            dt: dataType,
            op,
            root,
        },
    )
}

/// `HcclAllGather`: `recvBuf` holds `sendCount` × ranks elements.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGather(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    sendCount: u64,
    dataType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAllGather";
    let (size, c, s, _busy) = tri!(begin(F, Some(sendCount), dataType, None, comm, stream));
    let bytes = tri!(bytes_of(F, sendCount, size));
    let total = tri!(bytes_of(
        F,
        sendCount.saturating_mul(u64::from(c.nranks)),
        size
    ));
    let send = tri!(mem(F, "sendBuf", sendBuf, bytes, &c, size));
    let recv = tri!(mem(F, "recvBuf", recvBuf, total, &c, size));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::AllGather {
            send,
            recv,
            count: sendCount,
            dt: dataType,
        },
    )
}

/// The extent in elements of the blocks `counts`/`displs` place, checking
/// that they do not overlap.
fn v_extent(f: &str, what: &str, counts: &[u64], displs: &[u64]) -> Result<u64, HcclResult> {
    let mut spans: Vec<(u64, u64, usize)> = Vec::new();
    for (i, (&c, &d)) in counts.iter().zip(displs).enumerate() {
        let end = d
            .checked_add(c)
            .ok_or_else(|| para(f, format!("{what}[{i}]: displacement + count overflows")))?;
        if c > 0 {
            spans.push((d, end, i));
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(para(
                f,
                format!(
                    "{what}: the blocks of ranks {} and {} overlap",
                    w[0].2, w[1].2
                ),
            ));
        }
    }
    Ok(spans.iter().map(|s| s.1).max().unwrap_or(0))
}

/// `HcclAllGatherV`: rank `i`'s `sendCount` elements go to
/// `recvBuf[recvDispls[i]..][..recvCounts[i]]` on every rank.
///
/// # Safety
///
/// As `HcclAllReduce`; `recvCounts` and `recvDispls` valid for ranks u64 reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAllGatherV(
    sendBuf: *mut c_void,
    sendCount: u64,
    recvBuf: *mut c_void,
    recvCounts: *const c_void,
    recvDispls: *const c_void,
    dataType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAllGatherV";
    let (size, c, s, _busy) = tri!(begin(F, None, dataType, None, comm, stream));
    // SAFETY: the caller's contract.
    let (counts, displs, extent) = tri!(unsafe {
        v_args(
            F,
            &c,
            ("recvCounts", recvCounts),
            ("recvDispls", recvDispls),
            ("sendCount", sendCount),
        )
    });
    if extent == 0 {
        return HCCL_SUCCESS;
    }
    let send = tri!(buf_arg(F, "sendBuf", sendBuf, sendCount, size, &c));
    let recv = tri!(buf_arg(F, "recvBuf", recvBuf, extent, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::AllGatherV {
            send,
            recv,
            counts,
            displs,
            dt: dataType,
        },
    )
}

/// `HcclReduceScatter`: `sendBuf` holds `recvCount` × ranks elements.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclReduceScatter";
    let (size, c, s, _busy) = tri!(begin(F, Some(recvCount), dataType, Some(op), comm, stream));
    let bytes = tri!(bytes_of(F, recvCount, size));
    let total = tri!(bytes_of(
        F,
        recvCount.saturating_mul(u64::from(c.nranks)),
        size
    ));
    let send = tri!(mem(F, "sendBuf", sendBuf, total, &c, size));
    let recv = tri!(mem(F, "recvBuf", recvBuf, bytes, &c, size));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::ReduceScatter {
            send,
            recv,
            count: recvCount,
            dt: dataType,
            op,
        },
    )
}

/// `HcclReduceScatterV`: block `i` of `sendBuf` (`sendCounts[i]` elements at
/// `sendDispls[i]`) is reduced over the ranks into rank `i`'s `recvBuf`.
///
/// # Safety
///
/// As `HcclAllGatherV`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclReduceScatterV(
    sendBuf: *mut c_void,
    sendCounts: *const c_void,
    sendDispls: *const c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclReduceScatterV";
    let (size, c, s, _busy) = tri!(begin(F, None, dataType, Some(op), comm, stream));
    // SAFETY: the caller's contract.
    let (counts, displs, extent) = tri!(unsafe {
        v_args(
            F,
            &c,
            ("sendCounts", sendCounts),
            ("sendDispls", sendDispls),
            ("recvCount", recvCount),
        )
    });
    if extent == 0 {
        return HCCL_SUCCESS;
    }
    let send = tri!(buf_arg(F, "sendBuf", sendBuf, extent, size, &c));
    let recv = tri!(buf_arg(F, "recvBuf", recvBuf, recvCount, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::ReduceScatterV {
            send,
            recv,
            counts,
            displs,
            dt: dataType,
            op,
        },
    )
}

/// `HcclScatter`: the root's `sendBuf` (`recvCount` × ranks elements, only
/// used and checked on the root) is split over the ranks' `recvBuf`.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclScatter(
    sendBuf: *mut c_void,
    recvBuf: *mut c_void,
    recvCount: u64,
    dataType: HcclDataType,
    root: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclScatter";
    let (size, c, s, _busy) = tri!(begin(F, Some(recvCount), dataType, None, comm, stream));
    tri!(root_arg(F, root, &c));
    let bytes = tri!(bytes_of(F, recvCount, size));
    let total = if c.rank == root {
        tri!(bytes_of(
            F,
            recvCount.saturating_mul(u64::from(c.nranks)),
            size
        ))
    } else {
        0
    };
    let send = tri!(mem(F, "sendBuf", sendBuf, total, &c, size));
    let recv = tri!(mem(F, "recvBuf", recvBuf, bytes, &c, size));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::Scatter {
            send,
            recv,
            count: recvCount,
            dt: dataType,
            root,
        },
    )
}

/// `HcclAlltoAll`: block `j` (`sendCount` elements) goes to rank `j`, and
/// rank `i`'s block for this rank lands at `recvBuf[i * recvCount..]`.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAll(
    sendBuf: *const c_void,
    sendCount: u64,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvCount: u64,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAlltoAll";
    check_injected!(F);
    let size = tri!(type_arg(F, sendType));
    if sendType != recvType {
        return para(
            F,
            format!(
                "sendType {} differs from recvType {}",
                reduce::type_name(sendType),
                reduce::type_name(recvType)
            ),
        );
    }
    let (c, s, _busy) = tri!(common(F, comm, stream));
    if sendCount == 0 && recvCount == 0 {
        return HCCL_SUCCESS;
    }
    let n = u64::from(c.nranks);
    let send = tri!(buf_arg(
        F,
        "sendBuf",
        sendBuf,
        sendCount.saturating_mul(n),
        size,
        &c
    ));
    let recv = tri!(buf_arg(
        F,
        "recvBuf",
        recvBuf,
        recvCount.saturating_mul(n),
        size,
        &c
    ));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::AlltoAll {
            send,
            recv,
            send_count: sendCount,
            recv_count: recvCount,
            dt: sendType,
        },
    )
}

/// The prologue of `HcclAlltoAllV` and `HcclAlltoAllVC`: the injected
/// fault, the data type (the same on both sides), then [`common`].
fn all_to_all_v_begin(
    f: &str,
    send_type: HcclDataType,
    recv_type: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<(usize, Arc<Comm>, Arc<Stream>, InUse), HcclResult> {
    if let Some(c) = injected(f) {
        return Err(c);
    }
    let size = type_arg(f, send_type)?;
    if send_type != recv_type {
        return Err(para(f, "sendType differs from recvType"));
    }
    let (c, s, busy) = common(f, comm, stream)?;
    Ok((size, c, s, busy))
}

#[allow(clippy::too_many_arguments)]
fn all_to_all_v(
    f: &'static str,
    c: Arc<Comm>,
    s: Arc<Stream>,
    send_buf: *const c_void,
    recv_buf: *const c_void,
    size: usize,
    dt: HcclDataType,
    vc: bool,
    matrix: u64,
    (send_counts, sdispls): (Vec<u64>, Vec<u64>),
    (recv_counts, rdispls): (Vec<u64>, Vec<u64>),
) -> HcclResult {
    let me = c.rank as usize;
    if send_counts.get(me) != recv_counts.get(me) {
        return para(
            f,
            format!(
                "this rank (rank {me}) sends itself {:?} elements but expects {:?} from itself; \
                 sendCounts[{me}] must equal recvCounts[{me}]",
                send_counts.get(me),
                recv_counts.get(me)
            ),
        );
    }
    let send_extent = tri!(v_extent(f, "sendCounts/sdispls", &send_counts, &sdispls));
    let recv_extent = tri!(v_extent(f, "recvCounts/rdispls", &recv_counts, &rdispls));
    let send = tri!(buf_arg(f, "sendBuf", send_buf, send_extent, size, &c));
    let recv = tri!(buf_arg(f, "recvBuf", recv_buf, recv_extent, size, &c));
    enqueue_coll(
        f,
        &s,
        c,
        Coll::AlltoAllV {
            vc,
            send,
            recv,
            send_counts,
            sdispls,
            recv_counts,
            rdispls,
            dt,
            matrix,
        },
    )
}

/// `HcclAlltoAllV`: `sendCounts[j]` elements at `sdispls[j]` go to rank `j`;
/// rank `i`'s `recvCounts[i]` elements land at `rdispls[i]`.
///
/// # Safety
///
/// As `HcclAllGatherV` (four arrays of ranks u64).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllV(
    sendBuf: *const c_void,
    sendCounts: *const c_void,
    sdispls: *const c_void,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvCounts: *const c_void,
    rdispls: *const c_void,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAlltoAllV";
    let (size, c, s, _busy) = tri!(all_to_all_v_begin(F, sendType, recvType, comm, stream));
    let n = c.nranks as usize;
    // SAFETY: the caller's contract, for each array.
    let (sc, sd, rc, rd) = unsafe {
        (
            tri!(u64s(F, "sendCounts", sendCounts, n)),
            tri!(u64s(F, "sdispls", sdispls, n)),
            tri!(u64s(F, "recvCounts", recvCounts, n)),
            tri!(u64s(F, "rdispls", rdispls, n)),
        )
    };
    all_to_all_v(
        F,
        c,
        s,
        sendBuf,
        recvBuf,
        size,
        sendType,
        false,
        0,
        (sc, sd),
        (rc, rd),
    )
}

/// `HcclAlltoAllVC`: `sendCountMatrix[i * ranks + j]` elements go from rank
/// `i` to rank `j`, packed in rank order on both sides.
///
/// # Safety
///
/// As `HcclAllReduce`; `sendCountMatrix` valid for ranks² u64 reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclAlltoAllVC(
    sendBuf: *const c_void,
    sendCountMatrix: *const c_void,
    sendType: HcclDataType,
    recvBuf: *const c_void,
    recvType: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclAlltoAllVC";
    let (size, c, s, _busy) = tri!(all_to_all_v_begin(F, sendType, recvType, comm, stream));
    let n = c.nranks as usize;
    // SAFETY: the caller's contract.
    let m = tri!(unsafe { u64s(F, "sendCountMatrix", sendCountMatrix, n * n) });
    let r = c.rank as usize;
    let sc: Vec<u64> = (0..n).map(|j| m[r * n + j]).collect();
    let rc: Vec<u64> = (0..n).map(|i| m[i * n + r]).collect();
    let prefix = |v: &[u64]| -> Vec<u64> {
        v.iter()
            .scan(0u64, |acc, &x| {
                let d = *acc;
                *acc = acc.saturating_add(x);
                Some(d)
            })
            .collect()
    };
    let (sd, rd) = (prefix(&sc), prefix(&rc));
    let bytes: Vec<u8> = m.iter().flat_map(|x| x.to_le_bytes()).collect();
    let fp = super::wire::fnv(&bytes) | 1;
    all_to_all_v(
        F,
        c,
        s,
        sendBuf,
        recvBuf,
        size,
        sendType,
        true,
        fp,
        (sc, sd),
        (rc, rd),
    )
}

/// `HcclBarrier`: completes on each rank when every rank has reached it.
///
/// # Safety
///
/// Any value may be passed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBarrier(comm: HcclComm, stream: aclrtStream) -> HcclResult {
    const F: &str = "HcclBarrier";
    check_injected!(F);
    let (c, s, _busy) = tri!(common(F, comm, stream));
    enqueue_coll(F, &s, c, Coll::Barrier)
}

// ---- point to point ------------------------------------------------------

struct Pending {
    comm_handle: usize,
    stream_handle: usize,
    comm: Arc<Comm>,
    stream: Arc<Stream>,
    item: P2p,
}

thread_local! {
    /// Sends and receives between `HcclGroupStart` and `HcclGroupEnd`, and
    /// the group depth.
    static GROUP: RefCell<(u32, Vec<Pending>)> = const { RefCell::new((0, Vec::new())) };
}

#[allow(clippy::too_many_arguments)]
fn p2p(
    f: &'static str,
    send: bool,
    buf: *mut c_void,
    count: u64,
    dt: HcclDataType,
    peer: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    let (size, c, s, _busy) = tri!(begin(f, Some(count), dt, None, comm, stream));
    let what = if send { "destRank" } else { "srcRank" };
    if peer >= c.nranks || peer == c.rank {
        return para(
            f,
            format!(
                "{what} {peer} must be another rank of the communicator (0..{}, not {})",
                c.nranks, c.rank
            ),
        );
    }
    let buf = tri!(buf_arg(f, "buf", buf, count, size, &c));
    let item = P2p {
        send,
        peer,
        buf,
        count,
        dt,
        seq: c.next_p2p(peer, send),
    };
    let grouped = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.0 > 0 {
            g.1.push(Pending {
                comm_handle: comm as usize,
                stream_handle: stream as usize,
                comm: c.clone(),
                stream: s.clone(),
                item: item.clone(),
            });
            true
        } else {
            false
        }
    });
    if grouped {
        return HCCL_SUCCESS;
    }
    let mem = p2p_mem(std::slice::from_ref(&item));
    enqueue(f, &s, c, 0, mem, move |c, stop| {
        algo::run_p2p(c, &[item], stop)
    })
}

/// `HcclSend`: `count` elements to `destRank`, which must call `HcclRecv`.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclSend(
    sendBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    destRank: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    p2p(
        "HcclSend", true, sendBuf, count, dataType, destRank, comm, stream,
    )
}

/// `HcclRecv`: `count` elements from `srcRank`.
///
/// # Safety
///
/// As `HcclAllReduce`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclRecv(
    recvBuf: *mut c_void,
    count: u64,
    dataType: HcclDataType,
    srcRank: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    p2p(
        "HcclRecv", false, recvBuf, count, dataType, srcRank, comm, stream,
    )
}

/// `HcclBatchSendRecv`: the sends and receives of `sendRecvInfo`, in one
/// task, in an order that never deadlocks.
///
/// # Safety
///
/// `sendRecvInfo` null or valid for `itemNum` reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn HcclBatchSendRecv(
    sendRecvInfo: *mut HcclSendRecvItem,
    itemNum: u32,
    comm: HcclComm,
    stream: aclrtStream,
) -> HcclResult {
    const F: &str = "HcclBatchSendRecv";
    check_injected!(F);
    if sendRecvInfo.is_null() {
        return null(F, "sendRecvInfo");
    }
    if itemNum == 0 {
        return para(F, "itemNum is 0");
    }
    let (c, s, _busy) = tri!(common(F, comm, stream));
    // SAFETY: the caller's contract.
    let raw = unsafe { std::slice::from_raw_parts(sendRecvInfo, itemNum as usize) };
    let mut items = Vec::with_capacity(raw.len());
    for (i, it) in raw.iter().enumerate() {
        let send = match it.sendRecvType {
            HCCL_SEND => true,
            HCCL_RECV => false,
            t => {
                return para(
                    F,
                    format!("item {i}: sendRecvType {t} is neither HCCL_SEND nor HCCL_RECV"),
                );
            }
        };
        let size = tri!(type_arg(F, it.dataType));
        if it.remoteRank >= c.nranks || it.remoteRank == c.rank {
            return para(
                F,
                format!(
                    "item {i}: remoteRank {} must be another rank (0..{})",
                    it.remoteRank, c.nranks
                ),
            );
        }
        let role = if send {
            "item send buffer"
        } else {
            "item receive buffer"
        };
        let buf = tri!(buf_arg(F, role, it.buf, it.count, size, &c));
        items.push((send, it.remoteRank, buf, it.count, it.dataType));
    }
    let items: Vec<P2p> = items
        .into_iter()
        .filter(|it| it.3 > 0)
        .map(|(send, peer, buf, count, dt)| P2p {
            send,
            peer,
            buf,
            count,
            dt,
            seq: c.next_p2p(peer, send),
        })
        .collect();
    let mem = p2p_mem(&items);
    enqueue(F, &s, c, 0, mem, move |c, stop| {
        algo::run_p2p(c, &items, stop)
    })
}

/// `HcclGroupStart`: sends and receives until the matching `HcclGroupEnd`
/// are queued together (as one batch per communicator and stream), so their
/// order cannot deadlock. Groups nest; collectives inside run as usual.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupStart() -> HcclResult {
    const F: &str = "HcclGroupStart";
    check_injected!(F);
    GROUP.with(|g| g.borrow_mut().0 += 1);
    HCCL_SUCCESS
}

/// `HcclGroupEnd`: ends a group; the outermost end queues its sends and
/// receives.
#[unsafe(no_mangle)]
pub extern "C" fn HcclGroupEnd() -> HcclResult {
    const F: &str = "HcclGroupEnd";
    check_injected!(F);
    let pending = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.0 == 0 {
            return None;
        }
        g.0 -= 1;
        Some(if g.0 == 0 {
            std::mem::take(&mut g.1)
        } else {
            Vec::new()
        })
    });
    let Some(pending) = pending else {
        return para(
            F,
            "no group is open on this thread (HcclGroupStart was not called)",
        );
    };
    type Batch = (usize, usize, Arc<Comm>, Arc<Stream>, Vec<P2p>);
    let mut batches: Vec<Batch> = Vec::new();
    for p in pending {
        match batches
            .iter_mut()
            .find(|b| b.0 == p.comm_handle && b.1 == p.stream_handle)
        {
            Some(b) => b.4.push(p.item),
            None => batches.push((
                p.comm_handle,
                p.stream_handle,
                p.comm,
                p.stream,
                vec![p.item],
            )),
        }
    }
    for (_, _, c, s, items) in batches {
        let mem = p2p_mem(&items);
        let rc = enqueue("HcclGroupEnd", &s, c, 0, mem, move |c, stop| {
            algo::run_p2p(c, &items, stop)
        });
        if rc != HCCL_SUCCESS {
            return rc;
        }
    }
    HCCL_SUCCESS
}

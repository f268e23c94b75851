//! The collectives: `HcclAllReduce`, `HcclBroadcast`, `HcclReduce`,
//! `HcclAllGather(V)`, `HcclReduceScatter(V)`, `HcclScatter`,
//! `HcclAlltoAll(V, VC)`, `HcclBarrier`, and the checks and queueing they
//! share with point-to-point transfers ([`super::p2p`]).
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

use super::common::{
    arg_fail, check_injected, code, code_name, comm_arg, data_type, injected, para, reduce_op, tri,
    type_name, u64s,
};
use crate::comm::algo::{self, Coll};
use crate::comm::communicator::{Comm, InUse};
use crate::comm::mem::Mem;
use crate::comm::reduce::{self, DataType, ReduceOp};
use crate::comm::{ErrorKind, Fail};
use crate::recent_error::fail;
use crate::rt;
use crate::rt::handles::Lookup;
use crate::rt::stream::{Stream, TaskKind};
use acl_sys::aclrtStream;
use hccl_sys::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The stream fault of a failed HCCL task: a memory fault
/// (`ACL_ERROR_RT_SYS_DMA`), a timeout (`ACL_ERROR_RT_FFTS_PLUS_TIMEOUT`,
/// the code real HCCL timeouts surface as), or a remote error
/// (`ACL_ERROR_RT_SUSPECT_REMOTE_ERROR`).
fn fault_kind(f: &Fail) -> rt::ErrorKind {
    if f.memory {
        rt::ErrorKind::MemoryFault
    } else if f.kind == ErrorKind::Timeout {
        rt::ErrorKind::CollectiveTimeout
    } else {
        rt::ErrorKind::RemoteFault
    }
}

pub(super) fn stream_arg(
    function: &str,
    h: aclrtStream,
    comm: &Comm,
) -> Result<Arc<Stream>, HcclResult> {
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
    if crate::acl::common::is_non_host(&s) {
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

pub(super) fn not_suspended(function: &str, comm: &Comm) -> Result<(), HcclResult> {
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

pub(super) fn bytes_of(function: &str, count: u64, size: usize) -> Result<usize, HcclResult> {
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

pub(super) fn mem(
    function: &str,
    role: &'static str,
    ptr: *const c_void,
    bytes: usize,
    comm: &Comm,
    align: usize,
) -> Result<Mem, HcclResult> {
    if bytes > 0 && ptr.is_null() {
        return Err(fail(HCCL_E_PTR, format!("{function}: {role} is null")));
    }
    Mem::arg(function, role, ptr as usize, bytes, comm.device, align)
        .map_err(|e| arg_fail(function, e))
}

/// Queues `work` on `s`; a failure is recorded in the communicator (and
/// told to its other ranks) and becomes a fault of the task. `mem` is what
/// it reads and writes, for the check mode (empty when the check is off).
pub(super) fn enqueue(
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
            let rc = code(f.kind);
            Err(rt::Error::new(
                fault_kind(&f),
                format!("{} ({rc}): {}", code_name(rc), f.msg),
            ))
        }
    });
    match s.enqueue(|_| TaskKind::Hccl {
        api: function,
        run,
        mem,
    }) {
        Ok(_) => HCCL_SUCCESS,
        Err(e) => fail(HCCL_E_RUNTIME, format!("{function}: {}", e.msg)),
    }
}

pub(super) fn enqueue_coll(
    function: &'static str,
    s: &Stream,
    comm: Arc<Comm>,
    coll: Coll,
) -> HcclResult {
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

/// The checks every collective starts with: the communicator, the stream,
/// not suspended. The communicator is in use (`HcclCommDestroy` from
/// another thread gets `HCCL_E_AGAIN`) until the returned [`InUse`] drops,
/// at the end of the call, as HCCL's `StateGuard<hcclComm, HcclCommState>`
/// marks it `INUSE` for the host-side part of every collective, send and
/// receive (hicann/hcomm `src/legacy/ascend910/framework/op_base/src/op_base.cc`,
/// `op_base_host.cc`); queued work that has not run yet does not count.
pub(super) fn common(
    f: &str,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<(Arc<Comm>, Arc<Stream>, InUse), HcclResult> {
    let c = comm_arg(f, comm)?;
    let busy = c.enter();
    let s = stream_arg(f, stream, &c)?;
    not_suspended(f, &c)?;
    Ok((c, s, busy))
}

/// The engine's type for `dt` ([`data_type`]).
pub(super) fn type_arg(f: &str, dt: HcclDataType) -> Result<DataType, HcclResult> {
    data_type(dt).map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))
}

/// The engine's type and op for a reduction of `dt` with `op`: each valid,
/// and a pair the simulated SoC reduces ([`reduce::check_reduce`]).
fn reduce_arg(
    f: &str,
    dt: HcclDataType,
    op: HcclReduceOp,
) -> Result<(DataType, ReduceOp), HcclResult> {
    let dt = type_arg(f, dt)?;
    let op = reduce_op(op).map_err(|(code, msg)| fail(code, format!("{f}: {msg}")))?;
    reduce::check_reduce(dt, op).map_err(|e| arg_fail(f, e))?;
    Ok((dt, op))
}

/// The prologue of a collective: the injected fault; a `count` of 0
/// (`Some(0)`) succeeds at once, as `Err(HCCL_SUCCESS)`; the element type
/// (`typed`); then the checks of [`common`]. Yields the type, the
/// communicator and the stream.
fn prologue<T>(
    f: &str,
    count: Option<u64>,
    typed: impl FnOnce() -> Result<T, HcclResult>,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<Begun<T>, HcclResult> {
    if let Some(c) = injected(f) {
        return Err(c);
    }
    if count == Some(0) {
        return Err(HCCL_SUCCESS);
    }
    let t = typed()?;
    let (c, s, busy) = common(f, comm, stream)?;
    Ok((t, c, s, busy))
}

/// [`prologue`] of a collective that moves data of type `dt`.
pub(super) fn begin(
    f: &str,
    count: Option<u64>,
    dt: HcclDataType,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<Begun<DataType>, HcclResult> {
    prologue(f, count, || type_arg(f, dt), comm, stream)
}

/// What [`prologue`] yields: the element type, the communicator (in use),
/// the stream.
type Begun<T> = (T, Arc<Comm>, Arc<Stream>, InUse);

/// [`prologue`] of a collective that reduces `dt` with `op`.
fn begin_reduce(
    f: &str,
    count: Option<u64>,
    dt: HcclDataType,
    op: HcclReduceOp,
    comm: HcclComm,
    stream: aclrtStream,
) -> Result<Begun<(DataType, ReduceOp)>, HcclResult> {
    prologue(f, count, || reduce_arg(f, dt, op), comm, stream)
}

/// A buffer argument of `count` elements of `size` bytes: the length
/// ([`bytes_of`]), then the memory ([`mem`]).
pub(super) fn buf_arg(
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
    let ((dt, op), c, s, _busy) = tri!(begin_reduce(F, Some(count), dataType, op, comm, stream));
    let size = dt.size();
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
            dt,
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
    let (dt, c, s, _busy) = tri!(begin(F, Some(count), dataType, comm, stream));
    let size = dt.size();
    tri!(root_arg(F, root, &c));
    let buf = tri!(buf_arg(F, "buf", buf, count, size, &c));
    enqueue_coll(
        F,
        &s,
        c,
        Coll::Broadcast {
            buf,
            count,
            dt,
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
    let ((dt, op), c, s, _busy) = tri!(begin_reduce(F, Some(count), dataType, op, comm, stream));
    let size = dt.size();
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
            dt,
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
    let (dt, c, s, _busy) = tri!(begin(F, Some(sendCount), dataType, comm, stream));
    let size = dt.size();
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
            dt,
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
    let (dt, c, s, _busy) = tri!(begin(F, None, dataType, comm, stream));
    let size = dt.size();
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
            dt,
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
    let ((dt, op), c, s, _busy) =
        tri!(begin_reduce(F, Some(recvCount), dataType, op, comm, stream));
    let size = dt.size();
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
            dt,
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
    let ((dt, op), c, s, _busy) = tri!(begin_reduce(F, None, dataType, op, comm, stream));
    let size = dt.size();
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
            dt,
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
    let (dt, c, s, _busy) = tri!(begin(F, Some(recvCount), dataType, comm, stream));
    let size = dt.size();
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
            dt,
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
    let dt = tri!(type_arg(F, sendType));
    let size = dt.size();
    if sendType != recvType {
        return para(
            F,
            format!(
                "sendType {} differs from recvType {}",
                type_name(sendType),
                type_name(recvType)
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
            dt,
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
) -> Result<(DataType, Arc<Comm>, Arc<Stream>, InUse), HcclResult> {
    if let Some(c) = injected(f) {
        return Err(c);
    }
    let dt = type_arg(f, send_type)?;
    if send_type != recv_type {
        return Err(para(f, "sendType differs from recvType"));
    }
    let (c, s, busy) = common(f, comm, stream)?;
    Ok((dt, c, s, busy))
}

#[allow(clippy::too_many_arguments)]
fn all_to_all_v(
    f: &'static str,
    c: Arc<Comm>,
    s: Arc<Stream>,
    send_buf: *const c_void,
    recv_buf: *const c_void,
    dt: DataType,
    vc: bool,
    matrix: u64,
    (send_counts, sdispls): (Vec<u64>, Vec<u64>),
    (recv_counts, rdispls): (Vec<u64>, Vec<u64>),
) -> HcclResult {
    let size = dt.size();
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
    let (dt, c, s, _busy) = tri!(all_to_all_v_begin(F, sendType, recvType, comm, stream));
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
    all_to_all_v(F, c, s, sendBuf, recvBuf, dt, false, 0, (sc, sd), (rc, rd))
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
    let (dt, c, s, _busy) = tri!(all_to_all_v_begin(F, sendType, recvType, comm, stream));
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
    let fp = crate::comm::wire::fnv(&bytes) | 1;
    all_to_all_v(F, c, s, sendBuf, recvBuf, dt, true, fp, (sc, sd), (rc, rd))
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

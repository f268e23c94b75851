//! Point-to-point transfers: `HcclSend`, `HcclRecv`, `HcclBatchSendRecv`,
//! and the groups (`HcclGroupStart`/`HcclGroupEnd`) that queue sends and
//! receives together.

#![allow(non_snake_case)]

use super::collective::{begin, buf_arg, common, enqueue, type_arg};
use super::common::{check_injected, null, para, tri};
use crate::comm::algo::{self, P2p};
use crate::comm::communicator::Comm;
use crate::rt::stream::Stream;
use acl_sys::aclrtStream;
use hccl_sys::*;
use std::cell::RefCell;
use std::ffi::c_void;
use std::sync::Arc;

/// What point-to-point `items` read and write, for the check mode.
fn p2p_mem(items: &[P2p]) -> Vec<crate::check::Access> {
    if crate::check::enabled() {
        items.iter().map(P2p::access).collect()
    } else {
        Vec::new()
    }
}

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
    let (dt, c, s, _busy) = tri!(begin(f, Some(count), dt, comm, stream));
    let size = dt.size();
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
        let dt = tri!(type_arg(F, it.dataType));
        let size = dt.size();
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
        items.push((send, it.remoteRank, buf, it.count, dt));
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

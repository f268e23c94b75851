//! Point to point: sends, receives, batches of them, and the groups that
//! queue several together.

use super::forward;
use crate::error::Result;
use acl_sys::aclrtStream;
use hccl_sys as sys;
use std::ffi::c_void;

forward! {
    /// `HcclSend`: sends `count` elements of `send_buf` to `dest_rank`,
    /// which receives as many; the stream waits until the receiver is ready.
    #[doc(alias = "HcclSend")]
    send = HcclSend(
        send_buf: *mut c_void,
        count: u64,
        data_type: sys::HcclDataType,
        dest_rank: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclRecv`: receives `count` elements from `src_rank` into `recv_buf`.
    #[doc(alias = "HcclRecv")]
    recv = HcclRecv(
        recv_buf: *mut c_void,
        count: u64,
        data_type: sys::HcclDataType,
        src_rank: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclBatchSendRecv`: the `item_num` sends and receives of
    /// `send_recv_info` as one operation, in an order that cannot deadlock.
    #[doc(alias = "HcclBatchSendRecv")]
    batch_send_recv = HcclBatchSendRecv(
        send_recv_info: *mut sys::HcclSendRecvItem,
        item_num: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
}

/// `HcclGroupStart`: the sends and receives issued on this thread until the
/// matching [`group_end`] are queued together, at the group's end.
#[doc(alias = "HcclGroupStart")]
pub fn group_start() -> Result<()> {
    // SAFETY: no arguments.
    unsafe { call!(HcclGroupStart()) }
}

/// `HcclGroupEnd`: ends the innermost group of this thread; at the
/// outermost one, queues its sends and receives (whose memory the calls
/// that issued them keep valid until then).
#[doc(alias = "HcclGroupEnd")]
pub fn group_end() -> Result<()> {
    // SAFETY: no arguments; the memory of the queued work is covered by the
    // contracts of the calls that issued it.
    unsafe { call!(HcclGroupEnd()) }
}

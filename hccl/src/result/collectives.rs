//! Collectives: each queues one operation of all the ranks of a
//! communicator on a stream and returns; the memory it names is read and
//! written when it runs.

use super::forward;
use acl_sys::aclrtStream;
use hccl_sys as sys;
use std::ffi::c_void;

forward! {
    /// `HcclAllReduce`: reduces `count` elements of every rank's `send_buf`
    /// into every rank's `recv_buf` (the two may be the same).
    #[doc(alias = "HcclAllReduce")]
    all_reduce = HcclAllReduce(
        send_buf: *mut c_void,
        recv_buf: *mut c_void,
        count: u64,
        data_type: sys::HcclDataType,
        op: sys::HcclReduceOp,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclBroadcast`: copies the root's `count` elements of `buf` into
    /// every other rank's `buf`.
    #[doc(alias = "HcclBroadcast")]
    broadcast = HcclBroadcast(
        buf: *mut c_void,
        count: u64,
        data_type: sys::HcclDataType,
        root: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclReduce`: reduces `count` elements of every rank's `send_buf`
    /// into the root's `recv_buf` (null on the other ranks).
    #[doc(alias = "HcclReduce")]
    reduce = HcclReduce(
        send_buf: *mut c_void,
        recv_buf: *mut c_void,
        count: u64,
        data_type: sys::HcclDataType,
        op: sys::HcclReduceOp,
        root: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclAllGather`: every rank's `send_count` elements into every
    /// rank's `recv_buf`, in rank order.
    #[doc(alias = "HcclAllGather")]
    all_gather = HcclAllGather(
        send_buf: *mut c_void,
        recv_buf: *mut c_void,
        send_count: u64,
        data_type: sys::HcclDataType,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclAllGatherV`: all-gather with a count and displacement per rank
    /// (`u64` arrays of one entry per rank).
    #[doc(alias = "HcclAllGatherV")]
    all_gather_v = HcclAllGatherV(
        send_buf: *mut c_void,
        send_count: u64,
        recv_buf: *mut c_void,
        recv_counts: *const c_void,
        recv_displs: *const c_void,
        data_type: sys::HcclDataType,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclReduceScatter`: reduces every rank's `send_buf` (ranks ×
    /// `recv_count` elements) and gives rank `i` block `i`.
    #[doc(alias = "HcclReduceScatter")]
    reduce_scatter = HcclReduceScatter(
        send_buf: *mut c_void,
        recv_buf: *mut c_void,
        recv_count: u64,
        data_type: sys::HcclDataType,
        op: sys::HcclReduceOp,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclReduceScatterV`: reduce-scatter with a count and displacement
    /// per rank (`u64` arrays of one entry per rank).
    #[doc(alias = "HcclReduceScatterV")]
    reduce_scatter_v = HcclReduceScatterV(
        send_buf: *mut c_void,
        send_counts: *const c_void,
        send_displs: *const c_void,
        recv_buf: *mut c_void,
        recv_count: u64,
        data_type: sys::HcclDataType,
        op: sys::HcclReduceOp,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclScatter`: gives rank `i` block `i` of the root's `send_buf`
    /// (null on the other ranks).
    #[doc(alias = "HcclScatter")]
    scatter = HcclScatter(
        send_buf: *mut c_void,
        recv_buf: *mut c_void,
        recv_count: u64,
        data_type: sys::HcclDataType,
        root: u32,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclAlltoAll`: block `j` of every rank's `send_buf` goes to rank
    /// `j`, into the sender's block of `recv_buf`.
    #[doc(alias = "HcclAlltoAll")]
    allto_all = HcclAlltoAll(
        send_buf: *const c_void,
        send_count: u64,
        send_type: sys::HcclDataType,
        recv_buf: *const c_void,
        recv_count: u64,
        recv_type: sys::HcclDataType,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclAlltoAllV`: all-to-all with a count and displacement per pair
    /// (`u64` arrays of one entry per rank).
    #[doc(alias = "HcclAlltoAllV")]
    allto_all_v = HcclAlltoAllV(
        send_buf: *const c_void,
        send_counts: *const c_void,
        sdispls: *const c_void,
        send_type: sys::HcclDataType,
        recv_buf: *const c_void,
        recv_counts: *const c_void,
        rdispls: *const c_void,
        recv_type: sys::HcclDataType,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclAlltoAllVC`: all-to-all from a ranks × ranks matrix of `u64`
    /// counts every rank shares.
    #[doc(alias = "HcclAlltoAllVC")]
    allto_all_vc = HcclAlltoAllVC(
        send_buf: *const c_void,
        send_count_matrix: *const c_void,
        send_type: sys::HcclDataType,
        recv_buf: *const c_void,
        recv_type: sys::HcclDataType,
        comm: sys::HcclComm,
        stream: aclrtStream,
    );
    /// `HcclBarrier`: completes on each rank once every rank has reached it.
    #[doc(alias = "HcclBarrier")]
    barrier = HcclBarrier(comm: sys::HcclComm, stream: aclrtStream);
}

//! Shared queues of the data-transfer API (`acl/acl_tdt_queue.h`) as a
//! program on a host sees them, after hicann/runtime
//! `src/acl/acl_tdt_queue/queue.cpp`, `queue_process.cpp` and
//! `queue_process_host.cpp` (`QueueProcessorHost`, the processor of a host
//! with devices attached, which the simulator presents):
//!
//! - queue attributes, routes, route lists and route queries: host objects;
//! - `acltdtCreateQueue`/`acltdtDestroyQueue` on the current device's memory
//!   queues; `acltdtEnqueueData`/`acltdtDequeueData` copy a buffer (and up to
//!   96 bytes of user data) in and out, waiting as the timeout says;
//! - the mbuf functions (`acltdtAllocBuf`, `acltdtEnqueue`, …), and
//!   `acltdtGrantQueue`/`acltdtAttachQueue`: 200006 on a host, as in the
//!   release (they exist on the device's control CPU only);
//! - `acltdtBindQueueRoutes`/`acltdtUnbindQueueRoutes`/`acltdtQueryQueueRoutes`
//!   stand for the device's queue scheduler (`crate::tdt`'s routes): a bound
//!   route moves each buffer of its source queue to its destination; a
//!   queue with a bound route cannot be destroyed (500001, as
//!   `QueueProcessorHost::acltdtDestroyQueue`).

use super::common::{self, code};
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup, Table};
use crate::tdt::{self, MAX_USER_DATA, Message, QueueError, Wait};
use acl_sys::{
    ACL_ERROR_FAILURE, ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL, ACL_SUCCESS, ACL_TDT_DVPP_MEM,
    ACL_TDT_NORMAL_MEM, ACL_TDT_QUEUE_DEPTH_UINT32, ACL_TDT_QUEUE_NAME_PTR,
    ACL_TDT_QUEUE_ROUTE_BIND, ACL_TDT_QUEUE_ROUTE_DST_UINT32, ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL,
    ACL_TDT_QUEUE_ROUTE_QUERY_DST, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32,
    ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, ACL_TDT_QUEUE_ROUTE_QUERY_SRC,
    ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32,
    ACL_TDT_QUEUE_ROUTE_SRC_UINT32, ACL_TDT_QUEUE_ROUTE_STATUS_INT32, ACL_TDT_QUEUE_ROUTE_UNBIND,
    aclError, acltdtBuf, acltdtQueueAttr, acltdtQueueAttrType, acltdtQueueRoute,
    acltdtQueueRouteList, acltdtQueueRouteParamType, acltdtQueueRouteQueryInfo,
    acltdtQueueRouteQueryInfoParamType,
};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::Arc;

/// The longest queue name, with its NUL (`RT_MQ_MAX_NAME_LEN`).
const NAME_LEN: usize = 128;
/// A queue's default depth (`RT_MQ_DEPTH_DEFAULT`).
const DEFAULT_DEPTH: u32 = 8;
/// A queue's least depth (`RT_MQ_DEPTH_MIN`).
const MIN_DEPTH: u32 = 2;

/// An `acltdtQueueAttr`: the name is kept NUL-terminated in place, as the
/// `ACL_TDT_QUEUE_NAME_PTR` getter hands out its address.
struct QueueAttr {
    name: [u8; NAME_LEN],
    depth: u32,
}

/// An `acltdtQueueRoute`.
#[derive(Clone, Copy, Default)]
struct Route {
    src: u32,
    dst: u32,
    status: i32,
}

/// An `acltdtQueueRouteQueryInfo`: the mode, source and destination queue,
/// and which of the three were set.
#[derive(Default)]
struct QueryInfo {
    mode: u32,
    src: u32,
    dst: u32,
    set: [bool; 3],
}

static ATTRS: Table<Mutex<QueueAttr>> = Table::new(Default::default);
static ROUTES: Table<Mutex<Route>> = Table::new(Default::default);
static ROUTE_LISTS: Table<Mutex<Vec<Route>>> = Table::new(Default::default);
static QUERY_INFOS: Table<Mutex<QueryInfo>> = Table::new(Default::default);

/// Looks a handle of `table` up: 100000 for null, destroyed or foreign.
fn lookup<T>(
    table: &Table<T>,
    kind: &str,
    function: &str,
    what: &str,
    h: usize,
) -> Result<Arc<T>, aclError> {
    if h == 0 {
        return Err(common::null_arg(function, what));
    }
    match table.lock().get(h) {
        Lookup::Live(o) => Ok(o),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: {what}: {}",
                handles::describe_bad(kind, h, &bad)
            ),
        )),
    }
}

/// Looks a route list up.
fn route_list_arg(function: &str, h: usize) -> Result<Arc<Mutex<Vec<Route>>>, aclError> {
    lookup(
        &ROUTE_LISTS,
        "acltdtQueueRouteList",
        function,
        "routeList",
        h,
    )
}

/// Looks a route up.
fn route_arg(function: &str, h: usize) -> Result<Arc<Mutex<Route>>, aclError> {
    lookup(&ROUTES, "acltdtQueueRoute", function, "route", h)
}

/// Destroys a handle of `table`: 100000 for null or not live.
fn destroy<T>(table: &Table<T>, kind: &str, function: &'static str, h: usize) -> aclError {
    tri!(lookup(table, kind, function, kind, h));
    table.lock().remove_by(h, function);
    ACL_SUCCESS
}

/// `CopyParam`: copies `src` into `dst`; 100000 when `src` is longer.
fn copy_param(function: &str, src: &[u8], dst: &mut [u8]) -> Result<usize, aclError> {
    if src.len() > dst.len() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: parameter copy: srcLen {} must not be larger than dstLen {}",
                src.len(),
                dst.len()
            ),
        ));
    }
    dst[..src.len()].copy_from_slice(src);
    Ok(src.len())
}

/// The `len` bytes at `param`.
///
/// # Safety
///
/// `param` is readable for `len` bytes.
unsafe fn bytes<'a>(param: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(param.cast::<u8>(), len) }
}

/// Writes `value` to `param` (room `len`) and its size to `ret`.
///
/// # Safety
///
/// `param` is writable for `len` bytes, `ret` a valid out-pointer.
unsafe fn get_param(
    function: &str,
    value: &[u8],
    len: usize,
    ret: *mut usize,
    param: *mut c_void,
) -> aclError {
    if value.len() > len {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: parameter copy: srcLen {} must not be larger than dstLen {len}",
                value.len()
            ),
        );
    }
    // SAFETY: the caller's contract; `value.len()` ≤ `len`.
    unsafe {
        std::ptr::copy_nonoverlapping(value.as_ptr(), param.cast::<u8>(), value.len());
        *ret = value.len();
    }
    ACL_SUCCESS
}

/// 100000 for an attribute or parameter type outside `expected`.
fn bad_type(function: &str, t: u32, expected: &str) -> aclError {
    fail(
        ACL_ERROR_INVALID_PARAM,
        format!("{function}: type {t} is invalid; expected [{expected}]"),
    )
}

/// The 200006 of a function that exists on the device's control CPU only
/// (`QueueProcessorHost`).
fn host_unsupported(function: &str) -> aclError {
    fail(
        ACL_ERROR_FEATURE_UNSUPPORTED,
        format!(
            "{function} is not supported in this version: it is not available to a program on \
             the host (only on the device's control CPU)"
        ),
    )
}

/// The current device (`rtGetDevice`): 107002 without one.
fn current_device(function: &str) -> Result<u32, aclError> {
    common::current(function).map(|c| c.device)
}

/// The memory queue `qid`: 107000 when there is none.
fn queue(function: &str, qid: u32) -> Result<Arc<tdt::MemQueue>, aclError> {
    tdt::queue(qid).ok_or_else(|| {
        fail(
            common::PARAM_INVALID,
            format!("{function}: queue {qid} does not exist"),
        )
    })
}

/// The code of a queue that refused.
fn queue_code(function: &str, qid: u32, e: QueueError) -> aclError {
    let (rc, why) = match e {
        QueueError::Full => (code(ACL_ERROR_RT_QUEUE_FULL), "is full"),
        QueueError::Empty => (code(ACL_ERROR_RT_QUEUE_EMPTY), "is empty"),
        QueueError::Stopped | QueueError::Destroyed => {
            (common::PARAM_INVALID, "was destroyed while waiting")
        }
    };
    fail(rc, format!("{function}: queue {qid} {why}"))
}

/// `acltdtCreateQueueAttr`: attributes with an empty name (one is chosen)
/// and depth 8.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueueAttr() -> *mut acltdtQueueAttr {
    ATTRS.lock().insert(Arc::new(Mutex::new(QueueAttr {
        name: [0; NAME_LEN],
        depth: DEFAULT_DEPTH,
    }))) as *mut acltdtQueueAttr
}

/// `acltdtDestroyQueueAttr`: 100000 for null or not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyQueueAttr(attr: *const acltdtQueueAttr) -> aclError {
    destroy(
        &ATTRS,
        "acltdtQueueAttr",
        "acltdtDestroyQueueAttr",
        attr as usize,
    )
}

/// `acltdtSetQueueAttr`: `ACL_TDT_QUEUE_NAME_PTR` (`param` holds a `char*`
/// of at most 127 bytes) or `ACL_TDT_QUEUE_DEPTH_UINT32`. 100000 for a null
/// argument, a `len` larger than the attribute, a null or too long name, or
/// another type.
///
/// # Safety
///
/// `param` is readable for `len` bytes; a name pointer is NUL-terminated
/// within 128 bytes or readable for 128.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetQueueAttr(
    attr: *mut acltdtQueueAttr,
    type_: acltdtQueueAttrType,
    len: usize,
    param: *const c_void,
) -> aclError {
    const F: &str = "acltdtSetQueueAttr";
    let a = tri!(lookup(&ATTRS, "acltdtQueueAttr", F, "attr", attr as usize));
    if param.is_null() {
        return common::null_arg(F, "param");
    }
    // SAFETY: the caller's contract.
    let src = unsafe { bytes(param, len) };
    match type_ {
        ACL_TDT_QUEUE_NAME_PTR => {
            let mut p = [0u8; size_of::<usize>()];
            tri!(copy_param(F, src, &mut p));
            let name = usize::from_ne_bytes(p) as *const u8;
            if name.is_null() {
                return common::null_arg(F, "the name pointer in param");
            }
            // strnlen(name, 128)
            let mut n = 0;
            // SAFETY: the caller's contract: readable up to its NUL or 128 bytes.
            while n < NAME_LEN && unsafe { *name.add(n) } != 0 {
                n += 1;
            }
            if n + 1 > NAME_LEN {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                        "{F}: queue name length {} is invalid; expected [0, {NAME_LEN}]",
                        n + 1
                    ),
                );
            }
            let mut a = a.lock();
            a.name = [0; NAME_LEN];
            // SAFETY: `n` readable bytes (counted above).
            a.name[..n].copy_from_slice(unsafe { std::slice::from_raw_parts(name, n) });
            ACL_SUCCESS
        }
        ACL_TDT_QUEUE_DEPTH_UINT32 => {
            let mut a = a.lock();
            let mut d = a.depth.to_ne_bytes();
            tri!(copy_param(F, src, &mut d));
            a.depth = u32::from_ne_bytes(d);
            ACL_SUCCESS
        }
        t => bad_type(F, t, "ACL_TDT_QUEUE_NAME_PTR, ACL_TDT_QUEUE_DEPTH_UINT32"),
    }
}

/// `acltdtGetQueueAttr`: the name's address (a `char*`, valid while the
/// attributes live) or the depth. 100000 for a null argument, a `len`
/// smaller than the attribute, or another type.
///
/// # Safety
///
/// `param` is writable for `len` bytes, `paramRetSize` a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueAttr(
    attr: *const acltdtQueueAttr,
    type_: acltdtQueueAttrType,
    len: usize,
    param_ret_size: *mut usize,
    param: *mut c_void,
) -> aclError {
    const F: &str = "acltdtGetQueueAttr";
    let a = tri!(lookup(&ATTRS, "acltdtQueueAttr", F, "attr", attr as usize));
    if param.is_null() {
        return common::null_arg(F, "param");
    }
    if param_ret_size.is_null() {
        return common::null_arg(F, "paramRetSize");
    }
    let a = a.lock();
    let value = match type_ {
        ACL_TDT_QUEUE_NAME_PTR => (a.name.as_ptr() as usize).to_ne_bytes().to_vec(),
        ACL_TDT_QUEUE_DEPTH_UINT32 => a.depth.to_ne_bytes().to_vec(),
        t => return bad_type(F, t, "ACL_TDT_QUEUE_NAME_PTR, ACL_TDT_QUEUE_DEPTH_UINT32"),
    };
    // SAFETY: the caller's contract.
    unsafe { get_param(F, &value, len, param_ret_size, param) }
}

/// `acltdtCreateQueue`: a queue on the current device, with `attr`'s name
/// and depth (null: defaults). 100000 for a null `qid` or bad `attr`, 107002
/// without a current device, 107000 for a depth below 2.
///
/// # Safety
///
/// `qid` is a valid out-pointer when not null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueue(
    attr: *const acltdtQueueAttr,
    qid: *mut u32,
) -> aclError {
    const F: &str = "acltdtCreateQueue";
    if qid.is_null() {
        return common::null_arg(F, "qid");
    }
    let device = tri!(current_device(F));
    // The name only names the queue for the driver: the sim keeps none.
    let (device, depth) = if attr.is_null() {
        (device, DEFAULT_DEPTH)
    } else {
        let a = tri!(lookup(&ATTRS, "acltdtQueueAttr", F, "attr", attr as usize));
        let depth = a.lock().depth;
        (device, depth)
    };
    // `NpuDriver::MemQueueCreate`.
    if depth < MIN_DEPTH {
        return fail(
            common::PARAM_INVALID,
            format!(
                "{F}: memory queue creation: depth {depth} is invalid; expected at least {MIN_DEPTH}"
            ),
        );
    }
    let _ = device;
    let id = tdt::create_queue(depth as usize);
    // SAFETY: a valid out-pointer (the caller's contract).
    unsafe { *qid = id };
    ACL_SUCCESS
}

/// `acltdtDestroyQueue`: 107002 without a current device, 107000 for a
/// queue that does not exist. Waiters on it fail.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyQueue(qid: u32) -> aclError {
    const F: &str = "acltdtDestroyQueue";
    tri!(current_device(F));
    match tdt::destroy_queue(qid) {
        Ok(()) => ACL_SUCCESS,
        Err(tdt::DestroyError::Unknown) => fail(
            common::PARAM_INVALID,
            format!("{F}: queue {qid} does not exist"),
        ),
        Err(tdt::DestroyError::Routed) => fail(
            ACL_ERROR_FAILURE,
            format!("{F}: qid [{qid}] can not be destroyed, it needs to be unbound first"),
        ),
    }
}

/// `acltdtEnqueueData`: enqueues a copy of `dataSize` bytes and of
/// `userDataSize` (≤ 96) bytes of user data. 100000 for null data or size
/// 0; 107002 without a current device; 107000 for an unknown queue or too
/// much user data; 207014 when the queue stays full.
///
/// # Safety
///
/// `data` is readable for `dataSize` bytes, `userData` for `userDataSize`
/// when not null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtEnqueueData(
    qid: u32,
    data: *const c_void,
    data_size: usize,
    user_data: *const c_void,
    user_data_size: usize,
    timeout: i32,
    _rsv: u32,
) -> aclError {
    const F: &str = "acltdtEnqueueData";
    if data.is_null() {
        return common::null_arg(F, "data");
    }
    if data_size == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: dataSize 0 is invalid; expected a positive size"),
        );
    }
    tri!(current_device(F));
    if user_data_size > MAX_USER_DATA || (user_data.is_null() && user_data_size != 0) {
        return fail(
            common::PARAM_INVALID,
            format!(
                "{F}: userDataSize {user_data_size} is invalid; expected at most {MAX_USER_DATA} \
                 bytes at a non-null userData"
            ),
        );
    }
    let q = tri!(queue(F, qid));
    // SAFETY: the caller's contract.
    let msg = unsafe {
        Message::Data {
            data: bytes(data, data_size).to_vec(),
            user: if user_data.is_null() {
                Vec::new()
            } else {
                bytes(user_data, user_data_size).to_vec()
            },
        }
    };
    match q.push(msg, Wait::from_ms(timeout)) {
        Ok(()) => {
            tdt::forward(qid);
            ACL_SUCCESS
        }
        Err(e) => queue_code(F, qid, e),
    }
}

/// `acltdtDequeueData`: dequeues a buffer into `data` (its size in
/// `retDataSize`) and up to `userDataSize` bytes of its user data. 100000
/// for a null `data` or `retDataSize` or size 0; 107002 without a current
/// device; 107000 for an unknown queue or a buffer larger than `dataSize`
/// (it stays queued, its size in `retDataSize`); 207013 when the queue
/// stays empty.
///
/// # Safety
///
/// `data` is writable for `dataSize` bytes, `userData` for `userDataSize`
/// when not null, `retDataSize` a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDequeueData(
    qid: u32,
    data: *mut c_void,
    data_size: usize,
    ret_data_size: *mut usize,
    user_data: *mut c_void,
    user_data_size: usize,
    timeout: i32,
) -> aclError {
    const F: &str = "acltdtDequeueData";
    if data.is_null() {
        return common::null_arg(F, "data");
    }
    if ret_data_size.is_null() {
        return common::null_arg(F, "retDataSize");
    }
    if data_size == 0 {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{F}: dataSize 0 is invalid; expected a positive size"),
        );
    }
    tri!(current_device(F));
    let q = tri!(queue(F, qid));
    let got = q.pop_if(Wait::from_ms(timeout), |m: &Message| {
        // `rtMemQueuePeek` reports the size before the dequeue.
        // SAFETY: a valid out-pointer (the caller's contract).
        unsafe { *ret_data_size = m.byte_len() };
        if m.byte_len() > data_size {
            return Err(Fail::Code(fail(
                common::PARAM_INVALID,
                format!(
                    "{F}: the buffer at the head of queue {qid} has {} bytes, more than dataSize \
                     {data_size}",
                    m.byte_len()
                ),
            )));
        }
        Ok(())
    });
    let msg = match got {
        Ok(m) => m,
        Err(Fail::Code(rc)) => return rc,
        Err(Fail::Queue(e)) => return queue_code(F, qid, e),
    };
    tdt::refill(qid);
    let Message::Data { data: d, user } = msg else {
        return fail(
            common::PARAM_INVALID,
            format!("{F}: queue {qid} held a dataset of a channel, not a buffer"),
        );
    };
    // SAFETY: the caller's contract; `d.len()` ≤ `dataSize` (checked).
    unsafe {
        std::ptr::copy_nonoverlapping(d.as_ptr(), data.cast::<u8>(), d.len());
        if !user_data.is_null() {
            let n = user.len().min(user_data_size);
            std::ptr::copy_nonoverlapping(user.as_ptr(), user_data.cast::<u8>(), n);
        }
    }
    ACL_SUCCESS
}

/// Why a dequeue did not proceed.
enum Fail {
    Queue(QueueError),
    Code(aclError),
}

impl From<QueueError> for Fail {
    fn from(e: QueueError) -> Fail {
        Fail::Queue(e)
    }
}

/// `acltdtEnqueue`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtEnqueue(_qid: u32, _buf: acltdtBuf, _timeout: i32) -> aclError {
    host_unsupported("acltdtEnqueue")
}

/// `acltdtDequeue`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDequeue(_qid: u32, _buf: *mut acltdtBuf, _timeout: i32) -> aclError {
    host_unsupported("acltdtDequeue")
}

/// `acltdtAllocBuf`: 100000 for a type other than `ACL_TDT_NORMAL_MEM`
/// or `ACL_TDT_DVPP_MEM` or a null `buf`, else 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAllocBuf(_size: usize, type_: u32, buf: *mut acltdtBuf) -> aclError {
    const F: &str = "acltdtAllocBuf";
    if type_ != ACL_TDT_NORMAL_MEM && type_ != ACL_TDT_DVPP_MEM {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: type {type_} is invalid; expected [{ACL_TDT_NORMAL_MEM}, {ACL_TDT_DVPP_MEM}]"
            ),
        );
    }
    if buf.is_null() {
        return common::null_arg(F, "buf");
    }
    host_unsupported(F)
}

/// `acltdtFreeBuf`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtFreeBuf(_buf: acltdtBuf) -> aclError {
    host_unsupported("acltdtFreeBuf")
}

/// `acltdtGetBufData`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufData(
    _buf: acltdtBuf,
    _data_ptr: *mut *mut c_void,
    _size: *mut usize,
) -> aclError {
    host_unsupported("acltdtGetBufData")
}

/// `acltdtSetBufDataLen`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetBufDataLen(_buf: acltdtBuf, _len: usize) -> aclError {
    host_unsupported("acltdtSetBufDataLen")
}

/// `acltdtGetBufDataLen`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufDataLen(_buf: acltdtBuf, _len: *mut usize) -> aclError {
    host_unsupported("acltdtGetBufDataLen")
}

/// `acltdtAppendBufChain`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAppendBufChain(_head_buf: acltdtBuf, _buf: acltdtBuf) -> aclError {
    host_unsupported("acltdtAppendBufChain")
}

/// `acltdtGetBufChainNum`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufChainNum(_head_buf: acltdtBuf, _num: *mut u32) -> aclError {
    host_unsupported("acltdtGetBufChainNum")
}

/// `acltdtGetBufFromChain`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufFromChain(
    _head_buf: acltdtBuf,
    _index: u32,
    _buf: *mut acltdtBuf,
) -> aclError {
    host_unsupported("acltdtGetBufFromChain")
}

/// `acltdtGetBufUserData`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetBufUserData(
    _buf: acltdtBuf,
    _data_ptr: *mut c_void,
    _size: usize,
    _offset: usize,
) -> aclError {
    host_unsupported("acltdtGetBufUserData")
}

/// `acltdtSetBufUserData`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetBufUserData(
    _buf: acltdtBuf,
    _data_ptr: *const c_void,
    _size: usize,
    _offset: usize,
) -> aclError {
    host_unsupported("acltdtSetBufUserData")
}

/// `acltdtCopyBufRef`: 200006 on a host.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCopyBufRef(_buf: acltdtBuf, _new_buf: *mut acltdtBuf) -> aclError {
    host_unsupported("acltdtCopyBufRef")
}

/// `acltdtGrantQueue`: 200006 (`QueueProcessor::acltdtGrantQueue`: "not
/// supported in this version" on a host).
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGrantQueue(
    _qid: u32,
    _pid: i32,
    _permission: u32,
    _timeout: i32,
) -> aclError {
    host_unsupported("acltdtGrantQueue")
}

/// `acltdtAttachQueue`: 200006 (as `acltdtGrantQueue`).
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAttachQueue(
    _qid: u32,
    _timeout: i32,
    _permission: *mut u32,
) -> aclError {
    host_unsupported("acltdtAttachQueue")
}

/// `acltdtCreateQueueRoute`: a route from queue `srcId` to `dstId`.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueueRoute(src_id: u32, dst_id: u32) -> *mut acltdtQueueRoute {
    ROUTES.lock().insert(Arc::new(Mutex::new(Route {
        src: src_id,
        dst: dst_id,
        status: 0,
    }))) as *mut acltdtQueueRoute
}

/// `acltdtDestroyQueueRoute`: 100000 for null or not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyQueueRoute(route: *const acltdtQueueRoute) -> aclError {
    destroy(
        &ROUTES,
        "acltdtQueueRoute",
        "acltdtDestroyQueueRoute",
        route as usize,
    )
}

/// `acltdtGetQueueRouteParam`: the source or destination queue (`u32`) or
/// the status (`i32`). 100000 for a null argument, `len` below 4 or another
/// type.
///
/// # Safety
///
/// `param` is writable for `len` bytes, `paramRetSize` a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueRouteParam(
    route: *const acltdtQueueRoute,
    type_: acltdtQueueRouteParamType,
    len: usize,
    param_ret_size: *mut usize,
    param: *mut c_void,
) -> aclError {
    const F: &str = "acltdtGetQueueRouteParam";
    let r = tri!(route_arg(F, route as usize));
    if param.is_null() {
        return common::null_arg(F, "param");
    }
    if param_ret_size.is_null() {
        return common::null_arg(F, "paramRetSize");
    }
    let r = *r.lock();
    let value = match type_ {
        ACL_TDT_QUEUE_ROUTE_SRC_UINT32 => r.src.to_ne_bytes(),
        ACL_TDT_QUEUE_ROUTE_DST_UINT32 => r.dst.to_ne_bytes(),
        ACL_TDT_QUEUE_ROUTE_STATUS_INT32 => r.status.to_ne_bytes(),
        t => {
            return bad_type(
                F,
                t,
                "ACL_TDT_QUEUE_ROUTE_SRC_UINT32, ACL_TDT_QUEUE_ROUTE_STATUS_INT32",
            );
        }
    };
    // SAFETY: the caller's contract.
    unsafe { get_param(F, &value, len, param_ret_size, param) }
}

/// `acltdtCreateQueueRouteList`: an empty route list.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueueRouteList() -> *mut acltdtQueueRouteList {
    ROUTE_LISTS.lock().insert(Arc::new(Mutex::new(Vec::new()))) as *mut acltdtQueueRouteList
}

/// `acltdtDestroyQueueRouteList`: 100000 for null or not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyQueueRouteList(
    route_list: *const acltdtQueueRouteList,
) -> aclError {
    destroy(
        &ROUTE_LISTS,
        "acltdtQueueRouteList",
        "acltdtDestroyQueueRouteList",
        route_list as usize,
    )
}

/// `acltdtAddQueueRoute`: appends a copy of `route`. 100000 for a null
/// argument.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtAddQueueRoute(
    route_list: *mut acltdtQueueRouteList,
    route: *const acltdtQueueRoute,
) -> aclError {
    const F: &str = "acltdtAddQueueRoute";
    let l = tri!(route_list_arg(F, route_list as usize));
    let r = tri!(route_arg(F, route as usize));
    let r = *r.lock();
    l.lock().push(r);
    ACL_SUCCESS
}

/// `acltdtGetQueueRoute`: copies the route at `index` into `route`. 100000
/// for a null argument or an index out of range.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueRoute(
    route_list: *const acltdtQueueRouteList,
    index: usize,
    route: *mut acltdtQueueRoute,
) -> aclError {
    const F: &str = "acltdtGetQueueRoute";
    let l = tri!(route_list_arg(F, route_list as usize));
    let r = tri!(route_arg(F, route as usize));
    let l = l.lock();
    let Some(got) = l.get(index) else {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: index {index} must be less than routeList size {}",
                l.len()
            ),
        );
    };
    *r.lock() = *got;
    ACL_SUCCESS
}

/// `acltdtGetQueueRouteNum`: the number of routes; 0 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtGetQueueRouteNum(route_list: *const acltdtQueueRouteList) -> usize {
    lookup(
        &ROUTE_LISTS,
        "acltdtQueueRouteList",
        "acltdtGetQueueRouteNum",
        "routeList",
        route_list as usize,
    )
    .map_or(0, |l| l.lock().len())
}

/// `acltdtCreateQueueRouteQueryInfo`: a query with nothing set.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateQueueRouteQueryInfo() -> *mut acltdtQueueRouteQueryInfo {
    QUERY_INFOS
        .lock()
        .insert(Arc::new(Mutex::new(QueryInfo::default()))) as *mut acltdtQueueRouteQueryInfo
}

/// `acltdtDestroyQueueRouteQueryInfo`: 100000 for null or not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyQueueRouteQueryInfo(
    info: *const acltdtQueueRouteQueryInfo,
) -> aclError {
    destroy(
        &QUERY_INFOS,
        "acltdtQueueRouteQueryInfo",
        "acltdtDestroyQueueRouteQueryInfo",
        info as usize,
    )
}

/// `acltdtSetQueueRouteQueryInfo`: the mode, source or destination queue
/// (4 bytes each). 100000 for a null argument, `len` above 4 or another
/// type.
///
/// # Safety
///
/// `value` is readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSetQueueRouteQueryInfo(
    param: *mut acltdtQueueRouteQueryInfo,
    type_: acltdtQueueRouteQueryInfoParamType,
    len: usize,
    value: *const c_void,
) -> aclError {
    const F: &str = "acltdtSetQueueRouteQueryInfo";
    let q = tri!(lookup(
        &QUERY_INFOS,
        "acltdtQueueRouteQueryInfo",
        F,
        "param",
        param as usize
    ));
    if value.is_null() {
        return common::null_arg(F, "value");
    }
    // SAFETY: the caller's contract.
    let src = unsafe { bytes(value, len) };
    let mut q = q.lock();
    let q = &mut *q;
    let (field, set) = match type_ {
        ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM => (&mut q.mode, &mut q.set[0]),
        ACL_TDT_QUEUE_ROUTE_QUERY_SRC_ID_UINT32 => (&mut q.src, &mut q.set[1]),
        ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32 => (&mut q.dst, &mut q.set[2]),
        t => {
            return bad_type(
                F,
                t,
                "ACL_TDT_QUEUE_ROUTE_QUERY_MODE_ENUM, ACL_TDT_QUEUE_ROUTE_QUERY_DST_ID_UINT32",
            );
        }
    };
    let mut b = field.to_ne_bytes();
    tri!(copy_param(F, src, &mut b));
    *field = u32::from_ne_bytes(b);
    *set = true;
    ACL_SUCCESS
}

/// Binds or unbinds each route of a list, writing each one's status;
/// 500001 when any failed (its page: "任何一条绑定失败，本接口返回失败").
fn bind_each(function: &str, list: *mut acltdtQueueRouteList, bind: bool) -> aclError {
    let l = tri!(route_list_arg(function, list as usize));
    tri!(current_device(function));
    let mut l = l.lock();
    let mut failed = Vec::new();
    for r in l.iter_mut() {
        let done = if bind {
            tdt::bind(r.src, r.dst)
        } else {
            tdt::unbind(r.src, r.dst)
        };
        match done {
            Ok(()) => {
                r.status = if bind {
                    ACL_TDT_QUEUE_ROUTE_BIND
                } else {
                    ACL_TDT_QUEUE_ROUTE_UNBIND
                } as i32;
            }
            Err(e) => failed.push(format!("{} -> {}: {e:?}", r.src, r.dst)),
        }
    }
    if failed.is_empty() {
        return ACL_SUCCESS;
    }
    fail(
        ACL_ERROR_FAILURE,
        format!(
            "{function}: {} of {} routes failed ({})",
            failed.len(),
            l.len(),
            failed.join(", ")
        ),
    )
}

/// `acltdtBindQueueRoutes`: binds each route (status
/// `ACL_TDT_QUEUE_ROUTE_BIND` in the list); 100000 for null, 107002 without
/// a current device, 500001 when a route's queue does not exist, it is
/// bound already or it would close a cycle (its status stays as it was).
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtBindQueueRoutes(
    q_route_list: *mut acltdtQueueRouteList,
) -> aclError {
    bind_each("acltdtBindQueueRoutes", q_route_list, true)
}

/// `acltdtUnbindQueueRoutes`: unbinds each route (status
/// `ACL_TDT_QUEUE_ROUTE_UNBIND`); 100000 for null, 107002 without a current
/// device, 500001 when a route is not bound.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtUnbindQueueRoutes(
    q_route_list: *mut acltdtQueueRouteList,
) -> aclError {
    bind_each("acltdtUnbindQueueRoutes", q_route_list, false)
}

/// `acltdtQueryQueueRoutes`: the bound routes from a source, to a
/// destination, or between both (status `ACL_TDT_QUEUE_ROUTE_BIND`; none is
/// abnormal), into `qRouteList` (emptied first). 100000 for a null
/// argument, a mode not set or unknown, or a queue the mode needs not set;
/// 107002 without a current device.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtQueryQueueRoutes(
    query_info: *const acltdtQueueRouteQueryInfo,
    q_route_list: *mut acltdtQueueRouteList,
) -> aclError {
    const F: &str = "acltdtQueryQueueRoutes";
    let l = tri!(route_list_arg(F, q_route_list as usize));
    let q = tri!(lookup(
        &QUERY_INFOS,
        "acltdtQueueRouteQueryInfo",
        F,
        "queryInfo",
        query_info as usize
    ));
    l.lock().clear();
    let q = q.lock();
    // `CheckQueueRouteQueryInfo`.
    let need = |set: bool, what: &str| {
        if set {
            Ok(())
        } else {
            Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{F}: {what} must be set in acltdtQueueRouteQueryInfo (acltdtSetQueueRouteQueryInfo)"
                ),
            ))
        }
    };
    tri!(need(q.set[0], "the mode"));
    let (src, dst) = (q.src, q.dst);
    let keep: Box<dyn Fn(u32, u32) -> bool> = match q.mode {
        ACL_TDT_QUEUE_ROUTE_QUERY_SRC => {
            tri!(need(q.set[1], "the source queue"));
            Box::new(move |s, _| s == src)
        }
        ACL_TDT_QUEUE_ROUTE_QUERY_DST => {
            tri!(need(q.set[2], "the destination queue"));
            Box::new(move |_, d| d == dst)
        }
        ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST => {
            tri!(need(
                q.set[1] && q.set[2],
                "the source and destination queues"
            ));
            Box::new(move |s, d| s == src && d == dst)
        }
        ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL => Box::new(|_, _| false),
        m => {
            return bad_type(
                F,
                m,
                "ACL_TDT_QUEUE_ROUTE_QUERY_SRC, ACL_TDT_QUEUE_ROUTE_QUERY_DST, \
                 ACL_TDT_QUEUE_ROUTE_QUERY_SRC_AND_DST, ACL_TDT_QUEUE_ROUTE_QUERY_ABNORMAL",
            );
        }
    };
    tri!(current_device(F));
    *l.lock() = tdt::routes(keep)
        .into_iter()
        .map(|(s, d)| Route {
            src: s,
            dst: d,
            status: ACL_TDT_QUEUE_ROUTE_BIND as i32,
        })
        .collect();
    ACL_SUCCESS
}

//! Tensor channels of the data-transfer API (`acl/acl_tdt.h`):
//! `acltdtCreateChannel`, `acltdtCreateChannelWithCapacity`,
//! `acltdtSendTensor`, `acltdtReceiveTensor`, `acltdtStopChannel`,
//! `acltdtCleanChannel`, `acltdtQueryChannelSize`, `acltdtDestroyChannel`,
//! after hicann/runtime `src/acl/acl_tdt_channel/tensor_data_transfer.cpp`.
//!
//! The release has two kinds of channel, and so has the simulator:
//!
//! - `acltdtCreateChannelWithCapacity` makes a memory queue of that depth on
//!   the device (`rtMemQueueCreate`); sending enqueues the dataset, receiving
//!   dequeues one: a program sends and receives through one channel. The
//!   timeout is −1 (forever), 0 (no wait) or milliseconds; a full or empty
//!   queue at the end of the wait is `ACL_ERROR_RT_QUEUE_FULL` (207014) or
//!   `ACL_ERROR_RT_QUEUE_EMPTY` (207013). Stopping such a channel does
//!   nothing (the release returns at once), cleaning it empties the queue.
//! - `acltdtCreateChannel` talks to the device's data-transfer process
//!   (`libdatatransfer`): sends go to the device's channel of that name;
//!   a channel named `TF_RECEIVE_<n>` receives what the device sends on
//!   `<n>`. The timeout must be −1 (100000). `acltdtStopChannel` wakes a
//!   blocked receiver, whose receive then fails (`ACL_ERROR_FAILURE`,
//!   500001); cleaning and querying the size are 200006. The simulated
//!   device has no model consuming or producing tensors: what a program
//!   sends on `<n>` is what its `TF_RECEIVE_<n>` channel receives.

use super::common::{self, code};
use super::tdt_dataset::{self, Bytes, MemType, dataset};
use crate::recent_error::fail;
use crate::rt::handles::{self, Lookup, Table};
use crate::tdt::{self, Message, QueueError, Wait};
use acl_sys::{
    ACL_ERROR_FAILURE, ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL, ACL_SUCCESS, ACL_TENSOR_DATA_ABNORMAL,
    ACL_TENSOR_DATA_END_OF_SEQUENCE, ACL_TENSOR_DATA_TENSOR, aclError, acltdtChannelHandle,
    acltdtDataset,
};
use std::ffi::{CStr, c_char};
use std::sync::Arc;

/// The longest queue name, with its NUL (`RT_MQ_MAX_NAME_LEN`).
pub const MAX_NAME_LEN: usize = 128;
/// A channel's least and greatest capacity (its page: "[2, 8192]").
pub const CAPACITY: std::ops::RangeInclusive<usize> = 2..=8192;
/// The prefix of a receiving data-transfer channel.
const RECEIVE_PREFIX: &str = "TF_RECEIVE_";

/// What a channel handle is.
enum Kind {
    /// A data-transfer channel (`acltdtCreateChannel`); `receive` is the
    /// name after `TF_RECEIVE_`, when it has that prefix.
    Tdt { receive: Option<String> },
    /// A memory queue (`acltdtCreateChannelWithCapacity`).
    Queue { qid: u32 },
}

/// An `acltdtChannelHandle`.
struct Channel {
    device: u32,
    name: String,
    kind: Kind,
}

static CHANNELS: Table<Channel> = Table::new(Default::default);

fn channel(function: &str, h: *const acltdtChannelHandle) -> Result<Arc<Channel>, aclError> {
    if h.is_null() {
        return Err(common::null_arg(function, "handle"));
    }
    match CHANNELS.lock().get(h as usize) {
        Lookup::Live(c) => Ok(c),
        bad => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: handle: {}",
                handles::describe_bad("acltdtChannelHandle", h as usize, &bad)
            ),
        )),
    }
}

/// Registers a channel; returns its handle.
fn register(device: u32, name: String, kind: Kind) -> *mut acltdtChannelHandle {
    CHANNELS
        .lock()
        .insert(Arc::new(Channel { device, name, kind })) as *mut acltdtChannelHandle
}

/// The name argument, or null returned with a recorded reason.
///
/// # Safety
///
/// `name` is null or NUL-terminated.
unsafe fn name_arg(function: &str, name: *const c_char) -> Option<String> {
    if name.is_null() {
        common::null_arg(function, "name");
        return None;
    }
    // SAFETY: the caller's contract.
    Some(
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The device argument, or `None` with a recorded reason.
fn device_arg(function: &str, device: u32) -> Option<u32> {
    let id = i32::try_from(device).unwrap_or(i32::MAX);
    super::device::check_id(function, id).ok()
}

/// The message of a queue that refused.
fn queue_code(function: &str, ch: &Channel, e: QueueError) -> aclError {
    let (rc, why) = match e {
        QueueError::Full => (code(ACL_ERROR_RT_QUEUE_FULL), "the channel is full"),
        QueueError::Empty => (code(ACL_ERROR_RT_QUEUE_EMPTY), "the channel is empty"),
        QueueError::Stopped => (ACL_ERROR_FAILURE, "the channel was stopped"),
        QueueError::Destroyed => (ACL_ERROR_FAILURE, "the channel was destroyed"),
    };
    fail(
        rc,
        format!(
            "{function}: {why} (device {}, name {:?})",
            ch.device, ch.name
        ),
    )
}

/// The memory queue of a queue channel (destroyed only with its handle).
fn live_queue(function: &str, ch: &Channel, qid: u32) -> Result<Arc<tdt::MemQueue>, aclError> {
    tdt::queue(qid).ok_or_else(|| queue_code(function, ch, QueueError::Destroyed))
}

/// A data-transfer channel's timeout: −1 only, else 100000.
fn forever_only(function: &str, timeout: i32) -> Result<(), aclError> {
    if timeout == -1 {
        return Ok(());
    }
    Err(fail(
        ACL_ERROR_INVALID_PARAM,
        format!(
            "{function}: timeout {timeout} is invalid: only never timeout is supported, timeout \
             can only be set to -1"
        ),
    ))
}

/// `acltdtCreateChannel`: a data-transfer channel; null for a null name or
/// an invalid device.
///
/// # Safety
///
/// `name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateChannel(
    device_id: u32,
    name: *const c_char,
) -> *mut acltdtChannelHandle {
    const F: &str = "acltdtCreateChannel";
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { name_arg(F, name) }) else {
        return std::ptr::null_mut();
    };
    let Some(device) = device_arg(F, device_id) else {
        return std::ptr::null_mut();
    };
    let receive = name.strip_prefix(RECEIVE_PREFIX).map(str::to_string);
    register(device, name, Kind::Tdt { receive })
}

/// `acltdtCreateChannelWithCapacity`: a channel over a memory queue of
/// `capacity` datasets; null for a null or too long name (127 bytes at
/// most), an invalid device or a capacity outside 2..=8192.
///
/// # Safety
///
/// `name` is null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCreateChannelWithCapacity(
    device_id: u32,
    name: *const c_char,
    capacity: usize,
) -> *mut acltdtChannelHandle {
    const F: &str = "acltdtCreateChannelWithCapacity";
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { name_arg(F, name) }) else {
        return std::ptr::null_mut();
    };
    if name.len() + 1 > MAX_NAME_LEN {
        fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: name [{name}] length {} cannot be larger than {MAX_NAME_LEN}",
                name.len() + 1
            ),
        );
        return std::ptr::null_mut();
    }
    let Some(device) = device_arg(F, device_id) else {
        return std::ptr::null_mut();
    };
    // `NpuDriver::MemQueueCreate`: depth below RT_MQ_DEPTH_MIN is 107000;
    // the page bounds it by 8192.
    if !CAPACITY.contains(&capacity) {
        fail(
            common::PARAM_INVALID,
            format!(
                "{F}: capacity {capacity} is invalid; expected {} to {}",
                CAPACITY.start(),
                CAPACITY.end()
            ),
        );
        return std::ptr::null_mut();
    }
    let qid = tdt::create_queue(capacity);
    register(device, name, Kind::Queue { qid })
}

/// `acltdtStopChannel`: wakes the receivers of a data-transfer channel
/// (their receive fails with 500001); nothing for a queue channel. 100000
/// for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtStopChannel(handle: *mut acltdtChannelHandle) -> aclError {
    let ch = tri!(channel("acltdtStopChannel", handle));
    if let Kind::Tdt {
        receive: Some(from),
    } = &ch.kind
    {
        tdt::channel(ch.device, from).stop();
    }
    ACL_SUCCESS
}

/// `acltdtDestroyChannel`: destroys the handle (and a queue channel's
/// queue). 100000 for null or a handle that is not live.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtDestroyChannel(handle: *mut acltdtChannelHandle) -> aclError {
    const F: &str = "acltdtDestroyChannel";
    let ch = tri!(channel(F, handle));
    if let Kind::Queue { qid } = &ch.kind
        && tdt::destroy_queue(*qid) == Err(tdt::DestroyError::Routed)
    {
        return fail(
            ACL_ERROR_FAILURE,
            format!("{F}: the channel's queue {qid} can not be destroyed: unbind its routes first"),
        );
    }
    CHANNELS.lock().remove_by(handle as usize, F);
    match &ch.kind {
        Kind::Queue { .. } => {}
        Kind::Tdt { receive } => {
            // The last handle of a name gone, its device channel starts
            // afresh (`TdtHostDestroy` when the map empties).
            let live = CHANNELS.lock().all();
            for n in std::iter::once(&ch.name).chain(receive.as_ref()) {
                let used = live.iter().any(|c| {
                    c.device == ch.device
                        && matches!(&c.kind, Kind::Tdt { receive } if &c.name == n
                            || receive.as_ref() == Some(n))
                });
                if !used {
                    tdt::forget_channel(ch.device, n);
                }
            }
        }
    }
    ACL_SUCCESS
}

/// `acltdtCleanChannel`: empties a queue channel; 200006 for a
/// data-transfer channel, 100000 for null.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtCleanChannel(handle: *mut acltdtChannelHandle) -> aclError {
    const F: &str = "acltdtCleanChannel";
    let ch = tri!(channel(F, handle));
    match &ch.kind {
        Kind::Queue { qid } => {
            if let Some(q) = tdt::queue(*qid) {
                q.reset();
            }
            ACL_SUCCESS
        }
        Kind::Tdt { .. } => fail(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!("{F}: only a channel of acltdtCreateChannelWithCapacity can be cleaned"),
        ),
    }
}

/// `acltdtQueryChannelSize`: the number of datasets in a queue channel;
/// 200006 for a data-transfer channel, 100000 for a null argument.
///
/// # Safety
///
/// `size` is a valid out-pointer when not null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtQueryChannelSize(
    handle: *const acltdtChannelHandle,
    size: *mut usize,
) -> aclError {
    const F: &str = "acltdtQueryChannelSize";
    let ch = tri!(channel(F, handle));
    if size.is_null() {
        return common::null_arg(F, "size");
    }
    let Kind::Queue { qid } = &ch.kind else {
        return fail(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!("{F}: only a channel of acltdtCreateChannelWithCapacity has a size"),
        );
    };
    let n = tdt::queue(*qid).map_or(0, |q| q.count());
    // SAFETY: a valid out-pointer (the caller's contract).
    unsafe { *size = n };
    ACL_SUCCESS
}

/// The items of a dataset to send, copied; 100000 for an item type other
/// than tensor, end of sequence or abnormal (`GetTdtDataTypeByAclDataType`)
/// or an item destroyed while in the dataset.
fn serialise(function: &str, d: &tdt_dataset::Dataset) -> Result<Vec<tdt::TensorItem>, aclError> {
    let mut out = Vec::with_capacity(d.items.len());
    for &h in &d.items {
        let it = tdt_dataset::item(function, h as *const _)?;
        if ![
            ACL_TENSOR_DATA_TENSOR,
            ACL_TENSOR_DATA_END_OF_SEQUENCE,
            ACL_TENSOR_DATA_ABNORMAL,
        ]
        .contains(&it.kind)
        {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!(
                    "{function}: tensor type {} of an item cannot be sent; expected \
                     ACL_TENSOR_DATA_END_OF_SEQUENCE or ACL_TENSOR_DATA_TENSOR or \
                     ACL_TENSOR_DATA_ABNORMAL",
                    it.kind
                ),
            ));
        }
        if let Bytes::User { addr, len } = it.bytes
            && addr != 0
            && len != 0
            && d.mem == MemType::Device
            && let Err(why) = crate::mem::table::check_device_range(addr, len)
        {
            return Err(fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{function}: an item's device data: {why}"),
            ));
        }
        // SAFETY: device data was checked above; host data is the user's
        // memory of `len` bytes, as the runtime assumes.
        out.push(unsafe { it.serialise() });
    }
    Ok(out)
}

/// `acltdtSendTensor`: sends a copy of the dataset. 100000 for a null
/// argument, an item type that cannot be sent, or (data-transfer channel)
/// a timeout other than −1; 207014 when a queue channel stays full.
///
/// # Safety
///
/// The dataset's host items' data are readable for their sizes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtSendTensor(
    handle: *const acltdtChannelHandle,
    dataset: *const acltdtDataset,
    timeout: i32,
) -> aclError {
    const F: &str = "acltdtSendTensor";
    let ch = tri!(channel(F, handle));
    let d = tri!(self::dataset(F, dataset));
    let q = match &ch.kind {
        Kind::Queue { qid } => tri!(live_queue(F, &ch, *qid)),
        Kind::Tdt { .. } => {
            tri!(forever_only(F, timeout));
            tdt::channel(ch.device, &ch.name)
        }
    };
    let items = tri!(serialise(F, &d.lock()));
    match q.push(Message::Tensors(items), Wait::from_ms(timeout)) {
        Ok(()) => {
            if let Kind::Queue { qid } = ch.kind {
                tdt::forward(qid);
            }
            ACL_SUCCESS
        }
        Err(e) => queue_code(F, &ch, e),
    }
}

/// `acltdtReceiveTensor`: receives one dataset into `dataset`, which then
/// owns the received items. 100000 for a null argument, a dataset holding
/// items the user added, or (data-transfer channel) a timeout other than −1
/// or a channel not named `TF_RECEIVE_*`; 207013 when a queue channel stays
/// empty; 500001 when a data-transfer channel is stopped.
///
/// # Safety
///
/// None: the handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn acltdtReceiveTensor(
    handle: *const acltdtChannelHandle,
    dataset: *mut acltdtDataset,
    timeout: i32,
) -> aclError {
    const F: &str = "acltdtReceiveTensor";
    let ch = tri!(channel(F, handle));
    let d = tri!(self::dataset(F, dataset));
    let q = match &ch.kind {
        Kind::Queue { qid } => tri!(live_queue(F, &ch, *qid)),
        Kind::Tdt { receive } => {
            tri!(forever_only(F, timeout));
            let Some(from) = receive else {
                return fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                        "{F}: it is not a receive channel (its name {:?} does not start with \
                         {RECEIVE_PREFIX}), failed to receive",
                        ch.name
                    ),
                );
            };
            tdt::channel(ch.device, from)
        }
    };
    let msg = match q.pop(Wait::from_ms(timeout)) {
        Ok(m) => m,
        Err(e) => return queue_code(F, &ch, e),
    };
    if let Kind::Queue { qid } = ch.kind {
        tdt::refill(qid);
    }
    let Message::Tensors(items) = msg else {
        return fail(
            ACL_ERROR_FAILURE,
            format!("{F}: the queue held a buffer, not a dataset"),
        );
    };
    let mut d = d.lock();
    // `TensorDatasetDeserializes(V2)`: the dataset must be empty or hold
    // received items (which are replaced).
    if !d.items.is_empty() && !d.free_self {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: the dataset holds {} items: it must be empty (or hold received items) \
                 before receiving",
                d.items.len()
            ),
        );
    }
    if d.free_self {
        tdt_dataset::drop_owned(&d.items);
    }
    d.items = items
        .into_iter()
        .map(tdt_dataset::insert_received)
        .collect();
    d.free_self = true;
    ACL_SUCCESS
}

//! Data-transfer channels (`acltdt*`): queues of host tensors between the
//! host and a device's data-preprocessing or model side.
//!
//! A [`Channel`] carries *datasets*: lists of [`HostTensor`]s (a data type,
//! a shape and the bytes), or markers ([`TensorKind::EndOfSequence`],
//! [`TensorKind::Abnormal`]) that tell the receiver the stream of data ended
//! or failed. [`Channel::send`] copies a dataset into the channel and
//! [`Channel::receive`] takes the oldest one out; both wait for room or for
//! data up to a timeout (`None`: for ever; `Some(Duration::ZERO)`: not at
//! all), after which the runtime answers 207014 (full) or 207013 (empty).
//! A channel is made with a capacity (`acltdtCreateChannelWithCapacity`, 2
//! to 8192 datasets) and a name; dropping it destroys it.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::tdt::{Channel, HostTensor};
//! use acl::{DataType, Device, Runtime};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let channel = Channel::with_capacity(&npu, "batches", 4)?;
//! let batch = HostTensor::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]);
//! channel.send(std::slice::from_ref(&batch), None)?;
//! let received = channel.receive(None)?;
//! assert_eq!(received, vec![batch]);
//! assert_eq!(received[0].dtype, Some(DataType::Float));
//! # Ok::<(), acl::Error>(())
//! ```

use crate::Element;
use crate::result::raw;
use crate::{DataType, Device, Error, Result, release, result};
use std::ffi::CString;
use std::time::Duration;

/// What an item of a dataset is (`acltdtTensorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorKind {
    /// `ACL_TENSOR_DATA_TENSOR`: a tensor with data.
    Tensor,
    /// `ACL_TENSOR_DATA_END_OF_SEQUENCE`: the sender has no more data.
    EndOfSequence,
    /// `ACL_TENSOR_DATA_ABNORMAL`: the sender failed.
    Abnormal,
}

impl TensorKind {
    fn to_raw(self) -> raw::acltdtTensorType {
        match self {
            TensorKind::Tensor => raw::ACL_TENSOR_DATA_TENSOR,
            TensorKind::EndOfSequence => raw::ACL_TENSOR_DATA_END_OF_SEQUENCE,
            TensorKind::Abnormal => raw::ACL_TENSOR_DATA_ABNORMAL,
        }
    }

    fn from_raw(raw: raw::acltdtTensorType) -> Option<TensorKind> {
        [
            TensorKind::Tensor,
            TensorKind::EndOfSequence,
            TensorKind::Abnormal,
        ]
        .into_iter()
        .find(|k| k.to_raw() == raw)
    }
}

/// One item of a dataset, in host memory.
///
/// `Send + Sync`: plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTensor {
    /// A tensor or a marker.
    pub kind: TensorKind,
    /// The data type of `data`'s elements (`None` for a marker, which the
    /// runtime types `ACL_DT_UNDEFINED`).
    pub dtype: Option<DataType>,
    /// The shape (empty for a scalar or a marker).
    pub dims: Vec<i64>,
    /// The bytes, in the host's byte order.
    pub data: Vec<u8>,
}

impl HostTensor {
    /// A tensor of shape `dims` holding `values`.
    pub fn from_slice<T: Element>(dims: &[i64], values: &[T]) -> HostTensor {
        // SAFETY: `Element` types are plain data without padding (integers,
        // floats and the one-byte `Bool`), so their bytes may be read as
        // `u8`s.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
        };
        HostTensor {
            kind: TensorKind::Tensor,
            dtype: Some(T::DATA_TYPE),
            dims: dims.to_vec(),
            data: bytes.to_vec(),
        }
    }

    /// A marker item ([`TensorKind::EndOfSequence`] or
    /// [`TensorKind::Abnormal`]) without data.
    pub fn marker(kind: TensorKind) -> HostTensor {
        HostTensor {
            kind,
            dtype: None,
            dims: Vec::new(),
            data: Vec::new(),
        }
    }
}

/// `None` → −1 (for ever), else whole milliseconds (a non-zero duration is
/// at least 1 ms).
fn timeout_ms(function: &'static str, timeout: Option<Duration>) -> Result<i32> {
    let Some(t) = timeout else { return Ok(-1) };
    let ms = t.as_millis().max(u128::from(!t.is_zero()));
    i32::try_from(ms).map_err(|_| {
        Error::invalid(
            function,
            format!("the timeout {t:?} is above i32::MAX milliseconds"),
        )
    })
}

/// A dataset handle destroyed on drop (with the items it owns).
struct Dataset {
    raw: *mut raw::acltdtDataset,
    items: Vec<*mut raw::acltdtDataItem>,
}

impl Dataset {
    fn new() -> Result<Dataset> {
        Ok(Dataset {
            raw: result::tdt_create_dataset()?,
            items: Vec::new(),
        })
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        // SAFETY: the dataset and the items were made here and are
        // destroyed once; nothing uses them after this.
        if let Err(e) = unsafe { result::tdt_destroy_dataset(self.raw) } {
            release::record("tdt::Dataset", e);
        }
        for item in self.items.drain(..) {
            // SAFETY: as above.
            if let Err(e) = unsafe { result::tdt_destroy_data_item(item) } {
                release::record("tdt::DataItem", e);
            }
        }
    }
}

/// A data-transfer channel of one device.
///
/// `Send + Sync`: the runtime's channel calls are thread-safe (a sender and
/// a receiver on two threads is the channel's purpose); the handle is
/// destroyed once, by `Drop`, when no call can use it any more.
#[derive(Debug)]
pub struct Channel {
    raw: *mut raw::acltdtChannelHandle,
    device: Device,
    name: String,
}

// SAFETY: see the type's docs: an opaque runtime handle whose calls the
// runtime serialises.
unsafe impl Send for Channel {}
// SAFETY: as above.
unsafe impl Sync for Channel {}

impl Channel {
    /// A channel named `name` on `device` holding at most `capacity`
    /// datasets.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a name with a NUL byte; the runtime's
    /// (a capacity outside 2–8192, a name of 128 bytes or more).
    #[doc(alias = "acltdtCreateChannelWithCapacity")]
    pub fn with_capacity(device: &Device, name: &str, capacity: usize) -> Result<Channel> {
        let c = CString::new(name)
            .map_err(|_| Error::invalid("Channel::with_capacity", "the name holds a NUL byte"))?;
        device.bind()?;
        let raw = result::tdt_create_channel_with_capacity(device.ordinal(), &c, capacity)?;
        Ok(Channel {
            raw,
            device: device.clone(),
            name: name.to_string(),
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Sends the dataset `items` (copied: the slices may be reused at once),
    /// waiting up to `timeout` for room.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_QUEUE_FULL` (207014) when the channel stays full;
    /// [`Error::InvalidArgument`] for an empty dataset or a tensor whose
    /// bytes do not match its shape and type; the runtime's.
    #[doc(alias = "acltdtSendTensor")]
    pub fn send(&self, items: &[HostTensor], timeout: Option<Duration>) -> Result<()> {
        const F: &str = "Channel::send";
        let ms = timeout_ms(F, timeout)?;
        if items.is_empty() {
            return Err(Error::invalid(F, "a dataset holds at least one item"));
        }
        for (i, t) in items.iter().enumerate() {
            let elements = t
                .dims
                .iter()
                .try_fold(1i64, |n, &d| if d < 0 { None } else { n.checked_mul(d) });
            let want = elements
                .and_then(|n| usize::try_from(n).ok())
                .zip(t.dtype)
                .and_then(|(n, d)| n.checked_mul(d.size()));
            if t.kind == TensorKind::Tensor && want != Some(t.data.len()) {
                return Err(Error::invalid(
                    F,
                    format!(
                        "item {i}: shape {:?} of {:?} needs {want:?} bytes, the data has {}",
                        t.dims,
                        t.dtype,
                        t.data.len()
                    ),
                ));
            }
        }
        self.device.bind()?;
        let mut dataset = Dataset::new()?;
        for t in items {
            // SAFETY: `t.data` lives until `dataset` is dropped below, after
            // the send, which copies the bytes.
            let item = unsafe {
                result::tdt_create_data_item(
                    t.kind.to_raw(),
                    &t.dims,
                    t.dtype.map_or(raw::ACL_DT_UNDEFINED, DataType::to_raw),
                    t.data.as_ptr().cast_mut().cast(),
                    t.data.len(),
                )
            }?;
            dataset.items.push(item);
            // SAFETY: both handles are live (made here).
            unsafe { result::tdt_add_data_item(dataset.raw, item) }?;
        }
        // SAFETY: the channel is live (owned); the dataset and its items are
        // live and point to `items`' bytes.
        unsafe { result::tdt_send_tensor(self.raw, dataset.raw, ms) }
    }

    /// Receives the oldest dataset, waiting up to `timeout` for one.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_QUEUE_EMPTY` (207013) when the channel stays empty;
    /// [`Error::InvalidArgument`] for an item of a kind or data type this
    /// crate does not name; the runtime's.
    #[doc(alias = "acltdtReceiveTensor")]
    pub fn receive(&self, timeout: Option<Duration>) -> Result<Vec<HostTensor>> {
        const F: &str = "Channel::receive";
        let ms = timeout_ms(F, timeout)?;
        self.device.bind()?;
        let dataset = Dataset::new()?;
        // SAFETY: the channel is live (owned); the dataset is new and empty.
        unsafe { result::tdt_receive_tensor(self.raw, dataset.raw, ms) }?;
        // SAFETY: the dataset is live; it owns what it received.
        let n = unsafe { result::tdt_get_dataset_size(dataset.raw) }?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: the dataset is live and holds `n` items.
            let item = unsafe { result::tdt_get_data_item(dataset.raw, i) }?;
            // SAFETY: the item is live while the dataset is.
            let (kind, dtype, dims, addr, size) = unsafe { result::tdt_item_parts(item) }?;
            let kind = TensorKind::from_raw(kind)
                .ok_or_else(|| Error::invalid(F, format!("item {i} has tensor type {kind}")))?;
            let dtype = match DataType::from_raw(dtype) {
                Some(d) => Some(d),
                None if dtype == raw::ACL_DT_UNDEFINED => None,
                None => return Err(Error::invalid(F, format!("item {i} has data type {dtype}"))),
            };
            let data = if size == 0 || addr.is_null() {
                Vec::new()
            } else {
                // SAFETY: the runtime's item holds `size` bytes at `addr`
                // while the dataset lives (it does, until the end of this
                // function).
                unsafe { std::slice::from_raw_parts(addr.cast::<u8>(), size) }.to_vec()
            };
            out.push(HostTensor {
                kind,
                dtype,
                dims,
                data,
            });
        }
        Ok(out)
    }

    /// The number of datasets waiting in the channel.
    ///
    /// # Errors
    ///
    /// The runtime's.
    #[doc(alias = "acltdtQueryChannelSize")]
    pub fn len(&self) -> Result<usize> {
        self.device.bind()?;
        // SAFETY: the channel is live (owned).
        unsafe { result::tdt_query_channel_size(self.raw) }
    }

    /// Whether no dataset waits.
    ///
    /// # Errors
    ///
    /// The runtime's.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // As the crate's other handles: never destroyed from inside a host
        // function (`release::outside_host_fn`), failures recorded.
        let (handle, device) = (self.raw as usize, self.device.clone());
        release::outside_host_fn(move || {
            let outcome = device.bind().and_then(|()| {
                // SAFETY: the handle was made by `with_capacity`, is destroyed
                // once, and the dropped `Channel` was its only owner.
                unsafe { result::tdt_destroy_channel(handle as *mut raw::acltdtChannelHandle) }
            });
            if let Err(e) = outcome {
                release::record("tdt::Channel", e);
            }
        });
    }
}

//! The device type and the per-device state: one runtime for the process,
//! and per NPU ordinal one `acl::Device` with its caching allocator, one
//! compute stream and the random-number state.

use acl::{Device, Runtime, Stream};
use burn_backend::{DeviceId, DeviceOps};
use parking_lot::{Mutex, RwLock};
use std::sync::{Arc, OnceLock};

/// The `type_id` of [`CannDevice`] in Burn's [`DeviceId`].
const TYPE_ID: u16 = 0x4e50; // "NP"

/// One Ascend NPU, by ordinal; `Default` is device 0.
///
/// `Send + Sync`: a plain value; the device's state lives in a process-wide
/// table.
///
/// ```
/// use burn_cann::CannDevice;
/// assert_eq!(CannDevice::default(), CannDevice::new(0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CannDevice {
    /// The NPU ordinal (`aclrtSetDevice`'s `deviceId`).
    pub index: u32,
}

impl CannDevice {
    /// Device `index`.
    pub const fn new(index: u32) -> CannDevice {
        CannDevice { index }
    }
}

impl burn_backend::Device for CannDevice {
    fn from_id(device_id: DeviceId) -> Self {
        CannDevice::new(u32::from(device_id.index_id))
    }

    fn to_id(&self) -> DeviceId {
        DeviceId {
            type_id: TYPE_ID,
            // Burn's ids are 16-bit; an ordinal above that cannot exist.
            index_id: u16::try_from(self.index).unwrap_or(u16::MAX),
        }
    }
}

impl DeviceOps for CannDevice {}

/// The state of one device: its handle, its compute stream, its generator.
pub(crate) struct Ctx {
    pub(crate) stream: Stream,
    /// `(seed, offset)`: the generator state the random operators take, as
    /// torch_npu's generator hands it to aclnn (the offset advances by the
    /// number of values drawn, so no two draws repeat).
    pub(crate) rng: Mutex<(u64, u64)>,
}

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
static CTXS: RwLock<Vec<Option<Arc<Ctx>>>> = RwLock::new(Vec::new());

/// The process's AscendCL runtime (initialised on first use).
pub(crate) fn runtime() -> Result<&'static Runtime, String> {
    RUNTIME
        .get_or_init(|| Runtime::init().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| format!("burn-cann: AscendCL could not be initialised: {e}"))
}

fn open(index: u32) -> Result<Ctx, String> {
    let rt = runtime()?;
    let device = Device::new(rt, index)
        .map_err(|e| format!("burn-cann: NPU {index} cannot be opened: {e}"))?;
    // The caching allocator (stream-ordered reuse, as torch_npu's): enabled
    // unless the program already put one behind this device.
    if device.caching_allocator().is_none() {
        let _ = device.enable_caching_allocator(acl::allocator::AllocatorConfig::default());
    }
    let stream = device
        .new_stream()
        .map_err(|e| format!("burn-cann: NPU {index}: no stream: {e}"))?;
    Ok(Ctx {
        stream,
        rng: Mutex::new((0, 0)),
    })
}

/// The state of `device`, opened on first use.
///
/// # Panics
///
/// When the device cannot be opened (no CANN, no such ordinal): Burn's ops
/// have no error channel, so the panic message says which device and why.
pub(crate) fn ctx(device: &CannDevice) -> Arc<Ctx> {
    let i = device.index as usize;
    if let Some(Some(c)) = CTXS.read().get(i) {
        return c.clone();
    }
    let mut all = CTXS.write();
    if let Some(Some(c)) = all.get(i) {
        return c.clone();
    }
    let c = Arc::new(open(device.index).unwrap_or_else(|e| panic!("{e}")));
    if all.len() <= i {
        all.resize(i + 1, None);
    }
    all[i] = Some(c.clone());
    c
}

/// How many NPUs the runtime sees (0 without a usable runtime).
pub(crate) fn device_count() -> usize {
    runtime()
        .ok()
        .and_then(|rt| rt.device_count().ok())
        .map_or(0, |n| n as usize)
}

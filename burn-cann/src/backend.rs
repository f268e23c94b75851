//! The `Backend` type: Burn's types and backend-wide functions.

use crate::device::{self, CannDevice};
use crate::ops::qtensor::CannQTensor;
use crate::tensor::{CannTensor, Kind};
use burn_backend::{Backend, BackendTypes, DType, DTypeUsage, DTypeUsageSet, ExecutionError};

/// Burn's backend for Ascend NPUs, on `acl`'s operators.
///
/// Floats are `f32` by default (`f16`, `bf16` through Burn's dtype casts);
/// ints `i64` (`i32` too); bools one byte each (`ACL_BOOL`). Every tensor
/// lives in device memory; operators run on one compute stream per device.
///
/// `Send + Sync`: a marker type without data.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cann;

impl BackendTypes for Cann {
    type Device = CannDevice;
    type FloatTensorPrimitive = CannTensor;
    type FloatElem = f32;
    type IntTensorPrimitive = CannTensor;
    type IntElem = i64;
    type BoolTensorPrimitive = CannTensor;
    type BoolElem = bool;
    type QuantizedTensorPrimitive = CannQTensor;
}

impl Backend for Cann {
    fn name(device: &CannDevice) -> String {
        format!("cann<npu:{}>", device.index)
    }

    /// Seeds the device's generator: the random operators take `(seed,
    /// offset)`, the offset restarting at 0.
    fn seed(device: &CannDevice, seed: u64) {
        *device::ctx(device).rng.lock() = (seed, 0);
    }

    fn sync(device: &CannDevice) -> Result<(), ExecutionError> {
        device::ctx(device)
            .stream
            .synchronize()
            .map_err(|e| ExecutionError::WithContext {
                reason: format!("burn-cann sync of NPU {}: {e}", device.index),
            })
    }

    fn dtype_usage(_device: &CannDevice, dtype: DType) -> DTypeUsageSet {
        match Kind::of(dtype) {
            Some(_) => DTypeUsage::general(),
            None => DTypeUsageSet::empty(),
        }
    }

    fn device_count(_type_id: u16) -> usize {
        device::device_count()
    }
}

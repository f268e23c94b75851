//! `QTensorOps`: quantization is not supported; every op says so.

use super::*;
use crate::Cann;
use crate::kernel::unsupported;
use burn_backend::ops::QTensorOps;
use burn_backend::quantization::{QuantScheme, QuantizationParametersPrimitive};
use burn_backend::tensor::{FloatTensor, IntTensor, QuantizedTensor};
use burn_backend::{DType, FloatDType, QTensorPrimitive, TensorMetadata};

const WHY: &str = "quantized tensors are not implemented by burn-cann yet";

/// The quantized tensor primitive. None is ever made: every way to make one
/// (`q_from_data`, `quantize`) reports that quantization is not supported.
///
/// `Send + Sync`: plain data.
#[derive(Clone, Debug)]
pub struct CannQTensor {
    scheme: QuantScheme,
    shape: Vec<usize>,
}

impl TensorMetadata for CannQTensor {
    fn dtype(&self) -> DType {
        DType::QFloat(self.scheme)
    }

    fn shape(&self) -> Shape {
        Shape::from(self.shape.clone())
    }
}

impl QTensorPrimitive for CannQTensor {
    fn scheme(&self) -> &QuantScheme {
        &self.scheme
    }
}

impl QTensorOps<Cann> for Cann {
    fn q_from_data(_data: TensorData, _device: &CannDevice) -> QuantizedTensor<Cann> {
        unsupported("q_from_data", WHY)
    }

    fn quantize(
        _tensor: FloatTensor<Cann>,
        _scheme: &QuantScheme,
        _qparams: QuantizationParametersPrimitive<Cann>,
    ) -> QuantizedTensor<Cann> {
        unsupported("quantize", WHY)
    }

    fn dequantize(_tensor: QuantizedTensor<Cann>, _dtype: FloatDType) -> FloatTensor<Cann> {
        unsupported("dequantize", WHY)
    }

    fn q_device(_tensor: &QuantizedTensor<Cann>) -> CannDevice {
        unsupported("q_device", WHY)
    }

    fn q_to_device(_tensor: QuantizedTensor<Cann>, _device: &CannDevice) -> QuantizedTensor<Cann> {
        unsupported("q_to_device", WHY)
    }

    fn q_reshape(_tensor: QuantizedTensor<Cann>, _shape: Shape) -> QuantizedTensor<Cann> {
        unsupported("q_reshape", WHY)
    }

    fn q_into_data(
        _tensor: QuantizedTensor<Cann>,
    ) -> impl Future<Output = Result<TensorData, ExecutionError>> + Send {
        std::future::ready(Err(ExecutionError::WithContext {
            reason: format!("burn-cann: `q_into_data` is not supported: {WHY}"),
        }))
    }

    fn q_expand(_tensor: QuantizedTensor<Cann>, _shape: Shape) -> QuantizedTensor<Cann> {
        unsupported("q_expand", WHY)
    }

    fn q_swap_dims(
        _tensor: QuantizedTensor<Cann>,
        _dim1: usize,
        _dim2: usize,
    ) -> QuantizedTensor<Cann> {
        unsupported("q_swap_dims", WHY)
    }

    fn q_permute(_tensor: QuantizedTensor<Cann>, _axes: &[usize]) -> QuantizedTensor<Cann> {
        unsupported("q_permute", WHY)
    }

    fn q_flip(_tensor: QuantizedTensor<Cann>, _axes: &[usize]) -> QuantizedTensor<Cann> {
        unsupported("q_flip", WHY)
    }

    fn q_select(
        _tensor: QuantizedTensor<Cann>,
        _dim: usize,
        _indices: IntTensor<Cann>,
    ) -> QuantizedTensor<Cann> {
        unsupported("q_select", WHY)
    }

    fn q_slice(_tensor: QuantizedTensor<Cann>, _slices: &[Slice]) -> QuantizedTensor<Cann> {
        unsupported("q_slice", WHY)
    }
}

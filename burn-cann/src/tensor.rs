//! The tensor primitive: device memory of one element type (an
//! [`acl::DynTensor`], shared between views), and a strided layout (shape,
//! strides, offset) over it, read through [`DynView::strided`].

use crate::device::{CannDevice, ctx};
use acl::aclnn::{TensorArg, TensorArgMut};
use acl::memory::Bool;
use acl::{DataType, DynTensor, DynView, DynViewMut, Stream, Tensor};
use burn_backend::BoolStore;
use burn_backend::{DType, Shape, TensorData, TensorMetadata};
use half::{bf16, f16};
use std::sync::Arc;

/// The element types the backend stores, with their Burn and CANN names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    F32,
    F16,
    BF16,
    I64,
    I32,
    Bool,
}

impl Kind {
    /// The kind of a Burn dtype, or `None` when the backend does not store it.
    pub(crate) fn of(dtype: DType) -> Option<Kind> {
        Some(match dtype {
            DType::F32 | DType::Flex32 => Kind::F32,
            DType::F16 => Kind::F16,
            DType::BF16 => Kind::BF16,
            DType::I64 => Kind::I64,
            DType::I32 => Kind::I32,
            DType::Bool(BoolStore::Native) => Kind::Bool,
            _ => return None,
        })
    }

    /// As [`Kind::of`], panicking with the op's name for a dtype the backend
    /// does not store.
    pub(crate) fn expect(op: &str, dtype: DType) -> Kind {
        Kind::of(dtype)
            .unwrap_or_else(|| panic!("burn-cann {op}: dtype {dtype:?} is not supported by this backend (it stores f32, f16, bf16, i64, i32 and native bool)"))
    }

    pub(crate) fn dtype(self) -> DType {
        match self {
            Kind::F32 => DType::F32,
            Kind::F16 => DType::F16,
            Kind::BF16 => DType::BF16,
            Kind::I64 => DType::I64,
            Kind::I32 => DType::I32,
            Kind::Bool => DType::Bool(BoolStore::Native),
        }
    }

    pub(crate) fn acl(self) -> DataType {
        match self {
            Kind::F32 => DataType::Float,
            Kind::F16 => DataType::Float16,
            Kind::BF16 => DataType::BFloat16,
            Kind::I64 => DataType::Int64,
            Kind::I32 => DataType::Int32,
            Kind::Bool => DataType::Bool,
        }
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, Kind::F32 | Kind::F16 | Kind::BF16)
    }
}

/// `len` elements of `kind` (at least one: an empty tensor still owns an
/// allocation, never read) for an operator to write: the storage of a new
/// tensor, flat (views give it its shape).
pub(crate) fn storage(stream: &Stream, kind: Kind, len: usize) -> acl::Result<DynTensor> {
    // SAFETY: every caller hands the storage to an operator or copy that
    // writes each element of the view it makes over it before anything
    // reads it; a failed operator drops the storage unread.
    unsafe { DynTensor::uninit(stream, kind.acl(), &[len.max(1)]) }
}

/// Burn's tensor primitive on an NPU: a strided view over shared device
/// memory. Cloning it shares the memory (no copy); operators that write
/// in place copy first when the memory is shared.
///
/// `Send + Sync`: the memory is an `acl` buffer (itself `Send + Sync`) behind
/// an `Arc`, and the layout is plain data.
#[derive(Clone)]
pub struct CannTensor {
    pub(crate) buf: Arc<DynTensor>,
    kind: Kind,
    pub(crate) shape: Vec<usize>,
    pub(crate) strides: Vec<usize>,
    pub(crate) offset: usize,
    pub(crate) device: CannDevice,
}

impl std::fmt::Debug for CannTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CannTensor")
            .field("dtype", &self.kind())
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("offset", &self.offset)
            .field("device", &self.device)
            .finish()
    }
}

impl TensorMetadata for CannTensor {
    fn dtype(&self) -> DType {
        self.kind().dtype()
    }

    fn shape(&self) -> Shape {
        Shape::from(self.shape.clone())
    }
}

/// Row-major strides of `shape`.
pub(crate) fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

impl CannTensor {
    /// A contiguous tensor of `shape` over `buf`, whose dtype is `kind`'s
    /// (made by [`storage`] or uploaded from `kind`'s elements).
    fn new(buf: DynTensor, kind: Kind, shape: Vec<usize>, device: CannDevice) -> CannTensor {
        CannTensor {
            buf: Arc::new(buf),
            kind,
            strides: contiguous_strides(&shape),
            shape,
            offset: 0,
            device,
        }
    }

    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    pub(crate) fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the view is row-major without gaps (at any offset).
    pub(crate) fn is_contiguous(&self) -> bool {
        let mut expected = 1;
        for (&d, &s) in self.shape.iter().zip(&self.strides).rev() {
            if d != 1 && s != expected {
                return false;
            }
            expected *= d;
        }
        true
    }

    /// The view over the storage.
    pub(crate) fn view(&self) -> acl::Result<DynView<'_>> {
        DynView::strided(&self.buf, &self.shape, &self.strides, self.offset)
    }

    /// The `aclTensor` of this view, as an operator input.
    pub(crate) fn arg(&self) -> acl::Result<TensorArg<'_>> {
        self.view()?.arg()
    }

    /// The stream of this tensor's device.
    pub(crate) fn stream(&self) -> Stream {
        ctx(&self.device).stream.clone()
    }

    /// The elements in row-major order, copied to the host.
    pub(crate) fn to_data(&self) -> acl::Result<TensorData> {
        let t = if self.is_contiguous() && self.offset == 0 {
            self.clone()
        } else {
            crate::kernel::contiguous(self)?
        };
        let n = t.numel();
        let shape = t.shape.clone();
        Ok(match &*t.buf {
            DynTensor::Float(b) => TensorData::new(host(b, n)?, shape),
            DynTensor::Float16(b) => TensorData::new(host(b, n)?, shape),
            DynTensor::BFloat16(b) => TensorData::new(host(b, n)?, shape),
            DynTensor::Int64(b) => TensorData::new(host(b, n)?, shape),
            DynTensor::Int32(b) => TensorData::new(host(b, n)?, shape),
            DynTensor::Bool(b) => {
                let v: Vec<bool> = host(b, n)?.into_iter().map(Bool::get).collect();
                TensorData::new(v, shape)
            }
            other => {
                return Err(crate::kernel::invalid(
                    "burn-cann into_data",
                    format!(
                        "a tensor of {}, which this backend does not store",
                        other.dtype()
                    ),
                ));
            }
        })
    }

    /// A tensor holding `data` (converted to `kind` first when it differs).
    pub(crate) fn from_data(
        data: TensorData,
        kind: Kind,
        device: &CannDevice,
    ) -> acl::Result<CannTensor> {
        let data = if data.dtype == kind.dtype() {
            data
        } else {
            data.convert_dtype(kind.dtype())
        };
        let shape = data.shape.to_vec();
        let s = ctx(device).stream.clone();
        let bad = |e: burn_backend::DataError| {
            crate::kernel::invalid("burn-cann from_data", format!("{e:?}"))
        };
        let buf = match kind {
            Kind::F32 => upload::<f32>(&s, data.as_slice().map_err(bad)?)?,
            Kind::F16 => upload::<f16>(&s, data.as_slice().map_err(bad)?)?,
            Kind::BF16 => upload::<bf16>(&s, data.as_slice().map_err(bad)?)?,
            Kind::I64 => upload::<i64>(&s, data.as_slice().map_err(bad)?)?,
            Kind::I32 => upload::<i32>(&s, data.as_slice().map_err(bad)?)?,
            Kind::Bool => {
                let v: Vec<Bool> = data
                    .as_slice::<bool>()
                    .map_err(bad)?
                    .iter()
                    .map(|&b| Bool::from(b))
                    .collect();
                upload(&s, &v)?
            }
        };
        Ok(CannTensor::new(buf, kind, shape, *device))
    }
}

/// Flat storage holding `data` (one zero element for an empty slice).
fn upload<T: acl::Element + Default>(s: &Stream, data: &[T]) -> acl::Result<DynTensor>
where
    DynTensor: From<Tensor<T>>,
{
    let one = [T::default()];
    let data = if data.is_empty() { &one[..] } else { data };
    Ok(DynTensor::from(Tensor::from_host(s, data, &[data.len()])?))
}

/// The first `n` elements of `t` on the host.
fn host<T: acl::Element>(t: &Tensor<T>, n: usize) -> acl::Result<Vec<T>> {
    let mut v = t.to_host_vec()?;
    v.truncate(n);
    Ok(v)
}

/// An output under construction: fresh contiguous storage for `shape`.
pub(crate) struct Out {
    buf: DynTensor,
    kind: Kind,
    pub(crate) shape: Vec<usize>,
}

impl Out {
    pub(crate) fn new(stream: &Stream, kind: Kind, shape: &[usize]) -> acl::Result<Out> {
        let n = shape.iter().product();
        Ok(Out {
            buf: storage(stream, kind, n)?,
            kind,
            shape: shape.to_vec(),
        })
    }

    /// The `aclTensor` of the output, for the operator to write.
    pub(crate) fn arg(&mut self) -> acl::Result<TensorArgMut<'_>> {
        let strides = contiguous_strides(&self.shape);
        DynViewMut::strided(&mut self.buf, &self.shape, &strides, 0)?.arg_mut()
    }

    pub(crate) fn done(self, device: CannDevice) -> CannTensor {
        CannTensor::new(self.buf, self.kind, self.shape, device)
    }
}

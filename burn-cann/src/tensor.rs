//! The tensor primitive: device memory of one element type, shared between
//! views, and a strided layout (shape, strides, offset) over it.

use crate::device::{CannDevice, ctx};
use acl::aclnn::{Layout, TensorArg, TensorArgMut};
use acl::memory::Bool;
use acl::{DataType, DeviceBuffer, Stream};
use burn_backend::BoolStore;
use burn_backend::{DType, Shape, TensorData, TensorMetadata};
use half::{bf16, f16};
use std::sync::Arc;

/// Device memory of one of the element types the backend stores.
pub(crate) enum Buffer {
    F32(DeviceBuffer<f32>),
    F16(DeviceBuffer<f16>),
    BF16(DeviceBuffer<bf16>),
    I64(DeviceBuffer<i64>),
    I32(DeviceBuffer<i32>),
    Bool(DeviceBuffer<Bool>),
}

/// Runs `$body` with `$b` bound to the typed buffer inside `$buf`.
macro_rules! each_buf {
    ($buf:expr, $b:ident => $body:expr) => {
        match $buf {
            $crate::tensor::Buffer::F32($b) => $body,
            $crate::tensor::Buffer::F16($b) => $body,
            $crate::tensor::Buffer::BF16($b) => $body,
            $crate::tensor::Buffer::I64($b) => $body,
            $crate::tensor::Buffer::I32($b) => $body,
            $crate::tensor::Buffer::Bool($b) => $body,
        }
    };
}
pub(crate) use each_buf;

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

impl Buffer {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Buffer::F32(_) => Kind::F32,
            Buffer::F16(_) => Kind::F16,
            Buffer::BF16(_) => Kind::BF16,
            Buffer::I64(_) => Kind::I64,
            Buffer::I32(_) => Kind::I32,
            Buffer::Bool(_) => Kind::Bool,
        }
    }

    pub(crate) fn len(&self) -> usize {
        each_buf!(self, b => b.len())
    }

    /// `len` elements (at least one: an empty tensor still owns an
    /// allocation, never read) for an operator to write.
    pub(crate) fn alloc(stream: &Stream, kind: Kind, len: usize) -> acl::Result<Buffer> {
        let n = len.max(1);
        // SAFETY: every caller hands the buffer to an operator or copy that
        // writes each element of the view it makes over it before anything
        // reads it; a failed operator drops the buffer unread.
        unsafe {
            Ok(match kind {
                Kind::F32 => Buffer::F32(stream.alloc(n)?),
                Kind::F16 => Buffer::F16(stream.alloc(n)?),
                Kind::BF16 => Buffer::BF16(stream.alloc(n)?),
                Kind::I64 => Buffer::I64(stream.alloc(n)?),
                Kind::I32 => Buffer::I32(stream.alloc(n)?),
                Kind::Bool => Buffer::Bool(stream.alloc(n)?),
            })
        }
    }
}

/// Burn's tensor primitive on an NPU: a strided view over shared device
/// memory. Cloning it shares the memory (no copy); operators that write
/// in place copy first when the memory is shared.
///
/// `Send + Sync`: the memory is an `acl` buffer (itself `Send + Sync`) behind
/// an `Arc`, and the layout is plain data.
#[derive(Clone)]
pub struct CannTensor {
    pub(crate) buf: Arc<Buffer>,
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
    /// A contiguous tensor of `shape` over all of `buf`.
    pub(crate) fn new(buf: Buffer, shape: Vec<usize>, device: CannDevice) -> CannTensor {
        CannTensor {
            buf: Arc::new(buf),
            strides: contiguous_strides(&shape),
            shape,
            offset: 0,
            device,
        }
    }

    pub(crate) fn kind(&self) -> Kind {
        self.buf.kind()
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

    /// The view's layout for `aclCreateTensor` (storage: the whole buffer).
    pub(crate) fn layout(&self) -> acl::Result<Layout> {
        let mut l = Layout::contiguous(&self.shape)?;
        l.strides = self.strides.iter().map(|&s| s as i64).collect();
        l.offset = self.offset as i64;
        l.storage_dims = vec![self.buf.len() as i64];
        Ok(l)
    }

    /// The `aclTensor` of this view, as an operator input.
    pub(crate) fn arg(&self) -> acl::Result<TensorArg<'_>> {
        let layout = self.layout()?;
        each_buf!(&*self.buf, b => TensorArg::with_layout(b, &layout))
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
            Buffer::F32(b) => TensorData::new(host(b, n)?, shape),
            Buffer::F16(b) => TensorData::new(host(b, n)?, shape),
            Buffer::BF16(b) => TensorData::new(host(b, n)?, shape),
            Buffer::I64(b) => TensorData::new(host(b, n)?, shape),
            Buffer::I32(b) => TensorData::new(host(b, n)?, shape),
            Buffer::Bool(b) => TensorData::new(
                host(b, n)?
                    .into_iter()
                    .map(Bool::get)
                    .collect::<Vec<bool>>(),
                shape,
            ),
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
            Kind::F32 => Buffer::F32(upload(&s, data.as_slice::<f32>().map_err(bad)?)?),
            Kind::F16 => Buffer::F16(upload(&s, data.as_slice::<f16>().map_err(bad)?)?),
            Kind::BF16 => Buffer::BF16(upload(&s, data.as_slice::<bf16>().map_err(bad)?)?),
            Kind::I64 => Buffer::I64(upload(&s, data.as_slice::<i64>().map_err(bad)?)?),
            Kind::I32 => Buffer::I32(upload(&s, data.as_slice::<i32>().map_err(bad)?)?),
            Kind::Bool => {
                let v: Vec<Bool> = data
                    .as_slice::<bool>()
                    .map_err(bad)?
                    .iter()
                    .map(|&b| Bool::from(b))
                    .collect();
                Buffer::Bool(upload(&s, &v)?)
            }
        };
        Ok(CannTensor::new(buf, shape, *device))
    }
}

/// A new buffer holding `data` (one zero element for an empty slice).
fn upload<T: acl::DeviceRepr + Default>(s: &Stream, data: &[T]) -> acl::Result<DeviceBuffer<T>> {
    if data.is_empty() {
        s.clone_from_host(&[T::default()])
    } else {
        s.clone_from_host(data)
    }
}

/// The first `n` elements of `b` on the host.
fn host<T: acl::DeviceRepr>(b: &DeviceBuffer<T>, n: usize) -> acl::Result<Vec<T>> {
    let mut v = b.to_host_vec()?;
    v.truncate(n);
    Ok(v)
}

/// An output under construction: a fresh contiguous buffer of `shape`.
pub(crate) struct Out {
    pub(crate) buf: Buffer,
    pub(crate) shape: Vec<usize>,
}

impl Out {
    pub(crate) fn new(stream: &Stream, kind: Kind, shape: &[usize]) -> acl::Result<Out> {
        let n = shape.iter().product();
        Ok(Out {
            buf: Buffer::alloc(stream, kind, n)?,
            shape: shape.to_vec(),
        })
    }

    /// The `aclTensor` of the output, for the operator to write.
    pub(crate) fn arg(&mut self) -> acl::Result<TensorArgMut<'_>> {
        let mut layout = Layout::contiguous(&self.shape)?;
        layout.storage_dims = vec![self.buf.len() as i64];
        each_buf!(&mut self.buf, b => TensorArgMut::with_layout(b, &layout))
    }

    pub(crate) fn done(self, device: CannDevice) -> CannTensor {
        CannTensor::new(self.buf, self.shape, device)
    }
}

//! Tensors as the kernels see them: element types ([`DType`]), type and
//! shape ([`TensorSpec`]), contiguous row-major byte buffers ([`Input`],
//! [`Output`]), and how they are written in messages.

/// Element types of the kernels. Their numbers are CANN's data type numbers
/// (`aclDataType`, GE's `DataType`), which operator attributes such as
/// Cast's `dst_type` and model files carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `ACL_FLOAT` (0).
    F32,
    /// `ACL_FLOAT16` (1).
    F16,
    /// `ACL_INT8` (2).
    I8,
    /// `ACL_INT16` (6).
    I16,
    /// `ACL_INT32` (3).
    I32,
    /// `ACL_UINT8` (4).
    U8,
    /// `ACL_INT64` (9).
    I64,
    /// `ACL_BOOL` (12).
    Bool,
    /// `ACL_DOUBLE` (11).
    F64,
    /// `ACL_BF16` (27).
    BF16,
}

impl DType {
    /// From an `aclDataType` value.
    pub fn from_acl(v: i32) -> Option<DType> {
        Some(match v {
            0 => DType::F32,
            1 => DType::F16,
            2 => DType::I8,
            3 => DType::I32,
            4 => DType::U8,
            6 => DType::I16,
            9 => DType::I64,
            11 => DType::F64,
            12 => DType::Bool,
            27 => DType::BF16,
            _ => return None,
        })
    }

    /// The `aclDataType` value.
    pub fn to_acl(self) -> i32 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::I8 => 2,
            DType::I32 => 3,
            DType::U8 => 4,
            DType::I16 => 6,
            DType::I64 => 9,
            DType::F64 => 11,
            DType::Bool => 12,
            DType::BF16 => 27,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
}

/// A tensor's type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    /// Element type.
    pub dtype: DType,
    /// Dimensions (empty for a scalar).
    pub shape: Vec<i64>,
}

impl TensorSpec {
    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.numel() * self.dtype.size()
    }

    /// Number of elements, or `None` when a dimension is negative or the
    /// size in bytes of the tensor (counting zero dimensions as one, so that
    /// every stride fits too) does not fit in `isize`.
    pub fn checked_numel(&self) -> Option<usize> {
        let mut numel = 1usize;
        let mut span = 1usize;
        for &d in &self.shape {
            let d = usize::try_from(d).ok()?;
            numel = numel.checked_mul(d)?;
            span = span.checked_mul(d.max(1))?;
        }
        let bytes = span.checked_mul(self.dtype.size())?;
        isize::try_from(bytes).ok()?;
        Some(numel)
    }

    /// Size in bytes, or `None` as for [`TensorSpec::checked_numel`].
    pub fn checked_bytes(&self) -> Option<usize> {
        self.checked_numel()?.checked_mul(self.dtype.size())
    }
}

/// An input tensor: its spec and its bytes (`spec.bytes()` long).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Type and shape.
    pub spec: &'a TensorSpec,
    /// Contiguous row-major bytes.
    pub data: &'a [u8],
}

/// An output tensor: its spec and its bytes (`spec.bytes()` long).
#[derive(Debug)]
pub struct Output<'a> {
    /// Type and shape.
    pub spec: &'a TensorSpec,
    /// Contiguous row-major bytes, written by the kernel.
    pub data: &'a mut [u8],
}

/// An input as inference sees it: the spec, and the data when known.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'a> {
    pub(crate) spec: &'a TensorSpec,
    pub(crate) data: Option<&'a [u8]>,
}

/// `[2,3]`, `[]` for a scalar.
pub(crate) fn fmt_shape(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

/// `float32 [2,3]`.
pub(crate) fn fmt_spec(spec: &TensorSpec) -> String {
    format!("{} {}", spec.dtype.name(), fmt_shape(&spec.shape))
}

/// Number of elements of a validated shape (every dimension >= 0 and the
/// product known to fit).
pub(crate) fn numel(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

//! Element types and reduction operations.

use crate::result::raw;

/// An `HcclDataType` this crate moves. (HCCL's numbers differ from
/// `aclDataType`'s.)
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `HCCL_DATA_TYPE_INT8`.
    Int8,
    /// `HCCL_DATA_TYPE_UINT8`.
    Uint8,
    /// `HCCL_DATA_TYPE_INT16`.
    Int16,
    /// `HCCL_DATA_TYPE_UINT16`.
    Uint16,
    /// `HCCL_DATA_TYPE_INT32`.
    Int32,
    /// `HCCL_DATA_TYPE_UINT32`.
    Uint32,
    /// `HCCL_DATA_TYPE_INT64`.
    Int64,
    /// `HCCL_DATA_TYPE_UINT64`.
    Uint64,
    /// `HCCL_DATA_TYPE_FP16` (`half::f16`).
    Fp16,
    /// `HCCL_DATA_TYPE_BFP16` (`half::bf16`).
    Bf16,
    /// `HCCL_DATA_TYPE_FP32`.
    Fp32,
    /// `HCCL_DATA_TYPE_FP64`.
    Fp64,
}

impl DataType {
    /// Every type, in the order of the list above.
    pub const ALL: [DataType; 12] = [
        DataType::Int8,
        DataType::Uint8,
        DataType::Int16,
        DataType::Uint16,
        DataType::Int32,
        DataType::Uint32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Fp16,
        DataType::Bf16,
        DataType::Fp32,
        DataType::Fp64,
    ];

    /// The raw `HcclDataType`.
    pub fn raw(self) -> raw::HcclDataType {
        match self {
            DataType::Int8 => raw::HCCL_DATA_TYPE_INT8,
            DataType::Uint8 => raw::HCCL_DATA_TYPE_UINT8,
            DataType::Int16 => raw::HCCL_DATA_TYPE_INT16,
            DataType::Uint16 => raw::HCCL_DATA_TYPE_UINT16,
            DataType::Int32 => raw::HCCL_DATA_TYPE_INT32,
            DataType::Uint32 => raw::HCCL_DATA_TYPE_UINT32,
            DataType::Int64 => raw::HCCL_DATA_TYPE_INT64,
            DataType::Uint64 => raw::HCCL_DATA_TYPE_UINT64,
            DataType::Fp16 => raw::HCCL_DATA_TYPE_FP16,
            DataType::Bf16 => raw::HCCL_DATA_TYPE_BFP16,
            DataType::Fp32 => raw::HCCL_DATA_TYPE_FP32,
            DataType::Fp64 => raw::HCCL_DATA_TYPE_FP64,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DataType::Int8 | DataType::Uint8 => 1,
            DataType::Int16 | DataType::Uint16 | DataType::Fp16 | DataType::Bf16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Fp32 => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Fp64 => 8,
        }
    }

    /// The short name `hccl_test` uses (`-d`): `int8`, `fp32`, `bfp16`…
    pub fn name(self) -> &'static str {
        match self {
            DataType::Int8 => "int8",
            DataType::Uint8 => "uint8",
            DataType::Int16 => "int16",
            DataType::Uint16 => "uint16",
            DataType::Int32 => "int32",
            DataType::Uint32 => "uint32",
            DataType::Int64 => "int64",
            DataType::Uint64 => "uint64",
            DataType::Fp16 => "fp16",
            DataType::Bf16 => "bfp16",
            DataType::Fp32 => "fp32",
            DataType::Fp64 => "fp64",
        }
    }

    /// Parses a name as [`DataType::name`] gives it (also `bf16`, `float`,
    /// `half`, `double`).
    pub fn from_name(name: &str) -> Option<DataType> {
        Some(match name {
            "bf16" => DataType::Bf16,
            "float" | "float32" => DataType::Fp32,
            "half" | "float16" => DataType::Fp16,
            "double" | "float64" => DataType::Fp64,
            n => return DataType::ALL.into_iter().find(|d| d.name() == n),
        })
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust element type HCCL moves, with its `HcclDataType` — chosen by the
/// type, never by its size (`u16`, `i16`, `f16` and `bf16` are all two
/// bytes). Sealed: implemented for `i8`, `u8`, `i16`, `u16`, `i32`, `u32`,
/// `i64`, `u64`, `half::f16`, `half::bf16`, `f32`, `f64`.
///
/// Which types a *reduction* accepts depends on the NPU: Atlas A2/A3 reduce
/// int8, int16, int32, int64, fp16, fp32 and bf16 (no `prod` for int16 and
/// bf16); other pairs fail with [`ErrorCode::NotSupport`](crate::ErrorCode::NotSupport).
pub trait HcclType: acl::DeviceRepr + sealed::Sealed {
    /// The HCCL data type.
    const DATA_TYPE: DataType;
}

macro_rules! hccl_type {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl HcclType for $t {
            const DATA_TYPE: DataType = DataType::$d;
        }
    )*};
}

hccl_type!(
    i8 => Int8, u8 => Uint8, i16 => Int16, u16 => Uint16, i32 => Int32, u32 => Uint32,
    i64 => Int64, u64 => Uint64, half::f16 => Fp16, half::bf16 => Bf16, f32 => Fp32, f64 => Fp64
);

/// A reduction (`HcclReduceOp`).
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `HCCL_REDUCE_SUM`.
    Sum,
    /// `HCCL_REDUCE_PROD`.
    Prod,
    /// `HCCL_REDUCE_MAX`.
    Max,
    /// `HCCL_REDUCE_MIN`.
    Min,
}

impl ReduceOp {
    /// Every op.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min];

    /// The raw `HcclReduceOp`.
    pub fn raw(self) -> raw::HcclReduceOp {
        match self {
            ReduceOp::Sum => raw::HCCL_REDUCE_SUM,
            ReduceOp::Prod => raw::HCCL_REDUCE_PROD,
            ReduceOp::Max => raw::HCCL_REDUCE_MAX,
            ReduceOp::Min => raw::HCCL_REDUCE_MIN,
        }
    }

    /// `sum`, `prod`, `max` or `min` (as `hccl_test -o` takes them).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// Parses [`ReduceOp::name`].
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_map_by_rust_type_not_by_size() {
        assert_eq!(
            <u16 as HcclType>::DATA_TYPE.raw(),
            raw::HCCL_DATA_TYPE_UINT16
        );
        assert_eq!(
            <i16 as HcclType>::DATA_TYPE.raw(),
            raw::HCCL_DATA_TYPE_INT16
        );
        assert_eq!(
            <half::f16 as HcclType>::DATA_TYPE.raw(),
            raw::HCCL_DATA_TYPE_FP16
        );
        assert_eq!(
            <half::bf16 as HcclType>::DATA_TYPE.raw(),
            raw::HCCL_DATA_TYPE_BFP16
        );
        for d in DataType::ALL {
            assert_eq!(DataType::from_name(d.name()), Some(d));
        }
        assert_eq!(DataType::from_name("bf16"), Some(DataType::Bf16));
        assert_eq!(ReduceOp::from_name("max"), Some(ReduceOp::Max));
        assert_eq!(ReduceOp::from_name("avg"), None);
    }
}

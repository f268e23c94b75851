//! Element types and their `aclDataType`: [`DataType`] names the runtime's
//! types, [`Element`] maps a Rust type to its one.

use crate::result::raw;

/// An AscendCL data type (`aclDataType`), as operators and tensor
/// descriptions name element types.
#[doc(alias = "aclDataType")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `ACL_FLOAT` (0): IEEE 754 binary32.
    Float,
    /// `ACL_FLOAT16` (1): IEEE 754 binary16 ([`half::f16`]).
    Float16,
    /// `ACL_BF16` (27): bfloat16 ([`half::bf16`]).
    BFloat16,
    /// `ACL_DOUBLE` (11).
    Double,
    /// `ACL_INT8` (2).
    Int8,
    /// `ACL_INT16` (6).
    Int16,
    /// `ACL_INT32` (3).
    Int32,
    /// `ACL_INT64` (9).
    Int64,
    /// `ACL_UINT8` (4).
    UInt8,
    /// `ACL_UINT16` (7).
    UInt16,
    /// `ACL_UINT32` (8).
    UInt32,
    /// `ACL_UINT64` (10).
    UInt64,
    /// `ACL_BOOL` (12): one byte, 0 or 1.
    Bool,
    /// `ACL_INT4` (29): signed 4-bit integers, two per byte (the element
    /// of even index in the low nibble). No Rust type holds one value, so it
    /// is not an [`Element`] and not in [`DataType::ALL`]; packed int4
    /// tensors are described with [`crate::aclnn::TensorArg::packed_int4`].
    Int4,
}

impl DataType {
    /// Every data type with an [`Element`] type, in declaration order
    /// (all but [`DataType::Int4`]).
    pub const ALL: [DataType; 13] = [
        DataType::Float,
        DataType::Float16,
        DataType::BFloat16,
        DataType::Double,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Bool,
    ];

    /// The `aclDataType` value.
    pub const fn to_raw(self) -> raw::aclDataType {
        match self {
            DataType::Float => raw::ACL_FLOAT,
            DataType::Float16 => raw::ACL_FLOAT16,
            DataType::BFloat16 => raw::ACL_BF16,
            DataType::Double => raw::ACL_DOUBLE,
            DataType::Int8 => raw::ACL_INT8,
            DataType::Int16 => raw::ACL_INT16,
            DataType::Int32 => raw::ACL_INT32,
            DataType::Int64 => raw::ACL_INT64,
            DataType::UInt8 => raw::ACL_UINT8,
            DataType::UInt16 => raw::ACL_UINT16,
            DataType::UInt32 => raw::ACL_UINT32,
            DataType::UInt64 => raw::ACL_UINT64,
            DataType::Bool => raw::ACL_BOOL,
            DataType::Int4 => raw::ACL_INT4,
        }
    }

    /// The data type of an `aclDataType` value, if this crate names it.
    pub fn from_raw(raw: raw::aclDataType) -> Option<DataType> {
        if raw == raw::ACL_INT4 {
            return Some(DataType::Int4);
        }
        DataType::ALL.into_iter().find(|d| d.to_raw() == raw)
    }

    /// Bytes per element, as `aclDataTypeSize` answers: 1 for
    /// [`DataType::Int4`], whose values take half a byte each (the
    /// runtime's `aclDataTypeSizeImpl`, hicann/runtime
    /// `src/acl/aclrt_impl/data_buffer.cpp`, rounds it up).
    pub const fn size(self) -> usize {
        match self {
            DataType::Int8 | DataType::UInt8 | DataType::Bool | DataType::Int4 => 1,
            DataType::Float16 | DataType::BFloat16 | DataType::Int16 | DataType::UInt16 => 2,
            DataType::Float | DataType::Int32 | DataType::UInt32 => 4,
            DataType::Double | DataType::Int64 | DataType::UInt64 => 8,
        }
    }

    /// The short name used in messages (`"float32"`, `"bfloat16"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DataType::Float => "float32",
            DataType::Float16 => "float16",
            DataType::BFloat16 => "bfloat16",
            DataType::Double => "float64",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Bool => "bool",
            DataType::Int4 => "int4",
        }
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

/// A Rust type with an AscendCL data type: the element types operators
/// take. Implemented for `i8`–`i64`, `u8`–`u64`, `f32`, `f64`, [`half::f16`],
/// [`half::bf16`] and [`Bool`](super::Bool); sealed, because the mapping is the runtime's.
///
/// It maps by type, never by size: `u16` is `ACL_UINT16`, `half::f16` is
/// `ACL_FLOAT16`, `half::bf16` is `ACL_BF16`, although all three are two bytes.
///
/// ```
/// use acl::{DataType, Element};
/// assert_eq!(<half::bf16 as Element>::DATA_TYPE, DataType::BFloat16);
/// assert_eq!(<u16 as Element>::DATA_TYPE.to_raw(), acl_sys::ACL_UINT16);
/// ```
pub trait Element: super::DeviceRepr + sealed::Sealed {
    /// The data type of this Rust type.
    const DATA_TYPE: DataType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(
            impl sealed::Sealed for $t {}
            impl Element for $t {
                const DATA_TYPE: DataType = DataType::$d;
            }
        )*
    };
}

element!(
    i8 => Int8,
    i16 => Int16,
    i32 => Int32,
    i64 => Int64,
    u8 => UInt8,
    u16 => UInt16,
    u32 => UInt32,
    u64 => UInt64,
    f32 => Float,
    f64 => Double,
    half::f16 => Float16,
    half::bf16 => BFloat16,
    super::Bool => Bool,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_type_round_trips_through_its_raw_value() {
        for d in DataType::ALL {
            assert_eq!(DataType::from_raw(d.to_raw()), Some(d));
        }
        assert_eq!(DataType::from_raw(raw::ACL_DT_UNDEFINED), None);
        assert_eq!(DataType::from_raw(raw::ACL_INT4), Some(DataType::Int4));
        assert_eq!(DataType::Int4.to_raw(), raw::ACL_INT4);
        assert!(!DataType::ALL.contains(&DataType::Int4));
    }

    #[test]
    fn element_types_map_by_type_not_by_size() {
        assert_eq!(<f32 as Element>::DATA_TYPE, DataType::Float);
        assert_eq!(<half::f16 as Element>::DATA_TYPE, DataType::Float16);
        assert_eq!(<half::bf16 as Element>::DATA_TYPE, DataType::BFloat16);
        assert_eq!(<u16 as Element>::DATA_TYPE, DataType::UInt16);
        assert_eq!(<i64 as Element>::DATA_TYPE.to_raw(), raw::ACL_INT64);
        for d in DataType::ALL {
            assert!(d.size() > 0, "{d}");
        }
        assert_eq!(<f64 as Element>::DATA_TYPE.size(), 8);
    }
}

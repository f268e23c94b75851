//! Tensors whose element type is a run-time value: [`DynTensor`],
//! [`DynView`] and [`DynViewMut`], one variant per [`DataType`].
//!
//! A framework backend keeps its dtype in a field, not in a type parameter.
//! These enums are that, with the typed tensors inside: every typed
//! function still does the work, and the dispatch from the run-time dtype
//! to the typed code is written once, here and in
//! [`ops::dynamic`](crate::ops::dynamic), not in each backend.
//!
//! - Make one from a typed tensor (`DynTensor::from(t)`), or allocate one
//!   of a run-time dtype ([`DynTensor::zeros`], or `unsafe`
//!   [`DynTensor::uninit`] for an operator to write).
//! - View its memory with any shape, strides and offset
//!   ([`DynView::strided`], [`DynViewMut::strided`]), as a framework's
//!   strided tensor over shared storage does.
//! - Get the typed value back with `Tensor::<f32>::try_from(d)` (and the
//!   same for views): the error names both dtypes.
//! - Views transform as the typed ones do ([`DynView::narrow`],
//!   [`DynView::permute`], ...), and make aclnn's argument objects
//!   ([`DynView::arg`], [`DynViewMut::arg_mut`]), so every operator of
//!   [`crate::aclnn`] takes run-time-typed data too.
//! - [`dispatch_dtype!`](crate::dispatch_dtype) runs generic code on the
//!   typed value inside, for what this crate does not cover.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{DataType, Device, DynTensor, Runtime, Tensor, ops::dynamic};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let a = DynTensor::from(Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?);
//! let b = DynTensor::zeros(&s, DataType::Float, &[2, 2])?;
//! let c = dynamic::add_new(&s, &a.view(), &b.view())?;
//! let h = dynamic::cast_new(&s, &c.view(), DataType::Float16)?;
//! assert_eq!((h.dtype(), h.shape()), (DataType::Float16, &[2, 2][..]));
//! let back = Tensor::<f32>::try_from(dynamic::cast_new(&s, &h.view(), DataType::Float)?)?;
//! assert_eq!(back.to_host_vec()?, [1.0, 2.0, 3.0, 4.0]);
//! # Ok::<(), acl::Error>(())
//! ```
//!
//! All three are `Send` and `Sync`, as the typed values they hold. They are
//! exhaustive (no `#[non_exhaustive]`), so that code outside this crate can
//! match every variant ([`dispatch_dtype!`](crate::dispatch_dtype)): a new
//! element type is a breaking change of this crate's version.

use super::{Tensor, TensorView, TensorViewMut};
use crate::Stream;
use crate::aclnn::{TensorArg, TensorArgMut};
use crate::error::{Error, Result};
use crate::memory::{Bool, DataType};
use half::{bf16, f16};

/// Runs `$body` with `$v` bound to the typed value inside a [`DynTensor`],
/// [`DynView`] or [`DynViewMut`] (name the enum): generic code, once, for
/// every element type.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::{DataType, Device, DynTensor, Runtime, dispatch_dtype};
///
/// let npu = Device::new(&Runtime::init()?, 0)?;
/// let s = npu.new_stream()?;
/// let t = DynTensor::zeros(&s, DataType::Int32, &[3])?;
/// // `v` is a `&Tensor<i32>` here; the body is compiled for each dtype.
/// let bytes = dispatch_dtype!(DynTensor, &t, v => v.len() * std::mem::size_of_val(&v.to_host_vec()?[0]));
/// assert_eq!(bytes, 12);
/// # Ok::<(), acl::Error>(())
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($enum:ident, $value:expr, $v:ident => $body:expr) => {
        match $value {
            $crate::$enum::Float($v) => $body,
            $crate::$enum::Float16($v) => $body,
            $crate::$enum::BFloat16($v) => $body,
            $crate::$enum::Double($v) => $body,
            $crate::$enum::Int8($v) => $body,
            $crate::$enum::Int16($v) => $body,
            $crate::$enum::Int32($v) => $body,
            $crate::$enum::Int64($v) => $body,
            $crate::$enum::UInt8($v) => $body,
            $crate::$enum::UInt16($v) => $body,
            $crate::$enum::UInt32($v) => $body,
            $crate::$enum::UInt64($v) => $body,
            $crate::$enum::Bool($v) => $body,
        }
    };
}

/// Runs `$body` with `$t` the Rust element type of the [`DataType`] `$dtype`.
macro_rules! with_element {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            DataType::Float => {
                type $t = f32;
                $body
            }
            DataType::Float16 => {
                type $t = f16;
                $body
            }
            DataType::BFloat16 => {
                type $t = bf16;
                $body
            }
            DataType::Double => {
                type $t = f64;
                $body
            }
            DataType::Int8 => {
                type $t = i8;
                $body
            }
            DataType::Int16 => {
                type $t = i16;
                $body
            }
            DataType::Int32 => {
                type $t = i32;
                $body
            }
            DataType::Int64 => {
                type $t = i64;
                $body
            }
            DataType::UInt8 => {
                type $t = u8;
                $body
            }
            DataType::UInt16 => {
                type $t = u16;
                $body
            }
            DataType::UInt32 => {
                type $t = u32;
                $body
            }
            DataType::UInt64 => {
                type $t = u64;
                $body
            }
            DataType::Bool => {
                type $t = Bool;
                $body
            }
            DataType::Int4 => Err(no_element(DataType::Int4)),
        }
    };
}

macro_rules! dyn_enums {
    ($($variant:ident($t:ty)),* $(,)?) => {
        /// An owned tensor whose element type is a run-time value: a
        /// [`Tensor<T>`] of one of the element types (see the [module
        /// docs](crate::tensor::dynamic)).
        #[derive(Debug)]
        pub enum DynTensor {
            $(
                #[doc = concat!("A `Tensor<", stringify!($t), ">`.")]
                $variant(Tensor<$t>),
            )*
        }

        /// A borrowed view whose element type is a run-time value: a
        /// [`TensorView`] of one of the element types.
        #[derive(Debug, Clone, Copy)]
        pub enum DynView<'a> {
            $(
                #[doc = concat!("A `TensorView<", stringify!($t), ">`.")]
                $variant(TensorView<'a, $t>),
            )*
        }

        /// A writable view whose element type is a run-time value: a
        /// [`TensorViewMut`] of one of the element types.
        #[derive(Debug)]
        pub enum DynViewMut<'a> {
            $(
                #[doc = concat!("A `TensorViewMut<", stringify!($t), ">`.")]
                $variant(TensorViewMut<'a, $t>),
            )*
        }

        $(
            impl From<Tensor<$t>> for DynTensor {
                fn from(t: Tensor<$t>) -> DynTensor {
                    DynTensor::$variant(t)
                }
            }

            impl<'a> From<TensorView<'a, $t>> for DynView<'a> {
                fn from(v: TensorView<'a, $t>) -> DynView<'a> {
                    DynView::$variant(v)
                }
            }

            impl<'a> From<TensorViewMut<'a, $t>> for DynViewMut<'a> {
                fn from(v: TensorViewMut<'a, $t>) -> DynViewMut<'a> {
                    DynViewMut::$variant(v)
                }
            }

            impl TryFrom<DynTensor> for Tensor<$t> {
                type Error = Error;
                /// # Errors
                ///
                /// [`Error::InvalidArgument`] naming both dtypes when the
                /// tensor holds another element type.
                fn try_from(d: DynTensor) -> Result<Tensor<$t>> {
                    match d {
                        DynTensor::$variant(t) => Ok(t),
                        other => Err(wrong_type("Tensor::try_from", other.dtype(), DataType::$variant)),
                    }
                }
            }

            impl<'a> TryFrom<DynView<'a>> for TensorView<'a, $t> {
                type Error = Error;
                fn try_from(d: DynView<'a>) -> Result<TensorView<'a, $t>> {
                    match d {
                        DynView::$variant(t) => Ok(t),
                        other => Err(wrong_type("TensorView::try_from", other.dtype(), DataType::$variant)),
                    }
                }
            }

            impl<'a> TryFrom<DynViewMut<'a>> for TensorViewMut<'a, $t> {
                type Error = Error;
                fn try_from(d: DynViewMut<'a>) -> Result<TensorViewMut<'a, $t>> {
                    match d {
                        DynViewMut::$variant(t) => Ok(t),
                        other => Err(wrong_type("TensorViewMut::try_from", other.dtype(), DataType::$variant)),
                    }
                }
            }
        )*
    };
}

dyn_enums!(
    Float(f32),
    Float16(f16),
    BFloat16(bf16),
    Double(f64),
    Int8(i8),
    Int16(i16),
    Int32(i32),
    Int64(i64),
    UInt8(u8),
    UInt16(u16),
    UInt32(u32),
    UInt64(u64),
    Bool(Bool),
);

fn wrong_type(function: &'static str, have: DataType, want: DataType) -> Error {
    Error::invalid(
        function,
        format!("the tensor holds {have} elements, not {want}"),
    )
}

/// The error of an operator given operands of different dtypes.
pub(crate) fn dtype_mismatch(function: &'static str, names: &[(&str, DataType)]) -> Error {
    let list: Vec<String> = names.iter().map(|(n, d)| format!("{n} is {d}")).collect();
    Error::invalid(
        function,
        format!(
            "the operands must have one dtype: {} (cast one first)",
            list.join(", ")
        ),
    )
}

/// The error for a dtype without an element type ([`DataType::Int4`]).
fn no_element(dtype: DataType) -> Error {
    Error::invalid(
        "DynTensor",
        format!(
            "{dtype} has no element type (two values per byte); describe packed int4 memory with \
             aclnn::TensorArg::packed_int4"
        ),
    )
}

impl DynTensor {
    /// A tensor of `dtype` and `shape`, every byte zero (0, 0.0, false), for
    /// use on `stream`.
    ///
    /// # Errors
    ///
    /// As [`Tensor::zeros`].
    pub fn zeros(stream: &Stream, dtype: DataType, shape: &[usize]) -> Result<DynTensor> {
        with_element!(dtype, T => Tensor::<T>::zeros(stream, shape).map(DynTensor::from))
    }

    /// A tensor of `dtype` and `shape` whose elements are not initialised,
    /// for use on `stream` ([`Stream::alloc`], the caching allocator): for
    /// an operator to write, without the fill [`DynTensor::zeros`] queues.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming `DynTensor::uninit` for a shape
    /// AscendCL cannot take (as [`Tensor::zeros`]); as [`Stream::alloc`]
    /// (out of memory).
    ///
    /// # Safety
    ///
    /// As [`Stream::alloc`], which this is over: every element must be
    /// written (by an operator, a copy or a fill) before it is read. The
    /// crate cannot check that (a kernel's writes are not tracked per
    /// element), so, like the typed allocation, this is `unsafe`; a read
    /// before the write gives arbitrary values of the element type (every
    /// bit pattern is a valid value of each dtype here, `Bool` included,
    /// whose byte is read as "non-zero"). [`DynTensor::zeros`] is the safe
    /// form.
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn uninit(stream: &Stream, dtype: DataType, shape: &[usize]) -> Result<DynTensor> {
        const F: &str = "DynTensor::uninit";
        let n = super::numel(F, shape)?;
        let dims = super::Dims::new(F, shape)?;
        with_element!(dtype, T => {
            // SAFETY: forwarded to the caller (every element written before
            // it is read).
            let buf = unsafe { stream.alloc::<T>(n) }?;
            Ok(DynTensor::from(Tensor { buf, shape: dims }))
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        dispatch_dtype!(DynTensor, self, t => t.dtype())
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        dispatch_dtype!(DynTensor, self, t => t.shape())
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        dispatch_dtype!(DynTensor, self, t => t.len())
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A view of the whole tensor.
    pub fn view(&self) -> DynView<'_> {
        dispatch_dtype!(DynTensor, self, t => DynView::from(t.view()))
    }

    /// A writable view of the whole tensor.
    pub fn view_mut(&mut self) -> DynViewMut<'_> {
        dispatch_dtype!(DynTensor, self, t => DynViewMut::from(t.view_mut()))
    }

    /// The same elements with another shape of the same element count.
    ///
    /// # Errors
    ///
    /// As [`Tensor::reshape`].
    pub fn reshape(self, shape: &[usize]) -> Result<DynTensor> {
        dispatch_dtype!(DynTensor, self, t => t.reshape(shape).map(DynTensor::from))
    }
}

/// `e` with the function it names replaced by `function` (the typed
/// constructor's name is not the one the caller called).
fn renamed(e: Error, function: &'static str) -> Error {
    match e {
        Error::InvalidArgument { reason, .. } => Error::InvalidArgument { function, reason },
        other => other,
    }
}

impl<'a> DynView<'a> {
    /// A view of `shape` with `strides` (in elements) from element `offset`
    /// of `tensor`'s memory, read as a flat array of [`DynTensor::len`]
    /// elements whatever the tensor's own shape: the form a framework's
    /// strided tensor (shape, strides, offset over shared storage) takes.
    /// Strides may be 0 (broadcast) and may repeat elements: an input may.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::{Device, DynTensor, DynView, Runtime, Tensor};
    ///
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let s = npu.new_stream()?;
    /// let t = DynTensor::from(Tensor::from_host(&s, &[0i32, 1, 2, 3, 4, 5], &[6])?);
    /// // The transpose of the 2x3 matrix held in `t`, from element 0.
    /// let v = DynView::strided(&t, &[3, 2], &[1, 3], 0)?;
    /// let c = Tensor::<i32>::try_from(v.to_tensor(&s)?)?;
    /// assert_eq!(c.to_host_vec()?, [0, 3, 1, 4, 2, 5]);
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming `DynView::strided` when `shape`
    /// and `strides` differ in length, the view reaches beyond the memory
    /// (its last element at or past [`DynTensor::len`]), or it has more
    /// than 8 dimensions (as [`TensorView::strided`]).
    pub fn strided(
        tensor: &'a DynTensor,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<DynView<'a>> {
        dispatch_dtype!(DynTensor, tensor, t => TensorView::strided(&t.buf, shape, strides, offset)
            .map(DynView::from)
            .map_err(|e| renamed(e, "DynView::strided")))
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        dispatch_dtype!(DynView, self, v => v.dtype())
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        dispatch_dtype!(DynView, self, v => v.shape())
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[usize] {
        dispatch_dtype!(DynView, self, v => v.strides())
    }

    /// The offset of the first element, in elements.
    pub fn offset(&self) -> usize {
        dispatch_dtype!(DynView, self, v => v.offset())
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        dispatch_dtype!(DynView, self, v => v.len())
    }

    /// Whether the view has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the view is row-major without gaps.
    pub fn is_contiguous(&self) -> bool {
        dispatch_dtype!(DynView, self, v => v.is_contiguous())
    }

    /// As [`TensorView::narrow`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::narrow`].
    pub fn narrow(self, axis: usize, start: usize, len: usize) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.narrow(axis, start, len).map(DynView::from))
    }

    /// As [`TensorView::select`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::select`].
    pub fn select(self, axis: usize, index: usize) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.select(axis, index).map(DynView::from))
    }

    /// As [`TensorView::permute`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::permute`].
    pub fn permute(self, perm: &[usize]) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.permute(perm).map(DynView::from))
    }

    /// As [`TensorView::transpose`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::transpose`].
    pub fn transpose(self, a: usize, b: usize) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.transpose(a, b).map(DynView::from))
    }

    /// As [`TensorView::unsqueeze`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::unsqueeze`].
    pub fn unsqueeze(self, axis: usize) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.unsqueeze(axis).map(DynView::from))
    }

    /// As [`TensorView::reshape`] (contiguous views only).
    ///
    /// # Errors
    ///
    /// As [`TensorView::reshape`].
    pub fn reshape(self, shape: &[usize]) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.reshape(shape).map(DynView::from))
    }

    /// As [`TensorView::broadcast_to`].
    ///
    /// # Errors
    ///
    /// As [`TensorView::broadcast_to`].
    pub fn broadcast_to(self, shape: &[usize]) -> Result<DynView<'a>> {
        dispatch_dtype!(DynView, self, v => v.broadcast_to(shape).map(DynView::from))
    }

    /// A contiguous copy of the view, on `stream`.
    ///
    /// # Errors
    ///
    /// As [`TensorView::to_tensor`].
    pub fn to_tensor(&self, stream: &Stream) -> Result<DynTensor> {
        dispatch_dtype!(DynView, self, v => v.to_tensor(stream).map(DynTensor::from))
    }

    /// aclnn's input argument over the view ([`TensorArg::from_view`]).
    ///
    /// # Errors
    ///
    /// As [`TensorArg::from_view`].
    pub fn arg(&self) -> Result<TensorArg<'a>> {
        dispatch_dtype!(DynView, self, v => TensorArg::from_view(v))
    }
}

impl<'a> DynViewMut<'a> {
    /// A writable view of `shape` with `strides` from element `offset` of
    /// `tensor`'s memory (read as a flat array, as [`DynView::strided`]):
    /// an output over part of a framework's strided storage.
    ///
    /// # Errors
    ///
    /// As [`DynView::strided`] (naming `DynViewMut::strided`), and when two
    /// indices reach the same element (a stride of 0 along a dimension of
    /// size > 1, or strides that interleave): an output must not write one
    /// element twice.
    pub fn strided(
        tensor: &'a mut DynTensor,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<DynViewMut<'a>> {
        dispatch_dtype!(DynTensor, tensor, t => TensorViewMut::strided(&mut t.buf, shape, strides, offset)
            .map(DynViewMut::from)
            .map_err(|e| renamed(e, "DynViewMut::strided")))
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        dispatch_dtype!(DynViewMut, self, v => v.dtype())
    }

    /// The dimensions.
    pub fn shape(&self) -> &[usize] {
        dispatch_dtype!(DynViewMut, self, v => v.shape())
    }

    /// A shorter-lived writable view of the same elements.
    pub fn reborrow(&mut self) -> DynViewMut<'_> {
        dispatch_dtype!(DynViewMut, self, v => DynViewMut::from(v.reborrow()))
    }

    /// A read-only view of the same elements, while `self` is borrowed.
    pub fn as_view(&self) -> DynView<'_> {
        dispatch_dtype!(DynViewMut, self, v => DynView::from(v.as_view()))
    }

    /// As [`TensorViewMut::narrow`](TensorView::narrow).
    ///
    /// # Errors
    ///
    /// As [`TensorView::narrow`].
    pub fn narrow(self, axis: usize, start: usize, len: usize) -> Result<DynViewMut<'a>> {
        dispatch_dtype!(DynViewMut, self, v => v.narrow(axis, start, len).map(DynViewMut::from))
    }

    /// As [`TensorViewMut::select`](TensorView::select).
    ///
    /// # Errors
    ///
    /// As [`TensorView::select`].
    pub fn select(self, axis: usize, index: usize) -> Result<DynViewMut<'a>> {
        dispatch_dtype!(DynViewMut, self, v => v.select(axis, index).map(DynViewMut::from))
    }

    /// As [`TensorViewMut::permute`](TensorView::permute).
    ///
    /// # Errors
    ///
    /// As [`TensorView::permute`].
    pub fn permute(self, perm: &[usize]) -> Result<DynViewMut<'a>> {
        dispatch_dtype!(DynViewMut, self, v => v.permute(perm).map(DynViewMut::from))
    }

    /// As [`TensorViewMut::reshape`](TensorView::reshape).
    ///
    /// # Errors
    ///
    /// As [`TensorView::reshape`].
    pub fn reshape(self, shape: &[usize]) -> Result<DynViewMut<'a>> {
        dispatch_dtype!(DynViewMut, self, v => v.reshape(shape).map(DynViewMut::from))
    }

    /// aclnn's output argument over the view ([`TensorArgMut::from_view`]).
    ///
    /// # Errors
    ///
    /// As [`TensorArgMut::from_view`].
    pub fn arg_mut(self) -> Result<TensorArgMut<'a>> {
        dispatch_dtype!(DynViewMut, self, v => TensorArgMut::from_view(v))
    }
}

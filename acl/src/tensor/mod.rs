//! Tensors: device memory with a shape.
//!
//! One notion of tensor serves every operator module of this crate:
//!
//! - [`Tensor<T>`] owns its memory (a [`DeviceBuffer`]) and has a
//!   contiguous row-major shape. Make one with [`Tensor::zeros`] or
//!   [`Tensor::from_host`].
//! - [`TensorView<'a, T>`] and [`TensorViewMut<'a, T>`] borrow memory (a
//!   tensor, a buffer or a slice of one) with a shape, **strides** and an
//!   **offset**, all in elements: `element[i, j] = memory[offset + i·s₀ +
//!   j·s₁]`. Slicing ([`narrow`](TensorView::narrow),
//!   [`select`](TensorView::select)), transposing
//!   ([`transpose`](TensorView::transpose), [`permute`](TensorView::permute))
//!   and broadcasting ([`broadcast_to`](TensorView::broadcast_to)) make new
//!   views and move no data.
//!
//! - [`DynTensor`], [`DynView`] and [`DynViewMut`] hold one of those with
//!   the element type as a run-time value ([`dynamic`]), for code whose
//!   dtype is data (a framework backend); [`crate::ops::dynamic`] runs the
//!   operators on them.
//!
//! [`crate::ops`] takes any of them: inputs as `&impl` [`AsView<T>`],
//! outputs as `&mut impl` [`AsViewMut<T>`], so `ops::matmul(&s, &a, &b,
//! &mut c)` works on tensors and `ops::matmul(&s, &a.view().transpose(0,
//! 1)?, &b, &mut c.view_mut().narrow(0, 0, 4)?)` on views. [`crate::aclnn`]
//! takes the argument objects CANN's aclnn API takes (`aclTensor`), made
//! from a view by [`aclnn::TensorArg::from_view`](crate::aclnn::TensorArg::from_view).
//!
//! Views are checked when they are made: every element a view reaches lies
//! inside the memory it borrows, and a writable view reaches no element
//! twice. The borrow checker does the rest: while a [`TensorViewMut`] of a
//! buffer lives, nothing else reads or writes that buffer, so an operator's
//! inputs and its output never overlap unless the operator is one of the
//! in-place ones (`ops::relu_`), which take one `&mut` view for both.
//!
//! Ordering is the buffer's: a view's reads and writes are tracked as
//! reads and writes of the whole allocation it lies in (see
//! [`crate::memory`]).
//!
//! Tensors have at most 8 dimensions, the limit of aclnn's `aclTensor`.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, ops, tensor::AsViewMut};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let x = Tensor::from_host(&s, &[-1.0f32, 2.0, -3.0, 4.0], &[2, 2])?;
//! let mut y = Tensor::zeros(&s, &[2, 4])?;
//! // Write relu(x) into the right half of y: a strided output view.
//! ops::relu(&s, &x, &mut y.view_mut().narrow(1, 2, 2)?)?;
//! // And double it in place.
//! ops::muls_(&s, &mut y, 2.0)?;
//! assert_eq!(y.to_host_vec()?, [0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 8.0]);
//! # Ok::<(), acl::Error>(())
//! ```

pub mod dynamic;
mod view;

pub(crate) use dynamic::dtype_mismatch;
pub use dynamic::{DynTensor, DynView, DynViewMut};
pub use view::{AsView, AsViewMut, TensorView, TensorViewMut};
pub(crate) use view::{RawView, reaches_twice};

use crate::error::{Error, Result};
use crate::memory::Element;
use crate::{DeviceBuffer, DeviceSliceMut, Stream};

/// Up to [`Dims::MAX`] dimensions (or strides), inline: a view costs no
/// heap allocation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dims {
    n: u8,
    d: [usize; Dims::MAX],
}

impl Dims {
    /// aclnn's limit on the dimensions of an `aclTensor`.
    pub(crate) const MAX: usize = 8;

    fn too_many(function: &'static str, n: usize) -> Error {
        Error::invalid(
            function,
            format!(
                "{n} dimensions; at most {} (aclnn's aclTensor limit)",
                Dims::MAX
            ),
        )
    }

    pub(crate) fn new(function: &'static str, dims: &[usize]) -> Result<Dims> {
        let mut d = [0; Dims::MAX];
        d.get_mut(..dims.len())
            .ok_or_else(|| Dims::too_many(function, dims.len()))?
            .copy_from_slice(dims);
        Ok(Dims {
            // At most 8 (checked above).
            n: dims.len() as u8,
            d,
        })
    }

    pub(crate) fn filled(function: &'static str, n: usize, value: usize) -> Result<Dims> {
        if n > Dims::MAX {
            return Err(Dims::too_many(function, n));
        }
        Ok(Dims {
            n: n as u8,
            d: [value; Dims::MAX],
        })
    }

    pub(crate) fn remove(&mut self, i: usize) {
        let n = usize::from(self.n);
        if i < n {
            self.d.copy_within(i + 1..n, i);
            self.n -= 1;
        }
    }

    pub(crate) fn insert(&mut self, function: &'static str, i: usize, value: usize) -> Result<()> {
        let n = usize::from(self.n);
        if n == Dims::MAX {
            return Err(Dims::too_many(function, n + 1));
        }
        self.d.copy_within(i..n, i + 1);
        self.d[i] = value;
        self.n += 1;
        Ok(())
    }

    /// The row-major strides of these dimensions (a zero dimension counts
    /// as 1, so that the strides stay distinct). Saturating: a stride can
    /// only overflow past a zero dimension (the element count is checked
    /// to fit), where no element is reached, and `aclCreateTensor`'s
    /// conversion to `int64_t` then refuses it.
    pub(crate) fn row_major(self) -> Dims {
        let mut strides = self;
        let mut step = 1usize;
        for (s, &d) in strides.iter_mut().zip(self.iter()).rev() {
            *s = step;
            step = step.saturating_mul(d.max(1));
        }
        strides
    }

    /// As AscendCL dimensions (`int64_t`); `None` for one above `i64::MAX`.
    pub(crate) fn to_i64(self) -> Option<[i64; Dims::MAX]> {
        let mut out = [0i64; Dims::MAX];
        for (o, &d) in out.iter_mut().zip(self.iter()) {
            *o = i64::try_from(d).ok()?;
        }
        Some(out)
    }
}

impl std::ops::Deref for Dims {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        &self.d[..usize::from(self.n)]
    }
}

impl std::ops::DerefMut for Dims {
    fn deref_mut(&mut self) -> &mut [usize] {
        &mut self.d[..usize::from(self.n)]
    }
}

impl std::fmt::Debug for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// The element count of `shape`, checked: at most 8 dimensions, each and
/// the count at most `i64::MAX` (AscendCL's dimensions are `int64_t`, where
/// -1 would mean "unknown").
pub(crate) fn numel(function: &'static str, shape: &[usize]) -> Result<usize> {
    if shape.len() > Dims::MAX {
        return Err(Dims::too_many(function, shape.len()));
    }
    if let Some(&d) = shape.iter().find(|&&d| i64::try_from(d).is_err()) {
        return Err(Error::invalid(
            function,
            format!("shape {shape:?}: dimension {d} is above i64::MAX, the largest AscendCL takes"),
        ));
    }
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| i64::try_from(n).is_ok())
        .ok_or_else(|| {
            Error::invalid(
                function,
                format!("shape {shape:?}: the element count overflows"),
            )
        })
}

/// A device buffer with a shape: `shape.iter().product()` elements of `T`,
/// row-major. Operators take it wherever they take a view
/// ([`AsView`], [`AsViewMut`]).
///
/// `Send + Sync` as [`DeviceBuffer`].
pub struct Tensor<T: Element> {
    buf: DeviceBuffer<T>,
    shape: Dims,
}

impl<T: Element> std::fmt::Debug for Tensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &T::DATA_TYPE)
            .field("shape", &self.shape)
            .field("buffer", &self.buf)
            .finish()
    }
}

impl<T: Element> Tensor<T> {
    /// A tensor holding a copy of `data` with `shape`, for use on `stream`
    /// (the copy is complete on return).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `data.len()` is not the shape's
    /// element count, or for a shape AscendCL cannot take (see
    /// [`Tensor::zeros`]); the runtime's error.
    #[doc(alias = "aclrtMemcpy")]
    pub fn from_host(stream: &Stream, data: &[T], shape: &[usize]) -> Result<Tensor<T>> {
        let n = numel("Tensor::from_host", shape)?;
        if n != data.len() {
            return Err(Error::invalid(
                "Tensor::from_host",
                format!("{} values for shape {shape:?} ({n} elements)", data.len()),
            ));
        }
        Ok(Tensor {
            buf: stream.clone_from_host(data)?,
            shape: Dims::new("Tensor::from_host", shape)?,
        })
    }

    /// A tensor of zero bytes (0 for every element type here), for use on `stream`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a shape of more than 8 dimensions
    /// (aclnn's limit), a dimension above `i64::MAX` (AscendCL's
    /// dimensions are `int64_t`), or an element count above `i64::MAX`; the
    /// runtime's error.
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn zeros(stream: &Stream, shape: &[usize]) -> Result<Tensor<T>> {
        let n = numel("Tensor::zeros", shape)?;
        Ok(Tensor {
            buf: stream.alloc_zeros(n)?,
            shape: Dims::new("Tensor::zeros", shape)?,
        })
    }

    /// A tensor over an existing buffer.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the buffer's length is not the
    /// shape's element count, or for a shape AscendCL cannot take (see
    /// [`Tensor::zeros`]).
    pub fn from_buffer(buf: DeviceBuffer<T>, shape: &[usize]) -> Result<Tensor<T>> {
        let n = numel("Tensor::from_buffer", shape)?;
        if n != buf.len() {
            return Err(Error::invalid(
                "Tensor::from_buffer",
                format!(
                    "a buffer of {} elements for shape {shape:?} ({n} elements)",
                    buf.len()
                ),
            ));
        }
        Ok(Tensor {
            buf,
            shape: Dims::new("Tensor::from_buffer", shape)?,
        })
    }

    /// The same data with another shape of the same element count.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the element counts differ, or as
    /// [`Tensor::from_buffer`].
    pub fn reshape(self, shape: &[usize]) -> Result<Tensor<T>> {
        Tensor::from_buffer(self.buf, shape)
    }

    /// The element type.
    pub fn dtype(&self) -> crate::DataType {
        T::DATA_TYPE
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The buffer.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buf
    }

    /// The whole buffer as a mutable slice, for writing. A slice, not
    /// `&mut DeviceBuffer`: the buffer cannot be replaced by a shorter one
    /// under the tensor's shape (whose views would then reach past it).
    ///
    /// ```compile_fail
    /// # cann_sim::install().unwrap();
    /// use acl::{Device, Runtime, Tensor};
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let s = npu.default_stream();
    /// let mut t = Tensor::<f32>::zeros(&s, &[256, 256])?;
    /// let mut shorter = s.alloc_zeros::<f32>(4)?;
    /// std::mem::swap(t.buffer_mut(), &mut shorter); // does not compile
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub fn buffer_mut(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut::new(
            crate::memory::DeviceMemory::allocation(&self.buf),
            0,
            self.buf.len(),
        )
    }

    /// The buffer, without the shape.
    pub fn into_buffer(self) -> DeviceBuffer<T> {
        self.buf
    }

    /// A read-only view of the whole tensor, to slice or transpose.
    pub fn view(&self) -> TensorView<'_, T> {
        TensorView::from_raw(self.raw_view())
    }

    /// A writable view of the whole tensor, to slice or transpose.
    pub fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut::from_raw(self.raw_view())
    }

    fn raw_view(&self) -> RawView<'_> {
        use crate::memory::DeviceMemory;
        // The shape was checked to hold the buffer when the tensor was made.
        RawView {
            alloc: self.buf.allocation(),
            addr: self.buf.device_ptr() as usize,
            len: self.buf.len(),
            shape: self.shape,
            strides: self.shape.row_major(),
            offset: 0,
        }
    }

    /// Copies the tensor to the host (after its queued work).
    ///
    /// # Errors
    ///
    /// The runtime's error, including faults of queued work.
    pub fn to_host_vec(&self) -> Result<Vec<T>> {
        self.buf.to_host_vec()
    }

    /// Copies `data` into the tensor (after its queued work).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.buf.copy_from_host(data)
    }
}

impl<T: Element> AsView<T> for Tensor<T> {
    fn view(&self) -> TensorView<'_, T> {
        Tensor::view(self)
    }
}

impl<T: Element> AsViewMut<T> for Tensor<T> {
    fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        Tensor::view_mut(self)
    }
}

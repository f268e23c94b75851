//! Typed operators over device tensors: `acl::ops::matmul(&stream, &a, &b,
//! &mut c)` instead of descriptor plumbing.
//!
//! A [`Tensor`] is a [`DeviceBuffer`] with a shape (row-major, `ND`). Each
//! function checks shapes with CANN's rules (NumPy broadcasting, matmul
//! dimensions, axes in range, permutations) and the output's shape against
//! the result's, **before** any C call ([`Error::InvalidArgument`]), then
//! queues the CANN operator on `stream` through the single-operator API
//! (`aclopExecuteV2`, see [`crate::aclop`]): descriptions, data buffers and
//! attributes are made for the call and released when it returns.
//! Value inputs (`axes`, `perm`, `dims`, a fill value) are passed as host
//! constants. The functions return once the operator is queued.
//!
//! Which data types an operator takes is the runtime's rule
//! (`ACL_ERROR_UNSUPPORTED_DATA_TYPE`, 100026, otherwise): the
//! elementwise, matmul, reduce and softmax operators take `f32`,
//! [`half::f16`] and [`half::bf16`] (and most `i32`); half-precision
//! inputs accumulate in `f32` on the device, as the Cube unit does.
//!
//! The same operators through the two-phase `aclnn` API, which torch_npu
//! uses, are in `crate::aclnn` when the operator library is available.
//!
//! # Which operator module
//!
//! This crate reaches CANN's operators three ways:
//!
//! - [`crate::ops`]: typed functions over owned [`crate::Tensor`]s
//!   (`ops::matmul(&s, &a, &b, &mut c)`), built on `aclop`. Start here for
//!   the common operators.
//! - [`crate::aclnn`]: the two-phase API torch_npu uses, over views
//!   (dims, strides, offset) of any buffer. Use it for views, for the
//!   operators only aclnn has, and where a framework expects aclnn's
//!   semantics.
//! - [`crate::aclop`]: any CANN operator by name, with descriptions and
//!   attributes written by hand (`aclopExecuteV2`), and compiled handles.
//!   Use it for operators neither of the others wraps.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, Tensor, ops};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let a = Tensor::from_host(&s, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = Tensor::from_host(&s, &[1.0f32, 0.0, 0.0, 1.0], &[2, 2])?;
//! let mut c = Tensor::zeros(&s, &[2, 2])?;
//! ops::matmul(&s, &a, &b, &mut c)?;
//! assert_eq!(c.to_host_vec()?, [1.0, 2.0, 3.0, 4.0]);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::aclop::exec::{Arg, launch};
use crate::aclop::{Format, OpAttr, Operator, TensorDesc};
use crate::error::{Error, Result};
use crate::memory::Element;
use crate::result::raw;
use crate::{DeviceBuffer, Stream};
use std::ffi::CStr;

/// A device buffer with a shape: `shape.iter().product()` elements of `T`,
/// row-major.
///
/// `Send + Sync` as [`DeviceBuffer`].
pub struct Tensor<T: Element> {
    buf: DeviceBuffer<T>,
    shape: Vec<usize>,
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

fn numel(function: &'static str, shape: &[usize]) -> Result<usize> {
    if shape.len() > raw::ACL_MAX_DIM_CNT as usize {
        return Err(Error::invalid(
            function,
            format!(
                "{} dimensions; at most {}",
                shape.len(),
                raw::ACL_MAX_DIM_CNT
            ),
        ));
    }
    // AscendCL takes dimensions as `int64_t`, where -1 means "unknown":
    // `usize::MAX as i64` would be one, and an empty shape holds any.
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

/// Dimension `d` of `shape` as an AscendCL dimension.
fn dim_i64(shape: &[usize], d: usize) -> Result<i64> {
    i64::try_from(d).map_err(|_| {
        Error::invalid(
            "acl::ops",
            format!("shape {shape:?}: dimension {d} is above i64::MAX, the largest AscendCL takes"),
        )
    })
}

/// The length of `what` (axes, a permutation, a shape) as an `int64_t`
/// value or dimension (converted, not cast).
fn len_i64(function: &'static str, what: &str, n: usize) -> Result<i64> {
    i64::try_from(n)
        .map_err(|_| Error::invalid(function, format!("{what} has {n} entries, above i64::MAX")))
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
            shape: shape.to_vec(),
        })
    }

    /// A tensor of zero bytes (0 for every element type here), for use on `stream`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a shape of more than 128 dimensions,
    /// a dimension above `i64::MAX` (AscendCL's dimensions are `int64_t`),
    /// or an element count above `i64::MAX`; the runtime's error.
    #[doc(alias = "aclrtMemsetAsync")]
    pub fn zeros(stream: &Stream, shape: &[usize]) -> Result<Tensor<T>> {
        let n = numel("Tensor::zeros", shape)?;
        Ok(Tensor {
            buf: stream.alloc_zeros(n)?,
            shape: shape.to_vec(),
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
            shape: shape.to_vec(),
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

    /// The buffer, for writing.
    pub fn buffer_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buf
    }

    /// The buffer, without the shape.
    pub fn into_buffer(self) -> DeviceBuffer<T> {
        self.buf
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

    /// The shape as AscendCL dimensions (`numel` checked each fits in `i64`
    /// when the tensor was made; checked again rather than cast).
    pub(crate) fn dims(&self) -> Result<Vec<i64>> {
        self.shape
            .iter()
            .map(|&d| dim_i64(&self.shape, d))
            .collect()
    }

    pub(crate) fn desc(&self) -> Result<TensorDesc> {
        let mut buf = [0i64; 8];
        if self.shape.len() <= buf.len() {
            for (b, &d) in buf.iter_mut().zip(&self.shape) {
                *b = dim_i64(&self.shape, d)?;
            }
            TensorDesc::new(T::DATA_TYPE, &buf[..self.shape.len()], Format::Nd)
        } else {
            TensorDesc::new(T::DATA_TYPE, &self.dims()?, Format::Nd)
        }
    }

    fn arg<'a>(&'a self, desc: &'a TensorDesc) -> Arg<'a> {
        Arg {
            desc,
            ptr: self.buf.as_raw_ptr().cast_mut(),
            bytes: self.buf.size_bytes(),
            access: crate::DeviceMemory::read_access(&self.buf),
        }
    }

    fn arg_mut<'a>(&'a mut self, desc: &'a TensorDesc) -> Arg<'a> {
        let ptr = self.buf.as_raw_mut_ptr();
        Arg {
            desc,
            ptr,
            bytes: self.buf.size_bytes(),
            access: crate::DeviceMemoryMut::write_access(&mut self.buf),
        }
    }
}

mod elementwise;
mod layout;
mod matmul;
mod reduce;
mod shape;

pub use elementwise::*;
pub use layout::*;
pub use matmul::*;
pub use reduce::*;
pub use shape::broadcast_shapes;
use shape::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes("t", &[2, 3], &[3]).unwrap(), [2, 3]);
        assert_eq!(
            broadcast_shapes("t", &[4, 1, 3], &[2, 1]).unwrap(),
            [4, 2, 3]
        );
        assert_eq!(broadcast_shapes("t", &[], &[5]).unwrap(), [5]);
        let e = broadcast_shapes("t", &[2, 3], &[2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: shapes [2, 3] and [2] do not broadcast (dimension 1: 3 vs 2)"
        );
    }

    #[test]
    fn reduced_shapes_drop_or_keep_axes() {
        assert_eq!(reduced_shape("t", &[2, 3, 4], &[1], false).unwrap(), [2, 4]);
        assert_eq!(
            reduced_shape("t", &[2, 3, 4], &[-1, 0], true).unwrap(),
            [1, 3, 1]
        );
        assert_eq!(reduced_shape("t", &[2, 3], &[], false).unwrap(), [2, 3]);
        assert!(reduced_shape("t", &[2, 3], &[2], false).is_err());
        assert!(reduced_shape("t", &[2, 3], &[-3], false).is_err());
    }
}

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

/// Dimension `i` of `shape` right-aligned to `n` dimensions (NumPy
/// broadcasting): the missing leading dimensions are 1.
fn dim_aligned(shape: &[usize], i: usize, n: usize) -> usize {
    if i + shape.len() >= n {
        shape[i + shape.len() - n]
    } else {
        1
    }
}

/// NumPy broadcasting of two shapes.
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `function` when they do not broadcast.
pub fn broadcast_shapes(function: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let (da, db) = (dim_aligned(a, i, n), dim_aligned(b, i, n));
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::invalid(
                    function,
                    format!(
                        "shapes {a:?} and {b:?} do not broadcast (dimension {i}: {da} vs {db})"
                    ),
                ));
            }
        };
    }
    Ok(out)
}

/// Checks that `out` is the broadcast shape of `a` and `b`, without allocating.
fn expect_broadcast(function: &'static str, a: &[usize], b: &[usize], out: &[usize]) -> Result<()> {
    let n = a.len().max(b.len());
    let fits = out.len() == n
        && (0..n).all(|i| {
            let (da, db) = (dim_aligned(a, i, n), dim_aligned(b, i, n));
            (da == db || da == 1 || db == 1) && out[i] == if da == 1 { db } else { da }
        });
    if fits {
        return Ok(());
    }
    let want = broadcast_shapes(function, a, b)?;
    expect_shape(function, out, &want)
}

fn expect_shape(function: &'static str, out: &[usize], want: &[usize]) -> Result<()> {
    if out == want {
        Ok(())
    } else {
        Err(Error::invalid(
            function,
            format!("the output has shape {out:?}, the result has shape {want:?}"),
        ))
    }
}

/// Axis `a` of a `rank`-dimensional tensor, counted from the end when
/// negative: `-rank..rank` (none for a 0-dimensional tensor, as in CANN).
fn axis(function: &'static str, a: i64, rank: usize) -> Result<usize> {
    let from_start = match i64::try_from(rank) {
        Ok(r) if a < 0 => a.checked_add(r),
        Ok(_) => Some(a),
        Err(_) => None,
    };
    match from_start.and_then(|i| usize::try_from(i).ok()) {
        Some(i) if i < rank => Ok(i),
        _ if rank == 0 => Err(Error::invalid(
            function,
            format!("axis {a} is out of range for a 0-dimensional tensor, which has no axes"),
        )),
        _ => Err(Error::invalid(
            function,
            format!("axis {a} is out of range for a {rank}-dimensional tensor"),
        )),
    }
}

fn binary<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    expect_broadcast(function, &a.shape, &b.shape, &out.shape)?;
    launch_binary(stream, op, a, b, out, None)
}

/// Queues `op` with inputs `a`, `b`, output `out` and `attr`, the tensor
/// descriptions made for the call.
fn launch_binary<T: Element>(
    stream: &Stream,
    op: &CStr,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
    attr: Option<&OpAttr>,
) -> Result<()> {
    let (da, db, dout) = (a.desc()?, b.desc()?, out.desc()?);
    launch(
        stream,
        op,
        [a.arg(&da), b.arg(&db)],
        [out.arg_mut(&dout)],
        attr,
    )
}

/// Queues `op` with input `x`, output `out` and `attr`, the tensor
/// descriptions made for the call.
fn launch_unary<T: Element>(
    stream: &Stream,
    op: &CStr,
    x: &Tensor<T>,
    out: &mut Tensor<T>,
    attr: Option<&OpAttr>,
) -> Result<()> {
    let (dx, dout) = (x.desc()?, out.desc()?);
    launch(stream, op, [x.arg(&dx)], [out.arg_mut(&dout)], attr)
}

fn unary<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    expect_shape(function, &out.shape, &x.shape)?;
    launch_unary(stream, op, x, out, None)
}

macro_rules! binary_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `out`'s shape must be the broadcast shape of `a` and `b` (NumPy rules).
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for shapes that do not broadcast or an
        /// output of another shape; the runtime's error (e.g. 100026 for a
        /// data type the operator does not take).
        #[doc(alias = $op)]
        pub fn $name<T: Element>(stream: &Stream, a: &Tensor<T>, b: &Tensor<T>, out: &mut Tensor<T>) -> Result<()> {
            binary($cop, concat!("ops::", stringify!($name)), stream, a, b, out)
        }
    )*};
}

macro_rules! unary_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `out` has `x`'s shape.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an output of another shape; the
        /// runtime's error.
        #[doc(alias = $op)]
        pub fn $name<T: Element>(stream: &Stream, x: &Tensor<T>, out: &mut Tensor<T>) -> Result<()> {
            unary($cop, concat!("ops::", stringify!($name)), stream, x, out)
        }
    )*};
}

binary_ops! {
    /// `out = a + b` (`Add`).
    add => "Add", c"Add",
    /// `out = a - b` (`Sub`).
    sub => "Sub", c"Sub",
    /// `out = a * b` (`Mul`).
    mul => "Mul", c"Mul",
    /// `out = a / b` (`RealDiv`).
    div => "RealDiv", c"RealDiv",
    /// `out = max(a, b)` (`Maximum`).
    maximum => "Maximum", c"Maximum",
    /// `out = min(a, b)` (`Minimum`).
    minimum => "Minimum", c"Minimum",
}

unary_ops! {
    /// `out = -x` (`Neg`).
    neg => "Neg", c"Neg",
    /// `out = |x|` (`Abs`).
    abs => "Abs", c"Abs",
    /// `out = e^x` (`Exp`).
    exp => "Exp", c"Exp",
    /// `out = ln x` (`Log`).
    log => "Log", c"Log",
    /// `out = √x` (`Sqrt`).
    sqrt => "Sqrt", c"Sqrt",
    /// `out = 1/√x` (`Rsqrt`).
    rsqrt => "Rsqrt", c"Rsqrt",
    /// `out = max(x, 0)` (`Relu`).
    relu => "Relu", c"Relu",
    /// `out = 1/(1+e^-x)` (`Sigmoid`).
    sigmoid => "Sigmoid", c"Sigmoid",
    /// `out = tanh x` (`Tanh`).
    tanh => "Tanh", c"Tanh",
    /// GELU, tanh approximation (`Gelu`).
    gelu => "Gelu", c"Gelu",
    /// `out = 0` with `x`'s shape and type (`ZerosLike`).
    zeros_like => "ZerosLike", c"ZerosLike",
    /// `out = 1` with `x`'s shape and type (`OnesLike`).
    ones_like => "OnesLike", c"OnesLike",
}

/// The gradient of ReLU: `out = gradients` where `features > 0`, else 0 (`ReluGrad`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] for shapes that do not broadcast or an output
/// of another shape; the runtime's error.
#[doc(alias = "ReluGrad")]
pub fn relu_grad<T: Element>(
    stream: &Stream,
    gradients: &Tensor<T>,
    features: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    binary(
        c"ReluGrad",
        "ops::relu_grad",
        stream,
        gradients,
        features,
        out,
    )
}

/// Converts `x` to `U` (`Cast` through `aclopCast`, rounding to nearest).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when the shapes differ; the runtime's error.
#[doc(alias = "aclopCast")]
#[doc(alias = "Cast")]
pub fn cast<T: Element, U: Element>(
    stream: &Stream,
    x: &Tensor<T>,
    out: &mut Tensor<U>,
) -> Result<()> {
    expect_shape("ops::cast", &out.shape, &x.shape)?;
    let (dx, dout) = (x.desc()?, out.desc()?);
    crate::aclop::cast(stream, &dx, &x.buf, &dout, &mut out.buf, false)
}

/// `out = a @ b` for matrices `[m, k] @ [k, n]` (`MatMul`).
///
/// # Errors
///
/// As [`matmul_t`].
#[doc(alias = "MatMul")]
pub fn matmul<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    matmul_t(stream, a, false, b, false, out)
}

fn matmul_dims(
    function: &'static str,
    a: &[usize],
    ta: bool,
    b: &[usize],
    tb: bool,
) -> Result<(usize, usize)> {
    let (m, ka) = if ta { (a[1], a[0]) } else { (a[0], a[1]) };
    let (kb, n) = if tb { (b[1], b[0]) } else { (b[0], b[1]) };
    if ka != kb {
        return Err(Error::invalid(
            function,
            format!(
                "inner dimensions differ: {a:?}{} @ {b:?}{} ({ka} vs {kb})",
                if ta { "ᵀ" } else { "" },
                if tb { "ᵀ" } else { "" }
            ),
        ));
    }
    Ok((m, n))
}

/// `out = op(a) @ op(b)`, `op` transposing when asked (`MatMul` with
/// `transpose_x1`, `transpose_x2`); `f16`/`bf16` accumulate in `f32`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `a` or `b` is not 2-D, the inner
/// dimensions differ, or `out` is not `[m, n]`; the runtime's error.
#[doc(alias = "MatMul")]
pub fn matmul_t<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    transpose_a: bool,
    b: &Tensor<T>,
    transpose_b: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::matmul";
    if a.shape.len() != 2 || b.shape.len() != 2 {
        return Err(Error::invalid(
            F,
            format!(
                "MatMul takes 2-D operands, got {:?} and {:?} (use batch_matmul)",
                a.shape, b.shape
            ),
        ));
    }
    let (m, n) = matmul_dims(F, &a.shape, transpose_a, &b.shape, transpose_b)?;
    expect_shape(F, &out.shape, &[m, n])?;
    let mut attr = OpAttr::new()?;
    attr.set_bool_c(c"transpose_x1", transpose_a)?
        .set_bool_c(c"transpose_x2", transpose_b)?;
    launch_binary(stream, c"MatMul", a, b, out, Some(&attr))
}

/// Batched `out = a @ b` over leading (broadcast) batch dimensions (`BatchMatMul`).
///
/// # Errors
///
/// As [`batch_matmul_adj`].
#[doc(alias = "BatchMatMul")]
pub fn batch_matmul<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    b: &Tensor<T>,
    out: &mut Tensor<T>,
) -> Result<()> {
    batch_matmul_adj(stream, a, false, b, false, out)
}

/// Batched `out = op(a) @ op(b)` (`BatchMatMul` with `adj_x1`, `adj_x2`):
/// the last two dimensions are the matrices, the leading ones broadcast.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when an operand has fewer than 2 dimensions,
/// the inner dimensions differ, the batch dimensions do not broadcast, or
/// `out` has another shape; the runtime's error.
#[doc(alias = "BatchMatMul")]
pub fn batch_matmul_adj<T: Element>(
    stream: &Stream,
    a: &Tensor<T>,
    adj_a: bool,
    b: &Tensor<T>,
    adj_b: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::batch_matmul";
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra < 2 || rb < 2 {
        return Err(Error::invalid(
            F,
            format!(
                "BatchMatMul takes operands of at least 2 dimensions, got {:?} and {:?}",
                a.shape, b.shape
            ),
        ));
    }
    let (m, n) = matmul_dims(F, &a.shape[ra - 2..], adj_a, &b.shape[rb - 2..], adj_b)?;
    let mut want = broadcast_shapes(F, &a.shape[..ra - 2], &b.shape[..rb - 2])?;
    want.extend([m, n]);
    expect_shape(F, &out.shape, &want)?;
    let mut attr = OpAttr::new()?;
    attr.set_bool_c(c"adj_x1", adj_a)?
        .set_bool_c(c"adj_x2", adj_b)?;
    launch_binary(stream, c"BatchMatMul", a, b, out, Some(&attr))
}

/// The shape of a reduction of `shape` over `axes`.
fn reduced_shape(
    function: &'static str,
    shape: &[usize],
    axes: &[i64],
    keep_dims: bool,
) -> Result<Vec<usize>> {
    let mut marked = vec![false; shape.len()];
    for &a in axes {
        let i = axis(function, a, shape.len())?;
        // `axis` returns an index below the rank; `get_mut` keeps a broken
        // invariant an error rather than a panic.
        let Some(m) = marked.get_mut(i) else {
            return Err(Error::invalid(
                function,
                format!("axis {a} is out of range for shape {shape:?}"),
            ));
        };
        *m = true;
    }
    if axes.is_empty() {
        return Ok(shape.to_vec());
    }
    Ok(shape
        .iter()
        .zip(&marked)
        .filter_map(|(&d, &m)| match (m, keep_dims) {
            (true, true) => Some(1),
            (true, false) => None,
            (false, _) => Some(d),
        })
        .collect())
}

fn reduce<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    axes: &[i64],
    keep_dims: bool,
    out: &mut Tensor<T>,
) -> Result<()> {
    let want = reduced_shape(function, &x.shape, axes, keep_dims)?;
    expect_shape(function, &out.shape, &want)?;
    let mut attr = OpAttr::new()?;
    attr.set_bool("keep_dims", keep_dims)?;
    let n_axes = len_i64(function, "axes", axes.len())?;
    let (dx, mut dout) = (x.desc()?, out.desc()?);
    Operator::from_c_str(op)
        .input(&dx, &x.buf)
        .host_input::<i64>(&[n_axes], axes)
        .output(&mut dout, &mut out.buf)
        .attr(&attr)
        .execute(stream)
}

macro_rules! reduce_ops {
    ($($(#[$m:meta])* $name:ident => $op:literal, $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        ///
        /// `axes` may be negative (from the end); with `keep_dims` the
        /// reduced dimensions stay as 1. Empty `axes` leaves `x` as it is.
        ///
        /// # Errors
        ///
        /// [`Error::InvalidArgument`] for an axis out of range or an output
        /// of another shape; the runtime's error.
        #[doc(alias = $op)]
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &Tensor<T>,
            axes: &[i64],
            keep_dims: bool,
            out: &mut Tensor<T>,
        ) -> Result<()> {
            reduce($cop, concat!("ops::", stringify!($name)), stream, x, axes, keep_dims, out)
        }
    )*};
}

reduce_ops! {
    /// Sum over `axes` (`ReduceSum`).
    reduce_sum => "ReduceSum", c"ReduceSum",
    /// Mean over `axes` (`ReduceMean`).
    reduce_mean => "ReduceMean", c"ReduceMean",
    /// Maximum over `axes` (`ReduceMax`).
    reduce_max => "ReduceMax", c"ReduceMax",
}

fn softmax_like<T: Element>(
    op: &'static CStr,
    function: &'static str,
    stream: &Stream,
    x: &Tensor<T>,
    axes: &[i64],
    out: &mut Tensor<T>,
) -> Result<()> {
    for &a in axes {
        axis(function, a, x.shape.len())?;
    }
    expect_shape(function, &out.shape, &x.shape)?;
    let mut attr = OpAttr::new()?;
    attr.set_list_int("axes", axes)?;
    launch_unary(stream, op, x, out, Some(&attr))
}

/// Public softmax-like wrappers over [`softmax_like`]: each takes its doc
/// comment (with `# Errors` and `#[doc(alias)]`) from the invocation.
macro_rules! softmax_ops {
    ($($(#[$m:meta])* $name:ident => $cop:literal),* $(,)?) => {$(
        $(#[$m])*
        pub fn $name<T: Element>(
            stream: &Stream,
            x: &Tensor<T>,
            axes: &[i64],
            out: &mut Tensor<T>,
        ) -> Result<()> {
            softmax_like($cop, concat!("ops::", stringify!($name)), stream, x, axes, out)
        }
    )*};
}

softmax_ops! {
    /// Softmax over `axes` (`SoftmaxV2`; usually `&[-1]`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an axis out of range or an output of
    /// another shape; the runtime's error.
    #[doc(alias = "SoftmaxV2")]
    softmax => c"SoftmaxV2",
    /// Log-softmax over `axes` (`LogSoftmaxV2`).
    ///
    /// # Errors
    ///
    /// As [`softmax`].
    #[doc(alias = "LogSoftmaxV2")]
    log_softmax => c"LogSoftmaxV2",
}

/// Permutes the dimensions: `out.shape[i] = x.shape[perm[i]]` (`Transpose`).
///
/// # Errors
///
/// [`Error::InvalidArgument`] when `perm` is not a permutation of
/// `0..rank` or `out` has another shape; the runtime's error.
#[doc(alias = "Transpose")]
pub fn transpose<T: Element>(
    stream: &Stream,
    x: &Tensor<T>,
    perm: &[usize],
    out: &mut Tensor<T>,
) -> Result<()> {
    const F: &str = "ops::transpose";
    let rank = x.shape.len();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || perm
            .iter()
            .any(|&p| p >= rank || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::invalid(
            F,
            format!("perm {perm:?} is not a permutation of 0..{rank}"),
        ));
    }
    let want: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
    expect_shape(F, &out.shape, &want)?;
    // Each entry is below the rank (checked above), so it fits: converted.
    let perm64 = perm
        .iter()
        .map(|&p| {
            i64::try_from(p)
                .map_err(|_| Error::invalid(F, format!("perm entry {p} is above i64::MAX")))
        })
        .collect::<Result<Vec<i64>>>()?;
    let rank64 = len_i64(F, "the permutation", rank)?;
    let (dx, mut dout) = (x.desc()?, out.desc()?);
    Operator::from_c_str(c"Transpose")
        .input(&dx, &x.buf)
        .host_input::<i64>(&[rank64], &perm64)
        .output(&mut dout, &mut out.buf)
        .execute(stream)
}

/// Sets every element of `out` to `value` (`Fill`).
///
/// # Errors
///
/// The runtime's error.
#[doc(alias = "Fill")]
pub fn fill<T: Element>(stream: &Stream, value: T, out: &mut Tensor<T>) -> Result<()> {
    let dims = out.dims()?;
    let mut dout = out.desc()?;
    let value = [value];
    Operator::from_c_str(c"Fill")
        .host_input::<i64>(&[len_i64("ops::fill", "the shape", dims.len())?], &dims)
        .host_input::<T>(&[], &value)
        .output(&mut dout, &mut out.buf)
        .execute(stream)
}

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

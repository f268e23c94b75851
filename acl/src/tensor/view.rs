//! Borrowed views: [`TensorView`] and [`TensorViewMut`], a shape, strides
//! and an offset over device memory someone else owns.

use super::Dims;
use crate::error::{Error, Result};
use crate::memory::{Allocation, DeviceMemory, DeviceMemoryMut, Element};
use std::marker::PhantomData;
use std::sync::Arc;

/// What both view types hold: the memory (its allocation, address and
/// length in elements) and the layout over it, in elements.
#[derive(Clone, Copy)]
pub(crate) struct RawView<'a> {
    pub(crate) alloc: &'a Arc<Allocation>,
    /// Device address of the memory's first element (not of the view's).
    pub(crate) addr: usize,
    /// Elements of the memory.
    pub(crate) len: usize,
    pub(crate) shape: Dims,
    pub(crate) strides: Dims,
    pub(crate) offset: usize,
}

impl std::fmt::Debug for RawView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("shape", &&*self.shape)
            .field("strides", &&*self.strides)
            .field("offset", &self.offset)
            .field("memory_len", &self.len)
            .field("addr", &format_args!("{:#x}", self.addr))
            .finish()
    }
}

fn bad(function: &'static str, reason: String) -> Error {
    Error::invalid(function, reason)
}

/// The dimensions and row-major strides of `shape`, and its element
/// count; checked (see [`super::numel`]).
pub(crate) fn contiguous(function: &'static str, shape: &[usize]) -> Result<(Dims, Dims, usize)> {
    let n = super::numel(function, shape)?;
    let dims = Dims::new(function, shape)?;
    Ok((dims, dims.row_major(), n))
}

impl<'a> RawView<'a> {
    fn of<T: Element>(mem: &'a impl DeviceMemory<T>) -> (&'a Arc<Allocation>, usize, usize) {
        (mem.allocation(), mem.device_ptr() as usize, mem.len())
    }

    /// A contiguous view of `shape` over all of the memory.
    fn contiguous(
        function: &'static str,
        (alloc, addr, len): (&'a Arc<Allocation>, usize, usize),
        shape: &[usize],
    ) -> Result<RawView<'a>> {
        let (shape_dims, strides, n) = contiguous(function, shape)?;
        if n != len {
            return Err(bad(
                function,
                format!(
                    "shape {shape:?} ({n} elements) does not cover the memory's {len} elements"
                ),
            ));
        }
        Ok(RawView {
            alloc,
            addr,
            len,
            shape: shape_dims,
            strides,
            offset: 0,
        })
    }

    /// A view with explicit strides and offset, checked to lie inside the
    /// memory (and, for an output, not to reach one element twice).
    fn strided(
        function: &'static str,
        (alloc, addr, len): (&'a Arc<Allocation>, usize, usize),
        (shape, strides, offset): (&[usize], &[usize], usize),
        output: bool,
    ) -> Result<RawView<'a>> {
        if shape.len() != strides.len() {
            return Err(bad(
                function,
                format!("{} dimensions but {} strides", shape.len(), strides.len()),
            ));
        }
        let v = RawView {
            alloc,
            addr,
            len,
            shape: Dims::new(function, shape)?,
            strides: Dims::new(function, strides)?,
            offset,
        };
        super::numel(function, shape)?;
        v.check_bounds(function)?;
        if output && v.overlaps_itself() {
            return Err(bad(
                function,
                format!(
                    "shape {shape:?} with strides {strides:?} reaches some elements twice; \
                     an output view must not (only inputs may broadcast)"
                ),
            ));
        }
        Ok(v)
    }

    /// The index one past the last element the view reaches (its offset
    /// when it has no elements); `None` on overflow.
    fn end(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(self.offset);
        }
        self.shape
            .iter()
            .zip(self.strides.iter())
            .try_fold(self.offset, |last, (&d, &s)| {
                (d - 1)
                    .checked_mul(s)
                    .and_then(|step| last.checked_add(step))
            })
            .and_then(|last| last.checked_add(1))
    }

    fn check_bounds(&self, function: &'static str) -> Result<()> {
        match self.end() {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(bad(
                function,
                format!(
                    "the view {:?} (strides {:?}, offset {}) reaches beyond the memory's {} elements",
                    &*self.shape, &*self.strides, self.offset, self.len
                ),
            )),
        }
    }

    /// Whether two different indices reach the same element: sorted by
    /// stride, each dimension of size > 1 must step past everything the
    /// smaller strides span.
    fn overlaps_itself(&self) -> bool {
        reaches_twice(self.strides.iter().copied().zip(self.shape.iter().copied()))
    }

    fn axis(&self, function: &'static str, axis: usize) -> Result<()> {
        if axis < self.shape.len() {
            Ok(())
        } else {
            Err(bad(
                function,
                format!(
                    "axis {axis} is out of range for a {}-dimensional view",
                    self.shape.len()
                ),
            ))
        }
    }

    fn narrow(
        mut self,
        function: &'static str,
        axis: usize,
        start: usize,
        len: usize,
    ) -> Result<Self> {
        self.axis(function, axis)?;
        let d = self.shape[axis];
        if start.checked_add(len).is_none_or(|end| end > d) {
            return Err(bad(
                function,
                format!("{start}..{start}+{len} is out of range for axis {axis} of size {d}"),
            ));
        }
        self.shape[axis] = len;
        // A view without elements reaches no memory: its offset stays (and
        // its strides, which nothing bounds, are never multiplied).
        if self.shape.contains(&0) {
            return Ok(self);
        }
        // Inside the old view (checked above), so inside the memory; checked
        // all the same, so that no view can wrap.
        self.offset = start
            .checked_mul(self.strides[axis])
            .and_then(|d| self.offset.checked_add(d))
            .ok_or_else(|| {
                bad(
                    function,
                    format!("the offset of element {start} of axis {axis} overflows"),
                )
            })?;
        Ok(self)
    }

    fn select(self, function: &'static str, axis: usize, index: usize) -> Result<Self> {
        let mut v = self.narrow(function, axis, index, 1)?;
        v.shape.remove(axis);
        v.strides.remove(axis);
        Ok(v)
    }

    fn permute(mut self, function: &'static str, perm: &[usize]) -> Result<Self> {
        let rank = self.shape.len();
        let mut seen = [false; Dims::MAX];
        if perm.len() != rank
            || perm
                .iter()
                .any(|&p| p >= rank || std::mem::replace(&mut seen[p], true))
        {
            return Err(bad(
                function,
                format!("{perm:?} is not a permutation of 0..{rank}"),
            ));
        }
        let (shape, strides) = (self.shape, self.strides);
        for (i, &p) in perm.iter().enumerate() {
            self.shape[i] = shape[p];
            self.strides[i] = strides[p];
        }
        Ok(self)
    }

    fn transpose(self, function: &'static str, a: usize, b: usize) -> Result<Self> {
        self.axis(function, a)?;
        self.axis(function, b)?;
        let mut perm: Vec<usize> = (0..self.shape.len()).collect();
        perm.swap(a, b);
        self.permute(function, &perm)
    }

    fn unsqueeze(mut self, function: &'static str, axis: usize) -> Result<Self> {
        if axis > self.shape.len() {
            return Err(bad(
                function,
                format!(
                    "axis {axis} is out of range for adding a dimension to a {}-dimensional view",
                    self.shape.len()
                ),
            ));
        }
        let stride = self
            .strides
            .get(axis)
            .map_or(1, |&s| s.saturating_mul(self.shape[axis].max(1)));
        self.shape.insert(function, axis, 1)?;
        self.strides.insert(function, axis, stride)?;
        Ok(self)
    }

    fn reshape(self, function: &'static str, shape: &[usize]) -> Result<Self> {
        if !self.is_contiguous() {
            return Err(bad(
                function,
                format!(
                    "a view with strides {:?} is not contiguous; copy it first (TensorView::to_tensor, ops::copy)",
                    &*self.strides
                ),
            ));
        }
        let (shape_dims, strides, n) = contiguous(function, shape)?;
        if n != self.numel() {
            return Err(bad(
                function,
                format!(
                    "shape {shape:?} ({n} elements) does not hold the view's {} elements",
                    self.numel()
                ),
            ));
        }
        Ok(RawView {
            shape: shape_dims,
            strides,
            ..self
        })
    }

    fn broadcast_to(mut self, function: &'static str, shape: &[usize]) -> Result<Self> {
        let (n, r) = (shape.len(), self.shape.len());
        let fail = || {
            bad(
                function,
                format!("shape {:?} does not broadcast to {shape:?}", &*self.shape),
            )
        };
        if r > n {
            return Err(fail());
        }
        let mut strides = Dims::filled(function, n, 0)?;
        for i in 0..n {
            if i < n - r {
                continue;
            }
            let (d, s) = (self.shape[i - (n - r)], self.strides[i - (n - r)]);
            strides[i] = match d {
                _ if d == shape[i] => s,
                1 => 0,
                _ => return Err(fail()),
            };
        }
        self.shape = Dims::new(function, shape)?;
        self.strides = strides;
        Ok(self)
    }

    pub(crate) fn numel(&self) -> usize {
        // Checked when the view was made, and a narrowing only shrinks it.
        self.shape.iter().product()
    }

    pub(crate) fn is_contiguous(&self) -> bool {
        let mut step = 1usize;
        for (&d, &s) in self.shape.iter().zip(self.strides.iter()).rev() {
            if d != 1 && s != step {
                return false;
            }
            step = step.saturating_mul(d);
        }
        true
    }
}

macro_rules! view_methods {
    ($ty:ident) => {
        impl<'a, T: Element> $ty<'a, T> {
            /// The element type.
            pub fn dtype(&self) -> crate::DataType {
                T::DATA_TYPE
            }

            /// The dimensions.
            pub fn shape(&self) -> &[usize] {
                &self.raw.shape
            }

            /// The step between neighbours along each dimension, in elements.
            pub fn strides(&self) -> &[usize] {
                &self.raw.strides
            }

            /// Where the first element lies in the memory, in elements.
            pub fn offset(&self) -> usize {
                self.raw.offset
            }

            /// The number of elements the view has.
            pub fn len(&self) -> usize {
                self.raw.numel()
            }

            /// Whether it has no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// Whether the elements are row-major and next to each other.
            pub fn is_contiguous(&self) -> bool {
                self.raw.is_contiguous()
            }

            /// The elements `start..start + len` along `axis` (same rank).
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] for an axis or a range out of range.
            pub fn narrow(self, axis: usize, start: usize, len: usize) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .narrow(concat!(stringify!($ty), "::narrow"), axis, start, len)?,
                    ..self
                })
            }

            /// Index `index` of `axis`, which is removed (rank − 1).
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] for an axis or an index out of range.
            pub fn select(self, axis: usize, index: usize) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .select(concat!(stringify!($ty), "::select"), axis, index)?,
                    ..self
                })
            }

            /// The dimensions reordered: dimension `i` of the result is
            /// `perm[i]` of this view (no data moves).
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] when `perm` is not a permutation of `0..rank`.
            pub fn permute(self, perm: &[usize]) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .permute(concat!(stringify!($ty), "::permute"), perm)?,
                    ..self
                })
            }

            /// Dimensions `a` and `b` swapped (no data moves): `.transpose(0, 1)`
            /// of a matrix is its transpose.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] for an axis out of range.
            pub fn transpose(self, a: usize, b: usize) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .transpose(concat!(stringify!($ty), "::transpose"), a, b)?,
                    ..self
                })
            }

            /// A dimension of size 1 inserted before `axis` (`axis == rank` appends).
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] for an axis above the rank, or a
            /// ninth dimension.
            pub fn unsqueeze(self, axis: usize) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .unsqueeze(concat!(stringify!($ty), "::unsqueeze"), axis)?,
                    ..self
                })
            }

            /// The same elements with another shape; the view must be contiguous.
            ///
            /// # Errors
            ///
            /// [`Error::InvalidArgument`] for a view that is not contiguous or a
            /// shape of another element count.
            pub fn reshape(self, shape: &[usize]) -> Result<Self> {
                Ok(Self {
                    raw: self
                        .raw
                        .reshape(concat!(stringify!($ty), "::reshape"), shape)?,
                    ..self
                })
            }

            pub(crate) fn raw(&self) -> &RawView<'a> {
                &self.raw
            }
        }

        impl<T: Element> std::fmt::Debug for $ty<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("dtype", &T::DATA_TYPE)
                    .field("view", &self.raw)
                    .finish()
            }
        }
    };
}

/// A read-only view of device memory as a tensor: a shape, strides and an
/// offset (in elements) over memory it borrows, such as a
/// [`DeviceBuffer`](crate::DeviceBuffer), a slice of one, or a
/// [`Tensor`](super::Tensor). Making and reshaping views moves no data; an
/// operator reads the elements the view reaches.
///
/// Every view is checked to lie inside its memory when it is made
/// ([`Error::InvalidArgument`] otherwise), so operators cannot reach
/// memory the view does not borrow. Strides are non-negative (aclnn takes
/// no negative strides); a stride of 0 repeats an element
/// ([`TensorView::broadcast_to`]).
///
/// `Copy`, `Send` and `Sync`, as the shared reference it stands for.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::{Device, Runtime, TensorView};
///
/// let npu = Device::new(&Runtime::init()?, 0)?;
/// let s = npu.new_stream()?;
/// let buf = s.clone_from_host(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let m = TensorView::new(&buf, &[2, 3])?; // [[1, 2, 3], [4, 5, 6]]
/// let t = m.transpose(0, 1)?; // [[1, 4], [2, 5], [3, 6]], no copy
/// assert_eq!((t.shape(), t.strides()), (&[3, 2][..], &[1, 3][..]));
/// assert_eq!(t.to_host_vec(&s)?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// let col = m.select(1, 2)?; // [3, 6]
/// assert_eq!(col.to_host_vec(&s)?, [3.0, 6.0]);
/// # Ok::<(), acl::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct TensorView<'a, T: Element> {
    raw: RawView<'a>,
    _t: PhantomData<&'a [T]>,
}

/// A writable view of device memory as a tensor: as [`TensorView`], over
/// memory borrowed mutably, so no other view of it exists meanwhile.
///
/// An output view never reaches one element twice (checked when it is
/// made), so an operator's result is defined.
///
/// `Send` and `Sync`, as the exclusive reference it stands for.
///
/// While it lives, the tensor it views can be neither read nor written
/// another way:
///
/// ```compile_fail,E0502
/// # fn f(s: &acl::Stream) -> acl::Result<()> {
/// let mut t = acl::Tensor::<f32>::zeros(s, &[4])?;
/// let r = t.view();
/// let w = t.view_mut(); // error: `t` is already borrowed as immutable
/// drop((r, w));
/// # Ok(()) }
/// ```
pub struct TensorViewMut<'a, T: Element> {
    raw: RawView<'a>,
    _t: PhantomData<&'a mut [T]>,
}

view_methods!(TensorView);
view_methods!(TensorViewMut);

impl<'a, T: Element> TensorView<'a, T> {
    /// A contiguous row-major view of `shape` over all of `mem`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `shape` does not hold `mem.len()`
    /// elements or has more than 8 dimensions (aclnn's limit).
    pub fn new(mem: &'a impl DeviceMemory<T>, shape: &[usize]) -> Result<TensorView<'a, T>> {
        Ok(Self::from_raw(RawView::contiguous(
            "TensorView::new",
            RawView::of(mem),
            shape,
        )?))
    }

    /// A view of `shape` with `strides` from element `offset` of `mem`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the view reaches beyond `mem`, the
    /// lengths of `shape` and `strides` differ, or it has more than 8
    /// dimensions.
    pub fn strided(
        mem: &'a impl DeviceMemory<T>,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<TensorView<'a, T>> {
        Ok(Self::from_raw(RawView::strided(
            "TensorView::strided",
            RawView::of(mem),
            (shape, strides, offset),
            false,
        )?))
    }

    /// The view repeated along new leading dimensions and dimensions of
    /// size 1 to `shape` (NumPy broadcasting; stride 0, no copy).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shape does not broadcast to `shape`.
    pub fn broadcast_to(self, shape: &[usize]) -> Result<TensorView<'a, T>> {
        Ok(Self::from_raw(
            self.raw.broadcast_to("TensorView::broadcast_to", shape)?,
        ))
    }

    pub(crate) fn from_raw(raw: RawView<'a>) -> TensorView<'a, T> {
        TensorView {
            raw,
            _t: PhantomData,
        }
    }

    /// Copies the elements the view reaches, row-major, into a new
    /// contiguous tensor on `stream`.
    ///
    /// # Errors
    ///
    /// The errors of [`ops::copy`](crate::ops::copy).
    pub fn to_tensor(&self, stream: &crate::Stream) -> Result<super::Tensor<T>> {
        let mut out = super::Tensor::zeros(stream, self.shape())?;
        crate::ops::copy(stream, self, &mut out)?;
        Ok(out)
    }

    /// The elements the view reaches, row-major, on the host (copied into a
    /// contiguous buffer on `stream` first unless the view is contiguous).
    ///
    /// # Errors
    ///
    /// As [`TensorView::to_tensor`], and the copy's.
    pub fn to_host_vec(&self, stream: &crate::Stream) -> Result<Vec<T>> {
        self.to_tensor(stream)?.to_host_vec()
    }
}

impl<'a, T: Element> TensorViewMut<'a, T> {
    /// A contiguous row-major view of `shape` over all of `mem`.
    ///
    /// # Errors
    ///
    /// As [`TensorView::new`].
    pub fn new(
        mem: &'a mut impl DeviceMemoryMut<T>,
        shape: &[usize],
    ) -> Result<TensorViewMut<'a, T>> {
        let of = RawView::of(&*mem);
        Ok(Self::from_raw(RawView::contiguous(
            "TensorViewMut::new",
            of,
            shape,
        )?))
    }

    /// A view of `shape` with `strides` from element `offset` of `mem`.
    ///
    /// # Errors
    ///
    /// As [`TensorView::strided`], and when two indices reach the same
    /// element (a stride of 0 along a dimension of size > 1, or strides
    /// that interleave).
    pub fn strided(
        mem: &'a mut impl DeviceMemoryMut<T>,
        shape: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Result<TensorViewMut<'a, T>> {
        let of = RawView::of(&*mem);
        Ok(Self::from_raw(RawView::strided(
            "TensorViewMut::strided",
            of,
            (shape, strides, offset),
            true,
        )?))
    }

    pub(crate) fn from_raw(raw: RawView<'a>) -> TensorViewMut<'a, T> {
        TensorViewMut {
            raw,
            _t: PhantomData,
        }
    }

    /// A shorter-lived writable view of the same elements, leaving `self`
    /// usable afterwards (as `&mut *r` does for references).
    pub fn reborrow(&mut self) -> TensorViewMut<'_, T> {
        TensorViewMut::from_raw(self.raw)
    }

    /// A read-only view of the same elements, for as long as it is borrowed.
    pub fn as_view(&self) -> TensorView<'_, T> {
        TensorView::from_raw(self.raw)
    }

    /// The read-only view of the same elements, for `'a` (this view is
    /// given up).
    pub fn into_view(self) -> TensorView<'a, T> {
        TensorView::from_raw(self.raw)
    }
}

/// Everything that can be read as a tensor: [`Tensor`](super::Tensor),
/// [`TensorView`], [`TensorViewMut`]. The operators of
/// [`ops`](crate::ops) take their inputs as `&impl AsView<T>`.
pub trait AsView<T: Element> {
    /// A read-only view of all of it.
    fn view(&self) -> TensorView<'_, T>;
}

/// Everything that can be written as a tensor: [`Tensor`](super::Tensor),
/// [`TensorViewMut`]. The operators of [`ops`](crate::ops) take their
/// outputs as `&mut impl AsViewMut<T>`.
pub trait AsViewMut<T: Element>: AsView<T> {
    /// A writable view of all of it.
    fn view_mut(&mut self) -> TensorViewMut<'_, T>;
}

impl<T: Element> AsView<T> for TensorView<'_, T> {
    fn view(&self) -> TensorView<'_, T> {
        *self
    }
}

impl<T: Element> AsView<T> for TensorViewMut<'_, T> {
    fn view(&self) -> TensorView<'_, T> {
        self.as_view()
    }
}

impl<T: Element> AsViewMut<T> for TensorViewMut<'_, T> {
    fn view_mut(&mut self) -> TensorViewMut<'_, T> {
        self.reborrow()
    }
}

/// Whether a view of `(stride, size)` dimensions reaches one element from
/// two different indices: sorted by stride, each dimension of size > 1 must
/// step past everything the smaller strides span. An empty view reaches
/// nothing. (Shared by typed views and [`crate::aclnn::Layout`] outputs.)
pub(crate) fn reaches_twice(dims: impl Iterator<Item = (usize, usize)>) -> bool {
    let mut dims: Vec<(usize, usize)> = dims.collect();
    if dims.iter().any(|&(_, d)| d == 0) {
        return false;
    }
    dims.retain(|&(_, d)| d > 1);
    dims.sort_unstable();
    let mut span = 1usize;
    for (s, d) in dims {
        if s < span {
            return true;
        }
        span = s.saturating_mul(d - 1).saturating_add(span);
    }
    false
}

//! The aclnn argument objects, each owning its handle.

use super::MemUse;
use super::descriptors::{self, Descriptor, Request};
use crate::error::{Error, Result};
use crate::memory::{Access, Allocation, DataType, DeviceMemory, DeviceMemoryMut, Element};
use crate::result::{self, raw};
use crate::tensor::{RawView, TensorView, TensorViewMut};
use raw::{aclBoolArray, aclFloatArray, aclIntArray, aclScalar, aclTensor, aclTensorList};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

/// The layout of a tensor view over a buffer (in elements): `dims` with
/// `strides` from `offset`, inside a storage of `storage_dims`, in `format`
/// (`ACL_FORMAT_ND` is 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// View dimensions.
    pub dims: Vec<i64>,
    /// View strides, in elements.
    pub strides: Vec<i64>,
    /// Offset of the first element, in elements.
    pub offset: i64,
    /// `aclFormat` value.
    pub format: i32,
    /// Storage dimensions (the whole buffer the view lies in).
    pub storage_dims: Vec<i64>,
}

impl Layout {
    /// A contiguous row-major `ND` view of `shape` covering `shape`'s elements.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when a dimension, a stride or the element
    /// count does not fit in `i64` (what `aclCreateTensor` takes).
    ///
    /// ```
    /// use acl::aclnn::Layout;
    ///
    /// let l = Layout::contiguous(&[2, 3, 4])?;
    /// assert_eq!((l.strides, l.storage_dims), (vec![12, 4, 1], vec![24]));
    /// assert!(Layout::contiguous(&[1 << 32, 1 << 32]).is_err());
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub fn contiguous(shape: &[usize]) -> Result<Layout> {
        let mut dims = vec![0i64; shape.len()];
        let mut strides = vec![1i64; shape.len()];
        let n = contiguous_into("Layout::contiguous", shape, &mut dims, &mut strides)?;
        Ok(Layout {
            dims,
            strides,
            offset: 0,
            format: raw::ACL_FORMAT_ND,
            storage_dims: vec![n],
        })
    }

    /// Checks that every element the view reaches lies in a buffer of `len`
    /// elements, and the storage too.
    fn check(&self, function: &'static str, len: usize) -> Result<()> {
        let bad = |r: String| Err(Error::invalid(function, r));
        if self.dims.len() != self.strides.len() {
            return bad(format!(
                "{} dims but {} strides",
                self.dims.len(),
                self.strides.len()
            ));
        }
        if self.dims.len() > 8 || self.storage_dims.len() > 8 {
            return bad("more than 8 dimensions".into());
        }
        if self.dims.iter().chain(&self.storage_dims).any(|&d| d < 0) || self.offset < 0 {
            return bad(format!("negative dimension or offset in {self:?}"));
        }
        let storage = self
            .storage_dims
            .iter()
            .try_fold(1i128, |n, &d| n.checked_mul(i128::from(d)));
        if storage.is_none_or(|s| s > len as i128) {
            return bad(format!(
                "storage {:?} is larger than the buffer of {len} elements",
                self.storage_dims
            ));
        }
        if self.dims.contains(&0) {
            return Ok(());
        }
        let mut last = Some(i128::from(self.offset));
        for (&d, &s) in self.dims.iter().zip(&self.strides) {
            if s < 0 {
                return bad(format!("negative stride {s}"));
            }
            // `d >= 1` here (no zero or negative dimensions), so `d - 1`
            // cannot overflow; the products and their sum can.
            last = last.and_then(|l| {
                i128::from(d - 1)
                    .checked_mul(i128::from(s))
                    .and_then(|step| l.checked_add(step))
            });
        }
        let Some(last) = last else {
            return bad(format!(
                "the view {:?} (strides {:?}, offset {}) reaches past every addressable element, \
                 beyond its storage {:?}",
                self.dims, self.strides, self.offset, self.storage_dims
            ));
        };
        if last >= storage.unwrap_or(0) {
            return bad(format!(
                "the view {:?} (strides {:?}, offset {}) reaches element {last}, beyond its storage {:?}",
                self.dims, self.strides, self.offset, self.storage_dims
            ));
        }
        Ok(())
    }
}

fn create_tensor(dtype: DataType, layout: &Layout, data: *mut c_void) -> Result<Descriptor> {
    create_raw(
        dtype,
        (&layout.dims, &layout.strides, layout.offset),
        layout.format,
        &layout.storage_dims,
        data,
    )
}

/// A descriptor with these arguments: a cached idle one or a new one (see
/// [`descriptors`](super::descriptors)).
fn create_raw(
    dtype: DataType,
    (dims, strides, offset): (&[i64], &[i64], i64),
    format: i32,
    storage: &[i64],
    data: *mut c_void,
) -> Result<Descriptor> {
    descriptors::make(Request {
        dtype: dtype.to_raw(),
        dims,
        strides,
        offset,
        format,
        storage,
        data,
    })
}

/// Fills `dims` and `strides` (each `shape.len()` long) with the
/// contiguous row-major layout of `shape`, and returns its element count:
/// checked, as each must fit in `i64` (what `aclCreateTensor` takes).
fn contiguous_into(
    function: &'static str,
    shape: &[usize],
    dims: &mut [i64],
    strides: &mut [i64],
) -> Result<i64> {
    let too_big = |what: &str| {
        Error::invalid(
            function,
            format!("shape {shape:?}: {what} does not fit in i64"),
        )
    };
    if dims.len() != shape.len() || strides.len() != shape.len() {
        return Err(Error::invalid(
            function,
            format!(
                "shape {shape:?}: {} dimensions, room for {}",
                shape.len(),
                dims.len()
            ),
        ));
    }
    for (d, &s) in dims.iter_mut().zip(shape) {
        *d = i64::try_from(s).map_err(|_| too_big("a dimension"))?;
    }
    // Row-major: each stride is the product of the later dimensions (a
    // zero dimension counts as 1, so that the strides stay distinct).
    let r = dims.len();
    if let Some(last) = strides.last_mut() {
        *last = 1;
    }
    for i in (0..r.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1]
            .checked_mul(dims[i + 1].max(1))
            .ok_or_else(|| too_big("a stride"))?;
    }
    dims.iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| too_big("the element count"))
}

/// A contiguous `ND` tensor of `shape` over `len` elements at `data`,
/// without allocating: dims and strides on the stack. The same checks as
/// [`Layout::contiguous`].
fn create_contiguous(
    dtype: DataType,
    shape: &[usize],
    len: usize,
    data: *mut c_void,
) -> Result<Descriptor> {
    const F: &str = "aclCreateTensor";
    if shape.len() > 8 {
        return Err(Error::invalid(
            F,
            format!("{} dimensions; at most 8", shape.len()),
        ));
    }
    let r = shape.len();
    let mut dims = [0i64; 8];
    let mut strides = [1i64; 8];
    // The common case without the per-step checks: a non-empty shape
    // holding exactly the buffer's `len` elements. Then every dimension and
    // every stride (a product of later dimensions) is at most `len`, which
    // fits in `i64` (an allocation's length is at most `isize::MAX`
    // elements), so none of `contiguous_into`'s checks can fail.
    if len != 0
        && shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .is_some_and(|n| n == len)
        && i64::try_from(len).is_ok()
    {
        let mut stride = 1usize;
        for i in (0..r).rev() {
            // Both at most `len` (see above): the casts are exact.
            dims[i] = shape[i] as i64;
            strides[i] = stride as i64;
            stride *= shape[i];
        }
        return create_raw(
            dtype,
            (&dims[..r], &strides[..r], 0),
            raw::ACL_FORMAT_ND,
            &[len as i64],
            data,
        );
    }
    let n = contiguous_into(F, shape, &mut dims[..r], &mut strides[..r])?;
    if usize::try_from(n) != Ok(len) {
        return Err(Error::invalid(
            F,
            format!("shape {shape:?} does not hold the buffer's {len} elements"),
        ));
    }
    create_raw(
        dtype,
        (&dims[..r], &strides[..r], 0),
        raw::ACL_FORMAT_ND,
        &[n],
        data,
    )
}

/// The int4 values `bytes` bytes hold (two per byte).
fn int4_values(function: &'static str, bytes: usize) -> Result<usize> {
    bytes.checked_mul(2).ok_or_else(|| {
        Error::invalid(
            function,
            format!("{bytes} bytes hold more than usize::MAX values"),
        )
    })
}

/// The `aclTensor` of a typed view (checked when the view was made).
fn create_view(dtype: DataType, v: &RawView<'_>) -> Result<Descriptor> {
    const F: &str = "aclCreateTensor";
    let too_big = || {
        Error::invalid(
            F,
            format!("a view over {} elements: more than i64::MAX", v.len),
        )
    };
    let r = v.shape.len();
    // Each dimension and stride is at most the memory's length.
    let storage = [i64::try_from(v.len).map_err(|_| too_big())?];
    let dims = v.shape.to_i64().ok_or_else(too_big)?;
    let strides = v.strides.to_i64().ok_or_else(too_big)?;
    let offset = i64::try_from(v.offset).map_err(|_| too_big())?;
    create_raw(
        dtype,
        (&dims[..r], &strides[..r], offset),
        raw::ACL_FORMAT_ND,
        &storage,
        v.addr as *mut c_void,
    )
}

/// An input tensor (`aclTensor`) over device memory borrowed for `'a`.
#[doc(alias = "aclTensor")]
#[doc(alias = "aclCreateTensor")]
#[derive(Debug)]
pub struct TensorArg<'a> {
    /// Its descriptor, destroyed or given back to the thread's cache on
    /// drop.
    raw: Descriptor,
    /// The memory, borrowed for `'a` (no reference count taken: the borrow
    /// keeps it alive), and whether the operator writes it.
    alloc: &'a Arc<Allocation>,
    write: bool,
    dtype: DataType,
    _mem: PhantomData<&'a ()>,
}

impl<'a> TensorArg<'a> {
    /// A contiguous `ND` tensor of `shape` over all of `mem`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `shape` does not hold `mem.len()`
    /// elements; the status of `aclCreateTensor`.
    pub fn new<T: Element>(
        mem: &'a impl DeviceMemory<T>,
        shape: &[usize],
    ) -> Result<TensorArg<'a>> {
        let data = mem.device_ptr() as *mut c_void;
        let raw = create_contiguous(T::DATA_TYPE, shape, mem.len(), data)?;
        Ok(TensorArg {
            raw,
            alloc: mem.allocation(),
            write: false,
            dtype: T::DATA_TYPE,
            _mem: PhantomData,
        })
    }

    /// A tensor with an explicit layout over `mem`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the view or storage reaches beyond
    /// `mem`; the status of `aclCreateTensor`.
    pub fn with_layout<T: Element>(
        mem: &'a impl DeviceMemory<T>,
        layout: &Layout,
    ) -> Result<TensorArg<'a>> {
        layout.check("aclCreateTensor", mem.len())?;
        let raw = create_tensor(T::DATA_TYPE, layout, mem.device_ptr() as *mut c_void)?;
        Ok(TensorArg {
            raw,
            alloc: mem.allocation(),
            write: false,
            dtype: T::DATA_TYPE,
            _mem: PhantomData,
        })
    }

    /// A contiguous `ND` int4 tensor (`ACL_INT4`) of `shape` over all of
    /// `mem`'s bytes: two signed 4-bit values per byte, the element of even
    /// index in the low nibble (the layout `aclnnWeightQuantBatchMatmulV2`
    /// takes for int4 weights; hicann/ops-nn
    /// `matmul/weight_quant_batch_matmul_v2/docs/aclnnWeightQuantBatchMatmulV2.md`).
    /// Each row is whole bytes: the last dimension is even.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::{DataType, Device, Runtime, aclnn};
    ///
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let s = npu.new_stream()?;
    /// // [[1, -1], [7, -8]]: low nibble first, two's complement.
    /// let w = s.clone_from_host(&[0xF1u8, 0x87])?;
    /// let t = aclnn::TensorArg::packed_int4(&w, &[2, 2])?;
    /// assert_eq!(t.data_type(), DataType::Int4);
    /// # Ok::<(), acl::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `shape` does not hold two values per
    /// byte of `mem` or its last dimension is odd; the status of
    /// `aclCreateTensor`.
    #[doc(alias = "ACL_INT4")]
    pub fn packed_int4(mem: &'a impl DeviceMemory<u8>, shape: &[usize]) -> Result<TensorArg<'a>> {
        let values = int4_values("TensorArg::packed_int4", mem.len())?;
        if shape.last().is_some_and(|&d| d % 2 != 0) {
            return Err(Error::invalid(
                "TensorArg::packed_int4",
                format!("shape {shape:?}: the last dimension must be even (whole bytes per row)"),
            ));
        }
        let data = mem.device_ptr() as *mut c_void;
        let raw = create_contiguous(DataType::Int4, shape, values, data)?;
        Ok(TensorArg {
            raw,
            alloc: mem.allocation(),
            write: false,
            dtype: DataType::Int4,
            _mem: PhantomData,
        })
    }

    /// An int4 tensor with an explicit layout over `mem`'s bytes, counted
    /// in values (two per byte, as [`TensorArg::packed_int4`]): for example
    /// a `[k, n]` view with strides `[1, k]` of an `[n, k]` weight.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the view or storage reaches beyond
    /// the `2 · mem.len()` values; the status of `aclCreateTensor`.
    pub fn packed_int4_with_layout(
        mem: &'a impl DeviceMemory<u8>,
        layout: &Layout,
    ) -> Result<TensorArg<'a>> {
        layout.check(
            "aclCreateTensor",
            int4_values("TensorArg::packed_int4_with_layout", mem.len())?,
        )?;
        let raw = create_tensor(DataType::Int4, layout, mem.device_ptr() as *mut c_void)?;
        Ok(TensorArg {
            raw,
            alloc: mem.allocation(),
            write: false,
            dtype: DataType::Int4,
            _mem: PhantomData,
        })
    }

    /// The `aclTensor` of a typed view: its shape, strides and offset over
    /// the memory it borrows (storage: all of that memory, `ND`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a memory of more than `i64::MAX`
    /// elements; the status of `aclCreateTensor`.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::{Device, Runtime, Tensor, aclnn};
    ///
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let s = npu.new_stream()?;
    /// let x = Tensor::from_host(&s, &[1.0f32, -2.0, 3.0, -4.0], &[2, 2])?;
    /// let mut y = Tensor::<f32>::zeros(&s, &[2])?;
    /// // The first column of x, a strided view, through aclnn.
    /// let col = aclnn::TensorArg::from_view(&x.view().select(1, 0)?)?;
    /// aclnn::abs(&s, &col, &mut aclnn::TensorArgMut::from_view(y.view_mut())?)?;
    /// assert_eq!(y.to_host_vec()?, [1.0, 3.0]);
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub fn from_view<T: Element>(view: &TensorView<'a, T>) -> Result<TensorArg<'a>> {
        let v = view.raw();
        Ok(TensorArg {
            raw: create_view(T::DATA_TYPE, v)?,
            alloc: v.alloc,
            write: false,
            dtype: T::DATA_TYPE,
            _mem: PhantomData,
        })
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *const aclTensor {
        self.raw.as_ptr()
    }

    /// The element type.
    pub fn data_type(&self) -> DataType {
        self.dtype
    }

    pub(crate) fn access(&self) -> Access {
        Access {
            alloc: Arc::clone(self.alloc),
            write: self.write,
        }
    }

    /// The memory use of an operator call, borrowed for `'a` (not for the
    /// borrow of `self`, so that the call may take its handles after).
    pub(crate) fn mem_use(&self) -> MemUse<'a> {
        (self.alloc, self.write)
    }

    /// Gives up the handle without destroying it (a [`TensorList`] now owns
    /// it), keeping the memory access.
    fn disown(self) -> Access {
        let access = self.access();
        self.raw.disown();
        access
    }
}

/// An output tensor (`aclTensor`) over device memory borrowed mutably for `'a`.
#[doc(alias = "aclTensor")]
#[doc(alias = "aclCreateTensor")]
#[derive(Debug)]
pub struct TensorArgMut<'a> {
    inner: TensorArg<'a>,
    _mem: PhantomData<&'a mut ()>,
}

impl<'a> TensorArgMut<'a> {
    /// A contiguous `ND` tensor of `shape` over all of `mem`.
    ///
    /// # Errors
    ///
    /// As [`TensorArg::new`].
    pub fn new<T: Element>(
        mem: &'a mut impl DeviceMemoryMut<T>,
        shape: &[usize],
    ) -> Result<TensorArgMut<'a>> {
        let len = mem.len();
        let raw = create_contiguous(T::DATA_TYPE, shape, len, mem.device_ptr_mut())?;
        let mem: &'a _ = mem;
        Ok(TensorArgMut {
            inner: TensorArg {
                raw,
                alloc: mem.allocation(),
                write: true,
                dtype: T::DATA_TYPE,
                _mem: PhantomData,
            },
            _mem: PhantomData,
        })
    }

    /// A tensor with an explicit layout over `mem`.
    ///
    /// # Errors
    ///
    /// As [`TensorArg::with_layout`].
    pub fn with_layout<T: Element>(
        mem: &'a mut impl DeviceMemoryMut<T>,
        layout: &Layout,
    ) -> Result<TensorArgMut<'a>> {
        layout.check("aclCreateTensor", mem.len())?;
        // An output must not write one element twice (the result would be
        // undefined): strides are non-negative here (checked above).
        let dims = layout.strides.iter().zip(&layout.dims).map(|(&s, &d)| {
            (
                usize::try_from(s).unwrap_or(usize::MAX),
                usize::try_from(d).unwrap_or(0),
            )
        });
        if crate::tensor::reaches_twice(dims) {
            return Err(Error::invalid(
                "aclCreateTensor",
                format!(
                    "output layout {:?} with strides {:?} reaches some elements twice; an output must \
                     not write one element twice",
                    layout.dims, layout.strides
                ),
            ));
        }
        let data = mem.device_ptr_mut();
        let raw = create_tensor(T::DATA_TYPE, layout, data)?;
        let mem: &'a _ = mem;
        Ok(TensorArgMut {
            inner: TensorArg {
                raw,
                alloc: mem.allocation(),
                write: true,
                dtype: T::DATA_TYPE,
                _mem: PhantomData,
            },
            _mem: PhantomData,
        })
    }

    /// The `aclTensor` of a typed writable view (see [`TensorArg::from_view`]).
    ///
    /// # Errors
    ///
    /// As [`TensorArg::from_view`].
    pub fn from_view<T: Element>(view: TensorViewMut<'a, T>) -> Result<TensorArgMut<'a>> {
        let v = view.raw();
        Ok(TensorArgMut {
            inner: TensorArg {
                raw: create_view(T::DATA_TYPE, v)?,
                alloc: v.alloc,
                write: true,
                dtype: T::DATA_TYPE,
                _mem: PhantomData,
            },
            _mem: PhantomData,
        })
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&mut self) -> *mut aclTensor {
        self.inner.raw.as_ptr()
    }

    /// As an input (for in-place operators).
    pub fn as_arg(&self) -> &TensorArg<'a> {
        &self.inner
    }
}

macro_rules! owned_handle {
    ($(#[$m:meta])* $name:ident, $raw:ty, $destroy:ident) => {
        $(#[$m])*
        #[derive(Debug)]
        pub struct $name(NonNull<$raw>);

        impl $name {
            /// The raw handle, valid while `self` lives.
            pub fn as_raw(&self) -> *const $raw {
                self.0.as_ptr()
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: made by the matching create function, destroyed once.
                let _ = unsafe { result::$destroy(self.0.as_ptr()) };
            }
        }

        // SAFETY: the handle names an immutable host-side object.
        unsafe impl Send for $name {}
        // SAFETY: as above; no method mutates it.
        unsafe impl Sync for $name {}
    };
}

owned_handle!(
    /// A host scalar (`aclScalar`) of an element type.
    #[doc(alias = "aclScalar")]
    #[doc(alias = "aclCreateScalar")]
    Scalar, aclScalar, destroy_scalar
);
owned_handle!(
    /// An `int64_t` array (`aclIntArray`).
    #[doc(alias = "aclIntArray")]
    #[doc(alias = "aclCreateIntArray")]
    IntArray, aclIntArray, destroy_int_array
);
owned_handle!(
    /// A `float` array (`aclFloatArray`).
    #[doc(alias = "aclFloatArray")]
    #[doc(alias = "aclCreateFloatArray")]
    FloatArray, aclFloatArray, destroy_float_array
);
owned_handle!(
    /// A `bool` array (`aclBoolArray`).
    #[doc(alias = "aclBoolArray")]
    #[doc(alias = "aclCreateBoolArray")]
    BoolArray, aclBoolArray, destroy_bool_array
);

impl Scalar {
    /// A scalar holding `value`.
    ///
    /// # Errors
    ///
    /// The load error, or `ACLNN_ERR_INNER_NULLPTR` when the library refuses
    /// the type.
    pub fn new<T: Element>(value: T) -> Result<Scalar> {
        let mut v = value;
        // SAFETY: `v` is one value of `T`'s data type; the library copies it.
        Ok(Scalar(unsafe {
            result::create_scalar(&mut v as *mut T as *mut c_void, T::DATA_TYPE.to_raw())
        }?))
    }
}

impl IntArray {
    /// An array holding `values`.
    ///
    /// # Errors
    ///
    /// As [`Scalar::new`].
    pub fn new(values: &[i64]) -> Result<IntArray> {
        Ok(IntArray(result::create_int_array(values)?))
    }
}

impl FloatArray {
    /// An array holding `values`.
    ///
    /// # Errors
    ///
    /// As [`Scalar::new`].
    pub fn new(values: &[f32]) -> Result<FloatArray> {
        Ok(FloatArray(result::create_float_array(values)?))
    }
}

impl BoolArray {
    /// An array holding `values`.
    ///
    /// # Errors
    ///
    /// As [`Scalar::new`].
    pub fn new(values: &[bool]) -> Result<BoolArray> {
        Ok(BoolArray(result::create_bool_array(values)?))
    }
}

/// A list of tensors (`aclTensorList`) that owns its member tensors.
///
/// CANN's `aclDestroyTensorList` destroys the member `aclTensor`s too
/// (hicann/opbase `docs/zh/api/nnopbase/aclnn/aclDestroyTensorList.md`:
/// they "do not need to be released again"), so [`TensorList::new`] takes
/// the [`TensorArg`]s by value: they are destroyed with the list, once. The
/// memory they describe stays borrowed for `'a`.
///
/// `Send + Sync`: the handle is only passed to aclnn calls, and the list is
/// immutable once made.
#[doc(alias = "aclTensorList")]
#[doc(alias = "aclCreateTensorList")]
#[derive(Debug)]
pub struct TensorList<'a> {
    raw: NonNull<aclTensorList>,
    accesses: Vec<Access>,
    _tensors: PhantomData<&'a ()>,
}

// SAFETY: an opaque handle the host only passes to aclnn calls; the
// accesses are Send + Sync.
unsafe impl Send for TensorList<'_> {}
// SAFETY: as above; shared use only reads the handle.
unsafe impl Sync for TensorList<'_> {}

impl<'a> TensorList<'a> {
    /// A list of `tensors`, which it owns from now on (see the type docs).
    ///
    /// # Errors
    ///
    /// As [`Scalar::new`]; the tensors are destroyed then as usual.
    pub fn new(tensors: Vec<TensorArg<'a>>) -> Result<TensorList<'a>> {
        let raws: Vec<*const aclTensor> = tensors.iter().map(|t| t.as_raw()).collect();
        // SAFETY: live handles, which the list owns from here on: the
        // tensors are disowned below, so nothing else destroys them.
        let raw = unsafe { result::create_tensor_list(&raws) }?;
        // The list owns the member handles now: they must not be destroyed
        // by the `TensorArg`s as well.
        let accesses = tensors.into_iter().map(TensorArg::disown).collect();
        Ok(TensorList {
            raw,
            accesses,
            _tensors: PhantomData,
        })
    }

    /// A list of tensors the operator writes in place (the foreach and
    /// fused-optimizer operators: `scaledGrads`, `paramsRef`...): as
    /// [`TensorList::new`], with the members' memory accesses recorded as
    /// writes, so that later uses wait for the operator.
    ///
    /// # Errors
    ///
    /// As [`TensorList::new`].
    pub fn new_mut(tensors: Vec<TensorArgMut<'a>>) -> Result<TensorList<'a>> {
        TensorList::new(tensors.into_iter().map(|t| t.inner).collect())
    }

    /// The raw handle, valid while `self` lives.
    pub fn as_raw(&self) -> *const aclTensorList {
        self.raw.as_ptr()
    }

    /// How many tensors it holds.
    pub fn len(&self) -> usize {
        self.accesses.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.accesses.is_empty()
    }

    /// The members' memory reads, for ordering an operator that reads them
    /// ([`prepare`](crate::memory::prepare)).
    pub fn accesses(&self) -> &[Access] {
        &self.accesses
    }
}

impl Drop for TensorList<'_> {
    fn drop(&mut self) {
        // SAFETY: made by `aclCreateTensorList`, destroyed once.
        let _ = unsafe { result::destroy_tensor_list(self.raw.as_ptr()) };
    }
}

//! [`TensorDesc`]: an `aclTensorDesc` (data type, shape, format, name,
//! storage format and shape, constant value).

use crate::error::{Error, Result};
use crate::memory::{DataType, Element};
use crate::result::{self, raw};
use std::ffi::CString;
use std::ptr::NonNull;

/// A tensor layout (`aclFormat`).
///
/// `Nd`, `Nchw` and `Nhwc` are the plain layouts a user's data has;
/// `Nc1hwc0`, `FractalZ` and `FractalNz` are the device's private (5-D and
/// fractal) layouts, used as *storage* formats
/// ([`TensorDesc::set_storage_format`]).
///
/// `Send + Sync`: a plain value.
#[doc(alias = "aclFormat")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// `ACL_FORMAT_UNDEFINED` (-1): for an absent optional input.
    Undefined,
    /// `ACL_FORMAT_ND` (2): any number of dimensions, row-major.
    Nd,
    /// `ACL_FORMAT_NCHW` (0).
    Nchw,
    /// `ACL_FORMAT_NHWC` (1).
    Nhwc,
    /// `ACL_FORMAT_NC1HWC0` (3): 5-D, channels split in blocks of C0.
    Nc1hwc0,
    /// `ACL_FORMAT_FRACTAL_Z` (4): fractal layout of convolution weights.
    FractalZ,
    /// `ACL_FORMAT_FRACTAL_NZ` (29): fractal layout of matrix operands.
    FractalNz,
}

impl Format {
    /// The `aclFormat` value.
    pub const fn to_raw(self) -> raw::aclFormat {
        match self {
            Format::Undefined => raw::ACL_FORMAT_UNDEFINED,
            Format::Nd => raw::ACL_FORMAT_ND,
            Format::Nchw => raw::ACL_FORMAT_NCHW,
            Format::Nhwc => raw::ACL_FORMAT_NHWC,
            Format::Nc1hwc0 => raw::ACL_FORMAT_NC1HWC0,
            Format::FractalZ => raw::ACL_FORMAT_FRACTAL_Z,
            Format::FractalNz => raw::ACL_FORMAT_FRACTAL_NZ,
        }
    }

    /// The format of an `aclFormat` value, if this crate names it.
    pub fn from_raw(raw: raw::aclFormat) -> Option<Format> {
        [
            Format::Undefined,
            Format::Nd,
            Format::Nchw,
            Format::Nhwc,
            Format::Nc1hwc0,
            Format::FractalZ,
            Format::FractalNz,
        ]
        .into_iter()
        .find(|f| f.to_raw() == raw)
    }
}

/// A dimension whose size is not known until the operator runs
/// (`ACL_UNKNOWN_DIM`, for dynamic-shape output descriptions).
pub const UNKNOWN_DIM: i64 = -1;

/// The single dimension of a shape whose rank is unknown (`ACL_UNKNOWN_RANK`).
pub const UNKNOWN_RANK: i64 = raw::ACL_UNKNOWN_RANK as i64;

/// Checks a shape: at most `ACL_MAX_DIM_CNT` dimensions, each `>= 0` or
/// [`UNKNOWN_DIM`], or `[UNKNOWN_RANK]` alone.
pub(crate) fn check_dims(function: &'static str, dims: &[i64]) -> Result<()> {
    if dims.len() > raw::ACL_MAX_DIM_CNT as usize {
        return Err(Error::invalid(
            function,
            format!(
                "{} dimensions; AscendCL allows at most ACL_MAX_DIM_CNT ({})",
                dims.len(),
                raw::ACL_MAX_DIM_CNT
            ),
        ));
    }
    if dims == [UNKNOWN_RANK] {
        return Ok(());
    }
    if let Some(bad) = dims.iter().find(|&&d| d < UNKNOWN_DIM) {
        return Err(Error::invalid(
            function,
            format!(
                "shape {dims:?}: dimension {bad} is invalid (expected >= 0, -1 for unknown, or \
                 [-2] alone for unknown rank)"
            ),
        ));
    }
    Ok(())
}

/// Whether data in storage format `f` may be padded, so that its size
/// follows from a storage shape only (the device's private 5-D and fractal
/// layouts; anything this crate does not know counts as padded).
fn is_padded_format(f: Format) -> bool {
    !matches!(
        f,
        Format::Undefined | Format::Nd | Format::Nchw | Format::Nhwc
    )
}

/// Elements × element size of a static shape: `None` with unknown dims.
pub(crate) fn static_bytes(
    function: &'static str,
    dtype: DataType,
    dims: &[i64],
) -> Result<Option<usize>> {
    let mut n: usize = 1;
    for &d in dims {
        let Ok(d) = usize::try_from(d) else {
            return Ok(None);
        };
        n = n.checked_mul(d).ok_or_else(|| {
            Error::invalid(
                function,
                format!("shape {dims:?}: the element count overflows"),
            )
        })?;
    }
    n.checked_mul(dtype.size()).map(Some).ok_or_else(|| {
        Error::invalid(
            function,
            format!("shape {dims:?} of {dtype}: the size in bytes overflows"),
        )
    })
}

fn c_name(function: &'static str, what: &str, s: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::invalid(function, format!("{what} {s:?} contains a NUL byte")))
}

/// An `aclTensorDesc`: the data type, shape and format of an operator's
/// input or output (no data). Created checked, destroyed on drop.
///
/// The shape may hold [`UNKNOWN_DIM`] (or be `[UNKNOWN_RANK]`) for an output
/// whose shape the operator decides; [`Operator::execute`](super::Operator::execute)
/// reads the refreshed shape back ([`TensorDesc::dims`]).
///
/// The buffer that goes with a description must hold exactly
/// [`TensorDesc::size_bytes`]: the storage shape's bytes when one is set
/// ([`TensorDesc::set_storage_shape`]), else the shape's. An output with
/// unknown dimensions needs a maximum for each
/// ([`TensorDesc::set_shape_range`]) and a buffer of at least
/// [`TensorDesc::max_size_bytes`].
///
/// `Send + Sync`: plain host data owned by this value; changes need `&mut self`.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::aclop::{Format, TensorDesc};
/// use acl::DataType;
///
/// let mut d = TensorDesc::new(DataType::Float16, &[2, 3], Format::Nd)?;
/// d.set_name("x")?;
/// assert_eq!((d.data_type(), d.dims(), d.size_bytes()), (Some(DataType::Float16), &[2, 3][..], Some(12)));
/// assert_eq!(d.name()?, "x");
/// assert!(TensorDesc::new(DataType::Float, &[2, -5], Format::Nd).is_err());
/// # Ok::<(), acl::Error>(())
/// ```
#[doc(alias = "aclTensorDesc")]
pub struct TensorDesc {
    raw: NonNull<raw::aclTensorDesc>,
    dtype: Option<DataType>,
    dims: Dims,
    format: Format,
    /// The storage shape, once set: what the buffer holds.
    storage_dims: Option<Vec<i64>>,
    storage_format: Option<Format>,
    /// The `[min, max]` ranges of the shape's dimensions, once set.
    ranges: Option<Vec<(i64, i64)>>,
}

/// A shape, inline up to 8 dimensions (no allocation per description).
#[derive(Clone)]
enum Dims {
    Inline { len: u8, buf: [i64; 8] },
    Heap(Vec<i64>),
}

impl Dims {
    fn new(d: &[i64]) -> Dims {
        if d.len() <= 8 {
            let mut buf = [0i64; 8];
            buf[..d.len()].copy_from_slice(d);
            Dims::Inline {
                len: d.len() as u8,
                buf,
            }
        } else {
            Dims::Heap(d.to_vec())
        }
    }
}

impl std::ops::Deref for Dims {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        match self {
            Dims::Inline { len, buf } => &buf[..usize::from(*len)],
            Dims::Heap(v) => v,
        }
    }
}

// SAFETY: the description is plain host data owned by this value; the
// runtime's functions on it are thread-safe for distinct descriptions, and
// mutation needs `&mut self`.
unsafe impl Send for TensorDesc {}
// SAFETY: shared access only reads.
unsafe impl Sync for TensorDesc {}

impl std::fmt::Debug for TensorDesc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorDesc")
            .field("dtype", &self.dtype)
            .field("dims", &&*self.dims)
            .field("format", &self.format)
            .field("storage_format", &self.storage_format)
            .field("storage_dims", &self.storage_dims)
            .finish()
    }
}

impl TensorDesc {
    /// A description of a `dtype` tensor of shape `dims` in `format`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] (before any C call) for more than 128
    /// dimensions, a dimension below -1 (or -2 beside others), a size that
    /// overflows, or [`Format::Undefined`]; `ACL_ERROR_FAILURE` when the
    /// runtime returns no description.
    #[doc(alias = "aclCreateTensorDesc")]
    pub fn new(dtype: DataType, dims: &[i64], format: Format) -> Result<TensorDesc> {
        const F: &str = "TensorDesc::new";
        check_dims(F, dims)?;
        static_bytes(F, dtype, dims)?;
        if format == Format::Undefined {
            return Err(Error::invalid(
                F,
                "Format::Undefined is only for an absent optional input (TensorDesc::absent)",
            ));
        }
        Self::create(Some(dtype), dims, format)
    }

    /// The description of an absent optional input (`ACL_DT_UNDEFINED`, no
    /// dimensions, `ACL_FORMAT_UNDEFINED`).
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_FAILURE` when the runtime returns no description.
    #[doc(alias = "aclCreateTensorDesc")]
    pub fn absent() -> Result<TensorDesc> {
        Self::create(None, &[], Format::Undefined)
    }

    fn create(dtype: Option<DataType>, dims: &[i64], format: Format) -> Result<TensorDesc> {
        let raw_dtype = dtype.map_or(raw::ACL_DT_UNDEFINED, DataType::to_raw);
        let raw = NonNull::new(result::create_tensor_desc(
            raw_dtype,
            dims,
            format.to_raw(),
        )?)
        .ok_or_else(|| Error::from_code("aclCreateTensorDesc", raw::ACL_ERROR_FAILURE))?;
        Ok(TensorDesc {
            raw,
            dtype,
            dims: Dims::new(dims),
            format,
            storage_dims: None,
            storage_format: None,
            ranges: None,
        })
    }

    /// The raw handle, for C APIs. Valid while `self` lives.
    pub fn as_raw(&self) -> *mut raw::aclTensorDesc {
        self.raw.as_ptr()
    }

    /// The data type; `None` for an absent optional input ([`TensorDesc::absent`]).
    pub fn data_type(&self) -> Option<DataType> {
        self.dtype
    }

    /// The shape (refreshed by the V2 execute calls when it had unknown dimensions).
    pub fn dims(&self) -> &[i64] {
        &self.dims[..]
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The number of elements; `None` with unknown dimensions.
    pub fn element_count(&self) -> Option<usize> {
        self.dims.iter().try_fold(1usize, |n, &d| {
            usize::try_from(d).ok().and_then(|d| n.checked_mul(d))
        })
    }

    /// The bytes the description implies in device memory, which its
    /// buffer must hold: the storage shape's elements × element size when a
    /// storage shape is set ([`TensorDesc::set_storage_shape`]), else the
    /// shape's. `None` with unknown dimensions (and no storage shape) or for
    /// an absent input.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::aclop::{Format, TensorDesc};
    /// use acl::DataType;
    ///
    /// let mut d = TensorDesc::new(DataType::Float16, &[3, 5], Format::Nd)?;
    /// assert_eq!(d.size_bytes(), Some(30));
    /// // Stored as one padded 16 × 16 fractal: the buffer holds 512 bytes.
    /// d.set_storage_shape(&[1, 1, 16, 16])?;
    /// d.set_storage_format(Format::FractalNz)?;
    /// assert_eq!(d.size_bytes(), Some(512));
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub fn size_bytes(&self) -> Option<usize> {
        let dims = self.storage_dims.as_deref().unwrap_or(&self.dims);
        let n = dims.iter().try_fold(1usize, |n, &d| {
            usize::try_from(d).ok().and_then(|d| n.checked_mul(d))
        })?;
        n.checked_mul(self.dtype?.size())
    }

    /// The most bytes the description can imply once its unknown dimensions
    /// are known: [`TensorDesc::size_bytes`] when it is known, else the shape
    /// with each unknown dimension at the maximum of its range
    /// ([`TensorDesc::set_shape_range`]). `None` when a dimension is
    /// unbounded (no range, or a maximum of -1), the rank is unknown, the
    /// size overflows, or the input is absent. An output buffer of at least
    /// this size holds any shape the operator may give.
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::aclop::{Format, TensorDesc, UNKNOWN_DIM};
    /// use acl::DataType;
    ///
    /// let mut d = TensorDesc::new(DataType::Float, &[UNKNOWN_DIM, 8], Format::Nd)?;
    /// assert_eq!((d.size_bytes(), d.max_size_bytes()), (None, None));
    /// d.set_shape_range(&[(1, 64), (8, 8)])?;
    /// assert_eq!(d.max_size_bytes(), Some(64 * 8 * 4));
    /// # Ok::<(), acl::Error>(())
    /// ```
    pub fn max_size_bytes(&self) -> Option<usize> {
        if let Some(n) = self.size_bytes() {
            return Some(n);
        }
        if self.dims[..] == [UNKNOWN_RANK] {
            return None;
        }
        let ranges = self
            .ranges
            .as_deref()
            .filter(|r| r.len() == self.dims.len());
        let mut n = 1usize;
        for (i, &d) in self.dims.iter().enumerate() {
            let d = if d >= 0 { d } else { ranges?.get(i)?.1 };
            // A maximum of -1 (unbounded) fails the conversion.
            n = n.checked_mul(usize::try_from(d).ok()?)?;
        }
        n.checked_mul(self.dtype?.size())
    }

    /// Whether every unknown dimension has a range with a maximum (set by
    /// [`TensorDesc::set_shape_range`] for the current shape); false for an
    /// unknown rank.
    pub(crate) fn has_bounded_ranges(&self) -> bool {
        if self.dims[..] == [UNKNOWN_RANK] {
            return false;
        }
        self.ranges
            .as_deref()
            .filter(|r| r.len() == self.dims.len())
            .is_some_and(|r| {
                self.dims
                    .iter()
                    .zip(r)
                    .all(|(&d, &(_, max))| d >= 0 || max >= 0)
            })
    }

    /// The storage shape, if [`TensorDesc::set_storage_shape`] set one.
    pub fn storage_dims(&self) -> Option<&[i64]> {
        self.storage_dims.as_deref()
    }

    /// The storage format, if [`TensorDesc::set_storage_format`] set one.
    pub fn storage_format(&self) -> Option<Format> {
        self.storage_format
    }

    /// Whether every dimension is known.
    pub fn is_static(&self) -> bool {
        self.dims.iter().all(|&d| d >= 0)
    }

    /// Names the tensor (operators with named inputs use it).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a name with a NUL byte or longer than
    /// `ACL_MAX_TENSOR_NAME_LEN` (128) bytes.
    #[doc(alias = "aclSetTensorDescName")]
    pub fn set_name(&mut self, name: &str) -> Result<()> {
        const F: &str = "TensorDesc::set_name";
        if name.len() > raw::ACL_MAX_TENSOR_NAME_LEN as usize {
            return Err(Error::invalid(
                F,
                format!(
                    "the name is {} bytes; at most ACL_MAX_TENSOR_NAME_LEN ({})",
                    name.len(),
                    raw::ACL_MAX_TENSOR_NAME_LEN
                ),
            ));
        }
        let c = c_name(F, "name", name)?;
        // SAFETY: live description; NUL-terminated name copied by the runtime.
        unsafe { result::set_tensor_desc_name(self.as_raw(), c.as_ptr()) }?;
        Ok(())
    }

    /// The name ("" when unset).
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when the library lacks the function.
    #[doc(alias = "aclGetTensorDescName")]
    pub fn name(&self) -> Result<String> {
        // SAFETY: live description.
        unsafe { result::get_tensor_desc_name(self.as_raw()) }
    }

    /// Changes the shape. Shape ranges set before no longer count for
    /// [`TensorDesc::max_size_bytes`] (set them again for the new shape).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] as for [`TensorDesc::new`]; the runtime's error.
    #[doc(alias = "aclSetTensorShape")]
    pub fn set_shape(&mut self, dims: &[i64]) -> Result<()> {
        const F: &str = "TensorDesc::set_shape";
        check_dims(F, dims)?;
        if let Some(dt) = self.dtype {
            static_bytes(F, dt, dims)?;
        }
        // SAFETY: live description; `dims` valid for its length (<= 128).
        unsafe { result::set_tensor_shape(self.as_raw(), dims.len() as i32, dims.as_ptr()) }?;
        self.dims = Dims::new(dims);
        // Ranges set for the old shape no longer bound this one.
        self.ranges = None;
        Ok(())
    }

    /// The layout the data has in device memory, when it differs from
    /// [`TensorDesc::format`] (e.g. [`Format::FractalNz`]).
    ///
    /// The device's private layouts ([`Format::Nc1hwc0`],
    /// [`Format::FractalZ`], [`Format::FractalNz`]) pad the data, so the
    /// buffer's size follows from the storage shape only: set it first
    /// ([`TensorDesc::set_storage_shape`]).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for [`Format::Undefined`], or for a private
    /// layout before a storage shape was set; the runtime's error.
    #[doc(alias = "aclSetTensorStorageFormat")]
    pub fn set_storage_format(&mut self, format: Format) -> Result<()> {
        const F: &str = "TensorDesc::set_storage_format";
        if format == Format::Undefined {
            return Err(Error::invalid(
                F,
                "Format::Undefined is not a storage format",
            ));
        }
        if is_padded_format(format) && self.storage_dims.is_none() {
            return Err(Error::invalid(
                F,
                format!(
                    "{format:?} pads the data, so the buffer size follows from the storage \
                     shape: call set_storage_shape first"
                ),
            ));
        }
        // SAFETY: live description.
        unsafe { result::set_tensor_storage_format(self.as_raw(), format.to_raw()) }?;
        self.storage_format = Some(format);
        Ok(())
    }

    /// The shape in the storage format: what the buffer holds. Once set,
    /// [`TensorDesc::size_bytes`] (the size the buffer must have) follows
    /// it instead of the shape.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] as for [`TensorDesc::new`], and for
    /// unknown dimensions (a storage shape describes a buffer, so it is
    /// concrete); the runtime's error.
    #[doc(alias = "aclSetTensorStorageShape")]
    pub fn set_storage_shape(&mut self, dims: &[i64]) -> Result<()> {
        const F: &str = "TensorDesc::set_storage_shape";
        check_dims(F, dims)?;
        if dims.iter().any(|&d| d < 0) {
            return Err(Error::invalid(
                F,
                format!(
                    "storage shape {dims:?} has unknown dimensions; a storage shape describes \
                     the buffer and must be concrete"
                ),
            ));
        }
        if let Some(dt) = self.dtype {
            static_bytes(F, dt, dims)?;
        }
        // SAFETY: live description; `dims` valid for its length (<= 128).
        unsafe {
            result::set_tensor_storage_shape(self.as_raw(), dims.len() as i32, dims.as_ptr())
        }?;
        self.storage_dims = Some(dims.to_vec());
        Ok(())
    }

    /// The format of the original (framework) tensor.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for [`Format::Undefined`]; the runtime's error.
    #[doc(alias = "aclSetTensorOriginFormat")]
    pub fn set_origin_format(&mut self, format: Format) -> Result<()> {
        if format == Format::Undefined {
            return Err(Error::invalid(
                "TensorDesc::set_origin_format",
                "Format::Undefined is not an origin format",
            ));
        }
        // SAFETY: live description.
        unsafe { result::set_tensor_origin_format(self.as_raw(), format.to_raw()) }
    }

    /// The shape of the original (framework) tensor.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] as for [`TensorDesc::new`]; the runtime's error.
    #[doc(alias = "aclSetTensorOriginShape")]
    pub fn set_origin_shape(&mut self, dims: &[i64]) -> Result<()> {
        check_dims("TensorDesc::set_origin_shape", dims)?;
        // SAFETY: live description; `dims` valid for its length (<= 128).
        unsafe { result::set_tensor_origin_shape(self.as_raw(), dims.len() as i32, dims.as_ptr()) }
    }

    /// The `[min, max]` range of each dimension of a dynamic shape (`max`
    /// -1: unbounded), one per dimension.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a count that differs from the rank, a
    /// negative minimum or a maximum below the minimum; the runtime's error.
    #[doc(alias = "aclSetTensorShapeRange")]
    pub fn set_shape_range(&mut self, ranges: &[(i64, i64)]) -> Result<()> {
        const F: &str = "TensorDesc::set_shape_range";
        if self.dims[..] != [UNKNOWN_RANK] && ranges.len() != self.dims.len() {
            return Err(Error::invalid(
                F,
                format!(
                    "{} ranges for a {}-dimensional tensor",
                    ranges.len(),
                    self.dims.len()
                ),
            ));
        }
        if let Some(&(lo, hi)) = ranges
            .iter()
            .find(|&&(lo, hi)| lo < 0 || hi < -1 || (hi >= 0 && hi < lo))
        {
            return Err(Error::invalid(
                F,
                format!(
                    "range [{lo}, {hi}] is invalid (expected 0 <= min <= max, or max -1 for unbounded)"
                ),
            ));
        }
        let mut raw: Vec<[i64; 2]> = ranges.iter().map(|&(a, b)| [a, b]).collect();
        // SAFETY: live description; `raw` valid for its length.
        unsafe { result::set_tensor_shape_range(self.as_raw(), raw.len(), raw.as_mut_ptr()) }?;
        self.ranges = Some(ranges.to_vec());
        Ok(())
    }

    /// Makes the tensor a constant with these values (copied by the
    /// runtime): inference and the operator use them. Needed for inputs
    /// whose values decide output shapes (`axes`, `perm`, `dims`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `T` is not the description's data
    /// type or the element count differs from the shape's; the runtime's error.
    #[doc(alias = "aclSetTensorConst")]
    pub fn set_const<T: Element>(&mut self, values: &[T]) -> Result<()> {
        const F: &str = "TensorDesc::set_const";
        if self.dtype != Some(T::DATA_TYPE) {
            return Err(Error::invalid(
                F,
                format!(
                    "the values are {}, the description is {}",
                    T::DATA_TYPE,
                    self.dtype.map_or("absent", DataType::name)
                ),
            ));
        }
        if self.element_count() != Some(values.len()) {
            return Err(Error::invalid(
                F,
                format!("{} values for shape {:?}", values.len(), &self.dims[..]),
            ));
        }
        if values.is_empty() {
            return Ok(());
        }
        // SAFETY: live description; `values` valid for its byte size, copied
        // by the runtime during the call.
        unsafe {
            result::set_tensor_const(
                self.as_raw(),
                values.as_ptr().cast_mut().cast(),
                std::mem::size_of_val(values),
            )
        }?;
        // SAFETY: live description.
        unsafe { result::set_tensor_place_ment(self.as_raw(), raw::ACL_MEMTYPE_HOST) }
    }

    /// Reads the shape back from the runtime (after a V2 execute refreshed it).
    pub(crate) fn refresh(&mut self) -> Result<()> {
        // SAFETY: live description.
        let n = unsafe { result::get_tensor_desc_num_dims(self.as_raw()) }?;
        if n == raw::ACL_UNKNOWN_RANK as usize {
            self.dims = Dims::new(&[UNKNOWN_RANK]);
            return Ok(());
        }
        let mut dims = Vec::with_capacity(n.min(raw::ACL_MAX_DIM_CNT as usize));
        for i in 0..n.min(raw::ACL_MAX_DIM_CNT as usize) {
            // SAFETY: live description.
            dims.push(unsafe { result::get_tensor_desc_dim_v2(self.as_raw(), i) }?);
        }
        self.dims = Dims::new(&dims);
        Ok(())
    }
}

impl Drop for TensorDesc {
    fn drop(&mut self) {
        // SAFETY: the description is ours and destroyed once; the runtime
        // keeps no reference to it after the calls that used it returned.
        // A load failure cannot happen here: the library made the handle.
        let _ = unsafe { result::destroy_tensor_desc(self.as_raw()) };
    }
}

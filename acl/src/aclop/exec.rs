//! [`Operator`]: one execution of a single operator on a stream
//! (`aclopExecuteV2`, `aclopCompileAndExecuteV2`), and [`cast`] (`aclopCast`).

use super::{OpAttr, TensorDesc};
use crate::Stream;
use crate::error::{Error, Result};
use crate::kept::{Kind, Lent, Pool};
use crate::memory::track::{record_accesses, wait_for_conflicts};
use crate::memory::{Allocation, DataType, DeviceMemory, DeviceMemoryMut, Element, prepare};
use crate::result::{self, raw};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_void};
use std::ptr::NonNull;
use std::sync::Arc;
use std::thread::LocalKey;

/// Whether an argument is read ([`Role::Input`]) or written
/// ([`Role::Output`]) by the operator: inputs need concrete shapes, outputs
/// may have unknown dimensions with bounded ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Input,
    Output,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Role::Input => "input",
            Role::Output => "output",
        })
    }
}

/// "shape [2, 3]", or "shape [2, 3] with storage shape [2, 16]" when the
/// size comes from a storage shape.
pub(crate) fn shape_text(dims: &[i64], storage: Option<&[i64]>) -> String {
    match storage {
        Some(s) => format!("shape {dims:?} with storage shape {s:?}"),
        None => format!("shape {dims:?}"),
    }
}

/// A count of tensors as the `int` the C API takes.
pub(crate) fn count_i32(function: &'static str, what: &str, n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| {
        Error::invalid(
            function,
            format!("{n} {what}; AscendCL takes at most {}", i32::MAX),
        )
    })
}

/// Checks one argument: the buffer's element type against the
/// description's, and its size against the description's.
///
/// A description of known size ([`TensorDesc::size_bytes`]: the shape's,
/// or the storage shape's when one is set) needs a buffer of exactly that
/// size. An input needs a concrete shape. An output with unknown
/// dimensions needs a buffer of at least [`TensorDesc::max_size_bytes`]
/// (its shape at the maxima of its ranges), since the operator writes as
/// much as the shape it gives: without a bound it is rejected.
pub(crate) fn check_arg(
    function: &'static str,
    role: Role,
    index: usize,
    desc: &TensorDesc,
    elem: DataType,
    bytes: usize,
) -> Result<()> {
    let Some(dt) = desc.data_type() else {
        return Err(Error::invalid(
            function,
            format!("{role} {index}: the description is of an absent input (TensorDesc::absent)"),
        ));
    };
    if dt != elem {
        return Err(Error::invalid(
            function,
            format!("{role} {index}: the buffer holds {elem}, the description says {dt}"),
        ));
    }
    let dims = desc.dims();
    let size = desc.size_bytes();
    match size {
        Some(need) if need != bytes => {
            return Err(Error::invalid(
                function,
                format!(
                    "{role} {index}: the buffer holds {bytes} bytes, but {dt} of {} is {need} bytes",
                    shape_text(dims, desc.storage_dims())
                ),
            ));
        }
        // Concrete dimensions whose size overflows `usize`: `TensorDesc`
        // rejects those when they are set, but the runtime may refresh them.
        None if desc.is_static() => {
            return Err(Error::invalid(
                function,
                format!("{role} {index}: {dt} of shape {dims:?} is more bytes than usize holds"),
            ));
        }
        _ => {}
    }
    if role == Role::Input && !desc.is_static() {
        return Err(Error::invalid(
            function,
            format!(
                "{role} {index}: shape {dims:?} has unknown dimensions; inputs need concrete shapes"
            ),
        ));
    }
    if size.is_some() {
        return Ok(());
    }
    match desc.max_size_bytes() {
        Some(max) if max <= bytes => Ok(()),
        Some(max) => Err(Error::invalid(
            function,
            format!(
                "{role} {index}: the buffer holds {bytes} bytes, but {dt} of shape {dims:?} at the \
                 maxima of its shape ranges is {max} bytes; the operator could write past the buffer"
            ),
        )),
        None if dims == [super::UNKNOWN_RANK] => Err(Error::invalid(
            function,
            format!(
                "{role} {index}: shape {dims:?} has an unknown rank, which bounds no size, so the \
                 operator could write more than the buffer's {bytes} bytes; give the output its \
                 rank, with UNKNOWN_DIM for the unknown dimensions and \
                 TensorDesc::set_shape_range for their maxima"
            ),
        )),
        None if desc.has_bounded_ranges() => Err(Error::invalid(
            function,
            format!(
                "{role} {index}: {dt} of shape {dims:?} at the maxima of its shape ranges is \
                 more bytes than usize holds; set smaller maxima with TensorDesc::set_shape_range"
            ),
        )),
        None => Err(Error::invalid(
            function,
            format!(
                "{role} {index}: shape {dims:?} has unknown dimensions and no bounded shape \
                 range, so the operator could write more than the buffer's {bytes} bytes; set \
                 TensorDesc::set_shape_range with a maximum for each unknown dimension"
            ),
        )),
    }
}

/// Checks an output description refreshed by the runtime against its
/// buffer: the operator wrote the refreshed shape, which must fit.
pub(crate) fn check_refreshed(
    function: &'static str,
    index: usize,
    desc: &TensorDesc,
    bytes: usize,
) -> Result<()> {
    if !desc.is_static() {
        // Still unknown: nothing was said about what the operator wrote.
        return Ok(());
    }
    let dt = desc.data_type().map_or("absent", DataType::name);
    match desc.size_bytes() {
        Some(n) if n <= bytes => Ok(()),
        size => Err(Error::invalid(
            function,
            format!(
                "output {index}: the operator gave {dt} of {}, {} bytes, but the buffer holds \
                 {bytes}: the runtime may have written past the buffer",
                shape_text(desc.dims(), desc.storage_dims()),
                size.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string())
            ),
        )),
    }
}

/// Most operators have at most this many inputs or outputs: their
/// argument lists live inline, without a heap allocation per call.
pub(crate) const INLINE_ARGS: usize = 4;

/// A short list kept inline (see [`INLINE_ARGS`]).
pub(crate) type Args<T> = SmallVec<[T; INLINE_ARGS]>;

/// The data buffers' kind of kept object (see [`kept`](crate::kept)): an
/// `aclDataBuffer` only names an address and a size, which the runtime
/// never changes (only `aclUpdateDataBuffer` does, which the crate never
/// calls on these), so one made for `(address, size)` serves every later
/// call over the same memory.
pub(crate) enum Buffers {}

thread_local! {
    static BUFFERS: RefCell<Pool<Buffers>> = const { RefCell::new(Pool::new()) };
}

impl Kind for Buffers {
    type Raw = raw::aclDataBuffer;
    /// The address and the size in bytes.
    type Key = (usize, usize);
    fn pool() -> &'static LocalKey<RefCell<Pool<Self>>> {
        &BUFFERS
    }
    fn destroy(raw: NonNull<raw::aclDataBuffer>) {
        // SAFETY: made by `aclCreateDataBuffer`; the pool and its `Lent`s
        // destroy each buffer once, when no call uses it: the runtime keeps
        // no reference to it after the call that used it returned.
        let _ = unsafe { result::destroy_data_buffer(raw.as_ptr()) };
    }
}

/// The `aclDataBuffer`s of one call, taken from the thread's pool (or made)
/// and given back afterwards.
pub(crate) struct DataBuffers {
    /// The handles, as the C calls take them.
    pub(crate) raw: Args<*mut raw::aclDataBuffer>,
    _lent: Args<Lent<Buffers>>,
}

impl DataBuffers {
    pub(crate) fn new(args: &[(*mut c_void, usize)]) -> Result<DataBuffers> {
        let mut out = DataBuffers {
            raw: Args::with_capacity(args.len()),
            _lent: Args::with_capacity(args.len()),
        };
        for &(ptr, bytes) in args {
            let key = (ptr as usize, bytes);
            let b = Lent::<Buffers>::take(
                |k| *k == key,
                || Some(key),
                || {
                    let p = result::create_data_buffer(ptr, bytes)?;
                    NonNull::new(p).ok_or_else(|| {
                        Error::invalid("aclCreateDataBuffer", "the runtime returned null")
                    })
                },
            )?;
            out.raw.push(b.as_ptr());
            out._lent.push(b);
        }
        Ok(out)
    }
}

/// One execution of a single operator: its type, inputs and outputs
/// (device buffers with their descriptions), attributes; queued on a stream
/// by [`Operator::execute`] or [`Operator::compile_and_execute`].
///
/// Each input and output is checked when it is added — element type
/// against the description's data type, buffer size against shape ×
/// element size — and the first problem is returned by `execute`, before
/// any C call. Buffers stay borrowed until the call returns; the memory
/// module's stream ordering keeps them alive and unaliased until the
/// operator has run (their accesses are tracked as copies' are: see
/// [`memory`](crate::memory)).
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::aclop::{Format, Operator, TensorDesc};
/// use acl::{DataType, Device, Runtime};
///
/// let npu = Device::new(&Runtime::init()?, 0)?;
/// let stream = npu.new_stream()?;
/// let a = stream.clone_from_host(&[1.0f32, 2.0, 3.0])?;
/// let b = stream.clone_from_host(&[10.0f32, 20.0, 30.0])?;
/// let mut c = stream.alloc_zeros::<f32>(3)?;
/// let d = TensorDesc::new(DataType::Float, &[3], Format::Nd)?;
/// let mut dc = TensorDesc::new(DataType::Float, &[3], Format::Nd)?;
/// Operator::new("Add")
///     .input(&d, &a)
///     .input(&d, &b)
///     .output(&mut dc, &mut c)
///     .execute(&stream)?;
/// assert_eq!(c.to_host_vec()?, [11.0, 22.0, 33.0]);
/// # Ok::<(), acl::Error>(())
/// ```
#[doc(alias = "aclopExecuteV2")]
pub struct Operator<'a> {
    op_type: Cow<'a, CStr>,
    in_descs: Args<*mut raw::aclTensorDesc>,
    in_args: Args<(*mut c_void, usize)>,
    out_descs: Args<&'a mut TensorDesc>,
    out_args: Args<(*mut c_void, usize)>,
    /// The memory the call reads and writes, borrowed for `'a` (which keeps
    /// it alive: no reference count per argument).
    uses: SmallVec<[(&'a Arc<Allocation>, bool); 2 * INLINE_ARGS]>,
    owned: Vec<TensorDesc>,
    attr: Option<&'a OpAttr>,
    error: Option<Error>,
}

impl std::fmt::Debug for Operator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("op_type", &self.op_type)
            .field("inputs", &self.in_args.len())
            .field("outputs", &self.out_args.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Operator<'a> {
    /// An execution of `op_type` (a CANN operator type, e.g. `"MatMul"`).
    /// A name with a NUL byte is reported by `execute`.
    pub fn new(op_type: &str) -> Operator<'a> {
        let (name, error) = match CString::new(op_type) {
            Ok(c) => (Cow::Owned(c), None),
            Err(_) => (
                Cow::Borrowed(c""),
                Some(Error::invalid(
                    "Operator::new",
                    format!("the operator type {op_type:?} contains a NUL byte"),
                )),
            ),
        };
        let mut op = Self::with_type(name);
        op.error = error;
        op
    }

    /// Like [`Operator::new`] without copying the name.
    #[inline(always)]
    pub fn from_c_str(op_type: &'a CStr) -> Operator<'a> {
        Self::with_type(Cow::Borrowed(op_type))
    }

    #[inline(always)]
    fn with_type(op_type: Cow<'a, CStr>) -> Operator<'a> {
        Operator {
            op_type,
            in_descs: Args::new(),
            in_args: Args::new(),
            out_descs: Args::new(),
            out_args: Args::new(),
            uses: SmallVec::new(),
            owned: Vec::new(),
            attr: None,
            error: None,
        }
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Adds an input: `mem` holds the tensor `desc` describes.
    #[inline(always)]
    pub fn input<T: Element, M: DeviceMemory<T> + ?Sized>(
        mut self,
        desc: &'a TensorDesc,
        mem: &'a M,
    ) -> Operator<'a> {
        let i = self.in_args.len();
        if let Err(e) = check_arg(
            "Operator::input",
            Role::Input,
            i,
            desc,
            T::DATA_TYPE,
            mem.size_bytes(),
        ) {
            self.fail(e);
        }
        self.in_descs.push(desc.as_raw());
        self.in_args
            .push((mem.device_ptr().cast_mut(), mem.size_bytes()));
        self.uses.push((mem.allocation(), false));
        self
    }

    /// Adds a constant input from host values (`aclSetTensorConst`): for
    /// inputs whose values decide the output's shape (`axes`, `perm`,
    /// `dims`), which operators need at launch.
    pub fn host_input<T: Element>(mut self, dims: &[i64], values: &'a [T]) -> Operator<'a> {
        let made = TensorDesc::new(T::DATA_TYPE, dims, super::Format::Nd).and_then(|mut d| {
            d.set_const(values)?;
            Ok(d)
        });
        match made {
            Ok(d) => {
                self.in_descs.push(d.as_raw());
                self.owned.push(d);
            }
            Err(e) => {
                self.fail(e);
                self.in_descs.push(std::ptr::null_mut());
            }
        }
        self.in_args.push((
            values.as_ptr().cast_mut().cast(),
            std::mem::size_of_val(values),
        ));
        self
    }

    /// Adds an absent optional input (e.g. MatMul's `bias`), in its position.
    pub fn absent_input(mut self) -> Operator<'a> {
        match TensorDesc::absent() {
            Ok(d) => {
                self.in_descs.push(d.as_raw());
                self.owned.push(d);
            }
            Err(e) => {
                self.fail(e);
                self.in_descs.push(std::ptr::null_mut());
            }
        }
        self.in_args.push((std::ptr::null_mut(), 0));
        self
    }

    /// Adds an output: the operator writes the tensor `desc` describes into
    /// `mem`, which must hold exactly [`TensorDesc::size_bytes`].
    ///
    /// With unknown dimensions in `desc` ([`UNKNOWN_DIM`](super::UNKNOWN_DIM)),
    /// the operator decides the shape and writes as much as it gives: each
    /// unknown dimension needs a maximum ([`TensorDesc::set_shape_range`]),
    /// and `mem` at least [`TensorDesc::max_size_bytes`]. After `execute`,
    /// `desc` holds the operator's shape (checked against `mem` again).
    ///
    /// ```
    /// # cann_sim::install().unwrap();
    /// use acl::aclop::{Format, Operator, TensorDesc, UNKNOWN_DIM};
    /// use acl::{DataType, Device, Runtime};
    ///
    /// let npu = Device::new(&Runtime::init()?, 0)?;
    /// let stream = npu.new_stream()?;
    /// let x = stream.clone_from_host(&[-1.0f32, 2.0, -3.0])?;
    /// let dx = TensorDesc::new(DataType::Float, &[3], Format::Nd)?;
    /// let mut dy = TensorDesc::new(DataType::Float, &[UNKNOWN_DIM], Format::Nd)?;
    /// dy.set_shape_range(&[(1, 8)])?;
    /// let mut y = stream.alloc_zeros::<f32>(8)?; // room for the maximum
    /// Operator::new("Abs").input(&dx, &x).output(&mut dy, &mut y).execute(&stream)?;
    /// assert_eq!(dy.dims(), [3]);
    /// assert_eq!(y.to_host_vec()?[..3], [1.0, 2.0, 3.0]);
    /// # Ok::<(), acl::Error>(())
    /// ```
    #[inline(always)]
    pub fn output<T: Element, M: DeviceMemoryMut<T> + ?Sized>(
        mut self,
        desc: &'a mut TensorDesc,
        mem: &'a mut M,
    ) -> Operator<'a> {
        let i = self.out_args.len();
        if let Err(e) = check_arg(
            "Operator::output",
            Role::Output,
            i,
            desc,
            T::DATA_TYPE,
            mem.size_bytes(),
        ) {
            self.fail(e);
        }
        self.out_args.push((mem.device_ptr_mut(), mem.size_bytes()));
        let mem: &'a M = mem;
        self.uses.push((mem.allocation(), true));
        self.out_descs.push(desc);
        self
    }

    /// Sets the attributes.
    #[inline(always)]
    pub fn attr(mut self, attr: &'a OpAttr) -> Operator<'a> {
        self.attr = Some(attr);
        self
    }

    /// Queues the operator on `stream` (`aclopExecuteV2`: a loaded or
    /// prebuilt kernel), and refreshes output descriptions with unknown
    /// dimensions.
    ///
    /// # Errors
    ///
    /// The first [`Error::InvalidArgument`] found while adding arguments
    /// (see [`Operator::output`] for outputs with unknown dimensions);
    /// the runtime's error: `ACL_ERROR_OP_NOT_FOUND` (100024) for an unknown
    /// operator, `ACL_ERROR_OP_INPUT_NOT_MATCH` / `OUTPUT_NOT_MATCH` /
    /// `ATTR_NOT_MATCH` (100021–100023) when inputs, outputs or attributes
    /// do not fit, `ACL_ERROR_UNSUPPORTED_DATA_TYPE` (100026). Faults of the
    /// kernel itself surface at the next synchronisation. After the operator
    /// is queued, [`Error::InvalidArgument`] when a refreshed output shape
    /// is larger than its buffer (the runtime wrote past it).
    #[doc(alias = "aclopExecuteV2")]
    #[inline(always)]
    pub fn execute(self, stream: &Stream) -> Result<()> {
        self.run(stream, false)
    }

    /// Compiles (or finds the compiled) kernel and queues it on `stream`
    /// (`aclopCompileAndExecuteV2` with `ACL_ENGINE_SYS`, `ACL_COMPILE_SYS`),
    /// refreshing output descriptions as [`Operator::execute`] does.
    ///
    /// # Errors
    ///
    /// As [`Operator::execute`].
    #[doc(alias = "aclopCompileAndExecuteV2")]
    pub fn compile_and_execute(self, stream: &Stream) -> Result<()> {
        self.run(stream, true)
    }

    fn run(mut self, stream: &Stream, compile: bool) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let function = if compile {
            "Operator::compile_and_execute"
        } else {
            "Operator::execute"
        };
        let n_in = count_i32(function, "inputs", self.in_descs.len())?;
        let n_out = count_i32(function, "outputs", self.out_descs.len())?;
        // The borrowed forms of `prepare` and `Prepared::commit` (inline;
        // `prepare` would take the list by value and count references).
        let waited = wait_for_conflicts(stream, self.uses.iter().copied())?;
        let ins = DataBuffers::new(&self.in_args)?;
        let outs = DataBuffers::new(&self.out_args)?;
        let mut out_raw: Args<*mut raw::aclTensorDesc> =
            self.out_descs.iter().map(|d| d.as_raw()).collect();
        let attr = self.attr.map_or(std::ptr::null_mut(), OpAttr::as_raw);
        let rc = if compile {
            // SAFETY: descriptions, buffers and attributes are live; the
            // arrays are valid for their counts; the memory the buffers name
            // is kept alive and unaliased until the operator has run by the
            // stream ordering (module docs of `memory`).
            unsafe {
                result::op_compile_and_execute_v2(
                    self.op_type.as_ptr(),
                    n_in,
                    self.in_descs.as_mut_ptr(),
                    ins.raw.as_ptr().cast_mut(),
                    n_out,
                    out_raw.as_mut_ptr(),
                    outs.raw.as_ptr().cast_mut(),
                    attr,
                    raw::ACL_ENGINE_SYS,
                    raw::ACL_COMPILE_SYS,
                    std::ptr::null(),
                    stream.as_raw(),
                )
            }
        } else {
            // SAFETY: as above.
            unsafe {
                result::op_execute_v2(
                    self.op_type.as_ptr(),
                    n_in,
                    self.in_descs.as_mut_ptr(),
                    ins.raw.as_ptr().cast_mut(),
                    n_out,
                    out_raw.as_mut_ptr(),
                    outs.raw.as_ptr().cast_mut(),
                    attr,
                    stream.as_raw(),
                )
            }
        };
        drop((ins, outs));
        rc?;
        // Queued: record the accesses before anything else can fail.
        record_accesses(stream, &waited, self.uses.iter().copied());
        drop(waited);
        // Refresh every output, then report the first problem.
        let mut first = Ok(());
        for (i, (d, &(_, bytes))) in self.out_descs.iter_mut().zip(&self.out_args).enumerate() {
            if !d.is_static() {
                let checked = d
                    .refresh()
                    .and_then(|()| check_refreshed(function, i, d, bytes));
                first = first.and(checked);
            }
        }
        first
    }
}

/// Converts `src` to `dst`'s element type on `stream` (`aclopCast`: the
/// `Cast` operator). `truncate` selects truncation instead of rounding
/// where the runtime offers both.
///
/// # Errors
///
/// [`Error::InvalidArgument`] when a buffer does not match its description
/// (element type, size) or the shapes differ; the runtime's error.
#[doc(alias = "aclopCast")]
pub fn cast<T: Element, U: Element>(
    stream: &Stream,
    src_desc: &TensorDesc,
    src: &(impl DeviceMemory<T> + ?Sized),
    dst_desc: &TensorDesc,
    dst: &mut (impl DeviceMemoryMut<U> + ?Sized),
    truncate: bool,
) -> Result<()> {
    const F: &str = "aclop::cast";
    check_arg(F, Role::Input, 0, src_desc, T::DATA_TYPE, src.size_bytes())?;
    check_arg(F, Role::Output, 0, dst_desc, U::DATA_TYPE, dst.size_bytes())?;
    if src_desc.dims() != dst_desc.dims() {
        return Err(Error::invalid(
            F,
            format!(
                "the shapes differ: {:?} and {:?}",
                src_desc.dims(),
                dst_desc.dims()
            ),
        ));
    }
    let dst_arg = (dst.device_ptr_mut(), dst.size_bytes());
    let prepared = prepare(stream, [src.read_access(), dst.write_access()])?;
    let bufs = DataBuffers::new(&[(src.device_ptr().cast_mut(), src.size_bytes()), dst_arg])?;
    // SAFETY: live descriptions and buffers; the memory stays valid until
    // the cast has run (stream ordering).
    unsafe {
        result::op_cast(
            src_desc.as_raw(),
            bufs.raw[0],
            dst_desc.as_raw(),
            bufs.raw[1],
            u8::from(truncate),
            stream.as_raw(),
        )
    }?;
    prepared.commit();
    drop(bufs);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aclop::{Format, UNKNOWN_DIM};

    fn reason(e: Error) -> String {
        match e {
            Error::InvalidArgument { reason, .. } => reason,
            other => panic!("expected InvalidArgument, got {other}"),
        }
    }

    #[test]
    fn a_refreshed_output_larger_than_its_buffer_is_an_error() {
        cann_sim::install().unwrap();
        // As a runtime would leave it: [4, 4] floats written for a 48-byte buffer.
        let d = TensorDesc::new(DataType::Float, &[4, 4], Format::Nd).unwrap();
        let e = check_refreshed("Operator::execute", 1, &d, 48).unwrap_err();
        assert_eq!(
            reason(e),
            "output 1: the operator gave float32 of shape [4, 4], 64 bytes, but the buffer \
             holds 48: the runtime may have written past the buffer"
        );
        check_refreshed("Operator::execute", 1, &d, 64).unwrap();
        check_refreshed("Operator::execute", 1, &d, 100).unwrap();
        // A shape the runtime left unknown says nothing about what it wrote.
        let u = TensorDesc::new(DataType::Float, &[UNKNOWN_DIM, 4], Format::Nd).unwrap();
        check_refreshed("Operator::execute", 0, &u, 0).unwrap();
    }
}

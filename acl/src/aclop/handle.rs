//! [`OpHandle`]: an operator checked once, executed many times
//! (`aclopCreateHandle`, `aclopExecWithHandle`).

use super::exec::{DataBuffers, count_i32, shape_text};
use super::{OpAttr, TensorDesc};
use crate::Stream;
use crate::error::{Error, Result};
use crate::memory::{DataType, DeviceMemory, DeviceMemoryMut, Element};
use crate::result::{self, raw};
use std::ffi::{CString, c_void};
use std::ptr::NonNull;

/// What one argument of a handle must be.
#[derive(Debug, Clone)]
struct Slot {
    dtype: Option<DataType>,
    dims: Vec<i64>,
    storage_dims: Option<Vec<i64>>,
    bytes: Option<usize>,
}

impl Slot {
    fn of(d: &TensorDesc) -> Slot {
        Slot {
            dtype: d.data_type(),
            dims: d.dims().to_vec(),
            storage_dims: d.storage_dims().map(<[i64]>::to_vec),
            bytes: d.size_bytes(),
        }
    }
}

/// An operator with fixed descriptions and attributes, checked once by the
/// runtime, for repeated execution on new buffers
/// ([`OpHandle::launch`]). The descriptions may be dropped after creation.
///
/// `Send + Sync`: the runtime's handle is immutable after creation.
///
/// ```
/// # cann_sim::install().unwrap();
/// use acl::aclop::{Format, OpHandle, TensorDesc};
/// use acl::{DataType, Device, Runtime};
///
/// let npu = Device::new(&Runtime::init()?, 0)?;
/// let stream = npu.new_stream()?;
/// let d = TensorDesc::new(DataType::Float, &[2], Format::Nd)?;
/// let relu = OpHandle::new("Relu", &[&d], &[&d], None)?;
/// let x = stream.clone_from_host(&[-1.0f32, 2.0])?;
/// let mut y = stream.alloc_zeros::<f32>(2)?;
/// for _ in 0..3 {
///     relu.launch().input(&x).output(&mut y).execute(&stream)?;
/// }
/// assert_eq!(y.to_host_vec()?, [0.0, 2.0]);
/// # Ok::<(), acl::Error>(())
/// ```
#[doc(alias = "aclopHandle")]
pub struct OpHandle {
    raw: NonNull<raw::aclopHandle>,
    op_type: String,
    inputs: Vec<Slot>,
    outputs: Vec<Slot>,
}

// SAFETY: the handle is immutable after creation; the runtime's execution
// with it is thread-safe.
unsafe impl Send for OpHandle {}
// SAFETY: as above.
unsafe impl Sync for OpHandle {}

impl std::fmt::Debug for OpHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpHandle")
            .field("op_type", &self.op_type)
            .field("inputs", &self.inputs.len())
            .field("outputs", &self.outputs.len())
            .finish()
    }
}

/// Rejects descriptions with unknown dimensions: a handle is checked once,
/// for concrete shapes, and its buffers must hold exactly those.
fn check_static(function: &'static str, role: &str, descs: &[&TensorDesc]) -> Result<()> {
    match descs.iter().enumerate().find(|(_, d)| !d.is_static()) {
        Some((i, d)) => Err(Error::invalid(
            function,
            format!(
                "{role} {i}: shape {:?} has unknown dimensions; a handle needs concrete shapes",
                d.dims()
            ),
        )),
        None => Ok(()),
    }
}

impl OpHandle {
    /// Checks `op_type` with these descriptions and attributes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an operator name with a NUL byte, an
    /// input or output with unknown dimensions, or more than `i32::MAX`
    /// descriptions; the runtime's error (100021–100024, 100026) when the
    /// operator does not fit.
    #[doc(alias = "aclopCreateHandle")]
    pub fn new(
        op_type: &str,
        inputs: &[&TensorDesc],
        outputs: &[&TensorDesc],
        attr: Option<&OpAttr>,
    ) -> Result<OpHandle> {
        const F: &str = "OpHandle::new";
        let name = CString::new(op_type).map_err(|_| {
            Error::invalid(
                F,
                format!("the operator type {op_type:?} contains a NUL byte"),
            )
        })?;
        check_static(F, "input", inputs)?;
        check_static(F, "output", outputs)?;
        let (n_in, n_out) = (
            count_i32(F, "inputs", inputs.len())?,
            count_i32(F, "outputs", outputs.len())?,
        );
        let ins: Vec<*const raw::aclTensorDesc> =
            inputs.iter().map(|d| d.as_raw().cast_const()).collect();
        let outs: Vec<*const raw::aclTensorDesc> =
            outputs.iter().map(|d| d.as_raw().cast_const()).collect();
        // SAFETY: live descriptions and attributes; arrays valid for their
        // counts.
        let raw = unsafe {
            result::op_create_handle(
                name.as_ptr(),
                n_in,
                ins.as_ptr(),
                n_out,
                outs.as_ptr(),
                attr.map_or(std::ptr::null(), |a| a.as_raw().cast_const()),
            )
        }?;
        Self::wrap("aclopCreateHandle", raw, op_type, inputs, outputs)
    }

    /// A handle for `Cast` from `src`'s data type to `dst`'s.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shapes differ or have unknown
    /// dimensions; the runtime's error.
    #[doc(alias = "aclopCreateHandleForCast")]
    pub fn for_cast(src: &TensorDesc, dst: &TensorDesc, truncate: bool) -> Result<OpHandle> {
        const F: &str = "OpHandle::for_cast";
        check_static(F, "input", &[src])?;
        check_static(F, "output", &[dst])?;
        if src.dims() != dst.dims() {
            return Err(Error::invalid(
                F,
                format!("the shapes differ: {:?} and {:?}", src.dims(), dst.dims()),
            ));
        }
        // SAFETY: live descriptions (not modified by the call).
        let raw = unsafe {
            result::op_create_handle_for_cast(src.as_raw(), dst.as_raw(), u8::from(truncate))
        }?;
        Self::wrap("aclopCreateHandleForCast", raw, "Cast", &[src], &[dst])
    }

    fn wrap(
        function: &'static str,
        raw: *mut raw::aclopHandle,
        op_type: &str,
        inputs: &[&TensorDesc],
        outputs: &[&TensorDesc],
    ) -> Result<OpHandle> {
        let raw =
            NonNull::new(raw).ok_or_else(|| Error::from_code(function, raw::ACL_ERROR_FAILURE))?;
        Ok(OpHandle {
            raw,
            op_type: op_type.to_string(),
            inputs: inputs.iter().map(|d| Slot::of(d)).collect(),
            outputs: outputs.iter().map(|d| Slot::of(d)).collect(),
        })
    }

    /// The operator type.
    pub fn op_type(&self) -> &str {
        &self.op_type
    }

    /// Starts one execution: add the buffers in order, then
    /// [`HandleLaunch::execute`].
    pub fn launch(&self) -> HandleLaunch<'_, '_> {
        HandleLaunch {
            handle: self,
            ins: Vec::with_capacity(self.inputs.len()),
            outs: Vec::with_capacity(self.outputs.len()),
            uses: Vec::with_capacity(self.inputs.len() + self.outputs.len()),
            _borrows: std::marker::PhantomData,
            error: None,
        }
    }
}

impl Drop for OpHandle {
    fn drop(&mut self) {
        // SAFETY: ours, destroyed once; executions queued with it carry
        // their own copy of what they need.
        let _ = unsafe { result::op_destroy_handle(self.raw.as_ptr()) };
    }
}

/// One execution of an [`OpHandle`] on new buffers.
pub struct HandleLaunch<'h, 'a> {
    handle: &'h OpHandle,
    ins: Vec<(*mut c_void, usize)>,
    outs: Vec<(*mut c_void, usize)>,
    uses: Vec<crate::memory::Access>,
    error: Option<Error>,
    _borrows: std::marker::PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for HandleLaunch<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandleLaunch")
            .field("handle", self.handle)
            .field("inputs", &self.ins.len())
            .field("outputs", &self.outs.len())
            .finish()
    }
}

fn check_slot(
    role: &str,
    i: usize,
    slot: Option<&Slot>,
    elem: DataType,
    bytes: usize,
) -> Result<()> {
    const F: &str = "HandleLaunch";
    let Some(slot) = slot else {
        return Err(Error::invalid(
            F,
            format!("{role} {i}: the handle has no such {role}"),
        ));
    };
    if slot.dtype != Some(elem) {
        return Err(Error::invalid(
            F,
            format!(
                "{role} {i}: the buffer holds {elem}, the handle's description says {}",
                slot.dtype.map_or("absent", DataType::name)
            ),
        ));
    }
    let shape = shape_text(&slot.dims, slot.storage_dims.as_deref());
    match slot.bytes {
        Some(need) if need == bytes => Ok(()),
        Some(need) => Err(Error::invalid(
            F,
            format!(
                "{role} {i}: the buffer holds {bytes} bytes, but {elem} of {shape} is {need} bytes"
            ),
        )),
        // `OpHandle::new` and `for_cast` take concrete shapes only, whose
        // size `TensorDesc` checked: a size unknown here is not checkable.
        None => Err(Error::invalid(
            F,
            format!(
                "{role} {i}: the size of {elem} of {shape} is unknown, so the buffer cannot be checked"
            ),
        )),
    }
}

impl<'h, 'a> HandleLaunch<'h, 'a> {
    /// Adds the next input.
    pub fn input<T: Element, M: DeviceMemory<T> + ?Sized>(mut self, mem: &'a M) -> Self {
        let i = self.ins.len();
        if let Err(e) = check_slot(
            "input",
            i,
            self.handle.inputs.get(i),
            T::DATA_TYPE,
            mem.size_bytes(),
        ) && self.error.is_none()
        {
            self.error = Some(e);
        }
        self.ins
            .push((mem.device_ptr().cast_mut(), mem.size_bytes()));
        self.uses.push(mem.read_access());
        self
    }

    /// Adds the next output.
    pub fn output<T: Element, M: DeviceMemoryMut<T> + ?Sized>(mut self, mem: &'a mut M) -> Self {
        let i = self.outs.len();
        if let Err(e) = check_slot(
            "output",
            i,
            self.handle.outputs.get(i),
            T::DATA_TYPE,
            mem.size_bytes(),
        ) && self.error.is_none()
        {
            self.error = Some(e);
        }
        self.outs.push((mem.device_ptr_mut(), mem.size_bytes()));
        self.uses.push(mem.write_access());
        self
    }

    /// Queues the execution on `stream`.
    ///
    /// # Errors
    ///
    /// The first [`Error::InvalidArgument`] found while adding buffers, or
    /// a count that differs from the handle's; the runtime's error.
    #[doc(alias = "aclopExecWithHandle")]
    pub fn execute(mut self, stream: &Stream) -> Result<()> {
        const F: &str = "HandleLaunch::execute";
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.ins.len() != self.handle.inputs.len()
            || self.outs.len() != self.handle.outputs.len()
        {
            return Err(Error::invalid(
                F,
                format!(
                    "{} takes {} input(s) and {} output(s); {} and {} were given",
                    self.handle.op_type,
                    self.handle.inputs.len(),
                    self.handle.outputs.len(),
                    self.ins.len(),
                    self.outs.len()
                ),
            ));
        }
        let n_in = count_i32(F, "inputs", self.ins.len())?;
        let n_out = count_i32(F, "outputs", self.outs.len())?;
        let prepared = crate::memory::prepare(stream, std::mem::take(&mut self.uses))?;
        let ins = DataBuffers::new(&self.ins)?;
        let outs = DataBuffers::new(&self.outs)?;
        // SAFETY: live handle and buffers; arrays valid for their counts;
        // the memory stays valid until the operator has run (stream ordering).
        unsafe {
            result::op_exec_with_handle(
                self.handle.raw.as_ptr(),
                n_in,
                ins.raw.as_ptr().cast(),
                n_out,
                outs.raw.as_ptr().cast(),
                stream.as_raw(),
            )
        }?;
        prepared.commit();
        drop((ins, outs));
        Ok(())
    }
}

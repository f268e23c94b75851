//! Offline models (`acl_mdl.h`): [`Model`] loads a model (from a file or
//! from memory, with its work and weight memory managed by the runtime or
//! by this crate), describes it ([`ModelDesc`]) and runs it on device
//! memory, synchronously or in stream order, at a gear for a dynamic model.
//!
//! ```no_run
//! # fn main() -> acl::Result<()> {
//! use acl::model::{Gear, Model};
//! let rt = acl::Runtime::init()?;
//! let npu = acl::Device::new(&rt, 0)?;
//! let model = Model::load_file(&npu, "mlp.json")?;
//! let stream = npu.new_stream()?;
//! let x = stream.clone_from_host(&[0.5f32; 8])?;
//! let mut y = stream.alloc_zeros::<f32>(6)?;
//! model.execute(&stream, Gear::Static, &[&x], &mut [&mut y])?;
//! println!("{:?}", y.to_host_vec()?);
//! # Ok(()) }
//! ```
//!
//! On the simulator (cann-sim) models are its documented JSON format
//! (`cann_sim::model`); on a device, `.om` files from ATC.

mod desc;

pub use desc::{GEAR_INPUT_NAME, Gears, ModelDesc, TensorInfo};

use crate::error::{Error, Result};
use crate::memory::{
    Access, DeviceBuffer, DeviceMemory, DeviceMemoryMut, DeviceRepr, DeviceSlice, DeviceSliceMut,
    prepare,
};
use crate::result::{self, raw};
use crate::{Device, Stream, release};
use std::ffi::{CString, c_void};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The gear an execution runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gear {
    /// A static model (no gears).
    Static,
    /// This batch size (`aclmdlSetDynamicBatchSize`).
    Batch(u64),
    /// This height and width (`aclmdlSetDynamicHWSize`).
    HeightWidth(u64, u64),
    /// The dims gear at this index of [`ModelDesc::dims_gears`]
    /// (`aclmdlSetInputDynamicDims`; see also [`ModelDesc::dims_gear`]).
    Dims(usize),
}

/// Bytes of work and weight memory a model needs (`aclmdlQuerySize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySize {
    /// Work memory (intermediate tensors).
    pub work: usize,
    /// Weight memory (constants).
    pub weight: usize,
}

mod sealed {
    pub trait Sealed {}
}

/// Device memory a model reads: any [`DeviceBuffer`], [`DeviceSlice`] or
/// [`DeviceSliceMut`], whatever its element type (models take bytes).
///
/// Sealed.
pub trait ModelInput: sealed::Sealed {
    /// The first byte.
    fn input_ptr(&self) -> *const c_void;
    /// Bytes.
    fn input_bytes(&self) -> usize;
    /// The allocation the memory is part of (its access record).
    fn input_allocation(&self) -> &Arc<crate::memory::Allocation>;
}

/// Device memory a model writes.
///
/// Sealed.
pub trait ModelOutput: ModelInput {
    /// The first byte, for writing.
    fn output_ptr(&mut self) -> *mut c_void;
}

macro_rules! model_io {
    ($($ty:ty),*) => {$(
        impl<T: DeviceRepr> sealed::Sealed for $ty {}
        impl<T: DeviceRepr> ModelInput for $ty {
            fn input_ptr(&self) -> *const c_void {
                self.device_ptr()
            }
            fn input_bytes(&self) -> usize {
                self.size_bytes()
            }
            fn input_allocation(&self) -> &Arc<crate::memory::Allocation> {
                self.allocation()
            }
        }
    )*};
}

model_io!(DeviceBuffer<T>, DeviceSlice<'_, T>, DeviceSliceMut<'_, T>);

impl<T: DeviceRepr> ModelOutput for DeviceBuffer<T> {
    fn output_ptr(&mut self) -> *mut c_void {
        self.device_ptr_mut()
    }
}

impl<T: DeviceRepr> ModelOutput for DeviceSliceMut<'_, T> {
    fn output_ptr(&mut self) -> *mut c_void {
        self.device_ptr_mut()
    }
}

/// A loaded model; unloaded (`aclmdlUnload`) when dropped, after the
/// streams it ran on have finished; a failure then is recorded
/// ([`crate::take_release_errors`]). [`Model::close`] reports it instead.
///
/// `Send + Sync`: the model id is the runtime's, usable from any thread;
/// executions of one model are serialised by the runtime.
#[derive(Debug)]
pub struct Model {
    id: u32,
    device: Device,
    desc: ModelDesc,
    /// Streams executions were queued on (waited for before unloading).
    streams: Mutex<Vec<Stream>>,
    /// Gear input buffers, one per stream and gear: each always holds its
    /// gear, so an execution still queued never sees another value.
    #[allow(clippy::type_complexity)]
    gear_bufs: Mutex<Vec<(Stream, Gear, Arc<DeviceBuffer<u64>>)>>,
    /// Work and weight memory this crate manages for the model.
    memory: Option<(DeviceBuffer<u8>, DeviceBuffer<u8>)>,
    /// With memory the runtime manages: a stand-in for its work memory,
    /// which every execution writes (never touched on the device; the
    /// tracking orders executions by it).
    work_token: Option<DeviceBuffer<u8>>,
    /// Held by an execution from its wait to its commit: two executions
    /// on two streams are one after the other.
    executing: Mutex<()>,
    closed: bool,
}

const _: () = {
    const fn both<T: Send + Sync>() {}
    both::<Model>();
    both::<ModelDesc>();
};

/// The path for C, after checking that it names a regular file: the
/// loader opens and reads it whole, so a FIFO would block forever (and a
/// device file be read without end). A path that does not exist is left to
/// the runtime, which reports `ACL_ERROR_INVALID_FILE` (100003).
fn path_c(function: &'static str, path: &Path) -> Result<CString> {
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
        Error::invalid(
            function,
            format!("the path {} contains a NUL byte", path.display()),
        )
    })?;
    // `metadata` follows symbolic links and never opens the file, so it
    // does not block on a FIFO.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(Error::invalid(
            function,
            format!(
                "{} is not a regular file (a {}): give the path of a model file",
                path.display(),
                file_kind(&m.file_type())
            ),
        )),
        _ => Ok(c),
    }
}

/// What a file that is not a regular one is, for messages.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

fn data_arg(function: &'static str, data: &[u8]) -> Result<()> {
    if data.is_empty() {
        return Err(Error::invalid(function, "the model is empty"));
    }
    Ok(())
}

/// Work and weight memory of the queried sizes.
fn alloc_memory(device: &Device, size: MemorySize) -> Result<(DeviceBuffer<u8>, DeviceBuffer<u8>)> {
    // At least one byte each, so that the pointers are real allocations.
    let work = DeviceBuffer::<u8>::zeroed(device, size.work.max(1))?;
    let weight = DeviceBuffer::<u8>::zeroed(device, size.weight.max(1))?;
    // The zero fills are queued: let them land before the load writes the
    // weights (synchronously).
    crate::memory::track::host_wait(work.allocation(), true)?;
    crate::memory::track::host_wait(weight.allocation(), true)?;
    Ok((work, weight))
}

impl Model {
    /// The work and weight memory the model file at `path` needs.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a path with a NUL byte; the loader's
    /// error otherwise (as [`Model::load_file`]).
    #[doc(alias = "aclmdlQuerySize")]
    pub fn query_size(path: impl AsRef<Path>) -> Result<MemorySize> {
        let c = path_c("Model::query_size", path.as_ref())?;
        let (work, weight) = result::mdl_query_size(&c)?;
        Ok(MemorySize { work, weight })
    }

    /// The work and weight memory the model in `data` needs.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for empty data; the loader's error otherwise.
    #[doc(alias = "aclmdlQuerySizeFromMem")]
    pub fn query_size_data(data: &[u8]) -> Result<MemorySize> {
        data_arg("Model::query_size_data", data)?;
        let (work, weight) = result::mdl_query_size_from_mem(data)?;
        Ok(MemorySize { work, weight })
    }

    /// Loads the model file at `path` onto `device`; the runtime manages
    /// its memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a path with a NUL byte; the loader's
    /// codes: `ACL_ERROR_INVALID_FILE` (100003) for a file that cannot be
    /// opened, 100012–100016 and 100006 for a malformed model.
    #[doc(alias = "aclmdlLoadFromFile")]
    pub fn load_file(device: &Device, path: impl AsRef<Path>) -> Result<Model> {
        let c = path_c("Model::load_file", path.as_ref())?;
        device.bind()?;
        let id = result::mdl_load_from_file(&c)?;
        Model::wrap(device, id, None)
    }

    /// Loads a model from its bytes onto `device`; the runtime manages its memory.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for empty data; the loader's codes otherwise.
    #[doc(alias = "aclmdlLoadFromMem")]
    pub fn load_data(device: &Device, data: &[u8]) -> Result<Model> {
        data_arg("Model::load_data", data)?;
        device.bind()?;
        let id = result::mdl_load_from_mem(data)?;
        Model::wrap(device, id, None)
    }

    /// Loads the model file at `path` onto `device` with work and weight
    /// memory this crate allocates (sized by [`Model::query_size`]) and
    /// frees after unloading.
    ///
    /// # Errors
    ///
    /// As [`Model::load_file`]; an allocation failure.
    #[doc(alias = "aclmdlLoadFromFileWithMem")]
    pub fn load_file_with_memory(device: &Device, path: impl AsRef<Path>) -> Result<Model> {
        let c = path_c("Model::load_file_with_memory", path.as_ref())?;
        let size = Model::query_size(path.as_ref())?;
        let (mut work, mut weight) = alloc_memory(device, size)?;
        device.bind()?;
        // SAFETY: the memory is live device memory of `device` (bound) of
        // at least the queried sizes, kept until after the model is unloaded
        // (fields of the model) and used by nothing else.
        let id = unsafe {
            result::mdl_load_from_file_with_mem(
                &c,
                work.device_ptr_mut(),
                work.size_bytes(),
                weight.device_ptr_mut(),
                weight.size_bytes(),
            )
        }?;
        Model::wrap(device, id, Some((work, weight)))
    }

    /// Loads a model from its bytes onto `device` with work and weight
    /// memory this crate allocates and frees after unloading.
    ///
    /// # Errors
    ///
    /// As [`Model::load_data`]; an allocation failure.
    #[doc(alias = "aclmdlLoadFromMemWithMem")]
    pub fn load_data_with_memory(device: &Device, data: &[u8]) -> Result<Model> {
        data_arg("Model::load_data_with_memory", data)?;
        let size = Model::query_size_data(data)?;
        let (mut work, mut weight) = alloc_memory(device, size)?;
        device.bind()?;
        // SAFETY: as `load_file_with_memory`.
        let id = unsafe {
            result::mdl_load_from_mem_with_mem(
                data,
                work.device_ptr_mut(),
                work.size_bytes(),
                weight.device_ptr_mut(),
                weight.size_bytes(),
            )
        }?;
        Model::wrap(device, id, Some((work, weight)))
    }

    fn wrap(
        device: &Device,
        id: u32,
        memory: Option<(DeviceBuffer<u8>, DeviceBuffer<u8>)>,
    ) -> Result<Model> {
        let mut model = Model {
            id,
            device: device.clone(),
            desc: ModelDesc::empty(),
            streams: Mutex::new(Vec::new()),
            gear_bufs: Mutex::new(Vec::new()),
            work_token: None,
            memory,
            executing: Mutex::new(()),
            closed: false,
        };
        if model.memory.is_none() {
            // SAFETY: never read or written on the device or the host.
            model.work_token = Some(unsafe { device.default_stream().alloc::<u8>(1) }?);
        }
        // On failure `model` is dropped, which unloads it.
        model.desc = ModelDesc::read(id)?;
        Ok(model)
    }

    /// The runtime's model id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The device the model is loaded on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The model's description.
    #[doc(alias = "aclmdlGetDesc")]
    pub fn desc(&self) -> &ModelDesc {
        &self.desc
    }

    /// Whether this crate manages the model's work and weight memory
    /// (loaded with `…_with_memory`).
    pub fn has_own_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// Checks an execution's arguments against the description.
    fn check_args(
        &self,
        function: &'static str,
        stream: Option<&Stream>,
        gear: Gear,
        inputs: &[&dyn ModelInput],
        outputs: &[&mut dyn ModelOutput],
    ) -> Result<()> {
        if let Some(s) = stream
            && s.device() != &self.device
        {
            return Err(Error::invalid(
                function,
                format!(
                    "the model is loaded on device {}, but the stream is on device {}",
                    self.device.ordinal(),
                    s.device().ordinal()
                ),
            ));
        }
        let dims_gears = self.desc.dims_gears();
        match (self.desc.gears(), gear) {
            (Gears::None, Gear::Dims(k)) if k < dims_gears.len() => {}
            (Gears::None, g) if !dims_gears.is_empty() => {
                return Err(Error::invalid(
                    function,
                    format!(
                        "{g:?} is not a gear of the model; it has {} dims gears {dims_gears:?} \
                         (Gear::Dims takes an index)",
                        dims_gears.len()
                    ),
                ));
            }
            (Gears::None, Gear::Static) => {}
            (Gears::None, g) => {
                return Err(Error::invalid(
                    function,
                    format!("the model is static; it runs at Gear::Static, not {g:?}"),
                ));
            }
            (Gears::Batch(v), Gear::Batch(b)) if v.contains(&b) => {}
            (Gears::HeightWidth(v), Gear::HeightWidth(h, w)) if v.contains(&(h, w)) => {}
            (Gears::Batch(v), g) => {
                return Err(Error::invalid(
                    function,
                    format!("{g:?} is not a gear of the model; its batch gears are {v:?}"),
                ));
            }
            (Gears::HeightWidth(v), g) => {
                return Err(Error::invalid(
                    function,
                    format!("{g:?} is not a gear of the model; its height-width gears are {v:?}"),
                ));
            }
        }
        let want = self.desc.num_data_inputs();
        if inputs.len() != want {
            return Err(Error::invalid(
                function,
                format!("{} inputs given, the model takes {want}", inputs.len()),
            ));
        }
        if outputs.len() != self.desc.outputs().len() {
            return Err(Error::invalid(
                function,
                format!(
                    "{} outputs given, the model gives {}",
                    outputs.len(),
                    self.desc.outputs().len()
                ),
            ));
        }
        let g = Some(&gear);
        for (i, (t, m)) in self.desc.data_inputs().zip(inputs).enumerate() {
            let need = match gear {
                Gear::Dims(k) => t.bytes_of(&self.desc.data_input_dims_at(i, &dims_gears[k])),
                _ => t.bytes_at(g),
            };
            check_io(
                function,
                "input",
                i,
                t,
                need,
                m.input_bytes(),
                m.input_allocation().device(),
                &self.device,
            )?;
        }
        for (i, (t, m)) in self.desc.outputs().iter().zip(outputs).enumerate() {
            check_io(
                function,
                "output",
                i,
                t,
                t.bytes_at(g),
                m.input_bytes(),
                m.input_allocation().device(),
                &self.device,
            )?;
        }
        Ok(())
    }

    /// Queues an execution on `stream` at `gear` and returns: `inputs` in
    /// the model's input order (the gear input excluded: this fills it),
    /// `outputs` in its output order. The execution waits, on the device,
    /// for the queued accesses its memory conflicts with, and its reads and
    /// writes are recorded for later users.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] before any runtime call for a stream of
    /// another device, a gear the model does not have (or any gear for a
    /// static model), a wrong number of inputs or outputs, memory whose
    /// size is not its tensor's at that gear, or memory of another device;
    /// the runtime's error otherwise. Faults of the execution surface at the
    /// next synchronisation.
    #[doc(alias = "aclmdlExecuteAsync")]
    #[doc(alias = "aclmdlSetDynamicBatchSize")]
    #[doc(alias = "aclmdlSetDynamicHWSize")]
    pub fn execute(
        &self,
        stream: &Stream,
        gear: Gear,
        inputs: &[&dyn ModelInput],
        outputs: &mut [&mut dyn ModelOutput],
    ) -> Result<()> {
        const F: &str = "Model::execute";
        self.check_args(F, Some(stream), gear, inputs, outputs)?;
        {
            let mut used = crate::lock::lock(&self.streams);
            if !used.iter().any(|s| s.same_queue(stream)) {
                used.push(stream.clone());
            }
        }
        let gear_buf = self.gear_buffer(stream, gear)?;
        let out_ptrs: Vec<(*mut c_void, usize)> = outputs
            .iter_mut()
            .map(|m| (m.output_ptr(), m.input_bytes()))
            .collect();
        let mut uses: Vec<Access> = inputs
            .iter()
            .map(|m| Access::read(m.input_allocation()))
            .collect();
        uses.extend(outputs.iter().map(|m| Access::write(m.input_allocation())));
        if let Some(b) = &gear_buf {
            uses.push(Access::read(b.allocation()));
        }
        // Every execution writes the model's work memory (and reads its
        // weights): one at a time, each after the previous one's marks.
        uses.extend(self.work_memory().map(Access::write));
        if let Some((_, weight)) = &self.memory {
            uses.push(Access::read(weight.allocation()));
        }
        let _one = crate::lock::lock(&self.executing);
        let prepared = prepare(stream, uses)?;
        let sets = self.datasets(inputs, &out_ptrs, gear, gear_buf.as_ref())?;
        // SAFETY: live model, datasets and stream; the memory the datasets
        // name is live device memory of the model's device, borrowed
        // (outputs exclusively) for this call, kept allocated and ordered
        // with its other users by the accesses recorded below; the runtime
        // keeps no reference to the datasets after the call.
        unsafe { result::mdl_execute_async(self.id, sets.input, sets.output, stream.as_raw()) }?;
        prepared.commit();
        Ok(())
    }

    /// Runs the model and returns when it has run (`aclmdlExecute`); the
    /// arguments as [`Model::execute`]. Queued work that conflicts with the
    /// memory is waited for first.
    ///
    /// # Errors
    ///
    /// As [`Model::execute`]; a failing node is
    /// `ACL_ERROR_RT_MODEL_EXECUTE` (507011) on the simulator.
    #[doc(alias = "aclmdlExecute")]
    pub fn execute_sync(
        &self,
        gear: Gear,
        inputs: &[&dyn ModelInput],
        outputs: &mut [&mut dyn ModelOutput],
    ) -> Result<()> {
        const F: &str = "Model::execute_sync";
        self.check_args(F, None, gear, inputs, outputs)?;
        use crate::memory::track::host_wait;
        for m in inputs {
            host_wait(m.input_allocation(), false)?;
        }
        for m in outputs.iter() {
            host_wait(m.input_allocation(), true)?;
        }
        let stream = self.device.default_stream();
        let gear_buf = self.gear_buffer(&stream, gear)?;
        if let Some(b) = &gear_buf {
            host_wait(b.allocation(), true)?;
        }
        // The work memory: after every queued execution.
        let _one = crate::lock::lock(&self.executing);
        if let Some(work) = self.work_memory() {
            host_wait(work, true)?;
        }
        let out_ptrs: Vec<(*mut c_void, usize)> = outputs
            .iter_mut()
            .map(|m| (m.output_ptr(), m.input_bytes()))
            .collect();
        self.device.bind()?;
        let sets = self.datasets(inputs, &out_ptrs, gear, gear_buf.as_ref())?;
        // SAFETY: live model and datasets; the memory is live device memory
        // with no queued work (synchronised above), borrowed for the call.
        unsafe { result::mdl_execute(self.id, sets.input, sets.output) }
    }

    /// The allocation that stands for the model's work memory: its own
    /// work buffer, or the token for the runtime's.
    /// (`wrap` makes the token whenever the model has no memory.)
    fn work_memory(&self) -> Option<&Arc<crate::memory::Allocation>> {
        self.memory
            .as_ref()
            .map(|(work, _)| work)
            .or(self.work_token.as_ref())
            .map(|work| work.allocation())
    }

    /// The gear input buffer for `gear` on `stream` (none for a static model).
    fn gear_buffer(&self, stream: &Stream, gear: Gear) -> Result<Option<Arc<DeviceBuffer<u64>>>> {
        let Some(i) = self.desc.gear_input() else {
            return Ok(None);
        };
        let mut bufs = crate::lock::lock(&self.gear_bufs);
        if let Some((_, _, b)) = bufs
            .iter()
            .find(|(s, g, _)| *g == gear && s.same_queue(stream))
        {
            return Ok(Some(b.clone()));
        }
        let words = self.desc.inputs()[i].size.div_ceil(8).max(2);
        let b = Arc::new(stream.alloc_zeros::<u64>(words)?);
        // The zero fill is queued: let it land before the gear is written
        // (synchronously, by `aclmdlSetDynamic*`).
        crate::memory::track::host_wait(b.allocation(), true)?;
        bufs.push((stream.clone(), gear, b.clone()));
        Ok(Some(b))
    }

    /// Builds the datasets and sets the gear.
    fn datasets(
        &self,
        inputs: &[&dyn ModelInput],
        outputs: &[(*mut c_void, usize)],
        gear: Gear,
        gear_buf: Option<&Arc<DeviceBuffer<u64>>>,
    ) -> Result<Datasets> {
        let mut ins: Vec<(*mut c_void, usize)> = inputs
            .iter()
            .map(|m| (m.input_ptr().cast_mut(), m.input_bytes()))
            .collect();
        if let (Some(i), Some(b)) = (self.desc.gear_input(), gear_buf) {
            ins.insert(i, (b.device_ptr().cast_mut(), b.size_bytes()));
        }
        let sets = Datasets {
            input: Datasets::make(&ins)?,
            output: std::ptr::null_mut(),
        };
        let mut sets = sets;
        sets.output = Datasets::make(outputs)?;
        if let Some(i) = self.desc.gear_input() {
            // SAFETY: live model and dataset; the gear input's buffer is at `i`.
            unsafe {
                match gear {
                    Gear::Batch(b) => result::mdl_set_dynamic_batch_size(self.id, sets.input, i, b),
                    Gear::HeightWidth(h, w) => {
                        result::mdl_set_dynamic_hw_size(self.id, sets.input, i, h, w)
                    }
                    Gear::Dims(k) => {
                        let mut dims = raw::aclmdlIODims::default();
                        let shape: Vec<i64> = (0..self.desc.num_data_inputs())
                            .flat_map(|j| {
                                self.desc.data_input_dims_at(j, &self.desc.dims_gears()[k])
                            })
                            .collect();
                        let n = shape.len().min(dims.dims.len());
                        dims.dimCount = n;
                        dims.dims[..n].copy_from_slice(&shape[..n]);
                        result::mdl_set_input_dynamic_dims(self.id, sets.input, i, &dims)
                    }
                    Gear::Static => Ok(()),
                }
            }?;
        }
        Ok(sets)
    }

    /// Unloads the model, after the streams it ran on have finished, and
    /// reports a failure.
    ///
    /// # Errors
    ///
    /// The runtime's error from the synchronisation or `aclmdlUnload`.
    #[doc(alias = "aclmdlUnload")]
    pub fn close(mut self) -> Result<()> {
        self.closed = true;
        self.unload()
    }

    fn unload(&mut self) -> Result<()> {
        let streams = std::mem::take(&mut *crate::lock::lock(&self.streams));
        let mut first = Ok(());
        for s in &streams {
            if let Err(e) = s.synchronize() {
                first = first.and(Err(e));
            }
        }
        self.device.bind()?;
        // SAFETY: a loaded model, unloaded once.
        let r = unsafe { result::mdl_unload(self.id) };
        first.and(r)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        if let Err(e) = self.unload() {
            release::record("Model", e);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn check_io(
    function: &'static str,
    role: &str,
    i: usize,
    t: &TensorInfo,
    need: Option<usize>,
    bytes: usize,
    mem_device: &Device,
    device: &Device,
) -> Result<()> {
    if mem_device != device {
        return Err(Error::invalid(
            function,
            format!(
                "{role} {i} ({}) is memory of device {}, but the model is loaded on device {}",
                t.name,
                mem_device.ordinal(),
                device.ordinal()
            ),
        ));
    }
    let ok = match need {
        Some(n) => bytes == n,
        None => bytes <= t.size,
    };
    if !ok {
        let want = need.map_or(format!("at most {}", t.size), |n| n.to_string());
        return Err(Error::invalid(
            function,
            format!(
                "{role} {i} ({}) holds {bytes} bytes, but the model takes {want}",
                t.name
            ),
        ));
    }
    Ok(())
}

/// The input and output datasets of one call, destroyed (with their data
/// buffers, not the memory) when dropped.
struct Datasets {
    input: *mut raw::aclmdlDataset,
    output: *mut raw::aclmdlDataset,
}

impl Datasets {
    fn make(bufs: &[(*mut c_void, usize)]) -> Result<*mut raw::aclmdlDataset> {
        let ds = result::mdl_create_dataset()?;
        for &(p, n) in bufs {
            let b = match result::create_data_buffer(p, n) {
                Ok(b) => b,
                Err(e) => {
                    destroy_dataset(ds);
                    return Err(e);
                }
            };
            // SAFETY: live dataset and buffer.
            if let Err(e) = unsafe { result::mdl_add_dataset_buffer(ds, b) } {
                // SAFETY: the buffer was not added; destroyed once.
                let _ = unsafe { result::destroy_data_buffer(b) };
                destroy_dataset(ds);
                return Err(e);
            }
        }
        Ok(ds)
    }
}

/// Destroys a dataset made by [`Datasets::make`] and its data buffers.
fn destroy_dataset(ds: *mut raw::aclmdlDataset) {
    if ds.is_null() {
        return;
    }
    // SAFETY: a live dataset.
    let n = unsafe { result::mdl_get_dataset_num_buffers(ds) }.unwrap_or(0);
    for i in 0..n {
        // SAFETY: a live dataset; index in range.
        if let Ok(b) = unsafe { result::mdl_get_dataset_buffer(ds, i) }
            && !b.is_null()
        {
            // SAFETY: made by `make`, destroyed once.
            let _ = unsafe { result::destroy_data_buffer(b) };
        }
    }
    // SAFETY: made by `make`, destroyed once.
    let _ = unsafe { result::mdl_destroy_dataset(ds) };
}

impl Drop for Datasets {
    fn drop(&mut self) {
        destroy_dataset(self.input);
        destroy_dataset(self.output);
    }
}

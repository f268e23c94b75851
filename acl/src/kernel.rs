//! Custom kernels: load a kernel binary, look a kernel up by name, and
//! launch it on a stream with typed arguments.
//!
//! - [`KernelBinary`]: a loaded binary (`aclrtBinaryLoadFromFile`,
//!   `aclrtBinaryLoadFromData`), unloaded when the last handle (binary or
//!   kernel) goes.
//! - [`Kernel`]: one kernel of it (`aclrtBinaryGetFunction`).
//! - [`KernelArgs`]: the arguments, in the kernel's parameter order: device
//!   memory (read or written), scalars, and placeholders (host data the
//!   runtime copies next to the arguments, passed as a device pointer).
//! - [`Kernel::launch`] queues the kernel on a stream with a block count
//!   (`aclrtKernelArgsInit` … `aclrtLaunchKernelWithConfig`).
//!
//! On hardware the binary is an AscendC kernel object; on `cann-sim` it is a
//! host shared library whose exported C function runs once per block (see
//! the `cann-sim` README). The code that loads and launches is the same.
//!
//! Memory passed to a kernel is ordered like every other use (see
//! [`memory`](crate::memory)): the launch waits, on the device, for queued
//! work of other streams that the kernel's inputs and outputs conflict
//! with, and the kernel's reads and writes are recorded for later users.
//!
//! ```no_run
//! # cann_sim::install().unwrap();
//! use acl::kernel::{KernelArgs, KernelBinary};
//! use acl::{Device, Runtime};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let stream = npu.new_stream()?;
//! let binary = KernelBinary::load_file(&npu, "vadd.so")?;
//! let vadd = binary.kernel("vadd")?;
//! let x = stream.clone_from_host(&[1.0f32; 1024])?;
//! let y = stream.clone_from_host(&[2.0f32; 1024])?;
//! let mut z = stream.alloc_zeros::<f32>(1024)?;
//! let args = KernelArgs::new().input(&x).input(&y).output(&mut z).scalar(1024u64);
//! // SAFETY: vadd(x, y, z, n) reads n floats of x and y and writes n of z.
//! unsafe { vadd.launch(&stream, 8, args)? };
//! assert_eq!(z.to_host_vec()?, vec![3.0; 1024]);
//! # Ok::<(), acl::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::memory::{Access, DeviceMemory, DeviceMemoryMut, DeviceRepr, prepare};
use crate::result::raw;
use crate::{Device, Stream, release, result};
use std::ffi::{CString, c_void};
use std::path::Path;
use std::sync::Arc;

/// The most parameters a kernel argument list holds (`MAX_PARAM_CNT`).
pub const MAX_KERNEL_PARAMS: usize = 128;

/// Bytes of a kernel's argument buffer: parameters and placeholder data
/// (`MAX_ARGS_BUFF_SIZE`).
pub const MAX_KERNEL_ARGS_BYTES: usize = 64 * 1024;

/// A loaded kernel binary. Cheap to clone (an `Arc`).
///
/// `Send + Sync`: the handle is the runtime's, usable from any thread; each
/// call binds the device first.
#[derive(Clone)]
pub struct KernelBinary {
    inner: Arc<BinaryInner>,
}

struct BinaryInner {
    raw: raw::aclrtBinHandle,
    device: Device,
    origin: String,
}

// SAFETY: `raw` is an opaque runtime handle, valid on any thread.
unsafe impl Send for BinaryInner {}
// SAFETY: as above; shared access only passes the handle to the runtime.
unsafe impl Sync for BinaryInner {}

impl std::fmt::Debug for KernelBinary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelBinary")
            .field("origin", &self.inner.origin)
            .field("device", &self.inner.device.ordinal())
            .finish()
    }
}

impl KernelBinary {
    /// Loads the kernel binary at `path` onto `device`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a path with a NUL byte;
    /// `ACL_ERROR_RT_PARAM_INVALID` (107000) for a file that cannot be read
    /// or is not a kernel binary.
    #[doc(alias = "aclrtBinaryLoadFromFile")]
    pub fn load_file(device: &Device, path: impl AsRef<Path>) -> Result<KernelBinary> {
        let path = path.as_ref();
        let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
            Error::invalid(
                "KernelBinary::load_file",
                format!("the path {} contains a NUL byte", path.display()),
            )
        })?;
        device.bind()?;
        let raw = result::binary_load_from_file(&c)?;
        Ok(KernelBinary::wrap(raw, device, path.display().to_string()))
    }

    /// Loads a kernel binary from its bytes onto `device`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for empty data; `ACL_ERROR_RT_PARAM_INVALID`
    /// (107000) for data that is not a kernel binary.
    #[doc(alias = "aclrtBinaryLoadFromData")]
    pub fn load_data(device: &Device, data: &[u8]) -> Result<KernelBinary> {
        if data.is_empty() {
            return Err(Error::invalid(
                "KernelBinary::load_data",
                "the binary is empty",
            ));
        }
        device.bind()?;
        let raw = result::binary_load_from_data(data)?;
        Ok(KernelBinary::wrap(
            raw,
            device,
            format!("{} bytes in memory", data.len()),
        ))
    }

    fn wrap(raw: raw::aclrtBinHandle, device: &Device, origin: String) -> KernelBinary {
        KernelBinary {
            inner: Arc::new(BinaryInner {
                raw,
                device: device.clone(),
                origin,
            }),
        }
    }

    /// The device the binary is loaded on (its kernels run there only).
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// The raw handle.
    pub fn as_raw(&self) -> raw::aclrtBinHandle {
        self.inner.raw
    }

    /// The kernel named `name`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty name or one with a NUL byte;
    /// `ACL_ERROR_RT_PARAM_INVALID` (107000) when the binary has no such
    /// kernel.
    #[doc(alias = "aclrtBinaryGetFunction")]
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let c = CString::new(name)
            .ok()
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                Error::invalid(
                    "KernelBinary::kernel",
                    format!("{name:?} is not a kernel name (empty, or with a NUL byte)"),
                )
            })?;
        self.inner.device.bind()?;
        // SAFETY: the binary is live (held by `self` and by the kernel).
        let raw = unsafe { result::binary_get_function(self.inner.raw, &c) }?;
        Ok(Kernel {
            binary: self.clone(),
            raw,
            name: name.to_string(),
        })
    }

    /// Unloads the binary now (when this is the last handle), reporting a
    /// failure instead of recording it. Kernels of it keep it loaded.
    ///
    /// # Errors
    ///
    /// The runtime's error from synchronizing the device or unloading.
    #[doc(alias = "aclrtBinaryUnLoad")]
    pub fn close(self) -> Result<()> {
        match Arc::try_unwrap(self.inner) {
            Ok(mut inner) => inner.unload(),
            Err(_) => Ok(()),
        }
    }
}

impl BinaryInner {
    fn unload(&mut self) -> Result<()> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        // Launches of its kernels may still be queued on any stream of the
        // device: let them finish before the code goes away.
        self.device.bind()?;
        let synced = result::synchronize_device();
        // SAFETY: `raw` is a live binary, unloaded once (swapped out above),
        // and no queued work runs its code any more.
        let unloaded = unsafe { result::binary_un_load(raw) };
        synced.and(unloaded)
    }
}

impl Drop for BinaryInner {
    fn drop(&mut self) {
        if let Err(e) = self.unload() {
            release::record("KernelBinary", e);
        }
    }
}

/// One kernel of a [`KernelBinary`] (which it keeps loaded). Cheap to clone.
///
/// `Send + Sync`, like the binary.
#[derive(Clone)]
pub struct Kernel {
    binary: KernelBinary,
    raw: raw::aclrtFuncHandle,
    name: String,
}

// SAFETY: `raw` is an opaque runtime handle, valid on any thread while the
// binary (held) is loaded.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.name)
            .field("binary", &self.binary)
            .finish()
    }
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The binary it belongs to.
    pub fn binary(&self) -> &KernelBinary {
        &self.binary
    }

    /// The raw handle.
    pub fn as_raw(&self) -> raw::aclrtFuncHandle {
        self.raw
    }

    /// Queues the kernel on `stream` with `blocks` blocks and `args`
    /// (`aclrtKernelArgsInit`, `…Append`, `…AppendPlaceHolder`,
    /// `…GetPlaceHolderBuffer`, `…Finalize`, `aclrtLaunchKernelWithConfig`).
    /// Returns when the launch is queued; the kernel runs later, in stream
    /// order. Memory in `args` is ordered with its other queued accesses.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for zero blocks, a stream of another
    /// device than the binary's, more than [`MAX_KERNEL_PARAMS`] arguments
    /// or more than [`MAX_KERNEL_ARGS_BYTES`] of them, and device memory of
    /// another device; the runtime's error otherwise. Faults of the kernel
    /// surface at the next synchronisation (e.g. `ACL_ERROR_RT_AICORE_EXCEPTION`).
    ///
    /// # Safety
    ///
    /// What the runtime cannot check, the caller guarantees:
    ///
    /// - `args` matches the kernel's parameters: their number, order, and the
    ///   size and meaning of each (a pointer where it expects a pointer, a
    ///   scalar of its type where it expects a scalar).
    /// - With `blocks` blocks, the kernel reads only within the memory given
    ///   with [`KernelArgs::input`] or [`KernelArgs::output`] (and placeholder
    ///   data), writes only within memory given with [`KernelArgs::output`],
    ///   and no two blocks write the same element (they may run in any order).
    /// - The memory it reads is initialised (as for any device read).
    #[doc(alias = "aclrtLaunchKernelWithConfig")]
    #[doc(alias = "aclrtKernelArgsInit")]
    #[doc(alias = "aclrtKernelArgsAppend")]
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        blocks: u32,
        mut args: KernelArgs<'_>,
    ) -> Result<()> {
        const F: &str = "Kernel::launch";
        if blocks == 0 {
            return Err(Error::invalid(F, "the block count must be positive"));
        }
        if stream.device() != self.binary.device() {
            return Err(Error::invalid(
                F,
                format!(
                    "kernel {} is loaded on device {}, but the stream is on device {}",
                    self.name,
                    self.binary.device().ordinal(),
                    stream.device().ordinal()
                ),
            ));
        }
        args.check(F, stream.device())?;
        let prepared = prepare(stream, std::mem::take(&mut args.uses))?;
        // SAFETY: the kernel and stream are live (held); the argument list
        // is built and launched here with no other runtime call on this
        // thread in between (the runtime keeps one list per thread); every
        // pointer passed is valid for the call, and the memory stays
        // allocated until the kernel has run (its accesses are recorded).
        unsafe { self.launch_raw(stream, blocks, &args)? };
        prepared.commit();
        Ok(())
    }

    /// # Safety
    ///
    /// As [`Kernel::launch`]; the device is bound.
    unsafe fn launch_raw(&self, stream: &Stream, blocks: u32, args: &KernelArgs<'_>) -> Result<()> {
        // SAFETY: live function handle.
        let h = unsafe { result::kernel_args_init(self.raw) }?;
        let mut placeholders = Vec::new();
        for arg in &args.items {
            match arg {
                Arg::Value(bytes) => {
                    let mut copy = bytes.clone();
                    // SAFETY: `h` is this thread's live list; `copy` is
                    // valid for its length and copied by the call.
                    unsafe { result::kernel_args_append(h, &mut copy) }?;
                }
                Arg::Placeholder(data) => {
                    // SAFETY: live list.
                    let param = unsafe { result::kernel_args_append_place_holder(h) }?;
                    placeholders.push((param, data));
                }
            }
        }
        for (param, data) in placeholders {
            // SAFETY: live list and parameter.
            let buf = unsafe { result::kernel_args_get_place_holder_buffer(h, param, data.len()) }?;
            // SAFETY: the runtime gave `data.len()` writable bytes at `buf`,
            // in its own argument buffer (no overlap with `data`).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf.cast::<u8>(), data.len()) };
        }
        // SAFETY: live list.
        unsafe { result::kernel_args_finalize(h) }?;
        // SAFETY: live function, stream and list; no launch attributes; the
        // kernel's contract is the caller's (see `launch`).
        unsafe {
            result::launch_kernel_with_config(
                self.raw,
                blocks,
                stream.as_raw(),
                std::ptr::null_mut(),
                h,
                std::ptr::null_mut(),
            )
        }
    }
}

/// The argument bytes after appending a parameter of `size` bytes with
/// `data` bytes of placeholder data to `bytes`: each parameter starts at an
/// 8-byte boundary, and placeholder data follows, padded to 8 bytes.
/// Saturating: a total past `usize::MAX` stays above
/// [`MAX_KERNEL_ARGS_BYTES`], which the launch rejects.
fn args_bytes_after(bytes: usize, size: usize, data: usize) -> usize {
    let pad8 = |n: usize| n.div_ceil(8).saturating_mul(8);
    pad8(bytes).saturating_add(size).saturating_add(pad8(data))
}

enum Arg {
    /// Bytes appended as they are (a pointer or a scalar).
    Value(Vec<u8>),
    /// Data the runtime places next to the arguments; the kernel gets its
    /// device address.
    Placeholder(Vec<u8>),
}

/// The arguments of a kernel launch, in the kernel's parameter order.
///
/// Memory is borrowed for `'a`: shared for [`KernelArgs::input`], exclusive
/// for [`KernelArgs::output`], so that the host cannot touch it while the
/// arguments are built; the launch then orders the kernel with the other
/// queued accesses of each memory.
///
/// `Send + Sync`: it holds bytes and borrows of `Sync` values only.
///
/// ```
/// use acl::kernel::KernelArgs;
/// let args = KernelArgs::new().scalar(7u32).scalar(1.5f32).placeholder(&[1u64, 2, 3]);
/// assert_eq!(args.len(), 3);
/// ```
#[derive(Default)]
pub struct KernelArgs<'a> {
    items: Vec<Arg>,
    uses: Vec<Access>,
    _borrows: std::marker::PhantomData<&'a mut ()>,
    devices: Vec<u32>,
    bytes: usize,
}

impl std::fmt::Debug for KernelArgs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelArgs")
            .field("params", &self.items.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl<'a> KernelArgs<'a> {
    /// No arguments yet.
    pub fn new() -> Self {
        KernelArgs::default()
    }

    /// Number of parameters.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no parameters.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn push(mut self, arg: Arg) -> Self {
        let (size, data) = match &arg {
            Arg::Value(b) => (b.len(), 0),
            Arg::Placeholder(d) => (8, d.len()),
        };
        self.bytes = args_bytes_after(self.bytes, size, data);
        self.items.push(arg);
        self
    }

    fn memory(mut self, ptr: *const c_void, access: Access) -> Self {
        self.devices.push(access.allocation().device().ordinal());
        self.uses.push(access);
        self.push(Arg::Value((ptr as u64).to_le_bytes().to_vec()))
    }

    /// Device memory the kernel reads: its address.
    pub fn input<T: DeviceRepr>(self, mem: &'a (impl DeviceMemory<T> + ?Sized)) -> Self {
        let ptr = mem.device_ptr();
        self.memory(ptr, mem.read_access())
    }

    /// Device memory the kernel writes (and may read): its address.
    pub fn output<T: DeviceRepr>(self, mem: &'a mut (impl DeviceMemoryMut<T> + ?Sized)) -> Self {
        let ptr = mem.device_ptr_mut();
        let access = mem.write_access();
        self.memory(ptr, access)
    }

    /// A scalar passed by value (its bytes, native endianness).
    pub fn scalar<T: DeviceRepr>(self, value: T) -> Self {
        let size = std::mem::size_of::<T>();
        // SAFETY: `T: DeviceRepr` is plain data without padding: its
        // `size_of` bytes are initialised.
        let bytes = unsafe { std::slice::from_raw_parts((&raw const value).cast::<u8>(), size) };
        self.push(Arg::Value(bytes.to_vec()))
    }

    /// Host data the runtime copies next to the arguments at launch; the
    /// kernel receives its device address (a tiling struct, a small table).
    pub fn placeholder<T: DeviceRepr>(self, data: &[T]) -> Self {
        let size = std::mem::size_of_val(data);
        // SAFETY: `T: DeviceRepr` is plain data without padding.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), size) };
        self.push(Arg::Placeholder(bytes.to_vec()))
    }

    fn check(&self, function: &'static str, device: &Device) -> Result<()> {
        if self.items.len() > MAX_KERNEL_PARAMS {
            return Err(Error::invalid(
                function,
                format!(
                    "{} parameters; a kernel takes at most {MAX_KERNEL_PARAMS}",
                    self.items.len()
                ),
            ));
        }
        if self.bytes > MAX_KERNEL_ARGS_BYTES {
            return Err(Error::invalid(
                function,
                format!(
                    "the arguments take {} bytes; at most {MAX_KERNEL_ARGS_BYTES}",
                    self.bytes
                ),
            ));
        }
        if let Some(i) = self.items.iter().position(|a| match a {
            Arg::Value(b) => b.is_empty(),
            Arg::Placeholder(d) => d.is_empty(),
        }) {
            return Err(Error::invalid(
                function,
                format!("argument {i} is empty (a zero-sized scalar or placeholder)"),
            ));
        }
        if let Some(&d) = self.devices.iter().find(|&&d| d != device.ordinal()) {
            return Err(Error::invalid(
                function,
                format!(
                    "an argument is memory of device {d}, but the kernel runs on device {}",
                    device.ordinal()
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_bytes_are_padded_and_saturate_instead_of_overflowing() {
        assert_eq!(args_bytes_after(0, 4, 0), 4);
        assert_eq!(args_bytes_after(4, 8, 0), 16);
        assert_eq!(args_bytes_after(16, 8, 12), 40);
        // Sizes past usize::MAX stay above MAX_KERNEL_ARGS_BYTES (rejected
        // by the launch) instead of wrapping around to a small count.
        assert_eq!(args_bytes_after(usize::MAX - 3, 8, 0), usize::MAX);
        assert_eq!(args_bytes_after(16, 8, usize::MAX), usize::MAX);
        assert_eq!(
            args_bytes_after(usize::MAX, usize::MAX, usize::MAX),
            usize::MAX
        );
    }
}

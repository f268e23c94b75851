//! Device memory shared between processes (IPC).
//!
//! One process exports a [`DeviceBuffer`] with [`IpcExport::new`]: the
//! export owns the buffer (so its memory lives as long as the key is open)
//! and has a [`key`](IpcExport::key), a short string the program passes to
//! the other process by any means (a pipe, a file, a socket). By default
//! only the processes it whitelists with [`IpcExport::allow_pids`] may
//! import the key ([`PidCheck::Whitelist`]); [`PidCheck::Off`] lets any
//! process import it. The other process calls [`IpcImport::open`] with the
//! key and gets an [`IpcImport`]: a view of the same memory as a
//! [`DeviceBuffer`] of its own, on which it queues work as on any buffer.
//!
//! Ordering inside each process follows the crate's memory model: work
//! queued through an import is tracked like work on any buffer, and
//! [`IpcImport::close`] (or dropping it) waits for that work before the
//! memory is unmapped. Ordering **between** the processes is the program's
//! business, as on the runtime: the writer synchronises (e.g.
//! [`DeviceBuffer::copy_from_host`] returns once the write is done, or
//! synchronise its stream) and then tells the reader, by the same channel
//! as the key.
//!
//! Importers close first, then the exporter
//! (`docs/zh/api_ref/11-07_IPC_memory_sharing.md`): dropping an
//! [`IpcExport`] withdraws the key (no new imports) and frees the buffer;
//! existing imports on the simulator keep their mapping, on a device the
//! behaviour is undefined, so keep the export alive until the importers
//! said they closed.
//!
//! ## Events between processes
//!
//! An event created with [`EventFlags::IPC`](crate::event::EventFlags::IPC)
//! has a handle ([`event_handle`], 64 bytes to pass to the other process);
//! the other process opens it with [`open_event`] and gets an [`Event`] of
//! its own. A stream's [`wait_event`](crate::Stream::wait_event) on either
//! side waits for the latest record made by any process before the wait
//! (none pending: no wait), and [`Event::synchronize`] blocks the host the
//! same way: the exporter records after writing shared memory, the importer
//! waits before reading it, with no host round trip. IPC events cannot be
//! timed, reset or recorded in a graph capture (the runtime refuses with
//! 207000). On the simulator, a wait whose creating process died fails
//! instead of blocking for ever.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::event::EventFlags;
//! use acl::{Device, Event, Runtime};
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let done = Event::new(&npu, EventFlags::IPC)?;
//! let handle = acl::ipc::event_handle(&done)?;
//! // In another process (here the same one, for the example):
//! let seen = acl::ipc::open_event(&npu, &handle)?;
//! let stream = npu.new_stream()?;
//! done.record(&stream)?;
//! npu.new_stream()?.wait_event(&seen)?;
//! seen.synchronize()?;
//! # Ok::<(), acl::Error>(())
//! ```
//!
//! ## Memory
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::ipc::{IpcExport, IpcImport, PidCheck};
//! use acl::{Device, DeviceBuffer, Runtime};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! // 2 MiB: the simulator shares blocks of at least 2 MiB.
//! let data = vec![7u8; 2 << 20];
//! let export = IpcExport::new(DeviceBuffer::from_host(&npu, &data)?, PidCheck::Off)?;
//! // In another process (here the same one, for the example):
//! let import = IpcImport::<u8>::open(&npu, export.key(), data.len())?;
//! assert_eq!(import.buffer().to_host_vec()?, data);
//! import.close()?;
//! export.close()?;
//! # Ok::<(), acl::Error>(())
//! ```

use crate::event::EventFlags;
use crate::memory::{DeviceBuffer, DeviceMemory, DeviceRepr, DeviceSliceMut};
use crate::{Device, Error, Event, Result, release, result};
use std::ffi::CString;
use std::mem::ManuallyDrop;

/// A writable view of all of `buffer`, borrowing it exclusively.
fn whole_mut<T: DeviceRepr>(buffer: &mut DeviceBuffer<T>) -> DeviceSliceMut<'_, T> {
    let buffer: &DeviceBuffer<T> = buffer;
    DeviceSliceMut::new(buffer.allocation(), 0, buffer.len())
}

/// Who may import an exported key.
///
/// `Send + Sync`: a plain value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidCheck {
    /// Only the processes given to [`IpcExport::allow_pids`]
    /// (`ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT`).
    Whitelist,
    /// Any process (`ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION`).
    Off,
}

/// The handle of an IPC event: 64 opaque bytes (`aclrtIpcEventHandle`)
/// that another process gives to [`open_event`]. Pass them by any means
/// ([`IpcEventHandle::as_bytes`], [`IpcEventHandle::from_bytes`]).
///
/// `Send + Sync`: a plain value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcEventHandle([u8; 64]);

impl IpcEventHandle {
    /// The handle's bytes.
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }

    /// A handle from bytes another process got from [`event_handle`]
    /// (checked by the runtime when opened).
    pub fn from_bytes(bytes: [u8; 64]) -> IpcEventHandle {
        IpcEventHandle(bytes)
    }
}

impl std::fmt::Debug for IpcEventHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IpcEventHandle(")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// The handle another process opens `event` with; `event` must have been
/// created with [`EventFlags::IPC`].
///
/// # Errors
///
/// [`Error::InvalidArgument`] for an event without [`EventFlags::IPC`];
/// the runtime's error.
#[doc(alias = "aclrtIpcGetEventHandle")]
pub fn event_handle(event: &Event) -> Result<IpcEventHandle> {
    if event.flags() != EventFlags::IPC {
        return Err(Error::invalid(
            "ipc::event_handle",
            format!(
                "the event's flags are {:#x}; only events created with EventFlags::IPC have a \
                 handle",
                event.flags().bits()
            ),
        ));
    }
    event.device().bind()?;
    // SAFETY: the event is live (borrowed).
    let bytes = unsafe { result::ipc_get_event_handle(event.as_raw()) }?;
    Ok(IpcEventHandle(bytes))
}

/// An event of this process for the IPC event `handle` names (created by
/// another process, or this one): streams wait on it with
/// [`Stream::wait_event`](crate::Stream::wait_event), the host with
/// [`Event::synchronize`]. Dropping it closes it.
///
/// # Errors
///
/// `ACL_ERROR_RT_PARAM_INVALID` (107000) for bytes that are not a handle,
/// or whose event was destroyed or whose process exited; the runtime's
/// error.
#[doc(alias = "aclrtIpcOpenEventHandle")]
pub fn open_event(device: &Device, handle: &IpcEventHandle) -> Result<Event> {
    device.bind()?;
    let raw = result::ipc_open_event_handle(&handle.0)?;
    Ok(Event::from_raw(device, raw, EventFlags::IPC))
}

/// This process's id as the driver knows it (inside a container, the
/// host's pid): the id another process whitelists with
/// [`IpcExport::allow_pids`].
///
/// # Errors
///
/// The runtime's.
#[doc(alias = "aclrtDeviceGetBareTgid")]
pub fn process_id() -> Result<i32> {
    result::device_get_bare_tgid()
}

fn key_cstring(function: &'static str, key: &str) -> Result<CString> {
    CString::new(key).map_err(|_| Error::invalid(function, "the key contains a NUL byte"))
}

/// A [`DeviceBuffer`] shared with other processes under a key.
///
/// It owns the buffer: the memory stays allocated while the key is open.
/// Dropping it withdraws the key (`aclrtIpcMemClose`), then drops the
/// buffer; a failure is recorded ([`crate::take_release_errors`]), never a
/// panic. [`IpcExport::close`] reports it and gives the buffer back.
///
/// `Send + Sync` (as `DeviceBuffer<T>`): the key is a plain string and the
/// C calls it makes are thread-safe.
#[derive(Debug)]
pub struct IpcExport<T: DeviceRepr> {
    /// Taken once, by `close` or `Drop`.
    buffer: ManuallyDrop<DeviceBuffer<T>>,
    key: CString,
}

impl<T: DeviceRepr> IpcExport<T> {
    /// Exports `buffer`'s memory (`aclrtIpcMemGetExportKey`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty buffer; the runtime's error
    /// when the memory cannot be shared (not from `aclrtMalloc`, or, on the
    /// simulator, smaller than 2 MiB: 107000). The buffer is dropped then.
    #[doc(alias = "aclrtIpcMemGetExportKey")]
    pub fn new(buffer: DeviceBuffer<T>, check: PidCheck) -> Result<IpcExport<T>> {
        const F: &str = "IpcExport::new";
        if buffer.is_empty() {
            return Err(Error::invalid(F, "an empty buffer has no memory to share"));
        }
        buffer.device().bind()?;
        let flags = match check {
            PidCheck::Whitelist => result::IPC_EXPORT_PID_CHECK,
            PidCheck::Off => result::IPC_EXPORT_NO_PID_CHECK,
        };
        // SAFETY: the buffer's memory is live device memory of its size, and
        // stays so while the export owns the buffer (the key is closed
        // before the buffer drops).
        let key = unsafe {
            result::ipc_mem_get_export_key(
                buffer.as_raw_ptr().cast_mut(),
                buffer.size_bytes(),
                flags,
            )
        }?;
        let key = key_cstring(F, &key)?;
        Ok(IpcExport {
            buffer: ManuallyDrop::new(buffer),
            key,
        })
    }

    /// The key another process passes to [`IpcImport::open`].
    pub fn key(&self) -> &str {
        // The runtime's keys are ASCII; a lossy key would fail the import
        // with the runtime's error.
        self.key.to_str().unwrap_or_default()
    }

    /// Adds processes (ids from [`process_id`] in each) to the key's
    /// whitelist (`aclrtIpcMemSetImportPid`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty list; the runtime's.
    #[doc(alias = "aclrtIpcMemSetImportPid")]
    pub fn allow_pids(&self, pids: &[i32]) -> Result<()> {
        if pids.is_empty() {
            return Err(Error::invalid("IpcExport::allow_pids", "no process ids"));
        }
        self.bound()?;
        result::ipc_mem_set_import_pid(&self.key, pids)
    }

    /// The shared buffer.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }

    /// The shared buffer, to write: a view of all of it, not the buffer
    /// itself, so that safe code cannot swap another buffer in (and free the
    /// exported memory while importers still map it).
    ///
    /// ```compile_fail
    /// fn swap_out(e: &mut acl::ipc::IpcExport<f32>, other: &mut acl::DeviceBuffer<f32>) {
    ///     std::mem::swap(e.buffer_mut(), other);
    /// }
    /// ```
    pub fn buffer_mut(&mut self) -> DeviceSliceMut<'_, T> {
        whole_mut(&mut self.buffer)
    }

    fn bound(&self) -> Result<()> {
        self.buffer.device().bind()
    }

    /// Withdraws the key; returns the buffer (whatever the outcome).
    fn withdraw(&mut self) -> (DeviceBuffer<T>, Result<()>) {
        // SAFETY: called once, by `close` (which then forgets `self`) or by
        // `Drop`; the buffer is not used afterwards.
        let buffer = unsafe { ManuallyDrop::take(&mut self.buffer) };
        let closed = buffer.device().bind().and_then(|()| {
            // SAFETY: an exported key: closing it does not touch the memory.
            unsafe { result::ipc_mem_close(&self.key) }
        });
        (buffer, closed)
    }

    /// Withdraws the key (`aclrtIpcMemClose`) and gives the buffer back.
    ///
    /// # Errors
    ///
    /// The runtime's (the buffer is dropped then).
    #[doc(alias = "aclrtIpcMemClose")]
    pub fn close(self) -> Result<DeviceBuffer<T>> {
        let mut this = ManuallyDrop::new(self);
        let (buffer, closed) = this.withdraw();
        // SAFETY: `this` is forgotten: its key is dropped once, here.
        drop(unsafe { std::ptr::read(&this.key) });
        closed.map(|()| buffer)
    }
}

impl<T: DeviceRepr> Drop for IpcExport<T> {
    fn drop(&mut self) {
        let (buffer, closed) = self.withdraw();
        if let Err(e) = closed {
            release::record("IpcExport", e);
        }
        drop(buffer);
    }
}

/// Another process's exported memory, imported into this one as a
/// [`DeviceBuffer`] of `T` (`aclrtIpcMemImportByKey`).
///
/// Work queued on [`IpcImport::buffer`] is ordered like work on any buffer
/// of this process. Dropping the import waits for that work, then unmaps
/// the memory (`aclrtIpcMemClose`); a failure is recorded
/// ([`crate::take_release_errors`]), never a panic. [`IpcImport::close`]
/// reports it.
///
/// `Send + Sync` (as `DeviceBuffer<T>`): the key is a plain string, the
/// buffer a handle the host never dereferences.
#[derive(Debug)]
pub struct IpcImport<T: DeviceRepr> {
    /// Taken once, by `close` or `Drop`.
    buffer: ManuallyDrop<DeviceBuffer<T>>,
    key: CString,
    device: Device,
}

impl<T: DeviceRepr> IpcImport<T> {
    /// Imports `key` (from [`IpcExport::key`] in another process) on
    /// `device`, as `len` elements of `T`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a key with a NUL byte, `len == 0`, or
    /// `len` elements beyond the shared range (the import is closed
    /// again); the runtime's error for an unknown or closed key (107000),
    /// or a process not in the key's whitelist (207006).
    #[doc(alias = "aclrtIpcMemImportByKey")]
    #[doc(alias = "aclrtMemGetAddressRange")]
    pub fn open(device: &Device, key: &str, len: usize) -> Result<IpcImport<T>> {
        const F: &str = "IpcImport::open";
        let key = key_cstring(F, key)?;
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::invalid(F, format!("{len} elements overflow the address space"))
        })?;
        if bytes == 0 {
            return Err(Error::invalid(F, "an import of 0 elements"));
        }
        device.bind()?;
        let ptr = result::ipc_mem_import_by_key(&key, result::IPC_IMPORT_DEFAULT)?;
        let close = || {
            // SAFETY: nothing was queued on the memory yet.
            let _ = unsafe { result::ipc_mem_close(&key) };
        };
        let fits = match result::mem_get_address_range(ptr) {
            Ok((base, size)) => (ptr as usize - base as usize).saturating_add(bytes) <= size,
            Err(e) => {
                close();
                return Err(e);
            }
        };
        if !fits {
            close();
            return Err(Error::invalid(
                F,
                format!("{len} elements ({bytes} bytes) run past the memory the key shares"),
            ));
        }
        // SAFETY: `ptr` is device memory of `device` (mapped on it by the
        // import) holding `bytes` bytes (checked above); it stays mapped
        // until this import closes it, after the queued work (`close` and
        // `Drop` take the buffer back with `into_raw`, which waits for it).
        let buffer = unsafe { DeviceBuffer::from_raw_borrowed(device, ptr, len) };
        let buffer = match buffer {
            Ok(b) => b,
            Err(e) => {
                close();
                return Err(e);
            }
        };
        Ok(IpcImport {
            buffer: ManuallyDrop::new(buffer),
            key,
            device: device.clone(),
        })
    }

    /// The imported memory.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }

    /// The imported memory, to write: a view of all of it, not the buffer
    /// itself, so that safe code cannot swap it out and keep using it after
    /// the import is closed.
    ///
    /// ```compile_fail
    /// fn swap_out(i: &mut acl::ipc::IpcImport<f32>, other: &mut acl::DeviceBuffer<f32>) {
    ///     std::mem::swap(i.buffer_mut(), other);
    /// }
    /// ```
    pub fn buffer_mut(&mut self) -> DeviceSliceMut<'_, T> {
        whole_mut(&mut self.buffer)
    }

    /// Waits for the work queued on the memory, then unmaps it
    /// (`aclrtIpcMemClose`). Called once, by `close` (which then forgets
    /// `self`) or by `Drop`.
    fn release(&mut self) -> Result<()> {
        // SAFETY: called once (see above); the buffer is not used afterwards.
        let buffer = unsafe { ManuallyDrop::take(&mut self.buffer) };
        // Waits for the work this crate queued on it (borrowed memory is
        // only handed back, never freed).
        buffer.into_raw().map_err(|(e, _)| e)?;
        self.device.bind()?;
        // SAFETY: no work uses the memory any more (waited for above).
        unsafe { result::ipc_mem_close(&self.key) }
    }

    /// Closes the import: waits for the queued work that uses it, then
    /// unmaps the memory.
    ///
    /// # Errors
    ///
    /// The runtime's (from the wait, or from `aclrtIpcMemClose`).
    #[doc(alias = "aclrtIpcMemClose")]
    pub fn close(self) -> Result<()> {
        let mut this = ManuallyDrop::new(self);
        let released = this.release();
        // SAFETY: `this` is forgotten: its key and device are dropped once,
        // here.
        unsafe {
            drop(std::ptr::read(&this.key));
            drop(std::ptr::read(&this.device));
        }
        released
    }
}

impl<T: DeviceRepr> Drop for IpcImport<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            release::record("IpcImport", e);
        }
    }
}

//! Device memory.
//!
//! [`DeviceBuffer<T>`] owns `len` elements of `T` in an NPU's HBM
//! (`aclrtMalloc`), freed on drop (`aclrtFree`). Copies to and from host
//! slices are synchronous (`aclrtMemcpy`): they return when the data has
//! arrived. Note that `aclrtMemcpy`, unlike `cudaMemcpy`, does not wait for
//! work queued on streams; the stream-ordered API added with streams handles
//! that.
//!
//! Element types implement [`DeviceRepr`]: the integer types, `f32`, `f64`,
//! `half::f16` and `half::bf16`, or your own plain `#[repr(C)]` types through
//! an `unsafe impl`.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{DeviceBuffer, Device, Runtime};
//! let rt = Runtime::init()?;
//! let npu = Device::new(&rt, 0)?;
//! let buf = DeviceBuffer::from_host(&npu, &[1.0f32, 2.0, 3.0])?;
//! assert_eq!(buf.to_host_vec()?, vec![1.0, 2.0, 3.0]);
//! # Ok::<(), acl::Error>(())
//! ```

mod repr;
pub use repr::DeviceRepr;

use crate::error::{Error, Result};
use crate::{Device, release, result};
use acl_sys as sys;
use std::ffi::c_void;
use std::marker::PhantomData;

/// `len` elements of `T` in device memory, owned.
///
/// `Send + Sync`: the buffer is a handle to device memory; the host never
/// dereferences it, and every mutation goes through `&mut self`.
pub struct DeviceBuffer<T: DeviceRepr> {
    ptr: *mut c_void,
    len: usize,
    device: Device,
    _marker: PhantomData<T>,
}

// SAFETY: the pointer is device memory that the host never dereferences; the
// runtime's calls on it are thread-safe, and `&mut self` serialises writes.
unsafe impl<T: DeviceRepr> Send for DeviceBuffer<T> {}
// SAFETY: shared access only reads (copies out of) the buffer.
unsafe impl<T: DeviceRepr> Sync for DeviceBuffer<T> {}

impl<T: DeviceRepr> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("device", &self.device.ordinal())
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

fn byte_len<T>(function: &'static str, len: usize) -> Result<usize> {
    len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
        Error::invalid(
            function,
            format!("{len} elements overflow the address space"),
        )
    })
}

impl<T: DeviceRepr> DeviceBuffer<T> {
    /// Allocates `len` elements without initialising them.
    ///
    /// # Errors
    ///
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION` (207001) when the device is out of memory.
    ///
    /// # Safety
    ///
    /// The contents are unspecified until written; every element must be
    /// written before it is read (reading gives arbitrary but valid values of
    /// `T`, since `DeviceRepr` types accept any bit pattern).
    #[doc(alias = "aclrtMalloc")]
    pub unsafe fn uninit(device: &Device, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>("DeviceBuffer::uninit", len)?;
        device.bind()?;
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            result::malloc(bytes, sys::ACL_MEM_MALLOC_HUGE_FIRST)?
        };
        Ok(DeviceBuffer {
            ptr,
            len,
            device: device.clone(),
            _marker: PhantomData,
        })
    }

    /// Allocates `len` elements set to zero bytes.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::uninit`], or the runtime's error from `aclrtMemset`.
    #[doc(alias = "aclrtMemset")]
    pub fn zeroed(device: &Device, len: usize) -> Result<Self> {
        // SAFETY: every byte is written by the memset below before any read.
        let buf = unsafe { Self::uninit(device, len)? };
        let bytes = buf.size_bytes();
        if bytes > 0 {
            // SAFETY: `ptr` is a live device allocation of `bytes` bytes.
            unsafe { result::memset(buf.ptr, bytes, 0, bytes)? };
        }
        Ok(buf)
    }

    /// Allocates a buffer holding a copy of `data`.
    ///
    /// # Errors
    ///
    /// As [`DeviceBuffer::uninit`], or the runtime's error from `aclrtMemcpy`.
    #[doc(alias = "aclrtMemcpy")]
    pub fn from_host(device: &Device, data: &[T]) -> Result<Self> {
        // SAFETY: every element is written by the copy below before any read.
        let mut buf = unsafe { Self::uninit(device, data.len())? };
        buf.copy_from_host(data)?;
        Ok(buf)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The device the memory lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The raw device pointer, for passing to C APIs. Null for an empty buffer.
    pub fn as_raw_ptr(&self) -> *const c_void {
        self.ptr
    }

    /// The raw device pointer, for C APIs that write into the buffer.
    pub fn as_raw_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }

    /// Copies `data` into the buffer; the lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error
    /// from `aclrtMemcpy`.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.check_len("DeviceBuffer::copy_from_host", data.len())?;
        if self.len == 0 {
            return Ok(());
        }
        self.device.bind()?;
        let bytes = self.size_bytes();
        // SAFETY: `ptr` is a live device allocation of `bytes` bytes and
        // `data` a host slice of the same size.
        unsafe {
            result::memcpy(
                self.ptr,
                bytes,
                data.as_ptr().cast(),
                bytes,
                sys::ACL_MEMCPY_HOST_TO_DEVICE,
            )
        }
    }

    /// Copies the buffer into `out`; the lengths must be equal.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a length mismatch; the runtime's error
    /// from `aclrtMemcpy`.
    #[doc(alias = "aclrtMemcpy")]
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<()> {
        self.check_len("DeviceBuffer::copy_to_host", out.len())?;
        if self.len == 0 {
            return Ok(());
        }
        self.device.bind()?;
        let bytes = self.size_bytes();
        // SAFETY: `out` is a host slice of `bytes` bytes; `ptr` a live device
        // allocation of the same size. `T: DeviceRepr` accepts any bytes.
        unsafe {
            result::memcpy(
                out.as_mut_ptr().cast(),
                bytes,
                self.ptr,
                bytes,
                sys::ACL_MEMCPY_DEVICE_TO_HOST,
            )
        }
    }

    /// Copies the buffer into a new `Vec`.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtMemcpy`.
    pub fn to_host_vec(&self) -> Result<Vec<T>> {
        let mut out = Vec::with_capacity(self.len);
        // SAFETY: the copy below writes every element before `out` is
        // returned; on error the Vec is dropped with length 0.
        unsafe {
            let spare = std::slice::from_raw_parts_mut(out.as_mut_ptr(), self.len);
            self.copy_to_host(spare)?;
            out.set_len(self.len);
        }
        Ok(out)
    }

    fn check_len(&self, function: &'static str, other: usize) -> Result<()> {
        if other == self.len {
            Ok(())
        } else {
            Err(Error::invalid(
                function,
                format!(
                    "the host slice has {other} elements, the device buffer {}",
                    self.len
                ),
            ))
        }
    }

    /// Frees the memory now, reporting a failure instead of recording it.
    ///
    /// # Errors
    ///
    /// The runtime's error from `aclrtFree`.
    #[doc(alias = "aclrtFree")]
    pub fn close(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        let ptr = std::mem::replace(&mut self.ptr, std::ptr::null_mut());
        if ptr.is_null() {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: `ptr` came from aclrtMalloc, is freed only here (it was
        // swapped out above), and no queued work exists in this API.
        unsafe { result::free(ptr) }
    }
}

impl<T: DeviceRepr> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            release::record("DeviceBuffer", e);
        }
    }
}

//! Safe, idiomatic AscendCL: the runtime API of Huawei's CANN stack for
//! Ascend NPUs.
//!
//! # Concepts
//!
//! - [`Runtime`]: the process's AscendCL session (`aclInit` … `aclFinalize`),
//!   reference-counted; everything else holds one, so finalization comes last.
//! - [`Device`]: one NPU. Each call binds it to the calling thread first, so
//!   handles work from any thread (no `ACL_ERROR_RT_CONTEXT_NULL`).
//! - [`DeviceBuffer`]: typed device memory with copies to and from the host.
//! - [`Error`]: every failure, with the AscendCL code and its name, the C
//!   function, and the runtime's own message.
//!
//! # Layers
//!
//! `acl_sys` (raw FFI, loaded at run time) → [`result`] (one thin
//! `Result`-returning function per C function) → the safe types here.
//!
//! # Backends
//!
//! The library is found at run time (see `acl_sys::loader`): a real CANN
//! install (`$ASCEND_HOME_PATH`, or `$CANN_ACL_LIB`), or the simulator when
//! the program installs it (`cann_sim::install()`). This crate never falls
//! back to the simulator by itself.
//!
//! # Example
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, DeviceBuffer, Runtime};
//!
//! let rt = Runtime::init()?;
//! println!("{} NPUs ({})", rt.device_count()?, rt.soc_name()?);
//! let npu = Device::new(&rt, 0)?;
//! let x = DeviceBuffer::from_host(&npu, &[1u32, 2, 3])?;
//! assert_eq!(x.to_host_vec()?, [1, 2, 3]);
//! # Ok::<(), acl::Error>(())
//! ```

pub mod aclnn;
pub mod allocator;
pub mod device;
pub mod error;
pub mod event;
pub mod host_work;
pub mod kernel;
pub mod memory;
pub mod model;
pub mod op;
pub mod ops;
pub mod release;
pub mod result;
pub mod runtime;
pub mod stream;
mod sync;
pub mod vmm;

pub use device::{Device, DeviceAttribute, MemoryInfo};
pub use error::{Error, ErrorCode, Result};
pub use event::{Event, EventFlags};
pub use host_work::CallbackMode;
pub use memory::{
    DataType, DeviceBuffer, DeviceMemory, DeviceMemoryMut, DeviceRepr, DeviceSlice, DeviceSliceMut,
    Element, PinnedHostBuffer,
};
pub use model::{Model, ModelDesc};
pub use ops::Tensor;
pub use release::{ReleaseError, take_release_errors};
pub use runtime::{Runtime, Version};
pub use stream::{Stream, StreamConfig};

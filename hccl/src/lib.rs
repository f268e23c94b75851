//! Safe HCCL: collective communication between Huawei Ascend NPUs — in one
//! process, across processes, across hosts.
//!
//! # Concepts
//!
//! - [`RootInfo`]: the 4,108-byte blob that names a communicator; rank 0's
//!   process makes it, every rank needs it. [`bootstrap`] moves it over TCP
//!   using the environment launchers set (`RANK`, `WORLD_SIZE`,
//!   `MASTER_ADDR`, `MASTER_PORT`…).
//! - [`Comm`]: one rank's communicator, created from a root info, a rank
//!   table ([`RankTable`]), several root infos ([`Comm::init_root_infos`]),
//!   for all devices of a process ([`Comm::init_all`]), or as a
//!   sub-communicator. Options in [`CommConfig`].
//! - [Collectives](collectives): all-reduce, broadcast, reduce, all-gather(-v),
//!   reduce-scatter(-v), scatter, all-to-all(-v, -vc), send/recv, batches,
//!   barrier, [`group`]s — methods of [`Comm`] that queue work on an `acl`
//!   stream, over typed device buffers ([`HcclType`]), with lengths checked
//!   against the communicator's size and stream-ordered memory safety.
//! - [`config`]: a new communicator's options ([`CommConfig`]), and deterministic
//!   reductions and the collective engine,
//!   process-wide or per communicator; which config items the library reads.
//! - [`Window`] (registered device memory, exchanged with peers) and
//!   [`MemoryRange`] / [`ActiveMemory`] (virtual memory from `acl::vmm`
//!   given to a communicator).
//! - [`launch`]: start N local ranks of a program, like `torchrun`.
//! - [`Error`]: every failure, with the HCCL code by name, the C function,
//!   and the library's message.
//!
//! # Layers
//!
//! `hccl-sys` (raw FFI, loaded at run time) → [`result`] (one thin
//! `Result`-returning function per HCCL function, named by a fixed rule: the
//! C name without `Hccl`, in snake_case — `HcclCommInitRootInfoConfig` →
//! [`result::comm_init_root_info_config`], `HcclAllReduce` →
//! [`result::all_reduce`], `HcclGetRootInfo` → [`result::get_root_info`]) →
//! the safe types here, as in cudarc. [`result`] is the only module that
//! names the -sys crates (`hccl-sys`, and `cann-acl-sys` for AscendCL's
//! types; checked by `cargo xtask lint`); the C types the safe types
//! hold come from [`result::raw`]. Each [`result`] function, and each safe
//! method that calls C, carries `#[doc(alias = "<C name>")]`, so rustdoc's
//! search finds it by the C name. AscendCL itself is reached through the
//! `acl` crate.
//!
//! # Backends
//!
//! HCCL is loaded at run time (`libhccl.so` of a CANN install, or
//! `$CANN_HCCL_LIB`); `cann_sim::install()` puts the simulator in its place,
//! whose ranks connect over real TCP sockets and, on one host, read each
//! other's device memory directly (`HCCL_INTRA_ROCE_ENABLE=1`: TCP only).
//!
//! # Example: two ranks as threads
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, DeviceBuffer, Runtime};
//! use hccl::{Comm, CommConfig, RootInfo};
//!
//! let rt = Runtime::init()?;
//! let root = RootInfo::for_device(&Device::new(&rt, 0)?)?;
//! let ranks: Vec<_> = (0..2u32)
//!     .map(|rank| {
//!         let (rt, root) = (rt.clone(), root.clone());
//!         std::thread::spawn(move || -> Result<Vec<i32>, hccl::Error> {
//!             let npu = Device::new(&rt, rank)?;
//!             let comm = Comm::init_root_info(&npu, &root, 2, rank, &CommConfig::default())?;
//!             let stream = npu.new_stream()?;
//!             let mine = DeviceBuffer::from_host(&npu, &[rank as i32 * 10; 3])?;
//!             let mut all = DeviceBuffer::<i32>::zeroed(&npu, 6)?;
//!             comm.all_gather(&mine, &mut all, &stream)?;
//!             stream.synchronize()?;
//!             Ok(all.to_host_vec()?)
//!         })
//!     })
//!     .collect();
//! for r in ranks {
//!     assert_eq!(r.join().unwrap()?, [0, 0, 0, 10, 10, 10]);
//! }
//! # Ok::<(), hccl::Error>(())
//! ```

#![deny(missing_docs)]

pub mod bootstrap;
pub mod collectives;
pub mod comm;
pub mod config;
pub mod error;
pub mod launch;
pub mod ranktable;
pub mod release;
pub mod result;
pub mod root_info;

pub mod types;
pub mod window;

pub use bootstrap::{BootstrapConfig, exchange_root_info, init_comm};
pub use collectives::{P2pOp, group};
pub use comm::Comm;
pub use config::{Accelerator, ConfigCapability, ConfigItem};
pub use config::{CommConfig, Determinism};
pub use error::{BootstrapErrorKind, Error, ErrorCode, Result};
pub use ranktable::RankTable;
pub use release::{ReleaseError, take_release_errors};
pub use root_info::{ROOT_INFO_BYTES, RootInfo};
pub use types::{DataType, HcclType, ReduceOp};
pub use window::{ActiveMemory, MemoryRange, Window};

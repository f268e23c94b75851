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
//!   Memory the crate allocates (directly with `aclrtMalloc` or from the
//!   caching allocator) starts at a multiple of 512 bytes
//!   ([`allocator::ALIGNMENT`], the driver's alignment, on a real device and
//!   on cann-sim; the API reference promises 64); a buffer made with
//!   `from_raw` starts wherever its pointer does, and slices and views at
//!   their offset.
//! - [`Tensor`], [`TensorView`], [`TensorViewMut`]: device memory with a
//!   shape; views add strides and an offset, so slices and transposes cost
//!   no copy. [`ops`] runs CANN's operators on any of them (see [`tensor`]).
//! - [`graph`]: work captured once and launched many times.
//! - [`Error`]: every failure, with the AscendCL code and its name, the C
//!   function, and the runtime's own message.
//!
//! # Operators: which module
//!
//! The crate reaches CANN's operators three ways:
//!
//! - [`ops`]: typed functions over tensors and views
//!   (`ops::matmul(&s, &a, &b, &mut c)`), shapes checked before any C call,
//!   built on aclnn. Start here.
//! - [`aclnn`]: the two-phase API torch_npu uses, one function per operator
//!   of the operator table (`acl-sys/operators.toml`), with the C arguments
//!   in the C order over argument objects ([`aclnn::TensorArg`] from a view
//!   or a raw layout, [`aclnn::Scalar`], [`aclnn::IntArray`], ...). Use it
//!   for the operators `ops` does not type, to keep argument objects across
//!   calls, or to pass options `ops` fixes (`cubeMathType`).
//! - [`aclop`]: any CANN operator by name, with descriptions and attributes
//!   written by hand (`aclopExecuteV2`), and compiled handles: the legacy
//!   single-operator API, for operators neither of the others has.
//!
//! # Layers
//!
//! `acl_sys` (raw FFI, loaded at run time) → [`result`] (one thin
//! `Result`-returning function per C function, named by a fixed rule:
//! `aclrtMalloc` → [`result::malloc`], `aclmdlLoadFromFile` →
//! [`result::mdl_load_from_file`]) → the safe types here. [`result`] is the
//! only module that names `acl_sys` (checked by a test); the C types the safe
//! types hold come from [`result::raw`]. A safe method that calls C carries
//! `#[doc(alias = "<C name>")]`, so rustdoc's search finds it by the C name.
//!
//! # Backends
//!
//! The library is found at run time (see `acl_sys::loader`): a real CANN
//! install (`$ASCEND_HOME_PATH`, or `$CANN_ACL_LIB`), or the simulator when
//! the program installs it (`cann_sim::install()`). This crate never falls
//! back to the simulator by itself.
//!
//! # Safety model
//!
//! Safe code using this crate cannot reach undefined behaviour, on the host
//! or on the device, whatever it does with threads, drops, panics and errors.
//! This is how (compared with cudarc, the reference for CUDA):
//!
//! | | acl | cudarc |
//! |---|---|---|
//! | what is tracked | per allocation: the last write and every read since, one mark per stream ([`memory::track`]) | per `CudaSlice`: one write event and one read event (the last reader only) |
//! | ordering a use on stream S | S waits on the device for the conflicting marks of other streams | the same, with its two events |
//! | events | only once a second stream queues work in the process, or host work is launched (single-stream programs make no event calls and no waits); during a capture and until memory it initialises has been written by a launch, then off again; pooled, `aclrtCreateEventExWithFlag` where available | only in multi-stream mode; created per slice |
//! | host copies | wait on the host for exactly the conflicting marks, then `aclrtMemcpy` | `cuMemcpy*Async` + stream synchronize |
//! | free | never waits: after the marks' events (deferred list; CANN has no stream-ordered free), or back to the caching allocator's stream pool with events for other streams | `cuMemFreeAsync` after waiting for its events |
//! | pinned host memory | tracked like device memory; `as_slice` waits under the buffer's lock and returns a guard ([`memory::PinnedRef`]) that no graph launch can coexist with | event of the last use, synchronized before host access |
//! | registered host memory | [`memory::RegisteredHostBuffer`] owns the `Vec`: device memory to the tracking, host views as pinned memory's; unregistered and dropped only after its last queued access and its last holder (a graph) | — |
//! | work that keeps memory alive | captured graphs hold every allocation their work uses (temporaries included) for their whole life; HCCL groups hold the allocations (and a communicator dropped inside) until `HcclGroupEnd` has queued the work; `close` of memory something else holds releases only the handle | graphs track no buffers |
//! | graph capture | see below | `CudaGraph`: neither `Send` nor `Sync`, no buffer tracking; the user keeps memory alive and ordered |
//! | across devices | CANN cannot wait for another device's event: an error, unless the work has finished | cross-device event waits |
//! | misuse detection in tests | cann-sim's `CANN_SIM_CHECK` (frees in use, races, use after free, double destroys), on for the whole test suite | compute-sanitizer |
//!
//! Checked at run time (an [`Error`], never a panic): lengths and devices of
//! every copy and operator argument, descriptions against buffer sizes, a
//! wait that would need another device's event, AscendCL calls (including
//! allocation and device teardown) from inside host functions, overflowing
//! sizes. Tested: every public type's `Send`/`Sync` (`tests/send_sync.rs`),
//! and each soundness bug found so far has a regression test
//! (`tests/ordering.rs`, `hccl/tests/ordering.rs`).
//!
//! ## Graph capture, joined streams and raw work
//!
//! What [`graph`] guarantees, point by point (cudarc's `CudaGraph` tracks
//! no buffers and is neither `Send` nor `Sync`, so none of this is its
//! business there — it is the user's):
//!
//! - **Memory**: a [`graph::Graph`] holds every allocation its captured
//!   work (and its task updates) uses until it is dropped; nothing it uses
//!   can be freed or handed to another buffer while a launch may run.
//!   `close` of such memory releases only the handle.
//! - **Launches**: each launch is one step — wait for the conflicting
//!   marks, enqueue, record — under the graph's own lock, so two threads
//!   launching one graph on two streams are ordered one after the other
//!   (the graph is `Send + Sync`). A launch writes its buffers through
//!   `&self`, so other threads may use them meanwhile: it is queued only
//!   while no use of its memory is between its wait and its commit, and a
//!   use that begins meanwhile waits for the launch's marks (launches are
//!   queued one at a time in the process; a use held open for 2 s makes
//!   the launch fail, saying so). [`Model::execute`] holds its model's
//!   lock the same way, and counts the model's work memory (which only the
//!   model reaches) as written by every execution.
//! - **Pinned memory**: a launch refuses to queue while a host view
//!   ([`PinnedHostBuffer::as_slice`], `as_mut_slice`) of pinned memory the
//!   graph uses is alive; a view taken after a launch waits for it. A
//!   `&[T]` therefore never changes under its holder.
//! - **Unwritten memory**: memory allocated on a capturing stream is
//!   written by captured work, which has not run: until the graph is
//!   launched, a host read or a read queued outside the graph is an error
//!   (a synchronous whole copy, as [`Stream::clone_from_host`] in a
//!   relaxed capture, writes it now). Such memory keeps marks with events
//!   on (the path that refuses the read) until then, even in a program
//!   that uses one stream alone. A launch stopped by [`graph::Graph::abort`]
//!   may leave it unwritten: its contents are then unspecified (any
//!   `DeviceRepr` value), not an error.
//! - **Joined streams**: a stream that waits for an event recorded in a
//!   capture ([`Stream::wait_event`], [`Stream::wait_for`]) joins it, as
//!   the runtime does: its work is recorded into the graph (temporaries
//!   kept) until the capture ends.
//! - **One step per stream**: queueing tracked work enters the stream's
//!   gate from its wait to its commit; beginning, joining or ending a
//!   capture holds it exclusively, so work is wholly in a capture or wholly
//!   out, whatever other threads do.
//! - **Raw work**: [`memory::record`] marks accesses made by work queued
//!   outside the crate; a mark on a second stream ends single-stream mode
//!   first, so later uses wait for it.
//!
//! `unsafe`, because the crate cannot check it:
//!
//! - reading memory never written: [`Stream::alloc`], [`DeviceBuffer::uninit`];
//! - what a kernel does with its arguments: [`kernel::Kernel::launch`];
//! - calls that invalidate live handles: [`result::set_device`],
//!   [`result::reset_device`], [`result::finalize`], and installing a
//!   function table (`acl_sys::install`);
//! - the raw block API of the caching allocator:
//!   [`CachingAllocatorHandle::raw`](memory::CachingAllocatorHandle::raw);
//! - every [`result`] function that takes a raw pointer or handle.
//!
//! Raw device pointers are available safely ([`DeviceBuffer::as_raw_ptr`]);
//! work queued with them outside this crate is ordered with
//! [`memory::prepare`] and [`memory::Prepared::commit`], as the crate's own
//! calls are.
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
pub mod aclop;
pub mod allocator;
#[cfg(feature = "async")]
pub mod completion;
pub mod device;
pub mod dump;
pub mod error;
pub mod event;
pub mod graph;
pub mod host_work;
pub mod ipc;
mod kept;
pub mod kernel;
mod lock;
pub mod memory;
pub mod model;
pub mod ops;
pub mod profiler;
pub mod random;
pub mod reduce;
pub mod release;
pub mod result;
pub mod runtime;
pub mod stream;
pub mod tdt;
pub mod tensor;
pub mod vmm;

pub use device::{Device, DeviceAttribute, DeviceFeature, MemoryInfo};
pub use error::{Error, ErrorCode, Result};
pub use event::{Event, EventFlags, SignedDuration};
pub use host_work::CallbackMode;
pub use memory::{
    DataType, DeviceBuffer, DeviceMemory, DeviceMemoryMut, DeviceRepr, DeviceSlice, DeviceSliceMut,
    Element, PinnedHostBuffer,
};
pub use model::{Model, ModelDesc};
pub use reduce::ReduceKind;
pub use release::{ReleaseError, take_release_errors};
pub use runtime::{OverflowMode, RunMode, Runtime, Version};
pub use stream::{Stream, StreamConfig, ValueCondition};
pub use tensor::{DynTensor, DynView, DynViewMut, Tensor, TensorView, TensorViewMut};

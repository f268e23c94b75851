//! The `Send`/`Sync` decision of every public type of `acl`, as its docs
//! state it, checked at compile time: a type that gains or loses either
//! trait breaks this file's build.
//!
//! One type is `Send` without `Sync`: `profiler::tx::Stamp` (the runtime
//! writes event times into it without a lock). The "neither" types are
//! checked with an ambiguous-impl probe: `<T as NotSend<_>>::PROBE` names
//! one impl when `T` is not `Send`, and is ambiguous (a compile error) when
//! it is.

#![allow(dead_code, reason = "compile-time checks")]

use acl::aclnn::{
    BoolArray, CubeMathType, FloatArray, IntArray, Layout, Scalar, TensorArg, TensorArgMut,
    TensorList,
};
use acl::aclop::{CompileFlag, Format, HandleLaunch, OpAttr, OpHandle, Operator, TensorDesc};
use acl::allocator::{
    AllocatorConfig, AllocatorStats, Backend, Block, BlockInfo, BlockState, CachingAllocator,
    PoolKind, PoolStats, SegmentInfo, Stat,
};
use acl::kernel::{Kernel, KernelArgs, KernelBinary};
use acl::memory::{
    Access, Allocation, CachingAllocatorHandle, DeviceAllocator, DeviceBackend, Prepared,
};
use acl::model::{Gear, Gears, MemorySize, TensorInfo};
use acl::vmm::{Mapping, PhysicalMemory, VirtualRange};
use acl::{
    CallbackMode, DataType, Device, DeviceAttribute, DeviceBuffer, DeviceRepr, DeviceSlice,
    DeviceSliceMut, Element, Error, ErrorCode, Event, EventFlags, MemoryInfo, Model, ModelDesc,
    PinnedHostBuffer, ReleaseError, Runtime, Stream, StreamConfig, Tensor, TensorView,
    TensorViewMut, Version,
};

fn send_sync<T: ?Sized + Send + Sync>() {}

/// Resolves to one impl exactly when `Self` is not `Send`.
trait NotSend<Which> {
    const PROBE: () = ();
}
impl<T: ?Sized> NotSend<()> for T {}
struct IsSend;
impl<T: ?Sized + Send> NotSend<IsSend> for T {}

/// Resolves to one impl exactly when `Self` is not `Sync`.
trait NotSync<Which> {
    const PROBE: () = ();
}
impl<T: ?Sized> NotSync<()> for T {}
struct IsSync;
impl<T: ?Sized + Sync> NotSync<IsSync> for T {}

/// Neither `Send` nor `Sync`, for each type given.
macro_rules! neither {
    ($($t:ty),* $(,)?) => {
        $(
            let () = <$t as NotSend<_>>::PROBE;
            let () = <$t as NotSync<_>>::PROBE;
        )*
    };
}

/// Handles to runtime objects, documented `Send + Sync`: any thread may use
/// them, each call binds the device first.
#[test]
fn runtime_handles_are_send_and_sync() {
    send_sync::<Runtime>();
    send_sync::<acl::dump::Dump>();
    send_sync::<acl::dump::DumpCallback>();
    send_sync::<acl::dump::OpArgsDump>();
    send_sync::<acl::dump::DumpConfig>();
    send_sync::<acl::dump::DumpMode>();
    send_sync::<acl::dump::DumpChunk<'static>>();
    send_sync::<Device>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<Model>();
    send_sync::<acl::graph::Graph>();
    send_sync::<acl::graph::TaskGroup>();
    send_sync::<acl::graph::CaptureMode>();
    send_sync::<acl::graph::CaptureStatus>();
    send_sync::<ModelDesc>();
    send_sync::<KernelBinary>();
    send_sync::<Kernel>();
    send_sync::<KernelArgs<'static>>();
    send_sync::<OpHandle>();
    send_sync::<OpAttr>();
    send_sync::<TensorDesc>();
    send_sync::<VirtualRange>();
    send_sync::<PhysicalMemory>();
    send_sync::<Mapping<'static>>();
    send_sync::<Scalar>();
    send_sync::<IntArray>();
    send_sync::<FloatArray>();
    send_sync::<BoolArray>();
    send_sync::<TensorList<'static>>();
    // Views stand for `&[T]` / `&mut [T]` of device memory: both.
    send_sync::<TensorView<'static, f32>>();
    send_sync::<TensorViewMut<'static, f32>>();
    // Page attention's caches: views and a slice, shared.
    send_sync::<acl::ops::PagedKv<'static, half::f16>>();
    // The run-time-typed forms hold one of those.
    send_sync::<acl::DynTensor>();
    send_sync::<acl::DynView<'static>>();
    send_sync::<acl::DynViewMut<'static>>();
}

/// Device and pinned memory, documented `Send + Sync` for every element
/// type: checked generically, so for all `T`, not just a sample.
#[test]
fn memory_is_send_and_sync_for_every_element_type() {
    fn any_repr<T: DeviceRepr>() {
        send_sync::<DeviceBuffer<T>>();
        send_sync::<DeviceSlice<'static, T>>();
        send_sync::<DeviceSliceMut<'static, T>>();
        send_sync::<PinnedHostBuffer<T>>();
        send_sync::<acl::memory::RegisteredHostBuffer<T>>();
    }
    send_sync::<Allocation>();
    send_sync::<Access>();
    send_sync::<Prepared<'static, Vec<Access>>>();
    fn any_element<T: Element>() {
        send_sync::<Tensor<T>>();
    }
    any_repr::<f32>();
    any_repr::<half::bf16>();
    any_element::<half::f16>();
    any_element::<i64>();
}

/// The caching allocator takes one internal mutex per operation, so it is
/// `Send + Sync` over any backend; its blocks and snapshots are plain data
/// (`Send + Sync` when their stream identity is).
#[test]
fn allocator_types_are_send_and_sync() {
    fn any_backend<B: Backend>() {
        send_sync::<CachingAllocator<B>>();
        send_sync::<Block<B::Stream>>();
        send_sync::<SegmentInfo<B::Stream>>();
    }
    any_backend::<DeviceBackend>();
    send_sync::<DeviceAllocator>();
    send_sync::<DeviceBackend>();
    send_sync::<CachingAllocatorHandle>();
    // `BackendEvent`, reachable only as the backend's event type.
    send_sync::<<DeviceBackend as Backend>::Event>();
    send_sync::<AllocatorConfig>();
    send_sync::<AllocatorStats>();
    send_sync::<PoolStats>();
    send_sync::<Stat>();
    send_sync::<BlockInfo>();
    send_sync::<BlockState>();
    send_sync::<PoolKind>();
}

/// Plain values (errors, enums, descriptions of things): `Send + Sync`.
#[test]
fn plain_values_are_send_and_sync() {
    send_sync::<Error>();
    send_sync::<ErrorCode>();
    send_sync::<ReleaseError>();
    send_sync::<Version>();
    send_sync::<DataType>();
    send_sync::<DeviceAttribute>();
    send_sync::<MemoryInfo>();
    send_sync::<EventFlags>();
    send_sync::<StreamConfig>();
    send_sync::<CallbackMode>();
    send_sync::<Format>();
    send_sync::<CompileFlag>();
    send_sync::<Gear>();
    send_sync::<Gears>();
    send_sync::<MemorySize>();
    send_sync::<TensorInfo>();
    send_sync::<Layout>();
    send_sync::<CubeMathType>();
    send_sync::<acl::DeviceFeature>();
    send_sync::<acl::memory::Bool>();
    send_sync::<acl::memory::PinnedPoolStats>();
    send_sync::<acl::memory::PinnedPool>();
}

/// The built-in tasks, markers, the external allocator and the training
/// operators' types (session 9): as their docs state.
#[test]
fn task_marker_allocator_and_training_types_are_as_documented() {
    send_sync::<acl::ReduceKind>();
    send_sync::<acl::random::task::RandomCounter>();
    send_sync::<acl::random::task::Distribution<f32>>();
    send_sync::<acl::profiler::tx::Range<'static>>();
    send_sync::<acl::profiler::tx::StepInfo>();
    send_sync::<acl::allocator::external::AllocatorRegistration<'static>>();
    // A stamp moves between threads but is not shared by them.
    fn send<T: Send>() {}
    send::<acl::profiler::tx::Stamp<'static>>();
    let () = <acl::profiler::tx::Stamp<'static> as NotSync<_>>::PROBE;
    // The training operators' gradient choices and results: plain data
    // over views and tensors.
    send_sync::<acl::ops::Grads<'static, f32>>();
    send_sync::<acl::ops::GradTensors<f32>>();
    send_sync::<acl::ops::Reduction>();
}

/// Argument builders that hold raw runtime handles for one call on the
/// thread that made them: neither `Send` nor `Sync`.
#[test]
fn per_call_argument_builders_are_neither_send_nor_sync() {
    neither!(
        Operator<'static>,
        HandleLaunch<'static, 'static>,
        TensorArg<'static>,
        TensorArgMut<'static>,
    );
}

fn unwind_safe<T: ?Sized + std::panic::RefUnwindSafe + std::panic::UnwindSafe>() {}

/// `RefUnwindSafe`/`UnwindSafe` (issue 22): a handle observed after a panic
/// caught with `catch_unwind` is in a consistent state — the memory
/// record's locks are never left half-updated (a panic between its steps
/// at most leaves marks that make later uses wait longer), and runtime
/// objects keep their state in the runtime. So the memory and runtime
/// handles are both, and can cross `catch_unwind` by reference.
#[test]
fn handles_are_unwind_safe() {
    unwind_safe::<Device>();
    unwind_safe::<Stream>();
    unwind_safe::<Event>();
    unwind_safe::<DeviceBuffer<f32>>();
    unwind_safe::<PinnedHostBuffer<f32>>();
    unwind_safe::<acl::memory::RegisteredHostBuffer<f32>>();
    unwind_safe::<Allocation>();
    unwind_safe::<Access>();
    unwind_safe::<acl::graph::Graph>();
    unwind_safe::<Tensor<f32>>();
    unwind_safe::<Model>();
    unwind_safe::<PhysicalMemory>();
    unwind_safe::<Runtime>();
    unwind_safe::<acl::ops::PagedKv<'static, half::f16>>();
}

//! The simulator's aclnn: the core objects of `libnnopbase.so` and the
//! two-phase operators of `libopapi.so`, on the CPU kernels of [`crate::ops`].
//!
//! - **Objects** (`aclCreateTensor`, `aclCreateScalar`, `aclCreateIntArray`,
//!   ...) live in handle tables: a pointer handed back is looked up, never
//!   dereferenced. A null handle is `ACLNN_ERR_PARAM_NULLPTR` (161001); an
//!   unknown or destroyed one `ACLNN_ERR_PARAM_INVALID` (161002). Destroying
//!   null is a no-op, as `delete nullptr` is. A tensor list owns its
//!   tensors: `aclDestroyTensorList` destroys them (as CANN's does). With
//!   the check mode on, destroying an object twice is a `double-destroy`
//!   report ([`crate::check`]).
//! - **`aclnnXxxGetWorkspaceSize`** checks the arguments and infers the output
//!   with [`crate::ops::infer`] (CANN's dtype and shape rules): a mismatch
//!   — dtypes that do not combine, an `out` of the wrong shape or dtype — is
//!   161002. It returns a workspace size of 0 and an executor, which runs
//!   once (or is released with `aclDestroyAclOpExecutor`).
//! - **`aclnnXxx`** validates the memory (live device memory of the current
//!   context's device) and queues the kernel on the stream through the path
//!   `aclopExecuteV2` uses (`rt::op`). A runtime failure (bad stream,
//!   no context, bad memory) is `ACLNN_ERR_RUNTIME_ERROR` (361001) with the
//!   runtime's message recorded; faults of the queued kernel are reported by
//!   the next synchronisation, as for aclop.
//!
//! Views may be non-contiguous (any non-negative strides, a storage offset):
//! inputs are gathered into contiguous copies when the kernel runs, strided
//! outputs written back element by element; an output view whose elements
//! overlap is 161002.
//!
//! What the simulator does not do returns `ACLNN_ERR_INNER_FIND_KERNEL_ERROR`
//! (561003, "no kernel"): formats other than ND/NCHW/NHWC, a `dtype` other than the
//! input's in the reductions, `mode` 2 and 3 of
//! `aclnnRotaryPositionEmbedding`, and every aclnn function it does not
//! export.

mod objects;
pub use objects::*;

mod exec;

mod operators;

mod transformer;

mod backward;
mod inplace;
mod int4;
mod llama_extra;
pub use llama_extra::aclnnCalculateMatmulWeightSizeV2;
mod nn;
mod optim;
mod random;
mod table_dtypes;
mod tensorcore;
mod weight_quant;

mod generated;
pub use generated::*;

mod unsupported;
// Empty while every declared function is implemented.
#[allow(unused_imports)]
pub use unsupported::*;

pub use exec::live_handles;

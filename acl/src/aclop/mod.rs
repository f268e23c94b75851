//! Single operators (`aclop*`): tensor descriptions, attributes, and
//! executing one CANN operator on a stream.
//!
//! - [`TensorDesc`]: data type, shape and [`Format`] of an input or output,
//!   with name, storage format and shape, shape ranges and constant values.
//! - [`OpAttr`]: the operator's attributes, one setter per `aclopSetAttr*` kind.
//! - [`Operator`]: one execution — inputs and outputs are borrowed device
//!   buffers with their descriptions, checked (element type, size against
//!   shape × element size) before any C call — queued with
//!   [`Operator::execute`] (`aclopExecuteV2`) or
//!   [`Operator::compile_and_execute`] (`aclopCompileAndExecuteV2`); both
//!   refresh output descriptions with unknown dimensions.
//! - [`OpHandle`], an operator checked once and executed many times.
//! - [`cast()`], which calls `aclopCast`.
//! - [`set_compile_flag`], for static or dynamic ("fuzzy") compilation.
//!
//! Operator type names, input order and attribute names are CANN's (e.g.
//! `MatMul(x1, x2[, bias])` with `transpose_x1`/`transpose_x2`). For the
//! common operators, [`crate::ops`] has typed functions over
//! [`Tensor`](crate::Tensor)s that do this plumbing.
//!
//! Operators are asynchronous: `execute` returns once the operator is
//! queued; faults of the kernel surface at the next synchronisation.
//!
//! Which operator module to use when: [the crate docs](crate#operators-which-module).

mod attr;
mod desc;
pub(crate) mod exec;
mod handle;

pub use attr::OpAttr;
pub use desc::{Format, TensorDesc, UNKNOWN_DIM, UNKNOWN_RANK};
pub use exec::{Operator, cast};
pub use handle::{HandleLaunch, OpHandle};

use crate::error::Result;
use crate::result::{self, raw};

/// Destroys the calling thread's idle cached data buffers: each call keeps
/// the `aclDataBuffer`s of its arguments (up to 16 per thread) for the next
/// call over the same memory instead of destroying them. Buffers of calls
/// under way are kept until they return. Returns how many were destroyed.
#[doc(alias = "aclDestroyDataBuffer")]
pub fn release_cached_buffers() -> usize {
    crate::kept::release_idle::<exec::Buffers>()
}

/// How later `aclopCompileAndExecuteV2` calls compile.
///
/// `Send + Sync`: a plain value.
#[doc(alias = "aclOpCompileFlag")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompileFlag {
    /// `ACL_OP_COMPILE_DEFAULT`: one kernel per static shape.
    #[default]
    Default,
    /// `ACL_OP_COMPILE_FUZZ`: "fuzzy" compilation, one kernel for a range
    /// of shapes (dynamic shape).
    Fuzz,
}

/// Sets the compile flag for the process.
///
/// # Errors
///
/// The runtime's error.
#[doc(alias = "aclopSetCompileFlag")]
pub fn set_compile_flag(flag: CompileFlag) -> Result<()> {
    let raw = match flag {
        CompileFlag::Default => raw::ACL_OP_COMPILE_DEFAULT,
        CompileFlag::Fuzz => raw::ACL_OP_COMPILE_FUZZ,
    };
    result::op_set_compile_flag(raw)
}

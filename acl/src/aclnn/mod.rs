//! The two-phase operator API, aclnn (`libopapi.so` + `libnnopbase.so`),
//! which torch_npu uses: `aclnnXxxGetWorkspaceSize` plans one call and
//! returns the workspace it needs and an executor, `aclnnXxx` queues it.
//!
//! - [`Tensor`] / [`TensorMut`] describe device memory borrowed from a
//!   buffer (view dims, strides, offset, format, storage dims); [`Scalar`],
//!   [`IntArray`], [`FloatArray`], [`BoolArray`], [`TensorList`] are the
//!   other argument objects. Each owns its handle and destroys it on drop.
//! - The functions of this module ([`add`], [`matmul`], [`softmax`], ...)
//!   run both phases: the workspace comes from the stream's allocator (the
//!   device's caching allocator when enabled) and is released stream-ordered
//!   after the operator, as every buffer is (see [`crate::memory`]). Memory
//!   whose home is another stream is ordered with events, as for copies.
//!
//! Errors: a Rust-side problem (a view that does not fit its buffer) is
//! [`Error::InvalidArgument`] before any C call; an aclnn status is
//! [`Error::Acl`] with the status as its code (`161001` null pointer,
//! `161002` invalid parameter, `361001` runtime error, `561xxx` internal —
//! `561003` when the library has no kernel for the call) and the function
//! that returned it.
//!
//! # Which operator module
//!
//! This crate reaches CANN's operators three ways:
//!
//! - [`crate::ops`]: typed functions over owned [`crate::Tensor`]s
//!   (`ops::matmul(&s, &a, &b, &mut c)`), built on `aclop`. Start here for
//!   the common operators.
//! - [`crate::aclnn`]: the two-phase API torch_npu uses, over views
//!   (dims, strides, offset) of any buffer. Use it for views, for the
//!   operators only aclnn has, and where a framework expects aclnn's
//!   semantics.
//! - [`crate::aclop`]: any CANN operator by name, with descriptions and
//!   attributes written by hand (`aclopExecuteV2`), and compiled handles.
//!   Use it for operators neither of the others wraps.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use acl::{Device, Runtime, aclnn};
//!
//! let npu = Device::new(&Runtime::init()?, 0)?;
//! let s = npu.new_stream()?;
//! let a = s.clone_from_host(&[1.0f32, 2.0, 3.0, 4.0])?;
//! let b = s.clone_from_host(&[10.0f32, 20.0])?;
//! let mut c = s.alloc_zeros::<f32>(4)?;
//! let (ta, tb) = (aclnn::Tensor::new(&a, &[2, 2])?, aclnn::Tensor::new(&b, &[2])?);
//! let mut tc = aclnn::TensorMut::new(&mut c, &[2, 2])?;
//! aclnn::add(&s, &ta, &tb, &mut tc)?;
//! drop(tc);
//! assert_eq!(c.to_host_vec()?, [11.0, 22.0, 13.0, 24.0]);
//! # Ok::<(), acl::Error>(())
//! ```

mod inplace;
mod objects;
mod ops;

pub use inplace::*;
pub use objects::*;
pub use ops::*;

use crate::Stream;
use crate::error::{Error, Result};
use crate::result::{self, AclnnLaunch, raw};
use raw::{LoadError, aclOpExecutor, aclnnStatus};
use std::ffi::c_void;

use crate::error::check;

/// Runs both phases of one operator on `stream`. `plan` calls
/// `aclnnXxxGetWorkspaceSize` with the two out-pointers; `uses` are the
/// operator's accesses to memory.
fn two_phase(
    stream: &Stream,
    names: (&'static str, &'static str),
    uses: &[crate::memory::Access],
    plan: impl FnOnce(*mut u64, *mut *mut aclOpExecutor) -> Result<aclnnStatus, LoadError>,
    launch: AclnnLaunch,
) -> Result<()> {
    // An operator reads and writes the memory of its stream's device only
    // (cann-sim answers 361001 at launch otherwise; checked here first, so
    // the error names the argument).
    if let Some((i, u)) = uses
        .iter()
        .enumerate()
        .find(|(_, u)| u.allocation().device() != stream.device())
    {
        return Err(Error::invalid(
            names.0,
            format!(
                "argument {i} is memory of device {}, but the stream is on device {}",
                u.allocation().device().ordinal(),
                stream.device().ordinal()
            ),
        ));
    }
    let prepared = crate::memory::prepare(stream, uses)?;
    let mut ws: u64 = 0;
    let mut exec: *mut aclOpExecutor = std::ptr::null_mut();
    check(names.0, plan(&mut ws, &mut exec))?;
    let workspace = if ws > 0 {
        let len = usize::try_from(ws)
            .map_err(|_| Error::invalid(names.0, format!("workspace of {ws} bytes")))?;
        // SAFETY: the workspace is scratch memory the operator writes
        // before reading; it is never read on the host.
        match unsafe { stream.alloc::<u8>(len) } {
            Ok(b) => Some(b),
            Err(e) => {
                // SAFETY: the executor was made above and has not run.
                let _ = unsafe { result::destroy_acl_op_executor(exec) };
                return Err(e);
            }
        }
    } else {
        None
    };
    let ptr = workspace
        .as_ref()
        .map_or(std::ptr::null_mut(), |b| b.as_raw_ptr() as *mut c_void);
    // SAFETY: the executor came from the planning call; the workspace holds
    // `ws` bytes and outlives the operator (dropping it is stream-ordered).
    check(names.1, unsafe { launch(ptr, ws, exec, stream.as_raw()) })?;
    prepared.commit();
    if let Some(w) = &workspace {
        // The operator writes its workspace: freed after it has run.
        let alloc = crate::DeviceMemory::allocation(w);
        crate::memory::track::record_accesses(
            stream,
            &crate::memory::track::Seen::Unknown,
            [(alloc, true)].into_iter(),
        );
    }
    drop(workspace);
    Ok(())
}

//! What the two operator APIs share: validating the memory an operator
//! touches, and queueing its CPU kernel on a stream as an `Op` task.
//!
//! At the call, every device range is checked against the allocation table
//! (live, in bounds, device memory of the current device): a bad one is
//! `ACL_ERROR_RT_PARAM_INVALID` (107000), as for copies. When the task runs,
//! each range is checked again: memory freed (or reallocated) in between is
//! a fault of the queued task, `ACL_ERROR_RT_AICORE_EXCEPTION` (507015),
//! reported by the next synchronisation, as an AI Core exception is on a
//! device. A kernel that fails when it runs (a value-dependent check) is
//! reported the same way.
//!
//! Inputs that overlap an output (an in-place `Add`, say) are copied before
//! the kernel runs, so the kernel sees the values from before the call, as
//! a device kernel reading its inputs first does. Outputs that overlap each
//! other are refused at the call (107000): the result would be undefined.

use super::common::PARAM_INVALID;
use crate::ops::{self, Attrs, Input, Output, TensorSpec};
use crate::recent_error::fail;
use crate::rt::Stream;
use crate::rt::code;
use crate::rt::stream::{Expect, TaskKind};
use crate::state::{self, Region};
use acl_sys::{ACL_ERROR_RT_AICORE_EXCEPTION, ACL_SUCCESS, aclError};

/// Where an input's bytes come from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Device memory, validated at the call.
    Device {
        /// First byte.
        addr: usize,
        /// Where it must still be when the kernel runs.
        at: Expect,
    },
    /// Bytes taken at the call (a constant, or host-placed data).
    Host(Vec<u8>),
    /// An empty tensor: no bytes.
    Empty,
}

/// One input of a queued operator.
#[derive(Debug, Clone)]
pub(crate) struct LaunchInput {
    /// Type and shape.
    pub spec: TensorSpec,
    /// Its bytes.
    pub src: Source,
}

/// One output of a queued operator.
#[derive(Debug, Clone)]
pub(crate) struct LaunchOutput {
    /// Type and shape.
    pub spec: TensorSpec,
    /// First byte, and where it must still be (`None` for an empty tensor).
    pub dst: Option<(usize, Expect)>,
}

/// Validates `bytes` bytes of device memory at `addr` for an operator on
/// `device`: `None` for an empty range.
///
/// # Errors
///
/// 107000 (recorded, naming `function` and `what`) when the range is not
/// live device memory of `device`.
pub(crate) fn device_range(
    function: &str,
    what: &str,
    addr: usize,
    bytes: usize,
    device: u32,
) -> Result<Option<Expect>, aclError> {
    if bytes == 0 {
        return Ok(None);
    }
    if addr == 0 {
        return Err(fail(
            PARAM_INVALID,
            format!("{function}: {what}: the address is null but the tensor holds {bytes} bytes"),
        ));
    }
    let region = state::memory()
        .read()
        .check_range(addr, bytes)
        .map_err(|e| fail(PARAM_INVALID, format!("{function}: {what}: {e}")))?;
    match region {
        Region::Device { device: d, .. } if d == device => Ok(Expect::of(region)),
        Region::Device { device: d, .. } => Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: {what}: {addr:#x} is memory of device {d}, but the operator runs on \
                 device {device}"
            ),
        )),
        other => Err(fail(
            PARAM_INVALID,
            format!(
                "{function}: {what}: {addr:#x} is not device memory (it is {other}); operators \
                 read and write device memory only"
            ),
        )),
    }
}

fn overlaps(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// Queues `op_type` on `s`.
///
/// # Errors
///
/// 107000 when two outputs overlap; the stream's error when it is being
/// destroyed.
pub(crate) fn launch(
    function: &'static str,
    s: &Stream,
    op_type: String,
    attrs: Attrs,
    inputs: Vec<LaunchInput>,
    outputs: Vec<LaunchOutput>,
) -> aclError {
    let out_ranges: Vec<(usize, usize)> = outputs
        .iter()
        .filter_map(|o| o.dst.map(|(a, _)| (a, o.spec.bytes())))
        .collect();
    for (i, &(a, alen)) in out_ranges.iter().enumerate() {
        for &(b, blen) in &out_ranges[i + 1..] {
            if overlaps(a, alen, b, blen) {
                return fail(
                    PARAM_INVALID,
                    format!(
                        "{function}: {op_type}: two outputs overlap ({a:#x} + {alen} and {b:#x} + \
                         {blen} bytes); the result would be undefined"
                    ),
                );
            }
        }
    }
    let mut ranges = Vec::with_capacity(inputs.len() + outputs.len());
    for i in &inputs {
        if let Source::Device { addr, at } = i.src {
            ranges.push(("input", addr, i.spec.bytes(), at));
        }
    }
    for o in &outputs {
        if let Some((addr, at)) = o.dst {
            ranges.push(("output", addr, o.spec.bytes(), at));
        }
    }
    let kernel = Box::new(move || run_kernel(&op_type, &attrs, &inputs, &outputs));
    match s.enqueue(|_| TaskKind::Op {
        api: function,
        ranges,
        kernel,
    }) {
        Ok(_) => ACL_SUCCESS,
        Err((code, msg)) => fail(code, format!("{function}: {msg}")),
    }
}

/// Runs on the stream's worker, with every device range validated and the
/// allocation table's read lock held (see `rt::stream`).
fn run_kernel(
    op_type: &str,
    attrs: &Attrs,
    inputs: &[LaunchInput],
    outputs: &[LaunchOutput],
) -> Result<(), (aclError, String)> {
    let out_ranges: Vec<(usize, usize)> = outputs
        .iter()
        .filter_map(|o| o.dst.map(|(a, _)| (a, o.spec.bytes())))
        .collect();
    // Inputs that alias an output are copied first: a `&[u8]` and a
    // `&mut [u8]` over the same bytes may not coexist.
    let copies: Vec<Option<Vec<u8>>> = inputs
        .iter()
        .map(|i| match i.src {
            Source::Device { addr, .. } => {
                let len = i.spec.bytes();
                out_ranges
                    .iter()
                    .any(|&(b, blen)| overlaps(addr, len, b, blen))
                    .then(|| {
                        // SAFETY: a validated live device range of `len`
                        // bytes; no `&mut` to it exists yet.
                        unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec()
                    })
            }
            _ => None,
        })
        .collect();
    let ins: Vec<Input<'_>> = inputs
        .iter()
        .zip(&copies)
        .map(|(i, copy)| Input {
            spec: &i.spec,
            data: match (&i.src, copy) {
                (_, Some(c)) => c.as_slice(),
                (Source::Device { addr, .. }, None) => {
                    // SAFETY: a validated live device range that no output
                    // overlaps (those were copied above); only read.
                    unsafe { std::slice::from_raw_parts(*addr as *const u8, i.spec.bytes()) }
                }
                (Source::Host(bytes), None) => bytes.as_slice(),
                (Source::Empty, None) => &[],
            },
        })
        .collect();
    let mut outs: Vec<Output<'_>> = outputs
        .iter()
        .map(|o| Output {
            spec: &o.spec,
            data: match o.dst {
                // SAFETY: a validated live device range; outputs do not
                // overlap each other (refused at the call) nor any input
                // slice (those were copied).
                Some((addr, _)) => unsafe {
                    std::slice::from_raw_parts_mut(addr as *mut u8, o.spec.bytes())
                },
                None => &mut [],
            },
        })
        .collect();
    ops::run(op_type, &ins, attrs, &mut outs).map_err(|e| {
        (
            code(ACL_ERROR_RT_AICORE_EXCEPTION),
            format!("{op_type} kernel failed: {}", e.message()),
        )
    })
}

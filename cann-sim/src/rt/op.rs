//! Operator tasks, what the two operator APIs (`aclop*`, `aclnn*`) and the
//! model executor share: validating the memory an operator touches, and
//! queueing its CPU kernel ([`crate::ops`]) on a stream as an `Op` task.
//!
//! At the call, every device range is checked against the allocation table
//! (live, in bounds, device memory of the current device): a bad one is
//! [`ErrorKind::ParamInvalid`] (107000), as for copies. When the task runs,
//! each range is checked again: memory freed (or reallocated) in between is
//! a fault of the queued task, [`ErrorKind::KernelFault`]
//! (`ACL_ERROR_RT_AICORE_EXCEPTION`, 507015), reported by the next
//! synchronisation, as an AI Core exception is on a device. A kernel that
//! fails when it runs (a value-dependent check) is reported the same way.
//!
//! Inputs that overlap an output (an in-place `Add`, say) are copied before
//! the kernel runs, so the kernel sees the values from before the call, as
//! a device kernel reading its inputs first does. Outputs that overlap each
//! other are refused at the call (107000): the result would be undefined.

use super::Stream;
use super::error::{Error, ErrorKind};
use super::stream::{Expect, TaskKind, TaskRange};
use crate::check::Use;
use crate::ops::{self, Attrs, Input, Output, TensorSpec};
use crate::state::{self, Region};
use std::sync::Arc;

/// Where an input's bytes come from.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Device memory, validated at the call.
    Device {
        /// First byte.
        addr: usize,
        /// Where it must still be when the kernel runs.
        at: Expect,
        /// Element strides of a non-contiguous view (`None`: contiguous).
        strides: Option<Vec<i64>>,
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
    /// Element strides of a non-contiguous view (`None`: contiguous); its
    /// elements must not overlap each other.
    pub strides: Option<Vec<i64>>,
}

/// Bytes a view spans in memory, from its first element to past its last:
/// the contiguous size, or for strides `1 + Σ (dᵢ − 1)·sᵢ` elements.
/// Strides must not be negative.
pub(crate) fn span_bytes(spec: &TensorSpec, strides: Option<&[i64]>) -> usize {
    let Some(st) = strides else {
        return spec.bytes();
    };
    if spec.shape.iter().any(|&d| d <= 0) {
        return 0;
    }
    let last: i64 = spec
        .shape
        .iter()
        .zip(st)
        .map(|(&d, &s)| (d - 1).saturating_mul(s))
        .fold(0i64, i64::saturating_add);
    (last as usize + 1).saturating_mul(spec.dtype.size())
}

/// Calls `f(offset in the view's memory, offset in the contiguous layout,
/// bytes)` for each run of contiguous elements of the view (the innermost
/// dimension, when its stride is 1; else single elements), in row-major
/// order.
fn for_each_run(spec: &TensorSpec, strides: &[i64], mut f: impl FnMut(usize, usize, usize)) {
    let dims = &spec.shape;
    let esize = spec.dtype.size();
    if dims.iter().any(|&d| d <= 0) {
        return;
    }
    let n = dims.len();
    let (run, outer) = match (dims.last(), strides.last()) {
        (Some(&d), Some(&1)) => (d as usize, n - 1),
        (Some(_), Some(_)) => (1, n),
        _ => (1, 0),
    };
    let mut idx = vec![0i64; outer];
    let mut flat = 0usize;
    loop {
        let off: i64 = idx.iter().zip(strides).map(|(&i, &s)| i * s).sum();
        f(off as usize * esize, flat * esize, run * esize);
        flat += run;
        // Advance the odometer over the outer dimensions.
        let mut k = outer;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// The elements of the view at `addr`, contiguous.
///
/// # Safety
///
/// `[addr, addr + span_bytes(spec, strides))` must be readable.
unsafe fn gather(addr: usize, spec: &TensorSpec, strides: &[i64]) -> Vec<u8> {
    let mut out = vec![0u8; spec.bytes()];
    for_each_run(spec, strides, |at, flat, len| {
        // SAFETY: `at + len` lies within the view's span (the caller's
        // contract); `flat + len` within `out`, which holds every element.
        unsafe {
            std::ptr::copy_nonoverlapping((addr + at) as *const u8, out.as_mut_ptr().add(flat), len)
        };
    });
    out
}

/// Writes contiguous `data` into the view at `addr`.
///
/// # Safety
///
/// `[addr, addr + span_bytes(spec, strides))` must be writable and not
/// borrowed; `data` holds every element.
unsafe fn scatter(addr: usize, spec: &TensorSpec, strides: &[i64], data: &[u8]) {
    for_each_run(spec, strides, |at, flat, len| {
        // SAFETY: as in `gather`, the other way round.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr().add(flat), (addr + at) as *mut u8, len)
        };
    });
}

/// Validates `bytes` bytes of device memory at `addr` for an operator on
/// `device`: `None` for an empty range.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] (naming `what`) when the range is not live
/// device memory of `device`.
pub(crate) fn device_range(
    function: &str,
    what: &str,
    addr: usize,
    bytes: usize,
    device: u32,
) -> Result<Option<Expect>, Error> {
    if bytes == 0 {
        return Ok(None);
    }
    let invalid = |msg: String| Error::new(ErrorKind::ParamInvalid, msg);
    if addr == 0 {
        return Err(invalid(format!(
            "{what}: the address is null but the tensor holds {bytes} bytes"
        )));
    }
    let region = crate::check::range(&state::memory().read(), function, what, addr, bytes)
        .map_err(|e| invalid(format!("{what}: {e}")))?;
    match region {
        Region::Device { device: d, .. } if d == device => Ok(Expect::of(region)),
        Region::Device { device: d, .. } => Err(invalid(format!(
            "{what}: {addr:#x} is memory of device {d}, but the operator runs on device {device}"
        ))),
        other => Err(invalid(format!(
            "{what}: {addr:#x} is not device memory (it is {other}); operators read and write \
             device memory only"
        ))),
    }
}

fn overlaps(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// Queues `op_type` on `s`.
///
/// # Errors
///
/// [`ErrorKind::ParamInvalid`] when two outputs overlap; the stream's error
/// when it is being destroyed.
pub(crate) fn launch(
    function: &'static str,
    s: &Stream,
    op_type: String,
    attrs: Attrs,
    inputs: Vec<LaunchInput>,
    outputs: Vec<LaunchOutput>,
) -> Result<(), Error> {
    launch_kernel(function, s, Kernel::Named(op_type, attrs), inputs, outputs)
}

/// What a queued operator runs: a CANN operator of the library by type
/// ([`ops::run`]), or a kernel planned by its caller ([`ops::native::Native`]).
pub(crate) enum Kernel {
    /// An operator type and its attributes.
    Named(String, Attrs),
    /// A planned kernel.
    Native(ops::native::Native),
}

impl Kernel {
    fn name(&self) -> &str {
        match self {
            Kernel::Named(op_type, _) => op_type,
            Kernel::Native(n) => n.name,
        }
    }
}

/// Queues `kernel` on `s` (as [`launch`]).
///
/// # Errors
///
/// As [`launch`].
pub(crate) fn launch_kernel(
    function: &'static str,
    s: &Stream,
    kernel: Kernel,
    inputs: Vec<LaunchInput>,
    outputs: Vec<LaunchOutput>,
) -> Result<(), Error> {
    let op_type = kernel.name().to_string();
    let out_ranges = output_ranges(&outputs);
    for (i, &(a, alen)) in out_ranges.iter().enumerate() {
        for &(b, blen) in &out_ranges[i + 1..] {
            if overlaps(a, alen, b, blen) {
                return Err(Error::new(
                    ErrorKind::ParamInvalid,
                    format!(
                        "{op_type}: two outputs overlap ({a:#x} + {alen} and {b:#x} + {blen} \
                         bytes); the result would be undefined"
                    ),
                ));
            }
        }
    }
    let mut ranges = Vec::with_capacity(inputs.len() + outputs.len());
    for i in &inputs {
        if let Source::Device { addr, at, strides } = &i.src {
            ranges.push(TaskRange {
                what: "input",
                addr: *addr,
                len: span_bytes(&i.spec, strides.as_deref()),
                at: *at,
                how: Use::Read,
            });
        }
    }
    for o in &outputs {
        if let Some((addr, at)) = o.dst {
            ranges.push(TaskRange {
                what: "output",
                addr,
                len: span_bytes(&o.spec, o.strides.as_deref()),
                at,
                how: Use::Write,
            });
        }
    }
    let dump = crate::model::dump::active()
        .then(|| dump_launch(function, &op_type, s, &inputs, &outputs))
        .flatten();
    let kernel = Arc::new(move || match &dump {
        None => run_kernel(&kernel, &inputs, &outputs),
        Some(d) => {
            // SAFETY: on the worker, with every range validated and the
            // allocation table's read lock held (`rt::stream`).
            let before = unsafe { d.before() };
            run_kernel(&kernel, &inputs, &outputs)?;
            // SAFETY: as above.
            unsafe { d.after(before) };
            Ok(())
        }
    });
    s.enqueue(|_| TaskKind::Op {
        api: function,
        ranges,
        kernel,
    })
    .map(drop)
}

/// The data dump of an operator launch, when dumping is on
/// ([`crate::model::dump`]).
fn dump_launch(
    function: &'static str,
    op_type: &str,
    s: &Stream,
    inputs: &[LaunchInput],
    outputs: &[LaunchOutput],
) -> Option<crate::model::dump::Dumper> {
    use crate::model::dump::{Tensor, TensorData};
    let ins = inputs
        .iter()
        .map(|i| Tensor {
            spec: i.spec.clone(),
            data: match &i.src {
                Source::Device { addr, strides, .. } => {
                    TensorData::Device(*addr, span_bytes(&i.spec, strides.as_deref()))
                }
                Source::Host(b) => TensorData::Host(b.clone()),
                Source::Empty => TensorData::Empty,
            },
        })
        .collect();
    let outs = outputs
        .iter()
        .map(|o| Tensor {
            spec: o.spec.clone(),
            data: match o.dst {
                Some((addr, _)) => {
                    TensorData::Device(addr, span_bytes(&o.spec, o.strides.as_deref()))
                }
                None => TensorData::Empty,
            },
        })
        .collect();
    crate::model::dump::for_launch(function, op_type, s.device, s.id, ins, outs)
}

/// Runs on the stream's worker, with every device range validated and the
/// allocation table's read lock held (see `rt::stream`).
fn run_kernel(
    kernel: &Kernel,
    inputs: &[LaunchInput],
    outputs: &[LaunchOutput],
) -> Result<(), Error> {
    let op_type = kernel.name();
    crate::trace::name_task(op_type);
    let out_ranges = output_ranges(outputs);
    // Inputs that alias an output are copied first: a `&[u8]` and a
    // `&mut [u8]` over the same bytes may not coexist. Strided views are
    // gathered into contiguous copies.
    let copies: Vec<Option<Vec<u8>>> = inputs
        .iter()
        .map(|i| match &i.src {
            Source::Device {
                addr,
                strides: Some(st),
                ..
            } => {
                // SAFETY: a validated live device range spanning the view;
                // no `&mut` to it exists yet.
                Some(unsafe { gather(*addr, &i.spec, st) })
            }
            Source::Device { addr, .. } => {
                let len = i.spec.bytes();
                out_ranges
                    .iter()
                    .any(|&(b, blen)| overlaps(*addr, len, b, blen))
                    .then(|| {
                        // SAFETY: a validated live device range of `len`
                        // bytes; no `&mut` to it exists yet.
                        unsafe { std::slice::from_raw_parts(*addr as *const u8, len) }.to_vec()
                    })
            }
            _ => None,
        })
        .collect();
    // Strided outputs are computed into contiguous buffers, scattered after.
    let mut staged: Vec<Option<Vec<u8>>> = outputs
        .iter()
        .map(|o| match (&o.dst, &o.strides) {
            (Some(_), Some(_)) => Some(vec![0u8; o.spec.bytes()]),
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
        .zip(staged.iter_mut())
        .map(|(o, stage)| Output {
            spec: &o.spec,
            data: match (o.dst, stage) {
                (_, Some(buf)) => buf.as_mut_slice(),
                // SAFETY: a validated live device range; outputs do not
                // overlap each other (refused at the call) nor any input
                // slice (those were copied).
                (Some((addr, _)), None) => unsafe {
                    std::slice::from_raw_parts_mut(addr as *mut u8, o.spec.bytes())
                },
                (None, None) => &mut [],
            },
        })
        .collect();
    match kernel {
        Kernel::Named(_, attrs) => ops::run(op_type, &ins, attrs, &mut outs),
        Kernel::Native(n) => (n.run)(&ins, &mut outs),
    }
    .map_err(|e| {
        Error::new(
            ErrorKind::KernelFault,
            format!("{op_type} kernel failed: {}", e.message()),
        )
    })?;
    drop(outs);
    drop(ins);
    for (o, stage) in outputs.iter().zip(&staged) {
        if let (Some((addr, _)), Some(st), Some(buf)) = (o.dst, &o.strides, stage) {
            // SAFETY: a validated live device range spanning the view, not
            // borrowed any more (the slices above are gone); the view's
            // elements do not overlap (checked at the call).
            unsafe { scatter(addr, &o.spec, st, buf) };
        }
    }
    Ok(())
}

/// The device ranges the outputs span.
fn output_ranges(outputs: &[LaunchOutput]) -> Vec<(usize, usize)> {
    outputs
        .iter()
        .filter_map(|o| {
            o.dst
                .map(|(a, _)| (a, span_bytes(&o.spec, o.strides.as_deref())))
        })
        .collect()
}

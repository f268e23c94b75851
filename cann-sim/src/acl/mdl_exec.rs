//! Model execution: `aclmdlExecute` (synchronous), `aclmdlExecuteAsync`
//! (queued on a stream) and the gear setters `aclmdlSetDynamicBatchSize`,
//! `aclmdlSetDynamicHWSize` and `aclmdlSetInputDynamicDims`.
//!
//! # Checks, in order
//!
//! 1. An id that names no loaded model: `ACL_ERROR_INVALID_MODEL_ID`
//!    (100011). A null, destroyed or foreign dataset, or a destroyed data
//!    buffer in one: `ACL_ERROR_INVALID_PARAM` (100000).
//! 2. (`aclmdlExecuteAsync`) a destroyed stream: 107017; no current
//!    context: 107002; a stream of another context: 107003; a context of
//!    another device than the model's: 107000.
//! 3. The input dataset must hold one buffer per input (the gear input
//!    `ascend_mbatch_shape_data` included), the output dataset one per
//!    output: `ACL_ERROR_MODEL_INPUT_NOT_MATCH` (100017) /
//!    `ACL_ERROR_MODEL_OUTPUT_NOT_MATCH` (100018) otherwise.
//! 4. For a model with gears, the gear input holds the gear (written by
//!    `aclmdlSetDynamicBatchSize` / `aclmdlSetDynamicHWSize` /
//!    `aclmdlSetInputDynamicDims`); one that is
//!    not a gear of the model (never set) is 100017.
//! 5. Each buffer at least as large as its tensor at that gear: 100017 /
//!    100018 otherwise; memory that is not live device memory of the
//!    model's device, outputs that overlap each other, or inputs and
//!    outputs that overlap the caller's work or weight memory: 107000.
//!
//! `aclmdlExecute` then runs the model and returns; `aclmdlExecuteAsync`
//! queues it and returns, and the model runs in stream order (memory freed
//! before it runs is a fault of the task, 507015, at the next
//! synchronisation). A node that fails at run time (a value-dependent
//! check) is `ACL_ERROR_RT_MODEL_EXECUTE` (507011): returned by
//! `aclmdlExecute`, the task's fault for `aclmdlExecuteAsync`. Executions
//! of one model run one at a time (they share its work memory).

use super::common::code;
use super::common::device_range;
use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use super::mdl_dataset::dataset;
use super::mdl_load::loaded;
use super::op_desc::{self, DataBuffer};
use super::stream::takes_host_work;
use crate::check::{Access, Use};
use crate::faults;
use crate::model::loaded::{Loaded, ModelMem};
use crate::recent_error::fail;
use crate::rt::stream::{TaskKind, TaskRange};
use crate::state;
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_MODEL_INPUT_NOT_MATCH, ACL_ERROR_MODEL_NOT_DYNAMIC,
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH, ACL_ERROR_RT_MODEL_EXECUTE, ACL_SUCCESS, aclError,
    aclmdlDataset, aclmdlIODims, aclrtStream,
};
use std::sync::Arc;

/// A checked execution.
struct Plan {
    loaded: Arc<Loaded>,
    gear: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    /// Device ranges to check again when it runs.
    ranges: Vec<TaskRange>,
}

fn buffers(
    function: &str,
    what: &str,
    h: *const aclmdlDataset,
) -> Result<Vec<DataBuffer>, aclError> {
    let d = dataset(function, what, h)?;
    let handles = d.lock().clone();
    handles
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            op_desc::buffer(function, &format!("{what} buffer {i}"), b as *const _)
                .map(|b| *b.lock())
                .ok_or(ACL_ERROR_INVALID_PARAM)
        })
        .collect()
}

fn overlaps(a: usize, alen: usize, b: usize, blen: usize) -> bool {
    alen > 0 && blen > 0 && a < b.saturating_add(blen) && b < a.saturating_add(alen)
}

/// Reads the gear the gear input holds; its index among the model's gears.
fn read_gear(function: &str, l: &Loaded, b: DataBuffer) -> Result<usize, aclError> {
    let m = &l.model;
    let Some(di) = m.dynamic_input() else {
        return Ok(0);
    };
    let need = m.inputs[di].size;
    if b.size < need {
        return Err(fail(
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            format!(
                "{function}: the buffer of the gear input {di} ({}) holds {} bytes; it needs {need}",
                m.inputs[di].name, b.size
            ),
        ));
    }
    device_range(function, "the gear input", b.addr, need, l.device)?;
    let table = state::memory().read();
    table
        .check_range(b.addr, need)
        .map_err(|e| fail(PARAM_INVALID, format!("{function}: the gear input: {e}")))?;
    let mut v = vec![0u64; need / 8];
    for (k, slot) in v.iter_mut().enumerate() {
        // SAFETY: `need` live bytes at `b.addr` (checked under the read
        // lock, held); read unaligned.
        *slot = unsafe { ((b.addr + 8 * k) as *const u64).read_unaligned() };
    }
    drop(table);
    let found = if !m.batch_gears.is_empty() {
        m.batch_gears.iter().position(|&g| Some(&g) == v.first())
    } else if !m.hw_gears.is_empty() {
        m.hw_gears.iter().position(|g| g[..] == v[..])
    } else {
        m.dims_gears.iter().position(|g| *g == v)
    };
    found.ok_or_else(|| {
        let (held, gears, setter) = if !m.batch_gears.is_empty() {
            (
                format!("batch {}", v.first().copied().unwrap_or(0)),
                format!("{:?}", m.batch_gears),
                "aclmdlSetDynamicBatchSize",
            )
        } else if !m.hw_gears.is_empty() {
            (
                format!("height-width {:?}", v),
                format!("{:?}", m.hw_gears),
                "aclmdlSetDynamicHWSize",
            )
        } else {
            (
                format!("dims {:?}", v),
                format!("{:?}", m.dims_gears),
                "aclmdlSetInputDynamicDims",
            )
        };
        fail(
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            format!(
                "{function}: the gear input holds {held}, which is not one of the model's gears \
                 {gears}; set it with {setter}"
            ),
        )
    })
}

fn plan(
    function: &'static str,
    l: Arc<Loaded>,
    input: *const aclmdlDataset,
    output: *const aclmdlDataset,
) -> Result<Plan, aclError> {
    let ins = buffers(function, "input", input)?;
    let outs = buffers(function, "output", output)?;
    let m = l.model.clone();
    if ins.len() != m.inputs.len() {
        return Err(fail(
            ACL_ERROR_MODEL_INPUT_NOT_MATCH,
            format!(
                "{function}: the input dataset holds {} buffers, but the model has {} inputs{}",
                ins.len(),
                m.inputs.len(),
                if m.dynamic_input().is_some() {
                    " (the gear input ascend_mbatch_shape_data included)"
                } else {
                    ""
                }
            ),
        ));
    }
    if outs.len() != m.outputs.len() {
        return Err(fail(
            ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
            format!(
                "{function}: the output dataset holds {} buffers, but the model has {} outputs",
                outs.len(),
                m.outputs.len()
            ),
        ));
    }
    let gear = match m.dynamic_input() {
        Some(di) => read_gear(function, &l, ins[di])?,
        None => 0,
    };
    let mut ranges = Vec::new();
    let mut in_ranges = Vec::new();
    for (i, b) in ins.iter().enumerate() {
        let need = m.input_bytes(i, gear);
        if b.size < need {
            return Err(fail(
                ACL_ERROR_MODEL_INPUT_NOT_MATCH,
                format!(
                    "{function}: the buffer of input {i} ({}) holds {} bytes, but the model needs \
                     {need} at this gear",
                    m.inputs[i].name, b.size
                ),
            ));
        }
        if let Some(at) = device_range(function, &format!("input {i}"), b.addr, need, l.device)? {
            ranges.push(TaskRange {
                what: "model input",
                addr: b.addr,
                len: need,
                at,
                how: Use::Read,
            });
        }
        in_ranges.push((b.addr, need));
    }
    let mut out_ranges: Vec<(usize, usize)> = Vec::new();
    for (i, b) in outs.iter().enumerate() {
        let need = m.output_bytes(i, gear);
        if b.size < need {
            return Err(fail(
                ACL_ERROR_MODEL_OUTPUT_NOT_MATCH,
                format!(
                    "{function}: the buffer of output {i} ({}) holds {} bytes, but the model \
                     needs {need} at this gear",
                    m.outputs[i].name, b.size
                ),
            ));
        }
        if let Some(at) = device_range(function, &format!("output {i}"), b.addr, need, l.device)? {
            ranges.push(TaskRange {
                what: "model output",
                addr: b.addr,
                len: need,
                at,
                how: Use::Write,
            });
        }
        if let Some(j) = out_ranges
            .iter()
            .position(|&(a, alen)| overlaps(a, alen, b.addr, need))
        {
            return Err(fail(
                PARAM_INVALID,
                format!("{function}: outputs {j} and {i} overlap; the result would be undefined"),
            ));
        }
        out_ranges.push((b.addr, need));
    }
    let work = l.user_work.map(|(a, len, _)| (a, len));
    let weights = l.weights.user_range();
    for (what, mem, also_inputs) in [("work", work, true), ("weight", weights, false)] {
        let Some((a, alen)) = mem else { continue };
        let mut others: Vec<(&str, usize, usize)> =
            out_ranges.iter().map(|&(b, n)| ("output", b, n)).collect();
        if also_inputs {
            others.extend(in_ranges.iter().map(|&(b, n)| ("input", b, n)));
        }
        let clash = others
            .into_iter()
            .find(|&(_, b, blen)| overlaps(a, alen, b, blen));
        if let Some((kind, b, _)) = clash {
            return Err(fail(
                PARAM_INVALID,
                format!(
                    "{function}: an {kind} buffer ({b:#x}) overlaps the model's {what} memory \
                     ({a:#x} + {alen} bytes)"
                ),
            ));
        }
    }
    if let Some((addr, size, Some(at))) = l.user_work {
        // Executions of a model share its work memory and are serialised
        // by the simulator: an opaque use (checked for frees, not races).
        ranges.push(TaskRange {
            what: "model work",
            addr,
            len: size,
            at,
            how: Use::Opaque,
        });
    }
    if let ModelMem::User {
        addr,
        size,
        at: Some(at),
    } = l.weights
    {
        ranges.push(TaskRange {
            what: "model weight",
            addr,
            len: size,
            at,
            how: Use::Read,
        });
    }
    Ok(Plan {
        loaded: l,
        gear,
        inputs: ins.iter().map(|b| b.addr).collect(),
        outputs: outs.iter().map(|b| b.addr).collect(),
        ranges,
    })
}

/// Runs a checked execution; every range in `plan.ranges` is live and the
/// allocation table's read lock is held by the caller.
fn run(plan: &Plan) -> Result<(), String> {
    // SAFETY: the inputs and outputs are live device ranges of at least
    // their tensors' sizes at this gear (checked at the call and again by
    // the caller, under the read lock it holds); outputs do not overlap
    // each other nor the work and weight memory (checked at the call); the
    // caller's work memory is among the ranges checked.
    unsafe {
        plan.loaded
            .run(plan.gear, plan.inputs.clone(), plan.outputs.clone())
    }
}

/// `aclmdlExecute`: runs model `modelId` on `input`, writing `output`, and
/// returns when it has run (see the module documentation).
///
/// # Safety
///
/// None: the id and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlExecute(
    model_id: u32,
    input: *const aclmdlDataset,
    output: *mut aclmdlDataset,
) -> aclError {
    const F: &str = "aclmdlExecute";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let l = tri!(loaded(F, model_id));
    let p = tri!(plan(F, l, input, output));
    if crate::check::enabled() {
        let accesses: Vec<Access> = p
            .ranges
            .iter()
            .map(|r| Access::new(r.what, r.addr, r.len, r.how))
            .collect();
        if let Err(e) = crate::check::host_access(F, &accesses) {
            return rt_fail(F, e);
        }
    }
    let table = state::memory().read();
    for r in &p.ranges {
        let still = table
            .check_range(r.addr, r.len)
            .ok()
            .and_then(crate::rt::stream::Expect::of)
            .is_some_and(|now| now == r.at);
        if !still {
            return fail(
                PARAM_INVALID,
                format!(
                    "{F}: the {} memory at {:#x} was freed during the call",
                    r.what, r.addr
                ),
            );
        }
    }
    let r = run(&p);
    drop(table);
    match r {
        Ok(()) => ACL_SUCCESS,
        Err(e) => fail(code(ACL_ERROR_RT_MODEL_EXECUTE), format!("{F}: {e}")),
    }
}

/// `aclmdlExecuteAsync`: queues an execution of model `modelId` on
/// `stream` (null: the default stream) and returns.
///
/// # Safety
///
/// None: the id and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlExecuteAsync(
    model_id: u32,
    input: *const aclmdlDataset,
    output: *mut aclmdlDataset,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclmdlExecuteAsync";
    if let Some(code) = faults::check(F) {
        return code;
    }
    let l = tri!(loaded(F, model_id));
    let s = tri!(common::stream_arg(F, stream));
    let ctx = tri!(common::current(F));
    let s = common::or_default(s, &ctx);
    tri!(common::in_context(F, &s, &ctx));
    tri!(takes_host_work(F, &s));
    if ctx.device != l.device {
        return fail(
            PARAM_INVALID,
            format!(
                "{F}: model {model_id} is loaded on device {}, but the stream is on device {}",
                l.device, ctx.device
            ),
        );
    }
    let p = tri!(plan(F, l, input, output));
    let ranges = p.ranges.clone();
    let kernel = std::sync::Arc::new(move || {
        run(&p).map_err(|e| crate::rt::Error::new(crate::rt::ErrorKind::ModelFault, e))
    });
    match s.enqueue(|_| TaskKind::Op {
        api: F,
        ranges,
        kernel,
    }) {
        Ok(_) => ACL_SUCCESS,
        Err(e) => rt_fail(F, e),
    }
}

/// The kind of gear a setter sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Batch,
    Hw,
    /// `values` are the dims of all data inputs, concatenated.
    Dims,
}

/// Writes the gear `values` into buffer `index` of `dataset` (the gear input).
fn set_gear(
    function: &str,
    model_id: u32,
    dataset_h: *mut aclmdlDataset,
    index: usize,
    kind: Kind,
    values: &[u64],
) -> Result<aclError, aclError> {
    let l = loaded(function, model_id)?;
    let d = dataset(function, "dataset", dataset_h)?;
    let m = &l.model;
    let (name, ok) = match kind {
        Kind::Batch => ("batch", !m.batch_gears.is_empty()),
        Kind::Hw => ("height-width", !m.hw_gears.is_empty()),
        Kind::Dims => ("dims", !m.dims_gears.is_empty()),
    };
    let Some(di) = m.dynamic_input().filter(|_| ok) else {
        return Err(fail(
            ACL_ERROR_MODEL_NOT_DYNAMIC,
            format!("{function}: model {model_id} has no dynamic {name} gears"),
        ));
    };
    if index != di {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: index {index} is not the gear input's index ({di}, \
                 ascend_mbatch_shape_data; see aclmdlGetInputIndexByName)"
            ),
        ));
    }
    let dims_gear = (0..m.dims_gears.len()).find(|&g| {
        let shape = m.gear_shape(g);
        shape.len() == values.len() && shape.iter().zip(values).all(|(&a, &b)| a as u64 == b)
    });
    let known = match kind {
        Kind::Batch => m.batch_gears.contains(&values[0]),
        Kind::Hw => m.hw_gears.iter().any(|g| g[..] == values[..]),
        Kind::Dims => dims_gear.is_some(),
    };
    if !known {
        let gears = match kind {
            Kind::Batch => format!("{:?}", m.batch_gears),
            Kind::Hw => format!("{:?}", m.hw_gears),
            Kind::Dims => format!(
                "{:?} (as dims of all inputs)",
                (0..m.dims_gears.len())
                    .map(|g| m.gear_shape(g))
                    .collect::<Vec<_>>()
            ),
        };
        let shown: Vec<i64> = values.iter().map(|&v| v as i64).collect();
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: {name} {shown:?} is not one of the model's gears {gears}"),
        ));
    }
    let values: &[u64] = match dims_gear {
        Some(g) if kind == Kind::Dims => &m.dims_gears[g],
        _ => values,
    };
    let h = d.lock().get(index).copied();
    let Some(h) = h else {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: the dataset has no buffer {index} (add the gear input's buffer first)"
            ),
        ));
    };
    let b = op_desc::buffer(function, &format!("dataset buffer {index}"), h as *const _)
        .map(|b| *b.lock())
        .ok_or(ACL_ERROR_INVALID_PARAM)?;
    let need = 8 * values.len();
    if b.size < need {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: the gear input's buffer holds {} bytes; it needs {need}",
                b.size
            ),
        ));
    }
    device_range(function, "the gear input", b.addr, need, l.device)?;
    let table = state::memory().read();
    table
        .check_range(b.addr, need)
        .map_err(|e| fail(PARAM_INVALID, format!("{function}: the gear input: {e}")))?;
    for (k, &v) in values.iter().enumerate() {
        // SAFETY: `need` live bytes at `b.addr` (checked under the read
        // lock, held); written unaligned.
        unsafe { ((b.addr + 8 * k) as *mut u64).write_unaligned(v) };
    }
    drop(table);
    Ok(ACL_SUCCESS)
}

/// `aclmdlSetDynamicBatchSize`: sets the batch gear of an execution by
/// writing it into the gear input's buffer (buffer `index` of `dataset`).
/// Not a gear: 100000; a model without batch gears: 100019.
///
/// # Safety
///
/// None: the id and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlSetDynamicBatchSize(
    model_id: u32,
    dataset: *mut aclmdlDataset,
    index: usize,
    batch_size: u64,
) -> aclError {
    const F: &str = "aclmdlSetDynamicBatchSize";
    if let Some(code) = faults::check(F) {
        return code;
    }
    tri!(set_gear(
        F,
        model_id,
        dataset,
        index,
        Kind::Batch,
        &[batch_size]
    ))
}

/// `aclmdlSetDynamicHWSize`: as `aclmdlSetDynamicBatchSize`, for
/// height-width gears.
///
/// # Safety
///
/// None: the id and handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlSetDynamicHWSize(
    model_id: u32,
    dataset: *mut aclmdlDataset,
    index: usize,
    height: u64,
    width: u64,
) -> aclError {
    const F: &str = "aclmdlSetDynamicHWSize";
    if let Some(code) = faults::check(F) {
        return code;
    }
    tri!(set_gear(
        F,
        model_id,
        dataset,
        index,
        Kind::Hw,
        &[height, width]
    ))
}

/// `aclmdlSetInputDynamicDims`: as `aclmdlSetDynamicBatchSize`, for dims
/// gears: `dims` holds the dims of all data inputs, concatenated, at the
/// gear (as `aclmdlGetInputDynamicDims` reports them; `name` is not used).
/// Null `dims`, or dims that are not a gear: 100000; a model without dims
/// gears: 100019.
///
/// # Safety
///
/// `dims` is null or points to a valid `aclmdlIODims`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclmdlSetInputDynamicDims(
    model_id: u32,
    dataset: *mut aclmdlDataset,
    index: usize,
    dims: *const aclmdlIODims,
) -> aclError {
    const F: &str = "aclmdlSetInputDynamicDims";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if dims.is_null() {
        return common::null_arg(F, "dims");
    }
    // SAFETY: non-null, valid (the caller's contract); copied.
    let d = unsafe { dims.read() };
    let n = d.dimCount.min(d.dims.len());
    let values: Vec<u64> = d.dims[..n].iter().map(|&v| v as u64).collect();
    tri!(set_gear(F, model_id, dataset, index, Kind::Dims, &values))
}

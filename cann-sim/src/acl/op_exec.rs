//! Single-operator execution (`acl_op.h`, `acl_op_compiler.h`):
//! `aclopExecuteV2`, `aclopCompileAndExecuteV2` and their deprecated V1
//! forms, `aclopInferShape`, `aclopCast`, operator handles
//! (`aclopCreateHandle`, `aclopCreateHandleForCast`, `aclopExecWithHandle`,
//! `aclopDestroyHandle`) and `aclopSetCompileFlag`.
//!
//! # Compiled operators
//!
//! On a device, `aclopExecuteV2` runs an operator whose kernel was compiled
//! or loaded before (`aclopCompile`, `aclopLoad`, `aclopSetModelDir`), and
//! `aclopCompileAndExecuteV2` compiles on the fly. cann-sim's CPU operator
//! library ([`crate::ops`]) plays the part of the opp package's prebuilt
//! binary kernels: every operator it implements counts as loaded, so both
//! calls run it. An operator it does not implement is
//! `ACL_ERROR_OP_NOT_FOUND` (100024) from both.
//!
//! # Checks, in order
//!
//! 1. Null `opType`, a negative count, a null array with a positive count,
//!    a null or dead description, buffer or attribute handle; for
//!    `aclopCompileAndExecuteV2` an `engineType` or `compileFlag` out of
//!    range, or a non-null `opPath` (reserved): `ACL_ERROR_INVALID_PARAM`
//!    (100000).
//! 2. A destroyed stream: 107017; no current context: 107002; a stream of
//!    another context: 107003.
//! 3. The operator against the library ([`crate::ops::infer`]): unknown
//!    type 100024; inputs that do not fit (count, dtype, shape, unknown
//!    dimensions, a private storage format the kernels do not take)
//!    100021; attributes 100023; unsupported dtype 100026.
//! 4. Output descriptions against the inferred outputs: count, dtype, or a
//!    known shape that differs: `ACL_ERROR_OP_OUTPUT_NOT_MATCH` (100022).
//!    Unknown output dimensions (`-1`, `[-2]`) are refreshed with the
//!    inferred shape by the V2 calls (that is what "V2" adds); the V1 calls
//!    need them known.
//! 5. Buffers: smaller than the tensor (elements × element size): 100021
//!    for an input, 100022 for an output; memory that is not live device
//!    memory of the current device: 107000.
//!
//! Then the kernel is queued on the stream and the call returns: operators
//! are asynchronous, as on a device.

use super::common::rt_fail;
use super::common::{self, PARAM_INVALID};
use super::common::{device_range, launch_op};
use super::op_attr::attrs_of;
use super::op_desc::{self, DataBuffer, TensorDesc, dtype_name};
use super::stream::takes_host_work;
use crate::faults;
use crate::ops::{self, AttrValue, Attrs, DType, TensorSpec};
use crate::recent_error::{fail, record};
use crate::rt::handles::{self, Lookup, Registry, Table};
use crate::rt::op::{LaunchInput, LaunchOutput, Source};
use acl_sys::{
    ACL_ERROR_INVALID_PARAM, ACL_ERROR_OP_INPUT_NOT_MATCH, ACL_ERROR_OP_OUTPUT_NOT_MATCH,
    ACL_ERROR_UNSUPPORTED_DATA_TYPE, ACL_SUCCESS, aclDataBuffer, aclError, aclOpCompileFlag,
    aclTensorDesc, aclopAttr, aclopCompileType, aclopEngineType, aclopHandle, aclrtStream,
};
use parking_lot::Mutex;
use std::ffi::{CStr, c_char, c_int};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// The flag `aclopSetCompileFlag` set (`ACL_OP_COMPILE_DEFAULT` or `ACL_OP_COMPILE_FUZZ`).
static COMPILE_FLAG: AtomicI32 = AtomicI32::new(acl_sys::ACL_OP_COMPILE_DEFAULT as i32);

/// The current `aclopSetCompileFlag` value.
pub fn compile_flag() -> aclOpCompileFlag {
    COMPILE_FLAG.load(Ordering::Relaxed) as aclOpCompileFlag
}

/// A compiled operator: type, attributes, and the specs of its inputs and outputs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Operator type.
    pub op_type: String,
    /// Attributes.
    pub attrs: Attrs,
    /// Input specs, and constant bytes where the description carries them.
    pub inputs: Vec<(TensorSpec, Option<Vec<u8>>)>,
    /// Output specs.
    pub outputs: Vec<TensorSpec>,
}

/// An operator handle (`aclopCreateHandle`).
#[derive(Debug)]
pub(crate) struct OpHandle {
    plan: Plan,
}

static HANDLES: Table<OpHandle> = Table::new(|| Mutex::new(Registry::default()));

/// The frame of an export whose checks are `?`s: the fault injected into
/// `function` (see [`crate::faults`]), then `body`, whose `Err` is the code
/// returned.
fn guarded(function: &str, body: impl FnOnce() -> Result<aclError, aclError>) -> aclError {
    if let Some(code) = faults::check(function) {
        return code;
    }
    body().unwrap_or_else(|rc| rc)
}

/// Reads `num` handles of `what` from `arr`.
///
/// # Safety
///
/// `arr` is null or valid for `num` pointers.
unsafe fn read_array<T>(
    function: &str,
    what: &str,
    num: c_int,
    arr: *const *const T,
) -> Result<Vec<*const T>, aclError> {
    if num < 0 {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: the number of {what} ({num}) is negative"),
        ));
    }
    if num == 0 {
        return Ok(Vec::new());
    }
    if arr.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: {what} is null but its count is {num}"),
        ));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(arr, num as usize) }.to_vec())
}

fn descs(
    function: &str,
    what: &str,
    ptrs: &[*const aclTensorDesc],
) -> Result<Vec<TensorDesc>, aclError> {
    ptrs.iter()
        .enumerate()
        .map(|(i, &p)| {
            op_desc::desc(function, &format!("{what}[{i}]"), p)
                .map(|d| d.lock().clone())
                .ok_or(ACL_ERROR_INVALID_PARAM)
        })
        .collect()
}

fn buffers(
    function: &str,
    what: &str,
    ptrs: &[*const aclDataBuffer],
) -> Result<Vec<DataBuffer>, aclError> {
    ptrs.iter()
        .enumerate()
        .map(|(i, &p)| {
            op_desc::buffer(function, &format!("{what}[{i}]"), p)
                .map(|b| *b.lock())
                .ok_or(ACL_ERROR_INVALID_PARAM)
        })
        .collect()
}

fn op_type_arg(function: &str, op_type: *const c_char) -> Result<String, aclError> {
    if op_type.is_null() {
        return Err(common::null_arg(function, "opType"));
    }
    // SAFETY: NUL-terminated (the C contract).
    match unsafe { CStr::from_ptr(op_type) }.to_str() {
        Ok(s) if !s.is_empty() => Ok(s.to_string()),
        _ => Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!("{function}: opType is empty or not UTF-8"),
        )),
    }
}

fn shape_text(dims: &[i64]) -> String {
    format!("{dims:?}")
}

fn is_plain_format(f: acl_sys::aclFormat) -> bool {
    matches!(
        f,
        acl_sys::ACL_FORMAT_UNDEFINED
            | acl_sys::ACL_FORMAT_ND
            | acl_sys::ACL_FORMAT_NCHW
            | acl_sys::ACL_FORMAT_NHWC
            | acl_sys::ACL_FORMAT_NC
            | acl_sys::ACL_FORMAT_NCL
            | acl_sys::ACL_FORMAT_HWCN
            | acl_sys::ACL_FORMAT_NDHWC
            | acl_sys::ACL_FORMAT_NCDHW
    )
}

/// An input description as a kernel spec.
fn input_spec(
    function: &str,
    op_type: &str,
    i: usize,
    d: &TensorDesc,
) -> Result<TensorSpec, aclError> {
    let Some(dtype) = DType::from_acl(d.dtype) else {
        return Err(fail(
            ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            format!(
                "{function}: {op_type}: input {i} has data type {}, which cann-sim's kernels do not support",
                dtype_name(d.dtype)
            ),
        ));
    };
    if d.dims.iter().any(|&x| x < 0) {
        return Err(fail(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            format!(
                "{function}: {op_type}: input {i} has shape {} with unknown dimensions; an \
                 operator runs on concrete shapes (set them with aclSetTensorShape)",
                shape_text(&d.dims)
            ),
        ));
    }
    if !is_plain_format(d.storage_format) {
        return Err(fail(
            ACL_ERROR_OP_INPUT_NOT_MATCH,
            format!(
                "{function}: {op_type}: input {i} has the private storage format {}; cann-sim's \
                 kernels take plain (ND, NCHW, NHWC) layouts only",
                d.storage_format
            ),
        ));
    }
    Ok(TensorSpec {
        dtype,
        shape: d.dims.clone(),
    })
}

/// Checks the operator against the library and the output descriptions;
/// with `refresh`, writes inferred shapes into `out` where unknown.
pub(crate) fn plan(
    function: &str,
    op_type: &str,
    attrs: Attrs,
    ins: &[TensorDesc],
    out: &mut [TensorDesc],
    refresh: bool,
) -> Result<Plan, aclError> {
    // Trailing absent optional inputs (ACL_DT_UNDEFINED, no dims) are dropped.
    let mut n_in = ins.len();
    while n_in > 0
        && ins[n_in - 1].dtype == acl_sys::ACL_DT_UNDEFINED
        && ins[n_in - 1].dims.is_empty()
    {
        n_in -= 1;
    }
    let mut inputs = Vec::with_capacity(n_in);
    for (i, d) in ins[..n_in].iter().enumerate() {
        let spec = input_spec(function, op_type, i, d)?;
        let need = spec.bytes();
        let constant = match &d.const_data {
            Some(c) if c.len() >= need => Some(c[..need].to_vec()),
            Some(c) => {
                return Err(fail(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    format!(
                        "{function}: {op_type}: the constant value of input {i} holds {} bytes, \
                         but a {} tensor of shape {} needs {need}",
                        c.len(),
                        dtype_name(d.dtype),
                        shape_text(&spec.shape)
                    ),
                ));
            }
            None => None,
        };
        inputs.push((spec, constant));
    }
    let specs: Vec<TensorSpec> = inputs.iter().map(|(s, _)| s.clone()).collect();
    let mut inferred = ops::infer(op_type, &specs, &attrs).map_err(|e| {
        fail(
            super::common::op_error_code(&e),
            format!("{function}: {op_type}: {}", e.message()),
        )
    })?;
    let unknown = inferred.iter().any(|o| o.shape.iter().any(|&x| x < 0));
    if unknown && inputs.iter().any(|(_, c)| c.is_some()) {
        // Output shapes that depend on input values (axes, perm, dims):
        // exact when those inputs are constants. The other inputs' values
        // are not read by inference.
        let fillers: Vec<Vec<u8>> = inputs
            .iter()
            .map(|(s, c)| {
                if c.is_some() {
                    Vec::new()
                } else {
                    vec![0u8; s.bytes()]
                }
            })
            .collect();
        let with_values: Vec<ops::Input<'_>> = inputs
            .iter()
            .zip(&fillers)
            .map(|((spec, c), filler)| ops::Input {
                spec,
                data: c.as_deref().unwrap_or(filler),
            })
            .collect();
        inferred = ops::infer_with_values(op_type, &with_values, &attrs).map_err(|e| {
            fail(
                super::common::op_error_code(&e),
                format!("{function}: {op_type}: {}", e.message()),
            )
        })?;
    }
    if inferred.len() != out.len() {
        return Err(fail(
            ACL_ERROR_OP_OUTPUT_NOT_MATCH,
            format!(
                "{function}: {op_type} has {} output(s), but {} output description(s) were given",
                inferred.len(),
                out.len()
            ),
        ));
    }
    let mut outputs = Vec::with_capacity(out.len());
    for (i, (spec, d)) in inferred.into_iter().zip(out.iter_mut()).enumerate() {
        if d.dtype != spec.dtype.to_acl() {
            return Err(fail(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                format!(
                    "{function}: {op_type}: output {i} is described as {}, but the operator gives {}",
                    dtype_name(d.dtype),
                    dtype_name(spec.dtype.to_acl())
                ),
            ));
        }
        let desc_known = d.dims.iter().all(|&x| x >= 0);
        let spec_known = spec.shape.iter().all(|&x| x >= 0);
        let shape = match (desc_known, spec_known) {
            (true, true) if d.dims != spec.shape => {
                return Err(fail(
                    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                    format!(
                        "{function}: {op_type}: output {i} is described with shape {}, but the \
                         operator gives {}",
                        shape_text(&d.dims),
                        shape_text(&spec.shape)
                    ),
                ));
            }
            (true, _) => d.dims.clone(),
            (false, true) if refresh => {
                d.dims = spec.shape.clone();
                spec.shape
            }
            (false, true) => {
                return Err(fail(
                    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                    format!(
                        "{function}: {op_type}: output {i} has unknown dimensions {}; this call \
                         does not refresh output descriptions (use the V2 call)",
                        shape_text(&d.dims)
                    ),
                ));
            }
            (false, false) => {
                return Err(fail(
                    ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                    format!(
                        "{function}: {op_type}: the shape of output {i} depends on input values; \
                         describe it with its concrete shape"
                    ),
                ));
            }
        };
        outputs.push(TensorSpec {
            dtype: spec.dtype,
            shape,
        });
    }
    Ok(Plan {
        op_type: op_type.to_string(),
        attrs,
        inputs,
        outputs,
    })
}

/// Binds buffers to a plan and queues it on `stream` (checks 2 and 5).
fn bind_and_launch(
    function: &'static str,
    plan: &Plan,
    in_bufs: &[DataBuffer],
    out_bufs: &[DataBuffer],
    s: Option<Arc<crate::rt::Stream>>,
    ctx: &crate::rt::Context,
) -> aclError {
    let op_type = &plan.op_type;
    let s = common::or_default(s, ctx);
    if let Err(rc) = common::in_context(function, &s, ctx) {
        return rc;
    }
    if let Err(rc) = takes_host_work(function, &s) {
        return rc;
    }
    let mut inputs = Vec::with_capacity(plan.inputs.len());
    for (i, (spec, constant)) in plan.inputs.iter().enumerate() {
        let need = spec.bytes();
        let src = if need == 0 {
            Source::Empty
        } else if let Some(c) = constant {
            // A constant (or host-placed) input: its value, taken at the call.
            Source::Host(c.clone())
        } else {
            let b = in_bufs[i];
            if b.size < need {
                return fail(
                    ACL_ERROR_OP_INPUT_NOT_MATCH,
                    format!(
                        "{function}: {op_type}: the buffer of input {i} holds {} bytes, but a {} \
                         tensor of shape {} needs {need}",
                        b.size,
                        dtype_name(spec.dtype.to_acl()),
                        shape_text(&spec.shape)
                    ),
                );
            }
            match device_range(function, &format!("input {i}"), b.addr, need, ctx.device) {
                Ok(Some(at)) => Source::Device {
                    addr: b.addr,
                    at,
                    strides: None,
                },
                Ok(None) => Source::Empty,
                Err(rc) => return rc,
            }
        };
        inputs.push(LaunchInput {
            spec: spec.clone(),
            src,
        });
    }
    let mut outputs = Vec::with_capacity(plan.outputs.len());
    for (i, spec) in plan.outputs.iter().enumerate() {
        let need = spec.bytes();
        let b = out_bufs[i];
        if b.size < need {
            return fail(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                format!(
                    "{function}: {op_type}: the buffer of output {i} holds {} bytes, but a {} \
                     tensor of shape {} needs {need}",
                    b.size,
                    dtype_name(spec.dtype.to_acl()),
                    shape_text(&spec.shape)
                ),
            );
        }
        let dst = match device_range(function, &format!("output {i}"), b.addr, need, ctx.device) {
            Ok(at) => at.map(|at| (b.addr, at)),
            Err(rc) => return rc,
        };
        outputs.push(LaunchOutput {
            spec: spec.clone(),
            dst,
            strides: None,
        });
    }
    launch_op(
        function,
        &s,
        plan.op_type.clone(),
        plan.attrs.clone(),
        inputs,
        outputs,
    )
}

/// Host-placed inputs (`aclSetTensorPlaceMent(ACL_MEMTYPE_HOST)`) are read
/// at the call, like constants.
fn host_inputs(
    function: &str,
    descs: &mut [TensorDesc],
    bufs: &[DataBuffer],
) -> Result<(), aclError> {
    for (i, (d, b)) in descs.iter_mut().zip(bufs).enumerate() {
        if d.placement == acl_sys::ACL_MEMTYPE_DEVICE || d.const_data.is_some() || b.size == 0 {
            continue;
        }
        // Read now: pinned memory must not be written by queued work.
        let read = [crate::check::Access::new(
            "input (host placement)",
            b.addr,
            b.size,
            crate::check::Use::Read,
        )];
        crate::check::host_access(function, &read).map_err(|e| rt_fail(function, e))?;
        let table = crate::state::memory().read();
        if let Err(e) = table.check_range(b.addr, b.size) {
            return Err(fail(
                PARAM_INVALID,
                format!("{function}: input {i} (host placement): {e}"),
            ));
        }
        // SAFETY: host memory valid for `b.size` bytes: the C contract of a
        // host-placed input (a pinned range is live, held by the read lock).
        d.const_data =
            Some(unsafe { std::slice::from_raw_parts(b.addr as *const u8, b.size) }.to_vec());
    }
    Ok(())
}

/// The shared body of the execute calls.
///
/// # Safety
///
/// The arrays are null or valid for their counts; `op_type` null or NUL-terminated.
#[allow(clippy::too_many_arguments)]
unsafe fn execute(
    function: &'static str,
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const aclTensorDesc,
    inputs: *const *const aclDataBuffer,
    num_outputs: c_int,
    output_desc: *const *const aclTensorDesc,
    outputs: *const *const aclDataBuffer,
    attr: *const aclopAttr,
    stream: aclrtStream,
    refresh: bool,
) -> aclError {
    guarded(function, || {
        let op_type = op_type_arg(function, op_type)?;
        // SAFETY: forwarded contract.
        let (in_d, in_b, out_d, out_b) = unsafe {
            (
                read_array(function, "inputDesc", num_inputs, input_desc)?,
                read_array(function, "inputs", num_inputs, inputs)?,
                read_array(function, "outputDesc", num_outputs, output_desc)?,
                read_array(function, "outputs", num_outputs, outputs)?,
            )
        };
        let mut in_descs = descs(function, "inputDesc", &in_d)?;
        let in_bufs = buffers(function, "inputs", &in_b)?;
        host_inputs(function, &mut in_descs, &in_bufs)?;
        let mut out_descs = descs(function, "outputDesc", &out_d)?;
        let out_bufs = buffers(function, "outputs", &out_b)?;
        let attrs = attrs_of(function, attr)?;
        let s = common::stream_arg(function, stream)?;
        let ctx = common::current(function)?;
        let plan = plan(
            function,
            &op_type,
            attrs,
            &in_descs,
            &mut out_descs,
            refresh,
        )?;
        if refresh {
            for (&p, d) in out_d.iter().zip(&out_descs) {
                if let Some(live) = op_desc::desc(function, "outputDesc", p) {
                    live.lock().dims = d.dims.clone();
                }
            }
        }
        Ok(bind_and_launch(
            function, &plan, &in_bufs, &out_bufs, s, &ctx,
        ))
    })
}

/// `aclopExecuteV2`: runs an operator on `stream`, refreshing the output
/// descriptions (see the module documentation).
///
/// # Safety
///
/// The arrays are null or valid for their counts; `op_type` null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopExecuteV2(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *mut *mut aclTensorDesc,
    inputs: *mut *mut aclDataBuffer,
    num_outputs: c_int,
    output_desc: *mut *mut aclTensorDesc,
    outputs: *mut *mut aclDataBuffer,
    attr: *mut aclopAttr,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        execute(
            "aclopExecuteV2",
            op_type,
            num_inputs,
            input_desc.cast(),
            inputs.cast(),
            num_outputs,
            output_desc.cast(),
            outputs.cast(),
            attr,
            stream,
            true,
        )
    }
}

/// `aclopExecute` (deprecated): as `aclopExecuteV2`, without refreshing
/// output descriptions.
///
/// # Safety
///
/// The arrays are null or valid for their counts; `op_type` null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopExecute(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const aclTensorDesc,
    inputs: *const *const aclDataBuffer,
    num_outputs: c_int,
    output_desc: *const *const aclTensorDesc,
    outputs: *const *mut aclDataBuffer,
    attr: *const aclopAttr,
    stream: aclrtStream,
) -> aclError {
    // SAFETY: forwarded contract.
    unsafe {
        execute(
            "aclopExecute",
            op_type,
            num_inputs,
            input_desc,
            inputs,
            num_outputs,
            output_desc,
            outputs.cast(),
            attr,
            stream,
            false,
        )
    }
}

/// The checks of the compile-and-execute calls before [`execute`]'s: the
/// fault injected into `function`, then [`compile_args`].
fn compile_checks(
    function: &str,
    engine_type: aclopEngineType,
    compile_flag: aclopCompileType,
    op_path: *const c_char,
) -> Result<(), aclError> {
    if let Some(code) = faults::check(function) {
        return Err(code);
    }
    compile_args(function, engine_type, compile_flag, op_path)
}

fn compile_args(
    function: &str,
    engine_type: aclopEngineType,
    compile_flag: aclopCompileType,
    op_path: *const c_char,
) -> Result<(), aclError> {
    if engine_type > acl_sys::ACL_ENGINE_VECTOR {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: engineType {engine_type} is not ACL_ENGINE_SYS, ACL_ENGINE_AICORE or ACL_ENGINE_VECTOR"
            ),
        ));
    }
    if compile_flag > acl_sys::ACL_COMPILE_UNREGISTERED {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: compileFlag {compile_flag} is not ACL_COMPILE_SYS or ACL_COMPILE_UNREGISTERED"
            ),
        ));
    }
    if compile_flag == acl_sys::ACL_COMPILE_UNREGISTERED || !op_path.is_null() {
        return Err(fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{function}: opPath is reserved and must be null, and ACL_COMPILE_UNREGISTERED \
                 (custom operators from opPath) is not available on cann-sim"
            ),
        ));
    }
    Ok(())
}

/// `aclopCompileAndExecuteV2`: compiles (here: looks up) and runs an
/// operator, refreshing the output descriptions.
///
/// # Safety
///
/// The arrays are null or valid for their counts; strings null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCompileAndExecuteV2(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *mut *mut aclTensorDesc,
    inputs: *mut *mut aclDataBuffer,
    num_outputs: c_int,
    output_desc: *mut *mut aclTensorDesc,
    outputs: *mut *mut aclDataBuffer,
    attr: *mut aclopAttr,
    engine_type: aclopEngineType,
    compile_flag: aclopCompileType,
    op_path: *const c_char,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclopCompileAndExecuteV2";
    tri!(compile_checks(F, engine_type, compile_flag, op_path));
    // SAFETY: forwarded contract.
    unsafe {
        execute(
            F,
            op_type,
            num_inputs,
            input_desc.cast(),
            inputs.cast(),
            num_outputs,
            output_desc.cast(),
            outputs.cast(),
            attr,
            stream,
            true,
        )
    }
}

/// `aclopCompileAndExecute` (deprecated): as V2, without refreshing output
/// descriptions.
///
/// # Safety
///
/// The arrays are null or valid for their counts; strings null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCompileAndExecute(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const aclTensorDesc,
    inputs: *const *const aclDataBuffer,
    num_outputs: c_int,
    output_desc: *const *const aclTensorDesc,
    outputs: *const *mut aclDataBuffer,
    attr: *const aclopAttr,
    engine_type: aclopEngineType,
    compile_flag: aclopCompileType,
    op_path: *const c_char,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclopCompileAndExecute";
    tri!(compile_checks(F, engine_type, compile_flag, op_path));
    // SAFETY: forwarded contract.
    unsafe {
        execute(
            F,
            op_type,
            num_inputs,
            input_desc,
            inputs,
            num_outputs,
            output_desc,
            outputs.cast(),
            attr,
            stream,
            false,
        )
    }
}

/// `aclopInferShape`: fills the output descriptions' shapes (and an
/// undefined data type) from the inputs and attributes.
///
/// # Safety
///
/// The arrays are null or valid for their counts; `op_type` null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopInferShape(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *mut *mut aclTensorDesc,
    inputs: *mut *mut aclDataBuffer,
    num_outputs: c_int,
    output_desc: *mut *mut aclTensorDesc,
    attr: *mut aclopAttr,
) -> aclError {
    const F: &str = "aclopInferShape";
    let _ = inputs;
    guarded(F, || {
        let op_type = op_type_arg(F, op_type)?;
        // SAFETY: forwarded contract.
        let (in_d, out_d) = unsafe {
            (
                read_array(F, "inputDesc", num_inputs, input_desc.cast_const().cast())?,
                read_array(
                    F,
                    "outputDesc",
                    num_outputs,
                    output_desc.cast_const().cast(),
                )?,
            )
        };
        let in_descs = descs(F, "inputDesc", &in_d)?;
        let attrs = attrs_of(F, attr)?;
        let specs = in_descs
            .iter()
            .enumerate()
            .map(|(i, d)| input_spec(F, &op_type, i, d))
            .collect::<Result<Vec<_>, _>>()?;
        let inferred = ops::infer(&op_type, &specs, &attrs).map_err(|e| {
            fail(
                super::common::op_error_code(&e),
                format!("{F}: {op_type}: {}", e.message()),
            )
        })?;
        if inferred.len() != out_d.len() {
            return Err(fail(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                format!(
                    "{F}: {op_type} has {} output(s), but {} output description(s) were given",
                    inferred.len(),
                    out_d.len()
                ),
            ));
        }
        let live = out_d
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                op_desc::desc(F, &format!("outputDesc[{i}]"), p).ok_or(ACL_ERROR_INVALID_PARAM)
            })
            .collect::<Result<Vec<_>, _>>()?;
        for (d, spec) in live.iter().zip(inferred) {
            let mut d = d.lock();
            d.dims = spec.shape;
            d.dtype = spec.dtype.to_acl();
        }
        Ok(ACL_SUCCESS)
    })
}

/// The Cast operator's attributes for a destination type.
fn cast_attrs(dst: acl_sys::aclDataType, truncate: u8) -> Attrs {
    let mut a = Attrs::new();
    a.insert("dst_type".into(), AttrValue::Int(i64::from(dst)));
    a.insert("truncate".into(), AttrValue::Bool(truncate != 0));
    a
}

/// The plan of the `Cast` operator from `src` to `dst`'s data type.
fn cast_plan(
    function: &str,
    src: &[TensorDesc],
    dst: &mut [TensorDesc],
    truncate: u8,
) -> Result<Plan, aclError> {
    let attrs = cast_attrs(dst[0].dtype, truncate);
    plan(function, "Cast", attrs, src, dst, false)
}

/// `aclopCast`: converts `srcBuffer` to `dstDesc`'s data type (the `Cast`
/// operator with `dst_type`), on `stream`.
///
/// # Safety
///
/// None beyond the C contract: handles are looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCast(
    src_desc: *const aclTensorDesc,
    src_buffer: *const aclDataBuffer,
    dst_desc: *const aclTensorDesc,
    dst_buffer: *mut aclDataBuffer,
    truncate: u8,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclopCast";
    guarded(F, || {
        let src = descs(F, "srcDesc", &[src_desc])?;
        let mut dst = descs(F, "dstDesc", &[dst_desc])?;
        let in_b = buffers(F, "srcBuffer", &[src_buffer])?;
        let out_b = buffers(F, "dstBuffer", &[dst_buffer.cast_const()])?;
        let s = common::stream_arg(F, stream)?;
        let ctx = common::current(F)?;
        let plan = cast_plan(F, &src, &mut dst, truncate)?;
        Ok(bind_and_launch(F, &plan, &in_b, &out_b, s, &ctx))
    })
}

fn new_handle(handle: *mut *mut aclopHandle, plan: Plan) -> aclError {
    let h = HANDLES.lock().insert(Arc::new(OpHandle { plan }));
    // SAFETY: non-null out-pointer (checked by the callers).
    unsafe { *handle = h as *mut aclopHandle };
    ACL_SUCCESS
}

/// `aclopCreateHandle`: checks an operator once (as the execute calls do,
/// without buffers) for repeated execution with `aclopExecWithHandle`.
///
/// # Safety
///
/// The arrays are null or valid for their counts; `op_type` null or
/// NUL-terminated; `handle` null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCreateHandle(
    op_type: *const c_char,
    num_inputs: c_int,
    input_desc: *const *const aclTensorDesc,
    num_outputs: c_int,
    output_desc: *const *const aclTensorDesc,
    op_attr: *const aclopAttr,
    handle: *mut *mut aclopHandle,
) -> aclError {
    const F: &str = "aclopCreateHandle";
    guarded(F, || {
        if handle.is_null() {
            return Err(common::null_arg(F, "handle"));
        }
        let op_type = op_type_arg(F, op_type)?;
        // SAFETY: forwarded contract.
        let (in_d, out_d) = unsafe {
            (
                read_array(F, "inputDesc", num_inputs, input_desc)?,
                read_array(F, "outputDesc", num_outputs, output_desc)?,
            )
        };
        let in_descs = descs(F, "inputDesc", &in_d)?;
        let mut out_descs = descs(F, "outputDesc", &out_d)?;
        let attrs = attrs_of(F, op_attr)?;
        let plan = plan(F, &op_type, attrs, &in_descs, &mut out_descs, false)?;
        Ok(new_handle(handle, plan))
    })
}

/// `aclopCreateHandleForCast`: a handle for `Cast` from `srcDesc` to `dstDesc`.
///
/// # Safety
///
/// `handle` is null or a valid out-pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopCreateHandleForCast(
    src_desc: *mut aclTensorDesc,
    dst_desc: *mut aclTensorDesc,
    truncate: u8,
    handle: *mut *mut aclopHandle,
) -> aclError {
    const F: &str = "aclopCreateHandleForCast";
    guarded(F, || {
        if handle.is_null() {
            return Err(common::null_arg(F, "handle"));
        }
        let src = descs(F, "srcDesc", &[src_desc.cast_const()])?;
        let mut dst = descs(F, "dstDesc", &[dst_desc.cast_const()])?;
        let plan = cast_plan(F, &src, &mut dst, truncate)?;
        Ok(new_handle(handle, plan))
    })
}

/// `aclopDestroyHandle`: null is ignored; a destroyed or foreign handle
/// records a message.
///
/// # Safety
///
/// None: the handle is looked up.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopDestroyHandle(handle: *mut aclopHandle) {
    if handle.is_null() {
        return;
    }
    let mut t = HANDLES.lock();
    if t.remove(handle as usize).is_none() {
        let l = t.get(handle as usize);
        record(format!(
            "aclopDestroyHandle: {}",
            handles::describe_bad("aclopHandle", handle as usize, &l)
        ));
    }
}

/// `aclopExecWithHandle`: runs a handle's operator on new buffers. The
/// counts must equal the handle's (100021 / 100022 otherwise).
///
/// # Safety
///
/// The arrays are null or valid for their counts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopExecWithHandle(
    handle: *mut aclopHandle,
    num_inputs: c_int,
    inputs: *const *const aclDataBuffer,
    num_outputs: c_int,
    outputs: *const *mut aclDataBuffer,
    stream: aclrtStream,
) -> aclError {
    const F: &str = "aclopExecWithHandle";
    guarded(F, || {
        if handle.is_null() {
            return Err(common::null_arg(F, "handle"));
        }
        let h = match HANDLES.lock().get(handle as usize) {
            Lookup::Live(h) => h,
            bad => {
                return Err(fail(
                    ACL_ERROR_INVALID_PARAM,
                    format!(
                        "{F}: {}",
                        handles::describe_bad("aclopHandle", handle as usize, &bad)
                    ),
                ));
            }
        };
        // SAFETY: forwarded contract.
        let (in_b, out_b) = unsafe {
            (
                read_array(F, "inputs", num_inputs, inputs)?,
                read_array(F, "outputs", num_outputs, outputs.cast())?,
            )
        };
        let plan = &h.plan;
        if in_b.len() < plan.inputs.len() {
            return Err(fail(
                ACL_ERROR_OP_INPUT_NOT_MATCH,
                format!(
                    "{F}: the handle's {} takes {} input(s), {} were given",
                    plan.op_type,
                    plan.inputs.len(),
                    in_b.len()
                ),
            ));
        }
        if out_b.len() != plan.outputs.len() {
            return Err(fail(
                ACL_ERROR_OP_OUTPUT_NOT_MATCH,
                format!(
                    "{F}: the handle's {} has {} output(s), {} were given",
                    plan.op_type,
                    plan.outputs.len(),
                    out_b.len()
                ),
            ));
        }
        let in_bufs = buffers(F, "inputs", &in_b)?;
        let out_bufs = buffers(F, "outputs", &out_b)?;
        let s = common::stream_arg(F, stream)?;
        let ctx = common::current(F)?;
        Ok(bind_and_launch(F, plan, &in_bufs, &out_bufs, s, &ctx))
    })
}

/// `aclopSetCompileFlag`: `ACL_OP_COMPILE_DEFAULT` (0) or
/// `ACL_OP_COMPILE_FUZZ` (1, dynamic-shape "fuzzy" compilation); anything
/// else is 100000. cann-sim's kernels take any shape either way.
///
/// # Safety
///
/// None.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclopSetCompileFlag(flag: aclOpCompileFlag) -> aclError {
    const F: &str = "aclopSetCompileFlag";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if flag > acl_sys::ACL_OP_COMPILE_FUZZ {
        return fail(
            ACL_ERROR_INVALID_PARAM,
            format!(
                "{F}: flag {flag} is not ACL_OP_COMPILE_DEFAULT (0) or ACL_OP_COMPILE_FUZZ (1)"
            ),
        );
    }
    COMPILE_FLAG.store(flag as i32, Ordering::Relaxed);
    ACL_SUCCESS
}

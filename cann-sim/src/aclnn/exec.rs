//! The handle table of the aclnn objects, argument checks, executors (the
//! plan `GetWorkspaceSize` makes) and their launch on a stream.

use crate::acl::common::{device_range, launch_op};
use crate::ops::{self, Attrs, DType, TensorSpec};
use crate::recent_error::fail;
use crate::rt::handles::{Lookup, Registry};
use crate::rt::op::{LaunchInput, LaunchOutput, Source, span_bytes};
use acl_sys::aclnn::{
    ACLNN_ERR_INNER_FIND_KERNEL_ERROR, ACLNN_ERR_PARAM_INVALID, ACLNN_ERR_PARAM_NULLPTR,
    ACLNN_ERR_RUNTIME_ERROR, ACLNN_SUCCESS, aclOpExecutor, aclnnStatus,
};
use acl_sys::{ACL_SUCCESS, aclrtStream};
use parking_lot::Mutex;
use std::sync::{Arc, LazyLock};

/// A tensor as `aclCreateTensor` described it.
#[derive(Debug)]
pub(crate) struct TensorObj {
    pub dtype: i32,
    pub view: Vec<i64>,
    pub strides: Vec<i64>,
    pub offset: i64,
    pub format: i32,
    pub storage: Vec<i64>,
    pub addr: usize,
}

/// A tensor argument as the kernel sees it: type and shape, first byte, and
/// the element strides of a non-contiguous view.
#[derive(Debug, Clone)]
pub(crate) struct View {
    pub spec: TensorSpec,
    pub addr: usize,
    /// `None` for a contiguous view.
    pub strides: Option<Vec<i64>>,
}

/// An input of a planned operator.
#[derive(Debug, Clone)]
pub(crate) enum PlanIn {
    /// A tensor in device memory.
    Device(View),
    /// A value known at `GetWorkspaceSize` (axes, a fill value).
    Host(TensorSpec, Vec<u8>),
}

/// What an executor runs.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The launch function it belongs to (`"aclnnAdd"`).
    pub api: &'static str,
    /// The CANN operator type.
    pub op_type: &'static str,
    pub attrs: Attrs,
    pub inputs: Vec<PlanIn>,
    /// The output tensors, in the operator's order (one for most).
    pub outputs: Vec<View>,
    /// Their parameter names, for messages (empty: `out`).
    pub output_names: &'static [&'static str],
    /// The kernel, when the plan made it itself (the operators of the
    /// table planned in `nn.rs`): `op_type` is then its name only, and
    /// the outputs were checked when it was made.
    pub native: Option<ops::native::Native>,
}

/// Every aclnn object.
#[derive(Debug)]
pub(crate) enum Obj {
    Tensor(TensorObj),
    Scalar(DType, Vec<u8>),
    IntArray(Vec<i64>),
    // Held for the handle's lifetime; no implemented operator takes them yet.
    #[allow(dead_code)]
    FloatArray(Vec<f32>),
    /// The `outputMask` of the backwards (`aclnn/backward.rs`).
    BoolArray(Vec<bool>),
    /// The member tensors, which the list owns: destroying the list
    /// destroys them.
    TensorList(Vec<Arc<Obj>>),
    Executor(Plan),
}

/// The kinds, for destroy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tensor,
    Scalar,
    IntArray,
    FloatArray,
    BoolArray,
    TensorList,
    Executor,
}

impl Obj {
    fn kind(&self) -> Kind {
        match self {
            Obj::Tensor(_) => Kind::Tensor,
            Obj::Scalar(..) => Kind::Scalar,
            Obj::IntArray(_) => Kind::IntArray,
            Obj::FloatArray(_) => Kind::FloatArray,
            Obj::BoolArray(_) => Kind::BoolArray,
            Obj::TensorList(_) => Kind::TensorList,
            Obj::Executor(_) => Kind::Executor,
        }
    }
}

static TABLE: LazyLock<Mutex<Registry<Obj>>> = LazyLock::new(Default::default);

/// Registers `obj`; returns its handle.
pub(crate) fn insert(obj: Obj) -> usize {
    TABLE.lock().insert(Arc::new(obj))
}

/// How many aclnn objects (tensors, scalars, arrays, lists, executors not
/// yet run) are alive: a test that released everything sees 0 again.
pub fn live_handles() -> usize {
    TABLE.lock().all().len()
}

/// Row-major strides of `dims`.
pub(crate) fn contiguous_strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].saturating_mul(dims[i + 1].max(1));
    }
    s
}

/// Destroys the object `addr` names when it is of `kind`; null is a no-op.
///
/// A tensor list destroys its member tensors too, as CANN's does: "the
/// aclTensor in the aclTensorList does not need to be destroyed again"
/// (`aclDestroyTensorList`, CANN API reference `aolapi/operatorlist_00028`;
/// `docs/zh/nnopbase/aclnn/aclDestroyTensorList.md` of the opbase
/// repository, a mirror of hicann/opbase). A member already destroyed (by
/// the user, or listed twice) is a double destroy on the real runtime,
/// where the list deletes it again (undefined behaviour): with the check off
/// it is skipped; with it on, it is a `double-destroy` report (161002, the
/// list and its live members are still destroyed).
pub(crate) fn destroy(function: &'static str, what: &str, addr: usize, kind: Kind) -> aclnnStatus {
    crate::calls::record(function);
    if addr == 0 {
        return ACLNN_SUCCESS;
    }
    let mut t = TABLE.lock();
    match t.get(addr) {
        Lookup::Live(o) if o.kind() == kind => {
            t.remove_by(addr, function);
            let Obj::TensorList(members) = &*o else {
                return ACLNN_SUCCESS;
            };
            let mut twice = None;
            for (i, m) in members.iter().enumerate() {
                let maddr = Arc::as_ptr(m) as usize;
                match t.get(maddr) {
                    Lookup::Live(_) => {
                        t.remove_by(maddr, function);
                    }
                    Lookup::Destroyed if twice.is_none() => {
                        twice = Some((i, maddr, t.destroyed_by(maddr)));
                    }
                    _ => {}
                }
            }
            match twice {
                Some((i, maddr, by)) if crate::check::enabled() => {
                    drop(t);
                    let msg = crate::check::double_destroy(
                        function,
                        &format!("member {i} of list {addr:#x}, tensor"),
                        maddr,
                        by,
                    );
                    fail(ACLNN_ERR_PARAM_INVALID, format!("{function}: {msg}"))
                }
                _ => ACLNN_SUCCESS,
            }
        }
        Lookup::Live(o) => fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: {what} {addr:#x} is a {:?}, not a {kind:?}",
                o.kind()
            ),
        ),
        Lookup::Destroyed if crate::check::enabled() => {
            let by = t.destroyed_by(addr);
            drop(t);
            let msg = crate::check::double_destroy(function, what, addr, by);
            fail(ACLNN_ERR_PARAM_INVALID, format!("{function}: {msg}"))
        }
        Lookup::Destroyed => fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what} {addr:#x} was already destroyed"),
        ),
        Lookup::Unknown => fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what} {addr:#x} is not an object aclnn created"),
        ),
    }
}

/// The error for an object that is not of the kind `arg` checked — never
/// expected, but a panic must not cross the C ABI.
pub(crate) fn kind_mismatch(function: &str, what: &str) -> aclnnStatus {
    fail(
        ACLNN_ERR_PARAM_INVALID,
        format!("{function}: {what} is not the kind of object it was looked up as"),
    )
}

/// Looks up an argument of `kind`: null is 161001, anything else not live of
/// that kind 161002.
pub(crate) fn arg(
    function: &str,
    what: &str,
    addr: usize,
    kind: Kind,
) -> Result<Arc<Obj>, aclnnStatus> {
    if addr == 0 {
        return Err(fail(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{function}: {what} is null"),
        ));
    }
    match TABLE.lock().get(addr) {
        Lookup::Live(o) if o.kind() == kind => Ok(o),
        Lookup::Live(o) => Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: {what} {addr:#x} is a {:?}, not a {kind:?}",
                o.kind()
            ),
        )),
        Lookup::Destroyed => Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what} {addr:#x} was destroyed"),
        )),
        Lookup::Unknown => Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what} {addr:#x} is not a {kind:?} aclnn created"),
        )),
    }
}

/// The live object at `addr` when it is of `kind`, without recording an
/// error otherwise (for checks that leave the reporting to the planning
/// function).
pub(crate) fn peek(addr: usize, kind: Kind) -> Option<Arc<Obj>> {
    match TABLE.lock().get(addr) {
        Lookup::Live(o) if o.kind() == kind => Some(o),
        _ => None,
    }
}

/// The data type of the live tensor handle `addr` (`None` for any other
/// handle); records nothing.
pub(crate) fn dtype_of(addr: usize) -> Option<i32> {
    match &*peek(addr, Kind::Tensor)? {
        Obj::Tensor(t) => Some(t.dtype),
        _ => None,
    }
}

/// A tensor argument.
pub(crate) fn tensor_arg(function: &str, what: &str, addr: usize) -> Result<Arc<Obj>, aclnnStatus> {
    arg(function, what, addr, Kind::Tensor)
}

/// A tensor argument, bound: its spec, first byte and (non-contiguous
/// views) strides. Private formats are 561003 (no kernel); a data type the
/// kernels do not know, negative strides, storage smaller than the view's
/// span are 161002; an output view whose elements overlap (`output`) is
/// 161002 too, its result would be undefined.
pub(crate) fn bound(
    function: &str,
    what: &str,
    addr: usize,
    output: bool,
) -> Result<View, aclnnStatus> {
    let o = tensor_arg(function, what, addr)?;
    bound_obj(function, what, &o, output)
}

/// The members of a tensor-list argument, bound as inputs ([`bound`]).
pub(crate) fn bound_list(
    function: &str,
    what: &str,
    addr: usize,
) -> Result<Vec<View>, aclnnStatus> {
    bound_list_as(function, what, addr, false)
}

/// The members of a tensor-list argument, bound as inputs or (`output`,
/// a list the operator writes in place) as outputs ([`bound`]).
pub(crate) fn bound_list_as(
    function: &str,
    what: &str,
    addr: usize,
    output: bool,
) -> Result<Vec<View>, aclnnStatus> {
    let o = arg(function, what, addr, Kind::TensorList)?;
    let Obj::TensorList(members) = &*o else {
        return Err(kind_mismatch(function, what));
    };
    members
        .iter()
        .enumerate()
        .map(|(i, m)| bound_obj(function, &format!("{what}[{i}]"), m, output))
        .collect()
}

/// [`bound`] for a looked-up object.
fn bound_obj(function: &str, what: &str, o: &Obj, output: bool) -> Result<View, aclnnStatus> {
    let Obj::Tensor(t) = o else {
        return Err(kind_mismatch(function, what));
    };
    let Some(dtype) = DType::from_acl(t.dtype) else {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what}: data type {} is not supported", t.dtype),
        ));
    };
    let (spec, strides) = checked_layout(function, what, t, dtype, output)?;
    let first = (t.offset as usize)
        .checked_mul(dtype.size())
        .and_then(|b| t.addr.checked_add(b))
        .ok_or_else(|| {
            fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("{function}: {what}: offset overflows"),
            )
        })?;
    Ok(View {
        spec,
        addr: first,
        strides,
    })
}

/// The checks of a tensor's layout, whatever its element type: an ND-like
/// format (else 561003), one non-negative stride per dimension, an output
/// whose elements do not overlap, a view that fits in `isize` bytes of
/// `unit` elements and in its storage (else 161002). Returns the view as a
/// spec of `unit` elements and its strides (`None`: contiguous).
pub(crate) fn checked_layout(
    function: &str,
    what: &str,
    t: &TensorObj,
    unit: DType,
    output: bool,
) -> Result<(TensorSpec, Option<Vec<i64>>), aclnnStatus> {
    // The plain (non-fractal) formats, whose memory is the row-major view:
    // ACL_FORMAT_NCHW (0), NHWC (1), ND (2), HWCN (16), NDHWC (27), NCDHW
    // (30), NC (35), NCL (47); aclnn reads them all as ND (ggml passes NCL
    // and NC tensors to the element-wise operators).
    if ![0, 1, 2, 16, 27, 30, 35, 47].contains(&t.format) {
        return Err(fail(
            ACLNN_ERR_INNER_FIND_KERNEL_ERROR,
            format!(
                "{function}: {what}: format {} is not supported by cann-sim (ND-like formats only)",
                t.format
            ),
        ));
    }
    if t.strides.len() != t.view.len() || t.strides.iter().any(|&s| s < 0) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: {what}: strides {:?} do not fit view {:?} (one non-negative stride \
                 per dimension)",
                t.strides, t.view
            ),
        ));
    }
    let contiguous = contiguous_strides(&t.view);
    let same = t
        .view
        .iter()
        .zip(t.strides.iter().zip(&contiguous))
        .all(|(&d, (&s, &c))| d <= 1 || s == c);
    if output && !same && self_overlapping(&t.view, &t.strides) {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: {what}: the elements of view {:?} with strides {:?} overlap; an \
                 output must not write one place twice",
                t.view, t.strides
            ),
        ));
    }
    let spec = TensorSpec {
        dtype: unit,
        shape: t.view.clone(),
    };
    let strides = (!same).then(|| t.strides.clone());
    let Some(numel) = spec.checked_numel() else {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!("{function}: {what}: view {:?} is too large", t.view),
        ));
    };
    let storage: i128 = t.storage.iter().map(|&d| i128::from(d)).product();
    // Elements from the view's first to past its last.
    let span: i128 = match &strides {
        None => numel as i128,
        Some(st) => {
            1 + t
                .view
                .iter()
                .zip(st)
                .map(|(&d, &s)| i128::from(d.max(1) - 1) * i128::from(s))
                .sum::<i128>()
        }
    };
    if numel > 0 && i128::from(t.offset) + span > storage {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: {what}: view {:?} (strides {:?}) at offset {} does not fit in storage \
                 {:?}",
                t.view, t.strides, t.offset, t.storage
            ),
        ));
    }
    Ok((spec, strides))
}

/// Whether two different indices of a view with these strides may reach
/// the same element: sorted by stride, each dimension must step past
/// everything the inner ones span. (A sufficient test: a few interleaved
/// layouts that do not overlap are refused too.) Empty views never overlap.
fn self_overlapping(dims: &[i64], strides: &[i64]) -> bool {
    if dims.contains(&0) {
        return false;
    }
    let mut ds: Vec<(i64, i64)> = dims
        .iter()
        .zip(strides)
        .filter(|&(&d, _)| d > 1)
        .map(|(&d, &s)| (s, d))
        .collect();
    ds.sort_unstable();
    let mut span = 1i128;
    for (s, d) in ds {
        if i128::from(s) < span {
            return true;
        }
        span += i128::from(s) * i128::from(d - 1);
    }
    false
}

/// A scalar argument: its dtype and bytes.
pub(crate) fn scalar_arg(
    function: &str,
    what: &str,
    addr: usize,
) -> Result<(DType, Vec<u8>), aclnnStatus> {
    let o = arg(function, what, addr, Kind::Scalar)?;
    let Obj::Scalar(d, b) = &*o else {
        return Err(kind_mismatch(function, what));
    };
    Ok((*d, b.clone()))
}

/// An int array argument.
pub(crate) fn int_array_arg(
    function: &str,
    what: &str,
    addr: usize,
) -> Result<Vec<i64>, aclnnStatus> {
    let o = arg(function, what, addr, Kind::IntArray)?;
    let Obj::IntArray(v) = &*o else {
        return Err(kind_mismatch(function, what));
    };
    Ok(v.clone())
}

/// The value of `bytes` (of `dtype`) as an f64.
pub(crate) fn to_f64(dtype: DType, b: &[u8]) -> f64 {
    let a2 = |b: &[u8]| [b[0], b[1]];
    let a4 = |b: &[u8]| [b[0], b[1], b[2], b[3]];
    let a8 = |b: &[u8]| [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
    match dtype {
        DType::F32 => f64::from(f32::from_ne_bytes(a4(b))),
        DType::F16 => f64::from(half::f16::from_ne_bytes(a2(b))),
        DType::BF16 => f64::from(half::bf16::from_ne_bytes(a2(b))),
        DType::F64 => f64::from_ne_bytes(a8(b)),
        DType::I8 => f64::from(b[0] as i8),
        DType::I16 => f64::from(i16::from_ne_bytes(a2(b))),
        DType::U8 => f64::from(b[0]),
        DType::Bool => f64::from(u8::from(b[0] != 0)),
        DType::I32 => f64::from(i32::from_ne_bytes(a4(b))),
        DType::I64 => i64::from_ne_bytes(a8(b)) as f64,
    }
}

/// `v` as one element of `dtype` (integers truncate and saturate).
pub(crate) fn from_f64(dtype: DType, v: f64) -> Vec<u8> {
    match dtype {
        DType::F32 => (v as f32).to_ne_bytes().to_vec(),
        DType::F16 => half::f16::from_f64(v).to_ne_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f64(v).to_ne_bytes().to_vec(),
        DType::F64 => v.to_ne_bytes().to_vec(),
        DType::I8 => vec![(v as i8) as u8],
        DType::I16 => (v as i16).to_ne_bytes().to_vec(),
        DType::U8 => vec![v as u8],
        DType::Bool => vec![u8::from(v != 0.0)],
        DType::I32 => (v as i32).to_ne_bytes().to_vec(),
        DType::I64 => (v as i64).to_ne_bytes().to_vec(),
    }
}

/// An int64 host input holding `values`.
pub(crate) fn i64_input(values: &[i64]) -> PlanIn {
    PlanIn::Host(
        TensorSpec {
            dtype: DType::I64,
            shape: vec![values.len() as i64],
        },
        values.iter().flat_map(|v| v.to_ne_bytes()).collect(),
    )
}

/// Infers the output of `plan` and checks its `out` against it.
///
/// # Errors
///
/// 161002 (recorded) when the inputs do not combine or `out` differs.
pub(crate) fn check_plan(function: &str, plan: &Plan) -> Result<(), aclnnStatus> {
    if plan.native.is_some() {
        return Ok(());
    }
    let specs: Vec<(&TensorSpec, Option<&[u8]>)> = plan
        .inputs
        .iter()
        .map(|i| match i {
            PlanIn::Device(v) => (&v.spec, None),
            PlanIn::Host(s, b) => (s, Some(b.as_slice())),
        })
        .collect();
    let inferred = match ops::infer_with_some_values(plan.op_type, &specs, &plan.attrs) {
        Ok(o) => o,
        Err(e) => {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!("{function}: {}", e.message()),
            ));
        }
    };
    let names = ["out", "second output"];
    if inferred.len() != plan.outputs.len() {
        return Err(fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: the operator makes {} outputs, {} were given",
                inferred.len(),
                plan.outputs.len()
            ),
        ));
    }
    for (i, (want, got)) in inferred.iter().zip(&plan.outputs).enumerate() {
        let out = &got.spec;
        if want != out {
            return Err(fail(
                ACLNN_ERR_PARAM_INVALID,
                format!(
                    "{function}: {} is {} {:?}, but the result is {} {:?}",
                    plan.output_names.get(i).or(names.get(i)).unwrap_or(&"out"),
                    dtype_name(out.dtype),
                    out.shape,
                    dtype_name(want.dtype),
                    want.shape
                ),
            ));
        }
    }
    Ok(())
}

/// The `GetWorkspaceSize` phase: infers the output of `plan`, checks `out`
/// against it, writes a workspace size of 0 and a new executor.
///
/// # Safety
///
/// `workspace_size` and `executor`, when non-null, must be writable.
pub(crate) unsafe fn prepare(
    function: &str,
    plan: Result<Plan, aclnnStatus>,
    workspace_size: *mut u64,
    executor: *mut *mut aclOpExecutor,
) -> aclnnStatus {
    if workspace_size.is_null() {
        return fail(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{function}: workspaceSize is null"),
        );
    }
    if executor.is_null() {
        return fail(
            ACLNN_ERR_PARAM_NULLPTR,
            format!("{function}: executor is null"),
        );
    }
    let plan = match plan {
        Ok(p) => p,
        Err(rc) => return rc,
    };
    if let Err(rc) = check_plan(function, &plan) {
        return rc;
    }
    let h = insert(Obj::Executor(plan));
    // SAFETY: both checked non-null; the caller guarantees they are writable.
    unsafe {
        *workspace_size = 0;
        *executor = h as *mut aclOpExecutor;
    }
    ACLNN_SUCCESS
}

fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F64 => "float64",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::U8 => "uint8",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::Bool => "bool",
    }
}

/// The launch phase: runs the executor (once) on `stream`.
pub(crate) fn launch(
    function: &'static str,
    _workspace: usize,
    _workspace_size: u64,
    executor: usize,
    stream: aclrtStream,
) -> aclnnStatus {
    let o = match arg(function, "executor", executor, Kind::Executor) {
        Ok(o) => o,
        Err(rc) => return rc,
    };
    let Obj::Executor(plan) = &*o else {
        return kind_mismatch(function, "executor");
    };
    if plan.api != function {
        return fail(
            ACLNN_ERR_PARAM_INVALID,
            format!(
                "{function}: the executor was made by {}GetWorkspaceSize",
                plan.api
            ),
        );
    }
    // One use: the executor is consumed whatever happens next.
    TABLE.lock().remove_by(executor, function);
    match run(function, plan, stream) {
        Ok(()) => ACLNN_SUCCESS,
        Err(_) => ACLNN_ERR_RUNTIME_ERROR,
    }
}

fn run(function: &'static str, plan: &Plan, stream: aclrtStream) -> Result<(), i32> {
    use crate::acl::common;
    let s = common::stream_arg(function, stream)?;
    let ctx = common::current(function)?;
    let s = common::or_default(s, &ctx);
    common::in_context(function, &s, &ctx)?;
    let mut inputs = Vec::with_capacity(plan.inputs.len());
    for (i, p) in plan.inputs.iter().enumerate() {
        inputs.push(match p {
            PlanIn::Host(spec, b) => LaunchInput {
                spec: spec.clone(),
                src: if b.is_empty() {
                    Source::Empty
                } else {
                    Source::Host(b.clone())
                },
            },
            PlanIn::Device(v) => {
                let at = device_range(
                    function,
                    &format!("input {i}"),
                    v.addr,
                    span_bytes(&v.spec, v.strides.as_deref()),
                    ctx.device,
                )?;
                LaunchInput {
                    spec: v.spec.clone(),
                    src: match at {
                        Some(at) => Source::Device {
                            addr: v.addr,
                            at,
                            strides: v.strides.clone(),
                        },
                        None => Source::Empty,
                    },
                }
            }
        });
    }
    let mut outputs = Vec::with_capacity(plan.outputs.len());
    for v in &plan.outputs {
        let at = device_range(
            function,
            "out",
            v.addr,
            span_bytes(&v.spec, v.strides.as_deref()),
            ctx.device,
        )?;
        outputs.push(LaunchOutput {
            spec: v.spec.clone(),
            dst: at.map(|at| (v.addr, at)),
            strides: v.strides.clone(),
        });
    }
    let rc = match &plan.native {
        Some(n) => {
            let kernel = crate::rt::op::Kernel::Native(n.clone());
            match crate::rt::op::launch_kernel(function, &s, kernel, inputs, outputs) {
                Ok(()) => ACL_SUCCESS,
                Err(e) => crate::acl::common::rt_fail(function, e),
            }
        }
        None => launch_op(
            function,
            &s,
            plan.op_type.to_string(),
            plan.attrs.clone(),
            inputs,
            outputs,
        ),
    };
    if rc == ACL_SUCCESS { Ok(()) } else { Err(rc) }
}

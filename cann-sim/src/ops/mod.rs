//! The simulator's operator library: CPU kernels for the CANN operators the
//! simulator implements, behind one interface shared by the two operator
//! APIs (`aclop*` and `aclnn*`) and by the model executor.
//!
//! Tensors here are contiguous, row-major (ND) byte buffers with a data type
//! and a shape. Operator type names, input order, attribute names and dtype
//! rules are the real CANN ones; f16/bf16 inputs accumulate in f32, as the
//! Cube unit does. Broadcasting follows NumPy.

use std::collections::BTreeMap;

mod broadcast;
mod cast;
mod dtype;
mod elementwise;
mod fill;
mod matmul;
mod reduce;
mod softmax;
#[cfg(test)]
mod tests;
mod transpose;

/// Element types of the kernels (values are `aclDataType`'s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `ACL_FLOAT` (0).
    F32,
    /// `ACL_FLOAT16` (1).
    F16,
    /// `ACL_INT8` (2).
    I8,
    /// `ACL_INT32` (3).
    I32,
    /// `ACL_UINT8` (4).
    U8,
    /// `ACL_INT64` (9).
    I64,
    /// `ACL_BOOL` (12).
    Bool,
    /// `ACL_DOUBLE` (11).
    F64,
    /// `ACL_BF16` (27).
    BF16,
}

impl DType {
    /// From an `aclDataType` value.
    pub fn from_acl(v: i32) -> Option<DType> {
        Some(match v {
            0 => DType::F32,
            1 => DType::F16,
            2 => DType::I8,
            3 => DType::I32,
            4 => DType::U8,
            9 => DType::I64,
            11 => DType::F64,
            12 => DType::Bool,
            27 => DType::BF16,
            _ => return None,
        })
    }

    /// The `aclDataType` value.
    pub fn to_acl(self) -> i32 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::I8 => 2,
            DType::I32 => 3,
            DType::U8 => 4,
            DType::I64 => 9,
            DType::F64 => 11,
            DType::Bool => 12,
            DType::BF16 => 27,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::Bool => 1,
            DType::F16 | DType::BF16 => 2,
            DType::F32 | DType::I32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }
}

/// An operator attribute value (the `aclopSetAttr*` kinds).
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// `aclopSetAttrBool`.
    Bool(bool),
    /// `aclopSetAttrInt`.
    Int(i64),
    /// `aclopSetAttrFloat`.
    Float(f32),
    /// `aclopSetAttrString`.
    String(String),
    /// `aclopSetAttrDataType`.
    DataType(i32),
    /// `aclopSetAttrListBool`.
    ListBool(Vec<bool>),
    /// `aclopSetAttrListInt`.
    ListInt(Vec<i64>),
    /// `aclopSetAttrListFloat`.
    ListFloat(Vec<f32>),
    /// `aclopSetAttrListString`.
    ListString(Vec<String>),
    /// `aclopSetAttrListDataType`.
    ListDataType(Vec<i32>),
    /// `aclopSetAttrListListInt`.
    ListListInt(Vec<Vec<i64>>),
}

/// Attributes by name.
pub type Attrs = BTreeMap<String, AttrValue>;

/// A tensor's type and shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    /// Element type.
    pub dtype: DType,
    /// Dimensions (empty for a scalar).
    pub shape: Vec<i64>,
}

impl TensorSpec {
    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.numel() * self.dtype.size()
    }

    /// Number of elements, or `None` when a dimension is negative or the
    /// size in bytes of the tensor (counting zero dimensions as one, so that
    /// every stride fits too) does not fit in `isize`.
    pub fn checked_numel(&self) -> Option<usize> {
        let mut numel = 1usize;
        let mut span = 1usize;
        for &d in &self.shape {
            let d = usize::try_from(d).ok()?;
            numel = numel.checked_mul(d)?;
            span = span.checked_mul(d.max(1))?;
        }
        let bytes = span.checked_mul(self.dtype.size())?;
        isize::try_from(bytes).ok()?;
        Some(numel)
    }

    /// Size in bytes, or `None` as for [`TensorSpec::checked_numel`].
    pub fn checked_bytes(&self) -> Option<usize> {
        self.checked_numel()?.checked_mul(self.dtype.size())
    }
}

/// An input tensor: its spec and its bytes (`spec.bytes()` long).
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Type and shape.
    pub spec: &'a TensorSpec,
    /// Contiguous row-major bytes.
    pub data: &'a [u8],
}

/// An output tensor: its spec and its bytes (`spec.bytes()` long).
#[derive(Debug)]
pub struct Output<'a> {
    /// Type and shape.
    pub spec: &'a TensorSpec,
    /// Contiguous row-major bytes, written by the kernel.
    pub data: &'a mut [u8],
}

/// Why an operator cannot run; each maps to the runtime's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    /// No such operator type: `ACL_ERROR_OP_NOT_FOUND` (100024).
    NotFound(String),
    /// Inputs (count, dtype, shape) do not fit: `ACL_ERROR_OP_INPUT_NOT_MATCH` (100021).
    Input(String),
    /// Outputs (count, dtype, shape) do not fit: `ACL_ERROR_OP_OUTPUT_NOT_MATCH` (100022).
    Output(String),
    /// A missing or ill-typed attribute: `ACL_ERROR_OP_ATTR_NOT_MATCH` (100023).
    Attr(String),
    /// A dtype the operator does not support: `ACL_ERROR_UNSUPPORTED_DATA_TYPE` (100026).
    DType(String),
}

impl OpError {
    /// The `aclError` code.
    pub fn code(&self) -> i32 {
        match self {
            OpError::NotFound(_) => 100024,
            OpError::Input(_) => 100021,
            OpError::Output(_) => 100022,
            OpError::Attr(_) => 100023,
            OpError::DType(_) => 100026,
        }
    }

    /// The message for `aclGetRecentErrMsg`.
    pub fn message(&self) -> &str {
        match self {
            OpError::NotFound(m)
            | OpError::Input(m)
            | OpError::Output(m)
            | OpError::Attr(m)
            | OpError::DType(m) => m,
        }
    }
}

/// A dimension whose size depends on the values of an input that [`infer`]
/// was not given (GE's `UNKNOWN_DIM`).
pub const UNKNOWN_DIM: i64 = -1;

/// The single dimension of a shape whose rank depends on the values of an
/// input that [`infer`] was not given (GE's `UNKNOWN_DIM_NUM`: shape `[-2]`).
pub const UNKNOWN_RANK: i64 = -2;

/// Every operator type the library runs, by its CANN name, sorted.
const OP_TYPES: &[&str] = &[
    "Abs",
    "Add",
    "Axpy",
    "BatchMatMul",
    "Cast",
    "Exp",
    "Fill",
    "Gelu",
    "Log",
    "LogSoftmaxV2",
    "MatMul",
    "Maximum",
    "Minimum",
    "Mul",
    "Neg",
    "OnesLike",
    "RealDiv",
    "ReduceMax",
    "ReduceMean",
    "ReduceSum",
    "Relu",
    "ReluGrad",
    "Rsqrt",
    "Sigmoid",
    "SoftmaxV2",
    "Sqrt",
    "Sub",
    "Tanh",
    "Transpose",
    "ZerosLike",
];

/// Every operator type the library runs, by its CANN name (sorted).
pub fn op_types() -> &'static [&'static str] {
    OP_TYPES
}

/// The output specs of `op_type` for these input specs and attributes
/// (shape and dtype inference with CANN's rules).
///
/// Some output shapes depend on the *values* of an input: `axes` of
/// ReduceSum/ReduceMean/ReduceMax, `perm` of Transpose, `dims` of Fill. As
/// GE does for a non-constant input, `infer` then reports the dimensions it
/// cannot know as [`UNKNOWN_DIM`] (-1), or the shape `[UNKNOWN_RANK]` (`[-2]`)
/// when even the rank is unknown. [`infer_with_values`] gives the exact shapes.
///
/// # Errors
///
/// [`OpError::NotFound`] for an unknown operator type, [`OpError::Input`] for
/// a wrong input count, shape or dtype combination, [`OpError::DType`] for a
/// dtype the operator does not support, [`OpError::Attr`] for a missing or
/// ill-typed attribute.
pub fn infer(
    op_type: &str,
    inputs: &[TensorSpec],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let args: Vec<Arg<'_>> = inputs.iter().map(|spec| Arg { spec, data: None }).collect();
    op.infer(&args, attrs)
}

/// Like [`infer`], with the input data at hand, so that shapes depending on
/// input values (`axes`, `perm`, `dims`) are exact.
///
/// # Errors
///
/// As [`infer`]; also [`OpError::Input`] when an input's byte length is not
/// `spec.bytes()`.
pub fn infer_with_values(
    op_type: &str,
    inputs: &[Input<'_>],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let args = checked_args(op, inputs)?;
    op.infer(&args, attrs)
}

/// Like [`infer`], with the values of some inputs known (the constant
/// ones, `Some(bytes)`), so that shapes depending on them are exact.
///
/// # Errors
///
/// As [`infer`]; also [`OpError::Input`] when a known input's byte length is
/// not `spec.bytes()`.
pub fn infer_with_some_values(
    op_type: &str,
    inputs: &[(&TensorSpec, Option<&[u8]>)],
    attrs: &Attrs,
) -> Result<Vec<TensorSpec>, OpError> {
    let op = Op::parse(op_type)?;
    let names = op.input_names();
    let mut args = Vec::with_capacity(inputs.len());
    for (i, &(spec, data)) in inputs.iter().enumerate() {
        if let Some(d) = data {
            let name = names.get(i).copied().unwrap_or("extra");
            let need = spec
                .checked_bytes()
                .ok_or_else(|| bad_shape(op, name, spec))?;
            if d.len() != need {
                return Err(OpError::Input(format!(
                    "{}: input {name} buffer is {} bytes but {} needs {need}",
                    op.name(),
                    d.len(),
                    fmt_spec(spec)
                )));
            }
        }
        args.push(Arg { spec, data });
    }
    op.infer(&args, attrs)
}

/// Runs the kernel of `op_type`.
///
/// Output specs must equal what [`infer_with_values`] returns (else
/// [`OpError::Output`]); every buffer must be exactly `spec.bytes()` long
/// (else [`OpError::Input`] or [`OpError::Output`]). Nothing is written to
/// the outputs when an error is returned.
///
/// # Errors
///
/// As [`infer`], plus [`OpError::Output`] for outputs that do not fit.
pub fn run(
    op_type: &str,
    inputs: &[Input<'_>],
    attrs: &Attrs,
    outputs: &mut [Output<'_>],
) -> Result<(), OpError> {
    let op = Op::parse(op_type)?;
    let args = checked_args(op, inputs)?;
    let expected = op.infer(&args, attrs)?;
    let names = op.output_names();
    if outputs.len() != expected.len() {
        return Err(OpError::Output(format!(
            "{op_type}: expects {} output{} ({}), got {}",
            expected.len(),
            if expected.len() == 1 { "" } else { "s" },
            names.join(", "),
            outputs.len()
        )));
    }
    for (i, (out, want)) in outputs.iter().zip(&expected).enumerate() {
        let name = names.get(i).copied().unwrap_or("y");
        if out.spec != want {
            return Err(OpError::Output(format!(
                "{op_type}: output {name} is {} but the operator produces {}",
                fmt_spec(out.spec),
                fmt_spec(want)
            )));
        }
        let need = want.checked_bytes().unwrap_or(usize::MAX);
        if out.data.len() != need {
            return Err(OpError::Output(format!(
                "{op_type}: output {name} buffer is {} bytes but {} needs {need}",
                out.data.len(),
                fmt_spec(want)
            )));
        }
    }
    op.run(inputs, attrs, outputs)
}

/// An input as inference sees it: the spec, and the data when known.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'a> {
    pub(crate) spec: &'a TensorSpec,
    pub(crate) data: Option<&'a [u8]>,
}

fn checked_args<'a>(op: Op, inputs: &[Input<'a>]) -> Result<Vec<Arg<'a>>, OpError> {
    let names = op.input_names();
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let name = names.get(i).copied().unwrap_or("extra");
            let need = input
                .spec
                .checked_bytes()
                .ok_or_else(|| bad_shape(op, name, input.spec))?;
            if input.data.len() != need {
                return Err(OpError::Input(format!(
                    "{}: input {name} buffer is {} bytes but {} needs {need}",
                    op.name(),
                    input.data.len(),
                    fmt_spec(input.spec)
                )));
            }
            Ok(Arg {
                spec: input.spec,
                data: Some(input.data),
            })
        })
        .collect()
}

fn bad_shape(op: Op, name: &str, spec: &TensorSpec) -> OpError {
    if spec.shape.iter().any(|&d| d < 0) {
        OpError::Input(format!(
            "{}: input {name} has shape {}: dimensions must be >= 0",
            op.name(),
            fmt_shape(&spec.shape)
        ))
    } else {
        OpError::Input(format!(
            "{}: input {name} has shape {}: its size overflows",
            op.name(),
            fmt_shape(&spec.shape)
        ))
    }
}

/// The operators, by CANN name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Abs,
    Add,
    Axpy,
    BatchMatMul,
    Cast,
    Exp,
    Fill,
    Gelu,
    Log,
    LogSoftmaxV2,
    MatMul,
    Maximum,
    Minimum,
    Mul,
    Neg,
    OnesLike,
    RealDiv,
    ReduceMax,
    ReduceMean,
    ReduceSum,
    Relu,
    ReluGrad,
    Rsqrt,
    Sigmoid,
    SoftmaxV2,
    Sqrt,
    Sub,
    Tanh,
    Transpose,
    ZerosLike,
}

impl Op {
    /// Every operator, in the order of [`OP_TYPES`].
    #[cfg(test)]
    pub(crate) const ALL: [Op; 30] = [
        Op::Abs,
        Op::Add,
        Op::Axpy,
        Op::BatchMatMul,
        Op::Cast,
        Op::Exp,
        Op::Fill,
        Op::Gelu,
        Op::Log,
        Op::LogSoftmaxV2,
        Op::MatMul,
        Op::Maximum,
        Op::Minimum,
        Op::Mul,
        Op::Neg,
        Op::OnesLike,
        Op::RealDiv,
        Op::ReduceMax,
        Op::ReduceMean,
        Op::ReduceSum,
        Op::Relu,
        Op::ReluGrad,
        Op::Rsqrt,
        Op::Sigmoid,
        Op::SoftmaxV2,
        Op::Sqrt,
        Op::Sub,
        Op::Tanh,
        Op::Transpose,
        Op::ZerosLike,
    ];

    fn parse(op_type: &str) -> Result<Op, OpError> {
        Ok(match op_type {
            "Abs" => Op::Abs,
            "Add" => Op::Add,
            "Axpy" => Op::Axpy,
            "BatchMatMul" => Op::BatchMatMul,
            "Cast" => Op::Cast,
            "Exp" => Op::Exp,
            "Fill" => Op::Fill,
            "Gelu" => Op::Gelu,
            "Log" => Op::Log,
            "LogSoftmaxV2" => Op::LogSoftmaxV2,
            "MatMul" => Op::MatMul,
            "Maximum" => Op::Maximum,
            "Minimum" => Op::Minimum,
            "Mul" => Op::Mul,
            "Neg" => Op::Neg,
            "OnesLike" => Op::OnesLike,
            "RealDiv" => Op::RealDiv,
            "ReduceMax" => Op::ReduceMax,
            "ReduceMean" => Op::ReduceMean,
            "ReduceSum" => Op::ReduceSum,
            "Relu" => Op::Relu,
            "ReluGrad" => Op::ReluGrad,
            "Rsqrt" => Op::Rsqrt,
            "Sigmoid" => Op::Sigmoid,
            "SoftmaxV2" => Op::SoftmaxV2,
            "Sqrt" => Op::Sqrt,
            "Sub" => Op::Sub,
            "Tanh" => Op::Tanh,
            "Transpose" => Op::Transpose,
            "ZerosLike" => Op::ZerosLike,
            _ => {
                return Err(OpError::NotFound(format!(
                    "op type {op_type} is not supported by cann-sim; supported: {}",
                    OP_TYPES.join(", ")
                )));
            }
        })
    }

    /// The CANN name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Abs => "Abs",
            Op::Add => "Add",
            Op::Axpy => "Axpy",
            Op::BatchMatMul => "BatchMatMul",
            Op::Cast => "Cast",
            Op::Exp => "Exp",
            Op::Fill => "Fill",
            Op::Gelu => "Gelu",
            Op::Log => "Log",
            Op::LogSoftmaxV2 => "LogSoftmaxV2",
            Op::MatMul => "MatMul",
            Op::Maximum => "Maximum",
            Op::Minimum => "Minimum",
            Op::Mul => "Mul",
            Op::Neg => "Neg",
            Op::OnesLike => "OnesLike",
            Op::RealDiv => "RealDiv",
            Op::ReduceMax => "ReduceMax",
            Op::ReduceMean => "ReduceMean",
            Op::ReduceSum => "ReduceSum",
            Op::Relu => "Relu",
            Op::ReluGrad => "ReluGrad",
            Op::Rsqrt => "Rsqrt",
            Op::Sigmoid => "Sigmoid",
            Op::SoftmaxV2 => "SoftmaxV2",
            Op::Sqrt => "Sqrt",
            Op::Sub => "Sub",
            Op::Tanh => "Tanh",
            Op::Transpose => "Transpose",
            Op::ZerosLike => "ZerosLike",
        }
    }

    /// Input names in CANN's order, and how many of them are required (the
    /// rest are optional).
    pub(crate) fn input_names(self) -> &'static [&'static str] {
        match self {
            Op::Add | Op::Axpy | Op::Sub | Op::Mul | Op::RealDiv | Op::Maximum | Op::Minimum => {
                &["x1", "x2"]
            }
            Op::ReluGrad => &["gradients", "features"],
            Op::MatMul => &["x1", "x2", "bias"],
            Op::BatchMatMul => &["x1", "x2"],
            Op::ReduceSum | Op::ReduceMean | Op::ReduceMax => &["x", "axes"],
            Op::LogSoftmaxV2 => &["logits"],
            Op::Transpose => &["x", "perm"],
            Op::Fill => &["dims", "value"],
            _ => &["x"],
        }
    }

    fn required_inputs(self) -> usize {
        match self {
            Op::MatMul => 2,
            _ => self.input_names().len(),
        }
    }

    pub(crate) fn output_names(self) -> &'static [&'static str] {
        match self {
            Op::ReluGrad => &["backprops"],
            Op::LogSoftmaxV2 => &["logsoftmax"],
            _ => &["y"],
        }
    }

    fn infer(self, args: &[Arg<'_>], attrs: &Attrs) -> Result<Vec<TensorSpec>, OpError> {
        let names = self.input_names();
        let (min, max) = (self.required_inputs(), names.len());
        if args.len() < min || args.len() > max {
            let list = if min == max {
                names.join(", ")
            } else {
                format!("{}[, {}]", names[..min].join(", "), names[min..].join(", "))
            };
            let count = if min == max {
                format!("{min}")
            } else {
                format!("{min} or {max}")
            };
            return Err(OpError::Input(format!(
                "{}: expects {count} input{} ({list}), got {}",
                self.name(),
                if max == 1 { "" } else { "s" },
                args.len()
            )));
        }
        for (arg, name) in args.iter().zip(names) {
            if arg.spec.checked_numel().is_none() {
                return Err(bad_shape(self, name, arg.spec));
            }
        }
        let out = match self {
            Op::Add
            | Op::Axpy
            | Op::Sub
            | Op::Mul
            | Op::RealDiv
            | Op::Maximum
            | Op::Minimum
            | Op::ReluGrad => elementwise::infer_binary(self, args[0].spec, args[1].spec)?,
            Op::Neg
            | Op::Abs
            | Op::Exp
            | Op::Log
            | Op::Sqrt
            | Op::Rsqrt
            | Op::Relu
            | Op::Sigmoid
            | Op::Tanh
            | Op::Gelu => elementwise::infer_unary(self, args[0].spec, attrs)?,
            Op::Cast => cast::infer(args[0].spec, attrs)?,
            Op::MatMul | Op::BatchMatMul => matmul::infer(self, args, attrs)?,
            Op::ReduceSum | Op::ReduceMean | Op::ReduceMax => reduce::infer(self, args, attrs)?,
            Op::SoftmaxV2 | Op::LogSoftmaxV2 => softmax::infer(self, args[0].spec, attrs)?,
            Op::Transpose => transpose::infer(args)?,
            Op::Fill | Op::ZerosLike | Op::OnesLike => fill::infer(self, args)?,
        };
        if out.shape.iter().all(|&d| d >= 0) && out.checked_numel().is_none() {
            return Err(OpError::Input(format!(
                "{}: the output shape {} is too large",
                self.name(),
                fmt_shape(&out.shape)
            )));
        }
        Ok(vec![out])
    }

    fn run(
        self,
        inputs: &[Input<'_>],
        attrs: &Attrs,
        outputs: &mut [Output<'_>],
    ) -> Result<(), OpError> {
        let [out] = outputs else {
            return Err(OpError::Output(format!(
                "{}: expects 1 output, got {}",
                self.name(),
                outputs.len()
            )));
        };
        match self {
            Op::Add
            | Op::Axpy
            | Op::Sub
            | Op::Mul
            | Op::RealDiv
            | Op::Maximum
            | Op::Minimum
            | Op::ReluGrad => elementwise::run_binary(self, &inputs[0], &inputs[1], attrs, out),
            Op::Neg
            | Op::Abs
            | Op::Exp
            | Op::Log
            | Op::Sqrt
            | Op::Rsqrt
            | Op::Relu
            | Op::Sigmoid
            | Op::Tanh
            | Op::Gelu => elementwise::run_unary(self, &inputs[0], attrs, out),
            Op::Cast => cast::run(&inputs[0], out),
            Op::MatMul | Op::BatchMatMul => matmul::run(self, inputs, attrs, out),
            Op::ReduceSum | Op::ReduceMean | Op::ReduceMax => reduce::run(self, inputs, attrs, out),
            Op::SoftmaxV2 | Op::LogSoftmaxV2 => softmax::run(self, &inputs[0], attrs, out),
            Op::Transpose => transpose::run(inputs, out),
            Op::Fill | Op::ZerosLike | Op::OnesLike => fill::run(self, inputs, out),
        }
    }
}

/// `[2,3]`, `[]` for a scalar.
pub(crate) fn fmt_shape(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

/// `float32 [2,3]`.
pub(crate) fn fmt_spec(spec: &TensorSpec) -> String {
    format!("{} {}", spec.dtype.name(), fmt_shape(&spec.shape))
}

/// Number of elements of a validated shape (every dimension >= 0 and the
/// product known to fit).
pub(crate) fn numel(shape: &[i64]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

/// The dtype error for `name` of `op`, listing what is supported.
pub(crate) fn dtype_error(op: Op, name: &str, dtype: DType, supported: &[DType]) -> OpError {
    let list: Vec<&str> = supported.iter().map(|d| d.name()).collect();
    OpError::DType(format!(
        "{}: input {name} has dtype {}, which the operator does not support (supported: {})",
        op.name(),
        dtype.name(),
        list.join(", ")
    ))
}

/// Checks that `dtype` of input `name` is in `supported`.
pub(crate) fn check_dtype(
    op: Op,
    name: &str,
    dtype: DType,
    supported: &[DType],
) -> Result<(), OpError> {
    if supported.contains(&dtype) {
        Ok(())
    } else {
        Err(dtype_error(op, name, dtype, supported))
    }
}

fn attr_type_error(op: Op, name: &str, want: &str, got: &AttrValue) -> OpError {
    OpError::Attr(format!(
        "{}: attribute {name} must be {want}, got {got:?}",
        op.name()
    ))
}

/// An optional bool attribute.
pub(crate) fn attr_bool(op: Op, attrs: &Attrs, name: &str, default: bool) -> Result<bool, OpError> {
    match attrs.get(name) {
        None => Ok(default),
        Some(AttrValue::Bool(b)) => Ok(*b),
        Some(other) => Err(attr_type_error(op, name, "a bool", other)),
    }
}

/// An optional float attribute.
pub(crate) fn attr_float(op: Op, attrs: &Attrs, name: &str, default: f32) -> Result<f32, OpError> {
    match attrs.get(name) {
        None => Ok(default),
        Some(AttrValue::Float(f)) => Ok(*f),
        Some(other) => Err(attr_type_error(op, name, "a float", other)),
    }
}

/// An optional list-of-int attribute.
pub(crate) fn attr_list_int(
    op: Op,
    attrs: &Attrs,
    name: &str,
    default: &[i64],
) -> Result<Vec<i64>, OpError> {
    match attrs.get(name) {
        None => Ok(default.to_vec()),
        Some(AttrValue::ListInt(v)) => Ok(v.clone()),
        Some(other) => Err(attr_type_error(op, name, "a list of ints", other)),
    }
}

/// A required int attribute (`aclopSetAttrInt` or `aclopSetAttrDataType`).
pub(crate) fn attr_int_required(op: Op, attrs: &Attrs, name: &str) -> Result<i64, OpError> {
    match attrs.get(name) {
        None => Err(OpError::Attr(format!(
            "{}: required attribute {name} is missing",
            op.name()
        ))),
        Some(AttrValue::Int(v)) => Ok(*v),
        Some(AttrValue::DataType(v)) => Ok(i64::from(*v)),
        Some(other) => Err(attr_type_error(op, name, "an int", other)),
    }
}

/// The values of an index input (`axes`, `perm`, `dims`): int32 or int64,
/// of rank at most `max_rank`. `Ok(None)` when the data is not known.
pub(crate) fn index_values(
    op: Op,
    name: &str,
    arg: &Arg<'_>,
    max_rank: usize,
) -> Result<Option<Vec<i64>>, OpError> {
    check_dtype(op, name, arg.spec.dtype, &[DType::I32, DType::I64])?;
    if arg.spec.shape.len() > max_rank {
        return Err(OpError::Input(format!(
            "{}: input {name} has shape {}: it must be {}",
            op.name(),
            fmt_shape(&arg.spec.shape),
            if max_rank == 0 {
                "a scalar"
            } else {
                "1-D (or a scalar)"
            }
        )));
    }
    Ok(arg.data.map(|d| dtype::load_i64(arg.spec.dtype, d)))
}

/// `axis` in `[-rank, rank-1]`, as an index.
pub(crate) fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis.checked_add(r)? } else { axis };
    if (0..r).contains(&a) {
        usize::try_from(a).ok()
    } else {
        None
    }
}

//! The operators the library runs ([`Op`]): their CANN names, input and
//! output names, and the dispatch of inference and kernels to the modules
//! that implement them.

use super::{
    Arg, Attrs, Input, OpError, Output, TensorSpec, argmax, bad_shape, cast, elementwise, fill,
    fmt_shape, gather, matmul, reduce, softmax, transformer, transpose,
};

/// Every operator type the library runs, by its CANN name, sorted.
pub(super) const OP_TYPES: &[&str] = &[
    "Abs",
    "Add",
    "ArgMaxV2",
    "Axpy",
    "BatchMatMul",
    "Cast",
    "Exp",
    "Fill",
    "GatherV2",
    "Gelu",
    "Log",
    "LogSoftmaxV2",
    "MaskedFill",
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
    "RmsNorm",
    "RotaryPositionEmbedding",
    "Rsqrt",
    "Sigmoid",
    "SoftmaxV2",
    "Sqrt",
    "Sub",
    "SwiGlu",
    "Tanh",
    "Transpose",
    "ZerosLike",
];

/// The operators, by CANN name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Abs,
    Add,
    ArgMaxV2,
    Axpy,
    BatchMatMul,
    Cast,
    Exp,
    Fill,
    GatherV2,
    Gelu,
    Log,
    LogSoftmaxV2,
    MaskedFill,
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
    RmsNorm,
    RotaryPositionEmbedding,
    Rsqrt,
    Sigmoid,
    SoftmaxV2,
    Sqrt,
    Sub,
    SwiGlu,
    Tanh,
    Transpose,
    ZerosLike,
}

impl Op {
    /// Every operator, in the order of [`OP_TYPES`].
    #[cfg(test)]
    pub(crate) const ALL: [Op; 36] = [
        Op::Abs,
        Op::Add,
        Op::ArgMaxV2,
        Op::Axpy,
        Op::BatchMatMul,
        Op::Cast,
        Op::Exp,
        Op::Fill,
        Op::GatherV2,
        Op::Gelu,
        Op::Log,
        Op::LogSoftmaxV2,
        Op::MaskedFill,
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
        Op::RmsNorm,
        Op::RotaryPositionEmbedding,
        Op::Rsqrt,
        Op::Sigmoid,
        Op::SoftmaxV2,
        Op::Sqrt,
        Op::Sub,
        Op::SwiGlu,
        Op::Tanh,
        Op::Transpose,
        Op::ZerosLike,
    ];

    pub(super) fn parse(op_type: &str) -> Result<Op, OpError> {
        Ok(match op_type {
            "Abs" => Op::Abs,
            "Add" => Op::Add,
            "ArgMaxV2" => Op::ArgMaxV2,
            "Axpy" => Op::Axpy,
            "BatchMatMul" => Op::BatchMatMul,
            "Cast" => Op::Cast,
            "Exp" => Op::Exp,
            "Fill" => Op::Fill,
            "GatherV2" => Op::GatherV2,
            "Gelu" => Op::Gelu,
            "Log" => Op::Log,
            "LogSoftmaxV2" => Op::LogSoftmaxV2,
            "MaskedFill" => Op::MaskedFill,
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
            "RmsNorm" => Op::RmsNorm,
            "RotaryPositionEmbedding" => Op::RotaryPositionEmbedding,
            "Rsqrt" => Op::Rsqrt,
            "Sigmoid" => Op::Sigmoid,
            "SoftmaxV2" => Op::SoftmaxV2,
            "Sqrt" => Op::Sqrt,
            "Sub" => Op::Sub,
            "SwiGlu" => Op::SwiGlu,
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
            Op::ArgMaxV2 => "ArgMaxV2",
            Op::Axpy => "Axpy",
            Op::BatchMatMul => "BatchMatMul",
            Op::Cast => "Cast",
            Op::Exp => "Exp",
            Op::Fill => "Fill",
            Op::GatherV2 => "GatherV2",
            Op::Gelu => "Gelu",
            Op::Log => "Log",
            Op::LogSoftmaxV2 => "LogSoftmaxV2",
            Op::MaskedFill => "MaskedFill",
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
            Op::RmsNorm => "RmsNorm",
            Op::RotaryPositionEmbedding => "RotaryPositionEmbedding",
            Op::Rsqrt => "Rsqrt",
            Op::Sigmoid => "Sigmoid",
            Op::SoftmaxV2 => "SoftmaxV2",
            Op::Sqrt => "Sqrt",
            Op::Sub => "Sub",
            Op::SwiGlu => "SwiGlu",
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
            Op::GatherV2 => &["x", "indices", "axis"],
            Op::MaskedFill => &["x", "mask", "value"],
            Op::ArgMaxV2 => &["x", "dimension"],
            Op::RmsNorm => &["x", "gamma"],
            Op::RotaryPositionEmbedding => &["x", "cos", "sin"],
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
            Op::RmsNorm => &["y", "rstd"],
            _ => &["y"],
        }
    }

    pub(super) fn infer(self, args: &[Arg<'_>], attrs: &Attrs) -> Result<Vec<TensorSpec>, OpError> {
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
        let outs = match self {
            Op::RmsNorm => transformer::infer_rms_norm(args[0].spec, args[1].spec, attrs)?,
            _ => vec![self.infer_one(args, attrs)?],
        };
        for out in &outs {
            if out.shape.iter().all(|&d| d >= 0) && out.checked_numel().is_none() {
                return Err(OpError::Input(format!(
                    "{}: the output shape {} is too large",
                    self.name(),
                    fmt_shape(&out.shape)
                )));
            }
        }
        Ok(outs)
    }

    /// The output of a single-output operator.
    fn infer_one(self, args: &[Arg<'_>], attrs: &Attrs) -> Result<TensorSpec, OpError> {
        Ok(match self {
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
            Op::GatherV2 => gather::infer(args, attrs)?,
            Op::MaskedFill => fill::infer_masked_fill(args)?,
            Op::ArgMaxV2 => argmax::infer(args, attrs)?,
            Op::RotaryPositionEmbedding => transformer::infer_rope(args, attrs)?,
            Op::SwiGlu => transformer::infer_swi_glu(args[0].spec, attrs)?,
            Op::RmsNorm => {
                return Err(OpError::Output(format!("{}: has two outputs", self.name())));
            }
        })
    }

    pub(super) fn run(
        self,
        inputs: &[Input<'_>],
        attrs: &Attrs,
        outputs: &mut [Output<'_>],
    ) -> Result<(), OpError> {
        if self == Op::RmsNorm {
            return transformer::run_rms_norm(&inputs[0], &inputs[1], attrs, outputs);
        }
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
            Op::GatherV2 => gather::run(inputs, attrs, out),
            Op::MaskedFill => fill::run_masked_fill(inputs, out),
            Op::ArgMaxV2 => argmax::run(inputs, attrs, out),
            Op::RotaryPositionEmbedding => transformer::run_rope(inputs, attrs, out),
            Op::SwiGlu => transformer::run_swi_glu(&inputs[0], attrs, out),
            Op::RmsNorm => unreachable_two_outputs(self),
        }
    }
}

/// RmsNorm runs before the single-output dispatch; an error, never a panic.
fn unreachable_two_outputs(op: Op) -> Result<(), OpError> {
    Err(OpError::Output(format!("{}: has two outputs", op.name())))
}

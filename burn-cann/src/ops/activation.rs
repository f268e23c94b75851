//! `ActivationOps` for [`Cann`]: the activations CANN has operators for;
//! the rest keep Burn's definitions in terms of other ops (all on device).

use super::*;
use crate::Cann;
use burn_backend::ops::ActivationOps;
use burn_backend::tensor::FloatTensor;

impl ActivationOps<Cann> for Cann {
    fn relu(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("relu", tensor, aclnn::relu)
    }

    /// `grad` where `output > 0`, else 0 (`aclnnThresholdBackward` at 0).
    fn relu_backward(output: FloatTensor<Cann>, grad: FloatTensor<Cann>) -> FloatTensor<Cann> {
        ok(
            "relu_backward",
            (|| {
                let zero = kernel::scalar(output.kind(), 0.0)?;
                let o = output.arg()?;
                kernel::unary(&grad, None, |s, g, out| {
                    aclnn::threshold_backward(s, g, &o, &zero, out)
                })
            })(),
        )
    }

    /// Burn's GELU is the exact (erf) form: `aclnnGeluV2` with approximate 0.
    fn gelu(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        ok(
            "gelu",
            kernel::unary(&tensor, None, |s, a, o| aclnn::gelu_v2(s, a, 0, o)),
        )
    }

    fn gelu_backward(x: FloatTensor<Cann>, grad: FloatTensor<Cann>) -> FloatTensor<Cann> {
        ok(
            "gelu_backward",
            (|| {
                let xa = x.arg()?;
                kernel::unary(&grad, None, |s, g, o| aclnn::gelu_backward(s, g, &xa, o))
            })(),
        )
    }

    fn sigmoid(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("sigmoid", tensor, aclnn::sigmoid)
    }

    fn sigmoid_backward(output: FloatTensor<Cann>, grad: FloatTensor<Cann>) -> FloatTensor<Cann> {
        ok(
            "sigmoid_backward",
            (|| {
                let oa = output.arg()?;
                kernel::unary(&grad, None, |s, g, o| aclnn::sigmoid_backward(s, g, &oa, o))
            })(),
        )
    }

    fn leaky_relu(
        tensor: FloatTensor<Cann>,
        negative_slope: burn_backend::Scalar,
    ) -> FloatTensor<Cann> {
        ok(
            "leaky_relu",
            (|| {
                // aclnnLeakyRelu takes the slope as an f32 scalar.
                let slope = Scalar::new(kernel::scalar_f64(&negative_slope) as f32)?;
                kernel::unary(&tensor, None, |s, a, o| aclnn::leaky_relu(s, a, &slope, o))
            })(),
        )
    }

    fn log_sigmoid(tensor: FloatTensor<Cann>) -> FloatTensor<Cann> {
        un("log_sigmoid", tensor, aclnn::log_sigmoid)
    }

    fn softmax(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        ok(
            "softmax",
            (|| {
                kernel::check_dim("softmax", &tensor, dim)?;
                kernel::unary(&tensor, None, |s, a, o| aclnn::softmax(s, a, dim as i64, o))
            })(),
        )
    }

    fn log_softmax(tensor: FloatTensor<Cann>, dim: usize) -> FloatTensor<Cann> {
        ok(
            "log_softmax",
            (|| {
                kernel::check_dim("log_softmax", &tensor, dim)?;
                kernel::unary(&tensor, None, |s, a, o| {
                    aclnn::log_softmax(s, a, dim as i64, o)
                })
            })(),
        )
    }
}

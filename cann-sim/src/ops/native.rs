//! Kernels given as Rust functions rather than by CANN operator type: the
//! operators of the aclnn table that plan their kernel directly (their
//! shapes, dtypes and attributes are checked when the plan is made, so the
//! kernel only computes). A [`Native`] kernel runs on a stream's worker
//! exactly like a named operator: contiguous inputs, contiguous outputs
//! (strided views gathered and scattered around it).
//!
//! The helpers read and write elements through `f64` ([`read`],
//! [`write()`]): exact for every dtype of the simulator but int64 beyond 2^53,
//! with f16/bf16 results rounded once, to nearest even, when stored (the
//! hardware rounds f32 intermediates; results agree to the output type's
//! precision).

use super::dtype::{load_f64, load_i64, store_f32, store_i64};
use super::{DType, Input, OpError, Output};
use std::sync::Arc;

/// The function of a native kernel: the inputs and outputs of the plan,
/// in order.
pub type KernelFn = dyn Fn(&[Input<'_>], &mut [Output<'_>]) -> Result<(), OpError> + Send + Sync;

/// A kernel and the name it runs under (in traces and messages).
#[derive(Clone)]
pub struct Native {
    /// The CANN operator it stands for (`"LayerNorm"`).
    pub name: &'static str,
    /// The computation.
    pub run: Arc<KernelFn>,
}

impl Native {
    /// A kernel named `name`.
    pub fn new(
        name: &'static str,
        run: impl Fn(&[Input<'_>], &mut [Output<'_>]) -> Result<(), OpError> + Send + Sync + 'static,
    ) -> Native {
        Native {
            name,
            run: Arc::new(run),
        }
    }
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Native({})", self.name)
    }
}

/// The elements of `input` as `f64`.
pub fn read(input: &Input<'_>) -> Vec<f64> {
    load_f64(input.spec.dtype, input.data)
}

/// The elements of an integer `input` (indices) as `i64`.
pub fn read_i64(input: &Input<'_>) -> Vec<i64> {
    load_i64(input.spec.dtype, input.data)
}

/// Stores `vals` into `out` as its dtype: floats rounded to nearest even,
/// integers rounded toward zero (wrapping), bool as `v != 0`.
pub fn write(out: &mut Output<'_>, vals: &[f64]) {
    store_f64(out.spec.dtype, vals, out.data);
}

/// Stores integer `vals` into `out` as its dtype.
pub fn write_i64(out: &mut Output<'_>, vals: &[i64]) {
    store_i64(out.spec.dtype, vals, out.data);
}

/// Encodes `vals` as `dtype` into `out`.
pub fn store_f64(dtype: DType, vals: &[f64], out: &mut [u8]) {
    match dtype {
        DType::F64 => {
            for (o, v) in out.chunks_exact_mut(8).zip(vals) {
                o.copy_from_slice(&v.to_le_bytes());
            }
        }
        DType::F32 | DType::F16 | DType::BF16 => {
            let f: Vec<f32> = vals.iter().map(|&v| v as f32).collect();
            store_f32(dtype, &f, out);
        }
        DType::Bool => {
            for (o, v) in out.iter_mut().zip(vals) {
                *o = u8::from(*v != 0.0);
            }
        }
        _ => {
            let i: Vec<i64> = vals.iter().map(|&v| v as i64).collect();
            store_i64(dtype, &i, out);
        }
    }
}

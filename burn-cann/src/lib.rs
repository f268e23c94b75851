//! A [Burn](https://burn.dev) backend for Huawei Ascend NPUs, on the safe
//! [`acl`] crate: every tensor op runs a CANN aclnn operator on the device
//! (or is a view change), and runs unchanged on `cann-sim`.
//!
//! ```
//! # cann_sim::install().unwrap();
//! use burn_cann::{Cann, CannDevice};
//! use burn_tensor::Tensor;
//!
//! let device = CannDevice::default();
//! let a = Tensor::<Cann, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
//! let b = a.clone().matmul(a.transpose()) + 1.0;
//! assert_eq!(b.into_data().to_vec::<f32>().unwrap(), [6.0, 12.0, 12.0, 26.0]);
//! ```
//!
//! # Layout
//!
//! - [`Cann`]: the backend type (Burn 0.21's `Backend`), [`CannDevice`]: one
//!   NPU by ordinal, [`CannTensor`]: the primitive, a strided view (shape,
//!   strides, offset) over reference-counted device memory.
//! - `kernel` (private) runs operators over primitives and knows nothing of
//!   Burn's traits; `backend` and `ops` are the Burn 0.21 trait impls. A
//!   newer Burn changes those two only (see the README's version policy).
//!
//! # Errors
//!
//! Burn's ops return values, not results: a failure (an operator CANN
//! refuses, a device that does not exist, out of memory) is a panic whose
//! message names the Burn op and carries CANN's error. An op without an
//! operator (quantization, FFT, deformable convolution, ...) panics with
//! "`<op>` is not supported" — never a host fallback.

mod backend;
mod device;
mod kernel;
mod ops;
mod tensor;

pub use backend::Cann;
pub use device::CannDevice;
pub use ops::qtensor::CannQTensor;
pub use tensor::CannTensor;

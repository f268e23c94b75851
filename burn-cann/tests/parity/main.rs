//! burn-cann's tests, one binary (each test binary would monomorphize
//! Burn's tensor API for both backends again): every op on `Cann` against
//! `NdArray` on the same inputs, gradients against `Autodiff<NdArray>`,
//! misuse, and the `burn_mlp` example.

mod autodiff;
mod autodiff_breadth;
mod common;
mod dtypes;
mod float_ops;
mod indexing_random;
mod int_bool_ops;
mod misuse;
mod new_kernels;
mod nn_ops;
mod suite;
mod tensor_breadth;
mod train_cnn;
mod train_mlp;

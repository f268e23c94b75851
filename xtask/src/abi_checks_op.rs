//! abi-check behavioural checks for operators, models and kernels (aclop, aclnn, aclmdl, kernel launch): one entry per
//! implemented function, `(C name, C++ body)`, in the format of
//! `abi::CHECKS` (see there and xtask/abi/preamble.cpp for the helpers).

pub const CHECKS: &[(&str, &str)] = &[];

//! abi-check behavioural checks for offline models (aclmdl*) and kernel
//! launch (aclrtBinary*, aclrtKernelArgs*, aclrtLaunchKernel*): one entry per
//! implemented function, `(C name, C++ body)`, in the format of
//! `abi::CHECKS` (see there and xtask/abi/preamble.cpp for the helpers).

pub const CHECKS: &[(&str, &str)] = &[];

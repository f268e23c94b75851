//! `libcann_sim.so`: every C function `cann-sim` exports (`#[no_mangle]`
//! in that crate), as one shared library that programs and the loader open
//! in place of `libascendcl.so`, `libhccl.so`, `libopapi.so` and
//! `libdcmi.so`. The code is all in `cann-sim`; this crate only links it
//! into a `cdylib` (see `Cargo.toml` for why it is a crate of its own).

// Linked in whole: its exported symbols are this library's.
pub use cann_sim;

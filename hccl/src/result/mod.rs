//! Thin, `Result`-returning calls: one function per HCCL function, no
//! ownership, no state. The safe types of this crate are built on these, and
//! this module is the only one that names the -sys crates: every C call of
//! the crate is made here (`cargo xtask lint`, run in CI, fails otherwise).
//!
//! **Naming rule**: the C name without its `Hccl` prefix, in snake_case,
//! a word starting at each capital of the C name (`HcclCommInitRootInfoConfig`
//! → [`comm_init_root_info_config`], `HcclAllReduce` → [`all_reduce`],
//! `HcclGetRootInfo` → [`get_root_info`], `HcclAlltoAllVC` →
//! [`allto_all_vc`]). Every function carries `#[doc(alias = "<C name>")]`
//! for each C function it calls (the test above checks that the aliases and
//! the calls agree, and that the names follow the rule). Out-parameters
//! become return values; an `HcclResult` other than `HCCL_SUCCESS` becomes
//! [`Error::Hccl`](crate::Error::Hccl) with the library's message, read
//! right after the call on the same thread (the thread's stale message is
//! cleared before each call, so the one read is the call's own). The files of
//! this module group the functions by family; all are re-exported here.
//! Two stand apart: [`get_comm_config_capability`] returns its C function's
//! count as is (it returns no status), and [`comm_config_init`] calls
//! nothing (`HcclCommConfigInit` is inline in the header, not exported; this
//! is its Rust equivalent for the loaded CANN release).
//!
//! Functions that take raw pointers or handles are `unsafe`, with the C
//! contract as their safety condition.
//!
//! The C types and constants the safe layer holds (handles, enums, codes,
//! limits) are re-exported in [`raw`], which has no functions.
//!
//! # Example
//!
//! A one-rank communicator by hand, with no safe handle around it:
//!
//! ```
//! # cann_sim::install().unwrap();
//! use hccl::result;
//!
//! let rt = acl::Runtime::init()?;
//! let npu = acl::Device::new(&rt, 0)?;
//! npu.bind()?;
//! let root = result::get_root_info()?;
//! let comm = result::comm_init_root_info_config(1, &root, 0, &result::comm_config_init())?;
//! // SAFETY: `comm` is live until it is destroyed, once, here.
//! unsafe {
//!     assert_eq!(result::get_rank_size(comm)?, 1);
//!     result::comm_destroy(comm)?;
//! }
//! # Ok::<(), hccl::Error>(())
//! ```

/// Calls the C function `$f` and checks the `HcclResult` it returns: the
/// name is written once, for the call and for the error. The thread's
/// recent error message is cleared first, so the one read after a failure
/// is the call's own. Expands to a call of an `unsafe` function, so it is
/// used inside an `unsafe` block whose `SAFETY` comment states the C
/// contract.
macro_rules! call {
    ($f:ident($($arg:expr),* $(,)?)) => {{
        $crate::error::clear_recent();
        $crate::error::check(stringify!($f), sys::$f($($arg),*))
    }};
}

mod collectives;
mod comm;
mod config;
mod p2p;
pub mod raw;
mod window;

pub use collectives::*;
pub use comm::*;
pub use config::*;
pub use p2p::*;
pub use window::*;

/// Wrappers that only forward their arguments to one C function and check
/// the `HcclResult` it returns. Each entry is written
/// `#[doc(alias = "CName")] rust_name = CName(args);`; the alias must name
/// the function called (checked at compile time), so the C name cannot get
/// out of step between the docs, the call and the error.
macro_rules! forward {
    ($(
        $(#[doc = $doc:literal])*
        #[doc(alias = $alias:literal)]
        $name:ident = $c:ident($($arg:ident: $ty:ty),* $(,)?);
    )*) => {$(
        const _: () = assert!(
            ::acl::result::same_name($alias, stringify!($c)),
            concat!("doc alias ", $alias, " does not name the C function called")
        );
        $(#[doc = $doc])*
        ///
        /// # Safety
        ///
        /// The handles passed are live and the pointers valid for the
        /// lengths passed, as the C function requires; memory a queued
        /// operation uses stays valid and unused by others until it has run.
        #[doc(alias = $alias)]
        #[allow(
            clippy::too_many_arguments,
            reason = "one parameter per argument of the C function"
        )]
        pub unsafe fn $name($($arg: $ty),*) -> $crate::error::Result<()> {
            // SAFETY: the caller's contract.
            unsafe { call!($c($($arg),*)) }
        }
    )*};
}
pub(crate) use forward;

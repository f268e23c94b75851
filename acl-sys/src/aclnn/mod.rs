//! Raw FFI to aclnn, CANN's two-phase operator API (what torch_npu's
//! op-plugin calls): the core objects of `libnnopbase.so` (`aclCreateTensor`,
//! `aclCreateScalar`, `aclCreateIntArray`, ...) and the operators of
//! `libopapi.so` (`aclnnAddGetWorkspaceSize` then `aclnnAdd`, ...).
//!
//! The declarations are hand-written from the documented API
//! (`aclnn_declarations.rs`; the aclnn headers ship with the toolkit only)
//! and generated into `bindings.rs` by `cargo xtask bindgen`, with the same
//! generator and loader as the rest of `acl-sys`.
//!
//! # One library for two
//!
//! The loader holds one library per table, and this table spans two shared
//! objects. It loads **`libopapi.so`**: that library links `libnnopbase.so`
//! (a `DT_NEEDED` entry), and `dlsym` on a handle searches the library's
//! dependencies too, so the core functions resolve through the same handle
//! (torch_npu dlopens both; the result is the same). The simulator provides
//! both halves from one table (`cann_sim::install()`).
//!
//! # Choosing the library
//!
//! In order: a table installed in code ([`install`]); the file named by
//! `$CANN_OPAPI_LIB`; `lib64` (and the per-architecture `lib64`) under the
//! CANN install directories (`$ASCEND_HOME_PATH`, `$ASCEND_TOOLKIT_HOME`,
//! `/usr/local/Ascend/ascend-toolkit/latest`); finally `libopapi.so` through
//! the system loader.
//!
//! Every function returns [`aclnnStatus`]: [`ACLNN_SUCCESS`], a parameter
//! error (`161xxx`), a runtime error (`361xxx`) or an internal error
//! (`561xxx`).

#![allow(missing_docs)]

mod bindings;
pub use bindings::*;

use crate::loader::{LibrarySpec, Source};

/// Where aclnn (`libopapi.so`) is searched for
/// ([`cann_loader::libraries::OPAPI`]).
pub const SPEC: LibrarySpec = cann_loader::libraries::OPAPI;

fn version_probe(_api: &Api, _source: &Source) -> Option<String> {
    // aclnn has no version function; the version is the toolkit's.
    None
}

crate::define_library!(SPEC, version_probe, "aclnn");

/// The name of an aclnn status code (`"ACLNN_ERR_PARAM_INVALID"`), or
/// `None` for a code this crate does not declare.
pub fn status_name(status: aclnnStatus) -> Option<&'static str> {
    Some(match status {
        ACLNN_SUCCESS => "ACLNN_SUCCESS",
        ACLNN_ERR_PARAM_NULLPTR => "ACLNN_ERR_PARAM_NULLPTR",
        ACLNN_ERR_PARAM_INVALID => "ACLNN_ERR_PARAM_INVALID",
        ACLNN_ERR_RUNTIME_ERROR => "ACLNN_ERR_RUNTIME_ERROR",
        ACLNN_ERR_INNER => "ACLNN_ERR_INNER",
        ACLNN_ERR_INNER_INFERSHAPE_ERROR => "ACLNN_ERR_INNER_INFERSHAPE_ERROR",
        ACLNN_ERR_INNER_TILING_ERROR => "ACLNN_ERR_INNER_TILING_ERROR",
        ACLNN_ERR_INNER_FIND_KERNEL_ERROR => "ACLNN_ERR_INNER_FIND_KERNEL_ERROR",
        ACLNN_ERR_INNER_CREATE_EXECUTOR => "ACLNN_ERR_INNER_CREATE_EXECUTOR",
        ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR => "ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR",
        ACLNN_ERR_INNER_NULLPTR => "ACLNN_ERR_INNER_NULLPTR",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_the_core_and_every_operator_pair() {
        assert_eq!(Api::SYMBOLS.len(), 71);
        for name in [
            "aclCreateTensor",
            "aclDestroyTensorList",
            "aclnnAddGetWorkspaceSize",
            "aclnnAdd",
            "aclnnMatmul",
            "aclnnInplaceZero",
        ] {
            assert!(Api::SYMBOLS.contains(&name), "{name}");
        }
        assert_eq!(SPEC.env_var, "CANN_OPAPI_LIB");
        assert_eq!(status_name(161002), Some("ACLNN_ERR_PARAM_INVALID"));
    }
}

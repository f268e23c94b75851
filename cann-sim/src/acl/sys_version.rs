//! Installed package versions: `aclsysGetCANNVersion`,
//! `aclsysGetVersionStr`.
//!
//! The runtime reads `Version=` from `$ASCEND_HOME_PATH/share/info/<package>/version.info`
//! (the driver's from the path `/etc/ascend_install.info` names), trying a
//! package name with `-` and `_` swapped when the first is missing
//! (hicann/runtime `src/acl/aclrt_impl/acl.cpp`, `aclsysGetCANNVersionImpl`,
//! `aclsysGetVersionStrImpl`, `GetPkgVersionContent`, `FillinPackageVersion`).
//! The simulator stands in for the CANN install: each CANN package
//! (`runtime`, `bisheng-compiler`, `hccl`, `oam-tools`, `ops-legacy`, the
//! names `kMapToPkgName` uses) has the version of the CANN release whose
//! AscendCL it presents (`CANN_SIM_ACL_VERSION`, else the newest of
//! [`acl_sys::since::RELEASES`]), such as `9.1.0` or `8.3.RC1`. It installs
//! no driver: the driver's version, like any package it does not know, is
//! `ACL_ERROR_INVALID_FILE` (100003), as on a machine without that package.
//!
//! - Null `version`, `pkgName` or `versionStr` → 100000.
//! - A package enum out of range → 100000.
//! - `aclCANNPackageVersion`: `version` holds the whole string, the parts
//!   split at `.` (`8.3.RC1` → `8`, `3`, `RC1`, `0`), missing ones `0`.

use super::common::null_arg;
use crate::faults;
use crate::recent_error::fail;
use acl_sys::{
    ACL_ERROR_INVALID_FILE, ACL_ERROR_INVALID_PARAM, ACL_PKG_NAME_CANN, ACL_PKG_NAME_COMPILER,
    ACL_PKG_NAME_DRIVER, ACL_PKG_NAME_HCCL, ACL_PKG_NAME_OPP, ACL_PKG_NAME_OPP_KERNEL,
    ACL_PKG_NAME_RUNTIME, ACL_PKG_NAME_TOOLKIT, ACL_PKG_VERSION_MAX_SIZE, ACL_SUCCESS,
    aclCANNPackageName, aclCANNPackageVersion, aclError,
};
use std::ffi::{CStr, c_char};

/// The packages of the simulated install (`kMapToPkgName`'s names).
const PACKAGES: [&str; 5] = [
    "runtime",
    "bisheng-compiler",
    "hccl",
    "oam-tools",
    "ops-legacy",
];

/// The CANN release the simulator presents: the newest release whose ACL
/// version is at most the presented one.
pub fn cann_release() -> &'static str {
    let acl = crate::presented_acl_version().unwrap_or({
        let (a, b, c) = super::VERSION;
        (a as u32, b as u32, c as u32)
    });
    acl_sys::since::RELEASES
        .iter()
        .rev()
        .find(|r| r.acl <= acl)
        .or(acl_sys::since::RELEASES.first())
        .map_or("0.0.0", |r| r.cann)
}

/// The installed version of `package` (or its `-`/`_` twin), if the
/// simulator has it.
fn installed(package: &str) -> Option<&'static str> {
    let twin: String = package
        .chars()
        .map(|c| match c {
            '-' => '_',
            '_' => '-',
            c => c,
        })
        .collect();
    PACKAGES
        .iter()
        .any(|p| *p == package || *p == twin)
        .then(cann_release)
}

/// Copies `text` into the C buffer `dst` of `N` bytes, NUL-terminated and
/// truncated to fit.
fn copy_c<const N: usize>(dst: &mut [c_char; N], text: &str) {
    let n = text.len().min(N.saturating_sub(1));
    for (d, s) in dst.iter_mut().zip(text.as_bytes()[..n].iter()) {
        *d = *s as c_char;
    }
    if let Some(end) = dst.get_mut(n) {
        *end = 0;
    }
}

/// `aclsysGetCANNVersion`: the version of an installed CANN package.
///
/// # Safety
///
/// `version` is null or valid for writing an `aclCANNPackageVersion`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetCANNVersion(
    name: aclCANNPackageName,
    version: *mut aclCANNPackageVersion,
) -> aclError {
    const F: &str = "aclsysGetCANNVersion";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if version.is_null() {
        return null_arg(F, "version");
    }
    let package = match name {
        ACL_PKG_NAME_CANN | ACL_PKG_NAME_RUNTIME => "runtime",
        ACL_PKG_NAME_COMPILER => "bisheng-compiler",
        ACL_PKG_NAME_HCCL => "hccl",
        ACL_PKG_NAME_TOOLKIT => "oam-tools",
        ACL_PKG_NAME_OPP | ACL_PKG_NAME_OPP_KERNEL => "ops-legacy",
        ACL_PKG_NAME_DRIVER => "driver",
        other => {
            return fail(
                ACL_ERROR_INVALID_PARAM,
                format!("{F}: package name enum id {other} is invalid"),
            );
        }
    };
    let Some(text) = installed(package) else {
        return fail(
            ACL_ERROR_INVALID_FILE,
            format!(
                "{F}: the {package} package is not installed (cann-sim simulates the CANN \
                 packages, not the NPU driver)"
            ),
        );
    };
    let mut parts: Vec<&str> = text.split('.').collect();
    parts.resize(4, "0");
    let mut v = aclCANNPackageVersion::default();
    copy_c(&mut v.version, text);
    copy_c(&mut v.majorVersion, parts[0]);
    copy_c(&mut v.minorVersion, parts[1]);
    copy_c(&mut v.releaseVersion, parts[2]);
    copy_c(&mut v.patchVersion, parts[3]);
    // SAFETY: checked non-null; writable by the caller's contract.
    unsafe { *version = v };
    ACL_SUCCESS
}

/// `aclsysGetVersionStr`: the version string of an installed package, by
/// name.
///
/// # Safety
///
/// `pkg_name` is null or a NUL-terminated string; `version_str` is null or
/// valid for writing `ACL_PKG_VERSION_MAX_SIZE` (128) bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aclsysGetVersionStr(
    pkg_name: *mut c_char,
    version_str: *mut c_char,
) -> aclError {
    const F: &str = "aclsysGetVersionStr";
    if let Some(code) = faults::check(F) {
        return code;
    }
    if version_str.is_null() {
        return null_arg(F, "versionStr");
    }
    if pkg_name.is_null() {
        return null_arg(F, "pkgName");
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    let name = unsafe { CStr::from_ptr(pkg_name) }.to_string_lossy();
    let Some(text) = installed(&name) else {
        return fail(
            ACL_ERROR_INVALID_FILE,
            format!(
                "{F}: no version file for package {name:?}: cann-sim installs {} (and no \
                 driver or firmware)",
                PACKAGES.join(", ")
            ),
        );
    };
    // SAFETY: the caller's buffer holds ACL_PKG_VERSION_MAX_SIZE bytes.
    let dst = unsafe { &mut *version_str.cast::<[c_char; ACL_PKG_VERSION_MAX_SIZE as usize]>() };
    copy_c(dst, text);
    ACL_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_is_found_under_its_name_or_its_dash_underscore_twin() {
        assert!(installed("runtime").is_some());
        assert!(installed("bisheng_compiler").is_some());
        assert!(installed("ops_legacy").is_some());
        assert!(installed("driver").is_none());
        assert!(installed("nonexistent").is_none());
    }

    #[test]
    fn the_newest_runtime_is_cann_9_1() {
        if crate::presented_acl_version().is_none() {
            assert_eq!(cann_release(), "9.1.0");
        }
    }
}

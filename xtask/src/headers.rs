//! Fetches the CANN headers from the torch-npu wheel on PyPI.
//!
//! `cargo xtask headers` fetches the default release ([`DEFAULT_VERSION`],
//! the one the checked-in bindings come from) into `.cann-headers/`;
//! `cargo xtask headers --version X` fetches torch-npu X into
//! `.cann-headers/X/`. Both are ignored by git: the headers are Huawei's and
//! are never committed.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The torch-npu release the checked-in bindings are generated from.
pub const DEFAULT_VERSION: &str = "2.14.0";

/// The wheel the default headers come from.
pub const TORCH_NPU: &str = "torch-npu==2.14.0";

/// Where the default headers are unpacked (ignored by git).
pub fn dir(root: &Path) -> PathBuf {
    root.join(".cann-headers")
}

/// Where the headers of torch-npu `version` are unpacked: `.cann-headers/`
/// for the default release, `.cann-headers/<version>/` for the others.
pub fn version_dir(root: &Path, version: &str) -> PathBuf {
    if version == DEFAULT_VERSION {
        dir(root)
    } else {
        dir(root).join(version)
    }
}

/// `cargo xtask headers [--version X]`.
pub fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let version = match args {
        [] => DEFAULT_VERSION,
        [flag, v] if flag == "--version" => v.as_str(),
        _ => return Err("usage: cargo xtask headers [--version X]".into()),
    };
    let dir = fetch_version(root, version)?;
    println!("headers of torch-npu {version} in {}", dir.display());
    Ok(())
}

/// Downloads and unpacks the default headers, unless already present.
/// Returns the directory that holds `torch_npu/include/third_party/{acl,hccl}/inc`.
pub fn fetch(root: &Path) -> Result<PathBuf, String> {
    fetch_version(root, DEFAULT_VERSION)
}

/// Downloads and unpacks the headers of torch-npu `version`, unless already
/// present. Returns the directory that holds `torch_npu/include/third_party/`.
/// Old wheels (2.1.0.post8 and the like) carry no HCCL headers; only the
/// AscendCL ones are required.
pub fn fetch_version(root: &Path, version: &str) -> Result<PathBuf, String> {
    if version.is_empty()
        || !version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
    {
        return Err(format!(
            "{version:?} is not a torch-npu version (e.g. 2.5.1 or 2.1.0.post8; \
             `python3 -m pip index versions torch-npu` lists them)"
        ));
    }
    let dest = version_dir(root, version);
    let marker = dest.join("torch_npu/include/third_party/acl/inc/acl/acl.h");
    let complete = dest.join(".complete");
    if marker.is_file() && (version == DEFAULT_VERSION || complete.is_file()) {
        return Ok(dest);
    }
    std::fs::create_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let wheels = dest.join("wheel");
    let requirement = format!("torch-npu=={version}");
    let download = |extra: &[&str]| {
        Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
            .arg(&wheels)
            .args(extra)
            .arg(&requirement)
            .status()
            .map_err(|e| format!("cannot run python3 -m pip: {e}"))
    };
    let mut status = download(&[])?;
    if !status.success() {
        // No wheel for this interpreter: the headers are the same in every
        // wheel of a release, so take the CPython 3.10 x86_64 one.
        status = download(&[
            "--only-binary=:all:",
            "--implementation",
            "cp",
            "--python-version",
            "3.10",
            "--platform",
            "manylinux2014_x86_64",
        ])?;
    }
    if !status.success() {
        if version != DEFAULT_VERSION {
            let _ = std::fs::remove_dir_all(&dest);
        }
        return Err(format!(
            "pip download {requirement} failed ({status}); check the version with \
             `python3 -m pip index versions torch-npu`"
        ));
    }
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("no wheel in {}", wheels.display()))?;
    // A wheel is a zip file; Python's zipfile extracts only the include tree.
    let script = "import sys, zipfile\n\
        z = zipfile.ZipFile(sys.argv[1])\n\
        names = [n for n in z.namelist() if n.startswith(('torch_npu/include/third_party/acl/inc/', 'torch_npu/include/third_party/hccl/inc/'))]\n\
        z.extractall(sys.argv[2], names)\n\
        print(len(names), 'files')\n";
    let status = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&wheel)
        .arg(&dest)
        .status()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !status.success() || !marker.is_file() {
        return Err(format!("unpacking {} failed", wheel.display()));
    }
    let _ = std::fs::remove_dir_all(&wheels);
    std::fs::write(&complete, format!("torch-npu {version}\n"))
        .map_err(|e| format!("{}: {e}", complete.display()))?;
    Ok(dest)
}

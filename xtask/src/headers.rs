//! Fetches the CANN headers from the torch-npu wheel on PyPI.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The wheel the headers come from.
pub const TORCH_NPU: &str = "torch-npu==2.14.0";

/// Where the headers are unpacked (ignored by git).
pub fn dir(root: &Path) -> PathBuf {
    root.join(".cann-headers")
}

/// Downloads and unpacks the headers, unless already present. Returns the
/// directory that holds `torch_npu/include/third_party/{acl,hccl}/inc`.
pub fn fetch(root: &Path) -> Result<PathBuf, String> {
    let dest = dir(root);
    let marker = dest.join("torch_npu/include/third_party/hccl/inc/hccl/hccl.h");
    if marker.is_file() {
        return Ok(dest);
    }
    std::fs::create_dir_all(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let wheels = dest.join("wheel");
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--quiet", "-d"])
        .arg(&wheels)
        .arg(TORCH_NPU)
        .status()
        .map_err(|e| format!("cannot run python3 -m pip: {e}"))?;
    if !status.success() {
        return Err(format!("pip download {TORCH_NPU} failed ({status})"));
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
    Ok(dest)
}

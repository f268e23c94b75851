//! `cargo xtask bindgen`: regenerates (or checks) the three -sys crates' bindings.

use crate::{headers, workspace_root, write_or_check};
use cann_codegen::{self as codegen, Provenance, headers::HeaderDirs};
use std::path::{Path, PathBuf};

/// The command line that regenerates the files, recorded in them.
const COMMAND: &str = "`cargo xtask bindgen`";

/// The code generator, named in the files.
const GENERATOR: &str = "cann_codegen";

pub fn run(args: &[String]) -> Result<(), String> {
    let mut check = false;
    let mut header_root: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--check" => check = true,
            "--headers" => {
                header_root = Some(PathBuf::from(
                    it.next().ok_or("--headers needs a directory")?,
                ))
            }
            other => return Err(format!("bindgen: unknown argument {other}")),
        }
    }
    let root = workspace_root();
    let header_root = match header_root {
        Some(d) => d,
        None => headers::fetch(&root)?,
    };
    let dirs = HeaderDirs::find(&header_root)?;
    let bindgen_version = locked_version(&root, "bindgen").unwrap_or_else(|| "unknown".into());
    let generator = format!("bindgen {bindgen_version} (parsed as C++14), then {GENERATOR}");
    let source = header_source(&header_root, &dirs);

    let mut fresh = true;

    let acl_raw = codegen::headers::bindgen_acl(&dirs)?;
    let acl = codegen::generate(
        &Provenance {
            headers: &format!(
                "{source}; AscendCL headers {}",
                codegen::headers::ACL_HEADERS.join(", ")
            ),
            generator: &generator,
            command: COMMAND,
            prelude: "use crate::loader::LoadError;",
            library_fn: "crate::library",
        },
        &acl_raw,
    )?;
    fresh &= write_or_check(&root.join("acl-sys/src/bindings.rs"), &acl, check)?;

    let hccl_raw = codegen::headers::bindgen_hccl(&dirs)?;
    let hccl = codegen::generate(
        &Provenance {
            headers: &format!(
                "{source}; HCCL headers {}",
                codegen::headers::HCCL_HEADERS.join(", ")
            ),
            generator: &generator,
            command: COMMAND,
            prelude: "#[allow(unused_imports)]\nuse acl_sys::*;",
            library_fn: "crate::library",
        },
        &hccl_raw,
    )?;
    fresh &= write_or_check(&root.join("hccl-sys/src/bindings.rs"), &hccl, check)?;

    fresh &= dcmi(&root, check)?;
    fresh &= aclnn(&root, check)?;

    if check && !fresh {
        return Err(
            "checked-in bindings differ from what the headers produce; run `cargo xtask bindgen`"
                .into(),
        );
    }
    if check {
        println!("bindings are current");
    } else {
        // Refresh what derives from the bindings.
        crate::sim_exports::generate(&root, false)?;
        crate::error_codes::generate(&root, false)?;
    }
    Ok(())
}

/// dcmi-sys: hand-written declarations, same code generator.
pub fn dcmi(root: &Path, check: bool) -> Result<bool, String> {
    let decl_path = root.join("dcmi-sys/declarations.rs");
    let decl =
        std::fs::read_to_string(&decl_path).map_err(|e| format!("{}: {e}", decl_path.display()))?;
    let out = codegen::generate(
        &Provenance {
            headers: "hand-written declarations (dcmi-sys/declarations.rs) from the documented DCMI API",
            generator: GENERATOR,
            command: "`cargo xtask bindgen` (dcmi-sys needs no headers)",
            prelude: "use cann_loader::LoadError;",
            library_fn: "crate::library",
        },
        &decl,
    )?;
    write_or_check(&root.join("dcmi-sys/src/bindings.rs"), &out, check)
}

/// acl-sys's aclnn module: hand-written declarations, same code generator,
/// its own library slot (`acl_sys::aclnn::library`).
pub fn aclnn(root: &Path, check: bool) -> Result<bool, String> {
    let decl_path = root.join("acl-sys/aclnn_declarations.rs");
    let mut decl =
        std::fs::read_to_string(&decl_path).map_err(|e| format!("{}: {e}", decl_path.display()))?;
    decl.push_str(&crate::operators::declarations(&crate::operators::load(
        root,
    )?));
    let out = codegen::generate(
        &Provenance {
            headers: "hand-written declarations (acl-sys/aclnn_declarations.rs) and the operator table (acl-sys/operators.toml) from the documented aclnn API",
            generator: GENERATOR,
            command: "`cargo xtask bindgen` (aclnn needs no headers)",
            prelude: "use crate::loader::LoadError;",
            library_fn: "crate::aclnn::library",
        },
        &decl,
    )?;
    write_or_check(&root.join("acl-sys/src/aclnn/bindings.rs"), &out, check)
}

fn header_source(header_root: &Path, dirs: &HeaderDirs) -> String {
    let version = dirs.acl_version().unwrap_or_else(|| "unknown".into());
    if header_root.ends_with(".cann-headers")
        || dirs.acl_inc.to_string_lossy().contains("torch_npu/include")
    {
        format!(
            "{} wheel from PyPI (torch_npu/include/third_party/{{acl,hccl}}/inc), ACL {version}",
            headers::TORCH_NPU
        )
    } else {
        format!("CANN install headers, ACL {version}")
    }
}

/// The version of `package` in the workspace's Cargo.lock.
pub fn locked_version(root: &Path, package: &str) -> Option<String> {
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).ok()?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{package}\"") {
            let v = lines
                .next()?
                .trim()
                .strip_prefix("version = \"")?
                .trim_end_matches('"');
            return Some(v.to_string());
        }
    }
    None
}

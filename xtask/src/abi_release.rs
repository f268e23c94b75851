//! `cargo xtask abi-check --headers DIR` (or `--release X`) for a header set
//! that is not the bindings' own: another CANN release.
//!
//! The behavioural checks of `abi.rs` are about the simulator and use the
//! bindings' names, so they run against the bindings' headers. What a header
//! set of another release can check is the ABI: that every function it
//! declares is exported by `libcann_sim.so` with a compatible type, and that
//! its `HcclCommConfigInit` fills a prefix of the bindings' `HcclCommConfig`
//! the way `hccl_sys::comm_config_init` does. The program:
//!
//! - takes the address of every function the release declares and the
//!   bindings declare identically through the bindings' type (the compiler
//!   checks it against the release's header, the linker and `dladdr` that
//!   `libcann_sim.so` defines it);
//! - for a function the release declares differently, takes its address
//!   through the release's own declaration and states the difference: the
//!   same bits at the machine level (`const`, typedef names) or a real change,
//!   which must be version-gated (`acl_sys::since::SIGNATURE_SINCE`: the loader
//!   refuses it from a library of that release, and cann-sim presenting that
//!   release leaves it out). An ungated real change fails the check;
//! - counts the functions of the bindings the release does not declare (added
//!   later, dated in `docs/COMPAT.md`).
//!
//! A release without HCCL headers (CANN 8.0.x wheels) is checked with the
//! bindings' HCCL headers, and says so.

use crate::abi::{self, INLINE, Plan};
use crate::compat::{self, Decls};
use crate::headers;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The fixed part of the program, after `abi::COMMON`.
const RELEASE: (&str, &str) = ("xtask/abi/release.cpp", include_str!("../abi/release.cpp"));

/// Where a header set lives: the directory holding `acl/` and the one holding
/// `hccl/` (if any).
pub struct HeaderSource {
    /// Shown in messages.
    pub label: String,
    acl: PathBuf,
    hccl: Option<PathBuf>,
}

impl HeaderSource {
    /// Finds the headers under `dir`: a CANN install's `include/` (or its
    /// root), a torch-npu wheel's `torch_npu/include`, or the directory a
    /// wheel was unpacked into (`.cann-headers/X/`).
    pub fn find(dir: &Path) -> Result<HeaderSource, String> {
        for base in [
            dir.to_path_buf(),
            dir.join("include"),
            dir.join("torch_npu/include"),
        ] {
            let wheel = base.join("third_party/acl/inc");
            if wheel.join("acl/acl.h").is_file() {
                let hccl = base.join("third_party/hccl/inc");
                return Ok(HeaderSource {
                    label: dir.display().to_string(),
                    acl: wheel,
                    hccl: hccl.join("hccl/hccl.h").is_file().then_some(hccl),
                });
            }
            if base.join("acl/acl.h").is_file() {
                return Ok(HeaderSource {
                    label: dir.display().to_string(),
                    acl: base.clone(),
                    hccl: base.join("hccl/hccl.h").is_file().then_some(base),
                });
            }
        }
        Err(format!(
            "no AscendCL headers under {}: expected acl/acl.h in it, in its include/, or in \
             torch_npu/include/third_party/acl/inc (`cargo xtask headers --version X` fetches them)",
            dir.display()
        ))
    }
}

/// The declarations of `src` and of the bindings' own header set.
pub struct Compared {
    pub release: Decls,
    pub bindings: Decls,
    /// The shim the release was parsed from (kept for compiling).
    shim: PathBuf,
    /// The HCCL headers come from the bindings' set.
    borrowed_hccl: bool,
}

impl Compared {
    /// Parses both header sets with bindgen.
    pub fn new(root: &Path, src: &HeaderSource) -> Result<Compared, String> {
        let newest = headers::fetch(root)?;
        let newest_hccl = newest.join("torch_npu/include/third_party/hccl/inc");
        let (shim_new, missing_new) = compat::shim(root, &newest, "abi-bindings")?;
        let bindings = compat::read_shim(&shim_new, missing_new, headers::DEFAULT_VERSION)?;
        let _ = std::fs::remove_dir_all(&shim_new);
        let borrowed_hccl = src.hccl.is_none();
        let hccl = src.hccl.clone().unwrap_or(newest_hccl);
        let (shim, missing) = compat::shim_tree(root, &src.acl, Some(&hccl), "abi-release")?;
        let mut release = compat::read_shim(&shim, missing, &src.label)?;
        if borrowed_hccl {
            release.has_hccl = false;
        }
        Ok(Compared {
            release,
            bindings,
            shim,
            borrowed_hccl,
        })
    }

    /// Does the release declare exactly what the bindings declare?
    pub fn same_as_bindings(&self) -> bool {
        !self.borrowed_hccl
            && self.release.functions == self.bindings.functions
            && self.release.acl_version == self.bindings.acl_version
    }

    /// The shim's root (what `HeaderDirs::find` takes).
    pub fn shim(&self) -> &Path {
        &self.shim
    }
}

impl Drop for Compared {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.shim);
    }
}

/// How one function of the bindings stands in the release.
enum Status {
    /// Declared identically: checked through the bindings' type.
    Same,
    /// Not declared by the release.
    Absent,
    /// Declared differently, same bits at the machine level.
    Spelling(String),
    /// Declared differently at the machine level, and refused for this
    /// release by the loader (and left out by cann-sim presenting it).
    Gated(String),
    /// Declared differently at the machine level and not gated: a failure.
    Ungated(String),
}

fn status(name: &str, cmp: &Compared) -> Status {
    let Some((_, rel)) = cmp.release.functions.get(name) else {
        return Status::Absent;
    };
    let Some((_, new)) = cmp.bindings.functions.get(name) else {
        return Status::Same;
    };
    if rel == new {
        return Status::Same;
    }
    let why = format!("`{rel}` in these headers, `{new}` in the bindings");
    if compat::abi_form(rel, &cmp.release) == compat::abi_form(new, &cmp.bindings) {
        return Status::Spelling(why);
    }
    match acl_sys::loader::refused_signature(name, &cmp.release.acl_version) {
        Some(r) => Status::Gated(format!(
            "{why}; the loader does not resolve it from a library older than ACL {}.{} \
             (CANN {}), and cann-sim presenting this release leaves it out",
            r.acl.0, r.acl.1, r.cann
        )),
        None => Status::Ungated(why),
    }
}

/// Runs the release check; `Ok(false)` when the headers are the bindings'
/// own (the full check applies).
pub fn run(root: &Path, src: &HeaderSource) -> Result<bool, String> {
    let started = std::time::Instant::now();
    let cmp = Compared::new(root, src)?;
    if cmp.same_as_bindings() {
        return Ok(false);
    }
    let plan = Plan::new(root)?;
    let lib = abi::build_sim()?;
    let lib_dir = lib
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", lib.display()))?;
    let out_dir = lib_dir
        .parent()
        .unwrap_or(lib_dir)
        .join("abi-check-release");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    println!(
        "abi-check: headers {} (ACL {}{}), library {}",
        src.label,
        cmp.release.acl_version,
        if cmp.borrowed_hccl {
            format!(
                "; no HCCL headers there, HCCL checked with torch-npu {}'s",
                headers::DEFAULT_VERSION
            )
        } else {
            String::new()
        },
        lib.display()
    );

    let source = out_dir.join("abi_release.cpp");
    let mut text = abi::Source::new(&source);
    text.push("// @generated by `cargo xtask abi-check --headers` (xtask/src/abi_release.rs).");
    text.push_file(abi::COMMON);
    text.push_file(RELEASE);
    text.push("");
    text.push("int main() {");
    let mut export_lines = std::collections::BTreeMap::new();
    let (mut same, mut absent, mut spelling, mut gated, mut failures) =
        (0usize, 0usize, Vec::new(), Vec::new(), Vec::new());
    for functions in &plan.libs {
        for f in functions {
            if f.decl.sig.variadic.is_some() || INLINE.iter().any(|(n, _)| *n == f.name) {
                continue;
            }
            let st = status(&f.name, &cmp);
            let ty = match &st {
                Status::Same => {
                    same += 1;
                    abi::cxx_fn_type(abi::params(&f.decl).into_iter(), false, &f.decl.sig.output)
                        .map_err(|e| format!("{}: {e}", f.name))?
                }
                Status::Absent => {
                    absent += 1;
                    continue;
                }
                Status::Spelling(why) | Status::Gated(why) | Status::Ungated(why) => {
                    match &st {
                        Status::Spelling(_) => spelling.push(format!("{}: {why}", f.name)),
                        Status::Gated(_) => gated.push(format!("{}: {why}", f.name)),
                        _ => failures.push(format!(
                            "{}: {why}; the difference is real at the machine level but \
                             acl_sys::since::SIGNATURE_SINCE does not gate it (run `cargo xtask \
                             compat` with this release in its list)",
                            f.name
                        )),
                    }
                    // Through the release's own declaration.
                    "auto".to_string()
                }
            };
            export_lines.insert(text.next_line(), f.name.clone());
            text.push(&format!(
                "    {{ {ty} *p = &{name}; abi_export(\"{name}\", abi_addr(p)); }}",
                name = f.name
            ));
        }
    }
    let config = !cmp.borrowed_hccl;
    text.push(&format!("    return abi_release_finish({config});"));
    text.push("}");
    let text = text.into_text();
    std::fs::write(&source, &text).map_err(|e| format!("{}: {e}", source.display()))?;
    let exe = out_dir.join("abi_release");
    let dirs = cann_codegen::headers::HeaderDirs::find(cmp.shim())?;
    abi::compile(&dirs, &source, &exe, lib_dir, &export_lines)?;
    let output = std::process::Command::new(&exe)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut exports = None;
    let mut report = String::new();
    let mut config_lines = Vec::new();
    for line in stdout.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("@exports") => exports = w.next().and_then(|x| x.parse::<usize>().ok()),
            Some("@elsewhere") => {}
            Some(tag @ ("@config-zero" | "@config-ab")) => {
                let size = w.next().and_then(|x| x.parse::<usize>().ok());
                let bytes = w.next().map(abi::unhex).transpose()?;
                config_lines.push((tag == "@config-ab", size, bytes));
            }
            _ => {
                let _ = writeln!(report, "{line}");
            }
        }
    }
    print!("{report}");
    let Some(exports) = exports else {
        return Err(format!(
            "{} printed no summary ({}): {}",
            exe.display(),
            abi::describe_status(&output.status),
            String::from_utf8_lossy(&output.stderr).trim_end()
        ));
    };
    println!(
        "  ok    exports: {exports} functions of these headers linked (and found in \
         libcann_sim.so): {same} through the bindings' types, {} through the headers' own \
         declarations",
        spelling.len() + gated.len() + failures.len()
    );
    for s in &spelling {
        println!("  ok    {s} (the same at the machine level: one export serves both)");
    }
    for g in &gated {
        println!("  ok    {g}");
    }
    println!(
        "  skip  {absent} functions of the bindings not declared by these headers (added later; \
         see docs/COMPAT.md)"
    );
    if config {
        match compare_config_prefix(
            &config_lines,
            acl_sys::loader::parse_acl_version(&cmp.release.acl_version),
        ) {
            Ok(msg) => println!("  ok    {msg}"),
            Err(e) => failures.push(format!("HcclCommConfigInit: {e}")),
        }
    } else {
        println!("  skip  HcclCommConfigInit: these headers have no hccl.h");
    }
    for f in &failures {
        println!("  FAIL  {f}");
    }
    if !output.status.success() {
        failures.push(format!(
            "{} failed ({})",
            exe.display(),
            abi::describe_status(&output.status)
        ));
    }
    println!(
        "abi-check: {exports} exports linked; {} failed ({:.1} s)",
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    if failures.is_empty() {
        Ok(true)
    } else {
        Err(format!(
            "{} ABI difference(s) against {} (program: {})",
            failures.len(),
            src.label,
            source.display()
        ))
    }
}

/// One `@config-…` line of the program: 0xAB-filled?, sizeof, the bytes.
type ConfigLine = (bool, Option<usize>, Option<Vec<u8>>);

/// The release's `HcclCommConfigInit` against `hccl_sys::comm_config_init_for`
/// that release's ACL version:
/// the release's struct must be a prefix of the bindings' (it is versioned by
/// its header: size and version in bytes 0..8 and 12..16), and every other
/// byte of that prefix must be what hccl-sys writes.
fn compare_config_prefix(
    lines: &[ConfigLine],
    acl_version: Option<(u32, u32, u32)>,
) -> Result<String, String> {
    let full = std::mem::size_of::<hccl_sys::HcclCommConfig>();
    let mut sizes = Vec::new();
    for (ab, size, bytes) in lines {
        let (Some(size), Some(bytes)) = (size, bytes) else {
            return Err("the program printed an incomplete config line".into());
        };
        if *size > full || bytes.len() != *size {
            return Err(format!(
                "sizeof(HcclCommConfig) is {size} in these headers, more than the bindings' {full}"
            ));
        }
        // What hccl-sys writes for a library of this release.
        let (rust, _) = abi::rust_config_bytes(if *ab { 0xAB } else { 0 }, acl_version);
        let recorded = u64::from_ne_bytes(bytes[0..8].try_into().map_err(|_| "short config")?);
        if recorded != *size as u64 {
            return Err(format!(
                "the header's HcclCommConfigInit records size {recorded}, sizeof is {size}"
            ));
        }
        if let Some(i) = (8..*size)
            .filter(|i| !(12..16).contains(i))
            .find(|&i| bytes[i] != rust[i])
        {
            return Err(format!(
                "byte {i} ({}) is {:#04x} after the header's HcclCommConfigInit but {:#04x} after \
                 hccl_sys::comm_config_init: the layouts agree but the defaults do not, so a \
                 config made by hccl-sys gives an HCCL of this release a value its own headers \
                 never write (see \"Findings\" in docs/COMPAT.md)",
                abi::config_field(i),
                bytes[i],
                rust[i]
            ));
        }
        let version = u32::from_ne_bytes(bytes[12..16].try_into().map_err(|_| "short config")?);
        sizes.push((*size, version));
    }
    let (size, version) = sizes.first().copied().unwrap_or((0, 0));
    Ok(format!(
        "HcclCommConfigInit: these headers' {size}-byte struct (version {version}) is a prefix of \
         the bindings' {full}-byte one, with the same magic word and defaults (from zero- and \
         0xAB-filled structs); libhccl reads min(size, its own) bytes and the fields its version \
         knows"
    ))
}

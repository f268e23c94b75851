//! `cargo xtask compat [--check]`: the compatibility table of the CANN
//! releases users run.
//!
//! Each release's headers come from its torch-npu wheel on PyPI
//! ([`RELEASES`], fetched like `cargo xtask headers --version X` into
//! `.cann-headers/X/`). bindgen parses each set exactly as `cargo xtask
//! bindgen` parses the newest one (same builder, C++14, layout tests on); from
//! its output this module reads every function's signature, every struct's
//! size, alignment and field offsets (bindgen's layout tests) and every
//! constant's value, and writes:
//!
//! - `docs/COMPAT.md`: per function the first release declaring it, per struct
//!   its layout in each release, per enum its values in each release;
//!   differences flagged and summary counts at the top;
//! - `acl-sys/src/since.rs`: the releases and, per function, the first one
//!   that declares it, and the functions whose signature changed. The loader
//!   uses it to say "aclXxx needs ACL ≥ 1.12 (CANN 8.1.RC1); the loaded
//!   library is 1.2.0" and to refuse a function whose signature differs in
//!   the loaded release; cann-sim uses it to present an older runtime
//!   (`CANN_SIM_ACL_VERSION`).
//!
//! `--check` regenerates both in memory and fails when the committed files
//! differ (fetching headers that are not there yet).

use crate::headers;
use crate::{workspace_root, write_or_check};
use cann_codegen::{self as codegen, headers::HeaderDirs};
use quote::ToTokens;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One CANN release, through the torch-npu wheel that carries its headers.
pub struct Release {
    /// The torch-npu version on PyPI.
    pub torch_npu: &'static str,
    /// The CANN release it is built for.
    pub cann: &'static str,
}

/// The releases of the table, oldest first. The CANN release of each wheel is
/// the one the Ascend/pytorch README's version table pairs it with (that
/// table ships in the wheels' METADATA), except 2.14.0, whose README says
/// "Install CANN 9.1.0". torch-npu 2.1.0.post8 is the oldest wheel on PyPI
/// (older releases, CANN 7.0 among them, are not there), and the first wheels
/// with HCCL headers are those of CANN 8.1.RC1.
pub const RELEASES: &[Release] = &[
    Release {
        torch_npu: "2.1.0.post8",
        cann: "8.0.RC3",
    },
    Release {
        torch_npu: "2.1.0.post10",
        cann: "8.0.0",
    },
    Release {
        torch_npu: "2.5.1",
        cann: "8.1.RC1",
    },
    Release {
        torch_npu: "2.6.0",
        cann: "8.2.RC1",
    },
    Release {
        torch_npu: "2.8.0",
        cann: "8.3.RC1",
    },
    Release {
        torch_npu: "2.9.0",
        cann: "8.5.0",
    },
    Release {
        torch_npu: headers::DEFAULT_VERSION,
        cann: "9.1.0",
    },
];

/// What one header set declares, as bindgen reads it.
#[derive(Default)]
pub struct Decls {
    /// The ACL version of the headers (`ACL_{MAJOR,MINOR,PATCH}_VERSION`).
    pub acl_version: String,
    /// Does the wheel carry HCCL headers?
    pub has_hccl: bool,
    /// Headers of the bindings' list that this set lacks.
    pub missing_headers: Vec<String>,
    /// Function name → (library, signature).
    pub functions: BTreeMap<String, (Lib, String)>,
    /// Struct or union name → layout.
    pub structs: BTreeMap<String, Layout>,
    /// Constants grouped by their type (enums: the enum's name): group →
    /// constant → value.
    pub enums: BTreeMap<String, BTreeMap<String, String>>,
    /// Type aliases (typedefs, and enums: bindgen writes an enum as an alias
    /// of its integer type and one constant per value): name → type.
    pub aliases: BTreeMap<String, String>,
}

/// Which library declares a function.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Lib {
    Acl,
    Hccl,
}

/// A struct's layout, from bindgen's layout tests.
#[derive(Default, Clone, PartialEq, Eq)]
pub struct Layout {
    pub size: Option<u64>,
    pub align: Option<u64>,
    /// (field, type, offset), in declaration order.
    pub fields: Vec<(String, String, Option<u64>)>,
}

impl Layout {
    fn summary(&self) -> String {
        let opt = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|(f, t, o)| format!("{f}@{}: {t}", opt(*o)))
            .collect();
        format!(
            "size {}, align {}; {}",
            opt(self.size),
            opt(self.align),
            fields.join(", ")
        )
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let check = crate::check_flag(args, "compat")?;
    let root = workspace_root();
    let mut sets = Vec::new();
    for r in RELEASES {
        let dir = headers::fetch_version(&root, r.torch_npu)?;
        let decls = read_release(&root, &dir, r.torch_npu)?;
        println!(
            "compat: torch-npu {} (CANN {}): ACL {}, {} functions",
            r.torch_npu,
            r.cann,
            decls.acl_version,
            decls.functions.len()
        );
        sets.push(decls);
    }
    let table = Table::new(&root, &sets)?;
    let mut fresh = write_or_check(&root.join("docs/COMPAT.md"), &table.markdown(), check)?;
    fresh &= write_or_check(&root.join("acl-sys/src/since.rs"), &table.since_rs(), check)?;
    if check && !fresh {
        return Err(
            "docs/COMPAT.md or acl-sys/src/since.rs is stale; run `cargo xtask compat`".into(),
        );
    }
    if check {
        println!("compatibility table is current");
    }
    Ok(())
}

/// A copy of a release's header tree that the bindgen setup of
/// `cann_codegen::headers` accepts: headers of its list that the release
/// lacks (old wheels have no `ge_error_codes.h` and no HCCL headers) are
/// empty files. The fetched headers themselves are left untouched.
/// Returns the copy's root and the headers that were missing.
pub fn shim(root: &Path, dir: &Path, version: &str) -> Result<(PathBuf, Vec<String>), String> {
    let third_party = dir.join("torch_npu/include/third_party");
    let hccl = third_party.join("hccl/inc");
    shim_tree(
        root,
        &third_party.join("acl/inc"),
        hccl.is_dir().then_some(hccl.as_path()),
        version,
    )
}

/// [`shim`] from the directories holding `acl/` and `hccl/` (none: no HCCL
/// headers), copied to `.cann-headers/.shim/<name>/third_party/{acl,hccl}/inc`.
pub fn shim_tree(
    root: &Path,
    acl_src: &Path,
    hccl_src: Option<&Path>,
    name: &str,
) -> Result<(PathBuf, Vec<String>), String> {
    let shim = headers::dir(root).join(".shim").join(name);
    let _ = std::fs::remove_dir_all(&shim);
    let acl_inc = shim.join("third_party/acl/inc");
    let hccl_inc = shim.join("third_party/hccl/inc");
    copy_tree(acl_src, &acl_inc)?;
    if let Some(h) = hccl_src {
        copy_tree(h, &hccl_inc)?;
    }
    let mut missing = Vec::new();
    let wanted = codegen::headers::ACL_HEADERS
        .iter()
        .map(|h| (acl_inc.join(h), *h))
        .chain(
            codegen::headers::HCCL_HEADERS
                .iter()
                .map(|h| (hccl_inc.join(h), *h)),
        );
    for (path, name) in wanted {
        if !path.is_file() {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, "").map_err(|e| format!("{}: {e}", path.display()))?;
            missing.push(name.to_string());
        }
    }
    Ok((shim, missing))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let path = entry.path();
        let dest = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &dest)?;
        } else {
            std::fs::copy(&path, &dest).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Parses one release's headers.
fn read_release(root: &Path, dir: &Path, version: &str) -> Result<Decls, String> {
    let (shim_root, missing) = shim(root, dir, version)?;
    let decls = read_shim(&shim_root, missing, version);
    let _ = std::fs::remove_dir_all(&shim_root);
    decls
}

/// Parses a header tree made by [`shim_tree`]; `missing` lists the headers
/// the shim left empty.
pub fn read_shim(shim_root: &Path, missing: Vec<String>, version: &str) -> Result<Decls, String> {
    let dirs = HeaderDirs::find(shim_root)?;
    let mut decls = Decls {
        acl_version: codegen::headers::acl_version(&dirs.acl_inc)
            .ok_or_else(|| format!("torch-npu {version}: no ACL version in acl.h or acl_rt.h"))?,
        has_hccl: !missing.iter().any(|h| h == "hccl/hccl.h"),
        missing_headers: missing,
        ..Decls::default()
    };
    let acl =
        codegen::headers::bindgen_acl(&dirs).map_err(|e| format!("torch-npu {version}: {e}"))?;
    read_bindings(&acl, Lib::Acl, &mut decls)?;
    if decls.has_hccl {
        let hccl = codegen::headers::bindgen_hccl(&dirs)
            .map_err(|e| format!("torch-npu {version}: {e}"))?;
        read_bindings(&hccl, Lib::Hccl, &mut decls)?;
    }
    Ok(decls)
}

fn tokens(t: &impl ToTokens) -> String {
    t.to_token_stream()
        .to_string()
        .replace(":: core :: ffi :: ", "")
        .replace(" :: ", "::")
        .replace(":: ", "::")
}

/// A function's signature without parameter names.
fn signature(f: &syn::ForeignItemFn) -> String {
    let inputs: Vec<String> = f
        .sig
        .inputs
        .iter()
        .map(|a| match a {
            syn::FnArg::Typed(pt) => tokens(&pt.ty),
            syn::FnArg::Receiver(_) => "self".into(),
        })
        .collect();
    let variadic = if f.sig.variadic.is_some() {
        ", ..."
    } else {
        ""
    };
    let output = match &f.sig.output {
        syn::ReturnType::Default => String::new(),
        syn::ReturnType::Type(_, t) => format!(" -> {}", tokens(t)),
    };
    format!("fn({}{variadic}){output}", inputs.join(", "))
}

const PRIMITIVES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "i8",
    "i16",
    "i32",
    "i64",
    "usize",
    "isize",
    "f32",
    "f64",
    "c_int",
    "c_uint",
    "c_long",
    "c_ulong",
    "c_char",
    "c_uchar",
    "c_short",
    "c_ushort",
    "c_longlong",
    "c_ulonglong",
];

fn read_bindings(source: &str, lib: Lib, decls: &mut Decls) -> Result<(), String> {
    let (items, functions) = codegen::split(source)?;
    for f in &functions {
        decls
            .functions
            .insert(f.name.clone(), (lib, signature(&f.decl)));
    }
    for item in items {
        match item {
            syn::Item::Struct(s) => set_fields(decls, &s.ident, s.fields.iter()),
            syn::Item::Union(u) => set_fields(decls, &u.ident, u.fields.named.iter()),
            syn::Item::Const(c) if c.ident == "_" => read_layout_tests(&tokens(&c.expr), decls),
            syn::Item::Type(t) => {
                decls.aliases.insert(t.ident.to_string(), tokens(&t.ty));
            }
            // `typedef enum X_ {..} X;` becomes `pub use self::X_ as X;`.
            syn::Item::Use(u) => {
                if let syn::UseTree::Path(p) = &u.tree
                    && let syn::UseTree::Rename(r) = &*p.tree
                {
                    decls
                        .aliases
                        .insert(r.rename.to_string(), r.ident.to_string());
                }
            }
            syn::Item::Const(c) => {
                let ty = tokens(&c.ty);
                let group = if PRIMITIVES.contains(&ty.as_str()) || ty.starts_with('&') {
                    "(constants)".to_string()
                } else {
                    ty
                };
                decls
                    .enums
                    .entry(group)
                    .or_default()
                    .insert(c.ident.to_string(), tokens(&c.expr));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Records the fields of struct or union `name`, in declaration order.
fn set_fields<'f>(
    decls: &mut Decls,
    name: &syn::Ident,
    fields: impl Iterator<Item = &'f syn::Field>,
) {
    decls.structs.entry(name.to_string()).or_default().fields = fields
        .filter_map(|f| Some((f.ident.as_ref()?.to_string(), tokens(&f.ty), None)))
        .collect();
}

/// Reads `["Size of X"][size_of::<X>() - 24usize]`, `["Alignment of X"]…` and
/// `["Offset of field: X::f"][offset_of!(X, f) - 8usize]` from a layout test.
fn read_layout_tests(text: &str, decls: &mut Decls) {
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let label = &after[..end];
        let tail = &after[end + 1..];
        let value = tail.find("- ").and_then(|i| {
            let digits: String = tail[i + 2..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse::<u64>().ok()
        });
        if let Some(name) = label.strip_prefix("Size of ") {
            decls.structs.entry(name.to_string()).or_default().size = value;
        } else if let Some(name) = label.strip_prefix("Alignment of ") {
            decls.structs.entry(name.to_string()).or_default().align = value;
        } else if let Some(spec) = label.strip_prefix("Offset of field: ")
            && let Some((name, field)) = spec.split_once("::")
        {
            let layout = decls.structs.entry(name.to_string()).or_default();
            if let Some(f) = layout.fields.iter_mut().find(|(f, _, _)| f == field) {
                f.2 = value;
            } else {
                layout
                    .fields
                    .push((field.to_string(), String::new(), value));
            }
        }
        rest = tail;
    }
}

/// The comparison of all releases.
struct Table<'a> {
    sets: &'a [Decls],
    /// Function → (library, index of the first release declaring it).
    since: BTreeMap<String, (Lib, usize)>,
    /// Function → per release signature (None: not declared).
    signatures: BTreeMap<String, Vec<Option<String>>>,
    /// The same with typedefs resolved and `const`/`mut` dropped: what the
    /// call passes at the machine level.
    abi: BTreeMap<String, Vec<Option<String>>>,
    /// Struct → per release layout.
    structs: BTreeMap<String, Vec<Option<Layout>>>,
    /// Enum → per release values.
    enums: BTreeMap<String, Vec<Option<BTreeMap<String, String>>>>,
    /// Names the safe crates (acl/src, hccl/src) mention.
    used: BTreeSet<String>,
}

impl<'a> Table<'a> {
    fn new(root: &Path, sets: &'a [Decls]) -> Result<Self, String> {
        let mut signatures: BTreeMap<String, Vec<Option<String>>> = BTreeMap::new();
        let mut abi: BTreeMap<String, Vec<Option<String>>> = BTreeMap::new();
        let mut since = BTreeMap::new();
        let mut structs: BTreeMap<String, Vec<Option<Layout>>> = BTreeMap::new();
        let mut enums: BTreeMap<String, Vec<Option<BTreeMap<String, String>>>> = BTreeMap::new();
        for (i, set) in sets.iter().enumerate() {
            for (name, (lib, sig)) in &set.functions {
                since.entry(name.clone()).or_insert((*lib, i));
                signatures
                    .entry(name.clone())
                    .or_insert_with(|| vec![None; sets.len()])[i] = Some(sig.clone());
                abi.entry(name.clone())
                    .or_insert_with(|| vec![None; sets.len()])[i] = Some(abi_form(sig, set));
            }
            for (name, layout) in &set.structs {
                structs
                    .entry(name.clone())
                    .or_insert_with(|| vec![None; sets.len()])[i] = Some(layout.clone());
            }
            for (name, values) in &set.enums {
                enums
                    .entry(name.clone())
                    .or_insert_with(|| vec![None; sets.len()])[i] = Some(values.clone());
            }
        }
        let mut used = BTreeSet::new();
        for dir in ["acl/src", "hccl/src"] {
            collect_idents(&root.join(dir), &mut used)?;
        }
        Ok(Table {
            sets,
            since,
            signatures,
            abi,
            structs,
            enums,
            used,
        })
    }

    fn newest(&self) -> usize {
        self.sets.len() - 1
    }

    /// Functions whose signature (`abi`: at the machine level, else as
    /// spelled) differs between releases that declare them: name → index of
    /// the first release whose signature is the newest one (from there on).
    fn signature_since(&self, abi: bool) -> BTreeMap<&str, usize> {
        let mut out = BTreeMap::new();
        let table = if abi { &self.abi } else { &self.signatures };
        for (name, sigs) in table {
            let present: Vec<&String> = sigs.iter().flatten().collect();
            if present.windows(2).all(|w| w[0] == w[1]) {
                continue;
            }
            let last = sigs.iter().rev().flatten().next();
            let mut first = sigs.len();
            for i in (0..sigs.len()).rev() {
                match &sigs[i] {
                    Some(s) if Some(s) == last => first = i,
                    None if first == sigs.len() => {}
                    _ => break,
                }
            }
            out.insert(name.as_str(), first);
        }
        out
    }

    /// Functions declared in some release but not in the newest.
    fn removed(&self) -> Vec<&str> {
        self.signatures
            .iter()
            .filter(|(_, s)| s[self.newest()].is_none())
            .map(|(n, _)| n.as_str())
            .collect()
    }

    fn struct_differs(layouts: &[Option<Layout>]) -> bool {
        let present: Vec<&Layout> = layouts.iter().flatten().collect();
        !present.windows(2).all(|w| w[0] == w[1])
    }

    /// How a struct's layout changes from release to release: members added
    /// at the same size (unions), fields appended (a newer layout starts with
    /// the older one), or anything else.
    fn struct_change(layouts: &[Option<Layout>]) -> &'static str {
        let present: Vec<&Layout> = layouts.iter().flatten().collect();
        let mut same_size = true;
        for w in present.windows(2) {
            let keeps = w[0].fields.iter().all(|f| w[1].fields.contains(f));
            if !keeps || w[1].size < w[0].size || w[1].align < w[0].align {
                return "incompatible: an older field moved or changed type";
            }
            same_size &= w[1].size == w[0].size;
        }
        if same_size {
            "members added; size and alignment unchanged"
        } else {
            "fields appended; every older field keeps its offset and type, the size grows"
        }
    }

    /// An enum's change: a value changed or removed (incompatible), or only
    /// values added.
    fn enum_change(values: &[Option<BTreeMap<String, String>>]) -> Option<&'static str> {
        let present: Vec<&BTreeMap<String, String>> = values.iter().flatten().collect();
        let sentinel = |k: &str| k.contains("RESERVED") || k.ends_with("_MAX");
        let mut added = false;
        let mut sentinels = false;
        for w in present.windows(2) {
            for (k, v) in w[0] {
                match w[1].get(k) {
                    Some(v2) if v2 == v => {}
                    Some(_) if sentinel(k) => sentinels = true,
                    Some(_) => return Some("value changed"),
                    None => return Some("value removed"),
                }
            }
            added |= w[1].keys().any(|k| !w[0].contains_key(k));
        }
        if sentinels {
            Some("values added; only a RESERVED/MAX bound moved")
        } else {
            added.then_some("values added")
        }
    }

    fn release_label(&self, i: usize) -> String {
        format!(
            "ACL {} (CANN {}, torch-npu {})",
            short(&self.sets[i].acl_version),
            RELEASES[i].cann,
            RELEASES[i].torch_npu
        )
    }

    fn first_hccl(&self) -> Option<usize> {
        self.sets.iter().position(|s| s.has_hccl)
    }

    fn markdown(&self) -> String {
        let mut md = String::new();
        let n = self.sets.len();
        let first_hccl = self.first_hccl().unwrap_or(0);
        let sig_since = self.signature_since(false);
        let abi_since = self.signature_since(true);
        let removed = self.removed();
        let differing_structs: Vec<&String> = self
            .structs
            .iter()
            .filter(|(_, l)| Self::struct_differs(l))
            .map(|(n, _)| n)
            .collect();
        let changed_enums: Vec<(&String, &str)> = self
            .enums
            .iter()
            .filter(|(n, _)| *n != "(constants)")
            .filter_map(|(n, v)| Some((n, Self::enum_change(v)?)))
            .collect();
        let _ = writeln!(
            md,
            "# CANN compatibility table\n\n\
             Generated by `cargo xtask compat` from the headers of the torch-npu wheels on PyPI \
             (`torch_npu/include/third_party/{{acl,hccl}}/inc`); do not edit. `cargo xtask compat \
             --check` (CI) fails when it is stale. The same data is `acl-sys/src/since.rs`, which \
             the loader uses.\n"
        );
        let _ = writeln!(md, "## Summary\n");
        let acl_total = self.since.values().filter(|(l, _)| *l == Lib::Acl).count();
        let hccl_total = self.since.values().filter(|(l, _)| *l == Lib::Hccl).count();
        let _ = writeln!(
            md,
            "- {n} header sets, ACL {} to ACL {}.\n\
             - {acl_total} AscendCL and {hccl_total} HCCL functions declared by at least one of \
             them; {} only by releases after the oldest (HCCL: after the first with HCCL headers).\n\
             - {} functions whose signature differs between releases, {} of them at the machine \
             level (the others only in spelling: `const`, typedef names).\n\
             - {} functions no longer declared by the newest headers.\n\
             - {} structs or unions whose layout differs, of {}.\n\
             - {} enums whose values changed or were removed; {} with values added only (or a \
             RESERVED/MAX bound moved); {} in all.\n",
            short(&self.sets[0].acl_version),
            short(&self.sets[n - 1].acl_version),
            self.since
                .values()
                .filter(|(l, i)| *i > if *l == Lib::Hccl { first_hccl } else { 0 })
                .count(),
            sig_since.len(),
            abi_since.len(),
            removed.len(),
            differing_structs.len(),
            self.structs.len(),
            changed_enums
                .iter()
                .filter(|(_, c)| !c.starts_with("values added"))
                .count(),
            changed_enums
                .iter()
                .filter(|(_, c)| c.starts_with("values added"))
                .count(),
            self.enums.len().saturating_sub(1),
        );
        let _ = writeln!(
            md,
            "| torch-npu | CANN | ACL | AscendCL functions | HCCL functions | new functions | headers absent |\n\
             |---|---|---|---|---|---|---|"
        );
        for (i, set) in self.sets.iter().enumerate() {
            let count = |lib| set.functions.values().filter(|(l, _)| *l == lib).count();
            let new = self.since.values().filter(|(_, s)| *s == i).count();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} |",
                RELEASES[i].torch_npu,
                RELEASES[i].cann,
                set.acl_version,
                count(Lib::Acl),
                if set.has_hccl {
                    count(Lib::Hccl).to_string()
                } else {
                    "no HCCL headers".into()
                },
                if i == 0 {
                    "(baseline)".into()
                } else {
                    new.to_string()
                },
                if set.missing_headers.is_empty() {
                    "-".to_string()
                } else {
                    set.missing_headers.join(", ")
                }
            );
        }
        let _ = writeln!(
            md,
            "\nThe CANN release of each wheel is the one the Ascend/pytorch README pairs it with; \
             2.1.0.post8 (CANN 8.0.RC3) is the oldest torch-npu on PyPI, so \"since ACL {}\" means \
             \"in every header set checked\" (CANN 7.0's headers are not on PyPI). The wheels of \
             CANN 8.0.x carry no HCCL headers: HCCL functions are dated from CANN {} on.\n",
            short(&self.sets[0].acl_version),
            RELEASES[first_hccl].cann,
        );
        md.push_str(HANDLING);

        let _ = writeln!(md, "\n## Functions whose signature differs\n");
        if sig_since.is_empty() && abi_since.is_empty() {
            let _ = writeln!(md, "None.");
        } else {
            let _ = writeln!(
                md,
                "\"machine level\": the difference remains with typedefs resolved and `const`/`mut` \
                 dropped. The loader refuses those in a library older than the release of the \
                 current signature (`acl_sys::since::SIGNATURE_SINCE`); the others pass the same \
                 bits either way.\n\n| function | differs at the machine level | signature per release |\n|---|---|---|"
            );
            let names: BTreeSet<&str> = sig_since.keys().chain(abi_since.keys()).copied().collect();
            for name in &names {
                let level = match abi_since.get(name) {
                    Some(i) => format!("yes: refused before CANN {}", RELEASES[*i].cann),
                    None => "no".to_string(),
                };
                let sigs = &self.signatures[*name];
                let mut cells = Vec::new();
                for (i, s) in sigs.iter().enumerate() {
                    if let Some(s) = s
                        && (i == 0 || sigs[i - 1].as_ref() != Some(s))
                    {
                        cells.push(format!("{}: `{s}`", RELEASES[i].cann));
                    }
                }
                let _ = writeln!(md, "| `{name}` | {level} | {} |", cells.join("<br>"));
            }
        }
        let _ = writeln!(md, "\n## Functions no longer declared\n");
        if removed.is_empty() {
            let _ = writeln!(md, "None.");
        } else {
            for name in &removed {
                let last = self.signatures[*name].iter().rposition(Option::is_some);
                let _ = writeln!(
                    md,
                    "- `{name}`: last declared by {}",
                    last.map_or("?".into(), |i| self.release_label(i))
                );
            }
        }

        let _ = writeln!(
            md,
            "\n## Structs and unions whose layout differs\n\n\
             \"used\" marks the types the safe crates (`acl`, `hccl`) name.\n"
        );
        if differing_structs.is_empty() {
            let _ = writeln!(md, "None.");
        }
        for name in &differing_structs {
            let layouts = &self.structs[*name];
            let _ = writeln!(
                md,
                "### `{name}`: {}{}\n",
                Self::struct_change(layouts),
                if self.used.contains(*name) {
                    " (used)"
                } else {
                    ""
                }
            );
            for (i, l) in layouts.iter().enumerate() {
                if let Some(l) = l
                    && (i == 0 || layouts[i - 1].as_ref() != Some(l))
                {
                    let _ = writeln!(md, "- from {}: {}", self.release_label(i), l.summary());
                }
            }
            let _ = writeln!(md);
        }

        let _ = writeln!(md, "\n## Enums whose values differ\n");
        if changed_enums.is_empty() {
            let _ = writeln!(md, "None.");
        }
        for (name, change) in &changed_enums {
            let values = &self.enums[*name];
            let _ = writeln!(
                md,
                "### `{name}`: {change}{}\n",
                if self.used.contains(*name) {
                    " (used)"
                } else {
                    ""
                }
            );
            let mut prev: Option<&BTreeMap<String, String>> = None;
            for (i, v) in values.iter().enumerate() {
                let Some(v) = v else { continue };
                match prev {
                    None => {
                        let all: Vec<String> =
                            v.iter().map(|(k, x)| format!("{k} = {x}")).collect();
                        let _ = writeln!(md, "- {}: {}", self.release_label(i), all.join(", "));
                    }
                    Some(p) if p != v => {
                        let mut diff = Vec::new();
                        for (k, x) in v {
                            match p.get(k) {
                                None => diff.push(format!("+{k} = {x}")),
                                Some(y) if y != x => diff.push(format!("{k}: {y} → {x}")),
                                _ => {}
                            }
                        }
                        for k in p.keys().filter(|k| !v.contains_key(*k)) {
                            diff.push(format!("−{k}"));
                        }
                        let _ = writeln!(md, "- {}: {}", self.release_label(i), diff.join(", "));
                    }
                    _ => {}
                }
                prev = Some(v);
            }
            let _ = writeln!(md);
        }

        let _ = writeln!(md, "\n## Constants outside enums that changed\n");
        let mut any = false;
        if let Some(values) = self.enums.get("(constants)") {
            let mut names: BTreeSet<&String> = BTreeSet::new();
            for v in values.iter().flatten() {
                names.extend(v.keys());
            }
            for name in names {
                let vals: Vec<Option<&String>> = values
                    .iter()
                    .map(|v| v.as_ref().and_then(|v| v.get(name)))
                    .collect();
                let present: Vec<&String> = vals.iter().flatten().copied().collect();
                if present.windows(2).all(|w| w[0] == w[1]) {
                    continue;
                }
                any = true;
                let cells: Vec<String> = vals
                    .iter()
                    .enumerate()
                    .filter(|(i, v)| *i == 0 || vals[*i - 1] != **v)
                    .map(|(i, v)| format!("{}: {}", RELEASES[i].cann, v.map_or("-", |s| s)))
                    .collect();
                let _ = writeln!(md, "- `{name}`: {}", cells.join(", "));
            }
        }
        if !any {
            let _ = writeln!(md, "None.");
        }

        md.push_str(FINDINGS);
        let _ = writeln!(
            md,
            "\n## Every function\n\n\"since\" is the first header set declaring it. Columns: \
             one per release, ✓ declared.\n"
        );
        let header: Vec<&str> = RELEASES.iter().map(|r| r.cann).collect();
        let _ = writeln!(
            md,
            "| function | lib | since | {} |\n|---|---|---|{}",
            header.join(" | "),
            "---|".repeat(n)
        );
        for (name, (lib, first)) in &self.since {
            let marks: Vec<&str> = self.signatures[name]
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    Some(_) => "✓",
                    None if *lib == Lib::Hccl && !self.sets[i].has_hccl => "n/a",
                    None => "",
                })
                .collect();
            let _ = writeln!(
                md,
                "| `{name}` | {} | ACL {} (CANN {}) | {} |",
                match lib {
                    Lib::Acl => "ACL",
                    Lib::Hccl => "HCCL",
                },
                short(&self.sets[*first].acl_version),
                RELEASES[*first].cann,
                marks.join(" | ")
            );
        }
        md
    }

    fn since_rs(&self) -> String {
        let mut rs = String::new();
        rs.push_str(
            "//! When each AscendCL and HCCL function appeared, by CANN release.\n//!\n\
             //! Generated by `cargo xtask compat` from the headers of the torch-npu wheels on\n\
             //! PyPI; do not edit (`cargo xtask compat --check` fails when it is stale). The\n\
             //! same data, with struct layouts and enum values, is `docs/COMPAT.md`.\n\n",
        );
        rs.push_str(
            "/// One header set of the table: a CANN release, through the torch-npu wheel\n\
             /// that carries its headers.\n\
             #[derive(Debug, Clone, Copy, PartialEq, Eq)]\n\
             pub struct Release {\n\
             /// The torch-npu version on PyPI.\n\
             pub torch_npu: &'static str,\n\
             /// The CANN release.\n\
             pub cann: &'static str,\n\
             /// The ACL version the headers declare (`ACL_{MAJOR,MINOR,PATCH}_VERSION`).\n\
             pub acl: (u32, u32, u32),\n\
             /// Does the wheel carry HCCL headers?\n\
             pub hccl_headers: bool,\n\
             }\n\n",
        );
        rs.push_str("/// The header sets, oldest first.\npub const RELEASES: &[Release] = &[\n");
        for (i, set) in self.sets.iter().enumerate() {
            let v = parse_version(&set.acl_version);
            let _ = writeln!(
                rs,
                "Release {{ torch_npu: {:?}, cann: {:?}, acl: ({}, {}, {}), hccl_headers: {} }},",
                RELEASES[i].torch_npu, RELEASES[i].cann, v.0, v.1, v.2, set.has_hccl
            );
        }
        rs.push_str("];\n\n");
        let first_hccl = self.first_hccl().unwrap_or(0);
        rs.push_str(
            "/// The functions added after the oldest header set that covers their\n\
             /// library (for HCCL: the first with HCCL headers), sorted by name, with\n\
             /// the index in [`RELEASES`] of the first set that declares them. Every\n\
             /// other function of the bindings is in all header sets.\n\
             pub const ADDED: &[(&str, u8)] = &[\n",
        );
        for (name, (lib, i)) in &self.since {
            let baseline = if *lib == Lib::Hccl { first_hccl } else { 0 };
            if *i > baseline {
                let _ = writeln!(rs, "({name:?}, {i}),");
            }
        }
        rs.push_str("];\n\n");
        rs.push_str(
            "/// Functions whose signature differs between header sets, sorted by name,\n\
             /// with the index in [`RELEASES`] of the first set whose signature is the\n\
             /// one of the bindings. A library older than that release exports the\n\
             /// symbol with another signature: the loader refuses the call.\n\
             pub const SIGNATURE_SINCE: &[(&str, u8)] = &[\n",
        );
        for (name, i) in self.signature_since(true) {
            let _ = writeln!(rs, "({name:?}, {i}),");
        }
        rs.push_str("];\n");
        rs
    }
}

/// What the project does about the differences; written by hand in the
/// generator, kept next to the data.
const HANDLING: &str = "\
## How the crates handle the differences

- **A function the loaded library lacks.** The loader resolves each symbol on its own; a call to a \
missing one fails with `LoadError::NeedsNewer`, whose message names the first release that declares \
it, e.g. `aclrtDeviceGetUuid needs ACL ≥ 1.15 (CANN 8.5.0); the loaded AscendCL is ACL 1.2.0 (…)`. \
The safe crates pass that error on (`acl::Error::Load`, `hccl::Error::Load`); nothing panics.
- **A function whose signature changed.** Listed below; the loader compares the loaded library's \
version (`aclrtGetVersion`) with the release of the current signature and refuses the call \
(`LoadError::NeedsNewer`) rather than call it with the wrong arguments.
- **Structs and enums.** The differing types are listed below, with those the safe crates use \
marked \"(used)\"; what the crates do about each is in \"Findings\" (written by hand in \
`xtask/src/compat.rs`, next to the generator).
- **cann-sim** presents an older runtime with `CANN_SIM_ACL_VERSION=1.2` (or 1.12, 1.15): every \
function the table dates after that version is absent from the installed tables and \
`aclrtGetVersion` reports that version, so these paths are tested.
";

/// Structs whose layout grows between releases by design: the first bytes
/// hold the struct's size and version, and the library reads only what both
/// it and the caller know (HCCL's `CommConfig::Load` copies
/// `min(configSize, sizeof)` bytes and ignores fields newer than its
/// version: hcomm `framework/communicator/comm_config.cc`).
const SELF_DESCRIBING: &[&str] = &["HcclCommConfigDef"];

/// A signature with typedefs resolved, `const`/`mut` and signedness dropped,
/// and structs named by their size and alignment (a struct renamed between
/// releases is the same struct).
pub fn abi_form(sig: &str, decls: &Decls) -> String {
    fn words(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        for c in s.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out
    }
    fn resolve(word: &str, decls: &Decls, depth: u32, out: &mut Vec<String>) {
        match decls.aliases.get(word) {
            Some(target) if depth < 8 => {
                for w in words(target) {
                    resolve(&w, decls, depth + 1, out);
                }
            }
            _ if SELF_DESCRIBING.contains(&word) => out.push(word.to_string()),
            // An enum bindgen did not write as an alias (an anonymous
            // `typedef enum {..} X;`): its constants are typed `X`.
            _ if decls.enums.contains_key(word) => out.push("int32".into()),
            _ if decls.structs.contains_key(word) => {
                let l = &decls.structs[word];
                out.push(format!(
                    "struct{}_{}",
                    l.size.unwrap_or(0),
                    l.align.unwrap_or(0)
                ));
            }
            _ if word == "const" || word == "mut" => {}
            // Signedness does not change how an integer is passed.
            _ => out.push(
                match word {
                    "i8" | "u8" | "c_char" | "c_uchar" | "c_schar" => "int8",
                    "i16" | "u16" | "c_short" | "c_ushort" => "int16",
                    "i32" | "u32" | "c_int" | "c_uint" => "int32",
                    "i64" | "u64" | "usize" | "isize" | "c_long" | "c_ulong" | "c_longlong"
                    | "c_ulonglong" => "int64",
                    other => other,
                }
                .to_string(),
            ),
        }
    }
    let mut out = Vec::new();
    for w in words(sig) {
        resolve(&w, decls, 0, &mut out);
    }
    out.join(" ")
}

/// What was found about the differing types the safe crates use, and what
/// is done about each. Written by hand; the generated lists above it are the
/// evidence.
const FINDINGS: &str = "
## Findings

- **The wheels' headers are a subset before torch-npu 2.10.** The torch-npu wheels up to 2.9.0 \
(CANN 8.5.0) carry a trimmed copy of the AscendCL and HCCL headers: only what torch-npu calls \
(`acl_rt.h` declares 86 functions in 2.1.0.post8, 109 in 2.9.0, 358 in 2.14.0). Functions that \
CANN 8.0 already exported, such as `aclrtSynchronizeEventWithTimeout`, appear in the table only \
with the first wheel that declares them. The \"since\" of this table is therefore the first \
release *known* to declare a function: an upper bound, exact only where torch-npu used the \
function. For the loader this is safe in both directions: `NeedsNewer` is only raised for a \
symbol the loaded library really lacks, and the release it names does declare the function. \
`CANN_SIM_ACL_VERSION` follows the table, so a simulated old runtime lacks at least what the real \
one lacked (it may lack more).
- **Signatures.** 12 functions are spelled differently across releases; 10 of them pass the same \
bits (`const`, typedef renames such as `aclrtDevResModelType` → `aclrtDevResLimitType`, a struct \
tag renamed). Two differ at the machine level: `aclrtUnuseStreamResInCurrentThread` gained an \
`aclrtStream` argument in CANN 8.5.0 and `aclmdlRIDebugJsonPrint` a `uint32_t` in 9.1.0. The \
loader does not resolve either from a library whose ACL version predates the change (the call \
fails with `NeedsNewer`); the safe crates use neither.
- **`HcclCommConfig` (used by `hccl::CommConfig`)** grows from 300 bytes (CANN 8.1.RC1, \
config version 5) to 312 (8.3.RC1, version 6) and 2240 (9.1.0, version 10); every older field \
keeps its offset and type. It is versioned by design: `hccl_sys::comm_config_init` (the header's \
inline `HcclCommConfigInit`) writes the struct's size and version into its first bytes, and \
libhccl copies `min(size, its own sizeof)` bytes and ignores fields newer than its version \
(hcomm `comm_config.cc`, `CommConfig::Load`/`SetConfigByVersion`; a newer version only logs a \
warning). Passing the newest layout to an older HCCL is therefore correct, never a wrong layout. \
The consequence is semantic: a setting an older HCCL predates (`hcclExecTimeOut`, \
`hcclWorldRankID`, `hcclJobID`, …) is ignored by it; `hccl::CommConfig` documents its fields by \
name, and `HcclGetCommConfig` (CANN 8.5.0+) reads back what a communicator really uses.
- **`HcclCommConfigInit` defaults (handled).** `cargo xtask abi-check --release X` compares the \
release's inline `HcclCommConfigInit` with what hccl-sys writes for that release over the \
release's prefix of the struct. CANN 8.1.RC1 to 8.3.RC1 (torch-npu 2.5.1 to 2.8.0) write \
`hcclBufferSize = 200` and `hcclDeterministic = 0`, where newer bindings write the \"not set, \
follow the environment\" sentinels (`0xFFFFFFFF`, named only from CANN 8.5.0's headers); such a \
library could read 4 PiB of buffer or refuse `hcclDeterministic` > 1 with HCCL_E_PARA. \
`hccl_sys::comm_config_init_for(config, acl_version)` therefore writes that release's defaults \
(200, 0) when the loaded AscendCL is older than ACL 1.15 (CANN 8.5.0), and `hccl::CommConfig` \
uses it with the loaded library's version; fields the user sets are written as given. CI checks \
2.1.0.post8 (oldest), 2.5.1, 2.9.0 and 2.14.0 (newest).
- **Unions `aclrtLaunchKernelAttrValue`, `aclrtStreamAttrValue`**: members added, size and \
alignment unchanged; not used by the safe crates.
- **Enums used by the safe crates** (`aclDataType`, `aclFormat`, `aclrtMemcpyKind`, \
`aclrtMemAttr`, `aclrtMemMallocPolicy`, `aclrtDevAttr`, `HcclDataType`, `HcclReduceOp`, \
`HcclResult`, `HcclConfig`, `HcclCommConfigCapability`): no value of an existing name changed; \
releases add names and move the `*_RESERVED` bound. A value an older runtime does not know (say \
`ACL_HIFLOAT8`, or `ACL_DEV_ATTR_L2_CACHE_SIZE` before 9.1.0) is passed as the same integer and \
refused by that runtime with its parameter error, which the safe crates return as an error; \
codes an older or newer library returns that these bindings do not name are kept as unknown \
codes. The two enums whose existing values changed, `HcclCMDType` (`HCCL_CMD_ALL`, \
`HCCL_CMD_HALF_ALLTOALLV` renumbered in 9.1.0) and `aclprofConfigType` (`ACL_PROF_AIV_METRICS` \
removed), and the renamed `ACL_STREAM_ATTR_CACHE_OP_IFNO` are not used by the safe crates; raw \
users of `HcclCMDType` must not pass its values to a library of another release.
";

/// `1.12.0` → `1.12`.
fn short(v: &str) -> String {
    let p = parse_version(v);
    format!("{}.{}", p.0, p.1)
}

fn parse_version(v: &str) -> (u32, u32, u32) {
    let mut it = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

/// Every identifier in the Rust files under `dir`.
fn collect_idents(dir: &Path, out: &mut BTreeSet<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            collect_idents(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !word.is_empty() {
                    out.insert(word.to_string());
                }
            }
        }
    }
    Ok(())
}

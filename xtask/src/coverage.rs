//! `cargo xtask coverage [--check]`: `docs/COVERAGE.md`, the map of every C
//! function of the checked-in bindings (AscendCL with aclnn, HCCL, DCMI) to
//!
//! - the safe items that wrap it: the items of `acl`, `hccl` and `npu-smi-rs`
//!   naming it in a `#[doc(alias)]` (`doc_aliases.rs`);
//! - what cann-sim does with it: implemented, or a generated "not supported"
//!   export (the implemented set `cargo xtask generate` uses);
//! - what `cargo xtask abi-check` checks: a behavioural check
//!   (`xtask/abi/checks/`), or only its type against the header.
//!
//! `--check` fails when the file is stale (CI runs it).

use crate::doc_aliases::{self, Aliases, SafeItem};
use crate::sim_exports::{api_functions, implemented};
use crate::{abi, abi_checks, workspace_root, write_or_check};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

const OUTPUT: &str = "docs/COVERAGE.md";

/// The C libraries of the map: (heading, cann-sim modules it spans).
const LIBRARIES: [(&str, &[&str]); 3] = [
    ("AscendCL (`libascendcl.so`, aclnn)", &["acl", "aclnn"]),
    ("HCCL (`libhccl.so`)", &["hccl"]),
    ("DCMI (`libdcmi.so`)", &["dcmi"]),
];

/// The safe crates: (crate name, source directory).
const SAFE_CRATES: [(&str, &str); 3] = [
    ("acl", "acl/src"),
    ("hccl", "hccl/src"),
    ("npu_smi_rs", "npu-smi-rs/src"),
];

/// Prefixes of C names: an alias starting with one that names nothing of
/// the bindings is listed as stale.
const C_PREFIXES: [&str; 4] = ["acl", "Hccl", "hccl", "dcmi_"];

pub fn run(args: &[String]) -> Result<(), String> {
    let check = crate::check_flag(args, "coverage")?;
    let root = workspace_root();
    let text = generate(&root)?;
    if !write_or_check(&root.join(OUTPUT), &text, check)? {
        return Err(format!(
            "{OUTPUT} is stale: run `cargo xtask coverage` and commit the result"
        ));
    }
    if check {
        println!("{OUTPUT} is current");
    }
    Ok(())
}

/// What cann-sim does with a function.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Sim {
    Implemented,
    NotSupported,
    /// C-variadic: stable Rust cannot define it.
    NotExported,
}

/// What abi-check does with a function.
#[derive(Clone, Copy, PartialEq)]
enum Abi {
    /// A behavioural check runs.
    Behaviour,
    /// A check exists, but cann-sim does not implement the function yet.
    Ready,
    /// Its type is compiled against the header, its export linked.
    Signature,
    /// No header to compile against.
    None,
}

struct Row {
    function: String,
    items: Vec<SafeItem>,
    sim: Sim,
    abi: Abi,
}

impl Row {
    fn wrapped(&self) -> bool {
        self.items.iter().any(|i| i.public)
    }
}

/// One C library of the bindings, function by function, as cann-sim treats
/// it: the one count behind `docs/COVERAGE.md` and the head of
/// `cann-sim/FIDELITY.md` (`fidelity.rs`).
pub(crate) struct Library {
    /// Its heading.
    pub title: &'static str,
    /// Its functions, in the bindings' order: (name, bindings file, what
    /// cann-sim does with it).
    pub functions: Vec<(String, &'static str, Sim)>,
    /// Every name its bindings define (functions, types, constants).
    pub identifiers: BTreeSet<String>,
}

impl Library {
    /// The functions cann-sim treats as `sim`.
    pub fn count(&self, sim: Sim) -> usize {
        self.functions.iter().filter(|f| f.2 == sim).count()
    }
}

/// The libraries of the bindings, each function with what cann-sim does
/// with it (its implemented set is the one `cargo xtask generate` uses).
pub(crate) fn libraries(root: &Path) -> Result<Vec<Library>, String> {
    let bindings: BTreeMap<&str, &'static str> = crate::sim_exports::libraries().collect();
    let mut out = Vec::new();
    for (title, modules) in LIBRARIES {
        let mut lib = Library {
            title,
            functions: Vec::new(),
            identifiers: BTreeSet::new(),
        };
        for module in modules {
            let file = *bindings
                .get(module)
                .ok_or_else(|| format!("no bindings for cann-sim's {module}"))?;
            let text =
                std::fs::read_to_string(root.join(file)).map_err(|e| format!("{file}: {e}"))?;
            lib.identifiers
                .extend(identifiers(&text).map_err(|e| format!("{file}: {e}"))?);
            let done = implemented(&root.join("cann-sim/src").join(module))?;
            for f in api_functions(&text).map_err(|e| format!("{file}: {e}"))? {
                let function = f.sig.ident.to_string();
                let sim = match (done.contains(&function), f.sig.variadic.is_some()) {
                    (true, _) => Sim::Implemented,
                    (false, false) => Sim::NotSupported,
                    (false, true) => Sim::NotExported,
                };
                lib.functions.push((function, file, sim));
            }
        }
        out.push(lib);
    }
    Ok(out)
}

/// The file's text.
fn generate(root: &Path) -> Result<String, String> {
    let mut aliases: Aliases = BTreeMap::new();
    for (name, dir) in SAFE_CRATES {
        for (alias, items) in doc_aliases::read_crate(name, &root.join(dir))? {
            aliases.entry(alias).or_default().extend(items);
        }
    }
    let checks: BTreeSet<&str> = abi_checks::all()?.iter().map(|c| c.function).collect();
    let with_header: BTreeSet<&str> = abi::header_bindings().collect();
    let mut tables = Vec::new();
    let mut known = BTreeSet::new();
    for lib in libraries(root)? {
        let mut rows = Vec::new();
        for (function, file, sim) in lib.functions {
            let abi = if checks.contains(function.as_str()) {
                if sim == Sim::Implemented {
                    Abi::Behaviour
                } else {
                    Abi::Ready
                }
            } else if with_header.contains(file)
                && sim != Sim::NotExported
                && !abi::INLINE.iter().any(|(n, _)| *n == function)
            {
                Abi::Signature
            } else {
                Abi::None
            };
            rows.push(Row {
                items: aliases.get(&function).cloned().unwrap_or_default(),
                function,
                sim,
                abi,
            });
        }
        known.extend(lib.identifiers);
        tables.push((lib.title, rows));
    }
    // Inline in a header: no library exports them (hccl-sys has its own).
    known.extend(abi::INLINE.iter().map(|(name, _)| name.to_string()));
    let stale: Vec<(&String, &Vec<SafeItem>)> = aliases
        .iter()
        .filter(|(alias, _)| {
            C_PREFIXES.iter().any(|p| alias.starts_with(p)) && !known.contains(alias.as_str())
        })
        .collect();
    let mut text = render(&tables, &stale);
    text.push('\n');
    text.push_str(&crate::operators::coverage_rows(&crate::operators::load(
        root,
    )?));
    Ok(text)
}

/// Every name a bindings file defines (functions, types, constants).
fn identifiers(text: &str) -> Result<BTreeSet<String>, String> {
    let file = syn::parse_file(text).map_err(|e| format!("cannot parse: {e}"))?;
    let mut out = BTreeSet::new();
    for item in &file.items {
        let ident = match item {
            syn::Item::Const(i) => &i.ident,
            syn::Item::Enum(i) => &i.ident,
            syn::Item::Fn(i) => &i.sig.ident,
            syn::Item::Static(i) => &i.ident,
            syn::Item::Struct(i) => &i.ident,
            syn::Item::Type(i) => &i.ident,
            syn::Item::Union(i) => &i.ident,
            syn::Item::Use(u) => {
                // `pub use self::aclCompileFlag as aclOpCompileFlag;`
                let mut names = Vec::new();
                doc_aliases::flatten_use(&u.tree, Vec::new(), &mut names);
                out.extend(names.into_iter().map(|(name, _)| name));
                continue;
            }
            _ => continue,
        };
        out.insert(ident.to_string());
    }
    // The functions are the `Api` struct's fields.
    out.extend(
        api_functions(text)?
            .into_iter()
            .map(|f| f.sig.ident.to_string()),
    );
    Ok(out)
}

fn render(tables: &[(&str, Vec<Row>)], stale: &[(&String, &Vec<SafeItem>)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Coverage of the C APIs\n\n\
         <!-- @generated by `cargo xtask coverage`; do not edit (`--check` fails when it is stale) -->\n\n\
         Every C function of the checked-in bindings (`acl-sys`, with `acl_sys::aclnn`; `hccl-sys`; \
         `dcmi-sys`), with\n\n\
         - **safe items**: the items of `acl`, `hccl` and `npu-smi-rs` that name it in a \
         `#[doc(alias = \"…\")]`, at their shortest public path (a method as `Type::method`); \
         *(internal)* marks an item users cannot name;\n\
         - **cann-sim**: *implemented*, *not supported* (a generated export that returns the \
         library's \"not supported\" code and says so in `aclGetRecentErrMsg`) or *not exported* \
         (C-variadic: stable Rust cannot define it);\n\
         - **ABI check** (`cargo xtask abi-check`): *behaviour* (a check in `xtask/abi/checks/` calls \
         it through the real header's declaration), *ready* (a check waits for cann-sim to implement \
         it), *signature* (only its type is compiled against the header and its export linked) or \
         *—* (no public header: aclnn, DCMI).\n"
    );
    let _ = writeln!(
        s,
        "| library | functions | wrapped by a safe item | implemented in cann-sim | ABI-checked (behaviour) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    let mut total = [0usize; 4];
    for (title, rows) in tables {
        let counts = [
            rows.len(),
            rows.iter().filter(|r| r.wrapped()).count(),
            rows.iter().filter(|r| r.sim == Sim::Implemented).count(),
            rows.iter().filter(|r| r.abi == Abi::Behaviour).count(),
        ];
        for (t, c) in total.iter_mut().zip(counts) {
            *t += c;
        }
        let _ = writeln!(
            s,
            "| {title} | {} | {} | {} | {} |",
            counts[0], counts[1], counts[2], counts[3]
        );
    }
    let _ = writeln!(
        s,
        "| **all** | **{}** | **{}** | **{}** | **{}** |",
        total[0], total[1], total[2], total[3]
    );
    for (title, rows) in tables {
        let _ = writeln!(s, "\n## {title}\n");
        let _ = writeln!(s, "| C function | safe items | cann-sim | ABI check |");
        let _ = writeln!(s, "|---|---|---|---|");
        for r in rows {
            let sim = match r.sim {
                Sim::Implemented => "implemented",
                Sim::NotSupported => "not supported",
                Sim::NotExported => "not exported",
            };
            let abi = match r.abi {
                Abi::Behaviour => "behaviour",
                Abi::Ready => "ready",
                Abi::Signature => "signature",
                Abi::None => "—",
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | {sim} | {abi} |",
                r.function,
                items(&r.items)
            );
        }
    }
    if !stale.is_empty() {
        let _ = writeln!(
            s,
            "\n## Doc aliases that name nothing in the bindings\n\n\
             A C name that is misspelt, or no longer in the bindings, leaves its function \
             unmapped above.\n"
        );
        let _ = writeln!(s, "| alias | on |");
        let _ = writeln!(s, "|---|---|");
        for (alias, on) in stale {
            let _ = writeln!(s, "| `{alias}` | {} |", items(on));
        }
    }
    s
}

/// The safe-items cell.
fn items(items: &[SafeItem]) -> String {
    if items.is_empty() {
        return "—".to_string();
    }
    items
        .iter()
        .map(|i| {
            if i.public {
                format!("`{}`", i.path)
            } else {
                format!("`{}` *(internal)*", i.path)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
